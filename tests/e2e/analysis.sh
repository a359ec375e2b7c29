#!/bin/sh
# The analysis commands on real files: report on a run directory written by
# `railsim run -o`, report/export/plot on a synthetic training-step
# timeline written by the engine's writer (tl_fixture), with every count
# checked against an independent Python msgpack reading of the timeline;
# plots are PNGs of some size and byte-identical across runs; bad inputs
# exit 2 with one line and leave no output.
RS=$1; E2E=$2; FIXTURE=$3
. "$E2E/lib.sh"

# 1. report on a real run directory without a timeline (timeline.sh tests
# the ones railsim run writes).
if "$RS" run -q --set timeline.enabled=false --set traffic.kind=collective --set traffic.op=allreduce --set traffic.group=rail:0 \
        --set traffic.bytes=262144 --set traffic.iters=2 -o "$TMP/run" 2>"$TMP/stderr"; then
    ok "run -o"
else
    fail "run -o: $(cat "$TMP/stderr")"
fi
"$RS" report "$TMP/run" >"$TMP/report" 2>"$TMP/stderr"
rc=$?
if [ $rc -eq 0 ] && grep -q '^  status      complete' "$TMP/report" &&
   grep -Eq 'collective  allreduce \((ring|tree)/(ll|ll128|simple)\), 8 ranks' "$TMP/report" &&
   grep -q '^busiest ports by tx_bytes (top 10 of' "$TMP/report" &&
   grep -q '^busiest ports by max queue' "$TMP/report" &&
   grep -q '^timeline: none' "$TMP/report"; then
    ok "report on a run directory"
else
    fail "report on a run directory: exit $rc: $(cat "$TMP/stderr") $(head -20 "$TMP/report")"
fi
# The top port by tx_bytes is the summary's largest.
want=$(json_get "$TMP/run/summary.json" "max(p['tx_bytes'] for p in d['ports'])")
got=$(sed -n '/^busiest ports by tx_bytes/{n;n;p}' "$TMP/report" | awk '{print $3}')
[ "$want" = "$got" ] && ok "busiest port tx_bytes $got" || fail "busiest port: report $got, summary $want"

# png_ok FILE: PNG magic and more than 4 KB.
png_ok() {
    "$PY" -c "import sys; b=open(sys.argv[1],'rb').read(); sys.exit(0 if b[:8]==b'\x89PNG\r\n\x1a\n' and len(b)>4096 else 1)" "$1"
}
if "$RS" plot "$TMP/run" >"$TMP/plot.out" 2>"$TMP/stderr" && png_ok "$TMP/run/plots/breakdown.png" &&
   png_ok "$TMP/run/plots/fct_cdf.png" && grep -q 'skipped link_util.png' "$TMP/plot.out"; then
    ok "plot from summary.json only"
else
    fail "plot from summary.json only: $(cat "$TMP/stderr" "$TMP/plot.out")"
fi

# 2. a run directory with a timeline.
mkdir -p "$TMP/fx"
cp "$TMP/run/summary.json" "$TMP/fx/"
"$FIXTURE" "$TMP/fx/timeline.msgpack" || fail "tl_fixture"
"$RS" report "$TMP/fx" >"$TMP/report" 2>"$TMP/stderr"
rc=$?
if [ $rc -eq 0 ] && grep -q '^timeline .*: complete, 1740 records' "$TMP/report" &&
   grep -q '^op time by kind' "$TMP/report" && grep -q '^  dp  *allreduce  *48' "$TMP/report" &&
   grep -q '^compute vs exposed communication per rank (16 ranks)' "$TMP/report" &&
   grep -q '^  0  *gpu0  *1.090 ms  *900.000 us  *390.000 us  *90.000 us' "$TMP/report" &&
   grep -q '^collective times by op' "$TMP/report" &&
   grep -q '^links by mean sampled utilisation' "$TMP/report" &&
   grep -q '3 PFC pauses, 3 resumes, 12 ECN marks, 3 CNPs, 4 packets' "$TMP/report"; then
    ok "report with a timeline"
else
    fail "report with a timeline: exit $rc: $(cat "$TMP/stderr") $(cat "$TMP/report")"
fi

# Counts per record kind, read independently with python3-msgpack.
"$PY" - "$TMP/fx/timeline.msgpack" >"$TMP/kinds.json" <<'PYEOF'
import json, sys, msgpack
with open(sys.argv[1], "rb") as f:
    u = msgpack.Unpacker(f, raw=False)
    next(u)
    counts, tx, samples = {}, {}, {}
    for r in u:
        counts[r[0]] = counts.get(r[0], 0) + 1
        if r[0] == 5:
            tx[r[2]] = max(tx.get(r[2], 0), r[3])
            samples[r[2]] = samples.get(r[2], 0) + 1
    top = sorted(tx, key=lambda p: (-tx[p], p))[:8]
    counts["charted_samples"] = sum(samples[p] for p in top)
print(json.dumps({str(k): v for k, v in counts.items()}))
PYEOF

