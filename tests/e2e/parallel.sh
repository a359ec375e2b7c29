#!/bin/sh
# Independent runs in child processes (-j N, cli/jobs.c): `railsim compare
# --sweep` and `railsim faults sweep` write the same bytes at -j 1 and 3
# (each run's summary aside from its wall time and memory); a bad -j is
# bad input.
RS=$1; E2E=$2
. "$E2E/lib.sh"

SMALL="--set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=16"
for j in 1 3; do
    "$RS" compare -q -j $j $SMALL --set traffic.kind=collective --set traffic.op=allreduce \
        --set traffic.bytes=8388608 --sweep topology.nic_gbps=200,400 -o "$TMP/c$j" \
        >"$TMP/c$j.out" 2>"$TMP/c$j.err" || fail "compare -j $j failed ($(cat "$TMP/c$j.err"))"
    "$RS" faults sweep -j $j $SMALL --set traffic.kind=collective --set traffic.op=allreduce \
        --set traffic.bytes=8388608 --class any-network-link --count 0,1,2 --trials 3 -o "$TMP/f$j" \
        >"$TMP/f$j.out" 2>"$TMP/f$j.err" || fail "faults sweep -j $j failed ($(cat "$TMP/f$j.err"))"
done
for j in 3; do
    cmp -s "$TMP/c1/compare.json" "$TMP/c$j/compare.json" \
        && ok "compare -j $j: compare.json is -j 1's" || fail "compare -j $j: compare.json differs"
    same=1
    same_runs "$TMP/c1" "$TMP/c$j" case0/rail-only case0/fat-tree case1/rail-only case1/fat-tree || same=0
    [ $same = 1 ] && ok "compare -j $j: every run's summary and timeline are -j 1's" \
        || fail "compare -j $j: a run's outputs differ"
    cmp -s "$TMP/f1/sweep.json" "$TMP/f$j/sweep.json" && cmp -s "$TMP/f1/sweep.md" "$TMP/f$j/sweep.md" &&
        cmp -s "$TMP/f1.out" "$TMP/f$j.out" \
        && ok "faults sweep -j $j: sweep.json, sweep.md and the table are -j 1's" \
        || fail "faults sweep -j $j: outputs differ"
done
n=$(grep -c 'trial . of 3' "$TMP/f3.err")
[ "$n" -eq 12 ] && ok "faults sweep -j 3 names every trial as it starts ($n)" || fail "faults sweep -j 3: $n trial lines"
"$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
t = [t for topo in d['topologies'] for r in topo['rows'] if r['count'] for t in r['trials']]
assert len(t) == 12 and all(x['status'] == 'complete' and x['slowdown'] >= 1 for x in t), t" "$TMP/f3/sweep.json" \
    && ok "faults sweep -j 3: twelve faulted trials, all complete, none faster than fault-free" \
    || fail "faults sweep -j 3: trials"

BAD_OUT="$TMP/bad"
expect_bad "compare -j 0" "compare: -j '0': expected a number of processes from 1 to 256" compare -j 0 -o "$TMP/bad"
expect_bad "faults sweep -j x" "faults sweep: -j 'x': expected a number" faults sweep --class any-nic -j x -o "$TMP/bad"
finish
