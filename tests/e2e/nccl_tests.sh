#!/bin/sh
# railsim nccl-tests end to end: nccl-tests' sizes, counts and bandwidth
# formulas (docs/nccl-tests.md), every row the figure of a railsim run of
# the same collective, the table and its JSON agreeing, -o writing both,
# deterministic output, and bad input refused before any run.
RS=$1; E2E=$2
. "$E2E/lib.sh"

check() {
    v=$(json_get "$2" "$3" 2>&1)
    [ "$v" = True ] && ok "$1" || fail "$1 ($v)"
}

# (1) AllReduce from 8 B to 1 GiB by x8 over 16 GPUs (two HB domains).
"$RS" nccl-tests all_reduce -b 8 -e 1G -f 8 --gpus 16 -n 1 -w 0 --json >"$TMP/ar.json" \
    || fail "all_reduce sweep failed"
check "all_reduce: the sizes nccl-tests steps through (8 x 8^k up to 1 GiB)" "$TMP/ar.json" \
    "[r['size_bytes'] for r in d['results']] == [8 * 8**k for k in range(10)]"
check "all_reduce: count = size / 4 (floats)" "$TMP/ar.json" \
    "all(r['count'] * 4 == r['size_bytes'] for r in d['results'])"
check "all_reduce: algbw = size / time, busbw = algbw x 2(n-1)/n" "$TMP/ar.json" \
    "all(abs(r['algbw_GBps'] - r['size_bytes'] / (r['time_us'] * 1e-6) / 1e9) < 1e-9 * r['algbw_GBps'] + 1e-12 and abs(r['busbw_GBps'] - r['algbw_GBps'] * 2 * 15 / 16) < 1e-9 * r['busbw_GBps'] + 1e-12 for r in d['results'])"
check "all_reduce: every size took simulated time; NCCL's protocol (LL at 8 B, Simple at 1 GiB: the default DGX H100); avg = mean busbw" "$TMP/ar.json" \
    "all(r['time_us'] > 0 and r['protocol'] in ('ll', 'll128', 'simple') and r['algo'] for r in d['results']) and d['results'][0]['protocol'] == 'll' and d['results'][-1]['protocol'] == 'simple' and abs(d['avg_busbw_GBps'] - sum(r['busbw_GBps'] for r in d['results']) / 10) < 1e-9 and (d['test'], d['gpus'], d['iters'], d['warmup_iters']) == ('all_reduce', 16, 1, 0)"

# (1a) railsim's generic network (system.preset=none): the bandwidth-perfect
# collectives, no protocol.
"$RS" nccl-tests all_reduce -b 8 -e 1M -f 1024 --gpus 16 -n 1 -w 0 --json --set system.preset=none \
    >"$TMP/ideal.json" || fail "all_reduce on system.preset=none failed"
check "all_reduce on system.preset=none: protocol '-' (nccl.model=ideal), NCCL's prediction null" "$TMP/ideal.json" \
    "all(r['time_us'] > 0 and r['protocol'] == '-' and r['nccl_predicted_us'] is None for r in d['results'])"

# (1b) The rooted ops (root 0) and NCCL's model on a preset: a broadcast
# and a reduce over 16 GPUs, count = size / 4, busbw = algbw, NCCL's
# protocol named per size; the table prints root 0.
"$RS" nccl-tests broadcast -b 8 -e 16M -f 128 --gpus 16 -n 1 -w 0 --json --set system.preset=dgx-h100 \
    >"$TMP/bc.json" || fail "broadcast failed"
check "broadcast on the DGX H100 preset: ring, busbw = algbw, LL for 8 B and Simple or LL128 for 16 MiB" "$TMP/bc.json" \
    "[r['algo'] for r in d['results']] == ['ring'] * 4 and all(r['busbw_GBps'] == r['algbw_GBps'] and r['count'] * 4 == r['size_bytes'] for r in d['results']) and d['results'][0]['protocol'] == 'll' and d['results'][-1]['protocol'] in ('simple', 'll128') and d['results'][0]['nccl_predicted_us'] > 0"
"$RS" nccl-tests reduce -b 1M -e 1M --gpus 16 -n 1 -w 0 >"$TMP/rd.txt" || fail "reduce failed"
grep -Eq '^ +1048576 +262144 +float +sum +0 ' "$TMP/rd.txt" && ok "reduce: the table's redop sum, root 0" \
    || fail "reduce: no 'float sum 0' row: $(grep 1048576 "$TMP/rd.txt")"

# (2) A row is a railsim run: 64 MiB with 1 warm-up and 2 timed
# iterations against `railsim run` of the same collective, 3 iterations.
"$RS" nccl-tests all_reduce -b 64M -e 64M --gpus 16 -n 2 -w 1 --json >"$TMP/ar64.json" || fail "64M run failed"
"$RS" run -q --set topology.gpus=16 --set traffic.kind=collective --set traffic.op=allreduce \
    --set traffic.bytes=67108864 --set traffic.iters=3 -o "$TMP/run64" || fail "railsim run of the same failed"
