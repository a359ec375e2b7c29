/*
 * scenario.c - the scenario reader. The schema table `keys` below is the only
 * list of scenario keys: loading a file, applying --set strings, writing the
 * effective scenario as JSON and `railsim help keys` all walk it, through
 * the key-table reader (engine/keys.h) that plans and parts tables use too. Adding a
 * field to rs_net_config or rs_synth_config means adding one row here and
 * one line to docs/scenario-format.md.
 *
 * A key's section is the part before its dot ("topology"); keys without a
 * dot ("seed") sit at the top level. Loading works on a copy, so a failed
 * load leaves the caller's scenario untouched.
 */
#include "scenario.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "versioned.h"

/* Rows of the table below (engine/keys.h): BOOL is an enum of {false, true}
 * that also takes JSON booleans, STR a NUL-terminated char array whose size
 * bounds the length. */
#define UINT(k, m, lo, hi, d) RS_KEY_U(rs_scenario, k, m, lo, hi, d)
#define DBL(k, m, lo, open, hi, d) RS_KEY_D(rs_scenario, k, m, lo, open, hi, d)
#define ENUM(k, m, names, d) RS_KEY_E(rs_scenario, k, m, names, d)
#define BOOL(k, m, d) RS_KEY_B(rs_scenario, k, m, d)
#define STR(k, m, d) RS_KEY_S(rs_scenario, k, m, NULL, d)

/* Enum fields are stored through an int; the C enums hold small values only. */
_Static_assert(sizeof(rs_topo_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_transport_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_ecmp_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_pxn_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_recovery_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_dcqcn_profile) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_cc_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_level) == sizeof(int), "enum size");
_Static_assert(sizeof(((rs_net_config *)0)->pfc) == sizeof(int), "bool as int");
_Static_assert(sizeof(((rs_scenario_timeline *)0)->enabled) == sizeof(int), "bool as int");
_Static_assert(sizeof(rs_synth_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_coll_op) == sizeof(int), "enum size");
_Static_assert(sizeof(rs_coll_algo) == sizeof(int), "enum size");
_Static_assert(sizeof(((rs_scenario *)0)->preset) == sizeof(int), "enum as int");

/* Names in enum value order (RS_TOPO_FAT_TREE = 0, ...). */
static const char *const topo_names[] = { "fat-tree", "rail-only", "dragonfly", NULL };
static const char *const transport_names[] = { "roce", "ideal", NULL };
static const char *const ecmp_names[] = { "flow", "packet", "adaptive", "flowlet", NULL };
static const char *const pxn_names[] = { "auto", "on", "off", NULL };
static const char *const dfly_routing_names[] = { "ugal", "minimal", NULL };
static const char *const dfly_attach_names[] = { "packed", "spread", NULL };
static const char *const cc_names[] = { "dcqcn", "none", NULL };
static const char *const recovery_names[] = { "go-back-n", "selective", NULL };
static const char *const dcqcn_profile_names[] = { "connectx", "paper-2015", NULL };
static const char *const capture_format_names[] = { "pcap", "pcapng", NULL };
static const char *const fidelity_names[] = { "packet", "flow", "both", NULL };
static const char *const synth_names[] = { "single", "permutation", "all-to-all", "incast", "collective", NULL };
/* rs_coll_op_name / rs_coll_algo_name order; tests/e2e/collective.sh checks
 * that the summary's op matches traffic.op. */
static const char *const op_names[] = { "allgather", "reducescatter", "allreduce", "alltoall", "sendrecv", "broadcast",
                                        "reduce", NULL };
static const char *const sync_names[] = { "collective", "rank", NULL };
static const char *const contention_names[] = { "auto", "on", "off", NULL }; /* rs_contention order */
static const char *const wcompute_names[] = { "plan", "shapes", "flat", NULL }; /* rs_workload_compute order */
static const char *const algo_names[] = { "auto", "ring", "tree", "direct", "pairwise", "hierarchical", "nvls",
                                          NULL };
static const char *const nccl_model_names[] = { "ideal", "nccl", NULL };
static const char *const proto_names[] = { "auto", "simple", "ll", "ll128", NULL };
static const char *const nvls_names[] = { "auto", "on", "off", NULL };
static const char *const nccl_algo_names[] = { "auto", "ring", "tree", "nvls", NULL }; /* rs_nccl_algo order */
static const char *const gpu_names[] = { "v100", "a100", "h100", "h200", "b200", "gb200", "mi250x-gcd", NULL };
/* rs_scenario_preset order. */
static const char *const preset_names[] = { "none", "dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72",
                                            "frontier", NULL };
_Static_assert(sizeof op_names / sizeof op_names[0] == RS_COLL_NOPS + 1, "one name per rs_coll_op");
_Static_assert(sizeof algo_names / sizeof algo_names[0] == RS_COLL_NALGOS + 1, "one name per rs_coll_algo");

#define MAX_GPUS 1048576u
#define RATE_MAX 1e6          /* Gb/s */
#define LAT_MAX 1e9           /* ns: one second per link or switch */

/* Schema order is also the order of rs_scenario_to_json and help output;
 * keys of one section stay together. The seed stops at 2^63-1 because JSON
 * integers in jansson are signed 64-bit. */
