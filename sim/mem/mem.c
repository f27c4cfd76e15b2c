#include "mem/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "model/stack.h"

static int microbatches(const plan_train *p)
{
    if (p->global_batch <= 0)
        return p->pp;
    return p->global_batch / (p->micro_batch * p->dp);
}

/* ---- bytes per parameter ---------------------------------------------- */

double mem_weight_bytes_per_param(dtype precision)
{
    switch (precision) {
    case DT_FP32:
    case DT_TF32:
        return 4;
    case DT_FP8:
        /* Transformer Engine keeps bf16 weights and caches their FP8 cast */
        return 3;
    default:
        return 2;
    }
}

double mem_grad_bytes_per_param(const plan_train *p)
{
    return p->grad_fp32 ? 4 : (mem_weight_bytes_per_param(p->precision) == 4
                                   ? 4
                                   : 2);
}

double mem_optimizer_bytes_per_param(const plan_train *p)
{
    /* an fp32 master copy whenever the weights are not fp32 (ZeRO §3.1) */
    double master = mem_weight_bytes_per_param(p->precision) == 4 ? 0 : 4;
    switch (p->optimizer) {
    case OPT_ADAM:
    case OPT_ADAMW:
    case OPT_LAMB: /* You et al. 2020, Algorithm 2: Adam's m and v */
        return master + 8; /* fp32 momentum + variance */
    case OPT_SGD:
        return master;
    case OPT_SGD_MOMENTUM:
        return master + 4;
    case OPT_ADAM8BIT:
        /* bitsandbytes: two 8-bit states, one fp32 absmax per 2048-block
         * per state (Dettmers et al. 2022) */
        return master + 2 + 2 * 4.0 / 2048;
    case OPT_ADAFACTOR:
    case OPT_COUNT:
        break;
    }
    return master; /* adafactor's factored state is added per tensor */
}

double mem_optimizer_step_bytes(const plan_train *p)
{
    /* fp32 words: the master weight and the gradient read, the master
     * written, plus the states read and written */
    switch (p->optimizer) {
    case OPT_SGD:
        return 3 * 4.0;
    case OPT_SGD_MOMENTUM:
        return 5 * 4.0;
    case OPT_ADAM8BIT:
        /* bitsandbytes' 8-bit Adam: two 1-byte states read and written */
        return 3 * 4.0 + 4 * 1.0;
    case OPT_ADAFACTOR:
        /* the factored statistics are rows and columns, a vanishing share;
         * the update's RMS (update clipping) reads the update once more */
        return 4 * 4.0;
    case OPT_LAMB:
        /* apex FusedLAMB (apex/optimizers/fused_lamb.py,
         * csrc/multi_tensor_lamb.cu): the global gradient norm reads g;
         * the per-tensor weight norm reads p; stage 1 reads g, p, m, v and
         * writes the update over g, m and v; the update's norm reads it;
         * stage 2 reads p and the update and writes p */
        return 13 * 4.0;
    case OPT_ADAM:
    case OPT_ADAMW:
    case OPT_COUNT:
        break;
    }
    /* Adam: p, g, m, v read, p, m, v written (apex/PyTorch fused Adam) */
    return 7 * 4.0;
}

/* Adafactor (Shazeer & Stern 2018) without momentum (beta1 = None, the
 * default): a row and a column fp32 accumulator per matrix, a full one per
 * vector.  Per GPU the tensor's share of rows+cols is taken in proportion
 * to its share of elements. */
static double adafactor_state_bytes(const model_tensor *t, double numel_gpu)
{
    double numel = model_tensor_numel(t);
    if (t->cols == 1)
        return 4.0 * numel_gpu;
    return 4.0 * (double)(t->rows + t->cols) * (double)t->copies *
           (numel_gpu / numel);
}

/* ---- LoRA ------------------------------------------------------------- */

/* Which linears get adapters: every projection of the attention (for MLA
 * its down- and up-projections too) and the MLP of a dense layer (Hu et
 * al. adapted W_q and W_v; QLoRA, Dettmers et al. 2023, showed that every
 * linear layer is needed to match full fine-tuning, and it is the usual
 * recipe).  An MoE layer adapts its attention only: adapters on every
 * routed expert would multiply them by the expert count, and its shared
 * experts are left alike; the router stays frozen. */
