/*
 * test_engine.c - CUnit suites for the engine layer, one per module: "time"
 * (base.h time helpers), "pool", "rng", "err"; the event queue and the
 * scheduler are in test_sim.c. A standalone executable, test_engine; exits
 * with the number of failed tests.
 *
 * Expected values are computed here with plain integer arithmetic, never
 * with the engine's own helpers. Random inputs come from rs_rng with fixed
 * seeds, so every run tests the same cases.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "cu_main.h"
#include "pool.h"
#include "rng.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- time ------------------------------------------------------------- */

static const uint64_t GBPS = 1000000000ULL;

/* ceil(bytes * 8 * 10^12 / rate), computed as quotient plus a remainder
 * test; bytes * 8e12 must fit in 64 bits (bytes < 2.3e6). */
static uint64_t ser_ceil(uint64_t bytes, uint64_t rate)
{
    uint64_t num = bytes * 8u * RS_PS_PER_S;
    return num / rate + (num % rate != 0);
}

static void test_time_ser_400g_is_exactly_20ps_per_byte(void)
{
    CU_ASSERT_EQUAL(rs_ser_time(4194, 400 * GBPS), 83880);
    CU_ASSERT_EQUAL(rs_ser_time(1, 400 * GBPS), 20);
    CU_ASSERT_EQUAL(rs_ser_time(0, 400 * GBPS), 0);
    for (uint64_t b = 0; b <= 20000; b++)
        if (rs_ser_time(b, 400 * GBPS) != 20 * b)
            CU_FAIL_FATAL("400 Gb/s is not 20 ps per byte");
}

static void test_time_ser_3600g_exact_when_divisible(void)
{
    const uint64_t rate = 3600 * GBPS; /* 20/9 ps per byte */
    CU_ASSERT_EQUAL(rs_ser_time(9, rate), 20);
    CU_ASSERT_EQUAL(rs_ser_time(18, rate), 40);
    CU_ASSERT_EQUAL(rs_ser_time(4194, rate), 9320); /* 4194 = 9 * 466 */
    for (uint64_t b = 0; b <= 90000; b += 9)
        if (rs_ser_time(b, rate) != b / 9 * 20)
            CU_FAIL_FATAL("multiple of 9 bytes at 3.6 Tb/s is not exact");
}

static void test_time_ser_3600g_rounds_up(void)
{
    const uint64_t rate = 3600 * GBPS;
    CU_ASSERT_EQUAL(rs_ser_time(1, rate), 3);    /* 2.22 */
    CU_ASSERT_EQUAL(rs_ser_time(2, rate), 5);    /* 4.44 */
    CU_ASSERT_EQUAL(rs_ser_time(8, rate), 18);   /* 17.78 */
    CU_ASSERT_EQUAL(rs_ser_time(10, rate), 23);  /* 22.22 */
    CU_ASSERT_EQUAL(rs_ser_time(4096, rate), 9103); /* 9102.22 */
    for (uint64_t b = 0; b <= 100000; b++)
        if (rs_ser_time(b, rate) != ser_ceil(b, rate))
            CU_FAIL_FATAL("3.6 Tb/s serialization is not ceil(bits*1e12/rate)");
}

static void test_time_ser_rounds_up_at_odd_rates(void)
{
    static const uint64_t rates[] = { 1, 7, 25 * GBPS, 56 * GBPS, 100 * GBPS,
                                      450 * 8 * GBPS + 1, 1600 * GBPS, 3 };
    for (size_t i = 0; i < ARRAY_LEN(rates); i++)
        for (uint64_t b = 0; b < 3000; b += 7)
            CU_ASSERT_EQUAL(rs_ser_time(b, rates[i]), ser_ceil(b, rates[i]));
}

static void test_time_ser_1tib_at_1g_does_not_overflow(void)
{
    /* 2^40 bytes * 8 bits / 1e9 b/s = 2^43 ns = 2^43 * 1000 ps. */
    CU_ASSERT_EQUAL(rs_ser_time(1ULL << 40, 1 * GBPS), (1ULL << 43) * 1000u);
    /* 1 TiB at 1 Mb/s: 8.8e18 ps, still below RS_TIME_MAX. */
    CU_ASSERT_EQUAL(rs_ser_time(1ULL << 40, 1000000), (1ULL << 43) * 1000000u);
}

