#!/bin/sh
# railsim trace import/export chakra through the binary (docs/chakra.md):
# the checked-in fixtures of another producer (chakra/gen_et.py: 8-rank
# 1 MiB collectives, a ring AllReduce of sends, receives and compute, a
# pipeline with control deps, metadata and memory nodes) import and replay,
# each collective within 5% of traffic.kind=collective with the same bytes;
# export -> import gives the same programs and the same iteration time;
# malformed files and broken DAGs exit 2 naming file, rank and offset.
RS=$1; E2E=$2
. "$E2E/lib.sh"
FX="$E2E/chakra"
NET="--set topology.gpus=8 --set topology.hb_size=1 --set topology.kind=fat-tree"

# 1. The producer's collectives replay as the same collective run directly.
for op in allreduce allgather reducescatter alltoall; do
    "$RS" trace import chakra "$FX/$op" -o "$TMP/$op.rst" -q &&
    "$RS" trace info "$TMP/$op.rst" >"$TMP/$op.info" &&
    "$RS" run $NET --set workload.trace="$TMP/$op.rst" -o "$TMP/r_$op" -q &&
    "$RS" run $NET --set traffic.kind=collective --set traffic.op=$op --set traffic.bytes=1048576 -o "$TMP/d_$op" -q
    rc=$?
    res=$("$PY" - "$TMP/r_$op/summary.json" "$TMP/d_$op/summary.json" <<'PYEOF'
import json, sys
r, d = (json.load(open(p)) for p in sys.argv[1:3])
a, b = d["collective"]["time_ps"], r["iteration"]["time_ps"]
assert r["status"] == "complete" and r["iteration"]["ranks"] == 8, r["status"]
assert d["collective"]["bytes"] == 1048576
print("%d ps replayed, %d ps direct, %+.2f%%" % (b, a, (b - a) / a * 100))
sys.exit(0 if abs(b - a) <= 0.05 * a else 1)
PYEOF
)
    [ $rc -eq 0 ] && [ $? -eq 0 ] && ok "imported $op: $res" || fail "imported $op: exit $rc: $res"
done
grep -q "allreduce *8.00 MiB" "$TMP/allreduce.info" && ok "trace info on an import" || fail "trace info: $(cat "$TMP/allreduce.info")"
# The same on a rail-only network of two HB domains (hierarchical algorithms).
RO="--set topology.gpus=8 --set topology.hb_size=4 --set topology.kind=rail-only"
"$RS" run $RO --set workload.trace="$TMP/allreduce.rst" -o "$TMP/ro_r" -q &&
"$RS" run $RO --set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=1048576 -o "$TMP/ro_d" -q &&
"$PY" -c "import json,sys; r,d=(json.load(open(p)) for p in sys.argv[1:3]); a,b=d['collective']['time_ps'],r['iteration']['time_ps']; sys.exit(0 if abs(b-a)<=0.05*a else 1)" \
    "$TMP/ro_r/summary.json" "$TMP/ro_d/summary.json" && ok "imported allreduce on rail-only within 5%" || fail "rail-only allreduce"
