/*
 * summary.c - a run's summary: its figures collected as C values
 * (rs_result_data, run.h) while the network and the workload exist, and
 * summary.json written from them. Key order is fixed (insertion order),
 * numbers are integers where the simulation computed integers (times in
 * picoseconds, counts), so the same run gives the same bytes; only wall_s
 * and peak_rss_bytes describe the host and differ between runs.
 */
#include "summary.h"

#include "pool.h"

#include <stdlib.h>
#include <string.h>

#define I(x) json_integer((json_int_t)(x))
/* A figure that may be null (-1). */
#define IN(x) ((x) < 0 ? json_null() : I(x))
#define RN(x) ((x) < 0 ? json_null() : json_real(x))

/* -- collecting ------------------------------------------------------------ */

/* A copy of n elements of elem bytes (NULL for none); *ok cleared when out of memory. */
static void *dup_array(const void *src, size_t n, size_t elem, int *ok)
{
    if (n == 0)
        return NULL;
    void *p = malloc(n * elem);
    if (!p) {
        *ok = 0;
        return NULL;
    }
    memcpy(p, src, n * elem);
    return p;
}

/* nccl-tests' figures: time = mean over the iterations; algbw = bytes /
 * time in GB/s (10^9 bytes/s), as nccl-tests prints it; busbw = algbw x
 * rs_coll_busbw_factor. -1 while no iteration has completed or when the
 * time is 0 (zero bytes, one rank). */
static void collect_collective(const rs_collrun *r, rs_summary_store *s, int *ok)
{
    rs_result_collective *c = &s->coll;
    uint32_t n;
    const rs_time *t = rs_collrun_times(r, &n);
    rs_coll_op op = rs_collrun_op(r);
    c->op = rs_coll_op_name(op);
    c->algo = rs_coll_algo_name(rs_collrun_algo(r));
    c->protocol = rs_coll_proto_name(rs_collrun_proto(r));
    c->predicted_us = rs_collrun_predicted_us(r);
    c->ranks = rs_collrun_ranks(r);
    c->bytes = rs_collrun_bytes(r);
    c->iters = rs_collrun_iters(r);
    c->ntimes = n;
    c->times_ps = s->coll_times = dup_array(t, n, sizeof *t, ok);
    c->time_ps = c->bound_ps = c->algbw_GBps = c->busbw_GBps = -1;
    if (n == 0)
        return;
    unsigned __int128 sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += t[i];
    uint64_t mean = (uint64_t)((sum + n / 2) / n);
    c->time_ps = (double)mean;
    c->bound_ps = (double)rs_collrun_bound(r);
    if (mean == 0)
        return;
    /* bytes / (mean * 1e-12 s) / 1e9 */
    c->algbw_GBps = (double)c->bytes * 1e3 / (double)mean;
    c->busbw_GBps = c->algbw_GBps * rs_coll_busbw_factor(op, c->ranks);
}

/* The replay's figures (docs/replay.md defines each). */
static void collect_iteration(const rs_replay *r, rs_summary_store *s, int *ok)
{
    rs_result_iteration *it = &s->it;
    rs_replay_stats_get(r, &it->st);
    const rs_trace *t = rs_replay_trace(r);
    const rs_trace_iter *ti = rs_trace_iteration(t);
    uint32_t n;
    const rs_time *times = rs_replay_iter_times(r, &n);
    it->ntimes = n;
    it->times_ps = s->it_times = dup_array(times, n, sizeof *times, ok);
    const char *name = rs_trace_name(t);
    it->name = s->name = dup_array(name, strlen(name) + 1, 1, ok);
    it->tokens_valid = it->st.done && ti->tokens;
    it->mfu_valid = it->st.done && ti->peak_flops > 0 && ti->model_flops > 0;
}

