/* llmsim search — the fastest parallel plans of a training job, and the
 * best deployment of a serving one under its SLOs. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/par.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "decide/deploy.h"
#include "decide/search.h"
#include "report/rsearch.h"

static const char usage[] =
    "usage: llmsim search EXPERIMENT.cfg [--set KEY=VALUE ...] [settings]\n"
    "           [--top K] [--simulate N] [--json]\n"
    "       llmsim search --model M --cluster C --global-batch N --seq-len N\n"
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
    "are kept and its tp/pp/dp/... are what is searched; the training\n"
    "settings below may be given as flags.\n\n"
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

enum { Q_TOP = 1, Q_SIM, Q_JSON };

typedef struct qopts {
    int top, simulate;
    bool json;
} qopts;

static int parse_one(void *ctx, int id, const char *v, llm_err *e)
{
    qopts *o = ctx;
    switch (id) {
    case Q_TOP: return cmd_int_opt("--top", v, 1, 1000, &o->top, e);
    case Q_SIM: return cmd_int_opt("--simulate", v, 1, 100000, &o->simulate, e);
    case Q_JSON: o->json = true; return 0;
    }
    return -1;
}

static const struct option opts[] = {
    {"top", 1, 0, Q_TOP}, {"simulate", 1, 0, Q_SIM}, {"json", 0, 0, Q_JSON},
    {0, 0, 0, 0},
};

static double since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) +
           1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static int run_train(const qopts *o, const cmd_args *a, llm_err *e)
{
    static exp_train x;
    exp_train_defaults(&x);
    if (cmd_load_exp(EXP_TRAIN, &x, a, e))
        return EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    exp_env v;
    search_result s;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (search_train_exp(&x, cfg_loader(), o->simulate, par_cpus(), &v, &s,
                         e))
        return EXIT_BAD_INPUT;
    /* wall time on stderr: stdout stays byte-identical run to run */
    fprintf(stderr, "search: %ld plans in %.2f s\n", s.enumerated, since(&t0));
    char why[1200];
    rsearch_train_why(&s, &v, why, sizeof why);
    if (o->json)
        cmd_print_json(rsearch_train_json(&v, &s, o->top, why));
    else
        rsearch_train_text(stdout, &x, &v, &s, o->top, why);
    int rc = s.nranked ? EXIT_OK : EXIT_NO_FIT;
    search_free(&s);
    exp_env_free(&v);
    return rc;
}

static int run_serve(const qopts *o, const cmd_args *a, llm_err *e)
{
    static exp_serve x;
    exp_serve_defaults(&x);
    if (cmd_load_exp(EXP_SERVE, &x, a, e))
        return EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    /* --gpus is the GPUs to search over, not the experiment's */
    int gpus = x.h.src[settings_index(settings_by_key(EXP_SERVE, "gpus"))].how ==
                       SRC_FLAG
                   ? x.gpus
                   : 0;
    exp_env v;
    deploy_result d;
    if (deploy_search(&x, cfg_loader(), gpus, par_cpus(), &v, &d, e))
        return EXIT_BAD_INPUT;
    if (o->json)
        cmd_print_json(rsearch_serve_json(&d, o->top));
    else
        rsearch_serve_text(stdout, &v, &d, o->top);
    int rc = d.ok ? EXIT_OK : EXIT_NO_FIT;
    deploy_free(&d);
    exp_env_free(&v);
    return rc;
}

static int run(int argc, char **argv, llm_err *e)
{
    qopts o = {.top = 10, .simulate = 24};
    cmd_args a;
    /* the file says which search it is, and the flags are its kind's:
     * parsed as training first, as serving when the file is a serving
     * experiment (or only serving accepts the flags) */
    exp_kind k = EXP_TRAIN;
    llm_err te = {{0}};
    int bad = cmd_parse("search", EXP_TRAIN, -1, NULL, argc, argv, opts,
                        parse_one, &o, &a, &te);
    if (bad || a.file) {
        cmd_args sa;
        llm_err se = {{0}};
        qopts so = o;
        if (cmd_parse("search", EXP_SERVE, -1, NULL, argc, argv, opts,
                      parse_one, &so, &sa, &se) == 0 && sa.file) {
            if (cfg_exp_kind(sa.file, &k, e))
                return EXIT_BAD_INPUT;
            if (k == EXP_SERVE) {
                a = sa;
                o = so;
                bad = 0;
            }
        }
    }
    if (bad)
        return err_set(e, "%s", te.msg), EXIT_BAD_INPUT;
    return k == EXP_SERVE ? run_serve(&o, &a, e) : run_train(&o, &a, e);
}

const cmd_def cmd_search_def = {
    "search", "the fastest parallel plans (training) or deployment (serving)",
    usage, run, 1u << EXP_TRAIN, NULL};
