/* llmsim search — the fastest parallel plans of a training job, and the
 * best deployment of a serving one under its SLOs. */
#include <getopt.h>
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfg/cfg.h"
#include "cfg/cfg_util.h"
#include "cli/cmd.h"
#include "base/par.h"
#include "decide/search.h"
#include "base/util.h"

static const char usage[] =
    "usage: llmsim search EXPERIMENT.cfg [--set key=value ...] [options]\n"
    "       llmsim search --model M --cluster C [--nodes N] --global-batch N\n"
    "           --seq-len N [--precision bf16|fp16|fp8|fp32] [--optimizer O]\n"
    "           [--top K] [--simulate N] [--json]\n"
    "       llmsim search SERVE.cfg [--set ...] [--gpus N] [--top K] [--json]\n\n"
    "Training: enumerates every plan that uses all the cluster's GPUs for\n"
    "the global batch: TP (powers of two inside a node, dividing the heads)\n"
    "x PP (dividing the layers) x DP x CP (sequences of 16k tokens and more)\n"
    "x EP (MoE) x micro-batch (1..16) x ZeRO 0..3 x recompute none,\n"
    "selective, full x schedule 1F1B, GPipe, interleaved (2..8 virtual\n"
    "stages).  The memory model drops the plans that do not fit (counted by\n"
    "reason); the others get a closed-form estimate from the cost model,\n"
    "and the --simulate best of those (default 24) are simulated step by\n"
    "step and ranked by simulated step time.  Prints the top K (default\n"
    "10) and why the winner wins.  From an experiment file, the parallel\n"
    "group's global_batch, seq_len, precision, optimizer and flash_attn\n"
    "are kept and its tp/pp/dp/... are what is searched.\n\n"
    "Serving (a file with a serving group): every TP x PP x replicas that\n"
    "fits the GPUs (--gpus, default the experiment's or the cluster's), and\n"
    "every prefill/decode split of them into disaggregated pools, each\n"
    "ranked by goodput as DistServe defines it: the highest load (the\n"
    "trace's rate scaled, or the arrival rate) at which 90% of requests\n"
    "meet both SLOs, found by doubling or halving the file's load and then\n"
    "bisecting; the run at that load is what the table shows.\n\n"
    "JSON keys (training): enumerated, fitted, dropped {reason: n},\n"
    "plans [{rank, plan {...}, step_time_s, tokens_per_s, mfu,\n"
    "memory_peak_bytes, estimate_s}], why.  (serving): candidates\n"
    "[{rank, deployment, goodput_requests_per_s, throughput_tokens_per_s,\n"
    "ttft_p90_s, tpot_p90_s, slo_attainment}], why.\n";

enum {
    Q_MODEL = 600, Q_CLUSTER, Q_NODES, Q_GB, Q_SEQ, Q_PREC, Q_OPT, Q_TOP,
    Q_SIM, Q_JSON, Q_SET, Q_GPUS
};

typedef struct qopts {
    const char *file, *model, *cluster;
    const char *sets[64];
    int nsets;
    int nodes, gb, seq, top, simulate, gpus;
    const char *prec, *opt;
    bool json;
} qopts;

static int parse_one(void *ctx, int ch, const char *v, llm_err *e)
{
    qopts *o = ctx;
    switch (ch) {
    case Q_MODEL: o->model = v; return 0;
    case Q_CLUSTER: o->cluster = v; return 0;
    case Q_NODES: return cmd_int_opt("--nodes", v, 1, 1 << 20, &o->nodes, e);
    case Q_GB: return cmd_int_opt("--global-batch", v, 1, 1 << 26, &o->gb, e);
    case Q_SEQ: return cmd_int_opt("--seq-len", v, 1, 1 << 24, &o->seq, e);
    case Q_PREC: o->prec = v; return 0;
    case Q_OPT: o->opt = v; return 0;
    case Q_TOP: return cmd_int_opt("--top", v, 1, 1000, &o->top, e);
    case Q_SIM: return cmd_int_opt("--simulate", v, 1, 100000, &o->simulate, e);
    case Q_GPUS: return cmd_int_opt("--gpus", v, 1, 1 << 20, &o->gpus, e);
    case Q_JSON: o->json = true; return 0;
    case Q_SET:
        if (o->nsets >= 64)
            return err_set(e, "--set: at most 64");
        o->sets[o->nsets++] = v;
        return 0;
    }
    return -1;
}

