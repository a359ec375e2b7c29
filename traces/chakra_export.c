/*
 * chakra_export.c - a railsim trace as Chakra ET (chakra.h, docs/chakra.md,
 * "Export"): per rank a GlobalMetadata message (the process groups the rank
 * uses, railsim's iteration facts) and one Node per op, each preceded by
 * its length as a varint; stream order becomes control dependencies, op
 * dependencies data dependencies. The process groups are written again as
 * ASTRA-sim's comm-groups JSON. Every file is written under .tmp and
 * renamed, so a failed export leaves no half-written file under its name.
 * Nothing is kept: the encoded bytes belong to the caller or the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "coll.h"
#include "pool.h"

#include "chakra_int.h"

typedef struct obuf {
    uint8_t *p;
    size_t n, cap;
} obuf;

static int put_msg(obuf *o, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    if (rs_array_reserve(&o->p, &o->cap, o->n + len + 10, 1, 16))
        return -1;
    uint64_t v = len;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        o->p[o->n++] = c | (v ? 0x80 : 0);
    } while (v);
    o->n += protobuf_c_message_pack(m, o->p + o->n);
    return 0;
}

/* Attributes of one node, in caller storage (at most 12). */
typedef struct attrs {
    pb_attr a[12];
    pb_attr *pa[12];
    size_t n;
} attrs;

static pb_attr *attr_add(attrs *as, const char *name)
{
    pb_attr *a = &as->a[as->n];
    chakra_proto_msg__attribute_proto__init(a);
    a->name = (char *)name;
    as->pa[as->n++] = a;
    return a;
}

