#!/bin/sh
# Fault experiments end to end (docs/fault-experiments.md): a GPU straggler
# lengthens a synchronous iteration by exactly the stretched compute; the
# summary's fault-free baseline and slowdown; `railsim compare` with faults
# on both topologies, one of them cut off; `railsim faults sweep`; the
# faults in `railsim report`. Small scenarios: a few seconds in all.
RS=$1; E2E=$2; TRACE_TOOL=$3
. "$E2E/lib.sh"

check() {
    v=$(json_get "$2" "$3" 2>&1)
    [ "$v" = True ] && ok "$1" || fail "$1 ($v)"
}

# A 4-rank trace: compute 1 us, AllReduce 1 MiB over the four, compute 1 us.
"$TRACE_TOOL" "$TMP/sync.rst" sync || { fail "writing the sync trace"; finish; exit 1; }
NET="--set topology.gpus=4 --set topology.hb_size=1 --set workload.trace=$TMP/sync.rst"

# (1) Straggler: GPU 1 at half speed over the whole run (both compute ops:
# +2 us); GPU 3 x1.5 from 0.5 us for 1 us: the first op's last 0.5 us of
# work take 0.75 us (+0.25 us). Under a barrier per collective
# (workload.sync=collective) everyone waits in the AllReduce: the
# iteration grows by exactly that. Under the default (rank) the others'
# parts start without GPU 1, so its first 1 us is partly hidden: the
# iteration grows by at least its second op's 1 us and at most 2 us.
"$RS" run -q $NET --set faults.baseline=false -o "$TMP/r0" || fail "sync trace without faults (rank)"
"$RS" run -q $NET --fault "0 straggler=2 gpu1 1s" -o "$TMP/r1" || fail "straggler x2 (rank): exit $?"
r0=$(json_get "$TMP/r0/summary.json" "d['iteration']['time_ps']")
check "straggler x2 on gpu1 under workload.sync=rank: iteration + 1 to 2 us" "$TMP/r1/summary.json" \
    "$r0 + 1000000 <= d['iteration']['time_ps'] <= $r0 + 2000000 and d['fault_free']['time_ps'] == $r0"
NET="$NET --set workload.sync=collective"
"$RS" run -q $NET --set faults.baseline=false -o "$TMP/s0" || fail "sync trace without faults"
"$RS" run -q $NET --fault "0 straggler=2 gpu1 1s" -o "$TMP/s1" || fail "straggler x2: exit $?"
"$RS" run -q $NET --fault "500ns straggler=1.5 gpu3 1us" -o "$TMP/s2" || fail "straggler x1.5: exit $?"
t0=$(json_get "$TMP/s0/summary.json" "d['iteration']['time_ps']")
check "straggler x2 on gpu1: iteration + 2 us exactly, its compute 4 us" "$TMP/s1/summary.json" \
    "d['iteration']['time_ps'] == $t0 + 2000000 and d['iteration']['compute_ps']['max'] == 4000000 and d['iteration']['compute_ps']['min'] == 2000000"
check "straggler x1.5 for 1 us from 0.5 us: iteration + 0.25 us exactly" "$TMP/s2/summary.json" \
    "d['iteration']['time_ps'] == $t0 + 250000"
check "straggler entries in summary faults (straggler, straggler-end)" "$TMP/s2/summary.json" \
    "[(f['time_ps'], f['kind'], f['target'], f['applied']) for f in d['faults']] == [(500000, 'straggler', 'gpu3', True), (1500000, 'straggler-end', 'gpu3', True)]"

# (2) Fault-free baseline in the summary: same figures as the run without faults.
check "fault_free: baseline = the fault-free run, slowdown = ratio" "$TMP/s1/summary.json" \
    "d['fault_free']['status'] == 'complete' and d['fault_free']['time_of'] == 'iteration' and d['fault_free']['time_ps'] == $t0 and d['fault_free']['faulted_time_ps'] == d['iteration']['time_ps'] and abs(d['fault_free']['slowdown'] - d['iteration']['time_ps'] / $t0) < 1e-12"
