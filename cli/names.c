/*
 * names.c - edit distance and printable copies of user text (names.h).
 */
#include "names.h"

#include <string.h>

size_t rs_edit_distance(const char *a, const char *b, size_t cap)
{
    enum { MAXLEN = 63 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXLEN || lb > MAXLEN || (la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    size_t d[MAXLEN + 1][MAXLEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

const char *rs_printable(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; s[n] && n + 1 < size; n++)
        out[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    out[n] = '\0';
    return out;
}
