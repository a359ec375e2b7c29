#!/bin/sh
# One packet-level run split over MPI ranks (models/part.c, docs/parallel.md):
# `mpirun -np N railsim run` writes the serial run's summary.json (byte for
# byte but for wall_s, peak_rss_bytes and its "parallel" section), its
# timeline.msgpack and its captures (pcap per port, pcapng) byte for byte,
# at -np 2 and 4 (oversubscribed on 2 cores), on both topologies, with HB
# domains and their PXN relays, incast (PFC), bit errors, selective recovery and
# adaptive routing; frames
# cross the ranks in each; and collectives whose transfers all start with
# them (direct all-to-all, send/recv); and replays under workload.sync=rank
# (rings, trees, hierarchical, NVLS, direct all-to-alls, pipeline sends).
# Several iterations of a collective and a hierarchical one stream under
# workload.sync=rank and split as a one-op replay. A scenario that cannot
# be split (faults, a pairwise collective, a hierarchical one or
# iterations behind the barrier, a replay under the barrier) runs on rank
# 0 alone, says why once, and gives the serial summary.
RS=$1; E2E=$2; MPIRUN=$3
. "$E2E/lib.sh"
MPI="$MPIRUN --allow-run-as-root --oversubscribe"
strip_par() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k, None) for k in ('wall_s', 'peak_rss_bytes', 'parallel')]; print(json.dumps(d, sort_keys=True))" "$1"; }
frames() { "$PY" -c "import json,sys; p=json.load(open(sys.argv[1])).get('parallel'); print(p['frames_exchanged'] if p and p['ranks'] == int(sys.argv[2]) else -1)" "$1" "$2"; }

NT="--set timeline.enabled=false"
# Under the sanitizers (RS_SANITIZED=1, tests/CMakeLists.txt) a split
# case runs at -np 2 only and a shared cluster's spread at -np 3, and only
# the cases below: one of each kind of split code (frames, PXN relays
# with loss and a pcapng, selective repeat, collectives whose transfers
# start together, ring and tree credits, replays of rings, trees,
# hierarchical collectives and pipeline sends, a collective's iterations
# streamed as a one-op replay, a send by a PXN relay from
# a rank's own event (its chunks shipped), a shared cluster's spread,
# a run rank 0 keeps), in about a third of the sanitizer build's time for
# the whole script; the release build runs them all.
NPS="1 2 4"; SPREAD_NPS="2 3"
[ "${RS_SANITIZED:-0}" = 1 ] && { NPS=2; SPREAD_NPS=3; }
san_skip() {
    [ "${RS_SANITIZED:-0}" = 1 ] || return 1
    case $1 in
    fat-tree | hb-domains | pxn-loss-pcapng | loss-selective | coll-alltoall | coll-ring | coll-tree | coll-iters-ring | \
        pcapng-incast | replay-skew-* | replay-pp-rail | replay-pxn-send | faults | jobs3) return 1 ;;
    esac
    return 0
}
# The cases run on railsim's generic network (its 1 ms transport timeout,
# the placements they were written for) unless they name a system: the
# coll-nccl, replay-pp-nccl and loss-dgx cases name the default DGX H100.
GEN="--set system.preset=none"
split() {
    name=$1; shift
    san_skip "$name" && return
    "$RS" run -q $GEN "$@" -o "$TMP/$name.s" 2>"$TMP/$name.s.err" || fail "$name: serial run failed ($(cat "$TMP/$name.s.err"))"
    for np in $NPS; do
        $MPI -np $np "$RS" run -q $GEN "$@" -o "$TMP/$name.$np" 2>"$TMP/$name.$np.err" \
            || fail "$name: mpirun -np $np run failed ($(cat "$TMP/$name.$np.err"))"
        f=$(frames "$TMP/$name.$np/summary.json" $np)
        what="wrote the serial summary"
        if [ -f "$TMP/$name.s/timeline.msgpack" ]; then
            cmp -s "$TMP/$name.s/timeline.msgpack" "$TMP/$name.$np/timeline.msgpack" || f=-3
            what="$what and timeline"
        fi
        # nothing else in the directory: no part file left over
        [ "$(ls -A "$TMP/$name.$np" | wc -l)" -eq "$(ls -A "$TMP/$name.s" | wc -l)" ] || f=-4
        if [ -d "$TMP/$name.s/pcap" ]; then
            # the same files, none left over (no part file), the same bytes
            nf=$(ls "$TMP/$name.s/pcap" | wc -l)
            diff -r "$TMP/$name.s/pcap" "$TMP/$name.$np/pcap" >/dev/null && [ "$nf" -gt 0 ] \
                && [ "$(ls -A "$TMP/$name.$np/pcap" | wc -l)" -eq "$nf" ] || f=-2
            what="$what; its $nf capture file(s) are the serial bytes"
        fi
        # -np 1: the serial run under mpirun (no parallel section, f = -1)
        [ "$(strip_par "$TMP/$name.s/summary.json")" = "$(strip_par "$TMP/$name.$np/summary.json")" ] &&
            { [ "$f" -gt 0 ] || { [ $np -eq 1 ] && [ "$f" -eq -1 ]; }; } \
            && ok "$name: -np $np $([ $np -eq 1 ] && echo "ran it serially" || echo "split the run ($f frames between ranks)") and $what" \
            || fail "$name: -np $np summary, timeline or captures differ from the serial ones (frames $f; -2: captures, -3: timeline, -4: files left over)"
    done
}
split fat-tree --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=permutation --set traffic.bytes=262144
split no-timeline --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=permutation --set traffic.bytes=262144 $NT
# every record kind, and ticks closer than the lookahead (0.3 us < 1 us)
split timeline-heavy --set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 --set traffic.kind=incast \
    --set traffic.fan_in=16 --set traffic.bytes=262144 --set timeline.heavy=true --set timeline.sample_us=0.3
