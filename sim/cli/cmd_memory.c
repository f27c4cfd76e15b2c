/* llmsim memory — does a model fit, where the memory goes, what to do when
 * it does not, and the cheapest GPU set that fits. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "report/rjson.h"
#include "mem/mem.h"
#include "base/util.h"

static const char usage[] =
    "usage: llmsim memory --model M --gpu G[,G...] [--inference] [options]\n"
    "       llmsim memory --model M --gpu G --train [options]\n"
    "       llmsim memory --model M --recommend [--train] [options]\n\n"
    "Per-GPU memory, broken down, with a verdict for each GPU; when it does\n"
    "not fit, the remedies (each one computed) in the order that saves most.\n"
    "--recommend lists, for every catalog GPU, the fewest GPUs that fit and\n"
    "their price, cheapest first.\n\n"
    "The plan and the overheads are the settings listed below: an\n"
    "inference plan by default, a training plan with --train.  Overheads are\n"
    "stated in the output, never hidden.\n\n"
    "output:\n"
    "  --json                 weights_bytes, gradients_bytes, optimizer_bytes,\n"
    "                         activations_bytes, kv_cache_bytes, overhead_bytes,\n"
    "                         total_bytes, gpu_memory_bytes, fits, remedies\n"
    "                         (an array of such objects for several GPUs)\n\n"
    "Exit status: 0 fits (on at least one GPU given), 1 bad input, 2 does not fit.\n";

typedef struct opts {
    const char *gpus;
    int train, infer, recommend, json;
    plan_train t;
    plan_infer i;
    mem_overhead o;
} opts;

enum { O_GPU = 1, O_TRAIN, O_INFER, O_RECOMMEND, O_JSON };

static const struct option longopts[] = {
    {"gpu", required_argument, 0, O_GPU},
    {"train", no_argument, 0, O_TRAIN},
    {"inference", no_argument, 0, O_INFER},
    {"recommend", no_argument, 0, O_RECOMMEND},
    {"json", no_argument, 0, O_JSON},
    {0, 0, 0, 0},
};

static int parse_one(void *ctx, int ch, const char *v, llm_err *e)
{
    opts *o = ctx;
    (void)e;
    switch (ch) {
    case O_GPU: o->gpus = v; return 0;
    case O_TRAIN: o->train = 1; return 0;
    case O_INFER: o->infer = 1; return 0;
    case O_RECOMMEND: o->recommend = 1; return 0;
    case O_JSON: o->json = 1; return 0;
    }
    return -1;
}

/* Memory needs a model and a plan: a cluster, its links or a data loader
 * are the simulating commands' settings. */
static bool takes(const setting *s, exp_kind k)
{
    const char *key = s->at[k].key;
    return !key || strcmp(key, "model") == 0 ||
           strncmp(key, "parallel.", 9) == 0 ||
           strncmp(key, "overhead.", 9) == 0;
}

/* The plan of the mode --train picks (training or inference), from the
 * settings table's flags; the model named by --model. */
