#!/bin/sh
# Fault injection end to end (docs/faults-format.md): a link failure in the
# middle of a ring AllReduce (drops and retransmissions matching between
# summary, timeline and capture), a spine-link failure that reroutes over
# the other spines, a NIC failure on rail-only that goes through the HB
# domain, a partition that stops the run naming the cut-off GPUs, a
# degraded link, a flapping link, random failures by MTBF/MTTR, PFC pauses
# stuck behind a dead link, bad schedules (exit 2), and conservation in
# every run.
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

# The mechanisms are checked on railsim's generic network (system.preset=
# none: its 1 ms transport timeout, bandwidth-perfect collectives), whose
# packet placements these checks name; (8b) checks the default DGX H100's
# NCCL timeout.
GEN="--set system.preset=none"

# (1) Ring AllReduce of 8 MiB over 32 GPUs of a two-tier fat tree (8 leaves,
# 4 spines); leaf0's uplink p4 fails at 150 us, routes change 5 us later.
FT="--set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 --set seed=5"
AR="$FT --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.bytes=8388608"
"$RS" run -q $GEN $AR -o "$TMP/ar0" || fail "ring allreduce without faults: run failed"
# (leaf0.p5 carries pieces' frames at 150 us: which link does follows the
# pieces' ECMP entropy, their serials in the ring's block)
"$RS" run -q $GEN $AR --fault "150us link-down leaf0.p5" --set faults.convergence_us=5 --set timeline.heavy=false \
    --capture 'gpu*.nic,leaf0.p5,spine1.p0' --set capture.snaplen=64 \
    -o "$TMP/ar1" && ok "ring allreduce with a link failure completes (exit 0)" || fail "ring allreduce with a link failure: exit $?"
s="$TMP/ar1/summary.json"
check "ring allreduce: complete, packets lost and retransmitted" "$s" \
    "d['status'] == 'complete' and d['packets']['dropped'] > 0 and d['packets']['retransmitted'] > 0"
g0=$(json_get "$TMP/ar0/summary.json" "d['payload_bytes']['goodput']")
check "ring allreduce: every byte arrives exactly once (goodput as without the fault)" "$s" \
    "d['payload_bytes']['goodput'] == $g0"
check "ring allreduce: the fault entry (time, kind, target, routes 5 us later, its drops)" "$s" \
    "[(f['time_ps'], f['kind'], f['target'], f['routes_recomputed_at_ps'], f['packets_lost']) for f in d['faults']] == [(150000000, 'link-down', 'leaf0.p5', 155000000, d['packets']['dropped'])]"
check "ring allreduce: the fault's retransmissions are all of them, some flows hit, recovered after one RTO" "$s" \
    "d['faults'][0]['packets_retransmitted'] == d['packets']['retransmitted'] > 0 and d['faults'][0]['flows_hit'] > 0 and 1000000000 <= d['faults'][0]['time_to_recover_ps'] < d['sim_end_ps'] - d['faults'][0]['time_ps']"
conserved "ring allreduce" "$s"
if "$RS" export csv "$TMP/ar1/timeline.msgpack" -o "$TMP/ar1csv" >/dev/null 2>"$TMP/err"; then
    nd=$(($(wc -l <"$TMP/ar1csv/drop.csv") - 1))
    check "ring allreduce: timeline drop records = summary drops ($nd)" "$s" "d['packets']['dropped'] == $nd"
    grep -q '^150000000,leaf0.p5,link-down,' "$TMP/ar1csv/fault.csv" && grep -q '^155000000,leaf0.p5,routes,' "$TMP/ar1csv/fault.csv" \
        && ok "ring allreduce: timeline fault and route records" || fail "timeline fault records: $(cat "$TMP/ar1csv/fault.csv")"
    rt=$(json_get "$s" "150000000 + d['faults'][0]['time_to_recover_ps']")
    grep -q "^$rt,leaf0.p5,recovered,fault 1\$" "$TMP/ar1csv/fault.csv" \
        && ok "ring allreduce: timeline 'recovered' record at fault time + time_to_recover_ps ($rt)" \
        || fail "recovered record at $rt: $(cat "$TMP/ar1csv/fault.csv")"
else
    fail "export csv of the fault run's timeline: $(cat "$TMP/err")"
