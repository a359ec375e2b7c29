"""railsim.run and railsim.compare: whole runs through librailsim
(include/railsim/run.h), as `railsim run` and `railsim compare` do them.

A scenario goes in as a dict (dotted keys, nested sections, or both), a
path to a scenario file, or None (every key at its default); a Result
comes out with the run's summary.json as a dict and its timeline as one
pandas DataFrame per record kind, built when first asked for. Nothing
here estimates or recomputes a figure: each one is the library's, read
from the summary it returns and the timeline it writes.

Importing this module loads neither librailsim (_lib.load, at the first
run) nor pandas (at the first DataFrame). Runs release the GIL: runs in
several threads proceed at once (the runner keeps no global state).
"""
import json
import numbers
import os
import tempfile
from collections.abc import Mapping

from . import RECORD_FIELDS, read_timeline

__all__ = ["run", "compare", "Result", "Comparison", "Timeline", "ScenarioError", "LibraryNotFound"]

KINDS = ("rail-only", "fat-tree")


class LibraryNotFound(OSError):
    """librailsim.so.0 is nowhere the package looks; str(e) lists where."""


class ScenarioError(ValueError):
    """A scenario the library refuses (an unknown key, a value out of
    range, keys that do not fit together); str(e) is the library's one
    sentence naming the key, or the file and line:column."""


