#!/bin/sh
# A shared cluster (docs/shared-clusters.md): a scenario's "jobs" run at
# once on one network, each placed on GPUs the jobs before it left free,
# with per-job figures and slowdowns (against the job alone on the same
# GPUs) in summary.json and `run`; the timeline names each job's ranks;
# jobs that meet on oversubscribed links slow each other; a lone job in
# the array is the same run as the scenario without the array; report
# and compare show each job; bad jobs are refused as bad input.
RS=$1; E2E=$2
. "$E2E/lib.sh"

# (1) Three jobs (dense, MoE, verbs traffic) at both fidelities on both networks.
cat >"$TMP/three.json" <<'EOF'
{"topology": {"kind": "fat-tree", "gpus": 64, "hb_size": 8},
 "jobs": [{"name": "dense", "gpus": 16, "placement": "fragmented", "workload": {"plan": "demo-dense"}},
          {"name": "moe",   "gpus": 16, "placement": "packed",     "workload": {"plan": "demo-moe"}},
          {"name": "bulk",  "gpus": 8,  "placement": "random",     "traffic": {"kind": "permutation", "bytes": 4194304}}]}
EOF
for f in packet flow; do
    for k in fat-tree rail-only; do
        d="$TMP/$f-$k"
        # Under the sanitizers one packet-level case (rail-only, its
        # forwarding) is enough: the release build runs both networks.
        [ -n "${RS_SANITIZED:-}" ] && [ $f = packet ] && [ $k = fat-tree ] && continue
        if ! "$RS" run --set fidelity=$f --set topology.kind=$k -o "$d" "$TMP/three.json" >"$d.out" 2>"$d.err"; then
            fail "three jobs, $f, $k: run failed: $(head -1 "$d.err")"
            continue
        fi
        v=$(json_get "$d/summary.json" "';'.join('%s:%d:%s:%s' % (j['name'], j['gpus'], j['kind'], j['comm'])
            for j in d['jobs'])")
        [ "$v" = "dense:16:workload:nccl;moe:16:workload:nccl;bulk:8:traffic:verbs" ] &&
            ok "three jobs, $f, $k: summary jobs $v" || fail "three jobs, $f, $k: summary jobs $v"
        # Each job complete, against itself alone: a slowdown near or above 1.
        v=$(json_get "$d/summary.json" "all(j['time_ps'] > 0 and 0.95 < j['slowdown'] < 5 and
            abs(j['time_ps'] / j['alone_time_ps'] - j['slowdown']) < 1e-9 for j in d['jobs'])")
        [ "$v" = True ] && ok "three jobs, $f, $k: every job timed, alone and slowed" ||
            fail "three jobs, $f, $k: times or slowdowns ($v)"
        # The jobs' GPUs are disjoint; the MoE job packed on whole domains.
        v=$(json_get "$d/summary.json" "(lambda s: len(s) == 40 and len(set(s)) == 40)(sum(([g for p in
            j['gpu_ids'].split(',') for g in range(int(p.split('-')[0]), int(p.split('-')[-1]) + 1)]
            for j in d['jobs']), []))")
        [ "$v" = True ] && ok "three jobs, $f, $k: 40 distinct GPUs" || fail "three jobs, $f, $k: GPUs overlap ($v)"
        [ "$(grep -c '^  job        ' "$d.out")" = 3 ] && grep -q '^  job        bulk: 8 GPUs (random), permutation over verbs, .*slowdown' "$d.out" &&
            ok "three jobs, $f, $k: run prints a line per job" || fail "three jobs, $f, $k: run's job lines: $(grep job "$d.out")"
        grep -aq 'rank 0 (gpu [0-9]*, job moe)' "$d/timeline.msgpack" && grep -aq 'tp\[0\] (dense)' "$d/timeline.msgpack" &&
            ok "three jobs, $f, $k: the timeline names each job's ranks" || fail "three jobs, $f, $k: timeline names"
    done
done
# The same inputs give the same outputs.
mkdir -p "$TMP/b"
"$RS" run -q --set fidelity=flow --set topology.kind=fat-tree -o "$TMP/b/flow-fat-tree" "$TMP/three.json" \
    >/dev/null 2>&1
same_runs "$TMP" "$TMP/b" flow-fat-tree && ok "three jobs: the same bytes twice" || fail "three jobs: runs differ"