static int parse(int argc, char **argv, qopts *o, llm_err *e)
{
    static const struct option opts[] = {
        {"model", 1, 0, Q_MODEL}, {"cluster", 1, 0, Q_CLUSTER},
        {"nodes", 1, 0, Q_NODES}, {"global-batch", 1, 0, Q_GB},
        {"seq-len", 1, 0, Q_SEQ}, {"precision", 1, 0, Q_PREC},
        {"optimizer", 1, 0, Q_OPT}, {"top", 1, 0, Q_TOP},
        {"simulate", 1, 0, Q_SIM}, {"json", 0, 0, Q_JSON},
        {"set", 1, 0, Q_SET}, {"gpus", 1, 0, Q_GPUS}, {0, 0, 0, 0},
    };
    if (cmd_getopt("search", argc, argv, opts, parse_one, o, e))
        return -1;
    if (optind < argc - 1)
        return err_set(e, "unexpected argument \"%s\"", argv[optind + 1]);
    if (optind == argc - 1)
        o->file = argv[optind];
    if (o->nsets && !o->file)
        return err_set(e, "--set needs an experiment file");
    return 0;
}

static bool is_serving_file(const char *path, llm_err *e, int *rc)
{
    cfgu c = {path, e};
    config_t cfg;
    config_init(&cfg);
    *rc = cfgu_read(&c, &cfg);
    bool s = !*rc && config_setting_get_member(config_root_setting(&cfg),
                                               "serving") != NULL;
    config_destroy(&cfg);
    return s;
}

/* ---- training ------------------------------------------------------------ */

/* The plan template and where it runs: the file, then the options. */
static int train_inputs(const qopts *o, cfg_experiment *x, llm_err *e)
{
    memset(x, 0, sizeof *x);
    plan_train_defaults(&x->plan);
    train_loader_defaults(&x->loader);
    if (o->file && cfg_load_experiment(o->file, o->sets, o->nsets, x, e))
        return -1;
    if (o->model)
        snprintf(x->model, sizeof x->model, "%s", o->model);
    if (o->cluster)
        snprintf(x->cluster, sizeof x->cluster, "%s", o->cluster);
    if (o->nodes)
        x->nodes = o->nodes;
    if (o->gb)
        x->plan.global_batch = o->gb;
    if (o->seq)
        x->plan.seq_len = o->seq;
    int k;
    if (o->opt) {
        if (cmd_pick("--optimizer", o->opt, plan_optimizer_names, OPT_COUNT,
                     &k, e))
            return -1;
        x->plan.optimizer = (plan_optimizer)k;
    }
    if (o->prec && (dtype_parse(o->prec, &x->plan.precision) ||
                    (x->plan.precision != DT_BF16 &&
                     x->plan.precision != DT_FP16 &&
                     x->plan.precision != DT_FP8 &&
                     x->plan.precision != DT_FP32)))
        return err_set(e, "--precision: \"%s\" (expected bf16, fp16, fp8 or "
                          "fp32)", o->prec);
    if (!x->model[0] || !x->cluster[0])
        return err_set(e, "an experiment file or --model and --cluster are "
                          "needed (see `llmsim help search`)");
    if (x->microbatches > 0)
        return err_set(e, "search: parallel.microbatches depends on the plan; "
                          "give parallel.global_batch");
    if (x->plan.global_batch <= 0)
        return err_set(e, "search: a global batch is needed (--global-batch "
                          "N or parallel.global_batch)");
    return 0;
}

