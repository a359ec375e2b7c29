/*
 * scenario.c - the scenario reader. The schema table `keys` below is the only
 * list of scenario keys: loading a file, applying --set strings, writing the
 * effective scenario as JSON and `railsim help keys` all walk it. Adding a
 * field to rs_net_config or rs_synth_config means adding one row here and
 * one line to docs/scenario-format.md.
 *
 * A key's section is the part before its dot ("topology"); keys without a
 * dot ("seed") sit at the top level. Loading works on a copy, so a failed
 * load leaves the caller's scenario untouched. jansson is used only here and
 * by callers of rs_scenario_to_json.
 */
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

/* KT_BOOL is an enum of {false, true} that also takes JSON booleans. */
typedef enum { KT_UINT, KT_DOUBLE, KT_ENUM, KT_BOOL, KT_STR } key_type;

typedef struct key_def {
    const char *key;           /* dotted scenario key */
    key_type type;
    size_t off, size;          /* field in rs_scenario */
    uint64_t umin, umax;       /* KT_UINT */
    double dmin, dmax;         /* KT_DOUBLE */
    bool dmin_open;            /* KT_DOUBLE: value must be > dmin, not >= */
    const char *const *names;  /* KT_ENUM: NULL-terminated, names[i] is value i */
    const char *desc;
} key_def;

#define FIELD(m) offsetof(rs_scenario, m), sizeof(((rs_scenario *)0)->m)
#define UINT(k, m, lo, hi, d) { k, KT_UINT, FIELD(m), lo, hi, 0, 0, false, NULL, d }
#define DBL(k, m, lo, open, hi, d) { k, KT_DOUBLE, FIELD(m), 0, 0, lo, hi, open, NULL, d }
#define ENUM(k, m, names, d) { k, KT_ENUM, FIELD(m), 0, 0, 0, 0, false, names, d }
#define BOOL(k, m, d) { k, KT_BOOL, FIELD(m), 0, 0, 0, 0, false, bool_names, d }
/* KT_STR: a NUL-terminated char array field; size bounds the length. */
#define STR(k, m, d) { k, KT_STR, FIELD(m), 0, 0, 0, 0, false, NULL, d }

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
/* Unsigned keys up to INT64_MAX travel as JSON integers. */
_Static_assert(sizeof(json_int_t) == sizeof(int64_t), "64-bit JSON integers");

/* Names in enum value order (RS_TOPO_FAT_TREE = 0, ...). */
static const char *const bool_names[] = { "false", "true", NULL };
static const char *const topo_names[] = { "fat-tree", "rail-only", NULL };
static const char *const transport_names[] = { "roce", "ideal", NULL };
static const char *const ecmp_names[] = { "flow", "packet", "adaptive", "flowlet", NULL };
static const char *const pxn_names[] = { "auto", "on", "off", NULL };
static const char *const cc_names[] = { "dcqcn", "none", NULL };
static const char *const recovery_names[] = { "go-back-n", "selective", NULL };
static const char *const dcqcn_profile_names[] = { "connectx", "paper-2015", NULL };
static const char *const capture_format_names[] = { "pcap", "pcapng", NULL };
static const char *const fidelity_names[] = { "packet", "flow", "both", NULL };
static const char *const synth_names[] = { "single", "permutation", "all-to-all", "incast", "collective", NULL };
/* rs_coll_op_name / rs_coll_algo_name order; tests/e2e/collective.sh checks
 * that the summary's op matches traffic.op. */
static const char *const op_names[] = { "allgather", "reducescatter", "allreduce", "alltoall", "sendrecv", NULL };
static const char *const algo_names[] = { "auto", "ring", "tree", "direct", "pairwise", "hierarchical", NULL };
_Static_assert(sizeof op_names / sizeof op_names[0] == RS_COLL_NOPS + 1, "one name per rs_coll_op");
_Static_assert(sizeof algo_names / sizeof algo_names[0] == RS_COLL_NALGOS + 1, "one name per rs_coll_algo");

#define MAX_GPUS 1048576u
#define RATE_MAX 1e6          /* Gb/s */
#define LAT_MAX 1e9           /* ns: one second per link or switch */

/* Schema order is also the order of rs_scenario_to_json and help output;
 * keys of one section stay together. The seed stops at 2^63-1 because JSON
 * integers in jansson are signed 64-bit. */
