/*
 * rng.h - deterministic random streams: xoshiro256** (Blackman & Vigna),
 * seeded through splitmix64 from (run seed, entity id, purpose), so every
 * entity draws from its own stream and adding an entity never shifts the
 * numbers another one draws. Never rand(), never the wall clock.
 */
#ifndef RS_RNG_H
#define RS_RNG_H

#include "base.h"

RS_BEGIN_DECLS

typedef struct rs_rng {
    uint64_t s[4];
} rs_rng;

/* Stream for (seed, entity, purpose); purposes are small constants chosen
 * by each model (e.g. "ECMP spraying" vs "ECN marking"). */
RS_API void rs_rng_init(rs_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose);

static inline uint64_t rs_rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rs_rng_next(rs_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rs_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rs_rng_rotl(s[3], 45);
    return result;
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the bias is
 * below 2^-32 for n < 2^32, irrelevant here and branch-free). */
static inline uint32_t rs_rng_below(rs_rng *r, uint32_t n)
{
    return (uint32_t)(((rs_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double rs_rng_unit(rs_rng *r)
{
    return (double)(rs_rng_next(r) >> 11) * 0x1.0p-53;
}

/* A well-mixed 64-bit hash of x (splitmix64 finalizer); handy for flow
 * hashes and stream derivation. */
static inline uint64_t rs_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

RS_END_DECLS

#endif
