#!/bin/sh
# pcap writer end to end: pcap_sample writes one frame of every kind; tshark
# must dissect them all without a malformed or warning flag (with IPv4
# checksum verification on) and decode the RoCE and PFC fields we put in;
# icrc_check.py (scapy) recomputes every ICRC. Two corrupted copies prove the
# checks can fail. The same frames as pcapng (two interfaces, both
# directions) must read as cleanly, with the interface names and directions
# right. Needs tshark and python3-scapy (scripts/install-deps).
# Usage: pcap_check.sh PATH/TO/pcap_sample E2E_DIR
SAMPLE=$1; E2E=$2
. "$E2E/lib.sh"

for tool in tshark "$PY"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "FAIL $tool not installed (scripts/install-deps)"; exit 1; }
done
"$PY" -c 'import scapy.contrib.roce' 2>/dev/null || { echo "FAIL python3-scapy not installed (scripts/install-deps)"; exit 1; }

F="$TMP/sample.pcap"
# tshark refuses to run as root unless told it is fine; drop its banner.
TS() { tshark -n "$@" 2>"$TMP/tshark.err"; }

if "$SAMPLE" "$F" && [ -s "$F" ]; then ok "pcap_sample writes $F"; else fail "pcap_sample"; finish; exit; fi
[ -e "$F.tmp" ] && fail "temporary file left behind" || ok "no temporary file"

n=$(TS -r "$F" -T fields -e frame.number | wc -l)
[ "$n" = 10 ] && ok "tshark reads 10 frames" || fail "tshark reads $n frames, expected 10: $(cat "$TMP/tshark.err")"

bad=$(TS -r "$F" -o ip.check_checksum:TRUE -Y '_ws.malformed || _ws.expert.severity >= warning')
[ -z "$bad" ] && ok "no malformed or warning-level frames" || fail "tshark flags frames: $bad"

# The InfiniBand dissector reports some errors only as text in the Info
# column ("Invalid Packet Length from LRH! [Malformed Packet]"), with no
# expert item for the filter above to match.
bad=$(TS -r "$F" -T fields -e frame.number -e _ws.col.Info | grep -i -E 'malformed|invalid|error!')
[ -z "$bad" ] && ok "no error text in the Info column" || fail "Info column reports errors: $bad"

# opcode, psn, destqp, padcnt, ackreq, m of every RoCE frame (CNP = 129).
got=$(TS -r "$F" -Y infiniband -T fields -E separator=, -e infiniband.bth.opcode -e infiniband.bth.psn \
      -e infiniband.bth.destqp -e infiniband.bth.padcnt -e infiniband.bth.a -e infiniband.bth.m | tr '\n' ' ')
want="6,100,0x000123,0,0,1 7,101,0x000123,0,0,1 8,102,0x000123,0,1,1 10,103,0x000123,3,1,1 7,104,0x000123,0,0,1 17,102,0x000456,0,0,1 17,104,0x000456,0,0,1 129,0,0x000456,0,0,0 17,104,0x000456,0,0,1 "
[ "$got" = "$want" ] && ok "BTH fields decode" || fail "BTH fields: got '$got' want '$want'"

got=$(TS -r "$F" -Y infiniband.reth -T fields -E separator=, -e infiniband.reth.va -e infiniband.reth.r_key \
      -e infiniband.reth.dmalen | tr '\n' ' ')
[ "$got" = "0x00007f0012340000,0x0000abcd,3072 0x00007f0012340000,0x0000abcd,1001 " ] \
    && ok "RETH on WRITE First and Only" || fail "RETH: $got"

got=$(TS -r "$F" -Y infiniband.aeth -T fields -E separator=, -e infiniband.aeth.syndrome -e infiniband.aeth.msn | tr '\n' ' ')
[ "$got" = "31,1 96,1 96,0 " ] && ok "AETH on ACK, NAK and selective NAK" || fail "AETH: $got"

