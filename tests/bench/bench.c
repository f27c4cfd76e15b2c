/* make bench: speed of the simulator itself, measured (never asserted).
 *
 * hold model: 100,000 pending events; each pop schedules one new event at
 * an exponentially distributed offset (GSL), the classic priority-queue
 * benchmark (Vaucher & Duval 1975; Jones 1986).
 *
 * The ready experiments run as ./llmsim child processes so that their peak
 * resident memory (wait4's ru_maxrss, the largest of the process and the
 * workers it forks) is the simulator's own. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfg/cfg.h"
#include "coll/coll.h"
#include "engine/engine.h"
#include "base/par.h"
#include "serve/serve.h"
#include "decide/search.h"
#include "train/train.h"
#include "serve/wl.h"

typedef struct hold {
    gsl_rng *rng;
    uint64_t left;
} hold;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void on_hold(engine *e, void *ctx, uint64_t arg)
{
    hold *h = ctx;
    (void)arg;
    if (h->left == 0)
        return;
    h->left--;
    int64_t d = (int64_t)gsl_ran_exponential(h->rng, 1000.0);
    engine_after(e, d, on_hold, h, 0);
}

static double bench_hold(uint32_t pending, uint64_t pops)
{
    engine *e = engine_create(pending);
    hold h = {gsl_rng_alloc(gsl_rng_taus2), pops};
    gsl_rng_set(h.rng, 1);
    for (uint32_t i = 0; i < pending; i++)
        engine_at(e, (int64_t)gsl_ran_exponential(h.rng, 1000.0), on_hold, &h,
                  0);
    double t0 = now_s();
    uint64_t n = engine_run(e, INT64_MAX);
    double dt = now_s() - t0;
    gsl_rng_free(h.rng);
    engine_destroy(e);
    return n / dt;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One collective alone on a topology; prints wall time and events/s. */
static void bench_coll(const char *what, topo *t, coll_algo algo, bool full,
                       double bytes)
{
    llm_err e;
    coll_calib cal;
    if (cfg_load_coll_calib(".", t, &cal, &e)) {
        printf("%s: %s\n", what, e.msg);
        return;
    }
    int *ranks = malloc(sizeof(int) * (size_t)t->ngpu);
    for (int i = 0; i < t->ngpu; i++)
        ranks[i] = i;
    coll_req q = {.op = COLL_ALL_REDUCE, .algo = algo, .proto = PROTO_SIMPLE,
                  .ranks = ranks, .n = t->ngpu, .bytes = bytes, .full = full};
    coll_result r;
    double t0 = now_s();
    net_routes *rt = net_routes_create(t);
    int rc = rt ? coll_time_alone(rt, &cal, &q, &r, &e) : err_set(&e, "out of memory");
    net_routes_destroy(rt);
    double dt = now_s() - t0;
    if (rc)
        printf("%s: %s\n", what, e.msg);
    else
        printf("%-58s %8.3f s wall, %9llu events (%.2f M/s); simulated "
               "%.2f ms, busbw %.1f GB/s\n",
               what, dt, (unsigned long long)r.events, r.events / dt / 1e6,
               r.time_s * 1e3,
               bytes / r.time_s / 1e9 * coll_busbw_factor(q.op, q.n));
    free(ranks);
}

static topo *load(const char *name, int nodes, gpu_catalog *cat)
{
    llm_err e;
    char path[256];
    snprintf(path, sizeof path, "topologies/%s.cfg", name);
    topo_nodespec s;
    topo_fabricspec f;
    int n;
    if (cfg_load_topology(path, ".", &s, &n, &f, &e)) {
        printf("%s\n", e.msg);
        return NULL;
    }
    const gpu_spec *g = gpu_find(cat, s.dev[0].model);
    char why[256];
    return topo_build(&s, g, nodes, &f, why, sizeof why);
}

