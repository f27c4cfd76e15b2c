#include "serve/serve.h"

#include <gsl/gsl_sort.h>
#include <stdarg.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "engine/engine.h"
#include "serve/runs.h"
#include "serve/infer.h"
#include "mem/mem.h"
#include "hw/net.h"
#include "base/util.h"

const char *const serve_preempt_names[PREEMPT_COUNT] = {"recompute", "swap"};

/* ---- state ------------------------------------------------------------- */

enum { R_FUTURE, R_WAITING, R_RUNNING, R_SWAPPED, R_PENDING, R_MOVING,
       R_DONE, R_REJECTED };

typedef struct req {
    int prompt, output;
    int computed;  /* tokens whose KV is in the cache */
    int generated; /* output tokens sampled */
    int blocks;    /* KV blocks held on its current replica */
    int inst, pinst; /* replica now; prefill replica (disaggregated) */
    int state;
    int chunk;     /* tokens in the batch it is in flight with, 0 = none */
    int preemptions;
    int flows_left;
    bool early;      /* layer-wise transfer started with the last chunk */
    bool flows_done; /* that transfer's bytes have arrived */
    int64_t t_arrive, t_first, t_last, t_finish, t_move0, t_move1;
    int64_t t_sched; /* first planned into an iteration; -1 before */
} req;

/* A FIFO of request ids with push-front (a preempted request goes back to
 * the head of the waiting queue, as vLLM's scheduler does). */
typedef struct deque {
    int *v;
    int cap, head, n;
} deque;

typedef struct batch {
    int inst, n, stage;
    int *ids;                /* requests, and the tokens of each */
    int *c;
    double *stage_s, *p2p_s; /* per stage */
    double host_s;           /* of stage_s[0], the host's exposed time */
    int64_t t0;
    bool used;
} batch;

typedef struct inst {
    int pool, index;
    int total_blocks, free_blocks;
    double swap_free_blocks;
    deque waiting, pending; /* pending: decode replicas, KV not yet here */
    int *running, nrun;     /* admission order */
    int *swapped, nswap;
    int moving;             /* transfers reserved on this decode replica */
    int inflight;
    int64_t *stage_free;
    int outstanding;
    /* accounting */
    int64_t kv_t;           /* last change of free_blocks */
    double kv_area;         /* used blocks x ns */
    int kv_peak;
    double busy_s, flops, bytes, dyn_j;
    double iter_s, host_s; /* iterations' time on stage 0; the host's part */
    long iterations;
    /* static batching: the batch's size, which every decode step pads to
     * until its last sequence ends */
    int static_n;
    int steps_left; /* decode iterations left in a multi-step run */
    bool arrived_mark; /* in sim.arrived */
} inst;

typedef struct sim {
    const serve_input *in;
    const serve_params *p;
    engine *eng;
    net *net;
    infer *x[2];
    req *r;
    int nreq;
    int left; /* requests admitted and not yet finished */
    inst *inst;
    int ninst, first[2];   /* instance index of each pool's replica 0 */
    batch *batches;        /* ninst x pp of its pool */
    int nbatches;
    int *batch_first;
    int rr[2];
    /* KV bytes per token from prefill GPU a to decode GPU b, by position
     * inside the replicas ([a][b], tp·pp of each pool) */
    double *kv_move;
    double block_bytes[2];  /* one GPU, largest stage */
    int budget;
    int watermark[2];
    int next_send;   /* closed loop: the next request a client sends */
    /* replicas that got requests at this instant, scheduled together a
     * nanosecond later so that a batch sees every request that arrived
     * at once (an offline batch, a closed loop's first wave) */
    int *arrived, narrived;
    bool kick_pending;
    /* samples: inter-token gaps in ticks, as runs (serve/runs.h) */
    runs itl;
    /* --warmup: the warm-up requests' output tokens, first tokens' prompts
     * and completions inside the measured window, which opens at the
     * first measured arrival; *_m1: as they stood at the latest measured
     * finish, where the window closes */
    bool window_open;
    serve_window warm, warm_m1;
    double kv_next_t, kv_dt_sample;
    serve_result *res;
    const serve_events *ev; /* NULL: nobody listens */
    llm_err *e;
    int failed;
#ifdef LLMSIM_CHECK
    /* per GPU of the stage that sets the block count: weights, workspace,
     * CUDA context and NCCL buffers (kv_blocks) */
    double fixed_bytes[2];
#endif
} sim;

static int64_t ns(double s) { return (int64_t)llround(s * 1e9); }
static double sec(int64_t t) { return (double)t * 1e-9; }

static int deque_init(deque *q, int cap)
{
    q->v = malloc(sizeof(int) * (size_t)(cap > 0 ? cap : 1));
    q->cap = cap > 0 ? cap : 1;
    q->head = q->n = 0;
    return q->v ? 0 : -1;
}
static void deque_push(deque *q, int id)
{
    LLM_ASSERT(q->n < q->cap);
    q->v[(q->head + q->n++) % q->cap] = id;
}
static void deque_push_front(deque *q, int id)
{
    LLM_ASSERT(q->n < q->cap);
    q->head = (q->head + q->cap - 1) % q->cap;
    q->v[q->head] = id;
    q->n++;
}
static int deque_at(const deque *q, int i) { return q->v[(q->head + i) % q->cap]; }
static void deque_pop(deque *q)
{
    q->head = (q->head + 1) % q->cap;
    q->n--;
}

static const serve_pool *pool_of(const sim *S, const inst *I)
{
    return &S->in->pool[I->pool];
}

static int blocks_for(const sim *S, int tokens)
{
    return (tokens + S->p->block_size - 1) / S->p->block_size;
}

static int len_of(const req *q) { return q->prompt + q->generated; }

/* ---- KV blocks ------------------------------------------------------- */

static void kv_account(sim *S, inst *I)
{
    int64_t now = engine_now(S->eng);
    I->kv_area += (double)(I->total_blocks - I->free_blocks) *
                  (double)(now - I->kv_t);
    I->kv_t = now;
}

static int inst_index(const sim *S, const inst *I) { return (int)(I - S->inst); }

/* The GPU memory the engine may fill on a GPU of M bytes whose weights,
 * workspace, context and buffers take `fixed`: gpu_memory_utilization of
 * all of it (vLLM), or the fixed part plus that share of what it leaves
 * (TensorRT-LLM's free_gpu_memory_fraction). */
static double mem_budget(const sim *S, double M, double fixed)
{
    double u = S->p->gpu_mem_util;
    return S->p->mem_of_free ? fixed + u * (M - fixed) : u * M;
}

#ifdef LLMSIM_CHECK
/* The GPU memory of a replica with `used` KV blocks stays within the
 * engine's budget (mem_budget) on the stage that set the block count
 * (kv_blocks: the others have more room per block). */
static void check_kv_memory(const sim *S, const inst *I, int used)
{
    const serve_pool *P = pool_of(S, I);
    double fixed = S->fixed_bytes[I->pool];
    double bytes = fixed + used * S->block_bytes[I->pool];
    double budget = mem_budget(S, P->gpu->memory_bytes, fixed);
    CHECK(used >= 0 && used <= I->total_blocks &&
              CHECK_LE_REL(bytes, budget, 1e-9),
          CHECK_EVENT("replica %d takes KV blocks", inst_index(S, I)),
          engine_now(S->eng),
          "replica %d holds %d of its %d KV blocks: %.6g GiB per GPU with "
          "the weights, workspace and buffers, budget %.6g GiB (%.2f x "
          "%.6g GiB)",
          inst_index(S, I), used, I->total_blocks, bytes / GiB,
          budget / GiB, S->p->gpu_mem_util, P->gpu->memory_bytes / GiB);
}
#endif

/* n free blocks leave the pool (never more than it has). */
static void kv_take(sim *S, inst *I, int n)
{
    CHECK(n >= 0 && n <= I->free_blocks,
          CHECK_EVENT("replica %d takes KV blocks", inst_index(S, I)),
          engine_now(S->eng),
          "replica %d takes %d KV blocks with %d of %d free",
          inst_index(S, I), n, I->free_blocks, I->total_blocks);
    LLM_ASSERT(n >= 0 && n <= I->free_blocks);
    kv_account(S, I);
    I->free_blocks -= n;
    int used = I->total_blocks - I->free_blocks;
    if (used > I->kv_peak) {
        I->kv_peak = used;
#ifdef LLMSIM_CHECK
        check_kv_memory(S, I, used); /* at each new peak */
#endif
    }
}

static void blocks_take(sim *S, inst *I, req *q, int n)
{
    kv_take(S, I, n);
    q->blocks += n;
}

static void blocks_give(sim *S, inst *I, int n)
{
    kv_account(S, I);
    I->free_blocks += n;
    CHECK(n >= 0 && I->free_blocks <= I->total_blocks,
          CHECK_EVENT("replica %d frees KV blocks", inst_index(S, I)),
          engine_now(S->eng),
          "replica %d frees %d KV blocks and has %d free of %d",
          inst_index(S, I), n, I->free_blocks, I->total_blocks);
    LLM_ASSERT(I->free_blocks <= I->total_blocks);
}

