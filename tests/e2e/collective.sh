#!/bin/sh
# traffic.kind=collective end to end: a ring AllReduce over one rail runs at
# the payload line rate, rail-aligned traffic takes the same time on both
# topologies, iterations are timed one by one, all-to-all makes one message
# per ordered pair, runs are deterministic, and bad collective keys are
# rejected (exit 2, one line naming the key, no output directory).
RS=$1; E2E=$2
. "$E2E/lib.sh"

COLL="--set traffic.kind=collective"
# 64 GPUs in HB domains of 8 (the defaults): rail:0 is GPUs 0, 8, ..., 56.
AR="$COLL --set traffic.op=allreduce --set traffic.group=rail:0 --set traffic.bytes=67108864"

# check NAME SUMMARY EXPR: EXPR (Python over the summary `d`) must be True.
check() {
    v=$(json_get "$2" "$3" 2>&1)
    [ "$v" = True ] && ok "$1" || fail "$1 ($v)"
}

# (1) Ring AllReduce, 64 MiB over rail:0 of a rail-only network (8 ranks).
# Payload line rate of a 400 Gb/s NIC: 4096 payload bytes per 4178 on the
# wire (RoCEv2 overhead 82 B: preamble+IFG 20, Ethernet 14, FCS 4, IPv4 20,
# UDP 8, BTH 12, ICRC 4), i.e. 400e9/8 * 4096/4178 = 49.02 GB/s; nccl-tests'
# busbw of a bandwidth-bound ring is that rate.
"$RS" run -q $AR --set topology.kind=rail-only --set traffic.algo=ring -o "$TMP/ring-ro" \
    || fail "ring allreduce on rail-only: run failed"
s="$TMP/ring-ro/summary.json"
check "ring allreduce: busbw within 3% of the payload line rate" "$s" \
    "abs(d['collective']['busbw_GBps'] / (400e9 / 8 * 4096 / 4178 / 1e9) - 1) < 0.03"
check "ring allreduce: op, algo, ranks, bytes, iters as asked" "$s" \
    "(d['collective']['op'], d['collective']['algo'], d['collective']['ranks'], d['collective']['bytes'], d['collective']['iters']) == ('allreduce', 'ring', 8, 67108864, 1)"
check "ring allreduce: algbw = bytes/time, busbw = algbw x 2(n-1)/n" "$s" \
    "abs(d['collective']['algbw_GBps'] - 67108864 / (d['collective']['time_ps'] * 1e-12) / 1e9) < 1e-9 and abs(d['collective']['busbw_GBps'] / d['collective']['algbw_GBps'] - 2 * 7 / 8) < 1e-12"
# algbw_gbps/busbw_gbps: the same GB/s under the deprecated names, kept one
# release after algbw_GBps/busbw_GBps, in that key order.
check "ring allreduce: deprecated algbw_gbps/busbw_gbps equal algbw_GBps/busbw_GBps" "$s" \
    "d['collective']['algbw_gbps'] == d['collective']['algbw_GBps'] > 0 and d['collective']['busbw_gbps'] == d['collective']['busbw_GBps'] > 0 and [k for k in d['collective'] if 'bw_' in k] == ['algbw_GBps', 'busbw_GBps', 'algbw_gbps', 'busbw_gbps']"
# Its network-only bound: 2 (n-1)/n x 64 MiB = 112 MiB per NIC, 28,672 full
# frames of 4178 wire bytes at 20 ps per byte (docs/summary-format.md).
check "ring allreduce: bound_ps = 112 MiB over the NIC payload rate, below the time" "$s" \
    "d['collective']['bound_ps'] == 28672 * 4178 * 20 < d['collective']['time_ps']"
check "ring allreduce: complete, every message delivered, no relay" "$s" \
    "d['status'] == 'complete' and d['flows']['count'] == d['flows']['completed'] > 0 and d['payload_bytes']['hb'] == 0"
"$RS" run $AR --set topology.kind=rail-only --set traffic.algo=ring | grep -Eq '^  collective allreduce \(ring/(ll|ll128|simple)\), 8 ranks, .*algbw .* GB/s, busbw .* GB/s' \
    && ok "human summary has the collective line" || fail "human summary collective line"

# (2) auto resolves to a real algorithm and says which; the scenario echo
# keeps "auto".
"$RS" run -q $AR --set topology.kind=rail-only -o "$TMP/auto-ro" || fail "auto: run failed"
check "auto resolves and is reported" "$TMP/auto-ro/summary.json" \
    "d['collective']['algo'] in ('ring', 'tree', 'hierarchical') and d['scenario']['traffic']['algo'] == 'auto'"