static bool lora_adapted(const model_spec *m, int layer, const model_tensor *t)
{
    if (!t->matmul || t->cols == 1)
        return false;
    if (t->group == TG_ATTN)
        return true;
    return t->group == TG_MLP &&
           !(m->moe_experts > 0 && layer >= m->moe_dense_layers);
}

/* Linears a tensor holds: SwiGLU's gate and up projections are fused in
 * one tensor of 2f columns, but each has its own adapters. */
static double lora_parts(const model_spec *m, const model_tensor *t)
{
    return m->mlp == MLP_SWIGLU && t->group == TG_MLP &&
                   strcmp(t->name, "gate_up") == 0
               ? 2
               : 1;
}

/* Rows are a linear's inputs and columns its outputs (model.c), so each
 * of its `parts` linears has r·(in + out/parts) adapter parameters.  On a
 * GPU both factors are sharded like the tensor, as NeMo's
 * ParallelLinearAdapter does (A split over r beside a column-parallel
 * linear, over its inputs beside a row-parallel one; B over its outputs).
 * PEFT's Megatron backend keeps one factor whole instead: r·in or r·out
 * more per linear, a few times the adapters at TP 8 but still under 1%
 * of the frozen weights; not modelled. */
double mem_lora_tensor_params(const model_spec *m, int r, int layer,
                              const model_tensor *t, int tp, int ep)
{
    if (r <= 0 || !lora_adapted(m, layer, t))
        return 0;
    double parts = lora_parts(m, t);
    double full = (double)r * parts *
                  ((double)t->rows + (double)t->cols / parts) *
                  (double)t->copies;
    return full * model_tensor_numel_per_gpu(m, t, tp, ep) /
           model_tensor_numel(t);
}

/* Adafactor's factored state of the adapters: A (in x r) and B (r x out)
 * are matrices, a row and a column accumulator each, sharded like them. */
static double lora_adafactor_bytes(const model_spec *m, int r, int layer,
                                   const model_tensor *t, int tp, int ep)
{
    if (r <= 0 || !lora_adapted(m, layer, t))
        return 0;
    double parts = lora_parts(m, t);
    double acc = 4.0 * parts *
                 ((double)t->rows + (double)t->cols / parts + 2.0 * r) *
                 (double)t->copies;
    return acc * model_tensor_numel_per_gpu(m, t, tp, ep) /
           model_tensor_numel(t);
}

double mem_lora_params_total(const model_spec *m, int r)
{
    model_tensor t[MODEL_MAX_TENSORS];
    double sum = 0;
    for (int l = 0; l < m->layers; l++) {
        int n = model_layer_tensors(m, l, t);
        for (int i = 0; i < n; i++)
            sum += mem_lora_tensor_params(m, r, l, &t[i], 1, 1);
    }
    return sum;
}

/* ---- training --------------------------------------------------------- */

/* Layers [*first, *last) on pipeline stage s (an even split). */
void mem_stage_layers(int layers, int pp, int s, int *first, int *last)
{
    int base = layers / pp, extra = layers % pp;
    *first = s * base + (s < extra ? s : extra);
    *last = *first + base + (s < extra ? 1 : 0);
}

typedef struct states {
    double dense, expert;   /* params per GPU, by sharding group */
    double adafactor;       /* factored optimizer bytes (unsharded) */
    double biggest_layer;   /* per-GPU params of the largest layer */
    double lora;            /* LoRA adapter params per GPU (dense) */
    double lora_adafactor;  /* the adapters' factored optimizer bytes */
} states;

static void add_tensor_states(const model_spec *m, const model_tensor *t,
                              int tp, int ep, states *st, double *layer_sum)
{
    double n = model_tensor_numel_per_gpu(m, t, tp, ep);
    if (t->split == SPLIT_EXPERT)
        st->expert += n;
    else
        st->dense += n;
    st->adafactor += adafactor_state_bytes(t, n);
    if (layer_sum)
        *layer_sum += n;
}

/* The layer after l on pipeline stage s (its virtual stages in order), or
 * -1 after the last; l = -1 gives the first. */
