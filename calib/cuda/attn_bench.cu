/*
 * attn_bench.cu — attention (scaled dot-product, softmax(Q K^T / sqrt(d)) V) throughput of a
 * simple fused kernel, for llmsim calibration.
 *
 * What it measures: NOT cuDNN or FlashAttention. cuDNN's fused SDPA is reached through the
 * cudnn_frontend C++ headers, which are not part of the CUDA toolkit, so this program carries
 * its own straightforward FlashAttention-style kernels, written for correctness over peak
 * speed. The rows therefore show what a simple fused kernel reaches (a lower bound for
 * attention on this GPU); llmsim labels them so. Every run starts with a self-check against a
 * naive reference kernel and writes no timings when it fails.
 *
 *   prefill (q_len = seq): one block of 4 warps per (batch, head, 64 query rows); K and V go
 *     through shared memory in tiles of 32 keys; S = Q K^T and O += P V use tensor cores via
 *     WMMA 16x16x16 (fp16/bf16 in, fp32 accumulate); online softmax in fp32 (exp2, running
 *     max and sum per row), P rounded to the input type for the P V product, O kept in fp32 in
 *     shared memory. Causal: tiles wholly above the diagonal are not visited; the diagonal
 *     tiles are computed and masked.
 *   decode (q_len = 1 over a KV cache of seq tokens): split-KV ("flash decoding"): one block
 *     per (batch, kv head, chunk of <= 256 keys) computes all the query heads that share the
 *     kv head (GQA), in fp32 CUDA-core arithmetic (decode is memory-bound), then a second
 *     kernel merges the chunks' partial maxima, sums and outputs. The single query is the
 *     newest position, so causal masking changes nothing: causal = 1 decode rows run the same
 *     kernels as causal = 0.
 *
 * Layout: Q, O [batch][heads][q_len][head_dim]; K, V [batch][kv_heads][seq][head_dim];
 * query head h reads kv head h / (heads / kv_heads). Inputs are pseudo-random in [-1, 1].
 * Shapes: kind {prefill, decode} x batch {1, 4, 16} x heads 32 x kv_heads {32, 8} x
 * seq {512, 1024, 2048, 4096, 8192} x head_dim {64, 128} x causal {0, 1}; a shape whose
 * buffers exceed 40% of the free device memory is skipped (stderr note).
 *
 * Timing: 3 warm-up calls, then back-to-back calls on one stream timed with cudaEvents, the
 * iteration count grown until one run lasts >= 20 ms; median of 5 runs. A decode call is both
 * of its kernels.
 * FLOPs = 4 * batch * heads * q_len * seq * head_dim, halved when causal and prefill;
 * tflops = FLOPs / time; efficiency = tflops / --peak-tflops (dense peak of the dtype).
 *
 * Usage: attn_bench --peak-tflops X --out FILE [--dtype bf16|fp16] [--quick] [--no-check]
 *                   [--gpu-name NAME]    (device 0; choose with CUDA_VISIBLE_DEVICES)
 *        attn_bench --check [--dtype bf16|fp16]     self-check only
 *   --quick: batch {1, 4}, seq {1024, 4096}.
 * Output (TSV): '#' comment lines (the dtype among them), then
 *   kind	batch	heads	kv_heads	seq	head_dim	causal	time_us	tflops	efficiency	source
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <mma.h>
#include <stdint.h>

#include "common.h"

using namespace nvcuda;

#define BR 64 /* query rows per prefill block: 16 per warp */
#define BC 32 /* keys per K/V tile */
#define NW 4  /* warps per prefill block */
#define DEC_THREADS 256
#define LOG2E 1.4426950408889634f

__device__ inline float to_f(__half x) { return __half2float(x); }
__device__ inline float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ inline T from_f(float v);
template <> __device__ inline __half from_f<__half>(float v) { return __float2half(v); }
template <> __device__ inline __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

/* n contiguous elements (n * sizeof(T) a multiple of 16, both pointers 16-byte aligned) */
template <typename T> __device__ inline void copy_tile(T *dst, const T *src, int n)
{
    const uint4 *s = (const uint4 *)src;
    uint4 *d = (uint4 *)dst;
    int n16 = n * (int)sizeof(T) / 16;
    for (int i = threadIdx.x; i < n16; i += blockDim.x) d[i] = s[i];
}