static const key_def keys[] = {
    UINT("seed", net.seed, 0, INT64_MAX,
         "run seed: ECMP hash salts, packet spraying, flow entropy and traffic partners derive from it"),
    ENUM("fidelity", fidelity, fidelity_names,
         "packet: every frame, queue and ACK; flow: max-min fair flows on the same routes; "
         "both: railsim run runs both and reports the flow level's error and speed-up (docs/fidelity.md)"),
    ENUM("topology.kind", net.kind, topo_names,
         "fat-tree: one Clos fabric; rail-only: one fabric per rail, no spine between rails"),
    UINT("topology.gpus", net.gpus, 1, MAX_GPUS,
         "GPUs in the cluster (a multiple of topology.hb_size)"),
    UINT("topology.hb_size", net.hb_size, 1, 65535,
         "GPUs per high-bandwidth (NVLink) domain, which is also the number of rails"),
    UINT("topology.radix", net.radix, 2, 65536,
         "ports per Ethernet switch (even)"),
    DBL("topology.nic_gbps", net.nic_gbps, 0, true, RATE_MAX,
        "rate of each GPU NIC <-> leaf switch link, Gb/s"),
    DBL("topology.link_gbps", net.link_gbps, 0, true, RATE_MAX,
        "rate of each switch <-> switch link, Gb/s"),
    DBL("topology.hb_gbps", net.hb_gbps, 0, true, RATE_MAX,
        "HB-domain bandwidth per GPU per direction, Gb/s"),
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
         "collective iterations, back to back; summary times each"),
    STR("workload.plan", workload.plan,
        "training plan to replay: a plan JSON file or a preset (llama2-7b, llama2-70b, gpt3-175b, gpt-1t, "
        "mixtral-8x7b, demo-dense, demo-moe), DP set to fill topology.gpus; "
        "replaces traffic.*"),
    STR("workload.trace", workload.trace,
        "trace file to replay (railsim trace gen); replaces traffic.*; at most one of workload.plan and workload.trace"),
    UINT("workload.iterations", workload.iterations, 1, 1000000,
         "training iterations to replay, back to back; summary times each"),
    ENUM("workload.algo", workload.algo, algo_names,
         "collective algorithm for the workload's collectives where it applies; auto elsewhere (docs/replay.md)"),
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

/* ---- field access ------------------------------------------------------ */

static uint64_t get_uint(const rs_scenario *sc, const key_def *k)
{
    const char *p = (const char *)sc + k->off;
    if (k->size == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void put_uint(rs_scenario *sc, const key_def *k, uint64_t v)
{
    char *p = (char *)sc + k->off;
    if (k->size == sizeof(uint32_t)) {
        uint32_t w = (uint32_t)v; /* range-checked: umax fits */
        memcpy(p, &w, sizeof w);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

static double get_double(const rs_scenario *sc, const key_def *k)
{
    double v;
    memcpy(&v, (const char *)sc + k->off, sizeof v);
    return v;
}

static void put_double(rs_scenario *sc, const key_def *k, double v)
{
    memcpy((char *)sc + k->off, &v, sizeof v);
    if (k->off == offsetof(rs_scenario, timeline.sample_us))
        sc->timeline.sample_set = 1; /* its default depends on the fidelity */
}

static int get_enum(const rs_scenario *sc, const key_def *k)
{
    int v;
    memcpy(&v, (const char *)sc + k->off, sizeof v);
    return v;
}

static void put_enum(rs_scenario *sc, const key_def *k, int v)
{
    memcpy((char *)sc + k->off, &v, sizeof v);
}

static size_t enum_count(const key_def *k)
{
    size_t n = 0;
    while (k->names[n])
        n++;
    return n;
}

/* Name of the current value; "?" for a value the enum does not name (only
 * possible when the caller filled the struct by hand). */
static const char *enum_name(const rs_scenario *sc, const key_def *k)
{
    int v = get_enum(sc, k);
    return v >= 0 && (size_t)v < enum_count(k) ? k->names[v] : "?";
}

/* ---- schema lookups ---------------------------------------------------- */

static const key_def *find_key(const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].key, name) == 0)
            return &keys[i];
    return NULL;
}

/* Length of the section part of a key ("topology" in "topology.gpus"), 0 for
 * a top-level key. */
static size_t section_len(const char *key)
{
    const char *dot = strrchr(key, '.');
    return dot ? (size_t)(dot - key) : 0;
}

static bool is_section(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < NKEYS; i++)
        if (section_len(keys[i].key) == n && strncmp(keys[i].key, name, n) == 0)
            return true;
    return false;
}