static int next_stage_layer(const model_spec *m, const plan_train *p, int s,
                            int l)
{
    int nv = plan_vstages(p);
    for (int vs = s; vs < nv; vs += p->pp) {
        int a, b;
        plan_vstage_layers(m, p, vs, &a, &b);
        if (l + 1 >= a && l + 1 < b)
            return l + 1;
        if (l < a && a < b)
            return a;
    }
    return -1;
}

static states stage_states(const model_spec *m, const plan_train *p, int s)
{
    states st = {0};
    model_tensor t[MODEL_MAX_TENSORS];
    const int tp = p->tp, ep = p->ep, pp = p->pp, lora_rank = p->lora_rank;
    for (int l = next_stage_layer(m, p, s, -1); l >= 0;
         l = next_stage_layer(m, p, s, l)) {
        double layer = 0;
        int n = model_layer_tensors(m, l, t);
        for (int i = 0; i < n; i++) {
            add_tensor_states(m, &t[i], tp, ep, &st, &layer);
            double a = mem_lora_tensor_params(m, lora_rank, l, &t[i], tp, ep);
            st.lora += a;
            layer += a; /* ZeRO-3 gathers a layer's adapters with it */
            st.lora_adafactor +=
                lora_adafactor_bytes(m, lora_rank, l, &t[i], tp, ep);
        }
        if (layer > st.biggest_layer)
            st.biggest_layer = layer;
    }
    int n = model_edge_tensors(m, s == 0, s == pp - 1, t);
    for (int i = 0; i < n; i++)
        add_tensor_states(m, &t[i], tp, ep, &st, NULL);
    return st;
}

static double act_bytes_per_value(const plan_train *p)
{
    return dtype_bytes(plan_act_dtype(p));
}

/* One layer's activations without recompute, in parts (bytes, one
 * microbatch, one GPU, before the TP split of the last three).
 * Korthikanti et al. §4.1 generalized, with a = heads, s = tokens per GPU
 * (seq / cp), b = micro-batch:
 *   whole: kept whole on every TP rank unless SP: two norm inputs, QKV
 *     input, MLP input (2 bytes each) and, with dropout, two 1-byte masks
 *     -> 10sbh;
 *   split: Q, K, V, attention output (2sbh each for MHA);
 *   mlp: intermediates (GELU: input and output, 2·2sbf = 16sbh at f = 4h;
 *     SwiGLU: gate, up and product, 3·2sbf);
 *   core: the attention core without FlashAttention: softmax output
 *     2as²b, plus with dropout its mask as²b and output 2as²b -> 5as²b;
 *     with FlashAttention only the fp32 log-sum-exp 4asb;
 *   input: the layer's input, all a checkpoint keeps: 2sbh (÷t with SP).
 * GPT-3 with dropout, no TP: sbh(34 + 5as/h), Korthikanti eq. 1. */
typedef struct act_parts {
    double whole, split, mlp, core, input;
} act_parts;

static act_parts layer_parts(const model_spec *m, const plan_train *p,
                             int layer)
{
    const double s = (double)p->seq_len / p->cp, b = p->micro_batch;
    const double h = m->hidden, a = m->heads, t = p->tp;
    const double v = act_bytes_per_value(p);
    const bool drop = m->dropout > 0;
    const double sb = s * b;
    act_parts x;

    x.whole = 4 * v * sb * h + (drop ? 2 * sb * h : 0);
    x.input = v * sb * h;
    if (p->sp) {
        x.whole /= t;
        x.input /= t;
    }

    double qk = model_qk_head_dim(m), vd = model_v_head_dim(m);
    double q_w = a * qk, o_w = a * vd, k_w, v_w;
    if (m->mla) {
        k_w = a * qk;
        v_w = a * vd;
    } else {
        double kv_div = m->kv_heads >= p->tp ? t : m->kv_heads;
        k_w = m->kv_heads * m->head_dim * t / kv_div;
        v_w = k_w;
    }
    x.split = v * sb * (q_w + k_w + v_w + o_w);
    x.core = p->flash_attn ? 4.0 * a * s * b /* FlashAttention's fp32 LSE */
                           : (drop ? 5.0 : 2.0) / 2.0 * v * a * s * s * b;

    double per_ffn = m->mlp == MLP_SWIGLU ? 3.0 : 2.0; /* values per f */
    if (m->moe_experts > 0 && layer >= m->moe_dense_layers) {
        double k = m->moe_active, f = m->moe_expert_ffn;
        /* router logits (fp32), each token's k dispatched copies (expert
         * input) and their intermediates; shared experts see every token */
        x.mlp = 4.0 * sb * m->moe_experts * t +
                k * v * sb * (h + per_ffn * f) +
                m->moe_shared * v * sb * per_ffn * f;
    } else {
        x.mlp = per_ffn * v * sb * m->ffn;
    }
    return x;
}

