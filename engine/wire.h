/*
 * wire.h - the header of every message between the processes of a split
 * run (docs/parallel.md, "Wire format"): a magic number, a version, what
 * the message is, which process sent it and how many bytes follow. The
 * receiver checks it before it reads a byte of what follows; a message
 * that is not railsim's, of another version, of another kind, from a
 * process that does not exist or cut short is an error with one sentence
 * saying which, never a crash.
 */
#ifndef RS_WIRE_H
#define RS_WIRE_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

RS_BEGIN_DECLS

#define RS_WIRE_MAGIC 0x57505352u /* "RSPW" in a little-endian dump */
#define RS_WIRE_VERSION 4u

typedef enum {
    RS_WIRE_WINDOW = 1, /* a window's frames, sends, timers, reports (models/split.c) */
    RS_WIRE_TAIL = 2,   /* a process's counters and ports at the end, to process 0 (models/split.c) */
    RS_WIRE_COLL = 3,   /* a split collective's completions, to process 0 (run/run_split.c) */
    RS_WIRE_REPLAY = 4  /* a split replay's state, to process 0 (run/run_split.c) */
} rs_wire_kind;

/* 24 bytes, host byte order (the processes of one run share a machine
 * type: MPI moves the bytes as they are). */
typedef struct rs_wire {
    uint32_t magic;   /* RS_WIRE_MAGIC */
    uint16_t version; /* RS_WIRE_VERSION */
    uint16_t kind;    /* rs_wire_kind */
    uint32_t from;    /* the sending process's rank */
    uint32_t pad;     /* 0 */
    uint64_t len;     /* bytes that follow the header */
} rs_wire;

static inline rs_wire rs_wire_make(rs_wire_kind kind, uint32_t from, uint64_t len)
{
    rs_wire w = { RS_WIRE_MAGIC, RS_WIRE_VERSION, (uint16_t)kind, from, 0, len };
    return w;
}

/* The name of a kind, for messages ("a window message"). */
const char *rs_wire_kind_name(rs_wire_kind kind);

/* Read the header at b, of which avail bytes arrived, into *w and check
 * it: the magic, the version, the kind, a sender below ranks (and equal
 * to from unless from is UINT32_MAX), and len within what arrived.
 * RS_OK, or RS_EFORMAT with one sentence in why ("a window message from
 * rank 1: wire format version 2, expected 1"). */
int rs_wire_read(const void *b, size_t avail, rs_wire_kind kind, uint32_t from, uint32_t ranks, rs_wire *w,
                 char *why, size_t n);

RS_END_DECLS

#endif
