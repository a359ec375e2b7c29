/*
 * trace_file.c - the trace file (docs/trace-format.md): a 44-byte header
 * (magic, version, sizes, CRC-32s) and the payload (trace_codec.c)
 * compressed by zlib, whose only user this is. The header and the
 * compressed stream's checksum are checked before anything is
 * decompressed. rs_trace_write writes PATH.tmp and renames it, so a
 * failed write leaves no half-written file; rs_trace_read refuses a file
 * larger than any trace file can be.
 */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pool.h"
#include "trace_int.h"

#define MAGIC "RSTRACE"  /* 8 bytes with the NUL */
#define VERSION 1u
#define HEADER_BYTES 44u

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint64_t expanded_bytes(const rs_trace *t)
{
    uint64_t n = 0;
    for (uint32_t r = 0; r < t->nranks; r++)
        n += t->class_nops[t->rank_class[r]];
    return n * sizeof(rs_op);
}

/* Header (44 bytes, little-endian):
 *   0  magic "RSTRACE\0"     8  version (u32)     12 flags (u32, 0)
 *   16 payload bytes (u64)   24 zlib bytes (u64)  32 CRC-32 of the payload
 *   36 CRC-32 of the zlib stream (zlib itself ignores the padding bits of
 *      its last byte, so a flip there would pass without it)
 *   40 CRC-32 of bytes 0..39
 * then the zlib stream of the payload. */
int rs_trace_encode(const rs_trace *t, uint8_t **buf, size_t *len, rs_trace_file_stats *st, rs_err *err)
{
    *buf = NULL;
    *len = 0;
    uint8_t *pl;
    size_t pn;
    int rc = rs_trace_payload_encode(t, &pl, &pn, err);
    if (rc)
        return rc;
    uLongf zn = compressBound((uLong)pn);
    uint8_t *f = malloc(HEADER_BYTES + (size_t)zn);
    if (!f) {
        free(pl);
        return rs_err_set(err, RS_ENOMEM, "trace: out of memory while compressing");
    }
    if (compress2(f + HEADER_BYTES, &zn, pl, (uLong)pn, 9) != Z_OK) {
        free(pl);
        free(f);
        return rs_err_set(err, RS_ENOMEM, "trace: zlib could not compress the payload");
    }
    memcpy(f, MAGIC, 8);
    put_le(f + 8, VERSION, 4);
    put_le(f + 12, 0, 4);
    put_le(f + 16, pn, 8);
    put_le(f + 24, zn, 8);
    put_le(f + 32, crc32(0L, pl, (uInt)pn), 4);
    put_le(f + 36, crc32(0L, f + HEADER_BYTES, (uInt)zn), 4);
    put_le(f + 40, crc32(0L, f, 40), 4);
    free(pl);
    *buf = f;
    *len = HEADER_BYTES + (size_t)zn;
    if (st) {
        st->file_bytes = *len;
        st->payload_bytes = pn;
        st->expanded_bytes = expanded_bytes(t);
    }
    return RS_OK;
}

int rs_trace_decode(const uint8_t *buf, size_t len, const char *name, rs_trace **out, rs_trace_file_stats *st,
                    rs_err *err)
{
    *out = NULL;
    if (len < 8 || memcmp(buf, MAGIC, 8) != 0)
        return rs_err_set(err, RS_EFORMAT, "%s: not a railsim trace file: expected the magic \"RSTRACE\"", name);
    if (len < HEADER_BYTES)
        return rs_err_set(err, RS_EFORMAT, "%s: truncated trace file: %zu bytes, expected a %u-byte header",
                          name, len, HEADER_BYTES);
    if (get_le(buf + 40, 4) != crc32(0L, buf, 40))
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: the header checksum does not match", name);
    uint64_t version = get_le(buf + 8, 4);
    if (version != VERSION)
        return rs_err_set(err, RS_EFORMAT, "%s: trace format version %llu, expected version %u", name,
                          (unsigned long long)version, VERSION);
    if (get_le(buf + 12, 4) != 0)
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: header flags set, expected 0", name);
    uint64_t pn = get_le(buf + 16, 8), zn = get_le(buf + 24, 8);
    if (zn != len - HEADER_BYTES)
        return rs_err_set(err, RS_EFORMAT, "%s: truncated or padded trace file: %zu bytes, expected %llu",
                          name, len, (unsigned long long)(zn + HEADER_BYTES));
    if (pn > MAX_PAYLOAD || pn == 0)
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: payload of %llu bytes, expected 1 to 2^30",
                          name, (unsigned long long)pn);
    if (get_le(buf + 36, 4) != crc32(0L, buf + HEADER_BYTES, (uInt)zn))
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: the compressed payload's checksum does not "
                          "match", name);
    uint8_t *pl = malloc((size_t)pn);
    if (!pl)
        return rs_err_set(err, RS_ENOMEM, "%s: out of memory for a %llu-byte payload", name, (unsigned long long)pn);
    uLongf got = (uLongf)pn;
    int zrc = uncompress(pl, &got, buf + HEADER_BYTES, (uLong)zn);
    if (zrc != Z_OK || got != pn || get_le(buf + 32, 4) != crc32(0L, pl, (uInt)pn)) {
        free(pl);
        if (zrc == Z_MEM_ERROR)
            return rs_err_set(err, RS_ENOMEM, "%s: out of memory while decompressing", name);
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: the compressed payload does not decompress "
                          "to %llu bytes with a matching checksum", name, (unsigned long long)pn);
    }
    int rc = rs_trace_payload_decode(pl, (size_t)pn, name, out, err);
    free(pl);
    if (!rc && st) {
        st->file_bytes = len;
        st->payload_bytes = pn;
        st->expanded_bytes = expanded_bytes(*out);
    }
    return rc;
}

int rs_trace_write(const rs_trace *t, const char *path, rs_trace_file_stats *st, rs_err *err)
{
    uint8_t *buf;
    size_t len;
    int rc = rs_trace_encode(t, &buf, &len, st, err);
    if (rc)
        return rc;
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        free(buf);
        return rs_err_set(err, RS_EIO, "%s: path too long", path);
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        free(buf);
        return rs_err_set(err, RS_EIO, "%s: cannot write trace file: %s", path, strerror(e));
    }
    int ok = fwrite(buf, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    free(buf);
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return rs_err_set(err, RS_EIO, "%s: cannot write trace file: %s", path, strerror(e));
    }
    return RS_OK;
}

int rs_trace_read(const char *path, rs_trace **out, rs_trace_file_stats *st, rs_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rs_err_set(err, RS_EIO, "%s: cannot open trace file: %s", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = RS_OK;
    for (;;) {
        /* A full buffer doubles (from 64 KiB); one that would pass a whole
         * file's largest size means the file is not a trace. */
        if (len == cap && 2 * cap > MAX_PAYLOAD + HEADER_BYTES + 1) {
            rc = rs_err_set(err, RS_EFORMAT, "%s: trace file larger than 1 GiB, expected a railsim trace", path);
            break;
        }
        if (rs_array_reserve(&buf, &cap, len + 1, 1, 65536)) {
            rc = rs_err_set(err, RS_ENOMEM, "%s: out of memory while reading", path);
            break;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                rc = rs_err_set(err, RS_EIO, "%s: cannot read trace file: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (!rc)
        rc = rs_trace_decode(buf, len, path, out, st, err);
    free(buf);
    return rc;
}