template <int D> static size_t prefill_smem(void)
{
    return (size_t)BR * D * 2 + 2 * (size_t)BC * D * 2 /* Q, K, V tiles (16-bit) */
           + (size_t)NW * 16 * BC * 4 + (size_t)NW * 16 * BC * 2 /* S (fp32), P (16-bit) */
           + (size_t)BR * D * 4 + (size_t)BR * 4;            /* O (fp32), per-row factor */
}

/* grid (seq / BR, heads, batch), NW * 32 threads, prefill_smem<D>() bytes of shared memory */
template <typename T, int D, bool CAUSAL>
__global__ void __launch_bounds__(NW * 32)
    attn_prefill(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                 T *__restrict__ O, int H, int KVH, int S, float scale_log2)
{
    extern __shared__ __align__(128) unsigned char smem[];
    T *Qs = (T *)smem;
    T *Ks = Qs + BR * D;
    T *Vs = Ks + BC * D;
    float *Ss = (float *)(Vs + BC * D);
    T *Ps = (T *)(Ss + NW * 16 * BC);
    float *Os = (float *)(Ps + NW * 16 * BC);
    float *Fs = Os + BR * D;

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * BR;
    const int kvh = h / (H / KVH);
    const T *Qg = Q + (((size_t)b * H + h) * S + q0) * D;
    const T *Kg = K + ((size_t)b * KVH + kvh) * S * D;
    const T *Vg = V + ((size_t)b * KVH + kvh) * S * D;
    T *Og = O + (((size_t)b * H + h) * S + q0) * D;

    copy_tile(Qs, Qg, BR * D);
    for (int i = threadIdx.x; i < BR * D; i += blockDim.x) Os[i] = 0.0f;
    __syncthreads();

    const T *Qw = Qs + warp * 16 * D;
    float *Sw = Ss + warp * 16 * BC;
    T *Pw = Ps + warp * 16 * BC;
    float *Ow = Os + warp * 16 * D;
    float *Fw = Fs + warp * 16;

    /* softmax bookkeeping: lanes 2r and 2r+1 own row r of the warp's 16, BC/2 columns each */
    const int row = lane >> 1, part = lane & 1;
    const int qi = q0 + warp * 16 + row;
    float m = -INFINITY, l = 0.0f;

    const int kend = CAUSAL ? min(S, q0 + BR) : S;
    for (int k0 = 0; k0 < kend; k0 += BC) {
        copy_tile(Ks, Kg + (size_t)k0 * D, BC * D);
        copy_tile(Vs, Vg + (size_t)k0 * D, BC * D);
        __syncthreads();

        /* S(16 x BC) = Qw(16 x D) Ks^T; Ks row-major [key][d] is K^T column-major, ld D */
        for (int nb = 0; nb < BC / 16; nb++) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.0f);
            for (int kk = 0; kk < D / 16; kk++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
                wmma::load_matrix_sync(fa, Qw + kk * 16, D);
                wmma::load_matrix_sync(fb, Ks + nb * 16 * D + kk * 16, D);
                wmma::mma_sync(acc, fa, fb, acc);
            }
            wmma::store_matrix_sync(Sw + nb * 16, acc, BC, wmma::mem_row_major);
        }
        __syncwarp();

        /* online softmax (log2 domain) */
        float s[BC / 2];
        float tmax = -INFINITY;
#pragma unroll
        for (int j = 0; j < BC / 2; j++) {
            int c = part * (BC / 2) + j;
            float v = Sw[row * BC + c] * scale_log2;
            if (CAUSAL && k0 + c > qi) v = -INFINITY;
            s[j] = v;
            tmax = fmaxf(tmax, v);
        }
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
        /* tile 0 holds key 0, which every row sees: m is finite from the first tile on */
        const float mnew = fmaxf(m, tmax);
        const float alpha = exp2f(m - mnew); /* 0 on the first tile (m = -inf) */
        float psum = 0.0f;