# 3. Perfetto export.
if "$RS" export perfetto "$TMP/fx/timeline.msgpack" -o "$TMP/trace.json" >"$TMP/out" 2>"$TMP/stderr"; then
    ok "export perfetto: $(cat "$TMP/out")"
else
    fail "export perfetto: $(cat "$TMP/stderr")"
fi
[ -e "$TMP/trace.json.tmp" ] && fail "export perfetto left trace.json.tmp"
"$PY" - "$TMP/trace.json" "$TMP/kinds.json" <<'PYEOF' && ok "perfetto tracks and events" || fail "perfetto tracks and events"
import json, sys
t = json.load(open(sys.argv[1]))
k = json.load(open(sys.argv[2]))
ev = t["traceEvents"]
errs = []
def want(cond, what):
    if not cond:
        errs.append(what)
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
want(sorted(n for n in procs.values() if n.startswith("HB domain")) == ["HB domain 0", "HB domain 1"], "HB domain processes: %s" % procs)
want("collectives" in procs.values() and "network" in procs.values(), "collectives/network processes")
for r in range(16):
    want(("gpu%d (rank %d)" % (r, r)) in threads.values(), "thread of rank %d" % r)
    want(("gpu%d (rank %d) overlap 1" % (r, r)) in threads.values(), "overlap thread of rank %d" % r)
want(any(n.startswith("dp[3]") for n in threads.values()), "dp[3] collective track")
x_ops = [e for e in ev if e["ph"] == "X" and e["cat"] in ("compute", "comm")]
x_colls = [e for e in ev if e["ph"] == "X" and e["cat"] == "collective"]
want(len(x_ops) == k["2"], "X op events %d, op records %d" % (len(x_ops), k["2"]))
want(len(x_colls) == k["3"], "X collective events %d, coll records %d" % (len(x_colls), k["3"]))
counters = [e for e in ev if e["ph"] == "C"]
want(len(counters) == 2 * k["charted_samples"], "counter events %d, expected %d" % (len(counters), 2 * k["charted_samples"]))
inst = [e for e in ev if e["ph"] == "i"]
want(len(inst) == k["6"] + k["8"] + k["9"], "instant events %d" % len(inst))
for e in x_ops + x_colls:
    want((e["pid"], e["tid"]) in threads, "X event on an unnamed thread %s" % e)
    want(isinstance(e["ts"], float) and isinstance(e["dur"], float) and e["dur"] >= 0, "ts/dur floats %s" % e)
# every thread's spans are properly nested
by = {}
for e in x_ops + x_colls:
    by.setdefault((e["pid"], e["tid"]), []).append((e["ts"], -(e["ts"] + e["dur"])))
for key, spans in by.items():
    stack = []
    for ts, negend in sorted(spans):
        end = -negend
        # ts + dur is a double sum: allow a femtosecond of rounding
        while stack and stack[-1] <= ts + 1e-9:
            stack.pop()
        want(not stack or end <= stack[-1] + 1e-9, "improper nesting on %s at %s" % (key, ts))
        stack.append(end)
# picosecond offsets survive: rank 5 starts at 5001 ps
want(any(abs(e["ts"] - 0.005001) < 1e-12 for e in x_ops), "ps precision of ts")
if errs:
    print("\n".join(errs[:10]))
    sys.exit(1)
PYEOF

# 4. CSV export: one row per record of each kind.
if "$RS" export csv "$TMP/fx/timeline.msgpack" -o "$TMP/csv" >"$TMP/out" 2>"$TMP/stderr"; then
    ok "export csv: $(cat "$TMP/out")"
else
    fail "export csv: $(cat "$TMP/stderr")"
fi
"$PY" - "$TMP/csv" "$TMP/kinds.json" <<'PYEOF' && ok "csv round trip counts" || fail "csv round trip counts"
import csv, json, os, sys
k = json.load(open(sys.argv[2]))
bad = 0
for kind, name in ((1, "name"), (2, "op"), (3, "coll"), (4, "flow"), (5, "sample"), (6, "pfc"), (7, "ecn"), (8, "drop"), (9, "fault")):
    rows = list(csv.DictReader(open(os.path.join(sys.argv[1], name + ".csv"), newline="")))
    if len(rows) != k.get(str(kind), 0):
        print("%s.csv: %d rows, %d records" % (name, len(rows), k.get(str(kind), 0)))
        bad = 1
ops = list(csv.DictReader(open(os.path.join(sys.argv[1], "op.csv"), newline="")))
if not any(r["label"] == 'tp, "sync"' and r["comm_name"] == "tp[0]" for r in ops):
    print("op.csv: quoted label or comm name lost"); bad = 1
if any(int(r["dur_ps"]) != int(r["end_ps"]) - int(r["start_ps"]) for r in ops):
    print("op.csv: dur_ps"); bad = 1
