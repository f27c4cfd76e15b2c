/* train — one training step of a parallel plan, simulated on the engine.
 *
 * One data-parallel replica is simulated: each pipeline stage stands for
 * its TP group (the TP ranks of a stage are symmetric).  Each stage runs
 * its schedule (sched.c) on a compute stream; an op starts when the stage
 * is free and its input has arrived.  Op times come from the cost model
 * (every GEMM, attention, norm, activation, residual, embedding and loss
 * kernel of the layers on the stage, TP-sharded); Megatron's TP
 * collectives sit on the critical path inside each op; pipeline
 * activations and gradients travel as flows on the topology (one per TP
 * rank, Megatron's scatter-gather); each stage's data-parallel gradient
 * reduction runs on a communication stream in buckets, overlapped with the
 * last microbatch's backward, then the optimizer step.  Collective times
 * come from the flow-level network (coll.c), simulated once per distinct
 * (group, op, size) on the otherwise idle network. */
#ifndef LLMSIM_TRAIN_H
#define LLMSIM_TRAIN_H

#include "coll/coll.h"
#include "cost/cost.h"
#include "mem/mem.h"
#include "model/model.h"
#include "model/stack.h"
#include "hw/topo.h"

enum { COMM_TP, COMM_PP, COMM_DP, COMM_CP, COMM_EP, COMM_KINDS };
extern const char *const train_comm_names[COMM_KINDS];

/* The input pipeline (optional): `workers` CPU data-loader processes each
 * build a whole microbatch (micro_batch samples at sample_s each, as a
 * PyTorch DataLoader worker does), copy it to the GPU from pinned memory
 * over PCIe (bytes_per_token of token ids, labels and masks), and keep at
 * most prefetch x workers microbatches ready ahead of the first stage. */
typedef struct train_loader {
    int workers;          /* 0 = data is always ready (not modelled) */
    double sample_s;
    int prefetch;         /* per worker (PyTorch prefetch_factor) */
    double bytes_per_token;
} train_loader;

/* What a recorded step did (train_input.record), for the trace and
 * timeline writers above: every op on each stage's compute stream in the
 * order it ran, and each stage's data-parallel reduction. */
typedef struct train_op_rec {
    int stage, mb, chunk;
    bool bwd;
    int64_t t0_ns, dur_ns;
} train_op_rec;

/* The communication an op's compute stream waits for, as the record
 * splits it: tensor, context and expert parallelism, ZeRO-3 gathers. */
enum { REC_TP, REC_CP, REC_EP, REC_FSDP, REC_COMM };
extern const char *const train_rec_comm_names[REC_COMM];

/* A pipeline transfer: activations (forward) or their gradient
 * (backward) from stage `from` to stage `to`, sent and arrived. */
typedef struct train_xfer_rec {
    int from, to, mb, chunk;
    bool bwd;
    int64_t t0_ns, t1_ns;
} train_xfer_rec;

/* The first stage idle, its next microbatch's input not yet loaded. */
typedef struct train_wait_rec {
    int64_t t0_ns, t1_ns;
} train_wait_rec;

typedef struct train_record {
    train_op_rec *ops;   /* nops, in the order they started */
    int nops, cap;
    train_xfer_rec *xfers; /* nxfers, in the order they were sent */
    int nxfers, xcap;
    train_wait_rec *waits; /* nwaits */
    int nwaits, wcap;
    int stages, vpp;     /* vpp: virtual stages per GPU (1 unless
                            interleaved) */
    double *dp_start_s, *dp_len_s; /* [stages] */
    double *opt_start_s, *opt_len_s; /* [stages]: the optimizer step */
    double *gather_len_s; /* [stages]: ZeRO's parameter gather after it */
    /* [stages x vpp], by virtual stage: the exposed communication inside
     * one microbatch's forward (comm_s[vs][0]) and backward ([1]), s, and
     * the layers it runs */
    double (*comm_s)[2][REC_COMM];
    int *vs_layers;
    int *gpu_first, *gpu_last;     /* [stages]: the stage's TP group */
    double step_s;
} train_record;

void train_record_free(train_record *r);

typedef struct train_input {
    const model_spec *m;
    const plan_train *plan;
    const topo *t;
    net_routes *routes; /* t's, shared by every collective simulated */
    const gpu_spec *gpu;
    const cost_calib *cost;
    const coll_calib *coll;
    const mem_overhead *overhead;
    bool free_comm;          /* every transfer takes no time (tests) */
    bool full;               /* every data-parallel group on the network at
                                once, not one representative */
    train_record *record;    /* filled when not NULL (owned by the caller;
                                train_record_free) */
    const train_loader *loader; /* NULL: data always ready */
    int gpus; /* the first gpus of the cluster (0: all of them) */
    const stack_spec *stack; /* the framework (NULL: stack_defaults) */
} train_input;