/* The two largest differences, in seconds per step, between a and b. */
static void why_train(const search_plan *a, const search_plan *b, char *buf,
                      size_t n)
{
    const train_result *x = &a->r, *y = &b->r;
    const char *name[5] = {"compute", "TP/CP/EP communication",
                           "pipeline bubble", "exposed pipeline transfers",
                           "exposed data-parallel communication"};
    double va[5], vb[5];
    const train_result *rs[2] = {x, y};
    for (int i = 0; i < 2; i++) {
        const train_result *r = rs[i];
        double *v = i ? vb : va;
        /* the compute stream's busy time: the pipeline's span less its
         * bubble (bubble_fraction = (span - busy) / busy) */
        double span = r->step_s - r->exposed_comm_s[COMM_DP];
        double busy = span / (1 + r->bubble_fraction);
        double comm = r->exposed_comm_s[COMM_TP] + r->exposed_comm_s[COMM_CP] +
                      r->exposed_comm_s[COMM_EP];
        v[0] = busy - comm - r->exposed_comm_s[COMM_PP];
        v[1] = comm;
        v[2] = span - busy;
        v[3] = r->exposed_comm_s[COMM_PP];
        v[4] = r->exposed_comm_s[COMM_DP];
    }
    size_t len = 0;
    bool used[5] = {false};
    for (int i = 0; i < 2; i++) {
        int k = -1;
        for (int j = 0; j < 5; j++)
            if (!used[j] && (k < 0 || fabs(va[j] - vb[j]) > fabs(va[k] - vb[k])))
                k = j;
        if (fabs(va[k] - vb[k]) < 1e-3 * x->step_s && i > 0)
            break;
        used[k] = true;
        len += (size_t)snprintf(buf + len, n - len, "%s%s %.3f s vs %.3f s",
                                i ? "; " : "", name[k], va[k], vb[k]);
        if (len >= n)
            return;
    }
}

/* The runner-up of another shape (TP, PP, CP, EP), else the runner-up. */
static const search_plan *rival(const search_result *s)
{
    const plan_train *w = &s->ranked[0].plan;
    for (int i = 1; i < s->nranked; i++) {
        const plan_train *p = &s->ranked[i].plan;
        if (p->tp != w->tp || p->pp != w->pp || p->cp != w->cp ||
            p->ep != w->ep)
            return &s->ranked[i];
    }
    return s->nranked > 1 ? &s->ranked[1] : NULL;
}

static void print_train(const cfg_experiment *x, const cmd_env *v,
                        const search_result *s, int top, const char *why)
{
    printf("Plan search: %s on %s (%d x %s), global batch %d x %d tokens, "
           "%s, %s\n",
           v->m.display, v->t->name, v->t->ngpu, v->t->gpu->name,
           x->plan.global_batch, x->plan.seq_len,
           dtype_name(x->plan.precision),
           plan_optimizer_names[x->plan.optimizer]);
    printf("  %ld plans enumerated: %ld fit in %.0f GiB", s->enumerated,
           s->fitted, v->t->gpu->memory_bytes / GiB);
    for (int k = 0; k < SEARCH_REASONS; k++)
        if (s->dropped[k])
            printf(", %ld %s", s->dropped[k], search_reason_names[k]);
    printf("\n  estimated %ld; simulated the best %d by estimate\n\n",
           s->fitted, s->nranked);
    if (s->nranked == 0) {
        printf("  no plan fits: see `llmsim memory --train` for what would\n");
        return;
    }
    printf("  %-4s %-76s %9s %10s %6s %8s %9s\n", "rank", "plan", "step s",
           "tokens/s", "MFU", "mem GiB", "estimate");
    for (int i = 0; i < s->nranked && i < top; i++) {
        const search_plan *p = &s->ranked[i];
        char name[160];
        search_plan_name(&p->plan, name, sizeof name);
        printf("  %-4d %-76s %9.3f %10.0f %5.1f%% %8.1f %8.3fs\n", i + 1, name,
               p->r.step_s, p->r.tokens_per_s, 100 * p->r.mfu,
               p->r.memory_peak_bytes / GiB, p->estimate_s);
    }
    printf("\n%s\n", why);
}