static const rs_key keys[] = {
    UINT("seed", net.seed, 0, INT64_MAX,
         "run seed: ECMP hash salts, packet spraying, flow entropy and traffic partners derive from it"),
    ENUM("fidelity", fidelity, fidelity_names,
         "packet: every frame, queue and ACK; flow: max-min fair flows on the same routes; "
         "both: railsim run runs both and reports the flow level's error and speed-up (docs/fidelity.md)"),
    ENUM("system.preset", preset, preset_names,
         "a whole system: GPUs per HB domain, NVLink and NIC rates, switch radix, system.gpu, nccl.model=nccl and "
         "NCCL's transport timeout as the named NVIDIA system has them (docs/systems.md); applied first, so any "
         "other key given overrides it"),
    ENUM("system.gpu", net.nccl.gpu, gpu_names,
         "the GPUs, whose generation sets NCCL's tuning constants (docs/collectives.md)"),
    ENUM("topology.kind", net.kind, topo_names,
         "fat-tree: one Clos fabric; rail-only: one fabric per rail, no spine between rails; dragonfly: groups "
         "of switches joined all to all, global links between groups (docs/model.md)"),
    UINT("topology.gpus", net.gpus, 1, MAX_GPUS,
         "GPUs in the cluster (a multiple of topology.hb_size)"),
    UINT("topology.hb_size", net.hb_size, 1, 65535,
         "GPUs per high-bandwidth (NVLink) domain, which is also the number of rails"),
    UINT("topology.gpus_per_nic", net.gpus_per_nic, 1, 65535,
         "GPUs of an HB domain sharing one NIC (a divisor of topology.hb_size): local GPUs k*s .. k*s+s-1 send "
         "through GPU k*s's NIC, so a domain has hb_size / s NICs and as many rails (Frontier: 2 GCDs per NIC)"),
    UINT("topology.radix", net.radix, 2, 65536,
         "ports per Ethernet switch (even)"),
    DBL("topology.nic_gbps", net.nic_gbps, 0, true, RATE_MAX,
        "rate of each GPU NIC <-> leaf switch link, Gb/s"),
    DBL("topology.link_gbps", net.link_gbps, 0, true, RATE_MAX,
        "rate of each switch <-> switch link, Gb/s"),
    DBL("topology.hb_gbps", net.hb_gbps, 0, true, RATE_MAX,
        "HB-domain bandwidth per GPU per direction, Gb/s"),
    UINT("topology.df_hosts", net.df_hosts, 0, 65535,
         "dragonfly: NIC ports per switch; 0: topology.radix / 4 (the balanced dragonfly)"),
    UINT("topology.df_group", net.df_group, 0, 65535,
         "dragonfly: switches per group, joined all to all; 0: twice topology.df_hosts"),
    ENUM("topology.df_attach", net.df_attach, dfly_attach_names,
         "dragonfly: packed = an HB domain's NICs on one switch, in order; spread = each NIC of a domain on its own "
         "switch (blocks of as many switches as a domain has NICs, as HPE Cray EX chassis wire them)"),
    DBL("topology.oversubscription", net.oversubscription, 1, false, 64,
        "leaf switch down:up port ratio (1 = full bisection)"),
    DBL("topology.link_latency_ns", net.link_latency_ns, 0, false, LAT_MAX,
        "propagation delay of each Ethernet link, ns"),
    DBL("topology.switch_latency_ns", net.switch_latency_ns, 0, false, LAT_MAX,
        "pipeline latency of each Ethernet switch, ns"),
    DBL("topology.hb_latency_ns", net.hb_latency_ns, 0, false, LAT_MAX,
        "GPU -> NVSwitch -> GPU latency, ns (half on each hop)"),
    UINT("topology.mtu", net.mtu, 256, 4096,
         "RoCE payload bytes per packet: an InfiniBand MTU, 256, 512, 1024, 2048 or 4096"),
    UINT("topology.hb_mtu", net.hb_mtu, 64, 65536,
         "bytes per HB-domain transfer unit"),
    UINT("topology.buffer_bytes", net.buffer_bytes, 1, (uint64_t)1 << 40,
         "buffer per switch egress port, bytes (must hold one full packet)"),
    DBL("topology.loss_rate", net.loss_rate, 0, false, 0.5,
        "chance that a frame on an Ethernet link is corrupted and dropped by its receiver (packet level; "
        "PFC frames excepted)"),
    ENUM("transport.kind", net.transport, transport_names,
         "roce: RoCE RC with ACK/NAK, go-back-N and timeouts; ideal: lossless, no ACKs"),
    UINT("transport.ack_every", net.ack_every, 1, 65536,
         "receiver sends one ACK per this many data packets"),
    DBL("transport.rto_us", net.rto_us, 0, true, 1e8,
        "retransmit timeout, us"),
    UINT("transport.relay_chunk_bytes", net.relay_chunk_bytes, 1, (uint64_t)1 << 40,
         "chunk size of the HB-then-rail relay (PXN) pipeline, bytes"),
    UINT("transport.priority", net.prio, 0, 7,
         "802.1p priority of RoCE traffic"),
    ENUM("transport.recovery", net.recovery, recovery_names,
         "RoCE loss recovery: go-back-n (in-order responder, resend from the gap) or selective "
         "(out-of-order placement in a bitmap window, SACKs, resend only what is missing)"),
    UINT("transport.sack_window", net.sack_window, 64, 65536,
         "selective: PSNs a QP may have in flight past the oldest unacknowledged one, the receiver's bitmap "
         "(a power of 2)"),
    UINT("transport.dupthresh", net.dupthresh, 1, 65535,
         "selective: a missing PSN counts as lost once this many later PSNs were acknowledged selectively"),
    ENUM("transport.cc", net.cc, cc_names,
         "congestion control at the NIC: dcqcn (CNP-driven rate control) or none (line rate)"),
    ENUM("transport.dcqcn.profile", net.dcqcn.profile, dcqcn_profile_names,
         "where the other transport.dcqcn.* keys start from: connectx (NVIDIA NIC firmware defaults) or "
         "paper-2015 (Zhu et al.); keys given with it override it"),
    DBL("transport.dcqcn.g", net.dcqcn.g, 0, true, 1,
        "DCQCN alpha gain g"),
    DBL("transport.dcqcn.alpha_period_us", net.dcqcn.alpha_period_us, 0, true, 1e6,
        "DCQCN alpha update period K without CNP, us"),
    DBL("transport.dcqcn.cnp_interval_us", net.dcqcn.cnp_interval_us, 0, false, 1e6,
        "receiver sends at most one CNP per flow per this interval, us"),
    DBL("transport.dcqcn.rate_timer_us", net.dcqcn.rate_timer_us, 0, true, 1e6,
        "DCQCN rate-increase timer T, us"),
    UINT("transport.dcqcn.byte_counter", net.dcqcn.byte_counter, 1, (uint64_t)1 << 40,
         "DCQCN rate-increase byte counter B, bytes"),
    UINT("transport.dcqcn.fast_recovery", net.dcqcn.fast_recovery, 1, 1000,
         "DCQCN fast-recovery steps F"),
    DBL("transport.dcqcn.rai_mbps", net.dcqcn.rai_mbps, 0, false, 1e6,
        "DCQCN additive increase step R_AI, Mb/s"),
    DBL("transport.dcqcn.rhai_mbps", net.dcqcn.rhai_mbps, 0, false, 1e6,
        "DCQCN hyper increase step R_HAI, Mb/s"),
    DBL("transport.dcqcn.min_rate_mbps", net.dcqcn.min_rate_mbps, 0, true, 1e9,
        "DCQCN floor of the sending rate, Mb/s"),
    BOOL("transport.dcqcn.clamp_target", net.dcqcn.clamp_target,
         "every CNP sets the target rate to the current rate (the paper; NVIDIA clamp_tgt_rate)"),
    BOOL("transport.dcqcn.clamp_after_timer", net.dcqcn.clamp_after_timer,
         "a CNP sets the target rate to the current rate when the last increase was the timer's "
         "(NVIDIA clamp_tgt_rate_after_time_inc)"),
    ENUM("routing.ecmp", net.ecmp, ecmp_names,
         "flow: hash each message onto one path; packet: spray packets over all paths; adaptive: each packet "
         "to the equal-cost port with the fewest queued bytes; flowlet: that choice once per flowlet"),
    DBL("routing.flowlet_gap_us", net.flowlet_gap_us, 0, true, 1e6,
        "routing.ecmp=flowlet: a pause longer than this between a flow's packets at a switch starts a new flowlet, us"),
    ENUM("routing.pxn", net.pxn, pxn_names,
         "NCCL PXN: cross-rail messages go through the HB domain to the GPU on the destination's rail; "
         "auto = NCCL's default on both topologies, on = the same, off = from the source's own NIC"),
    ENUM("routing.dragonfly", net.dfly_routing, dfly_routing_names,
         "dragonfly: ugal = each network flow takes the minimal path or a detour through a random intermediate "
         "switch, whichever its source switch has fewer flows on (UGAL-L, as Slingshot routes by default); "
         "minimal = minimal paths only"),
    ENUM("nccl.model", net.nccl.model, nccl_model_names,
         "ideal: collectives cost only their bytes on the simulated network; nccl: NCCL's protocols, per-step and "
         "launch latencies and its tuner's choice of algorithm and protocol (docs/collectives.md)"),
    ENUM("nccl.protocol", net.nccl.proto, proto_names,
         "NCCL_PROTO: the protocol of AllReduce, AllGather and ReduceScatter; auto: NCCL's tuner picks "
         "(nccl.model=nccl)"),
    ENUM("nccl.algo", net.nccl.algo, nccl_algo_names,
         "NCCL_ALGO: auto, ring, tree or nvls for AllReduce, AllGather and ReduceScatter when traffic.algo or "
         "workload.algo is auto (nccl.model=nccl)"),
    ENUM("nccl.nvls", net.nccl.nvls, nvls_names,
         "NCCL_NVLS_ENABLE: NVLink SHARP inside one HB domain; auto: on for system.gpu h100 and later"),
    UINT("nccl.channels", net.nccl.channels, 0, 32,
         "NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS: channels of rings and trees; 0: railsim's rule (docs/collectives.md)"),
    BOOL("pfc.enabled", net.pfc,
         "IEEE 802.1Qbb PFC: the RoCE priority is lossless (pause frames instead of drops)"),
    UINT("pfc.xoff_bytes", net.pfc_xoff_bytes, 1, (uint64_t)1 << 40,
         "pause the upstream port when this many bytes from it are buffered, per ingress port and priority"),
    UINT("pfc.xon_bytes", net.pfc_xon_bytes, 0, (uint64_t)1 << 40,
         "resume it when they fall to this many (at most pfc.xoff_bytes)"),
    BOOL("ecn.enabled", net.ecn,
         "switches mark CE on ECN-capable packets (RED on the egress queue of their priority)"),
    UINT("ecn.kmin_bytes", net.ecn_kmin_bytes, 0, (uint64_t)1 << 40,
         "no marking at or below this queue length, bytes"),
    UINT("ecn.kmax_bytes", net.ecn_kmax_bytes, 1, (uint64_t)1 << 40,
         "marking probability reaches ecn.pmax here, 1 above, bytes"),
    DBL("ecn.pmax", net.ecn_pmax, 0, false, 1,
        "marking probability at ecn.kmax_bytes"),
    STR("capture.ports", capture.ports,
        "ports to capture: comma-separated glob patterns over port names (gpu0.nic,leaf0.*); empty = none"),
    DBL("capture.start_ns", capture.start_ns, 0, false, 1e15,
        "capture frames that start leaving their port (pcapng inbound: finish arriving) at or after this time, ns"),
    DBL("capture.end_ns", capture.end_ns, 0, false, 1e15,
        "and before this time, ns"),
    UINT("capture.snaplen", capture.snaplen, 0, 262144,
         "bytes kept per captured frame; 0 keeps whole frames"),
    ENUM("capture.format", capture.format, capture_format_names,
         "pcap: a file per port of what it sends; pcapng: one file, an interface per port, both directions"),
    ENUM("traffic.kind", traffic.kind, synth_names,
         "synthetic pattern: single, permutation, all-to-all or incast; or collective (traffic.op)"),
    UINT("traffic.bytes", traffic.bytes, 0, (uint64_t)1 << 50,
         "bytes per message; collective: the size nccl-tests reports for traffic.op"),
    UINT("traffic.src", traffic.src, 0, MAX_GPUS - 1,
         "sending GPU (single)"),
    UINT("traffic.dst", traffic.dst, 0, MAX_GPUS - 1,
         "receiving GPU (single, incast)"),
    UINT("traffic.fan_in", traffic.fan_in, 1, MAX_GPUS - 1,
         "number of senders (incast), fewer than topology.gpus"),
    DBL("traffic.start_ns", traffic.start_ns, 0, false, 1e15,
        "time the messages (or the first collective iteration) start, ns"),
    ENUM("traffic.op", traffic.op, op_names,
         "collective operation (traffic.kind=collective)"),
    ENUM("traffic.algo", traffic.algo, algo_names,
         "collective algorithm; auto picks one from the op, group and size (docs/collectives.md)"),
    STR("traffic.group", traffic.group,
        "collective group: all, rail:R, hb:H (HB domain) or a comma-separated GPU list in rank order"),
    UINT("traffic.iters", traffic.iters, 1, 1000000,
         "collective iterations, back to back (workload.sync=rank: each GPU issues the next as its part of the "
         "last is done, as nccl-tests' ranks; collective: after the last has ended everywhere); summary times each"),
    STR("workload.plan", workload.plan,
        "training plan to replay: a plan JSON file or a preset (llama2-7b, llama2-70b, gpt3-175b, gpt-13b, gpt-1t, "
        "mixtral-8x7b, demo-dense, demo-moe), DP set to fill topology.gpus; "
        "replaces traffic.*"),
    STR("workload.trace", workload.trace,
        "trace file to replay (railsim trace gen); replaces traffic.*; at most one of workload.plan and workload.trace"),
    UINT("workload.gpus", workload.gpus, 0, 1048576,
         "GPUs the workload's job takes (a plan's DP fills them); 0: topology.gpus, or as many as "
         "workload.placement lists"),
    STR("workload.placement", workload.placement,
        "which GPUs of the cluster the job takes: packed (whole HB domains from the first), spread (whole domains "
        "spaced over the cluster), fragmented (a workload.fragmentation share of partly free domains, seeded), "
        "random (seeded), or a list of GPU ids and ranges in rank order (0-63,128-191); docs/replay.md"),
    DBL("workload.fragmentation", workload.fragmentation, 0, false, 1,
        "workload.placement=fragmented: the share of HB domains only partly free (the job gets a seeded 1 to "
        "hb_size - 1 of their GPUs)"),
    UINT("workload.iterations", workload.iterations, 1, 1000000,
         "training iterations to replay, back to back; summary times each"),
    ENUM("workload.algo", workload.algo, algo_names,
         "collective algorithm for the workload's collectives where it applies; auto elsewhere (docs/replay.md)"),
    DBL("workload.jitter", workload.jitter, 0, false, 1,
        "coefficient of variation of each compute op's time (log-normal, mean 1, drawn from seed, rank, "
        "iteration and op; docs/compute.md)"),
    ENUM("workload.compute", workload.compute, wcompute_names,
         "the compute model of workload.plan's ops: plan (its gpu.model, shapes unless it says flat), shapes "
         "(each kernel from its shape on the GPU) or flat (every FLOP at peak x gpu.efficiency); docs/compute.md"),
    ENUM("workload.contention", workload.contention, contention_names,
         "NCCL's kernels hold SMs that the compute beside them loses (SMs / (SMs - held) slower); auto: under "
         "nccl.model=nccl (docs/compute.md)"),
    ENUM("workload.sync", workload.sync, sync_names,
         "collective: a collective starts when its last member issues it and ends for all at once; rank: each "
         "member's part starts when it issues it and ends when its own sends and receives are done, as NCCL's "
         "(docs/replay.md)"),
    BOOL("timeline.enabled", timeline.enabled,
         "with -o DIR, write DIR/timeline.msgpack: op spans, collectives, drops and more (docs/timeline-format.md)"),
    DBL("timeline.sample_us", timeline.sample_us, 0, false, 1e9,
        "link and queue sampling interval of the timeline, us; 0 = no samples (nor ECN records)"),
    STR("faults.schedule", faults.schedule,
        "faults to inject: ';'-separated \"TIME KIND TARGET [DURATION]\" entries (docs/faults-format.md); "
        "railsim run --fault appends one"),
    DBL("faults.convergence_us", faults.convergence_us, 0, false, 1e9,
        "time from a failure or repair to the switches' new routes, us; 0 = instant"),
    DBL("faults.watchdog_us", faults.watchdog_us, 0, false, 1e12,
        "with faults, stop a run whose delivered bytes have not grown for this long, us; 0 = never"),
    BOOL("faults.baseline", faults.baseline,
         "with faults, also run the scenario without them (same seed, no outputs) for the summary's slowdown"),
    UINT("faults.seed", faults.seed, 0, INT64_MAX,
         "seed of the faults' class draws (any-spine-link, ...); 0 = the run seed"),
    BOOL("faults.reroute_hb", faults.reroute_hb,
         "reach a GPU whose NIC or rail link failed through its HB domain and a neighbour's NIC (fat tree: when its direct path is cut)"),
    DBL("faults.mtbf_us", faults.mtbf_us, 0, false, 1e12,
        "random failures: mean time between failures of each member of faults.random_class, us; 0 = none"),
    DBL("faults.mttr_us", faults.mttr_us, 0, true, 1e12,
        "random failures: mean time to repair, us (exponential)"),
    DBL("faults.horizon_us", faults.horizon_us, 0, false, 1e9,
        "random failures happen before this simulated time only, us; required with faults.mtbf_us"),
    STR("faults.random_class", faults.random_class,
        "the class whose members fail at random: any-network-link, any-spine-link, any-rail-uplink, "
        "any-spine, any-rail-switch or any-nic"),
    BOOL("timeline.heavy", timeline.heavy,
         "also write the timeline's flow, sample, PFC and ECN records (their count grows with packets and time)"),
};

