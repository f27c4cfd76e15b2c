/* serve — an LLM serving deployment simulated request by request.
 *
 * Requests arrive (wl.c), a router sends each to a replica, and every
 * replica runs vLLM's engine loop: at each iteration a scheduler policy
 * picks the batch (iteration-level continuous batching under max_num_seqs
 * and a token budget, chunked prefill or prefill-first, FCFS order),
 * allocates paged KV-cache blocks, preempts the newest running request by
 * recompute or swap to host when blocks run out, and the batch's time
 * comes from infer.c for its exact composition.  A replica with PP stages
 * keeps up to PP batches in flight, one per stage (vLLM's virtual
 * engines).  With two pools, prefill replicas hand each request's KV cache
 * to a decode replica (Splitwise, DistServe): the transfer is flows on the
 * topology's links, optionally started layer by layer with the prefill,
 * and the decode replica admits the request when its blocks are reserved
 * and the last byte has arrived.
 *
 * Time is integer nanoseconds on the engine; the only randomness is in the
 * workload, so a run is deterministic. */
#ifndef LLMSIM_SERVE_H
#define LLMSIM_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "coll/coll.h"
#include "cost/cost.h"
#include "mem/mem.h"
#include "model/model.h"
#include "mem/mem.h"
#include "hw/topo.h"
#include "serve/eprof.h"
#include "serve/wl.h"

typedef enum { PREEMPT_RECOMPUTE, PREEMPT_SWAP, PREEMPT_COUNT } serve_preempt;
extern const char *const serve_preempt_names[PREEMPT_COUNT];

/* Scheduler policies and routers are tables of functions (serve.c); these
 * are their names, in table order. */
enum { SERVE_CHUNKED, SERVE_PREFILL_FIRST, SERVE_INFLIGHT, SERVE_POLICIES };
#define SERVE_ROUTERS 3  /* "round-robin", "least-outstanding", "shortest-queue" */
extern const char *const serve_policy_names[SERVE_POLICIES];
extern const char *const serve_router_names[SERVE_ROUTERS];

/* A pool of identical replicas: replica r's stage s, TP rank i is GPU
 * first_gpu + (r·pp + s)·tp + i of the topology. */
typedef struct serve_pool {
    const gpu_spec *gpu;
    const cost_calib *cost;
    int tp, pp, replicas, first_gpu;
    double idle_w; /* power with no kernel running (power model) */
    mem_overhead overhead; /* CUDA context and NCCL buffers: the KV budget */
} serve_pool;

typedef struct serve_params {
    int max_num_seqs, max_batched_tokens;
    int chunk;              /* chunked policy: token budget per iteration
                               (Sarathi-Serve's chunk), 0 = max_batched;
                               prefill-first: tokens per prefill batch,
                               longer prompts split (0: whole prompts) */
    int policy, router;     /* indices into the tables */
    int block_size;         /* tokens per KV block */
    double gpu_mem_util;    /* vLLM gpu_memory_utilization */
    bool mem_of_free;       /* the engine's: of what the weights leave */
    serve_preempt preempt;
    double swap_space_bytes; /* host memory per GPU for swapped blocks */
    dtype weight_dt, kv_dt; /* kv_dt DT_COUNT: 16-bit */
    int quant_group;
    bool flash;
    double iteration_overhead_s; /* host time per iteration (scheduling,
                                    sampling, detokenizing), 0 = none */
    int scheduler_steps;    /* decode iterations per scheduling decision */
    /* the engine's (serve/eprof.h) */
    serve_admit admit;
    double reserve_ratio;   /* ADMIT_RESERVE */
    bool static_batch;      /* no continuous batching (`generate`) */
    bool decode_kv_per_q_head;
    eprof_host host;
    bool kv_layerwise;      /* disaggregated: send KV as layers finish */
    double slo_ttft_s, slo_tpot_s; /* 0 = no objective */
} serve_params;

/* Output tokens, prompt tokens (of requests whose first token came) and
 * requests completed. */
typedef struct serve_window {
    int64_t output_tokens, prompt_tokens, requests;
} serve_window;

/* What happened to one request (serve_input.out, optional). */
typedef struct serve_request_result {
    double arrival_s, first_token_s, finish_s; /* -1: rejected */
    double scheduled_s;  /* first in an iteration (its prefill began) */
    double kv_start_s;   /* disaggregated: its KV transfer began; 0 else */
    int replica, prefill_replica;              /* -1 when colocated */
    int preemptions;
    double kv_transfer_s;                      /* 0 when colocated */
} serve_request_result;

/* What a run streams out as it goes (serve_input.events), for the trace
 * writer of the report layer: a serving replay can run millions of
 * iterations, so they are handed over, not kept.  Times are the engine's
 * integer nanoseconds; durations seconds.  Every callback may be NULL. */