check "no faults: no fault_free object" "$TMP/s0/summary.json" "'fault_free' not in d"
"$RS" run -q $NET --fault "0 straggler=2 gpu1 1s" --set faults.baseline=false -o "$TMP/s3" || fail "baseline off"
check "faults.baseline=false: no fault_free object" "$TMP/s3/summary.json" "'fault_free' not in d"
grep -q "faults     2 entries; without them the iteration takes" <<EOF2 && ok "human summary faults line" || fail "human summary faults line"
$("$RS" run $NET --fault "0 straggler=2 gpu1 1s")
EOF2
"$RS" run -q $NET --fault "1us straggler=0.5 gpu1 1us" -o "$TMP/bad" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "straggler=FACTOR with a factor from 1 to 1000" "$TMP/err" && [ ! -e "$TMP/bad" ] \
    && ok "straggler factor below 1: exit 2" || fail "straggler factor below 1: $(cat "$TMP/err")"
"$RS" run -q $NET --fault "1us straggler gpu9 1us" -o "$TMP/bad" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "'gpu9' is not a GPU of this topology" "$TMP/err" && [ ! -e "$TMP/bad" ] \
    && ok "straggler on a GPU the network lacks: exit 2" || fail "straggler gpu9: $(cat "$TMP/err")"
# Class entries draw distinct members; faults.seed moves the draw; more
# entries than members exits 2.
G4="0 straggler any-gpu 1us;0 straggler any-gpu 1us;0 straggler any-gpu 1us;0 straggler any-gpu 1us"
"$RS" run -q $NET --set "faults.schedule=$G4" --set faults.baseline=false -o "$TMP/d1" || fail "4 any-gpu stragglers"
check "four any-gpu entries on 4 GPUs hit all four" "$TMP/d1/summary.json" \
    "sorted(f['target'] for f in d['faults'] if f['kind'] == 'straggler') == ['gpu0', 'gpu1', 'gpu2', 'gpu3']"
"$RS" run -q $NET --fault "0 straggler any-gpu 1us" --set faults.baseline=false -o "$TMP/d2" >/dev/null
"$RS" run -q $NET --fault "0 straggler any-gpu 1us" --set faults.baseline=false --set faults.seed=3 -o "$TMP/d3" >/dev/null
"$RS" run -q $NET --fault "0 straggler any-gpu 1us" --set faults.baseline=false --set faults.seed=3 -o "$TMP/d4" >/dev/null
g2=$(json_get "$TMP/d2/summary.json" "d['faults'][0]['target']")
g3=$(json_get "$TMP/d3/summary.json" "d['faults'][0]['target']")
g4=$(json_get "$TMP/d4/summary.json" "d['faults'][0]['target']")
[ "$g3" = "$g4" ] && [ "$g2" != "$g3" ] && ok "faults.seed: same seed same draw ($g3), another seed another ($g2)" \
    || fail "faults.seed draws: $g2 $g3 $g4"
"$RS" run -q $NET --set "faults.schedule=$G4;1us straggler any-gpu 1us" -o "$TMP/bad" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "entry 5: class 'any-gpu' has 4 member(s) in this topology, all drawn by earlier entries" "$TMP/err" \
    && [ ! -e "$TMP/bad" ] && ok "five any-gpu entries on 4 GPUs: exit 2" || fail "too many class entries: $(cat "$TMP/err")"

# (3) compare with a fault on both topologies: GPU 1's NIC is down from the
# start. Both reach it through its HB domain and a neighbour's NIC
# (faults.reroute_hb), slower than without the fault. Without the reroute
# GPU 1 is cut off on both: each side is reported stopped, compare exits 0.
CMP="--set topology.gpus=16 --set topology.hb_size=2 --set topology.radix=8 --set workload.trace=$TMP/sync.rst"
"$RS" compare -q $CMP --fault "0 nic-down gpu1" -o "$TMP/c" 2>"$TMP/cerr" \
    && ok "compare with a fault: exit 0" || fail "compare with a fault: exit $?, $(cat "$TMP/cerr")"
