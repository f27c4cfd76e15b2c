/* trace-check FILE...: checks Chrome trace-event JSON as llmsim writes it
 * (train --trace, serve --trace) against the trace-event format: every
 * event has a phase and the fields that phase needs, metadata names each
 * process and thread once, every thread with slices is named, and the
 * complete slices ("X") of one thread never overlap (llmsim draws leaf
 * slices only; Perfetto would nest an overlap wrongly).  Prints one line
 * per file; exit 1 on the first file that fails, with what and where. */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xs {
    long long pid, tid;
    double ts, dur;
    size_t index;
} xs;

typedef struct key {
    char what[24];
    long long pid, tid;
} key;

static int fail(const char *file, size_t i, const char *msg)
{
    fprintf(stderr, "trace-check: %s: event %zu: %s\n", file, i, msg);
    return 1;
}

static bool num(json_t *o, const char *k, double *v)
{
    json_t *x = json_object_get(o, k);
    if (!json_is_number(x))
        return false;
    *v = json_number_value(x);
    return isfinite(*v);
}

static bool integer(json_t *o, const char *k, long long *v)
{
    json_t *x = json_object_get(o, k);
    if (!json_is_integer(x))
        return false;
    *v = json_integer_value(x);
    return true;
}

static int by_thread_then_ts(const void *a, const void *b)
{
    const xs *p = a, *q = b;
    if (p->pid != q->pid)
        return p->pid < q->pid ? -1 : 1;
    if (p->tid != q->tid)
        return p->tid < q->tid ? -1 : 1;
    if (p->ts != q->ts)
        return p->ts < q->ts ? -1 : 1;
    return p->index < q->index ? -1 : p->index > q->index;
}

static int by_key(const void *a, const void *b)
{
    const key *p = a, *q = b;
    int c = strcmp(p->what, q->what);
    if (c)
        return c;
    if (p->pid != q->pid)
        return p->pid < q->pid ? -1 : 1;
    return p->tid < q->tid ? -1 : p->tid > q->tid;
}

static bool named(const key *k, size_t n, const char *what, long long pid,
                  long long tid)
{
    key want = {.pid = pid, .tid = tid};
    snprintf(want.what, sizeof want.what, "%s", what);
    return bsearch(&want, k, n, sizeof *k, by_key) != NULL;
}

/* The phase's own fields; a metadata event goes into k. */
static int check_event(const char *file, size_t i, json_t *ev, xs *x,
                       size_t *nx, key *k, size_t *nk)
{
    json_t *ph = json_object_get(ev, "ph");
    if (!json_is_object(ev) || !json_is_string(ph))
        return fail(file, i, "not an object with a string \"ph\"");
    const char *p = json_string_value(ph);
    double ts, dur;
    long long pid, tid;
    if (strcmp(p, "X") == 0) {
        if (!json_is_string(json_object_get(ev, "name")) || !num(ev, "ts", &ts) ||
            !num(ev, "dur", &dur) || !integer(ev, "pid", &pid) ||
            !integer(ev, "tid", &tid))
            return fail(file, i, "X without name, ts, dur, pid or tid");
        if (ts < 0 || dur < 0)
            return fail(file, i, "X with a negative ts or dur");
        x[(*nx)++] = (xs){pid, tid, ts, dur, i};
    } else if (strcmp(p, "M") == 0) {
        json_t *nm = json_object_get(ev, "name");
        json_t *args = json_object_get(ev, "args");
        if (!json_is_string(nm) || !integer(ev, "pid", &pid) ||
            !json_is_object(args))
            return fail(file, i, "M without name, pid or args");
        const char *w = json_string_value(nm);
        bool thread = strncmp(w, "thread_", 7) == 0;
        if (thread && !integer(ev, "tid", &tid))
            return fail(file, i, "thread metadata without tid");
        if (!thread)
            tid = -1;
        key *kk = &k[(*nk)++];
        *kk = (key){.pid = pid, .tid = tid};
        snprintf(kk->what, sizeof kk->what, "%s", w);
    } else if (strcmp(p, "C") == 0) {
        if (!json_is_string(json_object_get(ev, "name")) || !num(ev, "ts", &ts) ||
            !integer(ev, "pid", &pid) ||
            !json_is_object(json_object_get(ev, "args")))
            return fail(file, i, "C without name, ts, pid or args");
    } else if (strcmp(p, "s") == 0 || strcmp(p, "f") == 0) {
        if (!json_object_get(ev, "id") || !num(ev, "ts", &ts) ||
            !integer(ev, "pid", &pid) || !integer(ev, "tid", &tid))
            return fail(file, i, "flow event without id, ts, pid or tid");
    } else if (strcmp(p, "b") == 0 || strcmp(p, "e") == 0) {
        if (!json_object_get(ev, "id") || !num(ev, "ts", &ts) ||
            !integer(ev, "pid", &pid) ||
            !json_is_string(json_object_get(ev, "cat")))
            return fail(file, i, "async event without id, cat, ts or pid");
    } else {
        return fail(file, i, "a phase llmsim does not write");
    }
    return 0;
}

