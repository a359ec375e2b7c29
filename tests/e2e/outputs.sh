#!/bin/sh
# The outputs as other programs read them: summary.json, compare.json and
# scenarios against their JSON Schemas (docs/schema/, python3-jsonschema),
# broken documents rejected, the scenario schema up to date with the
# binary's key table and agreeing with the reader on what it accepts; the
# Python package (analysis/python/railsim) against railsim report's counts;
# railsim plot on a run and on a compare directory, from the source tree
# and installed (cmake --install). Skips (77) only when /usr/bin/python3
# lacks jsonschema, matplotlib or msgpack.
RS=$1; E2E=$2; BUILD=$3
. "$E2E/lib.sh"
SRC=$(cd "$E2E/../.." && pwd)
SCHEMA=$SRC/docs/schema
CHECK="$PY $SRC/tests/tools/schema_check.py $SCHEMA"
if ! "$PY" -c "import jsonschema, matplotlib, msgpack" 2>/dev/null; then
    echo "SKIP: $PY lacks python3-jsonschema, python3-matplotlib or python3-msgpack (scripts/install-deps)"
    exit 77
fi
export PYTHONPATH="$SRC/analysis/python"
export PYTHONDONTWRITEBYTECODE=1

# 1. The scenario schema is what scripts/scenario-schema makes of this
# binary's `railsim help keys`: a key added, renamed or re-ranged in
# run/scenario.c without regenerating it fails here.
if "$PY" "$SRC/scripts/scenario-schema" "$RS" >"$TMP/scenario.schema.json" 2>"$TMP/stderr" &&
   diff -u "$SCHEMA/scenario.schema.json" "$TMP/scenario.schema.json" >"$TMP/diff"; then
    ok "scenario schema matches railsim help keys"
else
    fail "scenario schema is stale (scripts/scenario-schema $RS > docs/schema/scenario.schema.json): $(cat "$TMP/stderr") $(head -20 "$TMP/diff")"
fi

# 2. Real outputs: a collective with every timeline kind, a training
# replay with a fault (faults, fault_free), a compare over a sweep.
run() { name=$1; shift; if "$RS" run -q "$@" -o "$TMP/$name" 2>"$TMP/stderr"; then ok "run $name"; else fail "run $name: $(cat "$TMP/stderr")"; fi; }
run coll --set topology.gpus=16 --set traffic.kind=collective --set traffic.op=allreduce \
    --set traffic.bytes=262144 --set traffic.iters=3 --set timeline.sample_us=1
run replay --set workload.plan=demo-dense --set topology.gpus=16 --set topology.radix=8 \
    --set topology.kind=rail-only --fault "20us link-down any-network-link 50us"
# A shared cluster: two jobs (docs/shared-clusters.md).
cat >"$TMP/jobs.json" <<'EOF'
{"topology": {"gpus": 16}, "fidelity": "flow",
 "jobs": [{"name": "dense", "gpus": 8, "placement": "random", "workload": {"plan": "demo-dense"}},
          {"name": "bulk", "traffic": {"kind": "incast", "fan_in": 4}}]}
EOF
run jobs "$TMP/jobs.json"
if "$RS" compare -q --set workload.plan=demo-dense --set topology.gpus=16 --set topology.radix=8 \
        --set timeline.heavy=false --sweep topology.nic_gbps=200,400 -o "$TMP/cmp" 2>"$TMP/stderr"; then
    ok "compare with a sweep"
else
    fail "compare with a sweep: $(cat "$TMP/stderr")"
fi
# A dragonfly against the fat tree: its own side key, plotted too.
if "$RS" compare -q --against dragonfly --set workload.plan=demo-dense --set topology.gpus=16 \
        --set topology.radix=8 --set fidelity=flow --set timeline.heavy=false -o "$TMP/cmpdf" 2>"$TMP/stderr" &&
   [ -s "$TMP/cmpdf/plots/compare.png" ] && [ -s "$TMP/cmpdf/dragonfly/summary.json" ]; then
    ok "compare --against dragonfly"
else
    fail "compare --against dragonfly: $(cat "$TMP/stderr")"
fi

