/* llmsim train — one training step of a parallel plan, simulated. */
#include <getopt.h>
#include <string.h>

#include "cfg/cfg.h"
#include "decide/budget.h"
#include "cli/cmd.h"
#include "train/train.h"
#include "base/util.h"

static const char usage[] =
    "usage: llmsim train EXPERIMENT.cfg [--set key=value ...] [options]\n"
    "       llmsim train --model M --cluster C [--nodes N] --tp N --pp N --dp N\n"
    "           [--cp N] [--ep N] [--sp] --micro-batch N --global-batch N\n"
    "           --seq-len N [--recompute none|selective|full] [--zero 0..3]\n"
    "           [--schedule gpipe|1f1b|interleaved] [--vpp N]\n"
    "           [--precision bf16|fp16|fp8|fp32] [--optimizer adamw|...]\n"
    "           [--no-flash-attn] [--bucket-mb X] [--no-overlap-grad-reduce]\n"
    "           [--overlap-param-gather] [--moe-imbalance X] [--full]\n"
    "           [--lora-rank N]\n"
    "           [--loader-workers N --sample-ms X [--prefetch N]]\n"
    "           [--trace FILE.json] [--timeline FILE.csv] [--json] [--force]\n\n"
    "Simulates one training step: every pipeline stage runs Megatron-LM's\n"
    "microbatch order (GPipe, 1F1B or interleaved 1F1B) on its compute\n"
    "stream; op times come from the calibrated cost model, TP/EP/CP\n"
    "collectives and pipeline transfers from the flow-level network on the\n"
    "cluster's topology, and each stage's data-parallel gradient reduction\n"
    "overlaps the last microbatch's backward on a communication stream.\n"
    "One data-parallel replica is simulated (they are identical), and one\n"
    "data-parallel group's collectives stand for all of them; --full runs\n"
    "every group's collectives together on the network instead.\n\n"
    "An experiment file (configs/*.cfg) names model, cluster, nodes and a\n"
    "parallel = { ... } group whose keys are the options' names with\n"
    "underscores (micro_batch, global_batch, seq_len, overlap_grad_reduce,\n"
    "bucket_mb, ...); --set parallel.tp=4 changes one before it is read, and\n"
    "options given on the command line win over both.\n\n"
    "--lora-rank N (parallel.lora_rank) fine-tunes with LoRA (Hu et al.\n"
    "2021): the base model is frozen in the training precision, and rank-N\n"
    "adapters on every attention projection and dense MLP linear are the\n"
    "only weights with gradients, optimizer state and data-parallel\n"
    "traffic; the base's backward computes data gradients only.  0 (the\n"
    "default) trains every weight.\n\n"
    "Reports step time, tokens/s, model TFLOP/s per GPU and MFU (Narayanan et\n"
    "al.: 3 x forward FLOPs, no recompute), hardware TFLOP/s with recompute,\n"
    "the pipeline bubble, exposed communication per kind, GPU-Util as\n"
    "nvidia-smi shows it, the slowdown communication kernels cause in the\n"
    "compute they overlap (SMs and HBM they hold), and the memory peak (as\n"
    "`llmsim memory`).  --trace\n"
    "writes Chrome trace-event JSON (open it in Perfetto); --timeline the ops\n"
    "as CSV for plots/timeline.gp.\n\n"
    "A plan the simulator could not finish in 2 minutes or 8 GiB (an\n"
    "estimate from the schedule's and the collectives' event counts, made\n"
    "before anything is built) is refused; --force runs it anyway.\n\n"
    "JSON keys: step_time_s, tokens_per_s, model_tflops_per_gpu,\n"
    "hw_tflops_per_gpu, mfu, memory_peak_bytes, bubble_fraction, gpu_util,\n"
    "exposed_comm_s {tp, pp, dp, cp, ep}, interference {extra_s, comm_sms,\n"
    "hbm_fraction, slowdown}, busiest_links [{src, dst, kind, bytes,\n"
    "utilization, bytes_by_kind}].\n";

enum {
    T_MODEL = 400, T_CLUSTER, T_NODES, T_TP, T_PP, T_DP, T_CP, T_EP, T_SP,
    T_MB, T_GB, T_SEQ, T_RECOMP, T_ZERO, T_SCHED, T_VPP, T_PREC, T_OPT,
    T_NOFA, T_BUCKET, T_TRACE, T_JSON, T_NOOVERLAP, T_SET, T_TIMELINE, T_FULL,
    T_OVERLAP_PG, T_WORKERS, T_SAMPLE, T_PREFETCH, T_IMBALANCE, T_LORA,
    T_FORCE
};