/* ---- the policies: who runs in the next iteration -------------------- */

typedef struct plan {
    int n, tokens, swap_in_blocks, swap_out_blocks;
    int preempted; /* requests this iteration preempted */
    int *ids, *c;
} plan;

/* A request in the plan counts as in flight: it is no preemption victim. */
static void plan_add(sim *S, plan *b, int id, int c)
{
    if (S->r[id].t_sched < 0)
        S->r[id].t_sched = engine_now(S->eng);
    S->r[id].chunk = c;
    b->ids[b->n] = id;
    b->c[b->n++] = c;
    b->tokens += c;
}

static void running_remove(inst *I, int id)
{
    int k = 0;
    for (int i = 0; i < I->nrun; i++)
        if (I->running[i] != id)
            I->running[k++] = I->running[i];
    I->nrun = k;
}

/* The newest running request not in flight: vLLM preempts the lowest
 * priority, which under FCFS is the last admitted. */
static int victim(sim *S, inst *I)
{
    for (int i = I->nrun - 1; i >= 0; i--)
        if (S->r[I->running[i]].chunk == 0)
            return I->running[i];
    return -1;
}

static void preempt(sim *S, inst *I, int id, plan *b)
{
    req *q = &S->r[id];
    running_remove(I, id);
    q->preemptions++;
    b->preempted++;
    S->res->preemptions++;
    if (S->p->preempt == PREEMPT_SWAP && I->swap_free_blocks >= q->blocks) {
        /* the blocks go to host memory and come back as they were */
        I->swap_free_blocks -= q->blocks;
        b->swap_out_blocks += q->blocks;
        S->res->swaps_out++;
        blocks_give(S, I, q->blocks);
        q->state = R_SWAPPED;
        I->swapped[I->nswap++] = id;
        return;
    }
    /* recompute: drop the cache, prefill prompt and output again later */
    blocks_give(S, I, q->blocks);
    q->blocks = 0;
    q->computed = 0;
    q->state = R_WAITING;
    deque_push_front(&I->waiting, id);
}

/* Grows a running request's cache for c more tokens, preempting newer
 * requests while blocks are short; false when it was preempted itself. */
static bool grow(sim *S, inst *I, int id, int c, plan *b)
{
    req *q = &S->r[id];
    int need = blocks_for(S, q->computed + c) - q->blocks;
    while (need > I->free_blocks) {
        int v = victim(S, I);
        if (v < 0)
            return false;
        preempt(S, I, v, b);
        if (v == id)
            return false;
    }
    if (need > 0)
        blocks_take(S, I, q, need);
    return true;
}

static int chunk_of(const req *q, int budget)
{
    int un = len_of(q) - q->computed;
    return un < budget ? un : budget;
}

/* Swapped requests come back first, oldest first, when their blocks fit. */
static void resume_swapped(sim *S, inst *I, plan *b)
{
    int k = 0;
    for (int i = 0; i < I->nswap; i++) {
        int id = I->swapped[i];
        req *q = &S->r[id];
        int nb = q->blocks;
        if (k == i && nb <= I->free_blocks - S->watermark[I->pool] &&
            I->nrun < S->p->max_num_seqs) {
            q->blocks = 0;
            blocks_take(S, I, q, nb);
            I->swap_free_blocks += nb;
            CHECK(I->swap_free_blocks <=
                      floor(S->p->swap_space_bytes / S->block_bytes[I->pool]),
                  CHECK_EVENT("request %d swaps in", id), engine_now(S->eng),
                  "replica %d has %.0f swap blocks free after request %d's "
                  "%d came back, more than its %.0f",
                  inst_index(S, I), I->swap_free_blocks, id, nb,
                  floor(S->p->swap_space_bytes / S->block_bytes[I->pool]));
            b->swap_in_blocks += nb;
            q->state = R_RUNNING;
            I->running[I->nrun++] = id;
            continue;
        }
        I->swapped[k++] = id;
    }
    I->nswap = k;
}

/* Tokens the running requests may still write under ADMIT_RESERVE:
 * reserve_ratio of each one's output not yet generated, less what its
 * blocks already hold beyond its cache. */
static double reserve_want(const sim *S, const req *q)
{
    return q->prompt + S->p->reserve_ratio * q->output;
}

static double reserve_gap(const sim *S, const req *q)
{
    double want = reserve_want(S, q);
    double held = (double)q->blocks * S->p->block_size;
    return want > held ? want - held : 0;
}

static double reserved_tokens(const sim *S, const inst *I)
{
    double t = 0;
    for (int i = 0; i < I->nrun; i++)
        t += reserve_gap(S, &S->r[I->running[i]]);
    return t;
}

/* The blocks a waiting request takes to join with chunk c, or -1 when the
 * engine's admission rule keeps it waiting.  A request preempted before
 * comes back only when its whole cache fits: it waits until it can run
 * instead of thrashing in and out (vLLM). */
static int admit_blocks(const sim *S, const inst *I, const req *q, int c,
                        double reserved)
{
    int room = I->free_blocks - S->watermark[I->pool];
    int chunk = blocks_for(S, q->computed + c) - q->blocks;
    int whole = blocks_for(S, len_of(q)) - q->blocks;
    switch (S->p->admit) {
    case ADMIT_NO_EVICT:
        /* the prompt and every output token, taken now: never preempted */
        whole = blocks_for(S, q->prompt + q->output) - q->blocks;
        return whole <= I->free_blocks ? whole : -1;
    case ADMIT_WHOLE:
        return whole <= room ? whole : -1;
    case ADMIT_RESERVE: {
        double free_tokens = (double)room * S->p->block_size - reserved;
        return reserve_want(S, q) <= free_tokens && chunk <= room ? chunk
                                                                  : -1;
    }
    default:
        if (q->preemptions > 0 && whole > room)
            return -1;
        return chunk <= room ? chunk : -1;
    }
}

/* Admits waiting requests, oldest first, while sequences, tokens and
 * blocks (above vLLM's 1% watermark) last and the engine's admission rule
 * lets them; `whole`: only whole remaining prompts (prefill-first).  None
 * joins an iteration that preempted (vLLM V1). */
static void admit_waiting(sim *S, inst *I, plan *b, int budget, bool whole)
{
    double reserved = 0;
    bool have_reserved = false;
    while (I->waiting.n > 0 && I->nrun < S->p->max_num_seqs &&
           b->tokens < budget && I->nswap == 0 && b->preempted == 0) {
        /* ADMIT_RESERVE: what the running requests may still write, summed
         * once and grown by each one admitted (the same sum, in order) */
        if (!have_reserved && S->p->admit == ADMIT_RESERVE) {
            reserved = reserved_tokens(S, I);
            have_reserved = true;
        }
        int id = deque_at(&I->waiting, 0);
        req *q = &S->r[id];
        int c = chunk_of(q, budget - b->tokens);
        if (whole && c < len_of(q) - q->computed)
            break;
        int need = admit_blocks(S, I, q, c, reserved);
        if (need < 0)
            break;
        deque_pop(&I->waiting);
        blocks_take(S, I, q, need);
        q->state = R_RUNNING;
        I->running[I->nrun++] = id;
        if (have_reserved)
            reserved += reserve_gap(S, q);
        plan_add(S, b, id, c);
    }
}

/* Which running requests an iteration takes: all of them (chunked), only
 * the decodes, or only the partial prefills (prefill-first batches). */
typedef enum { RUN_ALL, RUN_DECODES, RUN_PREFILLS } run_kind;

/* Running requests in admission order: each decode takes one token, a
 * partial prefill a chunk of what is left of the budget. */
static void schedule_running(sim *S, inst *I, plan *b, int budget,
                             run_kind kind)
{
    for (int i = 0; i < I->nrun && b->tokens < budget; i++) {
        int id = I->running[i];
        req *q = &S->r[id];
        if (q->chunk > 0)
            continue; /* in flight on another pipeline stage */
        int c = chunk_of(q, budget - b->tokens);
        bool decode = len_of(q) - q->computed == 1;
        if ((kind == RUN_DECODES && !decode) ||
            (kind == RUN_PREFILLS && decode))
            continue;
        if (!grow(S, I, id, c, b)) {
            /* it left the list (with every newer one not in flight):
             * the next survivor now sits at i */
            i--;
            continue;
        }
        plan_add(S, b, id, c);
    }
}

/* Multi-step scheduling (vLLM's --num-scheduler-steps): a decode batch
 * runs scheduler_steps iterations on one scheduling decision, and nothing
 * new joins until they are done.  True while such a run goes on: this
 * iteration may only decode. */
static bool in_multi_step(const inst *I) { return I->steps_left > 0; }

/* After an iteration is planned: a decode-only batch at a scheduling
 * point starts a run of scheduler_steps; one inside a run counts down. */
