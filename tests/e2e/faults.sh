#!/bin/sh
# Fault injection end to end (docs/faults-format.md): a link failure in the
# middle of a ring AllReduce, a spine-link failure that reroutes over the
# other spines, a NIC failure on rail-only that goes through the HB
# domain, a partition that stops the run naming the cut-off GPUs, a
# degraded link, bad schedules (exit 2), and conservation in every run.
RS=$1; E2E=$2
. "$E2E/lib.sh"

check() {
    v=$(json_get "$2" "$3" 2>&1)
    [ "$v" = True ] && ok "$1" || fail "$1 ($v)"
}
# Packets sent = delivered + dropped, nothing in flight at the end.
conserved() {
    check "$1: conservation (sent = delivered + dropped, none in flight)" "$2" \
        "d['packets']['sent'] == d['packets']['delivered'] + d['packets']['dropped'] and d['packets']['in_flight'] == 0"
}

# (1) Ring AllReduce of 8 MiB over 32 GPUs of a two-tier fat tree (8 leaves,
# 4 spines); leaf0's uplink p4 fails at 150 us, routes change 5 us later.
FT="--set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 --set seed=5"
AR="$FT --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.bytes=8388608"
"$RS" run -q $AR -o "$TMP/ar0" || fail "ring allreduce without faults: run failed"
"$RS" run -q $AR --fault "150us link-down leaf0.p4" --set faults.convergence_us=5 --set timeline.heavy=false \
    -o "$TMP/ar1" && ok "ring allreduce with a link failure completes (exit 0)" || fail "ring allreduce with a link failure: exit $?"
s="$TMP/ar1/summary.json"
check "ring allreduce: complete, packets lost and retransmitted" "$s" \
    "d['status'] == 'complete' and d['packets']['dropped'] > 0 and d['packets']['retransmitted'] > 0"
g0=$(json_get "$TMP/ar0/summary.json" "d['payload_bytes']['goodput']")
check "ring allreduce: every byte arrives exactly once (goodput as without the fault)" "$s" \
    "d['payload_bytes']['goodput'] == $g0"
check "ring allreduce: the fault entry (time, kind, target, routes 5 us later, its drops)" "$s" \
    "[(f['time_ps'], f['kind'], f['target'], f['routes_recomputed_at_ps'], f['packets_lost']) for f in d['faults']] == [(150000000, 'link-down', 'leaf0.p4', 155000000, d['packets']['dropped'])]"
conserved "ring allreduce" "$s"
if "$RS" export csv "$TMP/ar1/timeline.msgpack" -o "$TMP/ar1csv" >/dev/null 2>"$TMP/err"; then
    nd=$(($(wc -l <"$TMP/ar1csv/drop.csv") - 1))
    check "ring allreduce: timeline drop records = summary drops ($nd)" "$s" "d['packets']['dropped'] == $nd"
    grep -q '^150000000,leaf0.p4,link-down,' "$TMP/ar1csv/fault.csv" && grep -q '^155000000,leaf0.p4,routes,' "$TMP/ar1csv/fault.csv" \
        && ok "ring allreduce: timeline fault and route records" || fail "timeline fault records: $(cat "$TMP/ar1csv/fault.csv")"
else
    fail "export csv of the fault run's timeline: $(cat "$TMP/err")"
fi

# (2) All-to-all on the same fat tree; a spine link drawn by the seed fails
# at 20 us with instant convergence: traffic moves to the other spines.
A2A="$FT --set traffic.kind=all-to-all --set traffic.bytes=262144"
"$RS" run -q $A2A -o "$TMP/a0" || fail "all-to-all without faults: run failed"
"$RS" run -q $A2A --fault "20us link-down any-spine-link" -o "$TMP/a1" \
    && ok "spine-link failure: run completes" || fail "spine-link failure: exit $?"
t0=$(json_get "$TMP/a0/summary.json" "d['flows']['fct_ps']['max']")
check "spine-link failure: drawn target is a leaf-spine link, routes recomputed at once" "$TMP/a1/summary.json" \
    "d['faults'][0]['spec'] == 'any-spine-link' and d['faults'][0]['target'].split('.')[0][:4] in ('leaf', 'spin') and d['faults'][0]['routes_recomputed_at_ps'] == 20000000"
check "spine-link failure: no timeout, last message within 1.5x of the fault-free run" "$TMP/a1/summary.json" \
    "d['status'] == 'complete' and d['packets']['timeouts'] == 0 and d['flows']['fct_ps']['max'] < 1.5 * $t0"
conserved "spine-link failure" "$TMP/a1/summary.json"
"$RS" run -q $A2A --fault "20us link-down any-spine-link" -o "$TMP/a2" >/dev/null 2>&1
[ "$(strip_host "$TMP/a1/summary.json")" = "$(strip_host "$TMP/a2/summary.json")" ] \
    && ok "spine-link failure: same seed, same draw and summary" || fail "class draw not deterministic"

