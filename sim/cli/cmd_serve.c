/* llmsim serve — a serving deployment simulated request by request. */
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "decide/budget.h"
#include "cfg/cfg.h"
#include "cli/cmd.h"
#include "serve/serve.h"
#include "base/util.h"
#include "serve/wl.h"

static const char usage[] =
    "usage: llmsim serve EXPERIMENT.cfg [--set key=value ...] [options]\n"
    "       llmsim serve --model M --cluster C [--nodes N] [--gpus N]\n"
    "           --tp N [--pp N] [--replicas N]\n"
    "           (--trace FILE.csv [--rate-scale X] [--requests N] |\n"
    "            --rate R --prompt-len L --output-len L [--requests N]\n"
    "            [--arrival poisson|gamma|burst|offline] [--cv X] [--burst N]\n"
    "            [--seed N])\n"
    "           [--max-num-seqs N] [--max-batched-tokens N] [--chunk N]\n"
    "           [--policy chunked|prefill-first] [--block-size N]\n"
    "           [--gpu-mem-util X] [--preemption recompute|swap]\n"
    "           [--swap-space-gib X] [--router round-robin|least-outstanding|\n"
    "            shortest-queue] [--dtype fp16|bf16|fp8|int8|int4]\n"
    "           [--kv-dtype fp16|fp8] [--no-flash-attn]\n"
    "           [--iteration-overhead-ms X]\n"
    "           [--prefill-replicas N --decode-replicas N [--prefill-tp N]\n"
    "            [--prefill-pp N] [--decode-tp N] [--decode-pp N]\n"
    "            [--kv-layerwise]]\n"
    "           [--slo-ttft MS] [--slo-tpot MS]\n"
    "           [--csv FILE] [--trace FILE.json] [--json] [--force]\n\n"
    "Simulates a serving deployment request by request: arrivals from a trace\n"
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
    "busiest_links, events.\n";

enum {
    S_MODEL = 500, S_CLUSTER, S_NODES, S_GPUS, S_TP, S_PP, S_REPLICAS,
    S_TRACE, S_RATE_SCALE, S_REQUESTS, S_RATE, S_PROMPT, S_OUTPUT, S_ARRIVAL,
    S_CV, S_BURST, S_SEED, S_MAXSEQS, S_MAXTOK, S_CHUNK, S_POLICY, S_BLOCK,
    S_MEMUTIL, S_PREEMPT, S_SWAP, S_ROUTER, S_DTYPE, S_KVDTYPE, S_NOFA,
    S_OVERHEAD, S_PREPL, S_DECREPL, S_PRETP, S_PREPP, S_DECTP, S_DECPP,
    S_LAYERWISE, S_SLO_TTFT, S_SLO_TPOT, S_CSV, S_JSON, S_SET, S_CHROME,
    S_FORCE
};

typedef struct sopts {
    cfg_serving x;
    const char *file, *csv, *chrome;
    const char *sets[64];
    int nsets, json, force;
} sopts;

static int str_opt(const char *opt, const char *v, char *out, size_t len,
                   llm_err *e)
{
    if (strlen(v) >= len)
        return err_set(e, "%s: \"%.40s...\" is too long (at most %zu "
                          "characters)", opt, v, len - 1);
    snprintf(out, len, "%s", v);
    return 0;
}

static int ms_opt(const char *opt, const char *v, double *out_s, llm_err *e)
{
    double ms;
    if (util_parse_double(opt, v, 0, 1e9, &ms, e))
        return -1;
    *out_s = ms * 1e-3;
    return 0;
}

static int parse_pool(sopts *o, int ch, const char *v, llm_err *e)
{
    cfg_serving *x = &o->x;
    switch (ch) {
    case S_PREPL: return cmd_int_opt("--prefill-replicas", v, 1, 1 << 16, &x->prefill_replicas, e);
    case S_DECREPL: return cmd_int_opt("--decode-replicas", v, 1, 1 << 16, &x->decode_replicas, e);
    case S_PRETP: return cmd_int_opt("--prefill-tp", v, 1, 4096, &x->prefill_tp, e);
    case S_PREPP: return cmd_int_opt("--prefill-pp", v, 1, 64, &x->prefill_pp, e);
    case S_DECTP: return cmd_int_opt("--decode-tp", v, 1, 4096, &x->decode_tp, e);
    case S_DECPP: return cmd_int_opt("--decode-pp", v, 1, 64, &x->decode_pp, e);
    case S_LAYERWISE: x->p.kv_layerwise = true; return 0;
    }
    return -1;
}

