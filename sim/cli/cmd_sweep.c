/* llmsim sweep — one experiment over a grid of config values, into a
 * resumable CSV file, on all cores (fork) or across machines (MPI). */
#include <getopt.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef LLMSIM_MPI
#include <mpi.h>
#endif

#include "base/par.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "decide/sweep.h"
#include "report/rserve.h"
#include "report/rsweep.h"
#include "report/rtrain.h"

static const char usage[] =
    "usage: llmsim sweep EXPERIMENT.cfg [--vary KEY=VALUES ...]\n"
    "           [--set KEY=VALUE ...] [--out FILE.csv] [-j N] [--no-progress]\n"
    "           [--force]\n"
    "       mpirun -n N llmsim-mpi sweep ...   (built with `make MPI=1`)\n\n"
    "Runs the experiment (a training one, or a serving one: a file with a\n"
    "serving group) at every point of the grid the --vary options span, and\n"
    "writes one CSV row per point: its index, the varied values, status\n"
    "(ok or error), the error, then every scalar of the command's --json\n"
    "output (nested keys joined with '.', e.g. exposed_comm_s.dp).\n\n"
    "VALUES is a list (1,2,4,8 or dgx-a100,dgx-h100), an arithmetic range\n"
    "LO:HI[:STEP] (inclusive) or a geometric one LO:HI:*FACTOR (1:64:*2).\n"
    "KEY is any key of the experiment file (nodes, parallel.tp,\n"
    "serving.replicas, workload.rate, ...), or a link bandwidth of the\n"
    "cluster: net.nvlink_GBps, net.pcie_GBps (per direction) and\n"
    "net.ib_gbps (each NIC).  The file may carry its own sweep = { vary = (\n"
    "\"KEY=VALUES\", ...); out = \"FILE.csv\"; }; --vary adds axes to it.\n\n"
    "Rows are appended and fsync'd as points finish, so a killed sweep loses\n"
    "nothing: rerunning the same command skips the points its file holds.\n"
    "When all are in, the file is rewritten in point order, identical\n"
    "whatever the number of workers.  -j N runs N points at once (default:\n"
    "every core); under mpirun, rank 0 hands points to the other ranks and\n"
    "writes the file.  Progress (points, rate, ETA) goes to stderr when it\n"
    "is a terminal.  A point over the run budget (see `llmsim help train`)\n"
    "is an error row; --force runs every point anyway.\n";

enum { S_VARY = 500, S_SET, S_OUT, S_JOBS, S_NOPROG, S_FORCE };

typedef struct sopts {
    const char *file, *out;
    const char *sets[64];
    int nsets;
    const char *vary[64];
    int nvary;
    int jobs;
    bool progress, serve, force; /* force: --force to every point */
    char out_buf[1024];
    cfg_sweep_group group; /* the file's sweep group, owned */
    exp_train *base_train; /* the experiment, as the file and --set give it */
    exp_serve *base_serve;
} sopts;

static int parse_one(void *ctx, int ch, const char *v, llm_err *e)
{
    sopts *o = ctx;
    switch (ch) {
    case S_VARY:
        if (o->nvary >= 64)
            return err_set(e, "--vary: at most 64");
        o->vary[o->nvary++] = v;
        return 0;
    case S_SET:
        if (o->nsets >= 64)
            return err_set(e, "--set: at most 64");
        o->sets[o->nsets++] = v;
        return 0;
    case S_OUT: o->out = v; return 0;
    case S_JOBS: return cmd_int_opt("-j", v, 1, 4096, &o->jobs, e);
    case S_NOPROG: o->progress = false; return 0;
    case S_FORCE: o->force = true; return 0;
    }
    return -1;
}

/* The file's sweep group into o: its axes come before the --vary ones, its
 * out only where --out did not say. */
