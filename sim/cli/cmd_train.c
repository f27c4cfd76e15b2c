/* llmsim train — one training step of a parallel plan, simulated. */
#include <string.h>

#include "cli/cmd.h"
#include "report/rstep.h"
#include "report/rtrain.h"

static const char usage[] =
    "usage: llmsim train EXPERIMENT.cfg [--set KEY=VALUE ...] [settings]\n"
    "           [--full] [--trace FILE.json] [--timeline FILE.csv] [--json]\n"
    "           [--force] [--allow-oom]\n"
    "       llmsim train --model M --cluster C --tp N --pp N --dp N ...\n\n"
    "Simulates one training step: every pipeline stage runs Megatron-LM's\n"
    "microbatch order (GPipe, 1F1B or interleaved 1F1B) on its compute\n"
    "stream; op times come from the calibrated cost model, TP/EP/CP\n"
    "collectives and pipeline transfers from the flow-level network on the\n"
    "cluster's topology, and each stage's data-parallel gradient reduction\n"
    "overlaps the last microbatch's backward on a communication stream.\n"
    "One data-parallel replica is simulated (they are identical), and one\n"
    "data-parallel group's collectives stand for all of them; --full runs\n"
    "every group's collectives together on the network instead.\n\n"
    "An experiment file (configs/*.cfg) gives the settings listed below by\n"
    "key (model, cluster, nodes, a parallel = { ... } group, ...); --set\n"
    "KEY=VALUE changes one after the file is read, and flags win over both.\n\n"
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
    "A plan whose memory peak exceeds the GPU's memory is reported with\n"
    "DOES NOT FIT first (JSON: fits false) and exits 2, the status `memory`\n"
    "and `search` give when nothing fits; --allow-oom exits 0 instead (the\n"
    "figures are then for a GPU with enough memory).\n\n"
    "JSON keys: step_time_s, tokens_per_s, model_tflops_per_gpu,\n"
    "hw_tflops_per_gpu, mfu, memory_peak_bytes, bubble_fraction, gpu_util,\n"
    "exposed_comm_s {tp, pp, dp, cp, ep}, interference {extra_s, comm_sms,\n"
    "hbm_fraction, slowdown}, busiest_links [{src, dst, kind, bytes,\n"
    "utilization, bytes_by_kind}].\n";

enum { T_TRACE = 1, T_TIMELINE, T_JSON, T_FULL, T_FORCE, T_ALLOW_OOM };

typedef struct topts {
    const char *trace, *timeline;
    int json;
    bool allow_oom; /* a plan that does not fit exits 0 */
    exp_run_opts run;
} topts;

static int parse_one(void *ctx, int id, const char *v, llm_err *e)
{
    topts *o = ctx;
    (void)e;
    switch (id) {
    case T_TRACE: o->trace = v; return 0;
    case T_TIMELINE: o->timeline = v; return 0;
    case T_JSON: o->json = 1; return 0;
    case T_FULL: o->run.full = true; return 0;
    case T_FORCE: o->run.force = true; return 0;
    case T_ALLOW_OOM: o->allow_oom = true; return 0;
    }
    return -1;
}

static const struct option opts[] = {
    {"trace", 1, 0, T_TRACE}, {"timeline", 1, 0, T_TIMELINE},
    {"json", 0, 0, T_JSON}, {"full", 0, 0, T_FULL}, {"force", 0, 0, T_FORCE},
    {"allow-oom", 0, 0, T_ALLOW_OOM}, {0, 0, 0, 0},
};

/* The outputs asked for, after the run: the trace and timeline files,
 * then the table or JSON on stdout. */
static int report(const topts *o, const exp_train_out *out, llm_err *e)
{
    if ((o->trace && rstep_trace(o->trace, out, o->run.full, e)) ||
        (o->timeline && rstep_timeline(o->timeline, out, e)))
        return -1;
    if (o->json)
        cmd_print_json(rtrain_json(out));
    else
        rtrain_text(stdout, out);
    return 0;
}

static int run(int argc, char **argv, llm_err *e)
{
    topts o = {0};
    cmd_args a;
    static exp_train x;
    exp_train_defaults(&x);
    if (cmd_parse("train", EXP_TRAIN, -1, NULL, argc, argv, opts, parse_one,
                  &o, &a, e) ||
        cmd_load_exp(EXP_TRAIN, &x, &a, e))
        return EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    o.run.record = o.trace || o.timeline;
    exp_train_out out;
    if (exp_train_run(&x, &o.run, cfg_loader(), &out, e))
        return EXIT_BAD_INPUT;
    int rc = report(&o, &out, e) ? EXIT_BAD_INPUT : EXIT_OK;
    if (rc == EXIT_OK && !exp_train_fits(&out) && !o.allow_oom) {
        /* main prints bad input only: this is the other kind */
        fprintf(stderr, "llmsim train: the plan does not fit: %.2f GiB per "
                        "GPU of %.1f (exit status 2; --allow-oom accepts it)\n",
                out.r.memory_peak_bytes / (1024.0 * 1024 * 1024),
                out.env.t->gpu->memory_bytes / (1024.0 * 1024 * 1024));
        rc = EXIT_NO_FIT;
    }
    exp_train_out_free(&out);
    return rc;
}

const cmd_def cmd_train_def = {
    "train", "one training step of a parallel plan, simulated", usage, run,
    1u << EXP_TRAIN, NULL};
