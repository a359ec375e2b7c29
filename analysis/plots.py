#!/usr/bin/python3
"""plots.py - PNG plots of one railsim run directory (docs/analysis.md).

Usage: /usr/bin/python3 analysis/plots.py DIR   (what `railsim plot DIR` runs)

Reads DIR/summary.json and DIR/timeline.msgpack (either may be missing, not
both) and writes into DIR/plots/:

  breakdown.png  per-rank compute, overlapped and exposed communication and
                 idle time (stacked bars), and op time by dimension and op
                 kind; without op records, the collective's time per
                 iteration from summary.json
  link_util.png  utilisation over time of the busiest sampled links (largest
                 cumulative tx_bytes); skipped without sample records
  fct_cdf.png    CDF of flow completion times and of collective durations by
                 op; without flow records, the summary's FCT percentiles

Output is deterministic: the Agg backend, fixed size and DPI, no software
or date metadata in the PNGs, every ordering explicit. Files are written as
NAME.png.tmp and renamed. Exit status: 0 success, 1 matplotlib/msgpack
missing or a write error, 2 bad input (one line on stderr naming the file).

Debian's python3-matplotlib and python3-msgpack run under /usr/bin/python3;
the python3 first on PATH may be another interpreter without them.
"""
import json
import os
import sys

PLOT_DPI = 100
LINKS = 8          # busiest links drawn in link_util.png
MAX_BARS = 64      # ranks drawn in breakdown.png (evenly chosen above this)


def die(code, msg):
    sys.stderr.write("railsim plot: %s\n" % msg)
    sys.exit(code)


try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import msgpack
except ImportError as e:  # pragma: no cover - environment
    die(1, "%s lacks %s; install python3-matplotlib and python3-msgpack "
           "(scripts/install-deps)" % (sys.executable, e.name or e))

matplotlib.rcParams.update({
    "figure.dpi": PLOT_DPI,
    "savefig.dpi": PLOT_DPI,
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "svg.hashsalt": "railsim",
})


# ---- reading ---------------------------------------------------------------

def read_summary(path):
    if not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        die(2, "%s: cannot read the run summary: %s" % (path, e))
    if not isinstance(s, dict) or s.get("format") != "railsim-summary":
        die(2, '%s: not a railsim summary; expected "format": "railsim-summary"' % path)
    return s


class Timeline:
    """What the plots need from a timeline, read in one streaming pass."""

    def __init__(self):
        self.names = {}          # (space, id) -> name
        self.ops = {}            # rank -> [(start, end, is_compute)]
        self.op_dim = {}         # (dim, op) -> total ps
        self.colls = {}          # op -> [duration ps]
        self.fct = []            # flow completion times, ps
        self.samples = {}        # port -> [(time_ps, util)]
        self.tx = {}             # port -> largest tx_bytes


def dimension(name):
    """The communicator name up to its first separator or digit (tlstats.h)."""
    if not name:
        return "comm"
    n = 0
    while n < len(name) and name[n] not in "[:./# -_0123456789":
        n += 1
    return name[:n] if n else name


def read_timeline(path):
    if not os.path.exists(path):
        return None
    t = Timeline()
    index = 0
    try:
        with open(path, "rb") as f:
            u = msgpack.Unpacker(f, raw=False, strict_map_key=False)
            hdr = next(u)
            if not isinstance(hdr, dict) or hdr.get("format") != "railsim-timeline":
                die(2, "%s: not a railsim timeline" % path)
            if hdr.get("version") != 1:
                die(2, "%s: timeline version %r; expected 1" % (path, hdr.get("version")))
            ended = False
            for rec in u:
                k = rec[0]
                if k == 1:
                    t.names[(rec[1], rec[2])] = rec[3]
                elif k == 2:
                    rank, start, end, op, comm = rec[1], rec[2], rec[3], rec[4], rec[6]
                    t.ops.setdefault(rank, []).append((start, end, op == "compute"))
                    dim = "-" if comm is None else dimension(t.names.get((2, comm), ""))
                    t.op_dim[(dim, op)] = t.op_dim.get((dim, op), 0) + end - start
                elif k == 3:
                    t.colls.setdefault(rec[2], []).append(rec[8] - rec[7])
                elif k == 4:
                    t.fct.append(rec[5] - rec[4])
                elif k == 5:
                    port = rec[2]
                    t.samples.setdefault(port, []).append((rec[1], rec[5]))
                    if rec[3] > t.tx.get(port, -1):
                        t.tx[port] = rec[3]
                elif k == 10:
                    ended = True
                index += 1
            if not ended:
                die(2, "%s: truncated timeline (no end record after %d records)" % (path, index))
    except (OSError, ValueError, TypeError, IndexError, StopIteration,
            msgpack.exceptions.ExtraData, msgpack.exceptions.OutOfData) as e:
        die(2, "%s: malformed timeline at record %d: %s" % (path, index, e or type(e).__name__))
    return t


