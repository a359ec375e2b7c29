/*
 * fixture_coll.h - shorthands for the suites that run collectives: a
 * collective's request from its parts, as one call (rs_coll_req by
 * field is what the library takes; the suites name every part at once).
 */
#ifndef RS_FIXTURE_COLL_H
#define RS_FIXTURE_COLL_H

#include "coll.h"

/* op of `bytes` by algo with options o (NULL: defaults). */
static inline rs_coll_req rs_fx_coll_req(rs_coll_op op, rs_coll_algo algo, uint64_t bytes, const rs_coll_opts *o)
{
    rs_coll_req r;
    rs_coll_req_init(&r, op, bytes);
    r.algo = algo;
    r.opts = o;
    return r;
}

/* rs_coll_create of that request: member NULL, every member now; else
 * joining one by one, reserved as *reserved (NULL: not). */
static inline int rs_fx_coll(rs_net *net, const rs_comm *comm, rs_coll_op op, rs_coll_algo algo, uint64_t bytes,
                             const rs_coll_opts *o, rs_coll_member_fn member, rs_coll_done_fn done, void *ctx,
                             uint64_t tag, const rs_coll_reservation *reserved, rs_coll **out, rs_err *err)
{
    rs_coll_req r = rs_fx_coll_req(op, algo, bytes, o);
    r.member_done = member;
    r.done = done;
    r.ctx = ctx;
    r.tag = tag;
    r.reserved = reserved;
    return rs_coll_create(net, comm, &r, out, err);
}

static inline int rs_fx_coll_splits(rs_net *net, const rs_comm *comm, rs_coll_op op, rs_coll_algo algo,
                                    uint64_t bytes, const rs_coll_opts *o, char *why, size_t n)
{
    rs_coll_req r = rs_fx_coll_req(op, algo, bytes, o);
    return rs_coll_splits(net, comm, &r, why, n);
}

/* The algorithm rs_coll_create would run; RS_ALGO_AUTO when it failed. */
static inline rs_coll_algo rs_fx_coll_algo(const rs_net *net, const rs_comm *comm, rs_coll_op op, rs_coll_algo algo,
                                           uint64_t bytes, const rs_coll_opts *o)
{
    rs_coll_req r = rs_fx_coll_req(op, algo, bytes, o);
    rs_coll_algo a = RS_ALGO_AUTO;
    rs_coll_algo_resolve(net, comm, &r, &a);
    return a;
}

static inline int rs_fx_coll_needs(rs_net *net, const rs_comm *comm, rs_coll_op op, rs_coll_algo algo,
                                   uint64_t bytes, const rs_coll_opts *o, rs_coll_needs *out, rs_err *err)
{
    rs_coll_req r = rs_fx_coll_req(op, algo, bytes, o);
    return rs_coll_needs_get(net, comm, &r, out, err);
}

#endif