/* A known key or section close to the unknown dotted name, written to out
 * (size > any key); false when none is close. In order of preference (ties
 * go to schema order):
 *  1. a key or section within edit distance 2 of the whole name
 *     ("topology.radx", "topolgy");
 *  2. same section, and one last segment is a prefix of the other, at least
 *     2 characters long ("topology.hb" -> topology.hb_size);
 *  3. the same last segment, or one edit away, in another section ("gpus",
 *     "transport.mtu" -> topology.mtu). */
static bool suggest(const char *name, char *out, size_t size)
{
    const key_def *best = NULL;
    bool best_is_section = false;
    size_t best_d = 3;
    size_t nlen = strlen(name);

    for (size_t i = 0; i < NKEYS; i++) {
        const char *key = keys[i].key;
        size_t d = rs_edit_distance(name, key, 2);
        if (d < best_d && d < nlen) {
            best = &keys[i];
            best_d = d;
        }
        size_t sl = section_len(key);
        char section[64];
        if (sl == 0 || sl >= sizeof section)
            continue;
        memcpy(section, key, sl);
        section[sl] = '\0';
        /* A section name alone, of 6 or more letters, may be 3 edits
         * off ("topologies"). */
        int long_section = nlen >= 6 && !strchr(name, '.');
        d = rs_edit_distance(name, section, long_section ? 3 : 2);
        if (d < best_d + (size_t)long_section && d < nlen && (d < 3 || long_section)) {
            best = &keys[i];
            best_is_section = true;
            best_d = d;
        }
    }

    size_t nsec = section_len(name);
    const char *nseg = nsec ? name + nsec + 1 : name;
    size_t nseg_len = strlen(nseg);

    size_t best_extra = SIZE_MAX;
    for (size_t i = 0; !best && i < NKEYS && nseg_len >= 2; i++) {
        const char *key = keys[i].key;
        size_t ksec = section_len(key);
        const char *kseg = ksec ? key + ksec + 1 : key;
        size_t kseg_len = strlen(kseg);
        if (ksec != nsec || strncmp(key, name, nsec) != 0)
            continue;
        size_t shorter = nseg_len < kseg_len ? nseg_len : kseg_len;
        size_t extra = nseg_len > kseg_len ? nseg_len - kseg_len : kseg_len - nseg_len;
        if (strncmp(nseg, kseg, shorter) == 0 && extra < best_extra) {
            best = &keys[i];
            best_extra = extra;
        }
    }

    best_d = 2;
    for (size_t i = 0; !best && i < NKEYS; i++) {
        const char *key = keys[i].key;
        size_t ksec = section_len(key);
        const char *kseg = ksec ? key + ksec + 1 : key;
        size_t d = rs_edit_distance(nseg, kseg, 1);
        if (d == 1 && nseg_len < 4)
            continue; /* one edit in a 3-letter name is a different word */
        if (d < best_d) {
            best = &keys[i];
            best_d = d;
        }
    }
    if (!best)
        return false;
    int len = best_is_section ? (int)section_len(best->key) : (int)strlen(best->key);
    snprintf(out, size, "%.*s", len, best->key);
    return true;
}

/* ---- error messages ---------------------------------------------------- */

/* Where a value came from: a file (path) or a --set string (path NULL). */
typedef struct source {
    const char *path;
} source;

