#!/bin/sh
# Faults at flow level (docs/fidelity.md, "Faults at flow level"): a spine
# link failure reroutes and the summary's faults entries carry what the
# flow level measures; a partition stops naming the ranks; a straggler
# lengthens a synchronous iteration exactly as at packet level; compare and
# `railsim faults sweep` run with --set fidelity=flow, the sweep on 256
# GPUs (a few seconds; its speed is measured by hand, docs/fault-experiments.md).
RS=$1; E2E=$2; TRACE_TOOL=$3
. "$E2E/lib.sh"

check() {
    v=$(json_get "$2" "$3" 2>&1)
    [ "$v" = True ] && ok "$1" || fail "$1 ($v)"
}

# (1) 8 MiB from GPU 0 to GPU 8 over a spine of a 32-GPU fat tree; the
# spine link it uses (leaf0.p6 with seed 5) fails at 50 us, routes 5 us later.
ONE="--set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 --set seed=5 --set traffic.kind=single --set traffic.src=0 --set traffic.dst=8 --set traffic.bytes=8388608 --set fidelity=flow"
"$RS" run -q $ONE --fault "50us link-down leaf0.p6" --set faults.convergence_us=5 -o "$TMP/o1" \
    && ok "flow level: a spine-link failure under a flow completes" || fail "flow level spine link: exit $?"
check "flow level faults entry: flows_hit 1, nothing per packet, routes at 55 us, recovered" "$TMP/o1/summary.json" \
    "[(f['flows_hit'], f['packets_lost'], f['packets_retransmitted'], f['pfc_stuck'], f['routes_recomputed_at_ps']) for f in d['faults']] == [(1, 0, 0, [], 55000000)] and 0 < d['faults'][0]['time_to_recover_ps'] < 200000000"
check "flow level: the failure costs the convergence delay and a round trip" "$TMP/o1/summary.json" \
    "d['fault_free']['status'] == 'complete' and 5e6 < d['fault_free']['faulted_time_ps'] - d['fault_free']['time_ps'] < 15e6"
"$RS" run -q $ONE --fault "50us link-down leaf0.p6" --set faults.convergence_us=5 -o "$TMP/o2" >/dev/null 2>&1
cmp -s "$TMP/o1/summary.json" "$TMP/o2/summary.json" 2>/dev/null || \
    "$PY" -c "
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop('wall_s'); d.pop('peak_rss_bytes')
    d['fault_free'].pop('wall_s', None)
assert a == b" "$TMP/o1/summary.json" "$TMP/o2/summary.json" \
    && ok "flow level with faults: deterministic" || fail "flow level with faults: not deterministic"

# (1b) A fault after the end changes nothing: on rail-only the fault-free
# baseline relays as the faulted run does (chunk pipelines at flow level),
# so the slowdown is exactly 1 (it was 0.956 with one flow per relay there).
"$RS" run -q --set fidelity=flow --set topology.kind=rail-only --set topology.gpus=32 --set topology.radix=16 \
    --set traffic.kind=permutation --set traffic.bytes=4194304 --fault "10s link-down any-network-link" -o "$TMP/late" \
    && check "flow level: a fault after the end gives slowdown 1 (rail-only relays)" "$TMP/late/summary.json" \
    "d['fault_free']['slowdown'] == 1.0" || fail "flow level late fault: exit $?"

# (2) Partition: GPU 8's NIC fails for good mid-message, no HB domain to go
# around it: exit 1 naming the ranks.
"$RS" run -q $ONE --fault "20us nic-down gpu8" -o "$TMP/p1" 2>"$TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no path left after fault 1 (nic-down gpu8.nic" "$TMP/err" && grep -q " 0->8" "$TMP/err" \
    && ok "flow level partition: exit 1 naming the cut-off ranks" || fail "flow level partition: rc=$rc $(cat "$TMP/err")"

# (3) Straggler: GPU 1 at half speed over the whole run: +2 us exactly at
# flow level too under a barrier per collective (the 4-rank sync trace of
# fault_exp.sh, which checks the default's bounds).
"$TRACE_TOOL" "$TMP/sync.rst" sync || { fail "writing the sync trace"; finish; exit 1; }
NET="--set topology.gpus=4 --set topology.hb_size=1 --set workload.trace=$TMP/sync.rst --set fidelity=flow --set workload.sync=collective"
"$RS" run -q $NET --fault "0 straggler=2 gpu1 1s" -o "$TMP/s1" || fail "flow level straggler: exit $?"
check "flow level straggler x2 on gpu1: iteration + 2 us exactly" "$TMP/s1/summary.json" \
    "d['iteration']['time_ps'] == d['fault_free']['time_ps'] + 2000000"

# (4) compare at flow level, a class fault drawn per topology.
CMP="--set topology.gpus=64 --set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=8388608 --set fidelity=flow"
"$RS" compare -q $CMP --fault "20us link-degrade any-rail-uplink 100us" -o "$TMP/c1" >/dev/null 2>"$TMP/err" \
    && ok "compare --set fidelity=flow with a fault: exit 0" || fail "compare at flow level: $(cat "$TMP/err")"

# (5) faults sweep at flow level on 256 GPUs (HB domains of 8).
SW="--set topology.gpus=256 --set topology.hb_size=8 --set topology.radix=64 --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=hierarchical --set traffic.bytes=67108864 --set fidelity=flow"
"$RS" faults sweep $SW --class any-network-link --count 0,1,4 --trials 3 --duration 200us -o "$TMP/sw" >"$TMP/sw.out" 2>"$TMP/err" \
    && ok "faults sweep --set fidelity=flow on 256 GPUs: exit 0" || fail "flow level sweep: $(cat "$TMP/err")"
"$PY" - "$TMP/sw/sweep.json" <<'PYEOF' && ok "flow level sweep.json: every trial ran, slowdowns >= 1" || fail "flow level sweep.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert [t["topology"] for t in d["topologies"]] == ["rail-only", "fat-tree"]
for t in d["topologies"]:
    assert [r["count"] for r in t["rows"]] == [0, 1, 4]
    for r in t["rows"]:
        assert r["failed"] == 0 and r["completed"] + r["stopped"] == r["runs"], r
        for x in r["trials"]:
            if x["status"] == "complete":
                assert x["slowdown"] >= 1.0, x
PYEOF

finish