hdr = dict(csv.reader(open(os.path.join(sys.argv[1], "header.csv"), newline="")))
if hdr.get("topology.hb_size") != "8" or hdr.get("seed") != "7":
    print("header.csv: %s" % hdr); bad = 1
sys.exit(bad)
PYEOF
ls "$TMP/csv" | grep -q '\.tmp$' && fail "export csv left temporaries"

# Default outputs go next to the timeline.
"$RS" export perfetto -q "$TMP/fx/timeline.msgpack" && [ -s "$TMP/fx/trace.json" ] &&
    ok "export perfetto default output" || fail "export perfetto default output"

# 5. plots: three non-trivial PNGs, the same bytes twice; report --plots.
if "$RS" report "$TMP/fx" --plots >"$TMP/out" 2>"$TMP/stderr"; then
    n=0
    for p in breakdown link_util fct_cdf; do
        png_ok "$TMP/fx/plots/$p.png" && n=$((n + 1))
    done
    [ $n -eq 3 ] && ok "report --plots: 3 PNGs" || fail "report --plots: $n of 3 PNGs ok"
else
    fail "report --plots: $(cat "$TMP/stderr")"
fi
mkdir -p "$TMP/first"
cp "$TMP/fx/plots/"*.png "$TMP/first/"
"$RS" plot "$TMP/fx" >/dev/null 2>&1
same=1
for p in breakdown link_util fct_cdf; do
    cmp -s "$TMP/first/$p.png" "$TMP/fx/plots/$p.png" || same=0
done
[ $same -eq 1 ] && ok "plots are deterministic" || fail "plots differ between two runs"

# 6. a partial (interrupted) timeline is still exported and reported.
mkdir -p "$TMP/part"
cp "$TMP/run/summary.json" "$TMP/part/"
"$FIXTURE" "$TMP/part/timeline.msgpack" --partial
"$RS" report "$TMP/part" | grep -q 'partial (interrupted run)' && ok "report of a partial timeline" ||
    fail "report of a partial timeline"

# 7. bad inputs: exit 2, one line naming the file, nothing written.
BAD_OUT=
mkdir -p "$TMP/empty"
printf 'not msgpack at all' >"$TMP/junk.msgpack"
head -c 3000 "$TMP/fx/timeline.msgpack" >"$TMP/cut.msgpack"
mkdir -p "$TMP/badjson"
printf '{"format": "railsim-summary"' >"$TMP/badjson/summary.json"
expect_bad "report: no summary"        "empty/summary.json"        report "$TMP/empty"
expect_bad "report: not a directory"   "nodir"                     report "$TMP/nodir"
expect_bad "report: broken summary"    "badjson/summary.json:1:"   report "$TMP/badjson"
expect_bad "report: no argument"       "run directory"             report
expect_bad "report: unknown option"    "--frob"                    report "$TMP/fx" --frob
expect_bad "export: unknown format"    "'svg'"                     export svg "$TMP/fx/timeline.msgpack"
expect_bad "export: missing timeline"  "nope.msgpack"              export perfetto "$TMP/nope.msgpack" -o "$TMP/x.json"
"$PY" - "$TMP/fx/timeline.msgpack" "$TMP/v2.msgpack" <<'PYEOF'
import io, msgpack, sys
data = open(sys.argv[1], "rb").read()
u = msgpack.Unpacker(io.BytesIO(data), raw=False)
hdr = u.unpack()
rest = data[u.tell():]
hdr["version"] = 2
open(sys.argv[2], "wb").write(msgpack.packb(hdr) + rest)
PYEOF
expect_bad "export: wrong version"     "v2.msgpack: .*version"     export perfetto "$TMP/v2.msgpack" -o "$TMP/x.json"
printf '\223\001\002\003' >"$TMP/array.msgpack"   # msgpack, but an array where the header map belongs
expect_bad "export: msgpack of the wrong type" "array.msgpack is not a railsim timeline: it should start with a msgpack map, found an array" export perfetto "$TMP/array.msgpack" -o "$TMP/x.json"
expect_bad "export: not a timeline"    "junk.msgpack"              export perfetto "$TMP/junk.msgpack" -o "$TMP/x.json"
expect_bad "export: truncated"         "cut.msgpack"               export csv "$TMP/cut.msgpack" -o "$TMP/xcsv"
expect_bad "export: unwritable output" "no/such"                   export perfetto "$TMP/fx/timeline.msgpack" -o "$TMP/no/such/x.json"
expect_bad "export: bad --links"       "--links"                   export perfetto "$TMP/fx/timeline.msgpack" --links -3
expect_bad "plot: empty directory"     "neither summary.json nor timeline.msgpack" plot "$TMP/empty"
expect_bad "plot: broken summary"      "badjson/summary.json"      plot "$TMP/badjson"
[ -e "$TMP/x.json" ] || [ -e "$TMP/x.json.tmp" ] && fail "bad export left x.json"
[ -e "$TMP/xcsv/op.csv" ] || [ -e "$TMP/xcsv/op.csv.tmp" ] && fail "bad csv export left files"
finish
