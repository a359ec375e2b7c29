#!/usr/bin/python3
"""schema_check.py - validate JSON files against docs/schema/ (tests/e2e/schema.sh).

Usage: schema_check.py SCHEMA_DIR KIND FILE...
KIND: summary, compare or scenario (KIND.schema.json). Each schema is
first checked to be a valid draft 2020-12 schema; their $refs to each
other are file names relative to SCHEMA_DIR, as an editor resolves them. Prints one line per file, "ok
FILE" or "invalid FILE: at PATH: MESSAGE" (the most relevant error).
Exit 0 when every file is valid, 1 when one is not, 2 on bad usage, 77
when python3-jsonschema is missing (ctest's skip code).
"""
import json
import os
import pathlib
import sys

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:
    sys.stderr.write("schema_check.py: %s lacks python3-jsonschema (scripts/install-deps)\n" % sys.executable)
    sys.exit(77)


def validator(schema_dir, kind):
    store = {}
    for k in ("scenario", "summary", "compare"):
        path = os.path.abspath(os.path.join(schema_dir, k + ".schema.json"))
        with open(path) as f:
            s = json.load(f)
        Draft202012Validator.check_schema(s)
        store[pathlib.Path(path).as_uri()] = s
    uri = pathlib.Path(os.path.abspath(os.path.join(schema_dir, kind + ".schema.json"))).as_uri()
    main = store[uri]
    return Draft202012Validator(main, resolver=jsonschema.RefResolver(uri, main, store=store))


def main(argv):
    if len(argv) < 4 or argv[2] not in ("summary", "compare", "scenario"):
        sys.stderr.write("usage: schema_check.py SCHEMA_DIR summary|compare|scenario FILE...\n")
        return 2
    v = validator(argv[1], argv[2])
    bad = 0
    for path in argv[3:]:
        with open(path, "rb") as f:
            doc = json.load(f)
        err = jsonschema.exceptions.best_match(v.iter_errors(doc))
        if err is None:
            print("ok %s" % path)
        else:
            bad = 1
            where = "/".join(str(p) for p in err.absolute_path) or "(top)"
            print("invalid %s: at %s: %s" % (path, where, err.message[:300]))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