static void count_steps(sim *S, inst *I, const plan *b, bool decoded)
{
    if (b->n == 0 || !decoded)
        I->steps_left = 0;
    else if (I->steps_left > 0)
        I->steps_left--;
    else
        I->steps_left = S->p->scheduler_steps - 1;
}

/* Decodes and prompts in one iteration within the token budget: the
 * running requests first, then new ones, a new prompt split to fit what
 * is left or, with `whole`, taken only whole.  Inside a multi-step run
 * only the decodes go. */
static void mixed_batch(sim *S, inst *I, plan *b, bool whole)
{
    bool run = in_multi_step(I);
    resume_swapped(S, I, b);
    schedule_running(S, I, b, S->budget, run ? RUN_DECODES : RUN_ALL);
    if (!run)
        admit_waiting(S, I, b, S->budget, whole);
    count_steps(S, I, b, b->n > 0 && b->tokens == b->n);
}

/* Sarathi-Serve / vLLM V1: decodes first, then the running partial
 * prefills, then new requests, within one token budget. */
static void policy_chunked(sim *S, inst *I, plan *b)
{
    mixed_batch(S, I, b, false);
}

/* TensorRT-LLM's in-flight batching without chunked context (its default,
 * `enable_chunked_context` false): the generation steps and whole
 * contexts share an iteration of at most max_num_tokens tokens; a context
 * that does not fit what the decodes leave waits for the next iteration,
 * and none is ever split. */
static void policy_inflight(sim *S, inst *I, plan *b)
{
    mixed_batch(S, I, b, true);
}

/* A batch of prompts whenever one can be admitted, otherwise a batch of
 * decodes: the two never share an iteration.  Without a chunk size (vLLM
 * V0 without chunked prefill) a prompt joins only whole; with one (SGLang,
 * whose mixed chunks are off by default) a prefill batch holds at most
 * `chunk` tokens, a longer prompt is split and its rest goes first in the
 * next prefill batch, and the decodes wait until no prompt is left. */
static void policy_prefill_first(sim *S, inst *I, plan *b)
{
    bool run = in_multi_step(I);
    bool split = S->p->chunk > 0;
    resume_swapped(S, I, b);
    if (I->nswap == 0 && !run) {
        if (split)
            schedule_running(S, I, b, S->budget, RUN_PREFILLS);
        admit_waiting(S, I, b, S->budget, !split);
    }
    bool decoded = b->n == 0;
    if (decoded)
        schedule_running(S, I, b, S->p->max_batched_tokens, RUN_DECODES);
    count_steps(S, I, b, decoded);
}

/* Static batching (Hugging Face `generate`): a batch of whole prompts
 * forms only when the last one has ended, and runs until its longest
 * sequence ends. */
static void policy_static(sim *S, inst *I, plan *b)
{
    if (I->nrun == 0 && I->inflight == 0) {
        admit_waiting(S, I, b, S->p->max_batched_tokens, true);
        I->static_n = b->n;
        return;
    }
    if (b->n == 0)
        schedule_running(S, I, b, S->p->max_batched_tokens, RUN_DECODES);
}

/* A policy picks the next iteration's batch; indexed as the names. */
static void (*const policies[SERVE_POLICIES])(sim *S, inst *I, plan *b) = {
    [SERVE_CHUNKED] = policy_chunked,
    [SERVE_PREFILL_FIRST] = policy_prefill_first,
    [SERVE_INFLIGHT] = policy_inflight,
};
const char *const serve_policy_names[SERVE_POLICIES] = {
    [SERVE_CHUNKED] = "chunked",
    [SERVE_PREFILL_FIRST] = "prefill-first",
    [SERVE_INFLIGHT] = "inflight",
};

/* ---- routers ------------------------------------------------------------ */

static int route_rr(sim *S, int pool)
{
    int n = S->in->pool[pool].replicas;
    return S->first[pool] + S->rr[pool]++ % n;
}

static int route_least(sim *S, int pool)
{
    int best = S->first[pool];
    for (int i = 1; i < S->in->pool[pool].replicas; i++)
        if (S->inst[S->first[pool] + i].outstanding <
            S->inst[best].outstanding)
            best = S->first[pool] + i;
    return best;
}

static int queued(const inst *I) { return I->waiting.n + I->pending.n; }

static int route_queue(sim *S, int pool)
{
    int best = S->first[pool];
    for (int i = 1; i < S->in->pool[pool].replicas; i++) {
        const inst *a = &S->inst[S->first[pool] + i], *z = &S->inst[best];
        if (queued(a) < queued(z) ||
            (queued(a) == queued(z) && a->outstanding < z->outstanding))
            best = S->first[pool] + i;
    }
    return best;
}

typedef struct router {
    const char *name;
    int (*pick)(sim *S, int pool);
} router;

static const router routers[SERVE_ROUTERS] = {
    {"round-robin", route_rr},
    {"least-outstanding", route_least},
    {"shortest-queue", route_queue},
};
const char *const serve_router_names[SERVE_ROUTERS] = {
    "round-robin", "least-outstanding", "shortest-queue"};


/* ---- iterations ------------------------------------------------------- */

static void try_schedule(sim *S, inst *I);
static void try_admit_pending(sim *S, inst *I);
static void send_next(sim *S, int64_t at);
static void on_stage_done(engine *eng, void *ctx, uint64_t arg);

static double swap_s(sim *S, const inst *I, int blocks, bool in)
{
    if (blocks == 0)
        return 0;
    const serve_pool *P = pool_of(S, I);
    cost_op op = {.kind = in ? OP_MEMCPY_H2D : OP_MEMCPY_D2H,
                  .bytes = blocks * S->block_bytes[I->pool]};
    cost_result r;
    if (cost_predict(P->cost, P->gpu, &op, 0, &r, S->e)) {
        S->failed = 1;
        return 0;
    }
    return r.time_s;
}

/* The dense peak MFU is counted against: FP8 and FP4 GEMMs run at their
 * own where the GPU has their tensor cores, at 16-bit's where they fall
 * back to weight-only kernels. */
static double peak_flops(const sim *S, const serve_pool *P)
{
    dtype w = S->p->weight_dt;
    bool narrow = (w == DT_FP8 || w == DT_FP4) &&
                  gpu_supports_dtype(P->gpu, w, NULL);
    return P->gpu->peak_flops[narrow ? w : DT_FP16];
}

/* Static batching pads: every prompt to the longest, and every decode step
 * to the batch's size, finished sequences included (`generate` stops when
 * the last one does), each at the mean context of those still decoding. */
static void pad_static(const inst *I, infer_chunk *chunks, int np, int *nd,
                       double *dsum, int *logits)
{
    int q = 0, ctx = 0;
    for (int i = 0; i < np; i++)
        if (chunks[i].q_tokens > q)
            q = chunks[i].q_tokens, ctx = chunks[i].context;
    for (int i = 0; i < np; i++)
        chunks[i] = (infer_chunk){q, ctx};
    if (np == 0 && *nd > 0) {
        double mean = *dsum / *nd;
        *dsum = (double)I->static_n * fmax(mean, 1);
        *nd = I->static_n;
        *logits = I->static_n;
    }
}

/* Host time of an iteration of n sequences, np of them in their prefill,
 * on tp GPUs (a prefill's inputs go to each of tp > 1 worker processes),
 * and the launches a stage of `layers` layers takes when no CUDA graph
 * replays it. */
static double host_s(const sim *S, int n, int np, int tp)
{
    return S->p->iteration_overhead_s + S->p->host.per_seq_s * n +
           (np > 0 && tp > 1 ? S->p->host.prefill_s : 0);
}

double serve_layer_kernels(const eprof_host *h, const model_spec *m)
{
    return h->kernels_per_layer + (m->linear_bias ? h->bias_kernels : 0) +
           (m->norm == NORM_LAYER ? h->layernorm_kernels : 0) -
           (m->pos != POS_ROPE ? h->rope_kernels : 0);
}

static double launch_s(const sim *S, int layers, int np, int nd)
{
    const eprof_host *h = &S->p->host;
    bool graphed = np == 0 && nd <= h->graph_max_batch;
    return graphed ? 0
                   : layers * serve_layer_kernels(h, S->in->m) * h->launch_s;
}