t=$(json_get "$TMP/run64/summary.json" "(d['collective']['times_ps'][1] + d['collective']['times_ps'][2]) / 2 / 1e6")
a=$(json_get "$TMP/run64/summary.json" "d['collective']['algo']")
check "64M row: the mean of the run's timed iterations, its algorithm" "$TMP/ar64.json" \
    "abs(d['results'][0]['time_us'] - $t) < 1e-9 * $t and d['results'][0]['algo'] == '$a'"

# (3) AllGather splits the count over the ranks, 16-byte aligned: 8 B
# over 16 GPUs is 0 B, 1 MiB is 16384 floats per rank.
"$RS" nccl-tests all_gather -b 8 -e 1M -f 131072 --gpus 16 -n 1 -w 0 --json >"$TMP/ag.json" \
    || fail "all_gather failed"
check "all_gather: sizes and counts as nccl-tests (0 B at 8 B, count per rank)" "$TMP/ag.json" \
    "[(r['size_bytes'], r['count']) for r in d['results']] == [(0, 0), (1048576, 16384)]"
check "all_gather: busbw = algbw x (n-1)/n" "$TMP/ag.json" \
    "abs(d['results'][1]['busbw_GBps'] - d['results'][1]['algbw_GBps'] * 15 / 16) < 1e-9"

# (4) The table: nccl-tests' columns; -o writes the same table and JSON;
# the same bytes twice.
"$RS" nccl-tests all_reduce -b 1K -e 1M -f 32 --gpus 8 -n 1 -w 0 -o "$TMP/o" >"$TMP/table.txt" \
    || fail "table run failed"
rows=$(grep -vc '^#' "$TMP/table.txt")
[ "$rows" -eq 3 ] && ok "table: one row per size (3)" || fail "table: $rows rows"
awk '!/^#/ && (NF != 11 || $3 != "float" || $4 != "sum" || $5 != -1 || $9 != "N/A") {bad=1} END {exit bad}' \
    "$TMP/table.txt" && ok "table: size count float sum -1 time algbw busbw N/A algo proto" \
    || fail "table: a row has the wrong shape: $(grep -v '^#' "$TMP/table.txt" | head -1)"
grep -q "^# Avg bus bandwidth    : " "$TMP/table.txt" && ok "table: Avg bus bandwidth line" || fail "table: no average line"
cmp -s "$TMP/table.txt" "$TMP/o/nccl-tests.txt" && ok "-o: nccl-tests.txt is the printed table" \
    || fail "-o: nccl-tests.txt differs from stdout"
check "-o: nccl-tests.json has the three rows" "$TMP/o/nccl-tests.json" "len(d['results']) == 3"
"$RS" nccl-tests all_reduce -b 1K -e 1M -f 32 --gpus 8 -n 1 -w 0 -o "$TMP/o2" >/dev/null
cmp -s "$TMP/o/nccl-tests.json" "$TMP/o2/nccl-tests.json" && ok "determinism: the same JSON twice" \
    || fail "determinism: JSON differs"

# (5) Send/recv across two HB domains: one NIC's payload line rate at 1 GiB
# (400e9 / 8 x 4096 / 4178 = 49.02 GB/s; busbw = algbw).
"$RS" nccl-tests sendrecv -b 1G -e 1G --gpus 16 --set traffic.group=0,8 -n 1 -w 0 --json >"$TMP/sr.json" \
    || fail "sendrecv failed"
check "sendrecv: busbw = algbw within 2% of the payload line rate" "$TMP/sr.json" \
    "d['results'][0]['busbw_GBps'] == d['results'][0]['algbw_GBps'] and abs(d['results'][0]['busbw_GBps'] / 49.02 - 1) < 0.02"

# (6) Bad input: one line, exit 2, nothing written.
BAD_OUT="$TMP/bad"
expect_bad "unknown test" "unknown test 'all_reduction'" nccl-tests all_reduction -o "$TMP/bad"
expect_bad "a size without a number" "'2X': expected a size" nccl-tests all_reduce -b 2X -o "$TMP/bad"
expect_bad "-b above -e" "-b above -e" nccl-tests all_reduce -b 2M -e 1M -o "$TMP/bad"
expect_bad "-n 0" "expected 1 to 1000 iterations" nccl-tests all_reduce -n 0 -o "$TMP/bad"
expect_bad "sendrecv over 16 GPUs" "expected a group of two GPUs" nccl-tests sendrecv --gpus 16 -o "$TMP/bad"
expect_bad "a bad scenario key" "topology.gpuz" nccl-tests all_reduce --set topology.gpuz=8 -o "$TMP/bad"
expect_bad "GPUs that do not fill HB domains" "topology.gpus" nccl-tests all_gather --gpus 12 -o "$TMP/bad"
expect_bad "no test" "expected a test" nccl-tests -o "$TMP/bad"
# A workload or a shared cluster would replace nccl-tests' collective (it
# ran them, then said no iteration completed, exit 1).
expect_bad "a workload in the scenario" "workload.plan: expected it unset" \
    nccl-tests all_reduce --set workload.plan=demo-dense -o "$TMP/bad"
expect_bad "a shared cluster's jobs" "jobs: expected none" nccl-tests all_reduce "$E2E/../../examples/shared-cluster.json" -o "$TMP/bad"

finish
