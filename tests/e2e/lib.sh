# Shared helpers for end-to-end tests: sourced by each test script.
# Usage in a test: . "$E2E/lib.sh"; RS=path/to/railsim
set -u
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/railsim-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILS=0
PASSES=0

ok()   { PASSES=$((PASSES + 1)); echo "ok   $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; }

# json_get FILE EXPR: print a value from a JSON file (EXPR indexes `d`).
json_get() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# Summary without the host-dependent fields, for byte comparison.
strip_host() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); d.pop('wall_s'); d.pop('peak_rss_bytes'); print(json.dumps(d, sort_keys=True))" "$1"; }

finish() {
    echo "$PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}