static void collect_faults(rs_net *net, rs_summary_store *s, int *ok)
{
    rs_result_data *d = &s->d;
    d->nfaults = rs_net_fault_count(net);
    d->nstuck = rs_net_fault_pfc_stuck_count(net);
    d->nabsent = rs_net_fault_absent_count(net);
    if (d->nfaults && !(d->faults = s->faults = calloc(d->nfaults, sizeof *s->faults)))
        *ok = 0;
    if (d->nstuck && !(d->stuck = s->stuck = calloc(d->nstuck, sizeof *s->stuck)))
        *ok = 0;
    if (d->nabsent && !(d->absent = s->absent = calloc(d->nabsent, sizeof *s->absent)))
        *ok = 0;
    for (uint32_t i = 0; s->faults && i < d->nfaults; i++)
        rs_net_fault_info_get(net, i, &s->faults[i]);
    for (uint32_t i = 0; s->stuck && i < d->nstuck; i++)
        rs_net_fault_pfc_stuck_get(net, i, &s->stuck[i]);
    for (uint32_t i = 0; s->absent && i < d->nabsent; i++)
        rs_net_fault_absent_get(net, i, &s->absent[i]);
    const char *stop = rs_net_fault_errmsg(net);
    d->faults_stop = s->faults_stop = dup_array(stop, strlen(stop) + 1, 1, ok);
}

/* Port i queued, dropped, paused or marked anything: *pi holds it. */
static int port_busy(rs_net *net, uint32_t i, rs_net_port_info *pi)
{
    rs_net_port_info_get(net, i, pi);
    return (pi->max_queue_bytes | pi->drops | pi->pfc_sent | pi->pfc_received | pi->ecn_marked | pi->cnp_sent) != 0;
}

/* Every busy port, by port id: counted first, so the copy holds only
 * those (a large network has ~10^5 ports, few of them busy). */
static void collect_ports(rs_net *net, rs_summary_store *s, int *ok)
{
    uint32_t n = rs_net_port_count(net), k = 0;
    rs_net_port_info pi;
    for (uint32_t i = 0; i < n; i++)
        k += port_busy(net, i, &pi);
    if (k && !(s->ports = malloc(k * sizeof *s->ports))) {
        *ok = 0;
        return;
    }
    for (uint32_t i = 0, j = 0; j < k; i++)
        if (port_busy(net, i, &pi))
            s->ports[j++] = pi;
    s->d.nports = k;
    s->d.ports = s->ports;
}

int rs_summary_collect(const rs_scenario *sc, rs_net *net, const rs_run_info *info, rs_summary_store *s)
{
    memset(s, 0, sizeof *s);
    s->d.size = (uint32_t)sizeof s->d;
    s->coll.size = (uint32_t)sizeof s->coll;
    s->it.size = (uint32_t)sizeof s->it;
    s->ff.size = (uint32_t)sizeof s->ff;
    rs_result_data *d = &s->d;
    int ok = 1;
    rs_net_stats_get(net, &d->net);
    d->msgs_relayed = rs_net_msgs_relayed(net);
    rs_net_topo_info_get(net, &d->topology);
    d->status = info->status == RS_OK ? "complete" : info->status == RS_EINTR ? "interrupted" : "incomplete";
    /* A compute-only replay has no network activity: its end counts too. */
    rs_time end = d->net.last_activity;
    if (info->replay && rs_replay_end_time(info->replay) > end)
        end = rs_replay_end_time(info->replay);
    if (info->coll && rs_collrun_end_time(info->coll) > end)
        end = rs_collrun_end_time(info->coll);
    if (info->jobs_end > end)
        end = info->jobs_end;
    d->sim_end_ps = end;
    d->kind = sc->net.kind;
    d->gpus = sc->net.gpus;
    if (info->coll) {
        collect_collective(info->coll, s, &ok);
        d->collective = &s->coll;
    }
    if (info->replay) {
        collect_iteration(info->replay, s, &ok);
        d->iteration = &s->it;
    }
    d->fct_valid = rs_net_fct_get(net, &d->fct) == RS_OK;
    collect_ports(net, s, &ok);
    collect_faults(net, s, &ok);
    /* The timeline's sampler events are not the run's: a run gives the
     * same summary with and without a timeline. */
    d->events = rs_sim_events_run(rs_net_sim(net)) - rs_net_timeline_events(net);
    if (info->estimate) {
        d->estimate_valid = 1;
        d->estimate_messages = info->estimate->messages;
        d->estimate_events = info->estimate->events;
        d->estimate_memory_bytes = info->estimate->memory_bytes;
        d->estimate_timeline_min_bytes = info->estimate->timeline_min_bytes;
    }
    d->wall_s = info->wall_s;
    if (!ok) {
        rs_summary_store_free(s);
        return RS_ENOMEM;
    }
    return RS_OK;
}

