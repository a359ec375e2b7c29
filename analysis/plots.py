#!/usr/bin/python3
"""plots.py - PNG plots of a railsim run or compare directory (docs/analysis.md).

Usage: /usr/bin/python3 analysis/plots.py [-q] DIR   (what `railsim plot DIR` runs)

A run directory (railsim run -o DIR): reads DIR/summary.json and
DIR/timeline.msgpack (either may be missing, not both) and writes into
DIR/plots/:

  breakdown.png  per-rank compute, overlapped and exposed communication and
                 idle time (stacked bars), and op time by dimension and op
                 kind; without op records, the collective's time per
                 iteration from summary.json
  link_util.png  heatmap of the utilisation of the most utilised sampled
                 links over simulated time, faults marked; skipped without
                 sample records
  fct_cdf.png    CDF of flow completion times and of collective durations by
                 op, on a log time axis; without flow records, the
                 summary's FCT percentiles
  jobs.png       only with a scenario's jobs array (docs/shared-clusters.md):
                 each job's time beside the others and alone on the same
                 GPUs, and its slowdown
  job_links.png  only with two jobs or more: the Ethernet links the jobs
                 shared (then the busiest), each link's utilisation over the
                 run split by job (summary job_links)

A compare directory (railsim compare -o DIR, with DIR/compare.json): writes
DIR/plots/compare.png, rail-only next to the fat tree for every case
(iteration time split into compute and exposed communication by
parallelism dimension, exposed communication, network cost and power),
then the three plots above in each side's run directory (a side its
faults stopped is skipped).

Everything is read with the railsim package next to this script
(python/railsim, docs/analysis.md), found relative to this file's real
location in the source tree and where cmake --install puts both.

Output is deterministic: the Agg backend, fixed size and DPI, no software
or date metadata in the PNGs, every ordering explicit. Files are written as
NAME.png.tmp and renamed. Exit status: 0 success, 1 matplotlib/msgpack/the
railsim package missing or a write error, 2 bad input (one line on stderr
naming the file).

Debian's python3-matplotlib and python3-msgpack run under /usr/bin/python3;
the python3 first on PATH may be another interpreter without them.
"""
import math
import os
import sys

PLOT_DPI = 100
HEAT_LINKS = 32    # most utilised links (rows) in link_util.png
HEAT_HB_LINKS = 8  # of which HB-domain ports at most, when there are Ethernet ones
HEAT_COLUMNS = 400  # time bins (columns) at most in link_util.png
MAX_BARS = 64      # ranks drawn in breakdown.png (evenly chosen above this)
DIMS = ("tp", "pp", "dp", "cp", "ep", "other")  # summary iteration.comm_by_dim_ps
# The two sides of a comparison: rail-only (or a dragonfly, railsim compare
# --against dragonfly; set from compare.json) against the fat tree.
SIDES = (("rail_only", "rail-only"), ("fat_tree", "fat tree"))
SHORT = {"rail_only": "RO", "dragonfly": "DF", "fat_tree": "FT"}
RUN_DIRS = {"rail_only": "rail-only", "dragonfly": "dragonfly", "fat_tree": "fat-tree"}


def die(code, msg):
    sys.stderr.write("railsim plot: %s\n" % msg)
    sys.exit(code)


