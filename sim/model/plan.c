/* plan — the parallel plans of training and inference: their defaults,
 * their names and whether a model admits them. */
#include "model/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

const char *const plan_optimizer_names[OPT_COUNT] = {
    "adam", "adamw", "sgd", "sgd-momentum", "adafactor", "adam-8bit",
    "lamb"};
const char *const plan_recompute_names[RECOMPUTE_COUNT] = {
    "none", "selective", "op", "every", "full"};
const char *const plan_loss_names[LOSS_COUNT] = {"fused", "eager",
                                                 "compiled"};
const char *const plan_schedule_names[3] = {"1f1b", "gpipe", "interleaved"};

int plan_train_gpus(const plan_train *p) { return p->tp * p->pp * p->dp * p->cp; }

int plan_gpu_rank(const plan_train *p, int tp, int cp, int dp, int pp)
{
    return tp + p->tp * (cp + p->cp * (dp + p->dp * pp));
}

int plan_vstages(const plan_train *p)
{
    return p->pp * (p->schedule == SCHED_INTERLEAVED ? p->vpp : 1);
}

/* Layers of virtual stage vs when none are given: even, else the first and
 * the last a layer short (the embedding and the loss count as layers).
 * With one layer a chunk, the first chunk holds the embedding alone and the
 * last the output layer and loss alone: Llama 3 405B's 126 layers in 16
 * stages of 8 chunks (Dubey et al. 2024, Sec. 3.3.2). */
static int derived_layers(const model_spec *m, int nv, int vs)
{
    if (m->layers % nv == 0)
        return m->layers / nv;
    int base = (m->layers + 2) / nv;
    return vs == 0 || vs == nv - 1 ? base - 1 : base;
}

bool plan_layers_split(const model_spec *m, int nv)
{
    return m->layers % nv == 0 ||
           (m->layers + 2) % nv == 0;
}

void plan_vstage_layers(const model_spec *m, const plan_train *p, int vs,
                        int *first, int *last)
{
    int nv = plan_vstages(p), at = 0;
    const plan_int_list *l = &p->layers_per_stage;
    for (int i = 0; i < vs; i++)
        at += l->n ? l->v[i] : derived_layers(m, nv, i);
    *first = at;
    *last = at + (l->n ? l->v[vs] : derived_layers(m, nv, vs));
}

int plan_stage_layer_count(const model_spec *m, const plan_train *p, int s)
{
    int n = 0, nv = plan_vstages(p);
    for (int vs = s; vs < nv; vs += p->pp) {
        int a, b;
        plan_vstage_layers(m, p, vs, &a, &b);
        n += b - a;
    }
    return n;
}

const char *plan_recompute_text(const plan_train *p, char *buf)
{
    if (p->recompute != RECOMPUTE_EVERY)
        return p->recompute >= 0 && p->recompute < RECOMPUTE_COUNT
                   ? plan_recompute_names[p->recompute]
                   : "?";
    snprintf(buf, PLAN_RECOMPUTE_TEXT, "every:%d", p->recompute_every);
    return buf;
}

int plan_recompute_parse(const char *text, plan_recompute *mode, int *every)
{
    *every = 0;
    if (strncmp(text, "every:", 6) == 0) {
        char *end;
        errno = 0;
        long k = strtol(text + 6, &end, 10);
        if (errno || end == text + 6 || *end || k < 1 || k > 1 << 20)
            return -1;
        *mode = RECOMPUTE_EVERY;
        *every = (int)k;
        return 0;
    }
    for (int i = 0; i < RECOMPUTE_COUNT; i++)
        if (i != RECOMPUTE_EVERY && strcmp(text, plan_recompute_names[i]) == 0) {
            *mode = (plan_recompute)i;
            return 0;
        }
    return -1;
}

bool plan_layer_checkpointed(const model_spec *m, const plan_train *p,
                             int layer)
{
    if (p->recompute == RECOMPUTE_FULL)
        return true;
    if (p->recompute != RECOMPUTE_EVERY || p->recompute_every < 1)
        return false;
    int nv = plan_vstages(p);
    for (int vs = 0; vs < nv; vs++) {
        int a, b;
        plan_vstage_layers(m, p, vs, &a, &b);
        if (layer < a || layer >= b)
            continue;
        int k = layer - a + 1; /* its place on its stage, from 1 */
        for (int w = vs % p->pp; w < vs; w += p->pp) {
            int a2, b2;
            plan_vstage_layers(m, p, w, &a2, &b2);
            k += b2 - a2;
        }
        return k % p->recompute_every == 0;
    }
    return false;
}

dtype plan_act_dtype(const plan_train *p)
{
    switch (p->precision) {
    case DT_FP32:
    case DT_TF32:
    case DT_FP16:
    case DT_BF16:
        return p->precision;
    default:
        return DT_BF16;
    }
}

/* ---- plan checks ------------------------------------------------------ */