void rs_summary_store_free(rs_summary_store *s)
{
    free(s->ports);
    free(s->faults);
    free(s->stuck);
    free(s->absent);
    free(s->coll_times);
    free(s->it_times);
    free(s->name);
    free(s->faults_stop);
    free(s->rss);
    memset(s, 0, sizeof *s);
}

/* -- writing ----------------------------------------------------------------- */

static json_t *fct_json(const rs_result_data *d)
{
    if (!d->fct_valid)
        return NULL;
    const rs_net_fct *f = &d->fct;
    json_t *o = json_object();
    const char *const keys[5] = { "min", "mean", "p50", "p99", "max" };
    const rs_time v[5] = { f->min, f->mean, f->p50, f->p99, f->max };
    for (int i = 0; i < 5; i++)
        json_object_set_new(o, keys[i], f->n ? I(v[i]) : json_null());
    return o;
}

static json_t *port_json(const rs_net_port_info *pi)
{
    json_t *o = json_object();
    if (o) {
        json_object_set_new(o, "name", json_string(pi->name));
        json_object_set_new(o, "peer", json_string(pi->peer));
        json_object_set_new(o, "tx_packets", I(pi->tx_pkts));
        json_object_set_new(o, "tx_bytes", I(pi->tx_bytes));
        json_object_set_new(o, "max_queue_bytes", I(pi->max_queue_bytes));
        json_object_set_new(o, "max_ingress_bytes", I(pi->max_ingress_bytes));
        json_object_set_new(o, "drops", I(pi->drops));
        json_object_set_new(o, "pfc_sent", I(pi->pfc_sent));
        json_object_set_new(o, "pfc_received", I(pi->pfc_received));
        json_object_set_new(o, "paused_ps", I(pi->paused_ps));
        json_object_set_new(o, "ecn_marked", I(pi->ecn_marked));
        json_object_set_new(o, "cnp_sent", I(pi->cnp_sent));
    }
    return o;
}

/* The ports array is the one part of the summary that grows with the
 * network (~10^5 busy ports on 32,768 GPUs): as one JSON tree it took more
 * memory than the simulation. Its text is built a port at a time, each
 * port's object dumped by jansson and indented to where it sits in
 * summary.json (two levels down), so the result is what dumping the whole
 * tree gives. Structural newlines are the only ones in a dump: jansson
 * escapes those inside strings. */
#define PORTS_INDENT "    "

static int ports_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (rs_array_reserve((void **)buf, cap, *len + n + 1, 1, 4096) != RS_OK)
        return RS_ENOMEM;
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return RS_OK;
}

