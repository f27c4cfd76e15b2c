/* infer — one forward pass of a serving batch on one model replica.
 *
 * A batch is what an iteration-level scheduler (vLLM, Sarathi-Serve) runs
 * at once: prefill chunks, each with its new tokens and the context they
 * attend to, and decoding sequences, one new token each over their own
 * context.  Per pipeline stage, the time is the sum of every kernel of the
 * stage's layers for that composition on one GPU of its tensor-parallel
 * group (cost.c: GEMMs over all the batch's tokens, attention per prefill
 * chunk and once over every decoding sequence's KV cache, norms,
 * activations, rotary embedding, residual adds; the embedding on the first
 * stage, the final norm and LM head for the sampled positions on the last)
 * plus Megatron's two all-reduces per layer, simulated on the replica's
 * links (coll.c) alone.  Pipeline stages hand the hidden states on with a
 * send/recv per TP rank.  Knows nothing of requests or schedulers. */
#ifndef LLMSIM_INFER_H
#define LLMSIM_INFER_H

#include <stdbool.h>

#include "coll/coll.h"
#include "cost/cost.h"
#include "model/model.h"
#include "hw/topo.h"

typedef struct infer_setup {
    const model_spec *m;
    const gpu_spec *gpu;
    const cost_calib *cost;
    const coll_calib *coll;
    const topo *t;
    net_routes *routes; /* t's */
    const int *ranks; /* tp x pp GPU ranks: stage s, TP rank i at [s*tp+i] */
    int tp, pp;
    dtype weight_dt;  /* fp16, bf16, fp8 (FP8 GEMMs), int8/int4 (weight-
                         only: 16-bit GEMMs reading narrow weights) */
    dtype kv_dt;
    int quant_group;  /* int4 group size (a 16-bit scale and zero each) */
    bool flash;       /* FlashAttention / paged attention kernels */
    bool decode_kv_per_q_head; /* the decode kernel reads the KV cache once
                                  per query head (no GQA grouping) */
    bool free_comm;   /* collectives take no time (tests) */
    int max_tokens;   /* the largest batch, in tokens (caches) */
} infer_setup;

/* A prefill chunk: q_tokens new tokens of a sequence whose KV cache holds
 * `context` tokens once they are added. */
typedef struct infer_chunk {
    int q_tokens, context;
} infer_chunk;

typedef struct infer_batch {
    const infer_chunk *prefill;
    int prefill_n;
    int decode_n;              /* sequences decoding one token each */
    double decode_context_sum; /* their contexts, new token included */
    double decode_window_sum;  /* the same, each at most the model's
                                  sliding window (0 when it has none) */
    int logits;                /* sequences that sample a token */
} infer_batch;

typedef struct infer_time {
    double compute_s; /* kernels on one GPU of the stage */
    double tp_s;      /* tensor-parallel all-reduces (critical path) */
    double total_s;
    double flops;     /* one GPU of the stage */
    double bytes;     /* HBM traffic of one GPU of the stage */
} infer_time;

typedef struct infer infer;

infer *infer_create(const infer_setup *s, llm_err *e);
void infer_destroy(infer *x);

/* Times of the batch on every stage (out[pp]).  Returns -1 (message in e)
 * when the cost model cannot price an op. */
int infer_batch_time(infer *x, const infer_batch *b, infer_time *out,
                     llm_err *e);

/* The hidden states of `tokens` tokens from stage s to s + 1. */
int infer_p2p_s(infer *x, int s, int tokens, double *out_s, llm_err *e);

/* The transformer layers of stage s. */
int infer_stage_layers(const infer *x, int s);

/* The weight bytes one GPU of stage s reads per forward pass. */
double infer_weight_bytes(const infer *x, int s);

#endif
