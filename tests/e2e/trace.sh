#!/bin/sh
# railsim trace gen / info / dump through the binary: presets and plan
# files, the trillion-parameter plan on 16,384 GPUs under 1 MB, and bad
# input (exit 2, one line on stderr, no output file left behind).
RS=$1; E2E=$2
. "$E2E/lib.sh"

for p in llama2-7b llama2-70b gpt3-175b gpt-13b gpt-1t mixtral-8x7b; do
    if "$RS" trace gen "$p" -o "$TMP/$p.rst" -q && [ -s "$TMP/$p.rst" ] && [ ! -e "$TMP/$p.rst.tmp" ]; then
        ok "gen $p ($(wc -c <"$TMP/$p.rst") bytes)"
    else
        fail "gen $p"
    fi
done

# The acceptance figure: gpt-1t on 16,384 GPUs well under 1 MB.
"$RS" trace gen gpt-1t --gpus 16384 -o "$TMP/g1t.rst" >"$TMP/gen.out" 2>"$TMP/gen.err"
size=$(wc -c <"$TMP/g1t.rst" 2>/dev/null || echo 0)
if [ $? -eq 0 ] && [ "$size" -gt 0 ] && [ "$size" -lt 1000000 ]; then
    ok "gpt-1t on 16384 GPUs: $size bytes"
else
    fail "gpt-1t on 16384 GPUs: $size bytes"
fi
# A preset fills every GPU count its layout divides: its batch grows
# where dp does not divide it (docs/plan-format.md), and a batch the
# plan file gives stays.
"$RS" trace gen llama2-7b --gpus 1024 -o "$TMP/l1k.rst" >"$TMP/l1k.out" 2>&1 &&
    grep -q "llama2-7b on 1024 GPUs (tp 1, pp 1, dp 1024, cp 1, ep 1, zero 3, batch 2048)" "$TMP/l1k.out" &&
    "$RS" trace gen demo-moe --gpus 256 -o "$TMP/m256.rst" 2>&1 | grep -q "dp 128, cp 1, ep 8, zero 0, batch 128)" &&
    ok "presets at any size: llama2-7b on 1024 GPUs (batch 2048), demo-moe on 256 (batch 128)" ||
    fail "presets at any size: $(head -1 "$TMP/l1k.out")"
echo '{"preset": "llama2-7b", "parallelism": {"global_batch": 1024}}' >"$TMP/l1k.json"
expect_bad "a given batch dp does not divide" "parallelism.global_batch 1024 is 512 micro-batches of 2" \
    trace gen "$TMP/l1k.json" --gpus 1024 -o "$TMP/out.rst"
"$RS" trace info "$TMP/g1t.rst" >"$TMP/info.out" 2>&1
if [ $? -eq 0 ] && grep -q "16384 on 16384 GPUs, 64 rank classes" "$TMP/info.out" &&
   grep -q "tp 8, pp 64, dp 32" "$TMP/info.out" && grep -q "compression ratio" "$TMP/info.out" &&
   grep -q "allreduce" "$TMP/info.out" && grep -q "    pp " "$TMP/info.out" &&
   grep -Eq "^    allreduce  +[0-9]+\.[0-9]{2} PiB$" "$TMP/info.out" &&
   grep -Eq "^  compute        [0-9]+\.[0-9]{3} s to [0-9]+\.[0-9]{3} s per rank" "$TMP/info.out" &&
   grep -Eq "^  file           [0-9.]+ KiB; payload [0-9.]+ KiB before zlib; .* [0-9.]+ GiB: " "$TMP/info.out"; then
    ok "info"
else
    fail "info: $(cat "$TMP/info.out")"
fi

# dump --rank: resolved communicators and peers; every class program once without.
"$RS" trace dump "$TMP/g1t.rst" --rank 8200 >"$TMP/dump.out"
if [ $? -eq 0 ] && grep -q "^rank 8200 gpu 8200 class 32" "$TMP/dump.out" &&
   grep -q "recv pp peer 7944" "$TMP/dump.out" && grep -q "allreduce tp comm .* (8 ranks)" "$TMP/dump.out"; then
    ok "dump --rank"
else
    fail "dump --rank"
fi
"$RS" trace dump "$TMP/llama2-70b.rst" >"$TMP/dump2.out"
[ $? -eq 0 ] && [ "$(grep -c '^class ' "$TMP/dump2.out")" -eq 4 ] && ok "dump" || fail "dump"