static int parse(int argc, char **argv, opts *o, char *model, size_t len,
                 llm_err *e)
{
    bool train = false;
    for (int i = 1; i < argc; i++)
        train |= strcmp(argv[i], "--train") == 0;
    exp_kind k = train ? EXP_TRAIN : EXP_INFER;
    cmd_args a;
    if (cmd_parse("memory", k, train ? EXP_INFER : EXP_TRAIN,
                  train ? "--%s is an inference option (drop --train)"
                        : "--%s is a training option (add --train)",
                  argc, argv, longopts, parse_one, o, &a, e))
        return -1;
    if (a.file)
        return err_set(e, "unexpected argument \"%s\" (options start with "
                          "--; see `llmsim help memory`)", a.file);
    for (int i = 0; i < a.nflags; i++)
        if (!takes(a.flag[i], k))
            return err_set(e, "--%s is not a memory option (it is `llmsim "
                              "train`'s; see `llmsim help memory`)",
                           a.flag[i]->flag);
    static exp_train x;
    static exp_infer y;
    if (train) {
        exp_train_defaults(&x);
        if (cmd_load_exp(k, &x, &a, e))
            return -1;
        o->t = x.plan;
        if (x.microbatches > 0 && x.plan.dp > 0)
            o->t.global_batch = x.plan.micro_batch * x.plan.dp * x.microbatches;
        else if (x.microbatches > 0 || x.plan.dp == 0)
            return err_set(e, "--dp 0 (fill the cluster) needs a cluster: "
                              "give memory --dp N");
        snprintf(model, len, "%s", x.model);
        exp_overhead_apply(&o->o, &x.overhead);
    } else {
        exp_infer_defaults(&y);
        if (cmd_load_exp(k, &y, &a, e))
            return -1;
        o->i = y.plan;
        snprintf(model, len, "%s", y.model);
        exp_overhead_apply(&o->o, &y.overhead);
    }
    if (!model[0])
        return err_set(e, "--model is required (a name such as llama-2-7b, "
                          "a .cfg or a config.json)");
    if (o->train && o->infer)
        return err_set(e, "--train and --inference are exclusive");
    if (!o->gpus && !o->recommend)
        return err_set(e, "--gpu NAME[,NAME...] is required (or "
                          "--recommend); `llmsim gpus` lists the names");
    return 0;
}

/* ---- printing ------------------------------------------------------------ */

static double gib(double b) { return b / GiB; }

static void line(const char *what, double bytes, const char *how)
{
    if (bytes == 0 && how[0]) /* an overhead that does not apply */
        return;
    printf("  %-24s %9.2f   %s\n", what, gib(bytes), how);
}

static void print_train_plan(const model_spec *m, const plan_train *p,
                             const mem_result *r)
{
    printf("%s (%s): %.2f B parameters, training in %s, %s\n", m->display,
           m->name, model_params_total(m) / 1e9, dtype_name(p->precision),
           plan_optimizer_names[p->optimizer]);
    printf("plan: tp %d, pp %d, dp %d, cp %d, ep %d (%d GPU%s)%s; micro-batch "
           "%d, %d microbatch%s/step, seq %d; %s%s; ZeRO-%d; recompute %s; "
           "FlashAttention %s\n",
           p->tp, p->pp, p->dp, p->cp, p->ep, plan_train_gpus(p),
           plan_train_gpus(p) > 1 ? "s" : "", p->sp ? ", sequence parallel" : "", p->micro_batch,
           r->microbatches, r->microbatches > 1 ? "es" : "", p->seq_len,
           plan_schedule_names[p->schedule],
           p->schedule == SCHED_INTERLEAVED ? " (virtual stages)" : "",
           p->zero, plan_recompute_names[p->recompute],
           p->flash_attn ? "on" : "off");
    printf("peak on pipeline stage %d of %d (%d microbatch%s in flight "
           "there)\n\n",
           r->stage, p->pp, r->in_flight, r->in_flight > 1 ? "es" : "");
}