static int parse_engine(sopts *o, int ch, const char *v, llm_err *e)
{
    serve_params *p = &o->x.p;
    double gib;
    int k;
    switch (ch) {
    case S_MAXSEQS: return cmd_int_opt("--max-num-seqs", v, 1, 1 << 20, &p->max_num_seqs, e);
    case S_MAXTOK: return cmd_int_opt("--max-batched-tokens", v, 1, 1 << 22, &p->max_batched_tokens, e);
    case S_CHUNK: return cmd_int_opt("--chunk", v, 0, 1 << 22, &p->chunk, e);
    case S_BLOCK: return cmd_int_opt("--block-size", v, 1, 4096, &p->block_size, e);
    case S_POLICY: return cmd_pick("--policy", v, serve_policy_names, SERVE_POLICIES, &p->policy, e);
    case S_ROUTER: return cmd_pick("--router", v, serve_router_names, SERVE_ROUTERS, &p->router, e);
    case S_MEMUTIL: return util_parse_double("--gpu-mem-util", v, 0.01, 1, &p->gpu_mem_util, e);
    case S_PREEMPT:
        if (cmd_pick("--preemption", v, serve_preempt_names, PREEMPT_COUNT, &k, e))
            return -1;
        p->preempt = (serve_preempt)k;
        return 0;
    case S_SWAP:
        if (util_parse_double("--swap-space-gib", v, 0, 1 << 20, &gib, e))
            return -1;
        p->swap_space_bytes = gib * GiB;
        return 0;
    case S_DTYPE: return str_opt("--dtype", v, o->x.dtype, sizeof o->x.dtype, e);
    case S_KVDTYPE: return str_opt("--kv-dtype", v, o->x.kv_dtype, sizeof o->x.kv_dtype, e);
    case S_NOFA: p->flash = false; return 0;
    case S_OVERHEAD: return ms_opt("--iteration-overhead-ms", v, &p->iteration_overhead_s, e);
    case S_SLO_TTFT: return ms_opt("--slo-ttft", v, &p->slo_ttft_s, e);
    case S_SLO_TPOT: return ms_opt("--slo-tpot", v, &p->slo_tpot_s, e);
    }
    return parse_pool(o, ch, v, e);
}

static int parse_one(void *ctx, int ch, const char *v, llm_err *e)
{
    sopts *o = ctx;
    cfg_serving *x = &o->x;
    long l;
    switch (ch) {
    case S_MODEL: return str_opt("--model", v, x->model, sizeof x->model, e);
    case S_CLUSTER: return str_opt("--cluster", v, x->cluster, sizeof x->cluster, e);
    case S_NODES: return cmd_int_opt("--nodes", v, 1, 1 << 20, &x->nodes, e);
    case S_GPUS: return cmd_int_opt("--gpus", v, 1, 1 << 24, &x->gpus, e);
    case S_TP: return cmd_int_opt("--tp", v, 1, 4096, &x->tp, e);
    case S_PP: return cmd_int_opt("--pp", v, 1, 64, &x->pp, e);
    case S_REPLICAS: return cmd_int_opt("--replicas", v, 1, 1 << 16, &x->replicas, e);
    case S_TRACE:
        if (util_ends_with(v, ".json")) {
            o->chrome = v;
            return 0;
        }
        return str_opt("--trace", v, x->trace, sizeof x->trace, e);
    case S_CHROME: o->chrome = v; return 0;
    case S_RATE_SCALE: return util_parse_double("--rate-scale", v, 1e-9, 1e9, &x->rate_scale, e);
    case S_REQUESTS: return cmd_int_opt("--requests", v, 1, 1 << 30, &x->requests, e);
    case S_RATE: return util_parse_double("--rate", v, 1e-9, 1e9, &x->rate, e);
    case S_PROMPT: return str_opt("--prompt-len", v, x->prompt_len, sizeof x->prompt_len, e);
    case S_OUTPUT: return str_opt("--output-len", v, x->output_len, sizeof x->output_len, e);
    case S_ARRIVAL: return str_opt("--arrival", v, x->arrival, sizeof x->arrival, e);
    case S_CV: return util_parse_double("--cv", v, 1e-6, 1e6, &x->cv, e);
    case S_BURST: return cmd_int_opt("--burst", v, 1, 1 << 30, &x->burst, e);
    case S_SEED:
        if (util_parse_int("--seed", v, 0, 4294967295L, &l, e))
            return -1;
        x->seed = l;
        return 0;
    case S_CSV: o->csv = v; return 0;
    case S_JSON: o->json = 1; return 0;
    case S_FORCE: o->force = 1; return 0;
    case S_SET:
        if (o->nsets >= 64)
            return err_set(e, "--set: at most 64");
        o->sets[o->nsets++] = v;
        return 0;
    }
    return parse_engine(o, ch, v, e);
}

