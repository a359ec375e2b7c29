#!/usr/bin/env python3
"""Cross-check a railsim pcapng capture against the per-port pcap files of
the same run and against the cable model, reading both formats by hand
(no scapy, no libpcap).

usage: pcapng_check.py CAPTURE.pcapng PCAP_DIR PS_PER_BYTE PROP_PS

For every interface (a captured port, named like its pcap file):
  * its outbound frames are, in order, byte for byte, the records of
    PCAP_DIR/<name>.pcap, with the same time truncated to nanoseconds;
  * if the port at the other end of its cable (from if_description
    "port X, cable to Y") is captured too, its inbound frames are, in
    order, byte for byte, that port's outbound frames, each arriving
    PROP_PS + PS_PER_BYTE * wire bytes after it left (wire bytes = frame
    padded to 60 + FCS 4 + preamble/SFD 8 + gap 12; last bit in vs first
    bit out).
The records of the whole file are in time order. Prints one "ok"/"FAIL"
line per check and a count line; exits 1 on any failure.
"""
import os
import struct
import sys


def read_pcapng(path):
    data = open(path, "rb").read()
    ifaces, recs, off = [], [], 0
    shb_seen = False
    while off < len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        if blen < 12 or blen % 4 or off + blen > len(data):
            raise ValueError("bad block at %d" % off)
        if struct.unpack_from("<I", data, off + blen - 4)[0] != blen:
            raise ValueError("block lengths differ at %d" % off)
        body = data[off + 8:off + blen - 4]
        if btype == 0x0A0D0D0A:
            if struct.unpack_from("<I", body, 0)[0] != 0x1A2B3C4D:
                raise ValueError("not a little-endian section")
            shb_seen = True
        elif btype == 1:
            opts = options(body[8:])
            ifaces.append({"name": opts.get(2, b"").decode(), "descr": opts.get(3, b"").decode(),
                           "tsresol": opts.get(9, b"\x06")[0]})
        elif btype == 6:
            ifid, hi, lo, cap, orig = struct.unpack_from("<IIIII", body, 0)
            pkt = body[20:20 + cap]
            opts = options(body[20 + cap + (-cap % 4):])
            flags = struct.unpack("<I", opts[2])[0] if 2 in opts else 0
            recs.append((ifid, hi << 32 | lo, flags & 3, orig, pkt))
        off += blen
    if not shb_seen:
        raise ValueError("no section header")
    return ifaces, recs


def options(b):
    out, off = {}, 0
    while off + 4 <= len(b):
        code, n = struct.unpack_from("<HH", b, off)
        if code == 0:
            break
        out[code] = b[off + 4:off + 4 + n]
        off += 4 + n + (-n % 4)
    return out


def read_pcap(path):
    data = open(path, "rb").read()
    if struct.unpack_from("<I", data, 0)[0] != 0xA1B23C4D:
        raise ValueError("%s: not a little-endian nanosecond pcap" % path)
    recs, off = [], 24
    while off < len(data):
        sec, nsec, cap, orig = struct.unpack_from("<IIII", data, off)
        recs.append((sec * 10**9 + nsec, orig, data[off + 16:off + 16 + cap]))
        off += 16 + cap
    return recs


def main():
    path, pcap_dir, ps_per_byte, prop = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    ifaces, recs = read_pcapng(path)
    fails = 0

    def check(cond, msg):
        nonlocal fails
        print(("ok   " if cond else "FAIL ") + msg)
        fails += 0 if cond else 1

    check(all(i["tsresol"] == 12 for i in ifaces), "every interface has picosecond timestamps")
    times = [r[1] for r in recs]
    check(times == sorted(times), "%d records in time order" % len(recs))
    by_name = {i["name"]: n for n, i in enumerate(ifaces)}
    out = {n: [r for r in recs if r[0] == n and r[2] == 2] for n in range(len(ifaces))}
    inn = {n: [r for r in recs if r[0] == n and r[2] == 1] for n in range(len(ifaces))}
    check(all(r[2] in (1, 2) for r in recs), "every record has a direction")

    bad_pcap, compared = [], 0
    for n, i in enumerate(ifaces):
        f = os.path.join(pcap_dir, i["name"] + ".pcap")
        want = read_pcap(f) if os.path.exists(f) else None
        got = [(r[1] // 1000, r[3], r[4]) for r in out[n]]
        if want is None:
            if got:
                bad_pcap.append(i["name"] + " (no pcap file)")
            continue
        compared += 1
        if got != want:
            bad_pcap.append("%s (%d vs %d frames)" % (i["name"], len(got), len(want)))
    check(not bad_pcap and compared == len(ifaces),
          "outbound frames of %d interfaces equal their per-port pcap files%s"
          % (compared, ": " + ", ".join(bad_pcap[:5]) if bad_pcap else ""))

    bad_link, cables, frames = [], 0, 0
    for n, i in enumerate(ifaces):
        peer = i["descr"].rsplit("cable to ", 1)[-1]
        if peer not in by_name:
            continue
        cables += 1
        sent, got = out[by_name[peer]], inn[n]
        if [r[4] for r in sent] != [r[4] for r in got]:
            bad_link.append("%s <- %s: %d sent, %d in" % (i["name"], peer, len(sent), len(got)))
            continue
        for s, g in zip(sent, got):
            wire = max(len(s[4]), 60) + 4 + 8 + 12
            if g[1] - s[1] != prop + ps_per_byte * wire:
                bad_link.append("%s <- %s: in %d ps after out, expected %d"
                                % (i["name"], peer, g[1] - s[1], prop + ps_per_byte * wire))
                break
        frames += len(got)
    check(not bad_link and cables > 0 and frames > 0,
          "inbound frames on %d interfaces are their peers' outbound frames (%d), each %d ps + %d ps/byte later%s"
          % (cables, frames, prop, ps_per_byte, ": " + "; ".join(bad_link[:5]) if bad_link else ""))
    print("%d interfaces, %d outbound, %d inbound" % (len(ifaces), sum(map(len, out.values())),
                                                      sum(map(len, inn.values()))))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