typedef struct topts {
    const char *model, *cluster, *trace, *file, *timeline;
    const char *sets[64];
    int nsets;
    long nodes;
    int json, full, force;
    plan_train plan;
    train_loader loader;
} topts;

static int parse_one(void *ctx, int ch, const char *v, llm_err *e)
{
    topts *o = ctx;
    plan_train *p = &o->plan;
    int k = 0;
    double x;
    switch (ch) {
    case T_MODEL: o->model = v; return 0;
    case T_CLUSTER: o->cluster = v; return 0;
    case T_NODES: return util_parse_int("--nodes", v, 1, 1 << 20, &o->nodes, e);
    case T_TP: return cmd_int_opt("--tp", v, 1, 4096, &p->tp, e);
    case T_PP: return cmd_int_opt("--pp", v, 1, 4096, &p->pp, e);
    case T_DP: return cmd_int_opt("--dp", v, 1, 1 << 20, &p->dp, e);
    case T_CP: return cmd_int_opt("--cp", v, 1, 4096, &p->cp, e);
    case T_EP: return cmd_int_opt("--ep", v, 1, 4096, &p->ep, e);
    case T_SP: p->sp = true; return 0;
    case T_MB: return cmd_int_opt("--micro-batch", v, 1, 1 << 20, &p->micro_batch, e);
    case T_GB: return cmd_int_opt("--global-batch", v, 1, 1 << 26, &p->global_batch, e);
    case T_SEQ: return cmd_int_opt("--seq-len", v, 1, 1 << 24, &p->seq_len, e);
    case T_ZERO: return cmd_int_opt("--zero", v, 0, 3, &p->zero, e);
    case T_VPP: return cmd_int_opt("--vpp", v, 1, 1024, &p->vpp, e);
    case T_LORA: return cmd_int_opt("--lora-rank", v, 0, 65536, &p->lora_rank, e);
    case T_RECOMP:
        if (cmd_pick("--recompute", v, plan_recompute_names, 3, &k, e))
            return -1;
        p->recompute = (plan_recompute)k;
        return 0;
    case T_SCHED:
        if (cmd_pick("--schedule", v, plan_schedule_names, 3, &k, e))
            return -1;
        p->schedule = (plan_schedule)k;
        return 0;
    case T_OPT:
        if (cmd_pick("--optimizer", v, plan_optimizer_names, OPT_COUNT, &k,
                     e))
            return -1;
        p->optimizer = (plan_optimizer)k;
        return 0;
    case T_PREC:
        if (dtype_parse(v, &p->precision) != 0 ||
            (p->precision != DT_FP32 && p->precision != DT_BF16 &&
             p->precision != DT_FP16 && p->precision != DT_FP8))
            return err_set(e, "--precision: \"%s\" (expected bf16, fp16, fp8 "
                              "or fp32)", v);
        return 0;
    case T_NOFA: p->flash_attn = false; return 0;
    case T_NOOVERLAP: p->no_overlap_grad_reduce = true; return 0;
    case T_OVERLAP_PG: p->overlap_param_gather = true; return 0;
    case T_BUCKET:
        if (util_parse_double("--bucket-mb", v, 0.001, 1e6, &x, e))
            return -1;
        p->bucket_bytes = x * MiB;
        return 0;
    case T_TRACE: o->trace = v; return 0;
    case T_TIMELINE: o->timeline = v; return 0;
    case T_FULL: o->full = 1; return 0;
    case T_FORCE: o->force = 1; return 0;
    case T_IMBALANCE:
        return util_parse_double("--moe-imbalance", v, 1, 1e3,
                                 &p->moe_imbalance, e);
    case T_WORKERS:
        return cmd_int_opt("--loader-workers", v, 0, 4096,
                           &o->loader.workers, e);
    case T_SAMPLE:
        if (util_parse_double("--sample-ms", v, 0, 1e7, &x, e))
            return -1;
        o->loader.sample_s = x * 1e-3;
        return 0;
    case T_PREFETCH:
        return cmd_int_opt("--prefetch", v, 1, 1024, &o->loader.prefetch, e);
    case T_JSON: o->json = 1; return 0;
    case T_SET:
        if (o->nsets >= 64)
            return err_set(e, "--set: at most 64");
        o->sets[o->nsets++] = v;
        return 0;
    }
    return -1;
}