static int parse(int argc, char **argv, sopts *o, llm_err *e)
{
    static const struct option opts[] = {
        {"model", 1, 0, S_MODEL}, {"cluster", 1, 0, S_CLUSTER},
        {"nodes", 1, 0, S_NODES}, {"gpus", 1, 0, S_GPUS}, {"tp", 1, 0, S_TP},
        {"pp", 1, 0, S_PP}, {"replicas", 1, 0, S_REPLICAS},
        {"trace", 1, 0, S_TRACE}, {"chrome-trace", 1, 0, S_CHROME},
        {"rate-scale", 1, 0, S_RATE_SCALE}, {"requests", 1, 0, S_REQUESTS},
        {"rate", 1, 0, S_RATE}, {"prompt-len", 1, 0, S_PROMPT},
        {"output-len", 1, 0, S_OUTPUT}, {"arrival", 1, 0, S_ARRIVAL},
        {"cv", 1, 0, S_CV}, {"burst", 1, 0, S_BURST}, {"seed", 1, 0, S_SEED},
        {"max-num-seqs", 1, 0, S_MAXSEQS},
        {"max-batched-tokens", 1, 0, S_MAXTOK}, {"chunk", 1, 0, S_CHUNK},
        {"policy", 1, 0, S_POLICY}, {"block-size", 1, 0, S_BLOCK},
        {"gpu-mem-util", 1, 0, S_MEMUTIL}, {"preemption", 1, 0, S_PREEMPT},
        {"swap-space-gib", 1, 0, S_SWAP}, {"router", 1, 0, S_ROUTER},
        {"dtype", 1, 0, S_DTYPE}, {"kv-dtype", 1, 0, S_KVDTYPE},
        {"no-flash-attn", 0, 0, S_NOFA},
        {"iteration-overhead-ms", 1, 0, S_OVERHEAD},
        {"prefill-replicas", 1, 0, S_PREPL},
        {"decode-replicas", 1, 0, S_DECREPL},
        {"prefill-tp", 1, 0, S_PRETP}, {"prefill-pp", 1, 0, S_PREPP},
        {"decode-tp", 1, 0, S_DECTP}, {"decode-pp", 1, 0, S_DECPP},
        {"kv-layerwise", 0, 0, S_LAYERWISE}, {"slo-ttft", 1, 0, S_SLO_TTFT},
        {"slo-tpot", 1, 0, S_SLO_TPOT}, {"csv", 1, 0, S_CSV},
        {"json", 0, 0, S_JSON}, {"set", 1, 0, S_SET},
        {"force", 0, 0, S_FORCE}, {0, 0, 0, 0},
    };
    if (cmd_getopt("serve", argc, argv, opts, parse_one, o, e))
        return -1;
    if (optind < argc - 1)
        return err_set(e, "unexpected argument \"%s\"", argv[optind + 1]);
    if (optind == argc - 1)
        o->file = argv[optind];
    return 0;
}

/* ---- resolving the experiment ---------------------------------------- */

static int pick_dtype(const char *opt, const char *v, dtype dflt,
                      const dtype *ok, int nok, dtype *out, llm_err *e)
{
    if (!v[0]) {
        *out = dflt;
        return 0;
    }
    if (dtype_parse(v, out) == 0)
        for (int i = 0; i < nok; i++)
            if (ok[i] == *out)
                return 0;
    char list[128] = "";
    for (int i = 0; i < nok; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                 i ? ", " : "", dtype_name(ok[i]));
    return err_set(e, "%s: unknown value \"%s\" (expected %s)", opt, v, list);
}

