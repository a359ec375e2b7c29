/*
 * placement.c - workload.placement (docs/replay.md, "Placement"): which
 * GPUs of the cluster a job takes, in rank order of the job's GPUs.
 *
 * The job's trace numbers its GPUs 0 .. n-1, rail-aligned as a plan lays
 * them out (GPU g is local GPU g mod H of the job's domain g / H); the
 * placement maps them onto the cluster's N GPUs in HB domains of H:
 *
 *   packed      whole domains from the first: GPU g stays g (today's runs)
 *   spread      whole domains, spaced evenly over the cluster's domains
 *               (and so over its leaves and pods): job domain i on domain
 *               floor(i D / d), local GPUs kept
 *   fragmented  the domains in a seeded order; each, with probability
 *               workload.fragmentation, only partly free: the job gets a
 *               seeded run of 1 .. H-1 of its GPUs from a seeded offset
 *               (wrapping), otherwise all of it; the chosen GPUs in
 *               ascending order, as a scheduler lists them
 *   random      n GPUs drawn uniformly from the N, ascending
 *   a list      "0-63,128-191": GPU ids and ranges, in rank order
 *
 * Only packed keeps every GPU's rail; the others put some TP groups
 * across domains and some ring neighbours on other rails, which is what
 * a shared cluster's scheduler does to a job.
 */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "rng.h"
#include "trace_int.h"
#include "versioned.h"

/* Decimal digits at s as a number below 2^32, *end past them; -1 when none
 * or too large. */
static int64_t number(const char *s, const char **end)
{
    int64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (*p - '0')) > UINT32_MAX)
            v = UINT32_MAX + 1LL;
    *end = p;
    return p == s || v > UINT32_MAX ? -1 : v;
}

