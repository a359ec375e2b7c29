/*
 * cmd_cost.c - `railsim cost`: the bill of materials, price and power of
 * the rail-only network and the rail-optimized fat tree for one set of
 * parameters (include/railsim/cost.h; the model is docs/cost.md).
 *
 * This file only parses options and the parts table (a flat JSON object of
 * rs_catalog keys -> numbers) and prints; every count comes from
 * rs_cost_compute. Bad input exits 2 with one sentence naming the option or
 * the parts file and key.
 */
#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cost.h"
#include "fmt.h"
#include "run.h"

/* Print "railsim: " + formatted sentence; returns RS_EXIT_BAD_INPUT. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "railsim: %s\n", msg);
    return RS_EXIT_BAD_INPUT;
}

/* A whole decimal number from 1 to max, or -1. */
static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < 1 || v > max)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* A finite number, or -1. */
static int parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static json_t *bom_json(const rs_bom *b, uint32_t radix)
{
    json_t *o = json_object(), *tiers = json_array();
    if (!o || !tiers) {
        json_decref(o);
        json_decref(tiers);
        return NULL;
    }
    for (uint32_t t = 0; t < b->tiers && t < RS_COST_MAX_TIERS; t++)
        json_array_append_new(tiers, json_integer((json_int_t)b->switches_per_tier[t]));
    json_object_set_new(o, "tiers", json_integer(b->tiers));
    json_object_set_new(o, "planes", json_integer(b->planes));
    json_object_set_new(o, "rails_per_switch", json_integer(b->rails_per_switch));
    json_object_set_new(o, "radix", json_integer(radix));
    json_object_set_new(o, "switches", json_integer((json_int_t)b->switches));
    json_object_set_new(o, "switches_logical", json_integer((json_int_t)b->switches_logical));
    json_object_set_new(o, "switches_per_tier", tiers);
    json_object_set_new(o, "switch_ports", json_integer((json_int_t)b->switch_ports));
    json_object_set_new(o, "switch_ports_used", json_integer((json_int_t)b->switch_ports_used));
    json_object_set_new(o, "links", json_integer((json_int_t)b->links));
    json_object_set_new(o, "nic_links", json_integer((json_int_t)b->nic_links));
    json_object_set_new(o, "optical_links", json_integer((json_int_t)b->optical_links));
    json_object_set_new(o, "copper_links", json_integer((json_int_t)b->copper_links));
    json_object_set_new(o, "transceivers", json_integer((json_int_t)b->transceivers));
    json_object_set_new(o, "switch_usd", json_real(b->switch_usd));
    json_object_set_new(o, "transceiver_usd", json_real(b->transceiver_usd));
    json_object_set_new(o, "cable_usd", json_real(b->cable_usd));
    json_object_set_new(o, "cost_usd", json_real(b->cost_usd));
    json_object_set_new(o, "switch_w", json_real(b->switch_w));
    json_object_set_new(o, "transceiver_w", json_real(b->transceiver_w));
    json_object_set_new(o, "cable_w", json_real(b->cable_w));
    json_object_set_new(o, "power_w", json_real(b->power_w));
    return o;
}

