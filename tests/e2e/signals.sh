#!/bin/sh
# SIGINT and SIGTERM stop a run cleanly: exit 130 / 143, the summary says
# "interrupted", the timeline is marked partial, no temporary file is left.
RS=$1; E2E=$2
. "$E2E/lib.sh"

for sig in INT TERM; do
    want=$([ $sig = INT ] && echo 130 || echo 143)
    "$RS" run -q --set workload.plan=demo-moe --set workload.iterations=20 -o "$TMP/$sig" 2>"$TMP/err" &
    pid=$!
    sleep 1
    kill -$sig $pid
    wait $pid; rc=$?
    if [ $rc -ne $want ]; then fail "SIG$sig: exit $rc, expected $want: $(cat "$TMP/err")"; continue; fi
    v=$(json_get "$TMP/$sig/summary.json" "d['status']")
    p=$("$PY" -c "
import msgpack, sys
with open('$TMP/$sig/timeline.msgpack', 'rb') as f:
    u = msgpack.Unpacker(f, raw=False, strict_map_key=False)
    print(next(u)['partial'])")
    left=$(ls -a "$TMP/$sig" | grep -c '\.tmp$')
    [ "$v" = interrupted ] && [ "$p" = True ] && [ "$left" = 0 ] && grep -q "interrupted by SIG$sig" "$TMP/err" \
        && ok "SIG$sig: exit $rc, summary interrupted, timeline partial" \
        || fail "SIG$sig: status=$v partial=$p tmp=$left: $(cat "$TMP/err")"
done
finish