static int read_file(sopts *o, llm_err *e)
{
    if (cfg_sweep_read_group(o->file, &o->group, e))
        return -1;
    o->serve = o->group.serve;
    if (o->group.has_out && !o->out) {
        snprintf(o->out_buf, sizeof o->out_buf, "%s", o->group.out);
        o->out = o->out_buf;
    }
    return 0;
}

static int parse(int argc, char **argv, sopts *o, llm_err *e)
{
    static const struct option opts[] = {
        {"vary", 1, 0, S_VARY}, {"set", 1, 0, S_SET}, {"out", 1, 0, S_OUT},
        {"jobs", 1, 0, S_JOBS}, {"no-progress", 0, 0, S_NOPROG},
        {"force", 0, 0, S_FORCE},
        {0, 0, 0, 0},
    };
    /* -j N and -jN, as make takes them */
    static char jbuf[64][32];
    char *args[256];
    int n = 0;
    for (int i = 0; i < argc && n < 255; i++) {
        if (strncmp(argv[i], "-j", 2) == 0 && i < 64) {
            snprintf(jbuf[i], sizeof jbuf[i], "--jobs%s%s",
                     argv[i][2] ? "=" : "", argv[i] + 2);
            args[n++] = jbuf[i];
        } else {
            args[n++] = argv[i];
        }
    }
    args[n] = NULL;
    if (cmd_getopt("sweep", n, args, opts, parse_one, o, e))
        return -1;
    if (optind != n - 1)
        return err_set(e, optind < n ? "unexpected argument \"%s\""
                                     : "an experiment file is needed (see "
                                       "`llmsim help sweep`)%s",
                       optind < n ? args[optind + 1] : "");
    o->file = args[optind];
    return 0;
}

/* ---- one point -------------------------------------------------------- */

/* The experiment at point i: the file's, with every axis's value there. */
static int apply_point(const sopts *o, const sweep_spec *s, long i, void *x,
                       exp_src *src, llm_err *e)
{
    exp_kind k = o->serve ? EXP_SERVE : EXP_TRAIN;
    char set[300], why[1400];
    for (int a = 0; a < s->naxes; a++) {
        sweep_set(s, i, a, set, sizeof set);
        if (settings_apply(k, x, src, set, why, sizeof why))
            return err_set(e, "%s", why);
        /* an error about it names the axis, not a --set */
        src[settings_index(settings_by_key(k, s->axes[a].key))].how = SRC_AXIS;
    }
    return exp_settle(k, x, e);
}

/* Runs point i; on success *j holds its JSON, else e its error. */
static int run_point(const sopts *o, const sweep_spec *s, long i, json_t **j,
                     llm_err *e)
{
    exp_run_opts ro = {.force = o->force};
    *j = NULL;
    if (o->serve) {
        static exp_serve x;
        exp_serve_out out;
        x = *o->base_serve;
        if (apply_point(o, s, i, &x, x.h.src, e) ||
            exp_serve_run(&x, &ro, cfg_loader(), &out, e))
            return -1;
        *j = rserve_json(&out);
        exp_serve_out_free(&out);
        return 0;
    }
    static exp_train x;
    exp_train_out out;
    x = *o->base_train;
    if (apply_point(o, s, i, &x, x.h.src, e) ||
        exp_train_run(&x, &ro, cfg_loader(), &out, e))
        return -1;
    *j = rtrain_json(&out);
    exp_train_out_free(&out);
    return 0;
}

/* A result as bytes on a pipe or an MPI message: "ok <json>" or
 * "error <message>"; NULL when memory ran out (the sweep stops: a point
 * that could not be simulated is not a result). */
static char *encode(long i, const sopts *o, const sweep_spec *s)
{
    json_t *j = NULL;
    llm_err e = {{0}};
    int rc = run_point(o, s, i, &j, &e);
    if (rc && strstr(e.msg, "out of memory")) /* every such message says so */
        return NULL;
    util_buf b = {0};
    if (rc == 0 && j) {
        char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER |
                                    JSON_REAL_PRECISION(10));
        if (!t) {
            json_decref(j);
            return NULL;
        }
        util_buf_printf(&b, "ok %s", t);
        free(t);
    } else {
        util_buf_printf(&b, "error %s", e.msg[0] ? e.msg : "failed");
    }
    json_decref(j);
    if (b.nomem) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