static int print_json(const rs_cost_input *in, uint32_t gpus, uint32_t share, const rs_catalog *parts,
                      const rs_bom *fat, const rs_bom *rail, const rs_bom *dfly)
{
    json_t *root = json_object(), *input = json_object(), *pj = json_object(),
           *saving = json_object();
    json_t *rj = bom_json(rail, in->radix), *fj = bom_json(fat, in->radix);
    int rc = RS_EXIT_RUN_FAILED;
    if (!root || !input || !pj || !saving || !rj || !fj) {
        json_decref(input);
        json_decref(pj);
        json_decref(saving);
        json_decref(rj);
        json_decref(fj);
        goto out;
    }
    json_object_set_new(input, "gpus", json_integer(gpus));
    json_object_set_new(input, "hb_size", json_integer((json_int_t)in->hb_size * share));
    json_object_set_new(input, "gpus_per_nic", json_integer(share));
    json_object_set_new(input, "radix", json_integer(in->radix));
    json_object_set_new(input, "nic_gbps", json_real(in->nic_gbps));
    json_object_set_new(input, "oversubscription", json_real(in->oversubscription));
    json_object_set_new(input, "nic_copper", json_boolean(in->nic_copper));
    json_object_set_new(input, "pack_rails", json_boolean(in->pack_rails));
    const char *const *keys = rs_catalog_keys();
    for (size_t i = 0; keys[i]; i++) {
        double v = 0;
        rs_catalog_get(parts, keys[i], &v);
        json_object_set_new(pj, keys[i], json_real(v));
    }
    json_object_set_new(saving, "cost", json_real(rs_cost_saving_pct(fat, rail)));
    json_object_set_new(saving, "power", json_real(rs_cost_power_saving_pct(fat, rail)));
    json_object_set_new(root, "format", json_string("railsim-cost"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "input", input);
    json_object_set_new(root, "parts", pj);
    json_object_set_new(root, "rail_only", rj);
    json_object_set_new(root, "fat_tree", fj);
    json_object_set_new(root, "saving_pct", saving);
    if (dfly) {
        /* --dragonfly: its bill and what it saves against the fat tree. */
        json_t *dj = bom_json(dfly, in->radix), *ds = json_object();
        json_object_set_new(ds, "cost", json_real(rs_cost_saving_pct(fat, dfly)));
        json_object_set_new(ds, "power", json_real(rs_cost_power_saving_pct(fat, dfly)));
        json_object_set_new(dj, "saving_vs_fat_tree_pct", ds);
        json_object_set_new(root, "dragonfly", dj);
    }
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        free(text);
        rc = 0;
    }
out:
    json_decref(root);
    return rc;
}

/* 1234567 -> "1,234,567" */
static const char *grouped(uint64_t v, char *buf, size_t size)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
    return buf;
}

static void row_u(const char *name, uint64_t a, uint64_t b)
{
    char x[32], y[32];
    printf("  %-22s %16s %16s\n", name, grouped(a, x, sizeof x), grouped(b, y, sizeof y));
}

/* Dollars and watts as compare prints them (fmt.h, docs/cli.md "Units"). */
static void row_money(const char *name, double a, double b)
{
    char x[RS_FMT_LEN], y[RS_FMT_LEN];
    printf("  %-22s %16s %16s\n", name, rs_fmt_usd(x, sizeof x, a), rs_fmt_usd(y, sizeof y, b));
}

static void row_power(const char *name, double a, double b)
{
    char x[RS_FMT_LEN], y[RS_FMT_LEN];
    double ref = a > b ? a : b;
    printf("  %-22s %16s %16s\n", name, rs_fmt_power_like(x, sizeof x, a, ref), rs_fmt_power_like(y, sizeof y, b, ref));
}