static void print_train(const model_spec *m, const plan_train *p,
                        const mem_overhead *o, const mem_result *r)
{
    char how[200];
    print_train_plan(m, p, r);
    printf("  %-24s %9s   %s\n", "per GPU", "GiB", "how");
    int nd = p->dp * p->cp;
    snprintf(how, sizeof how, "%.3f B params%s x %.0f B%s%s",
             r->params_per_gpu / 1e9, p->lora_rank > 0 ? " + adapters" : "",
             mem_weight_bytes_per_param(p->precision),
             p->zero >= 3 ? " / ZeRO-3 shards" : "",
             r->zero3_gather > 0 ? " + 2 gathered layers" : "");
    line("weights", r->weights, how);
    if (p->lora_rank > 0) /* only the adapters have gradients and states */
        snprintf(how, sizeof how, "%.2f M LoRA rank-%d adapter params ",
                 r->trainable_params_per_gpu / 1e6, p->lora_rank);
    else
        how[0] = 0;
    snprintf(how + strlen(how), sizeof how - strlen(how), "x %.0f B%s%s",
             mem_grad_bytes_per_param(p),
             p->grad_fp32 ? " fp32 accumulation buffer (main_grad)" : "",
             p->zero >= 2 ? " / ZeRO shards" : "");
    if (r->microbatches > 1)
        snprintf(how + strlen(how), sizeof how - strlen(how),
                 ", accumulated over %d microbatches", r->microbatches);
    line("gradients", r->gradients, how);
    if (p->lora_rank > 0)
        snprintf(how, sizeof how, "%.2f M adapter params ",
                 r->trainable_params_per_gpu / 1e6);
    else
        how[0] = 0;
    snprintf(how + strlen(how), sizeof how - strlen(how), "x %.2f B (%s%s)%s",
             mem_optimizer_bytes_per_param(p),
             mem_weight_bytes_per_param(p->precision) == 4 ? ""
                                                           : "fp32 master + ",
             plan_optimizer_names[p->optimizer],
             p->zero >= 1 ? " / dp x cp" : "");
    if (p->zero >= 1)
        snprintf(how + strlen(how), sizeof how - strlen(how), " = /%d", nd);
    line("optimizer states", r->optimizer, how);
    snprintf(how, sizeof how, "%.1f layer-microbatches x %.1f MiB%s",
             r->act_layers_held,
             (p->recompute == RECOMPUTE_FULL
                  ? (r->activations - r->act_edge - r->act_working) /
                        r->act_layers_held
                  : r->act_per_layer) /
                 MiB,
             p->recompute == RECOMPUTE_FULL ? " (layer inputs) + 1 replayed layer"
                                            : "");
    if (r->act_edge > 0)
        snprintf(how + strlen(how), sizeof how - strlen(how),
                 " + %.2f GiB embedding/logits", gib(r->act_edge));
    line("activations", r->activations, how);
    line("communication buffers", r->comm_buffers,
         "ZeRO buckets, pipeline send/recv");
    snprintf(how, sizeof how, "%.0f communicator(s) x %.0f MiB (--nccl-mib)",
             o->nccl_bytes_per_group > 0 ? r->nccl / o->nccl_bytes_per_group
                                         : 0,
             o->nccl_bytes_per_group / MiB);
    line("NCCL buffers", r->nccl, how);
    line("CUDA context", r->cuda_context, "--cuda-context-gib");
    snprintf(how, sizeof how, "%.0f%% of tensors (--reserve-pct)",
             o->reserve_frac * 100);
    line("allocator reserve", r->reserve, how);
    line("total", r->total, "");
}

static void print_infer(const model_spec *m, const plan_infer *p,
                        const mem_overhead *o, const mem_result *r)
{
    char how[240];
    dtype kv = p->kv_dtype != DT_COUNT ? p->kv_dtype
               : dtype_bytes(p->weight_dtype) >= 2 ? p->weight_dtype
                                                   : DT_FP16;
    printf("%s (%s): %.2f B parameters, inference with %s weights, %s KV "
           "cache\n",
           m->display, m->name, model_params_total(m) / 1e9,
           dtype_name(p->weight_dtype), dtype_name(kv));
    printf("plan: tp %d, pp %d (%d GPU%s); batch %d x context %d tokens; "
           "peak on pipeline stage %d\n\n",
           p->tp, p->pp, p->tp * p->pp, p->tp * p->pp > 1 ? "s" : "",
           p->batch, p->context, r->stage);
    printf("  %-24s %9s   %s\n", "per GPU", "GiB", "how");
    snprintf(how, sizeof how, "%.3f B params, %s%s", r->params_per_gpu / 1e9,
             dtype_name(p->weight_dtype),
             p->weight_dtype == DT_INT4 ? " + group scales" : "");
    line("weights", r->weights, how);
    snprintf(how, sizeof how, "%.0f tokens x %.1f KiB (%s); rule of thumb "
             "says %.2f GiB (%.1fx)",
             r->kv_tokens, r->kv_per_token_gpu / 1024,
             model_attention_kind(m), gib(r->kv_rule_of_thumb),
             r->kv_cache > 0 ? r->kv_rule_of_thumb / r->kv_cache : 0);
    line("KV cache", r->kv_cache, how);
    snprintf(how, sizeof how, "workspace for %.0f batched tokens + logits",
             r->workspace_tokens);
    line("activations", r->activations, how);
    snprintf(how, sizeof how, "%.0f communicator(s) x %.0f MiB (--nccl-mib)",
             o->nccl_bytes_per_group > 0 ? r->nccl / o->nccl_bytes_per_group
                                         : 0,
             o->nccl_bytes_per_group / MiB);
    line("NCCL buffers", r->nccl, how);
    line("CUDA context", r->cuda_context, "--cuda-context-gib");
    snprintf(how, sizeof how, "%.0f%% of tensors (--reserve-pct)",
             o->reserve_frac * 100);
    line("allocator reserve", r->reserve, how);
    line("total", r->total, "");
}

