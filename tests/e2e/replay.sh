#!/bin/sh
# railsim run with a workload (workload.plan / workload.trace) through the
# binary: the FLOP model on one GPU, a DP+TP plan and the same plan as a
# trace file (same figures), the summary's iteration object, determinism,
# bad input (exit 2 naming the key) and a trace that cannot finish (exit 1
# naming the stuck ranks and op). Small plans and the ideal transport keep
# it to a few seconds.
RS=$1; E2E=$2; BAD_TRACE=$3
. "$E2E/lib.sh"

# 1. Compute only, one GPU, 1 FLOP/ps and 32 B/ps of HBM, the flat model
# (gpu.model=flat): every op lasts its FLOP (or parameter) count, so the
# iteration is the closed form exactly.
cat >"$TMP/tiny.json" <<'EOF'
{ "name": "tiny", "model": { "layers": 3, "hidden": 64, "ffn": 256, "heads": 4, "seq_len": 32, "vocab": 100 },
  "parallelism": { "micro_batch": 2, "global_batch": 6 },
  "gpu": { "peak_flops": 1e12, "efficiency": 1, "memory_bw": 32e12, "model": "flat" } }
EOF
"$RS" run --set workload.plan="$TMP/tiny.json" --set topology.gpus=1 --set topology.hb_size=1 \
    --set workload.iterations=2 -o "$TMP/tiny" >"$TMP/tiny.out" 2>"$TMP/tiny.err"
rc=$?
"$PY" - "$TMP/tiny/summary.json" <<'PYEOF' && [ $rc -eq 0 ] && ok "compute-only plan equals the FLOP model" || fail "compute-only plan (exit $rc): $(cat "$TMP/tiny.err")"
import json, sys
d = json.load(open(sys.argv[1]))
it = d["iteration"]
h, f, s, V, L, m, tok = 64, 256, 32, 100, 3, 3, 64
layer = 2*tok*h*3*h + 4*tok*s*h + 2*tok*h*h + 2*tok*h*f*2
logits = 2*tok*h*V
params = L*(4*h*h + 2*h*f) + 2*V*h
expect = m*3*(L*layer + logits) + params
assert d["status"] == "complete", d["status"]
assert it["times_ps"] == [expect, expect], (it["times_ps"], expect)
assert it["time_ps"] == expect and it["compute_ps"]["mean"] == expect
assert it["exposed_comm_ps"] == {"mean": 0, "min": 0, "max": 0}
assert abs(it["mfu"] - 3*m*(L*layer + logits) / expect) < 1e-12
assert abs(it["tokens_per_s"] - 6*32 / (expect * 1e-12)) < 1e-3
PYEOF
# Times in the unit that fits (docs/cli.md, "Units"): 191.558 us, not 0.192 ms.
grep -q "^  iteration  tiny, 1 ranks, 2 of 2 iteration(s): mean 191.558 us, compute 191.558 us, exposed comm 0 s (0.0 %)" "$TMP/tiny.out" &&
    ok "human iteration line" || fail "human iteration line: $(cat "$TMP/tiny.out")"

# 1b. The same plan on an H100 from shapes (the default gpu.model): a
# compute-only GPU draws its busy power all the time (docs/compute.md), and
# the energy is that power over the iteration.
sed 's/"gpu": {[^}]*}/"gpu": { "preset": "h100" }/' "$TMP/tiny.json" >"$TMP/tinyh.json"
"$RS" run --set workload.plan="$TMP/tinyh.json" --set topology.gpus=1 --set topology.hb_size=1 \
    -o "$TMP/tinyh" -q 2>"$TMP/tinyh.err"
