/*
 * rng.c - stream derivation. The three inputs are mixed in sequence so that
 * (seed, entity, purpose) triples that differ anywhere give unrelated
 * states; splitmix64 then fills the four state words (never all zero).
 */
#include "rng.h"

void rs_rng_init(rs_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose)
{
    uint64_t x = rs_mix64(rs_mix64(rs_mix64(seed) ^ entity) ^ (purpose * 0xd1b54a32d192ed03ULL));
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        r->s[i] = rs_mix64(x);
    }
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
        r->s[0] = 1;
}
