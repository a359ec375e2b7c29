#!/bin/sh
# railsim.run and railsim.compare as a user meets them: `cmake --install`
# to a temporary prefix, then /usr/bin/python3 with PYTHONPATH set to
# PREFIX/lib/python3/dist-packages only (the source tree is not on the
# path), checking
#   - the issue's command prints 16; importing loads neither librailsim
#     nor pandas, and the first run loads the installed librailsim;
#   - a run gives the summary `railsim run` writes (host fields aside),
#     from dotted keys, nested sections and a scenario file alike;
#   - the timeline's DataFrames: RECORD_FIELDS' columns, a row per record
#     (the end record's count);
#   - compare gives compare.json's times and time_pct for the same scenario;
#   - errors: a bad key raises ScenarioError (a ValueError) with the
#     command's sentence; an incomplete run and a stopped one return their
#     status; RAILSIM_LIB overrides where the library is;
#   - rs_err and rs_run_opts as ctypes mirrors them = as the C compiler
#     lays them out from the installed headers;
#   - examples/python_run.py runs.
# Skips (77) when /usr/bin/python3 lacks pandas or msgpack. In a sanitizer
# build (third argument 1) the installed library needs the ASan runtime
# first in the process: python runs with LD_PRELOAD of the libasan the
# library names, leak detection off (the interpreter's own allocations
# live until exit), so ASan and UBSan still check every library call.
BUILD=$1; SRC=$2; SANITIZE=${3:-0}; E2E=$SRC/tests/e2e
. "$E2E/lib.sh"
CC=${CC:-cc}
if ! "$PY" -c "import pandas, msgpack" 2>/dev/null; then
    echo "SKIP: $PY lacks python3-pandas or python3-msgpack (scripts/install-deps)"
    exit 77
fi
P=$TMP/prefix
if cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1; then ok "cmake --install"; else
    fail "cmake --install: $(tail -3 "$TMP/install.log")"; finish; exit; fi
PKG=$P/lib/python3/dist-packages
LIB=$(find "$P" -name librailsim.so.0 | head -1)
RS=$P/bin/railsim
[ -f "$PKG/railsim/__init__.py" ] && [ -f "$PKG/railsim/_where.py" ] && [ -n "$LIB" ] &&
    ok "installed ${PKG#"$P"/}/railsim and ${LIB#"$P"/}" || fail "not installed: $PKG/railsim or librailsim.so.0"
unset RAILSIM_LIB
export PYTHONPATH="$PKG" PYTHONDONTWRITEBYTECODE=1
if [ "$SANITIZE" = 1 ]; then
    asan=$(ldd "$LIB" | awk '/libasan/ { print $3 }')
    if [ -z "$asan" ]; then fail "a sanitizer build whose library needs no libasan: $(ldd "$LIB")"; finish; exit; fi
    # Only python gets the runtime (the installed railsim and cc do not need it).
    printf '#!/bin/sh\nLD_PRELOAD="%s" ASAN_OPTIONS=detect_leaks=0 exec "%s" "$@"\n' "$asan" "$PY" >"$TMP/python"
    chmod +x "$TMP/python"
    PY=$TMP/python
    echo "     (python under LD_PRELOAD=$asan)"
fi
cd "$TMP" || exit 1

# 1. The issue's check, verbatim.
out=$("$PY" -c 'import railsim; r = railsim.run({"topology.gpus": 16, "traffic.kind": "permutation"}); print(r.summary["flows"]["completed"])' 2>&1)
[ "$out" = 16 ] && ok "railsim.run(...).summary[\"flows\"][\"completed\"] prints 16" || fail "the issue's check printed: $out"

# 2. Import is light; the first run loads the installed library.
if "$PY" - "$P" >"$TMP/out" 2>&1 <<'PYEOF'
import os, sys
import railsim
assert "pandas" not in sys.modules and "ctypes" not in sys.modules, "import railsim imported pandas or ctypes"
assert "librailsim" not in open("/proc/self/maps").read(), "import railsim loaded librailsim"
r = railsim.run({"topology.gpus": 8, "traffic.kind": "single"})
assert r.ok and "pandas" not in sys.modules, "a run without DataFrames imported pandas"
maps = [l.split()[-1] for l in open("/proc/self/maps") if "librailsim" in l]
prefix = os.path.realpath(sys.argv[1])
assert maps and all(m.startswith(prefix + "/") for m in maps), maps
print(railsim._lib.path)
PYEOF
then ok "import loads neither librailsim nor pandas; the run loaded $(cat "$TMP/out")"
else fail "import/loading: $(cat "$TMP/out")"
fi

