/*
 * scenario_jobs.c - a scenario's "jobs" array (docs/shared-clusters.md):
 * several jobs on one cluster, each with its own workload or synthetic
 * traffic and the GPUs it takes. A job's "workload" and "traffic" objects
 * are read with the scenario's own key table (the same keys, checked the
 * same way), over the keys' defaults; its GPUs (gpus, placement,
 * fragmentation) are workload keys given at the job's top level.
 */
#include "scenario.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"

static const char *const comm_names[] = { "auto", "nccl", "verbs" }; /* rs_job_comm order */

const char *const rs_job_nccl_keys[RS_JOB_NCCL_KEYS] = { "model", "protocol", "algo", "nvls", "channels" };

void rs_scenario_job_nccl(const rs_scenario_job *j, const rs_nccl_config *cluster, rs_nccl_config *out)
{
    *out = *cluster;
    if (j->nccl_set & 1)
        out->model = j->nccl.model;
    if (j->nccl_set & 2)
        out->proto = j->nccl.proto;
    if (j->nccl_set & 4)
        out->algo = j->nccl.algo;
    if (j->nccl_set & 8)
        out->nvls = j->nccl.nvls;
    if (j->nccl_set & 16)
        out->channels = j->nccl.channels;
}

/* routing.pxn's name (run/scenario.c's table spells them the same). */
static const char *pxn_name(int pxn)
{
    return pxn == RS_PXN_ON ? "on" : pxn == RS_PXN_OFF ? "off" : "auto";
}