SRC=$E2E/../..
"$PY" "$SRC/tests/tools/schema_check.py" "$SRC/docs/schema" summary "$TMP/fat-tree.2/summary.json" >"$TMP/sc" 2>&1
case $? in
0) ok "a split run's summary (its parallel section too) matches docs/schema/summary.schema.json" ;;
77) ;; # no python3-jsonschema: e2e.outputs says so
*) fail "a split run's summary fails its schema: $(cat "$TMP/sc")" ;;
esac
split rail-only --set topology.kind=rail-only --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=16 \
    --set traffic.kind=permutation --set traffic.bytes=262144 --set traffic.start_ns=5000
split hb-domains --set topology.gpus=64 --set topology.hb_size=4 --set topology.radix=16 --set routing.pxn=off \
    --set traffic.kind=all-to-all --set traffic.bytes=65536
# PXN relays (the default with HB domains): chunks cross the HB domain,
# then the rail, posted from the source's side; multi-chunk messages on
# rail-only, and bit errors with a pcapng on the fat tree
split pxn-rail --set topology.kind=rail-only --set topology.gpus=32 --set topology.hb_size=8 --set topology.radix=16 \
    --set traffic.kind=permutation --set traffic.bytes=2097152
split pxn-loss-pcapng --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 --set traffic.kind=permutation \
    --set traffic.bytes=1048576 --set topology.loss_rate=0.002 --capture 'gpu1*,leaf1.*' --capture-format pcapng
split incast --set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 --set traffic.kind=incast \
    --set traffic.fan_in=16 --set traffic.bytes=1048576
