/*
 * scenario.h - the scenario a run starts from: network configuration plus
 * synthetic traffic or a training workload (plan or trace to replay), read
 * from a nested JSON file and "KEY=VALUE" overrides (`--set
 * topology.gpus=64`). docs/scenario-format.md describes the format.
 *
 * One schema table in scenario.c names every key (dotted, "topology.gpus"),
 * its type, its allowed range and its meaning; loading, printing the keys
 * and writing the effective scenario back out all walk that table, so a key
 * cannot be readable but unprintable or the other way round.
 *
 * The reader checks each value on its own (type, range, enum name). Checks
 * that involve several keys (gpus a multiple of hb_size, fan_in < gpus, ...)
 * belong to the model (rs_net_create, rs_synth_start, rs_workload_load),
 * which reports them by key as well.
 */
#ifndef RS_SCENARIO_H
#define RS_SCENARIO_H

#include <stdio.h>

#include <jansson.h>

#include "base.h"
#include "fault.h"
#include "run.h"
#include "net.h"
#include "replay.h"
#include "synth.h"

/* The run's timeline (DIR/timeline.msgpack, docs/timeline-format.md);
 * written only with an output directory. Plain value type. */
typedef struct rs_scenario_timeline {
    int enabled;      /* timeline.enabled: write DIR/timeline.msgpack */
    int heavy;        /* timeline.heavy: flow, sample, PFC and ECN records too */
    double sample_us; /* timeline.sample_us: link/queue sampling interval, 0 = none */
    int sample_set;   /* sample_us was given; else a run at flow level samples every 1 ms */
} rs_scenario_timeline;

/* timeline.sample_us at flow level when not given (rs_run_execute). */
#define RS_FLOW_SAMPLE_US 1000.0

/* Enabled, heavy, 10 us (RS_FLOW_SAMPLE_US at flow level unless given). */
void rs_scenario_timeline_default(rs_scenario_timeline *c);

/* Scenario key "fidelity": the network's level (net.fidelity follows
 * it), or both: the scenario is run at each level and the two compared
 * (railsim validate), which is two runs, not a network. */
typedef enum { RS_LEVEL_PACKET = 0, RS_LEVEL_FLOW = 1, RS_LEVEL_BOTH = 2 } rs_level;

/* Plain value type. The run seed lives in net.seed (scenario key "seed"). */
/* system.preset (docs/systems.md). */
typedef enum {
    RS_PRESET_NONE = 0, RS_PRESET_DGX_A100, RS_PRESET_DGX_H100, RS_PRESET_DGX_H200, RS_PRESET_DGX_B200,
    RS_PRESET_GB200_NVL72, RS_PRESET_FRONTIER
} rs_scenario_preset;
/* The system a scenario is unless it says otherwise. */
#define RS_PRESET_DEFAULT RS_PRESET_DGX_H100

/* One job of a shared cluster (docs/shared-clusters.md, "jobs"): its
 * workload (a plan or trace, with the GPUs it takes: workload.gpus,
 * workload.placement, workload.fragmentation) or its synthetic traffic.
 * Plain value type. */
#define RS_JOBS_MAX 8
#define RS_JOB_NAME_MAX 32
typedef enum { RS_JOB_COMM_AUTO = 0, RS_JOB_COMM_NCCL = 1, RS_JOB_COMM_VERBS = 2 } rs_job_comm;
typedef struct rs_scenario_job {
    char name[RS_JOB_NAME_MAX];  /* jobs[i].name; unique */
    double start_us;             /* jobs[i].start_us: when it starts */
    rs_job_comm comm;            /* jobs[i].comm: auto is verbs for traffic, nccl for a workload */
    int has_traffic;             /* jobs[i].traffic given: synthetic traffic, not a workload */
    int pxn;                     /* jobs[i].routing.pxn + 1 (rs_pxn_mode); 0: the cluster's routing.pxn */
    int prio;                    /* jobs[i].transport.priority + 1: its traffic class; 0: transport.priority */
    rs_nccl_config nccl;         /* jobs[i].nccl.*: the keys given (nccl_set) over the cluster's nccl.* */
    uint8_t nccl_set;            /* bit k: jobs[i].nccl's key rs_job_nccl_keys[k] given */
    double weight;               /* jobs[i].weight: a scheduler draws it in proportion; 0: 1 (unset) */
    uint32_t tag;                /* not a key: the job's index on the network (its serial space); 0: its
                                    place in the array + 1. A scheduler's arrival run alone keeps its own */
    rs_workload_config workload; /* jobs[i].workload, gpus, placement, fragmentation */
    rs_synth_config traffic;     /* jobs[i].traffic */
} rs_scenario_job;

/* The nccl.* keys a job may give, in nccl_set's bit order. */
#define RS_JOB_NCCL_KEYS 5
extern const char *const rs_job_nccl_keys[RS_JOB_NCCL_KEYS];
/* Job j's nccl.*: the cluster's (cluster) with the job's own keys over it. */
void rs_scenario_job_nccl(const rs_scenario_job *j, const rs_nccl_config *cluster, rs_nccl_config *out);