HERE = os.path.dirname(os.path.realpath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree or the installed share/railsim
sys.path.insert(0, os.path.join(HERE, "python"))
try:
    import railsim
except ImportError as e:  # pragma: no cover - installation
    die(1, "cannot import the railsim package from %s: %s" % (os.path.join(HERE, "python"), e))

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator
    import msgpack  # noqa: F401 - railsim.read_timeline needs it; fail here, clearly
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

COLOR_COMPUTE = "#4c72b0"
COLOR_OVERLAP = "#8fb0d9"
COLOR_EXPOSED = "#dd8452"
COLOR_IDLE = "#cccccc"
COLOR_DIM = {"tp": "#f4a261", "pp": "#a0522d", "dp": "#c44e52", "cp": "#8172b3",
             "ep": "#e9c46a", "other": "#bbbbbb"}
COLOR_SIDE = {"rail_only": "#2a9d8f", "dragonfly": "#2a9d8f", "fat_tree": "#264653"}


# ---- reading ---------------------------------------------------------------

def load_summary(path):
    if not os.path.exists(path):
        return None
    try:
        return railsim.read_summary(path)
    except (OSError, ValueError) as e:
        die(2, read_error(path, e, "run summary"))


class Timeline:
    """What the plots need from a timeline, read in one streaming pass."""

    def __init__(self):
        self.names = {}          # (space, id) -> name
        self.ops = {}            # rank -> [(start, end, is_compute)]
        self.op_dim = {}         # (dim, op) -> total ps
        self.colls = {}          # op -> [duration ps]
        self.fct = []            # flow completion times, ps
        self.samples = {}        # port -> [(time_ps, util)]
        self.busy = {}           # port -> sum of its samples' util
        self.faults = []         # (time_ps, kind, target) of applied fault entries


WANTED = {"name", "op", "coll", "flow", "sample", "fault"}
# fault records that are not a fault entry being applied (timeline-format.md)
NOT_FAULTS = {"routes", "recovered"}


def load_timeline(path):
    if not os.path.exists(path):
        return None
    t = Timeline()
    try:
        for r in railsim.read_timeline(path, WANTED):
            k = r["record"]
            if k == "name":
                t.names[(r["space"], r["id"])] = r["name"]
            elif k == "op":
                op, comm = r["op"], r["comm"]
                t.ops.setdefault(r["rank"], []).append((r["start_ps"], r["end_ps"], op == "compute"))
                dim = "-" if comm is None else railsim.dimension(t.names.get((2, comm), ""))
                t.op_dim[(dim, op)] = t.op_dim.get((dim, op), 0) + r["end_ps"] - r["start_ps"]
            elif k == "coll":
                t.colls.setdefault(r["op"], []).append(r["end_ps"] - r["start_ps"])
            elif k == "flow":
                t.fct.append(r["end_ps"] - r["start_ps"])
            elif k == "sample":
                port = r["port"]
                t.samples.setdefault(port, []).append((r["time_ps"], r["util"]))
                t.busy[port] = t.busy.get(port, 0.0) + r["util"]
            elif k == "fault":
                if r["kind"] not in NOT_FAULTS:
                    t.faults.append((r["time_ps"], r["kind"], r["target"]))
    except (OSError, ValueError, TypeError) as e:
        die(2, "%s" % e if isinstance(e, railsim.FormatError) else "%s: malformed timeline: %s" % (path, e))
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


def legend_right(ax, **kw):
    """A legend beside the axes, never over the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8, **kw)


def plot_breakdown(summary, tl, outdir, wrote, skipped):
    if tl and tl.ops:
        ranks = sorted(tl.ops)
        if len(ranks) > MAX_BARS:
            step = len(ranks) / MAX_BARS
            ranks = [ranks[int(i * step)] for i in range(MAX_BARS)]
        rows = [rank_breakdown(tl.ops[r]) for r in ranks]
        div, unit = unit_of(max(r[0] for r in rows) or 1)
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]},
                                      layout="constrained")
        x = list(range(len(ranks)))
        comp_only = [(c - o) / div for _, c, o, _ in rows]
        over = [o / div for _, _, o, _ in rows]
        exp = [e / div for _, _, _, e in rows]
        idle = [max(0, s - c - e) / div for s, c, _, e in rows]
        ax.bar(x, comp_only, color=COLOR_COMPUTE, label="compute only")
        b = comp_only
        ax.bar(x, over, bottom=b, color=COLOR_OVERLAP, label="compute +\noverlapped comm")
        b = [p + q for p, q in zip(b, over)]
        ax.bar(x, exp, bottom=b, color=COLOR_EXPOSED, label="exposed comm")
        b = [p + q for p, q in zip(b, exp)]
        ax.bar(x, idle, bottom=b, color=COLOR_IDLE, label="idle")
        if len(ranks) <= 32:
            ax.set_xticks(x)
            ax.set_xticklabels([str(r) for r in ranks], fontsize=7)
        else:
            # Every label would overlap; ticks at evenly spaced bars, named
            # by the rank they show (ranks may be a sample).
            ticks = x[::max(1, len(x) // 16)]
            ax.set_xticks(ticks)
            ax.set_xticklabels([str(ranks[i]) for i in ticks], fontsize=7)
        ax.set_xlim(-0.7, len(x) - 0.3)
        ax.grid(axis="x", visible=False)
        ax.set_xlabel("rank" if len(ranks) == len(tl.ops) else "rank (%d of %d)" % (len(ranks), len(tl.ops)))
        ax.set_ylabel("time (%s)" % unit)
        ax.set_title("per-rank breakdown of the timeline's span")
        legend_right(ax)
        items = sorted(tl.op_dim.items(), key=lambda kv: (-kv[1], kv[0]))[:16]
        labels = ["%s %s" % (d, o) if d != "-" else o for (d, o), _ in items]
        div2, unit2 = unit_of(max(v for _, v in items) or 1)
        ax2.barh(range(len(items)), [v / div2 for _, v in items],
                 color=[COLOR_COMPUTE if o == "compute" else COLOR_EXPOSED for (_, o), _ in items])
        ax2.set_yticks(range(len(items)))
        ax2.set_yticklabels(labels)
        ax2.invert_yaxis()
        ax2.grid(axis="y", visible=False)
        ax2.set_xlabel("time summed over ranks (%s)" % unit2)
        ax2.set_title("op time by dimension and kind")
        save(fig, outdir, "breakdown.png", wrote)
        return
    co = summary.get("collective") if summary else None
    times = co.get("times_ps") if isinstance(co, dict) else None
    if times:
        div, unit = unit_of(max(times) or 1)
        fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
        ax.bar(range(1, len(times) + 1), [t / div for t in times], color=COLOR_EXPOSED, width=0.6)
        bound = co.get("bound_ps")
        if isinstance(bound, (int, float)):
            ax.axhline(bound / div, color="black", linestyle="--", linewidth=1,
                       label="network-only bound (mean)")
            legend_right(ax)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(0.4, len(times) + 0.6)
        ax.grid(axis="x", visible=False)
        ax.set_xlabel("iteration")
        ax.set_ylabel("time (%s)" % unit)
        ax.set_title("%s (%s) on %s ranks, %s bytes: time per iteration" % (
            co.get("op"), co.get("algo"), co.get("ranks"), co.get("bytes")))
        save(fig, outdir, "breakdown.png", wrote)
        return
    skipped.append("breakdown.png: no op records in the timeline and no collective in summary.json")


def plot_jobs(summary, outdir, wrote):
    """jobs.png: a shared cluster's jobs, beside the others and alone."""
    jobs = [j for j in (summary or {}).get("jobs") or [] if isinstance(j, dict)]
    if not jobs:
        return
    names = [str(j.get("name")) for j in jobs]
    t = [j.get("time_ps") if isinstance(j.get("time_ps"), (int, float)) else 0 for j in jobs]
    a = [j.get("alone_time_ps") if isinstance(j.get("alone_time_ps"), (int, float)) else 0 for j in jobs]
    sd = [j.get("slowdown") if isinstance(j.get("slowdown"), (int, float)) else 0 for j in jobs]
    div, unit = unit_of(max(t + a) or 1)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
    x = list(range(len(jobs)))
    ax.bar([i - 0.2 for i in x], [v / div for v in t], 0.4, color=COLOR_COMPUTE, label="beside the others")
    ax.bar([i + 0.2 for i in x], [v / div for v in a], 0.4, color=COLOR_OVERLAP, label="alone, same GPUs")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=30 if len(jobs) > 4 else 0)
    ax.set_ylabel("time per iteration or transfer (%s)" % unit)
    ax.set_title("each job's time")
    legend_right(ax)
    ax2.bar(x, sd, color=COLOR_EXPOSED)
    ax2.axhline(1.0, color="grey", lw=0.8)
    known = [v for v in sd if v > 0]
    if known:  # around 1, where slowdowns differ
        ax2.set_ylim(min(0.95, min(known) - 0.02), max(1.05, max(known) + 0.02))
    for i, v in zip(x, sd):
        if v > 0:
            ax2.annotate("%.4fx" % v, (i, v), ha="center", va="bottom", fontsize=8)
    ax2.set_xticks(x)
    ax2.set_xticklabels(names, rotation=30 if len(jobs) > 4 else 0)
    ax2.set_ylabel("slowdown (1 = as fast as alone)")
    ax2.set_title("slowdown beside the other jobs")
    save(fig, outdir, "jobs.png", wrote)


