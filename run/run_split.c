/*
 * run_split.c - a run split over MPI processes (run_split.h,
 * docs/parallel.md): whether it splits, each process's part, the
 * agreement before the run, the parts of the timeline and their merge,
 * and process 0 finishing a split collective or replay. Every process
 * takes the same decisions from the same scenario; only process 0 writes
 * the outputs that are not parts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_split.h"
#include "wire.h"

/* A split run's timeline: process r's part of it, DIR/.timeline.msgpack.partR. */
static void part_path(char *buf, size_t n, const char *outdir, uint32_t r)
{
    snprintf(buf, n, "%s/.timeline.msgpack.part%u", outdir, r);
}

int rs_split_begin(rs_run_ctx *r, int *idle, rs_err *err)
{
    const rs_net_comm *part = r->o->part;
    *idle = 0;
    if (!part || part->ranks <= 1)
        return RS_OK;
    char cwhy[160];
    if (r->jobs && r->only == RS_RUN_ALL && (r->sched || r->sc.njobs > 1)) {
        r->spread = 1;
        if (part->rank != 0) {
            r->outdir = NULL;
            r->ncap = 0; /* checked, never opened: process 0 captures */
        }
        return RS_OK;
    }
    if (r->jobs)
        snprintf(r->part_why, sizeof r->part_why, "a shared cluster's run is not partitioned yet");
    else if (r->replay && !rs_replay_splits(r->replay, cwhy, sizeof cwhy))
        snprintf(r->part_why, sizeof r->part_why, "the workload: %s", cwhy);
    else if (r->coll && !rs_collrun_splits(r->coll, cwhy, sizeof cwhy))
        snprintf(r->part_why, sizeof r->part_why, "the collective: %s", cwhy);
    else
        rs_net_part_possible(r->net, r->part_why, sizeof r->part_why);
    if (r->part_why[0]) {
        *idle = part->rank != 0; /* rank 0 runs it alone */
        return RS_OK;
    }
    r->split = 1;
    /* Room for every process's peak RSS at the end (rs_split_rss), taken
     * now: a failure then would leave the others in the all-reduce. */
    if (!(r->rss = calloc(part->ranks, sizeof *r->rss)))
        return rs_err_set(err, RS_ENOMEM, "out of memory partitioning the run");
    int rc = rs_net_part_start(r->net, part, err);
    if (rc == RS_OK && part->rank != 0)
        r->outdir = NULL;
    return rc;
}

int rs_split_agree(const rs_run_ctx *r, int ok)
{
    if (!r->split && !r->spread)
        return ok;
    uint64_t failed = !ok;
    if (r->o->part->allreduce(r->o->part->ctx, &failed, 1, 1) != RS_OK)
        return 0;
    return failed == 0;
}

int rs_split_part_open(rs_run_ctx *r, uint32_t rank, rs_timeline **out, rs_err *err)
{
    char path[4200];
    part_path(path, sizeof path, r->o->outdir, rank);
    int rc = rs_net_timeline_part(r->net, path, rs_run_tl_mask(&r->sc), out, err);
    if (rc == RS_OK && (rc = rs_net_timeline_start(r->net, *out, r->sample_ps, err)) != RS_OK) {
        rs_timeline_abort(*out);
        *out = NULL;
    }
    return rc;
}

int rs_split_parts_start(rs_run_ctx *r, rs_err *err)
{
    int agreed = rs_split_agree(r, 1);
    uint32_t rank = rs_split_rank(r);
    if (!agreed || !r->split || !(r->ncap || r->want_tl))
        return agreed;
    int mine = RS_OK;
    if (rank != 0 && r->ncap) {
        char pdir[4096];
        snprintf(pdir, sizeof pdir, "%s/pcap", r->o->outdir);
        mine = rs_net_capture_start(r->net, pdir, &r->sc.capture, NULL, &r->ncap, err);
    }
    if (rank != 0 && r->want_tl && mine == RS_OK)
        mine = rs_split_part_open(r, rank, &r->tlp, err);
    if (rank != 0 && r->tlp && r->replay && mine == RS_OK)
        mine = rs_replay_set_timeline_part(r->replay, r->tlp, 0, err);
    if (rank != 0 && r->tlp && r->coll && mine == RS_OK)
        mine = rs_collrun_set_timeline_part(r->coll, r->tlp, err);
    return rs_split_agree(r, mine == RS_OK);
}

/* Every process sends process 0 its completions of the collective or the
 * replay (rs_collrun_part_pack, rs_replay_part_pack); process 0 finishes
 * its iterations from them (rs_collrun_part_finish, rs_replay_part_finish),
 * before its timeline part closes, writing into `late`. */
