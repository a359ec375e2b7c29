#!/bin/sh
# railsim cost: counts equal the hand-computed Clos counts of
# tests/unit/test_cost.c and docs/cost.md, --json parses and has every
# documented field, the text table carries the same numbers, and bad input
# exits 2 with one line naming the option or the parts file.
RS=$1; E2E=$2
. "$E2E/lib.sh"

# check NAME EXPR ARGS...: run `railsim cost ARGS --json` and evaluate the
# Python boolean EXPR over the parsed object `d`.
check() {
    name=$1; expr=$2; shift 2
    if ! "$RS" cost "$@" --json >"$TMP/cost.json" 2>"$TMP/stderr"; then
        fail "$name: exit $? ($(cat "$TMP/stderr"))"; return
    fi
    if "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['rail_only']; f=d['fat_tree']; s=d['saving_pct']; sys.exit(0 if ($expr) else 1)" "$TMP/cost.json"; then
        ok "$name"
    else
        fail "$name: $expr is false for $(cat "$TMP/cost.json" | tr -d ' \n' | cut -c1-600)"
    fi
}

# k = 16 three-tier fat tree: k^2/2 + k^2/2 + k^2/4 = 320 switches, 3,072 cables.
check "k=16 fat tree, 1024 GPUs, hb 1" \
    "f['tiers']==3 and f['switches']==320 and f['links']==3072 and f['switch_ports']==5120 and f['transceivers']==6144 and f['switches_per_tier']==[128,128,64]" \
    --gpus 1024 --hb 1 --radix 16
check "1024 GPUs, K=8, R=64: equal designs" \
    "f['switches']==48==r['switches'] and f['links']==2048==r['links'] and f['transceivers']==4096==r['transceivers'] and f['cost_usd']==3829760==r['cost_usd'] and f['power_w']==95232 and s['cost']==0" \
    --gpus 1024 --hb 8 --radix 64
check "1024 GPUs, K=8, R=128: rail-only one tier" \
    "f['tiers']==2 and f['switches']==24 and r['tiers']==1 and r['switches']==8 and r['switch_ports']==1024 and r['links']==1024 and r['transceivers']==2048 and f['cost_usd']==3829760 and r['cost_usd']==1531904 and r['power_w']==39936 and abs(s['cost']-60.0)<1e-9 and abs(s['power']-58.0645)<1e-3" \
    --gpus 1024 --hb 8 --radix 128
check "16384 GPUs, K=8, R=64" \
    "f['tiers']==3 and f['switches']==1280 and f['links']==49152 and f['transceivers']==98304 and f['cost_usd']==98041856 and r['tiers']==2 and r['switches']==768 and r['links']==32768 and r['transceivers']==65536 and r['cost_usd']==61276160 and abs(s['cost']-37.5)<1e-9" \
    --gpus 16384 --hb 8 --radix 64
# The rail-only paper's Table 2 rows (docs/cost.md; test_cost pins the same
# counts): fat tree tiers/switches/transceivers, then rail-only's.
for row in "16384 8 64 3 1280 98304 2 768 65536" "32768 8 128 3 1280 196608 2 768 131072" \
           "65536 8 128 3 2560 393216 2 1536 262144" "32768 256 32 4 7168 262144 2 3072 131072" \
           "65536 256 32 4 14336 524288 2 6144 262144" "32768 256 64 3 2560 196608 2 1536 131072" \
           "32768 256 128 3 1280 196608 1 256 65536"; do
    set -- $row
    check "Table 2: $1 GPUs, HB $2, radix $3" \
        "f['tiers']==$4 and f['switches']==$5 and f['transceivers']==$6 and r['tiers']==$7 and r['switches']==$8 and r['transceivers']==$9 and len(f['switches_per_tier'])==$4" \
        --gpus $1 --hb $2 --radix $3
done
check "64 GPUs: packed rail switch" \
    "r['switches']==1 and r['switches_logical']==8 and r['rails_per_switch']==8 and f['switches']==1 and f['links']==64 and s['cost']==0" \
    --gpus 64 --hb 8 --radix 64