/* A linear whose input is split by TP and whose output is the whole
 * hidden size in partial sums (Megatron's and torchtitan's row-parallel
 * layers): the attention output projection and the MLP's down one. */
static bool row_parallel(const model_tensor *x)
{
    return strcmp(x->name, "o") == 0 || strcmp(x->name, "down") == 0 ||
           strcmp(x->name, "fc2") == 0;
}

/* torchtitan's op-level selective AC on one layer (parallelize_llama.py
 * @9dec370ad26b: _save_list and _custom_policy; the same rule at HEAD
 * b5bcd76c, activation_checkpoint.py SelectiveAC): inside a block the
 * output of every odd-numbered aten.mm (the 1st, 3rd, ...), of the
 * FlashAttention or memory-efficient SDPA kernel and of reduce-scatter
 * collectives is saved; everything else (norms, rotary, SiLU, products,
 * residual adds, and the even-numbered matmuls) is replayed in the
 * backward from the block's input.  The matmuls are counted in the order
 * torchtitan's blocks run them, which is model_layer_tensors' order (q,
 * k, v, o, then w1, w3, w2: a SwiGLU gate_up tensor is the two mms w1
 * and w3); the MoE router's mm is not counted, torchtitan forces its
 * recompute (force_recompute_mm_shapes_by_fqns "moe.router.gate"), and
 * expert GEMMs alternate as a dense MLP's would.  Returns the bytes saved
 * per token on one GPU; *replayed: the share of the layer's matmul FLOPs
 * replayed.  For Llama 3 8B that keeps wq, wv, w1 and w2, and replays wk,
 * wo and w3 (37% of the matmul FLOPs). */
static double op_saved_per_token(const model_spec *m, const plan_train *p,
                                 int layer, double *replayed)
{
    model_tensor tt[MODEL_MAX_TENSORS];
    const int n = model_layer_tensors(m, layer, tt);
    const double v = act_bytes_per_value(p), t = p->tp, h = m->hidden;
    double saved = 0, all = 0, rep = 0;
    int count = 0;
    for (int i = 0; i < n; i++) {
        const model_tensor *x = &tt[i];
        if (!x->matmul)
            continue;
        /* this GPU's share of the weight, and of the output's width */
        double frac = model_tensor_numel_per_gpu(m, x, p->tp, 1) /
                      model_tensor_numel(x);
        double out = (row_parallel(x) ? (double)x->cols : x->cols * frac) *
                     (double)x->active;
        double macs = (double)x->rows * (double)x->cols * frac *
                      (double)x->active;
        if (x->group == TG_ROUTER) {
            all += macs;
            rep += macs;
            continue;
        }
        int parts = m->mlp == MLP_SWIGLU && strcmp(x->name, "gate_up") == 0
                        ? 2
                        : 1;
        for (int j = 0; j < parts; j++) {
            all += macs / parts;
            if (++count % 2 == 1)
                saved += v * out / parts;
            else
                rep += macs / parts;
        }
    }
    if (p->flash_attn) /* SDPA's output and fp32 log-sum-exp */
        saved += v * m->heads * (double)model_v_head_dim(m) / t +
                 4.0 * m->heads / t;
    if (t > 1 && p->sp) /* after the attention and after the MLP */
        saved += 2 * v * h / t;
    if (p->ep > 1 && m->moe_experts > 0 && layer >= m->moe_dense_layers)
        /* all-to-all dispatch and combine (HEAD's save list) */
        saved += 2 * m->moe_active * v * h;
    *replayed = all > 0 ? rep / all : 0;
    return saved;
}

