/*
 * parts.h - the parts-table reader: a flat JSON object of rs_catalog keys
 * (include/railsim/cost.h) to numbers, applied over the defaults. docs/cost.md
 * describes the file.
 */
#ifndef RS_PARTS_H
#define RS_PARTS_H

#include "base.h"
#include "cost.h"

/* Apply the parts table at path to *p (keys it does not name keep their
 * values). RS_OK, or RS_EIO / RS_EINVAL with err one sentence naming the
 * file and the key and what was expected; *p may then be partly applied. */
int rs_catalog_load(const char *path, rs_catalog *p, rs_err *err);

#endif