# (2) Two all-to-all jobs on an oversubscribed fat tree share its uplinks:
# each is slower beside the other than alone.
cat >"$TMP/two.json" <<'EOF'
{"topology": {"kind": "fat-tree", "gpus": 64, "hb_size": 8, "radix": 16, "oversubscription": 4},
 "jobs": [{"name": "a", "gpus": 32, "placement": "random", "traffic": {"kind": "all-to-all", "bytes": 1048576}},
          {"name": "b", "gpus": 32, "placement": "random", "traffic": {"kind": "all-to-all", "bytes": 1048576}}]}
EOF
if "$RS" run -q -o "$TMP/two" "$TMP/two.json" >/dev/null 2>&1; then
    v=$(json_get "$TMP/two/summary.json" "min(j['slowdown'] for j in d['jobs'])")
    "$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 1.1 else 1)" "$v" &&
        ok "two all-to-all jobs on shared uplinks: each slowed, least ${v}x" || fail "two jobs: slowdown $v"
    v=$(json_get "$TMP/two/summary.json" "[(x['jobs'], x['ports'] > 8, x['bytes'][0] > 0, x['bytes'][1] > 0) for x in d['interference']]")
    [ "$v" = "[(['a', 'b'], True, True, True)]" ] && ok "two jobs: the interference table names the ports they shared" ||
        fail "two jobs: interference $v"
else
    fail "two all-to-all jobs: run failed"
fi

# (3) One job in the array is the scenario without it: same iteration.
cat >"$TMP/one.json" <<'EOF'
{"topology": {"gpus": 64}, "fidelity": "flow",
 "jobs": [{"name": "solo", "gpus": 32, "placement": "spread", "workload": {"plan": "demo-dense"}}]}
EOF
"$RS" run -q -o "$TMP/one" "$TMP/one.json" >/dev/null 2>&1 &&
    "$RS" run -q -o "$TMP/plain" --set fidelity=flow --set workload.plan=demo-dense --set workload.gpus=32 \
        --set workload.placement=spread >/dev/null 2>&1
a=$(json_get "$TMP/one/summary.json" "int(d['jobs'][0]['time_ps']), d['jobs'][0]['slowdown']")
b=$(json_get "$TMP/plain/summary.json" "int(d['iteration']['time_ps']), 1.0")
[ "$a" = "$b" ] && ok "a lone job in the array is the plain scenario ($a)" || fail "lone job $a, plain $b"

# A job's own routing.pxn: off for one of two MoE jobs halves the relays.
cat >"$TMP/pxn.json" <<'EOF'
{"topology": {"gpus": 64}, "fidelity": "flow",
 "jobs": [{"name": "a", "gpus": 32, "placement": "spread", "workload": {"plan": "demo-moe"}},
          {"name": "b", "gpus": 32, "workload": {"plan": "demo-moe"}}]}
EOF
sed 's/"name": "b",/"name": "b", "routing": {"pxn": "off"},/' "$TMP/pxn.json" >"$TMP/pxn-off.json"
a=$("$RS" run "$TMP/pxn.json" 2>&1 | sed -n 's/^  forwarding \([0-9]*\) of.*/\1/p')
b=$("$RS" run "$TMP/pxn-off.json" 2>&1 | sed -n 's/^  forwarding \([0-9]*\) of.*/\1/p')
[ -n "$a" ] && [ "$a" -gt 0 ] && [ "$((a / 2))" = "$b" ] && ok "a job's routing.pxn=off: $b of $a relays left" ||
    fail "a job's routing.pxn: relays $a, with one job off $b"

# A job's own traffic class: two all-to-alls meeting on a 2:1 fat tree.
# At the same priority both slow down; with one at priority 5 (strict
# priority over the other's 3) it runs as if alone and the other waits,
# at both fidelities; in a capture of a leaf its frames carry DSCP CS5,
# the other's CS3.
cat >"$TMP/prio.json" <<'EOF'
{"topology": {"kind": "fat-tree", "gpus": 64, "hb_size": 8, "radix": 8, "oversubscription": 2},
 "jobs": [{"name": "a", "gpus": 32, "placement": "random", "traffic": {"kind": "all-to-all", "bytes": 1048576}},
          {"name": "b", "gpus": 32, "placement": "random", "traffic": {"kind": "all-to-all", "bytes": 1048576}}]}