fi
# The capture agrees: every retransmission is a repeated PSN of its QP in
# its sender's NIC capture; every drop is a frame the two ports of the
# failed cable sent that would have arrived (1 us link + switch latency
# after its last bit, 20 ps per wire byte) after the cable failed at 150 us.
"$PY" - "$TMP/ar1/pcap" > "$TMP/capcount" <<'PYEOF'
import os, struct, sys
d = sys.argv[1]
def frames(path):
    with open(path, "rb") as f:
        assert struct.unpack("<I", f.read(24)[:4])[0] == 0xa1b23c4d  # nanosecond pcap
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, ns, incl, orig = struct.unpack("<IIII", h)
            yield sec * 10**9 + ns, orig, f.read(incl)
repeats = 0
for name in sorted(os.listdir(d)):
    if not name.startswith("gpu"):
        continue
    seen = set()
    for t, orig, b in frames(os.path.join(d, name)):
        if b[12:14] != b"\x08\x00" or b[42] not in (6, 7, 8, 10):  # RDMA WRITE First/Middle/Last/Only
            continue
        key = (b[26:34], b[47:50], b[51:54])  # IP addresses, dest QP, PSN
        repeats += key in seen
        seen.add(key)
lost = 0
for name in ("leaf0.p5.pcap", "spine1.p0.pcap"):
    for t, orig, b in frames(os.path.join(d, name)):
        wire = max(orig + 4, 68) + 20
        lost += t * 1000 + wire * 20 + 1000000 > 150000000
print(repeats, lost)
PYEOF
read crep clost < "$TMP/capcount"
check "capture: PSN repeats in the NIC captures ($crep) = summary retransmissions" "$s" "d['packets']['retransmitted'] == ${crep:--1}"
check "capture: frames the failed cable's ports sent that arrive after the failure ($clost) = summary drops = timeline drops" "$s" \
    "d['packets']['dropped'] == ${clost:--1} == ${nd:--1}"

# (2) All-to-all on the same fat tree; a spine link drawn by the seed fails
# at 20 us with instant convergence: traffic moves to the other spines.
A2A="$FT --set traffic.kind=all-to-all --set traffic.bytes=262144"
"$RS" run -q $GEN $A2A -o "$TMP/a0" || fail "all-to-all without faults: run failed"
"$RS" run -q $GEN $A2A --fault "20us link-down any-spine-link" -o "$TMP/a1" \
    && ok "spine-link failure: run completes" || fail "spine-link failure: exit $?"
t0=$(json_get "$TMP/a0/summary.json" "d['flows']['fct_ps']['max']")
check "spine-link failure: drawn target is a leaf-spine link, routes recomputed at once" "$TMP/a1/summary.json" \
    "d['faults'][0]['spec'] == 'any-spine-link' and d['faults'][0]['target'].split('.')[0][:4] in ('leaf', 'spin') and d['faults'][0]['routes_recomputed_at_ps'] == 20000000"
check "spine-link failure: no timeout, last message within 1.5x of the fault-free run" "$TMP/a1/summary.json" \
    "d['status'] == 'complete' and d['packets']['timeouts'] == 0 and d['flows']['fct_ps']['max'] < 1.5 * $t0"
conserved "spine-link failure" "$TMP/a1/summary.json"
"$RS" run -q $GEN $A2A --fault "20us link-down any-spine-link" -o "$TMP/a2" >/dev/null 2>&1
[ "$(strip_host "$TMP/a1/summary.json")" = "$(strip_host "$TMP/a2/summary.json")" ] \
    && ok "spine-link failure: same seed, same draw and summary" || fail "class draw not deterministic"

# (3) Rail-only (64 GPUs, HB domains of 8): GPU 0's NIC is down from the
# start; 4 MiB from GPU 0 to GPU 8 (both rail 0) go through the HB domains
# and rail 1 (GPU 1 -> GPU 9).
RO="--set topology.kind=rail-only --set traffic.kind=single --set traffic.src=0 --set traffic.dst=8 --set traffic.bytes=4194304"
"$RS" run -q $GEN $RO --fault "0 nic-down gpu0" -o "$TMP/r1" && ok "rail-only NIC failure: message completes" \
    || fail "rail-only NIC failure: exit $?"