#define NKEYS (sizeof keys / sizeof keys[0])

/* timeline.sample_us's default depends on the fidelity, so the loader
 * must know whether it was given. */
static int given(const rs_key *k, void *base, void *ctx, const char *path, rs_err *err)
{
    (void)ctx, (void)path, (void)err;
    if (k->off == offsetof(rs_scenario, timeline.sample_us))
        ((rs_scenario *)base)->timeline.sample_set = 1;
    return RS_OK;
}

static const rs_key_table table = {
    .keys = keys, .nkeys = NKEYS, .noun = "key", .given = given,
};

/* ---- --set ------------------------------------------------------------- */

/* KEY=VALUE in one argument. `--set topology.gpus 64` must say so, not
 * take 64 for the scenario file: rs_scenario_load checks every --set
 * with this before it opens the file. */
static int check_set(const char *set, rs_err *err)
{
    const char *eq = strchr(set, '=');
    if (!eq || eq == set) {
        char got[80];
        rs_quote_text(got, sizeof got, set);
        return rs_err_set(err, RS_EINVAL, "--set: expected KEY=VALUE in one argument (e.g. --set topology.gpus=64), "
                          "got %s", got);
    }
    return RS_OK;
}

static int apply_set(rs_scenario *sc, const char *set, rs_err *err)
{
    const char *eq = strchr(set, '=');
    int rc = check_set(set, err);
    if (rc)
        return rc;
    char key[128];
    size_t n = (size_t)(eq - set);
    if (n >= sizeof key)
        n = sizeof key - 1; /* too long to be a key; reported as unknown */
    memcpy(key, set, n);
    key[n] = '\0';
    return rs_keys_apply_text(&table, sc, NULL, key, eq + 1, err);
}