/* "scenario.json: topology.gpus: " or "--set topology.gpus: ". */
static int fail_key(const source *src, const char *key, rs_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_key(const source *src, const char *key, rs_err *err, const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (src->path)
        return rs_err_set(err, RS_EINVAL, "%s: %s: %s", src->path, key, what);
    return rs_err_set(err, RS_EINVAL, "--set %s: %s", key, what);
}

static int fail_unknown(const source *src, const char *name_in, rs_err *err)
{
    char s[64], hint[96] = "", name[128];
    if (suggest(name_in, s, sizeof s))
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", s);
    /* JSON keys may hold any character; keep the message on one line. */
    rs_printable(name_in, name, sizeof name);
    if (src->path)
        return rs_err_set(err, RS_EINVAL, "%s: unknown key '%s'%s", src->path, name, hint);
    return rs_err_set(err, RS_EINVAL, "--set %s: unknown key%s", name, hint);
}

/* Copy s into buf for a message: at most ~60 characters, control
 * characters replaced, so a hostile value cannot break the one line. */
static void quote_text(char *buf, size_t size, const char *s)
{
    size_t n = 0;
    buf[n++] = '"';
    for (; *s && n + 5 < size && n < 62; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    if (*s) {
        buf[n++] = '.';
        buf[n++] = '.';
        buf[n++] = '.';
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

/* A JSON value as it appears in a "got ..." clause. */
static void describe_json(char *buf, size_t size, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: snprintf(buf, size, "an object"); break;
    case JSON_ARRAY: snprintf(buf, size, "an array"); break;
    case JSON_STRING: quote_text(buf, size, json_string_value(v)); break;
    case JSON_INTEGER: snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: snprintf(buf, size, "%.15g", json_real_value(v)); break;
    case JSON_TRUE: snprintf(buf, size, "true"); break;
    case JSON_FALSE: snprintf(buf, size, "false"); break;
    default: snprintf(buf, size, "null"); break;
    }
}

/* Doubles for people: whole values without an exponent (1e15 as
 * 1000000000000000), others with up to 15 significant digits. */
static void format_double(char *buf, size_t size, double v)
{
    if (v == floor(v) && fabs(v) < 1e17)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.15g", v);
}

/* "expected an integer from 1 to 1048576" and friends. */
static void describe_expected(char *buf, size_t size, const key_def *k)
{
    switch (k->type) {
    case KT_UINT:
        snprintf(buf, size, "expected an integer from %llu to %llu",
                 (unsigned long long)k->umin, (unsigned long long)k->umax);
        break;
    case KT_DOUBLE: {
        char lo[32], hi[32];
        format_double(lo, sizeof lo, k->dmin);
        format_double(hi, sizeof hi, k->dmax);
        snprintf(buf, size, "expected a number %s %s %s %s", k->dmin_open ? "greater than" : "from", lo,
                 k->dmin_open ? "and at most" : "to", hi);
        break;
    }
    case KT_BOOL:
        snprintf(buf, size, "expected true or false");
        break;
    case KT_STR:
        snprintf(buf, size, "expected a string of at most %zu characters", k->size - 1);
        break;
    case KT_ENUM: {
        size_t n = (size_t)snprintf(buf, size, "expected one of");
        for (size_t i = 0; k->names[i] && n < size; i++)
            n += (size_t)snprintf(buf + n, size - n, "%s \"%s\"", i ? "," : "", k->names[i]);
        break;
    }
    }
}

/* The enum value of k nearest to text (within 2 edits, fewer than its
 * length), or NULL. */
static const char *enum_suggest(const key_def *k, const char *text)
{
    const char *best = NULL;
    size_t best_d = 3, n = strlen(text);
    for (size_t i = 0; k->type == KT_ENUM && k->names[i]; i++) {
        size_t d = rs_edit_distance(text, k->names[i], 2);
        if (d < best_d && d < n) {
            best = k->names[i];
            best_d = d;
        }
    }
    return best;
}

static int fail_value(const source *src, const key_def *k, const char *got, rs_err *err)
{
    char expected[160];
    describe_expected(expected, sizeof expected, k);
    return fail_key(src, k->key, err, "%s, got %s", expected, got);
}

/* A bad enum value: as fail_value, with the nearest name when one is close. */
static int fail_enum(const source *src, const key_def *k, const char *text, rs_err *err)
{
    char got[80];
    quote_text(got, sizeof got, text);
    const char *near = enum_suggest(k, text);
    if (!near)
        return fail_value(src, k, got, err);
    char expected[160];
    describe_expected(expected, sizeof expected, k);
    return fail_key(src, k->key, err, "%s, got %s (did you mean \"%s\"?)", expected, got, near);
}

/* ---- applying one value ------------------------------------------------ */

static bool uint_in_range(const key_def *k, uint64_t v)
{
    return v >= k->umin && v <= k->umax;
}

static bool double_in_range(const key_def *k, double v)
{
    /* Written so that NaN fails both comparisons. */
    bool lo = k->dmin_open ? v > k->dmin : v >= k->dmin;
    return lo && v <= k->dmax;
}

/* A whole, non-negative double that fits the key's range, as an integer. */
static bool whole_uint(const key_def *k, double d, uint64_t *out)
{
    if (!(d >= (double)k->umin && d <= (double)k->umax) || d != floor(d))
        return false;
    *out = (uint64_t)d;
    return uint_in_range(k, *out); /* (double)umax may round up */
}

/* a and b equal but for '-' and '_' ("all-to-all", "alltoall",
 * "all_to_all"); case still counts, as everywhere in the format. */
static bool same_word(const char *a, const char *b)
{
    for (;;) {
        while (*a == '-' || *a == '_')
            a++;
        while (*b == '-' || *b == '_')
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if (*a++ != *b++)
            return false;
    }
}

/* An enum value by name: exactly, or spelled with other hyphens (so
 * traffic.kind and traffic.op both take "all-to-all" and "alltoall"). */
static int enum_lookup(const key_def *k, const char *name)
{
    for (int i = 0; k->names[i]; i++)
        if (strcmp(k->names[i], name) == 0)
            return i;
    for (int i = 0; k->names[i]; i++)
        if (same_word(k->names[i], name))
            return i;
    return -1;
}

static int apply_json(rs_scenario *sc, const key_def *k, const json_t *v,
                      const source *src, rs_err *err)
{
    bool ok = false;
    switch (k->type) {
    case KT_UINT: {
        uint64_t u = 0;
        if (json_is_integer(v)) {
            json_int_t i = json_integer_value(v);
            u = (uint64_t)i;
            ok = i >= 0 && uint_in_range(k, u);
        } else if (json_is_real(v)) {
            /* 64.0 is 64; 1.5 is not an integer. */
            ok = whole_uint(k, json_real_value(v), &u);
        }
        if (ok)
            put_uint(sc, k, u);
        break;
    }
    case KT_DOUBLE:
        if (json_is_number(v) && double_in_range(k, json_number_value(v))) {
            put_double(sc, k, json_number_value(v));
            ok = true;
        }
        break;
    case KT_STR:
        if (json_is_string(v) && json_string_length(v) < k->size &&
            strlen(json_string_value(v)) == json_string_length(v)) {
            memcpy((char *)sc + k->off, json_string_value(v), json_string_length(v) + 1);
            ok = true;
        }
        break;
    case KT_BOOL:
        if (json_is_boolean(v)) {
            put_enum(sc, k, json_is_true(v));
            ok = true;
            break;
        }
        __attribute__((fallthrough)); /* "true" and "false" as strings too */
    case KT_ENUM:
        if (json_is_string(v)) {
            int e = enum_lookup(k, json_string_value(v));
            if (e >= 0) {
                put_enum(sc, k, e);
                ok = true;
            } else if (k->type == KT_ENUM) {
                return fail_enum(src, k, json_string_value(v), err);
            }
        }
        break;
    }
    if (ok)
        return RS_OK;
    char got[80];
    describe_json(got, sizeof got, v);
    return fail_value(src, k, got, err);
}

/* Only decimal notation: strtod would also take "0x1p4", "inf" and
 * leading blanks. */
static bool decimal_text(const char *text)
{
    return text[0] != '\0' && text[strspn(text, "0123456789.eE+-")] == '\0';
}

/* A --set value: the whole string must be the number (no sign, no blanks). */
static int apply_text(rs_scenario *sc, const key_def *k, const char *text,
                      const source *src, rs_err *err)
{
    bool ok = false;
    char *end;
    switch (k->type) {
    case KT_UINT: {
        if (!isdigit((unsigned char)text[0]))
            break;
        errno = 0;
        unsigned long long u = strtoull(text, &end, 10);
        if (*end == '\0') {
            ok = errno == 0 && uint_in_range(k, u);
        } else if (decimal_text(text)) {
            /* "1e9" and "64.0" are whole numbers too. */
            double d = strtod(text, &end);
            uint64_t w = 0;
            ok = *end == '\0' && whole_uint(k, d, &w);
            u = w;
        }
        if (ok)
            put_uint(sc, k, u);
        break;
    }
    case KT_DOUBLE: {
        if (!decimal_text(text))
            break;
        double d = strtod(text, &end);
        if (*end == '\0' && double_in_range(k, d)) { /* also rejects nan, inf */
            put_double(sc, k, d);
            ok = true;
        }
        break;
    }
    case KT_STR:
        if (strlen(text) < k->size) {
            memcpy((char *)sc + k->off, text, strlen(text) + 1);
            ok = true;
        }
        break;
    case KT_BOOL:
    case KT_ENUM: {
        int e = enum_lookup(k, text);
        if (e >= 0) {
            put_enum(sc, k, e);
            ok = true;
        } else if (k->type == KT_ENUM) {
            return fail_enum(src, k, text, err);
        }
        break;
    }
    }
    if (ok)
        return RS_OK;
    char got[80];
    quote_text(got, sizeof got, text);
    return fail_value(src, k, got, err);
}

/* ---- the file ---------------------------------------------------------- */

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Apply the members of obj, whose dotted path is prefix ("" at the top). */
static int apply_object(rs_scenario *sc, const json_t *obj, const char *prefix,
                        const source *src, rs_err *err)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)obj, name, v) {
        char dotted[256];
        snprintf(dotted, sizeof dotted, "%s%s%s", prefix, *prefix ? "." : "", name);
        const key_def *k = find_key(dotted);
        if (k && strchr(name, '.'))
            /* One spelling per key, so a file cannot set a key twice. */
            return rs_err_set(err, RS_EINVAL,
                              "%s: key '%s' must be written nested, as {\"%.*s\": {\"%s\": ...}}",
                              src->path, dotted, (int)section_len(dotted), dotted,
                              dotted + section_len(dotted) + 1);
        if (k) {
            int rc = apply_json(sc, k, v, src, err);
            if (rc)
                return rc;
        } else if (is_section(dotted)) {
            if (!json_is_object(v))
                return fail_key(src, dotted, err, "expected an object of %s.* keys, got %s",
                                dotted, json_kind(v));
            int rc = apply_object(sc, v, dotted, src, err);
            if (rc)
                return rc;
        } else {
            return fail_unknown(src, dotted, err);
        }
    }
    return RS_OK;
}