#pragma unroll
        for (int j = 0; j < BC / 2; j++) {
            float p = exp2f(s[j] - mnew);
            psum += p;
            Pw[row * BC + part * (BC / 2) + j] = from_f<T>(p);
        }
        psum += __shfl_xor_sync(0xffffffffu, psum, 1);
        l = l * alpha + psum;
        m = mnew;
        if (part == 0) Fw[row] = alpha;
        __syncwarp();
        for (int i = lane; i < 16 * D; i += 32) Ow[i] *= Fw[i / D];
        __syncwarp();

        /* Ow(16 x D) += Pw(16 x BC) Vs(BC x D) */
        for (int nd = 0; nd < D / 16; nd++) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::load_matrix_sync(acc, Ow + nd * 16, D, wmma::mem_row_major);
            for (int kk = 0; kk < BC / 16; kk++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
                wmma::load_matrix_sync(fa, Pw + kk * 16, BC);
                wmma::load_matrix_sync(fb, Vs + kk * 16 * D + nd * 16, D);
                wmma::mma_sync(acc, fa, fb, acc);
            }
            wmma::store_matrix_sync(Ow + nd * 16, acc, D, wmma::mem_row_major);
        }
        __syncthreads(); /* every warp is done with Ks, Vs */
    }

    if (part == 0) Fw[row] = 1.0f / l;
    __syncwarp();
    T *Ogw = Og + (size_t)warp * 16 * D;
    for (int i = lane; i < 16 * D; i += 32) Ogw[i] = from_f<T>(Ow[i] * Fw[i / D]);
}

/* Decode, pass 1. grid (nsplit, KVH, batch), DEC_THREADS threads; shared memory
   (G*D + G*chunk + 2*G) floats, G = H / KVH. Writes, per (b, h, split): the chunk's max score
   (log2 domain), sum of exp2(score - max) and unnormalized output sum_j p_j V_j. */
template <typename T, int D>
__global__ void __launch_bounds__(DEC_THREADS)
    attn_decode_split(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                      float *__restrict__ Op, float *__restrict__ Mp, float *__restrict__ Lp, int H,
                      int KVH, int S, int chunk, float scale_log2)
{
    extern __shared__ float dsm[];
    const int G = H / KVH;
    float *qs = dsm;
    float *sc = qs + G * D;
    float *red = sc + G * chunk;
    const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z, nsplit = gridDim.x;
    const int j0 = split * chunk;
    const int n = min(chunk, S - j0);
    const T *Kg = K + (((size_t)b * KVH + kvh) * S + j0) * D;
    const T *Vg = V + (((size_t)b * KVH + kvh) * S + j0) * D;
    const T *Qg = Q + ((size_t)b * H + (size_t)kvh * G) * D; /* q_len 1: heads kvh*G.. contiguous */

    for (int i = threadIdx.x; i < G * D; i += blockDim.x) qs[i] = to_f(Qg[i]);
    __syncthreads();

    for (int idx = threadIdx.x; idx < G * n; idx += blockDim.x) {
        const int g = idx / n, j = idx % n;
        const uint4 *kr = (const uint4 *)(Kg + (size_t)j * D);
        const float *qr = qs + g * D;
        float acc = 0.0f;
        for (int v = 0; v < D / 8; v++) {
            uint4 u = kr[v];
            const T *e = (const T *)&u;
#pragma unroll
            for (int t = 0; t < 8; t++) acc += qr[v * 8 + t] * to_f(e[t]);
        }
        sc[g * chunk + j] = acc * scale_log2;
    }
    __syncthreads();

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    for (int g = warp; g < G; g += nw) {
        float mx = -INFINITY;
        for (int j = lane; j < n; j += 32) mx = fmaxf(mx, sc[g * chunk + j]);
        for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float sum = 0.0f;
        for (int j = lane; j < n; j += 32) {
            float p = exp2f(sc[g * chunk + j] - mx);
            sc[g * chunk + j] = p;
            sum += p;
        }
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (lane == 0) {
            red[g] = mx;
            red[G + g] = sum;
        }
    }
    __syncthreads();

    for (int idx = threadIdx.x; idx < G * D; idx += blockDim.x) {
        const int g = idx / D, d = idx % D;
        float acc = 0.0f;
        for (int j = 0; j < n; j++) acc += sc[g * chunk + j] * to_f(Vg[(size_t)j * D + d]);
        const size_t o = ((size_t)b * H + (size_t)kvh * G + g) * nsplit + split;
        Op[o * D + d] = acc;
        if (d == 0) {
            Mp[o] = red[g];
            Lp[o] = red[G + g];
        }
    }
}