typedef struct serve_events {
    void *ctx;
    /* before the run, once per replica instance (inst 0, 1, ...): its
     * pool (0 colocated or prefill, 1 decode), index in the pool, GPUs and
     * pipeline stages */
    void (*replica)(void *ctx, int inst, int pool, int npools, int index,
                    int gpu_first, int gpu_last, int stages);
    /* a batch starts on a stage: its time, of it (stage 0) the host's
     * exposed scheduling and launch time, which comes first, its prefill
     * and decode sequences and tokens (stage 0), and the KV blocks in use
     * as it starts */
    void (*batch)(void *ctx, int inst, int stage, int64_t t_ns, double dur_s,
                  double host_s, int prefill, int decode, int tokens);
    void (*kv_used)(void *ctx, int inst, int64_t t_ns, int blocks);
    /* after a disaggregated run: the links that carried KV caches, then
     * each request's transfer on each link of its route */
    void (*kv_begin)(void *ctx);
    void (*kv_link)(void *ctx, const topo *t, int link);
    void (*kv_move)(void *ctx, int request, int link, int64_t t0_ns,
                    int64_t t1_ns, double bytes);
} serve_events;

typedef struct serve_input {
    const model_spec *m;
    const topo *t;
    net_routes *routes; /* t's */
    const coll_calib *coll;
    serve_pool pool[2]; /* [0] serves (or prefills), [1] decodes */
    int npools;         /* 1 colocated, 2 disaggregated */
    serve_params p;
    const wl_request *req;
    int nreq;
    /* closed loop: this many clients, each sending its next request (the
     * next of req not yet sent, whatever its arrival_s) think_s after its
     * last one finished; 0 = open loop, requests arrive at arrival_s */
    int concurrency;
    double think_s;
    /* the first this many requests sent (req's order) run like the others
     * but are left out of every latency and throughput figure, as a
     * benchmark's warm-up; utilization and energy count the whole run */
    int warmup;
    bool free_comm;         /* communication takes no time (tests) */
    const serve_events *events; /* streamed to, or NULL */
    serve_request_result *out; /* [nreq] filled when not NULL */
} serve_input;

typedef struct serve_dist {
    double mean, p50, p90, p99;
    int64_t n;
} serve_dist;

#define SERVE_TOP_LINKS (2 * LINK_KIND_COUNT) /* two per kind */
#define SERVE_KV_SAMPLES 200

typedef struct serve_pool_result {
    int gpus;
    int kv_blocks;              /* per replica */
    double kv_capacity_tokens;  /* per replica */
    double kv_bytes_per_token;  /* one GPU of the largest stage */
    double weights_bytes;       /* one GPU of the largest stage */
    double mfu, mbu;            /* over the run, every GPU of the pool */
    double busy_fraction;       /* first stage busy / makespan */
    double host_fraction;       /* of the iterations' time, the host's
                                   that the GPU did not hide */
    double kv_util_mean, kv_util_peak;
    long iterations;
} serve_pool_result;

typedef struct serve_link_use {
    int link;
    double bytes, utilization; /* bytes / (bandwidth x makespan) */
} serve_link_use;

typedef struct serve_result {
    serve_dist ttft, tpot, itl, e2e;
    double throughput_tokens_per_s;   /* output tokens */
    double throughput_requests_per_s;
    double total_tokens_per_s;        /* prompt + output */
    double goodput_requests_per_s, slo_attainment;
    int requests_completed, requests_rejected;
    /* the requests the latency and throughput figures count (all the
     * completed ones but the warm-up), and the window they span: the
     * first one's arrival to the last one's last token */
    int requests_measured;
    double measured_s;
    /* what the warm-up requests delivered inside that window, which the
     * throughputs count too */
    serve_window warmup_in_window;
    int requests_truncated;           /* cut to the context (the caller's) */
    long preemptions, swaps_out;
    double makespan_s;                /* first arrival to last token */
    double output_tokens, prompt_tokens;
    serve_pool_result pool[2];
    double energy_j, energy_per_token_j, avg_power_w;
    double kv_transfer_bytes;
    serve_dist kv_transfer_s;
    serve_link_use top_links[SERVE_TOP_LINKS];
    int ntop_links;
    double kv_series_t[SERVE_KV_SAMPLES], kv_series_used[SERVE_KV_SAMPLES];
    int kv_series_n;
    uint64_t events;
} serve_result;

/* The tokens one iteration may carry: the chunk when it is set and
 * smaller, else max_batched_tokens (a prefill-first batch's size too). */
int serve_token_budget(const serve_params *p);

/* Kernels one layer of model m launches under the engine's host profile:
 * its count for a Llama-style layer, and what m's structure adds (biases,
 * LayerNorm) or takes (no RoPE). */
double serve_layer_kernels(const eprof_host *h, const model_spec *m);

int serve_simulate(const serve_input *in, serve_result *r, llm_err *e);

#endif
