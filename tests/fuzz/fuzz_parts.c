/*
 * fuzz_parts.c - the parts-table reader (run/parts.c) on hostile JSON,
 * then the cost model on the table it accepts: loading returns RS_OK or
 * an error with a message; an accepted table prices both designs or
 * rejects the combination with a message.
 */
#include "fuzz_util.h"
#include "run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    rs_catalog p;
    rs_catalog_default(&p);
    rs_err err;
    rs_err_clear(&err);
    if (rs_catalog_load(path, &p, &err) != RS_OK) {
        if (err.msg[0] == '\0')
            abort();
        return 0;
    }
    rs_cost_input in;
    rs_cost_input_default(&in);
    rs_bom fat, rail;
    rs_err_clear(&err);
    if (rs_cost_compute(&in, &p, &fat, &rail, &err) != RS_OK && err.msg[0] == '\0')
        abort();
    return 0;
}