static void why_text(const search_result *s, const cmd_env *v, char *buf,
                     size_t n)
{
    buf[0] = '\0';
    if (s->nranked == 0)
        return;
    const search_plan *w = &s->ranked[0];
    char a[160], b[160], d[300] = "";
    search_plan_name(&w->plan, a, sizeof a);
    size_t len = (size_t)snprintf(buf, n, "Why: %s ", a);
    const search_plan *r = rival(s);
    if (r) {
        search_plan_name(&r->plan, b, sizeof b);
        why_train(w, r, d, sizeof d);
        len += (size_t)snprintf(buf + len, n - len,
                                "is %.1f%% faster than the best plan of "
                                "another shape (%s): %s.",
                                100 * (r->r.step_s / w->r.step_s - 1), b, d);
    } else {
        len += (size_t)snprintf(buf + len, n - len, "is the only plan that "
                                "fits.");
    }
    if (len < n && s->have_dropped) {
        search_plan_name(&s->fastest_dropped, b, sizeof b);
        snprintf(buf + len, n - len,
                 " Memory holds it back: %s would take an estimated %.3f s "
                 "(%.1f%% faster) but needs %.1f GiB per GPU of the %.0f.",
                 b, s->fastest_dropped_s,
                 100 * (w->estimate_s / s->fastest_dropped_s - 1),
                 s->fastest_dropped_bytes / GiB,
                 v->t->gpu->memory_bytes / GiB);
    }
}

static json_t *train_json(const search_result *s, int top, const char *why)
{
    json_t *j = json_object();
    json_object_set_new(j, "enumerated", json_integer(s->enumerated));
    json_object_set_new(j, "fitted", json_integer(s->fitted));
    json_t *d = json_object();
    for (int k = 0; k < SEARCH_REASONS; k++)
        json_object_set_new(d, search_reason_names[k],
                            json_integer(s->dropped[k]));
    json_object_set_new(j, "dropped", d);
    json_t *a = json_array();
    for (int i = 0; i < s->nranked && i < top; i++) {
        const search_plan *p = &s->ranked[i];
        json_t *o = json_object();
        json_object_set_new(o, "rank", json_integer(i + 1));
        json_object_set_new(o, "plan", cmd_json_plan(&p->plan));
        json_object_set_new(o, "step_time_s", json_real(p->r.step_s));
        json_object_set_new(o, "tokens_per_s", json_real(p->r.tokens_per_s));
        json_object_set_new(o, "mfu", json_real(p->r.mfu));
        json_object_set_new(o, "memory_peak_bytes",
                            cmd_json_bytes(p->r.memory_peak_bytes));
        json_object_set_new(o, "estimate_s", json_real(p->estimate_s));
        json_array_append_new(a, o);
    }
    json_object_set_new(j, "plans", a);
    json_object_set_new(j, "why", json_string(why));
    return j;
}

int cmd_search_train(const cfg_experiment *x, int simulate, struct search_result *s,
                     cmd_env *v, llm_err *e)
{
    if (cmd_env_load(v, x->model, x->cluster, x->nodes, &x->net, e))
        return -1;
    train_input in = {&v->m, &x->plan, v->t, v->t->gpu, &v->cc, &v->kc,
                      &v->ov, false, false, NULL, NULL, NULL, x->gpus};
    return search_train(&in, &x->plan, simulate, par_cpus(), s, e);
}