check "--no-rail-packing counts as simulated" \
    "r['switches']==8 and r['switches_logical']==8" \
    --gpus 64 --hb 8 --radix 64 --no-rail-packing
check "--nic-copper" \
    "f['cost_usd']==3217408 and r['cost_usd']==919552 and r['copper_links']==1024 and r['transceivers']==0" \
    --gpus 1024 --hb 8 --radix 128 --nic-copper
check "--oversubscription 3 shrinks the spine" \
    "f['switches'] < 24 and d['input']['oversubscription']==3" \
    --gpus 1024 --hb 8 --radix 128 --oversubscription 3

printf '{"transceiver_usd": 0, "transceiver_w": 0}\n' >"$TMP/parts.json"
check "--parts overrides prices" \
    "r['cost_usd']==765952 and f['cost_usd']==2297856 and r['transceiver_usd']==0 and d['parts']['transceiver_usd']==0" \
    --gpus 1024 --hb 8 --radix 128 --parts "$TMP/parts.json"

# The text table carries the same numbers.
if "$RS" cost --gpus 1024 --hb 8 --radix 128 >"$TMP/text" 2>&1 &&
   grep -q 'rail-only saves 60.00 % of the cost and 58.06 % of the power' "$TMP/text" &&
   grep -q '\$1,531,904 *\$3,829,760' "$TMP/text" &&
   grep -q '^  network cost  *\$1,531,904  *\$3,829,760$' "$TMP/text" &&
   grep -q '^  network power  *39.94 kW  *95.23 kW$' "$TMP/text" &&
   grep -q 'switches  *8  *24' "$TMP/text"; then
    ok "text table"
else
    fail "text table: $(cat "$TMP/text")"
fi

BAD_OUT=
printf '{"transciever_usd": 1}\n' >"$TMP/typo.json"
printf '{"zzz": 1}\n' >"$TMP/unknown.json"
printf '{"dac_usd": "cheap"}\n' >"$TMP/string.json"
printf '{"dac_usd": -1}\n' >"$TMP/negative.json"
printf '{"whole_switches": 0.5}\n' >"$TMP/whole.json"
printf '{"dac_usd": 1,}\n' >"$TMP/syntax.json"
printf '[1]\n' >"$TMP/array.json"
expect_bad "parts typo" "typo.json: unknown part 'transciever_usd' (did you mean 'transceiver_usd'?)" cost --parts "$TMP/typo.json"
expect_bad "parts unknown" "unknown.json: unknown part 'zzz'; expected one of" cost --parts "$TMP/unknown.json"
expect_bad "parts not a number" 'string.json: dac_usd: expected a number, got "cheap"' cost --parts "$TMP/string.json"
expect_bad "parts negative" "negative.json: parts.dac_usd" cost --parts "$TMP/negative.json"
expect_bad "parts whole_switches" "parts.whole_switches" cost --parts "$TMP/whole.json"
expect_bad "parts syntax" "syntax.json:1:" cost --parts "$TMP/syntax.json"
expect_bad "parts not an object" "array.json" cost --parts "$TMP/array.json"
expect_bad "parts missing" "nope.json" cost --parts "$TMP/nope.json"
expect_bad "gpus not a number" "--gpus" cost --gpus many
expect_bad "gpus zero" "--gpus" cost --gpus 0
expect_bad "gpus not multiple" "--gpus (topology.gpus)" cost --gpus 12 --hb 8
expect_bad "odd radix" "--radix" cost --radix 7
expect_bad "radix too small" "topology.radix" cost --gpus 8 --hb 1 --radix 2
expect_bad "nic speed" "--nic-gbps" cost --nic-gbps 0
expect_bad "oversubscription" "--oversubscription" cost --oversubscription 0.5
expect_bad "missing value" "--hb: expected a value" cost --hb
expect_bad "unknown option" "--frobnicate" cost --frobnicate
finish