# bit errors: go-back-N with timeouts (seed 2: a last ACK is lost, and the
# sender's retransmission wakes the stopped sampler from one rank's event),
# selective with a pcapng
split loss-gbn --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=permutation --set traffic.bytes=262144 --set topology.loss_rate=0.01 --set seed=2
# Tails lost under NCCL's 4.29 s timeout: seconds of silence, which the
# timeline's sampler skips in one tick in every process alike.
split loss-dgx --set system.preset=dgx-h100 --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=permutation --set traffic.bytes=262144 --set topology.loss_rate=0.01 --set seed=2
split loss-selective --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=8 --set traffic.kind=all-to-all \
    --set traffic.bytes=65536 --set topology.loss_rate=0.002 --set transport.recovery=selective --capture 'gpu1*,leaf0.*' \
    --capture-format pcapng --set capture.snaplen=128
split selective-adaptive --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=permutation --set traffic.bytes=262144 --set transport.recovery=selective --set routing.ecmp=adaptive

# Collectives whose transfers all start with them split (rs_coll_splits):
# each process sees its GPUs' completions, rank 0 finishes the collective
# after the run at the last of them (coll record and iteration time).
split coll-alltoall --set topology.gpus=64 --set topology.hb_size=4 --set topology.radix=16 \
    --set traffic.kind=collective --set traffic.op=alltoall --set traffic.bytes=1048576
split coll-alltoall-rail --set topology.kind=rail-only --set topology.gpus=32 --set topology.hb_size=4 \
    --set topology.radix=16 --set traffic.kind=collective --set traffic.op=alltoall --set traffic.bytes=262144 \
    --set traffic.group=rail:1 --capture 'gpu1*' --capture-format pcapng
# Rings: a rank sends into its successor's buffer as the credits tell it;
# a credit to a rank of another process is shipped there, keyed by its
# giver (rs_net_at_gpu_for); the pieces' flows are mirrored where their
# frames go, named from the ring's block of serials.
split coll-ring --set topology.gpus=64 --set topology.hb_size=4 --set topology.radix=16 \
    --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.bytes=4194304
split coll-ring-rail-pcapng --set topology.kind=rail-only --set topology.gpus=32 --set topology.hb_size=8 \
    --set topology.radix=16 --set traffic.kind=collective --set traffic.op=allgather --set traffic.bytes=8388608 \
    --capture 'gpu1*,rail1*' --capture-format pcapng
split coll-ring-flat-loss --set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=collective --set traffic.op=reducescatter --set traffic.bytes=2097152 \
    --set topology.loss_rate=0.001 --capture 'spine*'
# Records reused across processes (part.c, "reuse"): a flow's home hands
# its records back once every packet it ever had is gone everywhere, with
# go-back-N resending duplicates the receiver answers.
split coll-ring-reuse-loss --set topology.gpus=64 --set topology.hb_size=4 --set topology.radix=8 \
    --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.bytes=8388608 \
    --set topology.loss_rate=0.01 $NT
# Trees: the same credits, up to a parent and down to the children.
split coll-tree --set topology.gpus=64 --set topology.hb_size=4 --set topology.radix=16 \
    --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=tree --set traffic.bytes=1048576
split coll-tree-rail --set topology.kind=rail-only --set topology.gpus=64 --set topology.hb_size=8 --set topology.radix=16 \
    --set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=262144 --capture 'rail0*'
# NCCL's costs (nccl.model=nccl): per-step latencies at each receiver, the
# base latency after the last completion in every process's part.
split coll-nccl-ring --set system.preset=dgx-h100 --set topology.gpus=16 --set topology.radix=8 \
    --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.bytes=4194304
split coll-nccl-tree --set system.preset=dgx-h100 --set topology.gpus=32 --set topology.radix=8 \
    --set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=65536 $NT
split coll-sendrecv --set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=collective --set traffic.op=sendrecv --set traffic.group=3,29 --set traffic.bytes=1048576 \
    --set traffic.start_ns=1500 --capture '*'
# Collective iterations streamed (workload.sync=rank, the default: each GPU
# issues the next as its own part of the one before is done) and a
# hierarchical collective alone run as a one-op replay and split as one:
# a ring AllReduce three times (fat tree, HB 4), an all-to-all twice on
# rail-only (PXN relays) with a pcapng of two NICs, the hierarchical
# AllReduce, and a tree AllReduce twice under NCCL's costs (the DGX H100).
split coll-iters-ring --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=16 \
    --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring --set traffic.bytes=4194304 \
    --set traffic.iters=3 --set traffic.start_ns=700