/* A relative trace path is taken from the working directory, else from
 * the data directory (where configs/traces/ lives). */
static void resolve_path(const char *in, char *out, size_t len)
{
    snprintf(out, len, "%s", in);
    if (in[0] == '/' || access(in, R_OK) == 0)
        return;
    snprintf(out, len, "%s/%s", cmd_datadir(), in);
    if (access(out, R_OK) != 0)
        snprintf(out, len, "%s", in);
}

static int workload(const cfg_serving *x, const model_spec *m,
                    wl_request **req, int *n, llm_err *e)
{
    if (x->trace[0]) {
        char path[1100];
        resolve_path(x->trace, path, sizeof path);
        return wl_read_trace(path, x->rate_scale, x->requests, req, n, e);
    }
    if (!x->prompt_len[0] || !x->output_len[0])
        return err_set(e, "no workload: give --trace FILE.csv, or --rate R "
                          "--prompt-len L --output-len L (see `llmsim help "
                          "serve`)");
    wl_spec s = {.rate_per_s = x->rate, .cv = x->cv, .burst_size = x->burst,
                 .requests = x->requests > 0 ? x->requests : 1000,
                 .seed = (unsigned long)x->seed};
    if (wl_arrival_parse("--arrival", x->arrival, &s.arrival, e))
        return -1;
    if (s.arrival != WL_OFFLINE && x->rate <= 0)
        return err_set(e, "--rate: missing (expected requests per second > "
                          "0, or --arrival offline)");
    char pl[1100], ol[1100];
    snprintf(pl, sizeof pl, "%s", x->prompt_len);
    snprintf(ol, sizeof ol, "%s", x->output_len);
    if (strncmp(pl, "empirical:", 10) == 0)
        resolve_path(x->prompt_len + 10, pl + 10, sizeof pl - 10);
    if (strncmp(ol, "empirical:", 10) == 0)
        resolve_path(x->output_len + 10, ol + 10, sizeof ol - 10);
    if (wl_len_parse("--prompt-len", pl, 0, &s.prompt, e))
        return -1;
    if (wl_len_parse("--output-len", ol, 1, &s.output, e)) {
        wl_len_free(&s.prompt);
        return -1;
    }
    s.prompt.max_tokens = m->max_seq;
    s.output.max_tokens = m->max_seq;
    int rc = wl_generate(&s, req, n, e);
    wl_len_free(&s.prompt);
    wl_len_free(&s.output);
    return rc;
}

/* Pools: one colocated pool, or prefill replicas on the first GPUs and
 * decode replicas after them. */
static int pools(const cfg_serving *x, topo *t, serve_input *in, llm_err *e)
{
    int gpus = x->gpus > 0 ? x->gpus : t->ngpu;
    if (gpus > t->ngpu)
        return err_set(e, "--gpus %d: %s has %d GPUs (add nodes with "
                       "--nodes)", gpus, t->name, t->ngpu);
    if ((x->prefill_replicas > 0) != (x->decode_replicas > 0))
        return err_set(e, "--prefill-replicas and --decode-replicas go "
                          "together (a disaggregated deployment needs both)");
    if (x->prefill_replicas > 0) {
        in->npools = 2;
        in->pool[0] = (serve_pool){.tp = x->prefill_tp ? x->prefill_tp : x->tp,
                                   .pp = x->prefill_pp ? x->prefill_pp : x->pp,
                                   .replicas = x->prefill_replicas};
        in->pool[1] = (serve_pool){.tp = x->decode_tp ? x->decode_tp : x->tp,
                                   .pp = x->decode_pp ? x->decode_pp : x->pp,
                                   .replicas = x->decode_replicas};
        in->pool[1].first_gpu = in->pool[0].tp * in->pool[0].pp *
                                in->pool[0].replicas;
    } else {
        in->npools = 1;
        int per = x->tp * x->pp;
        in->pool[0] = (serve_pool){.tp = x->tp, .pp = x->pp,
                                   .replicas = x->replicas > 0 ? x->replicas
                                                               : gpus / per};
        if (in->pool[0].replicas < 1)
            return err_set(e, "TP %d x PP %d needs %d GPUs; %d are given",
                           x->tp, x->pp, per, gpus);
    }
    const serve_pool *last = &in->pool[in->npools - 1];
    int need = last->first_gpu + last->tp * last->pp * last->replicas;
    if (need > gpus)
        return err_set(e, "the replicas need %d GPUs; %d are given%s", need,
                       gpus, x->gpus ? " (--gpus)" : "");
    return 0;
}