expect_valid() {
    what=$1; kind=$2; shift 2
    if $CHECK "$kind" "$@" >"$TMP/check" 2>&1; then
        ok "$what: $(wc -l <"$TMP/check") valid"
    else
        fail "$what: $(grep -v '^ok' "$TMP/check" | head -5)"
    fi
}
expect_valid "summaries of run and compare" summary "$TMP/coll/summary.json" "$TMP/replay/summary.json" \
    "$TMP/jobs/summary.json" \
    "$TMP"/cmp/case*/*/summary.json
expect_valid "compare.json" compare "$TMP/cmp/compare.json" "$TMP/cmpdf/compare.json"
# Every effective scenario is a scenario file (docs/summary-format.md), and
# so are the repository's own.
for d in coll replay jobs; do
    json_get "$TMP/$d/summary.json" "__import__('json').dumps(d['scenario'])" >"$TMP/$d.scenario.json"
done
expect_valid "scenarios" scenario "$TMP/coll.scenario.json" "$TMP/replay.scenario.json" "$TMP/jobs.scenario.json" \
    "$E2E/small.json" \
    "$SRC"/bench/scenarios/*.json
# ... with every key of the table in it.
"$RS" help keys | awk 'NR > 1 {print $1}' | sort >"$TMP/keys"
"$PY" - "$TMP/coll/summary.json" >"$TMP/sckeys" <<'PYEOF'
import json, sys
def walk(o, prefix):
    for k, v in o.items():
        if isinstance(v, dict):
            yield from walk(v, prefix + k + ".")
        else:
            yield prefix + k
print("\n".join(sorted(walk(json.load(open(sys.argv[1]))["scenario"], ""))))
PYEOF
cmp -s "$TMP/keys" "$TMP/sckeys" && ok "the effective scenario has every key of help keys" ||
    fail "effective scenario keys differ from help keys: $(diff "$TMP/keys" "$TMP/sckeys" | head -5)"

# 3. Broken documents are rejected, each for the reason planted.
"$PY" - "$TMP" <<'PYEOF'
import copy, json, os, sys
t = sys.argv[1]
s = json.load(open(os.path.join(t, "coll", "summary.json")))
c = json.load(open(os.path.join(t, "cmp", "compare.json")))
def put(name, doc):
    json.dump(doc, open(os.path.join(t, "bad-" + name + ".json"), "w"))
d = copy.deepcopy(s); del d["packets"]; put("summary-missing", d)
d = copy.deepcopy(s); d["sim_end_ps"] = "12 ps"; put("summary-type", d)
d = copy.deepcopy(s); d["flows"]["fct_ps"]["p50"] = -1; put("summary-negative", d)
d = copy.deepcopy(s); d["topology"]["kind"] = "clos"; put("summary-enum", d)
d = copy.deepcopy(s); d["extra_key"] = 1; put("summary-extra", d)
d = copy.deepcopy(s); d["scenario"]["topology"]["gpus"] = 0; put("summary-scenario", d)
d = copy.deepcopy(c); d["format"] = "railsim-summary"; put("compare-format", d)
d = copy.deepcopy(c); d["cases"][1]["fat_tree"]["cost"]["power_w"] = None; put("compare-cost", d)
d = copy.deepcopy(c); d["cases"][0]["settings"]["routing"]["routing.ecmp"] = "random"; put("compare-setting", d)
d = copy.deepcopy(c); d["cases"] = []; put("compare-empty", d)
PYEOF
expect_invalid() {
    file=$1; kind=$2; pat=$3
    $CHECK "$kind" "$TMP/bad-$file.json" >"$TMP/check" 2>&1
    rc=$?
    if [ $rc -eq 1 ] && grep -q -- "$pat" "$TMP/check"; then
        ok "rejected $file: $(cut -c1-160 "$TMP/check")"
    else
        fail "$file: exit $rc, expected 1 and '$pat': $(cat "$TMP/check")"
    fi
}
expect_invalid summary-missing summary "'packets' is a required property"
expect_invalid summary-type summary "at sim_end_ps"
expect_invalid summary-negative summary "at flows/fct_ps/p50"
expect_invalid summary-enum summary "at topology/kind"
expect_invalid summary-extra summary "'extra_key' was unexpected"
expect_invalid summary-scenario summary "at scenario/topology/gpus"
expect_invalid compare-format compare "at format"
expect_invalid compare-cost compare "at cases/1/fat_tree/cost/power_w"
expect_invalid compare-setting compare "at cases/0/settings/routing/routing.ecmp"
expect_invalid compare-empty compare "at cases"

# 4. The scenario schema accepts what the reader accepts and rejects what
# it rejects: each document is run (a tiny network, one empty message)
# and validated, and the verdicts must agree.
"$PY" - "$TMP" <<'PYEOF'
import json, os, sys
base = {"topology": {"gpus": 8, "hb_size": 8}, "traffic": {"kind": "single", "bytes": 0}}
cases = {
    # accepted by both
    "ok-plain": {},
    "ok-spelling": {"traffic": {"kind": "single", "bytes": 0}, "routing": {"ecmp": "flow_let"}},
    "ok-bool-string": {"pfc": {"enabled": "false"}, "ecn": {"enabled": True}},
    "ok-whole-real": {"topology": {"gpus": 8.0, "hb_size": 8, "radix": 6.4e1}},
    "ok-dotted-section": {"transport.dcqcn": {"g": 0.5}},
    "ok-nested-section": {"transport": {"dcqcn": {"g": 0.5, "profile": "paper-2015"}}},
    # rejected by both
    "bad-unknown-key": {"topology": {"gpus": 8, "hb_size": 8, "radx": 8}},
    "bad-dotted-key": {"topology.gpus": 8},
    "bad-enum": {"topology": {"gpus": 8, "hb_size": 8, "kind": "clos"}},
    "bad-range": {"topology": {"gpus": 8, "hb_size": 8, "oversubscription": 0.5}},
    "bad-open-min": {"topology": {"gpus": 8, "hb_size": 8, "nic_gbps": 0}},
    "bad-fraction": {"seed": 1.5},
    "bad-negative": {"seed": -1},
    "bad-long-string": {"capture": {"ports": "x" * 256}},
    "bad-section-type": {"pfc": 1},
    "bad-bool": {"pfc": {"enabled": 1}},
}
for name, extra in cases.items():
    doc = json.loads(json.dumps(base))
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(doc.get(k), dict):
            doc[k].update(v)
        else:
            doc[k] = v
    if name == "bad-dotted-key":
        del doc["topology"]
        doc["topology.hb_size"] = 8
    json.dump(doc, open(os.path.join(sys.argv[1], "sc-%s.json" % name), "w"))
PYEOF
for f in "$TMP"/sc-*.json; do
    name=$(basename "$f" .json)
    "$RS" run -q "$f" >/dev/null 2>"$TMP/stderr"; rc=$?
    $CHECK scenario "$f" >"$TMP/check" 2>&1; v=$?
    case "$name" in
    sc-ok-*)  [ $rc -eq 0 ] && [ $v -eq 0 ] && ok "$name: railsim and the schema accept it" ||
                  fail "$name: railsim exit $rc ($(cat "$TMP/stderr")), schema: $(cat "$TMP/check")" ;;
    sc-bad-*) [ $rc -eq 2 ] && [ $v -eq 1 ] && ok "$name: both reject it ($(cat "$TMP/stderr"))" ||
                  fail "$name: railsim exit $rc ($(cat "$TMP/stderr")), schema: $(cat "$TMP/check")" ;;
    esac
done

# 5. The Python package: counts per record kind as railsim report gives
# them, the end record's count, the summary's flows and collectives.
for d in coll replay; do
    "$RS" report "$TMP/$d" >"$TMP/$d.report" 2>"$TMP/stderr" || fail "report $d: $(cat "$TMP/stderr")"
    if "$PY" - "$TMP/$d" "$TMP/$d.report" >"$TMP/out" 2>&1 <<'PYEOF'
import re, sys, railsim
d, report = sys.argv[1], open(sys.argv[2]).read()
s = railsim.read_summary(d)
assert s["format"] == "railsim-summary" and s == railsim.read_summary(d + "/summary.json")
counts, n, header, end = {}, 0, None, None
for r in railsim.read_timeline(d + "/timeline.msgpack"):
    k = r["record"]
    if k == "header":
        header = r
    elif k == "end":
        end = r
    else:
        counts[k] = counts.get(k, 0) + 1
        n += 1
m = re.search(r"^timeline .*: complete, (\d+) records \(([^)]*)\)", report, re.M)
assert m, "no timeline line in the report"
want = {k: int(v) for v, k in (x.split() for x in m.group(2).split(", "))}
got = {k: v for k, v in counts.items() if k != "name"}
assert got == want, "per kind: package %s, report %s" % (got, want)
assert n == int(m.group(1)) == end["records"], (n, m.group(1), end)
assert header["partial"] is False and end["complete"] is True
assert counts.get("flow", 0) == s["flows"]["completed"], (counts.get("flow"), s["flows"])
if "collective" in s:
    assert counts["coll"] == s["collective"]["iters"], (counts["coll"], s["collective"])
if "iteration" in s:
    assert counts["op"] > 0 and counts.get("fault", 0) > 0
only = list(railsim.read_timeline(d + "/timeline.msgpack", {"coll"}))
assert [r["record"] for r in only] == ["header"] + ["coll"] * counts.get("coll", 0) + ["end"]
print(" ".join("%s %d" % kv for kv in sorted(counts.items())))
PYEOF
    then ok "read_summary/read_timeline on $d agree with report: $(cat "$TMP/out")"
    else fail "read_timeline on $d: $(cat "$TMP/out")"
    fi
done
if "$PY" - "$TMP/cmp" >"$TMP/out" 2>&1 <<'PYEOF'
import os, sys, railsim
d = sys.argv[1]
c = railsim.read_compare(d)
runs = railsim.compare_runs(d)
assert len(runs) == len(c["cases"]) == 2
for case, r in zip(c["cases"], runs):
    assert r["label"] == case["label"]
    for side, key in (("rail-only", "rail_only"), ("fat-tree", "fat_tree")):
        s = railsim.read_summary(r[side])
        assert s["topology"]["kind"] == side
        assert s["iteration"] == case[key]["iteration"], side
print(", ".join(r["label"] for r in runs))
PYEOF
then ok "read_compare/compare_runs: $(cat "$TMP/out")"
else fail "read_compare/compare_runs: $(cat "$TMP/out")"
fi
# Errors name the file: wrong format, truncated and foreign timelines.
head -c 5000 "$TMP/coll/timeline.msgpack" >"$TMP/cut.msgpack"
printf 'junk' >"$TMP/junk.msgpack"
if "$PY" - "$TMP" >"$TMP/out" 2>&1 <<'PYEOF'
import sys, railsim
t = sys.argv[1]
def raises(exc, f, *a):
    try:
        r = f(*a)
        if hasattr(r, "__next__"):
            list(r)
    except exc as e:
        assert t in str(e), e
        return str(e)
    raise AssertionError("no %s from %s%r" % (exc.__name__, f.__name__, a))
print(raises(railsim.FormatError, railsim.read_summary, t + "/cmp/compare.json"))
print(raises(railsim.FormatError, railsim.read_compare, t + "/coll/summary.json"))
print(raises(OSError, railsim.read_compare, t + "/coll"))
print(raises(railsim.TruncatedError, railsim.read_timeline, t + "/cut.msgpack"))
print(raises(railsim.FormatError, railsim.read_timeline, t + "/junk.msgpack"))
n = 0
try:
    for r in railsim.read_timeline(t + "/cut.msgpack"):
        n += 1
except railsim.TruncatedError:
    pass
assert n > 1, "records before the cut are yielded"
PYEOF
then ok "package errors: $(tr '\n' '|' <"$TMP/out")"
else fail "package errors: $(cat "$TMP/out")"
fi

# 6. Plots. png_ok FILE: PNG magic and more than 4 KB.
png_ok() {
    "$PY" -c "import sys; b=open(sys.argv[1],'rb').read(); sys.exit(0 if b[:8]==b'\x89PNG\r\n\x1a\n' and len(b)>4096 else 1)" "$1"
}
rm -rf "$TMP/coll/plots"
if "$RS" plot "$TMP/coll" >"$TMP/out" 2>"$TMP/stderr" && png_ok "$TMP/coll/plots/breakdown.png" &&
   png_ok "$TMP/coll/plots/link_util.png" && png_ok "$TMP/coll/plots/fct_cdf.png"; then
    ok "plot on a run directory: 3 PNGs"
else
    fail "plot on a run directory: $(cat "$TMP/stderr" "$TMP/out")"
fi
# What link_util.png draws: every cell the port's utilisation over the
# bin, so a row weighted by the intervals of its bins adds up to the
# port's util samples; at most 400 bins; the fault marked.
if "$PY" - "$SRC/analysis/plots.py" "$TMP/replay/timeline.msgpack" >"$TMP/out" 2>&1 <<'PYEOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("plots", sys.argv[1])
plots = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plots)
tl = plots.load_timeline(sys.argv[2])
ports = sorted(tl.samples)
rows, spans, width = plots.util_matrix(tl, ports)
assert len(spans) <= plots.HEAT_COLUMNS and all(n > 0 for n in spans), spans[-3:]
for p, row in zip(ports, rows):
    want = sum(u for _, u in tl.samples[p])
    got = sum(v * n for v, n in zip(row, spans))
    assert abs(got - want) < 1e-6 * max(1.0, want), (p, got, want)
    assert all(0 <= v <= 1 + 1e-9 for v in row), p
assert tl.faults, "the replay's fault is marked"
print("%d ports x %d bins of %d ps" % (len(rows), len(spans), width))
PYEOF
then ok "link_util cells: $(cat "$TMP/out")"
else fail "link_util cells: $(cat "$TMP/out")"
fi
# compare already plotted: compare.png and each side's, link_util skipped
# (timeline.heavy=false has no samples).
n=0
for c in 0 1; do for s in rail-only fat-tree; do
    png_ok "$TMP/cmp/case$c/$s/plots/breakdown.png" && png_ok "$TMP/cmp/case$c/$s/plots/fct_cdf.png" && n=$((n + 1))
done; done
png_ok "$TMP/cmp/plots/compare.png" && [ $n -eq 4 ] && ok "compare -o wrote compare.png and 4 runs' plots" ||
    fail "compare -o plots: compare.png $(ls "$TMP/cmp/plots" 2>&1), $n of 4 runs"
cp "$TMP/cmp/plots/compare.png" "$TMP/compare1.png"
rm -rf "$TMP/cmp/plots"
if "$RS" plot "$TMP/cmp" >"$TMP/out" 2>"$TMP/stderr" && png_ok "$TMP/cmp/plots/compare.png" &&
   cmp -s "$TMP/compare1.png" "$TMP/cmp/plots/compare.png" &&
   [ "$(grep -c 'wrote .*/case[01]/.*/plots/' "$TMP/out")" -eq 8 ]; then
    ok "plot on a compare directory: the same compare.png again, and each run's"
