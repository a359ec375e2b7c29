/*
 * export_io.c - atomic output files and JSON/CSV text escaping shared by
 * the exporters (export_int.h).
 */
#include "export.h"
#include "export_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

int rs_xfile_open(rs_xfile *x, const char *path, rs_an_err *err)
{
    x->f = NULL;
    if ((size_t)snprintf(x->path, sizeof x->path, "%s", path) >= sizeof x->path)
        return rs_an_errf(err, RS_AN_EOUTPUT, "%.64s...: output path too long", path);
    snprintf(x->tmp, sizeof x->tmp, "%s.tmp", path);
    x->f = fopen(x->tmp, "wb");
    if (!x->f)
        return rs_an_errf(err, RS_AN_EOUTPUT, "%s: cannot create output file: %s", x->tmp, strerror(errno));
    return RS_AN_OK;
}

int rs_xfile_commit(rs_xfile *x, rs_an_err *err)
{
    if (!x->f)
        return rs_an_errf(err, RS_AN_EOUTPUT, "%s: not open", x->path);
    int bad = fflush(x->f) != 0 || ferror(x->f);
    int e = errno;
    if (fclose(x->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    x->f = NULL;
    if (bad) {
        unlink(x->tmp);
        return rs_an_errf(err, RS_AN_EOUTPUT, "%s: cannot write output file: %s", x->path, strerror(e));
    }
    if (rename(x->tmp, x->path) != 0) {
        e = errno;
        unlink(x->tmp);
        return rs_an_errf(err, RS_AN_EOUTPUT, "%s: cannot rename %s over it: %s", x->path, x->tmp, strerror(e));
    }
    return RS_AN_OK;
}

void rs_xfile_abort(rs_xfile *x)
{
    if (!x->f)
        return;
    fclose(x->f);
    x->f = NULL;
    unlink(x->tmp);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (c >= 0xf5)
        n = 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* overlong 3/4-byte forms, surrogates and code points above U+10FFFF */
    if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
        return 0;
    if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
        return 0;
    return n;
}

void rs_json_str(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    fputc('"', f);
    while (*s) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            s++;
        } else {
            int n = utf8_len(s);
            if (n == 0) {
                fputs("\\ufffd", f);
                s++;
            } else {
                fwrite(s, 1, (size_t)n, f);
                s += n;
            }
        }
    }
    fputc('"', f);
}

void rs_csv_str(FILE *f, const char *str)
{
    const char *s = str ? str : "";
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void rs_ps_as_us(FILE *f, uint64_t ps)
{
    fprintf(f, "%" PRIu64 ".%06" PRIu64, ps / 1000000u, ps % 1000000u);
}
