#!/bin/sh
# railsim compare: both runs are written as full run directories, the
# table's numbers are the two summaries' and the cost model's, the bound
# and settings rows say what decides the verdict, sweeps repeat the
# comparison over their cartesian product, bad input writes nothing.
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

# The network-only bound: each side's is its summary's, no larger than
# the iteration, and a row of the table.
v=$("$PY" -c "
import json; d='$TMP/c'; c=json.load(open(d+'/compare.json'))['cases'][0]
s={k: json.load(open('%s/%s/summary.json' % (d, k))) for k in ('rail-only', 'fat-tree')}
print(all(c[k]['bound_ps'] == s[sub]['iteration']['bound_ps'] > 0 and c[k]['bound_ps'] <= c[k]['time_ps']
          for k, sub in (('rail_only', 'rail-only'), ('fat_tree', 'fat-tree'))))")
[ "$v" = True ] && grep -q '^| network bound per iteration | [0-9.]* ms | [0-9.]* ms |' "$TMP/c/compare.md" \
    && ok "bound row: each side's iteration.bound_ps, at most its iteration time" || fail "bound row ($v)"

# What decides the verdict, as the scenario has it: one line per setting
# under the table, one object each in compare.json.
# routing.flowlet_gap_us is shown with routing.ecmp=flowlet only, the
# DCQCN profile with transport.cc=dcqcn.
v=$("$PY" -c "
import json
sc = json.load(open('$TMP/c/rail-only/summary.json'))['scenario']
st = json.load(open('$TMP/c/compare.json'))['cases'][0]['settings']
routing = {'routing.' + k: v for k, v in sc['routing'].items() if k == 'ecmp' or (k == 'flowlet_gap_us' and sc['routing']['ecmp'] == 'flowlet')}
print(st == {
    'system': {'system.preset': 'dgx-h100', 'system.gpu': 'h100', 'nccl.model': 'nccl'},
    'forwarding': {'routing.pxn': 'auto', 'rail_only': 'pxn', 'fat_tree': 'pxn'},
    'routing': routing, 'transport': {'transport.kind': 'roce'},
    'recovery': {'transport.recovery': sc['transport']['recovery']},
    'congestion_control': {'transport.cc': 'dcqcn', 'transport.dcqcn.profile': 'connectx', 'dcqcn_defaults': True, 'dcqcn_changed': {}},
    'fidelity': {'fidelity': 'packet'}} and routing['routing.ecmp'] == 'flow' and st['recovery']['transport.recovery'] == 'go-back-n')")
[ "$v" = True ] && ok "compare.json settings: the system (DGX H100 by default), forwarding resolved per topology, routing, transport, recovery, cc, fidelity" \
    || fail "compare.json settings: $(json_get "$TMP/c/compare.json" "d['cases'][0]['settings']")"
for want in "- forwarding: routing.pxn=auto: cross-rail messages relay through the source's HB domain to the destination's rail (PXN), on both topologies" \
            "- routing: routing.ecmp=flow" "- transport: transport.kind=roce" \
            "- congestion control: transport.cc=dcqcn, transport.dcqcn.profile=connectx, its constants as the profile has them" "- fidelity: fidelity=packet"; do
    grep -qF -- "$want" "$TMP/c/compare.md" && ok "compare.md: $want" || fail "compare.md lacks '$want'"
done
grep -q '^- recovery: transport.recovery=go-back-n$' "$TMP/c/compare.md" \
    && ok "compare.md: recovery go-back-n" || fail "compare.md recovery: $(grep recovery "$TMP/c/compare.md")"

# A pipeline plan exposes idle no communication explains ("other"): its
# row is shown, so the rows add up to the exposed communication; changed
# DCQCN constants and the fidelity are named.
cat >"$TMP/dptp.json" <<'EOF'
{ "name": "dptp", "model": { "layers": 4, "hidden": 512, "ffn": 2048, "heads": 8, "seq_len": 512, "vocab": 1000 },
  "parallelism": { "tp": 2, "pp": 2, "micro_batch": 1, "global_batch": 8, "zero": 1 } }
EOF
"$RS" compare --set workload.plan="$TMP/dptp.json" --set topology.gpus=16 --set topology.hb_size=4 --set topology.radix=8 \
    --set transport.dcqcn.g=0.01 --set fidelity=flow -o "$TMP/pp" >"$TMP/pp.out" 2>"$TMP/pp.err" \
    || fail "pipeline compare: $(cat "$TMP/pp.err")"
v=$(json_get "$TMP/pp/compare.json" "all(abs(sum(d['cases'][0][k]['iteration']['comm_by_dim_ps'].values()) - d['cases'][0][k]['iteration']['exposed_comm_ps']['mean']) <= 6 and d['cases'][0][k]['iteration']['comm_by_dim_ps']['other'] > 0 for k in ('rail_only', 'fat_tree'))")
[ "$v" = True ] && grep -Eq '^    exposed other  *[0-9.]+ (ns|us|ms|s)  *[0-9.]+ (ns|us|ms|s) ' "$TMP/pp.out" \
    && ok "exposed other is a row: tp, pp, dp, other add up to the exposed communication" || fail "exposed other ($v): $(grep exposed "$TMP/pp.out")"
grep -qF "congestion control   transport.cc=dcqcn, transport.dcqcn.profile=connectx, DCQCN constants changed: transport.dcqcn.g=0.01" "$TMP/pp.out" \
    && grep -qF "fidelity             fidelity=flow" "$TMP/pp.out" \
    && [ "$(json_get "$TMP/pp/compare.json" "d['cases'][0]['settings']['congestion_control']['dcqcn_changed']")" = "{'transport.dcqcn.g': 0.01}" ] \
    && ok "changed DCQCN constants and the fidelity are named" || fail "settings lines: $(sed -n '/settings/,$p' "$TMP/pp.out")"

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

# A sweep repeats the comparison per value; several sweeps run their
# cartesian product, the last key fastest, each case with its values.
COLL="--set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=65536 --set topology.gpus=16 --set topology.radix=8"
"$RS" compare -q $COLL --sweep topology.nic_gbps=200,400 --sweep seed=1,2 -o "$TMP/s" 2>"$TMP/serr" \
    || fail "two sweeps: $(cat "$TMP/serr")"
v=$("$PY" -c "
import json
d='$TMP/s'; c=json.load(open(d+'/compare.json'))['cases']
want=[(200, 1), (200, 2), (400, 1), (400, 2)]
ok = [x['label'] for x in c] == ['traffic, topology.nic_gbps=%d, seed=%d' % w for w in want]
for i, (g, seed) in enumerate(want):
    for k in ('rail-only', 'fat-tree'):
        sc = json.load(open('%s/case%d/%s/summary.json' % (d, i, k)))['scenario']
        ok &= sc['topology']['nic_gbps'] == g and sc['seed'] == seed
print(ok)")
[ "$v" = True ] && ok "two sweeps: 2 x 2 cases, each with its values" || fail "two sweeps ($v)"

# Same inputs, same comparison (wall times aside).
"$RS" compare -q $ARGS -o "$TMP/c2"
same=$("$PY" -c "
import json
a=json.load(open('$TMP/c/compare.json')); b=json.load(open('$TMP/c2/compare.json'))
print(a == b)")
[ "$same" = True ] && ok "deterministic" || fail "two identical compares differ"

# Bad input: exit 2, one line, nothing written.
for bad in "--sweep topology.nic_gbps" "--sweep nosuch.key=1,2" "--set topology.gpus=7" "--frob" \
           "--sweep topology.kind=rail-only,fat-tree" "--set fidelity=both" "--sweep fidelity=packet,both" \
           "--sweep seed=1,2 --sweep seed=3" "--sweep seed=1,2,3,4,5,6,7,8 --sweep topology.mtu=1024,2048,3072,4096,5000,6000,7000,8000,9000" \
           "--sweep topology.mtu=4096,nine" "--set pfc.xoff_bytes=1" "--set workload.plan=nosuch"; do
    rm -rf "$TMP/bad"
    "$RS" compare -q $ARGS $bad -o "$TMP/bad" 2>"$TMP/err"; rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && [ ! -e "$TMP/bad" ]; then
        ok "bad input '$bad': $(cat "$TMP/err")"
    else
        fail "bad input '$bad' (rc=$rc): $(cat "$TMP/err")"
    fi
done
finish