static int record(rsweep_file *f, long i, const char *msg, llm_err *e)
{
    if (strncmp(msg, "ok ", 3) == 0) {
        json_error_t je;
        json_t *j = json_loads(msg + 3, 0, &je);
        if (!j)
            return err_set(e, "point %ld: a garbled result", i);
        int rc = rsweep_append(f, i, j, NULL, e);
        json_decref(j);
        return rc;
    }
    return rsweep_append(f, i, NULL, msg + 6, e);
}

/* ---- progress --------------------------------------------------------- */

typedef struct progress {
    bool on;
    long total, done0, done;
    struct timespec t0;
} progress;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void progress_show(progress *p)
{
    if (!p->on)
        return;
    double el = since(&p->t0);
    long run = p->done - p->done0;
    double rate = el > 0 ? run / el : 0;
    int w = 30, fill = p->total ? (int)(w * p->done / p->total) : w;
    fprintf(stderr, "\rsweep [");
    for (int k = 0; k < w; k++)
        fputc(k < fill ? '#' : '-', stderr);
    fprintf(stderr, "] %ld/%ld points", p->done, p->total);
    if (rate > 0)
        fprintf(stderr, "  %.2f/s  ETA %.0f s  ", rate,
                (p->total - p->done) / rate);
    if (p->done == p->total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* ---- local workers ------------------------------------------------------- */

typedef struct local {
    const sopts *o;
    const sweep_spec *s;
    rsweep_file *f;
    progress *p;
    long cursor;
    llm_err *e;
} local;

static long next_todo(const rsweep_file *f, long *cursor)
{
    while (*cursor < f->spec->npoints && f->done[*cursor])
        (*cursor)++;
    return *cursor < f->spec->npoints ? (*cursor)++ : -1;
}

static long local_next(void *ctx)
{
    local *l = ctx;
    return next_todo(l->f, &l->cursor);
}

static char *local_job(long i, void *ctx)
{
    local *l = ctx;
    return encode(i, l->o, l->s);
}

static int local_done(long i, const char *msg, void *ctx)
{
    local *l = ctx;
    if (record(l->f, i, msg, l->e))
        return -1;
    l->p->done++;
    progress_show(l->p);
    return 0;
}

static int run_local(const sopts *o, const sweep_spec *s, rsweep_file *f,
                     progress *p, llm_err *e)
{
    local l = {o, s, f, p, 0, e};
    long todo = s->npoints - f->ndone;
    int jobs = o->jobs < todo ? o->jobs : (int)todo;
    return par_run(jobs, local_next, local_job, local_done, &l, e);
}

/* ---- MPI: rank 0 hands out points, the others run them ----------------- */

#ifdef LLMSIM_MPI
enum { TAG_POINT = 1, TAG_RESULT = 2 };

static void mpi_worker(const sopts *o, const sweep_spec *s)
{
    for (;;) {
        long i;
        MPI_Recv(&i, 1, MPI_LONG, 0, TAG_POINT, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (i < 0)
            return;
        char *msg = encode(i, o, s);
        const char *m = msg ? msg : "error out of memory";
        MPI_Send(&i, 1, MPI_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
        MPI_Send(m, (int)strlen(m) + 1, MPI_CHAR, 0, TAG_RESULT,
                 MPI_COMM_WORLD);
        free(msg);
    }
}

static int mpi_master(int size, rsweep_file *f, progress *p, llm_err *e)
{
    long cursor = 0;
    int busy = 0, rc = 0;
    for (int r = 1; r < size; r++) {
        long i = rc ? -1 : next_todo(f, &cursor);
        MPI_Send(&i, 1, MPI_LONG, r, TAG_POINT, MPI_COMM_WORLD);
        busy += i >= 0;
    }
    while (busy > 0) {
        long i;
        MPI_Status st;
        int len;
        MPI_Recv(&i, 1, MPI_LONG, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD,
                 &st);
        int src = st.MPI_SOURCE;
        MPI_Probe(src, TAG_RESULT, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &len);
        char *msg = malloc((size_t)len + 1);
        MPI_Recv(msg, len, MPI_CHAR, src, TAG_RESULT, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (msg)
            msg[len > 0 ? len - 1 : 0] = '\0';
        if (!rc)
            rc = msg ? record(f, i, msg, e) : err_set(e, "out of memory");
        free(msg);
        p->done++;
        progress_show(p);
        long next = rc ? -1 : next_todo(f, &cursor);
        MPI_Send(&next, 1, MPI_LONG, src, TAG_POINT, MPI_COMM_WORLD);
        busy -= next < 0;
    }
    return rc;
}
#endif

/* ---- the command ------------------------------------------------------ */

/* Every value of every axis is applied once (the others at their first),
 * so a mistyped key or a wrong-typed value stops the sweep before it
 * starts. */
static int check_axes(const sopts *o, const sweep_spec *s, llm_err *e)
{
    exp_kind k = o->serve ? EXP_SERVE : EXP_TRAIN;
    static exp_train tx;
    static exp_serve sx;
    for (int a = 0; a < s->naxes; a++) {
        /* an axis's values are split at commas, as a list's entries are */
        const setting *st = settings_by_key(k, s->axes[a].key);
        if (st && st->type == SET_INTLIST && a < o->group.nvary)
            return err_set(e, "%s:%d: sweep.vary: %s: a list setting cannot "
                              "be swept (expected it in the experiment, or "
                              "one sweep per list)", o->file,
                           o->group.vary_line[a], s->axes[a].key);
        if (st && st->type == SET_INTLIST)
            return err_set(e, "--vary %s: a list setting cannot be swept "
                              "(expected it in the experiment, or one sweep "
                              "per list)", s->axes[a].key);
    }
    for (int a = 0; a < s->naxes; a++)
        for (int v = 0; v < s->axes[a].n; v++)
            for (int b = 0; b < s->naxes; b++) {
                char set[300], why[1400];
                snprintf(set, sizeof set, "%s=%s", s->axes[b].key,
                         s->axes[b].values[b == a ? v : 0]);
                void *x = o->serve ? (void *)&sx : (void *)&tx;
                if (o->serve)
                    sx = *o->base_serve;
                else
                    tx = *o->base_train;
                if (settings_apply(k, x, NULL, set, why, sizeof why) == 0)
                    continue;
                /* the message after where the axis came from */
                const char *w = strchr(why, ':');
                w = w ? w + 2 : why;
                if (b < o->group.nvary)
                    return err_set(e, "%s:%d: sweep.vary: %s: %s", o->file,
                                   o->group.vary_line[b], set, w);
                return err_set(e, "--vary %s: %s", set, w);
            }
    return 0;
}

/* The experiment the points start from: the file, then --set. */
static int load_base(sopts *o, llm_err *e)
{
    cmd_args a = {.file = o->file, .nsets = o->nsets};
    for (int i = 0; i < o->nsets; i++)
        a.sets[i] = o->sets[i];
    if (o->serve) {
        static exp_serve x;
        exp_serve_defaults(&x);
        o->base_serve = &x;
        return cmd_load_exp(EXP_SERVE, &x, &a, e);
    }
    static exp_train x;
    exp_train_defaults(&x);
    o->base_train = &x;
    return cmd_load_exp(EXP_TRAIN, &x, &a, e);
}

static int build_spec(sopts *o, sweep_spec *s, llm_err *e)
{
    for (int i = 0; i < o->group.nvary; i++)
        if (sweep_add_axis(s, o->group.vary[i], e)) {
            char m[sizeof e->msg];
            snprintf(m, sizeof m, "%s:%d: sweep.vary: %s", o->file,
                     o->group.vary_line[i], e->msg);
            return err_set(e, "%s", m);
        }
    for (int i = 0; i < o->nvary; i++)
        if (sweep_add_axis(s, o->vary[i], e)) {
            char m[sizeof e->msg];
            snprintf(m, sizeof m, "--vary %s", e->msg);
            return err_set(e, "%s", m);
        }
    if (s->naxes == 0)
        return err_set(e, "sweep: nothing varies (expected --vary KEY=VALUES "
                          "or sweep = { vary = (...); } in %s)", o->file);
    FILE *fp = fopen(o->file, "rb");
    if (!fp)
        return err_set(e, "%s: cannot read", o->file);
    util_buf b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        util_buf_append(&b, chunk, n);
    fclose(fp);
    if (b.nomem) {
        free(b.s);
        return err_set(e, "out of memory");
    }
    sweep_fingerprint(s, b.s ? b.s : "", b.len, o->sets, o->nsets);
    free(b.s);
    return load_base(o, e) || check_axes(o, s, e) ? -1 : 0;
}

static void default_out(sopts *o)
{
    if (o->out)
        return;
    char id[256];
    util_basename_id(o->file, id, sizeof id);
    snprintf(o->out_buf, sizeof o->out_buf, "sweep-%s.csv", id);
    o->out = o->out_buf;
}

static int sweep_main(sopts *o, int rank, int size, llm_err *e)
{
    sweep_spec s = {0};
    rsweep_file f;
    memset(&f, 0, sizeof f);
    f.fd = -1;
    int rc = -1;
    if (read_file(o, e) || build_spec(o, &s, e))
        goto out;
    if (cmd_inputs_only) {
        rc = 0;
        goto out;
    }
    default_out(o);
#ifdef LLMSIM_MPI
    if (size > 1 && rank > 0) {
        mpi_worker(o, &s);
        rc = 0;
        goto out;
    }
#endif
    if (rsweep_open(&f, o->out, &s, e)) {
#ifdef LLMSIM_MPI
        /* the workers wait for a first point: let them go */
        for (int r = 1; r < size; r++) {
            long stop = -1;
            MPI_Send(&stop, 1, MPI_LONG, r, TAG_POINT, MPI_COMM_WORLD);
        }
#endif
        goto out;
    }
    progress p = {.on = o->progress && isatty(2), .total = s.npoints,
                  .done0 = f.ndone, .done = f.ndone};
    clock_gettime(CLOCK_MONOTONIC, &p.t0);
    if (f.ndone > 0)
        fprintf(stderr, "sweep: %s holds %ld of %ld points; running the "
                        "other %ld\n",
                o->out, f.ndone, s.npoints, s.npoints - f.ndone);
#ifdef LLMSIM_MPI
    if (size > 1)
        rc = mpi_master(size, &f, &p, e);
    else
#endif
        rc = run_local(o, &s, &f, &p, e);
    (void)rank;
    (void)size;
    if (!rc)
        rc = rsweep_finish(&f, e);
    if (!rc)
        printf("sweep: %ld points (%s experiment) in %s\n", s.npoints,
               o->serve ? "serving" : "training", o->out);
out:
    rsweep_close(&f);
    sweep_free(&s);
    return rc ? -1 : 0;
}

static int run(int argc, char **argv, llm_err *e)
{
    sopts o;
    memset(&o, 0, sizeof o);
    o.progress = true;
    o.jobs = par_cpus();
    int rank = 0, size = 1;
#ifdef LLMSIM_MPI
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#endif
    int rc = parse(argc, argv, &o, e) || sweep_main(&o, rank, size, e);
#ifdef LLMSIM_MPI
    MPI_Finalize();
#endif
    cfg_sweep_group_free(&o.group);
    return rc ? EXIT_BAD_INPUT : EXIT_OK;
}

const cmd_def cmd_sweep_def = {
    "sweep", "an experiment over a grid of config values, into CSV", usage,
    run, 0, NULL};
