/* cost — (op, GPU, dtype) -> duration.  Each op has its FLOPs and bytes;
 * its kernel time is the roofline bound (FLOPs at the dtype's dense peak,
 * bytes at the datasheet memory bandwidth, whichever is longer) divided by
 * an efficiency interpolated from calibration tables over the op's shape,
 * plus a kernel launch overhead.  Knows nothing of schedules. */
#ifndef LLMSIM_COST_H
#define LLMSIM_COST_H

#include <stdbool.h>

#include "base/dtype.h"
#include "base/err.h"
#include "hw/gpu.h"

typedef enum {
    OP_GEMM,         /* C[m x n] = A[m x k] B[k x n], `batch` of them */
    OP_ATTN_PREFILL, /* q_len queries over kv_len keys per sequence */
    OP_ATTN_DECODE,  /* one query per sequence over kv_len keys */
    OP_NORM,         /* layer/RMS norm over rows x cols */
    OP_SOFTMAX,
    OP_ELEMENTWISE,  /* GELU, SwiGLU, residual add: reads + writes */
    OP_EMBEDDING,    /* rows looked up, cols wide */
    OP_OPTIMIZER,    /* Adam update of `elems` parameters */
    OP_MEMCPY_H2D,
    OP_MEMCPY_D2H,
    OP_KIND_COUNT
} cost_kind;

/* Kinds of memory-bound kernels, each with its own achieved-bandwidth
 * curve: a norm reduces across a row, an embedding gathers rows, an
 * activation or an add streams. */
typedef enum {
    MEM_ELEMENTWISE, /* add, copy, triad: pure streaming */
    MEM_NORM,        /* layer/RMS norm, softmax */
    MEM_ACTIVATION,  /* GELU, SiLU x mul */
    MEM_ROPE,        /* rotary embedding on q and k */
    MEM_EMBEDDING,   /* row gather */
    MEM_KIND_COUNT
} cost_mem_kind;

extern const char *const cost_mem_kind_names[MEM_KIND_COUNT];

typedef struct cost_op {
    cost_kind kind;
    cost_mem_kind mem;                  /* OP_ELEMENTWISE: which curve */
    dtype dt;
    double m, n, k, batch;              /* GEMM; batch >= 1 */
    double w_bytes;  /* GEMM: bytes per element of the k x n weight when it
                        is stored narrower than dt computes (weight-only
                        int8/int4, dequantized in the kernel); 0 = dt's */
    int heads, kv_heads, head_dim, v_head_dim; /* attention */
    double q_len, kv_len;
    double kv_bytes; /* attention: bytes per cached K/V element (fp8 KV
                        cache: 1); 0 = the activations' (dt's size, 16-bit
                        for 8-bit dtypes) */
    bool causal, flash;
    double window; /* attention: sliding window, keys a query sees at most
                      (0: all); with it the queries are the last q_len of
                      kv_len positions and decode reads min(kv_len, window)
                      keys. Only a fused kernel skips what the window
                      masks: the unfused path computes the full square */
    int attn_kernel; /* attention: 1 + index into cost_calib.attn_k (a
                        stack's fused kernel); 0: the GPU's attention.tsv */
    bool backward;   /* attention: the backward pass (flash_bwd_ratio x the
                        forward's FLOPs) */
    bool sustained;  /* GEMM, attention prefill: compute at the tensor rate
                        a sustained load holds (cost_tensor_load), not the
                        short kernel timings' of the tables */
    double elems;                       /* norm, softmax, elementwise, ... */
    double row_elems; /* memory-bound: elements one thread block loops over
                         (a norm's or a gated activation's row, rope's
                         heads of one token); 0: a flat grid-stride kernel.
                         An activation of one input ignores it (flat) */
    int reads, writes;                  /* elementwise operands */
    double bytes;                       /* memcpy; optimizer: bytes per
                                           parameter its step moves */
    bool explain; /* fill cost_result.calibration with the rows used (the
                     kernel command); a simulation's many calls skip it */
} cost_op;

/* A (m, n, k) grid of GEMM efficiency for one dtype, efficiency =
 * roofline time / measured time, interpolated linearly in log2 space. */
typedef struct cost_grid {
    int nm, nn, nk;
    double *lm, *ln, *lk; /* log2 of the axis values, ascending */
    double *eff;          /* [im][in][ik] */
    char source[512];
    int line0;            /* first row's line, for the report */
} cost_grid;

#define COST_MAX_ATTN_KERNELS 16
/* the sequence length at which calib/attention-kernels.tsv reads its
 * fractions (the FlashAttention-3 paper's 8k bars) and attention.tsv's
 * long-sequence headlines are taken to hold */
#define COST_ATTN_REF_TOKENS 8192.0

