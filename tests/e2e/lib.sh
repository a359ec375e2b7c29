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

# same_runs A B SUB...: each A/SUB and B/SUB holds the same run: summary
# (host fields aside) and timeline.
same_runs() {
    a=$1; b=$2; shift 2
    for k in "$@"; do
        [ "$(strip_host "$a/$k/summary.json")" = "$(strip_host "$b/$k/summary.json")" ] &&
            cmp -s "$a/$k/timeline.msgpack" "$b/$k/timeline.msgpack" || return 1
    done
}

finish() {
    echo "$PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}

# expect_bad NAME PATTERN ARGS...: `railsim ARGS` is bad input: exit 2,
# exactly one line on stderr that matches PATTERN (grep), nothing on
# stdout, and nothing at $BAD_OUT (a path the command would write; set it
# before calling, unset or empty = not checked), which is removed first.
BAD_OUT=
expect_bad() {
    name=$1; pat=$2; shift 2
    [ -n "$BAD_OUT" ] && rm -rf "$BAD_OUT"
    "$RS" "$@" >"$TMP/bad.stdout" 2>"$TMP/bad.stderr"
    rc=$?
    lines=$(wc -l <"$TMP/bad.stderr")
    if [ $rc -ne 2 ]; then fail "$name: exit $rc, expected 2: $(cat "$TMP/bad.stderr")"; return; fi
    if [ "$lines" -ne 1 ]; then fail "$name: $lines stderr lines: $(cat "$TMP/bad.stderr")"; return; fi
    if ! grep -q -- "$pat" "$TMP/bad.stderr"; then fail "$name: message lacks '$pat': $(cat "$TMP/bad.stderr")"; return; fi
    if [ -s "$TMP/bad.stdout" ]; then fail "$name: printed on stdout"; return; fi
    if [ -n "$BAD_OUT" ] && [ -e "$BAD_OUT" ]; then fail "$name: $BAD_OUT was created"; return; fi
    ok "$name: $(cat "$TMP/bad.stderr")"
}
