#!/bin/sh
# Same scenario and seed: byte-identical summaries (host fields aside), for
# every traffic kind and both topologies; a different seed changes the
# random parts.
RS=$1; E2E=$2
. "$E2E/lib.sh"

for topo in fat-tree rail-only; do
  for pfc in true false; do
    for kind in single permutation all-to-all incast; do
        args="--set topology.kind=$topo --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 --set traffic.kind=$kind --set traffic.bytes=100000 --set topology.buffer_bytes=65536 --set seed=11 --set pfc.enabled=$pfc"
        "$RS" run -q $args -o "$TMP/a" && "$RS" run -q $args -o "$TMP/b" || { fail "$topo $kind: run failed"; continue; }
        if [ "$(strip_host "$TMP/a/summary.json")" = "$(strip_host "$TMP/b/summary.json")" ]; then
            ok "$topo $kind pfc=$pfc: identical"
        else
            fail "$topo $kind pfc=$pfc: summaries differ"
        fi
    done
  done
done

base="--set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=16 --set traffic.kind=permutation --set topology.buffer_bytes=65536"
"$RS" run -q $base --set seed=1 -o "$TMP/s1" && "$RS" run -q $base --set seed=2 -o "$TMP/s2"
if [ "$(strip_host "$TMP/s1/summary.json")" != "$(strip_host "$TMP/s2/summary.json")" ]; then
    ok "different seed changes the permutation run"
else
    fail "seed has no effect"
fi
finish