rc=$?
"$PY" - "$TMP/tinyh/summary.json" <<'PYEOF' && [ $rc -eq 0 ] && ok "shapes model: power and energy of a compute-only GPU" || fail "shapes power (exit $rc): $(cat "$TMP/tinyh.err")"
import json, sys
d = json.load(open(sys.argv[1]))
it = d["iteration"]; g = it["gpu"]
assert g["name"] == "h100", g
assert g["contention_ps"] == 0 and g["comm_only_ps"] == 0, g
assert abs(g["power_w"] - 700) < 1e-9, g
assert abs(g["energy_j"] - 700 * it["time_ps"] * 1e-12) < 1e-12, g
assert 0 < it["mfu"] < 1, it["mfu"]
PYEOF

# 2. DP+TP with pipeline: a plan file and the trace generated from it give
# the same figures; the iteration object is consistent.
cat >"$TMP/dptp.json" <<'EOF'
{ "name": "dptp", "model": { "layers": 4, "hidden": 512, "ffn": 2048, "heads": 8, "seq_len": 512, "vocab": 1000 },
  "parallelism": { "tp": 2, "pp": 2, "micro_batch": 1, "global_batch": 8, "zero": 1 } }
EOF
NET="--set topology.gpus=16 --set topology.hb_size=4 --set transport.kind=ideal"
"$RS" run $NET --set workload.plan="$TMP/dptp.json" --set workload.iterations=2 -o "$TMP/plan" -q 2>"$TMP/plan.err"
rc=$?
[ $rc -eq 0 ] && ok "DP+TP+PP plan replays" || fail "DP+TP+PP plan: exit $rc: $(cat "$TMP/plan.err")"
"$PY" - "$TMP/plan/summary.json" <<'PYEOF' && ok "iteration object consistent" || fail "iteration object"
import json, sys
d = json.load(open(sys.argv[1]))
it = d["iteration"]
assert d["status"] == "complete"
assert it["ranks"] == 16 and it["iterations"] == 2 and len(it["times_ps"]) == 2
assert abs(it["time_ps"] - sum(it["times_ps"]) / 2) <= 1
c, e = it["compute_ps"], it["exposed_comm_ps"]
assert c["min"] <= c["mean"] <= c["max"] and e["min"] <= e["mean"] <= e["max"]
assert abs(c["mean"] + e["mean"] - it["time_ps"]) <= 2
by = it["comm_by_dim_ps"]
assert set(by) == {"tp", "pp", "dp", "cp", "ep", "other"}
assert abs(sum(by.values()) - e["mean"]) <= 6, (by, e)
assert by["tp"] > 0 and by["pp"] > 0 and by["cp"] == 0 and by["ep"] == 0
assert 0 < it["mfu"] < 0.5 and it["tokens_per_s"] > 0
assert d["scenario"]["workload"]["iterations"] == 2
PYEOF
"$RS" trace gen "$TMP/dptp.json" --gpus 16 -o "$TMP/dptp.rst" -q &&
"$RS" run $NET --set workload.trace="$TMP/dptp.rst" --set workload.iterations=2 -o "$TMP/trace" -q 2>"$TMP/trace.err"
rc=$?
[ $rc -eq 0 ] && [ "$(json_get "$TMP/plan/summary.json" "d['iteration']")" = "$(json_get "$TMP/trace/summary.json" "d['iteration']")" ] &&
    ok "trace file replays as the plan" || fail "trace file replay (exit $rc): $(cat "$TMP/trace.err")"

# 3. Determinism: the same scenario twice gives the same summary.
"$RS" run $NET --set workload.plan="$TMP/dptp.json" --set workload.iterations=2 -o "$TMP/plan2" -q 2>/dev/null
[ "$(strip_host "$TMP/plan/summary.json")" = "$(strip_host "$TMP/plan2/summary.json")" ] &&
    ok "deterministic summary" || fail "summaries differ between two runs"

# 3a. workload.contention (docs/compute.md): auto is off on the generic
# network (nccl.model=ideal), on slows the compute beside collectives there
# too.
for c in auto on; do
    "$RS" run $NET --set system.preset=none --set workload.plan="$TMP/dptp.json" --set workload.contention=$c \
        -o "$TMP/cont-$c" -q 2>"$TMP/cont.err" || fail "workload.contention=$c: $(cat "$TMP/cont.err")"
