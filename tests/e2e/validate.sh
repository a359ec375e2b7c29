#!/bin/sh
# railsim validate end to end: a small ring AllReduce runs at packet and at
# flow level and they agree within 5%; validate.json's figures are the two
# summaries' own; bad input exits 2 with one line and writes nothing.
RS=$1; E2E=$2
. "$E2E/lib.sh"

# 64 GPUs in HB domains of 8 (the defaults): rail:0 is 8 GPUs, one per domain.
AR="--set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.group=rail:0 \
--set traffic.bytes=67108864 --set topology.kind=rail-only --set transport.kind=ideal"

"$RS" validate $AR -o "$TMP/v" >"$TMP/out" 2>"$TMP/err" || fail "validate: run failed ($(cat "$TMP/err"))"
V="$TMP/v/validate.json"
[ -f "$TMP/v/packet/summary.json" ] && [ -f "$TMP/v/flow/summary.json" ] && [ -f "$V" ] \
    && ok "validate -o writes packet/, flow/ and validate.json" || fail "validate -o outputs missing"
grep -q '^  allreduce (ring) time  .* %$' "$TMP/out" && grep -q '^  simulation wall time .*x$' "$TMP/out" \
    && ok "table has the collective's row and the speed-up" || fail "table rows ($(cat "$TMP/out"))"

# check NAME EXPR: EXPR (Python over v = validate.json, p, f = the packet
# and flow summaries) must be True.
check() {
    r=$("$PY" -c "
import json, sys
v = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2])); f = json.load(open(sys.argv[3]))
def get(d, key):
    for k in key.split('.'):
        d = d[k]
    return d
print($2)" "$V" "$TMP/v/packet/summary.json" "$TMP/v/flow/summary.json" 2>&1)
    [ "$r" = True ] && ok "$1" || fail "$1 ($r)"
}
check "the runs are packet and flow level of the same scenario and seed" \
    "p['scenario']['fidelity'] == 'packet' and f['scenario']['fidelity'] == 'flow' and p['scenario']['seed'] == f['scenario']['seed'] and p['status'] == f['status'] == 'complete'"
check "headline is collective.time_ps, flow within 5% of packet" \
    "v['headline'] == 'collective.time_ps' and abs(v['error_pct']) < 5"
check "message times compared only when both levels sent the same messages (flow level: ring streams)" \
    "p['flows']['count'] == 8 * 2 * 14 * 8 and f['flows']['count'] == 8 * 2 and [m['metric'] for m in v['metrics']] == ['collective.time_ps']"
check "metrics are the summaries' numbers, errors computed from them" \
    "all(m['packet'] == get(p, m['metric']) and m['flow'] == get(f, m['metric']) and abs(m['error_pct'] - (m['flow'] - m['packet']) / m['packet'] * 100) < 1e-9 for m in v['metrics'])"
check "wall times are the summaries', speed-up their ratio" \
    "v['wall_s']['packet'] == p['wall_s'] and v['wall_s']['flow'] == f['wall_s'] and abs(v['speedup'] - p['wall_s'] / f['wall_s']) < 1e-9 * v['speedup']"

# A ring of one piece per slice, long enough to stream (64 GPUs in HB
# domains of 4, 126 steps of one 32 KiB piece per channel, crossing the
# spine): its time is the pieces' latency chain and window, not the slowest
# hop's rate; the streams are held to it (coll_ring.c stream_pace).
"$RS" validate --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring \
    --set traffic.bytes=8388608 --set topology.gpus=64 --set topology.hb_size=4 --set topology.radix=16 \
    -o "$TMP/v1" >"$TMP/out1" 2>"$TMP/err1" || fail "validate, one piece per slice: run failed ($(cat "$TMP/err1"))"
"$PY" -c "
import json, sys
v = json.load(open(sys.argv[1] + '/validate.json')); p = json.load(open(sys.argv[1] + '/packet/summary.json'))
f = json.load(open(sys.argv[1] + '/flow/summary.json'))
assert p['flows']['count'] == 4 * 64 * 126 and f['flows']['count'] == 4 * 64, (p['flows']['count'], f['flows']['count'])
assert abs(v['error_pct']) < 2, v['error_pct']" "$TMP/v1" \
    && ok "a ring of one piece per slice streams at flow level and agrees within 2%" \
    || fail "one piece per slice: $(cat "$TMP/out1")"

# railsim run --set fidelity=both is validate: the same outputs and table.
"$RS" run $AR --set fidelity=both -o "$TMP/b" >"$TMP/bout" 2>"$TMP/berr" || fail "run fidelity=both failed ($(cat "$TMP/berr"))"
[ -f "$TMP/b/packet/summary.json" ] && [ -f "$TMP/b/flow/summary.json" ] && [ -f "$TMP/b/validate.json" ] &&
    grep -q '^  allreduce (ring) time  .* %$' "$TMP/bout" \
    && ok "run --set fidelity=both writes packet/, flow/, validate.json and the table" || fail "run fidelity=both outputs"