EOF
sed 's/"name": "a",/"name": "a", "transport": {"priority": 5},/' "$TMP/prio.json" >"$TMP/prio5.json"
for f in packet flow; do
    "$RS" run -q --set fidelity=$f -o "$TMP/prio-$f" "$TMP/prio.json" >/dev/null 2>&1
    "$RS" run -q --set fidelity=$f -o "$TMP/prio5-$f" "$TMP/prio5.json" >/dev/null 2>&1
    v=$(json_get "$TMP/prio-$f/summary.json" "[round(j['slowdown'], 2) for j in d['jobs']]")
    w=$(json_get "$TMP/prio5-$f/summary.json" "(lambda a, b: (a['priority'], b['priority'], a['slowdown'] < 1.05, b['slowdown'] > 1.2))(*d['jobs'])")
    [ "$w" = "(5, 3, True, True)" ] && ok "$f: job a at priority 5 runs as alone, b waits (same priority: $v)" ||
        fail "$f: job priorities $w (same priority: $v)"
done
# A collective as a job's traffic (nccl-tests' loop over the job's GPUs)
# beside an all-to-all, at both fidelities: its figures, its slowdown.
cat >"$TMP/coll.json" <<'EOF'
{"topology": {"kind": "fat-tree", "gpus": 64, "hb_size": 8, "radix": 8, "oversubscription": 2},
 "jobs": [{"name": "ar", "gpus": 32, "placement": "fragmented",
           "traffic": {"kind": "collective", "op": "allreduce", "bytes": 67108864, "iters": 3}},
          {"name": "bulk", "gpus": 32, "placement": "random", "traffic": {"kind": "all-to-all", "bytes": 1048576}}]}
EOF
for f in packet flow; do
    if "$RS" run --set fidelity=$f -o "$TMP/coll-$f" "$TMP/coll.json" >"$TMP/coll-$f.out" 2>&1; then
        v=$(json_get "$TMP/coll-$f/summary.json" "(lambda a: (a['comm'], a['traffic']['kind'], a['collective']['op'], a['collective']['ranks'], a['collective']['iters'], len(a['collective']['times_ps']), a['time_ps'] == a['collective']['time_ps'], a['slowdown'] > 0.9, a['collective']['busbw_GBps'] > 0))(d['jobs'][0])")
        [ "$v" = "('nccl', 'collective', 'allreduce', 32, 3, 3, True, True, True)" ] &&
            grep -q '^  job        ar: 32 GPUs (fragmented), allreduce (ring) of 64.00 MiB over 32 ranks, .* per iteration; alone' "$TMP/coll-$f.out" &&
            ok "$f: a collective job: 3 iterations over its 32 GPUs, timed alone" || fail "$f: collective job $v"
        "$RS" report "$TMP/coll-$f" 2>/dev/null | grep -q '^  allreduce  *ring  *3 ' && grep -aq 'all (ar)' "$TMP/coll-$f/timeline.msgpack" &&
            ok "$f: the collective job's iterations in the timeline, its communicator named with the job" ||
            fail "$f: no coll records of the collective job in the timeline"
    else
        fail "$f: collective job: $(head -1 "$TMP/coll-$f.out")"
    fi
done
# Streamed (workload.sync=rank, the default), the collective job's ranks
# issue each iteration as their part of the last is done: an op record per
# rank and iteration under its own rank ids, named with the job.
"$RS" export csv "$TMP/coll-flow/timeline.msgpack" -o "$TMP/coll-flow/csv" >/dev/null 2>&1
"$PY" - "$TMP/coll-flow/csv" <<'PYEOF' && ok "the collective job's op records: 3 per rank, its ranks named with the job" \
    || fail "the collective job's op records"
import csv, sys
names = {r["id"]: r["name"] for r in csv.DictReader(open(sys.argv[1] + "/name.csv")) if r["space"] == "1"}
ops = list(csv.DictReader(open(sys.argv[1] + "/op.csv")))
ranks = {o["rank"] for o in ops}
assert len(ranks) == 32 and len(ops) == 96 and all(names[k].endswith(", job ar)") for k in ranks), (len(ranks), len(ops))
PYEOF
# A job's own nccl.*: its collectives follow it, the other job's the cluster's.
cat >"$TMP/nccl.json" <<'EOF'
{"topology": {"kind": "fat-tree", "gpus": 64, "hb_size": 8}, "fidelity": "flow",
 "jobs": [{"name": "a", "gpus": 32, "traffic": {"kind": "collective", "op": "allreduce", "bytes": 16777216, "iters": 2}},
          {"name": "b", "gpus": 32, "nccl": {"protocol": "ll", "algo": "ring"},
           "traffic": {"kind": "collective", "op": "allreduce", "bytes": 16777216, "iters": 2}}]}
