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

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef RS_HAVE_MPI
#include <mpi.h>
/* Sanitizer builds: the leak check runs before MPI_Finalize (rs_jobs_finish). */
#if defined(__SANITIZE_ADDRESS__)
#define RS_LSAN_BEFORE_FINALIZE 1
#include <sanitizer/lsan_interface.h>
#endif
#endif

/* MPI (jobs.h): on when started by mpirun; rank, size of MPI_COMM_WORLD. */
static int mpi_on, mpi_rank, mpi_size = 1;
static int saved_out = -1, saved_err = -1, devnull = -1;

/* Ranks other than 0 keep stdout and stderr shut except while running
 * their own jobs, so the command speaks once. */
static void speak(int on)
{
    if (mpi_rank == 0 || devnull < 0)
        return;
    fflush(NULL);
    dup2(on ? saved_out : devnull, STDOUT_FILENO);
    dup2(on ? saved_err : devnull, STDERR_FILENO);
}

int rs_jobs_init(int *argc, char ***argv)
{
#ifdef RS_HAVE_MPI
    /* Only under a launcher: a plain `railsim` never touches MPI. */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_SIZE"))
        return RS_EXIT_OK;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "railsim: MPI_Init failed; expected to be started by mpirun\n");
        return RS_EXIT_RUN_FAILED;
    }
    mpi_on = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
    if (mpi_rank != 0) {
        saved_out = dup(STDOUT_FILENO);
        saved_err = dup(STDERR_FILENO);
        devnull = open("/dev/null", O_WRONLY);
        if (saved_out < 0 || saved_err < 0 || devnull < 0)
            devnull = -1; /* then it speaks */
        speak(0);
    }
#else
    (void)argc;
    (void)argv;
#endif
    return RS_EXIT_OK;
}

void rs_jobs_finish(void)
{
#ifdef RS_HAVE_MPI
    if (mpi_on) {
        speak(1);
#ifdef RS_LSAN_BEFORE_FINALIZE
        /* railsim has freed what it allocated; OpenMPI's components are
         * still loaded, so its own leaks have names that
         * tests/lsan-openmpi.supp suppresses (after MPI_Finalize they come
         * from unloaded modules, which no suppression can name). */
        __lsan_do_leak_check();
#endif
        MPI_Finalize();
        mpi_on = 0;
    }
#endif
}

int rs_jobs_root(void) { return mpi_rank == 0; }

#ifdef RS_HAVE_MPI
/* -- one run over the ranks: the network's collectives (net.h rs_net_comm) */

static int comm_allreduce(void *ctx, uint64_t *v, size_t n, int max)
{
    (void)ctx;
    return MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, max ? MPI_MAX : MPI_MIN, MPI_COMM_WORLD) ==
                   MPI_SUCCESS ? RS_OK : RS_EIO;
}

/* One round: every pair swaps a header (its byte count, then the v to
 * reduce), then the bytes go point to point where there are any. Counts
 * as MPI's ints: a window's frames to one rank stay far below 2 GiB (a
 * frame is 72 bytes). */
static int comm_exchange(void *ctx, void *const *send, const size_t *send_len, uint64_t *v, size_t nv, void **recv,
                         size_t *recv_len)
{
    (void)ctx;
    enum { MAXV = 8 };
    size_t n = (size_t)mpi_size, w = 1 + nv;
    if (nv > MAXV)
        return RS_EINVAL;
    uint64_t *hs = calloc(2 * n * w, sizeof *hs), *hr = hs ? hs + n * w : NULL;
    MPI_Request *req = calloc(2 * n, sizeof *req);
    if (!hs || !req) {
        free(hs);
        free(req);
        return RS_ENOMEM;
    }
    for (size_t r = 0; r < n; r++) {
        hs[r * w] = r == (size_t)mpi_rank ? 0 : send_len[r];
        memcpy(&hs[r * w + 1], v, nv * sizeof *v);
    }
    int ok = MPI_Alltoall(hs, (int)w, MPI_UINT64_T, hr, (int)w, MPI_UINT64_T, MPI_COMM_WORLD) == MPI_SUCCESS;
    size_t total = 0;
    for (size_t r = 0; ok && r < n; r++) {
        total += hr[r * w];
        for (size_t k = 0; k < nv; k++)
            if (hr[r * w + 1 + k] < v[k])
                v[k] = hr[r * w + 1 + k];
        ok = hr[r * w] <= INT32_MAX && send_len[r] <= INT32_MAX;
    }
    char *buf = ok && total ? malloc(total) : NULL;
    ok = ok && (!total || buf);
    int nreq = 0;
    for (size_t r = 0, off = 0; ok && r < n; off += hr[r * w], r++) {
        if (hr[r * w] && MPI_Irecv(buf + off, (int)hr[r * w], MPI_BYTE, (int)r, 1, MPI_COMM_WORLD, &req[nreq++]) !=
                             MPI_SUCCESS)
            ok = 0;
        if (ok && r != (size_t)mpi_rank && send_len[r] &&
            MPI_Isend(send[r], (int)send_len[r], MPI_BYTE, (int)r, 1, MPI_COMM_WORLD, &req[nreq++]) != MPI_SUCCESS)
            ok = 0;
    }
    if (ok && nreq)
        ok = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE) == MPI_SUCCESS;
    free(hs);
    free(req);
    if (!ok) {
        free(buf);
        return RS_EIO;
    }
    *recv = buf;
    *recv_len = total;
    return RS_OK;
}