def _text(key, v):
    """A set's VALUE: what `railsim run --set KEY=VALUE` would be given."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (numbers.Integral, numbers.Real, str)):
        return str(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    raise TypeError("railsim: %s: expected a number, a string or a bool, got %s" % (key, type(v).__name__))


def _split(scenario):
    """(JSON text or None, ["KEY=VALUE", ...]) of a scenario mapping: a
    top-level dotted key whose value is not a mapping is a set (applied
    after the rest, so it wins); everything else is the scenario file's
    document, sections nested ("topology": {...}) or named by their
    dotted name ("transport.dcqcn": {...})."""
    doc, sets = {}, []
    for k, v in scenario.items():
        if not isinstance(k, str):
            raise TypeError("railsim: scenario keys are strings, got %r" % (k,))
        if "." in k and not isinstance(v, Mapping):
            sets.append("%s=%s" % (k, _text(k, v)))
        else:
            doc[k] = v
    return (json.dumps(doc) if doc else None), sets


def _sets(extra):
    """More sets: a mapping of dotted keys, or "KEY=VALUE" strings."""
    if extra is None:
        return []
    if isinstance(extra, Mapping):
        return ["%s=%s" % (k, _text(k, v)) for k, v in extra.items()]
    if isinstance(extra, str):
        return [extra]
    return [str(s) for s in extra]


def _load(lib, scenario, extra):
    """A loaded rs_scenario handle (the caller destroys it) and the name
    messages give it (the file's path, or None)."""
    import ctypes
    from . import _lib
    path, text, sets = None, None, []
    if isinstance(scenario, (str, bytes, os.PathLike)):
        path = os.fsencode(scenario)
    elif isinstance(scenario, Mapping):
        text, sets = _split(scenario)
    elif scenario is not None:
        raise TypeError("railsim: a scenario is a dict, a path to a scenario file or None, got %s"
                        % type(scenario).__name__)
    sets += _sets(extra)
    arr = (ctypes.c_char_p * max(1, len(sets)))(*[s.encode() for s in sets])
    err = _lib.Err()
    sc = ctypes.c_void_p()
    if lib.rs_scenario_create(ctypes.byref(sc), ctypes.byref(err)) != _lib.RS_OK:
        raise MemoryError("railsim: " + err.text())
    if path is not None:
        rc = lib.rs_scenario_load(sc, path, arr, len(sets), ctypes.byref(err))
    else:
        rc = lib.rs_scenario_load_string(sc, text.encode() if text else None, arr, len(sets),
                                         ctypes.byref(err))
    if rc != _lib.RS_OK:
        lib.rs_scenario_destroy(sc)
        _raise(rc, err)
    return sc, (os.fsdecode(path) if path is not None else None)


def _raise(rc, err):
    from . import _lib
    if rc == _lib.RS_ENOMEM:
        raise MemoryError("railsim: " + err.text())
    if rc == _lib.RS_EIO:
        raise OSError(err.text())
    raise ScenarioError(err.text())


def _headline(s):
    """(what, time_ps) as rs_summary_headline reads a summary: the mean
    iteration, else the mean collective, else sim_end_ps; time None when
    the run has none."""
    if s.get("iteration") is not None:
        what, v = "iteration", s["iteration"].get("time_ps")
    elif s.get("collective") is not None:
        what, v = "collective", s["collective"].get("time_ps")
    else:
        what, v = "sim_end", s.get("sim_end_ps")
    return what, (v if isinstance(v, int) and not isinstance(v, bool) else None)


class Timeline(Mapping):
    """A run's timeline.msgpack, one pandas DataFrame per record kind
    (docs/timeline-format.md): timeline["op"], timeline["flow"], ...;
    the columns are RECORD_FIELDS' names, one row per record in file
    order. Each kind is read when first asked for (one pass over the
    file, streaming) and kept."""

    def __init__(self, path):
        self.path = path
        self._frames = {}
        self._header = None

    def _kinds(self):
        return [name for name, _ in RECORD_FIELDS.values() if name != "end"]

    def __iter__(self):
        return iter(self._kinds())

    def __len__(self):
        return len(self._kinds())

    def __getitem__(self, kind):
        if kind not in self._kinds():
            raise KeyError(kind)
        if kind not in self._frames:
            import pandas
            fields = next(f for name, f in RECORD_FIELDS.values() if name == kind)
            cols = {f: [] for f in fields}
            for rec in read_timeline(self.path, {kind}):
                if rec["record"] == kind:
                    for f in fields:
                        cols[f].append(rec[f])
                elif rec["record"] == "header":
                    self._header = rec
            self._frames[kind] = pandas.DataFrame(cols, columns=list(fields))
        return self._frames[kind]

    @property
    def header(self):
        """The header record as read_timeline gives it (format, version,
        partial, seed, scenario as JSON text, topology, ...)."""
        if self._header is None:
            self._header = next(read_timeline(self.path, set()))
        return self._header

    def __repr__(self):
        return "<railsim.Timeline %s>" % self.path


class Result:
    """One run. summary: summary.json as a dict (docs/summary-format.md);
    status: its "complete", "incomplete" or "interrupted"; ok: complete;
    message: why a run that is not ok ended so ("" when ok); warning: a
    problem that did not stop the run (""); stopped_by_faults; time_of
    and time_ps: the headline time ("iteration", "collective" or
    "sim_end", as compare.json's time_ps; None when the run has none);
    bound_ps: its network-only bound (None when none); outdir: where
    summary.json and timeline.msgpack are; timeline: the Timeline."""

    def __init__(self, summary, code, message, warning, stopped, outdir, tmp):
        self.summary = summary
        self.code = code
        self.message = message
        self.warning = warning
        self.stopped_by_faults = stopped
        self.outdir = outdir
        self._tmp = tmp  # a TemporaryDirectory, removed with the result
        self.time_of, self.time_ps = _headline(summary)
        part = summary.get(self.time_of) if self.time_of != "sim_end" else None
        b = part.get("bound_ps") if isinstance(part, dict) else None
        self.bound_ps = b if isinstance(b, int) and not isinstance(b, bool) else None
        self._timeline = None

    @property
    def status(self):
        return self.summary.get("status")

    @property
    def ok(self):
        return self.code == 0

    @property
    def scenario(self):
        """The effective scenario (every key; a scenario document)."""
        return self.summary.get("scenario")

    @property
    def timeline(self):
        if self._timeline is None:
            p = os.path.join(self.outdir, "timeline.msgpack")
            if not os.path.exists(p):
                raise FileNotFoundError("%s: no timeline: the run wrote none (timeline.enabled=false)" % p)
            self._timeline = Timeline(p)
        return self._timeline

    def __repr__(self):
        t = "-" if self.time_ps is None else "%.3f us" % (self.time_ps / 1e6)
        return "<railsim.Result %s, %s %s>" % (self.status, self.time_of, t)


class _Progress:
    """The progress callback: the user's, and a way out for Ctrl-C. An
    exception the user's callback raises stops the run and is raised again
    once rs_run_with has returned. SIGINT, when Python's default handler
    has it, is caught while the run lasts and stops it the same way, then
    raises KeyboardInterrupt: raised inside the callback, ctypes would
    print and drop it (the handler runs before any try in the callback)."""

    def __init__(self, user):
        self.user = user
        self.exc = None
        self.prev = None

    def __call__(self, ctx, now, events, done):
        if self.exc is not None:
            return 1
        try:
            return 1 if self.user is not None and self.user(now, events, done) else 0
        except BaseException as e:  # noqa: B036 - raised again after the run
            self.exc = e
            return 1

    def _sigint(self, signum, frame):
        if self.exc is None:
            self.exc = KeyboardInterrupt()

    def __enter__(self):
        import signal
        import threading
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.prev = signal.signal(signal.SIGINT, self._sigint)
        return self

    def __exit__(self, *exc):
        if self.prev is not None:
            import signal
            signal.signal(signal.SIGINT, self.prev)
        return False


def _execute(lib, sc, name, outdir, force, progress):
    import ctypes
    from . import _lib
    tmp = None
    if outdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="railsim-")
        outdir = tmp.name
    outdir = os.fspath(outdir)
    opts = _lib.RunOpts()
    lib.rs_run_opts_init(ctypes.byref(opts), ctypes.sizeof(opts))
    opts.outdir = os.fsencode(outdir)
    opts.name = os.fsencode(name) if name else None
    opts.force = 1 if force else 0
    cb = _Progress(progress)
    opts.progress = _lib.PROGRESS_FN(cb)
    res = ctypes.c_void_p()
    err = _lib.Err()
    with cb:
        rc = lib.rs_run_with(sc, ctypes.byref(opts), ctypes.byref(res), ctypes.byref(err))
    try:
        if cb.exc is not None:
            raise cb.exc
        if rc != _lib.RS_OK:
            _raise(rc, err)
        summary = json.loads(lib.rs_result_summary_json(res).decode())
        return Result(summary, lib.rs_result_status(res), lib.rs_result_message(res).decode(),
                      lib.rs_result_warning(res).decode(), bool(lib.rs_result_stopped_by_faults(res)),
                      outdir, tmp)
    finally:
        lib.rs_result_destroy(res)