char *rs_summary_ports_text(const rs_result_data *d)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = ports_append(&buf, &len, &cap, "[", 1);
    for (uint32_t i = 0; rc == RS_OK && i < d->nports; i++) {
        json_t *o = port_json(&d->ports[i]);
        char *t = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        if (!t) {
            rc = RS_ENOMEM;
            break;
        }
        const char *sep = i ? ",\n" PORTS_INDENT : "\n" PORTS_INDENT;
        rc = ports_append(&buf, &len, &cap, sep, strlen(sep));
        for (const char *s = t, *nl; rc == RS_OK && *s; s = nl + 1) {
            nl = strchr(s, '\n');
            if (!nl) {
                rc = ports_append(&buf, &len, &cap, s, strlen(s));
                break;
            }
            rc = ports_append(&buf, &len, &cap, s, (size_t)(nl - s) + 1);
            if (rc == RS_OK)
                rc = ports_append(&buf, &len, &cap, PORTS_INDENT, strlen(PORTS_INDENT));
        }
        free(t);
    }
    const char *end = d->nports ? "\n  ]" : "]";
    if (rc == RS_OK)
        rc = ports_append(&buf, &len, &cap, end, strlen(end));
    if (rc != RS_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Where the ports text goes: a string no summary value can dump as at the
 * top level (the only key at two spaces' indent named ports). */
#define PORTS_MARK "\001railsim-ports"
#define PORTS_MARK_DUMPED "\n  \"ports\": \"\\u0001railsim-ports\""

char *rs_summary_text(json_t *summary, char *ports_text)
{
    char *t = json_dumps(summary, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_object_del(summary, "ports");
    char *at = t ? strstr(t, PORTS_MARK_DUMPED) : NULL;
    if (!t || RS_NEVER(!at)) {
        free(t);
        free(ports_text);
        return NULL;
    }
    /* Built in the ports' own buffer (the largest part of a large run's
     * summary): moved up behind the head, without a second copy. */
    size_t head = (size_t)(at - t) + strlen("\n  \"ports\": ");
    const char *tail = at + strlen(PORTS_MARK_DUMPED);
    size_t np = strlen(ports_text), nt = strlen(tail);
    char *out = realloc(ports_text, head + np + nt + 1);
    if (!out) {
        free(ports_text);
    } else {
        memmove(out + head, out, np);
        memcpy(out, t, head);
        memcpy(out + head + np, tail, nt + 1);
    }
    free(t);
    return out;
}

static json_t *times_json(const rs_time *t, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, I(t[i]));
    return a;
}

/* The bandwidths under their names: algbw_GBps and busbw_GBps, then the
 * same values under algbw_gbps and busbw_gbps, deprecated (they read as
 * gigabits) and kept one release (docs/summary-format.md). */
static void set_bw(json_t *o, double alg, double bus)
{
    json_object_set_new(o, "algbw_GBps", RN(alg));
    json_object_set_new(o, "busbw_GBps", RN(bus));
    json_object_set_new(o, "algbw_gbps", RN(alg));
    json_object_set_new(o, "busbw_gbps", RN(bus));
}

static json_t *collective_json(const rs_result_collective *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "op", json_string(c->op));
    json_object_set_new(o, "algo", json_string(c->algo));
    json_object_set_new(o, "ranks", I(c->ranks));
    json_object_set_new(o, "bytes", I(c->bytes));
    json_object_set_new(o, "iters", I(c->iters));
    json_object_set_new(o, "time_ps", IN(c->time_ps));
    json_object_set_new(o, "times_ps", times_json(c->times_ps, c->ntimes));
    json_object_set_new(o, "bound_ps", IN(c->bound_ps));
    set_bw(o, c->algbw_GBps, c->busbw_GBps);
    if (strcmp(c->protocol, "-") != 0) /* nccl.model=nccl */
        json_object_set_new(o, "protocol", json_string(c->protocol));
    if (c->predicted_us > 0) /* ... and NCCL's model has the op */
        json_object_set_new(o, "nccl_predicted_us", json_real(c->predicted_us));
    return o;
}

/* {mean, min, max} of a per-rank figure. */
static json_t *spread(const rs_time v[3])
{
    json_t *o = json_object();
    json_object_set_new(o, "mean", I(v[0]));
    json_object_set_new(o, "min", I(v[1]));
    json_object_set_new(o, "max", I(v[2]));
    return o;
}

/* Times and rates are null while no iteration has completed;
 * comm_by_dim_ps also when the run did not complete; tokens_per_s and mfu
 * when the trace lacks the facts. */
static json_t *iteration_json(const rs_result_iteration *it)
{
    const rs_replay_stats *st = &it->st;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(it->name));
    json_object_set_new(o, "ranks", I(st->ranks));
    json_object_set_new(o, "iterations", I(st->iterations));
    json_object_set_new(o, "time_ps", st->done ? I(st->time_ps) : json_null());
    json_object_set_new(o, "times_ps", times_json(it->times_ps, it->ntimes));
    json_object_set_new(o, "compute_ps", st->done ? spread(st->compute_ps) : json_null());
    json_object_set_new(o, "exposed_comm_ps", st->done ? spread(st->exposed_ps) : json_null());
    json_object_set_new(o, "bound_ps", st->bound_valid ? I(st->bound_ps) : json_null());
    json_object_set_new(o, "bound_rank", st->bound_valid ? I(st->bound_rank) : json_null());
    if (st->comm_valid) {
        json_t *d = json_object();
        static const rs_dim dims[] = { RS_DIM_TP, RS_DIM_PP, RS_DIM_DP, RS_DIM_CP, RS_DIM_EP };
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
            json_object_set_new(d, rs_dim_name(dims[i]), I(st->comm_by_dim_ps[dims[i]]));
        json_object_set_new(d, "other", I(st->comm_by_dim_ps[RS_DIM_NONE]));
        json_object_set_new(o, "comm_by_dim_ps", d);
    } else {
        json_object_set_new(o, "comm_by_dim_ps", json_null());
    }
    json_object_set_new(o, "tokens_per_s", it->tokens_valid ? json_real(st->tokens_per_s) : json_null());
    json_object_set_new(o, "mfu", it->mfu_valid ? json_real(st->mfu) : json_null());
    /* docs/compute.md: the GPUs' side. */
    json_t *g = json_object();
    json_object_set_new(g, "name", st->gpu ? json_string(st->gpu) : json_null());
    json_object_set_new(g, "contention_ps", st->done ? I(st->contention_ps) : json_null());
    json_object_set_new(g, "comm_only_ps", st->done ? I(st->comm_only_ps) : json_null());
    int pw = st->done && st->power_valid;
    json_object_set_new(g, "power_w", pw ? json_real(st->power_w) : json_null());
    json_object_set_new(g, "energy_j", pw ? json_real(st->energy_j) : json_null());
    json_object_set_new(g, "energy_j_per_token",
                        pw && it->tokens_valid && st->tokens_per_s > 0
                            ? json_real(st->energy_j / (st->tokens_per_s * (double)st->time_ps * 1e-12))
                            : json_null());
    json_object_set_new(o, "gpu", g);
    return o;
}