static int price_batch(sim *S, inst *I, batch *B, const plan *b)
{
    const serve_pool *P = pool_of(S, I);
    infer_chunk ch[1024], *chunks = ch;
    int np = 0, nd = 0, logits = 0;
    double dsum = 0, dwin = 0;
    const int window = S->in->m->sliding_window;
    if (b->n > 1024 && !(chunks = malloc(sizeof *chunks * (size_t)b->n)))
        return err_set(S->e, "out of memory");
    for (int i = 0; i < b->n; i++) {
        const req *q = &S->r[b->ids[i]];
        int after = q->computed + b->c[i];
        logits += after == len_of(q);
        if (len_of(q) - q->computed == 1) {
            nd++;
            dsum += after;
            dwin += window > 0 && after > window ? window : after;
        } else {
            chunks[np++] = (infer_chunk){b->c[i], after};
        }
    }
    if (S->p->static_batch) {
        pad_static(I, chunks, np, &nd, &dsum, &logits);
        /* the padded batch's rows, each at the mean context */
        dwin = nd > 0 ? nd * fmin(dsum / nd, window) : 0;
    }
    infer_batch ib = {.prefill = chunks, .prefill_n = np, .decode_n = nd,
                      .decode_context_sum = dsum,
                      .decode_window_sum = window > 0 ? dwin : 0,
                      .logits = logits};
    infer_time t[64]; /* check_input: pp <= 64 */
    int rc = infer_batch_time(S->x[I->pool], &ib, t, S->e);
    if (chunks != ch)
        free(chunks);
    if (rc)
        return -1;
    for (int s = 0; s < P->pp; s++) {
        /* kernels launched one by one: the stage takes at least the time
         * the host spends launching them */
        double dur = fmax(t[s].total_s,
                          launch_s(S, infer_stage_layers(S->x[I->pool], s),
                                   np, nd));
        B->stage_s[s] = dur;
        if (infer_p2p_s(S->x[I->pool], s, b->tokens, &B->p2p_s[s], S->e))
            return -1;
        double peak = peak_flops(S, P);
        double act = fmax(peak > 0 ? t[s].flops / (peak * dur) : 0,
                          t[s].bytes / (P->gpu->mem_bw_Bps * dur));
        I->flops += t[s].flops * P->tp;
        I->bytes += t[s].bytes * P->tp;
        I->dyn_j += P->tp * dur * (P->gpu->tdp_w - P->idle_w) * fmin(1, act);
        if (s == 0)
            I->busy_s += dur;
    }
    /* host work before the launch (what the GPU's previous iteration did
     * not hide, when the engine overlaps them), and swaps the scheduler
     * ordered */
    double gpu = B->stage_s[0];
    double host = host_s(S, b->n, np, P->tp);
    /* overlapped with the GPU's previous iteration: only when one ran up
     * to now (after an idle gap the host's work has nothing to hide
     * behind) */
    if (S->p->host.overlap && I->iterations > 0 &&
        engine_now(S->eng) == I->stage_free[0])
        host = fmax(0, host - gpu);
    B->stage_s[0] += host + swap_s(S, I, b->swap_out_blocks, false) +
                     swap_s(S, I, b->swap_in_blocks, true);
    I->host_s += host;
    B->host_s = host;
    I->iter_s += B->stage_s[0];
    return S->failed ? -1 : 0;
}

static batch *free_batch(sim *S, inst *I)
{
    int idx = (int)(I - S->inst);
    int pp = pool_of(S, I)->pp;
    for (int k = 0; k < pp; k++) {
        batch *B = &S->batches[S->batch_first[idx] + k];
        if (!B->used)
            return B;
    }
    return NULL;
}

static void start_transfer(sim *S, int id, double cap_s);

static void launch(sim *S, inst *I, batch *B)
{
    int64_t now = engine_now(S->eng);
    B->used = true;
    B->inst = (int)(I - S->inst);
    B->stage = 0;
    B->t0 = now;
    I->inflight++;
    I->iterations++;
    I->stage_free[0] = now + ns(B->stage_s[0]);
    int pre = 0, tokens = 0;
    for (int i = 0; i < B->n; i++) {
        const req *q = &S->r[B->ids[i]];
        pre += len_of(q) - q->computed > 1;
        tokens += B->c[i];
    }
    if (S->ev && S->ev->batch)
        S->ev->batch(S->ev->ctx, B->inst, 0, now, B->stage_s[0], B->host_s,
                     pre, B->n - pre, tokens);
    if (S->ev && S->ev->kv_used)
        S->ev->kv_used(S->ev->ctx, B->inst, now,
                       I->total_blocks - I->free_blocks);
    engine_at(S->eng, I->stage_free[0], on_stage_done, S,
              (uint64_t)(B - S->batches));
    /* layer-wise KV transfer: the prompt's last chunk starts its
     * request's transfer with the forward pass that computes it */
    if (I->pool == 0 && S->in->npools == 2 && S->p->kv_layerwise) {
        double span = 0;
        for (int s = 0; s < pool_of(S, I)->pp; s++)
            span += B->stage_s[s];
        for (int i = 0; i < B->n; i++) {
            req *q = &S->r[B->ids[i]];
            if (q->generated == 0 && q->computed + B->c[i] == q->prompt &&
                q->output > 1)
                start_transfer(S, B->ids[i], span);
        }
    }
}

static void try_schedule(sim *S, inst *I)
{
    const serve_pool *P = pool_of(S, I);
    if (S->failed || I->inflight >= P->pp ||
        engine_now(S->eng) < I->stage_free[0])
        return;
    batch *B = free_batch(S, I);
    if (!B)
        return;
    plan b = {.ids = B->ids, .c = B->c};
    if (S->p->static_batch) {
        policy_static(S, I, &b);
    } else {
        bool run = in_multi_step(I);
        policies[S->p->policy](S, I, &b);
        /* a multi-step run with nothing left to decode ends early (the
         * pick reset steps_left): schedule afresh */
        if (run && b.n == 0)
            policies[S->p->policy](S, I, &b);
    }
    if (b.n == 0) {
        /* a preemption without a batch still freed blocks */
        if (I->pool == 1)
            try_admit_pending(S, I);
        return;
    }
    B->n = b.n;
    if (price_batch(S, I, B, &b)) {
        S->failed = 1;
        engine_stop(S->eng);
        return;
    }
    launch(S, I, B);
}

static bool is_warmup(const sim *S, const req *q)
{
    return q - S->r < S->in->warmup;
}

static void record_token(sim *S, req *q, int64_t now)
{
    q->generated++;
    if (S->window_open && is_warmup(S, q)) {
        S->warm.output_tokens++;
        if (q->generated == 1)
            S->warm.prompt_tokens += q->prompt;
    }
    if (q->generated == 1)
        q->t_first = now;
    else if (!is_warmup(S, q) && runs_add(&S->itl, now - q->t_last)) {
        S->failed = 1;
        err_set(S->e, "out of memory for inter-token latencies");
        engine_stop(S->eng);
    }
    q->t_last = now;
}

static void finish(sim *S, inst *I, int id, int64_t now)
{
    req *q = &S->r[id];
    running_remove(I, id);
    blocks_give(S, I, q->blocks);
    q->blocks = 0;
    q->state = R_DONE;
    S->left--;
    q->t_finish = now;
    if (!is_warmup(S, q))
        S->warm_m1 = S->warm; /* the window closes at the latest one */
    else if (S->window_open)
        S->warm.requests++;
    I->outstanding--;
    if (S->in->concurrency > 0)
        send_next(S, now + ns(S->in->think_s));
}

/* A prefill replica's request leaves for a decode replica. */
static void hand_over(sim *S, inst *I, int id)
{
    req *q = &S->r[id];
    running_remove(I, id);
    if (q->early) {
        q->state = R_MOVING;
        if (q->flows_done)
            start_transfer(S, id, -1); /* completes it */
        return;
    }
    int d = routers[S->p->router].pick(S, 1);
    q->pinst = (int)(I - S->inst);
    q->inst = d;
    S->inst[d].outstanding++;
    q->state = R_PENDING;
    deque_push(&S->inst[d].pending, id);
    try_admit_pending(S, &S->inst[d]);
}

static void complete(sim *S, batch *B)
{
    inst *I = &S->inst[B->inst];
    int64_t now = engine_now(S->eng);
    bool disagg_prefill = I->pool == 0 && S->in->npools == 2;
    for (int i = 0; i < B->n; i++) {
        int id = B->ids[i];
        req *q = &S->r[id];
        q->computed += B->c[i];
        q->chunk = 0;
        if (q->computed < len_of(q))
            continue;
        record_token(S, q, now);
        if (q->generated >= q->output)
            finish(S, I, id, now);
        else if (disagg_prefill)
            hand_over(S, I, id);
    }
    B->used = false;
    I->inflight--;
    try_schedule(S, I);
    if (I->pool == 1)
        try_admit_pending(S, I);
}

static void on_stage_done(engine *eng, void *ctx, uint64_t arg)
{
    sim *S = ctx;
    batch *B = &S->batches[arg];
    inst *I = &S->inst[B->inst];
    const serve_pool *P = pool_of(S, I);
    int64_t now = engine_now(eng);
    int s = B->stage;
    if (s == P->pp - 1) {
        complete(S, B);
        return;
    }
    int64_t start = now + ns(B->p2p_s[s]);
    if (start < I->stage_free[s + 1])
        start = I->stage_free[s + 1];
    B->stage = s + 1;
    I->stage_free[s + 1] = start + ns(B->stage_s[s + 1]);
    if (S->ev && S->ev->batch)
        S->ev->batch(S->ev->ctx, B->inst, s + 1, start, B->stage_s[s + 1], 0,
                     0,
                     0, 0);
    engine_at(eng, I->stage_free[s + 1], on_stage_done, S, arg);
    if (s == 0)
        try_schedule(S, I);
}

