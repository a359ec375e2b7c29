#!/bin/sh
# valgrind finds no invalid access and no definite leak in a small run of
# each workload kind (synthetic traffic with PFC and DCQCN, a collective, a
# training replay, a replay with every kind of fault), timeline and capture on.
RS=$1; E2E=$2
. "$E2E/lib.sh"
command -v valgrind >/dev/null 2>&1 || { echo "FAIL valgrind not installed (scripts/install-deps)"; exit 1; }
VG="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite -q"

$VG "$RS" run -q "$E2E/small.json" --set traffic.kind=incast --capture 'leaf0.*' -o "$TMP/a" 2>"$TMP/e"; rc=$?
[ $rc -eq 0 ] && ok "incast with capture: valgrind clean" || fail "incast (rc=$rc): $(tail -5 "$TMP/e")"
$VG "$RS" run -q --set traffic.kind=collective --set traffic.bytes=1048576 --set traffic.group=rail:0 -o "$TMP/b" 2>"$TMP/e"; rc=$?
[ $rc -eq 0 ] && ok "collective: valgrind clean" || fail "collective (rc=$rc): $(tail -5 "$TMP/e")"
$VG "$RS" run -q --set workload.plan=demo-dense --set topology.gpus=16 --set topology.radix=8 -o "$TMP/c" 2>"$TMP/e"; rc=$?
[ $rc -eq 0 ] && ok "replay: valgrind clean" || fail "replay (rc=$rc): $(tail -5 "$TMP/e")"
$VG "$RS" run -q --set workload.plan=demo-dense --set topology.gpus=16 --set topology.radix=8 --set topology.hb_size=4 \
    --fault "20us link-flap=10us,0.5 any-network-link 40us" --fault "10us straggler=1.5 any-gpu 100us" \
    --set faults.mtbf_us=200 --set faults.mttr_us=20 --set faults.horizon_us=300 -o "$TMP/f" 2>"$TMP/e"; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] && ! grep -q "==[0-9]*==" "$TMP/e" && ok "replay with faults and its fault-free baseline: valgrind clean (rc=$rc)" \
    || fail "faults (rc=$rc): $(tail -5 "$TMP/e")"
# Flow level: relays as one flow, DCQCN caps, rate samples, faults with
# failover (an uninitialised DCQCN generation was read here once).
$VG "$RS" run -q --set fidelity=flow --set workload.plan=demo-dense --set topology.gpus=16 --set topology.radix=8 \
    --set topology.hb_size=4 --set topology.kind=rail-only --fault "20us link-flap=10us,0.5 any-network-link 40us" \
    --set faults.mtbf_us=200 --set faults.mttr_us=20 --set faults.horizon_us=300 -o "$TMP/g" 2>"$TMP/e"; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] && ! grep -q "==[0-9]*==" "$TMP/e" && ok "flow level with faults: valgrind clean (rc=$rc)" \
    || fail "flow level (rc=$rc): $(tail -5 "$TMP/e")"
$VG "$RS" run -q --set topology.gpus=many -o "$TMP/d" 2>"$TMP/e"; rc=$?
[ $rc -eq 2 ] && ok "bad input: exit 2, valgrind clean" || fail "bad input (rc=$rc): $(tail -5 "$TMP/e")"
finish