/* Compute slowed by a communication kernel running beside it on the same
 * GPU.  An NCCL kernel holds one CTA, so one SM, per channel for its whole
 * run, and it uses ceil(busbw / per-channel throughput) channels; it also
 * reads and writes HBM at hbm_per_wire times the bytes it sends (ring
 * reduce: read the local chunk and the received one, write the sum = 3;
 * gather: write the received chunk and read it to forward = 2; all-reduce
 * is half of each).  Compute-bound kernels run on the SMs left:
 * slowdown sm/(SMs - sm); memory-bound ones on the HBM bandwidth left:
 * hbm/(1 - hbm), where hbm is the fraction the collective takes.  The
 * compute that overlaps the collective stretches by the blend weighted by
 * mem_frac, the memory-bound share of the kernels; the collective itself
 * is not slowed (its own SMs are reserved).  Returns the extra time of
 * compute_s of work that starts with comm_s of communication. */
typedef struct train_interference {
    int comm_sms;      /* SMs the communication kernel holds */
    double hbm_frac;   /* share of HBM bandwidth it takes */
    double slowdown;   /* compute runs 1 + slowdown times longer beside it */
    double extra_s;
} train_interference;

/* One link's load over the step: bytes of every kind of traffic the
 * simulated groups put on it, over its achievable bandwidth x step. */
typedef struct train_link_use {
    int link;
    double bytes, utilization;
    double bytes_by_kind[COMM_KINDS];
} train_link_use;

#define TRAIN_MAX_STAGES 256
#define TRAIN_TOP_LINKS (2 * LINK_KIND_COUNT) /* two per kind */

typedef struct train_result {
    double step_s, tokens_per_s, samples_per_s;
    /* model FLOPs: full training 3 x the forward's (Narayanan et al. 2021:
     * forward, data and weight gradients); LoRA computes no weight
     * gradient of its frozen base, so its model FLOPs are the ones it
     * does: the forward, every matmul's data gradient, attention's
     * backward (2 x its forward) and the adapters' forward and backward
     * -- about 2 x forward, so that MFU stays a share of the peak, not of
     * work never done.  Attention counts the whole s x s square (no
     * causal halving), as Megatron-LM, torchtitan and llm-foundry count
     * it.  hw_tflops counts the FLOPs the kernels execute instead: half
     * the square under FlashAttention, its backward's recompute of Q·Kᵀ,
     * and the recompute's replays -- so hw_tflops never passes the peak,
     * while MFU may at contexts where attention dominates. */
    double model_tflops_per_gpu, hw_tflops_per_gpu, mfu;
    double bubble_fraction;   /* (span - busy) / busy on the busiest stage */
    double exposed_comm_s[COMM_KINDS];
    double gpu_util;          /* any kernel running, communication included */
    double sm_efficiency;     /* hardware FLOPs / (busy time x peak) */
    char attn_kernel[16];     /* the stack's fused attention kernel priced
                                 ("" : the GPU's attention.tsv, or none) */
    /* the fraction of the kernel tables' tensor-core rate priced under a
     * training load (calib/training-load.tsv): 16-bit, FP8 */
    double tensor_load_16bit, tensor_load_fp8;
    train_interference interference; /* on the critical stage */
    train_link_use top_links[TRAIN_TOP_LINKS]; /* busiest first */
    int ntop_links;
    double memory_peak_bytes;
    mem_result memory;
    /* activations in flight as the schedule ran: the most (virtual-stage)
     * microbatch chunks the peak stage held, and when */
    int chunks_held;
    double memory_peak_at_s;
    int chunks_held_by_stage[TRAIN_MAX_STAGES];
    /* input pipeline (with a loader): the step with data always ready, and
     * how long the step waits for data over it */
    double step_no_input_wait_s, input_wait_s;
    bool input_bound;     /* the wait is more than rounding (1e-6 of it) */
    double loader_need_s; /* CPU time per step per worker to load M */
    double loader_step_s; /* the steady state's mean step */
    double fwd_s, bwd_s;      /* one microbatch on the first stage (all its
                                 model chunks) */
    int microbatches;
    double dp_bytes_per_gpu;  /* bytes each GPU sends for gradients/params */
    uint64_t events;          /* the step's schedule on the engine */
    uint64_t net_events;      /* the collectives' flow-level simulations */
} train_result;

/* The stack's host time per launched kernel on node type ns, in us: its
 * figure is the reference host's (calib/host-cpus.tsv), which a CPU of
 * speed s runs in 1/s of the time. */
double train_host_us_per_kernel(const stack_spec *st, const topo_nodespec *ns);

void train_interfere(const gpu_spec *g, double busbw_Bps, double ch_Bps,
                     double hbm_per_wire, double mem_frac, double compute_s,
                     double comm_s, train_interference *out);

int train_simulate(const train_input *in, train_result *r, llm_err *e);

/* Data-parallel bytes one GPU sends per step for its Ψ parameters (ring
 * algorithms): all-reduce 2Ψ(n-1)/n; ZeRO-1/2 reduce-scatter + all-gather,
 * the same; ZeRO-3 adds a second all-gather for the backward: 3Ψ(n-1)/n,
 * 1.5x (Rajbhandari et al. §7). */
double train_dp_bytes(const plan_train *p, double params, double bytes_each);

/* The fast path of `llmsim search`: the step time (and MFU, bubble,
 * memory) from the per-microbatch costs train_simulate uses, in closed
 * form instead of on the engine; within a few percent of it for ranking,
 * never a replacement (search simulates its top candidates). */
int train_estimate(const train_input *in, train_result *r, llm_err *e);

#endif
