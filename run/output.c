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

/* Write data to dir/.name.tmp; final gets dir/name. */
static int write_tmp(const char *dir, const char *name, const char *data, size_t len, char *tmp, char *final,
                     rs_err *err)
{
    if ((size_t)snprintf(tmp, 4096, "%s/.%s.tmp", dir, name) >= 4096 ||
        (size_t)snprintf(final, 4096, "%s/%s", dir, name) >= 4096)
        return rs_err_set(err, RS_EIO, "%s/%s: path too long", dir, name);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return rs_err_set(err, RS_EIO, "%s: cannot write: %s", final, strerror(errno));
    int ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        int e = errno;
        remove(tmp);
        return rs_err_set(err, RS_EIO, "%s: cannot write: %s", final, strerror(e));
    }
    return RS_OK;
}

int rs_output_write(const char *dir, const char *name, const char *data, size_t len, rs_err *err)
{
    const char *names[1] = { name }, *datas[1] = { data };
    size_t lens[1] = { len };
    return rs_output_write_set(dir, names, datas, lens, 1, err);
}

int rs_output_write_set(const char *dir, const char *const *names, const char *const *data, const size_t *lens,
                        size_t n, rs_err *err)
{
    enum { MAXSET = 8 };
    char tmp[MAXSET][4096], final[MAXSET][4096];
    if (n > MAXSET)
        return rs_err_set(err, RS_EIO, "%s: too many files in one set", dir);
    size_t done = 0;
    int rc = RS_OK;
    for (; done < n && rc == RS_OK; done++)
        if ((rc = write_tmp(dir, names[done], data[done], lens[done], tmp[done], final[done], err)) != RS_OK)
            break;
    for (size_t i = 0; rc == RS_OK && i < n; i++)
        if (rename(tmp[i], final[i]) != 0) {
            rc = rs_err_set(err, RS_EIO, "%s: cannot write: %s", final[i], strerror(errno));
            for (size_t j = 0; j < i; j++)
                remove(final[j]); /* none of the set, rather than part of it */
            done = n;
        }
    if (rc != RS_OK)
        for (size_t i = 0; i < done && i < n; i++)
            remove(tmp[i]);
    return rc;
}
