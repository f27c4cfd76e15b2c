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
#include "model/model.h"
#include "mem/mem.h"
#include "hw/topo.h"
#include "serve/wl.h"

typedef enum { PREEMPT_RECOMPUTE, PREEMPT_SWAP, PREEMPT_COUNT } serve_preempt;
extern const char *const serve_preempt_names[PREEMPT_COUNT];

/* Scheduler policies and routers are tables of functions (serve.c); these
 * are their names, in table order. */
#define SERVE_POLICIES 2 /* "chunked", "prefill-first" */
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
                               (Sarathi-Serve's chunk), 0 = max_batched */
    int policy, router;     /* indices into the tables */
    int block_size;         /* tokens per KV block */
    double gpu_mem_util;    /* vLLM gpu_memory_utilization */
    serve_preempt preempt;
    double swap_space_bytes; /* host memory per GPU for swapped blocks */
    dtype weight_dt, kv_dt; /* kv_dt DT_COUNT: 16-bit */
    int quant_group;
    bool flash;
    double iteration_overhead_s; /* host time per iteration (scheduling,
                                    sampling, detokenizing), 0 = none */
    bool kv_layerwise;      /* disaggregated: send KV as layers finish */
    double slo_ttft_s, slo_tpot_s; /* 0 = no objective */
} serve_params;

void serve_params_defaults(serve_params *p);

/* What happened to one request (serve_input.out, optional). */
typedef struct serve_request_result {
    double arrival_s, first_token_s, finish_s; /* -1: rejected */
    int replica, prefill_replica;              /* -1 when colocated */
    int preemptions;
    double kv_transfer_s;                      /* 0 when colocated */
} serve_request_result;

typedef struct serve_input {
    const model_spec *m;
    topo *t;
    const coll_calib *coll;
    serve_pool pool[2]; /* [0] serves (or prefills), [1] decodes */
    int npools;         /* 1 colocated, 2 disaggregated */
    serve_params p;
    const wl_request *req;
    int nreq;
    bool free_comm;         /* communication takes no time (tests) */
    const char *trace_path; /* Chrome trace JSON, or NULL */
    const char *csv_path;   /* one row per request, or NULL */
    serve_request_result *out; /* [nreq] filled when not NULL */
} serve_input;

typedef struct serve_dist {
    double mean, p50, p90, p99;
    int n;
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

int serve_simulate(const serve_input *in, serve_result *r, llm_err *e);

#endif