/* Decode, pass 2: grid batch*heads, D threads. */
template <typename T, int D>
__global__ void attn_decode_combine(const float *__restrict__ Op, const float *__restrict__ Mp,
                                    const float *__restrict__ Lp, T *__restrict__ O, int nsplit)
{
    const size_t bh = blockIdx.x;
    const int d = threadIdx.x;
    float M = -INFINITY;
    for (int s = 0; s < nsplit; s++) M = fmaxf(M, Mp[bh * nsplit + s]);
    float L = 0.0f, acc = 0.0f;
    for (int s = 0; s < nsplit; s++) {
        const float w = exp2f(Mp[bh * nsplit + s] - M);
        L += Lp[bh * nsplit + s] * w;
        acc += Op[(bh * nsplit + s) * D + d] * w;
    }
    O[bh * D + d] = from_f<T>(acc / L);
}

/* Naive reference: one thread per (batch, head, query row), fp32, two passes over the keys.
   The query at row i sits at position S - L + i (causal: keys 0..that position). */
template <typename T>
__global__ void attn_ref(const T *Q, const T *K, const T *V, float *O, int B, int H, int KVH, int L,
                         int S, int D, int causal, float scale)
{
    const size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)B * H * L) return;
    const int i = (int)(idx % L), h = (int)((idx / L) % H), b = (int)(idx / ((size_t)L * H));
    const int kvh = h / (H / KVH);
    const T *q = Q + idx * D;
    const T *Kb = K + ((size_t)b * KVH + kvh) * S * D;
    const T *Vb = V + ((size_t)b * KVH + kvh) * S * D;
    const int jend = causal ? S - L + i + 1 : S;
    float mx = -INFINITY;
    for (int j = 0; j < jend; j++) {
        float s = 0.0f;
        for (int d = 0; d < D; d++) s += to_f(q[d]) * to_f(Kb[(size_t)j * D + d]);
        mx = fmaxf(mx, s * scale);
    }
    float o[128];
    for (int d = 0; d < D; d++) o[d] = 0.0f;
    float sum = 0.0f;
    for (int j = 0; j < jend; j++) {
        float s = 0.0f;
        for (int d = 0; d < D; d++) s += to_f(q[d]) * to_f(Kb[(size_t)j * D + d]);
        const float p = expf(s * scale - mx);
        sum += p;
        for (int d = 0; d < D; d++) o[d] += p * to_f(Vb[(size_t)j * D + d]);
    }
    for (int d = 0; d < D; d++) O[idx * D + d] = o[d] / sum;
}

template <typename T> __global__ void fill_kernel(T *p, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = from_f<T>((float)(h & 0xffffu) / 32767.5f - 1.0f);
    }
}

template <typename T> __global__ void to_float_kernel(const T *p, float *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = to_f(p[i]);
}

/* ---- host side ---- */

enum { DT_BF16, DT_FP16 };

typedef struct {
    int dt, decode, B, H, KVH, L, S, D, causal;
    void *q, *k, *v, *o;
    float *op, *mp, *lp;
    int chunk, nsplit;
} attn_ctx;

template <typename T, int D, bool C> static void set_smem(void)
{
    CK(cudaFuncSetAttribute(attn_prefill<T, D, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)prefill_smem<D>()));
}

template <typename T> static void set_smem_all(void)
{
    set_smem<T, 64, false>();
    set_smem<T, 64, true>();
    set_smem<T, 128, false>();
    set_smem<T, 128, true>();
}

template <typename T, int D> static void run_d(attn_ctx *c, cudaStream_t s)
{
    const float sl2 = LOG2E / sqrtf((float)D);
    if (!c->decode) {
        dim3 grid(c->S / BR, c->H, c->B);
        size_t sm = prefill_smem<D>();
        if (c->causal)
            attn_prefill<T, D, true><<<grid, NW * 32, sm, s>>>((const T *)c->q, (const T *)c->k,
                                                               (const T *)c->v, (T *)c->o, c->H,
                                                               c->KVH, c->S, sl2);
        else
            attn_prefill<T, D, false><<<grid, NW * 32, sm, s>>>((const T *)c->q, (const T *)c->k,
                                                                (const T *)c->v, (T *)c->o, c->H,
                                                                c->KVH, c->S, sl2);
    } else {
        const int G = c->H / c->KVH;
        dim3 grid(c->nsplit, c->KVH, c->B);
        size_t sm = (size_t)(G * D + G * c->chunk + 2 * G) * sizeof(float);
        attn_decode_split<T, D><<<grid, DEC_THREADS, sm, s>>>((const T *)c->q, (const T *)c->k,
                                                             (const T *)c->v, c->op, c->mp, c->lp,
                                                             c->H, c->KVH, c->S, c->chunk, sl2);
        attn_decode_combine<T, D><<<c->B * c->H, D, 0, s>>>(c->op, c->mp, c->lp, (T *)c->o,
                                                           c->nsplit);
    }
}