static int parse(int argc, char **argv, topts *o, bool final, llm_err *e)
{
    static const struct option opts[] = {
        {"model", 1, 0, T_MODEL}, {"cluster", 1, 0, T_CLUSTER},
        {"nodes", 1, 0, T_NODES}, {"tp", 1, 0, T_TP}, {"pp", 1, 0, T_PP},
        {"dp", 1, 0, T_DP}, {"cp", 1, 0, T_CP}, {"ep", 1, 0, T_EP},
        {"sp", 0, 0, T_SP}, {"micro-batch", 1, 0, T_MB},
        {"global-batch", 1, 0, T_GB}, {"seq-len", 1, 0, T_SEQ},
        {"recompute", 1, 0, T_RECOMP}, {"zero", 1, 0, T_ZERO},
        {"schedule", 1, 0, T_SCHED}, {"vpp", 1, 0, T_VPP},
        {"precision", 1, 0, T_PREC}, {"optimizer", 1, 0, T_OPT},
        {"no-flash-attn", 0, 0, T_NOFA}, {"bucket-mb", 1, 0, T_BUCKET},
        {"trace", 1, 0, T_TRACE}, {"json", 0, 0, T_JSON},
        {"no-overlap-grad-reduce", 0, 0, T_NOOVERLAP},
        {"overlap-param-gather", 0, 0, T_OVERLAP_PG},
        {"set", 1, 0, T_SET}, {"timeline", 1, 0, T_TIMELINE},
        {"full", 0, 0, T_FULL}, {"force", 0, 0, T_FORCE},
        {"loader-workers", 1, 0, T_WORKERS},
        {"sample-ms", 1, 0, T_SAMPLE}, {"prefetch", 1, 0, T_PREFETCH},
        {"moe-imbalance", 1, 0, T_IMBALANCE}, {"lora-rank", 1, 0, T_LORA},
        {0, 0, 0, 0},
    };
    if (cmd_getopt("train", argc, argv, opts, parse_one, o, e))
        return -1;
    if (optind < argc - 1)
        return err_set(e, "unexpected argument \"%s\"", argv[optind + 1]);
    if (optind == argc - 1)
        o->file = argv[optind];
    if (final && (!o->model || !o->cluster))
        return err_set(e, "--model and --cluster are required (see `llmsim "
                          "help train`)");
    return 0;
}