static int comm_gather(void *ctx, const void *buf, size_t n, void **all, size_t *len)
{
    (void)ctx;
    *all = NULL;
    if (n > INT32_MAX)
        return RS_ERANGE;
    int mine = (int)n, *counts = malloc(2 * (size_t)mpi_size * sizeof *counts);
    if (!counts)
        return RS_ENOMEM;
    int *disp = counts + mpi_size, ok = MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD) ==
                                        MPI_SUCCESS;
    size_t total = 0;
    for (int r = 0; ok && mpi_rank == 0 && r < mpi_size; r++) {
        disp[r] = (int)total;
        len[r] = (size_t)counts[r];
        total += len[r];
    }
    char *b = mpi_rank == 0 && total <= INT32_MAX ? malloc(total ? total : 1) : NULL;
    ok = ok && MPI_Gatherv(buf, mine, MPI_BYTE, b, counts, disp, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS;
    free(counts);
    if (!ok || (mpi_rank == 0 && !b)) {
        free(b);
        return RS_EIO;
    }
    *all = b;
    return RS_OK;
}
#endif

const rs_net_comm *rs_jobs_comm(void)
{
#ifdef RS_HAVE_MPI
    static rs_net_comm c;
    if (mpi_size > 1) {
        c = (rs_net_comm){ NULL, (uint32_t)mpi_rank, (uint32_t)mpi_size, comm_allreduce, comm_exchange,
                           comm_gather };
        return &c;
    }
#endif
    return NULL;
}
unsigned rs_jobs_ranks(void) { return (unsigned)mpi_size; }

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
    rs_cli_run how = { .path = path, .outdir = j->outdir, .quiet = j->quiet, .flags = j->flags };
    j->code = rs_run_execute(j->sc, &how, &j->summary);
}

/* In the child: run, pass the result back, exit (never returns). */
static void child(rs_job *j, const char *path, FILE *f)
{
    json_t *s = NULL;
    rs_cli_run how = { .path = path, .outdir = j->outdir, .quiet = j->quiet, .flags = j->flags };
    int code = rs_run_execute(j->sc, &how, &s);
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

/* The jobs at idx[0..n), up to `parallel` at once in child processes. */
static int run_local(rs_job *jobs, const size_t *idx, size_t n, unsigned parallel, const char *path)
{
    if (parallel <= 1 || n <= 1) {
        for (size_t i = 0; i < n; i++)
            run_here(&jobs[idx[i]], path);
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
                fprintf(stderr, "railsim: job %zu: cannot make its result file: %s\n", idx[next] + 1,
                        strerror(errno));
                code = RS_EXIT_RUN_FAILED;
                break;
            }
            rs_job *j = &jobs[idx[next]];
            if (j->progress[0])
                fprintf(stderr, "%s\n", j->progress);
            fflush(NULL); /* nothing buffered is written twice */
            pid_t pid = fork();
            if (pid == 0)
                child(j, path, f);
            if (pid < 0) {
                fprintf(stderr, "railsim: job %zu: cannot start a process: %s\n", idx[next] + 1, strerror(errno));
                fclose(f);
                code = RS_EXIT_RUN_FAILED;
                break;
            }
            sl[k] = (slot){ pid, idx[next++], f };
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

#ifdef RS_HAVE_MPI
/* Every rank gets job i's result from the rank that ran it. */
static int share(rs_job *j, int owner)
{
    char *text = NULL;
    long long hdr[2] = { j->code, -1 };
    if (mpi_rank == owner && j->summary) {
        text = json_dumps(j->summary, JSON_COMPACT);
        hdr[1] = text ? (long long)strlen(text) : -2;
    }
    MPI_Bcast(hdr, 2, MPI_LONG_LONG, owner, MPI_COMM_WORLD);
    if (hdr[1] == -2 || hdr[1] > 0x7fffffff) {
        free(text);
        return RS_EXIT_RUN_FAILED; /* every rank sees it: no one waits */
    }
    j->code = (int)hdr[0];
    if (hdr[1] >= 0) {
        if (mpi_rank != owner && !(text = malloc((size_t)hdr[1] + 1)))
            MPI_Abort(MPI_COMM_WORLD, RS_EXIT_RUN_FAILED);
        MPI_Bcast(text, (int)hdr[1], MPI_CHAR, owner, MPI_COMM_WORLD);
        text[hdr[1]] = '\0';
        if (mpi_rank != owner) {
            json_error_t e;
            j->summary = json_loads(text, 0, &e);
        }
    }
    free(text);
    return hdr[1] >= 0 && !j->summary ? RS_EXIT_RUN_FAILED : RS_EXIT_OK;
}
#endif

int rs_jobs_run(rs_job *jobs, size_t n, unsigned parallel, const char *path)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx), mine = 0;
    if (!idx) {
        fprintf(stderr, "railsim: out of memory listing %zu jobs\n", n);
        return RS_EXIT_RUN_FAILED;
    }
    for (size_t i = 0; i < n; i++) {
        jobs[i].code = RS_EXIT_RUN_FAILED;
        jobs[i].summary = NULL;
        if (i % (size_t)mpi_size == (size_t)mpi_rank)
            idx[mine++] = i; /* under MPI, rank r runs jobs r, r + size, ... */
    }
    speak(1);
    int code = run_local(jobs, idx, mine, parallel, path);
    speak(0);
    free(idx);
#ifdef RS_HAVE_MPI
    if (mpi_size > 1) {
        /* One rank's failure to start its jobs fails the lot, on every rank. */
        int any = code;
        MPI_Allreduce(&code, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        code = any;
        for (size_t i = 0; i < n && code == RS_EXIT_OK; i++)
            if (share(&jobs[i], (int)(i % (size_t)mpi_size)) != RS_EXIT_OK) {
                fprintf(stderr, "railsim: job %zu: its summary could not be passed between MPI ranks\n", i + 1);
                code = RS_EXIT_RUN_FAILED;
            }
    }
#endif
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