static int coll_merge(rs_run_ctx *r, rs_timeline *late)
{
    const rs_net_comm *part = r->o->part;
    uint32_t R = part->ranks;
    void *body = NULL, *all = NULL;
    size_t n = 0;
    int rc = r->coll ? rs_collrun_part_pack(r->coll, &body, &n) : rs_replay_part_pack(r->replay, &body, &n);
    /* Behind the wire header (docs/parallel.md, "Wire format"). */
    rs_wire_kind kind = r->coll ? RS_WIRE_COLL : RS_WIRE_REPLAY;
    rs_wire w = rs_wire_make(kind, part->rank, n);
    char *mine = rc == RS_OK ? malloc(sizeof w + n) : NULL;
    if (mine) {
        memcpy(mine, &w, sizeof w);
        if (n)
            memcpy(mine + sizeof w, body, n);
    }
    free(body);
    size_t *len = calloc(R, sizeof *len);
    size_t *plen = calloc(R, sizeof *plen);
    const void **parts = calloc(R, sizeof *parts);
    if (!mine || !len || !plen || !parts) {
        free(mine);
        free(len);
        free(plen);
        free(parts);
        return RS_ENOMEM; /* the others wait in the gather: MPI aborts them */
    }
    rc = part->gather(part->ctx, mine, sizeof w + n, &all, len);
    if (rc == RS_OK && part->rank == 0) {
        size_t off = 0;
        for (uint32_t i = 0; rc == RS_OK && i < R; i++) {
            if (rs_wire_read((const char *)all + off, len[i], kind, i, R, &w, r->part_err, sizeof r->part_err) !=
                    RS_OK ||
                w.len != len[i] - sizeof w) {
                if (!r->part_err[0])
                    snprintf(r->part_err, sizeof r->part_err, "%s from rank %u: %zu bytes, its header says %llu",
                             rs_wire_kind_name(kind), i, len[i] - sizeof w, (unsigned long long)w.len);
                rc = RS_EFORMAT;
                break;
            }
            parts[i] = (const char *)all + off + sizeof w;
            plen[i] = len[i] - sizeof w;
            off += len[i];
        }
    }
    if (rc == RS_OK && part->rank == 0) {
        if (late && r->coll)
            rs_collrun_timeline_move(r->coll, late);
        /* A part that did not survive the trip is ours to explain: internal. */
        int frc = r->coll ? rs_collrun_part_finish(r->coll, parts, plen, R)
                          : rs_replay_part_finish(r->replay, parts, plen, R, late);
        if (frc != RS_OK && frc != RS_ENOMEM)
            snprintf(r->part_err, sizeof r->part_err, "%s that does not read back", rs_wire_kind_name(kind));
        if (frc != RS_OK)
            rc = frc == RS_ENOMEM ? RS_ENOMEM : RS_EFORMAT;
    }
    free(mine);
    free(all);
    free(len);
    free(plen);
    free(parts);
    return rc;
}

int rs_split_gather(rs_run_ctx *r)
{
    if (!r->split || !(r->coll || r->replay))
        return RS_OK;
    /* What process 0 learns at the end (a split collective's completion)
     * is written into a part of its own, DIR/.timeline.msgpack.partR with
     * R the number of ranks: process 0's part is in key order already. */
    char lpath[4200];
    if (r->tl)
        part_path(lpath, sizeof lpath, r->o->outdir, r->o->part->ranks);
    rs_err lerr;
    int lrc = r->tl ? rs_net_timeline_part(r->net, lpath, rs_run_tl_mask(&r->sc), &r->tll, &lerr) : RS_OK;
    int mrc = coll_merge(r, r->tll);
    return lrc != RS_OK ? RS_EIO : mrc;
}

/* Process 0, every part closed (all: by every process): the parts into
 * r->tl, in the serial run's order, then removed; with r->tll, process
 * 0's late part the last one. */
static int timeline_merge(rs_run_ctx *r, int all, int partial, rs_err *err)
{
    uint32_t R = r->o->part->ranks + (r->tll ? 1 : 0);
    char (*paths)[4200] = calloc(R, sizeof *paths);
    const char **names = calloc(R, sizeof *names);
    int rc = paths && names ? RS_OK : rs_err_set(err, RS_ENOMEM, "out of memory merging the timeline");
    for (uint32_t i = 0; rc == RS_OK && i < R; i++) {
        part_path(paths[i], sizeof paths[i], r->o->outdir, i);
        names[i] = paths[i];
    }
    if (rc == RS_OK && !all)
        rc = rs_err_set(err, RS_EIO, "an MPI rank could not write its part of the timeline");
    if (rc == RS_OK)
        rc = rs_timeline_merge(r->tl, names, R, err);
    if (rc == RS_OK)
        rc = rs_timeline_close(r->tl, partial, err);
    else
        rs_timeline_abort(r->tl);
    for (uint32_t i = 0; paths && i < R; i++)
        unlink(paths[i]);
    free(paths);
    free(names);
    return rc == RS_OK ? RS_OK : RS_EIO;
}

int rs_split_timeline_close(rs_run_ctx *r, int partial, rs_err *err)
{
    rs_net_timeline_stop(r->net);
    int mine = rs_timeline_close(r->tlp, 0, err) == RS_OK;
    if (r->tll && rs_timeline_close(r->tll, 0, err) != RS_OK)
        mine = 0;
    int all = rs_split_agree(r, mine);
    return r->tl ? timeline_merge(r, all, partial, err) : RS_OK;
}

void rs_split_stats(const rs_run_ctx *r, rs_summary_store *s)
{
    if (!r->split)
        return;
    rs_result_data *d = &s->d;
    d->parallel_valid = 1;
    rs_net_part_stats_get(r->net, &d->parallel);
    if (r->rss_ok && (s->rss = malloc(d->parallel.ranks * sizeof *s->rss)) != NULL) {
        memcpy(s->rss, r->rss, d->parallel.ranks * sizeof *s->rss);
        d->parallel_peak_rss = s->rss;
    }
}

void rs_split_rss(rs_run_ctx *r)
{
    if (!r->split || !r->rss) /* (no room: its setup failed, and with it every process's) */
        return;
    const rs_net_comm *part = r->o->part;
    /* Each process's figure at its own index, zeros elsewhere: the
     * maxima are every process's figure, everywhere. */
    memset(r->rss, 0, part->ranks * sizeof *r->rss);
    r->rss[part->rank] = rs_run_peak_rss();
    r->rss_ok = part->allreduce(part->ctx, r->rss, part->ranks, 1) == RS_OK;
}
