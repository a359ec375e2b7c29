#!/bin/sh
# Captures from real runs: tshark dissects every frame without malformed or
# warning flags; ICRCs verify (scapy); PFC frames and CNPs per port equal
# what summary.json reports for that port; PSNs follow the transport
# (retransmissions show as repeats); capturing changes no result; the same
# seed gives the same capture bytes. The same with --capture-format pcapng:
# one file, an interface per port named after it, both directions, every
# frame decoding, the bytes those of the pcap files and of the peer's
# outbound frames, run metadata in the section header. Needs tshark,
# capinfos and python3-scapy.
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

# pcapng (--capture-format pcapng): one file, one interface per captured
# port, both directions of each captured port's cable.
"$RS" run -q $E2E/small.json $ARGS --capture 'gpu*.nic,leaf*' --capture-format pcapng -o "$TMP/g" \
    || { fail "pcapng capture run"; finish; exit 1; }
G="$TMP/g/pcap/capture.pcapng"
[ "$(ls -a "$TMP/g/pcap" | grep -v '^\.\.*$')" = capture.pcapng ] && ok "pcapng: one file, capture.pcapng, nothing else" \
    || fail "pcapng: files $(ls -a "$TMP/g/pcap" | tr '\n' ' ')"
[ "$(no_cap "$TMP/g/summary.json")" = "$(no_cap "$TMP/n/summary.json")" ] \
    && ok "pcapng capture changes no result" || fail "pcapng capture changed the summary"
tshark -n -r "$G" -o ip.check_checksum:TRUE -T fields -e frame.number -e frame.interface_name \
    -e frame.packet_flags_direction -e _ws.col.Info > "$TMP/g.fields" 2>"$TMP/g.err"
warn=$(grep -v -i 'running as user' "$TMP/g.err")
total=$(wc -l < "$TMP/g.fields")
[ -z "$warn" ] && [ "$total" -gt 1000 ] && ok "tshark reads $total pcapng frames with nothing on stderr" \
    || fail "tshark on the pcapng: $total frames; stderr: $warn"
# Malformed, expert warnings or errors, RoCE port without a RoCE decode,
# anything neither RoCEv2 nor PFC; and error text in the Info column.
b=$(TS -r "$G" -o ip.check_checksum:TRUE -Y '_ws.malformed || _ws.expert.severity >= warning || (udp.dstport == 4791 && !infiniband) || !(infiniband || macc.opcode == 0x0101)' \
    -T fields -e frame.number | head -3)
i=$(cut -f4- "$TMP/g.fields" | grep -i -E 'malformed|invalid|error!' | head -3)
roce=$(TS -r "$G" -Y 'infiniband.bth.opcode' -T fields -e frame.number | wc -l)
pfc=$(TS -r "$G" -Y 'macc.opcode == 0x0101' -T fields -e frame.number | wc -l)
[ -z "$b$i" ] && [ $((roce + pfc)) = "$total" ] && [ "$pfc" -gt 0 ] \
    && ok "pcapng: all $total frames decode, $roce as RoCEv2 and $pfc as PFC, none malformed or flagged" \
    || fail "pcapng: flagged '$b' '$i'; $roce RoCE + $pfc PFC of $total"
# Interfaces: the per-port files' names, in port order; each captured
# port's frames under its own name.
capinfos "$G" 2>/dev/null | sed -n 's/^ *Name = //p' > "$TMP/g.names"
ls "$TMP/c/pcap" | sed 's/\.pcap$//' | sort > "$TMP/c.names"
[ "$(sort "$TMP/g.names")" = "$(cat "$TMP/c.names")" ] && [ -s "$TMP/c.names" ] \
    && ok "pcapng: $(wc -l < "$TMP/g.names") interfaces named like the ports ($(head -2 "$TMP/g.names" | tr '\n' ' ')...)" \
    || fail "pcapng interface names: $(tr '\n' ' ' < "$TMP/g.names")"
cut -f2 "$TMP/g.fields" | sort -u > "$TMP/g.used"
[ -z "$(comm -23 "$TMP/g.used" "$TMP/c.names")" ] && ok "pcapng: every frame's interface is a captured port" \
    || fail "pcapng: frames on unknown interfaces: $(comm -23 "$TMP/g.used" "$TMP/c.names" | tr '\n' ' ')"
# Both directions: every port of a GPU's cable (its NIC, its leaf port)
# that carried traffic has frames in (0x1) and out (0x2). (A leaf's uplink
# may carry one direction only: ECMP can hash a flow's ACKs onto another
# spine than its data.)
"$PY" -c "import json,sys; [print(p['name']) for p in json.load(open(sys.argv[1]))['ports'] if p['name'].startswith('gpu') or p['peer'].startswith('gpu')]" \
    "$TMP/g/summary.json" | sort > "$TMP/g.gpuside"