split coll-iters-a2a-rail --set topology.kind=rail-only --set topology.gpus=32 --set topology.hb_size=4 \
    --set topology.radix=16 --set traffic.kind=collective --set traffic.op=alltoall --set traffic.bytes=1048576 \
    --set traffic.iters=2 --set capture.ports=gpu3.nic,gpu27.nic --set capture.format=pcapng
split coll-hier --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=16 --set traffic.kind=collective \
    --set traffic.op=allreduce --set traffic.algo=hierarchical --set traffic.bytes=1048576
split coll-iters-dgx --set system.preset=dgx-h100 --set topology.gpus=32 --set topology.radix=16 \
    --set traffic.kind=collective --set traffic.op=allreduce --set traffic.bytes=4194304 --set traffic.iters=2 $NT

# Link degrades split: every process applies them from their shared
# events; rank 0's part has their timeline records.
split degrade --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=8 --set traffic.kind=permutation \
    --set traffic.bytes=1048576 --fault "0 link-degrade=100 leaf0.p4 20us" --fault "5us link-degrade=200 leaf3.p5 1ms"
split degrade-ring-rail --set topology.kind=rail-only --set topology.gpus=32 --set topology.hb_size=4 \
    --set topology.radix=16 --set traffic.kind=collective --set traffic.op=allreduce --set traffic.algo=ring \
    --set traffic.bytes=4194304 --fault "10us link-degrade=100 gpu5.nic 30us" --capture 'gpu5*'

# Captures: each process writes its ports' pcap files, or its part of the
# pcapng (rank 0 merges the parts in the serial order): the same bytes.
split pcap-per-port --set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=permutation --set traffic.bytes=65536 --capture '*'
split pcapng-incast --set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 --set traffic.kind=incast \
    --set traffic.fan_in=16 --set traffic.bytes=262144 --capture '*' --capture-format pcapng
split pcapng-selective --set topology.gpus=64 --set topology.hb_size=1 --set topology.radix=8 \
    --set traffic.kind=permutation --set traffic.bytes=131072 --set transport.recovery=selective \
    --set routing.ecmp=adaptive --capture 'spine*,gpu1*' --capture-format pcapng
split pcapng-rail-window --set topology.kind=rail-only --set topology.gpus=64 --set topology.hb_size=1 \
    --set topology.radix=16 --set traffic.kind=permutation --set traffic.bytes=65536 --capture '*' \
    --capture-format pcapng --set capture.start_ns=2000 --set capture.end_ns=9000 --set capture.snaplen=96

# Replays under workload.sync=rank (docs/parallel.md, "Replays"): each rank
# runs in its GPU's process, collectives built there under names reserved
# at setup; one Llama-sized block, TP 8 over two HB domains of 4 (its rings
# cross the network, and the ranks), DP across.
PL=$TMP/dense1.json
echo '{"preset": "demo-dense", "model": {"layers": 1}}' >"$PL"
W="--set workload.plan=$PL --set workload.sync=rank"
split replay-fat $W --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 --set workload.iterations=2
split replay-rail-tree-pcap $W --set topology.kind=rail-only --set topology.gpus=32 --set topology.hb_size=8 \
    --set topology.radix=16 --set workload.algo=tree --set capture.ports=gpu0.nic,gpu9.nic
