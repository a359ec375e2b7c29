/*
 * jobs.c - independent runs in child processes (jobs.h).
 *
 * Each child is a fork of the command after every scenario was loaded and
 * checked: it runs one job with rs_run_execute, writes its exit code and
 * its summary (compact JSON: jansson writes reals with 17 significant
 * digits, so they read back as the same doubles) to an unlinked temporary
 * file the parent opened for it, and exits. The parent keeps up to N
 * children running and reads each result when its child has exited. The
 * jobs' own outputs (their -o directories) are written by the children;
 * what the caller writes from the results it writes after all have come
 * back, in job order. Children run side by side, so each one's memory
 * guard sees the machine as if it were alone: N runs at once need N
 * times the memory.
 */
#include "jobs.h"

#include "cli.h"
#include "runner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct slot {
    pid_t pid;
    size_t job;
    FILE *f;
} slot;

static void run_here(rs_job *j, const char *path)
{
    if (j->progress[0])
        fprintf(stderr, "%s\n", j->progress);
    j->summary = NULL;
    j->code = rs_run_execute(&j->sc, path, j->outdir, j->quiet, 0, &j->summary);
}

/* In the child: run, pass the result back, exit (never returns). */
static void child(rs_job *j, const char *path, FILE *f)
{
    json_t *s = NULL;
    int code = rs_run_execute(&j->sc, path, j->outdir, j->quiet, 0, &s);
    int bad = fprintf(f, "%d\n", code) < 0 || (s ? json_dumpf(s, f, JSON_COMPACT) : fputs("null", f)) < 0;
    bad |= fflush(f) != 0;
    fflush(NULL);
    _exit(bad ? 3 : 0);
}

/* In the parent, once job's child exited with status st. */
static void collect(rs_job *j, size_t i, FILE *f, int st)
{
    j->summary = NULL;
    j->code = RS_EXIT_RUN_FAILED;
    const char *what = j->progress[0] ? j->progress : "a run";
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (WIFSIGNALED(st))
            fprintf(stderr, "railsim: job %zu (%s): ended by signal %d\n", i + 1, what, WTERMSIG(st));
        else
            fprintf(stderr, "railsim: job %zu (%s): could not pass its result back\n", i + 1, what);
        return;
    }
    int code;
    json_error_t e;
    if (fseek(f, 0, SEEK_SET) != 0 || fscanf(f, "%d\n", &code) != 1) {
        fprintf(stderr, "railsim: job %zu (%s): its result file is unreadable\n", i + 1, what);
        return;
    }
    json_t *s = json_loadf(f, JSON_DECODE_ANY, &e);
    if (!s) {
        fprintf(stderr, "railsim: job %zu (%s): its summary does not read back: %s\n", i + 1, what, e.text);
        return;
    }
    j->code = code;
    if (json_is_null(s))
        json_decref(s);
    else
        j->summary = s;
}

int rs_jobs_run(rs_job *jobs, size_t n, unsigned parallel, const char *path)
{
    for (size_t i = 0; i < n; i++) {
        jobs[i].code = RS_EXIT_RUN_FAILED;
        jobs[i].summary = NULL;
    }
    if (parallel <= 1 || n <= 1) {
        for (size_t i = 0; i < n; i++)
            run_here(&jobs[i], path);
        return RS_EXIT_OK;
    }
    if (parallel > n)
        parallel = (unsigned)n;
    slot *sl = calloc(parallel, sizeof *sl);
    if (!sl) {
        fprintf(stderr, "railsim: out of memory starting %u jobs\n", parallel);
        return RS_EXIT_RUN_FAILED;
    }
    size_t next = 0, running = 0;
    int code = RS_EXIT_OK;
    while ((next < n && code == RS_EXIT_OK) || running) {
        while (running < parallel && next < n && code == RS_EXIT_OK) {
            unsigned k = 0;
            while (sl[k].f)
                k++;
            FILE *f = tmpfile();
            if (!f) {
                fprintf(stderr, "railsim: job %zu: cannot make its result file: %s\n", next + 1, strerror(errno));
                code = RS_EXIT_RUN_FAILED;
                break;
            }
            if (jobs[next].progress[0])
                fprintf(stderr, "%s\n", jobs[next].progress);
            fflush(NULL); /* nothing buffered is written twice */
            pid_t pid = fork();
            if (pid == 0)
                child(&jobs[next], path, f);
            if (pid < 0) {
                fprintf(stderr, "railsim: job %zu: cannot start a process: %s\n", next + 1, strerror(errno));
                fclose(f);
                code = RS_EXIT_RUN_FAILED;
                break;
            }
            sl[k] = (slot){ pid, next++, f };
            running++;
        }
        if (!running)
            break;
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "railsim: waiting for jobs: %s\n", strerror(errno));
            code = RS_EXIT_RUN_FAILED;
            break;
        }
        for (unsigned k = 0; k < parallel; k++)
            if (sl[k].f && sl[k].pid == pid) {
                collect(&jobs[sl[k].job], sl[k].job, sl[k].f, st);
                fclose(sl[k].f);
                sl[k].f = NULL;
                running--;
            }
    }
    for (unsigned k = 0; k < parallel; k++)
        if (sl[k].f)
            fclose(sl[k].f);
    free(sl);
    return code;
}

int rs_jobs_parse(const char *cmd, const char *v, unsigned *out)
{
    char *end, msg[96];
    unsigned long n = strtoul(v, &end, 10);
    snprintf(msg, sizeof msg, "%s: -j '%%s': expected a number of processes from 1 to 256", cmd);
    if (!v[0] || *end || v[0] == '-' || n < 1 || n > 256)
        return rs_cli_bad_input(msg, v);
    *out = (unsigned)n;
    return RS_EXIT_OK;
}
