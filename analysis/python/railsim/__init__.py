"""railsim - run railsim from Python and read its outputs (docs/python.md,
docs/analysis.md).

    import railsim
    r = railsim.run({"topology.gpus": 16, "traffic.kind": "permutation"})
    r.summary["flows"]["completed"]                # summary.json as a dict
    r.timeline["flow"]                             # a pandas DataFrame per record kind
    c = railsim.compare("scenario.json")           # rail-only and fat tree
    c.time_pct, c.rail_only.time_ps, c.fat_tree.time_ps

run and compare go through librailsim (ctypes), loaded at the first run,
never at import; pandas is imported when the first DataFrame is built.
The readers below need only the standard library and msgpack:

    s = railsim.read_summary("out/run")            # summary.json as a dict
    c = railsim.read_compare("out/compare")        # compare.json as a dict
    for rec in railsim.read_timeline("out/run/timeline.msgpack"):
        if rec["record"] == "op":
            print(rec["rank"], rec["op"], rec["end_ps"] - rec["start_ps"])

The readers need only the standard library and msgpack (Debian's
python3-msgpack, under /usr/bin/python3); the timeline is streamed, so
memory does not grow with the file. Every reader's error is a FormatError (a ValueError) whose
message names the file and what was expected; OSError passes through.
The formats: docs/summary-format.md, docs/cli.md ("compare.json"),
docs/timeline-format.md; their JSON Schemas: docs/schema/.
"""
import json
import os

__all__ = ["FormatError", "TruncatedError", "read_summary", "read_compare",
           "read_timeline", "compare_runs", "dimension", "RECORD_FIELDS",
           "run", "compare", "Result", "Comparison", "Timeline", "ScenarioError", "LibraryNotFound"]

SUMMARY_VERSION = 1
COMPARE_VERSION = 1
TIMELINE_VERSION = 1  # RS_TIMELINE_VERSION of tlformat.h (tests/e2e/python.sh checks they agree)


class FormatError(ValueError):
    """A file that is not what it should be; str(e) names the file."""


class TruncatedError(FormatError):
    """A timeline without its end record (a run that died while writing)."""


# Field names of each timeline record kind, by element index 1..n
# (docs/timeline-format.md, "Records"). The record's kind name is under
# "record", since fault records have a field named "kind".
RECORD_FIELDS = {
    1: ("name", ("space", "id", "name")),
    2: ("op", ("rank", "start_ps", "end_ps", "op", "bytes", "comm", "label")),
    3: ("coll", ("id", "op", "algo", "comm", "nranks", "bytes", "start_ps", "end_ps")),
    4: ("flow", ("src", "dst", "bytes", "start_ps", "end_ps")),
    5: ("sample", ("time_ps", "port", "tx_bytes", "queue_bytes", "util")),
    6: ("pfc", ("time_ps", "port", "prio_mask", "pause")),
    7: ("ecn", ("time_ps", "port", "what", "count")),
    8: ("drop", ("time_ps", "port", "reason", "packets", "bytes")),
    9: ("fault", ("time_ps", "target", "kind", "detail")),
    10: ("end", ("complete", "records")),
}
_END = 10


def _json_file(path, name, fmt, version, what):
    """The object in path (or path/name when path is a directory), checked
    to be fmt of the given version."""
    if os.path.isdir(path):
        path = os.path.join(path, name)
    with open(path, "rb") as f:
        data = f.read()
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise FormatError("%s: not JSON: %s" % (path, e)) from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise FormatError('%s: not a railsim %s; expected "format": "%s"' % (path, what, fmt))
    if doc.get("version") != version:
        raise FormatError("%s: %s version %r; this reader knows version %d"
                          % (path, what, doc.get("version"), version))
    return doc


def read_summary(path):
    """summary.json of a run directory (path: the directory or the file) as
    a dict, keys in file order (docs/summary-format.md)."""
    return _json_file(path, "summary.json", "railsim-summary", SUMMARY_VERSION, "summary")


def read_compare(path):
    """compare.json of a `railsim compare -o DIR` directory (path: DIR or
    the file) as a dict: {"format", "version", "cases": [...]}, one case
    per workload and sweep value (docs/cli.md, "compare.json")."""
    return _json_file(path, "compare.json", "railsim-compare", COMPARE_VERSION, "comparison")


