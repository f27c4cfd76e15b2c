#include "report/rmemory.h"

#include <string.h>

#include "base/util.h"
#include "report/rjson.h"

static double gib(double bytes) { return bytes / GiB; }

/* Appends to a "how" buffer (snprintf at its end: truncates, never
 * overflows). */
#define HOW_ADD(how, ...)                                                   \
    snprintf((how) + strlen(how), sizeof(how) - strlen(how), __VA_ARGS__)

/* One row of the breakdown: what, GiB per GPU, how it was computed. */
static void line(FILE *fp, const char *what, double bytes, const char *how)
{
    if (bytes == 0 && how[0]) /* an overhead that does not apply */
        return;
    fprintf(fp, "  %-24s %9.2f   %s\n", what, gib(bytes), how);
}

static void table_head(FILE *fp)
{
    fprintf(fp, "  %-24s %9s   %s\n", "per GPU", "GiB", "how");
}

/* NCCL buffers, CUDA context, allocator reserve and the total: the
 * overheads both modes state, each naming the setting that changes it. */
static void overhead_lines(FILE *fp, const mem_overhead *o,
                           const mem_result *r)
{
    char how[240];
    snprintf(how, sizeof how, "%.0f communicator(s) x %.0f MiB (--nccl-mib)",
             o->nccl_bytes_per_group > 0 ? r->nccl / o->nccl_bytes_per_group
                                         : 0,
             o->nccl_bytes_per_group / MiB);
    line(fp, "NCCL buffers", r->nccl, how);
    line(fp, "CUDA context", r->cuda_context, "--cuda-context-gib");
    snprintf(how, sizeof how, "%.0f%% of tensors (--reserve-pct)",
             o->reserve_frac * 100);
    line(fp, "allocator reserve", r->reserve, how);
    line(fp, "total", r->total, "");
}

/* ---- training ------------------------------------------------------------ */

static void train_plan_text(FILE *fp, const model_spec *m,
                            const plan_train *p, const mem_result *r)
{
    fprintf(fp, "%s (%s): %.2f B parameters, training in %s, %s\n",
            m->display, m->name, model_params_total(m) / 1e9,
            dtype_name(p->precision), plan_optimizer_names[p->optimizer]);
    char rc[PLAN_RECOMPUTE_TEXT];
    fprintf(fp, "plan: tp %d, pp %d, dp %d, cp %d, ep %d (%d GPU%s)%s; "
            "micro-batch %d, %d microbatch%s/step, seq %d; %s%s; ZeRO-%d; "
            "recompute %s; FlashAttention %s; %s cross-entropy\n",
            p->tp, p->pp, p->dp, p->cp, p->ep, plan_train_gpus(p),
            plan_train_gpus(p) > 1 ? "s" : "",
            p->sp ? ", sequence parallel" : "", p->micro_batch,
            r->microbatches, r->microbatches > 1 ? "es" : "", p->seq_len,
            plan_schedule_names[p->schedule],
            p->schedule == SCHED_INTERLEAVED ? " (virtual stages)" : "",
            p->zero, plan_recompute_text(p, rc),
            p->flash_attn ? "on" : "off", plan_loss_names[p->loss]);
    fprintf(fp, "peak on pipeline stage %d of %d (%d microbatch%s in flight "
            "there)\n\n",
            r->stage, p->pp, r->in_flight, r->in_flight > 1 ? "es" : "");
}

static void train_weights_line(FILE *fp, const plan_train *p,
                               const mem_result *r)
{
    char how[200];
    snprintf(how, sizeof how, "%.3f B params%s x %.0f B%s%s",
             r->params_per_gpu / 1e9, p->lora_rank > 0 ? " + adapters" : "",
             mem_weight_bytes_per_param(p->precision),
             p->zero >= 3 ? " / ZeRO-3 shards" : "",
             r->zero3_gather > 0 ? " + 2 gathered layers" : "");
    line(fp, "weights", r->weights, how);
}