c="$TMP/c/compare.json"
for side in rail_only fat_tree; do
    check "compare: $side completes through the HB domain, slower than its fault-free run" "$c" \
        "(lambda s: s['stopped'] is False and s['faults'][0]['target'] == 'gpu1.nic' and s['fault_free']['slowdown'] > 1 and s['time_ps'] == s['fault_free']['faulted_time_ps'])(d['cases'][0]['$side'])"
done
"$RS" compare -q $CMP --fault "0 nic-down gpu1" --set faults.reroute_hb=false -o "$TMP/c2" 2>"$TMP/cerr" \
    && ok "compare with a cut-off on both sides: exit 0" || fail "compare cut-off: exit $?, $(cat "$TMP/cerr")"
check "compare: fat tree stopped by the cut-off, naming 3->1" "$TMP/c2/compare.json" \
    "(lambda s: s['stopped'] is True and ' 3->1' in s['faults_stop'] and s['time_ps'] is None and s['fault_free']['slowdown'] is None and s['fault_free']['status'] == 'complete')(d['cases'][0]['fat_tree'])"
grep -q "| faults applied | STOPPED, cut off after: nic-down gpu1.nic @0us | STOPPED, cut off after: nic-down gpu1.nic @0us | |" "$TMP/c2/compare.md" \
    && grep -q "| slowdown vs fault-free |" "$TMP/c/compare.md" && ok "compare.md: faults and slowdown rows" \
    || fail "compare.md: $(head -14 "$TMP/c2/compare.md")"
"$RS" compare -q $CMP --fault "0 link-down any-network-link" >/dev/null 2>"$TMP/cerr" \
    && ok "compare with a class fault: drawn per topology, exit 0" || fail "compare class fault: $(cat "$TMP/cerr")"
# A class one topology lacks applies to the other: rail-only's 8-GPU rails
# fit one radix-8 switch each (no spine), the fat tree has a spine tier.
"$RS" compare -q $CMP --fault "5us link-down any-spine-link" -o "$TMP/c3" 2>"$TMP/cerr" \
    && ok "compare with a class rail-only lacks: exit 0" || fail "compare absent class: exit $?, $(cat "$TMP/cerr")"
check "compare: rail-only reports any-spine-link absent and runs as without it" "$TMP/c3/compare.json" \
    "(lambda s: s['faults_absent'] == [{'time_ps': 5000000, 'kind': 'link-down', 'spec': 'any-spine-link', 'entry': 1}] and not s['faults'] and s['stopped'] is False and s['fault_free']['slowdown'] == 1.0)(d['cases'][0]['rail_only'])"
check "compare: the fat tree applies it to one of its spine links" "$TMP/c3/compare.json" \
    "(lambda s: s['faults_absent'] == [] and s['faults'][0]['spec'] == 'any-spine-link' and s['faults'][0]['applied'] and s['faults'][0]['target'].startswith('leaf'))(d['cases'][0]['fat_tree'])"
grep -q "| faults applied | none; absent: link-down any-spine-link @5us (no member here) | link-down leaf.* @5us | |" "$TMP/c3/compare.md" \
    && ok "compare.md: the absent class is named on its side" || fail "compare.md absent: $(grep 'faults applied' "$TMP/c3/compare.md")"