static void print_human(const model_spec *m, const topo *t,
                        const plan_train *p, const train_result *r)
{
    printf("%s on %s (%d of %d GPUs, %s): tp %d, pp %d, dp %d, cp %d, ep %d%s\n",
           m->display, t->name, plan_train_gpus(p), t->ngpu,
           t->gpu ? t->gpu->name : "?", p->tp, p->pp, p->dp, p->cp, p->ep,
           p->sp ? ", sequence parallel" : "");
    char lora[32] = "";
    if (p->lora_rank > 0)
        snprintf(lora, sizeof lora, "; LoRA rank %d", p->lora_rank);
    printf("micro-batch %d x %d microbatches x dp %d = %d sequences of %d "
           "tokens; %s%s; recompute %s; ZeRO-%d; %s%s\n\n",
           p->micro_batch, r->microbatches, p->dp,
           p->micro_batch * r->microbatches * p->dp, p->seq_len,
           plan_schedule_names[p->schedule],
           p->schedule == SCHED_INTERLEAVED ? " (virtual stages)" : "",
           plan_recompute_names[p->recompute], p->zero,
           dtype_name(p->precision), lora);
    printf("  step time          %10.3f s   (stage 0: forward %.2f ms, "
           "backward %.2f ms per microbatch)\n",
           r->step_s, r->fwd_s * 1e3, r->bwd_s * 1e3);
    printf("  throughput         %10.0f tokens/s, %.2f samples/s\n",
           r->tokens_per_s, r->samples_per_s);
    printf("  model TFLOP/s/GPU  %10.1f   MFU %.1f%%\n",
           r->model_tflops_per_gpu, 100 * r->mfu);
    printf("  hardware TFLOP/s   %10.1f   (with recompute)\n",
           r->hw_tflops_per_gpu);
    printf("  pipeline bubble    %10.1f%%\n", 100 * r->bubble_fraction);
    printf("  exposed comm (s)   ");
    for (int k = 0; k < COMM_KINDS; k++)
        printf(" %s %.3f", train_comm_names[k], r->exposed_comm_s[k]);
    printf("\n  GPU-Util           %10.1f%%  (SM efficiency %.1f%% of peak "
           "while busy)\n",
           100 * r->gpu_util, 100 * r->sm_efficiency);
    if (r->loader_need_s > 0) {
        if (r->input_bound)
            printf("  input pipeline     INPUT-BOUND: the step waits %.3f s "
                   "(%.1f%%) for data; loading a step's microbatches takes "
                   "%.3f s of the workers\n",
                   r->input_wait_s, 100 * r->input_wait_s / r->step_s,
                   r->loader_need_s);
        else
            printf("  input pipeline     keeps up: the workers need %.3f s "
                   "per step (%.0f%% of it)\n",
                   r->loader_need_s, 100 * r->loader_need_s / r->step_s);
    }
    const train_interference *f = &r->interference;
    if (f->extra_s > 0)
        printf("  overlap slowdown   %10.2f ms  (gradient reduction holds %d "
               "SMs and %.0f%% of HBM: overlapped compute %.1f%% slower)\n",
               f->extra_s * 1e3, f->comm_sms, 100 * f->hbm_frac,
               100 * f->slowdown);
    if (r->ntop_links > 0)
        printf("  busiest links      (bytes of the step / (achievable bandwidth "
               "x step time))\n");
    for (int i = 0; i < r->ntop_links; i++) {
        const train_link_use *u = &r->top_links[i];
        const topo_link *L = &t->link[u->link];
        printf("    %-12s -> %-12s %-8s %5.1f%%  %9.1f GB:",
               t->dev[L->src].name, t->dev[L->dst].name,
               topo_link_kind_name(L->kind), 100 * u->utilization,
               u->bytes / 1e9);
        for (int k = 0; k < COMM_KINDS; k++)
            if (u->bytes_by_kind[k] > 0)
                printf(" %s %.0f%%", train_comm_names[k],
                       100 * u->bytes_by_kind[k] / u->bytes);
        printf("\n");
    }
    printf("  memory peak        %10.2f GiB per GPU on stage %d (of %.1f)%s\n",
           r->memory_peak_bytes / GiB, r->memory.stage,
           t->gpu ? t->gpu->memory_bytes / GiB : 0,
           t->gpu && r->memory_peak_bytes > t->gpu->memory_bytes
               ? "  DOES NOT FIT: see `llmsim memory --train` for remedies"
               : "");
    const mem_result *mr = &r->memory;
    printf("                     weights %.2f, gradients %.2f, optimizer %.2f, "
           "activations %.2f, overheads %.2f GiB\n",
           mr->weights / GiB, mr->gradients / GiB, mr->optimizer / GiB,
           mr->activations / GiB, mr->overhead / GiB);
    int v = p->schedule == SCHED_INTERLEAVED ? p->vpp : 1;
    double per_chunk = (double)m->layers / p->pp / v;
    printf("                     at %.3f s, holding %d microbatch%s "
           "activations (as the schedule ran; `llmsim memory` counts %.0f)\n",
           r->memory_peak_at_s, r->chunks_held,
           v > 1 ? "-chunks'" : "es'",
           r->memory.act_layers_held / per_chunk);
}

/* Watts per GPU over the step, as `serve` models power (calib/power.tsv):
 * idle, plus the dynamic range times the utilization while kernels run. */
static double power_w_per_gpu(const train_result *r, const gpu_spec *g,
                              double idle_w)
{
    double act = r->sm_efficiency < 1 ? r->sm_efficiency : 1;
    return idle_w + (g->tdp_w - idle_w) * r->gpu_util * act;
}