# ---- computing -------------------------------------------------------------

def merged(spans):
    out = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def rank_breakdown(spans):
    """(span, compute, overlapped comm, exposed comm) of one rank, ps."""
    comp = merged([(s, e) for s, e, c in spans if c])
    comm = merged([(s, e) for s, e, c in spans if not c])
    overlap, i, j = 0, 0, 0
    while i < len(comp) and j < len(comm):
        lo, hi = max(comp[i][0], comm[j][0]), min(comp[i][1], comm[j][1])
        if hi > lo:
            overlap += hi - lo
        if comp[i][1] < comm[j][1]:
            i += 1
        else:
            j += 1
    c = sum(e - s for s, e in comp)
    m = sum(e - s for s, e in comm)
    span = max(e for _, e, _ in spans) - min(s for s, _, _ in spans)
    return span, c, overlap, m - overlap


def unit_of(ps_max):
    """(divisor, label) to show picoseconds in a readable unit."""
    for div, label in ((1e12, "s"), (1e9, "ms"), (1e6, "us")):
        if ps_max >= div:
            return div, label
    return 1e3, "ns"


# ---- plots -----------------------------------------------------------------

def save(fig, outdir, name, wrote):
    path = os.path.join(outdir, name)
    tmp = path + ".tmp"
    try:
        fig.savefig(tmp, format="png", dpi=PLOT_DPI, metadata={"Software": None})
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        die(1, "%s: cannot write plot: %s" % (path, e))
    finally:
        plt.close(fig)
    wrote.append(path)


def plot_breakdown(summary, tl, outdir, wrote, skipped):
    if tl and tl.ops:
        ranks = sorted(tl.ops)
        if len(ranks) > MAX_BARS:
            step = len(ranks) / MAX_BARS
            ranks = [ranks[int(i * step)] for i in range(MAX_BARS)]
        rows = [rank_breakdown(tl.ops[r]) for r in ranks]
        div, unit = unit_of(max(r[0] for r in rows) or 1)
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 2]})
        x = list(range(len(ranks)))
        comp_only = [(c - o) / div for _, c, o, _ in rows]
        over = [o / div for _, _, o, _ in rows]
        exp = [e / div for _, _, _, e in rows]
        idle = [max(0, s - c - e) / div for s, c, _, e in rows]
        ax.bar(x, comp_only, color="#4c72b0", label="compute only")
        b = comp_only
        ax.bar(x, over, bottom=b, color="#8fb0d9", label="compute + overlapped comm")
        b = [p + q for p, q in zip(b, over)]
        ax.bar(x, exp, bottom=b, color="#dd8452", label="exposed comm")
        b = [p + q for p, q in zip(b, exp)]
        ax.bar(x, idle, bottom=b, color="#cccccc", label="idle")
        ax.set_xticks(x)
        ax.set_xticklabels([str(r) for r in ranks], rotation=90 if len(ranks) > 16 else 0, fontsize=7)
        ax.set_xlabel("rank")
        ax.set_ylabel("time (%s)" % unit)
        ax.set_title("per-rank breakdown of the timeline's span")
        ax.legend(loc="lower right", fontsize=7)
        items = sorted(tl.op_dim.items(), key=lambda kv: (-kv[1], kv[0]))[:16]
        labels = ["%s %s" % (d, o) if d != "-" else o for (d, o), _ in items]
        div2, unit2 = unit_of(max(v for _, v in items) or 1)
        ax2.barh(range(len(items)), [v / div2 for _, v in items],
                 color=["#4c72b0" if o == "compute" else "#dd8452" for (_, o), _ in items])
        ax2.set_yticks(range(len(items)))
        ax2.set_yticklabels(labels)
        ax2.invert_yaxis()
        ax2.set_xlabel("time summed over ranks (%s)" % unit2)
        ax2.set_title("op time by dimension and kind")
        fig.tight_layout()
        save(fig, outdir, "breakdown.png", wrote)
        return
    co = summary.get("collective") if summary else None
    times = co.get("times_ps") if isinstance(co, dict) else None
    if times:
        div, unit = unit_of(max(times) or 1)
        fig, ax = plt.subplots(figsize=(8, 4.5))
        ax.bar(range(1, len(times) + 1), [t / div for t in times], color="#dd8452")
        ax.set_xlabel("iteration")
        ax.set_ylabel("time (%s)" % unit)
        ax.set_title("%s (%s) on %s ranks, %s bytes: time per iteration" % (
            co.get("op"), co.get("algo"), co.get("ranks"), co.get("bytes")))
        fig.tight_layout()
        save(fig, outdir, "breakdown.png", wrote)
        return
    skipped.append("breakdown.png: no op records in the timeline and no collective in summary.json")