template <typename T> static void run_t(attn_ctx *c, cudaStream_t s)
{
    if (c->D == 64) run_d<T, 64>(c, s);
    else run_d<T, 128>(c, s);
}

static void attn_op(void *p, cudaStream_t s)
{
    attn_ctx *c = (attn_ctx *)p;
    if (c->dt == DT_BF16) run_t<__nv_bfloat16>(c, s);
    else run_t<__half>(c, s);
}

static int g_sms = 1;

/* Decode chunking: 256 keys per block, halved (down to 32) until there are >= 2 blocks per SM. */
static void plan_decode(attn_ctx *c)
{
    c->chunk = 256;
    while (c->chunk > 32 && (long)c->B * c->KVH * ((c->S + c->chunk - 1) / c->chunk) < 2L * g_sms)
        c->chunk /= 2;
    c->nsplit = (c->S + c->chunk - 1) / c->chunk;
}

static size_t ctx_bytes(const attn_ctx *c)
{
    size_t qo = (size_t)c->B * c->H * c->L * c->D * 2;
    size_t kv = (size_t)c->B * c->KVH * c->S * c->D * 2;
    size_t part = c->decode ? (size_t)c->B * c->H * c->nsplit * (c->D + 2) * sizeof(float) : 0;
    return 2 * qo + 2 * kv + part;
}

static void ctx_alloc(attn_ctx *c)
{
    size_t qo = (size_t)c->B * c->H * c->L * c->D, kv = (size_t)c->B * c->KVH * c->S * c->D;
    CK(cudaMalloc(&c->q, qo * 2));
    CK(cudaMalloc(&c->o, qo * 2));
    CK(cudaMalloc(&c->k, kv * 2));
    CK(cudaMalloc(&c->v, kv * 2));
    c->op = c->mp = c->lp = NULL;
    if (c->decode) {
        size_t np = (size_t)c->B * c->H * c->nsplit;
        CK(cudaMalloc(&c->op, np * c->D * sizeof(float)));
        CK(cudaMalloc(&c->mp, np * sizeof(float)));
        CK(cudaMalloc(&c->lp, np * sizeof(float)));
    }
    if (c->dt == DT_BF16) {
        fill_kernel<<<1024, 256>>>((__nv_bfloat16 *)c->q, qo, 0x1111u);
        fill_kernel<<<1024, 256>>>((__nv_bfloat16 *)c->k, kv, 0x2222u);
        fill_kernel<<<1024, 256>>>((__nv_bfloat16 *)c->v, kv, 0x3333u);
    } else {
        fill_kernel<<<1024, 256>>>((__half *)c->q, qo, 0x1111u);
        fill_kernel<<<1024, 256>>>((__half *)c->k, kv, 0x2222u);
        fill_kernel<<<1024, 256>>>((__half *)c->v, kv, 0x3333u);
    }
    CK(cudaGetLastError());
    CK(cudaMemset(c->o, 0, qo * 2));
    CK(cudaDeviceSynchronize());
}

static void ctx_free(attn_ctx *c)
{
    CK(cudaFree(c->q));
    CK(cudaFree(c->o));
    CK(cudaFree(c->k));
    CK(cudaFree(c->v));
    if (c->op) CK(cudaFree(c->op));
    if (c->mp) CK(cudaFree(c->mp));
    if (c->lp) CK(cudaFree(c->lp));
}