EOF
"$RS" run -q -o "$TMP/nccl" "$TMP/nccl.json" >/dev/null 2>&1
v=$(json_get "$TMP/nccl/summary.json" "[(j['collective']['protocol'] == 'll', j['collective']['algo'] == 'ring') for j in d['jobs']] + [d['scenario']['jobs'][1]['nccl']]")
[ "$v" = "[(False, False), (True, True), {'protocol': 'll', 'algo': 'ring'}]" ] &&
    ok "a job's own nccl.protocol and nccl.algo: its collectives only" || fail "job nccl: $v"
echo '{"topology": {"gpus": 64}, "jobs": [{"gpus": 16, "traffic": {"kind": "collective", "group": "rail:0"}}]}' >"$TMP/cg.json"
expect_bad "a job's collective over a rail" "traffic.group: a job's collective runs over the job's own GPUs" \
    run -o "$TMP/bad" "$TMP/cg.json"

# A fault on a spine link both jobs cross: each fault entry says whom it
# hit, the jobs' flows adding up to its flows_hit; run prints it.
for f in packet flow; do
    "$RS" run --set fidelity=$f --fault "100us link-down any-spine-link" -o "$TMP/fault-$f" "$TMP/prio.json" \
        >"$TMP/fault-$f.out" 2>&1
    v=$(json_get "$TMP/fault-$f/summary.json" "(lambda e: (sorted(h['job'] for h in e['jobs_hit']), sum(h['flows_hit'] for h in e['jobs_hit']) == e['flows_hit'] > 0))(d['faults'][0])")
    [ "$v" = "(['a', 'b'], True)" ] && grep -q '^  fault      link-down .* hit a (.* flows), b (' "$TMP/fault-$f.out" &&
        ok "$f: a shared link's fault hit both jobs, their flows adding up" || fail "$f: fault attribution $v"