/* ---- disaggregated KV transfer ------------------------------------------- */

static int inst_gpu(const sim *S, const inst *I, int pos)
{
    const serve_pool *P = pool_of(S, I);
    return P->first_gpu + I->index * P->tp * P->pp + pos;
}

static void moved(sim *S, int id)
{
    req *q = &S->r[id];
    inst *Pi = &S->inst[q->pinst], *D = &S->inst[q->inst];
    int64_t now = engine_now(S->eng);
    q->t_move1 = now;
    blocks_give(S, Pi, q->blocks);
    /* the decode replica's reservation (reserve()) becomes its blocks */
    q->blocks = blocks_for(S, q->prompt + 1);
    Pi->outstanding--;
    D->moving--;
    q->state = R_RUNNING;
    D->running[D->nrun++] = id;
    try_schedule(S, Pi);
    try_schedule(S, D);
}

static void on_flow(engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    sim *S = ctx;
    req *q = &S->r[arg];
    if (--q->flows_left > 0)
        return;
    q->flows_done = true;
    if (q->state == R_MOVING)
        moved(S, (int)arg);
}

/* Reserves blocks on decode replica d for request id's cache; false when
 * they are short (it waits in d's pending queue). */
static bool reserve(sim *S, inst *D, int id)
{
    req *q = &S->r[id];
    int need = blocks_for(S, q->prompt + 1);
    if (need > D->free_blocks - S->watermark[1] ||
        D->nrun + D->moving >= S->p->max_num_seqs)
        return false;
    kv_take(S, D, need);
    D->moving++;
    return true;
}

/* The flows of request id's cache from its prefill replica's GPUs to its
 * decode replica's.  cap_s > 0: a layer-wise transfer that cannot run
 * ahead of the forward pass computing it (rate capped at bytes / cap_s);
 * cap_s < 0: the flows are already done, finish the hand-over. */
static void start_transfer(sim *S, int id, double cap_s)
{
    req *q = &S->r[id];
    if (cap_s < 0) {
        moved(S, id);
        return;
    }
    if (cap_s > 0) {
        /* layer-wise: pick the decode replica now, and reserve there */
        int d = routers[S->p->router].pick(S, 1);
        if (!reserve(S, &S->inst[d], id))
            return; /* sent after the prefill instead */
        q->pinst = q->inst;
        q->inst = d;
        S->inst[d].outstanding++;
        q->early = true;
    }
    inst *Pi = &S->inst[q->pinst], *D = &S->inst[q->inst];
    const serve_pool *P = &S->in->pool[0], *Q = &S->in->pool[1];
    int na = P->tp * P->pp, nb = Q->tp * Q->pp;
    double tokens = q->prompt;
    q->t_move0 = engine_now(S->eng);
    q->flows_left = 0;
    q->flows_done = false;
    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++) {
            double bytes = S->kv_move[a * nb + b] * tokens;
            if (bytes <= 0)
                continue;
            const topo *t = S->in->t;
            int src = t->gpu_dev[inst_gpu(S, Pi, a)];
            int dst = t->gpu_dev[inst_gpu(S, D, b)];
            double cap = cap_s > 0 ? bytes / cap_s : 0;
            S->res->kv_transfer_bytes += bytes;
            if (S->in->free_comm)
                continue;
            int f = net_flow_capped(S->net, src, dst, bytes, (uint32_t)id,
                                    cap, on_flow, S, (uint64_t)id);
            if (f < 0) {
                S->failed = 1;
                if (f == NET_NOMEM)
                    err_set(S->e, "out of memory");
                else
                    err_set(S->e, "KV transfer: no route from GPU %d to GPU "
                            "%d", inst_gpu(S, Pi, a), inst_gpu(S, D, b));
                engine_stop(S->eng);
                return;
            }
            q->flows_left++;
        }
    if (q->flows_left == 0) {
        q->flows_done = true;
        if (q->state == R_MOVING)
            moved(S, id);
    }
}

static void try_admit_pending(sim *S, inst *D)
{
    while (D->pending.n > 0) {
        int id = deque_at(&D->pending, 0);
        if (!reserve(S, D, id))
            break;
        deque_pop(&D->pending);
        S->r[id].state = R_MOVING;
        start_transfer(S, id, 0);
    }
}

/* Bytes per prompt token from each prefill GPU to each decode GPU: layer l
 * goes from the prefill stage holding it to the decode stage holding it,
 * and KV head h from the TP rank holding it there to the one holding it
 * here (an MLA latent, replicated over TP, is sent once to each decode
 * rank). */
static int kv_move_matrix(sim *S)
{
    const model_spec *m = S->in->m;
    const serve_pool *P = &S->in->pool[0], *Q = &S->in->pool[1];
    int na = P->tp * P->pp, nb = Q->tp * Q->pp;
    S->kv_move = calloc((size_t)(na * nb), sizeof(double));
    if (!S->kv_move)
        return -1;
    dtype kv = S->p->kv_dt == DT_COUNT ? DT_FP16 : S->p->kv_dt;
    int H = m->mla ? 1 : m->kv_heads;
    double per_head = model_kv_bytes_per_token(m, kv) / m->layers / H;
    for (int l = 0; l < m->layers; l++) {
        int sa = 0, sb = 0, l0, l1;
        for (int s = 0; s < P->pp; s++) {
            mem_stage_layers(m->layers, P->pp, s, &l0, &l1);
            if (l >= l0 && l < l1)
                sa = s;
        }
        for (int s = 0; s < Q->pp; s++) {
            mem_stage_layers(m->layers, Q->pp, s, &l0, &l1);
            if (l >= l0 && l < l1)
                sb = s;
        }
        for (int h = 0; h < H; h++)
            for (int j = 0; j < Q->tp; j++) {
                /* decode rank j holds head h if its share covers it (a
                 * head is replicated when tp exceeds the heads) */
                bool holds = m->mla || (Q->tp <= H ? h * Q->tp / H == j
                                                   : j * H / Q->tp == h);
                if (!holds)
                    continue;
                /* the prefill rank holding it (the first, if several) */
                int i = m->mla ? j % P->tp : h * P->tp / H;
                S->kv_move[(sa * P->tp + i) * nb + sb * Q->tp + j] +=
                    per_head;
            }
    }
    return 0;
}

/* ---- arrivals ------------------------------------------------------------ */

static void on_arrival(engine *eng, void *ctx, uint64_t arg);

/* Arrivals are scheduled one at a time, the next when one happens, so
 * the event queue holds one of them, not the whole trace. */
static void schedule_arrival(sim *S, int from)
{
    for (int n = from; n < S->nreq; n++)
        if (S->r[n].state == R_FUTURE) {
            engine_at(S->eng, S->r[n].t_arrive, on_arrival, S, (uint64_t)n);
            return;
        }
}

static void on_kick(engine *eng, void *ctx, uint64_t arg)
{
    sim *S = ctx;
    (void)eng;
    (void)arg;
    S->kick_pending = false;
    int n = S->narrived;
    S->narrived = 0;
    for (int i = 0; i < n; i++) {
        inst *I = &S->inst[S->arrived[i]];
        I->arrived_mark = false;
        try_schedule(S, I);
    }
}

/* Closed loop: a client sends the next request not yet sent (rejected
 * ones, which never fit, end at once) at `at`. */
static void send_next(sim *S, int64_t at)
{
    while (S->next_send < S->nreq) {
        req *q = &S->r[S->next_send++];
        if (q->state == R_FUTURE) {
            q->t_arrive = at;
            engine_at(S->eng, at, on_arrival, S,
                      (uint64_t)(q - S->r));
            return;
        }
    }
}

static void on_arrival(engine *eng, void *ctx, uint64_t arg)
{
    sim *S = ctx;
    int id = (int)arg;
    req *q = &S->r[id];
    if (S->in->concurrency == 0)
        schedule_arrival(S, id + 1);
    if (!is_warmup(S, q))
        S->window_open = true;
    int d = routers[S->p->router].pick(S, 0);
    q->inst = d;
    q->state = R_WAITING;
    inst *I = &S->inst[d];
    I->outstanding++;
    deque_push(&I->waiting, id);
    if (!I->arrived_mark) {
        I->arrived_mark = true;
        S->arrived[S->narrived++] = d;
    }
    if (!S->kick_pending) {
        S->kick_pending = true;
        engine_at(eng, engine_now(eng) + 1, on_kick, S, 0);
    }
}

/* ---- setup ------------------------------------------------------------- */

static dtype kv_dtype_of(const serve_params *p)
{
    return p->kv_dt == DT_COUNT ? DT_FP16 : p->kv_dt;
}

/* vLLM's profile: the KV cache gets gpu_memory_utilization x memory less
 * the weights, the peak activations of a max_batched_tokens forward pass,
 * the CUDA context and NCCL's buffers; the stage with the least room (per
 * token of its layers) sets the replica's block count. */
