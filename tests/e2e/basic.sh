#!/bin/sh
# railsim run end to end: the default scenario and each traffic kind write a
# complete summary.json whose numbers are consistent with each other.
RS=$1; E2E=$2
. "$E2E/lib.sh"

"$RS" --version | grep -q '^railsim [0-9]' && ok "--version" || fail "--version"
"$RS" help | grep -q 'run \[SCENARIO.json\]' && ok "help" || fail "help"
"$RS" help keys | grep -q 'topology.gpus' && ok "help keys" || fail "help keys"

if "$RS" run -q -o "$TMP/default" && [ -f "$TMP/default/summary.json" ]; then
    ok "default run writes summary.json"
else
    fail "default run"
fi
ls -a "$TMP/default" | grep -q '\.tmp' && fail "temporary file left behind" || ok "no temporary files"

for kind in single permutation all-to-all incast; do
    out="$TMP/$kind"
    if ! "$RS" run -q --set traffic.kind=$kind --set traffic.bytes=65536 -o "$out" "$E2E/small.json"; then
        fail "$kind: run failed"; continue
    fi
    s="$out/summary.json"
    v=$(json_get "$s" "d['status'] == 'complete' and d['flows']['count'] == d['flows']['completed'] > 0 and d['packets']['sent'] == d['packets']['delivered'] + d['packets']['dropped'] and d['packets']['in_flight'] == 0 and d['flows']['fct_ps']['min'] <= d['flows']['fct_ps']['p50'] <= d['flows']['fct_ps']['p99'] <= d['flows']['fct_ps']['max'] and d['sim_end_ps'] >= d['flows']['fct_ps']['max'] and d['packet_hops'] > 0 and d['events'] > 0 and d['topology']['switches'] > 0")
    [ "$v" = True ] && ok "$kind: summary consistent" || fail "$kind: summary inconsistent"
done

# Expected flow counts per pattern on 16 GPUs.
[ "$(json_get "$TMP/single/summary.json" "d['flows']['count']")" = 1 ] && ok "single: 1 flow" || fail "single flow count"
[ "$(json_get "$TMP/permutation/summary.json" "d['flows']['count']")" = 16 ] && ok "permutation: 16 flows" || fail "permutation flow count"
[ "$(json_get "$TMP/all-to-all/summary.json" "d['flows']['count']")" = 240 ] && ok "all-to-all: 240 flows" || fail "all-to-all flow count"
[ "$(json_get "$TMP/incast/summary.json" "d['flows']['count']")" = 4 ] && ok "incast: fan_in flows" || fail "incast flow count"

# Four tiers: 32 GPUs at radix 4 are the k = 4 fat tree of four tiers
# (2 (k/2)^4 hosts; 16 + 16 + 16 + 8 switches, 4 x 32 cables). An
# all-to-all at packet level reaches every GPU from every GPU across every
# tier, also with a top switch down; the switch count is railsim cost's.
"$RS" run -q --set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=4 --set traffic.kind=all-to-all \
    --set traffic.bytes=65536 -o "$TMP/tier4"
"$RS" run -q --set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=4 --set traffic.kind=all-to-all \
    --set traffic.bytes=65536 --fault "2us switch-down core0" -o "$TMP/tier4f"