def run(scenario=None, *, sets=None, outdir=None, force=False, progress=None):
    """Run a scenario through librailsim, as `railsim run` does.

    scenario: a dict of keys (docs/scenario-format.md): dotted ones
    ({"topology.gpus": 16}), nested sections ({"topology": {"gpus": 16}})
    or both, dotted ones applied last; a path to a scenario file; or None.
    sets: more keys applied after it (a dict of dotted keys or "KEY=VALUE"
    strings). outdir: where summary.json and timeline.msgpack go; None: a
    temporary directory, removed with the result. force: run even when the
    resource guard says it will not fit. progress(now_ps, events, done):
    called every 65,536 events; a true return stops the run (status
    "interrupted").

    Returns a Result however the run ended (r.ok, r.status, r.message).
    Raises ScenarioError (a ValueError) for a scenario that cannot run,
    with the library's sentence naming the key; OSError for a scenario
    file that cannot be read or an output that cannot be written;
    railsim.LibraryNotFound when librailsim is nowhere to be found."""
    from . import _lib
    lib = _lib.load()
    sc, name = _load(lib, scenario, sets)
    try:
        return _execute(lib, sc, name, outdir, force, progress)
    finally:
        lib.rs_scenario_destroy(sc)


def _pct(a, b):
    """a relative to b, percent (cmd_compare.c's pct); None when either is
    missing or b is 0."""
    return (a - b) / b * 100.0 if a is not None and b not in (None, 0) else None