static void test_time_from_ns_rounds_to_nearest_ps(void)
{
    rs_time t = 99;
    CU_ASSERT_EQUAL(rs_time_from_ns(0.0, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 0);
    CU_ASSERT_EQUAL(rs_time_from_ns(1.0, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 1000);
    CU_ASSERT_EQUAL(rs_time_from_ns(0.0004, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 0);
    CU_ASSERT_EQUAL(rs_time_from_ns(0.0006, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 1);
    CU_ASSERT_EQUAL(rs_time_from_ns(1.2344, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 1234);
    CU_ASSERT_EQUAL(rs_time_from_ns(1.2346, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 1235);
    /* 0.1 is not exact in binary; the result must still be 100, not 99. */
    CU_ASSERT_EQUAL(rs_time_from_ns(0.1, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 100);
    CU_ASSERT_EQUAL(rs_time_from_ns(2.5e6, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 2500000000ULL);
    CU_ASSERT_EQUAL(rs_time_from_us(1.5, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 1500000);
    CU_ASSERT_EQUAL(rs_time_from_us(0.0000004, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 0);
    CU_ASSERT_EQUAL(rs_time_from_us(0.0000006, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 1);
}

static void test_time_from_ns_rejects_negative_nan_and_huge(void)
{
    static const double bad[] = { -1.0, -1e-9, -INFINITY, INFINITY, 1e300,
                                  1e19, 9.3e15 /* 9.3e18 ps > 2^63 */ };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        rs_time t = 77;
        CU_ASSERT_EQUAL(rs_time_from_ns(bad[i], &t), RS_ERANGE);
        CU_ASSERT_EQUAL(t, 77); /* untouched on error */
        CU_ASSERT_EQUAL(rs_time_from_us(bad[i], &t), RS_ERANGE);
        CU_ASSERT_EQUAL(t, 77);
    }
    rs_time t = 77;
    CU_ASSERT_EQUAL(rs_time_from_ns(NAN, &t), RS_ERANGE);
    CU_ASSERT_EQUAL(rs_time_from_ns(-NAN, &t), RS_ERANGE);
    CU_ASSERT_EQUAL(rs_time_from_us(NAN, &t), RS_ERANGE);
    CU_ASSERT_EQUAL(t, 77);
    /* Just below the limit is accepted: 9e15 ns = 9e18 ps < 2^63. */
    CU_ASSERT_EQUAL(rs_time_from_ns(9e15, &t), RS_OK);
    CU_ASSERT_EQUAL(t, 9000000000000000000ULL);
}

/* The header promises that anything accepted is at most RS_TIME_MAX / 2,
 * so the sum of two user durations cannot wrap. Probe the boundary: every
 * double near 2^63 ps, in ns and in us.
 * KNOWN BUG (reported, not fixed yet): base.c's from_units rejects only
 * ps > (double)(RS_TIME_MAX / 2), and that double is 2^63 exactly, so
 * ps == 2^63 (e.g. rs_time_from_ns(9223372036854776.0)) is accepted;
 * llround(2^63) is out of long long's range (glibc: LLONG_MIN), *out
 * becomes 2^63 and out + out wraps to 0. Fix: reject ps >= 0x1p63. */
static void test_time_from_ns_accepted_values_sum_without_wrapping(void)
{
    const double edge_ps = 0x1p63;
    for (int unit = 0; unit < 2; unit++) {
        double scale = unit ? 1e6 : 1e3;
        double v = nextafter(edge_ps / scale, 0.0);
        for (int k = 0; k < 8; k++, v = nextafter(v, INFINITY)) {
            rs_time t = 0;
            int rc = unit ? rs_time_from_us(v, &t) : rs_time_from_ns(v, &t);
            if (rc == RS_OK) {
                CU_ASSERT(t <= RS_TIME_MAX / 2);
                CU_ASSERT(t + t >= t); /* no wrap */
            } else {
                CU_ASSERT_EQUAL(rc, RS_ERANGE);
            }
        }
    }
}

static void test_time_add_sat_saturates(void)
{
    CU_ASSERT_EQUAL(rs_time_add_sat(1, 2), 3);
    CU_ASSERT_EQUAL(rs_time_add_sat(0, RS_TIME_MAX), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_time_add_sat(RS_TIME_MAX - 1, 1), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_time_add_sat(RS_TIME_MAX - 1, 2), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_time_add_sat(RS_TIME_MAX, 1), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_time_add_sat(RS_TIME_MAX, RS_TIME_MAX), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_time_add_sat(1ULL << 63, 1ULL << 63), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_time_add_sat(RS_TIME_MAX / 2, RS_TIME_MAX / 2), RS_TIME_MAX - 1);
}

/* ---- pool ------------------------------------------------------------- */

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

static void test_pool_live_counts_gets_minus_puts(void)
{
    rs_pool p;
    rs_pool_init(&p, 24, 4);
    CU_ASSERT_EQUAL(rs_pool_live(&p), 0);
    void *o[10];
    for (int i = 0; i < 10; i++) {
        o[i] = rs_pool_get(&p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o[i]);
        CU_ASSERT_EQUAL(rs_pool_live(&p), (uint64_t)i + 1);
    }
    for (int i = 0; i < 10; i += 2)
        rs_pool_put(&p, o[i]);
    CU_ASSERT_EQUAL(rs_pool_live(&p), 5);
    for (int i = 1; i < 10; i += 2)
        rs_pool_put(&p, o[i]);
    CU_ASSERT_EQUAL(rs_pool_live(&p), 0);
    rs_pool_fini(&p);
    CU_ASSERT_EQUAL(rs_pool_live(&p), 0);
}

static void test_pool_trims_only_when_nothing_is_live(void)
{
    rs_pool p;
    rs_pool_init(&p, 24, 4);
    void *o[6];
    for (int i = 0; i < 6; i++)
        CU_ASSERT_PTR_NOT_NULL_FATAL(o[i] = rs_pool_get(&p));
    CU_ASSERT_EQUAL(p.capacity, 8);
    for (int i = 0; i < 5; i++)
        rs_pool_put(&p, o[i]);
    CU_ASSERT_EQUAL(rs_pool_trim(&p), 0); /* one still live: the slabs stay */
    CU_ASSERT_EQUAL(p.capacity, 8);
    rs_pool_put(&p, o[5]);
    CU_ASSERT_EQUAL(rs_pool_trim(&p), 1);
    CU_ASSERT_EQUAL(p.capacity, 0);
    CU_ASSERT_PTR_NULL(p.slabs);
    /* It grows again, with the sizes it had. */
    void *a = rs_pool_get(&p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(p.capacity, 4);
    CU_ASSERT_EQUAL(rs_pool_live(&p), 1);
    rs_pool_put(&p, a);
    rs_pool_fini(&p);
}

static void test_pool_objects_are_distinct_and_size_rounded_to_8_apart(void)
{
    static const size_t sizes[] = { 1, 8, 13, 24, 41, 100 };
    for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
        enum { PER = 16 };
        size_t stride = sizes[k] < sizeof(void *) ? sizeof(void *) : (sizes[k] + 7) / 8 * 8;
        rs_pool p;
        rs_pool_init(&p, sizes[k], PER);
        void *o[PER];
        for (int i = 0; i < PER; i++) {
            o[i] = rs_pool_get(&p);
            CU_ASSERT_PTR_NOT_NULL_FATAL(o[i]);
            CU_ASSERT_EQUAL((uintptr_t)o[i] % 8, 0);
            memset(o[i], 0x5a, sizes[k]); /* the whole size is usable */
        }
        qsort(o, PER, sizeof o[0], cmp_ptr);
        /* One slab: objects are exactly one rounded size apart. */
        for (int i = 1; i < PER; i++)
            CU_ASSERT_EQUAL((uintptr_t)o[i] - (uintptr_t)o[i - 1], stride);
        for (int i = 0; i < PER; i++)
            rs_pool_put(&p, o[i]);
        rs_pool_fini(&p);
    }
}

static void test_pool_reuses_freed_object(void)
{
    rs_pool p;
    rs_pool_init(&p, 32, 8);
    void *a = rs_pool_get(&p), *b = rs_pool_get(&p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_EQUAL(a, b);
    rs_pool_put(&p, a);
    void *c = rs_pool_get(&p);
    CU_ASSERT_PTR_EQUAL(c, a);
    /* Also when the slab is full: a put then get takes no new slab. */
    void *rest[6];
    for (int i = 0; i < 6; i++)
        rest[i] = rs_pool_get(&p);
    rs_pool_put(&p, rest[3]);
    CU_ASSERT_PTR_EQUAL(rs_pool_get(&p), rest[3]);
    CU_ASSERT_EQUAL(rs_pool_live(&p), 8);
    rs_pool_fini(&p);
}

static void test_pool_many_gets_span_several_slabs(void)
{
    enum { N = 1000, PER = 64, SIZE = 40 };
    rs_pool p;
    rs_pool_init(&p, SIZE, PER);
    static void *o[N];
    for (uint32_t i = 0; i < N; i++) {
        o[i] = rs_pool_get(&p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o[i]);
        memset(o[i], (int)(i & 0xff), SIZE);
        *(uint32_t *)o[i] = i; /* who owns it */
    }
    CU_ASSERT_EQUAL(rs_pool_live(&p), N);
    /* No object was handed out twice or overlaps another (sorted distance). */
    for (uint32_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(*(uint32_t *)o[i], i);
    static void *sorted[N];
    memcpy(sorted, o, sizeof o);
    qsort(sorted, N, sizeof sorted[0], cmp_ptr);
    for (uint32_t i = 1; i < N; i++)
        CU_ASSERT((uintptr_t)sorted[i] - (uintptr_t)sorted[i - 1] >= SIZE);
    /* Return half, take them again: still N distinct live objects. */
    for (uint32_t i = 0; i < N; i += 2)
        rs_pool_put(&p, o[i]);
    CU_ASSERT_EQUAL(rs_pool_live(&p), N / 2);
    for (uint32_t i = 0; i < N; i += 2)
        o[i] = rs_pool_get(&p);
    CU_ASSERT_EQUAL(rs_pool_live(&p), N);
    memcpy(sorted, o, sizeof o);
    qsort(sorted, N, sizeof sorted[0], cmp_ptr);
    for (uint32_t i = 1; i < N; i++)
        CU_ASSERT(sorted[i] != sorted[i - 1]);
    rs_pool_fini(&p); /* frees live objects too; valgrind checks */
}

static void test_pool_default_per_slab_and_reinit_after_fini(void)
{
    rs_pool p;
    rs_pool_init(&p, 48, 0); /* default: about 64 KiB slabs */
    void *a = rs_pool_get(&p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    memset(a, 0, 48);
    rs_pool_fini(&p);
    CU_ASSERT_EQUAL(rs_pool_live(&p), 0);
    /* A pool object big enough that the default gives one per slab. */
    rs_pool_init(&p, 100000, 0);
    void *b = rs_pool_get(&p), *c = rs_pool_get(&p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_PTR_NOT_EQUAL(b, c);
    memset(b, 1, 100000);
    memset(c, 2, 100000);
    CU_ASSERT_EQUAL(rs_pool_live(&p), 2);
    rs_pool_fini(&p);
}

/* ---- rng -------------------------------------------------------------- */

static int same_stream(rs_rng a, rs_rng b, int n)
{
    for (int i = 0; i < n; i++)
        if (rs_rng_next(&a) != rs_rng_next(&b))
            return 0;
    return 1;
}

/* How many of the first n draws are equal at the same position. */
static int matching_draws(rs_rng a, rs_rng b, int n)
{
    int same = 0;
    for (int i = 0; i < n; i++)
        same += rs_rng_next(&a) == rs_rng_next(&b);
    return same;
}

static void test_rng_same_inputs_give_same_sequence(void)
{
    rs_rng a, b;
    rs_rng_init(&a, 42, 7, 3);
    rs_rng_init(&b, 42, 7, 3);
    CU_ASSERT(same_stream(a, b, 1000));
    /* Drawing from another stream in between does not disturb this one. */
    rs_rng other;
    rs_rng_init(&other, 42, 8, 3);
    uint64_t x[100], y[100];
    for (int i = 0; i < 100; i++) {
        x[i] = rs_rng_next(&a);
        (void)rs_rng_next(&other);
    }
    for (int i = 0; i < 100; i++)
        y[i] = rs_rng_next(&b);
    CU_ASSERT_EQUAL(memcmp(x, y, sizeof x), 0);
}

static void test_rng_different_seed_entity_or_purpose_differ(void)
{
    rs_rng base, r;
    rs_rng_init(&base, 42, 7, 3);
    static const uint64_t v[][3] = {
        { 43, 7, 3 }, { 42, 8, 3 }, { 42, 7, 4 }, { 42, 3, 7 }, /* swapped */
        { 42, 0, 3 }, { 42, 7, 0 }, { 0, 7, 3 }, { 42, 7 + (1ULL << 32), 3 },
    };
    for (size_t i = 0; i < ARRAY_LEN(v); i++) {
        rs_rng_init(&r, v[i][0], v[i][1], v[i][2]);
        CU_ASSERT(matching_draws(base, r, 1000) < 2);
    }
    /* Neighbouring entities under one seed and purpose, pairwise. */
    enum { E = 64 };
    static uint64_t first[E][4];
    for (uint64_t e = 0; e < E; e++) {
        rs_rng_init(&r, 1, e, 0);
        for (int k = 0; k < 4; k++)
            first[e][k] = rs_rng_next(&r);
    }
    int collisions = 0;
    for (int a = 0; a < E; a++)
        for (int b = a + 1; b < E; b++)
            collisions += memcmp(first[a], first[b], sizeof first[a]) == 0;
    CU_ASSERT_EQUAL(collisions, 0);
}

static void test_rng_next_is_xoshiro256starstar(void)
{
    /* Reference outputs of xoshiro256** from state {1, 2, 3, 4}. */
    rs_rng r = { { 1, 2, 3, 4 } };
    CU_ASSERT_EQUAL(rs_rng_next(&r), 11520ULL);
    CU_ASSERT_EQUAL(rs_rng_next(&r), 0ULL);
    CU_ASSERT_EQUAL(rs_rng_next(&r), 1509978240ULL);
    CU_ASSERT_EQUAL(rs_rng_next(&r), 1215971899390074240ULL);
    /* splitmix64's first output from state 0. */
    CU_ASSERT_EQUAL(rs_mix64(0), 0xe220a8397b1dcdafULL);
}

static void test_rng_below_stays_below_n_and_hits_every_value(void)
{
    rs_rng r;
    rs_rng_init(&r, 9, 1, 2);
    for (uint32_t n = 1; n <= 17; n++) {
        uint32_t hits[17] = { 0 };
        for (int i = 0; i < 2000; i++) {
            uint32_t x = rs_rng_below(&r, n);
            CU_ASSERT_FATAL(x < n);
            hits[x]++;
        }
        /* Each value expects 2000/n >= 117 hits; 30 is far in the tail. */
        for (uint32_t v = 0; v < n; v++)
            CU_ASSERT(hits[v] > 30);
    }
    static const uint32_t big[] = { 1000, 1u << 31, UINT32_MAX, 3000000007u };
    for (size_t k = 0; k < ARRAY_LEN(big); k++)
        for (int i = 0; i < 10000; i++)
            if (rs_rng_below(&r, big[k]) >= big[k])
                CU_FAIL_FATAL("rs_rng_below(n) returned >= n");
}

static void test_rng_unit_is_in_zero_one(void)
{
    rs_rng r;
    rs_rng_init(&r, 5, 5, 5);
    double sum = 0, lo = 1, hi = 0;
    enum { N = 100000 };
    for (int i = 0; i < N; i++) {
        double u = rs_rng_unit(&r);
        if (!(u >= 0.0 && u < 1.0))
            CU_FAIL_FATAL("rs_rng_unit outside [0, 1)");
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    CU_ASSERT(fabs(sum / N - 0.5) < 0.01);
    CU_ASSERT(lo < 0.001);
    CU_ASSERT(hi > 0.999);
    /* The all-zero draw maps to exactly 0. */
    rs_rng zero = { { 0, 0, 0, 0 } }; /* next() returns 0 from this state */
    CU_ASSERT_EQUAL(rs_rng_unit(&zero), 0.0);
}

/* ---- err -------------------------------------------------------------- */

static void test_err_set_fills_code_and_message_and_returns_code(void)
{
    rs_err err;
    rs_err_clear(&err);
    CU_ASSERT_EQUAL(err.code, RS_OK);
    CU_ASSERT_STRING_EQUAL(err.msg, "");
    int rc = rs_err_set(&err, RS_EFORMAT, "%s:%d: expected %s", "plan.json", 12, "a number");
    CU_ASSERT_EQUAL(rc, RS_EFORMAT);
    CU_ASSERT_EQUAL(err.code, RS_EFORMAT);
    CU_ASSERT_STRING_EQUAL(err.msg, "plan.json:12: expected a number");
    /* A later call replaces both. */
    CU_ASSERT_EQUAL(rs_err_set(&err, RS_EIO, "short"), RS_EIO);
    CU_ASSERT_EQUAL(err.code, RS_EIO);
    CU_ASSERT_STRING_EQUAL(err.msg, "short");
    rs_err_clear(&err);
    CU_ASSERT_EQUAL(err.code, RS_OK);
    CU_ASSERT_STRING_EQUAL(err.msg, "");
}

static void test_err_set_truncates_long_message(void)
{
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    rs_err err;
    CU_ASSERT_EQUAL(rs_err_set(&err, RS_EINVAL, "%s", big), RS_EINVAL);
    CU_ASSERT_EQUAL(strlen(err.msg), sizeof err.msg - 1);
    CU_ASSERT_EQUAL(err.code, RS_EINVAL);
}

static void test_err_set_accepts_null(void)
{
    CU_ASSERT_EQUAL(rs_err_set(NULL, RS_ENOMEM, "no %s", "memory"), RS_ENOMEM);
    CU_ASSERT_EQUAL(rs_err_set(NULL, RS_OK, "fine"), RS_OK);
    rs_err_clear(NULL);
}

static void test_err_strerror_never_null_and_names_each_code(void)
{
    static const int codes[] = { RS_OK, RS_EINVAL, RS_ENOMEM, RS_EIO, RS_EFORMAT,
                                 RS_ERANGE, RS_EUNREACH, RS_EINTERNAL, RS_EINCOMPLETE };
    for (size_t i = 0; i < ARRAY_LEN(codes); i++) {
        const char *s = rs_strerror(codes[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT(s[0] != '\0');
        for (size_t j = 0; j < i; j++) /* known codes have distinct names */
            CU_ASSERT(strcmp(s, rs_strerror(codes[j])) != 0);
    }
    static const int unknown[] = { 1, 42, -9, -1000, INT32_MIN, INT32_MAX };
    for (size_t i = 0; i < ARRAY_LEN(unknown); i++) {
        const char *s = rs_strerror(unknown[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT(s[0] != '\0');
    }
}

/* ---- registration ----------------------------------------------------- */

static const rs_cu_test time_tests[] = {
    RS_CU_TEST(test_time_ser_400g_is_exactly_20ps_per_byte),
    RS_CU_TEST(test_time_ser_3600g_exact_when_divisible),
    RS_CU_TEST(test_time_ser_3600g_rounds_up),
    RS_CU_TEST(test_time_ser_rounds_up_at_odd_rates),
    RS_CU_TEST(test_time_ser_1tib_at_1g_does_not_overflow),
    RS_CU_TEST(test_time_from_ns_rounds_to_nearest_ps),
    RS_CU_TEST(test_time_from_ns_rejects_negative_nan_and_huge),
    RS_CU_TEST(test_time_from_ns_accepted_values_sum_without_wrapping),
    RS_CU_TEST(test_time_add_sat_saturates),
};

static const rs_cu_test pool_tests[] = {
    RS_CU_TEST(test_pool_live_counts_gets_minus_puts),
    RS_CU_TEST(test_pool_trims_only_when_nothing_is_live),
    RS_CU_TEST(test_pool_objects_are_distinct_and_size_rounded_to_8_apart),
    RS_CU_TEST(test_pool_reuses_freed_object),
    RS_CU_TEST(test_pool_many_gets_span_several_slabs),
    RS_CU_TEST(test_pool_default_per_slab_and_reinit_after_fini),
};

static const rs_cu_test rng_tests[] = {
    RS_CU_TEST(test_rng_same_inputs_give_same_sequence),
    RS_CU_TEST(test_rng_different_seed_entity_or_purpose_differ),
    RS_CU_TEST(test_rng_next_is_xoshiro256starstar),
    RS_CU_TEST(test_rng_below_stays_below_n_and_hits_every_value),
    RS_CU_TEST(test_rng_unit_is_in_zero_one),
};

static const rs_cu_test err_tests[] = {
    RS_CU_TEST(test_err_set_fills_code_and_message_and_returns_code),
    RS_CU_TEST(test_err_set_truncates_long_message),
    RS_CU_TEST(test_err_set_accepts_null),
    RS_CU_TEST(test_err_strerror_never_null_and_names_each_code),
};

static void register_suites(void)
{
    RS_CU_SUITE("time", time_tests);
    RS_CU_SUITE("pool", pool_tests);
    RS_CU_SUITE("rng", rng_tests);
    RS_CU_SUITE("err", err_tests);
}

int main(void)
{
    return rs_cu_run(register_suites);
}