static int run_train(const qopts *o, llm_err *e)
{
    cfg_experiment x;
    if (train_inputs(o, &x, e))
        return EXIT_BAD_INPUT;
    cmd_env v;
    search_result s;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (cmd_search_train(&x, o->simulate, &s, &v, e))
        return EXIT_BAD_INPUT;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* wall time on stderr: stdout stays byte-identical run to run */
    fprintf(stderr, "search: %ld plans in %.2f s\n", s.enumerated,
            (double)(t1.tv_sec - t0.tv_sec) +
                1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    char why[1200];
    why_text(&s, &v, why, sizeof why);
    if (o->json)
        cmd_print_json(train_json(&s, o->top, why));
    else
        print_train(&x, &v, &s, o->top, why);
    int rc = s.nranked ? EXIT_OK : EXIT_NO_FIT;
    search_free(&s);
    cmd_env_free(&v);
    return rc;
}

/* ---- serving --------------------------------------------------------------- */

typedef struct deploy {
    int tp, pp, replicas;           /* colocated */
    int ptp, pr, dtp, dr;           /* disaggregated when pr > 0 */
    json_t *j;                      /* the run at its goodput, or NULL */
    double load_scale;              /* that load over the file's */
    char error[256];
} deploy;

static void deploy_name(const deploy *d, char *buf, size_t n)
{
    if (d->pr > 0)
        snprintf(buf, n, "prefill %d x TP%d + decode %d x TP%d", d->pr, d->ptp,
                 d->dr, d->dtp);
    else
        snprintf(buf, n, "%d x TP%d%s", d->replicas, d->tp,
                 d->pp > 1 ? (d->pp == 2 ? " PP2" : d->pp == 4 ? " PP4" : " PP8")
                           : "");
}

static double jnum(json_t *j, const char *a, const char *b)
{
    json_t *v = json_object_get(j, a);
    if (b)
        v = json_object_get(v, b);
    return json_number_value(v);
}

static int by_goodput(const void *pa, const void *pb)
{
    const deploy *a = pa, *b = pb;
    if (!a->j || !b->j)
        return (a->j == NULL) - (b->j == NULL);
    double ga = jnum(a->j, "goodput_requests_per_s", NULL);
    double gb = jnum(b->j, "goodput_requests_per_s", NULL);
    if (ga != gb)
        return ga > gb ? -1 : 1;
    double ta = jnum(a->j, "throughput_tokens_per_s", NULL);
    double tb = jnum(b->j, "throughput_tokens_per_s", NULL);
    return ta > tb ? -1 : ta < tb;
}

/* The load knob of the workload: a trace's rate_scale, or the synthetic
 * arrival rate. */
typedef struct load {
    const char *key;
    double base;
} load;

/* One simulation of d at `scale` x the file's load. */
static json_t *simulate_deploy(const char *file, const char *const *fsets,
                               int nfsets, int gpus, const deploy *d,
                               const load *ld, double scale, llm_err *e)
{
    char sets[16][160];
    char *argv[4 + 2 * 64 + 2 * 16];
    int n = 0, k = 0;
    argv[n++] = "serve";
    argv[n++] = (char *)file;
    for (int i = 0; i < nfsets && n < 2 * 64; i++) {
        argv[n++] = "--set";
        argv[n++] = (char *)fsets[i];
    }
#define SET(...) (snprintf(sets[k], sizeof sets[k], __VA_ARGS__), \
                  argv[n++] = "--set", argv[n++] = sets[k++])
    SET("gpus=%d", gpus);
    SET("%s=%.6g", ld->key, ld->base * scale);
    if (d->pr > 0) {
        SET("serving.prefill_replicas=%d", d->pr);
        SET("serving.decode_replicas=%d", d->dr);
        SET("serving.prefill_tp=%d", d->ptp);
        SET("serving.decode_tp=%d", d->dtp);
        SET("serving.prefill_pp=1");
        SET("serving.decode_pp=1");
    } else {
        SET("serving.tp=%d", d->tp);
        SET("serving.pp=%d", d->pp);
        SET("serving.replicas=%d", d->replicas);
        SET("serving.prefill_replicas=0");
        SET("serving.decode_replicas=0");
    }
#undef SET
    argv[n] = NULL;
    json_t *j = NULL;
    if (cmd_serve_json(n, argv, &j, e))
        return NULL;
    return j;
}