static int check_tp(const model_spec *m, int tp, llm_err *e)
{
    if (m->heads % tp != 0)
        return err_set(e, "--tp %d does not divide the %d attention heads of "
                          "%s (expected a divisor of %d)",
                       tp, m->heads, m->name, m->heads);
    if (!m->mla && m->kv_heads % tp != 0 && tp % m->kv_heads != 0)
        return err_set(e, "--tp %d and the %d KV heads of %s: a KV head "
                          "cannot be split (expected tp dividing %d or a "
                          "multiple of it)",
                       tp, m->kv_heads, m->name, m->kv_heads);
    return 0;
}

/* The layers split over the (virtual) stages: a given list sums to the
 * layers with one entry per virtual stage, each at least 1 but the first
 * and the last (which may hold the embedding or the loss alone); a derived
 * split needs pp x vpp to divide the layers, or layers + 2. */
static int check_split(const model_spec *m, const plan_train *p, llm_err *e)
{
    int nv = plan_vstages(p);
    const plan_int_list *l = &p->layers_per_stage;
    bool il = p->schedule == SCHED_INTERLEAVED;
    const char *one = il ? "virtual stage" : "stage";
    const char *what = il ? "virtual stages" : "stages";
    if (l->n == 0) {
        if (plan_layers_split(m, nv))
            return 0;
        return err_set(e, "--pp %d%s does not split the %d layers of %s: "
                          "%d %s divide neither %d nor %d (the first and "
                          "last stage a layer short) (expected a divisor, "
                          "or --layers-per-stage)",
                       p->pp, il ? " x --vpp" : "", m->layers, m->name, nv,
                       what, m->layers,
                       m->layers + 2);
    }
    if (l->n != nv)
        return err_set(e, "--layers-per-stage gives %d entries for %d %s "
                          "(expected one per %s)",
                       l->n, nv, what, one);
    long sum = 0;
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] < 1 && i > 0 && i < l->n - 1)
            return err_set(e, "--layers-per-stage gives %s %d no layers "
                              "(expected at least 1 layer on every %s but "
                              "the first and the last, which may hold the "
                              "embedding or the loss alone)",
                           one, i, one);
        sum += l->v[i];
    }
    if (sum != m->layers)
        return err_set(e, "--layers-per-stage sums to %ld, and %s has %d "
                          "layers (expected a sum of %d)",
                       sum, m->name, m->layers, m->layers);
    return 0;
}

int plan_train_check(const model_spec *m, const plan_train *p, llm_err *e)
{
    if (check_tp(m, p->tp, e))
        return -1;
    if (p->lora_rank < 0)
        return err_set(e, "--lora-rank %d is negative (expected 0 for full "
                          "training or a LoRA rank such as 8, 16, 64)",
                       p->lora_rank);
    if (p->schedule == SCHED_INTERLEAVED) {
        if (p->pp < 2)
            return err_set(e, "--schedule interleaved needs --pp >= 2");
    } else if (p->vpp != 1) {
        return err_set(e, "--vpp %d needs --schedule interleaved", p->vpp);
    }
    if (check_split(m, p, e))
        return -1;
    if (p->recompute == RECOMPUTE_EVERY &&
        (p->recompute_every < 1 || p->recompute_every > m->layers))
        return err_set(e, "--recompute every:%d: %s has %d layers (expected "
                          "every:K with K 1..%d, the blocks between two "
                          "checkpointed ones; every:1 is full)",
                       p->recompute_every, m->name, m->layers, m->layers);
    if (p->seq_len % p->cp != 0)
        return err_set(e, "--cp %d does not divide --seq-len %d", p->cp,
                       p->seq_len);
    if (p->ep > 1) {
        if (m->moe_experts == 0)
            return err_set(e, "--ep %d: %s has no experts (expected --ep 1)",
                           p->ep, m->name);
        if (m->moe_experts % p->ep != 0)
            return err_set(e, "--ep %d does not divide the %d experts",
                           p->ep, m->moe_experts);
        if ((p->dp * p->cp) % p->ep != 0)
            return err_set(e, "--ep %d must divide dp x cp = %d (experts are "
                              "sharded inside the data-parallel group)",
                           p->ep, p->dp * p->cp);
    }
    if (p->moe_imbalance > 1 && m->moe_experts == 0)
        return err_set(e, "--moe-imbalance %g: %s has no experts (expected "
                          "1, or a mixture-of-experts model)",
                       p->moe_imbalance, m->name);
    if (p->zero > 0 && p->dp * p->cp == 1)
        return err_set(e, "--zero %d shards over data-parallel ranks, but "
                          "dp = 1 (expected --dp > 1 or --zero 0)",
                       p->zero);
    if (p->global_batch > 0 &&
        p->global_batch % (p->micro_batch * p->dp) != 0)
        return err_set(e, "--global-batch %d is not a multiple of "
                          "micro-batch x dp = %d",
                       p->global_batch, p->micro_batch * p->dp);
    return 0;
}

int plan_infer_check(const model_spec *m, const plan_infer *p, llm_err *e)
{
    if (check_tp(m, p->tp, e))
        return -1;
    if (p->pp > m->layers)
        return err_set(e, "--pp %d exceeds the %d layers of %s", p->pp,
                       m->layers, m->name);
    return 0;
}
