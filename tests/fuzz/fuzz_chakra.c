/*
 * fuzz_chakra.c - the Chakra ET importer (traces/chakra_import.c and the
 * chakra_*.c it calls) on hostile input. One input is a bundle of rank
 * files: byte 0 gives the rank count (1 + b % 8); then, for every rank but
 * the last, a 16-bit little-endian length and that many bytes; the last
 * rank takes what is left. The seed corpus (corpus/chakra) bundles the e2e
 * fixtures and railsim exports. Every input must be refused with a message
 * or give a trace that passes rs_trace_finish and survives export.
 */
#include <stdlib.h>
#include <string.h>

#include "chakra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t n = 1 + data[0] % 8;
    rs_chakra_file f[8];
    static const char *names[8] = { "f.0.et", "f.1.et", "f.2.et", "f.3.et", "f.4.et", "f.5.et", "f.6.et", "f.7.et" };
    size_t pos = 1;
    for (uint32_t r = 0; r < n; r++) {
        size_t len = size - pos;
        if (r + 1 < n) {
            if (size - pos < 2)
                return 0;
            len = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
            pos += 2;
            if (len > size - pos)
                len = size - pos;
        }
        /* ranks in reverse order: the importer must not rely on file order */
        f[r] = (rs_chakra_file){ .name = names[n - 1 - r], .rank = n - 1 - r, .buf = data + pos, .len = len };
        pos += len;
    }
    rs_trace *t = NULL;
    rs_err err;
    err.msg[0] = 0;
    int rc = rs_chakra_import(f, n, NULL, &t, NULL, &err);
    if (rc) {
        if (!err.msg[0])
            __builtin_trap(); /* every refusal says why */
        return 0;
    }
    for (uint32_t r = 0; r < rs_trace_nranks(t); r++) {
        uint8_t *b;
        size_t len;
        if (rs_chakra_export_rank(t, r, &b, &len, &err) == RS_OK)
            free(b);
    }
    rs_trace_destroy(t);
    return 0;
}