static void print_verdict(const gpu_spec *g, const mem_result *r)
{
    double cap = g->memory_bytes;
    if (r->total <= cap)
        printf("%s (%.2f GiB): fits, %.2f GiB free\n", g->name, gib(cap),
               gib(cap - r->total));
    else
        printf("%s (%.2f GiB): does NOT fit, short by %.2f GiB\n", g->name,
               gib(cap), gib(r->total - cap));
}

static void print_remedies(const mem_remedy *rm, int n)
{
    if (n == 0) {
        printf("  no remedy found within the plan's options\n");
        return;
    }
    printf("remedies, largest saving first (per-GPU total after each):\n");
    for (int i = 0; i < n; i++)
        printf("  %-66s saves %7.2f GiB -> %7.2f GiB  %s\n", rm[i].what,
               gib(rm[i].saves), gib(rm[i].total),
               rm[i].fits ? "fits" : "still short");
}

/* ---- JSON -------------------------------------------------------------- */

static json_t *result_json(const opts *o, const model_spec *m,
                           const mem_result *r)
{
    json_t *j = json_object();
    json_object_set_new(j, "model", json_string(m->name));
    json_object_set_new(j, "mode", json_string(o->train ? "training"
                                                        : "inference"));
    json_object_set_new(j, "weights_bytes", rjson_bytes(r->weights));
    json_object_set_new(j, "gradients_bytes", rjson_bytes(r->gradients));
    json_object_set_new(j, "optimizer_bytes", rjson_bytes(r->optimizer));
    json_object_set_new(j, "activations_bytes",
                        rjson_bytes(r->activations));
    json_object_set_new(j, "kv_cache_bytes", rjson_bytes(r->kv_cache));
    json_object_set_new(j, "overhead_bytes", rjson_bytes(r->overhead));
    json_object_set_new(j, "total_bytes", rjson_bytes(r->total));
    json_t *d = json_object();
    json_object_set_new(d, "params_per_gpu", rjson_bytes(r->params_per_gpu));
    if (o->train && o->t.lora_rank > 0)
        json_object_set_new(d, "trainable_params_per_gpu",
                            rjson_bytes(r->trainable_params_per_gpu));
    json_object_set_new(d, "zero3_gather_bytes", rjson_bytes(r->zero3_gather));
    json_object_set_new(d, "communication_buffers_bytes",
                        rjson_bytes(r->comm_buffers));
    json_object_set_new(d, "nccl_bytes", rjson_bytes(r->nccl));
    json_object_set_new(d, "cuda_context_bytes", rjson_bytes(r->cuda_context));
    json_object_set_new(d, "allocator_reserve_bytes", rjson_bytes(r->reserve));
    json_object_set_new(d, "peak_stage", json_integer(r->stage));
    if (o->train) {
        json_object_set_new(d, "microbatches", json_integer(r->microbatches));
        json_object_set_new(d, "in_flight", json_integer(r->in_flight));
        json_object_set_new(d, "activation_bytes_per_layer",
                            rjson_bytes(r->act_per_layer));
        json_object_set_new(d, "layer_microbatches_held",
                            json_real(r->act_layers_held));
    } else {
        json_object_set_new(d, "kv_tokens", rjson_bytes(r->kv_tokens));
        json_object_set_new(d, "kv_bytes_per_token_gpu",
                            json_real(r->kv_per_token_gpu));
        json_object_set_new(d, "kv_rule_of_thumb_bytes",
                            rjson_bytes(r->kv_rule_of_thumb));
    }
    json_object_set_new(j, "breakdown", d);
    return j;
}