double mem_op_replayed_share(const model_spec *m, const plan_train *p,
                             int layer)
{
    double share;
    op_saved_per_token(m, p, layer, &share);
    return share;
}

double mem_act_layer_full_bytes(const model_spec *m, const plan_train *p,
                                int layer)
{
    act_parts x = layer_parts(m, p, layer);
    return x.whole + (x.split + x.core + x.mlp) / p->tp;
}

double mem_act_layer_bytes(const model_spec *m, const plan_train *p,
                           int layer)
{
    act_parts x = layer_parts(m, p, layer);
    if (plan_layer_checkpointed(m, p, layer))
        return x.input;
    switch (p->recompute) {
    case RECOMPUTE_SELECTIVE:
        return x.whole + (x.split + x.mlp) / p->tp;
    case RECOMPUTE_OP: {
        double share, sb = (double)p->seq_len / p->cp * p->micro_batch;
        return x.input + sb * op_saved_per_token(m, p, layer, &share);
    }
    default: /* none, or a block every:K leaves whole */
        return x.whole + (x.split + x.core + x.mlp) / p->tp;
    }
}

double mem_replay_flops_per_token(const model_spec *m, const plan_train *p,
                                  double attn_layer_flops)
{
    model_tensor tt[MODEL_MAX_TENSORS];
    double f = 0;
    for (int l = 0; l < m->layers; l++) {
        int n = model_layer_tensors(m, l, tt);
        double macs = 0;
        for (int i = 0; i < n; i++) {
            if (tt[i].matmul)
                macs += (double)tt[i].rows * (double)tt[i].cols *
                        (double)tt[i].active;
            macs += mem_lora_tensor_params(m, p->lora_rank, l, &tt[i], 1, 1);
        }
        if (plan_layer_checkpointed(m, p, l))
            f += 2 * macs + attn_layer_flops;
        else if (p->recompute == RECOMPUTE_SELECTIVE)
            f += attn_layer_flops;
        else if (p->recompute == RECOMPUTE_OP)
            f += mem_op_replayed_share(m, p, l) * 2 * macs +
                 (p->flash_attn ? 0 : attn_layer_flops);
    }
    return f;
}

/* The loss's logits buffers at their peak, on the last stage, for one
 * microbatch of T = s·b tokens over a vocabulary split by TP (Megatron's
 * vocab-parallel loss, torchtitan's loss_parallel), v the activations'
 * bytes:
 *   fused (Megatron-LM tensor_parallel/cross_entropy.py): the 16-bit
 *     logits and their fp32 copy (calculate_logits_max's .float()),
 *     which becomes the softmax in place and, backward, the gradient in
 *     place (grad_input.mul_), then its 16-bit cast: (v + 4)·TV/t;
 *   eager (F.cross_entropy(pred.float(), ...), torchtitan's
 *     cross_entropy_loss, Hugging Face's ForCausalLMLoss): forward the
 *     16-bit logits, the fp32 copy and the log-softmax it saves
 *     (v + 8 B); backward the saved log-softmax, the incoming gradient
 *     and log_softmax_backward's output, 12 B, the larger;
 *   compiled (the same under torch.compile, torchtitan from 2025): the
 *     16-bit logits are kept (the softmax is recomputed from them and the
 *     fp32 log-sum-exp) and the backward writes a 16-bit gradient: 2v.
 * Korthikanti et al. Appendix B count 4sbv/t, the fp32 logits a fused
 * loss holds between the passes. */
double mem_loss_bytes(const model_spec *m, const plan_train *p)
{
    const double v = act_bytes_per_value(p);
    const double tv = (double)p->seq_len / p->cp * p->micro_batch *
                      m->vocab / p->tp;
    switch (p->loss) {
    case LOSS_EAGER:
        return (v + 8 > 12 ? v + 8 : 12) * tv;
    case LOSS_COMPILED:
        return 2 * v * tv;
    default:
        return (v + 4) * tv;
    }
}