split replay-loss $W --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 --set topology.loss_rate=1e-4 $NT
# Members far apart in time: rank r computes 5 + 20r us before each
# collective, so one process's first member posts its buffers to a sender
# in the other process long before any member there issued it (that
# process builds the collective from the credit, under its name).
"$PY" - "$E2E/chakra" "$TMP/skew" <<'PYEOF' || fail "could not write the skewed Chakra traces"
import sys
sys.path.insert(0, sys.argv[1])
from gen_et import *
ranks = []
for r in range(16):
    c = lambda nid, d: node(nid, "compute", COMP, [attr("is_cpu_op", BOOL, 0)], ctrl=d, dur=5 + 20 * r)
    coll = lambda nid, t, b, d: node(nid, "coll", COLL, [attr("is_cpu_op", BOOL, 0), attr("comm_type", INT64, t),
                                                         attr("comm_size", UINT64, b)], ctrl=d)
    ranks.append([c(1, []), coll(2, ALL_REDUCE, 4 * MIB, [1]), c(3, [2]), coll(4, ALL_GATHER, MIB, [3])])
write(sys.argv[2], "skew", ranks)
PYEOF
"$RS" trace import chakra "$TMP/skew/skew" -o "$TMP/skew.trace" -q || fail "could not import the skewed traces"
for a in ring tree; do
    split replay-skew-$a --set workload.trace=$TMP/skew.trace --set workload.sync=rank --set workload.algo=$a \
        --set topology.gpus=16 --set topology.hb_size=1 --set topology.radix=8
done
# The first process builds each collective 160 us before the second; the
# NICs of GPUs 7 and 8 slow down between the two (the ring's credits from
# 8 back to 7, and 9 back to 8, cross them).
split replay-skew-degrade --set workload.trace=$TMP/skew.trace --set workload.sync=rank --set workload.algo=ring \
    --set topology.gpus=16 --set topology.hb_size=1 --set topology.radix=8 \
    --fault "100us link-degrade=100 gpu8.nic 1ms" --fault "120us link-degrade=200 gpu7.nic 2ms"
# hierarchical over 4 HB domains of 4: a process builds a phase's
# sub-collective when a credit for it comes first
split replay-skew-hier --set workload.trace=$TMP/skew.trace --set workload.sync=rank --set workload.algo=hierarchical \
    --set topology.gpus=16 --set topology.hb_size=4 --set topology.radix=8
# FSDP (one Llama 2 7B layer, ZeRO-3) with hierarchical AllGathers and
# ReduceScatters on rail-only
echo '{"preset": "llama2-7b", "model": {"layers": 1}, "parallelism": {"global_batch": 128}}' >"$TMP/fsdp1.json"
split replay-fsdp-hier-rail --set workload.plan=$TMP/fsdp1.json --set workload.sync=rank \
    --set workload.algo=hierarchical --set topology.kind=rail-only --set topology.gpus=32 --set topology.hb_size=4 \
    --set topology.radix=8 $NT
# Pipeline sends (TP 4, PP 2; a stage's sends to the next are on its rail):
# named by sender, slot and message index, their arrival in the other
# process, their bound charged to the receiver after the run.
echo '{"preset": "demo-dense", "model": {"layers": 2}, "parallelism": {"tp": 4, "pp": 2, "global_batch": 8}}' >"$TMP/pp.json"
split replay-pp-rail --set workload.plan=$TMP/pp.json --set workload.sync=rank --set topology.kind=rail-only \
    --set topology.gpus=16 --set topology.hb_size=4 --set topology.radix=8
split replay-pp-fat --set workload.plan=$TMP/pp.json --set workload.sync=rank --set workload.iterations=2 \
    --set topology.gpus=16 --set topology.hb_size=4 --set topology.radix=8 $NT
# NCCL's costs in a replay whose members join one by one, each paying
# the base latency in its own process: NVLS off, and on (the default
# system's, its TP AllReduces inside the HB domain: one process holds
# each domain, so the collective that waits for its members runs there).
split replay-pp-nccl --set workload.plan=$TMP/pp.json --set system.preset=dgx-h100 --set nccl.nvls=off \
    --set topology.gpus=16 --set topology.hb_size=4 --set topology.radix=8 $NT