/* err's message after "PATH: jobs[i]: ". */
static int job_fail(rs_err *err, const char *path, uint32_t i, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int job_fail(rs_err *err, const char *path, uint32_t i, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rs_err_set(err, RS_EINVAL, "%s: jobs[%u]: %s", path, i, what);
}

/* The job's workload and traffic sections: {"workload": {...the job's
 * workload, with gpus, placement, fragmentation...}, "traffic": {...}}. */
static int job_sections(const json_t *job, uint32_t i, const char *path, json_t **out, rs_err *err)
{
    static const char *const lifted[] = { "gpus", "placement", "fragmentation" };
    const json_t *w = json_object_get(job, "workload"), *t = json_object_get(job, "traffic");
    if ((w && !json_is_object(w)) || (t && !json_is_object(t)))
        return job_fail(err, path, i, "%s: expected an object of %s keys", w && !json_is_object(w) ? "workload" :
                        "traffic", w && !json_is_object(w) ? "workload" : "traffic");
    json_t *ws = w ? json_deep_copy(w) : json_object(), *sec = json_object();
    if (!ws || !sec || json_object_set_new(sec, "workload", ws) != 0) {
        json_decref(sec);
        return rs_err_set(err, RS_ENOMEM, "out of memory reading jobs[%u]", i);
    }
    for (size_t k = 0; k < sizeof lifted / sizeof lifted[0]; k++) {
        const json_t *v = json_object_get(job, lifted[k]);
        if (!v)
            continue;
        if (json_object_get(ws, lifted[k])) {
            json_decref(sec);
            return job_fail(err, path, i, "%s: given twice (the job's and workload.%s); expected it once",
                            lifted[k], lifted[k]);
        }
        json_object_set(ws, lifted[k], (json_t *)v);
    }
    /* Of the routing and transport sections, a job has its own forwarding
     * and its own traffic class only. */
    static const char *const own[][2] = { { "routing", "pxn" }, { "transport", "priority" } };
    for (size_t s = 0; s < sizeof own / sizeof own[0]; s++) {
        const json_t *o = json_object_get(job, own[s][0]);
        const char *k;
        const json_t *v;
        if (!o)
            continue;
        if (!json_is_object(o)) {
            json_decref(sec);
            return job_fail(err, path, i, "%s: expected an object with %s.%s", own[s][0], own[s][0], own[s][1]);
        }
        json_object_foreach((json_t *)o, k, v) {
            if (strcmp(k, own[s][1])) {
                json_decref(sec);
                return job_fail(err, path, i, "%s.%.60s: the cluster's, not a job's; expected only %s.%s in a job",
                                own[s][0], k, own[s][0], own[s][1]);
            }
        }
        if (json_object_set(sec, own[s][0], (json_t *)o) != 0) {
            json_decref(sec);
            return rs_err_set(err, RS_ENOMEM, "out of memory reading jobs[%u]", i);
        }
    }
    /* The nccl section: any of its keys, the job's own. */
    const json_t *nc = json_object_get(job, "nccl");
    if (nc && (!json_is_object(nc) || json_object_set(sec, "nccl", (json_t *)nc) != 0)) {
        json_decref(sec);
        return json_is_object(nc) ? rs_err_set(err, RS_ENOMEM, "out of memory reading jobs[%u]", i)
                                  : job_fail(err, path, i, "nccl: expected an object of nccl.* keys");
    }
    if (t && json_object_set(sec, "traffic", (json_t *)t) != 0) {
        json_decref(sec);
        return rs_err_set(err, RS_ENOMEM, "out of memory reading jobs[%u]", i);
    }
    *out = sec;
    return RS_OK;
}

static int job_parse(const json_t *job, uint32_t i, const char *path, rs_scenario_job *out, rs_err *err)
{
    if (!json_is_object(job))
        return job_fail(err, path, i, "expected an object with a name and a workload or traffic");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)job, key, v) {
        if (strcmp(key, "name") && strcmp(key, "start_us") && strcmp(key, "comm") && strcmp(key, "workload") &&
            strcmp(key, "traffic") && strcmp(key, "gpus") && strcmp(key, "placement") &&
            strcmp(key, "fragmentation") && strcmp(key, "routing") && strcmp(key, "transport") &&
            strcmp(key, "weight") && strcmp(key, "nccl"))
            return job_fail(err, path, i, "unknown key '%.60s'; expected name, gpus, placement, fragmentation, "
                            "start_us, comm, routing, transport, nccl, weight, workload or traffic", key);
    }
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "job%u", i);
    if ((v = json_object_get(job, "name"))) {
        const char *s = json_string_value(v);
        if (!s || !s[0] || strlen(s) >= sizeof out->name || strcspn(s, " \t\r\n\",") != strlen(s))
            return job_fail(err, path, i, "name: expected a string of 1 to %d characters without spaces, "
                            "quotes or commas", RS_JOB_NAME_MAX - 1);
        snprintf(out->name, sizeof out->name, "%s", s);
    }
    if ((v = json_object_get(job, "start_us"))) {
        if (!json_is_number(v) || !(json_number_value(v) >= 0) || json_number_value(v) > 1e12)
            return job_fail(err, path, i, "start_us: expected a time from 0 to 1e12 us");
        out->start_us = json_number_value(v);
    }
    if ((v = json_object_get(job, "weight"))) {
        if (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1e6)
            return job_fail(err, path, i, "weight: expected a share of a scheduler's drawn arrivals above 0 and at "
                            "most 1e6");
        out->weight = json_number_value(v);
    }
    if ((v = json_object_get(job, "comm"))) {
        const char *s = json_string_value(v);
        out->comm = RS_JOB_COMM_AUTO;
        while (s && (size_t)out->comm < 3 && strcmp(s, comm_names[out->comm]))
            out->comm++;
        if (!s || out->comm > RS_JOB_COMM_VERBS)
            return job_fail(err, path, i, "comm: expected auto, nccl or verbs");
    }
    /* The workload and traffic keys over their defaults. */
    json_t *sec;
    int rc = job_sections(job, i, path, &sec, err);
    if (rc != RS_OK)
        return rc;
    rs_scenario tmp;
    rs_scenario_default(&tmp);
    rc = rs_scenario_apply_json(&tmp, sec, path, err);
    json_decref(sec);
    if (rc != RS_OK) {
        /* "PATH: key: ..." becomes "PATH: jobs[i]: key: ...". */
        char msg[sizeof err->msg];
        size_t lp = strlen(path);
        int at = !strncmp(err->msg, path, lp) && !strncmp(err->msg + lp, ": ", 2);
        snprintf(msg, sizeof msg, "%s", at ? err->msg + lp + 2 : err->msg);
        return at ? rs_err_set(err, rc, "%s: jobs[%u]: %s", path, i, msg) : rs_err_set(err, rc, "jobs[%u]: %s", i, msg);
    }
    out->workload = tmp.workload;
    out->traffic = tmp.traffic;
    if (json_object_get(json_object_get(job, "routing"), "pxn"))
        out->pxn = (int)tmp.net.pxn + 1;
    if (json_object_get(json_object_get(job, "transport"), "priority"))
        out->prio = (int)tmp.net.prio + 1;
    out->nccl = tmp.net.nccl;
    for (int k = 0; k < RS_JOB_NCCL_KEYS; k++)
        if (json_object_get(json_object_get(job, "nccl"), rs_job_nccl_keys[k]))
            out->nccl_set |= (uint8_t)(1u << k);
    out->has_traffic = json_object_get(job, "traffic") != NULL;
    if (out->has_traffic == rs_workload_active(&out->workload))
        return job_fail(err, path, i, "expected a workload (workload.plan or workload.trace) or traffic, %s",
                        out->has_traffic ? "not both" : "got neither");
    if (out->has_traffic && out->traffic.kind == RS_SYNTH_COLLECTIVE &&
        (!strncmp(out->traffic.group, "rail:", 5) || !strncmp(out->traffic.group, "hb:", 3)))
        return job_fail(err, path, i, "traffic.group: a job's collective runs over the job's own GPUs; expected "
                        "all or a list of its ranks, got %.40s", out->traffic.group);
    if ((!out->has_traffic || out->traffic.kind == RS_SYNTH_COLLECTIVE) && out->comm == RS_JOB_COMM_VERBS)
        return job_fail(err, path, i, "comm: a %s NCCL's; expected auto or nccl",
                        out->has_traffic ? "collective is" : "workload's collectives and sends are");
    return RS_OK;
}

