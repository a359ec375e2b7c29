#!/bin/sh
# railsim run -o DIR writes DIR/timeline.msgpack (timeline.* keys,
# docs/timeline-format.md): a small TP+PP+DP replay's timeline feeds
# `railsim report` (per-rank compute and exposed communication that agree
# with the summary), `export perfetto` and `export csv`; the same seed gives
# the same bytes; the summary is the same with and without a timeline; a
# failed run keeps a partial one; timeline.enabled=false writes none;
# timeline.heavy=false and sample_us=0 drop their kinds; a collective run
# writes one coll record per iteration; a compute-only replay's sim_end_ps
# is its end. Header and records are read independently with python3-msgpack
# where it is installed.
RS=$1; E2E=$2
. "$E2E/lib.sh"

HAVE_MSGPACK=0
"$PY" -c "import msgpack" 2>/dev/null && HAVE_MSGPACK=1

# tl_read FILE: one line "partial=P complete=C kinds=K:N,..." plus header facts.
tl_read() {
    "$PY" - "$1" <<'PYEOF'
import json, sys, collections, msgpack
with open(sys.argv[1], "rb") as f:
    u = msgpack.Unpacker(f, raw=False)
    h = next(u)
    kinds, end = collections.Counter(), None
    for rec in u:
        kinds[rec[0]] += 1
        if rec[0] == 10:
            end = rec
sc = json.loads(h["scenario"])
print("partial=%s complete=%s seed=%d gpus=%d planes=%d sc_seed=%d kinds=%s" % (
    h["partial"], end[1] if end else None, h["seed"], h["topology"]["gpus"], h["topology"]["planes"],
    sc["seed"], ",".join("%d:%d" % kv for kv in sorted(kinds.items()))))
PYEOF
}
# kind_count LINE KIND: how many records of KIND the tl_read line counts.
kind_count() { echo "$1" | tr ' ,' '\n\n' | sed -n "s/^\(kinds=\)\{0,1\}$2:\([0-9]*\)$/\2/p"; }

# 1. A TP=2, PP=2 plan on 16 GPUs (DP 4) in HB domains of 4.
cat >"$TMP/plan.json" <<'EOF'
{ "name": "tiny-3d", "model": { "layers": 2, "hidden": 256, "ffn": 1024, "heads": 4, "seq_len": 256, "vocab": 1000 },
  "parallelism": { "tp": 2, "pp": 2, "micro_batch": 1, "global_batch": 8 } }
EOF
RUN="--set workload.plan=$TMP/plan.json --set topology.gpus=16 --set topology.hb_size=4"
if "$RS" run -q $RUN -o "$TMP/a" 2>"$TMP/err" && [ -f "$TMP/a/timeline.msgpack" ]; then
    ok "replay run writes timeline.msgpack"
else
    fail "replay run: $(cat "$TMP/err")"
fi
ls -a "$TMP/a" | grep -q '\.tmp' && fail "temporary file left behind" || ok "no temporary files"

if [ $HAVE_MSGPACK -eq 1 ]; then
    l=$(tl_read "$TMP/a/timeline.msgpack")
    ops=$(kind_count "$l" 2); colls=$(kind_count "$l" 3); flows=$(kind_count "$l" 4)
    nflows=$(json_get "$TMP/a/summary.json" "d['flows']['count']")
    case "$l" in
    "partial=False complete=True seed=1 gpus=16 planes=1 sc_seed=1 "*) ok "header: complete, seed, topology, scenario";;
    *) fail "header: $l";;
    esac
    [ "${ops:-0}" -gt 0 ] && [ "${colls:-0}" -gt 0 ] && [ "$flows" = "$nflows" ] &&
        ok "op, coll and flow records ($ops, $colls, $flows)" || fail "record counts: $l (flows $nflows)"
else
    echo "skip header checks: python3-msgpack not installed"
fi

# report: per-rank compute and exposed communication from the timeline; the
# mean compute over ranks is the summary's (one iteration).
"$RS" report "$TMP/a" >"$TMP/report" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^compute vs exposed communication per rank (16 ranks)' "$TMP/report" &&
   grep -q '^  0  *rank 0 (gpu 0) ' "$TMP/report" && grep -q '^  dp  *allreduce' "$TMP/report" &&
   grep -q '^  tp  *allreduce' "$TMP/report" && grep -q '^  pp  *send' "$TMP/report" &&
   ! grep -q '^timeline: none' "$TMP/report"; then
    ok "report: per-rank compute/exposed, time by dimension"