/* DistServe's goodput (Zhong et al., OSDI 2024): the highest load at
 * which SEARCH_ATTAIN of requests meet both SLOs, found by doubling or
 * halving the file's load, then bisecting; d->j is the run there. */
#define SEARCH_ATTAIN 0.9
static void run_deploy(const char *file, const char *const *fsets,
                       int nfsets, int gpus, const load *ld, deploy *d)
{
    llm_err e = {{0}};
    double lo = 0, hi = 0;
    json_t *best = NULL;
    /* one probe: keeps the run when it meets the SLOs */
#define PROBE(scale)                                                          \
    do {                                                                      \
        double sc_ = (scale);                                                 \
        json_t *j_ = simulate_deploy(file, fsets, nfsets, gpus, d, ld, sc_,   \
                                     &e);                                     \
        if (!j_)                                                              \
            goto failed;                                                      \
        if (json_number_value(json_object_get(j_, "slo_attainment")) >=       \
            SEARCH_ATTAIN) {                                                  \
            lo = sc_;                                                         \
            json_decref(best);                                                \
            best = j_;                                                        \
        } else {                                                              \
            hi = sc_;                                                         \
            json_decref(j_);                                                  \
        }                                                                     \
    } while (0)
    PROBE(1.0);
    for (int i = 0; i < 6 && hi == 0; i++)
        PROBE(lo * 2);
    for (int i = 0; i < 6 && lo == 0; i++)
        PROBE(hi / 2);
    for (int i = 0; i < 4 && lo > 0 && hi > 0; i++)
        PROBE((lo + hi) / 2);
#undef PROBE
    if (!best)
        snprintf(d->error, sizeof d->error, "meets the SLOs at no load tried");
    d->j = best;
    d->load_scale = lo;
    return;
failed:
    snprintf(d->error, sizeof d->error, "%s", e.msg);
    json_decref(best);
}

/* Deployments run on all cores; each comes back as {"scale", "error",
 * "run"} text. */
typedef struct deploy_ctx {
    const char *file;
    const char *const *sets;
    int nsets, gpus;
    const load *ld;
    deploy *d;
    int n, next;
} deploy_ctx;

static long deploy_next(void *ctx)
{
    deploy_ctx *c = ctx;
    return c->next < c->n ? c->next++ : -1;
}

static char *deploy_job(long i, void *ctx)
{
    deploy_ctx *c = ctx;
    deploy *d = &c->d[i];
    run_deploy(c->file, c->sets, c->nsets, c->gpus, c->ld, d);
    json_t *j = json_object();
    json_object_set_new(j, "scale", json_real(d->load_scale));
    json_object_set_new(j, "error", json_string(d->error));
    if (d->j)
        json_object_set(j, "run", d->j);
    char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER |
                                JSON_REAL_PRECISION(17));
    json_decref(j);
    json_decref(d->j);
    d->j = NULL;
    return t;
}

static int deploy_done(long i, const char *text, void *ctx)
{
    deploy_ctx *c = ctx;
    deploy *d = &c->d[i];
    json_t *j = json_loads(text, 0, NULL);
    if (!j)
        return -1;
    d->load_scale = json_number_value(json_object_get(j, "scale"));
    snprintf(d->error, sizeof d->error, "%s",
             json_string_value(json_object_get(j, "error")));
    d->j = json_incref(json_object_get(j, "run"));
    json_decref(j);
    return 0;
}

