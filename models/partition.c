/*
 * partition.c - the trivial partition of a serial run (partition_int.h):
 * this process owns every node, no link is cut, and rs_net_run runs the
 * engine to the end; and what the layers above ask of any partition.
 */
#include "backend.h"
#include "netint.h"

#include <string.h>

/* End-of-run invariants, checked whenever a run has gone idle (nothing
 * left to happen): the backend's (every packet delivered or dropped, no
 * record alive). A violation is our bug: the run reports RS_EINTERNAL
 * instead of a result that looks fine. */
static int serial_run(rs_net *net, rs_time until)
{
    int rc = rs_sim_run(net->sim, until);
    rs_fabric_settle(net);
    if (rc == RS_OK && net->be->idle_check && rs_sim_pending(net->sim) == 0)
        rc = net->be->idle_check(net);
    /* Idle: the packets' slabs go back before the summary is built (the
     * largest part of a large run's memory; docs/parallel.md, "Memory"). */
    if (rs_sim_pending(net->sim) == 0)
        rs_pool_trim(&net->pkts);
    return rc;
}

static const rs_part_ops serial_ops = { .run = serial_run };

void rs_part_init(rs_net *net)
{
    memset(&net->pt, 0, sizeof net->pt);
    net->pt.ops = &serial_ops;
    net->pt.ranks = 1;
}

/* -- what the layers above ask ------------------------------------------- */

uint32_t rs_net_part_ranks(const rs_net *net) { return net->pt.ranks; }

const char *rs_net_part_errmsg(const rs_net *net)
{
    return net->pt.ops->errmsg ? net->pt.ops->errmsg(net) : "";
}

int rs_net_gpu_local(const rs_net *net, uint32_t gpu)
{
    return gpu < net->gpus && rs_part_owns_node(net, gpu);
}