else
    fail "report (exit $rc): $(cat "$TMP/err") $(sed -n '/^timeline/,$p' "$TMP/report" | head -30)"
fi

# export csv: per rank, the compute ops add up to the summary's compute time.
if "$RS" export csv "$TMP/a/timeline.msgpack" -o "$TMP/csv" >/dev/null 2>"$TMP/err" &&
   "$PY" - "$TMP/csv" "$TMP/a/summary.json" <<'PYEOF'
import csv, json, sys, collections
d = json.load(open(sys.argv[2]))["iteration"]
comp = collections.Counter()
kinds = set()
for r in csv.DictReader(open(sys.argv[1] + "/op.csv")):
    kinds.add(r["op"])
    if r["op"] == "compute":
        comp[int(r["rank"])] += int(r["dur_ps"])
assert len(comp) == 16, comp
assert min(comp.values()) == d["compute_ps"]["min"] and max(comp.values()) == d["compute_ps"]["max"], (comp, d)
assert {"compute", "allreduce", "send", "recv"} <= kinds, kinds
colls = list(csv.DictReader(open(sys.argv[1] + "/coll.csv")))
assert colls and all(c["comm_name"][:3] in ("tp[", "dp[") for c in colls), colls[:3]
PYEOF
then
    ok "export csv: compute per rank matches the summary"
else
    fail "export csv: $(cat "$TMP/err")"
fi

# export perfetto: valid JSON with one X event per op.
if "$RS" export perfetto "$TMP/a/timeline.msgpack" -o "$TMP/t.json" >/dev/null 2>"$TMP/err" &&
   "$PY" - "$TMP/t.json" "$TMP/csv/op.csv" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
x = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("compute", "comm")]
nops = sum(1 for _ in open(sys.argv[2])) - 1
assert len(x) == nops, (len(x), nops)
PYEOF
then
    ok "export perfetto: valid JSON, an X event per op"
else
    fail "export perfetto: $(cat "$TMP/err")"
fi

# 2. Same seed twice: byte-identical timeline.
"$RS" run -q $RUN -o "$TMP/b" 2>/dev/null
cmp -s "$TMP/a/timeline.msgpack" "$TMP/b/timeline.msgpack" && ok "same seed, same timeline bytes" \
    || fail "timelines differ between two runs of one seed"

# 3. With and without a timeline: the same summary but for timeline.* (and
# the host's wall_s, peak_rss_bytes).
same_summary() {
    "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
def load(p):
    d = json.load(open(p))
    d.pop("wall_s"); d.pop("peak_rss_bytes"); d["scenario"].pop("timeline")
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
sys.exit(0 if a == b else 1)
PYEOF
}
"$RS" run -q $RUN --set timeline.enabled=false -o "$TMP/off" 2>/dev/null
if [ ! -e "$TMP/off/timeline.msgpack" ] && [ -f "$TMP/off/summary.json" ]; then
    ok "timeline.enabled=false writes none"
else
    fail "timeline.enabled=false"
fi
same_summary "$TMP/a/summary.json" "$TMP/off/summary.json" && ok "replay: same summary with and without a timeline" \
    || fail "replay: summaries differ with a timeline"
# A congested packet run samples a lot: still the same summary.
INC="--set traffic.kind=incast --set traffic.fan_in=8 --set traffic.bytes=262144 --set timeline.sample_us=0.5"
"$RS" run -q $INC -o "$TMP/inc" "$E2E/small.json" 2>/dev/null
"$RS" run -q $INC --set timeline.enabled=false -o "$TMP/inc-off" "$E2E/small.json" 2>/dev/null
same_summary "$TMP/inc/summary.json" "$TMP/inc-off/summary.json" && ok "incast: same summary with and without a timeline" \
    || fail "incast: summaries differ with a timeline"

# 4. heavy=false: no flow, sample, pfc or ecn records; sample_us=0: no samples.
"$RS" run -q $INC --set timeline.heavy=false -o "$TMP/light" "$E2E/small.json" 2>/dev/null
"$RS" run -q $INC --set timeline.sample_us=0 -o "$TMP/nosample" "$E2E/small.json" 2>/dev/null
same_summary "$TMP/inc/summary.json" "$TMP/light/summary.json" && ok "heavy=false: same summary" \
    || fail "heavy=false: summary differs"