# 3. A run is the command's run: the same summary from dotted keys, nested
# sections, a scenario file and the file with sets.
"$RS" run -q --set topology.gpus=16 --set traffic.kind=collective --set traffic.op=allreduce \
    --set traffic.bytes=262144 --set traffic.iters=2 --set timeline.sample_us=1 -o "$TMP/cmd" >/dev/null 2>&1 ||
    fail "railsim run for the reference summary"
printf '{"topology": {"gpus": 16}, "traffic": {"kind": "collective", "op": "allreduce"}}\n' >"$TMP/sc.json"
if "$PY" - "$TMP" >"$TMP/out" 2>&1 <<'PYEOF'
import json, os, sys
import railsim
t = sys.argv[1]
def strip(s):
    s = dict(s)
    s.pop("wall_s"); s.pop("peak_rss_bytes")
    return json.dumps(s, sort_keys=True)
want = strip(railsim.read_summary(t + "/cmd"))
runs = {
    "dotted": railsim.run({"topology.gpus": 16, "traffic.kind": "collective", "traffic.op": "allreduce",
                           "traffic.bytes": 262144, "traffic.iters": 2, "timeline.sample_us": 1.0}),
    "nested": railsim.run({"topology": {"gpus": 16}, "traffic": {"kind": "collective", "op": "allreduce",
                           "bytes": 262144, "iters": 2}, "timeline": {"sample_us": 1}}),
    "file+sets": railsim.run(t + "/sc.json", sets={"traffic.bytes": 262144, "traffic.iters": 2,
                                                   "timeline.sample_us": "1"}),
    "mixed": railsim.run({"topology": {"gpus": 8}, "topology.gpus": 16, "traffic": {"kind": "collective"}},
                         sets=["traffic.op=allreduce", "traffic.bytes=262144", "traffic.iters=2",
                               "timeline.sample_us=1"], outdir=t + "/py"),
}
for name, r in runs.items():
    assert strip(r.summary) == want, name
    assert r.ok and r.status == "complete" and r.message == "" and r.time_of == "collective", name
    assert r.time_ps == r.summary["collective"]["time_ps"] > 0, name
    assert r.bound_ps == r.summary["collective"]["bound_ps"] > 0, name
assert strip(railsim.read_summary(t + "/py")) == want, "outdir= has the summary"
d = runs["dotted"].outdir
assert os.path.isfile(d + "/timeline.msgpack")
del runs["dotted"]
import gc; gc.collect()
assert not os.path.exists(d), "the temporary directory outlived its result"
print("collective %.3f us, bound %.3f us" % (runs["nested"].time_ps / 1e6, runs["nested"].bound_ps / 1e6))
PYEOF
then ok "dotted, nested, file+sets and mixed give railsim run's summary: $(cat "$TMP/out")"
else fail "run vs railsim run: $(cat "$TMP/out")"
fi

# 4. The timeline's DataFrames against the records the file holds.
if "$PY" - "$TMP/py" >"$TMP/out" 2>&1 <<'PYEOF'
import sys
import railsim
r = railsim.run({"topology.gpus": 16, "traffic.kind": "collective", "traffic.bytes": 262144,
                 "timeline.sample_us": 1})
tl = r.timeline
counts, end = {}, None
for rec in railsim.read_timeline(tl.path):
    if rec["record"] == "end":
        end = rec["records"]
    elif rec["record"] != "header":
        counts[rec["record"]] = counts.get(rec["record"], 0) + 1
assert sorted(tl) == sorted(n for n, _ in railsim.RECORD_FIELDS.values() if n != "end")
total = 0
for name, fields in railsim.RECORD_FIELDS.values():
    if name == "end":
        continue
    df = tl[name]
    assert list(df.columns) == list(fields), (name, list(df.columns))
    assert len(df) == counts.get(name, 0), (name, len(df), counts.get(name))
    total += len(df)