/* Layer-microbatch units held on stage s and microbatches in flight. */
static double layers_held(const plan_train *p, int layers_stage, int s,
                          int m_count, int *in_flight)
{
    int pp = p->pp;
    if (p->schedule == SCHED_GPIPE) {
        *in_flight = m_count;
        return (double)m_count * layers_stage;
    }
    if (p->schedule == SCHED_INTERLEAVED) {
        int v = p->vpp;
        int chunks = (pp - s - 1) * 2 + (v - 1) * pp + 1;
        if (chunks > m_count * v)
            chunks = m_count * v;
        *in_flight = (chunks + v - 1) / v;
        return (double)chunks * layers_stage / v;
    }
    int r = pp - s < m_count ? pp - s : m_count;
    *in_flight = r;
    return (double)r * layers_stage;
}

/* held >= 0: that many (virtual-stage) chunks held instead of the
 * schedule's peak (mem_train_stage).
 *
 * The peak: what every layer-microbatch in flight keeps (its mode's
 * share: the input of a checkpointed layer, the saved tensors under op),
 * the embedding and final-norm extras, and on top of them the larger of
 * two transients that never meet: the backward of a layer rematerializes
 * all it did not keep (a checkpointed layer its whole set, at once), and
 * the loss holds its logits buffers (mem_loss_bytes), which are freed
 * before the last layer's backward begins. */
static void train_activations(const model_spec *m, const plan_train *p,
                              int s, int held, mem_result *r)
{
    double sum = 0, working = 0;
    int nl = 0, in_flight;
    for (int l = next_stage_layer(m, p, s, -1); l >= 0;
         l = next_stage_layer(m, p, s, l), nl++) {
        double kept = mem_act_layer_bytes(m, p, l);
        double replayed = mem_act_layer_full_bytes(m, p, l) - kept;
        sum += kept;
        if (replayed > working)
            working = replayed;
    }
    r->microbatches = microbatches(p);
    if (held >= 0) {
        int vpp = p->schedule == SCHED_INTERLEAVED ? p->vpp : 1;
        in_flight = (held + vpp - 1) / vpp;
        r->act_layers_held = (double)held * nl / vpp;
    } else {
        r->act_layers_held = layers_held(p, nl, s, r->microbatches,
                                         &in_flight);
    }
    r->in_flight = in_flight;
    r->act_per_layer = nl > 0 ? sum / nl : 0; /* the embedding alone: none */
    r->act_working = working;

    const double v = act_bytes_per_value(p);
    const double sbh = (double)p->seq_len / p->cp * p->micro_batch *
                       m->hidden;
    const double whole_div = p->sp ? p->tp : 1;
    /* Korthikanti Appendix B: embedding dropout sbhp/t on the first stage;
     * the last stage's final norm + output-layer inputs, held for one
     * microbatch, and its loss */
    double edge = 0;
    if (s == 0 && m->dropout > 0)
        edge += in_flight * sbh / whole_div;
    if (s == p->pp - 1) {
        edge += 2 * v * sbh / whole_div;
        r->act_loss = mem_loss_bytes(m, p);
    }
    r->act_edge = edge;
    r->activations = r->act_layers_held * r->act_per_layer + edge +
                     (working > r->act_loss ? working : r->act_loss);
}