# A class neither has (radix 64: the fat tree is one switch too), or a name
# one topology lacks: exit 2 before anything runs or is written.
"$RS" compare -q $CMP --set topology.radix=64 --fault "5us switch-down any-spine" -o "$TMP/cbad" 2>"$TMP/err"
[ $? -eq 2 ] && [ ! -e "$TMP/cbad" ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] \
    && grep -q "^railsim: faults.schedule: entry 1: class 'any-spine' has no member on either topology" "$TMP/err" \
    && ok "compare: a class neither topology has exits 2, nothing written" || fail "compare class on neither: $(cat "$TMP/err")"
"$RS" compare -q $CMP --fault "5us link-down leaf0.p4" -o "$TMP/cbad" 2>"$TMP/err"
[ $? -eq 2 ] && [ ! -e "$TMP/cbad" ] && grep -q "^railsim: rail-only: faults.schedule: entry 1: 'leaf0.p4' is not" "$TMP/err" \
    && ok "compare: a name rail-only lacks exits 2 before the first run" || fail "compare name on one side: $(cat "$TMP/err")"
"$RS" compare -q $CMP --fault "0 nic-dwn gpu1" -o "$TMP/cbad" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "^railsim: --fault: entry 1" "$TMP/err" && [ ! -e "$TMP/cbad" ] \
    && ok "compare: bad --fault exits 2 before any output" || fail "compare bad fault: $(cat "$TMP/err")"

# (4) faults sweep: ring AllReduce on 32 GPUs, link-down on distinct
# network links (repaired after 50 us) at drawn times, counts 0, 1, 2, 4.
SW="--set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=16 --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.bytes=4194304"
"$RS" faults sweep $SW --class any-network-link --count 0,1,2,4 --trials 3 --duration 50us -o "$TMP/sw" >"$TMP/sw.out" 2>/dev/null \
    && ok "faults sweep: exit 0" || fail "faults sweep: exit $?"
grep -q "^  rail-only       4      3" "$TMP/sw.out" && grep -q "^  fat-tree        4      3" "$TMP/sw.out" \
    && ok "faults sweep: the table printed" || fail "faults sweep table: $(cat "$TMP/sw.out")"