/* Under LoRA only the adapters have gradients and optimizer states. */
static void train_gradients_line(FILE *fp, const plan_train *p,
                                 const mem_result *r)
{
    char how[200] = "";
    if (p->lora_rank > 0)
        snprintf(how, sizeof how, "%.2f M LoRA rank-%d adapter params ",
                 r->trainable_params_per_gpu / 1e6, p->lora_rank);
    HOW_ADD(how, "x %.0f B%s%s", mem_grad_bytes_per_param(p),
            p->grad_fp32 ? " fp32 accumulation buffer (main_grad)" : "",
            p->zero >= 2 ? " / ZeRO shards" : "");
    if (r->microbatches > 1)
        HOW_ADD(how, ", accumulated over %d microbatches", r->microbatches);
    line(fp, "gradients", r->gradients, how);
}

static void train_optimizer_line(FILE *fp, const plan_train *p,
                                 const mem_result *r)
{
    char how[200] = "";
    if (p->lora_rank > 0)
        snprintf(how, sizeof how, "%.2f M adapter params ",
                 r->trainable_params_per_gpu / 1e6);
    HOW_ADD(how, "x %.2f B (%s%s)%s", mem_optimizer_bytes_per_param(p),
            mem_weight_bytes_per_param(p->precision) == 4 ? ""
                                                          : "fp32 master + ",
            plan_optimizer_names[p->optimizer],
            p->zero >= 1 ? " / dp x cp" : "");
    if (p->zero >= 1)
        HOW_ADD(how, " = /%d", p->dp * p->cp);
    line(fp, "optimizer states", r->optimizer, how);
}

/* What the layer-microbatches keep, then the larger transient on top
 * (a layer's replay or the loss's logits), then the edge extras. */
static void train_activations_line(FILE *fp, const plan_train *p,
                                   const mem_result *r)
{
    static const char *const kept[RECOMPUTE_COUNT] = {
        "", " (attention core replayed)", " (input + saved by op)",
        " (mean: every K-th keeps its input)", " (layer inputs)"};
    char how[240];
    snprintf(how, sizeof how, "%.1f layer-microbatches x %.1f MiB%s",
             r->act_layers_held, r->act_per_layer / MiB,
             p->recompute >= 0 && p->recompute < RECOMPUTE_COUNT
                 ? kept[p->recompute]
                 : "");
    if (r->act_working >= r->act_loss) {
        if (gib(r->act_working) >= 0.005) /* not FlashAttention's LSE */
            HOW_ADD(how, " + %.2f GiB replayed layer", gib(r->act_working));
    } else
        HOW_ADD(how, " + %.2f GiB logits (%s loss)", gib(r->act_loss),
                plan_loss_names[p->loss]);
    if (r->act_edge > 0)
        HOW_ADD(how, " + %.2f GiB embedding/final norm", gib(r->act_edge));
    line(fp, "activations", r->activations, how);
}

static void train_text(FILE *fp, const model_spec *m, const plan_train *p,
                       const mem_overhead *o, const mem_result *r)
{
    train_plan_text(fp, m, p, r);
    table_head(fp);
    train_weights_line(fp, p, r);
    train_gradients_line(fp, p, r);
    train_optimizer_line(fp, p, r);
    train_activations_line(fp, p, r);
    line(fp, "communication buffers", r->comm_buffers,
         "ZeRO buckets, pipeline send/recv");
    overhead_lines(fp, o, r);
}

/* ---- inference ----------------------------------------------------------- */

/* The KV cache's dtype when none is given: the weights' if 16 bits or
 * more, else fp16 (quantized weights keep a 16-bit cache). */
static dtype infer_kv_dtype(const plan_infer *p)
{
    if (p->kv_dtype != DT_COUNT)
        return p->kv_dtype;
    return dtype_bytes(p->weight_dtype) >= 2 ? p->weight_dtype : DT_FP16;
}

static void infer_plan_text(FILE *fp, const model_spec *m,
                            const plan_infer *p, const mem_result *r)
{
    fprintf(fp, "%s (%s): %.2f B parameters, inference with %s weights, %s "
            "KV cache\n",
            m->display, m->name, model_params_total(m) / 1e9,
            dtype_name(p->weight_dtype), dtype_name(infer_kv_dtype(p)));
    fprintf(fp, "plan: tp %d, pp %d (%d GPU%s); batch %d x context %d "
            "tokens; peak on pipeline stage %d\n\n",
            p->tp, p->pp, p->tp * p->pp, p->tp * p->pp > 1 ? "s" : "",
            p->batch, p->context, r->stage);
}