/* 1,024 GPUs behind one ideal switch, the ASTRA-sim comparison case. */
static topo *one_switch(int n, const gpu_catalog *cat)
{
    topo_nodespec s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%d-gpus-one-switch", n);
    s.dev[0] = (topo_devspec){"gpu", DEV_GPU, n, false, "h100-sxm"};
    s.dev[1] = (topo_devspec){"sw", DEV_NVSWITCH, 1, false, ""};
    s.ndev = 2;
    s.link[0] = (topo_linkspec){0, 1, MAP_ALL, LINK_NVLINK, 450e9, 300, 0};
    s.nlink = 1;
    s.p2p = s.gpudirect = true;
    topo_fabricspec f = {FABRIC_SINGLE, 0, 1, 0, false, false};
    char why[256];
    return topo_build(&s, gpu_find(cat, "h100-sxm"), 1, &f, why, sizeof why);
}

/* One training step; prints wall time and events. */
/* One training step, or (search_top > 0) the plan search around p. */
static void bench_train(const char *what, const char *model_name,
                        const char *node, int nodes, plan_train p,
                        int search_top, gpu_catalog *cat)
{
    llm_err e;
    model_spec m;
    char path[256];
    snprintf(path, sizeof path, "models/%s.cfg", model_name);
    if (cfg_load_model(path, &m, &e)) {
        printf("%s: %s\n", what, e.msg);
        return;
    }
    topo *t = load(node, nodes, cat);
    cost_calib cc;
    coll_calib kc;
    mem_overhead ov;
    if (!t || cfg_load_cost_calib(".", cat, t->gpu, &cc, &e) ||
        cfg_load_coll_calib(".", t, &kc, &e) ||
        cfg_load_overhead(".", t->gpu, &ov, &e)) {
        printf("%s: %s\n", what, e.msg);
        topo_destroy(t);
        return;
    }
    net_routes *rt = net_routes_create(t);
    train_input in = {.m = &m, .plan = &p, .t = t, .routes = rt,
                      .gpu = t->gpu, .cost = &cc, .coll = &kc,
                      .overhead = &ov};
    train_result r;
    search_result sr;
    double t0 = now_s();
    int rc = search_top > 0 ? search_train(&in, &p, search_top, par_cpus(), &sr, &e)
                            : train_simulate(&in, &r, &e);
    double dt = now_s() - t0;
    if (rc)
        printf("%s: %s\n", what, e.msg);
    else if (search_top > 0)
        printf("%-58s %8.3f s wall, %ld plans, %ld fit, best %.2f s "
               "(%d cores)\n", what, dt, sr.enumerated, sr.fitted,
               sr.nranked ? sr.ranked[0].r.step_s : 0.0, par_cpus());
    else if (r.memory_peak_bytes > t->gpu->memory_bytes) /* no result */
        printf("%-58s %8.3f s wall, %9llu events; DOES NOT FIT (%.1f of "
               "%.1f GiB)\n", what, dt, (unsigned long long)r.events,
               r.memory_peak_bytes / 1073741824.0,
               t->gpu->memory_bytes / 1073741824.0);
    else
        printf("%-58s %8.3f s wall, %9llu events; step %.2f s, MFU %.1f%%\n",
               what, dt, (unsigned long long)r.events, r.step_s, 100 * r.mfu);
    if (!rc && search_top > 0)
        search_free(&sr);
    cost_calib_free(&cc);
    net_routes_destroy(rt);
    topo_destroy(t);
}

/* Replay of a whole request trace; prints wall time and events/s (an
 * event is an iteration's stage, an arrival or a KV flow). */