/* A scheduler of arriving jobs (docs/shared-clusters.md, "Scheduler"):
 * `arrivals` jobs, each a copy of a job of the jobs array drawn in
 * proportion to the jobs' weights, arriving at seeded exponential
 * intervals of mean interarrival_us, the first at 0; or the arrivals of
 * an explicit list. Each starts first come first served as soon as its
 * placement fits the GPUs the running jobs leave. Plain value type. */
#define RS_SCHED_ARRIVALS_MAX 254
typedef struct rs_sched_arrival {
    char job[RS_JOB_NAME_MAX]; /* scheduler.list[k].job: a job's name */
    double at_us;              /* scheduler.list[k].at_us: when it arrives */
    uint32_t tmpl;             /* not a key: that job's index (settled once the jobs are read) */
} rs_sched_arrival;
typedef struct rs_scenario_sched {
    uint32_t arrivals;      /* scheduler.arrivals, or the list's length; 0: no scheduler, the jobs start together */
    double interarrival_us; /* scheduler.interarrival_us */
    uint64_t seed;          /* scheduler.seed; 0: the run seed */
    uint32_t nlist;         /* scheduler.list's arrivals; 0: drawn */
    rs_sched_arrival list[RS_SCHED_ARRIVALS_MAX];
} rs_scenario_sched;
/* Resolve the list's job names against sc->jobs; RS_EINVAL naming the
 * entry. */
int rs_scenario_sched_settle(rs_scenario *sc, rs_err *err);

typedef struct rs_scenario {
    rs_level fidelity;             /* fidelity (net.fidelity: packet for both) */
    int preset;                    /* rs_scenario_preset: system.preset, applied before every other key */
    rs_net_config net;
    rs_synth_config traffic;
    rs_capture_config capture;
    rs_workload_config workload; /* workload.*: a training plan or trace to replay */
    rs_scenario_timeline timeline; /* timeline.* */
    rs_fault_config faults;        /* faults.*: fault injection (docs/faults-format.md) */
    uint32_t njobs;                /* jobs: 0 = one job, the scenario's workload or traffic */
    rs_scenario_job jobs[RS_JOBS_MAX];
    rs_scenario_sched sched;       /* scheduler: with jobs, the jobs are templates of arrivals */
} rs_scenario;

/* scenario_jobs.c: the "jobs" array of a scenario's JSON (path names
 * the file in messages) into sc->jobs; RS_EINVAL with err naming
 * jobs[i] and the key. */
int rs_scenario_jobs_parse(rs_scenario *sc, const json_t *jobs, const char *path, rs_err *err);
/* sc's jobs as a JSON array (json_decref it); NULL when out of memory. */
json_t *rs_scenario_jobs_json(const rs_scenario *sc);
/* The "scheduler" object into sc->sched; RS_EINVAL naming the key. */
int rs_scenario_sched_parse(rs_scenario *sc, const json_t *o, const char *path, rs_err *err);
/* sc->sched as JSON (json_decref it); NULL when out of memory. */
json_t *rs_scenario_sched_json(const rs_scenario *sc);
/* Store the sections of obj into sc with the scenario's key table. */
int rs_scenario_apply_json(rs_scenario *sc, const json_t *obj, const char *path, rs_err *err);
/* Job i's comm, auto settled: 1 for raw verbs. */
static inline int rs_scenario_job_verbs(const rs_scenario_job *j)
{
    return j->comm == RS_JOB_COMM_VERBS ||
           (j->comm == RS_JOB_COMM_AUTO && j->has_traffic && j->traffic.kind != RS_SYNTH_COLLECTIVE);
}

/* Every key at its default: the models' defaults (rs_net_config_default,
 * rs_synth_config_default, rs_capture_config_default,
 * rs_workload_config_default) and rs_scenario_timeline_default. */
void rs_scenario_default(rs_scenario *sc);

/* Set the scenario's fidelity and the network's with it. */
void rs_scenario_set_level(rs_scenario *sc, rs_level l);

/* rs_scenario_load, rs_scenario_load_string (run.h): the defaults, then
 * the JSON file or text, then each "KEY=VALUE" in order (a later one wins);
 * RS_EINVAL for a syntax error, unknown key, wrong type, value out of
 * range, unknown enum name or duplicate key, with err naming the file and
 * line:column or the key; *sc unchanged on error. */

/* The scenario as a nested JSON object, keys in schema order:
 * {"seed":..,"topology":{..},"transport":{..},"routing":{..},"traffic":{..},
 * ...,"workload":{..}}.
 * Loading its dump gives back the same scenario (doubles are written with
 * 17 significant digits). A new reference owned by the caller (json_decref);
 * NULL when out of memory. */
json_t *rs_scenario_to_json(const rs_scenario *sc);

/* system.gpu's name ("h100"). */
const char *rs_scenario_gpu_name(const rs_scenario *sc);

/* Print one line per key (key, type, default, allowed values, meaning) to f,
 * after a header line; for `railsim help keys`. */
void rs_scenario_print_keys(FILE *f);

#endif