done
if command -v tshark >/dev/null 2>&1 &&
    "$RS" run -q --set 'capture.ports=leaf0.*' --set capture.snaplen=96 --set capture.end_ns=100000 \
        -o "$TMP/prio5-cap" "$TMP/prio5.json" >/dev/null 2>&1; then
    for c in 40 24; do
        n=0
        for p in "$TMP"/prio5-cap/pcap/*.pcap; do
            n=$((n + $(tshark -n -r "$p" -Y "infiniband && ip.dsfield.dscp == $c" 2>/dev/null | wc -l)))
        done
        [ "$n" -gt 0 ] && ok "capture: RoCE frames at DSCP $c ($n)" || fail "capture: no RoCE frames at DSCP $c"
    done
    # summary.json's wireshark_filter picks a job's frames: job a's are all
    # at its class (CS5; its receivers' CNPs at CS6).
    flt=$(json_get "$TMP/prio5-cap/summary.json" "d['jobs'][0]['wireshark_filter']")
    n=0 m=0
    for p in "$TMP"/prio5-cap/pcap/*.pcap; do
        n=$((n + $(tshark -n -r "$p" -Y "infiniband && ($flt)" 2>/dev/null | wc -l)))
        m=$((m + $(tshark -n -r "$p" -Y "infiniband && ($flt) && !(ip.dsfield.dscp in {40, 48})" 2>/dev/null | wc -l)))
    done
    [ "$n" -gt 0 ] && [ "$m" = 0 ] && ok "capture: job a's wireshark_filter finds its $n frames, all at its class" ||
        fail "capture: job a's filter matched $n frames, $m of them not at its class ($flt)"
fi

# A scheduler: six arrivals drawn from two templates on a 64-GPU cluster,
# first come first served: later ones wait for GPUs, each is timed alone
# on the GPUs it got, and the timeline names a job started late.
cat >"$TMP/sched.json" <<'EOF'
{"topology": {"gpus": 64, "radix": 16}, "fidelity": "flow",
 "jobs": [{"name": "dense", "gpus": 32, "placement": "random", "workload": {"plan": "demo-dense"}},
          {"name": "bulk", "gpus": 48, "placement": "fragmented", "traffic": {"kind": "all-to-all", "bytes": 262144}}],
 "scheduler": {"arrivals": 6, "interarrival_us": 2000}}
EOF
if "$RS" run -o "$TMP/sched" "$TMP/sched.json" >"$TMP/sched.out" 2>"$TMP/sched.err"; then
    v=$(json_get "$TMP/sched/summary.json" "(lambda j, q: (len(j), q['completed'], all(x['name'].split('#')[1] == str(i) for i, x in enumerate(j)), all(x['wait_ps'] >= 0 and x['end_ps'] > x['start_ps'] >= x['arrival_ps'] for x in j), any(x['wait_ps'] > 0 for x in j), all(x['slowdown'] > 0.95 for x in j), q['makespan_ps'] == d['sim_end_ps'] or q['makespan_ps'] <= d['sim_end_ps']))(d['jobs'], d['scheduler'])")
    [ "$v" = "(6, 6, True, True, True, True, True)" ] && ok "scheduler: 6 arrivals, queued first come first served, each timed alone" ||
        fail "scheduler: $v"
    grep -q '^  scheduler  6 of 6 arrivals completed in .*slowdown mean' "$TMP/sched.out" &&
        ok "scheduler: run prints its line" || fail "scheduler line: $(grep scheduler "$TMP/sched.out")"
    late=$(json_get "$TMP/sched/summary.json" "[x['name'] for x in d['jobs'] if x['kind'] == 'workload' and x['wait_ps'] > 0][0]")
    grep -aq "job $late)" "$TMP/sched/timeline.msgpack" && ok "scheduler: the timeline names $late, started late" ||
        fail "scheduler: no timeline names for $late"
else
    fail "scheduler run: $(head -1 "$TMP/sched.err")"
fi

# An arrival list: the arrivals come when the list says, in its order;
# the second waits for the first's GPUs.
cat >"$TMP/list.json" <<'EOF'
{"topology": {"gpus": 64, "radix": 16}, "fidelity": "flow",
 "jobs": [{"name": "dense", "gpus": 32, "placement": "random", "workload": {"plan": "demo-dense"}},
          {"name": "bulk", "gpus": 48, "placement": "fragmented", "traffic": {"kind": "all-to-all", "bytes": 262144}}],
 "scheduler": {"list": [{"job": "bulk", "at_us": 0}, {"job": "dense", "at_us": 10}, {"job": "dense", "at_us": 20},
                        {"job": "bulk", "at_us": 5000}]}}
EOF
if "$RS" run -q -o "$TMP/list" "$TMP/list.json" >/dev/null 2>"$TMP/list.err"; then
    v=$(json_get "$TMP/list/summary.json" "(' '.join(j['name'] for j in d['jobs']), [j['arrival_ps'] for j in d['jobs']], d['jobs'][1]['wait_ps'] > 0, d['scheduler']['completed'])")
    [ "$v" = "('bulk#0 dense#1 dense#2 bulk#3', [0, 10000000, 20000000, 5000000000], True, 4)" ] &&
        ok "scheduler.list: 4 arrivals as listed, dense#1 waits for bulk#0" || fail "scheduler.list: $v"
else
    fail "scheduler.list run: $(head -1 "$TMP/list.err")"
fi

# The summaries of jobs (classes, faults, collectives, job_links, an
# arrival list) match docs/schema/summary.schema.json.
SRC=$E2E/../..
for d in flow-fat-tree prio5-packet fault-packet coll-flow nccl list sched; do
    "$PY" "$SRC/tests/tools/schema_check.py" "$SRC/docs/schema" summary "$TMP/$d/summary.json" >"$TMP/sc" 2>&1
    case $? in
    0) ok "summary of $d matches its schema" ;;
    77) ;; # no python3-jsonschema: e2e.outputs says so
    *) fail "summary of $d fails its schema: $(head -3 "$TMP/sc")" ;;
    esac
done

# (4) report and compare show the jobs.
"$RS" report "$TMP/flow-fat-tree" >"$TMP/report.out" 2>&1
grep -q '^jobs (3), each against itself alone' "$TMP/report.out" &&
    grep -q '^  bulk  *traffic  *8 random ' "$TMP/report.out" &&
    ok "report prints a row per job" || fail "report: $(grep -A4 '^jobs' "$TMP/report.out")"
if "$PY" -c "import matplotlib" 2>/dev/null; then
    "$RS" plot "$TMP/flow-fat-tree" >"$TMP/plot.out" 2>&1 && [ -s "$TMP/flow-fat-tree/plots/jobs.png" ] &&
        [ -s "$TMP/flow-fat-tree/plots/job_links.png" ] &&
        ok "plot draws jobs.png and job_links.png" || fail "plot: $(cat "$TMP/plot.out")"
fi
if "$RS" compare --set fidelity=flow -o "$TMP/cmp" "$TMP/three.json" >"$TMP/cmp.out" 2>"$TMP/cmp.err"; then
    [ "$(grep -c 'slowdown beside the others' "$TMP/cmp.out")" = 3 ] && grep -q '^  job moe ' "$TMP/cmp.out" &&
        grep -q "jobs' iterations per second" "$TMP/cmp.out" && grep -q 'network cost per iteration/s' "$TMP/cmp.out" &&
        ok "compare: rows per job on both networks, and the cluster's" || fail "compare rows: $(grep job "$TMP/cmp.out")"
    v=$(json_get "$TMP/cmp/compare.json" "[len(d['cases'][0][k]['jobs']) for k in ('rail_only', 'fat_tree')] if 'cases' in d else [len(d[k]['jobs']) for k in ('rail_only', 'fat_tree')]")
    [ "$v" = "[3, 3]" ] && ok "compare.json: each side's jobs" || fail "compare.json jobs: $v"
else
    fail "compare of three jobs: $(head -1 "$TMP/cmp.err")"
fi

# (5) Bad jobs: exit 2, one sentence, no output.
BAD_OUT="$TMP/bad"
cat >"$TMP/full.json" <<'EOF'
{"topology": {"gpus": 64}, "jobs": [{"name": "big", "gpus": 48, "placement": "random", "traffic": {}},
  {"name": "late", "gpus": 24, "placement": "packed", "workload": {"plan": "demo-dense"}}]}
EOF
expect_bad "a job that does not fit" "jobs\[1\] (late): workload.gpus: 24 GPUs do not fit the 16 free" \
    run -o "$TMP/bad" "$TMP/full.json"
cat >"$TMP/whole.json" <<'EOF'
{"topology": {"gpus": 64}, "jobs": [{"name": "frag", "placement": "0-3,8-11,16-19,24-27,32-35", "traffic": {}},
  {"name": "packed", "gpus": 32, "placement": "packed", "traffic": {}}]}
EOF
expect_bad "packed without whole free domains" "jobs\[1\] (packed): workload.placement: packed needs 4 whole free HB domains of 8 GPUs, the cluster has 3" \
    run -o "$TMP/bad" "$TMP/whole.json"
echo '{"scheduler": {"arrivals": 3, "interarrival_us": 10}}' >"$TMP/nojobs.json"
expect_bad "a scheduler without jobs" "scheduler: its arrivals are copies of the jobs array" run -o "$TMP/bad" "$TMP/nojobs.json"
echo '{"topology": {"gpus": 64}, "jobs": [{"name": "big", "gpus": 72, "traffic": {}}], "scheduler": {"arrivals": 2, "interarrival_us": 10}}' >"$TMP/big.json"
expect_bad "a template that never fits" "jobs\[0\] (big): workload.gpus: 72 GPUs do not fit" run -o "$TMP/bad" "$TMP/big.json"
echo '{"jobs": [{"name": "x", "traffic": {"kind": "incast"}, "priority": 3}]}' >"$TMP/key.json"
expect_bad "an unknown job key" "jobs\[0\]: unknown key 'priority'" run -o "$TMP/bad" "$TMP/key.json"
echo '{"jobs": [{"name": "x", "traffic": {"kind": "incast"}, "transport": {"mtu": 1024}}]}' >"$TMP/tr.json"
expect_bad "a cluster's transport key in a job" "jobs\[0\]: transport.mtu: the cluster's, not a job's; expected only transport.priority" run -o "$TMP/bad" "$TMP/tr.json"
echo '{"jobs": [{"name": "x", "traffic": {"kind": "incast"}, "transport": {"priority": 9}}]}' >"$TMP/tp.json"
expect_bad "a job's priority out of range" "transport.priority" run -o "$TMP/bad" "$TMP/tp.json"

finish