# Same inputs, same bytes; files given in any order.
"$RS" trace import chakra "$FX/ring_allreduce" -o "$TMP/ring_a.rst" -q &&
"$RS" trace import chakra $(ls "$FX"/ring_allreduce/*.et | sort -r) -o "$TMP/ring_b.rst" -q &&
    cmp -s "$TMP/ring_a.rst" "$TMP/ring_b.rst" && ok "import is deterministic" || fail "import output differs"

# 2. The ring of sends and receives replays; its compute is there, and its
# communication takes at least what railsim's own ring AllReduce takes.
"$RS" trace import chakra "$FX/ring_allreduce"/*.et -o "$TMP/ring.rst" >"$TMP/ring.out" &&
"$RS" run $NET --set workload.trace="$TMP/ring.rst" -o "$TMP/r_ring" -q
rc=$?
"$PY" - "$TMP/r_ring/summary.json" "$TMP/d_allreduce/summary.json" <<'PYEOF' && [ $rc -eq 0 ] && ok "ring AllReduce of sends/receives replays" || fail "ring AllReduce: exit $rc"
import json, sys
r, d = (json.load(open(p)) for p in sys.argv[1:3])
it = r["iteration"]
assert r["status"] == "complete"
assert it["compute_ps"]["min"] == it["compute_ps"]["max"] == 7 * 2 * 10**6   # 7 reduce steps of 2 us
assert it["time_ps"] - it["compute_ps"]["mean"] >= 0.95 * d["collective"]["time_ps"]
PYEOF
grep -q "112 send, 112 recv" "$TMP/ring.out" && ok "import summary counts node types" || fail "import summary: $(cat "$TMP/ring.out")"

# 3. The pipeline: control deps order micro-batches, the metadata node is
# contracted, the memory node and FLOP-only compute are timed by the GPU model.
"$RS" trace import chakra "$FX/pipeline" -o "$TMP/pipe.rst" >"$TMP/pipe.out" &&
"$RS" trace dump "$TMP/pipe.rst" --rank 1 >"$TMP/pipe.dump" &&
"$RS" run $NET --set workload.trace="$TMP/pipe.rst" --set topology.gpus=4 -o "$TMP/r_pipe" -q
rc=$?
# 400 GFLOP at 989 TFLOP/s x 0.5 = 808.9 us; 64 MiB at 3.35 TB/s = 20.0 us,
# memory-bound, so its 64 MiB are HBM bytes (docs/compute.md, "Contention")
if [ $rc -eq 0 ] && grep -q "4 nodes with nothing to simulate contracted" "$TMP/pipe.out" &&
   grep -q 'compute 808897877 ps "forward" after' "$TMP/pipe.dump" &&
   grep -q 'compute 200[0-9]* ps hbm 67108864 B "load weights"' "$TMP/pipe.dump" &&
   [ "$(json_get "$TMP/r_pipe/summary.json" "d['status']")" = complete ]; then
    ok "pipeline with control deps, metadata and memory nodes"
else
    fail "pipeline: exit $rc: $(cat "$TMP/pipe.out" "$TMP/pipe.dump")"
fi
"$PY" - "$TMP/r_pipe/summary.json" <<'PYEOF' && ok "pipeline: micro-batches flow through the stages" || fail "pipeline timing"
import json, sys
it = json.load(open(sys.argv[1]))["iteration"]
fwd = 808897877
# 3 micro-batches over 4 stages: at least (3 + 4 - 1) forwards end to end
assert it["time_ps"] >= 6 * fwd, it["time_ps"]
PYEOF

# 3b. Process groups: a PyTorch process-group METADATA_NODE (pg 1, 2, 0),
# and ASTRA-sim's comm-group JSON for pg 3 and 4 (pg_name as an int64).
PG="$FX/process_groups"
"$RS" trace import chakra "$PG" --comm-groups "$PG/comm_groups.json" -o "$TMP/pg.rst" -q &&
"$RS" trace dump "$TMP/pg.rst" >"$TMP/pg.dump" &&
"$RS" run $NET --set workload.trace="$TMP/pg.rst" -o "$TMP/r_pg" -q
rc=$?
if [ $rc -eq 0 ] && grep -q "^comm [0-9]* dp 4: 0 1 2 3$" "$TMP/pg.dump" && grep -q "^comm [0-9]* dp 4: 4 5 6 7$" "$TMP/pg.dump" &&
   grep -q "^comm [0-9]* dp 8: 0 1 2 3 4 5 6 7$" "$TMP/pg.dump" && grep -q "^comm [0-9]* dp 4: 0 2 4 6$" "$TMP/pg.dump" &&
   grep -q "^comm [0-9]* dp 4: 1 3 5 7$" "$TMP/pg.dump" &&
   [ "$(json_get "$TMP/r_pg/summary.json" "d['status']")" = complete ]; then
    ok "process groups from a metadata node and --comm-groups"
else
    fail "process groups: exit $rc: $(grep '^comm' "$TMP/pg.dump")"
fi

# 4. Round trip: a plan's trace exported and imported gives the same
# programs (slot numbering aside) and the same iteration time.
cat >"$TMP/dptp.json" <<'PLAN'
{ "name": "dptp", "model": { "layers": 4, "hidden": 512, "ffn": 2048, "heads": 8, "seq_len": 512, "vocab": 1000 },
  "parallelism": { "tp": 2, "pp": 2, "dp": 2, "micro_batch": 1, "global_batch": 8, "zero": 1 } }
PLAN
"$RS" trace gen "$TMP/dptp.json" -o "$TMP/dptp.rst" -q &&
"$RS" trace export chakra "$TMP/dptp.rst" -o "$TMP/et" >/dev/null &&
"$RS" trace import chakra "$TMP/et" -o "$TMP/back.rst" -q
rc=$?
[ $rc -eq 0 ] && [ "$(ls "$TMP/et"/dptp.*.et | wc -l)" -eq 8 ] && ok "export writes one file per rank" || fail "export: exit $rc"
# ASTRA-sim's comm-group file beside them: every communicator, ids + 1.
"$PY" - "$TMP/et/dptp.comm_groups.json" "$TMP/dptp.rst" "$RS" <<'PYEOF' && ok "export writes the comm-group file" || fail "comm-group file"
import json, subprocess, sys
g = json.load(open(sys.argv[1]))
dump = subprocess.run([sys.argv[3], "trace", "dump", sys.argv[2]], capture_output=True, text=True).stdout
comms = [l.split(":")[1].split() for l in dump.splitlines() if l.startswith("comm ")]
assert len(g) == len(comms) > 0 and "0" not in g
assert all(g[str(i + 1)] == [int(x) for x in c] for i, c in enumerate(comms))
PYEOF
for f in dptp back; do
    "$RS" trace dump "$TMP/$f.rst" | grep -E '^ +[0-9]+ s' | sed 's/ \(comm\|slot\|peer\) [0-9]*//' >"$TMP/$f.ops"
    "$RS" run $NET --set workload.trace="$TMP/$f.rst" -o "$TMP/r_$f" -q
done
cmp -s "$TMP/dptp.ops" "$TMP/back.ops" && [ -s "$TMP/dptp.ops" ] && ok "round trip: same programs" ||
    fail "round trip programs differ: $(diff "$TMP/dptp.ops" "$TMP/back.ops" | head -5)"
a=$(json_get "$TMP/r_dptp/summary.json" "d['iteration']['time_ps'], d['iteration']['mfu']")
b=$(json_get "$TMP/r_back/summary.json" "d['iteration']['time_ps'], d['iteration']['mfu']")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "round trip: same iteration time and MFU ($a)" || fail "round trip: $a vs $b"
# A preset straight to ET, and the export of an import of another producer.
"$RS" trace export chakra llama2-7b --gpus 8 -o "$TMP/l7" --name l7 >/dev/null && [ -s "$TMP/l7/l7.7.et" ] &&
    "$RS" trace import chakra "$TMP/l7" -o "$TMP/l7.rst" -q && ok "export of a preset imports" || fail "preset export"
"$RS" trace export chakra "$TMP/ring.rst" -o "$TMP/ring_et" >/dev/null &&
    "$RS" trace import chakra "$TMP/ring_et" -o "$TMP/ring2.rst" -q &&
    "$RS" run $NET --set workload.trace="$TMP/ring2.rst" -o "$TMP/r_ring2" -q &&
    [ "$(json_get "$TMP/r_ring2/summary.json" "d['iteration']['time_ps']")" = "$(json_get "$TMP/r_ring/summary.json" "d['iteration']['time_ps']")" ] &&
    ok "re-export of the imported ring replays the same" || fail "ring re-export"

# 5. Bad input: exit 2, one line naming file, rank and offset; no trace written.
BAD_OUT="$TMP/out.rst"
mkdir -p "$TMP/b"
cp -r "$FX/allreduce" "$TMP/b/trunc"; head -c 20 "$FX/allreduce/allreduce.3.et" >"$TMP/b/trunc/allreduce.3.et"
cp -r "$FX/allreduce" "$TMP/b/wrong"; cp "$TMP/dptp.rst" "$TMP/b/wrong/allreduce.2.et"
cp -r "$FX/allreduce" "$TMP/b/garbage"; printf '\003\012\001\377' >>"$TMP/b/garbage/allreduce.5.et"
mkdir "$TMP/b/miss"; cp "$FX"/allreduce/allreduce.[0-24-7].et "$TMP/b/miss/"
"$PY" - "$FX" "$TMP/b" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1]); import gen_et as g
out = sys.argv[2]
rings = g.ring_allreduce()
for i in range(len(rings[5]) - 1, -1, -1):
    if b"ring send" in rings[5][i]:
        del rings[5][i]; break