typedef struct cost_calib {
    char gpu[48];
    char derived_from[48]; /* "" when the GPU has its own tables */
    char dir[1024];
    cost_grid gemm[DT_COUNT];
    struct cost_curve {
        int n;
        double *lbytes, *eff; /* achieved / datasheet bandwidth */
        char source[512];
    } hbm[MEM_KIND_COUNT];
    double attn_eff;              /* FlashAttention fwd: fraction of peak */
    char attn_source[512];
    double launch_s;
    char launch_source[512];
    double pcie_eff;
    /* calib/memory-kernels.tsv: memory-bound kernels as latency and issue
     * rate in the GPU's own cycles (the GPU's rows, else the '*' rows) */
    struct cost_memk {
        double fixed_cycles;       /* launch to finish of an empty grid */
        double row_cycles;         /* per 1,024 elements of one row */
        double bytes_per_sm_cycle; /* issue-bound rate; 0: DRAM alone */
    } memk[MEM_KIND_COUNT];
    char memk_source[512];
    /* calib/kernels.tsv (cfg_load_cost_calib; 0 from cfg_load_cost_dir,
     * which reads one directory's tables) */
    double flash_bwd_ratio;    /* FlashAttention backward / forward time */
    char flash_bwd_source[512];
    double dropout_mask_bytes; /* per element of the unfused dropout mask */
    /* the tile cost of a GPU's default fused attention (attention.tsv
     * flash_fwd), as a kernel row's tile_tokens; 0: none */
    double flash_tile_tokens, flash_tile_tokens_causal;
    /* exponentials an SM's special-function units give per cycle: a fused
     * attention forward takes one per score, unhidden; 0: not priced */
    double sfu_exp_per_sm_cycle;
    /* cuBLAS computes whole tiles of gemm_tile_rows rows once m is past
     * gemm_small_rows (cost_gemm_rows); 0: m as it is */
    double gemm_tile_rows, gemm_small_rows;
    /* calib/training-load.tsv: the fraction of these tables' tensor-core
     * throughput (GEMMs, fused attention) that a training run sustains,
     * 16-bit and FP8, fitted to published training runs (1 where none
     * were fitted: the tables as they are) */
    double train_tensor_16bit, train_tensor_fp8;
    char train_load_source[512];
    /* calib/attention-kernels.tsv: the fused attention kernels with rows
     * for the GPU's compute capability (fractions of its dense 16-bit
     * peak) */
    struct cost_attn_kernel {
        char name[16];
        double fwd, fwd_causal, bwd;
        /* keys' worth of the inner loop that each (query tile, head)
         * block's fixed work costs (cost_attn_tile_share), without and
         * with the causal mask */
        double tile_tokens, tile_tokens_causal;
        bool causal_skip; /* skips the blocks a causal mask empties */
        char source[256];
        int line;
    } attn_k[COST_MAX_ATTN_KERNELS];
    int nattn_k;
} cost_calib;

/* The fraction of the tables' tensor-core rate that a sustained load
 * holds on c's GPU for dtype d (calib/training-load.tsv: 16-bit, or FP8
 * for 8-bit and narrower floats); 1 where the file gave none. */
double cost_tensor_load(const cost_calib *c, dtype d);

/* 1 + the index of the fused attention kernel `name` in c's table, or 0
 * when the GPU has no row for it. */
int cost_attn_kernel_find(const cost_calib *c, const char *name);

/* The same for a kernel a run named (--attention-kernel): its 1 + index,
 * or -1 with an error naming the kernel and g's compute capability. */
int cost_attn_kernel_need(const cost_calib *c, const gpu_spec *g,
                          const char *name, llm_err *e);

typedef struct cost_result {
    double flops, bytes;
    double compute_s, memory_s; /* roofline terms */
    double kernel_s;            /* roofline / efficiency */
    double launch_s;
    double time_s;              /* kernel + launch */
    double efficiency;
    const char *bound;          /* "compute" or "memory" */
    dtype dt;                   /* after any fallback */
    char fallback[160];         /* what was substituted, "" if nothing */
    char calibration[640];      /* the rows used (cost_op.explain) */
    bool explain;               /* cost_op.explain, for the notes */
} cost_result;

/* Fallbacks the caller allows when a GPU lacks a capability. */
enum {
    COST_FALLBACK_DTYPE = 1,  /* bf16 -> fp16 (V100), fp8 -> bf16/fp16 */
    COST_FALLBACK_UNFUSED = 2 /* FlashAttention -> unfused attention */
};

const char *cost_kind_name(cost_kind k);

/* Predicts one op.  Errors when the GPU lacks a capability the op needs
 * and the matching fallback is not allowed. */
int cost_predict(const cost_calib *c, const gpu_spec *g, const cost_op *op,
                 unsigned fallbacks, cost_result *r, llm_err *e);

/* The rows a GEMM kernel computes for m rows of output: cuBLAS covers m
 * with whole tiles of `tile_rows` once m is past `small_rows` (below it,
 * narrow-tile kernels whose padding measured times do not show); m as it
 * is when tile_rows is 0. */
double cost_gemm_rows(double m, double tile_rows, double small_rows);

/* The share of a fused attention kernel's time that its inner loop over
 * kv keys takes when each block also pays a fixed `tokens` keys' worth
 * (exposed for tests). */
double cost_attn_tile_share(double kv, double tokens);

/* Interpolated GEMM efficiency (exposed for tests). */
double cost_grid_eff(const cost_grid *g, double m, double n, double k);
double cost_hbm_eff(const cost_calib *c, cost_mem_kind k, double bytes);

/* The DRAM rate a long streaming kernel reaches on g: the datasheet
 * bandwidth at the hbm.tsv elementwise curve's largest size. */
double cost_stream_Bps(const cost_calib *c, const gpu_spec *g);

/* Seconds a memory-bound kernel of kind k takes to move `bytes`, each
 * thread block looping over row_elems (0: none); the calibrate report
 * prices measured kernels with it. */
double cost_membound_time_s(const cost_calib *c, const gpu_spec *g,
                            cost_mem_kind k, double bytes, double row_elems);

void cost_calib_free(cost_calib *c);

#endif