/* ---- reports ------------------------------------------------------------ */

static void dist_row(const char *what, const serve_dist *d, double scale)
{
    printf("  %-10s %10.2f %10.2f %10.2f %10.2f\n", what, d->mean * scale,
           d->p50 * scale, d->p90 * scale, d->p99 * scale);
}

static void print_links(const serve_result *r, const topo *t)
{
    if (r->ntop_links == 0)
        return;
    printf("  busiest links      (KV bytes / (achievable bandwidth x "
           "makespan))\n");
    for (int i = 0; i < r->ntop_links; i++) {
        const serve_link_use *u = &r->top_links[i];
        const topo_link *L = &t->link[u->link];
        printf("    %-12s -> %-12s %-8s %9.2f GB  %6.2f%%\n",
               t->dev[L->src].name, t->dev[L->dst].name,
               topo_link_kind_name(L->kind), u->bytes / 1e9,
               100 * u->utilization);
    }
}

static void print_human(const model_spec *m, const topo *t,
                        const serve_input *in, const wl_summary *ws,
                        const char *src, const serve_result *r)
{
    const serve_params *p = &in->p;
    printf("%s (%s) on %s\n", m->display, dtype_name(p->weight_dt), t->name);
    for (int k = 0; k < in->npools; k++) {
        const serve_pool *P = &in->pool[k];
        const serve_pool_result *pr = &r->pool[k];
        printf("  %-8s %d x (TP %d x PP %d) on %s: %d KV blocks of %d tokens "
               "per replica (%.0f tokens), %.2f GiB weights per GPU\n",
               in->npools == 1 ? "serving" : k == 0 ? "prefill" : "decode",
               P->replicas, P->tp, P->pp, P->gpu->name, pr->kv_blocks,
               p->block_size, pr->kv_capacity_tokens, pr->weights_bytes / GiB);
    }
    int budget = p->chunk > 0 && p->chunk < p->max_batched_tokens
                     ? p->chunk : p->max_batched_tokens;
    printf("  scheduler %s (%d-token budget), max %d sequences, router %s, "
           "preemption by %s\n", serve_policy_names[p->policy], budget,
           p->max_num_seqs, serve_router_names[p->router],
           serve_preempt_names[p->preempt]);
    printf("  workload %s: %d requests over %.1f s (%.2f/s); prompt mean %.0f "
           "(p99 %.0f), output mean %.0f (p99 %.0f) tokens\n\n", src, ws->n,
           ws->duration_s, ws->rate_per_s, ws->prompt_mean, ws->prompt_p99,
           ws->output_mean, ws->output_p99);
    printf("  %-10s %10s %10s %10s %10s\n", "", "mean", "p50", "p90", "p99");
    dist_row("TTFT ms", &r->ttft, 1e3);
    dist_row("TPOT ms", &r->tpot, 1e3);
    dist_row("ITL ms", &r->itl, 1e3);
    dist_row("E2E s", &r->e2e, 1);
    printf("\n  completed          %d requests in %.1f s%s", r->requests_completed,
           r->makespan_s, r->requests_rejected ? "" : "\n");
    if (r->requests_rejected)
        printf("; %d rejected (longer than a replica's KV cache)\n",
               r->requests_rejected);
    printf("  throughput         %.1f output tokens/s, %.2f requests/s, %.1f "
           "total tokens/s\n", r->throughput_tokens_per_s,
           r->throughput_requests_per_s, r->total_tokens_per_s);
    if (p->slo_ttft_s > 0 || p->slo_tpot_s > 0)
        printf("  goodput            %.2f requests/s meet TTFT <= %.0f ms and "
               "TPOT <= %.0f ms (%.1f%% of requests)\n",
               r->goodput_requests_per_s, p->slo_ttft_s * 1e3,
               p->slo_tpot_s * 1e3, 100 * r->slo_attainment);
    for (int k = 0; k < in->npools; k++) {
        const serve_pool_result *pr = &r->pool[k];
        printf("  %-18s MFU %.1f%%, MBU %.1f%%, busy %.1f%%, %ld iterations; "
               "KV cache %.1f%% used on average, peak %.1f%%\n",
               in->npools == 1 ? "GPUs" : k == 0 ? "prefill GPUs"
                                                 : "decode GPUs",
               100 * pr->mfu, 100 * pr->mbu, 100 * pr->busy_fraction,
               pr->iterations, 100 * pr->kv_util_mean,
               100 * pr->kv_util_peak);
    }
    printf("  preemptions        %ld (%ld swapped to host)\n", r->preemptions,
           r->swaps_out);
    printf("  energy             %.3f kWh, %.2f J per output token, %.0f W "
           "on average\n", r->energy_j / 3.6e6, r->energy_per_token_j,
           r->avg_power_w);
    if (in->npools == 2)
        printf("  KV transfers       %.2f GB; per request mean %.2f ms, p99 "
               "%.2f ms%s\n", r->kv_transfer_bytes / 1e9,
               r->kv_transfer_s.mean * 1e3, r->kv_transfer_s.p99 * 1e3,
               p->kv_layerwise ? " (layer-wise, overlapped with prefill)" : "");
    print_links(r, t);
    printf("  simulated          %llu events\n", (unsigned long long)r->events);
}