static int check(const char *file)
{
    json_error_t je;
    json_t *root = json_load_file(file, 0, &je);
    if (!root) {
        fprintf(stderr, "trace-check: %s:%d: %s\n", file, je.line, je.text);
        return 1;
    }
    json_t *evs = json_object_get(root, "traceEvents");
    int rc = 0;
    size_t n = json_array_size(evs);
    xs *x = malloc(sizeof *x * (n + 1));
    key *k = malloc(sizeof *k * (n + 1));
    size_t nx = 0, nk = 0;
    if (!json_is_array(evs) || !x || !k) {
        fprintf(stderr, "trace-check: %s: no traceEvents array\n", file);
        rc = 1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = check_event(file, i, json_array_get(evs, i), x, &nx, k, &nk);
    if (rc == 0) { /* each process and thread named once */
        qsort(k, nk, sizeof *k, by_key);
        for (size_t i = 1; rc == 0 && i < nk; i++)
            if (by_key(&k[i - 1], &k[i]) == 0) {
                fprintf(stderr, "trace-check: %s: %s of pid %lld tid %lld "
                                "given twice\n", file, k[i].what, k[i].pid,
                        k[i].tid);
                rc = 1;
            }
    }
    size_t threads = 0;
    if (rc == 0) {
        qsort(x, nx, sizeof *x, by_thread_then_ts);
        for (size_t i = 0; rc == 0 && i < nx; i++) {
            bool first = i == 0 || x[i].pid != x[i - 1].pid ||
                         x[i].tid != x[i - 1].tid;
            if (first) {
                threads++;
                if (!named(k, nk, "thread_name", x[i].pid, x[i].tid) ||
                    !named(k, nk, "process_name", x[i].pid, -1))
                    rc = fail(file, x[i].index,
                              "a slice on an unnamed thread or process");
            } else if (x[i].ts < x[i - 1].ts + x[i - 1].dur - 0.002) {
                /* 0.002 us: the %.3f rounding of both ends */
                char msg[160];
                snprintf(msg, sizeof msg, "overlaps event %zu on pid %lld "
                         "tid %lld (%.3f + %.3f > %.3f)", x[i - 1].index,
                         x[i].pid, x[i].tid, x[i - 1].ts, x[i - 1].dur,
                         x[i].ts);
                rc = fail(file, x[i].index, msg);
            }
        }
    }
    if (rc == 0)
        printf("trace-check: %s: %zu events, %zu slices on %zu threads: ok\n",
               file, n, nx, threads);
    free(x);
    free(k);
    json_decref(root);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: trace-check FILE.json...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (check(argv[i]))
            return 1;
    return 0;
}
