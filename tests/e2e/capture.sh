#!/bin/sh
# Captures from real runs: tshark dissects every frame without malformed or
# warning flags; ICRCs verify (scapy); PFC frames and CNPs per port equal
# what summary.json reports for that port; PSNs follow the transport
# (retransmissions show as repeats); capturing changes no result; the same
# seed gives the same capture bytes. Needs tshark and python3-scapy.
RS=$1; E2E=$2
. "$E2E/lib.sh"
command -v tshark >/dev/null 2>&1 || { echo "FAIL tshark not installed (scripts/install-deps)"; exit 1; }
TS() { tshark -n "$@" 2>/dev/null; }

# An 8:1 incast with PFC, ECN and DCQCN: data, ACKs, CNPs and pause frames.
ARGS="--set traffic.kind=incast --set traffic.fan_in=8 --set traffic.bytes=1048576"
"$RS" run -q $E2E/small.json $ARGS --capture 'gpu*.nic,leaf*' -o "$TMP/c" || { fail "capture run"; finish; exit 1; }
"$RS" run -q $E2E/small.json $ARGS -o "$TMP/n"
no_cap() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k) for k in ('wall_s','peak_rss_bytes')]; d['scenario'].pop('capture'); print(json.dumps(d, sort_keys=True))" "$1"; }
[ "$(no_cap "$TMP/c/summary.json")" = "$(no_cap "$TMP/n/summary.json")" ] \
    && ok "capture changes no result" || fail "capture changed the summary"
n=$(ls "$TMP/c/pcap" | grep -c '\.pcap$')
[ "$n" -gt 0 ] && ok "$n capture files" || fail "no capture files"
ls -a "$TMP/c/pcap" | grep -q '\.tmp' && fail "temporary capture files left" || ok "no temporary files"

# tshark starts slowly: check every capture at once through one merged file.
mergecap -w "$TMP/all.pcapng" "$TMP"/c/pcap/*.pcap
b=$(TS -r "$TMP/all.pcapng" -o ip.check_checksum:TRUE -Y '_ws.malformed || _ws.expert.severity >= warning' | head -3)
i=$(TS -r "$TMP/all.pcapng" -T fields -e _ws.col.Info | grep -i -E 'malformed|invalid|error!' | head -3)
total=$(TS -r "$TMP/all.pcapng" -T fields -e frame.number | wc -l)
[ -z "$b$i" ] && [ "$total" -gt 1000 ] && ok "tshark: none of $total captured frames malformed or flagged" \
    || fail "tshark flags: $b $i"

# Per-port counts of PFC frames and CNPs equal the summary's, on the six
# ports that sent the most of them.
"$PY" - "$TMP/c/summary.json" > "$TMP/want" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ports = sorted(d["ports"], key=lambda p: (-(p["pfc_sent"] + p["cnp_sent"]), p["name"]))[:6]
for p in ports:
    print(p["name"], p["pfc_sent"], p["cnp_sent"], p["tx_packets"])
PYEOF
mism=""; checked=0; pfc_total=0; cnp_total=0
while read name pfc cnp tx; do
    f="$TMP/c/pcap/$name.pcap"
    [ -f "$f" ] || continue
    TS -r "$f" -T fields -e macc.opcode -e infiniband.bth.opcode > "$TMP/fields"
    gp=$(grep -c '^0x0101' "$TMP/fields")
    gc=$(grep -c '	129$' "$TMP/fields")
    gt=$(wc -l < "$TMP/fields")
    [ "$gp" = "$pfc" ] && [ "$gc" = "$cnp" ] && [ "$gt" = "$tx" ] || mism="$mism $name(pfc $gp/$pfc cnp $gc/$cnp frames $gt/$tx)"
    checked=$((checked + 1)); pfc_total=$((pfc_total + gp)); cnp_total=$((cnp_total + gc))
done < "$TMP/want"
[ -z "$mism" ] && [ "$checked" -gt 0 ] && [ "$pfc_total" -gt 0 ] && [ "$cnp_total" -gt 0 ] \
    && ok "PFC frames ($pfc_total) and CNPs ($cnp_total) per port equal the summary on $checked ports" \
    || fail "capture vs summary:$mism (pfc $pfc_total, cnp $cnp_total)"

# ICRC of every RoCE frame on a NIC capture, recomputed by scapy.
"$PY" "$E2E/icrc_check.py" "$TMP/c/pcap/gpu0.nic.pcap" > "$TMP/icrc" 2>&1 \
    && ok "ICRC verifies: $(tail -1 "$TMP/icrc")" || fail "ICRC: $(tail -3 "$TMP/icrc")"

# Same seed, same capture bytes.
"$RS" run -q $E2E/small.json $ARGS --capture 'gpu*.nic,leaf*' -o "$TMP/c2"
same=1
for f in "$TMP"/c/pcap/*.pcap; do cmp -s "$f" "$TMP/c2/pcap/$(basename "$f")" || same=0; done
[ $same = 1 ] && ok "same seed, byte-identical captures" || fail "captures differ between identical runs"

# Lossy run: a sender's PSNs go up by one, and a NAK-triggered go-back
# shows as PSNs that repeat; the first PSN of each retransmission equals
# the NAK'd one.
"$RS" run -q $E2E/small.json --set pfc.enabled=false --set topology.buffer_bytes=32768 $ARGS \
    --set transport.rto_us=50 --capture 'gpu*.nic' -o "$TMP/l"
retx=$(json_get "$TMP/l/summary.json" "d['packets']['retransmitted']")
"$PY" - "$TMP/l/pcap" "$retx" > "$TMP/psn" <<'PYEOF'
import os, subprocess, sys
d, retx = sys.argv[1], int(sys.argv[2])
repeats = 0; bad = 0; naks = {}
for name in sorted(os.listdir(d)):
    out = subprocess.run(["tshark", "-n", "-r", os.path.join(d, name), "-Y", "infiniband", "-T", "fields",
                          "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn",
                          "-e", "infiniband.aeth.syndrome"], capture_output=True, text=True).stdout
    last = {}
    for line in out.splitlines():
        op, qp, psn, syn = (line.split("\t") + [""] * 4)[:4]
        op, psn = int(op), int(psn)
        if op in (6, 7, 8, 10):          # RDMA WRITE: data of QP qp
            prev = last.get(qp)
            if prev is not None and psn != prev + 1:
                if psn <= prev:
                    repeats += prev + 1 - psn
                else:
                    bad += 1             # a gap in what a sender sent: impossible
            last[qp] = psn
print(repeats, bad, retx)
print("ok" if bad == 0 and repeats > 0 and repeats <= retx else "bad")
PYEOF
[ "$(tail -1 "$TMP/psn")" = ok ] && ok "PSNs in sequence, go-back-N repeats visible ($(head -1 "$TMP/psn"))" \
    || fail "PSN sequence: $(cat "$TMP/psn")"

# Bad capture requests.
"$RS" run -q --capture 'nosuchport*' -o "$TMP/bad" 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q 'capture.ports' "$TMP/err" && [ ! -e "$TMP/bad" ] \
    && ok "pattern matching nothing: exit 2, nothing written" || fail "bad pattern (rc=$rc): $(cat "$TMP/err")"
"$RS" run -q --capture 'gpu0.nic' 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q -- '-o DIR' "$TMP/err" && ok "capture without -o: exit 2" || fail "capture without -o (rc=$rc)"
finish
