#!/bin/sh
# The reproduction experiments (experiments/, docs/validation.md) in their
# --quick form: each runs, writes its table, numbers and plot, and its
# results point the way the paper's do. Directions and exact counts only,
# never timings.
# Usage: experiments.sh PATH/TO/railsim E2E_DIR
RS=$1; E2E=$2
. "$E2E/lib.sh"
EXP="$E2E/../../experiments"
export RAILSIM="$RS"

check() {
    v=$(json_get "$2" "$3" 2>&1)
    [ "$v" = True ] && ok "$1" || fail "$1 ($v)"
}

run_exp() { # run_exp DIR/NAME: quick run into $TMP/out; ok if it wrote .md, .json, .png
    name=$(basename "$1")
    if "$PY" "$EXP/$1" --quick -o "$TMP/out" >"$TMP/$name.stdout" 2>"$TMP/$name.stderr"; then
        ok "$1 --quick runs"
    else
        fail "$1 --quick: exit $?: $(tail -3 "$TMP/$name.stderr")"
        return
    fi
    for ext in md json png; do
        [ -s "$TMP/out/$name.$ext" ] || fail "$1: no $name.$ext"
    done
    cmp -s "$TMP/out/$name.md" "$TMP/$name.stdout" && ok "$1: prints the table it writes" \
        || fail "$1: stdout differs from $name.md"
}

# Table 2 runs every row: the counts are exact.
if "$PY" "$EXP/rail-only/table2" -o "$TMP/out" >"$TMP/t2.out" 2>&1; then
    ok "table2: every row matches its reference"
else
    fail "table2: $(cat "$TMP/t2.out")"
fi
check "table2: the paper's 4-tier row (32,768 GPUs, HB 256, radix 32): 7,168 switches, 262,144 transceivers" \
    "$TMP/out/table2.json" \
    "[(r['fat_tree']['tiers'], r['fat_tree']['switches'], r['fat_tree']['transceivers']) for r in d if (r['gpus'], r['hb'], r['radix']) == (32768, 256, 32)] == [(4, 7168, 262144)] and len(d) == 7 and all(r['match'] for r in d)"

run_exp rail-only/a2a-ratio
check "a2a-ratio: forwarding costs at HB:NIC 1, not at 9; the fat tree with PXN equals rail-only" "$TMP/out/a2a-ratio.json" \
    "d[0]['ratio'] == 1 and d[-1]['ratio'] == 9 and d[0]['overhead_vs_direct_pct'] > d[-1]['overhead_vs_direct_pct'] + 5 and abs(d[-1]['overhead_vs_direct_pct']) < 2 and all(x['overhead_vs_pxn_pct'] == 0 for x in d)"

run_exp rail-only/gpus
check "gpus: rail-only within 1% of the fat tree on a dense model" "$TMP/out/gpus.json" \
    "all(abs(x['diff_pct']) < 1 for x in d)"

run_exp rail-only/hb-size
check "hb-size: a larger HB domain is not slower" "$TMP/out/hb-size.json" \
    "d[-1]['hb'] > d[0]['hb'] and d[-1]['runs']['rail-only']['iter_ms'] <= d[0]['runs']['rail-only']['iter_ms']"

run_exp scaling/meta
check "meta: per-GPU throughput does not rise as the same batch spreads over more GPUs; TP 2 is slower than pure FSDP at small scale; power and energy reported" \
    "$TMP/out/meta.json" \
    "(lambda f, v: f[-1]['gpus'] > f[0]['gpus'] and f[-1]['tokens_per_gpu_s'] <= f[0]['tokens_per_gpu_s'] and v[0]['gpus'] == f[0]['gpus'] and v[0]['vs_fsdp_pct'] < 0 and all(0 < x['power_w'] <= 700 and x['j_per_token'] > 0 for x in f))(d['fsdp'], d['variants'])"

run_exp scaling/ornl
check "ornl: the Frontier system runs; strong scaling below 100 % (the bubble grows as the batch per pipeline shrinks); weak scaling efficiency at most 100 %; MFU and its hardware figure (x 4/3) between 0 and 1" \
    "$TMP/out/ornl.json" \
    "d['strong'][-1]['eff_pct'] < 100 and d['weak'][-1]['eff_pct'] <= 100.0001 and all(0 < r['mfu'] < r['hfu'] < 1 for r in d['peak'] + d['weak'] + d['strong'])"