/* Apply the JSON scenario text[0..len), named path in messages (a file
 * name, or "scenario" for a string). */
static int apply_text_json(rs_scenario *sc, const char *path, const char *text, size_t len, rs_err *err)
{
    json_t *root;
    int rc = rs_keys_parse(path, text, len, &root, err);
    /* A shared cluster's jobs (scenario_jobs.c), then every other key. */
    const json_t *jobs = rc == RS_OK ? json_object_get(root, "jobs") : NULL;
    if (jobs && (rc = rs_scenario_jobs_parse(sc, jobs, path, err)) == RS_OK)
        json_object_del(root, "jobs");
    const json_t *sched = rc == RS_OK ? json_object_get(root, "scheduler") : NULL;
    if (sched && (rc = rs_scenario_sched_parse(sc, sched, path, err)) == RS_OK)
        json_object_del(root, "scheduler");
    if (rc == RS_OK)
        rc = rs_keys_apply_json(&table, sc, NULL, root, path, err);
    json_decref(root);
    return rc;
}

int rs_scenario_apply_json(rs_scenario *sc, const json_t *obj, const char *path, rs_err *err)
{
    return rs_keys_apply_json(&table, sc, NULL, obj, path, err);
}

/* ---- public ------------------------------------------------------------ */

void rs_scenario_timeline_default(rs_scenario_timeline *c)
{
    memset(c, 0, sizeof *c);
    c->enabled = 1;
    c->heavy = 1;
    c->sample_us = 10.0;
}