static void infer_text(FILE *fp, const model_spec *m, const plan_infer *p,
                       const mem_overhead *o, const mem_result *r)
{
    char how[240];
    infer_plan_text(fp, m, p, r);
    table_head(fp);
    snprintf(how, sizeof how, "%.3f B params, %s%s", r->params_per_gpu / 1e9,
             dtype_name(p->weight_dtype),
             p->weight_dtype == DT_INT4 ? " + group scales" : "");
    line(fp, "weights", r->weights, how);
    snprintf(how, sizeof how, "%.0f tokens x %.1f KiB (%s); rule of thumb "
             "says %.2f GiB (%.1fx)",
             r->kv_tokens, r->kv_per_token_gpu / 1024,
             model_attention_kind(m), gib(r->kv_rule_of_thumb),
             r->kv_cache > 0 ? r->kv_rule_of_thumb / r->kv_cache : 0);
    line(fp, "KV cache", r->kv_cache, how);
    snprintf(how, sizeof how, "workspace for %.0f batched tokens + logits",
             r->workspace_tokens);
    line(fp, "activations", r->activations, how);
    overhead_lines(fp, o, r);
}

/* ---- verdicts ------------------------------------------------------------ */

void rmemory_emulated_text(FILE *fp, const gpu_spec *g, dtype d,
                           const char *why)
{
    fprintf(fp, "note: %s has %s: %s is emulated by fp16 kernels (same "
            "memory)\n", g->name, why, dtype_name(d));
}

static bool fits(const gpu_spec *g, const mem_result *r)
{
    return r->total <= g->memory_bytes;
}

static void verdict_text(FILE *fp, const gpu_spec *g, const mem_result *r)
{
    double cap = g->memory_bytes;
    if (fits(g, r))
        fprintf(fp, "%s (%.2f GiB): fits, %.2f GiB free\n", g->name,
                gib(cap), gib(cap - r->total));
    else
        fprintf(fp, "%s (%.2f GiB): does NOT fit, short by %.2f GiB\n",
                g->name, gib(cap), gib(r->total - cap));
}

static void remedies_text(FILE *fp, const mem_remedy *rm, int n)
{
    if (n == 0) {
        fprintf(fp, "  no remedy found within the plan's options\n");
        return;
    }
    fprintf(fp, "remedies, largest saving first (per-GPU total after "
            "each):\n");
    for (int i = 0; i < n; i++)
        fprintf(fp, "  %-66s saves %7.2f GiB -> %7.2f GiB  %s\n",
                rm[i].what, gib(rm[i].saves), gib(rm[i].total),
                rm[i].fits ? "fits" : "still short");
}

void rmemory_text(FILE *fp, const rmemory_case *c, const mem_result *r,
                  const rmemory_verdict *v, int n)
{
    if (c->train)
        train_text(fp, c->m, c->t, c->o, r);
    else
        infer_text(fp, c->m, c->i, c->o, r);
    fprintf(fp, "\n");
    for (int k = 0; k < n; k++) {
        verdict_text(fp, v[k].g, r);
        if (fits(v[k].g, r))
            continue;
        remedies_text(fp, v[k].rm, v[k].nrm);
        if (k + 1 < n) /* a GPU's remedies end its paragraph */
            fprintf(fp, "\n");
    }
}

/* ---- JSON -------------------------------------------------------------- */