run_exp hardware/real-clusters
check "real-clusters: NVLS beats the ring on one DGX H100, each within 10% of its nccl-tests measurement" \
    "$TMP/out/real-clusters.json" \
    "(lambda r: r['H100-nvls-1G']['railsim'] > r['H100-ring-1G']['railsim'] and r['H100-nvls-1G']['algo'] == 'nvls' and all(abs(r[k]['diff_pct']) < 10 for k in ('H100-nvls-1G', 'H100-ring-1G', 'H100-2n-ring-1G')))({x['id']: x for x in d['rows']})"

run_exp shared/fragmentation
check "fragmentation: on a cluster of one leaf per rail whole domains in any order run as the packed job; a fully fragmented or random job is slower on both networks" \
    "$TMP/out/fragmentation.json" \
    "(lambda r: r[('fragmented', 0.0)]['fat_vs_packed_pct'] == 0 and all(r[k]['runs'][n]['iter_ms'] > r[('packed', None)]['runs'][n]['iter_ms'] for k in (('fragmented', 1.0), ('random', None)) for n in ('rail-only', 'fat-tree')))({(x['placement'], x['fragmentation']): x for x in d})"

run_exp shared/neighbours
check "neighbours: two jobs sharing the cluster, each timed beside the other and alone on the same GPUs; packed on whole domains neither slows the other; at random a job is slower than packed" \
    "$TMP/out/neighbours.json" \
    "(lambda r: all(j['slowdown'] == 1.0 for k in ('rail-only', 'fat-tree') for j in r[('packed', k)]['jobs']) and all(abs(j['time_ms'] / j['alone_ms'] - j['slowdown']) < 1e-9 and j['slowdown'] > 0.95 for x in d for j in x['jobs']) and all(a['alone_ms'] > b['alone_ms'] for k in ('rail-only', 'fat-tree') for a, b in zip(r[('random', k)]['jobs'], r[('packed', k)]['jobs'])))({(x['placement'], x['kind']): x for x in d})"

run_exp shared/classes
check "classes: each case's priorities as asked; the job at priority 5 is never slowed more than the other; slowdowns well formed" \
    "$TMP/out/classes.json" \
    "all([j['priority'] for j in x['jobs']] == [5 if j['name'] == x['high'] else 3 for j in x['jobs']] and all(j['slowdown'] > 0.95 and abs(j['time_ms'] / j['alone_ms'] - j['slowdown']) < 1e-9 for j in x['jobs']) and (x['high'] is None or min(x['jobs'], key=lambda j: j['slowdown'])['slowdown'] == next(j['slowdown'] for j in x['jobs'] if j['name'] == x['high'])) for x in d)"

run_exp shared/scheduler
check "scheduler: every arrival completes on both networks; packed on whole domains no job slows another and both networks deliver the same; slowdowns and waits well formed" \
    "$TMP/out/scheduler.json" \
    "(lambda r: all(x['completed'] == x['arrivals'] for x in d) and all(r[('packed', k)]['max_slowdown'] == 1.0 for k in ('rail-only', 'fat-tree')) and r[('packed', 'rail-only')]['iterations_per_s'] == r[('packed', 'fat-tree')]['iterations_per_s'] and all(j['wait_ms'] >= 0 and j['slowdown'] > 0.95 for x in d for j in x['jobs']))({(x['placement'], x['kind']): x for x in d})"

# --replot redraws a PNG from the JSON alone (no railsim needed).
rm -f "$TMP/out/a2a-ratio.png"
RAILSIM=/nonexistent "$PY" "$EXP/rail-only/a2a-ratio" --replot -o "$TMP/out" >/dev/null 2>"$TMP/err" \
    && [ -s "$TMP/out/a2a-ratio.png" ] && ok "--replot redraws from the JSON" || fail "--replot: $(cat "$TMP/err")"

# Bad input: no railsim to run.
RAILSIM=/nonexistent "$PY" "$EXP/rail-only/table2" -o "$TMP/x" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && ok "no railsim: exit 2, one line" || fail "no railsim: exit $rc: $(cat "$TMP/err")"

finish