def compare_runs(path):
    """The run directories of a compare directory, one dict per case of its
    compare.json, in order: {"label", "rail-only", "fat-tree"} with the
    two paths (DIR/rail-only and DIR/fat-tree for one case, DIR/caseN/...
    for several); "dragonfly" in place of "rail-only" for a comparison
    run with --against dragonfly."""
    doc = read_compare(path)
    d = os.path.dirname(path) if os.path.isfile(path) else path
    cases = doc.get("cases") or []
    out = []
    for i, c in enumerate(cases):
        base = d if len(cases) == 1 else os.path.join(d, "case%d" % i)
        first = "dragonfly" if "dragonfly" in c else "rail-only"
        out.append({"label": c.get("label", ""),
                    first: os.path.join(base, first),
                    "fat-tree": os.path.join(base, "fat-tree")})
    return out


def read_timeline(path, records=None):
    """Yield the timeline at path as dicts, streaming: first the header
    ({"record": "header", "format", "version", "partial", ...}, the file's
    header map; "scenario" stays JSON text), then one dict per record with
    "record" set to its kind's name ("name", "op", "coll", "flow",
    "sample", "pfc", "ecn", "drop", "fault") and its elements under the
    names of docs/timeline-format.md, and last the end record ({"record":
    "end", "complete", "records"}). A record of a kind this reader does
    not know comes as {"record": KIND (the number), "values": [...]};
    trailing elements a later minor version adds are dropped.

    records: a set of record names to yield (the others are read and
    checked, not built), or None for all; the header and end are always
    yielded.

    Raises FormatError, naming the file and the record index, for a file
    that is not a version-1 timeline, a record that is not an array or
    has fewer elements than its kind needs, an end record whose count
    disagrees, or bytes after the end record; TruncatedError (after
    yielding every record before the cut) for a file without an end
    record."""
    import msgpack  # here, so summaries read without it

    index = 0
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, strict_map_key=False)
        try:
            hdr = u.unpack()
        except msgpack.OutOfData:
            raise TruncatedError("%s: empty or truncated timeline header" % path) from None
        except (ValueError, msgpack.exceptions.UnpackException) as e:
            raise FormatError("%s: not a railsim timeline: %s" % (path, e)) from None
        if not isinstance(hdr, dict) or hdr.get("format") != "railsim-timeline":
            raise FormatError('%s: not a railsim timeline; expected a header map with "format": '
                              '"railsim-timeline"' % path)
        if hdr.get("version") != TIMELINE_VERSION:
            raise FormatError("%s: timeline version %r; this reader knows version %d"
                              % (path, hdr.get("version"), TIMELINE_VERSION))
        h = {"record": "header"}
        h.update(hdr)
        yield h
        while True:
            try:
                rec = u.unpack()
            except msgpack.OutOfData:
                raise TruncatedError("%s: truncated timeline: no end record after %d records"
                                     % (path, index)) from None
            except (ValueError, msgpack.exceptions.UnpackException) as e:
                raise FormatError("%s: record %d: malformed msgpack: %s" % (path, index, e)) from None
            if not isinstance(rec, (list, tuple)) or not rec or not isinstance(rec[0], int) \
                    or isinstance(rec[0], bool):
                raise FormatError("%s: record %d: expected an array whose first element is its kind"
                                  % (path, index))
            kind = rec[0]
            spec = RECORD_FIELDS.get(kind)
            if spec is None:
                if records is None:
                    yield {"record": kind, "values": list(rec[1:])}
                index += 1
                continue
            name, fields = spec
            if len(rec) <= len(fields):
                raise FormatError("%s: record %d: a %s record has %d elements; expected %d"
                                  % (path, index, name, len(rec), len(fields) + 1))
            if kind == _END:
                if rec[2] != index:
                    raise FormatError("%s: end record counts %r records; the file has %d"
                                      % (path, rec[2], index))
                if bool(rec[1]) == bool(hdr.get("partial")):
                    raise FormatError("%s: end record says complete=%r but the header says partial=%r"
                                      % (path, rec[1], hdr.get("partial")))
                yield {"record": "end", "complete": rec[1], "records": rec[2]}
                try:
                    u.unpack()
                except msgpack.OutOfData:
                    return
                except (ValueError, msgpack.exceptions.UnpackException):
                    pass
                raise FormatError("%s: bytes after the end record" % path)
            if records is None or name in records:
                d = {"record": name}
                for i, k in enumerate(fields):
                    d[k] = rec[i + 1]
                yield d
            index += 1


def dimension(name):
    """The parallelism dimension of a communicator name, as railsim report
    groups them: the name up to its first separator or digit ("dp[3]" ->
    "dp", "tp0" -> "tp"); "comm" for an empty name."""
    if not name:
        return "comm"
    n = 0
    while n < len(name) and name[n] not in "[:./# -_0123456789":
        n += 1
    return name[:n] if n else name


# Last: _run reads RECORD_FIELDS and read_timeline from here.
from ._run import (run, compare, Result, Comparison, Timeline,  # noqa: E402
                   ScenarioError, LibraryNotFound)