"$PY" - "$TMP/sw/sweep.json" <<'PYEOF' && ok "sweep.json: rows per topology and count, distinct targets, stats from the trials" || fail "sweep.json checks"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "railsim-faults-sweep" and d["kind"] == "link-down" and d["class"] == "any-network-link"
assert [t["topology"] for t in d["topologies"]] == ["rail-only", "fat-tree"]
for t in d["topologies"]:
    assert [r["count"] for r in t["rows"]] == [0, 1, 2, 4]
    for r in t["rows"]:
        assert r["completed"] + r["stopped"] + r["failed"] == r["runs"] == (1 if r["count"] == 0 else 3)
        sl = sorted(x["slowdown"] for x in r["trials"] if x["status"] == "complete")
        if r["count"] == 0:
            assert sl == [1.0]
        for x in r["trials"]:
            if r["count"]:
                assert len(x["targets"]) == r["count"] and len(set(x["targets"])) == r["count"], x
                assert all(0 <= tt < t["fault_free_time_ps"] for tt in x["times_ps"])
            if x["status"] == "complete":
                assert x["slowdown"] == x["time_ps"] / t["fault_free_time_ps"]
        if sl:
            n = len(sl)
            med = sl[n // 2] if n % 2 else (sl[n // 2 - 1] + sl[n // 2]) / 2
            assert r["slowdown"]["median"] == med and r["slowdown"]["worst"] == sl[-1]
        else:
            assert r["slowdown"]["median"] is None
# Trial seeds: the same on both topologies, and so the same drawn times fractions
a, b = d["topologies"]
for ra, rb in zip(a["rows"], b["rows"]):
    assert [x.get("seed") for x in ra["trials"]] == [x.get("seed") for x in rb["trials"]]
PYEOF
[ -f "$TMP/sw/sweep.md" ] && grep -q "| rail-only | 4 | 3 |" "$TMP/sw/sweep.md" && ok "sweep.md written" || fail "sweep.md"
"$RS" faults sweep $SW --class any-network-link --count 0,1,2,4 --trials 3 --duration 50us -o "$TMP/sw2" >/dev/null 2>&1
cmp -s "$TMP/sw/sweep.json" "$TMP/sw2/sweep.json" && ok "faults sweep: deterministic (same bytes)" || fail "sweep not deterministic"
"$RS" faults sweep $SW --class any-spine --kind switch-down --count 1 --trials 1 --topology rail-only -o "$TMP/swbad" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "class 'any-spine' has no member" "$TMP/err" && [ ! -e "$TMP/swbad" ] \
    && ok "faults sweep: a class the topology lacks exits 2, nothing written" || fail "sweep bad class: $(cat "$TMP/err")"
"$RS" faults sweep $SW --class leaf0.p4 -o "$TMP/swbad" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "expected a class" "$TMP/err" && ok "faults sweep: --class must be a class" || fail "sweep --class name: $(cat "$TMP/err")"
"$RS" faults sweep $SW --class any-network-link --count 1,x >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "\-\-count '1,x'" "$TMP/err" && ok "faults sweep: bad --count exits 2" || fail "sweep --count: $(cat "$TMP/err")"
BAD_OUT="$TMP/swbad"
expect_bad "faults sweep: more faults than one schedule holds, before any run" "120 faults do not fit in one schedule" \
    faults sweep $SW --class any-network-link --count 120 --trials 1 -o "$TMP/swbad"
expect_bad "faults sweep: stragglers without compute, before any run" "--kind straggler slows compute, but this scenario has none" \
    faults sweep $SW --kind straggler --class any-gpu --duration 1us --count 1 -o "$TMP/swbad"
# A bad input both fault-free runs share is said once, before any run
# (each run said it, then that the fault-free run failed).
expect_bad "faults sweep: a bad key, once" "^railsim: faults sweep: pfc.xon_bytes: expected at most pfc.xoff_bytes" \
    faults sweep $SW --class any-network-link --count 1 --trials 1 --set pfc.xoff_bytes=1 -o "$TMP/swbad"
BAD_OUT=
"$RS" faults sweep -q $SW --kind link-flap=10us,0.5 --class any-network-link --duration 40us --count 0,2 --trials 2 -o "$TMP/swf" \
    && json_get "$TMP/swf/sweep.json" "all(len(x['targets']) == 2 and len(x['times_ps']) == 2 for t in d['topologies'] for r in t['rows'] if r['count'] for x in r['trials'])" | grep -q True \
    && ok "faults sweep: link-flap trials list one target per flap" || fail "sweep flap targets: $(cat "$TMP/swf/sweep.json" | head -c 300)"

# (5) railsim report lists the timeline's fault records and the slowdown.
"$RS" report "$TMP/s2" >"$TMP/rep.out" 2>"$TMP/err" || fail "report of a straggler run: $(cat "$TMP/err")"
sd=$(json_get "$TMP/s2/summary.json" "'%.4fx' % (d['iteration']['time_ps'] / $t0)")
grep -q "^faults (timeline)" "$TMP/rep.out" && grep -Eq "^ +500.000 ns  straggler +gpu3 +gpu3$" "$TMP/rep.out" \
    && grep -Eq "^ +1.500 us  straggler-end +gpu3" "$TMP/rep.out" \
    && grep -q "slowdown vs the fault-free run: $sd (iteration" "$TMP/rep.out" \
    && ok "report: fault records from the timeline and the slowdown" || fail "report faults: $(tail -6 "$TMP/rep.out")"
"$RS" report "$TMP/s1" | grep -Eq "^ +0 s  straggler +gpu1 +gpu1$" \
    && ok "report: a fault at time 0 is in the timeline too" || fail "report: time-0 fault record missing"
"$RS" report "$TMP/s0" | grep -q "^faults (timeline)" && fail "report: a fault-free run lists faults" \
    || ok "report: no faults section without faults"

finish