else
    fail "plot on a compare directory: $(cat "$TMP/stderr" "$TMP/out")"
fi
if "$RS" report "$TMP/cmp" >"$TMP/out" 2>"$TMP/stderr" && cmp -s "$TMP/out" "$TMP/cmp/compare.md"; then
    ok "report on a compare directory prints its tables"
else
    fail "report on a compare directory: $(cat "$TMP/stderr") $(head -5 "$TMP/out")"
fi

# 7. Installed: plots.py and the package under share/railsim, found by the
# installed binary relative to itself; RAILSIM_PLOTS_PY still overrides.
if cmake --install "$BUILD" --prefix "$TMP/inst" >"$TMP/out" 2>&1 &&
   [ -f "$TMP/inst/share/railsim/plots.py" ] && [ -f "$TMP/inst/share/railsim/python/railsim/__init__.py" ]; then
    ok "cmake --install puts plots.py and the railsim package in share/railsim"
else
    fail "cmake --install: $(tail -5 "$TMP/out")"
fi
printf '#!/bin/sh\necho "$1" >>"%s"\nexec %s "$@"\n' "$TMP/scripts.log" "$PY" >"$TMP/py"
chmod +x "$TMP/py"
rm -rf "$TMP/coll/plots"
if RAILSIM_PYTHON="$TMP/py" "$TMP/inst/bin/railsim" plot "$TMP/coll" >/dev/null 2>"$TMP/stderr" &&
   png_ok "$TMP/coll/plots/fct_cdf.png" &&
   [ "$(cat "$TMP/scripts.log")" = "$TMP/inst/bin/../share/railsim/plots.py" ]; then
    ok "the installed railsim runs the installed plots.py"
else
    fail "installed plot: ran $(cat "$TMP/scripts.log" 2>&1): $(cat "$TMP/stderr")"
fi
RAILSIM_PLOTS_PY="$TMP/none.py" "$RS" plot "$TMP/coll" >/dev/null 2>"$TMP/stderr"
rc=$?
[ $rc -eq 1 ] && grep -q "none.py: cannot find the plotting script" "$TMP/stderr" &&
    ok "RAILSIM_PLOTS_PY overrides: $(cat "$TMP/stderr")" || fail "RAILSIM_PLOTS_PY: exit $rc: $(cat "$TMP/stderr")"
finish