/* A fault entry's time, kind, target (full), spec, origin (full) and
 * entry, as the "faults" and "faults_absent" lists start it. */
static json_t *fault_head(const rs_net_fault_info *fi, int full)
{
    json_t *f = json_object();
    json_object_set_new(f, "time_ps", I(fi->time_ps));
    json_object_set_new(f, "kind", json_string(fi->kind));
    if (full)
        json_object_set_new(f, "target", json_string(fi->target));
    json_object_set_new(f, "spec", json_string(fi->spec));
    if (full)
        json_object_set_new(f, "origin", json_string(fi->origin));
    json_object_set_new(f, "entry", fi->entry ? I(fi->entry) : json_null());
    return f;
}

/* docs/summary-format.md, "faults": the schedule as resolved, in time
 * order, repairs included; a fault the run did not reach has applied false. */
static json_t *faults_json(const rs_result_data *d)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < d->nfaults; i++) {
        const rs_net_fault_info *fi = &d->faults[i];
        json_t *f = fault_head(fi, 1);
        json_object_set_new(f, "applied", json_boolean(fi->applied));
        json_object_set_new(f, "packets_lost", I(fi->packets_lost));
        json_object_set_new(f, "routes_recomputed_at_ps",
                            fi->routes_recomputed_at == RS_TIME_MAX ? json_null() : I(fi->routes_recomputed_at));
        json_object_set_new(f, "packets_retransmitted", I(fi->packets_retransmitted));
        json_object_set_new(f, "flows_hit", I(fi->flows_hit));
        json_object_set_new(f, "time_to_recover_ps",
                            fi->time_to_recover_ps == RS_TIME_MAX ? json_null() : I(fi->time_to_recover_ps));
        json_t *stuck = json_array();
        for (uint32_t k = 0; k < d->nstuck; k++) {
            const rs_net_pfc_stuck *ps = &d->stuck[k];
            if (ps->fault != i)
                continue;
            json_t *x = json_object();
            json_object_set_new(x, "port", json_string(ps->port));
            json_object_set_new(x, "priority", I(ps->priority));
            json_object_set_new(x, "reason", json_string(ps->reason));
            json_object_set_new(x, "behind", json_string(ps->behind));
            json_object_set_new(x, "detected_at_ps", I(ps->detected_ps));
            json_array_append_new(stuck, x);
        }
        json_object_set_new(f, "pfc_stuck", stuck);
        json_array_append_new(a, f);
    }
    return a;
}

