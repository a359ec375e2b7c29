/*
 * fuzz_util.h - for fuzz targets whose reader takes a path: keep one
 * temporary file per process and rewrite it with each input.
 */
#ifndef RS_FUZZ_UTIL_H
#define RS_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *fuzz_file(const uint8_t *data, size_t size)
{
    static char path[64];
    static int fd = -1;
    if (fd < 0) {
        snprintf(path, sizeof path, "/tmp/railsim-fuzz-XXXXXX");
        fd = mkstemp(path);
        if (fd < 0)
            abort();
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    return path;
}

#endif
