/* llmsim serve — a serving deployment simulated request by request. */
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "cli/cmd.h"
#include "report/rserve.h"

static const char usage[] =
    "usage: llmsim serve EXPERIMENT.cfg [--set KEY=VALUE ...] [settings]\n"
    "           [--csv FILE] [--trace FILE.json] [--json] [--force]\n"
    "       llmsim serve --model M --cluster C --tp N [--replicas N]\n"
    "           (--trace FILE.csv | --rate R --prompt-len L --output-len L)\n\n"    "Simulates a serving deployment request by request: arrivals from a trace\n"
    "in the Azure LLM inference format (TIMESTAMP,ContextTokens,\n"
    "GeneratedTokens) or drawn from a Poisson, gamma (--cv) or burst process\n"
    "with length distributions (512, uniform:LO:HI, lognormal:MEAN:SIGMA,\n"
    "empirical:FILE), a router, and replicas of TP x PP GPUs running vLLM's\n"
    "engine loop: iteration-level continuous batching under --max-num-seqs\n"
    "and a token budget, chunked prefill (--chunk tokens per iteration,\n"
    "Sarathi-Serve) or prefill-first (vLLM V0), a paged KV cache sized from\n"
    "the memory model at --gpu-mem-util, and preemption by recompute or swap\n"
    "over PCIe.  Each iteration's time is the cost model's for the batch's\n"
    "exact composition plus the TP all-reduces on the replica's links.\n"
    "--prefill-replicas/--decode-replicas split prefill and decode onto\n"
    "separate GPUs (Splitwise, DistServe): each KV cache moves as flows on\n"
    "the topology (--kv-layerwise: sent layer by layer during the prefill).\n\n"
    "--trace takes a request trace, except that a name ending in .json is the\n"
    "Chrome trace to write (iterations per replica and stage, KV-cache use,\n"
    "KV transfers per link; open it in Perfetto).  --csv writes one row per\n"
    "request.  SLOs are in milliseconds; goodput counts requests meeting both.\n"
    "A run the simulator could not finish in 2 minutes or 8 GiB (estimated\n"
    "from the request count: drawn ones before they are drawn, a trace's once\n"
    "it is read) is refused; --force runs it anyway.\n\n"
    "JSON keys: ttft_s, tpot_s, itl_s, e2e_s (each {mean, p50, p90, p99}),\n"
    "throughput_tokens_per_s (output; _per_gpu: over every GPU serving),\n"
    "throughput_requests_per_s,\n"
    "total_tokens_per_s, goodput_requests_per_s, slo_attainment,\n"
    "requests_completed, requests_rejected, preemptions, makespan_s,\n"
    "kv_cache, pools, energy_j, energy_per_token_j, avg_power_w, kv_transfer,\n"
    "busiest_links, events, warmup_requests, requests_measured, measured_s,\n"
    "engine, host_cpu and host_speed (the node's CPU\n"
    "and its speed at the engine's host work, calib/host-cpus.tsv).\n";

enum { S_CSV = 1, S_JSON, S_CHROME, S_FORCE };

typedef struct sopts {
    const char *csv, *chrome;
    int json;
    exp_run_opts run;
} sopts;

static int parse_one(void *ctx, int id, const char *v, llm_err *e)
{
    sopts *o = ctx;
    (void)e;
    switch (id) {
    case S_CSV: o->csv = v; return 0;
    case S_JSON: o->json = 1; return 0;
    case S_CHROME: o->chrome = v; return 0;
    case S_FORCE: o->run.force = true; return 0;
    }
    return -1;
}

static const struct option opts[] = {
    {"csv", 1, 0, S_CSV}, {"json", 0, 0, S_JSON},
    {"chrome-trace", 1, 0, S_CHROME}, {"force", 0, 0, S_FORCE},
    {0, 0, 0, 0},
};

/* --trace FILE.json is the Chrome trace to write, not a request trace. */
static void take_chrome(cmd_args *a, sopts *o)
{
    const setting *tr = settings_by_key(EXP_SERVE, "workload.trace");
    int n = 0;
    for (int i = 0; i < a->nflags; i++) {
        if (a->flag[i] == tr && util_ends_with(a->value[i], ".json")) {
            o->chrome = a->value[i];
            continue;
        }
        a->flag[n] = a->flag[i];
        a->value[n++] = a->value[i];
    }
    a->nflags = n;
}

static int report(const sopts *o, const exp_serve_out *out, llm_err *e)
{
    if (o->csv && rserve_csv(o->csv, out, e))
        return -1;
    if (o->json)
        cmd_print_json(rserve_json(out));
    else
        rserve_text(stdout, out);
    return 0;
}

static int run(int argc, char **argv, llm_err *e)
{
    sopts o = {0};
    cmd_args a;
    static exp_serve x;
    exp_serve_defaults(&x);
    if (cmd_parse("serve", EXP_SERVE, -1, NULL, argc, argv, opts, parse_one,
                  &o, &a, e))
        return EXIT_BAD_INPUT;
    take_chrome(&a, &o);
    if (cmd_load_exp(EXP_SERVE, &x, &a, e))
        return EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    rserve_trace tr = {0};
    if (o.chrome && rserve_trace_open(&tr, o.chrome, e))
        return EXIT_BAD_INPUT;
    o.run.events = o.chrome ? &tr.events : NULL;
    o.run.per_request = o.csv != NULL || o.chrome != NULL;
    exp_serve_out out;
    int rc = exp_serve_run(&x, &o.run, cfg_loader(), &out, e);
    if (rc) {
        rserve_trace_abort(&tr);
        if (rc != EXP_NO_FIT)
            return EXIT_BAD_INPUT;
        /* main prints bad input only: this is the other kind */
        fprintf(stderr, "llmsim serve: %s\n", e->msg);
        return EXIT_NO_FIT;
    }
    if (o.chrome)
        rserve_trace_requests(&tr, &out);
    rc = (o.chrome && rserve_trace_finish(&tr, e)) || report(&o, &out, e)
             ? EXIT_BAD_INPUT
             : EXIT_OK;
    exp_serve_out_free(&out);
    return rc;
}

const cmd_def cmd_serve_def = {
    "serve", "a serving deployment simulated request by request", usage, run,
    1u << EXP_SERVE, NULL};