static json_t *as_json(const train_result *r, const topo *t,
                       const plan_train *p, double idle_w)
{
    json_t *j = json_object();
    int gpus = plan_train_gpus(p);
    json_object_set_new(j, "gpu", json_string(t->gpu ? t->gpu->name : "?"));
    json_object_set_new(j, "gpus", json_integer(gpus));
    json_object_set_new(j, "gpu_memory_bytes",
                        cmd_json_bytes(t->gpu ? t->gpu->memory_bytes : 0));
    json_object_set_new(j, "plan", cmd_json_plan(p));
    json_object_set_new(j, "fits", json_boolean(!t->gpu || r->memory_peak_bytes <=
                                                              t->gpu->memory_bytes));
    json_object_set_new(j, "step_time_s", json_real(r->step_s));
    json_object_set_new(j, "tokens_per_s", json_real(r->tokens_per_s));
    json_object_set_new(j, "samples_per_s", json_real(r->samples_per_s));
    json_object_set_new(j, "model_tflops_per_gpu",
                        json_real(r->model_tflops_per_gpu));
    json_object_set_new(j, "hw_tflops_per_gpu", json_real(r->hw_tflops_per_gpu));
    json_object_set_new(j, "mfu", json_real(r->mfu));
    json_object_set_new(j, "memory_peak_bytes",
                        cmd_json_bytes(r->memory_peak_bytes));
    json_t *mb = json_object();
    json_object_set_new(mb, "weights", cmd_json_bytes(r->memory.weights));
    json_object_set_new(mb, "gradients", cmd_json_bytes(r->memory.gradients));
    json_object_set_new(mb, "optimizer", cmd_json_bytes(r->memory.optimizer));
    json_object_set_new(mb, "activations",
                        cmd_json_bytes(r->memory.activations));
    json_object_set_new(mb, "overhead", cmd_json_bytes(r->memory.overhead));
    json_object_set_new(mb, "stage", json_integer(r->memory.stage));
    json_object_set_new(j, "memory_breakdown_bytes", mb);
    json_object_set_new(j, "memory_peak_at_s", json_real(r->memory_peak_at_s));
    json_object_set_new(j, "activation_chunks_held", json_integer(r->chunks_held));
    json_object_set_new(j, "bubble_fraction", json_real(r->bubble_fraction));
    json_object_set_new(j, "gpu_util", json_real(r->gpu_util));
    json_object_set_new(j, "sm_efficiency", json_real(r->sm_efficiency));
    json_t *x = json_object();
    for (int k = 0; k < COMM_KINDS; k++)
        json_object_set_new(x, train_comm_names[k],
                            json_real(r->exposed_comm_s[k]));
    json_object_set_new(j, "exposed_comm_s", x);
    json_t *f = json_object();
    json_object_set_new(f, "extra_s", json_real(r->interference.extra_s));
    json_object_set_new(f, "comm_sms", json_integer(r->interference.comm_sms));
    json_object_set_new(f, "hbm_fraction", json_real(r->interference.hbm_frac));
    json_object_set_new(f, "slowdown", json_real(r->interference.slowdown));
    json_object_set_new(j, "interference", f);
    json_t *links = json_array();
    for (int i = 0; i < r->ntop_links; i++) {
        const train_link_use *u = &r->top_links[i];
        json_t *o = cmd_json_link(t, u->link, u->bytes, u->utilization);
        json_t *by = json_object();
        for (int k = 0; k < COMM_KINDS; k++)
            json_object_set_new(by, train_comm_names[k],
                                json_real(u->bytes_by_kind[k]));
        json_object_set_new(o, "bytes_by_kind", by);
        json_array_append_new(links, o);
    }
    json_object_set_new(j, "busiest_links", links);
    json_object_set_new(j, "input_wait_s", json_real(r->input_wait_s));
    json_object_set_new(j, "input_bound", json_boolean(r->input_bound));
    json_object_set_new(j, "microbatches", json_integer(r->microbatches));
    json_object_set_new(j, "events", json_integer((json_int_t)r->events));
    json_object_set_new(j, "dp_bytes_per_gpu", json_real(r->dp_bytes_per_gpu));
    if (t->gpu) {
        double w = power_w_per_gpu(r, t->gpu, idle_w);
        json_object_set_new(j, "power_w_per_gpu", json_real(w));
        json_object_set_new(j, "energy_per_token_j",
                            json_real(w * gpus / r->tokens_per_s));
    }
    return j;
}

/* dp 0 fills the cluster; microbatches M sets the global batch. */
static int fill_cluster(plan_train *p, const char *cluster, int ngpu,
                        int gpus, int microbatches, llm_err *e)
{
    int have = gpus > 0 && gpus < ngpu ? gpus : ngpu;
    if (p->dp == 0) {
        int per = p->tp * p->pp * p->cp;
        if (have % per)
            return err_set(e, "dp 0 (fill the cluster): tp %d x pp %d x cp "
                              "%d = %d does not divide %s's %d GPUs",
                           p->tp, p->pp, p->cp, per, cluster, have);
        p->dp = have / per;
    }
    if (microbatches > 0)
        p->global_batch = p->micro_batch * p->dp * microbatches;
    return 0;
}

