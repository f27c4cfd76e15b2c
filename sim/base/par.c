#include "base/par.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int par_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A worker: job indices in, (index, length, bytes) out, until -1. */
static void worker_loop(int in, int out, par_job job, void *ctx)
{
    int64_t i;
    while (read_all(in, &i, sizeof i) == 0 && i >= 0) {
        char *r = job((long)i, ctx);
        uint64_t len = r ? strlen(r) : 0;
        if (write_all(out, &i, sizeof i) || write_all(out, &len, sizeof len) ||
            write_all(out, r ? r : "", len))
            _exit(1);
        free(r);
    }
    _exit(0);
}

typedef struct worker {
    pid_t pid;
    int to, from;
    bool busy;
} worker;

static int give(worker *w, long i)
{
    int64_t v = i;
    w->busy = i >= 0;
    return write_all(w->to, &v, sizeof v);
}

static int spawn(worker *w, par_job job, void *ctx, llm_err *e)
{
    int a[2], b[2];
    if (pipe(a))
        return err_set(e, "pipe: %s", strerror(errno));
    if (pipe(b)) {
        close(a[0]);
        close(a[1]);
        return err_set(e, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    w->pid = fork();
    if (w->pid < 0)
        return err_set(e, "fork: %s", strerror(errno));
    if (w->pid == 0) {
        close(a[1]);
        close(b[0]);
        worker_loop(a[0], b[1], job, ctx);
    }
    close(a[0]);
    close(b[1]);
    w->to = a[1];
    w->from = b[0];
    return 0;
}

static int collect(worker *w, par_done done, void *ctx, llm_err *e)
{
    int64_t i;
    uint64_t len;
    if (read_all(w->from, &i, sizeof i) || read_all(w->from, &len, sizeof len))
        return err_set(e, "a worker process died");
    char *r = malloc(len + 1);
    if (!r || read_all(w->from, r, len)) {
        free(r);
        return err_set(e, "a worker process died");
    }
    r[len] = '\0';
    w->busy = false;
    int rc = done((long)i, r, ctx);
    free(r);
    return rc;
}

static int run_here(par_next next, par_job job, par_done done, void *ctx,
                    llm_err *e)
{
    for (long i; (i = next(ctx)) >= 0;) {
        char *r = job(i, ctx);
        int rc = r ? done(i, r, ctx) : err_set(e, "out of memory");
        free(r);
        if (rc)
            return -1;
    }
    return 0;
}

int par_run(int jobs, par_next next, par_job job, par_done done, void *ctx,
            llm_err *e)
{
    if (jobs <= 1)
        return run_here(next, job, done, ctx, e);
    worker *w = calloc((size_t)jobs, sizeof *w);
    struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
    int rc = w && pf ? 0 : err_set(e, "out of memory");
    int started = 0;
    for (long i; !rc && started < jobs && (i = next(ctx)) >= 0; started++)
        if ((rc = spawn(&w[started], job, ctx, e)) == 0)
            rc = give(&w[started], i) ? err_set(e, "a worker process died")
                                      : 0;
    while (!rc) {
        int busy = 0;
        for (int k = 0; k < started; k++) {
            pf[k] = (struct pollfd){.fd = w[k].busy ? w[k].from : -1,
                                    .events = POLLIN};
            busy += w[k].busy;
        }
        if (!busy)
            break;
        if (poll(pf, (nfds_t)started, -1) < 0 && errno != EINTR) {
            rc = err_set(e, "poll: %s", strerror(errno));
            break;
        }
        for (int k = 0; k < started && !rc; k++)
            if (pf[k].revents && w[k].busy &&
                (rc = collect(&w[k], done, ctx, e)) == 0 &&
                give(&w[k], next(ctx)))
                rc = err_set(e, "a worker process died");
    }
    for (int k = 0; k < started; k++) {
        close(w[k].to); /* end of input: the worker exits */
        close(w[k].from);
        if (rc)
            kill(w[k].pid, SIGTERM);
        waitpid(w[k].pid, NULL, 0);
    }
    free(w);
    free(pf);
    return rc ? -1 : 0;
}

char *par_hex_encode(char tag, const void *p, size_t n)
{
    char *b = malloc(2 * n + 2);
    if (!b)
        return NULL;
    b[0] = tag;
    const unsigned char *q = p;
    for (size_t k = 0; k < n; k++)
        snprintf(b + 1 + 2 * k, 3, "%02x", q[k]);
    b[1 + 2 * n] = '\0';
    return b;
}

int par_hex_decode(const char *s, char tag, void *p, size_t n)
{
    unsigned char *q = p;
    if (s[0] != tag || strlen(s) != 2 * n + 1)
        return -1;
    for (size_t k = 0; k < n; k++) {
        unsigned v;
        if (sscanf(s + 1 + 2 * k, "%2x", &v) != 1)
            return -1;
        q[k] = (unsigned char)v;
    }
    return 0;
}