static int kv_blocks(sim *S, int pool, serve_pool_result *pr)
{
    const serve_pool *P = &S->in->pool[pool];
    const model_spec *m = S->in->m;
    plan_infer mi = {0};
    mi.tp = P->tp;
    mi.pp = P->pp;
    mi.weight_dtype = S->p->weight_dt;
    mi.kv_dtype = kv_dtype_of(S->p);
    mi.block_size = S->p->block_size;
    mi.quant_group = S->p->quant_group;
    mi.max_batched_tokens = S->p->max_batched_tokens;
    mi.batch = S->p->max_num_seqs;
    mi.context = (S->p->max_batched_tokens + mi.batch - 1) / mi.batch;
    const mem_overhead *o = &P->overhead;
    long best = -1;
    for (int s = 0; s < P->pp; s++) {
        mem_result r;
        mem_infer_stage(m, &mi, o, s, &r);
        double fixed = r.weights + r.activations + r.cuda_context + r.nccl;
        double room = mem_budget(S, P->gpu->memory_bytes, fixed) - fixed;
        double block = r.kv_per_token_gpu * S->p->block_size;
        long nb = room > 0 ? (long)floor(room / block) : 0;
        if (best < 0 || nb < best) {
            best = nb;
            pr->kv_bytes_per_token = r.kv_per_token_gpu;
            pr->weights_bytes = r.weights;
            S->block_bytes[pool] = block;
#ifdef LLMSIM_CHECK
            S->fixed_bytes[pool] = r.weights + r.activations +
                                   r.cuda_context + r.nccl;
#endif
        }
        if (nb < 1)
            return err_set(S->e, "%s does not fit: stage %d of a TP %d x PP %d "
                           "replica on %s needs %.1f GiB of weights and %.1f "
                           "GiB of workspace, context and NCCL buffers, more "
                           "than %.0f%% of its %.1f GiB (raise --tp/--pp, "
                           "quantize, or lower --max-batched-tokens)",
                           m->display, s, P->tp, P->pp, P->gpu->name,
                           r.weights / GiB,
                           (r.activations + r.cuda_context + r.nccl) / GiB,
                           100 * S->p->gpu_mem_util,
                           P->gpu->memory_bytes / GiB);
    }
    if (best > (long)1 << 30)
        best = (long)1 << 30;
    pr->kv_blocks = (int)best;
    pr->kv_capacity_tokens = (double)best * S->p->block_size;
    return 0;
}

static int make_infer(sim *S, int pool)
{
    const serve_pool *P = &S->in->pool[pool];
    int n = P->tp * P->pp;
    int *ranks = malloc(sizeof(int) * (size_t)n);
    if (!ranks)
        return err_set(S->e, "out of memory");
    for (int i = 0; i < n; i++)
        ranks[i] = P->first_gpu + i;
    infer_setup is = {.m = S->in->m, .gpu = P->gpu, .cost = P->cost,
                      .coll = S->in->coll, .t = S->in->t,
                      .routes = S->in->routes, .ranks = ranks,
                      .tp = P->tp, .pp = P->pp, .weight_dt = S->p->weight_dt,
                      .kv_dt = kv_dtype_of(S->p),
                      .quant_group = S->p->quant_group, .flash = S->p->flash,
                      .decode_kv_per_q_head = S->p->decode_kv_per_q_head,
                      .free_comm = S->in->free_comm,
                      .max_tokens = S->p->max_batched_tokens +
                                    S->p->max_num_seqs};
    S->x[pool] = infer_create(&is, S->e);
    free(ranks);
    return S->x[pool] ? 0 : -1;
}

static int check_input(const serve_input *in, llm_err *e)
{
    const serve_params *p = &in->p;
    if (p->weight_dt >= DT_COUNT)
        return err_set(e, "internal: no weight dtype (the experiment API "
                          "resolves the model's)");
    for (int k = 0; k < in->npools; k++) {
        const serve_pool *P = &in->pool[k];
        if (P->tp < 1 || P->pp < 1 || P->replicas < 1)
            return err_set(e, "tp, pp and replicas must be at least 1");
        if (P->pp > 64)
            return err_set(e, "--pp %d: at most 64 pipeline stages", P->pp);
        if (in->m->heads % P->tp != 0)
            return err_set(e, "--tp %d does not divide the %d attention "
                              "heads of %s (expected a divisor of %d)",
                           P->tp, in->m->heads, in->m->name, in->m->heads);
        if (P->pp > in->m->layers)
            return err_set(e, "--pp %d: more stages than %s's %d layers",
                           P->pp, in->m->display, in->m->layers);
        int end = P->first_gpu + P->tp * P->pp * P->replicas;
        if (end > in->t->ngpu)
            return err_set(e, "%d replicas of TP %d x PP %d need %d GPUs from "
                           "GPU %d; %s has %d (add nodes with --nodes)",
                           P->replicas, P->tp, P->pp,
                           P->tp * P->pp * P->replicas, P->first_gpu,
                           in->t->name, in->t->ngpu);
    }
    if (p->max_batched_tokens < 1 || p->max_num_seqs < 1 || p->block_size < 1)
        return err_set(e, "max_num_seqs, max_batched_tokens and block_size "
                          "must be at least 1");
    int budget = serve_token_budget(p);
    for (int i = 0; p->policy == SERVE_INFLIGHT && i < in->nreq; i++)
        if (in->req[i].prompt_tokens > budget)
            return err_set(e, "request %d: its %d-token prompt exceeds the "
                           "%d-token budget, which the inflight policy needs "
                           "to hold a whole context (TensorRT-LLM without "
                           "chunked context refuses it); raise "
                           "--max-batched-tokens or use --policy chunked",
                           i + 1, in->req[i].prompt_tokens, budget);
    if (p->policy == SERVE_PREFILL_FIRST) {
        for (int i = 0; i < in->nreq; i++)
            if (in->req[i].prompt_tokens + in->req[i].output_tokens >
                p->max_batched_tokens)
                return err_set(e, "request %d: %d prompt + %d output tokens "
                               "exceed --max-batched-tokens %d, which the "
                               "prefill-first policy needs to hold a whole "
                               "prompt (vLLM V0's max_num_batched_tokens >= "
                               "max_model_len); raise it or use --policy "
                               "chunked", i + 1, in->req[i].prompt_tokens,
                               in->req[i].output_tokens,
                               p->max_batched_tokens);
    }
    return 0;
}

static int build(sim *S)
{
    const serve_input *in = S->in;
    S->nreq = in->nreq;
    S->r = calloc((size_t)(in->nreq > 0 ? in->nreq : 1), sizeof *S->r);
    S->ninst = 0;
    for (int k = 0; k < in->npools; k++) {
        S->first[k] = S->ninst;
        S->ninst += in->pool[k].replicas;
    }
    S->inst = calloc((size_t)S->ninst, sizeof *S->inst);
    S->batch_first = calloc((size_t)S->ninst, sizeof(int));
    S->arrived = calloc((size_t)S->ninst, sizeof(int));
    if (!S->r || !S->inst || !S->batch_first || !S->arrived)
        return err_set(S->e, "out of memory");
    int nb = 0;
    for (int i = 0; i < S->ninst; i++) {
        inst *I = &S->inst[i];
        I->pool = i >= S->first[1] && in->npools == 2 ? 1 : 0;
        I->index = i - S->first[I->pool];
        S->batch_first[i] = nb;
        nb += in->pool[I->pool].pp;
    }
    S->nbatches = nb;
    S->batches = calloc((size_t)nb, sizeof *S->batches);
    if (!S->batches)
        return err_set(S->e, "out of memory");
    int seqs = S->p->max_num_seqs;
    for (int i = 0; i < nb; i++) {
        batch *B = &S->batches[i];
        B->ids = malloc(sizeof(int) * (size_t)seqs);
        B->c = malloc(sizeof(int) * (size_t)seqs);
        B->stage_s = calloc(64, sizeof(double));
        B->p2p_s = calloc(64, sizeof(double));
        if (!B->ids || !B->c || !B->stage_s || !B->p2p_s)
            return err_set(S->e, "out of memory");
    }
    for (int i = 0; i < S->ninst; i++) {
        inst *I = &S->inst[i];
        const serve_pool_result *pr = &S->res->pool[I->pool];
        I->total_blocks = I->free_blocks = pr->kv_blocks;
        I->swap_free_blocks = floor(S->p->swap_space_bytes /
                                    S->block_bytes[I->pool]);
        I->running = malloc(sizeof(int) * (size_t)seqs);
        I->swapped = malloc(sizeof(int) * (size_t)(seqs + 1));
        I->stage_free = calloc((size_t)in->pool[I->pool].pp, sizeof(int64_t));
        if (!I->running || !I->swapped || !I->stage_free ||
            deque_init(&I->waiting, in->nreq) ||
            deque_init(&I->pending, in->nreq))
            return err_set(S->e, "out of memory");
    }
    return 0;
}