/* docs/summary-format.md, "faults_absent": entries skipped because their
 * class has no member in this topology (railsim compare only). */
static json_t *absent_json(const rs_result_data *d)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < d->nabsent; i++)
        json_array_append_new(a, fault_head(&d->absent[i], 0));
    return a;
}

json_t *rs_summary_json(const rs_scenario *sc, const rs_result_data *d)
{
    const rs_net_stats *st = &d->net;
    const rs_net_topo_info *ti = &d->topology;
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "format", json_string("railsim-summary"));
    json_object_set_new(o, "version", I(1));
    json_object_set_new(o, "railsim", json_string(RS_VERSION));
    json_object_set_new(o, "status", json_string(d->status));
    json_object_set_new(o, "scenario", rs_scenario_to_json(sc));
    json_object_set_new(o, "sim_end_ps", I(d->sim_end_ps));

    json_t *topo = json_object();
    json_object_set_new(topo, "kind", json_string(d->kind == RS_TOPO_RAIL_ONLY   ? "rail-only"
                                                  : d->kind == RS_TOPO_DRAGONFLY ? "dragonfly"
                                                                                 : "fat-tree"));
    json_object_set_new(topo, "gpus", I(d->gpus));
    json_object_set_new(topo, "hb_domains", I(ti->hb_domains));
    json_object_set_new(topo, "planes", I(ti->planes));
    json_object_set_new(topo, "tiers", I(ti->tiers));
    /* Switches to buy, as railsim cost and compare count them; the
     * simulator's own (one per rail on rail-only) next to them. */
    json_object_set_new(topo, "switches", I(ti->switches_physical));
    json_object_set_new(topo, "switches_logical", I(ti->switches));
    json_object_set_new(topo, "links", I(ti->links));
    json_object_set_new(o, "topology", topo);
    if (d->collective)
        json_object_set_new(o, "collective", collective_json(d->collective));
    if (d->iteration)
        json_object_set_new(o, "iteration", iteration_json(d->iteration));

    json_t *flows = json_object();
    json_object_set_new(flows, "count", I(st->msgs));
    json_object_set_new(flows, "completed", I(st->msgs_done));
    json_object_set_new(flows, "bytes", I(st->msg_bytes));
    json_object_set_new(flows, "fct_ps", fct_json(d));
    json_object_set_new(o, "flows", flows);

    json_t *pk = json_object();
    json_object_set_new(pk, "sent", I(st->pkts_sent));
    json_object_set_new(pk, "delivered", I(st->pkts_delivered));
    json_object_set_new(pk, "dropped", I(st->pkts_dropped));
    json_object_set_new(pk, "retransmitted", I(st->pkts_retransmitted));
    json_object_set_new(pk, "data", I(st->data_pkts));
    json_object_set_new(pk, "control", I(st->ctrl_pkts));
    json_object_set_new(pk, "naks", I(st->naks));
    json_object_set_new(pk, "timeouts", I(st->timeouts));
    json_object_set_new(pk, "in_flight", I(st->pkts_in_flight));
    json_object_set_new(o, "packets", pk);

    json_t *by = json_object();
    json_object_set_new(by, "nic", I(st->nic_bytes));
    json_object_set_new(by, "hb", I(st->hb_bytes));
    json_object_set_new(by, "goodput", I(st->goodput_bytes));
    json_object_set_new(o, "payload_bytes", by);
    json_t *pfc = json_object();
    json_object_set_new(pfc, "pauses_sent", I(st->pfc_pauses_sent));
    json_object_set_new(pfc, "resumes_sent", I(st->pfc_resumes_sent));
    json_object_set_new(pfc, "paused_ps", I(st->pfc_paused_ps));
    json_object_set_new(o, "pfc", pfc);
    json_t *ecn = json_object();
    json_object_set_new(ecn, "marked", I(st->ecn_marked));
    json_object_set_new(o, "ecn", ecn);
    json_t *cnp = json_object();
    json_object_set_new(cnp, "sent", I(st->cnps_sent));
    json_object_set_new(cnp, "received", I(st->cnps_received));
    json_object_set_new(o, "cnp", cnp);
    json_object_set_new(o, "max_queue_bytes", I(st->max_queue_bytes));
    json_object_set_new(o, "ports", json_string(PORTS_MARK)); /* rs_summary_text puts the ports there */
    json_object_set_new(o, "packet_hops", I(st->packet_hops));
    if (d->nfaults > 0)
        json_object_set_new(o, "faults", faults_json(d));
    if (d->nabsent > 0)
        json_object_set_new(o, "faults_absent", absent_json(d));
    if (d->faults_stop && d->faults_stop[0])
        json_object_set_new(o, "faults_stop", json_string(d->faults_stop));
    json_object_set_new(o, "events", I(d->events));
    if (d->parallel_valid) {
        const rs_net_part_stats *ps = &d->parallel;
        json_t *par = json_object();
        json_object_set_new(par, "ranks", I(ps->ranks));
        json_object_set_new(par, "lookahead_ps", I(ps->lookahead_ps));
        json_object_set_new(par, "windows", I(ps->windows));
        json_object_set_new(par, "cut_links", I(ps->cut_links));
        json_object_set_new(par, "frames_exchanged", I(ps->frames_all));
        json_object_set_new(par, "rank0_events", I(ps->events_mine));
        json_object_set_new(par, "rank0_sync_s", json_real(ps->sync_s));
        if (d->parallel_peak_rss) {
            json_t *rss = json_array();
            for (uint32_t r = 0; r < ps->ranks; r++)
                json_array_append_new(rss, I(d->parallel_peak_rss[r]));
            json_object_set_new(par, "peak_rss_bytes", rss);
        }
        json_object_set_new(o, "parallel", par);
    }
    if (d->estimate_valid) {
        json_t *est = json_object();
        json_object_set_new(est, "messages", json_real(d->estimate_messages));
        json_object_set_new(est, "events", json_real(d->estimate_events));
        json_object_set_new(est, "memory_bytes", I(d->estimate_memory_bytes));
        json_object_set_new(est, "timeline_min_bytes", I(d->estimate_timeline_min_bytes));
        json_object_set_new(o, "estimate", est);
    }
    json_object_set_new(o, "wall_s", json_real(d->wall_s));
    json_object_set_new(o, "peak_rss_bytes", I(d->peak_rss_bytes));
    if (d->fault_free) {
        const rs_result_fault_free *ff = d->fault_free;
        json_t *f = json_object();
        json_object_set_new(f, "status", json_string(ff->status));
        json_object_set_new(f, "sim_end_ps", IN(ff->sim_end_ps));
        json_object_set_new(f, "time_of", json_string(ff->time_of));
        json_object_set_new(f, "time_ps", IN(ff->time_ps));
        json_object_set_new(f, "faulted_time_ps", IN(ff->faulted_time_ps));
        json_object_set_new(f, "slowdown", RN(ff->slowdown));
        json_object_set_new(o, "fault_free", f);
    }
    return o;
}

json_t *rs_summary_collrun_json(const rs_collrun *r)
{
    rs_summary_store s;
    memset(&s, 0, sizeof s);
    int ok = 1;
    collect_collective(r, &s, &ok);
    json_t *o = ok ? collective_json(&s.coll) : NULL;
    free(s.coll_times);
    return o;
}

json_t *rs_summary_replay_json(const rs_replay *r)
{
    rs_summary_store s;
    memset(&s, 0, sizeof s);
    int ok = 1;
    collect_iteration(r, &s, &ok);
    json_t *o = ok ? iteration_json(&s.it) : NULL;
    free(s.it_times);
    free(s.name);
    return o;
}
