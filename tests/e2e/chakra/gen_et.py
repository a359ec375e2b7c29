#!/usr/bin/env python3
"""gen_et.py - Chakra ET fixtures written the way Chakra's own generator
(mlcommons/chakra src/generator/generator.py) and ASTRA-sim's example
workloads write them, by a producer that shares no code with railsim: its
protobuf wire encoder is the few lines below (no protobuf library), and it
chooses what railsim's exporter does not: comm_size as uint64, int64,
uint32 or sint64, comm_type as int64, is_cpu_op, no process groups (the
world), control dependencies beside data dependencies, metadata and memory
nodes, node ids that do not start at 0 or follow file order.

    gen_et.py [OUTDIR]    writes OUTDIR/<fixture>/<fixture>.<rank>.et (default:
                          beside this script)

The outputs are checked in beside this script (tests/e2e/chakra/); run it
again after changing it and commit both.
"""
import os
import struct
import sys

# ---- protobuf wire format (developers.google.com/protocol-buffers/docs/encoding)

def varint(v):
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)

def key(field, wire):
    return varint(field << 3 | wire)

def f_varint(field, v):
    return key(field, 0) + varint(v)

def f_zigzag(field, v):
    return key(field, 0) + varint((v << 1) ^ (v >> 63))

def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b

def f_packed(field, values):
    return f_bytes(field, b"".join(varint(v) for v in values)) if values else b""

# AttributeProto: name = 1, then one value field.
INT64, UINT32, UINT64, SINT64, BOOL, STRING = 9, 11, 13, 17, 27, 29

def attr(name, kind, v):
    body = f_bytes(1, name)
    if kind == SINT64:
        body += f_zigzag(kind, v)
    elif kind == STRING:
        body += f_bytes(kind, v)
    else:
        body += f_varint(kind, int(v))
    return body

def node(nid, name, ntype, attrs=(), ctrl=(), data=(), dur=0, inputs=None):
    b = f_varint(1, nid) + f_bytes(2, name) + f_varint(3, ntype)
    b += f_packed(4, ctrl) + f_packed(5, data)
    if dur:
        b += f_varint(7, dur)
    if inputs is not None:  # IOInfo { values = 1 }
        b += f_bytes(8, f_bytes(1, inputs))
    for a in attrs:
        b += f_bytes(10, a)
    return b

def metadata(version="0.0.4"):
    return f_bytes(1, version)

def delimited(msg):  # Chakra protolib encodeMessage: varint length, message
    return varint(len(msg)) + msg

METADATA, MEM_LOAD, MEM_STORE, COMP, SEND, RECV, COLL = 1, 2, 3, 4, 5, 6, 7
ALL_REDUCE, ALL_GATHER, ALL_TO_ALL, REDUCE_SCATTER = 0, 2, 6, 7
MIB = 1 << 20

def write(outdir, name, ranks):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    for r, nodes in enumerate(ranks):
        with open(os.path.join(d, "%s.%d.et" % (name, r)), "wb") as f:
            f.write(delimited(metadata()))
            for n in nodes:
                f.write(delimited(n))

def one_coll(ctype, size_kind):
    """generator.py's one_comm_coll_node_*: one collective, is_cpu_op false."""
    return [[node(0, "COMM_COLL_NODE", COLL,
                  [attr("is_cpu_op", BOOL, 0), attr("comm_type", INT64, ctype),
                   attr("comm_size", size_kind, MIB)])] for _ in range(8)]

def ring_allreduce(n=8, size=MIB, reduce_us=2):
    """A ring AllReduce of `size` bytes by hand: 2(n-1) steps of one chunk
    sent right and one received from the left; in the reduce-scatter half
    a compute node reduces the received chunk before it is passed on."""
    chunk = size // n
    out = []
    for r in range(n):
        nodes, nid, prev = [], 100, None
        right, left = (r + 1) % n, (r - 1) % n
        for step in range(2 * (n - 1)):
            s_id, r_id = nid, nid + 1
            nid += 2
            deps = [prev] if prev is not None else []
            nodes.append(node(s_id, "ring send", SEND,
                              [attr("is_cpu_op", BOOL, 0), attr("comm_src", UINT64, r), attr("comm_dst", UINT64, right),
                               attr("comm_size", UINT64, chunk), attr("comm_tag", INT64, step)], ctrl=deps))
            nodes.append(node(r_id, "ring recv", RECV,
                              [attr("is_cpu_op", BOOL, 0), attr("comm_src", UINT64, left), attr("comm_dst", UINT64, r),
                               attr("comm_size", UINT64, chunk), attr("comm_tag", INT64, step)], ctrl=deps))
            if step < n - 1:
                c_id = nid
                nid += 1
                nodes.append(node(c_id, "reduce chunk", COMP, [attr("is_cpu_op", BOOL, 0)],
                                  data=[r_id], ctrl=[s_id], dur=reduce_us))
                prev = c_id
            else:
                prev = r_id
        out.append(nodes)
    return out