# The SACK extension: undissected by Wireshark (no malformed flag, checked
# above), decoded by railsim's post-dissector.
got=$(TS -X lua_script:"$E2E/../../analysis/wireshark/railsim_sack.lua" -r "$F" -Y railsim_sack -T fields -E separator=, \
      -e frame.number -e infiniband.bth.psn -e railsim_sack.psn | tr '\n' ' ')
[ "$got" = "10,104,107 " ] && ok "SACK extension decodes (railsim_sack.lua)" || fail "SACK extension: '$got'"

got=$(TS -r "$F" -Y 'frame.number == 5' -T fields -E separator=, -e ip.dsfield.dscp -e ip.dsfield.ecn -e ip.ttl)
[ "$got" = "24,3,64" ] && ok "CE-marked frame: DSCP CS3, ECN 3" || fail "CE frame: $got"

got=$(TS -r "$F" -o ip.check_checksum:TRUE -Y 'udp.dstport == 4791' -T fields -e ip.checksum.status | sort -u | tr '\n' ' ')
# With verification on, Wireshark's checksum status is 1 (good), 0 (bad);
# 2 would mean unverified.
[ "$got" = "1 " ] && ok "IPv4 header checksums verified good" || fail "IPv4 checksum status: $got"

got=$(TS -r "$F" -Y 'macc.opcode == 0x0101' -T fields -E separator=, -e eth.dst -e eth.type -e frame.len \
      -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 -e macc.cbfc.pause_time.c4)
[ "$got" = "01:80:c2:00:00:01,0x8808,60,0x0018,65535,0" ] && ok "PFC frame decodes" || fail "PFC: '$got'"

got=$(TS -r "$F" -T fields -e frame.time_epoch | head -2 | tr '\n' ' ')
[ "$got" = "0.000001500 0.000002500 " ] && ok "nanosecond timestamps, truncated" || fail "timestamps: $got"

if "$PY" "$E2E/icrc_check.py" "$F" >"$TMP/icrc.out"; then
    ok "ICRC of every RoCE frame matches scapy ($(tail -1 "$TMP/icrc.out"))"
else
    fail "ICRC mismatch:"; cat "$TMP/icrc.out"
fi

# Negative controls: one payload byte flipped must fail the ICRC check; a
# flipped IPv4 checksum byte must be flagged by the tshark filter above.
# Frame 1 starts at 24 (file header) + 16 (record header) = 40; its IP
# checksum is at 40 + 24, its payload at 40 + 70.
flip() { "$PY" -c 'import sys; b=bytearray(open(sys.argv[1],"rb").read()); b[int(sys.argv[3])]^=1; open(sys.argv[2],"wb").write(b)' "$F" "$1" "$2"; }
flip "$TMP/bad_icrc.pcap" 200
"$PY" "$E2E/icrc_check.py" "$TMP/bad_icrc.pcap" >/dev/null && fail "corrupted payload not caught" || ok "corrupted payload caught by icrc_check"
flip "$TMP/bad_ip.pcap" 64
bad=$(TS -r "$TMP/bad_ip.pcap" -o ip.check_checksum:TRUE -Y '_ws.malformed || _ws.expert.severity >= warning')
[ -n "$bad" ] && ok "corrupted IPv4 checksum flagged by tshark" || fail "corrupted IPv4 checksum not flagged"
got=$(TS -r "$TMP/bad_ip.pcap" -o ip.check_checksum:TRUE -Y 'frame.number == 1' -T fields -e ip.checksum.status)
[ "$got" = 0 ] && ok "corrupted IPv4 checksum verified bad" || fail "corrupted frame's checksum status: '$got'"

# ... and a frame cut short (as a snap length does) must show in the Info
# column, so the check above can fail.
if command -v editcap >/dev/null 2>&1; then
    editcap -s 128 "$F" "$TMP/short.pcap" 2>/dev/null
    TS -r "$TMP/short.pcap" -T fields -e _ws.col.Info | grep -q -i malformed \
        && ok "truncated frames flagged in the Info column" || fail "truncated frames not flagged"