static json_t *breakdown_details_json(const rmemory_case *c,
                                      const mem_result *r)
{
    json_t *d = json_object();
    json_object_set_new(d, "params_per_gpu", rjson_bytes(r->params_per_gpu));
    if (c->train && c->t->lora_rank > 0)
        json_object_set_new(d, "trainable_params_per_gpu",
                            rjson_bytes(r->trainable_params_per_gpu));
    json_object_set_new(d, "zero3_gather_bytes", rjson_bytes(r->zero3_gather));
    json_object_set_new(d, "communication_buffers_bytes",
                        rjson_bytes(r->comm_buffers));
    json_object_set_new(d, "nccl_bytes", rjson_bytes(r->nccl));
    json_object_set_new(d, "cuda_context_bytes", rjson_bytes(r->cuda_context));
    json_object_set_new(d, "allocator_reserve_bytes", rjson_bytes(r->reserve));
    json_object_set_new(d, "peak_stage", json_integer(r->stage));
    if (c->train) {
        json_object_set_new(d, "microbatches", json_integer(r->microbatches));
        json_object_set_new(d, "in_flight", json_integer(r->in_flight));
        json_object_set_new(d, "activation_bytes_per_layer",
                            rjson_bytes(r->act_per_layer));
        json_object_set_new(d, "layer_microbatches_held",
                            json_real(r->act_layers_held));
        json_object_set_new(d, "replayed_layer_bytes",
                            rjson_bytes(r->act_working));
        json_object_set_new(d, "loss_logits_bytes", rjson_bytes(r->act_loss));
    } else {
        json_object_set_new(d, "kv_tokens", rjson_bytes(r->kv_tokens));
        json_object_set_new(d, "kv_bytes_per_token_gpu",
                            json_real(r->kv_per_token_gpu));
        json_object_set_new(d, "kv_rule_of_thumb_bytes",
                            rjson_bytes(r->kv_rule_of_thumb));
    }
    return d;
}

static json_t *breakdown_json(const rmemory_case *c, const mem_result *r)
{
    json_t *j = json_object();
    json_object_set_new(j, "model", json_string(c->m->name));
    json_object_set_new(j, "mode", json_string(c->train ? "training"
                                                        : "inference"));
    json_object_set_new(j, "weights_bytes", rjson_bytes(r->weights));
    json_object_set_new(j, "gradients_bytes", rjson_bytes(r->gradients));
    json_object_set_new(j, "optimizer_bytes", rjson_bytes(r->optimizer));
    json_object_set_new(j, "activations_bytes",
                        rjson_bytes(r->activations));
    json_object_set_new(j, "kv_cache_bytes", rjson_bytes(r->kv_cache));
    json_object_set_new(j, "overhead_bytes", rjson_bytes(r->overhead));
    json_object_set_new(j, "total_bytes", rjson_bytes(r->total));
    json_object_set_new(j, "breakdown", breakdown_details_json(c, r));
    return j;
}

static json_t *remedy_json(const mem_remedy *rm)
{
    json_t *x = json_object();
    json_object_set_new(x, "what", json_string(rm->what));
    json_object_set_new(x, "total_bytes", rjson_bytes(rm->total));
    json_object_set_new(x, "saves_bytes", rjson_bytes(rm->saves));
    json_object_set_new(x, "fits", json_boolean(rm->fits));
    json_object_set_new(x, "gpus", json_integer(rm->gpus));
    return x;
}

static void add_verdict_json(json_t *j, const rmemory_verdict *v,
                             const mem_result *r)
{
    const gpu_spec *g = v->g;
    json_object_set_new(j, "gpu", json_string(g->name));
    json_object_set_new(j, "gpu_memory_bytes", rjson_bytes(g->memory_bytes));
    json_object_set_new(j, "fits", json_boolean(fits(g, r)));
    json_object_set_new(j, "free_bytes",
                        rjson_bytes(g->memory_bytes - r->total));
    json_t *a = json_array();
    for (int i = 0; i < v->nrm; i++)
        json_array_append_new(a, remedy_json(&v->rm[i]));
    json_object_set_new(j, "remedies", a);
}

json_t *rmemory_json(const rmemory_case *c, const mem_result *r,
                     const rmemory_verdict *v, int n)
{
    json_t *arr = json_array();
    for (int k = 0; k < n; k++) {
        json_t *j = breakdown_json(c, r);
        add_verdict_json(j, &v[k], r);
        json_array_append_new(arr, j);
    }
    if (n != 1)
        return arr;
    json_t *one = json_incref(json_array_get(arr, 0));
    json_decref(arr);
    return one;
}

/* ---- recommend --------------------------------------------------------- */

static void plan_text(const rmemory_case *c, const mem_choice *ch, char *b,
                      size_t n)
{
    if (c->train)
        snprintf(b, n, "tp%d pp%d dp%d z%d", ch->train.tp, ch->train.pp,
                 ch->train.dp, ch->train.zero);
    else
        snprintf(b, n, "tp%d pp%d", ch->infer.tp, ch->infer.pp);
}