cut -f2,3 "$TMP/g.fields" | sort -u | cut -f1 | uniq -c | awk '$1 == 2 {print $2}' | sort > "$TMP/g.both"
one_way=$(comm -12 "$TMP/g.gpuside" "$TMP/g.used" | comm -23 - "$TMP/g.both" | tr '\n' ' ')
nboth=$(comm -12 "$TMP/g.gpuside" "$TMP/g.both" | wc -l)
nin=$(cut -f3 "$TMP/g.fields" | grep -c 0x00000001); nout=$(cut -f3 "$TMP/g.fields" | grep -c 0x00000002)
[ -z "$one_way" ] && [ "$nboth" -gt 10 ] && [ "$nin" -gt 0 ] && [ "$nout" -gt 0 ] \
    && ok "pcapng: both directions on all $nboth GPU-side ports with traffic ($nout frames out, $nin in)" \
    || fail "pcapng: one direction only on: $one_way ($nboth with both; $nout out, $nin in)"
# Frame for frame: outbound = the port's pcap from the pcap run; inbound =
# what the peer sent (where the peer is captured), 500 ns + 20 ps/byte
# (400 Gb/s) later; time order.
"$PY" "$E2E/pcapng_check.py" "$G" "$TMP/c/pcap" 20 500000 > "$TMP/ngc" 2>&1 \
    && ok "pcapng_check: $(tail -1 "$TMP/ngc")" || fail "pcapng_check: $(grep -v '^ok' "$TMP/ngc")"
# Run metadata in the section header: version, scenario, seed, settings.
capinfos "$G" > "$TMP/g.cap" 2>/dev/null
grep -q "Capture comment: *railsim $("$RS" --version | cut -d' ' -f2) run scenario: $E2E/small.json seed: 3 settings: {\"seed\":3," "$TMP/g.cap" \
    && grep -q '"format":"pcapng"' "$TMP/g.cap" && grep -q 'Capture application: *railsim ' "$TMP/g.cap" \
    && ok "pcapng section comment: version, scenario, seed and settings" || fail "pcapng metadata: $(grep -i capture "$TMP/g.cap")"
"$RS" run -q $E2E/small.json $ARGS --capture 'gpu*.nic,leaf*' --set capture.format=pcapng -o "$TMP/g2"
cmp -s "$G" "$TMP/g2/pcap/capture.pcapng" && ok "same seed, byte-identical pcapng (capture.format=pcapng)" \
    || fail "pcapng differs between identical runs"

# Rail-only (HB domains of 4, all-to-all crossing rails through NVLink,
# which is never captured): every port, both formats, frame for frame.
RO="--set topology.kind=rail-only --set topology.hb_size=4 --set traffic.kind=all-to-all --set traffic.bytes=65536"
"$RS" run -q $E2E/small.json $RO --capture '*' --capture-format pcapng -o "$TMP/rg" && \
"$RS" run -q $E2E/small.json $RO --capture '*' -o "$TMP/rc" && \
"$PY" "$E2E/pcapng_check.py" "$TMP/rg/pcap/capture.pcapng" "$TMP/rc/pcap" 20 500000 > "$TMP/rngc" 2>&1 \
    && ok "rail-only pcapng_check: $(tail -1 "$TMP/rngc")" || fail "rail-only pcapng_check: $(grep -v '^ok' "$TMP/rngc")"

# Frames lost on a cable (bit errors: topology.loss_rate) left their sender
# but never arrived: with every port captured, outbound - inbound frames =
# the summary's drops (PFC keeps the queues from dropping).
"$RS" run -q $E2E/small.json --set topology.loss_rate=0.01 --set traffic.bytes=262144 --capture '*' \
    --capture-format pcapng -o "$TMP/gl"
drops=$(json_get "$TMP/gl/summary.json" "d['packets']['dropped']")
TS -r "$TMP/gl/pcap/capture.pcapng" -T fields -e frame.packet_flags_direction > "$TMP/gl.dir"
nout=$(grep -c 0x00000002 "$TMP/gl.dir"); nin=$(grep -c 0x00000001 "$TMP/gl.dir")
[ "$drops" -gt 0 ] && [ $((nout - nin)) = "$drops" ] \
    && ok "pcapng, lossy links: $nout frames out, $nin in, the difference is the $drops drops" \
    || fail "pcapng, lossy links: $nout out, $nin in, $drops drops"

# Bad capture requests.
"$RS" run -q --capture 'nosuchport*' -o "$TMP/bad" 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q 'capture.ports' "$TMP/err" && [ ! -e "$TMP/bad" ] \
    && ok "pattern matching nothing: exit 2, nothing written" || fail "bad pattern (rc=$rc): $(cat "$TMP/err")"
"$RS" run -q --capture 'gpu0.nic' 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q -- '-o DIR' "$TMP/err" && ok "capture without -o: exit 2" || fail "capture without -o (rc=$rc)"
BAD_OUT="$TMP/badfmt"
expect_bad "unknown capture format" 'capture.format' run --capture 'gpu0.nic' --capture-format pcapnx -o "$TMP/badfmt"
expect_bad "--capture-format without a value" 'pcap or pcapng' run --capture 'gpu0.nic' -o "$TMP/badfmt" --capture-format
BAD_OUT=
finish