# A plan file that starts from a preset; determinism: same bytes twice.
printf '{ "preset": "mixtral-8x7b", "parallelism": { "dp": 16, "global_batch": 256 }, "gpu": { "preset": "b200" } }\n' >"$TMP/plan.json"
"$RS" trace gen "$TMP/plan.json" -o "$TMP/a.rst" -q && "$RS" trace gen "$TMP/plan.json" -o "$TMP/b.rst" -q &&
    cmp -s "$TMP/a.rst" "$TMP/b.rst" && ok "plan file, deterministic output" || fail "plan file, deterministic output"

# Bad input: exit 2, one line naming the file or field, no output file.
BAD_OUT="$TMP/out.rst"
printf '{ "preset": "llama2-70b", "parallelism": { "tp": 3 } }\n' >"$TMP/tp3.json"
printf '{ "model": { "layers": 2, }\n' >"$TMP/syntax.json"
head -c 100 "$TMP/llama2-7b.rst" >"$TMP/trunc.rst"
cp "$TMP/llama2-7b.rst" "$TMP/flip.rst"
printf 'X' | dd of="$TMP/flip.rst" bs=1 seek=60 conv=notrunc 2>/dev/null
printf 'hello, not a trace\n' >"$TMP/text.rst"
expect_bad "unknown preset"     "gpt-2t"                  trace gen gpt-2t -o "$TMP/out.rst"
expect_bad "tp not dividing"    "parallelism.tp"          trace gen "$TMP/tp3.json" -o "$TMP/out.rst"
expect_bad "syntax error"       "syntax.json:1:"          trace gen "$TMP/syntax.json" -o "$TMP/out.rst"
expect_bad "missing plan file"  "nope.json"               trace gen "$TMP/nope.json" -o "$TMP/out.rst"
expect_bad "gpus not multiple"  "--gpus"                  trace gen gpt-1t --gpus 1000 -o "$TMP/out.rst"
expect_bad "gpus not a number"  "--gpus"                  trace gen gpt-1t --gpus many -o "$TMP/out.rst"
expect_bad "no -o"              "-o FILE"                 trace gen gpt-1t
expect_bad "unknown option"     "--frobnicate"            trace gen gpt-1t --frobnicate -o "$TMP/out.rst"
expect_bad "unknown subcommand" "replay"                  trace replay x
expect_bad "truncated trace"    "trunc.rst"               trace info "$TMP/trunc.rst"
expect_bad "corrupt trace"      "flip.rst"                trace info "$TMP/flip.rst"
"$PY" - "$TMP/llama2-7b.rst" "$TMP/v2.rst" <<'PYEOF'
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
b[8:12] = struct.pack("<I", 2)                       # version 2
b[40:44] = struct.pack("<I", zlib.crc32(bytes(b[:40])))  # header CRC still right
open(sys.argv[2], "wb").write(b)
PYEOF
expect_bad "wrong version"      "v2.rst: .*version 2, expected version 1" trace info "$TMP/v2.rst"
expect_bad "not a trace"        "magic"                   trace dump "$TMP/text.rst"
expect_bad "missing trace"      "none.rst"                trace info "$TMP/none.rst"
expect_bad "rank out of range"  "--rank"                  trace dump "$TMP/llama2-7b.rst" --rank 64
expect_bad "unwritable output"  "out.rst"                 trace gen llama2-7b -o "$TMP/nodir/out.rst"
# Every plan preset (as the binary names them, in its unknown-preset
# message) is listed where a person looks for them: help keys, trace --help,
# docs/scenario-format.md, docs/cli.md and docs/plan-format.md.
DOCS="$E2E/../../docs"
names=$("$RS" trace gen no-such-preset -o "$TMP/none.rst" 2>&1 | sed -n 's/.*expected a plan JSON file or one of //p' | tr -d ',')
"$RS" help keys >"$TMP/keys.txt"; "$RS" trace --help >"$TMP/trace_help.txt" 2>&1
missing=""
for n in $names; do
    for f in "$TMP/keys.txt" "$TMP/trace_help.txt" "$DOCS/scenario-format.md" "$DOCS/cli.md" "$DOCS/plan-format.md"; do
        grep -q -- "$n" "$f" || missing="$missing $n:$(basename "$f")"
    done
done
[ -n "$names" ] && echo "$names" | grep -q demo-moe && [ -z "$missing" ] \
    && ok "every plan preset is listed in help keys, trace --help and the docs" || fail "presets not listed:$missing (names: $names)"
finish