static void recommend_head(FILE *fp, const rmemory_case *c)
{
    const plan_train *t = c->t;
    const plan_infer *i = c->i;
    char rc[PLAN_RECOMPUTE_TEXT];
    if (c->train)
        fprintf(fp, "Fewest GPUs that fit %s training (%s, %s, micro-batch "
                "%d, seq %d, recompute %s), cheapest first:\n\n",
                c->m->name, dtype_name(t->precision),
                plan_optimizer_names[t->optimizer], t->micro_batch,
                t->seq_len, plan_recompute_text(t, rc));
    else
        fprintf(fp, "Fewest GPUs that fit %s inference (%s weights, batch %d "
                "x context %d), cheapest first:\n\n",
                c->m->name, dtype_name(i->weight_dtype), i->batch,
                i->context);
    fprintf(fp, "  %-16s %6s  %-18s %9s %8s %12s  %s\n", "gpu", "count",
            "plan", "used GiB", "of GiB", "price USD", "note");
}

/* mem's note, then what a set that size implies: TP without NVLink goes
 * over PCIe, and more than 8 GPUs is several machines. */
static void choice_note(const mem_choice *x, char *note, size_t n)
{
    snprintf(note, n, "%s", x->note);
    size_t len = strlen(note);
    if (x->gpus > 1 && !gpu_has(x->gpu, GPU_CAP_NVLINK))
        snprintf(note + len, n - len, "%sno NVLink: TP over PCIe",
                 note[0] ? "; " : "");
    len = strlen(note);
    if (x->gpus > 8)
        snprintf(note + len, n - len, "%s%d machines of 8",
                 note[0] ? "; " : "", (x->gpus + 7) / 8);
}

static void choice_row(FILE *fp, const rmemory_case *c, const mem_choice *x,
                       int limit_gpus)
{
    if (!x->gpus) {
        fprintf(fp, "  %-16s %6s  does not fit in %d GPUs\n", x->gpu->name,
                "-", limit_gpus);
        return;
    }
    char plan[64], price[32], note[256];
    plan_text(c, x, plan, sizeof plan);
    if (x->price_usd > 0)
        snprintf(price, sizeof price, "%.0f", x->price_usd);
    else
        snprintf(price, sizeof price, "n/a");
    choice_note(x, note, sizeof note);
    fprintf(fp, "  %-16s %6d  %-18s %9.2f %8.2f %12s  %s\n", x->gpu->name,
            x->gpus, plan, gib(x->result.total), gib(x->gpu->memory_bytes),
            price, note);
}

void rmemory_recommend_text(FILE *fp, const rmemory_case *c,
                            const mem_choice *ch, int n, int limit_gpus)
{
    recommend_head(fp, c);
    for (int i = 0; i < n; i++)
        choice_row(fp, c, &ch[i], limit_gpus);
    fprintf(fp, "\nPrices are for the GPUs alone: launch MSRP for consumer "
            "and workstation cards,\nreported street prices for datacenter "
            "parts (price_source in topologies/gpus.cfg).\n");
}

static json_t *choice_json(const rmemory_case *c, const mem_choice *x)
{
    json_t *o = json_object();
    char plan[64];
    plan_text(c, x, plan, sizeof plan);
    json_object_set_new(o, "gpu", json_string(x->gpu->name));
    json_object_set_new(o, "gpus", json_integer(x->gpus));
    json_object_set_new(o, "plan", json_string(x->gpus ? plan : ""));
    json_object_set_new(o, "per_gpu_bytes", rjson_bytes(x->result.total));
    json_object_set_new(o, "gpu_memory_bytes",
                        rjson_bytes(x->gpu->memory_bytes));
    json_object_set_new(o, "unit_price_usd", json_real(x->gpu->price_usd));
    json_object_set_new(o, "price_usd", json_real(x->price_usd));
    json_object_set_new(o, "price_source",
                        json_string(x->gpu->price_source));
    json_object_set_new(o, "note", json_string(x->note));
    return o;
}

json_t *rmemory_recommend_json(const rmemory_case *c, const mem_choice *ch,
                               int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, choice_json(c, &ch[i]));
    json_t *j = json_object();
    json_object_set_new(j, "model", json_string(c->m->name));
    json_object_set_new(j, "mode", json_string(c->train ? "training"
                                                        : "inference"));
    json_object_set_new(j, "recommendations", a);
    return j;
}

void rmemory_section_break(FILE *fp) { fprintf(fp, "\n"); }