fi

# pcapng: the same frames on two interfaces, both directions of the cable.
G="$TMP/sample.pcapng"
if "$SAMPLE" "$G" && [ -s "$G" ]; then ok "pcap_sample writes $G"; else fail "pcap_sample pcapng"; finish; exit; fi
[ -e "$G.tmp" ] && fail "temporary pcapng file left behind" || ok "no temporary pcapng file"
n=$(TS -r "$G" -T fields -e frame.number | wc -l)
warn=$(grep -v -i 'running as user' "$TMP/tshark.err")
[ "$n" = 20 ] && [ -z "$warn" ] && ok "tshark reads 20 pcapng frames with nothing on stderr" \
    || fail "tshark reads $n pcapng frames, expected 20; stderr: $warn"
bad=$(TS -r "$G" -o ip.check_checksum:TRUE -Y '_ws.malformed || _ws.expert.severity >= warning')
bad=$bad$(TS -r "$G" -T fields -e frame.number -e _ws.col.Info | grep -i -E 'malformed|invalid|error!')
[ -z "$bad" ] && ok "pcapng: no malformed, warning-level or error-text frames" || fail "pcapng: tshark flags $bad"
roce=$(TS -r "$G" -Y 'infiniband && !_ws.malformed' -T fields -e frame.number | wc -l)
[ "$roce" = 18 ] && ok "pcapng: all 18 RoCE frames decode as InfiniBand (2 are PFC)" || fail "pcapng: $roce RoCE frames decode"
# Interface, direction (1 inbound, 2 outbound) and reception type (1
# unicast, 2 multicast) of each frame: data leaves gpu1.nic and enters
# leaf0.p0; ACK, NAK, CNP and the PFC pause go the other way.
got=$(TS -r "$G" -T fields -E separator=, -e frame.interface_name -e frame.packet_flags_direction \
      -e frame.packet_flags_reception_type | sort | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')
want="4xgpu1.nic,0x00000001,1 1xgpu1.nic,0x00000001,2 5xgpu1.nic,0x00000002,1 5xleaf0.p0,0x00000001,1 4xleaf0.p0,0x00000002,1 1xleaf0.p0,0x00000002,2 "
[ "$got" = "$want" ] && ok "pcapng: interface names, directions and reception types" || fail "pcapng interfaces: got '$got' want '$want'"
got=$(TS -r "$G" -Y 'frame.interface_name == "leaf0.p0" && infiniband.bth.opcode == 6' -T fields \
      -e frame.interface_id -e frame.packet_flags_direction -e frame.time_epoch)
[ "$got" = "1	0x00000001	0.000001750" ] && ok "pcapng: WRITE First enters leaf0.p0 250 ns after it left gpu1.nic" \
    || fail "pcapng: leaf0.p0 WRITE First: '$got'"
if command -v capinfos >/dev/null 2>&1; then
    capinfos "$G" > "$TMP/capinfos" 2>&1
    grep -q 'Number of interfaces in file: 2' "$TMP/capinfos" && grep -q 'Name = gpu1.nic' "$TMP/capinfos" \
        && grep -q 'Name = leaf0.p0' "$TMP/capinfos" && grep -q 'Capture comment: *railsim pcap_sample' "$TMP/capinfos" \
        && grep -q 'Capture application: *railsim ' "$TMP/capinfos" && grep -q 'Time ticks per second = 1000000000000' "$TMP/capinfos" \
        && grep -q 'Strict time order: *True' "$TMP/capinfos" \
        && ok "capinfos: 2 named interfaces, picosecond ticks, comment, application, time order" \
        || fail "capinfos: $(cat "$TMP/capinfos")"
fi
if "$PY" "$E2E/icrc_check.py" "$G" >"$TMP/icrc.out"; then
    ok "pcapng: ICRC of every RoCE frame matches scapy ($(tail -1 "$TMP/icrc.out"))"
else
    fail "pcapng ICRC mismatch:"; cat "$TMP/icrc.out"
fi

finish