static int serve_candidates(const cmd_env *v, int gpus, deploy **out, int *nout,
                            llm_err *e)
{
    int cap = 256, n = 0;
    deploy *d = calloc((size_t)cap, sizeof *d);
    if (!d)
        return err_set(e, "out of memory");
    int per = v->t->gpus_per_node;
    for (int tp = 1; tp <= per && tp <= gpus; tp *= 2) {
        if (v->m.heads % tp)
            continue;
        for (int pp = 1; pp <= 8 && tp * pp <= gpus; pp *= 2)
            if (v->m.layers % pp == 0 && n < cap)
                d[n++] = (deploy){.tp = tp, .pp = pp,
                                  .replicas = gpus / (tp * pp)};
        for (int dtp = 1; dtp <= per && dtp < gpus; dtp *= 2) {
            if (v->m.heads % dtp)
                continue;
            for (int pr = 1; pr * tp < gpus; pr++) {
                int left = gpus - pr * tp;
                if (left % dtp == 0 && n < cap)
                    d[n++] = (deploy){.ptp = tp, .pr = pr, .dtp = dtp,
                                      .dr = left / dtp};
            }
        }
    }
    *out = d;
    *nout = n;
    return 0;
}

/* Every deployment of the serving experiment on `gpus` GPUs (0: the
 * file's, else the cluster's), simulated and sorted best first. */
static int search_serving(const char *file, const char *const *sets,
                          int nsets, int gpus_opt, cmd_env *v, deploy **dout,
                          int *nout, int *gpus_out, llm_err *e)
{
    cfg_serving x;
    cfg_serving_defaults(&x);
    if (cfg_load_serving(file, sets, nsets, &x, e) ||
        cmd_env_load(v, x.model, x.cluster, x.nodes, &x.net, e))
        return -1;
    int gpus = gpus_opt ? gpus_opt : x.gpus ? x.gpus : v->t->ngpu;
    if (gpus > v->t->ngpu) {
        err_set(e, "--gpus %d: %s has %d", gpus, v->t->name, v->t->ngpu);
        cmd_env_free(v);
        return -1;
    }
    deploy *d = NULL;
    int n = 0;
    if (serve_candidates(v, gpus, &d, &n, e)) {
        cmd_env_free(v);
        return -1;
    }
    load ld = x.trace[0] ? (load){"workload.rate_scale", x.rate_scale}
                         : (load){"workload.rate", x.rate};
    if (!x.trace[0] && x.rate <= 0) {
        free(d);
        cmd_env_free(v);
        return err_set(e, "%s: search needs a load to scale (workload.rate "
                          "or a trace)", file);
    }
    deploy_ctx dc = {file, sets, nsets, gpus, &ld, d, n, 0};
    if (par_run(par_cpus(), deploy_next, deploy_job, deploy_done, &dc, e)) {
        free(d);
        cmd_env_free(v);
        return -1;
    }
    qsort(d, (size_t)n, sizeof *d, by_goodput);
    *dout = d;
    *nout = n;
    *gpus_out = gpus;
    return 0;
}

int cmd_search_serve(const char *file, const char *const *sets, int nsets,
                     int gpus, json_t **best, char *name, size_t len,
                     llm_err *e)
{
    cmd_env v;
    deploy *d;
    int n, g;
    *best = NULL;
    if (search_serving(file, sets, nsets, gpus, &v, &d, &n, &g, e))
        return -1;
    if (n > 0 && d[0].j) {
        *best = json_incref(d[0].j);
        deploy_name(&d[0], name, len);
    }
    for (int i = 0; i < n; i++)
        json_decref(d[i].j);
    free(d);
    cmd_env_free(&v);
    return *best ? 0 : err_set(e, "no deployment of %s fits %d GPUs", file, g);
}

