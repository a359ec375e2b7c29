/*
 * evq_bench.c - checks and times the event queue.
 *
 * First a correctness check: a random monotone workload with many equal
 * times (zero, tiny and packet-sized increments, keys built like the
 * scheduler's from a random source entity and its counter) runs through
 * rs_evq and through a plain reference binary heap on (t, key); every pop
 * must return the same event, and size and top time must agree before
 * every pop. A mismatch exits 1: speed means nothing if the order differs.
 *
 * Then the classic "hold" benchmark: keep N events pending; repeatedly pop
 * the least and push one at now + an increment shaped like the packet
 * model's (80%: 82 ns, one 4 KiB frame at 400 Gb/s; 20%: 1.08 us, the same
 * plus 1 us of link). Prints ns per hold operation (pop + push) for
 * several N. Results and the structures compared: bench/README.md.
 *
 *   evq_bench [OPS]     (default 20,000,000 hold operations per size)
 *
 * bench/CMakeLists.txt does not build it yet; by hand, from a build dir:
 *   cc -O2 -g -std=c17 -D_POSIX_C_SOURCE=200809L -I<src>/engine \
 *      <src>/bench/evq_bench.c engine/librs_engine.a -lm -o evq_bench
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evq.h"
#include "rng.h"

static void nop(rs_sim *sim, void *obj, uint64_t arg) { (void)sim; (void)obj; (void)arg; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The reference: a textbook binary heap of whole events, obviously right. */
typedef struct ref_heap {
    rs_event *h;
    size_t n, cap;
} ref_heap;

static int ref_less(const rs_event *a, const rs_event *b)
{
    return a->t < b->t || (a->t == b->t && a->key < b->key);
}

static void ref_push(ref_heap *r, const rs_event *ev)
{
    if (rs_array_reserve(&r->h, &r->cap, r->n + 1, sizeof *r->h, 1024) != RS_OK)
        abort();
    size_t i = r->n++;
    while (i > 0 && ref_less(ev, &r->h[(i - 1) / 2])) {
        r->h[i] = r->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    r->h[i] = *ev;
}

static void ref_pop(ref_heap *r, rs_event *out)
{
    *out = r->h[0];
    rs_event last = r->h[--r->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= r->n)
            break;
        if (c + 1 < r->n && ref_less(&r->h[c + 1], &r->h[c]))
            c++;
        if (!ref_less(&r->h[c], &last))
            break;
        r->h[i] = r->h[c];
        i = c;
    }
    r->h[i] = last;
}

/* Increments for the check: ties (0), near-ties, packet-sized steps and
 * rare far jumps that exercise the high bits of t. */
static rs_time check_incr(rs_rng *r)
{
    switch (rs_rng_below(r, 8)) {
    case 0: return 0;
    case 1: return rs_rng_below(r, 4);
    case 2: return 81920;
    case 3: return 1081920;
    case 4: return rs_rng_below(r, 1 << 20);
    case 5: return rs_rng_below(r, 1 << 12) == 0 ? (rs_time)rs_rng_below(r, 1u << 31) << 10 : 5;
    default: return rs_rng_below(r, 64) * 20;
    }
}

static int check(uint64_t steps, uint64_t seed)
{
    rs_evq q;
    ref_heap ref = { 0 };
    rs_rng r;
    uint64_t seq[64] = { 0 };
    rs_time now = 0;
    rs_evq_init(&q);
    rs_rng_init(&r, seed, 7, 0);
    for (uint64_t s = 0; s < steps; s++) {
        /* Phases grow and drain the queue (sizes 0..~20k) so growth, the
         * empty queue and long runs of equal times are all visited. */
        uint64_t phase = (s >> 14) % 4;
        unsigned pushes = phase == 0 ? 2 : phase == 1 ? 1 : phase == 2 ? rs_rng_below(&r, 2) : 0;
        if (rs_rng_below(&r, 100) == 0)
            pushes += 50; /* a burst at one time, like a collective starting */
        for (unsigned k = 0; k < pushes; k++) {
            uint64_t src = rs_rng_below(&r, 64);
            rs_event ev = { now + (k >= 2 && pushes > 2 ? 0 : check_incr(&r)),
                            src << 40 | seq[src]++, nop, (void *)(uintptr_t)s, k };
            if (rs_evq_push(&q, &ev) != RS_OK)
                return 1;
            ref_push(&ref, &ev);
        }
        if (rs_evq_size(&q) != ref.n) {
            fprintf(stderr, "evq check: size %zu, reference %zu at step %llu\n", rs_evq_size(&q),
                    ref.n, (unsigned long long)s);
            return 1;
        }
        if (ref.n == 0 || (pushes && rs_rng_below(&r, 3) == 0))
            continue;
        if (rs_evq_top_time(&q) != ref.h[0].t) {
            fprintf(stderr, "evq check: top time %llu, reference %llu at step %llu\n",
                    (unsigned long long)rs_evq_top_time(&q), (unsigned long long)ref.h[0].t,
                    (unsigned long long)s);
            return 1;
        }
        rs_event a, b;
        rs_evq_pop(&q, &a);
        ref_pop(&ref, &b);
        if (memcmp(&a, &b, sizeof a) != 0) {
            fprintf(stderr, "evq check: popped (%llu, %llx), reference (%llu, %llx) at step %llu\n",
                    (unsigned long long)a.t, (unsigned long long)a.key, (unsigned long long)b.t,
                    (unsigned long long)b.key, (unsigned long long)s);
            return 1;
        }
        now = a.t;
    }
    rs_evq_fini(&q);
    free(ref.h);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t ops = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000ULL;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        if (check(400000, seed) != 0) {
            fprintf(stderr, "evq check FAILED (seed %llu)\n", (unsigned long long)seed);
            return 1;
        }
    }
    printf("evq check: pop order equals the reference heap (4 seeds x 400k steps)\n");

    const size_t sizes[] = { 1000, 10000, 100000, 1000000 };
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        rs_evq q;
        rs_rng r;
        rs_evq_init(&q);
        rs_rng_init(&r, 42, si, 0);
        uint64_t seq[1024] = { 0 };
        for (size_t i = 0; i < sizes[si]; i++) {
            uint64_t src = rs_rng_below(&r, 1024);
            rs_event ev = { rs_rng_below(&r, 1000000), src << 40 | seq[src]++, nop, NULL, 0 };
            if (rs_evq_push(&q, &ev) != RS_OK)
                return 1;
        }
        double t0 = now_s();
        uint64_t check_sum = 0;
        for (uint64_t i = 0; i < ops; i++) {
            rs_event ev;
            rs_evq_pop(&q, &ev);
            check_sum += ev.t ^ ev.key;
            uint64_t src = ev.key >> 40;
            /* 80%: 82 ns (4 KiB at 400 Gb/s); 20%: 1.08 us (a hop). */
            ev.t += rs_rng_below(&r, 10) < 8 ? 81920 : 1081920;
            ev.key = src << 40 | seq[src]++;
            rs_evq_push(&q, &ev);
        }
        double el = now_s() - t0;
        printf("evq hold  pending=%-8zu %7.2f M ops/s  (%5.1f ns/op, check %llu)\n", sizes[si],
               (double)ops / el / 1e6, el / (double)ops * 1e9,
               (unsigned long long)(check_sum % 1000003));
        rs_evq_fini(&q);
    }
    return 0;
}
