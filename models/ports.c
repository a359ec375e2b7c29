/*
 * ports.c - the ports array's memory. It is mapped in pages of its own so
 * that a run split over processes (split.c) can give back the pages that
 * hold only other processes' ports: each process then keeps about its
 * share of the ports, the largest part of a large network's state but its
 * packets (docs/parallel.md, "Memory"). A page given back faults on any
 * access, so a process that reads a port it does not own stops there
 * rather than computing with zeros.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "netint.h"

#include <sys/mman.h>
#include <unistd.h>

static size_t ports_bytes(uint32_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), b = ((size_t)n ? n : 1) * sizeof(rs_port);
    return (b + page - 1) / page * page;
}

rs_port *rs_ports_alloc(uint32_t n)
{
    void *p = mmap(NULL, ports_bytes(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void rs_ports_free(rs_port *ports, uint32_t n)
{
    if (ports)
        munmap(ports, ports_bytes(n));
}

/* Give back every page of the ports on which no port has keep[port] set:
 * its memory is freed and any access to it faults, so that a process
 * that reads a port it should not is stopped rather than answered. The
 * bytes given back; a page the kernel would not take back (a mapping
 * limit) stays as it was, which changes nothing but the memory. */
size_t rs_ports_release(rs_net *net, const uint8_t *keep)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), total = ports_bytes(net->nports), run = 0, given = 0;
    char *base = (char *)net->ports;
    for (size_t off = 0; off <= total; off += page) {
        int used = off == total;
        uint64_t last = (off + page - 1) / sizeof(rs_port);
        for (uint64_t i = off / sizeof(rs_port); !used && i <= last && i < net->nports; i++)
            used = keep[i];
        if (!used) {
            run += page;
            continue;
        }
        /* A run of pages that hold none: one mapping in their place. */
        if (run && mmap(base + off - run, run, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                        -1, 0) != MAP_FAILED)
            given += run;
        run = 0;
    }
    return given;
}
