/*
 * comm.h - communicators: an ordered list of distinct GPU ids. Rank r of a
 * communicator is the GPU at position r of the list, as in NCCL, where the
 * caller's rank order is the order ring and tree algorithms start from.
 *
 * A communicator is a plain description: it holds no network pointer, so a
 * trace can build its groups before a network exists. Ids are checked
 * against the network's GPU count again when a collective starts.
 */
#ifndef RS_COMM_H
#define RS_COMM_H

#include "base.h"

RS_BEGIN_DECLS

typedef struct rs_comm rs_comm;

/* Each constructor checks its arguments against a network of `gpus` GPUs
 * and fills *out with a communicator the caller frees with
 * rs_comm_destroy. Errors: RS_EINVAL (empty group, GPU id >= gpus,
 * duplicate GPU, hb_size not dividing gpus, rail or domain out of range)
 * with err naming the argument; RS_ENOMEM. */

/* The n GPUs of list[] in that order (list is copied). */
RS_API int rs_comm_create(const uint32_t *list, uint32_t n, uint32_t gpus, rs_comm **out, rs_err *err);
/* GPUs 0..gpus-1. */
RS_API int rs_comm_create_all(uint32_t gpus, rs_comm **out, rs_err *err);
/* Rail r of a network whose HB domains hold hb_size GPUs: r, r+K, r+2K... */
RS_API int rs_comm_create_rail(uint32_t gpus, uint32_t hb_size, uint32_t rail, rs_comm **out, rs_err *err);
/* HB domain d: d*K .. d*K+K-1. */
RS_API int rs_comm_create_domain(uint32_t gpus, uint32_t hb_size, uint32_t domain, rs_comm **out, rs_err *err);
/* start, start+stride, ... (count GPUs; stride >= 1). */
RS_API int rs_comm_create_strided(uint32_t gpus, uint32_t start, uint32_t stride, uint32_t count,
                           rs_comm **out, rs_err *err);

RS_API void rs_comm_destroy(rs_comm *c); /* NULL is a no-op */

RS_API uint32_t rs_comm_size(const rs_comm *c);
/* GPU of rank r (r < size; checked by RS_ASSERT). */
RS_API uint32_t rs_comm_gpu(const rs_comm *c, uint32_t rank);
/* All GPU ids in rank order; borrowed, valid until rs_comm_destroy. */
RS_API const uint32_t *rs_comm_gpus(const rs_comm *c);

RS_END_DECLS

#endif
