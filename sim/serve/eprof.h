/* eprof — what a serving engine does to an iteration, as data.
 *
 * The same GPUs give different token times under vLLM, SGLang,
 * TensorRT-LLM or Hugging Face `generate`: each spends its own host time
 * per iteration (scheduling, preparing inputs, sampling, detokenizing),
 * hides kernel launches behind CUDA graphs for some batches and not
 * others, runs its own decode-attention kernel, admits requests by its
 * own rule, and ships its own defaults (block size, batch limits, chunked
 * prefill, KV dtype).  An engine profile (stacks/NAME.cfg with
 * kind = "serving", read by cfg) says all of that with sources; serve runs
 * the iteration loop through it, and a setting the user does not give
 * takes the engine's default.  Owned by the serving layer: it names the
 * scheduler's choices by their index in serve's tables. */
#ifndef LLMSIM_EPROF_H
#define LLMSIM_EPROF_H

#include <stdbool.h>

/* How a waiting request gets in: the KV blocks that must be free (above
 * the engine's watermark) before it joins the running batch. */
typedef enum {
    ADMIT_CHUNK,    /* the blocks of the chunk it runs next (vLLM V1) */
    ADMIT_WHOLE,    /* of its whole prompt, and of what it generated
                       before a preemption (vLLM V0's can_allocate) */
    ADMIT_NO_EVICT, /* of its prompt and every output token, counting what
                       the running requests will still need: nothing is
                       ever preempted (TensorRT-LLM GUARANTEED_NO_EVICT) */
    ADMIT_RESERVE,  /* of its prompt and a share of its output, the share
                       counted for the running requests too (SGLang's
                       new_token_ratio) */
    ADMIT_COUNT
} serve_admit;
extern const char *const serve_admit_names[ADMIT_COUNT];

/* Host work of an engine's iteration, beside the GPU's. */
typedef struct eprof_host {
    double per_seq_s;  /* per sequence of the batch (input preparation,
                          sampling, detokenizing), beside the fixed part
                          (serve_params.iteration_overhead_s) */
    bool overlap;      /* the host prepares iteration i + 1 while the GPU
                          runs i (SGLang's overlap scheduler, vLLM's async
                          scheduling): an iteration takes the longer of
                          the two instead of their sum */
    double launch_s;   /* host time per kernel launched without a graph */
    double kernels_per_layer; /* kernels one layer's forward launches, for
                                 a Llama-style layer (RMSNorm with the
                                 residual add fused, RoPE, no biases) */
    /* what other layers launch beyond it: per layer of a model whose
     * linears have biases (the row-parallel ones added after the
     * all-reduce), of a LayerNorm model (its residual adds, which the
     * fused RMSNorm kernel takes), and fewer without RoPE (its kernel) */
    double bias_kernels, layernorm_kernels, rope_kernels;
    double prefill_s;  /* host time an iteration that runs a prefill on
                          more than one GPU (tensor parallelism) spends
                          beside the fixed part, before its forward: the
                          prompts' inputs sent to each worker process;
                          like the fixed part, not hidden by the GPU */
    int graph_max_batch; /* decode-only batches of at most this many
                            sequences replay a CUDA graph: no launches
                            (0: no graphs) */
} eprof_host;

/* Batch limits an engine takes on GPUs of at least min_memory_bytes
 * whose name lacks except_name (vLLM V1's get_batch_defaults: 1024
 * sequences and an 8192-token budget on 70 GiB or more, A100 aside).
 * min_memory_bytes 0: none. */
typedef struct eprof_large {
    double min_memory_bytes;
    char except_name[32];
    int max_num_seqs, max_batched_tokens;
} eprof_large;

typedef struct eprof {
    char name[64], display[160], version[160];
    char source[4096];
    /* defaults of the serving settings a run does not give */
    int max_num_seqs, max_batched_tokens, chunk, block_size;
    int scheduler_steps; /* decode iterations per scheduling decision */
    int policy;         /* serve_policy_names */
    int preempt;        /* serve_preempt */
    serve_admit admit;
    double gpu_mem_util;
    bool mem_of_free;      /* gpu_mem_util is a share of the memory the
                              weights and workspace leave (TensorRT-LLM's
                              free_gpu_memory_fraction), not of all of it */
    double iteration_overhead_s; /* fixed host time per iteration */
    double reserve_ratio;  /* ADMIT_RESERVE: share of the output reserved */
    bool fp8_kv_with_fp8;  /* FP8 weights bring an FP8 KV cache */
    bool static_batch;     /* a batch runs until its last sequence ends
                              (no continuous batching: `generate`) */
    bool decode_kv_per_q_head; /* the decode kernel reads the KV cache
                                  once per query head, not per KV head
                                  (no GQA grouping) */
    eprof_host host;
    eprof_large large; /* other batch limits on large GPUs */
} eprof;

struct serve_params;

/* What a profile's missing keys take: the serving settings' own defaults
 * (p, from the settings table: vLLM V1's), no host cost, nothing else of
 * an engine's. */
eprof eprof_defaults(const struct serve_params *p);

/* Whether the engine takes its large-GPU batch limits on a GPU of
 * memory_bytes named name. */
bool eprof_is_large(const eprof *e, const char *name, double memory_bytes);

#endif