# (3) The same rail-aligned AllReduce on the fat tree: no spine needed, the
# same time within 1%.
"$RS" run -q $AR --set topology.kind=fat-tree --set traffic.algo=ring -o "$TMP/ring-ft" \
    || fail "ring allreduce on fat-tree: run failed"
t_ro=$(json_get "$TMP/ring-ro/summary.json" "d['collective']['time_ps']")
t_ft=$(json_get "$TMP/ring-ft/summary.json" "d['collective']['time_ps']")
[ "$("$PY" -c "print(abs($t_ft / $t_ro - 1) < 0.01)")" = True ] \
    && ok "fat-tree time within 1% of rail-only ($t_ft vs $t_ro ps)" || fail "fat-tree $t_ft vs rail-only $t_ro ps"

# (4) iters=3: three times, back to back from start_ns; time_ps is their mean.
"$RS" run -q $AR --set traffic.iters=3 --set traffic.start_ns=5000 -o "$TMP/iters" || fail "iters=3: run failed"
s="$TMP/iters/summary.json"
check "iters=3 gives 3 times" "$s" "len(d['collective']['times_ps']) == 3 and d['collective']['iters'] == 3 and min(d['collective']['times_ps']) > 0"
check "time_ps is the mean of times_ps" "$s" \
    "abs(d['collective']['time_ps'] - sum(d['collective']['times_ps']) / 3) <= 1"
check "iterations run back to back after start_ns (3x the messages)" "$s" \
    "d['sim_end_ps'] >= 5000 * 1000 + sum(d['collective']['times_ps']) and d['flows']['count'] == 3 * $(json_get "$TMP/ring-ft/summary.json" "d['flows']['count']")"

# Streamed (workload.sync=rank, the default) each GPU issues the next
# iteration as its own part of the one before is done; behind the barrier
# (workload.sync=collective) every iteration starts at the previous one's
# completion. Both: the first iteration runs from start_ns, the times add
# up to the last iteration's end, the iterations' coll records follow
# each other in order; streamed, the next iteration's ops of every rank
# start at or before the previous collective's end (op records).
for sync in rank collective; do
    "$RS" run -q $AR --set traffic.iters=3 --set traffic.start_ns=5000 --set workload.sync=$sync -o "$TMP/iters-$sync" \
        || { fail "iters=3 under $sync: run failed"; continue; }
    "$RS" export csv "$TMP/iters-$sync/timeline.msgpack" -o "$TMP/iters-$sync/csv" >/dev/null 2>&1
    "$PY" - "$TMP/iters-$sync" $sync <<'EOF' && ok "iters=3 under workload.sync=$sync: times add up to the coll records' end" \
        || fail "iters=3 under workload.sync=$sync: times and records disagree"
import csv, json, sys
d, sync = sys.argv[1], sys.argv[2]
c = json.load(open(d + "/summary.json"))["collective"]
colls = list(csv.DictReader(open(d + "/csv/coll.csv")))
assert len(colls) == 3 and all(r["comm_name"] == "rail:0" for r in colls), colls
ends = [int(r["end_ps"]) for r in colls]
assert ends == sorted(ends) and ends[-1] == 5000 * 1000 + sum(c["times_ps"]), (ends, c)
ops = list(csv.DictReader(open(d + "/csv/op.csv"))) if sync == "rank" else []
if sync == "rank":
    assert len(ops) == 3 * c["ranks"], len(ops)
    by_rank = {}
    for o in ops:
        by_rank.setdefault(o["rank"], []).append((int(o["start_ps"]), int(o["end_ps"])))
    for spans in by_rank.values():
        spans.sort()
        assert all(spans[i + 1][0] == spans[i][1] for i in range(2)), spans  # its next issue at its own end
else:
    assert all(int(colls[i + 1]["start_ps"]) == ends[i] for i in range(2)), colls
EOF
done

# (5) All-to-all over all 64 GPUs: one message per ordered pair, whatever
# the algorithm (auto is direct, NCCL's grouped send/receive).
for algo in auto direct pairwise; do
    "$RS" run -q $COLL --set traffic.op=alltoall --set traffic.group=all --set traffic.bytes=4194304 \
        --set topology.kind=rail-only --set traffic.algo=$algo -o "$TMP/a2a-$algo" || { fail "alltoall $algo: run failed"; continue; }
    check "alltoall $algo: complete, flows.count = n(n-1)" "$TMP/a2a-$algo/summary.json" \
        "d['status'] == 'complete' and d['collective']['ranks'] == 64 and d['flows']['count'] == d['flows']['completed'] == 64 * 63 and d['collective']['algo'] != 'auto' and abs(d['collective']['busbw_GBps'] / d['collective']['algbw_GBps'] - 63 / 64) < 1e-12"
done