split replay-nvls --set workload.plan=$TMP/pp.json --set system.preset=dgx-h100 --set topology.gpus=16 \
    --set topology.hb_size=4 --set topology.radix=8
# MoE (one demo-moe layer, EP 8 over two HB domains of 4): direct
# all-to-alls whose members post their buffers to their peers across the
# ranks, each block named by its place; from the sources' NICs, and by
# PXN relays (the default), each network-leg chunk shipped as it starts
# and mirrored in the other ranks, its serial counted by its source GPU
echo '{"preset": "demo-moe", "model": {"layers": 1}}' >"$TMP/moe1.json"
split replay-a2a --set workload.plan=$TMP/moe1.json --set routing.pxn=off --set topology.gpus=16 \
    --set topology.hb_size=4 --set topology.radix=8
split replay-a2a-pxn --set workload.plan=$TMP/moe1.json --set topology.gpus=16 --set topology.hb_size=4 \
    --set topology.radix=8

# Not split: rank 0 runs it, the summary is the serial one, the reason is said once.
alone() {
    name=$1; why=$2; shift 2
    san_skip "$name" && return
    "$RS" run -q $GEN "$@" -o "$TMP/$name.s" 2>"$TMP/$name.s.err" || fail "$name: serial run failed"
    $MPI -np 2 "$RS" run -q $GEN "$@" -o "$TMP/$name.2" 2>"$TMP/$name.2.err" || fail "$name: mpirun -np 2 failed"
    n=$(grep -c "^railsim: run: not split over the MPI ranks: $why" "$TMP/$name.2.err")
    [ "$(strip_par "$TMP/$name.s/summary.json")" = "$(strip_par "$TMP/$name.2/summary.json")" ] && [ "$n" -eq 1 ] &&
        ! grep -q '"parallel"' "$TMP/$name.2/summary.json" \
        && ok "$name: not split ($why), said once; rank 0's summary is the serial one" \
        || fail "$name: said $n times, or the summary differs ($(cat "$TMP/$name.2.err"))"
}
P="--set topology.gpus=32 --set topology.hb_size=1 --set topology.radix=8 --set traffic.kind=permutation"
alone faults "faults that take a link, NIC or switch down are scheduled" $P $NT --fault "10us link-down leaf0.p4"
alone degrade-loss "faults are scheduled with bit errors" $P $NT --set topology.loss_rate=0.001 \
    --fault "10us link-degrade=100 leaf0.p4 30us"
alone ideal-relays "PXN relays without ACKs" --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 \
    --set traffic.kind=permutation --set transport.kind=ideal $NT
# behind the barrier (workload.sync=collective): a hierarchical collective's
# phases and the iterations wait for every GPU
alone collective "the collective: allreduce hierarchical: a hierarchical collective is not split yet" \
    --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=16 --set traffic.kind=collective \
    --set traffic.op=allreduce --set traffic.algo=hierarchical --set traffic.bytes=1048576 --set workload.sync=collective $NT

alone coll-iters "the collective: each of traffic.iters=2 iterations" --set topology.gpus=32 --set topology.hb_size=4 \
    --set topology.radix=16 --set traffic.kind=collective --set traffic.op=alltoall --set traffic.iters=2 \
    --set workload.sync=collective $NT
alone coll-pairwise "the collective: alltoall pairwise: pairwise steps wait" --set topology.gpus=32 --set topology.hb_size=4 \
    --set topology.radix=16 --set traffic.kind=collective --set traffic.op=alltoall --set traffic.algo=pairwise $NT
alone replay-barrier "the workload: its collectives wait for all their members at zero delay" \
    --set workload.plan=$PL --set workload.sync=collective --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 $NT