static int run_serve(const qopts *o, llm_err *e)
{
    cmd_env v;
    deploy *d = NULL;
    int n = 0, gpus = 0;
    if (search_serving(o->file, o->sets, o->nsets, o->gpus, &v, &d, &n, &gpus,
                       e))
        return EXIT_BAD_INPUT;
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += d[i].j != NULL;
    char why[600] = "";
    char a[96], b[96];
    if (ok > 0) {
        deploy_name(&d[0], a, sizeof a);
        if (ok > 1) {
            deploy_name(&d[1], b, sizeof b);
            snprintf(why, sizeof why,
                     "Why: %s serves %.2f requests/s within the SLOs (%.0f%% "
                     "attainment) against %.2f for %s; p90 TTFT %.0f vs %.0f "
                     "ms, p90 TPOT %.1f vs %.1f ms.",
                     a, jnum(d[0].j, "goodput_requests_per_s", NULL),
                     100 * jnum(d[0].j, "slo_attainment", NULL),
                     jnum(d[1].j, "goodput_requests_per_s", NULL), b,
                     1e3 * jnum(d[0].j, "ttft_s", "p90"),
                     1e3 * jnum(d[1].j, "ttft_s", "p90"),
                     1e3 * jnum(d[0].j, "tpot_s", "p90"),
                     1e3 * jnum(d[1].j, "tpot_s", "p90"));
        } else {
            snprintf(why, sizeof why, "Why: %s is the only deployment that "
                                      "fits.", a);
        }
    }
    json_t *arr = o->json ? json_array() : NULL;
    if (!o->json) {
        printf("Serving search: %s on %d x %s (%s), %d deployments "
               "simulated, %d fit\n\n",
               v.m.display, gpus, v.t->gpu->name, v.t->name, n, ok);
        printf("  %-4s %-34s %10s %11s %10s %10s %8s\n", "rank", "deployment",
               "goodput/s", "tokens/s", "p90 TTFT", "p90 TPOT", "SLO met");
    }
    for (int i = 0; i < n && i < o->top && d[i].j; i++) {
        deploy_name(&d[i], a, sizeof a);
        if (arr) {
            json_t *c = json_object();
            json_object_set_new(c, "rank", json_integer(i + 1));
            json_object_set_new(c, "deployment", json_string(a));
            json_object_set_new(c, "goodput_requests_per_s", json_real(
                jnum(d[i].j, "goodput_requests_per_s", NULL)));
            json_object_set_new(c, "throughput_tokens_per_s", json_real(
                jnum(d[i].j, "throughput_tokens_per_s", NULL)));
            json_object_set_new(c, "ttft_p90_s",
                                json_real(jnum(d[i].j, "ttft_s", "p90")));
            json_object_set_new(c, "tpot_p90_s",
                                json_real(jnum(d[i].j, "tpot_s", "p90")));
            json_object_set_new(c, "slo_attainment",
                                json_real(jnum(d[i].j, "slo_attainment", NULL)));
            json_array_append_new(arr, c);
        } else {
            printf("  %-4d %-34s %10.2f %11.0f %8.0fms %8.1fms %7.0f%%\n",
                   i + 1, a, jnum(d[i].j, "goodput_requests_per_s", NULL),
                   jnum(d[i].j, "throughput_tokens_per_s", NULL),
                   1e3 * jnum(d[i].j, "ttft_s", "p90"),
                   1e3 * jnum(d[i].j, "tpot_s", "p90"),
                   100 * jnum(d[i].j, "slo_attainment", NULL));
        }
    }
    if (arr) {
        json_t *j = json_object();
        json_object_set_new(j, "candidates", arr);
        json_object_set_new(j, "why", json_string(why));
        cmd_print_json(j);
    } else {
        printf("\n%s\n", ok ? why : "No deployment fits these GPUs.");
    }
    for (int i = 0; i < n; i++)
        json_decref(d[i].j);
    free(d);
    cmd_env_free(&v);
    return ok ? EXIT_OK : EXIT_NO_FIT;
}

static int run(int argc, char **argv, llm_err *e)
{
    qopts o = {.top = 10, .simulate = 24};
    if (parse(argc, argv, &o, e))
        return EXIT_BAD_INPUT;
    int rc = 0;
    if (o.file && is_serving_file(o.file, e, &rc))
        return run_serve(&o, e);
    if (rc)
        return EXIT_BAD_INPUT;
    return run_train(&o, e);
}

const cmd_def cmd_search_def = {
    "search", "the fastest parallel plans (training) or deployment (serving)",
    usage, run};