JOB_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")


def plot_job_links(summary, outdir, wrote):
    """job_links.png: link utilisation coloured by job."""
    links = [x for x in (summary or {}).get("job_links") or [] if isinstance(x, dict)]
    jobs = [str(j.get("name")) for j in (summary or {}).get("jobs") or [] if isinstance(j, dict)]
    if not links or len(jobs) < 2:
        return
    names = [str(x.get("port")) for x in links]
    fig, ax = plt.subplots(figsize=(10, 0.28 * len(links) + 1.6), layout="constrained")
    y = list(range(len(links)))
    left = [0.0] * len(links)
    for k, job in enumerate(jobs):
        u = [(x.get("util") or [])[k] if k < len(x.get("util") or []) and
             isinstance(x["util"][k], (int, float)) else 0.0 for x in links]
        ax.barh(y, [100 * v for v in u], left=[100 * v for v in left], color=JOB_COLORS[k % len(JOB_COLORS)],
                label=job)
        left = [a + b for a, b in zip(left, u)]
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("utilisation over the run (%), data bytes of each job")
    ax.set_title("links the jobs shared, then the busiest: utilisation by job")
    legend_right(ax)
    save(fig, outdir, "job_links.png", wrote)


def util_matrix(tl, ports):
    """Mean utilisation of each port over each time bin: (rows, one per
    port; the sampling intervals each bin spans; the bin width in ps).
    Samples sit at multiples of the interval I and a port without a sample
    at one was idle over it (docs/timeline-format.md), so a bin of k
    intervals averages the port's samples in it over k: the fraction of
    its line rate it used. So sum(row[i] * spans[i]) is sum(util)."""
    # Every sample time is a multiple of I, and two consecutive multiples
    # (any busy stretch longer than one interval) make their gcd I itself.
    # A run whose every busy stretch is one sample long would give a
    # multiple of I, and cells too low by that factor.
    step = 0
    for p in tl.samples:
        for t, _ in tl.samples[p]:
            step = math.gcd(step, t)
    step = step or 1
    last = max(t for p in tl.samples for t, _ in tl.samples[p])
    nint = max(1, last // step)            # intervals from 0 to the last sample
    k = -(-nint // HEAT_COLUMNS)           # intervals per bin
    nbins = -(-nint // k)
    span = [k] * (nbins - 1) + [nint - (nbins - 1) * k]   # the last bin may be shorter
    rows = []
    for p in ports:
        row = [0.0] * nbins
        for t, u in tl.samples[p]:
            i = min(max(0, t // step - 1) // k, nbins - 1)   # the sample at t covers (t - I, t]
            row[i] += u
        rows.append([v / n for v, n in zip(row, span)])
    return rows, span, step * k


def plot_link_util(tl, outdir, wrote, skipped):
    if not tl or not tl.samples:
        skipped.append("link_util.png: no sample records in the timeline")
        return
    # The most utilised links (sum of util over the samples, i.e. busy
    # time at line rate), not the most bytes: NVLink ports carry more
    # bytes at a fraction of their rate. Ethernet links first, then the
    # HB domain's (gpuN.hb, nvsN.pK: models/topo.c), each group busiest
    # first, so the HB links cannot crowd the network out.
    def is_hb(p):
        n = tl.names.get((0, p), "")
        return n.endswith(".hb") or n.startswith("nvs")
    order = sorted(tl.busy, key=lambda p: (-tl.busy[p], p))
    eth = [p for p in order if not is_hb(p)]
    hb = [p for p in order if is_hb(p)]
    n_hb = min(len(hb), HEAT_HB_LINKS if eth else HEAT_LINKS)
    n_eth = min(len(eth), HEAT_LINKS - n_hb)
    n_hb = min(len(hb), HEAT_LINKS - n_eth)
    ports = eth[:n_eth] + hb[:n_hb]
    rows, span, width = util_matrix(tl, ports)
    nbins = len(span)
    end = width * nbins
    div, unit = unit_of(end or 1)
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.17 * len(ports)), layout="constrained")
    im = ax.imshow([[100.0 * v for v in r] for r in rows], aspect="auto", interpolation="nearest",
                   cmap="viridis", vmin=0, vmax=100, extent=(0, end / div, len(ports) - 0.5, -0.5))
    ax.set_yticks(range(len(ports)))
    ax.set_yticklabels([tl.names.get((0, p), "port %d" % p) for p in ports], fontsize=7)
    ax.grid(False)
    for t, _, _ in tl.faults:
        ax.axvline(t / div, color="red", linestyle="--", linewidth=1)
    ax.set_xlabel("simulated time (%s); %d bins of %g %s%s" % (
        unit, nbins, width / div, unit, "; red dashes: faults applied" if tl.faults else ""))
    if n_eth and n_hb:
        ax.axhline(n_eth - 0.5, color="white", linewidth=2)
    groups = []
    if n_eth:
        groups.append("%d of %d Ethernet ports" % (n_eth, len(eth)))
    if n_hb:
        groups.append("%d of %d HB (NVLink) ports" % (n_hb, len(hb)))
    ax.set_title("link utilisation, most utilised first: %s" % (" above, ".join(groups)))
    cb = fig.colorbar(im, ax=ax, pad=0.01)
    cb.set_label("utilisation (% of line rate)")
    save(fig, outdir, "link_util.png", wrote)


def cdf(ax, values, div, label):
    """A step CDF on a log x axis; zero durations (a message to oneself)
    cannot sit on it and are counted in the label instead."""
    v = sorted(values)
    n = len(v)
    zeros = sum(1 for x in v if x <= 0)
    pos = v[zeros:]
    text = "%s (%d)" % (label, n) if not zeros else "%s (%d, %d of zero length)" % (label, n, zeros)
    if pos:
        ax.step([x / div for x in pos], [(zeros + i + 1) / n for i in range(len(pos))],
                where="post", label=text)
    else:
        ax.plot([], [], label=text)


def log_axis(ax, values, div):
    pos = [x for x in values if x > 0]
    if pos:
        ax.set_xscale("log")
        lo, hi = min(pos) / div, max(pos) / div
        if hi <= lo * 1.5:   # all alike: a decade around them
            lo, hi = lo / 3, hi * 3
        lo, hi = lo / 1.3, hi * 1.3
        ax.set_xlim(lo, hi)
        decades = sum(1 for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
                      if lo <= 10.0 ** k <= hi)
        if decades < 2:
            # With fewer than two powers of ten in view matplotlib labels one
            # tick or none: label 1, 2 and 5 of every decade instead.
            def label(v, _):
                m = round(v / 10.0 ** math.floor(math.log10(v) + 1e-9), 6)
                return "%g" % float("%.2g" % v) if m in (1.0, 2.0, 5.0) else ""
            ax.xaxis.set_major_formatter(FuncFormatter(label))
            ax.xaxis.set_minor_formatter(FuncFormatter(label))
            ax.tick_params(axis="x", which="both", labelsize=8)


def plot_fct(summary, tl, outdir, wrote, skipped):
    have_flows = bool(tl and tl.fct)
    have_colls = bool(tl and tl.colls)
    fct = summary.get("flows", {}).get("fct_ps") if summary else None
    have_pct = isinstance(fct, dict) and isinstance(fct.get("p50"), int)
    if not (have_flows or have_colls or have_pct):
        skipped.append("fct_cdf.png: no flow or coll records and no FCT in summary.json")
        return
    # One panel per kind of data present: flows (or the summary's
    # percentiles), collectives.
    have_fct = have_flows or have_pct
    n = int(have_fct) + int(have_colls)
    fig, axes = plt.subplots(1, n, figsize=(13 if n == 2 else 8, 4.5), squeeze=False, layout="constrained")
    axes = list(axes[0])
    if have_fct:
        ax = axes.pop(0)
        if have_flows:
            div, unit = unit_of(max(tl.fct) or 1)
            cdf(ax, tl.fct, div, "flows")
            log_axis(ax, tl.fct, div)
            ax.set_title("flow completion time CDF")
        else:
            keys = ("min", "p50", "p99", "max")
            vals = [fct[k] for k in keys]
            div, unit = unit_of(max(vals) or 1)
            pts = [(v / div, q) for v, q in zip(vals, (0.0, 0.5, 0.99, 1.0)) if v > 0]
            ax.plot([p for p, _ in pts], [q for _, q in pts], marker="o", label="summary.json\nmin, p50, p99, max")
            log_axis(ax, vals, div)
            ax.set_title("flow completion time (percentiles from summary.json)")
        ax.set_xlabel("FCT (%s, log scale)" % unit)
        ax.set_ylabel("fraction of flows")
        ax.set_ylim(0, 1.02)
        legend_right(ax)
    if have_colls:
        ax = axes.pop(0)
        every = [d for v in tl.colls.values() for d in v]
        div, unit = unit_of(max(every) or 1)
        for op in sorted(tl.colls):
            cdf(ax, tl.colls[op], div, op)
        log_axis(ax, every, div)
        ax.set_title("collective duration CDF by op")
        ax.set_xlabel("duration (%s, log scale)" % unit)
        ax.set_ylabel("fraction of collectives")
        ax.set_ylim(0, 1.02)
        legend_right(ax)
    save(fig, outdir, "fct_cdf.png", wrote)


# ---- a compare directory ---------------------------------------------------

def side_time(side):
    """(compute, {dim: exposed}, total, what) in ps for one side of a case:
    a training iteration split by dimension, else the headline time."""
    it = side.get("iteration")
    if isinstance(it, dict) and isinstance(it.get("comm_by_dim_ps"), dict) \
            and isinstance((it.get("compute_ps") or {}).get("mean"), (int, float)):
        dims = {d: it["comm_by_dim_ps"].get(d) or 0 for d in DIMS}
        return it["compute_ps"]["mean"], dims, it.get("time_ps"), "iteration"
    t = side.get("time_ps")
    what = "collective" if isinstance(side.get("collective"), dict) else "completion"
    return None, None, t, what


def plot_compare(doc, outdir, wrote):
    cases = doc.get("cases") or []
    n = len(cases)
    fig, axs = plt.subplots(2, 2, figsize=(max(12, 3 + 1.3 * n), 8.5), layout="constrained")
    # A label is the workload and the sweep's KEY=VALUEs: one per line, so
    # neighbouring cases' labels do not run into each other.
    labels = [(c.get("label") or "case %d" % i).replace(", ", "\n") for i, c in enumerate(cases)]
    xs = list(range(n))
    w = 0.38
    off = {SIDES[0][0]: -w / 2 - 0.01, "fat_tree": w / 2 + 0.01}

    # (a) iteration time: compute + exposed communication by dimension.
    ax = axs[0][0]
    tmax = max([side_time(c[k])[2] or 0 for c in cases for k, _ in SIDES] + [1])
    div, unit = unit_of(tmax)
    seen = set()
    for i, c in enumerate(cases):
        for k, name in SIDES:
            comp, dims, total, what = side_time(c[k])
            x = xs[i] + off[k]
            if total is None:
                # No headline time: the faults stopped it, or nothing completed.
                ax.annotate("STOPPED" if c[k].get("stopped") else "no time", (x, 0), rotation=90,
                            ha="center", va="bottom", fontsize=8, xytext=(0, 3), textcoords="offset points")
                continue
            if comp is None:
                lab = "%s time" % what
                ax.bar(x, total / div, w, color=COLOR_IDLE, label=lab if lab not in seen else None)
                seen.add(lab)
                continue
            ax.bar(x, comp / div, w, color=COLOR_COMPUTE, label="compute" if "compute" not in seen else None)
            seen.add("compute")
            b = comp
            for d in DIMS:
                if dims[d] > 0:
                    lab = "exposed %s" % d
                    ax.bar(x, dims[d] / div, w, bottom=b / div, color=COLOR_DIM[d],
                           label=lab if lab not in seen else None)
                    seen.add(lab)
                    b += dims[d]
            bound = c[k].get("bound_ps")
            if isinstance(bound, (int, float)):
                ax.plot([x - w / 2, x + w / 2], [bound / div] * 2, color="black", linewidth=1.5,
                        label="network-only bound" if "bound" not in seen else None)
                seen.add("bound")
    ax.set_ylabel("time (%s)" % unit)
    for i, c in enumerate(cases):
        pct = (c.get("%s_vs_fat_tree" % SIDES[0][0]) or {}).get("time_pct")
        top = max([side_time(c[k])[2] or 0 for k, _ in SIDES])
        if isinstance(pct, (int, float)) and top:
            ax.annotate("%s %+.2f %%" % (SHORT[SIDES[0][0]], pct), (xs[i], top / div), ha="center", va="bottom", fontsize=7,
                        xytext=(0, 2), textcoords="offset points")
    ax.margins(y=0.1)
    if any(side_time(c[k])[0] is not None for c in cases for k, _ in SIDES):
        ax.set_title("time per iteration: compute + exposed comm by dimension")
    else:
        ax.set_title("headline time: a collective's mean iteration, else the last completion")
    handles, names = ax.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda j: legend_rank(names[j]))
    if handles:
        ax.legend([handles[j] for j in order], [names[j] for j in order], loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)
    else:
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.set_ylabel("")
    side_ticks(ax, xs, off, labels, w)

    # (b) exposed communication, mean over ranks, whiskers min..max.
    ax = axs[0][1]
    vals = {}
    for k, _ in SIDES:
        vals[k] = []
        for c in cases:
            it = c[k].get("iteration")
            e = it.get("exposed_comm_ps") if isinstance(it, dict) else None
            vals[k].append(e if isinstance(e, dict) and isinstance(e.get("mean"), (int, float)) else None)
    emax = max([e["max"] for k in vals for e in vals[k] if e] + [1])
    div, unit = unit_of(emax)
    for k, name in SIDES:
        for i, e in enumerate(vals[k]):
            if not e:
                continue
            x = xs[i] + off[k]
            ax.bar(x, e["mean"] / div, w, color=COLOR_SIDE[k], label=name if i == first(vals[k]) else None)
            ax.errorbar(x, e["mean"] / div, yerr=[[(e["mean"] - e["min"]) / div], [(e["max"] - e["mean"]) / div]],
                        color="black", capsize=3, linewidth=1)
            t = c_time(cases[i][k])
            if t:
                ax.annotate("%.0f %%" % (100.0 * e["mean"] / t), (x, e["max"] / div), ha="center",
                            va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points")
    if not any(e for k in vals for e in vals[k]):
        ax.text(0.5, 0.5, "no training iteration in these cases", transform=ax.transAxes, ha="center")
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        unit = "-"
    ax.set_ylabel("time per iteration (%s)" % unit if unit != "-" else "")
    ax.set_title("exposed communication per iteration\n(mean over ranks, whiskers min..max; % of iteration time)")
    ax.margins(y=0.12)
    if any(e for k in vals for e in vals[k]):
        legend_right(ax)
    side_ticks(ax, xs, off, labels, w)

    # (c) network cost and (d) power, from the cost model.
    for ax, key, div, unit, title in ((axs[1][0], "cost_usd", 1e3, "k$", "network cost"),
                                      (axs[1][1], "power_w", 1e3, "kW", "network power")):
        for k, name in SIDES:
            ys = [(c[k].get("cost") or {}).get(key) for c in cases]
            bars = ax.bar([x + off[k] for x in xs], [(y or 0) / div for y in ys], w, color=COLOR_SIDE[k],
                          label=name)
            for r, y in zip(bars, ys):
                if y is not None:
                    ax.annotate("%.4g" % (y / div), (r.get_x() + r.get_width() / 2, r.get_height()),
                                ha="center", va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points")
        ax.set_ylabel("%s (%s)" % (title, unit))
        ax.set_title("%s (cost model: switches, transceivers, cables)" % title)
        ax.margins(y=0.12)
        legend_right(ax)
        ax.xaxis.set_major_locator(plt.FixedLocator(xs))
        ax.set_xticklabels(labels, rotation=30 if n > 4 else 0, ha="right" if n > 4 else "center", fontsize=8)
        ax.grid(axis="x", visible=False)
    fig.suptitle("rail-only (RO, left of each pair) vs rail-optimized fat tree (FT, right): compare.json")
    save(fig, outdir, "compare.png", wrote)


def first(vs):
    return next((i for i, v in enumerate(vs) if v), None)


def c_time(side):
    it = side.get("iteration")
    t = it.get("time_ps") if isinstance(it, dict) else None
    return t if isinstance(t, (int, float)) and t > 0 else None


def legend_rank(name):
    if name == "compute":
        return (0, 0)
    if name.startswith("exposed "):
        d = name[len("exposed "):]
        return (1, DIMS.index(d) if d in DIMS else 99)
    return (2, name)


def side_ticks(ax, xs, off, labels, w):
    """Ticks under each bar (RO / FT) and the case label under each pair."""
    ticks, names = [], []
    for x in xs:
        for k, _ in SIDES:
            ticks.append(x + off[k])
            names.append(SHORT[k])
    ax.set_xticks(ticks)
    ax.set_xticklabels(names, fontsize=7)
    ax.grid(axis="x", visible=False)
    ax.set_xlim(-0.6, len(xs) - 0.4)
    sec = ax.secondary_xaxis("bottom")
    sec.set_xticks(xs)
    sec.set_xticklabels(labels, fontsize=8, rotation=30 if len(xs) > 4 else 0,
                        ha="right" if len(xs) > 4 else "center")
    sec.tick_params(length=0, pad=14)


# ---- main ------------------------------------------------------------------

def plots_dir(d):
    outdir = os.path.join(d, "plots")
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        die(1, "%s: cannot create the plots directory: %s" % (outdir, e))
    return outdir


def read_error(path, e, what):
    """One line for a file railsim's reader refused (its message names the
    file) or could not open."""
    if isinstance(e, railsim.FormatError):
        return str(e)
    return "%s: cannot read the %s: %s" % (path, what, e.strerror if isinstance(e, OSError) else e)


def plot_run(d):
    """The three plots of run directory d; returns (wrote, skipped)."""
    spath = os.path.join(d, "summary.json")
    tpath = os.path.join(d, "timeline.msgpack")
    summary = load_summary(spath)
    tl = load_timeline(tpath)
    if summary is None and tl is None:
        die(2, "%s: neither summary.json nor timeline.msgpack found; expected a run directory "
               "(railsim run -o DIR) or a compare directory (railsim compare -o DIR)" % d)
    outdir = plots_dir(d)
    wrote, skipped = [], []
    plot_breakdown(summary, tl, outdir, wrote, skipped)
    plot_link_util(tl, outdir, wrote, skipped)
    plot_fct(summary, tl, outdir, wrote, skipped)
    plot_jobs(summary, outdir, wrote)
    plot_job_links(summary, outdir, wrote)
    return wrote, skipped


def plot_compare_dir(d):
    cpath = os.path.join(d, "compare.json")
    try:
        doc = railsim.read_compare(cpath)
        runs = railsim.compare_runs(cpath)
    except (OSError, ValueError) as e:
        die(2, read_error(cpath, e, "comparison"))
    global SIDES
    cases = doc.get("cases")
    first = "dragonfly" if isinstance(cases, list) and cases and isinstance(cases[0], dict) and \
        "dragonfly" in cases[0] else "rail_only"
    SIDES = ((first, RUN_DIRS[first]), ("fat_tree", "fat tree"))
    if not isinstance(cases, list) or not cases or not all(
            isinstance(c, dict) and isinstance(c.get(first), dict) and isinstance(c.get("fat_tree"), dict)
            for c in cases):
        die(2, "%s: expected a non-empty \"cases\" list with rail_only (or dragonfly) and fat_tree objects" % cpath)
    outdir = plots_dir(d)
    wrote, skipped = [], []
    plot_compare(doc, outdir, wrote)
    for c, r in zip(cases, runs):
        for k, _ in SIDES:
            dirname = RUN_DIRS[k]
            if c[k].get("stopped"):
                skipped.append("%s: the faults stopped this run" % r[dirname])
                continue
            if not any(os.path.exists(os.path.join(r[dirname], f)) for f in ("summary.json", "timeline.msgpack")):
                skipped.append("%s: no summary.json or timeline.msgpack there" % r[dirname])
                continue
            w, s = plot_run(r[dirname])
            wrote += w
            skipped += s
    return wrote, skipped


def main(argv):
    quiet = len(argv) == 3 and argv[1] == "-q"
    if len(argv) != 2 and not quiet:
        die(2, "usage: plots.py [-q] DIR (a run directory written by railsim run -o DIR, "
               "or a compare directory written by railsim compare -o DIR)")
    d = argv[-1]
    if not os.path.isdir(d):
        die(2, "%s: not a directory; expected a run directory written by railsim run -o DIR" % d)
    if os.path.exists(os.path.join(d, "compare.json")):
        wrote, skipped = plot_compare_dir(d)
    else:
        wrote, skipped = plot_run(d)
    for p in wrote if not quiet else []:
        print("railsim plot: wrote %s" % p)
    for s in skipped if not quiet else []:
        print("railsim plot: skipped %s" % s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
