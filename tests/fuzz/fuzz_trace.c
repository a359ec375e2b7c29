/*
 * fuzz_trace.c - the trace reader (traces/trace_file.c, trace_codec.c) on
 * hostile input. An input that starts with the file magic goes through the
 * whole file path (header, CRCs, zlib); any other input is fed to the
 * payload parser directly, so the fuzzer reaches it without forging
 * checksums. Either must be rejected or yield a trace whose programs can
 * be walked the way replay walks them.
 */
#include <string.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_trace *t = NULL;
    rs_err err;
    int rc = size >= 8 && memcmp(data, "RSTRACE", 8) == 0
                 ? rs_trace_decode(data, size, "fuzz", &t, NULL, &err)
                 : rs_trace_payload_decode(data, size, "fuzz", &t, &err);
    if (rc)
        return 0;
    for (uint32_t r = 0; r < rs_trace_nranks(t); r++) {
        uint32_t n, m;
        const rs_op *ops = rs_trace_program(t, r, &n);
        for (uint32_t i = 0; i < n; i++) {
            if (ops[i].kind == RS_OP_COLL)
                rs_trace_comm_ranks(t, rs_trace_op_comm(t, r, &ops[i]), &m);
            else if (ops[i].kind != RS_OP_COMPUTE && rs_trace_op_peer(t, r, &ops[i]) >= rs_trace_nranks(t))
                __builtin_trap();
            if (ops[i].dep[0] != RS_NONE && ops[i].dep[0] >= i)
                __builtin_trap();
        }
    }
    rs_trace_destroy(t);
    return 0;
}