static json_t *dist_json(const serve_dist *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "mean", json_real(d->mean));
    json_object_set_new(o, "p50", json_real(d->p50));
    json_object_set_new(o, "p90", json_real(d->p90));
    json_object_set_new(o, "p99", json_real(d->p99));
    return o;
}

static json_t *pools_json(const serve_input *in, const serve_result *r)
{
    json_t *a = json_array();
    for (int k = 0; k < in->npools; k++) {
        const serve_pool *P = &in->pool[k];
        const serve_pool_result *pr = &r->pool[k];
        json_t *o = json_object();
        json_object_set_new(o, "role", json_string(in->npools == 1 ? "serve"
                                                   : k == 0 ? "prefill"
                                                            : "decode"));
        json_object_set_new(o, "gpu", json_string(P->gpu->name));
        json_object_set_new(o, "tp", json_integer(P->tp));
        json_object_set_new(o, "pp", json_integer(P->pp));
        json_object_set_new(o, "replicas", json_integer(P->replicas));
        json_object_set_new(o, "gpus", json_integer(pr->gpus));
        json_object_set_new(o, "kv_blocks_per_replica", json_integer(pr->kv_blocks));
        json_object_set_new(o, "kv_capacity_tokens", json_real(pr->kv_capacity_tokens));
        json_object_set_new(o, "weights_bytes_per_gpu", json_real(pr->weights_bytes));
        json_object_set_new(o, "mfu", json_real(pr->mfu));
        json_object_set_new(o, "mbu", json_real(pr->mbu));
        json_object_set_new(o, "busy_fraction", json_real(pr->busy_fraction));
        json_object_set_new(o, "iterations", json_integer(pr->iterations));
        json_object_set_new(o, "kv_utilization_mean", json_real(pr->kv_util_mean));
        json_object_set_new(o, "kv_utilization_peak", json_real(pr->kv_util_peak));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *as_json(const serve_input *in, const serve_result *r,
                       const topo *t)
{
    json_t *j = json_object();
    int gpus = 0;
    for (int k = 0; k < in->npools; k++)
        gpus += r->pool[k].gpus;
    json_object_set_new(j, "gpu", json_string(in->pool[0].gpu->name));
    json_object_set_new(j, "gpus", json_integer(gpus));
    json_object_set_new(j, "ttft_s", dist_json(&r->ttft));
    json_object_set_new(j, "tpot_s", dist_json(&r->tpot));
    json_object_set_new(j, "itl_s", dist_json(&r->itl));
    json_object_set_new(j, "e2e_s", dist_json(&r->e2e));
    json_object_set_new(j, "throughput_tokens_per_s", json_real(r->throughput_tokens_per_s));
    json_object_set_new(j, "throughput_tokens_per_s_per_gpu",
                        json_real(gpus ? r->throughput_tokens_per_s / gpus : 0));
    json_object_set_new(j, "throughput_requests_per_s", json_real(r->throughput_requests_per_s));
    json_object_set_new(j, "total_tokens_per_s", json_real(r->total_tokens_per_s));
    json_object_set_new(j, "goodput_requests_per_s", json_real(r->goodput_requests_per_s));
    json_object_set_new(j, "slo_attainment", json_real(r->slo_attainment));
    json_object_set_new(j, "requests_completed", json_integer(r->requests_completed));
    json_object_set_new(j, "requests_rejected", json_integer(r->requests_rejected));
    json_object_set_new(j, "preemptions", json_integer(r->preemptions));
    json_object_set_new(j, "swaps", json_integer(r->swaps_out));
    json_object_set_new(j, "makespan_s", json_real(r->makespan_s));
    json_t *kv = json_object(), *series = json_array();
    for (int i = 0; i < r->kv_series_n; i++) {
        json_t *pt = json_array();
        json_array_append_new(pt, json_real(r->kv_series_t[i]));
        json_array_append_new(pt, json_real(r->kv_series_used[i]));
        json_array_append_new(series, pt);
    }
    json_object_set_new(kv, "utilization_mean", json_real(r->pool[0].kv_util_mean));
    json_object_set_new(kv, "utilization_peak", json_real(r->pool[0].kv_util_peak));
    json_object_set_new(kv, "series_t_s_used", series);
    json_object_set_new(j, "kv_cache", kv);
    json_object_set_new(j, "pools", pools_json(in, r));
    json_object_set_new(j, "energy_j", json_real(r->energy_j));
    json_object_set_new(j, "energy_per_token_j", json_real(r->energy_per_token_j));
    json_object_set_new(j, "avg_power_w", json_real(r->avg_power_w));
    json_t *mv = json_object();
    json_object_set_new(mv, "bytes", json_real(r->kv_transfer_bytes));
    json_object_set_new(mv, "time_s", dist_json(&r->kv_transfer_s));
    json_object_set_new(j, "kv_transfer", mv);
    json_t *links = json_array();
    for (int i = 0; i < r->ntop_links; i++) {
        const serve_link_use *u = &r->top_links[i];
        json_array_append_new(links, cmd_json_link(t, u->link, u->bytes,
                                                   u->utilization));
    }
    json_object_set_new(j, "busiest_links", links);
    json_object_set_new(j, "events", json_integer((json_int_t)r->events));
    return j;
}

/* ---- run ------------------------------------------------------------------ */

static int load_options(int argc, char **argv, sopts *o, llm_err *e)
{
    /* defaults, then the experiment file (with its --set), then options */
    memset(o, 0, sizeof *o);
    cfg_serving_defaults(&o->x);
    if (parse(argc, argv, o, e))
        return -1;
    const char *file = o->file;
    cfg_serving x;
    cfg_serving_defaults(&x);
    if (file && cfg_load_serving(file, o->sets, o->nsets, &x, e))
        return -1;
    if (!file && o->nsets)
        return err_set(e, "--set needs an experiment file");
    memset(o, 0, sizeof *o);
    o->x = x;
    if (parse(argc, argv, o, e))
        return -1;
    if (!o->x.model[0] || !o->x.cluster[0])
        return err_set(e, "--model and --cluster are required (see `llmsim "
                          "help serve`)");
    return 0;
}

static int setup_pools(serve_input *in, topo *t, cost_calib *cc, llm_err *e)
{
    for (int k = 0; k < in->npools; k++) {
        in->pool[k].gpu = t->gpu;
        in->pool[k].cost = cc;
        if (cfg_load_idle_w(cmd_datadir(), t->gpu, &in->pool[k].idle_w, e) ||
            cfg_load_overhead(cmd_datadir(), t->gpu, &in->pool[k].overhead,
                              e))
            return -1;
    }
    return 0;
}

static int resolve(const sopts *o, const model_spec *m, serve_input *in,
                   llm_err *e)
{
    static const dtype wok[] = {DT_FP16, DT_BF16, DT_FP8, DT_INT8, DT_INT4};
    static const dtype kok[] = {DT_FP16, DT_BF16, DT_FP8};
    dtype dflt = m->weight_dtype == DT_BF16 ? DT_BF16 : DT_FP16;
    in->p = o->x.p;
    if (pick_dtype("--dtype", o->x.dtype, dflt, wok, 5, &in->p.weight_dt, e) ||
        pick_dtype("--kv-dtype", o->x.kv_dtype, DT_COUNT, kok, 3,
                   &in->p.kv_dt, e))
        return -1;
    return 0;
}

/* The simulator's cost of the run so far (its cluster, and `requests`
 * requests) against the budget (budget.h).  Drawn requests are counted
 * before they are drawn; a trace's after it is read, whose memory is the
 * file's own size. */
static int check_budget(const sopts *o, budget_est *b, double requests,
                        llm_err *e)
{
    if (b->gpus == 0) {
        cmd_topo_size_t z;
        if (cmd_topo_size(o->x.cluster, o->x.nodes, &z, e))
            return -1;
        b->gpus = (double)z.nodes * z.gpus_per_node;
        budget_topology(z.nodes, z.ndev, z.nlink, b);
    }
    budget_serve(requests, b);
    const char *what = o->file       ? o->file
                       : o->x.trace[0] ? o->x.trace
                                       : "--requests";
    return budget_check(b, what, o->force, e);
}

/* The command; with `out`, its --json object is handed back, not printed. */
static int run_to(int argc, char **argv, json_t **out, llm_err *e)
{
    sopts o;
    if (load_options(argc, argv, &o, e))
        return EXIT_BAD_INPUT;
    model_spec m;
    gpu_catalog cat;
    if (cmd_load_model(o.x.model, &m, e) || cmd_load_catalog(&cat, e)) {
        cmd_blame_file(o.file, "serving", argc, argv, e);
        return EXIT_BAD_INPUT;
    }
    int rc = EXIT_BAD_INPUT;
    wl_request *req = NULL;
    int nreq = 0;
    cost_calib cc;
    coll_calib kc;
    memset(&cc, 0, sizeof cc);
    serve_input in;
    memset(&in, 0, sizeof in);
    topo *t = NULL;
    budget_est b = {0};
    double drawn = o.x.trace[0] ? 0 : o.x.requests > 0 ? o.x.requests : 1000;
    if (check_budget(&o, &b, drawn, e) ||
        !(t = cmd_load_topo_net(o.x.cluster, o.x.nodes, -1, &o.x.net, &cat,
                                e)) ||
        resolve(&o, &m, &in, e) || pools(&o.x, t, &in, e) ||
        cfg_load_cost_calib(cmd_datadir(), &cat, t->gpu, &cc, e) ||
        cfg_load_coll_calib(cmd_datadir(), t, &kc, e) ||
        setup_pools(&in, t, &cc, e) || workload(&o.x, &m, &req, &nreq, e) ||
        (o.x.trace[0] && check_budget(&o, &b, nreq, e))) {
        cmd_blame_file(o.file, "serving", argc, argv, e);
        goto out;
    }
    in.m = &m;
    in.t = t;
    in.coll = &kc;
    in.req = req;
    in.nreq = nreq;
    in.trace_path = o.chrome;
    in.csv_path = o.csv;
    serve_result r;
    if (serve_simulate(&in, &r, e)) {
        if (strstr(e->msg, "does not fit")) {
            /* main prints bad input only: this is the other kind */
            if (!out)
                fprintf(stderr, "llmsim serve: %s\n", e->msg);
            rc = EXIT_NO_FIT;
        } else {
            cmd_blame_file(o.file, "serving", argc, argv, e);
        }
        goto out;
    }
    wl_summary ws;
    wl_summarize(req, nreq, &ws);
    char src[1100];
    if (o.x.trace[0])
        snprintf(src, sizeof src, "%s%s", o.x.trace,
                 o.x.rate_scale != 1 ? " (rate scaled)" : "");
    else
        snprintf(src, sizeof src, "%s arrivals", o.x.arrival);
    if (out)
        *out = as_json(&in, &r, t);
    else if (o.json)
        cmd_print_json(as_json(&in, &r, t));
    else
        print_human(&m, t, &in, &ws, src, &r);
    rc = EXIT_OK;
out:
    free(req);
    cost_calib_free(&cc);
    topo_destroy(t);
    gpu_catalog_free(&cat);
    return rc;
}

static int run(int argc, char **argv, llm_err *e)
{
    return run_to(argc, argv, NULL, e);
}

int cmd_serve_json(int argc, char **argv, json_t **out, llm_err *e)
{
    *out = NULL;
    return run_to(argc, argv, out, e);
}

const cmd_def cmd_serve_def = {
    "serve", "a serving deployment simulated request by request", usage, run};