static void add_verdict_json(json_t *j, const gpu_spec *g, const mem_result *r,
                             const mem_remedy *rm, int n)
{
    json_object_set_new(j, "gpu", json_string(g->name));
    json_object_set_new(j, "gpu_memory_bytes", rjson_bytes(g->memory_bytes));
    json_object_set_new(j, "fits", json_boolean(r->total <= g->memory_bytes));
    json_object_set_new(j, "free_bytes",
                        rjson_bytes(g->memory_bytes - r->total));
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "what", json_string(rm[i].what));
        json_object_set_new(x, "total_bytes", rjson_bytes(rm[i].total));
        json_object_set_new(x, "saves_bytes", rjson_bytes(rm[i].saves));
        json_object_set_new(x, "fits", json_boolean(rm[i].fits));
        json_object_set_new(x, "gpus", json_integer(rm[i].gpus));
        json_array_append_new(a, x);
    }
    json_object_set_new(j, "remedies", a);
}

/* ---- recommend --------------------------------------------------------- */

static int by_price(const void *a, const void *b)
{
    const mem_choice *x = a, *y = b;
    int fx = x->gpus > 0, fy = y->gpus > 0;
    if (fx != fy)
        return fy - fx;
    int px = x->price_usd > 0, py = y->price_usd > 0;
    if (px != py)
        return py - px;
    if (x->price_usd != y->price_usd)
        return x->price_usd < y->price_usd ? -1 : 1;
    if (x->gpus != y->gpus)
        return x->gpus - y->gpus;
    return strcmp(x->gpu->name, y->gpu->name);
}

static void plan_text(const opts *o, const mem_choice *c, char *b, size_t n)
{
    if (o->train)
        snprintf(b, n, "tp%d pp%d dp%d z%d", c->train.tp, c->train.pp,
                 c->train.dp, c->train.zero);
    else
        snprintf(b, n, "tp%d pp%d", c->infer.tp, c->infer.pp);
}