static void bench_serve(const char *what, const char *trace, int tp,
                        int replicas, int prefill, gpu_catalog *cat)
{
    llm_err e;
    model_spec m;
    if (cfg_load_model("models/llama-2-70b.cfg", &m, &e)) {
        printf("%s: %s\n", what, e.msg);
        return;
    }
    topo *t = load("dgx-h100", prefill ? 2 : 1, cat);
    cost_calib cc;
    coll_calib kc;
    mem_overhead ov;
    wl_request *req = NULL;
    int n = 0;
    memset(&cc, 0, sizeof cc);
    if (!t || cfg_load_cost_calib(".", cat, t->gpu, &cc, &e) ||
        cfg_load_coll_calib(".", t, &kc, &e) ||
        cfg_load_overhead(".", t->gpu, &ov, &e) ||
        wl_read_trace(trace, 1, 0, &req, &n, &e)) {
        printf("%s: %s\n", what, e.msg);
        cost_calib_free(&cc);
        topo_destroy(t);
        return;
    }
    serve_input in;
    memset(&in, 0, sizeof in);
    in.m = &m, in.t = t, in.coll = &kc, in.req = req, in.nreq = n;
    in.routes = net_routes_create(t);
    in.npools = prefill ? 2 : 1;
    in.pool[0] = (serve_pool){.gpu = t->gpu, .cost = &cc, .tp = tp,
                              .replicas = prefill ? prefill : replicas,
                              .pp = 1, .idle_w = 75, .overhead = ov};
    in.pool[1] = in.pool[0];
    in.pool[1].replicas = replicas;
    in.pool[1].first_gpu = 8;
    in.p = exp_serve_params_defaults();
    in.p.weight_dt = DT_FP16; /* the table leaves it to the model's */
    serve_result r;
    double t0 = now_s();
    int rc = serve_simulate(&in, &r, &e);
    double dt = now_s() - t0;
    if (rc)
        printf("%s: %s\n", what, e.msg);
    else
        printf("%-58s %8.3f s wall, %9llu events (%.2f M/s); %d requests, "
               "p50 TTFT %.0f ms\n", what, dt, (unsigned long long)r.events,
               r.events / dt / 1e6, r.requests_completed, r.ttft.p50 * 1e3);
    free(req);
    cost_calib_free(&cc);
    net_routes_destroy(in.routes);
    topo_destroy(t);
}

/* ./llmsim ARGS... in a child; prints its wall time and peak memory and
 * returns them (wall < 0: it failed). */
static double bench_rss_of(const char *what, char *const argv[],
                           double *mib)
{
    fflush(stdout);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) ||
            !freopen("/dev/null", "w", stderr))
            _exit(127);
        execv("./llmsim", argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
        printf("%-58s could not run ./llmsim\n", what);
        return -1;
    }
    double dt = now_s() - t0;
    *mib = ru.ru_maxrss / 1024.0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("%-58s failed (status %d)\n", what, status);
        return -1;
    }
    printf("%-58s %8.3f s wall, %7.1f MiB peak memory", what, dt, *mib);
    return dt;
}

static void bench_rss(const char *what, char *const argv[])
{
    double mib;
    if (bench_rss_of(what, argv, &mib) >= 0)
        printf("\n");
}

/* bench_rss beside a goal of issue 19 (goal_mib 0: time only) */
static void bench_goal(const char *what, char *const argv[], double goal_s,
                       double goal_mib)
{
    double mib, dt = bench_rss_of(what, argv, &mib);
    if (dt < 0)
        return;
    bool met = dt < goal_s && (goal_mib <= 0 || mib < goal_mib);
    if (goal_mib > 0)
        printf("; goal < %g s, < %g MiB: %s\n", goal_s, goal_mib,
               met ? "met" : "missed");
    else
        printf("; goal < %g s: %s\n", goal_s, met ? "met" : "missed");
}