/* An explicit list: its GPUs into out (NULL: count only), *n the count. */
static int parse_list(const char *spec, uint32_t N, uint32_t *out, uint32_t *n, rs_err *err)
{
    uint32_t k = 0;
    const char *p = spec, *end;
    for (;;) {
        int64_t a = number(p, &end), b = a;
        if (a >= 0 && *end == '-')
            b = number(end + 1, &end);
        if (a < 0 || b < 0 || (*end != ',' && *end != '\0'))
            return rs_err_set(err, RS_EINVAL, "workload.placement: expected packed, spread, fragmented, random or "
                              "a list of GPU ids and ranges such as 0-63,128-191, got \"%.100s\"", spec);
        if (b < a || (uint64_t)b >= N)
            return rs_err_set(err, RS_EINVAL, "workload.placement: GPUs %lld-%lld, expected an ascending range "
                              "of GPUs below %u (topology.gpus)", (long long)a, (long long)b, N);
        if ((uint64_t)k + (uint64_t)(b - a) + 1 > N)
            return rs_err_set(err, RS_EINVAL, "workload.placement: lists more GPUs than the cluster's %u "
                              "(topology.gpus)", N);
        for (int64_t g = a; g <= b; g++, k++)
            if (out)
                out[k] = (uint32_t)g;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    *n = k;
    return RS_OK;
}

int rs_placement_is_mode(const char *s)
{
    return !strcmp(s, "packed") || !strcmp(s, "spread") || !strcmp(s, "fragmented") || !strcmp(s, "random");
}

int rs_placement_size(const char *spec, uint32_t gpus, uint32_t N, uint32_t *n, rs_err *err)
{
    if (!spec[0] || rs_placement_is_mode(spec)) {
        *n = gpus ? gpus : N;
    } else {
        int rc = parse_list(spec, N, NULL, n, err);
        if (rc != RS_OK)
            return rc;
        if (gpus && gpus != *n)
            return rs_err_set(err, RS_EINVAL, "workload.placement: lists %u GPUs, but workload.gpus is %u; "
                              "expected as many", *n, gpus);
    }
    if (*n > N)
        return rs_err_set(err, RS_EINVAL, "workload.gpus: %u GPUs do not fit a cluster of %u (topology.gpus)",
                          *n, N);
    return RS_OK;
}

/* Whether GPU g is free: taken NULL (one job on the cluster) or not set. */
static int is_free(const uint8_t *taken, uint32_t g)
{
    return !taken || !taken[g];
}

/* The domains of H GPUs whose every GPU is free, in order, into dom; the
 * count. */
static uint32_t free_domains(uint32_t D, uint32_t H, const uint8_t *taken, uint32_t *dom)
{
    uint32_t k = 0;
    for (uint32_t d = 0; d < D; d++) {
        uint32_t j = 0;
        while (j < H && is_free(taken, d * H + j))
            j++;
        if (j == H)
            dom[k++] = d;
    }
    return k;
}

/* packed and spread: whole free domains, first-fit (packed) or spaced
 * evenly over the free ones (spread), local GPUs kept; with nothing taken
 * packed is GPU g on g. A last partial domain takes the first free GPUs of
 * the next whole free domain (packed) or its spread slot. */
static int whole_domains(int spread, uint32_t n, uint32_t N, uint32_t H, const uint8_t *taken, uint32_t *out,
                         rs_err *err)
{
    uint32_t D = N / H, d = (n + H - 1) / H;
    uint32_t *dom = malloc((size_t)D * sizeof *dom);
    if (!dom)
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the workload");
    uint32_t F = free_domains(D, H, taken, dom);
    if (F < d) {
        free(dom);
        return rs_err_set(err, RS_EINVAL, "workload.placement: %s needs %u whole free HB domains of %u GPUs, the "
                          "cluster has %u; expected fragmented or random placement, or fewer GPUs",
                          spread ? "spread" : "packed", d, H, F);
    }
    for (uint32_t g = 0; g < n; g++) {
        uint64_t i = g / H;
        out[g] = dom[spread ? i * F / d : i] * H + g % H;
    }
    free(dom);
    return RS_OK;
}

static int fragmented(uint32_t n, uint32_t N, uint32_t H, double share, uint64_t seed, const uint8_t *taken,
                      uint32_t *out, rs_err *err)
{
    uint32_t D = N / H;
    uint32_t *order = malloc((size_t)D * sizeof *order);
    if (!order)
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the workload");
    rs_rng g;
    rs_rng_init(&g, seed, 0x706c616365ull, 1); /* "place" */
    for (uint32_t i = 0; i < D; i++)
        order[i] = i;
    for (uint32_t i = D; i > 1; i--) { /* Fisher-Yates */
        uint32_t j = rs_rng_below(&g, i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    /* Each domain, partly free with probability `share`: a run of its
     * free GPUs from a seeded offset (wrapping); other jobs' GPUs are
     * stepped over. */
    uint32_t k = 0;
    for (uint32_t i = 0; i < D && k < n; i++) {
        uint32_t take = H, off = 0;
        if (H > 1 && rs_rng_unit(&g) < share) {
            take = 1 + rs_rng_below(&g, H - 1);
            off = rs_rng_below(&g, H);
        }
        for (uint32_t j = 0, got = 0; j < H && got < take && k < n; j++) {
            uint32_t gpu = order[i] * H + (off + j) % H;
            if (is_free(taken, gpu)) {
                out[k++] = gpu;
                got++;
            }
        }
    }
    free(order);
    if (k < n)
        return rs_err_set(err, RS_EINVAL, "workload.placement: fragmented, %u GPUs found free in the cluster's %u HB "
                          "domains, but the job needs %u; expected a lower workload.fragmentation or fewer "
                          "workload.gpus", k, D, n);
    qsort(out, n, sizeof *out, rs_cmp_u32);
    return RS_OK;
}

int rs_placement_gpus(const char *spec, uint32_t n, uint32_t N, uint32_t H, double share, uint64_t seed,
                      uint32_t *out, rs_err *err)
{
    return rs_placement_gpus_free(spec, n, N, H, share, seed, NULL, out, err);
}

int rs_placement_gpus_free(const char *spec, uint32_t n, uint32_t N, uint32_t H, double share, uint64_t seed,
                           const uint8_t *taken, uint32_t *out, rs_err *err)
{
    if (H == 0 || N % H)
        return rs_err_set(err, RS_EINVAL, "workload.placement: a cluster of %u GPUs in HB domains of %u has no "
                          "domains to place in", N, H);
    uint32_t nfree = N;
    for (uint32_t g = 0; taken && g < N; g++)
        nfree -= taken[g] != 0;
    if (n > N)
        return rs_err_set(err, RS_EINVAL, "workload.gpus: %u GPUs do not fit a cluster of %u (topology.gpus)", n, N);
    if (n > nfree)
        return rs_err_set(err, RS_EINVAL, "workload.gpus: %u GPUs do not fit the %u free of the cluster's %u "
                          "(topology.gpus)", n, nfree, N);
    if (!spec[0] || !strcmp(spec, "packed") || !strcmp(spec, "spread"))
        return whole_domains(!strcmp(spec, "spread"), n, N, H, taken, out, err);
    if (!strcmp(spec, "fragmented"))
        return fragmented(n, N, H, share, seed, taken, out, err);
    if (!strcmp(spec, "random")) {
        uint32_t *all = malloc((size_t)N * sizeof *all);
        if (!all)
            return rs_err_set(err, RS_ENOMEM, "out of memory placing the workload");
        rs_rng g;
        rs_rng_init(&g, seed, 0x706c616365ull, 2);
        uint32_t m = 0;
        for (uint32_t i = 0; i < N; i++)
            if (is_free(taken, i))
                all[m++] = i;
        for (uint32_t i = 0; i < n; i++) { /* the first n of a Fisher-Yates shuffle of the free GPUs */
            uint32_t j = i + rs_rng_below(&g, m - i), t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        memcpy(out, all, (size_t)n * sizeof *out);
        free(all);
        qsort(out, n, sizeof *out, rs_cmp_u32);
        return RS_OK;
    }
    uint32_t k;
    int rc = parse_list(spec, N, out, &k, err);
    if (rc != RS_OK)
        return rc;
    if (k != n)
        return rs_err_set(err, RS_EINVAL, "workload.placement: lists %u GPUs, expected %u", k, n);
    for (uint32_t i = 0; i < n; i++)
        if (!is_free(taken, out[i]))
            return rs_err_set(err, RS_EINVAL, "workload.placement: GPU %u is an earlier job's; expected free GPUs",
                              out[i]);
    uint32_t *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the workload");
    memcpy(s, out, (size_t)n * sizeof *s);
    qsort(s, n, sizeof *s, rs_cmp_u32);
    for (uint32_t i = 1; i < n; i++)
        if (s[i] == s[i - 1]) {
            rc = rs_err_set(err, RS_EINVAL, "workload.placement: GPU %u listed twice; expected each GPU once", s[i]);
            break;
        }
    free(s);
    return rc;
}

int rs_workload_place(const rs_workload_config *c, uint32_t N, uint32_t H, uint64_t seed, rs_trace *t, rs_err *err)
{
    rs_workload_config own;
    rs_workload_config_default(&own);
    if (rs_versioned_take(&own, sizeof own, c, RS_SIZE_V1(rs_workload_config, sync)) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "workload: a configuration of no known size");
    uint32_t n;
    int rc = rs_placement_size(own.placement, own.gpus, N, &n, err);
    if (rc != RS_OK)
        return rc;
    if ((!own.placement[0] || !strcmp(own.placement, "packed")))
        return RS_OK; /* GPU g stays g */
    if (t->ngpus > n)
        return rs_err_set(err, RS_EINVAL, "workload.gpus: the workload uses %u GPUs, but the job has %u", t->ngpus, n);
    uint32_t *to = malloc((size_t)n * sizeof *to);
    if (!to)
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the workload");
    if ((rc = rs_placement_gpus(own.placement, n, N, H, own.fragmentation, seed, to, err)) == RS_OK)
        rs_trace_place(t, to, n);
    free(to);
    return rc;
}

void rs_trace_place(rs_trace *t, const uint32_t *to, uint32_t n)
{
    /* The trace keeps its GPU count (the job's); its ranks move. */
    for (uint32_t r = 0; r < t->nranks; r++)
        if (t->rank_gpu[r] < n)
            t->rank_gpu[r] = to[t->rank_gpu[r]];
}