static void apply_preset(rs_scenario *sc, int p);

/* Every key at the models' own defaults, no preset applied. */
static void generic_defaults(rs_scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    rs_net_config_default(&sc->net);
    sc->net.msg_records = 0; /* the summary needs the completion times alone */
    rs_synth_config_default(&sc->traffic);
    rs_capture_config_default(&sc->capture);
    rs_workload_config_default(&sc->workload);
    rs_scenario_timeline_default(&sc->timeline);
    rs_fault_config_default(&sc->faults);
    rs_scenario_set_level(sc, RS_LEVEL_PACKET);
}

void rs_scenario_default(rs_scenario *sc)
{
    generic_defaults(sc);
    apply_preset(sc, RS_PRESET_DEFAULT);
}

void rs_scenario_set_level(rs_scenario *sc, rs_level l)
{
    sc->fidelity = l;
    sc->net.fidelity = l == RS_LEVEL_FLOW ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET;
}

/* The arguments of rs_scenario_load and rs_scenario_load_string, every
 * set's KEY=VALUE form included, before anything is read. */
static int check_args(const char *fn, const rs_scenario *sc, char *const *sets, int nsets, rs_err *err)
{
    if (!sc || nsets < 0 || (nsets > 0 && !sets))
        return rs_err_set(err, RS_EINVAL, "%s: expected a scenario and %d --set strings", fn, nsets);
    for (int i = 0; i < nsets; i++) {
        if (!sets[i])
            return rs_err_set(err, RS_EINVAL, "--set: argument %d is missing", i + 1);
        int rc = check_set(sets[i], err);
        if (rc)
            return rc;
    }
    return RS_OK;
}

