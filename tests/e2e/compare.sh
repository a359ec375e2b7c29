#!/bin/sh
# railsim compare: both runs are written as full run directories, the
# table's numbers are the two summaries' and the cost model's, sweeps
# repeat the comparison, bad input writes nothing.
RS=$1; E2E=$2
. "$E2E/lib.sh"

ARGS="--set workload.plan=demo-dense --set topology.gpus=16 --set topology.radix=8"
if "$RS" compare -q $ARGS -o "$TMP/c"; then ok "compare runs"; else fail "compare failed"; finish; exit 1; fi
for k in rail-only fat-tree; do
    [ -f "$TMP/c/$k/summary.json" ] && ok "$k/summary.json written" || fail "$k/summary.json missing"
done
[ -f "$TMP/c/compare.json" ] && [ -f "$TMP/c/compare.md" ] && ok "compare.json and compare.md" || fail "compare outputs missing"

"$PY" - "$TMP/c" > "$TMP/check" <<'PYEOF'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/compare.json"))["cases"][0]
ok = True
for key, sub in (("rail_only", "rail-only"), ("fat_tree", "fat-tree")):
    s = json.load(open("%s/%s/summary.json" % (d, sub)))
    side = c[key]
    ok &= side["time_ps"] == s["iteration"]["time_ps"]
    ok &= side["iteration"] == s["iteration"]
    ok &= side["payload_bytes"] == s["payload_bytes"]
    ok &= s["topology"]["kind"] == sub
    ok &= side["cost"]["links"] > 0
ro, ft = json.load(open(d + "/rail-only/summary.json")), json.load(open(d + "/fat-tree/summary.json"))
want = (ro["iteration"]["time_ps"] - ft["iteration"]["time_ps"]) / ft["iteration"]["time_ps"] * 100
ok &= abs(c["rail_only_vs_fat_tree"]["time_pct"] - want) < 1e-9
# The scenario is the same apart from the topology kind.
ro["scenario"]["topology"].pop("kind"); ft["scenario"]["topology"].pop("kind")
ok &= ro["scenario"] == ft["scenario"]
print("ok" if ok else "bad")
PYEOF
[ "$(cat "$TMP/check")" = ok ] && ok "table numbers equal the two summaries" || fail "compare.json disagrees with the summaries"

# Cost columns equal railsim cost for the same cluster.
"$RS" cost --gpus 16 --hb 8 --radix 8 --json > "$TMP/cost.json"
v=$("$PY" -c "
import json; c=json.load(open('$TMP/c/compare.json'))['cases'][0]; k=json.load(open('$TMP/cost.json'))
print(all(c[s]['cost'][f]==k[s][f] for s in ('rail_only','fat_tree') for f in ('switches','links','transceivers')) and abs(c['rail_only']['cost']['cost_usd']-k['rail_only']['cost_usd'])<1e-6)")
[ "$v" = True ] && ok "cost columns equal railsim cost" || fail "cost columns differ from railsim cost"

# run, compare and cost count switches alike: physical ones (2 here: 8
# rails of 2 GPUs share 8-port switches 4 to a switch), with the
# simulator's one per rail (8) beside them.
"$RS" run -q $ARGS --set topology.kind=rail-only -o "$TMP/r" >/dev/null 2>&1
"$RS" run $ARGS --set topology.kind=rail-only -o "$TMP/r2" >"$TMP/run.txt" 2>/dev/null
v=$("$PY" -c "
import json; c=json.load(open('$TMP/c/compare.json'))['cases'][0]; k=json.load(open('$TMP/cost.json'))
r=json.load(open('$TMP/r/summary.json'))['topology']
ok = k['rail_only']['switches'] == 2 and k['rail_only']['switches_logical'] == 8
for s, sub in (('rail_only', 'rail-only'), ('fat_tree', 'fat-tree')):
    t = json.load(open('$TMP/c/%s/summary.json' % sub))['topology']
    ok &= t['switches'] == c[s]['cost']['switches'] == k[s]['switches']
    ok &= t['switches_logical'] == c[s]['cost']['switches_logical'] == k[s]['switches_logical']
ok &= r['switches'] == 2 and r['switches_logical'] == 8
print(ok)")
[ "$v" = True ] && grep -q "rail-only, 16 GPUs, 2 switches (8 simulated, one per rail)" "$TMP/run.txt" \
    && ok "run, compare and cost report the same switches" || fail "switch counts differ between run, compare and cost"

# The rail-aligned dense job takes the same time on both.
v=$(json_get "$TMP/c/compare.json" "d['cases'][0]['rail_only_vs_fat_tree']['time_pct'] == 0")
[ "$v" = True ] && ok "dense TP+DP: rail-only equals the fat tree" || fail "dense job differs between topologies"

[ -s "$TMP/c/rail-only/plots/breakdown.png" ] && [ -s "$TMP/c/fat-tree/plots/link_util.png" ] \
    && ok "plots for both runs" || fail "compare plots missing"

# A sweep repeats the comparison per value.
"$RS" compare -q $ARGS --sweep topology.nic_gbps=200,400 -o "$TMP/s" \
    && [ "$(json_get "$TMP/s/compare.json" "len(d['cases'])")" = 2 ] && [ -f "$TMP/s/case1/fat-tree/summary.json" ] \
    && ok "sweep: one case per value" || fail "sweep"

# Same inputs, same comparison (wall times aside).
"$RS" compare -q $ARGS -o "$TMP/c2"
same=$("$PY" -c "
import json
a=json.load(open('$TMP/c/compare.json')); b=json.load(open('$TMP/c2/compare.json'))
print(a == b)")
[ "$same" = True ] && ok "deterministic" || fail "two identical compares differ"

# Bad input: exit 2, one line, nothing written.
for bad in "--sweep topology.nic_gbps" "--sweep nosuch.key=1,2" "--set topology.gpus=7" "--frob"; do
    rm -rf "$TMP/bad"
    "$RS" compare -q $ARGS $bad -o "$TMP/bad" 2>"$TMP/err"; rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && [ ! -e "$TMP/bad" ]; then
        ok "bad input '$bad': $(cat "$TMP/err")"
    else
        fail "bad input '$bad' (rc=$rc): $(cat "$TMP/err")"
    fi
done
finish
