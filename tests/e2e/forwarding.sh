#!/bin/sh
# Forwarding across rails (docs/model.md, "Verbs traffic"): synthetic
# traffic sends NIC to NIC as perftest does, so an 8:1 incast on the fat
# tree collides and pauses; NCCL's traffic relays by PXN; rail-only
# forwards synthetic traffic where no rail path exists; `run` says how
# many messages were relayed.
RS=$1; E2E=$2
. "$E2E/lib.sh"

INCAST="--set topology.gpus=16 --set topology.hb_size=8 --set traffic.kind=incast --set traffic.fan_in=8
        --set traffic.bytes=8388608 --set topology.buffer_bytes=262144 --set transport.cc=none"

# (1) The incast on the fat tree: no relay, PFC pauses, PFC frames in the capture.
"$RS" run $INCAST --capture '*' -o "$TMP/ft" >"$TMP/ft.out" || fail "incast on the fat tree failed"
grep -q "^  forwarding 0 of 8 messages relayed" "$TMP/ft.out" && ok "fat tree incast: run says 0 of 8 relayed" \
    || fail "fat tree incast: $(grep forwarding "$TMP/ft.out")"
v=$(json_get "$TMP/ft/summary.json" "d['pfc']['pauses_sent'] > 0")
[ "$v" = True ] && ok "fat tree incast: PFC pauses in the summary" || fail "fat tree incast: no PFC pause ($v)"
# PFC frames (MAC control, ethertype 0x8808, opcode 0x0101) in the pcaps.
n=$("$PY" - "$TMP/ft/pcap" <<'PYEOF'
import os, struct, sys
n = 0
for f in os.listdir(sys.argv[1]):
    b = open(os.path.join(sys.argv[1], f), 'rb').read()
    o = 24
    while o + 16 <= len(b):
        incl = struct.unpack('<I', b[o + 8:o + 12])[0]
        fr = b[o + 16:o + 16 + incl]
        if len(fr) >= 16 and fr[12:14] == b'\x88\x08' and fr[14:16] == b'\x01\x01':
            n += 1
        o += 16 + incl
print(n)
PYEOF
)
[ "${n:-0}" -gt 0 ] && ok "fat tree incast: $n PFC frames in the capture" || fail "fat tree incast: no PFC frame captured ($n)"

# (2) NCCL's traffic on the same fat tree relays by PXN: an all-to-all
# collective's cross-rail, cross-domain transfers.
"$RS" run --set topology.gpus=16 --set traffic.kind=collective --set traffic.op=alltoall \
    --set traffic.bytes=1048576 >"$TMP/a2a.out" || fail "all-to-all collective failed"
r=$(sed -n 's/^  forwarding \([0-9]*\) of.*/\1/p' "$TMP/a2a.out")
[ "${r:-0}" -gt 0 ] && ok "fat tree all-to-all collective: $r transfers relayed by PXN" \
    || fail "fat tree all-to-all collective: none relayed ($(grep forwarding "$TMP/a2a.out"))"

# (3) Synthetic all-to-all on rail-only: every cross-rail pair of different
# domains is forwarded (16 GPUs, HB 8: 16 x 7 such destinations each).
"$RS" run --set topology.gpus=16 --set topology.kind=rail-only --set traffic.kind=all-to-all \
    --set traffic.bytes=65536 >"$TMP/ro.out" || fail "rail-only all-to-all failed"
grep -q "^  forwarding 112 of 240 messages relayed" "$TMP/ro.out" && ok "rail-only all-to-all: 112 of 240 relayed" \
    || fail "rail-only all-to-all: $(grep forwarding "$TMP/ro.out")"
# ... and with routing.pxn=off too: verbs are forwarded where no rail path exists.
"$RS" run -q --set topology.gpus=16 --set topology.kind=rail-only --set traffic.kind=all-to-all \
    --set traffic.bytes=65536 --set routing.pxn=off && ok "rail-only all-to-all with routing.pxn=off completes" \
    || fail "rail-only all-to-all with routing.pxn=off failed"

finish