/* What follows from the keys once they are applied: the network's level
 * from `fidelity`, and the fault schedule's syntax checked (its targets
 * need the network: rs_net_faults_start). */
static int settle(rs_scenario *sc, rs_err *err)
{
    rs_scenario_set_level(sc, sc->fidelity);
    if (sc->sched.arrivals && !sc->njobs)
        return rs_err_set(err, RS_EINVAL, "scheduler: its arrivals are copies of the jobs array's jobs; expected "
                          "a jobs array");
    int rc = rs_scenario_sched_settle(sc, err);
    if (rc != RS_OK)
        return rc;
    if (sc->njobs && rs_workload_active(&sc->workload))
        return rs_err_set(err, RS_EINVAL, "jobs: each job runs its own workload; expected workload.plan and "
                          "workload.trace unset outside the jobs array");
    return rs_fault_config_check(&sc->faults, err);
}

static void generic_defaults(rs_scenario *sc);

/* system.preset p over *sc: what the NVIDIA system has (docs/systems.md
 * gives each figure's source). NVLink rates are NCCL's per-link
 * bandwidth (NVIDIA/nccl v2.30.7 src/graph/topo.h: SM80_NVLINK_BW 20.0,
 * SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s, what NCCL's kernels
 * move over a link of 25 or 50 GB/s) times the GPU's links (12 on A100,
 * 18 on H100, H200 and B200), as Gb/s. */