def pipeline(n=4, micro=3, fwd_us=50):
    """A pipeline: each stage loads its weights (MEM_LOAD, tensor_size),
    then per micro-batch receives activations from the stage before,
    computes (FLOPs, no duration: the GPU model times it) and sends to the
    next. Micro-batches are ordered by control dependencies only; a
    METADATA node marks the start. Ids count down, not in file order."""
    out = []
    for r in range(n):
        nodes, nid = [], 10000
        meta = nid
        nodes.append(node(meta, "step begin", METADATA, []))
        nid -= 1
        load = nid
        nodes.append(node(load, "load weights", MEM_LOAD, [attr("is_cpu_op", BOOL, 0), attr("tensor_size", UINT64, 64 * MIB)],
                          ctrl=[meta]))
        nid -= 1
        prev = load
        for m in range(micro):
            deps = []
            if r > 0:
                rv = nid
                nid -= 1
                nodes.append(node(rv, "recv activation", RECV,
                                  [attr("comm_src", INT64, r - 1), attr("comm_size", INT64, 4 * MIB), attr("comm_tag", INT64, m)],
                                  ctrl=[prev]))
                deps = [rv]
            c = nid
            nid -= 1
            nodes.append(node(c, "forward", COMP, [attr("num_ops", UINT64, 400 * 10**9)], data=deps, ctrl=[prev]))
            if r < n - 1:
                sd = nid
                nid -= 1
                nodes.append(node(sd, "send activation", SEND,
                                  [attr("comm_dst", INT64, r + 1), attr("comm_size", INT64, 4 * MIB), attr("comm_tag", INT64, m)],
                                  data=[c]))
            prev = c
        out.append(nodes)
    return out

def process_groups(n=8):
    """Process groups the ways PyTorch-derived traces carry them: a
    METADATA_NODE whose inputs.values is the process-group record
    (pg "1" ranks 0-3, pg "2" ranks 4-7, pg "0" every rank, as ASTRA-sim
    reads it), a 1 MiB AllReduce on the rank's half (pg_name a string), a
    1 MiB AllGather on pg "0", then a 1 MiB AllToAll on pg 3 (even ranks) or
    4 (odd ranks), pg_name an int64, defined only in comm_groups.json."""
    record = '["[{"pg_name": "0", "pg_desc": "default_pg", "ranks": []}, ' \
             '{"pg_name": "1", "ranks": [0, 1, 2, 3]}, {"pg_name": "2", "ranks": [4, 5, 6, 7]}]"]'
    out = []
    for r in range(n):
        out.append([
            node(1, "## process_group:init ##", METADATA, [], inputs=record),
            node(2, "nccl:all_reduce", COLL, [attr("comm_type", INT64, ALL_REDUCE), attr("comm_size", UINT64, MIB),
                                              attr("pg_name", STRING, "1" if r < 4 else "2")], data=[1]),
            node(3, "nccl:all_gather", COLL, [attr("comm_type", INT64, ALL_GATHER), attr("comm_size", INT64, MIB),
                                              attr("pg_name", STRING, "0")], ctrl=[2]),
            node(4, "nccl:all_to_all", COLL, [attr("comm_type", INT64, ALL_TO_ALL), attr("comm_size", UINT64, MIB),
                                              attr("pg_name", INT64, 3 + r % 2)], ctrl=[3]),
        ])
    return out

def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    write(outdir, "allreduce", one_coll(ALL_REDUCE, UINT64))
    write(outdir, "allgather", one_coll(ALL_GATHER, INT64))
    write(outdir, "reducescatter", one_coll(REDUCE_SCATTER, UINT32))
    write(outdir, "alltoall", one_coll(ALL_TO_ALL, SINT64))
    write(outdir, "ring_allreduce", ring_allreduce())
    write(outdir, "pipeline", pipeline())
    write(outdir, "process_groups", process_groups())
    with open(os.path.join(outdir, "process_groups", "comm_groups.json"), "w") as f:
        f.write('{"3": [0, 2, 4, 6], "4": [1, 3, 5, 7]}\n')

if __name__ == "__main__":
    main()