check "rail-only NIC failure: HB bytes both ends (2 x 4 MiB), NIC bytes once" "$TMP/r1/summary.json" \
    "d['status'] == 'complete' and d['payload_bytes']['hb'] == 2 * 4194304 and d['payload_bytes']['nic'] == 4194304 and d['faults'][0]['target'] == 'gpu0.nic'"
conserved "rail-only NIC failure" "$TMP/r1/summary.json"
"$RS" run -q $GEN $RO --fault "0 nic-down gpu8" --set faults.reroute_hb=false -o "$TMP/r2" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "nic-down gpu8.nic" "$TMP/err" && grep -q " 0->8" "$TMP/err" \
    && ok "rail-only NIC failure without HB reroute: exit 1 naming the fault and 0->8" \
    || fail "no-reroute: exit $rc, $(cat "$TMP/err")"

# (3b) Failover: a ring AllReduce of 4 MiB over 32 GPUs (HB domains of 4);
# gpu5's NIC fails for good at 30 us, in the middle of the collective.
# Messages in flight through it move to another rail through the HB
# domains; the collective completes on both topologies, every message once.
FO="--set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=16 --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.bytes=4194304 --set timeline.heavy=false"
for topo in rail-only fat-tree; do
    "$RS" run -q $GEN $FO --set topology.kind=$topo -o "$TMP/fo0-$topo" || fail "failover $topo: fault-free run failed"
    "$RS" run -q $GEN $FO --set topology.kind=$topo --fault "30us nic-down gpu5" -o "$TMP/fo-$topo" 2>"$TMP/err" \
        && ok "failover $topo: ring allreduce with a permanent NIC failure mid-run completes (exit 0)" \
        || fail "failover $topo: exit $?, $(cat "$TMP/err")"
    s="$TMP/fo-$topo/summary.json"
    check "failover $topo: complete, slower than without the fault, the fault charged with the drops" "$s" \
        "d['status'] == 'complete' and d['fault_free']['slowdown'] > 1 and d['faults'][0]['packets_lost'] == d['packets']['dropped'] > 0 and d['faults'][0]['time_to_recover_ps'] is not None"
    conserved "failover $topo" "$s"
    if "$RS" export csv "$TMP/fo-$topo/timeline.msgpack" -o "$TMP/fo-$topo-csv" >/dev/null 2>"$TMP/err"; then
        nf=$(grep -c ',failover,' "$TMP/fo-$topo-csv/drop.csv")
        nt=$(($(wc -l <"$TMP/fo-$topo-csv/drop.csv") - 1))
        check "failover $topo: timeline drops ($nt, $nf of them reason failover) = summary drops" "$s" \
            "d['packets']['dropped'] == $nt"
        "$RS" export csv "$TMP/fo0-$topo/timeline.msgpack" -o "$TMP/fo0-$topo-csv" >/dev/null 2>&1
        [ "$(wc -l <"$TMP/fo-$topo-csv/flow.csv")" = "$(wc -l <"$TMP/fo0-$topo-csv/flow.csv")" ] \
            && ok "failover $topo: as many completed messages as without the fault" \
            || fail "failover $topo: $(wc -l <"$TMP/fo-$topo-csv/flow.csv") vs $(wc -l <"$TMP/fo0-$topo-csv/flow.csv") flow records"
    else
        fail "failover $topo: export csv: $(cat "$TMP/err")"
    fi
done

# One 8 MiB message 1 -> 5 on rail 1 of a rail-only network; gpu1's NIC
# fails for good at 40 us. The frames of the abandoned flow already past
# the dead cable reach gpu5 and are dropped, reason failover.
SF="--set topology.kind=rail-only --set topology.gpus=16 --set topology.hb_size=4 --set topology.radix=16 --set traffic.kind=single --set traffic.src=1 --set traffic.dst=5 --set traffic.bytes=8388608"
if "$RS" run -q $GEN $SF --fault "40us nic-down gpu1" -o "$TMP/fo1" 2>"$TMP/err" \
    && "$RS" export csv "$TMP/fo1/timeline.msgpack" -o "$TMP/fo1csv" >/dev/null 2>&1; then
    nf=$(grep -c ',gpu5.nic,failover,' "$TMP/fo1csv/drop.csv")
    nt=$(($(wc -l <"$TMP/fo1csv/drop.csv") - 1))
    check "failover single message: completes once, $nf drops of the abandoned flow at gpu5.nic (failover), all $nt charged to the fault" \
        "$TMP/fo1/summary.json" "d['status'] == 'complete' and $nf > 0 and d['packets']['dropped'] == $nt == d['faults'][0]['packets_lost'] and d['packets']['timeouts'] == 0"
    conserved "failover single message" "$TMP/fo1/summary.json"