assert total == end, (total, end)
assert tl["flow"] is tl["flow"], "a kind is read once"
flow = tl["flow"]
assert len(flow) == r.summary["flows"]["completed"] > 0
assert (flow.end_ps >= flow.start_ps).all() and flow.bytes.sum() == r.summary["flows"]["bytes"]
assert len(tl["coll"]) == 1 and tl["coll"].end_ps[0] - tl["coll"].start_ps[0] == r.time_ps
assert tl.header["partial"] is False and tl.header["format"] == "railsim-timeline"
print("%d records: %s" % (end, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
PYEOF
then ok "timeline DataFrames: $(cat "$TMP/out")"
else fail "timeline DataFrames: $(cat "$TMP/out")"
fi

# 5. compare = railsim compare: the same headline times and time_pct.
"$RS" compare -q --set topology.gpus=64 --set topology.radix=8 --set traffic.kind=all-to-all \
    --set traffic.bytes=65536 -o "$TMP/cmp" >/dev/null 2>&1 || fail "railsim compare for the reference"
if "$PY" - "$TMP" >"$TMP/out" 2>&1 <<'PYEOF'
import sys
import railsim
t = sys.argv[1]
case = railsim.read_compare(t + "/cmp")["cases"][0]
c = railsim.compare({"topology.gpus": 64, "topology.radix": 8, "traffic.kind": "all-to-all",
                     "traffic.bytes": 65536, "topology.kind": "fat-tree"}, outdir=t + "/pycmp")
assert c.rail_only.summary["topology"]["kind"] == "rail-only" and c.fat_tree.summary["topology"]["kind"] == "fat-tree"
assert c["rail-only"] is c.rail_only and c.time_of == "sim_end"
for key, r in (("rail_only", c.rail_only), ("fat_tree", c.fat_tree)):
    assert r.time_ps > 0 and r.time_ps == case[key]["time_ps"], (key, r.time_ps, case[key]["time_ps"])
    assert railsim.read_summary(t + "/pycmp/" + r.summary["topology"]["kind"])["sim_end_ps"] == r.time_ps
got = c.case
for key in ("rail_only", "fat_tree"):
    for k, v in got[key].items():
        assert case[key][k] == v, (key, k)
assert set(case[key]) - set(got[key]) == {"cost"}, set(case[key]) - set(got[key])
assert got["label"] == case["label"]
assert c.time_pct is not None and abs(c.time_pct - case["rail_only_vs_fat_tree"]["time_pct"]) < 1e-9
print("rail-only %.3f us, fat tree %.3f us, %+.2f%%" % (c.rail_only.time_ps / 1e6, c.fat_tree.time_ps / 1e6,
                                                       c.time_pct))
PYEOF
then ok "compare as railsim compare: $(cat "$TMP/out")"
else fail "compare: $(cat "$TMP/out")"
fi

# 6. Errors, and runs that end otherwise than complete.
"$RS" run -q --set topology.gpu=16 >/dev/null 2>"$TMP/cmd.err"
if "$PY" - "$TMP" "$(sed 's/^railsim: //' "$TMP/cmd.err")" "$E2E/small.json" >"$TMP/out" 2>&1 <<'PYEOF'
import sys
import railsim
t, cmd_msg, small = sys.argv[1:4]
def raises(exc, *a, **kw):
    try:
        railsim.run(*a, **kw)
    except exc as e:
        return str(e)
    raise AssertionError("no %s from %r" % (exc.__name__, a))
m = raises(railsim.ScenarioError, {"topology.gpu": 16})
assert issubclass(railsim.ScenarioError, ValueError) and "topology.gpu" in m and m == cmd_msg, (m, cmd_msg)
m2 = raises(ValueError, {"topology": {"gpus": 12, "hb_size": 8}})
assert "topology.gpus" in m2, m2
m3 = raises(ValueError, {"topology": {"radx": 8}})
assert "topology.radx" in m3 and "topology.radix" in m3, m3
m4 = raises(OSError, t + "/none.json")
assert "none.json" in m4, m4
try:
    railsim.compare({"topology.gpus": 16}, sets={"fidelity": "both"})
    raise AssertionError("compare with fidelity=both")
except railsim.ScenarioError as e:
    m5 = str(e)
r = railsim.run(small, sets={"pfc.enabled": False, "traffic.kind": "incast", "traffic.fan_in": 8,
                             "topology.buffer_bytes": 32768, "traffic.bytes": 262144, "transport.kind": "ideal"})
assert not r.ok and r.status == "incomplete" and "undelivered" in r.message, (r.status, r.message)
assert len(r.timeline["drop"]) > 0 and r.timeline.header["partial"] is True
calls = []
r = railsim.run({"topology.gpus": 64, "traffic.kind": "all-to-all"},
                progress=lambda now, ev, done: calls.append(ev) or len(calls) == 2)
assert r.status == "interrupted" and calls == [65536, 131072], (r.status, calls)
print(" | ".join([m, m2, m4, m5, r.message]))
PYEOF
then ok "errors and incomplete runs: $(cat "$TMP/out")"
else fail "errors: $(cat "$TMP/out")"
fi

# 7. RAILSIM_LIB: a file that is not there is named; the installed one by
# its directory loads.
RAILSIM_LIB=$TMP/nowhere.so "$PY" -c 'import railsim; railsim.run()' >/dev/null 2>"$TMP/err"
grep -q "cannot load librailsim (RAILSIM_LIB): $TMP/nowhere.so" "$TMP/err" && ok "RAILSIM_LIB=missing: $(tail -1 "$TMP/err")" ||
    fail "RAILSIM_LIB=missing: $(cat "$TMP/err")"
d=$(dirname "$LIB")
out=$(RAILSIM_LIB=$d "$PY" -c 'import railsim; railsim.run(); print(railsim._lib.path)' 2>&1)
[ "$out" = "$d/librailsim.so.0" ] && ok "RAILSIM_LIB=DIR loads DIR/librailsim.so.0" || fail "RAILSIM_LIB=DIR: $out"

# 8. The C layouts ctypes mirrors, as the compiler makes them, and the
# timeline major the package reads (tlformat.h's).
cat >"$TMP/layout.c" <<'EOF'
#include <stddef.h>
#include <stdio.h>
#include <railsim/railsim.h>
int main(void)
{
    printf("rs_err %zu %zu %zu\n", sizeof(rs_err), offsetof(rs_err, code), offsetof(rs_err, msg));
    printf("timeline %d\n", RS_TIMELINE_VERSION);
    printf("rs_run_opts %zu %zu %zu %zu %zu %zu %zu %zu %zu\n", sizeof(rs_run_opts), offsetof(rs_run_opts, size),
           offsetof(rs_run_opts, outdir),
           offsetof(rs_run_opts, name), offsetof(rs_run_opts, force), offsetof(rs_run_opts, progress),
           offsetof(rs_run_opts, ctx), offsetof(rs_run_opts, part), offsetof(rs_run_opts, flags));
    return 0;
}
EOF
if "$CC" -I"$P/include" "$TMP/layout.c" -o "$TMP/layout" 2>"$TMP/cc.err" && "$TMP/layout" >"$TMP/c.txt"; then
    "$PY" -c '
from railsim import _lib as l
import railsim
print("rs_err %d %d %d" % (l.ctypes.sizeof(l.Err), l.Err.code.offset, l.Err.msg.offset))
print("timeline %d" % railsim.TIMELINE_VERSION)
print("rs_run_opts %d %s" % (l.ctypes.sizeof(l.RunOpts), " ".join(str(getattr(l.RunOpts, f).offset) for f, _ in l.RunOpts._fields_)))
' >"$TMP/py.txt" 2>&1
    cmp -s "$TMP/c.txt" "$TMP/py.txt" && ok "ctypes layouts and timeline version = C: $(tr '\n' ';' <"$TMP/c.txt")" ||
        fail "ctypes layouts or TIMELINE_VERSION differ from the headers (analysis/python/railsim/_lib.py): C $(cat "$TMP/c.txt"), ctypes $(cat "$TMP/py.txt")"
else
    fail "layout.c: $(head -5 "$TMP/cc.err")"
fi

# 9. The example, as docs/python.md runs it.
if "$PY" "$SRC/examples/python_run.py" >"$TMP/out" 2>&1 && grep -q "^rail-only vs fat tree: " "$TMP/out"; then
    ok "examples/python_run.py: $(grep '^complete' "$TMP/out")"
else
    fail "examples/python_run.py: $(tail -5 "$TMP/out")"
fi
finish