/* Fills the plan from the cluster's size and refuses a run the simulator
 * could not finish in reasonable time or memory (budget.h), before the
 * topology is built: a million GPUs take gigabytes by themselves. */
static int check_budget(topts *o, const model_spec *m, int gpus,
                        int microbatches, llm_err *e)
{
    cmd_topo_size_t z;
    if (cmd_topo_size(o->cluster, (int)o->nodes, &z, e) ||
        fill_cluster(&o->plan, o->cluster, z.nodes * z.gpus_per_node, gpus,
                     microbatches, e))
        return -1;
    if (plan_train_check(m, &o->plan, e))
        return -1;
    budget_est b = {0};
    budget_topology(z.nodes, z.ndev, z.nlink, &b);
    budget_train(m, &o->plan, o->full, &b);
    return budget_check(&b, o->file ? o->file : "the plan", o->force, e);
}

/* The command; with `out`, its --json object is handed back, not printed. */
static int run_to(int argc, char **argv, json_t **out, llm_err *e)
{
    /* defaults, then the experiment file (with its --set), then options */
    topts o;
    memset(&o, 0, sizeof o);
    plan_train_defaults(&o.plan);
    if (parse(argc, argv, &o, false, e))
        return EXIT_BAD_INPUT;
    cfg_experiment x;
    memset(&x, 0, sizeof x);
    train_loader_defaults(&x.loader);
    if (o.file) {
        plan_train_defaults(&x.plan);
        if (cfg_load_experiment(o.file, o.sets, o.nsets, &x, e))
            return EXIT_BAD_INPUT;
    } else if (o.nsets) {
        return err_set(e, "--set needs an experiment file"), EXIT_BAD_INPUT;
    }
    memset(&o, 0, sizeof o);
    o.plan = x.plan;
    o.loader = x.loader;
    if (!x.model[0])
        plan_train_defaults(&o.plan);
    o.model = x.model[0] ? x.model : NULL;
    o.cluster = x.cluster[0] ? x.cluster : NULL;
    o.nodes = x.nodes;
    if (parse(argc, argv, &o, true, e))
        return EXIT_BAD_INPUT;
    model_spec m;
    gpu_catalog cat;
    if (cmd_load_model(o.model, &m, e) || cmd_load_catalog(&cat, e)) {
        cmd_blame_file(o.file, "parallel", argc, argv, e);
        return EXIT_BAD_INPUT;
    }
    int rc = EXIT_BAD_INPUT;
    cost_calib cc;
    coll_calib kc;
    mem_overhead ov;
    memset(&cc, 0, sizeof cc);
    topo *t = NULL;
    if (check_budget(&o, &m, x.gpus, x.microbatches, e)) {
        cmd_blame_file(o.file, "parallel", argc, argv, e);
        goto out;
    }
    t = cmd_load_topo_net(o.cluster, (int)o.nodes, -1, &x.net, &cat, e);
    if (!t || cfg_load_cost_calib(cmd_datadir(), &cat, t->gpu, &cc, e) ||
        cfg_load_coll_calib(cmd_datadir(), t, &kc, e) ||
        cfg_load_overhead(cmd_datadir(), t->gpu, &ov, e))
        goto out;
    train_input in = {&m, &o.plan, t, t->gpu, &cc, &kc, &ov, false, o.full,
                      o.trace, o.timeline, &o.loader, x.gpus};
    train_result r;
    double idle_w = 0;
    if (train_simulate(&in, &r, e) ||
        cfg_load_idle_w(cmd_datadir(), t->gpu, &idle_w, e))
        goto out;
    if (out)
        *out = as_json(&r, t, &o.plan, idle_w);
    else if (o.json)
        cmd_print_json(as_json(&r, t, &o.plan, idle_w));
    else
        print_human(&m, t, &o.plan, &r);
    rc = EXIT_OK;
out:
    cost_calib_free(&cc);
    topo_destroy(t);
    gpu_catalog_free(&cat);
    return rc;
}

static int run(int argc, char **argv, llm_err *e)
{
    return run_to(argc, argv, NULL, e);
}

int cmd_train_json(int argc, char **argv, json_t **out, llm_err *e)
{
    *out = NULL;
    return run_to(argc, argv, out, e);
}

const cmd_def cmd_train_def = {
    "train", "one training step of a parallel plan, simulated", usage, run};