# Split since 2026-12-05 though among the cases above: a send across
# rails and HB domains goes by a PXN relay, its chunks shipped as they start
"$PY" - "$E2E/chakra" "$TMP/xrail" <<'PYEOF' || fail "could not write the cross-rail Chakra traces"
import sys
sys.path.insert(0, sys.argv[1])
from gen_et import *
def p2p(kind, name):
    return node(2, name, kind, [attr("is_cpu_op", BOOL, 0), attr("comm_src", UINT64, 0), attr("comm_dst", UINT64, 5),
                                attr("comm_size", UINT64, MIB), attr("comm_tag", INT64, 0)], ctrl=[1])
ranks = [[node(1, "compute", COMP, [attr("is_cpu_op", BOOL, 0)], dur=5)] + ([p2p(SEND, "send")] if r == 0 else
         [p2p(RECV, "recv")] if r == 5 else []) for r in range(8)]
write(sys.argv[2], "xrail", ranks)
PYEOF
"$RS" trace import chakra "$TMP/xrail/xrail" -o "$TMP/xrail.trace" -q || fail "could not import the cross-rail traces"
split replay-pxn-send --set workload.trace=$TMP/xrail.trace --set workload.sync=rank --set topology.gpus=8 --set topology.hb_size=4 \
    --set topology.radix=8
# a ring over three HB domains of 2 changes rail on one hop: a PXN relay
"$PY" - "$E2E/chakra" "$TMP/six" <<'PYEOF' || fail "could not write the 6-rank Chakra traces"
import sys
sys.path.insert(0, sys.argv[1])
from gen_et import *
write(sys.argv[2], "six", [[node(1, "compute", COMP, [attr("is_cpu_op", BOOL, 0)], dur=5),
                            node(2, "coll", COLL, [attr("is_cpu_op", BOOL, 0), attr("comm_type", INT64, ALL_REDUCE),
                                                   attr("comm_size", UINT64, 4 * MIB)], ctrl=[1])] for r in range(6)])
PYEOF
"$RS" trace import chakra "$TMP/six/six" -o "$TMP/six.trace" -q || fail "could not import the 6-rank traces"
split replay-ring-relay --set workload.trace=$TMP/six.trace --set workload.sync=rank --set workload.algo=ring --set topology.gpus=6 \
    --set topology.hb_size=2 --set topology.radix=8 $NT
# Link degrades split a replay too (since 2026-12-05): a collective's
# credits cost what their path costs when they are given (computed again
# after a rate changed), its tuner and NCCL's per-hop latencies read the
# rates of the run's start, so it does not matter when each process
# builds it.
split replay-degrade $W --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 \
    --fault "10us link-degrade=100 leaf0.p4 30us" --fault "40us link-degrade=50 gpu9.nic 2ms" $NT
# a straggler acts through its GPU's compute (a schedule every process
# reads alike): the replay splits (since 2026-12-05)
split replay-straggler $W --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=8 \
    --fault "5us straggler=2 gpu5 200us" --fault "50us straggler=1.5 gpu20 1ms"

# A shared cluster's jobs (docs/parallel.md, "Shared clusters"): rank 0
# runs the shared run, the jobs' runs alone (their slowdowns' baselines)
# go round the ranks; the summary (slowdowns included), the timeline and
# the captures are the serial ones, and each rank ran its share. Under a
# scheduler every rank runs the shared run (its arrivals' GPUs).
cat >"$TMP/jobs3.json" <<'EOF'
{"topology": {"kind": "fat-tree", "gpus": 64, "hb_size": 8, "radix": 8, "oversubscription": 2},
 "jobs": [{"name": "c", "gpus": 16, "placement": "packed",
           "traffic": {"kind": "collective", "op": "allreduce", "bytes": 4194304}},
          {"name": "a", "gpus": 16, "placement": "fragmented", "traffic": {"kind": "all-to-all", "bytes": 262144}},
          {"name": "b", "gpus": 16, "placement": "random", "traffic": {"kind": "permutation", "bytes": 1048576}}]}