/* Max |fused - reference| over the output of one small shape. */
static double check_one(int dt, int decode, int D, int causal, int S)
{
    attn_ctx c;
    memset(&c, 0, sizeof c);
    c.dt = dt;
    c.decode = decode;
    c.B = 2;
    c.H = 8;
    c.KVH = 2;
    c.S = S;
    c.L = decode ? 1 : S;
    c.D = D;
    c.causal = causal;
    if (decode) plan_decode(&c);
    ctx_alloc(&c);
    size_t n = (size_t)c.B * c.H * c.L * c.D;
    float *ref = NULL, *got = NULL;
    CK(cudaMalloc(&ref, n * sizeof(float)));
    CK(cudaMalloc(&got, n * sizeof(float)));
    attn_op(&c, 0);
    CK(cudaGetLastError());
    int rows = c.B * c.H * c.L;
    const float scale = 1.0f / sqrtf((float)D);
    if (dt == DT_BF16) {
        attn_ref<<<(rows + 127) / 128, 128>>>((const __nv_bfloat16 *)c.q, (const __nv_bfloat16 *)c.k,
                                              (const __nv_bfloat16 *)c.v, ref, c.B, c.H, c.KVH, c.L,
                                              c.S, D, causal && !decode, scale);
        to_float_kernel<<<256, 256>>>((const __nv_bfloat16 *)c.o, got, n);
    } else {
        attn_ref<<<(rows + 127) / 128, 128>>>((const __half *)c.q, (const __half *)c.k,
                                              (const __half *)c.v, ref, c.B, c.H, c.KVH, c.L, c.S, D,
                                              causal && !decode, scale);
        to_float_kernel<<<256, 256>>>((const __half *)c.o, got, n);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    float *hr = (float *)malloc(n * sizeof(float)), *hg = (float *)malloc(n * sizeof(float));
    if (!hr || !hg) {
        fprintf(stderr, "attn_bench: out of host memory\n");
        exit(1);
    }
    CK(cudaMemcpy(hr, ref, n * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hg, got, n * sizeof(float), cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)hr[i] - (double)hg[i]);
        if (!(e <= err)) err = e; /* NaN propagates */
    }
    free(hr);
    free(hg);
    CK(cudaFree(ref));
    CK(cudaFree(got));
    ctx_free(&c);
    return err;
}

/* Returns 1 when every fused kernel of dtype `dt` matches the reference. */
static int self_check(int dt)
{
    const double tol = 2e-2;
    int ok = 1;
    for (int D = 64; D <= 128; D *= 2) {
        for (int causal = 0; causal <= 1; causal++) {
            double e = check_one(dt, 0, D, causal, 256);
            fprintf(stderr, "attn_bench: check prefill head_dim %d causal %d seq 256: max |err| %.2e %s\n",
                    D, causal, e, e <= tol ? "ok" : "FAIL");
            ok &= e <= tol;
        }
        double e = check_one(dt, 1, D, 0, 200);
        fprintf(stderr, "attn_bench: check decode  head_dim %d          seq 200: max |err| %.2e %s\n", D,
                e, e <= tol ? "ok" : "FAIL");
        ok &= e <= tol;
    }
    return ok;
}