"$PY" -c "
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a['metrics'] == b['metrics'] and a['error_pct'] == b['error_pct'], (a, b)" "$V" "$TMP/b/validate.json" \
    && ok "run fidelity=both gives validate's figures" || fail "run fidelity=both figures differ from validate's"
# A replay: the rows per parallelism dimension (where a step's collective kinds show up).
cat >"$TMP/dptp.json" <<'EOF2'
{ "name": "dptp", "model": { "layers": 2, "hidden": 512, "ffn": 2048, "heads": 8, "seq_len": 512, "vocab": 1000 },
  "parallelism": { "tp": 2, "pp": 2, "micro_batch": 1, "global_batch": 4, "zero": 1 } }
EOF2
"$RS" run --set topology.gpus=16 --set topology.hb_size=4 --set transport.kind=ideal --set workload.plan="$TMP/dptp.json" \
    --set fidelity=both -o "$TMP/r" >"$TMP/rout" 2>"$TMP/rerr" || fail "replay fidelity=both failed ($(cat "$TMP/rerr"))"
"$PY" -c "
import json, sys
v = json.load(open(sys.argv[1]))
keys = [m['metric'] for m in v['metrics']]
assert v['headline'] == 'iteration.time_ps' and abs(v['error_pct']) < 5, v
assert 'iteration.comm_by_dim_ps.tp' in keys and 'iteration.comm_by_dim_ps.dp' in keys, keys" "$TMP/r/validate.json" \
    && ok "replay at both levels: iteration time within 5%, rows per dimension" || fail "replay fidelity=both ($(cat "$TMP/r/validate.json"))"
# Faults at both levels: GPU 8's NIC (on the ring) at half rate for 500 us
# slows the AllReduce by 10.3% at both levels (measured 2026-12-05:
# 2668.401 us packet, 2668.310 us flow, from 2418.381 and 2418.310 us).
"$RS" run $AR --set fidelity=both --set 'faults.schedule=100us link-degrade gpu8.nic 500us' -o "$TMP/bf" >/dev/null 2>"$TMP/err" \
    || fail "fidelity=both with faults: exit $? $(cat "$TMP/err")"
"$PY" -c "
import json, sys
v = json.load(open(sys.argv[1] + '/validate.json'))
s = [json.load(open(sys.argv[1] + '/' + k + '/summary.json')) for k in ('packet', 'flow')]
assert abs(v['error_pct']) < 1, v
for d in s:
    assert d['faults'][0]['kind'] == 'link-degrade' and d['faults'][0]['target'] == 'gpu8.nic', d['faults']
    assert 1.05 < d['fault_free']['slowdown'] < 1.15, d['fault_free']
assert abs(s[0]['fault_free']['slowdown'] - s[1]['fault_free']['slowdown']) < 0.01" "$TMP/bf" \
    && ok "fidelity=both with a degraded link: both levels slow down alike, within 1%" || fail "fidelity=both with faults"

# Out of memory during a run (an incast into a 16 GiB switch buffer without
# PFC: the queued packets grow to millions): exit 1 with a message naming
# memory, not a stuck run. Skipped where the binary cannot start under the
# limit (sanitizer builds reserve more).
BIG="--set traffic.kind=permutation --set traffic.fan_in=15 --set traffic.bytes=1073741824 --set topology.gpus=16
     --set topology.hb_size=1 --set topology.radix=8 --set topology.buffer_bytes=17179869184 --set pfc.enabled=false
     --set transport.kind=ideal"
if (ulimit -v 400000; "$RS" run $AR -q >/dev/null 2>&1); then
    (ulimit -v 60000; "$RS" run $BIG -q -o "$TMP/oom" >/dev/null 2>"$TMP/err"); rc=$?
    [ $rc -eq 1 ] && grep -q "^railsim: run failed: out of memory at simulated time" "$TMP/err" \
        && [ "$(wc -l <"$TMP/err")" -eq 1 ] \
        && ok "out of memory during a run: exit 1, one line naming memory" || fail "out of memory: rc=$rc $(cat "$TMP/err")"
else
    ok "out of memory during a run: skipped (the binary needs more address space than the test allows)"
fi

# Bad input: exit 2, one line on stderr, no output directory.
for bad in "--set traffic.bytes=-1" "--set nosuch.key=1" "--bogus"; do
    "$RS" validate $AR $bad -o "$TMP/bad" >"$TMP/out" 2>"$TMP/err"; rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && [ ! -e "$TMP/bad" ] && [ ! -s "$TMP/out" ] \
        && ok "bad input '$bad': exit 2, one line, nothing written" \
        || fail "bad input '$bad': rc=$rc, stderr: $(cat "$TMP/err")"
done
"$RS" validate "$TMP/missing.json" -o "$TMP/bad" 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && [ ! -e "$TMP/bad" ] \
    && ok "missing scenario file: exit 2, one line, nothing written" || fail "missing scenario: rc=$rc"

finish