"$RS" cost --gpus 32 --hb 1 --radix 4 --json >"$TMP/tier4cost.json"
v=$("$PY" -c "
import json
c = json.load(open('$TMP/tier4cost.json'))['fat_tree']
ok = True
for n in ('tier4', 'tier4f'):
    d = json.load(open('$TMP/%s/summary.json' % n))
    t = d['topology']
    ok &= d['status'] == 'complete' and d['flows']['completed'] == d['flows']['count'] == 32 * 31
    ok &= t['tiers'] == 4 == c['tiers'] and t['switches'] == 56 == c['switches'] and t['links'] == 128 == c['links']
    names = [p['name'] for p in d['ports']]
    ok &= any(x.startswith('agg2-') for x in names) and any(x.startswith('agg3-') for x in names)
f = json.load(open('$TMP/tier4f/summary.json'))['faults'][0]
ok &= f['target'] == 'core0' and f['applied']
print(ok)")
[ "$v" = True ] && ok "4-tier fat tree: every GPU reaches every GPU at packet level" || fail "4-tier fat tree run"
# Rail-optimized: 512 GPUs in HB domains of 8 at radix 8 are 128 rail-pure
# leaves of 4, four tiers; rail-only rails of 64 need three.
for k in fat-tree rail-only; do
    "$RS" run --set topology.kind=$k --set topology.gpus=512 --set topology.hb_size=8 --set topology.radix=8 \
        --set traffic.kind=permutation --set traffic.bytes=262144 -o "$TMP/t4-$k" >"$TMP/t4-$k.txt"
done
grep -q "fat-tree, 512 GPUs, 448 switches in 4 tier(s), 2048 links" "$TMP/t4-fat-tree.txt" &&
grep -q "rail-only, 512 GPUs, 320 switches in 3 tier(s), 1536 links" "$TMP/t4-rail-only.txt" &&
[ "$(json_get "$TMP/t4-fat-tree/summary.json" "d['flows']['completed']")" = 512 ] \
    && ok "512 GPUs at radix 8: 4-tier fat tree, 3-tier rails" || fail "512 GPUs at radix 8: $(head -1 "$TMP/t4-fat-tree.txt"); $(head -1 "$TMP/t4-rail-only.txt")"

# Every summary key the docs promise is there.
v=$(json_get "$TMP/default/summary.json" "all(k in d for k in ['sim_end_ps','flows','packets','packet_hops','events','wall_s','peak_rss_bytes','topology']) and all(k in d['flows']['fct_ps'] for k in ['min','mean','p50','p99','max']) and all(k in d['packets'] for k in ['sent','delivered','dropped','retransmitted']) and all(k in d['topology'] for k in ['switches','links','tiers'])")
[ "$v" = True ] && ok "summary has the documented keys" || fail "summary keys"

# The summary's scenario echo is itself a valid scenario that reproduces the run.
json_get "$TMP/permutation/summary.json" "json.dumps(d['scenario'])" > "$TMP/echo.json"
"$RS" run -q -o "$TMP/echo" "$TMP/echo.json" && [ "$(strip_host "$TMP/echo/summary.json")" = "$(strip_host "$TMP/permutation/summary.json")" ] \
    && ok "scenario echo reproduces the run" || fail "scenario echo"

# Lossy: small buffers drop, RoCE retransmits, everything still arrives.
"$RS" run -q --set pfc.enabled=false --set traffic.kind=incast --set traffic.fan_in=8 --set topology.buffer_bytes=32768 \
    --set traffic.bytes=262144 -o "$TMP/lossy" "$E2E/small.json"
v=$(json_get "$TMP/lossy/summary.json" "d['packets']['dropped'] > 0 and d['packets']['retransmitted'] > 0 and d['flows']['completed'] == 8 and d['payload_bytes']['goodput'] == 8 * 262144")
[ "$v" = True ] && ok "lossy incast recovers every byte" || fail "lossy incast"

# Ideal transport with losses cannot recover: exit 1, summary says incomplete.
"$RS" run -q --set pfc.enabled=false --set traffic.kind=incast --set traffic.fan_in=8 --set topology.buffer_bytes=32768 \
    --set traffic.bytes=262144 --set transport.kind=ideal -o "$TMP/ideal-lossy" "$E2E/small.json" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q 'undelivered' "$TMP/err" && [ "$(json_get "$TMP/ideal-lossy/summary.json" "d['status']")" = incomplete ] \
    && ok "unrecoverable loss: exit 1 and status incomplete" || fail "unrecoverable loss (rc=$rc)"
# Every key the program knows is documented in docs/scenario-format.md.
missing=""
for k in $("$RS" help keys | awk 'NR > 1 {print $1}'); do
    grep -q "| \`$k\` |" "$E2E/../../docs/scenario-format.md" || missing="$missing $k"
done
[ -z "$missing" ] && ok "every scenario key is documented" || fail "undocumented keys:$missing"

# Every command has its help: CMD --help and help CMD print the same text,
# exit 0, before reading any argument (trace info --help opens no file).
for c in run compare faults validate cost trace report plot export help; do
    "$RS" $c --help >"$TMP/h1" 2>&1; r1=$?
    "$RS" help $c >"$TMP/h2" 2>&1; r2=$?
    if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && cmp -s "$TMP/h1" "$TMP/h2" && grep -q "^usage: railsim $c" "$TMP/h1" \
        && grep -q '^example:' "$TMP/h1"; then ok "$c --help"; else fail "$c --help (exit $r1/$r2): $(head -2 "$TMP/h1")"; fi
done
"$RS" trace info --help >/dev/null 2>&1 && "$RS" run -h >/dev/null 2>&1 && ok "trace info --help, run -h: help, exit 0" \
    || fail "trace info --help / run -h"
"$RS" help nosuch >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "help: no command 'nosuch'" "$TMP/err" && ok "help of an unknown command: exit 2" || fail "help nosuch: $(cat "$TMP/err")"
# --set's value is not an option: a key set to "--help" runs (and is refused as a value, not shown help).
"$RS" run -q --set traffic.kind=--help "$E2E/small.json" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "traffic.kind" "$TMP/err" && ok "--set KEY=--help is a value" || fail "--set KEY=--help: $(cat "$TMP/err")"
# The man page and the bash completion come from the same table.
"$RS" help --man >"$TMP/railsim.1" && grep -q '^\.TH RAILSIM 1' "$TMP/railsim.1" && grep -q '^\.SS faults' "$TMP/railsim.1" \
    && ok "help --man: a man page with every command" || fail "help --man"
if command -v man >/dev/null 2>&1; then
    w=$(MANWIDTH=80 man --warnings -l "$TMP/railsim.1" 2>&1 >/dev/null)
    [ -z "$w" ] && ok "man page renders without warnings" || fail "man warnings: $w"
fi
"$RS" help --completion >"$TMP/comp.sh" && bash -n "$TMP/comp.sh" \
    && [ "$(bash -c '. "$1"; COMP_WORDS=(railsim run --set routing.ec); COMP_CWORD=3; _railsim; echo "${COMPREPLY[*]}"' _ "$TMP/comp.sh")" = "routing.ecmp=" ] \
    && ok "help --completion: bash completes scenario keys after --set" || fail "help --completion"
# The human summary (docs/cli.md, "Units"): sizes in binary units, times
# in the unit that fits; PFC, ECN and CNP lines when there were any, with
# the summary's counts (an incast of 4 onto one GPU pauses and marks; a
# single flow does neither).
"$RS" run --set traffic.kind=incast --set traffic.bytes=1000000 -o "$TMP/incast_h" "$E2E/small.json" >"$TMP/incast_h.out"
s="$TMP/incast_h/summary.json"
p=$(json_get "$s" "d['pfc']['pauses_sent']"); r=$(json_get "$s" "d['pfc']['resumes_sent']")
m=$(json_get "$s" "d['ecn']['marked']"); c=$(json_get "$s" "d['cnp']['sent']"); cr=$(json_get "$s" "d['cnp']['received']")
[ "$p" -gt 0 ] && [ "$m" -gt 0 ] && [ "$c" -gt 0 ] \
    && grep -q "^  PFC        $p pauses, $r resumes sent, ports paused [0-9.]* [nmu]*s in all$" "$TMP/incast_h.out" \
    && grep -q "^  ECN        $m packets marked$" "$TMP/incast_h.out" \
    && grep -q "^  CNP        $c sent, $cr received$" "$TMP/incast_h.out" \
    && grep -q "^  flows      4 of 4 completed, 3.81 MiB$" "$TMP/incast_h.out" \
    && grep -Eq "^  simulated  [0-9]+\.[0-9]{3} (ns|us|ms|s) in " "$TMP/incast_h.out" \
    && ok "run prints PFC, ECN and CNP lines, sizes in MiB" || fail "run human summary: $(cat "$TMP/incast_h.out")"
"$RS" run --set traffic.kind=single --set traffic.bytes=65536 "$E2E/small.json" >"$TMP/single_h.out"
grep -q "^  flows      1 of 1 completed, 64.00 KiB$" "$TMP/single_h.out" && ! grep -Eq "^  (PFC|ECN|CNP) " "$TMP/single_h.out" \
    && ok "run: no PFC/ECN/CNP lines without pauses or marks" || fail "run single: $(cat "$TMP/single_h.out")"
# The progress line (docs/cli.md): on a terminal, percent done and an ETA
# for a collective (its end is known), on stderr only; none with CI=true or
# without a terminal. script(1) gives the run a terminal.
PROG="--set topology.gpus=32 --set topology.hb_size=8 --set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=268435456 --set traffic.iters=12"
if command -v script >/dev/null 2>&1; then
    env -u CI script -qec "'$RS' run $PROG '$E2E/small.json' >'$TMP/prog.out'" /dev/null >"$TMP/prog.tty" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -Eq '[0-9]+\.[0-9] %, ETA [^;]+; simulated [0-9.]+ (ns|us|ms|s), [0-9]+ events' "$TMP/prog.tty" \
        && ! grep -q 'ETA' "$TMP/prog.out" && grep -Eq '^  collective allreduce \(ring(/[a-z0-9]+)?\), 32 ranks, 256.00 MiB, 12 of 12' "$TMP/prog.out" \
        && ok "progress line: percent and ETA on a terminal, never on stdout" \
        || fail "progress line (exit $rc): $(tr '\r' '\n' <"$TMP/prog.tty" | tail -3)"
    CI=true script -qec "'$RS' run $PROG '$E2E/small.json' >/dev/null" /dev/null >"$TMP/prog_ci.tty" 2>&1
    ! grep -q 'ETA' "$TMP/prog_ci.tty" && ok "progress line: none with CI=true" || fail "progress line shown with CI=true"
else
    ok "progress line: not checked (no script(1))"
fi
env -u CI "$RS" run $PROG "$E2E/small.json" >/dev/null 2>"$TMP/prog.err"
! grep -q 'ETA' "$TMP/prog.err" && ok "progress line: none without a terminal" || fail "progress line without a terminal"
finish