static void print_text(const rs_cost_input *in, uint32_t gpus, uint32_t share, const rs_bom *fat,
                       const rs_bom *rail)
{
    char g[32], sh[48] = "";
    if (share > 1)
        snprintf(sh, sizeof sh, " (%u per NIC)", share);
    printf("railsim cost: %s GPUs%s, HB domain %u, radix %u, %g Gb/s NICs, oversubscription %g:1%s\n",
           grouped(gpus, g, sizeof g), sh, in->hb_size * share, in->radix, in->nic_gbps,
           in->oversubscription, in->nic_copper ? ", copper NIC cables" : "");
    printf("  %-22s %16s %16s\n", "", "rail-only", "fat tree");
    row_u("tiers", rail->tiers, fat->tiers);
    row_u("planes", rail->planes, fat->planes);
    row_u("switches", rail->switches, fat->switches);
    /* Physical switches above, as run and compare count them; small rails
     * share one, while the simulator builds one per rail. */
    if (rail->switches != rail->switches_logical)
        row_u("  simulated, per rail", rail->switches_logical, fat->switches_logical);
    for (uint32_t t = 0; t < RS_COST_MAX_TIERS; t++) {
        if (t >= rail->tiers && t >= fat->tiers)
            break;
        char name[32], x[32] = "-", y[32] = "-";
        if (t == 0)
            snprintf(name, sizeof name, "  leaf (tier 1)");
        else
            snprintf(name, sizeof name, "  tier %u", t + 1);
        if (t < rail->tiers)
            grouped(rail->switches_per_tier[t], x, sizeof x);
        if (t < fat->tiers)
            grouped(fat->switches_per_tier[t], y, sizeof y);
        printf("  %-22s %16s %16s\n", name, x, y);
    }
    row_u("switch ports", rail->switch_ports, fat->switch_ports);
    row_u("switch ports cabled", rail->switch_ports_used, fat->switch_ports_used);
    row_u("links", rail->links, fat->links);
    row_u("transceivers", rail->transceivers, fat->transceivers);
    row_money("switches cost", rail->switch_usd, fat->switch_usd);
    row_money("transceivers cost", rail->transceiver_usd, fat->transceiver_usd);
    if (rail->cable_usd > 0 || fat->cable_usd > 0)
        row_money("cables cost", rail->cable_usd, fat->cable_usd);
    row_money("network cost", rail->cost_usd, fat->cost_usd);
    row_power("network power", rail->power_w, fat->power_w);
    printf("  rail-only saves %.2f %% of the cost and %.2f %% of the power\n",
           rs_cost_saving_pct(fat, rail), rs_cost_power_saving_pct(fat, rail));
}

/* --dragonfly: its bill in a few lines, against the fat tree (its shape
 * is rs_cost_dragonfly's: docs/model.md, "Dragonfly"). */
static void print_dragonfly(const rs_bom *fat, const rs_bom *d)
{
    char x[32], y[32], z[32], u[RS_FMT_LEN], w[RS_FMT_LEN];
    printf("  dragonfly: %s switches, %s links, %s transceivers, %s, %s; it saves %.2f %% of the fat tree's "
           "cost and %.2f %% of its power\n",
           grouped(d->switches, x, sizeof x), grouped(d->links, y, sizeof y), grouped(d->transceivers, z, sizeof z),
           rs_fmt_usd(u, sizeof u, d->cost_usd), rs_fmt_power_like(w, sizeof w, d->power_w, d->power_w),
           rs_cost_saving_pct(fat, d), rs_cost_power_saving_pct(fat, d));
}

