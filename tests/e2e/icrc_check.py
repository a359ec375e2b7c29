#!/usr/bin/python3
"""icrc_check.py - recompute the ICRC of every RoCEv2 frame in a pcap file.

Usage: icrc_check.py FILE.pcap

For each frame carrying UDP to port 4791 the stored ICRC (the last four
bytes of the IP packet) is compared with two independent computations:
  1. scapy's own (scapy.contrib.roce.BTH rebuilds the frame with icrc=None,
     which runs BTH.compute_icrc);
  2. a direct one here: zlib.crc32 over 8 bytes of 0xFF, the IPv4 header
     with TOS, TTL and checksum set to all ones, the UDP header with the
     checksum set to all ones, the BTH with its F/B/Resv6 octet set to all
     ones, then the rest of the packet up to the ICRC (IBA Annex A17),
     stored least significant byte first.
Prints one line per RoCE frame, then "N passed, M failed". Exit status 0 if
all matched and at least one RoCE frame was found, 1 otherwise, 2 on usage.
"""
import struct
import sys
import zlib

from scapy.all import rdpcap, Ether, IP, UDP  # noqa: F401 (binds layers)
from scapy.contrib.roce import BTH


def direct_icrc(ip_bytes):
    """ICRC of an IPv4/UDP/BTH packet (without its last 4 bytes), LSB first."""
    hdr = bytearray(ip_bytes[:20 + 8 + 12])
    hdr[1] = 0xFF                 # IPv4 TOS (DSCP + ECN)
    hdr[8] = 0xFF                 # TTL
    hdr[10:12] = b"\xff\xff"      # header checksum
    hdr[26:28] = b"\xff\xff"      # UDP checksum
    hdr[32] = 0xFF                # BTH FECN/BECN/Resv6
    rest = ip_bytes[40:len(ip_bytes) - 4]
    crc = zlib.crc32(b"\xff" * 8 + bytes(hdr) + rest) & 0xFFFFFFFF
    return struct.pack("<I", crc)


def main():
    if len(sys.argv) != 2:
        print("usage: icrc_check.py FILE.pcap", file=sys.stderr)
        return 2
    passed = failed = 0
    for i, pkt in enumerate(rdpcap(sys.argv[1]), 1):
        if not (pkt.haslayer(UDP) and pkt[UDP].dport == 4791):
            continue
        ip_bytes = bytes(pkt[IP])[:pkt[IP].len]
        stored = ip_bytes[-4:]
        mine = direct_icrc(ip_bytes)
        # Rebuild with scapy: drop the dissected ICRC so post_build computes it.
        q = Ether(bytes(pkt))
        q[BTH].icrc = None
        sc_ip = bytes(q[IP])[:q[IP].len]
        theirs = sc_ip[-4:]
        if stored == mine == theirs and len(sc_ip) == len(ip_bytes):
            passed += 1
            print("ok   frame %d opcode 0x%02x icrc %s" % (i, pkt[BTH].opcode, stored.hex()))
        else:
            failed += 1
            print("FAIL frame %d opcode 0x%02x stored %s scapy %s direct %s"
                  % (i, pkt[BTH].opcode, stored.hex(), theirs.hex(), mine.hex()))
    if passed + failed == 0:
        print("FAIL no RoCEv2 frames found")
        failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