static void sim_free(sim *S)
{
    if (S->inst)
        for (int i = 0; i < S->ninst; i++) {
            inst *I = &S->inst[i];
            free(I->running);
            free(I->swapped);
            free(I->stage_free);
            free(I->waiting.v);
            free(I->pending.v);
        }
    if (S->batches)
        for (int i = 0; i < S->nbatches; i++) {
            free(S->batches[i].ids);
            free(S->batches[i].c);
            free(S->batches[i].stage_s);
            free(S->batches[i].p2p_s);
        }
    free(S->batches);
    free(S->batch_first);
    free(S->arrived);
    free(S->inst);
    free(S->r);
    runs_free(&S->itl);
    free(S->kv_move);
    infer_destroy(S->x[0]);
    infer_destroy(S->x[1]);
    if (S->net)
        net_give(S->net);
    if (S->eng)
        engine_destroy(S->eng);
}

/* ---- results -------------------------------------------------------------- */

static void dist(double *v, int n, serve_dist *d)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    if (n == 0)
        return;
    gsl_sort(v, 1, (size_t)n);
    d->mean = gsl_stats_mean(v, 1, (size_t)n);
    d->p50 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.50);
    d->p90 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.90);
    d->p99 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.99);
}

/* A gap in ticks as the seconds it reports: a float, as the samples were
 * once stored, so that the figures stay those of earlier releases. */
static double gap_s(int64_t ticks)
{
    return (float)sec(ticks);
}

static int request_stats(sim *S, serve_result *r)
{
    int n = S->nreq, warm = S->in->warmup;
    double *a = malloc(sizeof(double) * (size_t)(4 * (n > 0 ? n : 1)));
    if (!a)
        return err_set(S->e, "out of memory");
    double *ttft = a, *tpot = a + n, *e2e = a + 2 * n, *mv = a + 3 * n;
    int nt = 0, np = 0, ne = 0, nm = 0, good = 0, done = 0;
    /* the whole run (utilization, energy) and the measured window */
    int64_t t0 = INT64_MAX, t1 = 0, m0 = INT64_MAX, m1 = 0;
    double out_m = 0, prompt_m = 0;
    for (int i = 0; i < n; i++) {
        const req *q = &S->r[i];
        if (q->state == R_REJECTED)
            continue;
        bool measured = i >= warm;
        if (q->t_arrive < t0)
            t0 = q->t_arrive;
        if (measured && q->t_arrive < m0)
            m0 = q->t_arrive;
        if (q->state != R_DONE)
            continue;
        done++;
        if (q->t_finish > t1)
            t1 = q->t_finish;
        r->output_tokens += q->output;
        r->prompt_tokens += q->prompt;
        if (q->t_move1 > 0)
            mv[nm++] = sec(q->t_move1 - q->t_move0);
        if (!measured)
            continue;
        if (q->t_finish > m1)
            m1 = q->t_finish;
        double f = sec(q->t_first - q->t_arrive);
        ttft[nt++] = f;
        e2e[ne++] = sec(q->t_finish - q->t_arrive);
        double tp = q->output > 1
                        ? sec(q->t_finish - q->t_first) / (q->output - 1)
                        : 0;
        if (q->output > 1)
            tpot[np++] = tp;
        out_m += q->output;
        prompt_m += q->prompt;
        bool ok = (S->p->slo_ttft_s <= 0 || f <= S->p->slo_ttft_s) &&
                  (S->p->slo_tpot_s <= 0 || tp <= S->p->slo_tpot_s);
        good += ok;
    }
    r->requests_completed = done;
    r->requests_measured = nt;
    r->makespan_s = done ? sec(t1 - t0) : 0;
    r->measured_s = nt ? sec(m1 - m0) : 0;
    r->warmup_in_window = S->warm_m1;
    double span = r->measured_s > 0 ? r->measured_s : 1;
    /* a rate over the window counts all it delivered, warm-up included:
     * the steady state a benchmark's measurement window sees */
    out_m += (double)S->warm_m1.output_tokens;
    prompt_m += (double)S->warm_m1.prompt_tokens;
    r->throughput_tokens_per_s = out_m / span;
    r->throughput_requests_per_s = ((double)nt + S->warm_m1.requests) / span;
    r->total_tokens_per_s = (out_m + prompt_m) / span;
    r->goodput_requests_per_s = good / span;
    r->slo_attainment = nt ? (double)good / nt : 0;
    dist(ttft, nt, &r->ttft);
    dist(tpot, np, &r->tpot);
    dist(e2e, ne, &r->e2e);
    dist(mv, nm, &r->kv_transfer_s);
    free(a);
    r->itl = (serve_dist){.n = S->itl.samples,
                          .mean = runs_mean(&S->itl, gap_s),
                          .p50 = runs_quantile(&S->itl, 0.50, gap_s),
                          .p90 = runs_quantile(&S->itl, 0.90, gap_s),
                          .p99 = runs_quantile(&S->itl, 0.99, gap_s)};
    return 0;
}

static void pool_stats(sim *S, serve_result *r)
{
    double span = r->makespan_s > 0 ? r->makespan_s : 1;
    int64_t end = engine_now(S->eng);
    double idle_w = 0, dyn = 0;
    for (int k = 0; k < S->in->npools; k++) {
        const serve_pool *P = &S->in->pool[k];
        serve_pool_result *pr = &r->pool[k];
        int gpus = P->tp * P->pp * P->replicas;
        double flops = 0, bytes = 0, busy = 0, area = 0, host = 0, iter = 0;
        for (int i = S->first[k]; i < S->first[k] + P->replicas; i++) {
            inst *I = &S->inst[i];
            kv_account(S, I);
            flops += I->flops;
            bytes += I->bytes;
            busy += I->busy_s;
            host += I->host_s;
            iter += I->iter_s;
            area += I->kv_area;
            dyn += I->dyn_j;
            pr->iterations += I->iterations;
            double peak = (double)I->kv_peak / I->total_blocks;
            if (peak > pr->kv_util_peak)
                pr->kv_util_peak = peak;
        }
        double peak = peak_flops(S, P);
        pr->gpus = gpus;
        pr->mfu = peak > 0 ? flops / (span * peak * gpus) : 0;
        pr->mbu = bytes / (span * P->gpu->mem_bw_Bps * gpus);
        pr->busy_fraction = busy / (span * P->replicas);
        pr->host_fraction = iter > 0 ? host / iter : 0;
        pr->kv_util_mean = end > 0 ? area / ((double)end * pr->kv_blocks *
                                             P->replicas)
                                   : 0;
        idle_w += P->idle_w * gpus;
    }
    r->energy_j = idle_w * sec(end) + dyn;
    r->avg_power_w = end > 0 ? r->energy_j / sec(end) : 0;
    r->energy_per_token_j =
        r->output_tokens > 0 ? r->energy_j / r->output_tokens : 0;
}

static int by_bytes(const void *a, const void *b)
{
    const serve_link_use *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->link - y->link;
}

/* The two busiest links of each kind (NVLink, PCIe, socket, network), so
 * a transfer's whole path shows, busiest first. */
static void link_stats(sim *S, serve_result *r)
{
    if (!S->net)
        return;
    const topo *t = S->in->t;
    serve_link_use top[LINK_KIND_COUNT][2];
    int cnt[LINK_KIND_COUNT] = {0};
    double span = r->makespan_s > 0 ? r->makespan_s : 1;
    for (int l = 0; l < t->nlink; l++) {
        net_link_stats st = net_link(S->net, l);
        int k = t->link[l].kind;
        if (st.bytes <= 0)
            continue;
        serve_link_use u = {l, st.bytes,
                            st.bytes / (net_link_bw(S->net, l) * span)};
        if (cnt[k] < 2)
            top[k][cnt[k]++] = u;
        else if (by_bytes(&u, &top[k][1]) < 0)
            top[k][1] = u;
        if (cnt[k] == 2 && by_bytes(&top[k][1], &top[k][0]) < 0) {
            serve_link_use x = top[k][0];
            top[k][0] = top[k][1];
            top[k][1] = x;
        }
    }
    r->ntop_links = 0;
    for (int k = 0; k < LINK_KIND_COUNT; k++)
        for (int i = 0; i < cnt[k]; i++)
            r->top_links[r->ntop_links++] = top[k][i];
    qsort(r->top_links, (size_t)r->ntop_links, sizeof *r->top_links,
          by_bytes);
}

static void sample_kv(sim *S)
{
    serve_result *r = S->res;
    double now = sec(engine_now(S->eng));
    if (r->kv_series_n >= SERVE_KV_SAMPLES || now < S->kv_next_t)
        return;
    double used = 0, total = 0;
    for (int i = 0; i < S->ninst; i++) {
        used += S->inst[i].total_blocks - S->inst[i].free_blocks;
        total += S->inst[i].total_blocks;
    }
    r->kv_series_t[r->kv_series_n] = now;
    r->kv_series_used[r->kv_series_n++] = total > 0 ? used / total : 0;
    S->kv_next_t = now + S->kv_dt_sample;
}