int rs_scenario_jobs_parse(rs_scenario *sc, const json_t *jobs, const char *path, rs_err *err)
{
    size_t n = json_array_size(jobs);
    if (!json_is_array(jobs) || n == 0 || n > RS_JOBS_MAX)
        return rs_err_set(err, RS_EINVAL, "%s: jobs: expected an array of 1 to %d jobs", path, RS_JOBS_MAX);
    for (uint32_t i = 0; i < n; i++) {
        int rc = job_parse(json_array_get(jobs, i), i, path, &sc->jobs[i], err);
        if (rc != RS_OK)
            return rc;
        for (uint32_t k = 0; k < i; k++)
            if (!strcmp(sc->jobs[k].name, sc->jobs[i].name))
                return job_fail(err, path, i, "name: '%s' is also jobs[%u]'s; expected a unique name",
                                sc->jobs[i].name, k);
    }
    sc->njobs = (uint32_t)n;
    return RS_OK;
}

json_t *rs_scenario_jobs_json(const rs_scenario *sc)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; arr && i < sc->njobs; i++) {
        const rs_scenario_job *j = &sc->jobs[i];
        rs_scenario tmp;
        rs_scenario_default(&tmp);
        tmp.workload = j->workload;
        tmp.traffic = j->traffic;
        tmp.net.nccl = j->nccl;
        json_t *all = rs_scenario_to_json(&tmp), *o = json_object();
        int bad = !all || !o || json_object_set_new(o, "name", json_string(j->name)) ||
                  json_object_set_new(o, "start_us", json_real(j->start_us)) ||
                  json_object_set_new(o, "comm", json_string(comm_names[j->comm])) ||
                  json_object_set(o, "workload", json_object_get(all, "workload")) ||
                  (j->has_traffic && json_object_set(o, "traffic", json_object_get(all, "traffic")));
        if (!bad && j->pxn) {
            json_t *rt = json_object();
            bad = !rt || json_object_set_new(rt, "pxn", json_string(pxn_name(j->pxn - 1))) ||
                  json_object_set_new(o, "routing", rt);
        }
        if (!bad && j->nccl_set) { /* the job's own nccl keys, as the scenario writes them */
            json_t *nc = json_object(), *all_nccl = json_object_get(all, "nccl");
            bad = !nc || json_object_set_new(o, "nccl", nc);
            for (int k = 0; !bad && k < RS_JOB_NCCL_KEYS; k++)
                if (j->nccl_set >> k & 1)
                    bad = json_object_set(nc, rs_job_nccl_keys[k], json_object_get(all_nccl, rs_job_nccl_keys[k]));
        }
        if (!bad && j->weight > 0)
            bad = json_object_set_new(o, "weight", json_real(j->weight));
        if (!bad && j->prio) {
            json_t *tr = json_object();
            bad = !tr || json_object_set_new(tr, "priority", json_integer(j->prio - 1)) ||
                  json_object_set_new(o, "transport", tr);
        }
        json_decref(all);
        if (bad || json_array_append_new(arr, o)) {
            json_decref(o);
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* scheduler.list: [{"job": NAME, "at_us": T}, ...], times not
 * decreasing. */
static int sched_list_parse(rs_scenario_sched *s, const json_t *v, const char *path, rs_err *err)
{
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n == 0 || n > RS_SCHED_ARRIVALS_MAX)
        return rs_err_set(err, RS_EINVAL, "%s: scheduler.list: expected an array of 1 to %d arrivals", path,
                          RS_SCHED_ARRIVALS_MAX);
    for (uint32_t k = 0; k < n; k++) {
        const json_t *a = json_array_get(v, k), *job = json_object_get(a, "job"), *at = json_object_get(a, "at_us");
        const char *name = json_string_value(job);
        double t = json_number_value(at);
        if (!json_is_object(a) || json_object_size(a) != 2 || !name || strlen(name) >= RS_JOB_NAME_MAX ||
            !json_is_number(at) || !(t >= 0) || t > 1e12)
            return rs_err_set(err, RS_EINVAL, "%s: scheduler.list[%u]: expected {\"job\": a job's name, "
                              "\"at_us\": its arrival from 0 to 1e12 us}", path, k);
        if (k && t < s->list[k - 1].at_us)
            return rs_err_set(err, RS_EINVAL, "%s: scheduler.list[%u].at_us: %g is before the arrival above it "
                              "(%g); expected arrivals in time order", path, k, t, s->list[k - 1].at_us);
        snprintf(s->list[k].job, sizeof s->list[k].job, "%s", name);
        s->list[k].at_us = t;
    }
    s->nlist = (uint32_t)n;
    return RS_OK;
}

int rs_scenario_sched_parse(rs_scenario *sc, const json_t *o, const char *path, rs_err *err)
{
    if (!json_is_object(o))
        return rs_err_set(err, RS_EINVAL, "%s: scheduler: expected an object with arrivals, interarrival_us and "
                          "seed, or a list", path);
    rs_scenario_sched s;
    memset(&s, 0, sizeof s);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        double x = json_number_value(v);
        if (!strcmp(k, "list")) {
            int rc = sched_list_parse(&s, v, path, err);
            if (rc != RS_OK)
                return rc;
        } else if (!strcmp(k, "arrivals")) {
            if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > RS_SCHED_ARRIVALS_MAX)
                return rs_err_set(err, RS_EINVAL, "%s: scheduler.arrivals: expected an integer from 1 to %d", path,
                                  RS_SCHED_ARRIVALS_MAX);
            s.arrivals = (uint32_t)json_integer_value(v);
        } else if (!strcmp(k, "interarrival_us")) {
            if (!json_is_number(v) || !(x > 0) || x > 1e12)
                return rs_err_set(err, RS_EINVAL, "%s: scheduler.interarrival_us: expected a mean interval above 0 "
                                  "and at most 1e12 us", path);
            s.interarrival_us = x;
        } else if (!strcmp(k, "seed")) {
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                return rs_err_set(err, RS_EINVAL, "%s: scheduler.seed: expected a non-negative integer (0: the run "
                                  "seed)", path);
            s.seed = (uint64_t)json_integer_value(v);
        } else {
            return rs_err_set(err, RS_EINVAL, "%s: scheduler.%.60s: unknown key; expected arrivals, interarrival_us "
                              "and seed, or list", path, k);
        }
    }
    if (s.nlist) {
        if (json_object_get(o, "arrivals") || json_object_get(o, "interarrival_us") || json_object_get(o, "seed"))
            return rs_err_set(err, RS_EINVAL, "%s: scheduler: a list gives the arrivals; expected no arrivals, "
                              "interarrival_us or seed beside it", path);
        s.arrivals = s.nlist;
    } else if (!s.arrivals || !(s.interarrival_us > 0)) {
        return rs_err_set(err, RS_EINVAL, "%s: scheduler: expected arrivals and interarrival_us, or a list", path);
    }
    sc->sched = s;
    return RS_OK;
}

