#!/bin/sh
# Bad input: exit 2, one sentence on stderr naming the file/key and what
# was expected, and no output directory left behind.
RS=$1; E2E=$2
. "$E2E/lib.sh"

# expect_bad NAME PATTERN ARGS...: run railsim ARGS, expect exit 2, exactly
# one stderr line matching PATTERN, and no $TMP/out.
BAD_OUT="$TMP/out"

printf '{ "topology": { "gpus": 64, }\n' > "$TMP/syntax.json"
printf '{ "topology": { "radx": 16 } }\n' > "$TMP/unknown.json"
printf '{ "topology": { "gpus": "many" } }\n' > "$TMP/type.json"
printf '{ "topology": { "gpus": 12, "hb_size": 8 } }\n' > "$TMP/multiple.json"
printf '[1, 2]\n' > "$TMP/array.json"
printf '' > "$TMP/empty.json"
printf '{"seed": 1\0}' > "$TMP/nul.json"

expect_bad "syntax error"        "syntax.json:1:"          run "$TMP/syntax.json" -o "$TMP/out"
expect_bad "unknown key"         "did you mean 'topology.radix'" run "$TMP/unknown.json" -o "$TMP/out"
expect_bad "wrong type"          "topology.gpus"           run "$TMP/type.json" -o "$TMP/out"
expect_bad "gpus not multiple"   "topology.gpus"           run "$TMP/multiple.json" -o "$TMP/out"
expect_bad "not an object"       "array.json"              run "$TMP/array.json" -o "$TMP/out"
expect_bad "NUL byte"            "nul.json: byte 10 is a NUL" run "$TMP/nul.json" -o "$TMP/out"
expect_bad "empty file"          "empty.json"              run "$TMP/empty.json" -o "$TMP/out"
# `--set KEY VALUE` (no '='): the --set is named, VALUE is not taken for a
# scenario file ("64: cannot open scenario file" before), for every command.
for cmd in run compare validate; do
    expect_bad "$cmd --set without '='" '^railsim: --set: expected KEY=VALUE in one argument (e.g. --set topology.gpus=64), got "topology.gpus"$' \
        $cmd --set topology.gpus 64 -o "$TMP/out"
done
expect_bad "faults sweep --set without '='" '^railsim: --set: expected KEY=VALUE in one argument' \
    faults sweep --class any-network-link --set topology.gpus 64 -o "$TMP/out"
expect_bad "missing file"        "nope.json"               run "$TMP/nope.json" -o "$TMP/out"
# Tiers are unbounded (each adds radix/2 of reach): only 2-port switches
# cannot join more than 2 leaves.
expect_bad "radix too small"     "topology.radix"          run --set topology.gpus=8 --set topology.hb_size=1 --set topology.radix=2 -o "$TMP/out"
expect_bad "too deep for flow"   "fidelity"                run --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=4 --set fidelity=flow -o "$TMP/out"
expect_bad "zero rate"           "topology.nic_gbps"       run --set topology.nic_gbps=0 -o "$TMP/out"
expect_bad "negative latency"    "topology.link_latency_ns" run --set topology.link_latency_ns=-5 -o "$TMP/out"
expect_bad "huge gpus"           "topology.gpus"           run --set topology.gpus=99999999999 -o "$TMP/out"
expect_bad "bad enum"            "topology.kind"           run --set topology.kind=torus -o "$TMP/out"
expect_bad "set without ="       "--set"                   run --set topology.gpus -o "$TMP/out"
expect_bad "unknown set key"     "traffic.byte"            run --set traffic.byte=5 -o "$TMP/out"
expect_bad "src out of range"    "traffic.src"             run --set traffic.kind=single --set traffic.src=64 -o "$TMP/out"
expect_bad "fan_in too large"    "traffic.fan_in"          run --set traffic.kind=incast --set traffic.fan_in=64 -o "$TMP/out"
expect_bad "tiny buffer"         "topology.buffer_bytes"   run --set topology.buffer_bytes=100 -o "$TMP/out"
expect_bad "unknown option"      "--frobnicate"            run --frobnicate -o "$TMP/out"
expect_bad "unknown command"     "teleport"                teleport
expect_bad "two scenario files"  "unexpected argument"     run "$E2E/small.json" "$E2E/small.json" -o "$TMP/out"

# The estimate the guard works from is in every summary: messages exact
# for synthetic patterns and ring collectives (the schedule it counts; a
# tree or NVLS sends fewer), events within a factor of 2.
for args in "--set traffic.kind=permutation --set traffic.bytes=2000000" \
            "--set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=16777216 --set nccl.algo=ring" \
            "--set traffic.kind=all-to-all --set traffic.bytes=100000 --set fidelity=flow" \
            "--set workload.plan=demo-dense" "--set workload.plan=demo-moe --set fidelity=flow"; do
    "$RS" run -q --set topology.gpus=64 --set topology.hb_size=8 --set topology.radix=16 $args -o "$TMP/est" &&
    r=$(json_get "$TMP/est/summary.json" "'%.2f %d' % (d['estimate']['events'] / d['events'], d['estimate']['messages'] == d['flows']['count'] or 'workload' in d['scenario'] and d['scenario']['workload']['plan'] != '')") &&
    echo "$r" | { read ratio exact; awk -v r="$ratio" 'BEGIN { exit !(r >= 0.5 && r <= 2) }' && [ "$exact" = 1 ]; } &&
    ok "estimate ($args): events estimate/actual $r" || fail "estimate ($args): $r"
    rm -rf "$TMP/est"
done
expect_bad "run too big for memory" "needs about"        run --set topology.gpus=65536 --set traffic.kind=all-to-all -o "$TMP/out"
# (A replay is no longer refused for memory: packet-level records follow
# what is in flight, so gpt3-175b on 16,384 GPUs fits; it takes hours.)
expect_bad "timeline samples too big for the disk" "link samples need at least [0-9.]* [KMGTP]iB and .* has [0-9.]* [KMGTP]iB free" run --set topology.hb_size=1 --set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=68719476736 --set timeline.sample_us=0.001 -o "$TMP/out"
mkdir -p "$TMP/adir"
expect_bad "scenario is a directory" "adir"               run "$TMP/adir" -o "$TMP/out"

# A full disk: the summary's temporary file is /dev/full. Exit 2, the
# message names the file, no summary.json appears.
mkdir -p "$TMP/full"
ln -s /dev/full "$TMP/full/.summary.json.tmp"
"$RS" run -q -o "$TMP/full" 2>"$TMP/stderr"; rc=$?
[ $rc -eq 2 ] && grep -q 'summary.json' "$TMP/stderr" && grep -q -i 'space' "$TMP/stderr" && [ ! -e "$TMP/full/summary.json" ] \
    && ok "full disk: $(cat "$TMP/stderr")" || fail "full disk (rc=$rc): $(cat "$TMP/stderr")"

# An output path that is a file: exit 2, nothing written.
: > "$TMP/afile"
"$RS" run -q -o "$TMP/afile/sub" 2>"$TMP/stderr"
[ $? -eq 2 ] && grep -q 'afile' "$TMP/stderr" && ok "unwritable output directory" || fail "unwritable output directory"
finish
