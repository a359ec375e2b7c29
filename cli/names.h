/*
 * names.h - small helpers for messages about names the user typed: edit
 * distance for "did you mean" suggestions, and making hostile text safe to
 * print on one line. Shared by the scenario and parts-table readers.
 */
#ifndef RS_NAMES_H
#define RS_NAMES_H

#include <stddef.h>

/* Optimal-string-alignment distance (Levenshtein plus adjacent swaps)
 * between a and b, or cap + 1 when it is larger than cap or a string is
 * longer than 63 characters. */
size_t rs_edit_distance(const char *a, const char *b, size_t cap);

/* Copy s into out (size > 0) for a one-line message, control characters
 * replaced by '?', truncated to fit; returns out. */
const char *rs_printable(const char *s, char *out, size_t size);

#endif