static void apply_preset(rs_scenario *sc, int p)
{
    rs_net_config *n = &sc->net;
    /* What any preset sets starts from the models' defaults, so that a
     * preset replacing another (or none replacing one) leaves nothing of
     * the first behind. */
    rs_scenario *g = malloc(sizeof *g);
    if (g) {
        generic_defaults(g);
        n->nccl = g->net.nccl;
        n->rto_us = g->net.rto_us;
        sc->faults.watchdog_us = g->faults.watchdog_us;
        n->hb_size = g->net.hb_size;
        n->nic_gbps = g->net.nic_gbps;
        n->link_gbps = g->net.link_gbps;
        n->radix = g->net.radix;
        n->hb_gbps = g->net.hb_gbps;
        n->gpus = g->net.gpus;
        n->kind = g->net.kind;
        n->gpus_per_nic = g->net.gpus_per_nic;
        n->df_hosts = g->net.df_hosts;
        n->df_group = g->net.df_group;
        n->df_attach = g->net.df_attach;
        free(g);
    }
    sc->preset = p;
    if (p == RS_PRESET_NONE)
        return;
    n->nccl.model = RS_NCCL_NCCL;
    /* NCCL's QP timeout: 4.096 us x 2^NCCL_IB_TIMEOUT, default 20
     * (NVIDIA/nccl v2.30.7 src/transport/net_ib/connect.cc): 4.29 s. A
     * stall is a stall only after twice that. */
    n->rto_us = 4.096 * (double)(1u << 20);
    sc->faults.watchdog_us = 2 * n->rto_us;
    n->hb_size = 8;
    n->nic_gbps = n->link_gbps = 400; /* ConnectX-7, Quantum-2 NDR */
    n->radix = 64;                    /* Quantum-2 QM9700: 64 NDR ports */
    switch (p) {
    case RS_PRESET_DGX_A100:
        n->nccl.gpu = RS_GPU_A100;
        n->hb_gbps = 12 * 20.0 * 8;       /* NVLink 3 */
        n->nic_gbps = n->link_gbps = 200; /* ConnectX-6, Quantum QM8700 HDR */
        n->radix = 40;                    /* QM8700: 40 HDR ports */
        break;
    case RS_PRESET_DGX_H100:
    case RS_PRESET_DGX_H200:
        n->nccl.gpu = p == RS_PRESET_DGX_H100 ? RS_GPU_H100 : RS_GPU_H200;
        n->hb_gbps = 18 * 20.6 * 8; /* NVLink 4 */
        break;
    case RS_PRESET_DGX_B200:
        n->nccl.gpu = RS_GPU_B200;
        n->hb_gbps = 18 * 40.1 * 8; /* NVLink 5 */
        break;
    case RS_PRESET_GB200_NVL72:
        n->nccl.gpu = RS_GPU_GB200;
        n->hb_size = 72;
        n->gpus = 72; /* one rack; topology.gpus takes multiples of 72 */
        n->hb_gbps = 18 * 40.1 * 8;
        break;
    case RS_PRESET_FRONTIER:
        /* OLCF Frontier (HPE Cray EX235a nodes): 4 MI250X = 8 GCDs per
         * node, the GCDs of one MI250X joined by Infinity Fabric at 200
         * GB/s, GCDs of different MI250X by 1 or 2 links of 50 GB/s; 4
         * Slingshot-11 NICs of 200 Gb/s, one per MI250X; a dragonfly of
         * 64-port Rosetta switches, 16 NIC ports, 31 links inside the
         * group of 32 and 17 global links each (docs/systems.md). The HB
         * domain is a star at 2 x 50 GB/s per GCD. */
        n->nccl.gpu = RS_GPU_MI250X_GCD;
        n->kind = RS_TOPO_DRAGONFLY;
        n->hb_gbps = 2 * 50.0 * 8;
        n->gpus_per_nic = 2;
        n->nic_gbps = n->link_gbps = 200;
        n->radix = 64;
        n->df_hosts = 16;
        n->df_group = 32;
        /* A cabinet's 8 chassis each hold 16 nodes and 4 switches, and a
         * node's 4 NICs go to 4 different switches (docs/systems.md). */
        n->df_attach = RS_DFLY_SPREAD;
        break;
    }
}

/* rs_scenario_load and rs_scenario_load_string: the JSON text (NULL:
 * none), named path in messages, then the sets. Two passes: the first
 * finds system.preset and transport.dcqcn.profile, the second starts from
 * that preset and that profile's constants, so that every other key given
 * overrides them wherever it comes. */
static int load(rs_scenario *sc, const char *path, const char *text, size_t len, char *const *sets, int nsets,
                rs_err *err)
{
    rs_scenario tmp;
    rs_dcqcn_profile profile = RS_DCQCN_CONNECTX;
    int preset = RS_PRESET_DEFAULT;
    for (int pass = 0; pass < 2; pass++) {
        rs_scenario_default(&tmp);
        if (pass) {
            if (preset != tmp.preset)
                apply_preset(&tmp, preset);
            rs_dcqcn_profile_set(&tmp.net.dcqcn, profile);
        }
        if (text) {
            int rc = apply_text_json(&tmp, path, text, len, err);
            if (rc)
                return rc;
        }
        for (int i = 0; i < nsets; i++) {
            int rc = apply_set(&tmp, sets[i], err);
            if (rc)
                return rc;
        }
        profile = tmp.net.dcqcn.profile;
        preset = tmp.preset;
    }
    int rc = settle(&tmp, err);
    if (rc)
        return rc;
    *sc = tmp;
    return RS_OK;
}

int rs_scenario_load(rs_scenario *sc, const char *path, char *const *sets, int nsets, rs_err *err)
{
    rs_err_clear(err);
    int rc = check_args("rs_scenario_load", sc, sets, nsets, err);
    if (rc)
        return rc;
    char *text = NULL;
    size_t len = 0;
    rc = path ? rs_keys_read_file(path, "scenario file", &text, &len, err) : RS_OK;
    if (rc == RS_OK)
        rc = load(sc, path, text, len, sets, nsets, err);
    free(text);
    return rc;
}