g.write(out, "nosend", rings)
ar = g.one_coll(g.ALL_REDUCE, g.UINT64); ar[4] = [g.node(50, "x", g.COMP, data=[77], dur=5)] + ar[4]
g.write(out, "missdep", ar)
ar = g.one_coll(g.ALL_REDUCE, g.UINT64)
ar[6] = [g.node(1, "a", g.COMP, data=[2], dur=5), g.node(2, "b", g.COMP, ctrl=[1], dur=5)] + ar[6]
g.write(out, "cycle", ar)
ar = g.one_coll(g.ALL_REDUCE, g.UINT64); ar[3] = []
g.write(out, "nocoll", ar)
ar = g.one_coll(g.ALL_REDUCE, g.UINT64); ar[2] = [g.node(0, "x", 42)]
g.write(out, "badtype", ar)
PYEOF
expect_bad "truncated file"      "trunc/allreduce.3.et: rank 3, byte offset 8: truncated" trace import chakra "$TMP/b/trunc" -o "$BAD_OUT"
expect_bad "railsim trace as ET" "wrong/allreduce.2.et: rank 2, byte offset 0: .*GlobalMetadata" trace import chakra "$TMP/b/wrong" -o "$BAD_OUT"
expect_bad "trailing garbage"    "garbage/allreduce.5.et: rank 5, byte offset [0-9]*: " trace import chakra "$TMP/b/garbage" -o "$BAD_OUT"
expect_bad "missing rank"        "rank 3 is missing"   trace import chakra "$TMP/b/miss" -o "$BAD_OUT"
expect_bad "send without receive" "nosend.6.et: rank 6, byte offset [0-9]*: node 134: receive #14 from rank 5 has no matching send" trace import chakra "$TMP/b/nosend" -o "$BAD_OUT"
expect_bad "dep on absent node"  "missdep.4.et: rank 4, byte offset 8: node 50 .*node 77" trace import chakra "$TMP/b/missdep" -o "$BAD_OUT"
expect_bad "cycle"               "cycle.6.et: rank 6, byte offset [0-9]*: node [12] is on a dependency cycle" trace import chakra "$TMP/b/cycle" -o "$BAD_OUT"
expect_bad "collective not issued" "collective #1 on process group world (8 ranks) is not issued by rank 3" trace import chakra "$TMP/b/nocoll" -o "$BAD_OUT"
expect_bad "node type"           "badtype.2.et: rank 2, byte offset 8: node 0: node type 42" trace import chakra "$TMP/b/badtype" -o "$BAD_OUT"
expect_bad "process group in no table" "process_groups.0.et: rank 0, byte offset [0-9]*: node 4: process group \"3\" is in no table" trace import chakra "$PG" -o "$BAD_OUT"
printf '{"3": [0, 2, 4, 6], "4": [1, 3, 5, 9]}\n' >"$TMP/b/groups.json"
expect_bad "comm-groups rank out of range" "groups.json: process group \"4\": rank 9 out of range" trace import chakra "$PG" --comm-groups "$TMP/b/groups.json" -o "$BAD_OUT"
expect_bad "not an ET name"      "NAME.RANK.et"        trace import chakra "$TMP/dptp.json" -o "$BAD_OUT"
expect_bad "no -o"               "-o FILE"             trace import chakra "$FX/allreduce"
expect_bad "bad efficiency"      "--efficiency"        trace import chakra "$FX/allreduce" --efficiency 2 -o "$BAD_OUT"
expect_bad "unknown format"      "chakra"              trace import astra "$FX/allreduce" -o "$BAD_OUT"
BAD_OUT=
expect_bad "export: bad plan"    "gpt-2t"              trace export chakra gpt-2t -o "$TMP/x"
finish
