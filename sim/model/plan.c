/* plan — the parallel plans of training and inference: their defaults,
 * their names and whether a model admits them. */
#include "model/plan.h"

#include "base/util.h"

const char *const plan_optimizer_names[OPT_COUNT] = {
    "adam", "adamw", "sgd", "sgd-momentum", "adafactor", "adam-8bit"};
const char *const plan_recompute_names[3] = {"none", "selective", "full"};
const char *const plan_schedule_names[3] = {"1f1b", "gpipe", "interleaved"};

int plan_train_gpus(const plan_train *p) { return p->tp * p->pp * p->dp * p->cp; }

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

int plan_train_check(const model_spec *m, const plan_train *p, llm_err *e)
{
    if (check_tp(m, p->tp, e))
        return -1;
    if (p->lora_rank < 0)
        return err_set(e, "--lora-rank %d is negative (expected 0 for full "
                          "training or a LoRA rank such as 8, 16, 64)",
                       p->lora_rank);
    if (m->layers % p->pp != 0)
        return err_set(e, "--pp %d does not divide the %d layers of %s "
                          "(expected a divisor of %d)",
                       p->pp, m->layers, m->name, m->layers);
    if (p->schedule == SCHED_INTERLEAVED) {
        if (p->pp < 2)
            return err_set(e, "--schedule interleaved needs --pp >= 2");
        if ((m->layers / p->pp) % p->vpp != 0)
            return err_set(e, "--vpp %d does not divide the %d layers per "
                              "stage (expected a divisor)",
                           p->vpp, m->layers / p->pp);
    } else if (p->vpp != 1) {
        return err_set(e, "--vpp %d needs --schedule interleaved", p->vpp);
    }
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
