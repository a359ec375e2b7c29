/*
 * coll_opts.c - a collective's options and names (coll.h): the options'
 * defaults, the names of operations and algorithms and their parsing, and
 * nccl-tests' bus bandwidth factors. Nothing here needs a network.
 */
#include "coll_int.h"
#include "versioned.h"

#include <string.h>
#include <strings.h>

static const char *const op_names[RS_COLL_NOPS] = {
    "allgather", "reducescatter", "allreduce", "alltoall", "sendrecv", "broadcast", "reduce"
};
static const char *const algo_names[RS_COLL_NALGOS] = {
    "auto", "ring", "tree", "direct", "pairwise", "hierarchical", "nvls"
};
static const char *const proto_names[RS_NCCL_NPROTOS] = { "-", "simple", "ll", "ll128" };


void rs_coll_opts_init(rs_coll_opts *o, size_t size)
{
    rs_coll_opts d;
    memset(&d, 0, sizeof d);
    d.channels = 0;
    d.chunk_bytes = 512u << 10;
    d.reduce_gbps = 16000;
    d.hb_size = 0;
    d.window = 8;
    d.a2a_peers = 0;
    rs_versioned_give(o, size, &d, sizeof d);
}

int rs_coll_opts_take(rs_coll_opts *out, const rs_coll_opts *o)
{
    rs_coll_opts_default(out);
    return o ? rs_versioned_take(out, sizeof *out, o, RS_SIZE_V1(rs_coll_opts, a2a_peers)) : RS_OK;
}

const char *rs_coll_op_name(rs_coll_op op)
{
    return (unsigned)op < RS_COLL_NOPS ? op_names[op] : "?";
}

const char *rs_coll_algo_name(rs_coll_algo a)
{
    return (unsigned)a < RS_COLL_NALGOS ? algo_names[a] : "?";
}

const char *rs_coll_proto_name(rs_nccl_proto p)
{
    return (unsigned)p < RS_NCCL_NPROTOS ? proto_names[p] : "?";
}

/* Compare ignoring case, '_' and '-': "All_Reduce" matches "allreduce". */
static int name_eq(const char *s, const char *name)
{
    for (;; s++) {
        if (*s == '_' || *s == '-')
            continue;
        char a = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
        if (a != *name)
            return 0;
        if (!a)
            return 1;
        name++;
    }
}

int rs_coll_op_parse(const char *s, rs_coll_op *out)
{
    if (!s)
        return RS_EINVAL;
    for (int i = 0; i < RS_COLL_NOPS; i++)
        if (name_eq(s, op_names[i])) {
            *out = (rs_coll_op)i;
            return RS_OK;
        }
    if (name_eq(s, "a2a")) {
        *out = RS_COLL_ALLTOALL;
        return RS_OK;
    }
    return RS_EINVAL;
}

int rs_coll_algo_parse(const char *s, rs_coll_algo *out)
{
    if (!s)
        return RS_EINVAL;
    for (int i = 0; i < RS_COLL_NALGOS; i++)
        if (name_eq(s, algo_names[i])) {
            *out = (rs_coll_algo)i;
            return RS_OK;
        }
    if (name_eq(s, "hier")) {
        *out = RS_ALGO_HIERARCHICAL;
        return RS_OK;
    }
    return RS_EINVAL;
}

double rs_coll_busbw_factor(rs_coll_op op, uint32_t n)
{
    if (n == 0)
        return 0;
    switch (op) {
    case RS_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case RS_COLL_ALLGATHER:
    case RS_COLL_REDUCESCATTER:
    case RS_COLL_ALLTOALL:
        return (double)(n - 1) / n;
    case RS_COLL_SENDRECV:
    case RS_COLL_BROADCAST:
    case RS_COLL_REDUCE:
        return 1;
    }
    return 0;
}