done
[ "$(json_get "$TMP/cont-auto/summary.json" "d['iteration']['gpu']['contention_ps'] == 0")" = True ] &&
    [ "$(json_get "$TMP/cont-on/summary.json" "d['iteration']['gpu']['contention_ps'] > 0")" = True ] &&
    ok "workload.contention: auto off under nccl.model=ideal, on takes effect there" ||
    fail "workload.contention under nccl.model=ideal"

# 3b. workload.sync=rank (the default): each member's part of a
# collective starts at its issue and ends with its own part; the same
# summary and timeline bytes twice, the key in the summary. What waits
# for every member (a pairwise all-to-all) starts at its last member's
# issue: demo-moe's all-to-alls run pairwise under it, within 0.1% of
# the barrier's iteration.
"$RS" run $NET --set workload.plan="$TMP/dptp.json" -o "$TMP/rank" -q 2>"$TMP/rank.err" &&
"$RS" run $NET --set workload.plan="$TMP/dptp.json" -o "$TMP/rank2" -q 2>/dev/null
rc=$?
[ $rc -eq 0 ] && [ "$(strip_host "$TMP/rank/summary.json")" = "$(strip_host "$TMP/rank2/summary.json")" ] &&
    cmp -s "$TMP/rank/timeline.msgpack" "$TMP/rank2/timeline.msgpack" &&
    [ "$(json_get "$TMP/rank/summary.json" "d['status'], d['scenario']['workload']['sync']")" = "complete rank" ] &&
    ok "workload.sync=rank by default, deterministic" || fail "workload.sync=rank (exit $rc): $(cat "$TMP/rank.err")"
for s in rank collective; do
    "$RS" run $NET --set fidelity=flow --set workload.plan=demo-moe --set workload.algo=pairwise \
        --set workload.sync=$s -o "$TMP/pw-$s" -q 2>"$TMP/err" || fail "pairwise under $s: $(cat "$TMP/err")"
done
"$RS" report "$TMP/pw-rank" | grep -q "^  alltoall  *pairwise  *256 " &&
    [ "$(json_get "$TMP/pw-rank/summary.json" "abs(d['iteration']['time_ps'] / json.load(open('$TMP/pw-collective/summary.json'))['iteration']['time_ps'] - 1) < 1e-3")" = True ] &&
    ok "workload.sync=rank runs pairwise all-to-alls, each from its last member's issue" ||
    fail "pairwise under workload.sync=rank: $("$RS" report "$TMP/pw-rank" | grep alltoall)"

# 4. A preset: DP fills the network (llama2-70b keeps tp 8 x pp 4).
"$RS" run --set workload.plan=llama2-70b --set topology.gpus=48 -q 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q "workload.plan: plan llama2-70b needs a multiple of .* = 32 GPUs, but topology.gpus is 48" "$TMP/err" &&
    ok "plan that does not fit: exit 2" || fail "plan that does not fit: exit $rc: $(cat "$TMP/err")"

# 5. Bad input: exit 2, one line naming the key, no output directory.
BAD_OUT="$TMP/bad"
bad_run() { n=$1; p=$2; shift 2; expect_bad "$n" "$p" run "$@" -o "$TMP/bad"; }
bad_run "trace for more GPUs" "workload.trace: .*dptp.rst is a trace for 16 GPUs, but the network has 8 (topology.gpus)" \
    --set topology.gpus=8 --set workload.trace="$TMP/dptp.rst"
bad_run "plan and trace" "workload.plan and workload.trace: expected one of them" \
    --set workload.plan=llama2-7b --set workload.trace="$TMP/dptp.rst"
bad_run "missing trace" "workload.trace: .*nope.rst" --set workload.trace="$TMP/nope.rst"
bad_run "unknown preset" "workload.plan: llama9: no such plan file or preset" --set workload.plan=llama9
bad_run "iterations 0" "workload.iterations: expected an integer from 1 to 1000000" \
    --set workload.plan=llama2-7b --set workload.iterations=0
