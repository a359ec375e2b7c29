/*
 * output.c - directory creation and atomic file replacement.
 */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int rs_output_mkdir(const char *dir, rs_err *err)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path)
        return rs_err_set(err, RS_EIO, "-o: expected a directory path shorter than %zu bytes", sizeof path);
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char c = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return rs_err_set(err, RS_EIO, "%s: cannot create output directory: %s", path, strerror(errno));
        path[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return rs_err_set(err, RS_EIO, "%s: output path exists and is not a directory", dir);
    return RS_OK;
}

int rs_output_write(const char *dir, const char *name, const char *data, size_t len, rs_err *err)
{
    char tmp[4096], final[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name) >= sizeof tmp ||
        (size_t)snprintf(final, sizeof final, "%s/%s", dir, name) >= sizeof final)
        return rs_err_set(err, RS_EIO, "%s/%s: path too long", dir, name);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return rs_err_set(err, RS_EIO, "%s: cannot write: %s", final, strerror(errno));
    int ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, final) != 0) {
        int e = errno;
        remove(tmp);
        return rs_err_set(err, RS_EIO, "%s: cannot write: %s", final, strerror(e));
    }
    return RS_OK;
}