static int recommend(const opts *o, const model_spec *m, const gpu_catalog *c)
{
    mem_choice *ch = calloc((size_t)c->n, sizeof *ch);
    if (!ch)
        return EXIT_BAD_INPUT;
    int limit = o->train ? 16384 : 1024;
    for (int i = 0; i < c->n; i++) {
        if (o->train)
            mem_recommend_train(m, &o->t, &o->o, &c->gpus[i], limit, &ch[i]);
        else
            mem_recommend_infer(m, &o->i, &o->o, &c->gpus[i], limit, &ch[i]);
    }
    qsort(ch, (size_t)c->n, sizeof *ch, by_price);
    if (o->json) {
        json_t *a = json_array();
        for (int i = 0; i < c->n; i++) {
            json_t *x = json_object();
            char plan[64];
            plan_text(o, &ch[i], plan, sizeof plan);
            json_object_set_new(x, "gpu", json_string(ch[i].gpu->name));
            json_object_set_new(x, "gpus", json_integer(ch[i].gpus));
            json_object_set_new(x, "plan", json_string(ch[i].gpus ? plan : ""));
            json_object_set_new(x, "per_gpu_bytes",
                                rjson_bytes(ch[i].result.total));
            json_object_set_new(x, "gpu_memory_bytes",
                                rjson_bytes(ch[i].gpu->memory_bytes));
            json_object_set_new(x, "unit_price_usd",
                                json_real(ch[i].gpu->price_usd));
            json_object_set_new(x, "price_usd", json_real(ch[i].price_usd));
            json_object_set_new(x, "price_source",
                                json_string(ch[i].gpu->price_source));
            json_object_set_new(x, "note", json_string(ch[i].note));
            json_array_append_new(a, x);
        }
        json_t *j = json_object();
        json_object_set_new(j, "model", json_string(m->name));
        json_object_set_new(j, "mode", json_string(o->train ? "training"
                                                            : "inference"));
        json_object_set_new(j, "recommendations", a);
        cmd_print_json(j);
        free(ch);
        return EXIT_OK;
    }
    if (o->train)
        printf("Fewest GPUs that fit %s training (%s, %s, micro-batch %d, "
               "seq %d, recompute %s), cheapest first:\n\n",
               m->name, dtype_name(o->t.precision),
               plan_optimizer_names[o->t.optimizer], o->t.micro_batch,
               o->t.seq_len, plan_recompute_names[o->t.recompute]);
    else
        printf("Fewest GPUs that fit %s inference (%s weights, batch %d x "
               "context %d), cheapest first:\n\n",
               m->name, dtype_name(o->i.weight_dtype), o->i.batch,
               o->i.context);
    printf("  %-16s %6s  %-18s %9s %8s %12s  %s\n", "gpu", "count", "plan",
           "used GiB", "of GiB", "price USD", "note");
    for (int i = 0; i < c->n; i++) {
        const mem_choice *x = &ch[i];
        char plan[64], price[32];
        if (!x->gpus) {
            printf("  %-16s %6s  does not fit in %d GPUs\n", x->gpu->name,
                   "-", limit);
            continue;
        }
        plan_text(o, x, plan, sizeof plan);
        if (x->price_usd > 0)
            snprintf(price, sizeof price, "%.0f", x->price_usd);
        else
            snprintf(price, sizeof price, "n/a");
        char note[256];
        snprintf(note, sizeof note, "%s", x->note);
        if (x->gpus > 1 && !gpu_has(x->gpu, GPU_CAP_NVLINK))
            snprintf(note + strlen(note), sizeof note - strlen(note),
                     "%sno NVLink: TP over PCIe", note[0] ? "; " : "");
        if (x->gpus > 8)
            snprintf(note + strlen(note), sizeof note - strlen(note),
                     "%s%d machines of 8", note[0] ? "; " : "",
                     (x->gpus + 7) / 8);
        printf("  %-16s %6d  %-18s %9.2f %8.2f %12s  %s\n", x->gpu->name,
               x->gpus, plan, gib(x->result.total), gib(x->gpu->memory_bytes),
               price, note);
    }
    printf("\nPrices are for the GPUs alone: launch MSRP for consumer and "
           "workstation cards,\nreported street prices for datacenter parts "
           "(price_source in topologies/gpus.cfg).\n");
    free(ch);
    return EXIT_OK;
}

/* ---- run ----------------------------------------------------------------- */

static int split_gpus(const char *list, char names[][128], int cap)
{
    int n = 0;
    const char *p = list;
    while (*p && n < cap) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        snprintf(names[n++], 128, "%.*s", (int)len, p);
        p += len + (comma ? 1 : 0);
    }
    return n;
}

static int check_capabilities(const opts *o, const gpu_spec *g, llm_err *e)
{
    const char *why = NULL;
    dtype d = o->train ? o->t.precision : o->i.weight_dtype;
    if (!gpu_supports_dtype(g, d, &why) && d != DT_FP8)
        printf("note: %s has %s: %s is emulated by fp16 kernels (same "
               "memory)\n", g->name, why, dtype_name(d));
    if (!gpu_supports_dtype(g, d, &why) && d == DT_FP8 && o->train)
        return err_set(e, "--precision fp8 on %s: %s (expected a Hopper, Ada "
                          "or Blackwell GPU, or --precision bf16)",
                       g->name, why);
    return 0;
}