static void usage(void)
{
    fprintf(stderr, "usage: attn_bench --peak-tflops X --out FILE [--dtype bf16|fp16] [--quick] "
                    "[--no-check] [--gpu-name NAME]\n"
                    "       attn_bench --check [--dtype bf16|fp16]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *gpu_name = NULL, *dtype = "bf16";
    double peak = 0.0;
    int quick = 0, check_only = 0, no_check = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cal_opt(argc, argv, &i, "--peak-tflops"))) peak = cal_atof(v, "--peak-tflops");
        else if ((v = cal_opt(argc, argv, &i, "--out"))) out = v;
        else if ((v = cal_opt(argc, argv, &i, "--dtype"))) dtype = v;
        else if ((v = cal_opt(argc, argv, &i, "--gpu-name"))) gpu_name = v;
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--check") == 0) check_only = 1;
        else if (strcmp(argv[i], "--no-check") == 0) no_check = 1;
        else usage();
    }
    int dt;
    if (strcmp(dtype, "bf16") == 0) dt = DT_BF16;
    else if (strcmp(dtype, "fp16") == 0) dt = DT_FP16;
    else usage();
    if (!out && !check_only) usage();

    cal_require_gpu("attn_bench");
    cal_env env;
    cal_env_init(&env, "attn_bench", 0);
    g_sms = env.sms;
    if (env.cc_major < 8) {
        fprintf(stderr, "attn_bench: needs sm_80 or newer (bf16 WMMA), this device is sm_%d%d\n",
                env.cc_major, env.cc_minor);
        return 1;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    if (prop.sharedMemPerBlockOptin < prefill_smem<128>()) {
        fprintf(stderr, "attn_bench: needs %zu B of shared memory per block, device allows %zu\n",
                prefill_smem<128>(), (size_t)prop.sharedMemPerBlockOptin);
        return 1;
    }
    set_smem_all<__nv_bfloat16>();
    set_smem_all<__half>();

    if (!no_check || check_only) {
        if (!self_check(dt)) {
            fprintf(stderr, "attn_bench: self-check FAILED: no timings written\n");
            return 1;
        }
        if (check_only) return 0;
    }
    if (peak <= 0.0) fprintf(stderr, "attn_bench: no --peak-tflops: efficiency written as 0\n");

    char extra[1024];
    snprintf(extra, sizeof extra,
             "# llmsim gpu: %s; dtype %s; peak %.1f TFLOPS (--peak-tflops); grid %s\n"
             "# kernel: simple fused FlashAttention-style kernel of this program (WMMA prefill, split-KV "
             "decode), NOT cuDNN/FlashAttention: a lower bound\n"
             "# FLOPs = 4*batch*heads*q_len*seq*head_dim (halved when causal prefill); q_len = seq (prefill) "
             "or 1 (decode); median of 5 runs >= 20 ms\n",
             gpu_name ? gpu_name : "(not given)", dtype, peak, quick ? "quick" : "full");
    FILE *f = cal_open_tsv(out, &env, "fused attention (scaled dot-product)", extra,
                           "kind\tbatch\theads\tkv_heads\tseq\thead_dim\tcausal\ttime_us\ttflops\t"
                           "efficiency\tsource");

    static const int batches_full[] = {1, 4, 16}, batches_quick[] = {1, 4};
    static const int seqs_full[] = {512, 1024, 2048, 4096, 8192}, seqs_quick[] = {1024, 4096};
    static const int kvhs[] = {32, 8}, dims[] = {64, 128};
    const int *batches = quick ? batches_quick : batches_full, nb = quick ? 2 : 3;
    const int *seqs = quick ? seqs_quick : seqs_full, ns = quick ? 2 : 5;
    const int heads = 32;

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    int rows = 0, skipped = 0;
    for (int decode = 0; decode <= 1; decode++)
        for (int ib = 0; ib < nb; ib++)
            for (int ik = 0; ik < 2; ik++)
                for (int is = 0; is < ns; is++)
                    for (int id = 0; id < 2; id++)
                        for (int causal = 0; causal <= 1; causal++) {
                            attn_ctx c;
                            memset(&c, 0, sizeof c);
                            c.dt = dt;
                            c.decode = decode;
                            c.B = batches[ib];
                            c.H = heads;
                            c.KVH = kvhs[ik];
                            c.S = seqs[is];
                            c.L = decode ? 1 : c.S;
                            c.D = dims[id];
                            c.causal = causal;
                            if (decode) plan_decode(&c);
                            const char *kind = decode ? "decode" : "prefill";
                            if ((double)ctx_bytes(&c) > 0.4 * (double)free_b) {
                                fprintf(stderr, "attn_bench: skip %s b%d kv%d s%d d%d: %.2f GiB > 40%% of free memory\n",
                                        kind, c.B, c.KVH, c.S, c.D, (double)ctx_bytes(&c) / (1u << 30));
                                skipped++;
                                continue;
                            }
                            ctx_alloc(&c);
                            double us = cal_time_us(attn_op, &c, s, 3, 20.0, 5);
                            double flops = 4.0 * c.B * c.H * (double)c.L * c.S * c.D;
                            if (causal && !decode) flops *= 0.5;
                            double tflops = flops / (us * 1e-6) / 1e12;
                            fprintf(f, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.4f\t%s\n", kind, c.B,
                                    c.H, c.KVH, c.S, c.D, causal, us, tflops,
                                    peak > 0.0 ? tflops / peak : 0.0, env.source);
                            fflush(f);
                            rows++;
                            ctx_free(&c);
                        }
    fclose(f);
    CK(cudaStreamDestroy(s));
    fprintf(stderr, "attn_bench: %s: %d rows, %d shapes skipped -> %s\n", dtype, rows, skipped, out);
    return 0;
}