void mem_train_stage(const model_spec *m, const plan_train *p,
                     const mem_overhead *o, int s, int held, mem_result *r)
{
    memset(r, 0, sizeof *r);
    r->stage = s;
    states st = stage_states(m, p, s);
    const double nd = (double)p->dp * p->cp, ne = nd / p->ep;
    const double w = mem_weight_bytes_per_param(p->precision);
    const double g = mem_grad_bytes_per_param(p);
    double opt = mem_optimizer_bytes_per_param(p);

    r->params_per_gpu = st.dense + st.expert;
    r->trainable_params_per_gpu = p->lora_rank > 0 ? st.lora
                                                   : r->params_per_gpu;
    double w_shard = p->zero >= 3 ? 1 : 0, g_shard = p->zero >= 2,
           o_shard = p->zero >= 1;
    /* LoRA: the frozen base stays whole, in the training precision (and
     * ZeRO-3 still shards it); the adapters' own 16-bit copy joins it */
    r->weights = w * ((st.dense + st.lora) / (w_shard ? nd : 1) +
                      st.expert / (w_shard ? ne : 1));
    if (p->zero >= 3) {
        /* the layer in use and the one being prefetched, gathered */
        r->zero3_gather = 2 * st.biggest_layer * w;
        r->weights += r->zero3_gather;
    }
    r->gradients = g * (st.dense / (g_shard ? nd : 1) +
                        st.expert / (g_shard ? ne : 1));
    double opt_bytes = opt * r->params_per_gpu;
    if (p->optimizer == OPT_ADAFACTOR)
        opt_bytes += st.adafactor;
    /* shard in proportion of dense/expert params */
    double frac_e = r->params_per_gpu > 0 ? st.expert / r->params_per_gpu : 0;
    r->optimizer = o_shard ? opt_bytes * ((1 - frac_e) / nd + frac_e / ne)
                           : opt_bytes;
    if (p->lora_rank > 0) {
        /* only the adapters have gradients, fp32 master copies and
         * optimizer state; they are never experts' (lora_adapted) */
        r->gradients = g * st.lora / (g_shard ? nd : 1);
        opt_bytes = opt * st.lora +
                    (p->optimizer == OPT_ADAFACTOR ? st.lora_adafactor : 0);
        r->optimizer = opt_bytes / (o_shard ? nd : 1);
    }

    /* LoRA leaves the activations as they are: a frozen linear needs no
     * saved input for its data gradient, but its adapter's A needs that
     * same input for its weight gradient; the adapters' own T x r
     * intermediates (r/h of an input each) are not counted */
    train_activations(m, p, s, held, r);

    const double v = act_bytes_per_value(p);
    if (p->dp * p->cp > 1 && p->zero >= 2) {
        /* a plan that names no bucket: PyTorch DDP's (train and search
         * pass a copy with their stack's in it) */
        stack_spec dflt = stack_defaults();
        r->comm_buffers += 2 * stack_bucket_bytes(&dflt, p->bucket_bytes,
                                                  p->dp * p->cp,
                                                  mem_grad_bytes_per_param(p));
    }
    if (p->pp > 1) /* send + receive of one activation tensor */
        r->comm_buffers += 2 * v * (double)p->seq_len / p->cp *
                           p->micro_batch * m->hidden / (p->sp ? p->tp : 1);
    int groups = (p->tp > 1) + (p->pp > 1) + (p->dp * p->cp > 1) +
                 (p->cp > 1) + (p->ep > 1);
    r->nccl = groups * o->nccl_bytes_per_group;
    r->cuda_context = o->cuda_context_bytes;
    double tensors = r->weights + r->gradients + r->optimizer +
                     r->activations + r->comm_buffers;
    r->reserve = o->reserve_frac * tensors;
    r->overhead = r->cuda_context + r->nccl + r->comm_buffers + r->reserve;
    r->total = tensors - r->comm_buffers + r->overhead;
}

void mem_train_breakdown(const model_spec *m, const plan_train *p,
                         const mem_overhead *o, mem_result *r)
{
    mem_result cur;
    for (int s = 0; s < p->pp; s++) {
        mem_train_stage(m, p, o, s, -1, &cur);
        if (s == 0 || cur.total > r->total)
            *r = cur;
    }
}

/* ---- inference -------------------------------------------------------- */

static double quantized_bytes(const plan_infer *p, const model_tensor *t,
                              double numel_gpu)
{
    double sixteen = dtype_bytes(p->weight_dtype) >= 2
                         ? dtype_bytes(p->weight_dtype)
                         : 2;
    if (!t->matmul || t->group == TG_OUTPUT || t->group == TG_ROUTER)
        return numel_gpu * sixteen; /* norms, embeddings, LM head stay 16-bit */
    switch (p->weight_dtype) {
    case DT_INT4:
        /* fp16 scale + fp16 zero point per group (GPTQ/AWQ layout) */
        return numel_gpu * (0.5 + 4.0 / p->quant_group);
    case DT_INT8:
        /* fp16 scale per output channel */
        return numel_gpu * (1.0 + 2.0 / (double)t->rows);
    case DT_FP8:
        return numel_gpu + 4.0; /* per-tensor fp32 scale */
    case DT_FP4:
        /* NVFP4 block scales (in dtype_bytes) + per-tensor fp32 scale */
        return numel_gpu * dtype_bytes(DT_FP4) + 4.0;
    default:
        return numel_gpu * dtype_bytes(p->weight_dtype);
    }
}