static void bench_ready(void)
{
    char *gpt3[] = {"llmsim", "train", "configs/train-gpt3-175b-1024xa100.cfg",
                    "--full", NULL};
    char *l70[] = {"llmsim", "train", "configs/train-llama3-70b-64xh100.cfg",
                   NULL};
    char *serve[] = {"llmsim", "serve", "configs/serve-llama2-70b-8xh100.cfg",
                     NULL};
    char *disagg[] = {"llmsim", "serve",
                      "configs/serve-llama2-70b-disagg-2xh100.cfg", NULL};
    char *search[] = {"llmsim", "search",
                      "configs/search-gpt3-175b-1024xa100.cfg", NULL};
    char *compare[] = {"llmsim", "compare",
                       "configs/compare-8xa100-vs-4xh100.cfg", NULL};
    bench_rss("ready: train GPT-3 175B, 1,024 A100, --full", gpt3);
    bench_rss("ready: train Llama-3 70B, 64 H100", l70);
    bench_goal("ready: serve Llama-2 70B, Azure conv. trace, 8 H100", serve,
               0.5, 0);
    bench_rss("ready: serve disaggregated, 2 DGX H100", disagg);
    bench_rss("ready: search GPT-3 175B on 1,024 A100 (largest)", search);
    bench_rss("ready: compare 8 x A100 vs 4 x H100 (make demo)", compare);
    char *autoar[] = {"llmsim", "collective", "--cluster", "dgx-a100",
                      "--nodes", "128", "--gpus", "1024", "--op",
                      "all_reduce", "-b", "1G", "-e", "1G", NULL};
    char *million[] = {"llmsim", "serve", "--model", "llama-2-7b",
                       "--cluster", "dgx-h100", "--gpus", "1", "--tp", "1",
                       "--rate", "50", "--requests", "1000000",
                       "--prompt-len", "100", "--output-len", "100",
                       "--force", NULL};
    bench_goal("collective: 1 GiB all-reduce, --algo auto, 1,024 A100", autoar,
               0.1, 0);
    /* 16,384 A100: auto, and each algorithm alone (tree with the protocol
     * auto picks there) */
    static const char *const algos[] = {"auto", "ring", "tree",
                                        "hierarchical"};
    for (size_t i = 0; i < sizeof algos / sizeof *algos; i++) {
        char *big[] = {"llmsim", "collective", "--cluster", "dgx-a100",
                       "--nodes", "2048", "--op", "all_reduce", "-b", "1G",
                       "-e", "1G", "--algo", (char *)algos[i], "--proto",
                       i == 2 ? "Simple" : "auto", NULL};
        char what[96];
        snprintf(what, sizeof what, "collective: 1 GiB all-reduce, --algo %s, "
                 "16,384 A100", algos[i]);
        bench_goal(what, big, 2, 0);
    }
    bench_goal("serve: 1,000,000 requests of 100 + 100 tokens, 1 H100",
               million, 15, 300);
}