int rs_scenario_sched_settle(rs_scenario *sc, rs_err *err)
{
    for (uint32_t i = 0; i < sc->njobs; i++)
        if (sc->jobs[i].weight > 0 && (!sc->sched.arrivals || sc->sched.nlist))
            return rs_err_set(err, RS_EINVAL, "jobs[%u] (%s): weight: only a scheduler's drawn arrivals are "
                              "weighted; expected scheduler.arrivals and scheduler.interarrival_us", i,
                              sc->jobs[i].name);
    for (uint32_t k = 0; k < sc->sched.nlist; k++) {
        rs_sched_arrival *a = &sc->sched.list[k];
        a->tmpl = 0;
        while (a->tmpl < sc->njobs && strcmp(sc->jobs[a->tmpl].name, a->job))
            a->tmpl++;
        if (a->tmpl == sc->njobs)
            return rs_err_set(err, RS_EINVAL, "scheduler.list[%u].job: '%s' is no job of the jobs array; expected "
                              "one of their names", k, a->job);
    }
    return RS_OK;
}

json_t *rs_scenario_sched_json(const rs_scenario *sc)
{
    json_t *o = json_object();
    if (o && sc->sched.nlist) {
        json_t *l = json_array();
        int bad = !l || json_object_set_new(o, "list", l);
        for (uint32_t k = 0; !bad && k < sc->sched.nlist; k++) {
            json_t *a = json_object();
            bad = !a || json_array_append_new(l, a) || json_object_set_new(a, "job", json_string(sc->sched.list[k].job)) ||
                  json_object_set_new(a, "at_us", json_real(sc->sched.list[k].at_us));
        }
        if (bad) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    if (o && (json_object_set_new(o, "arrivals", json_integer(sc->sched.arrivals)) ||
              json_object_set_new(o, "interarrival_us", json_real(sc->sched.interarrival_us)) ||
              json_object_set_new(o, "seed", json_integer((json_int_t)sc->sched.seed)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}