static dtype kv_dtype(const plan_infer *p)
{
    if (p->kv_dtype != DT_COUNT)
        return p->kv_dtype;
    return dtype_bytes(p->weight_dtype) >= 2 ? p->weight_dtype : DT_FP16;
}

static double infer_weights(const model_spec *m, const plan_infer *p,
                            int s, int l0, int l1, double *params)
{
    model_tensor t[MODEL_MAX_TENSORS];
    double bytes = 0;
    *params = 0;
    for (int l = l0; l < l1; l++) {
        int n = model_layer_tensors(m, l, t);
        for (int i = 0; i < n; i++) {
            double x = model_tensor_numel_per_gpu(m, &t[i], p->tp, 1);
            *params += x;
            bytes += quantized_bytes(p, &t[i], x);
        }
    }
    int n = model_edge_tensors(m, s == 0, s == p->pp - 1, t);
    for (int i = 0; i < n; i++) {
        double x = model_tensor_numel_per_gpu(m, &t[i], p->tp, 1);
        *params += x;
        bytes += quantized_bytes(p, &t[i], x);
    }
    return bytes;
}

/* Peak transient of one forward pass over T batched tokens: the residual
 * stream and norm output (2h), QKV and attention output, and the MLP's
 * intermediates (gate+up and product for SwiGLU), 16-bit each; plus the
 * sampled tokens' fp32 logits on the last stage (vLLM computes logits only
 * for the last position of each sequence). */
static double infer_workspace(const model_spec *m, const plan_infer *p,
                              bool last, double *tokens)
{
    double T = (double)p->batch * p->context;
    if (T > p->max_batched_tokens)
        T = p->max_batched_tokens;
    *tokens = T;
    double f = m->ffn;
    if (m->moe_experts > 0) {
        double fm = (double)(m->moe_active + m->moe_shared) * m->moe_expert_ffn;
        f = fm > f ? fm : f;
    }
    double qkv = m->heads * (double)(model_qk_head_dim(m) + model_v_head_dim(m)) +
                 2.0 * m->kv_heads * m->head_dim;
    double per_ffn = m->mlp == MLP_SWIGLU ? 3.0 : 2.0;
    double per_tok = 2.0 * (2.0 * m->hidden + (qkv + per_ffn * f) / p->tp);
    double ws = T * per_tok;
    if (last)
        ws += 4.0 * p->batch * m->vocab;
    return ws;
}

void mem_infer_stage(const model_spec *m, const plan_infer *p,
                        const mem_overhead *o, int s, mem_result *r)
{
    memset(r, 0, sizeof *r);
    r->stage = s;
    int l0, l1;
    mem_stage_layers(m->layers, p->pp, s, &l0, &l1);
    r->weights = infer_weights(m, p, s, l0, l1, &r->params_per_gpu);

    dtype kv = kv_dtype(p);
    double blocks = ceil((double)p->context / p->block_size);
    r->kv_tokens = (double)p->batch * blocks * p->block_size;
    r->kv_per_token_gpu =
        model_kv_bytes_per_token_layer_gpu(m, kv, p->tp) * (l1 - l0);
    r->kv_cache = r->kv_tokens * r->kv_per_token_gpu;
    /* the popular formula, for the same GPU share */
    r->kv_rule_of_thumb = (double)p->batch * p->context * m->hidden *
                          (l1 - l0) * 2.0 * dtype_bytes(kv) / p->tp;

    r->activations = infer_workspace(m, p, s == p->pp - 1,
                                     &r->workspace_tokens);
    int groups = (p->tp > 1) + (p->pp > 1);
    r->nccl = groups * o->nccl_bytes_per_group;
    r->cuda_context = o->cuda_context_bytes;
    double tensors = r->weights + r->kv_cache + r->activations;
    r->reserve = o->reserve_frac * tensors;
    r->overhead = r->cuda_context + r->nccl + r->reserve;
    r->total = tensors + r->overhead;
}

void mem_infer_breakdown(const model_spec *m, const plan_infer *p,
                         const mem_overhead *o, mem_result *r)
{
    mem_result cur;
    for (int s = 0; s < p->pp; s++) {
        mem_infer_stage(m, p, o, s, &cur);
        if (s == 0 || cur.total > r->total)
            *r = cur;
    }
}
