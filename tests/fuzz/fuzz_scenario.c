/*
 * fuzz_scenario.c - the scenario reader on hostile input. The input is a
 * scenario file; its last line, when it looks like KEY=VALUE, is also
 * applied as a --set. Loading must return RS_OK or an error with a
 * message, never crash, leak or read out of bounds; a loaded scenario must
 * survive the JSON echo.
 */
#include <jansson.h>

#include "fuzz_util.h"
#include "scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    char set[256];
    char *sets[1] = { set };
    int nsets = 0;
    const uint8_t *nl = size ? memchr(data, '\n', size) : NULL;
    if (nl && (size_t)(data + size - nl - 1) < sizeof set) {
        size_t n = (size_t)(data + size - nl - 1);
        memcpy(set, nl + 1, n);
        set[n] = '\0';
        nsets = strchr(set, '=') != NULL;
    }
    rs_scenario sc;
    rs_err err;
    int rc = rs_scenario_load(&sc, path, sets, nsets, &err);
    if (rc != RS_OK) {
        if (err.msg[0] == '\0' || strlen(err.msg) >= sizeof err.msg)
            abort(); /* every failure must say why */
        return 0;
    }
    json_t *j = rs_scenario_to_json(&sc);
    if (!j)
        abort();
    json_decref(j);
    return 0;
}