EOF
cat >"$TMP/jobs-sched.json" <<'EOF'
{"topology": {"gpus": 64, "radix": 16}, "fidelity": "flow",
 "jobs": [{"name": "ar", "gpus": 32, "placement": "random",
           "traffic": {"kind": "collective", "op": "allreduce", "bytes": 16777216}},
          {"name": "bulk", "gpus": 48, "placement": "fragmented", "traffic": {"kind": "all-to-all", "bytes": 262144}}],
 "scheduler": {"arrivals": 6, "interarrival_us": 200}}
EOF
spread() {
    name=$1; shift
    san_skip "$name" && return
    "$RS" run -q "$@" -o "$TMP/$name.s" 2>"$TMP/$name.s.err" || fail "$name: serial run failed ($(cat "$TMP/$name.s.err"))"
    for np in $SPREAD_NPS; do
        $MPI -np $np "$RS" run -q "$@" -o "$TMP/$name.$np" 2>"$TMP/$name.$np.err" ||
            fail "$name: mpirun -np $np run failed ($(cat "$TMP/$name.$np.err"))"
        want=$(json_get "$TMP/$name.s/summary.json" "[sum(1 for k in range(len(d['jobs'])) if (k % $np if 'scheduler' in d else 1 + k % ($np - 1)) == p) for p in range($np)]")
        v=$(json_get "$TMP/$name.$np/summary.json" "(d['parallel']['ranks'], d['parallel']['alone_runs'], all(j['slowdown'] for j in d['jobs']))")
        same=1
        [ "$(strip_par "$TMP/$name.s/summary.json")" = "$(strip_par "$TMP/$name.$np/summary.json")" ] || same=0
        cmp -s "$TMP/$name.s/timeline.msgpack" "$TMP/$name.$np/timeline.msgpack" || same=0
        [ ! -d "$TMP/$name.s/pcap" ] || diff -r "$TMP/$name.s/pcap" "$TMP/$name.$np/pcap" >/dev/null || same=0
        [ $same = 1 ] && [ "$v" = "($np, $want, True)" ] &&
            [ "$(grep -c "^railsim: run: over $np MPI ranks: rank 0 ran the shared cluster" "$TMP/$name.$np.err")" = 1 ] &&
            ok "$name: -np $np: the serial summary, timeline and captures; runs alone per rank $want" ||
            fail "$name: -np $np: same $same, parallel $v (want $want), $(head -2 "$TMP/$name.$np.err")"
    done
}
spread jobs3 "$TMP/jobs3.json" --capture 'leaf0.*' --capture-format pcapng
spread jobs-sched "$TMP/jobs-sched.json"
"$PY" "$SRC/tests/tools/schema_check.py" "$SRC/docs/schema" summary "$TMP/jobs3.${SPREAD_NPS##* }/summary.json" >"$TMP/sc" 2>&1
case $? in
0) ok "a spread run's summary (its parallel section too) matches docs/schema/summary.schema.json" ;;
77) ;;
*) fail "a spread run's summary fails its schema: $(cat "$TMP/sc")" ;;
esac
echo '{"topology": {"gpus": 32, "radix": 8}, "jobs": [{"name": "solo", "gpus": 16, "traffic": {"kind": "permutation"}}]}' \
    >"$TMP/jobs1.json"
alone jobs-one "a shared cluster's run is not partitioned yet" "$TMP/jobs1.json" $NT

# A process that cannot set up its part (here rank 0's output path is a
# file) stops every rank: exit 2, one sentence, no rank left waiting.
: >"$TMP/not-a-dir"
timeout 120 $MPI -np 2 "$RS" run -q $P $NT -o "$TMP/not-a-dir" 2>"$TMP/nad.err"
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -q "^railsim: $TMP/not-a-dir: output path exists and is not a directory" "$TMP/nad.err" \
    && [ "$(grep -c '^railsim:' "$TMP/nad.err")" -eq 1 ] \
    && ok "rank 0 failing its setup (-o names a file) stops both ranks with one sentence (exit $rc)" \
    || fail "a split run whose rank 0 cannot start: exit $rc ($(cat "$TMP/nad.err"))"
finish