int rs_scenario_load_string(rs_scenario *sc, const char *json, char *const *sets, int nsets, rs_err *err)
{
    rs_err_clear(err);
    int rc = check_args("rs_scenario_load_string", sc, sets, nsets, err);
    if (rc)
        return rc;
    return load(sc, "scenario", json, json ? strlen(json) : 0, sets, nsets, err);
}

int rs_scenario_create(rs_scenario **out, rs_err *err)
{
    rs_err_clear(err);
    *out = malloc(sizeof **out);
    if (!*out)
        return rs_err_set(err, RS_ENOMEM, "out of memory creating a scenario");
    rs_scenario_default(*out);
    return RS_OK;
}

void rs_scenario_destroy(rs_scenario *sc)
{
    free(sc);
}

int rs_scenario_clone(rs_scenario **out, const rs_scenario *sc, rs_err *err)
{
    int rc = rs_scenario_create(out, err);
    if (rc == RS_OK)
        **out = *sc;
    return rc;
}

/* sets[0..nsets) over base into *out: as load's second pass, the system
 * and the DCQCN constants start from the preset and the profile the sets
 * end on when they change them. */
static int set_over(const rs_scenario *base, char *const *sets, int nsets, rs_scenario *out, rs_err *err)
{
    rs_dcqcn_profile profile = base->net.dcqcn.profile;
    int preset = base->preset;
    for (int pass = 0; pass < 2; pass++) {
        *out = *base;
        if (pass) {
            if (preset != base->preset)
                apply_preset(out, preset);
            rs_dcqcn_profile_set(&out->net.dcqcn, profile);
        }
        for (int i = 0; i < nsets; i++) {
            int rc = apply_set(out, sets[i], err);
            if (rc)
                return rc;
        }
        if (out->net.dcqcn.profile == base->net.dcqcn.profile && out->preset == base->preset)
            break;
        profile = out->net.dcqcn.profile;
        preset = out->preset;
    }
    return RS_OK;
}

int rs_scenario_set(rs_scenario *sc, char *const *sets, int nsets, rs_err *err)
{
    rs_err_clear(err);
    int rc = check_args("rs_scenario_set", sc, sets, nsets, err);
    if (rc)
        return rc;
    rs_scenario *tmp = malloc(sizeof *tmp);
    if (!tmp)
        return rs_err_set(err, RS_ENOMEM, "out of memory setting scenario keys");
    if ((rc = set_over(sc, sets, nsets, tmp, err)) == RS_OK)
        rc = settle(tmp, err);
    if (rc == RS_OK)
        *sc = *tmp;
    free(tmp);
    return rc;
}

int rs_scenario_get(const rs_scenario *sc, const char *key, char **out, rs_err *err)
{
    rs_err_clear(err);
    *out = NULL;
    json_t *j = rs_scenario_to_json(sc);
    if (!j)
        return rs_err_set(err, RS_ENOMEM, "out of memory reading scenario key %s", key);
    /* rs_keys_to_json's nesting: the section is all before the last dot. */
    const char *dot = strrchr(key, '.');
    const json_t *v = NULL;
    if (!dot) {
        v = json_object_get(j, key);
    } else {
        char section[128];
        if ((size_t)(dot - key) < sizeof section) {
            snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
            v = json_object_get(json_object_get(j, section), dot + 1);
        }
    }
    int rc = RS_OK;
    if (!v || json_is_object(v)) {
        char got[80];
        rs_quote_text(got, sizeof got, key);
        rc = rs_err_set(err, RS_EINVAL, "%s: no such scenario key (railsim help keys lists them)", got);
    } else if (!(*out = json_dumps(v, JSON_ENCODE_ANY))) {
        rc = rs_err_set(err, RS_ENOMEM, "out of memory reading scenario key %s", key);
    }
    json_decref(j);
    return rc;
}

void rs_scenario_net_fill(const rs_scenario *sc, rs_net_config *out, size_t size)
{
    rs_versioned_give(out, size, &sc->net, sizeof sc->net);
}

int rs_scenario_replays(const rs_scenario *sc)
{
    return rs_workload_active(&sc->workload);
}

int rs_scenario_has_faults(const rs_scenario *sc)
{
    return sc->faults.schedule[0] != '\0' || sc->faults.mtbf_us > 0;
}

int rs_scenario_dump(const rs_scenario *sc, char **out)
{
    json_t *j = rs_scenario_to_json(sc);
    *out = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return *out ? RS_OK : RS_ENOMEM;
}

json_t *rs_scenario_to_json(const rs_scenario *sc)
{
    json_t *j = rs_keys_to_json(&table, sc);
    if (j && sc->njobs && json_object_set_new(j, "jobs", rs_scenario_jobs_json(sc)) != 0) {
        json_decref(j);
        return NULL;
    }
    if (j && sc->sched.arrivals && json_object_set_new(j, "scheduler", rs_scenario_sched_json(sc)) != 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}

void rs_scenario_print_keys(FILE *f)
{
    rs_scenario def;
    rs_scenario_default(&def);
    rs_keys_print(&table, &def, f);
}

const char *rs_scenario_gpu_name(const rs_scenario *sc)
{
    unsigned g = (unsigned)sc->net.nccl.gpu;
    return g < sizeof gpu_names / sizeof gpu_names[0] - 1 ? gpu_names[g] : "";
}