# (3) Rail-only (64 GPUs, HB domains of 8): GPU 0's NIC is down from the
# start; 4 MiB from GPU 0 to GPU 8 (both rail 0) go through the HB domains
# and rail 1 (GPU 1 -> GPU 9).
RO="--set topology.kind=rail-only --set traffic.kind=single --set traffic.src=0 --set traffic.dst=8 --set traffic.bytes=4194304"
"$RS" run -q $RO --fault "0 nic-down gpu0" -o "$TMP/r1" && ok "rail-only NIC failure: message completes" \
    || fail "rail-only NIC failure: exit $?"
check "rail-only NIC failure: HB bytes both ends (2 x 4 MiB), NIC bytes once" "$TMP/r1/summary.json" \
    "d['status'] == 'complete' and d['payload_bytes']['hb'] == 2 * 4194304 and d['payload_bytes']['nic'] == 4194304 and d['faults'][0]['target'] == 'gpu0.nic'"
conserved "rail-only NIC failure" "$TMP/r1/summary.json"
"$RS" run -q $RO --fault "0 nic-down gpu8" --set faults.reroute_hb=false -o "$TMP/r2" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "nic-down gpu8.nic" "$TMP/err" && grep -q " 0->8" "$TMP/err" \
    && ok "rail-only NIC failure without HB reroute: exit 1 naming the fault and 0->8" \
    || fail "no-reroute: exit $rc, $(cat "$TMP/err")"

# (4) Partition: both spines of a 16-GPU fat tree fail at 10 us during a
# permutation of 4 MiB messages; cross-leaf pairs have no path left.
"$RS" run -q "$E2E/small.json" --set traffic.bytes=4194304 --fault "10us switch-down spine0" \
    --fault "10us switch-down spine1" -o "$TMP/p" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "run stopped: faults: no path left after fault 2 (switch-down spine1 at 10.000 us)" "$TMP/err" \
    && grep -q "undeliverable messages" "$TMP/err" \
    && ok "partition: exit 1 naming the fault and the cut-off GPUs" || fail "partition: exit $rc, $(cat "$TMP/err")"
check "partition: summary says why" "$TMP/p/summary.json" \
    "d['status'] != 'complete' and d['faults_stop'].startswith('faults: no path left')"
# The same with spine1 repaired 100 us later: recovers by timeout, completes.
"$RS" run -q "$E2E/small.json" --set traffic.bytes=4194304 --fault "10us switch-down spine0" \
    --fault "10us switch-down spine1 100us" -o "$TMP/p2" && ok "partition repaired: completes" || fail "partition repaired: exit $?"
check "partition repaired: repair entry at 110 us, every byte once" "$TMP/p2/summary.json" \
    "d['faults'][2]['kind'] == 'switch-up' and d['faults'][2]['time_ps'] == 110000000 and d['payload_bytes']['goodput'] == 16 * 4194304"
conserved "partition repaired" "$TMP/p2/summary.json"

# (5) A NIC link degraded to 100 Gb/s for the whole message is slower.
ONE="--set traffic.kind=single --set traffic.src=0 --set traffic.dst=8 --set traffic.bytes=4194304"
"$RS" run -q $ONE -o "$TMP/d0" && "$RS" run -q $ONE --fault "0 link-degrade=100 gpu0.nic 1s" -o "$TMP/d1" \
    || fail "degrade runs failed"
f0=$(json_get "$TMP/d0/summary.json" "d['flows']['fct_ps']['max']")
check "link-degrade to 100 Gb/s: the message takes over 3.5x as long" "$TMP/d1/summary.json" \
    "d['flows']['fct_ps']['max'] > 3.5 * $f0 and [f['kind'] for f in d['faults']] == ['link-degrade', 'link-restore']"

# (6) Bad schedules: exit 2, one line naming the source and what was expected.
bad() {
    "$RS" run -q "$E2E/small.json" "$@" -o "$TMP/bad" 2>"$TMP/err"
    rc=$?
    printf '%s' "$BADWANT" | { read -r want; grep -q -- "$want" "$TMP/err"; } && [ $rc -eq 2 ] && [ ! -e "$TMP/bad" ] \
        && ok "bad fault ($*): exit 2" || fail "bad fault ($*): exit $rc, $(cat "$TMP/err")"
}
BADWANT="--fault: entry 1 '10 link-down leaf0.p4': TIME '10': expected a number with a unit" bad --fault "10 link-down leaf0.p4"
BADWANT="faults.schedule: entry 2 '1us melt leaf0.p4': KIND 'melt'" bad --set "faults.schedule=1us link-down leaf0.p4;1us melt leaf0.p4"
BADWANT="faults.schedule: entry 1: 'leaf9.p4' is not an Ethernet port" bad --fault "1us link-down leaf9.p4"
BADWANT="straggler gpu3 slows compute, but this scenario has none" bad --fault "1us straggler gpu3 10us"
BADWANT="class 'any-nic' does not fit link-down" bad --fault "1us link-down any-nic"
BADWANT="link-up needs a name, not a class" bad --fault "1us link-up any-spine-link"
BADWANT="class 'any-spine' has no member" bad --set topology.kind=rail-only --set topology.gpus=16 --set topology.hb_size=8 --set topology.radix=64 --fault "1us switch-down any-spine"
finish