/* The whole of file f in a new buffer (*buf, *len; free it), or RS_EIO
 * with errno kept. */
static int slurp(FILE *f, char **buf, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    if (!b)
        return RS_ENOMEM;
    for (;;) {
        if (n == cap) {
            char *nb = cap > ((size_t)1 << 30) ? NULL : realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return RS_ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(f)) {
        free(b);
        return RS_EIO;
    }
    *buf = b;
    *len = n;
    return RS_OK;
}

/* The whole scenario file at path in a new buffer (*text, *len; free it):
 * read whole first, it tells a file we cannot read (RS_EIO, with errno)
 * from one we cannot parse. */
static int read_file(const char *path, char **text, size_t *len, rs_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rs_err_set(err, RS_EIO, "%s: cannot open scenario file: %s", path, strerror(errno));
    int rc = slurp(f, text, len);
    int read_errno = errno;
    fclose(f);
    if (rc == RS_ENOMEM)
        return rs_err_set(err, rc, "%s: out of memory reading the scenario file", path);
    if (rc != RS_OK)
        return rs_err_set(err, RS_EIO, "%s: cannot read scenario file: %s", path, strerror(read_errno));
    return RS_OK;
}

/* Apply the JSON scenario text[0..len), named path in messages (a file
 * name, or "scenario" for a string). A NUL byte, which JSON text cannot
 * hold and the parser would stop at silently, is refused by offset. */
static int apply_text_json(rs_scenario *sc, const char *path, const char *text, size_t len, rs_err *err)
{
    int rc;
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return rs_err_set(err, RS_EINVAL, "%s: byte %zu is a NUL; expected JSON text", path, (size_t)(nul - text));
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (jerr.line > 0)
            return rs_err_set(err, RS_EINVAL, "%s:%d:%d: JSON syntax error at line %d, column %d: %s",
                              path, jerr.line, jerr.column, jerr.line, jerr.column, jerr.text);
        return rs_err_set(err, RS_EINVAL, "%s: JSON syntax error: %s", path, jerr.text);
    }
    source src = { path };
    if (!json_is_object(root))
        rc = rs_err_set(err, RS_EINVAL, "%s: expected a JSON object at the top level, got %s",
                        path, json_kind(root));
    else
        rc = apply_object(sc, root, "", &src, err);
    json_decref(root);
    return rc;
}

