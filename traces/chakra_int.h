/*
 * chakra_int.h - what the Chakra ET modules share (not part of the traces
 * API): protobuf-c's generated types, the import's state, and the calls
 * between the import's parts. chakra_import.c reads the files and drives
 * the import, chakra_groups.c resolves process groups to communicators,
 * chakra_dag.c turns one rank's DAG into a program, chakra_export.c writes
 * .et files. Only these files include the generated et_def.pb-c.h, so
 * protobuf-c stays behind the Chakra module (docs/chakra.md).
 *
 * Include it after the system and third-party headers: it defines S.
 */
#ifndef RS_CHAKRA_INT_H
#define RS_CHAKRA_INT_H

#include "hindex.h"
#include <stddef.h>
#include <stdint.h>

#include "chakra.h"
#include "et_def.pb-c.h"

typedef ChakraProtoMsg__Node pb_node;
typedef ChakraProtoMsg__AttributeProto pb_attr;
typedef ChakraProtoMsg__GlobalMetadata pb_meta;

#define S RS_STREAMS_MAX
#define MAX_FILE (1ull << 31) /* 2 GiB per rank file */
#define MAX_NODES (1u << 24)

/* ---- import state --------------------------------------------------------------- */

enum { K_NOOP = 0xff };

typedef struct nd {
    uint64_t id;
    size_t off;          /* byte offset of the node's length prefix */
    pb_node *pb;
    uint8_t kind;        /* rs_op_kind or K_NOOP */
    uint8_t coll, dim;
    int8_t stream;       /* railsim_stream attribute, -1 when absent */
    uint32_t peer;       /* SEND/RECV */
    uint32_t comm;       /* COLL: communicator index */
    uint64_t bytes;
    int64_t tag;
    rs_time dur;
    double flops;
} nd;

typedef struct comm_def {
    uint32_t *ranks, n;
    uint8_t dim;
    char *pg;            /* the pg_name that named it (NULL: the world) */
} comm_def;

typedef struct p2p {     /* one send or receive, for matching */
    uint64_t seq;        /* position in the import: program order per file */
    uint32_t src, dst, file;
    uint8_t send;
    int64_t tag;
    uint64_t bytes, id;
    size_t off;
} p2p;

typedef struct cev {     /* one collective issue, for matching */
    uint32_t comm, seq, rank, file;
    uint8_t coll;
    uint64_t bytes, id;
    size_t off;
} cev;

typedef struct pgdef {
    char *name;
    uint32_t *ranks, n;  /* n == 0: every rank */
} pgdef;

typedef struct pgtab {
    pgdef *v;
    size_t n, cap;
} pgtab;

typedef struct rank_in {
    const rs_chakra_file *f;
    pgtab pgs;           /* process groups this rank's file defines */
    pb_meta *meta;
    nd *nodes;
    uint32_t n;
    rs_op *ops;
    uint32_t nops;
    uint32_t slots[RS_TRACE_MAX_SLOTS], nslots;
    uint8_t slot_coll[RS_TRACE_MAX_SLOTS];
} rank_in;

typedef struct imp {
    const rs_chakra_opts *o;
    rank_in *rk;
    uint32_t nranks;
    comm_def *comms;
    uint32_t ncomms, capcomms;
    pgtab gpgs;          /* from the --comm-groups file */
    uint32_t world[RS_DIM_COUNT]; /* the all-ranks communicator per dim, once made */
    p2p *msgs;
    size_t nmsgs, capmsgs;
    cev *cevs;
    size_t ncevs, capcevs;
    char **strs;         /* labels, interned here until the trace is made */
    rs_hindex sidx;      /* a label's hash -> its index */
    uint32_t nstrs, capstrs;
    rs_trace *t;
    rs_chakra_stats *st;
    double flops;
    rs_err *err;
} imp;

/* ---- errors (chakra_import.c) ------------------------------------------------------ */

/* RS_EFORMAT with err set to "FILE: rank R, byte offset OFF: " and the
 * message. BADAT takes them from rank ri and needs `err` in scope. */
int rs_chakra_bad_at(rs_err *err, const char *file, uint32_t rank, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define BADAT(ri, off, ...) rs_chakra_bad_at(err, (ri)->f->name, (ri)->f->rank, (off), __VA_ARGS__)

/* RS_ENOMEM with err naming the import (the exporter says the same). */
int rs_chakra_oom(rs_err *err);

/* ---- process groups and communicators (chakra_groups.c) ----------------------------- */

/* Communicator of members ranks[0..n) on dimension dim, named by process
 * group pg (NULL: the world): an equal one already made, else a new one
 * (ranks and pg copied). *id its index in im->comms. 0; -1 out of memory. */
int rs_chakra_comm_intern(imp *im, const uint32_t *ranks, uint32_t n, uint8_t dim, const char *pg, uint32_t *id);

/* Process-group tables, each adding to a pgtab: GlobalMetadata attributes
 * "pg_ranks:NAME" (ri->pgs), a METADATA_NODE's PyTorch record (ri->pgs),
 * the --comm-groups file (im->gpgs). RS_OK, RS_EFORMAT, RS_ENOMEM. */
int rs_chakra_pg_from_meta(imp *im, rank_in *ri, rs_err *err);
int rs_chakra_pg_from_node(imp *im, rank_in *ri, const nd *d, rs_err *err);
int rs_chakra_pg_from_file(imp *im, const char *path, rs_err *err);

/* The members of process group pg for node d of rank ri: *out NULL = every
 * rank, else borrowed from the table. RS_EFORMAT for a group no table names
 * or one without the rank. */
int rs_chakra_pg_members(imp *im, rank_in *ri, const nd *d, const char *pg, const uint32_t **out, uint32_t *nout,
                         rs_err *err);

/* Frees a table's groups and array (not tab itself). */
void rs_chakra_pg_free(pgtab *tab);

/* ---- one rank's DAG (chakra_dag.c) ----------------------------------------------- */

/* Rank ri's decoded nodes into ri->ops (owned by ri), its labels interned
 * in im, its slots in ri, its sends, receives and collectives appended to
 * im->msgs and im->cevs for matching. RS_OK, RS_EFORMAT (a duplicate id,
 * an unknown dependency, a cycle, more slots than a trace allows),
 * RS_ENOMEM; err is im->err. */
int rs_chakra_build_rank(imp *im, rank_in *ri);

#endif
