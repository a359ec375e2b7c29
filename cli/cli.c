/*
 * cli.c - what every subcommand of the railsim command shares (cli.h):
 * the one-sentence error of bad input, and scenario keys read and set
 * through the library's scenario API (run.h).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rs_cli_bad_input(const char *fmt, const char *a)
{
    fprintf(stderr, "railsim: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return RS_EXIT_BAD_INPUT;
}

int rs_cli_sides_said(const char *prefix, const char *const names[2], const int rc[2], const rs_err e[2])
{
    if (rc[0] == RS_OK && rc[1] == RS_OK)
        return RS_EXIT_OK;
    if (rc[0] != RS_OK && rc[1] != RS_OK && !strcmp(e[0].msg, e[1].msg))
        fprintf(stderr, "railsim: %s%s\n", prefix, e[0].msg);
    else
        for (int k = 0; k < 2; k++)
            if (rc[k] != RS_OK)
                fprintf(stderr, "railsim: %s%s: %s\n", prefix, names[k], e[k].msg);
    return rc[0] == RS_ENOMEM || rc[1] == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
}

json_t *rs_cli_key(const rs_scenario *sc, const char *key)
{
    char *text;
    rs_err err;
    if (rs_scenario_get(sc, key, &text, &err) != RS_OK)
        return NULL;
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    free(text);
    return v;
}

int rs_cli_key_is(const rs_scenario *sc, const char *key, const char *value)
{
    json_t *v = rs_cli_key(sc, key);
    int is = json_is_string(v) && !strcmp(json_string_value(v), value);
    json_decref(v);
    return is;
}

int rs_cli_set(rs_scenario *sc, const char *set)
{
    char *one = (char *)set;
    rs_err err;
    int rc = rs_scenario_set(sc, &one, 1, &err);
    if (rc == RS_OK)
        return RS_OK;
    fprintf(stderr, "railsim: %s\n", err.msg);
    return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
}

double rs_cli_headline_ps(const json_t *summary, const char **what)
{
    char *text = json_dumps(summary, JSON_COMPACT);
    double t = -1;
    *what = "sim_end";
    if (text)
        rs_summary_headline(text, what, &t);
    free(text);
    return t;
}

const char *rs_cli_workload_name(const rs_scenario *sc, char *buf, size_t n)
{
    const char *keys[2] = { "workload.plan", "workload.trace" };
    snprintf(buf, n, "traffic");
    for (int i = 0; i < 2; i++) {
        json_t *v = rs_cli_key(sc, keys[i]);
        const char *s = json_string_value(v);
        if (s && s[0]) {
            snprintf(buf, n, "%s", s);
            json_decref(v);
            break;
        }
        json_decref(v);
    }
    return buf;
}

json_t *rs_cli_scenario_json(const rs_scenario *sc)
{
    char *text = NULL;
    json_t *j = rs_scenario_dump(sc, &text) == RS_OK ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return j;
}

int rs_cli_load(const char *path, char *const *sets, int nsets, rs_scenario **out)
{
    rs_err err;
    *out = NULL;
    int rc = rs_scenario_create(out, &err);
    if (rc == RS_OK)
        rc = rs_scenario_load(*out, path, sets, nsets, &err);
    if (rc == RS_OK)
        return RS_EXIT_OK;
    fprintf(stderr, "railsim: %s\n", err.msg);
    rs_scenario_destroy(*out);
    *out = NULL;
    return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
}