def plot_link_util(tl, outdir, wrote, skipped):
    if not tl or not tl.samples:
        skipped.append("link_util.png: no sample records in the timeline")
        return
    ports = sorted(tl.tx, key=lambda p: (-tl.tx[p], p))[:LINKS]
    tmax = max(t for p in ports for t, _ in tl.samples[p])
    div, unit = unit_of(tmax or 1)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for p in ports:
        pts = sorted(tl.samples[p])
        ax.step([t / div for t, _ in pts], [100.0 * u for _, u in pts], where="pre",
                label=tl.names.get((0, p), "port %d" % p), linewidth=1.2)
    ax.set_ylim(0, 105)
    ax.set_xlabel("simulated time (%s)" % unit)
    ax.set_ylabel("utilisation since the previous sample (%)")
    ax.set_title("busiest links (largest tx_bytes), %d of %d sampled ports" % (len(ports), len(tl.samples)))
    ax.legend(loc="upper left", fontsize=7, ncol=2)
    fig.tight_layout()
    save(fig, outdir, "link_util.png", wrote)


def cdf(ax, values, div, label):
    v = sorted(values)
    n = len(v)
    ax.step([x / div for x in v], [(i + 1) / n for i in range(n)], where="post", label="%s (%d)" % (label, n))


def plot_fct(summary, tl, outdir, wrote, skipped):
    have_flows = bool(tl and tl.fct)
    have_colls = bool(tl and tl.colls)
    fct = summary.get("flows", {}).get("fct_ps") if summary else None
    have_pct = isinstance(fct, dict) and isinstance(fct.get("p50"), int)
    if not (have_flows or have_colls or have_pct):
        skipped.append("fct_cdf.png: no flow or coll records and no FCT in summary.json")
        return
    fig, axes = plt.subplots(1, 2 if have_colls else 1, figsize=(12 if have_colls else 7, 4.5), squeeze=False)
    ax = axes[0][0]
    if have_flows:
        div, unit = unit_of(max(tl.fct) or 1)
        cdf(ax, tl.fct, div, "flows")
        ax.set_title("flow completion time CDF")
    elif have_pct:
        keys = ("min", "p50", "p99", "max")
        vals = [fct[k] for k in keys]
        div, unit = unit_of(max(vals) or 1)
        ax.plot([v / div for v in vals], [0.0, 0.5, 0.99, 1.0], marker="o", label="summary.json percentiles")
        ax.set_title("flow completion time (percentiles from summary.json)")
    else:
        div, unit = 1e6, "us"
        ax.set_title("no flow records")
    ax.set_xlabel("FCT (%s)" % unit)
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right", fontsize=8)
    if have_colls:
        ax = axes[0][1]
        div, unit = unit_of(max(max(v) for v in tl.colls.values()) or 1)
        for op in sorted(tl.colls):
            cdf(ax, tl.colls[op], div, op)
        ax.set_title("collective duration CDF by op")
        ax.set_xlabel("duration (%s)" % unit)
        ax.set_ylabel("fraction of collectives")
        ax.set_ylim(0, 1.02)
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    save(fig, outdir, "fct_cdf.png", wrote)


def main(argv):
    quiet = len(argv) == 3 and argv[1] == "-q"
    if len(argv) != 2 and not quiet:
        die(2, "usage: plots.py [-q] DIR (a run directory written by railsim run -o DIR)")
    d = argv[-1]
    if not os.path.isdir(d):
        die(2, "%s: not a directory; expected a run directory written by railsim run -o DIR" % d)
    spath = os.path.join(d, "summary.json")
    tpath = os.path.join(d, "timeline.msgpack")
    summary = read_summary(spath)
    tl = read_timeline(tpath)
    if summary is None and tl is None:
        die(2, "%s: neither summary.json nor timeline.msgpack found; expected a run directory" % d)
    outdir = os.path.join(d, "plots")
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        die(1, "%s: cannot create the plots directory: %s" % (outdir, e))
    wrote, skipped = [], []
    plot_breakdown(summary, tl, outdir, wrote, skipped)
    plot_link_util(tl, outdir, wrote, skipped)
    plot_fct(summary, tl, outdir, wrote, skipped)
    for p in wrote if not quiet else []:
        print("railsim plot: wrote %s" % p)
    for s in skipped if not quiet else []:
        print("railsim plot: skipped %s" % s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