if [ $HAVE_MSGPACK -eq 1 ]; then
    full=$(tl_read "$TMP/inc/timeline.msgpack"); light=$(tl_read "$TMP/light/timeline.msgpack")
    nos=$(tl_read "$TMP/nosample/timeline.msgpack")
    [ -n "$(kind_count "$full" 4)" ] && [ -n "$(kind_count "$full" 5)" ] &&
    [ -z "$(kind_count "$light" 4)$(kind_count "$light" 5)$(kind_count "$light" 6)$(kind_count "$light" 7)" ] &&
    [ -n "$(kind_count "$nos" 4)" ] && [ -z "$(kind_count "$nos" 5)" ] &&
        ok "heavy=false drops flows and samples; sample_us=0 drops samples" ||
        fail "record kinds: full $full / light $light / no samples $nos"
fi

# 5. A failed run (ideal transport, losses): exit 1, the timeline is kept
# and marked partial.
"$RS" run -q --set pfc.enabled=false --set traffic.kind=incast --set traffic.fan_in=8 --set topology.buffer_bytes=32768 \
    --set traffic.bytes=262144 --set transport.kind=ideal -o "$TMP/lossy" "$E2E/small.json" 2>/dev/null
rc=$?
"$RS" report "$TMP/lossy" >"$TMP/report" 2>&1
if [ $rc -eq 1 ] && grep -q "^timeline .*timeline.msgpack: partial" "$TMP/report"; then
    ok "failed run: timeline kept, partial"
else
    fail "failed run (exit $rc): $(grep timeline "$TMP/report")"
fi
if [ $HAVE_MSGPACK -eq 1 ]; then
    l=$(tl_read "$TMP/lossy/timeline.msgpack")
    case "$l" in
    "partial=True complete=False "*) [ -n "$(kind_count "$l" 8)" ] && ok "partial header and drop records" \
                                          || fail "no drop records: $l";;
    *) fail "partial header: $l";;
    esac
fi

# 6. Bad input writes nothing; a too-small sampling interval is bad input.
"$RS" run -q --set timeline.sample_us=0.0001 -o "$TMP/bad" "$E2E/small.json" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && [ ! -e "$TMP/bad" ] && grep -q 'timeline.sample_us' "$TMP/err" &&
    ok "timeline.sample_us below 1 ns: exit 2, nothing written" || fail "bad sample_us (exit $rc): $(cat "$TMP/err")"
"$RS" run -q --set traffic.group=rail:99 --set traffic.kind=collective -o "$TMP/bad2" "$E2E/small.json" 2>/dev/null
[ $? -eq 2 ] && [ ! -e "$TMP/bad2" ] && ok "bad scenario: no output directory" || fail "bad scenario wrote output"

# 7. A collective run: one coll record per iteration, on the named group.
"$RS" run -q --set topology.hb_size=4 --set traffic.kind=collective --set traffic.group=rail:1 --set traffic.iters=3 \
    --set traffic.bytes=65536 -o "$TMP/coll" "$E2E/small.json" 2>/dev/null
"$RS" export csv "$TMP/coll/timeline.msgpack" -o "$TMP/coll/csv" >/dev/null 2>&1
"$PY" - "$TMP/coll/csv/coll.csv" "$TMP/coll/summary.json" <<'PYEOF' && ok "collective: a coll record per iteration" || fail "collective coll records"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
c = json.load(open(sys.argv[2]))["collective"]
assert [int(r["dur_ps"]) for r in rows] == c["times_ps"], (rows, c)
assert all(r["comm_name"] == "rail:1" and r["op"] == c["op"] and r["algo"] == c["algo"] for r in rows), rows
PYEOF

# 8. A compute-only replay (one GPU) ends when its last rank does.
cat >"$TMP/one.json" <<'EOF'
{ "name": "one", "model": { "layers": 1, "hidden": 64, "ffn": 256, "heads": 4, "seq_len": 32, "vocab": 100 },
  "parallelism": { "micro_batch": 1, "global_batch": 1 } }
EOF
"$RS" run --set workload.plan="$TMP/one.json" --set topology.gpus=1 --set topology.hb_size=1 \
    -o "$TMP/one" >"$TMP/one.out" 2>&1
v=$(json_get "$TMP/one/summary.json" "d['sim_end_ps'] == d['iteration']['time_ps'] > 0")
[ "$v" = True ] && ! grep -q '^  simulated  0.000 us' "$TMP/one.out" &&
    ok "compute-only replay: sim_end_ps is its end" || fail "compute-only sim_end_ps: $(cat "$TMP/one.out")"
finish