bad_run "unknown algorithm" "workload.algo: expected one of" --set workload.algo=fast
bad_run "job larger than the cluster" "workload.gpus: 128 GPUs do not fit a cluster of 64 (topology.gpus)" \
    --set workload.plan=demo-dense --set workload.gpus=128
bad_run "placement list with a repeat" "workload.placement: GPU 5 listed twice" \
    --set workload.plan=demo-dense --set workload.placement=0-7,16-22,5
bad_run "unknown placement" "workload.placement: expected packed, spread, fragmented, random or a list" \
    --set workload.plan=demo-dense --set workload.placement=tight

# 5b. Placement (docs/replay.md): demo-dense on 32 of 64 GPUs, flow level.
# packed and spread keep rails aligned (the same iteration on both
# networks, nothing relayed); a fragmented job relays on rail-only where
# the fat tree sends some messages over the spine, because NCCL relays
# only through the job's own GPUs; the same seed gives the same bytes.
for pl in packed spread fragmented; do
    for k in fat-tree rail-only; do
        "$RS" run --set workload.plan=demo-dense --set workload.gpus=32 --set workload.placement=$pl \
            --set topology.kind=$k --set fidelity=flow --set timeline.enabled=false -o "$TMP/pl-$pl-$k" \
            >"$TMP/pl-$pl-$k.out" 2>&1 || fail "placement $pl on $k: $(cat "$TMP/pl-$pl-$k.out")"
    done
done
"$RS" run --set workload.plan=demo-dense --set workload.gpus=32 --set workload.placement=fragmented \
    --set fidelity=flow --set timeline.enabled=false -o "$TMP/pl-again" >/dev/null 2>&1
"$PY" - "$TMP" <<'PYEOF' && ok "placement: packed and spread rail-aligned, fragmented relays more on rail-only, deterministic" || fail "placement"
import json, re, sys
t = sys.argv[1]
def it(p): return json.load(open("%s/pl-%s/summary.json" % (t, p)))["iteration"]["time_ps"]
def relayed(p): return int(re.search(r"forwarding (\d+) of", open("%s/pl-%s.out" % (t, p)).read()).group(1))
for pl in ("packed", "spread"):
    assert it(pl + "-fat-tree") == it(pl + "-rail-only"), pl
    assert relayed(pl + "-fat-tree") == 0 and relayed(pl + "-rail-only") == 0, pl
assert relayed("fragmented-rail-only") > relayed("fragmented-fat-tree") > 0
assert it("fragmented-fat-tree") > it("packed-fat-tree")
again = json.load(open(t + "/pl-again/summary.json"))
first = json.load(open(t + "/pl-fragmented-fat-tree/summary.json"))
assert all(again[k] == first[k] for k in ("iteration", "flows", "packets", "ports", "events"))
PYEOF

# 6. A trace that cannot finish: a collective ranks 2 and 3 never call.
"$BAD_TRACE" "$TMP/broken.rst" || fail "bad_trace could not write its file"
"$RS" run --set topology.gpus=4 --set topology.hb_size=1 --set workload.trace="$TMP/broken.rst" \
    -o "$TMP/broken" -q >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/stderr")" -eq 1 ] &&
   grep -q "replay made no progress .* 2 of 4 ranks never finished iteration 1 of 1: rank 0 is stuck at op 1 (coll \"grad allreduce\", allreduce of 1048576 bytes on communicator 0, its call 1 there) waiting for ranks 2, 3" "$TMP/stderr" &&
   [ "$(json_get "$TMP/broken/summary.json" "d['status'], d['iteration']['time_ps'], d['iteration']['times_ps']")" = "incomplete None []" ]; then
    ok "stuck replay: exit 1: $(cat "$TMP/stderr")"
else
    fail "stuck replay: exit $rc: $(cat "$TMP/stderr")"
fi

finish