class Comparison:
    """The same workload on both topologies, as `railsim compare` runs one
    case. rail_only, fat_tree: the two Results; time_of: what the headline
    time is ("iteration", "collective" or "sim_end"); time_pct: rail-only's
    headline time relative to the fat tree's, percent (compare.json's
    rail_only_vs_fat_tree.time_pct; None when a side has none); case: the
    members of a compare.json case that runs give (docs/python.md)."""

    def __init__(self, rail_only, fat_tree):
        self.rail_only = rail_only
        self.fat_tree = fat_tree
        self.time_of = rail_only.time_of
        self.time_pct = _pct(rail_only.time_ps, fat_tree.time_ps)

    def __getitem__(self, kind):
        """c["rail-only"], c["fat-tree"]."""
        return {"rail-only": self.rail_only, "fat-tree": self.fat_tree}[kind]

    @property
    def label(self):
        w = (self.rail_only.scenario or {}).get("workload") or {}
        return w.get("plan") or w.get("trace") or "traffic"

    @property
    def case(self):
        """compare.json's case (docs/cli.md) without what the runs do not
        give: no "settings", no "cost" per side, no cost or power saving."""
        out = {"label": self.label}
        for key, r in (("rail_only", self.rail_only), ("fat_tree", self.fat_tree)):
            s = r.summary
            side = {"time_ps": r.time_ps, "bound_ps": r.bound_ps,
                    "iteration": s.get("iteration"), "collective": s.get("collective"),
                    "payload_bytes": s.get("payload_bytes"), "pfc": s.get("pfc"), "cnp": s.get("cnp"),
                    "topology": s.get("topology")}
            if (r.scenario or {}).get("faults", {}).get("schedule"):
                side.update({"faults": s.get("faults"), "faults_absent": s.get("faults_absent", []),
                             "fault_free": s.get("fault_free"), "stopped": r.stopped_by_faults,
                             "faults_stop": s.get("faults_stop")})
            out[key] = side
        out["rail_only_vs_fat_tree"] = {"time_pct": self.time_pct}
        return out

    def __repr__(self):
        t = "-" if self.time_pct is None else "%+.1f%%" % self.time_pct
        return "<railsim.Comparison %s: rail-only %s vs fat tree>" % (self.time_of, t)


def compare(scenario=None, *, sets=None, outdir=None, force=False, progress=None):
    """Run the scenario's workload on topology.kind=rail-only and on
    fat-tree, everything else the same, as `railsim compare` runs one case
    (no sweeps: call it once per value). Both scenarios are loaded and
    checked before the first run. outdir: DIR/rail-only and DIR/fat-tree
    as `railsim compare -o DIR` writes them (no compare.json); None:
    temporary directories. progress(kind, now_ps, events, done). Returns a
    Comparison; raises as run() does."""
    from . import _lib
    lib = _lib.load()
    loaded = []
    try:
        for kind in KINDS:
            loaded.append(_load(lib, scenario, _sets(sets) + ["topology.kind=" + kind]))
        results = []
        for kind, (sc, name) in zip(KINDS, loaded):
            sub = os.path.join(os.fspath(outdir), kind) if outdir is not None else None
            p = (lambda now, ev, done, k=kind: progress(k, now, ev, done)) if progress else None
            results.append(_execute(lib, sc, name, sub, force, p))
        return Comparison(*results)
    finally:
        for sc, _ in loaded:
            lib.rs_scenario_destroy(sc)


for _c in (ScenarioError, LibraryNotFound, Timeline, Result, Comparison):
    _c.__module__ = "railsim"