else
    fail "failover single message: $(cat "$TMP/err")"
fi

# (4) Partition: both spines of a 16-GPU fat tree fail at 10 us during a
# permutation of 4 MiB messages; cross-leaf pairs have no path left.
"$RS" run -q $GEN "$E2E/small.json" --set traffic.bytes=4194304 --fault "10us switch-down spine0" \
    --fault "10us switch-down spine1" -o "$TMP/p" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "run stopped: faults: no path left after fault 2 (switch-down spine1 at 10.000 us)" "$TMP/err" \
    && grep -q "undeliverable messages" "$TMP/err" \
    && ok "partition: exit 1 naming the fault and the cut-off GPUs" || fail "partition: exit $rc, $(cat "$TMP/err")"
check "partition: summary says why" "$TMP/p/summary.json" \
    "d['status'] != 'complete' and d['faults_stop'].startswith('faults: no path left')"
# A partition names the operation too: the collective, or what every
# blocked rank of a replay waits on.
"$RS" run -q $GEN --set topology.gpus=16 --set topology.hb_size=1 --set topology.radix=8 --set traffic.kind=collective \
    --set traffic.op=allreduce --fault "10us nic-down gpu3" -o "$TMP/pc" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "undeliverable messages (source GPU->destination GPU): 3->4 (4 message(s) in all); operation: allreduce (ring) over 16 ranks, 1048576 bytes, iteration 1 of 1" "$TMP/err" \
    && ok "partition of a collective: names the pair once and the operation" || fail "partition collective: exit $rc, $(cat "$TMP/err")"
"$RS" run -q $GEN --set topology.gpus=16 --set topology.hb_size=1 --set topology.radix=8 --set workload.plan=demo-dense \
    --fault "10us nic-down gpu3" -o "$TMP/pr" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "no path left after fault 1 (nic-down gpu3.nic at 10.000 us).*; replay made no progress .*rank 0 is stuck at op 1 (coll \"tp allreduce\"" "$TMP/err" \
    && ok "partition of a replay: names what the blocked ranks wait on" || fail "partition replay: exit $rc, $(cat "$TMP/err")"
# The same with spine1 repaired 100 us later: recovers by timeout, completes.
"$RS" run -q $GEN "$E2E/small.json" --set traffic.bytes=4194304 --fault "10us switch-down spine0" \
    --fault "10us switch-down spine1 100us" -o "$TMP/p2" && ok "partition repaired: completes" || fail "partition repaired: exit $?"
check "partition repaired: repair entry at 110 us, every byte once" "$TMP/p2/summary.json" \
    "d['faults'][2]['kind'] == 'switch-up' and d['faults'][2]['time_ps'] == 110000000 and d['payload_bytes']['goodput'] == 16 * 4194304"
conserved "partition repaired" "$TMP/p2/summary.json"

# (5) A NIC link degraded to 100 Gb/s for the whole message is slower.
ONE="--set traffic.kind=single --set traffic.src=0 --set traffic.dst=8 --set traffic.bytes=4194304"
"$RS" run -q $GEN $ONE -o "$TMP/d0" && "$RS" run -q $GEN $ONE --fault "0 link-degrade=100 gpu0.nic 1s" -o "$TMP/d1" \
    || fail "degrade runs failed"
f0=$(json_get "$TMP/d0/summary.json" "d['flows']['fct_ps']['max']")
check "link-degrade to 100 Gb/s: the message takes over 3.5x as long" "$TMP/d1/summary.json" \
    "d['flows']['fct_ps']['max'] > 3.5 * $f0 and [f['kind'] for f in d['faults']] == ['link-degrade', 'link-restore']"