static int report(const opts *o, const model_spec *m, gpu_catalog *cat,
                  llm_err *e)
{
    char names[16][128];
    int n = split_gpus(o->gpus, names, 16);
    int idx[16], fits_any = 0;
    for (int k = 0; k < n; k++) {
        const gpu_spec *g = cfg_find_gpu(cat, names[k], e);
        if (!g)
            return EXIT_BAD_INPUT;
        idx[k] = (int)(g - cat->gpus);
        if (!o->json && check_capabilities(o, g, e))
            return EXIT_BAD_INPUT;
    }
    mem_result r;
    if (o->train)
        mem_train_breakdown(m, &o->t, &o->o, &r);
    else
        mem_infer_breakdown(m, &o->i, &o->o, &r);
    if (!o->json) {
        if (o->train)
            print_train(m, &o->t, &o->o, &r);
        else
            print_infer(m, &o->i, &o->o, &r);
        printf("\n");
    }
    json_t *arr = json_array();
    for (int k = 0; k < n; k++) {
        const gpu_spec *g = &cat->gpus[idx[k]];
        mem_remedy rm[MEM_MAX_REMEDIES];
        int nr = 0;
        bool fits = r.total <= g->memory_bytes;
        fits_any |= fits;
        if (!fits)
            nr = o->train ? mem_train_remedies(m, &o->t, &o->o, g, rm)
                          : mem_infer_remedies(m, &o->i, &o->o, g, rm);
        if (o->json) {
            json_t *j = result_json(o, m, &r);
            add_verdict_json(j, g, &r, rm, nr);
            json_array_append_new(arr, j);
            continue;
        }
        print_verdict(g, &r);
        if (!fits) {
            print_remedies(rm, nr);
            if (k + 1 < n)
                printf("\n");
        }
    }
    if (o->json) {
        if (n == 1) {
            json_t *one = json_incref(json_array_get(arr, 0));
            json_decref(arr);
            cmd_print_json(one);
        } else {
            cmd_print_json(arr);
        }
    } else {
        json_decref(arr);
    }
    return fits_any ? EXIT_OK : EXIT_NO_FIT;
}

/* Inference defaults that depend on the model: its max_seq and dtype. */
static void fill_infer_defaults(plan_infer *i, const model_spec *m)
{
    if (i->context == 0)
        i->context = m->max_seq;
    if (i->weight_dtype == DT_COUNT)
        i->weight_dtype = m->weight_dtype;
}

static int run(int argc, char **argv, llm_err *e)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (cfg_load_overhead(cfg_datadir(), NULL, &o.o, e))
        return EXIT_BAD_INPUT;
    char name[256] = "";
    if (parse(argc, argv, &o, name, sizeof name, e))
        return EXIT_BAD_INPUT;
    model_spec m;
    if (cfg_load_model_named(name, &m, e))
        return EXIT_BAD_INPUT;
    fill_infer_defaults(&o.i, &m);
    /* --recommend alone checks each layout it tries, not the given one */
    bool check = o.gpus != NULL;
    if (check && (o.train ? plan_train_check(&m, &o.t, e)
                          : plan_infer_check(&m, &o.i, e)))
        return EXIT_BAD_INPUT;
    gpu_catalog cat;
    if (cfg_load_catalog(&cat, e))
        return EXIT_BAD_INPUT;
    int rc = o.recommend && !o.gpus ? recommend(&o, &m, &cat)
                                    : report(&o, &m, &cat, e);
    if (o.recommend && o.gpus && rc != EXIT_BAD_INPUT) {
        printf("\n");
        recommend(&o, &m, &cat);
    }
    gpu_catalog_free(&cat);
    return rc;
}

const cmd_def cmd_memory_def = {
    "memory", "per-GPU memory for training or inference: fits? remedies? "
              "cheapest GPUs",
    usage, run, 1u << EXP_INFER | 1u << EXP_TRAIN, takes};