int main(void)
{
    /* first, while this process is small: Linux keeps ru_maxrss across
     * exec, so a child forked later would start at the bench's size */
    bench_ready();
    gpu_catalog cat;
    llm_err e;
    if (cfg_load_gpus("topologies/gpus.cfg", ".", &cat, &e)) {
        printf("%s\n", e.msg);
        return 1;
    }
    topo *t = load("dgx-a100", 128, &cat);
    if (t) {
        bench_coll("1,024 A100 (128 DGX, rail) hierarchical all-reduce 1 GiB",
                   t, ALGO_HIER, true, 1 << 30);
        bench_coll("1,024 A100 (128 DGX, rail) ring all-reduce 1 GiB", t,
                   ALGO_RING, false, 1 << 30);
        bench_coll("  same, every ring step simulated (--full)", t, ALGO_RING,
                   true, 1 << 30);
        topo_destroy(t);
    }
    t = one_switch(1024, &cat);
    if (t) {
        bench_coll("1,024 GPUs behind one switch, ring all-reduce 1 GiB", t,
                   ALGO_RING, false, 1 << 30);
        bench_coll("  same, every ring step simulated (--full)", t, ALGO_RING,
                   true, 1 << 30);
        topo_destroy(t);
    }
    plan_train p;
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 8, p.dp = 16, p.global_batch = 1536, p.seq_len = 2048;
    p.recompute = RECOMPUTE_FULL;
    bench_train("train: GPT-3 175B, 1,024 A100 (TP 8, PP 8, DP 16, 1F1B)",
                "gpt3-175b", "dgx-a100", 128, p, 0, &cat);
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 14, p.dp = 144, p.sp = true, p.global_batch = 2016;
    p.seq_len = 8192, p.schedule = SCHED_INTERLEAVED, p.vpp = 3;
    p.recompute = RECOMPUTE_SELECTIVE, p.zero = 2; /* ZeRO-1: 81.9 GiB */
    bench_train("train: Llama-3.1 405B, 16,128 H100 (TP 8, PP 14 x 3, DP 144)",
                "llama-3.1-405b", "dgx-h100", 2016, p, 0, &cat);
    /* Meta's plan (Llama 3 paper, Table 4 and Sec. 3.3.2): 126 layers in
     * 16 stages of 8 one-layer chunks, the first holding the embedding
     * alone and the last the loss (derived), FSDP without resharding */
    p = exp_plan_train_defaults();
    p.tp = 8, p.pp = 16, p.dp = 128, p.sp = true, p.global_batch = 2048;
    p.schedule = SCHED_INTERLEAVED, p.vpp = 8;
    p.seq_len = 8192, p.recompute = RECOMPUTE_NONE, p.zero = 2;
    bench_train("train: Llama-3.1 405B as Meta ran it, 16,384 H100 (PP 16 x 8)",
                "llama-3.1-405b", "dgx-h100", 2048, p, 0, &cat);
    /* all 16,384: 126 layers split evenly only in 1, 2, 3, 6, 7, ...
     * stages, so context parallelism takes the other factor of two */
    p = exp_plan_train_defaults();
    p.tp = 8, p.cp = 2, p.pp = 2, p.dp = 512, p.sp = true;
    p.global_batch = 2048, p.seq_len = 8192;
    p.recompute = RECOMPUTE_FULL, p.zero = 2; /* selective, ZeRO-1: 133 GiB */
    bench_train("train: Llama-3.1 405B, 16,384 H100 (TP 8, CP 2, PP 2, DP 512)",
                "llama-3.1-405b", "dgx-h100", 2048, p, 0, &cat);
    p = exp_plan_train_defaults();
    p.global_batch = 256, p.seq_len = 8192;
    bench_train("search: Llama-3 70B, 64 H100, 256 x 8192 tokens",
                "llama-3-70b", "dgx-h100", 8, p, 24, &cat);
    p = exp_plan_train_defaults();
    p.global_batch = 1536, p.seq_len = 2048;
    bench_train("search: GPT-3 175B, 1,024 A100, 1536 x 2048 tokens",
                "gpt3-175b", "dgx-a100", 128, p, 24, &cat);
    bench_serve("serve: Azure conv. trace (19,366 req), 70B, 8 H100 TP 8", "configs/traces/azure-llm-2023-conv.csv",
                8, 1, 0, &cat);
    bench_serve("serve: the same, 2 replicas of TP 4",
                "configs/traces/azure-llm-2023-conv.csv", 4, 2, 0, &cat);
    bench_serve("serve: Azure coding trace, disaggregated on 2 DGX H100",
                "configs/traces/azure-llm-2023-code.csv", 8, 1, 1, &cat);
    gpu_catalog_free(&cat);

    /* three runs, median reported: a shared VM is noisy */
    double r[3];
    for (int i = 0; i < 3; i++)
        r[i] = bench_hold(100000, 10000000);
    qsort(r, 3, sizeof r[0], cmp_double);
    printf("hold model (100,000 pending, exponential offsets, GSL taus2): "
           "%.2f M events/s median of 3 (%.2f .. %.2f)\n",
           r[1] / 1e6, r[0] / 1e6, r[2] / 1e6);
    return 0;
}