# (6) A flap of leaf0's uplink during the ring AllReduce: down 10 us of
# every 40 us from 100 us for 100 us: three down/up pairs, each an entry of
# its own, in the timeline too; the collective completes, every byte once.
"$RS" run -q $GEN $AR --fault "100us link-flap=40us,0.25 leaf0.p4 100us" -o "$TMP/f1" \
    && ok "link-flap: ring allreduce completes" || fail "link-flap: exit $?"
s="$TMP/f1/summary.json"
check "link-flap: six transitions at the right times, origin flap, entry 1" "$s" \
    "[(f['time_ps'] // 1000000, f['kind'], f['origin'], f['entry'], f['applied']) for f in d['faults']] == [(t, k, 'flap', 1, True) for t, k in ((100, 'link-down'), (110, 'link-up'), (140, 'link-down'), (150, 'link-up'), (180, 'link-down'), (190, 'link-up'))]"
check "link-flap: losses charged to the down transitions, adding up to the drops; every byte once" "$s" \
    "sum(f['packets_lost'] for f in d['faults']) == d['packets']['dropped'] > 0 and all(f['packets_lost'] == 0 for f in d['faults'][1::2]) and d['payload_bytes']['goodput'] == $g0"
check "link-flap: retransmissions charged to the transitions add up" "$s" \
    "sum(f['packets_retransmitted'] for f in d['faults']) == d['packets']['retransmitted']"
conserved "link-flap" "$s"
if "$RS" export csv "$TMP/f1/timeline.msgpack" -o "$TMP/f1csv" >/dev/null 2>"$TMP/err"; then
    n=$(grep -c ',leaf0.p4,link-\(down\|up\),leaf0.p4$' "$TMP/f1csv/fault.csv")
    [ "$n" = 6 ] && ok "link-flap: six transition records in the timeline" || fail "link-flap timeline: $(cat "$TMP/f1csv/fault.csv")"
else
    fail "export csv of the flap run's timeline: $(cat "$TMP/err")"
fi

# (7) Random failures: every network cable fails after an exponential time
# of mean 2 ms and is repaired after one of mean 50 us, before 300 us.
RND="--set faults.mtbf_us=2000 --set faults.mttr_us=50 --set faults.horizon_us=300"
"$RS" run -q $GEN $AR $RND -o "$TMP/m1" && ok "random failures: ring allreduce completes" || fail "random failures: exit $?"
s="$TMP/m1/summary.json"
check "random failures: drawn entries, failures before the horizon, each repaired later" "$s" \
    "len(d['faults']) >= 4 and all(f['origin'] == 'random' and f['entry'] is None and f['spec'] == 'any-network-link' for f in d['faults']) and all(f['time_ps'] < 300000000 for f in d['faults'] if f['kind'] == 'link-down') and all(any(g['kind'] == 'link-up' and g['target'] == f['target'] and g['time_ps'] > f['time_ps'] for g in d['faults']) for f in d['faults'] if f['kind'] == 'link-down')"
check "random failures: every byte once, losses add up" "$s" \
    "d['payload_bytes']['goodput'] == $g0 and sum(f['packets_lost'] for f in d['faults']) == d['packets']['dropped']"
conserved "random failures" "$s"
"$RS" run -q $GEN $AR $RND -o "$TMP/m2" >/dev/null 2>&1
"$RS" run -q $GEN $AR $RND --set seed=6 -o "$TMP/m3" >/dev/null 2>&1
[ "$(strip_host "$TMP/m1/summary.json")" = "$(strip_host "$TMP/m2/summary.json")" ] \
    && ok "random failures: same seed, same failures and summary" || fail "random failures not deterministic"
[ "$(json_get "$TMP/m1/summary.json" "[(f['time_ps'], f['target']) for f in d['faults']]")" != \
  "$(json_get "$TMP/m3/summary.json" "[(f['time_ps'], f['target']) for f in d['faults']]")" ] \
    && ok "random failures: another seed draws other failures" || fail "random failures ignore the seed"

