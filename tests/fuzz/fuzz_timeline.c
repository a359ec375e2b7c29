/*
 * fuzz_timeline.c - the timeline reader (analysis/) on hostile input: any
 * byte string must be rejected with a message or read to its end, with
 * bounded memory and no crash.
 */
#include "fuzz_util.h"
#include "timeline_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    rs_tlread *r = NULL;
    rs_an_err err;
    if (rs_tlread_open(path, &r, &err) != 0)
        return 0;
    rs_tlread_rec rec;
    int rc;
    for (int i = 0; i < 1000000 && (rc = rs_tlread_next(r, &rec, &err)) == 1; i++)
        ;
    rs_tlread_close(r);
    return 0;
}