# Every op runs under its own name (the scenario's enum order matches the
# collectives layer's), on one HB domain or, for sendrecv, two GPUs.
for op in allgather reducescatter allreduce alltoall sendrecv; do
    grp=hb:1; [ $op = sendrecv ] && grp=3,11
    "$RS" run -q $COLL --set traffic.op=$op --set traffic.group=$grp --set traffic.bytes=1048576 -o "$TMP/op-$op" \
        || { fail "$op: run failed"; continue; }
    check "$op: summary names it, busbw factor as nccl-tests" "$TMP/op-$op/summary.json" \
        "d['collective']['op'] == '$op' and d['status'] == 'complete' and abs(d['collective']['busbw_GBps'] / d['collective']['algbw_GBps'] - {'allreduce': 2*7/8, 'sendrecv': 1}.get('$op', 7/8)) < 1e-12"
done

# (6) Determinism: same scenario, byte-identical summaries (host fields
# aside); the scenario echo reproduces the run.
args="$COLL --set topology.kind=rail-only --set traffic.op=allreduce --set traffic.group=all --set traffic.bytes=8388608 --set traffic.iters=2 --set seed=5"
"$RS" run -q $args -o "$TMP/d1" && "$RS" run -q $args -o "$TMP/d2" || fail "determinism: run failed"
[ "$(strip_host "$TMP/d1/summary.json")" = "$(strip_host "$TMP/d2/summary.json")" ] \
    && ok "collective summary is deterministic" || fail "collective summaries differ"
json_get "$TMP/d1/summary.json" "json.dumps(d['scenario'])" > "$TMP/echo.json"
"$RS" run -q -o "$TMP/echo" "$TMP/echo.json" && [ "$(strip_host "$TMP/echo/summary.json")" = "$(strip_host "$TMP/d1/summary.json")" ] \
    && ok "scenario echo reproduces the collective run" || fail "scenario echo"

# Other traffic kinds have no collective object.
"$RS" run -q -o "$TMP/perm" "$E2E/small.json" && check "no collective object for synthetic traffic" "$TMP/perm/summary.json" "'collective' not in d"

# (7) Bad input: exit 2, exactly one stderr line naming the key, no output.
BAD_OUT="$TMP/out"
bad_run() { n=$1; p=$2; shift 2; expect_bad "$n" "$p" run "$@" -o "$TMP/out"; }
bad_run "unknown op"           "traffic.op: expected one of"          $COLL --set traffic.op=gather
bad_run "unknown algo"         "traffic.algo: expected one of"        $COLL --set traffic.algo=magic
bad_run "rail beyond hb_size"  "traffic.group: rail 99 does not exist; expected rail:0 to rail:7" $COLL --set traffic.group=rail:99
bad_run "HB domain beyond"     "traffic.group: HB domain 8 does not exist; expected hb:0 to hb:7" $COLL --set traffic.group=hb:8
bad_run "duplicate GPU"        "traffic.group: GPU 8 appears twice"   $COLL --set traffic.group=0,8,16,8
bad_run "GPU out of range"     "traffic.group: rank 2 is GPU 64"      $COLL --set traffic.group=0,8,64
bad_run "group syntax"         "traffic.group: expected all, rail:R"  $COLL --set traffic.group=0,,8
bad_run "tree for allgather"   "traffic.algo: algorithm tree does not implement allgather" $COLL --set traffic.op=allgather --set traffic.algo=tree
bad_run "ring for alltoall"    "traffic.algo: algorithm ring does not implement alltoall" $COLL --set traffic.op=alltoall --set traffic.algo=ring
bad_run "hierarchical in one domain" "traffic.algo: hierarchical allreduce needs" $COLL --set traffic.algo=hierarchical --set traffic.group=hb:0
bad_run "sendrecv on one GPU"  "traffic.group: sendrecv needs 2 ranks" $COLL --set traffic.op=sendrecv --set traffic.group=5
bad_run "zero iterations"      "traffic.iters: expected an integer from 1" $COLL --set traffic.iters=0
printf '{ "traffic": { "kind": "collective", "group": "rail:9" } }\n' > "$TMP/badgroup.json"
bad_run "group in a file"      "badgroup.json: traffic.group: rail 9 does not exist" "$TMP/badgroup.json"

# A send the network refuses (rail-only without PXN): the run fails (exit 1).
"$RS" run -q $COLL --set topology.kind=rail-only --set routing.pxn=off --set traffic.op=alltoall 2>"$TMP/stderr"
rc=$?
[ $rc -eq 1 ] && grep -q 'routing.pxn' "$TMP/stderr" && ok "unreachable rails: exit 1 naming routing.pxn" || fail "unreachable rails (rc=$rc): $(cat "$TMP/stderr")"
finish
