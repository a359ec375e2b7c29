/*
 * wire.c - the header of the messages between a split run's processes
 * (wire.h, docs/parallel.md "Wire format").
 */
#include <stdio.h>
#include <string.h>

#include "wire.h"

const char *rs_wire_kind_name(rs_wire_kind kind)
{
    switch (kind) {
    case RS_WIRE_WINDOW: return "a window message";
    case RS_WIRE_TAIL: return "an end-of-run message";
    case RS_WIRE_COLL: return "a collective's part";
    case RS_WIRE_REPLAY: return "a replay's part";
    }
    return "a message";
}

int rs_wire_read(const void *b, size_t avail, rs_wire_kind kind, uint32_t from, uint32_t ranks, rs_wire *w,
                 char *why, size_t n)
{
    const char *what = rs_wire_kind_name(kind);
    char src[40] = "";
    if (from != UINT32_MAX)
        snprintf(src, sizeof src, " from rank %u", from);
    if (!b || avail < sizeof *w) {
        snprintf(why, n, "%s%s: %zu bytes, expected at least the %zu of its header", what, src, avail, sizeof *w);
        return RS_EFORMAT;
    }
    memcpy(w, b, sizeof *w);
    if (w->magic != RS_WIRE_MAGIC)
        snprintf(why, n, "%s%s: magic number 0x%08x, expected 0x%08x (not railsim's wire format)", what, src,
                 w->magic, RS_WIRE_MAGIC);
    else if (w->version != RS_WIRE_VERSION)
        snprintf(why, n, "%s%s: wire format version %u, expected %u", what,
                 src, w->version, RS_WIRE_VERSION);
    else if (w->kind != kind)
        snprintf(why, n, "%s%s: its header says %s", what, src, rs_wire_kind_name((rs_wire_kind)w->kind));
    else if (w->from >= ranks || (from != UINT32_MAX && w->from != from))
        snprintf(why, n, "%s%s: its header says rank %u, expected %s", what, src, w->from,
                 from != UINT32_MAX ? "the sender's" : "a rank of the run");
    else if (w->len > avail - sizeof *w)
        snprintf(why, n, "%s%s: its header announces %llu bytes, %zu came", what, src, (unsigned long long)w->len,
                 avail - sizeof *w);
    else
        return RS_OK;
    return RS_EFORMAT;
}