static void attr_u64(attrs *as, const char *name, uint64_t v)
{
    pb_attr *a = attr_add(as, name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
    a->uint64_val = v;
}

static void attr_i64(attrs *as, const char *name, int64_t v)
{
    pb_attr *a = attr_add(as, name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a->int64_val = v;
}

static void attr_str(attrs *as, const char *name, const char *v)
{
    pb_attr *a = attr_add(as, name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    a->string_val = (char *)v;
}

/* Rank's GlobalMetadata, appended to o: version 0.0.4, a "pg_ranks:ID+1"
 * integer list for every communicator the rank's collectives use, and
 * railsim's own iteration facts (meta_iter in chakra_import.c reads them
 * back). 0; -1 out of memory. */
static int put_meta(const rs_trace *t, uint32_t rank, const rs_op *ops, uint32_t nops, obuf *o)
{
    uint32_t nslots = rs_trace_nslots(t);
    const uint32_t *slots = rs_trace_rank_slots(t, rank);
    int rc = -1;
    /* Metadata: the process groups this rank uses, by communicator id. */
    pb_attr *ma = calloc((size_t)nslots + 3, sizeof *ma);
    pb_attr **mpa = calloc((size_t)nslots + 3, sizeof *mpa);
    ChakraProtoMsg__Int64List *ml = calloc((size_t)nslots + 1, sizeof *ml);
    char (*mnames)[32] = calloc((size_t)nslots + 1, sizeof *mnames);
    int64_t **mvals = calloc((size_t)nslots + 1, sizeof *mvals);
    uint8_t *is_coll = calloc((size_t)nslots + 1, 1);
    if (!ma || !mpa || !ml || !mnames || !mvals || !is_coll)
        goto out;
    for (uint32_t i = 0; i < nops; i++)
        if (ops[i].kind == RS_OP_COLL)
            is_coll[ops[i].comm] = 1;
    pb_meta meta;
    chakra_proto_msg__global_metadata__init(&meta);
    meta.version = (char *)"0.0.4";
    for (uint32_t s = 0; s < nslots; s++) {
        if (!is_coll[s])
            continue;
        uint32_t m, c = slots[s];
        const uint32_t *mem = rs_trace_comm_ranks(t, c, &m);
        size_t k = meta.n_attr;
        mvals[k] = malloc((size_t)m * sizeof **mvals);
        if (!mvals[k])
            goto out;
        for (uint32_t q = 0; q < m; q++)
            mvals[k][q] = mem[q];
        chakra_proto_msg__int64_list__init(&ml[k]);
        ml[k].n_values = m;
        ml[k].values = mvals[k];
        chakra_proto_msg__attribute_proto__init(&ma[k]);
        snprintf(mnames[k], sizeof mnames[k], "pg_ranks:%u", c + 1);
        ma[k].name = mnames[k];
        ma[k].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST;
        ma[k].int64_list = &ml[k];
        mpa[k] = &ma[k];
        meta.n_attr++;
    }
    /* railsim's own iteration facts (meta_iter reads them back) */
    const rs_trace_iter *it = rs_trace_iteration(t);
    double fl[3] = { it->model_flops, it->peak_flops, it->efficiency };
    uint64_t iv[10] = { it->tokens, it->micro_batches, it->layers, it->tp, it->pp, it->dp, it->cp, it->ep,
                        it->zero, 0 };
    ChakraProtoMsg__DoubleList dl = CHAKRA_PROTO_MSG__DOUBLE_LIST__INIT;
    ChakraProtoMsg__Uint64List ul = CHAKRA_PROTO_MSG__UINT64_LIST__INIT;
    dl.n_values = 3;
    dl.values = fl;
    ul.n_values = 10;
    ul.values = iv;
    pb_attr *x = &ma[meta.n_attr];
    chakra_proto_msg__attribute_proto__init(x);
    x->name = (char *)"railsim_name";
    x->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    x->string_val = (char *)rs_trace_name(t);
    mpa[meta.n_attr++] = x++;
    chakra_proto_msg__attribute_proto__init(x);
    x->name = (char *)"railsim_flops";
    x->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_LIST;
    x->double_list = &dl;
    mpa[meta.n_attr++] = x++;
    chakra_proto_msg__attribute_proto__init(x);
    x->name = (char *)"railsim_iteration";
    x->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST;
    x->uint64_list = &ul;
    mpa[meta.n_attr++] = x;
    meta.attr = mpa;
    rc = put_msg(o, &meta.base);
out:
    for (uint32_t s = 0; mvals && s < nslots; s++)
        free(mvals[s]);
    free(mvals);
    free(ma);
    free(mpa);
    free(ml);
    free(mnames);
    free(is_coll);
    return rc;
}

/* Op i of rank's program as a Node, appended to o. Stream order is a
 * control dependency (last[s]: stream s's op so far, updated), op deps are
 * data deps; tagc counts the messages to and from each peer so far.
 * 0; -1 out of memory. */
static int put_node(const rs_trace *t, uint32_t rank, const rs_op *op, uint32_t i, uint32_t *last, uint32_t *tagc,
                    obuf *o)
{
    /* railsim coll -> Chakra CollectiveCommType */
    static const int64_t ctype[RS_COLL_NOPS] = { 2 /* ALL_GATHER */, 7 /* REDUCE_SCATTER */, 0 /* ALL_REDUCE */,
                                                 6 /* ALL_TO_ALL */, 0 };
    static const char *dims[RS_DIM_COUNT] = { "none", "tp", "pp", "dp", "cp", "ep" };
    pb_node pn;
    chakra_proto_msg__node__init(&pn);
    attrs as = { .n = 0 };
    char pg[16];
    uint64_t cdep = last[op->stream], ddep[2];
    last[op->stream] = i;
    pn.id = i;
    pn.name = (char *)rs_trace_string(t, op->label);
    pn.n_ctrl_deps = cdep != RS_NONE;
    pn.ctrl_deps = &cdep;
    for (int d = 0; d < 2; d++)
        if (op->dep[d] != RS_NONE)
            ddep[pn.n_data_deps++] = op->dep[d];
    pn.data_deps = ddep;
    attr_add(&as, "is_cpu_op")->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
    attr_u64(&as, "railsim_stream", op->stream);
    switch ((rs_op_kind)op->kind) {
    case RS_OP_COMPUTE:
        pn.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
        pn.duration_micros = (op->duration + 500000u) / 1000000u;
        attr_u64(&as, "railsim_duration_ps", op->duration);
        if (op->bytes)
            attr_u64(&as, "railsim_hbm_bytes", op->bytes);
        break;
    case RS_OP_COLL:
        pn.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
        attr_i64(&as, "comm_type", ctype[op->coll < RS_COLL_NOPS ? op->coll : 0]);
        attr_u64(&as, "comm_size", op->bytes);
        /* communicator id + 1: ASTRA-sim reads pg_name "0" as every rank */
        snprintf(pg, sizeof pg, "%u", rs_trace_op_comm(t, rank, op) + 1);
        attr_str(&as, "pg_name", pg);
        attr_str(&as, "railsim_dim", dims[op->dim < RS_DIM_COUNT ? op->dim : 0]);
        break;
    case RS_OP_SEND:
    case RS_OP_RECV: {
        int send = op->kind == RS_OP_SEND;
        uint32_t peer = rs_trace_op_peer(t, rank, op);
        pn.type = send ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE;
        attr_u64(&as, "comm_src", send ? rank : peer);
        attr_u64(&as, "comm_dst", send ? peer : rank);
        attr_u64(&as, "comm_size", op->bytes);
        /* the k-th message between a pair carries tag k at both ends */
        attr_i64(&as, "comm_tag", tagc[(size_t)peer * 2 + !send]++);
        attr_str(&as, "railsim_dim", dims[op->dim < RS_DIM_COUNT ? op->dim : 0]);
        break;
    }
    }
    pn.n_attr = as.n;
    pn.attr = as.pa;
    return put_msg(o, &pn.base);
}

int rs_chakra_export_rank(const rs_trace *t, uint32_t rank, uint8_t **buf, size_t *len, rs_err *err)
{
    obuf o = { 0 };
    uint32_t nops, nranks = rs_trace_nranks(t);
    const rs_op *ops = rs_trace_program(t, rank, &nops);
    uint32_t *tagc = calloc((size_t)nranks * 2, sizeof *tagc); /* per peer: sends, receives so far */
    uint32_t last[S];
    int rc = RS_ENOMEM;
    if (!tagc || put_meta(t, rank, ops, nops, &o))
        goto out;
    for (uint32_t s = 0; s < S; s++)
        last[s] = RS_NONE;
    for (uint32_t i = 0; i < nops; i++)
        if (put_node(t, rank, &ops[i], i, last, tagc, &o))
            goto out;
    *buf = o.p;
    *len = o.n;
    o.p = NULL;
    rc = RS_OK;
out:
    if (rc)
        rs_chakra_oom(err);
    free(o.p);
    free(tagc);
    return rc;
}

int rs_chakra_export(const rs_trace *t, const char *dir, const char *name, rs_err *err)
{
    if (mkdir(dir, 0777) && errno != EEXIST)
        return rs_err_set(err, RS_EIO, "%s: cannot create the directory: %s", dir, strerror(errno));
    size_t pl = strlen(dir) + strlen(name) + 32;
    char *path = malloc(pl), *tmp = malloc(pl + 4);
    if (!path || !tmp) {
        free(path);
        free(tmp);
        return rs_chakra_oom(err);
    }
    int rc = RS_OK;
    for (uint32_t r = 0; r < rs_trace_nranks(t) && rc == RS_OK; r++) {
        uint8_t *b;
        size_t n;
        if ((rc = rs_chakra_export_rank(t, r, &b, &n, err)))
            break;
        snprintf(path, pl, "%s/%s.%u.et", dir, name, r);
        snprintf(tmp, pl + 4, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        int ok = f && fwrite(b, 1, n, f) == n;
        ok = f && fclose(f) == 0 && ok;
        free(b);
        if (!ok || rename(tmp, path)) {
            rc = rs_err_set(err, RS_EIO, "%s: cannot write: %s", path, strerror(errno));
            remove(tmp);
        }
    }
    /* The process groups again for ASTRA-sim, which reads them from its
     * --comm-group-configuration file, not from the metadata. */
    if (rc == RS_OK) {
        snprintf(path, pl, "%s/%s.comm_groups.json", dir, name);
        snprintf(tmp, pl + 4, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        int ok = f != NULL;
        if (f) {
            fputc('{', f);
            for (uint32_t c = 0; c < rs_trace_ncomms(t); c++) {
                uint32_t m;
                const uint32_t *mem = rs_trace_comm_ranks(t, c, &m);
                fprintf(f, "%s\n  \"%u\": [", c ? "," : "", c + 1);
                for (uint32_t q = 0; q < m; q++)
                    fprintf(f, "%s%u", q ? ", " : "", mem[q]);
                fputc(']', f);
            }
            fputs("\n}\n", f);
            ok = !ferror(f);
            ok = fclose(f) == 0 && ok;
        }
        if (!ok || rename(tmp, path)) {
            rc = rs_err_set(err, RS_EIO, "%s: cannot write: %s", path, strerror(errno));
            remove(tmp);
        }
    }
    free(path);
    free(tmp);
    return rc;
}
