/*
 * tlformat.h - the identity (format name, versions) and the record kinds
 * of a railsim timeline (docs/timeline-format.md): the one definition the
 * writer (timeline.h, the engine) and the reader (analysis/timeline_read.h,
 * which never links the simulator) both use. Nothing but constants.
 */
#ifndef RS_TLFORMAT_H
#define RS_TLFORMAT_H

#include <stdint.h>

/* File format identity, written in the header. */
#define RS_TIMELINE_FORMAT "railsim-timeline"
#define RS_TIMELINE_VERSION 1       /* major: readers reject other majors */
#define RS_TIMELINE_VERSION_MINOR 0 /* minor: adds kinds/trailing fields only */

/* Record kinds: the first element of every record array. Values are part
 * of the file format and never change or get reused. */
typedef enum rs_timeline_kind {
    RS_TL_NAME = 1,   /* [1, space, id, name]: names an id (always written) */
    RS_TL_OP = 2,     /* op span of one rank */
    RS_TL_COLL = 3,   /* one collective, start to end */
    RS_TL_FLOW = 4,   /* one flow/message, start to completion */
    RS_TL_SAMPLE = 5, /* link/queue sample of one port */
    RS_TL_PFC = 6,    /* PFC pause or resume at a port */
    RS_TL_ECN = 7,    /* ECN marks or CNPs at a port */
    RS_TL_DROP = 8,   /* packets dropped at a port */
    RS_TL_FAULT = 9,  /* a fault injected or repaired */
    RS_TL_END = 10    /* [10, complete, records]: last record (always written) */
} rs_timeline_kind;

/* "No communicator" (an OP record of compute): nil in the file. */
#define RS_TL_NONE UINT32_MAX

#endif
