"""rsexp.py - what the experiments share: running railsim, reading its
summaries, writing a markdown table and a PNG per experiment.

Each experiment (experiments/rail-only/*, experiments/scaling/*) is a
script run by /usr/bin/python3 (Debian's python3-matplotlib loads only
there):

    experiments/rail-only/a2a-ratio [--quick] [-o DIR]

It runs railsim (RAILSIM in the environment, else build/cli/railsim),
prints its table and writes DIR/NAME.md, DIR/NAME.png and DIR/NAME.json
(the numbers behind both). DIR defaults to out/experiments. --quick runs
the smallest cases only (what tests/e2e/experiments.sh checks: directions,
never timings). Every figure printed comes from a railsim run or from
`railsim cost`; nothing is typed in except the published figures the
tables compare against, each with its source.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAILSIM = os.environ.get("RAILSIM", os.path.join(ROOT, "build", "cli", "railsim"))


def args(name, desc):
    p = argparse.ArgumentParser(prog=name, description=desc)
    p.add_argument("--quick", action="store_true", help="smallest cases only (for tests)")
    p.add_argument("--replot", action="store_true",
                   help="redraw NAME.png from the NAME.json an earlier run wrote, running nothing")
    p.add_argument("-o", dest="out", default=os.path.join("out", "experiments"),
                   help="output directory (default out/experiments)")
    p.add_argument("-j", dest="jobs", type=int, default=1,
                   help="railsim runs at once, where the experiment runs its cases side by side (default 1; "
                        "the results are the same at any count)")
    a = p.parse_args()
    if a.jobs < 1:
        p.error("-j: expected at least 1")
    if not a.replot and not os.access(RAILSIM, os.X_OK):
        sys.stderr.write("%s: %s is not an executable railsim; build it (make build) or set RAILSIM\n"
                         % (name, RAILSIM))
        sys.exit(2)
    os.makedirs(a.out, exist_ok=True)
    return a


def run(sets, scenario=None, label=""):
    """railsim run with --set KEY=VALUE for each (key, value) of sets; the
    summary.json as a dict. The run directory is temporary. A failed run
    stops the experiment with railsim's message."""
    d = tempfile.mkdtemp(prefix="rsexp.")
    try:
        cmd = [RAILSIM, "run", "-q", "-o", d, "--set", "timeline.enabled=false"]
        if scenario:
            cmd.insert(2, scenario)
        for k, v in sets:
            cmd += ["--set", "%s=%s" % (k, v)]
        sys.stderr.write("  %s%s\n" % (label + ": " if label else "", " ".join(cmd[1:])))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.stderr.write("railsim run failed (exit %d): %s\n" % (r.returncode, r.stderr.strip()))
            sys.exit(1)
        with open(os.path.join(d, "summary.json")) as f:
            return json.load(f)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def cost(gpus, hb, radix):
    """railsim cost --json for one cluster."""
    cmd = [RAILSIM, "cost", "--json", "--gpus", str(gpus), "--hb", str(hb), "--radix", str(radix)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write("railsim cost failed (exit %d): %s\n" % (r.returncode, r.stderr.strip()))
        sys.exit(1)
    return json.loads(r.stdout)


def pct(a, b):
    """(a - b) / b in percent."""
    return (a - b) / b * 100.0 if b else float("nan")


def table(header, rows):
    """A markdown table: header is a list of column titles, rows lists of cells."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def write(out, name, title, intro, tab, data, notes=""):
    """Write DIR/NAME.md (title, intro, table, notes) and DIR/NAME.json,
    atomically; print the markdown."""
    md = "# %s\n\n%s\n\n%s\n" % (title, intro.strip(), tab)
    if notes:
        md += "\n" + notes.strip() + "\n"
    for ext, text in (("md", md), ("json", json.dumps(data, indent=1, sort_keys=True) + "\n")):
        path = os.path.join(out, "%s.%s" % (name, ext))
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    sys.stdout.write(md)


def figure():
    """A matplotlib figure (Agg, fixed size), or None when matplotlib is
    missing (the tables are still written)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("matplotlib not found: no PNG (install python3-matplotlib)\n")
        return None, None
    fig = plt.figure(figsize=(8, 4.5), dpi=100)
    return fig, plt


def save(fig, plt, out, name):
    if fig is None:
        return
    path = os.path.join(out, name + ".png")
    fig.tight_layout()
    fig.savefig(path + ".tmp", format="png", metadata={"Software": None})
    plt.close(fig)
    os.replace(path + ".tmp", path)


def iter_ms(s):
    return s["iteration"]["time_ps"] / 1e9


def exposed_ms(s):
    return s["iteration"]["exposed_comm_ps"]["mean"] / 1e9


def load(out, name):
    """The numbers an earlier run wrote (for --replot)."""
    path = os.path.join(out, name + ".json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("%s: cannot read %s: %s\n" % (name, path, e))
        sys.exit(2)


def log2_axis(ax, values):
    """A base-2 log x axis ticked at the values themselves, as integers."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(set(values)))
    ax.set_xticklabels(["{:,}".format(v) for v in sorted(set(values))])
    ax.minorticks_off()