# (8) PFC behind a dead link: a 12:1 incast into gpu0 with PFC backs up to
# the spines; leaf0's cable to spine1 fails while spine1 is paused toward
# it, so spine1.p1 stays paused (no resume can cross the dead cable) and
# the pauses behind it are reported. The paper's DCQCN constants keep the
# incast's PFC state at 300 us what this scenario was built around (with
# ConnectX's, other spines are paused then).
PAPER="--set transport.dcqcn.profile=paper-2015"
"$RS" run -q $GEN "$E2E/small.json" $PAPER --set pfc.enabled=true --set traffic.kind=incast --set traffic.dst=0 \
    --set traffic.fan_in=12 --set traffic.bytes=4194304 --fault "300us link-down leaf0.p7" -o "$TMP/pfc" \
    && ok "PFC behind a dead link: run completes" || fail "PFC behind a dead link: exit $?"
s="$TMP/pfc/summary.json"
check "PFC behind a dead link: stuck pauses reported on the fault, behind spine1.p1" "$s" \
    "len(d['faults'][0]['pfc_stuck']) >= 2 and all(x['reason'] == 'dead-link' and x['behind'] == 'spine1.p1' and x['priority'] == d['scenario']['transport']['priority'] and x['detected_at_ps'] >= 300000000 for x in d['faults'][0]['pfc_stuck']) and 'spine1.p1' in [x['port'] for x in d['faults'][0]['pfc_stuck']]"
conserved "PFC behind a dead link" "$s"
# Both spines fail instead: the run stops, and the stop message lists the
# pauses left behind the dead links.
"$RS" run -q $GEN "$E2E/small.json" $PAPER --set pfc.enabled=true --set traffic.kind=incast --set traffic.dst=0 \
    --set traffic.fan_in=12 --set traffic.bytes=4194304 --fault "300us switch-down spine0" \
    --fault "300us switch-down spine1" -o "$TMP/pfc2" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "; PFC pauses that cannot be released: .* priority 3 (behind dead link at spine1.p0)" "$TMP/err" \
    && ok "PFC behind dead links at a partition: exit 1, the stop message lists the stuck pauses" \
    || fail "PFC partition stop: exit $rc, $(cat "$TMP/err")"
check "PFC partition stop: summary's faults_stop lists them too" "$TMP/pfc2/summary.json" \
    "'PFC pauses that cannot be released' in d['faults_stop']"

# (8b) The default system (DGX H100, docs/systems.md): a packet lost at
# the tail of a message waits NCCL's QP timeout, 4.096 us x 2^20
# (NCCL_IB_TIMEOUT=20), before it is sent again.
"$RS" run -q $AR --set system.preset=dgx-h100 -o "$TMP/nt0" || fail "DGX H100 without faults: exit $?"
gn=$(json_get "$TMP/nt0/summary.json" "d['payload_bytes']['goodput']")
"$RS" run -q $AR --set system.preset=dgx-h100 --fault "100us link-down leaf0.p5" --set faults.convergence_us=5 \
    --set timeline.enabled=false -o "$TMP/nt" || fail "DGX H100 timeout: exit $?"
check "DGX H100: the lost tail waits NCCL's 4.29 s timeout, then completes, every byte once" "$TMP/nt/summary.json" \
    "d['status'] == 'complete' and d['packets']['timeouts'] >= 1 and d['faults'][0]['time_to_recover_ps'] >= 4294967296000 and d['payload_bytes']['goodput'] == $gn"
conserved "DGX H100 timeout" "$TMP/nt/summary.json"

# (9) Bad schedules: exit 2, one line naming the source and what was expected.
bad() {
    "$RS" run -q $GEN "$E2E/small.json" "$@" -o "$TMP/bad" 2>"$TMP/err"
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
BADWANT="link-flap needs a DURATION" bad --fault "1us link-flap leaf0.p4"
BADWANT="expected link-flap=PERIOD\[,DUTY\]" bad --fault "1us link-flap=10us,1.5 leaf0.p4 1ms"
BADWANT="faults.horizon_us: expected a time above 0" bad --set faults.mtbf_us=100
BADWANT="faults.random_class: 'any-cable'" bad --set faults.mtbf_us=100 --set faults.horizon_us=10 --set faults.random_class=any-cable
BADWANT="class 'any-spine' has no member" bad --set topology.kind=rail-only --set topology.gpus=16 --set topology.hb_size=8 --set topology.radix=64 --fault "1us switch-down any-spine"
finish