int rs_cmd_cost(int argc, char **argv)
{
    rs_cost_input in;
    rs_cost_input_default(&in);
    rs_catalog parts;
    rs_catalog_default(&parts);
    const char *parts_path = NULL;
    int json = 0, dfly = 0;
    uint32_t df_hosts = 0, df_group = 0, share = 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int takes = !strcmp(a, "--gpus") || !strcmp(a, "--hb") || !strcmp(a, "--radix") ||
                    !strcmp(a, "--nic-gbps") || !strcmp(a, "--oversubscription") ||
                    !strcmp(a, "--parts") || !strcmp(a, "--df-hosts") || !strcmp(a, "--df-group") ||
                    !strcmp(a, "--gpus-per-nic");
        if (takes && i + 1 >= argc)
            return bad("cost: %s: expected a value after it", a);
        const char *v = takes ? argv[++i] : NULL;
        if (!strcmp(a, "--gpus")) {
            if (parse_u32(v, 1048576, &in.gpus))
                return bad("cost: --gpus: expected a whole number of GPUs from 1 to 1048576, got '%s'", v);
        } else if (!strcmp(a, "--hb")) {
            if (parse_u32(v, 65535, &in.hb_size))
                return bad("cost: --hb: expected a whole number of GPUs per HB domain from 1 to 65535, got '%s'", v);
        } else if (!strcmp(a, "--radix")) {
            if (parse_u32(v, 65536, &in.radix))
                return bad("cost: --radix: expected a whole number of switch ports from 2 to 65536, got '%s'", v);
        } else if (!strcmp(a, "--nic-gbps")) {
            if (parse_double(v, &in.nic_gbps) || !(in.nic_gbps > 0 && in.nic_gbps <= 1e6))
                return bad("cost: --nic-gbps: expected a rate in Gb/s above 0 and at most 1e6, got '%s'", v);
        } else if (!strcmp(a, "--oversubscription")) {
            if (parse_double(v, &in.oversubscription) ||
                !(in.oversubscription >= 1 && in.oversubscription <= 64))
                return bad("cost: --oversubscription: expected a leaf down:up ratio from 1 to 64, got '%s'", v);
        } else if (!strcmp(a, "--gpus-per-nic")) {
            if (parse_u32(v, 65535, &share) || share == 0)
                return bad("cost: --gpus-per-nic: expected a whole number of GPUs per NIC from 1 to 65535, got '%s'", v);
        } else if (!strcmp(a, "--parts")) {
            parts_path = v;
        } else if (!strcmp(a, "--df-hosts") || !strcmp(a, "--df-group")) {
            if (parse_u32(v, 65535, !strcmp(a, "--df-hosts") ? &df_hosts : &df_group))
                return bad("cost: %s: expected a whole number from 1 to 65535, got '%s'", a, v);
            dfly = 1;
        } else if (!strcmp(a, "--dragonfly")) {
            dfly = 1;
        } else if (!strcmp(a, "--nic-copper")) {
            in.nic_copper = 1;
        } else if (!strcmp(a, "--no-rail-packing")) {
            in.pack_rails = 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            return bad("cost: unknown option '%s'; expected --gpus N, --hb K, --radix R, --nic-gbps G, "
                       "--oversubscription O, --parts PARTS.json, --nic-copper, --no-rail-packing, --dragonfly, "
                       "--df-hosts P, --df-group A, --gpus-per-nic S or --json", a);
        } else {
            return bad("cost: unexpected argument '%s'; expected options only (--gpus N --hb K --radix R)", a);
        }
    }
    if (parts_path) {
        rs_err perr;
        rs_err_clear(&perr);
        if (rs_catalog_load(parts_path, &parts, &perr) != RS_OK)
            return bad("%s", perr.msg);
    }
    /* GPUs sharing NICs (topology.gpus_per_nic): the fabric is that of
     * their NICs, a cluster of gpus / S endpoints in domains of hb / S. */
    if (share > 1 && (in.hb_size % share || in.gpus % in.hb_size))
        return bad("cost: --gpus-per-nic: expected a divisor of --hb (%u), and --gpus (%u) a multiple of --hb; got %u",
                   in.hb_size, in.gpus, share);
    uint32_t gpus = in.gpus;
    in.gpus /= share;
    in.hb_size /= share;
    rs_bom fat, rail;
    rs_err err;
    rs_err_clear(&err);
    if (rs_cost_compute(&in, &parts, &fat, &rail, &err) != RS_OK) {
        /* Name the option the user typed next to the model's key. */
        static const struct { const char *key, *opt; } opt_of[] = {
            { "topology.gpus", "--gpus" }, { "topology.hb_size", "--hb" },
            { "topology.radix", "--radix" }, { "topology.nic_gbps", "--nic-gbps" },
            { "topology.oversubscription", "--oversubscription" },
        };
        for (size_t k = 0; k < sizeof opt_of / sizeof opt_of[0]; k++) {
            size_t n = strlen(opt_of[k].key);
            if (!strncmp(err.msg, opt_of[k].key, n) && err.msg[n] == ':')
                return bad("cost: %s (%s)%s", opt_of[k].opt, opt_of[k].key, err.msg + n);
        }
        return bad("cost: %s", err.msg);
    }
    rs_bom df;
    if (dfly && rs_cost_dragonfly(&in, df_hosts, df_group, &parts, &df, &err) != RS_OK)
        return bad("cost: --dragonfly: %s", err.msg);
    if (json)
        return print_json(&in, gpus, share, &parts, &fat, &rail, dfly ? &df : NULL);
    print_text(&in, gpus, share, &fat, &rail);
    if (dfly)
        print_dragonfly(&fat, &df);
    return 0;
}