/* ---- --set ------------------------------------------------------------- */

/* KEY=VALUE in one argument. `--set topology.gpus 64` must say so, not
 * take 64 for the scenario file: rs_scenario_load checks every --set
 * with this before it opens the file. */
static int check_set(const char *set, rs_err *err)
{
    const char *eq = strchr(set, '=');
    if (!eq || eq == set) {
        char got[80];
        quote_text(got, sizeof got, set);
        return rs_err_set(err, RS_EINVAL, "--set: expected KEY=VALUE in one argument (e.g. --set topology.gpus=64), "
                          "got %s", got);
    }
    return RS_OK;
}

static int apply_set(rs_scenario *sc, const char *set, rs_err *err)
{
    const source src = { NULL };
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
    const key_def *k = find_key(key);
    if (k)
        return apply_text(sc, k, eq + 1, &src, err);
    if (is_section(key)) {
        for (size_t i = 0; i < NKEYS; i++)
            if (section_len(keys[i].key) == n && strncmp(keys[i].key, key, n) == 0)
                return rs_err_set(err, RS_EINVAL,
                                  "--set %s: '%s' is a group of keys; expected one of them, e.g. '%s'",
                                  key, key, keys[i].key);
    }
    return fail_unknown(&src, key, err);
}

/* ---- public ------------------------------------------------------------ */

