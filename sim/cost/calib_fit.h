/* calib_fit — fitting the cost model's efficiencies to measured kernel
 * times (GSL nonlinear least squares), and tabulating the fit as the grids
 * cost.c interpolates.
 *
 * GEMM:  t = smoothmax_p(F / (P·ec), B / (W·em)) + t0,
 *        ec = emax · n/(n+n0) · k/(k+k0)
 * (a saturating efficiency in n and k: small dimensions leave tensor cores
 * idle; em the achieved fraction of memory bandwidth when streaming
 * weights; t0 a fixed cost per kernel, which dominates tiny GEMMs; p how
 * sharply compute and streaming overlap).  A measured GEMM is fitted as the
 * one its kernel computes, m in whole tiles (cost_gemm_rows), and that
 * padding is all the rows do to the compute term: with few rows a GEMM
 * streams its weights, so what slows it is the bytes term.  A factor
 * m/(m+m0) as well is not identified by one GPU's kernels (on H100's traces
 * m0 = 119 and m0 = 0 fit within 0.2 points: a small-m GEMM is memory-bound
 * there either way) but it is wrong on the same tensor cores with more
 * bandwidth: an H200's 128-row GEMMs take 0.70x an H100's, its bandwidth
 * ratio, where m0 = 119 kept them compute-bound at H100's time.  A100's
 * traces and the H200's own sweep both fit m0 = 0.  Memory-bound
 * ops (norms, activations, residual adds, embeddings): t = B / (W · e(B)), e(B) = emax · B/(B+b0), i.e. a fixed
 * per-kernel cost b0/(W·emax) plus streaming at emax.  Residuals are
 * log(predicted/measured), so every op weighs by its relative error. */
#ifndef LLMSIM_CALIB_FIT_H
#define LLMSIM_CALIB_FIT_H

#include "base/err.h"
#include "hw/gpu.h"

typedef struct fit_point {
    int op;        /* index into the caller's op names */
    double m, n, k; /* GEMM shape; m = 0 for a memory-bound op */
    double flops, bytes;
    double t_s;    /* measured */
    double tokens; /* rows of the layer's activations (Vidur num_tokens) */
    double row;    /* memory-bound: elements one block loops over; 0 none */
} fit_point;

#define GEMM_FIT_PARAMS 6 /* emax, n0, k0, em, t0, p */

typedef struct gemm_fit {
    double emax, n0, k0, em, t0;
    double p; /* sharpness of the smooth max of the two terms (> 1) */
    int n;
} gemm_fit;

typedef struct mem_fit {
    double emax, b0;
    int n;
} mem_fit;

int fit_gemm(const fit_point *p, int n, const gpu_spec *g, double peak,
             gemm_fit *out, llm_err *e);
int fit_mem(const fit_point *p, int n, const gpu_spec *g, mem_fit *out,
            llm_err *e);

/* A published sweep of one dtype's GEMMs on a GPU whose shape is another's
 * fit (`base`): the compute scale and the size factor (n0, k0 times
 * it: a GPU whose tensor cores need larger tiles to fill falls off faster
 * at small shapes, 1 to 4 times the base's) that reproduce the
 * sweep's times, with the base's bandwidth fraction and fixed cost.  Needs
 * at least 3 points. */
int fit_gemm_sweep(const fit_point *p, int n, const gpu_spec *g, double peak,
                   const gemm_fit *base, double *scale, double *size,
                   llm_err *e);
/* base with its n0, k0 times size */
gemm_fit gemm_fit_sized(const gemm_fit *base, double size);

double gemm_fit_time(const gemm_fit *f, const gpu_spec *g, double peak,
                     double n, double k, double flops, double bytes);
double mem_fit_time(const mem_fit *f, const gpu_spec *g, double bytes);

#endif
