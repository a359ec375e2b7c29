#!/bin/sh
# Same scenario and seed: byte-identical summaries (host fields aside),
# timelines and pcap captures, for every traffic kind (synthetic patterns,
# collectives, plan replays, faults drawn by class), both topologies and
# both fidelities; a different seed changes the random parts.
RS=$1; E2E=$2
. "$E2E/lib.sh"

# same NAME ARGS...: two runs of ARGS give the same summary (host fields
# aside) and byte-identical timeline and capture files.
same() {
    name=$1; shift
    rm -rf "$TMP/a" "$TMP/b"
    "$RS" run -q "$@" -o "$TMP/a" && "$RS" run -q "$@" -o "$TMP/b" || { fail "$name: run failed"; return; }
    if [ "$(strip_host "$TMP/a/summary.json")" != "$(strip_host "$TMP/b/summary.json")" ]; then
        fail "$name: summaries differ"; return
    fi
    files=$(cd "$TMP/a" && find . -type f ! -name summary.json | sort)
    for f in $files; do
        cmp -s "$TMP/a/$f" "$TMP/b/$f" || { fail "$name: $f differs"; return; }
    done
    [ "$files" = "$(cd "$TMP/b" && find . -type f ! -name summary.json | sort)" ] || { fail "$name: different files"; return; }
    ok "$name: identical summary and $(echo "$files" | wc -w) files"
}

for topo in fat-tree rail-only; do
  for pfc in true false; do
    for kind in single permutation all-to-all incast; do
        args="--set topology.kind=$topo --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 --set traffic.kind=$kind --set traffic.bytes=100000 --set topology.buffer_bytes=65536 --set seed=11 --set pfc.enabled=$pfc"
        same "$topo $kind pfc=$pfc" $args
    done
  done
done

for topo in fat-tree rail-only; do
    small="--set topology.kind=$topo --set topology.gpus=16 --set topology.hb_size=4 --set topology.radix=8 --set seed=7"
    same "$topo collective capture" $small --set traffic.kind=collective --set traffic.op=allreduce \
        --set traffic.bytes=1048576 --set "capture.ports=*leaf0.p0" --set capture.snaplen=74
    same "$topo plan replay" $small --set workload.plan=demo-dense
    same "$topo plan replay flow level" $small --set workload.plan=demo-moe --set fidelity=flow
    same "$topo all-to-all flow level" $small --set traffic.kind=all-to-all --set traffic.bytes=1000000 --set fidelity=flow
    same "$topo fault drawn by class" $small --set traffic.kind=collective --set traffic.op=allreduce \
        --set traffic.bytes=1048576 --fault "20us link-down any-network-link 50us"
done

# Four tiers (radix 4: 16 leaves of 2 in the plane: 32 GPUs for the fat
# tree, 64 for two rails), with a fault drawn among the upper switches and
# relays through the HB domains; and at flow level.
for topo in fat-tree rail-only; do
    [ $topo = fat-tree ] && n=32 || n=64
    deep="--set topology.kind=$topo --set topology.gpus=$n --set topology.hb_size=2 --set topology.radix=4 --set seed=5"
    same "$topo 4 tiers all-to-all, a spine down" $deep --set traffic.kind=all-to-all --set traffic.bytes=20000 \
        --fault "3us switch-down any-spine"
    same "$topo 4 tiers flow level" $deep --set traffic.kind=all-to-all --set traffic.bytes=20000 --set fidelity=flow
done

base="--set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=16 --set traffic.kind=permutation --set topology.buffer_bytes=65536"
"$RS" run -q $base --set seed=1 -o "$TMP/s1" && "$RS" run -q $base --set seed=2 -o "$TMP/s2"
if [ "$(strip_host "$TMP/s1/summary.json")" != "$(strip_host "$TMP/s2/summary.json")" ]; then
    ok "different seed changes the permutation run"
else
    fail "seed has no effect"
fi
# A class target is drawn with the seed: six seeds pick more than one link.
targets=""
for seed in 1 2 3 4 5 6; do
    "$RS" run -q --set topology.gpus=16 --set topology.hb_size=4 --set topology.radix=8 --set seed=$seed \
        --set traffic.kind=single --fault "1us link-down any-network-link 5us" -o "$TMP/f$seed" \
        && targets="$targets $(json_get "$TMP/f$seed/summary.json" "d['faults'][0]['target']")"
done
n=$(echo $targets | tr ' ' '\n' | sort -u | wc -l)
[ "$n" -ge 2 ] && ok "seed changes the class draw ($n links over 6 seeds)" || fail "class draw ignores the seed: $targets"
finish