void rs_scenario_timeline_default(rs_scenario_timeline *c)
{
    memset(c, 0, sizeof *c);
    c->enabled = 1;
    c->heavy = 1;
    c->sample_us = 10.0;
}

void rs_scenario_default(rs_scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    rs_net_config_default(&sc->net);
    rs_synth_config_default(&sc->traffic);
    rs_capture_config_default(&sc->capture);
    rs_workload_config_default(&sc->workload);
    rs_scenario_timeline_default(&sc->timeline);
    rs_fault_config_default(&sc->faults);
    rs_scenario_set_level(sc, RS_LEVEL_PACKET);
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

/* rs_scenario_load and rs_scenario_load_string: the JSON text (NULL:
 * none), named path in messages, then the sets. Two passes: the first
 * finds transport.dcqcn.profile, the second starts from that profile's
 * constants, so that every transport.dcqcn.* key given overrides the
 * profile wherever it comes. */
static int load(rs_scenario *sc, const char *path, const char *text, size_t len, char *const *sets, int nsets,
                rs_err *err)
{
    rs_scenario tmp;
    rs_dcqcn_profile profile = RS_DCQCN_CONNECTX;
    for (int pass = 0; pass < 2; pass++) {
        rs_scenario_default(&tmp);
        if (pass)
            rs_dcqcn_profile_set(&tmp.net.dcqcn, profile);
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
    }
    rs_scenario_set_level(&tmp, tmp.fidelity); /* the network follows the key */
    /* The schedule's syntax; its targets need the network (rs_net_faults_start). */
    int rc = rs_fault_config_check(&tmp.faults, err);
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
    rc = path ? read_file(path, &text, &len, err) : RS_OK;
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

char *rs_scenario_dump(const rs_scenario *sc)
{
    json_t *j = rs_scenario_to_json(sc);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return text;
}

static json_t *value_json(const rs_scenario *sc, const key_def *k)
{
    switch (k->type) {
    case KT_UINT: {
        uint64_t u = get_uint(sc, k);
        /* Only a hand-filled seed can pass INT64_MAX; JSON integers cannot
         * hold it, so it degrades to a real rather than wrapping negative. */
        if (u > (uint64_t)INT64_MAX)
            return json_real((double)u);
        return json_integer((json_int_t)u);
    }
    case KT_DOUBLE:
        return json_real(get_double(sc, k));
    case KT_ENUM:
        return json_string(enum_name(sc, k));
    case KT_BOOL:
        return json_boolean(get_enum(sc, k));
    case KT_STR:
        return json_string((const char *)sc + k->off);
    }
    return NULL;
}

json_t *rs_scenario_to_json(const rs_scenario *sc)
{
    json_t *root = json_object();
    if (!root)
        return NULL;
    for (size_t i = 0; i < NKEYS; i++) {
        const key_def *k = &keys[i];
        size_t sl = section_len(k->key);
        json_t *parent = root;
        const char *leaf = k->key;
        if (sl) {
            char section[64];
            if (RS_NEVER(sl >= sizeof section))
                goto fail;
            memcpy(section, k->key, sl);
            section[sl] = '\0';
            leaf = k->key + sl + 1;
            parent = json_object_get(root, section);
            if (!parent) {
                parent = json_object();
                if (!parent || json_object_set_new(root, section, parent))
                    goto fail; /* set_new dropped parent already */
            }
        }
        if (json_object_set_new(parent, leaf, value_json(sc, k)))
            goto fail;
    }
    return root;
fail:
    json_decref(root);
    return NULL;
}

static void format_default(char *buf, size_t size, const rs_scenario *sc, const key_def *k)
{
    switch (k->type) {
    case KT_UINT: snprintf(buf, size, "%llu", (unsigned long long)get_uint(sc, k)); break;
    case KT_DOUBLE: format_double(buf, size, get_double(sc, k)); break;
    case KT_BOOL:
    case KT_ENUM: snprintf(buf, size, "%s", enum_name(sc, k)); break;
    case KT_STR: snprintf(buf, size, "\"%s\"", (const char *)sc + k->off); break;
    }
}

/* Short bounds for the help table: 2^40 rather than 1099511627776. */
static void format_u64(char *buf, size_t size, uint64_t v)
{
    if (v == (uint64_t)INT64_MAX)
        snprintf(buf, size, "2^63-1");
    else if (v > UINT32_MAX && (v & (v - 1)) == 0)
        snprintf(buf, size, "2^%d", __builtin_ctzll(v));
    else
        snprintf(buf, size, "%llu", (unsigned long long)v);
}

static void format_range(char *buf, size_t size, const key_def *k)
{
    switch (k->type) {
    case KT_UINT: {
        char lo[24], hi[24];
        format_u64(lo, sizeof lo, k->umin);
        format_u64(hi, sizeof hi, k->umax);
        snprintf(buf, size, "%s..%s", lo, hi);
        break;
    }
    case KT_DOUBLE: {
        char lo[32], hi[32];
        format_double(lo, sizeof lo, k->dmin);
        format_double(hi, sizeof hi, k->dmax);
        snprintf(buf, size, "%s%s, %s]", k->dmin_open ? "(" : "[", lo, hi);
        break;
    }
    case KT_STR:
        snprintf(buf, size, "text, up to %zu chars", k->size - 1);
        break;
    case KT_BOOL:
    case KT_ENUM: {
        size_t n = 0;
        buf[0] = '\0';
        for (size_t i = 0; k->names[i] && n < size; i++)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "|" : "", k->names[i]);
        break;
    }
    }
}

void rs_scenario_print_keys(FILE *f)
{
    static const char *const type_names[] = { "uint", "number", "enum", "bool", "string" };
    rs_scenario def;
    rs_scenario_default(&def);
    /* Two passes: column widths first, so the table lines up whatever the
     * defaults are. */
    int wkey = 3, wdef = 7, wrange = 7;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            fprintf(f, "%-*s  %-6s  %-*s  %-*s  %s\n", wkey, "KEY", "TYPE", wdef, "DEFAULT",
                    wrange, "ALLOWED", "MEANING");
        for (size_t i = 0; i < NKEYS; i++) {
            const key_def *k = &keys[i];
            char dflt[40], range[96];
            format_default(dflt, sizeof dflt, &def, k);
            format_range(range, sizeof range, k);
            if (pass == 0) {
                wkey = (int)strlen(k->key) > wkey ? (int)strlen(k->key) : wkey;
                wdef = (int)strlen(dflt) > wdef ? (int)strlen(dflt) : wdef;
                wrange = (int)strlen(range) > wrange ? (int)strlen(range) : wrange;
            } else {
                fprintf(f, "%-*s  %-6s  %-*s  %-*s  %s\n", wkey, k->key, type_names[k->type],
                        wdef, dflt, wrange, range, k->desc);
            }
        }
    }
}