static void on_sample(engine *eng, void *ctx, uint64_t arg)
{
    sim *S = ctx;
    (void)arg;
    sample_kv(S);
    /* keep sampling while anything is left to do */
    if (S->left > 0 && S->res->kv_series_n < SERVE_KV_SAMPLES)
        engine_after(eng, ns(S->kv_dt_sample), on_sample, S, 0);
}

static void request_results(sim *S, serve_request_result *out)
{
    bool dis = S->in->npools == 2;
    for (int i = 0; i < S->nreq; i++) {
        const req *q = &S->r[i];
        serve_request_result *o = &out[i];
        o->arrival_s = sec(q->t_arrive);
        o->preemptions = q->preemptions;
        if (q->state != R_DONE) {
            o->first_token_s = o->finish_s = o->scheduled_s = -1;
            o->kv_start_s = 0;
            o->replica = o->prefill_replica = -1;
            o->kv_transfer_s = 0;
            continue;
        }
        o->first_token_s = sec(q->t_first);
        o->finish_s = sec(q->t_finish);
        o->scheduled_s = q->t_sched >= 0 ? sec(q->t_sched) : o->first_token_s;
        o->kv_start_s = q->t_move1 > 0 ? sec(q->t_move0) : 0;
        /* a one-token request never leaves its prefill replica */
        bool stayed = dis && q->output == 1;
        o->replica = stayed ? -1 : q->inst - S->first[dis ? 1 : 0];
        o->prefill_replica = !dis ? -1 : stayed ? q->inst : q->pinst;
        o->kv_transfer_s = q->t_move1 > 0 ? sec(q->t_move1 - q->t_move0) : 0;
    }
}

/* Each replica instance, before the run (serve_events.replica). */
static void announce_replicas(sim *S)
{
    if (!S->ev || !S->ev->replica)
        return;
    for (int i = 0; i < S->ninst; i++) {
        const inst *I = &S->inst[i];
        const serve_pool *P = pool_of(S, I);
        S->ev->replica(S->ev->ctx, i, I->pool, S->in->npools, I->index,
                       inst_gpu(S, I, 0), inst_gpu(S, I, P->tp * P->pp - 1),
                       P->pp);
    }
}

/* KV transfers on the links they crossed (serve_events.kv_*). */
static void announce_transfers(sim *S)
{
    const serve_events *ev = S->ev;
    if (!ev || S->in->npools < 2 || !S->kv_move)
        return;
    const topo *t = S->in->t;
    if (ev->kv_begin)
        ev->kv_begin(ev->ctx);
    for (int l = 0; l < t->nlink && ev->kv_link; l++)
        if (net_link(S->net, l).bytes > 0)
            ev->kv_link(ev->ctx, t, l);
    const serve_pool *P = &S->in->pool[0], *Q = &S->in->pool[1];
    int na = P->tp * P->pp, nb = Q->tp * Q->pp;
    int links[64];
    for (int i = 0; i < S->nreq && ev->kv_move; i++) {
        const req *q = &S->r[i];
        if (q->t_move1 <= 0)
            continue;
        for (int a = 0; a < na; a++)
            for (int b = 0; b < nb; b++) {
                if (S->kv_move[a * nb + b] <= 0)
                    continue;
                int src = t->gpu_dev[inst_gpu(S, &S->inst[q->pinst], a)];
                int dst = t->gpu_dev[inst_gpu(S, &S->inst[q->inst], b)];
                int nl = net_route(S->in->routes, src, dst, (uint32_t)i, links,
                                   64);
                for (int k = 0; k < nl; k++)
                    ev->kv_move(ev->ctx, i, links[k], q->t_move0, q->t_move1,
                                S->kv_move[a * nb + b] * q->prompt);
            }
    }
}

static int setup(sim *S)
{
    const serve_input *in = S->in;
    for (int k = 0; k < in->npools; k++)
        if (kv_blocks(S, k, &S->res->pool[k]) || make_infer(S, k))
            return -1;
    for (int k = 0; k < in->npools; k++)
        S->watermark[k] = (int)(0.01 * S->res->pool[k].kv_blocks);
    S->budget = serve_token_budget(S->p);
    if (build(S))
        return -1;
    if (in->npools == 2) {
        /* KV transfers are flows on the links at their achievable rate */
        S->net = coll_idle_net(in->routes, in->coll, &S->eng);
        if (!S->net || kv_move_matrix(S))
            return err_set(S->e, "out of memory");
    } else if (!(S->eng = engine_create(1024))) {
        return err_set(S->e, "out of memory");
    }
    return 0;
}

/* Requests whose whole sequence can never fit one replica's cache are
 * turned away at the door, as vLLM rejects a prompt longer than the cache
 * can hold. */
static void admit_requests(sim *S)
{
    int cap = S->res->pool[0].kv_blocks;
    if (S->in->npools == 2 && S->res->pool[1].kv_blocks < cap)
        cap = S->res->pool[1].kv_blocks;
    for (int i = 0; i < S->nreq; i++) {
        const wl_request *w = &S->in->req[i];
        req *q = &S->r[i];
        q->prompt = w->prompt_tokens;
        q->output = w->output_tokens;
        q->t_arrive = ns(w->arrival_s);
        q->t_sched = -1;
        q->state = blocks_for(S, q->prompt + q->output) > cap ? R_REJECTED
                                                              : R_FUTURE;
        S->res->requests_rejected += q->state == R_REJECTED;
        S->left += q->state == R_FUTURE;
    }
}

/* At the end of a run: every admitted request generated exactly its
 * output tokens and holds no block; every replica has all its KV blocks
 * and all its swap space back (preempted and swapped requests included). */
static void check_end(const sim *S)
{
#ifdef LLMSIM_CHECK
    int64_t now = engine_now(S->eng);
    for (int i = 0; i < S->nreq; i++) {
        const req *q = &S->r[i];
        int want = q->state == R_REJECTED ? 0 : q->output;
        CHECK(q->generated == want && q->blocks == 0,
              "end of the serving run", now,
              "request %d (%s, %d prompt tokens) generated %d of its %d "
              "output tokens and holds %d KV blocks",
              i, q->state == R_REJECTED ? "rejected" : "finished", q->prompt,
              q->generated, want, q->blocks);
    }
    for (int i = 0; i < S->ninst; i++) {
        const inst *I = &S->inst[i];
        double swap = floor(S->p->swap_space_bytes / S->block_bytes[I->pool]);
        CHECK(I->free_blocks == I->total_blocks &&
                  I->swap_free_blocks == swap && I->nrun == 0 &&
                  I->nswap == 0 && I->moving == 0,
              "end of the serving run", now,
              "replica %d has %d of %d KV blocks free, %.0f of %.0f swap "
              "blocks, %d running, %d swapped and %d moving requests",
              i, I->free_blocks, I->total_blocks, I->swap_free_blocks, swap,
              I->nrun, I->nswap, I->moving);
    }
#else
    (void)S;
#endif
}

int serve_token_budget(const serve_params *p)
{
    return p->chunk > 0 && p->chunk < p->max_batched_tokens
               ? p->chunk
               : p->max_batched_tokens;
}

int serve_simulate(const serve_input *in, serve_result *r, llm_err *e)
{
    memset(r, 0, sizeof *r);
    if (check_input(in, e))
        return -1;
    sim S = {.in = in, .p = &in->p, .res = r, .e = e};
    int rc = -1;
    if (setup(&S))
        goto out;
    admit_requests(&S);
    S.ev = in->events;
    announce_replicas(&S);
    if (in->concurrency > 0)
        for (int c = 0; c < in->concurrency; c++)
            send_next(&S, 0);
    else
        schedule_arrival(&S, 0);
    double last = in->nreq ? in->req[in->nreq - 1].arrival_s : 0;
    S.kv_dt_sample = (last > 0 ? last : 1) / (SERVE_KV_SAMPLES / 2);
    engine_at(S.eng, 0, on_sample, &S, 0);
    engine_run(S.eng, INT64_MAX);
    if (S.failed || engine_failed(S.eng)) {
        if (!S.failed)
            err_set(e, "out of memory in the event queue");
        goto out;
    }
    for (int i = 0; i < S.nreq; i++)
        if (S.r[i].state != R_DONE && S.r[i].state != R_REJECTED) {
            err_set(e, "internal: request %d never finished (state %d, %d of "
                    "%d tokens): the scheduler stalled", i, S.r[i].state,
                    S.r[i].generated, S.r[i].output);
            goto out;
        }
    check_end(&S);
    /* every block came back */
    for (int i = 0; i < S.ninst; i++)
        LLM_ASSERT(S.inst[i].free_blocks == S.inst[i].total_blocks &&
                   S.inst[i].swap_free_blocks ==
                       floor(S.p->swap_space_bytes /
                             S.block_bytes[S.inst[i].pool]));
    r->events = engine_events_run(S.eng);
    if (request_stats(&S, r))
        goto out;
    pool_stats(&S, r);
    link_stats(&S, r);
    announce_transfers(&S);
    if (in->out)
        request_results(&S, in->out);
    rc = 0;
out:
    sim_free(&S);
    return rc;
}
