#include "cost/calib_fit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>

static double sigm(double x) { return 1 / (1 + exp(-x)); }
static double logit(double p) { return log(p / (1 - p)); }

/* p-norm as a smooth max of the two roofline terms: exact far from where
 * they are equal, 2^(1/p) times max() there (p is fitted: gemm_fit.p) */
static double smax(double a, double b, double p)
{
    double m = a > b ? a : b;
    return m * pow(pow(a / m, p) + pow(b / m, p), 1 / p);
}

double gemm_fit_time(const gemm_fit *f, const gpu_spec *g, double peak,
                     double n, double k, double flops, double bytes)
{
    double ec = f->emax * n / (n + f->n0) * k / (k + f->k0);
    return smax(flops / (peak * ec), bytes / (g->mem_bw_Bps * f->em), f->p) +
           f->t0;
}

double mem_fit_time(const mem_fit *f, const gpu_spec *g, double bytes)
{
    return bytes / (g->mem_bw_Bps * f->emax * bytes / (bytes + f->b0));
}

typedef struct ctx {
    const fit_point *p;
    int n;
    const gpu_spec *g;
    double peak;
} ctx;

static void gemm_params(const gsl_vector *x, gemm_fit *f)
{
    f->emax = sigm(gsl_vector_get(x, 0));
    f->n0 = exp(gsl_vector_get(x, 1));
    f->k0 = exp(gsl_vector_get(x, 2));
    f->em = sigm(gsl_vector_get(x, 3));
    f->t0 = exp(gsl_vector_get(x, 4));
    f->p = 1 + exp(gsl_vector_get(x, 5));
}

static int gemm_res(const gsl_vector *x, void *data, gsl_vector *r)
{
    const ctx *c = data;
    gemm_fit f;
    gemm_params(x, &f);
    for (int i = 0; i < c->n; i++) {
        const fit_point *p = &c->p[i];
        double t = gemm_fit_time(&f, c->g, c->peak, p->n, p->k, p->flops,
                                 p->bytes);
        gsl_vector_set(r, (size_t)i, log(t / p->t_s));
    }
    return GSL_SUCCESS;
}

static void mem_params(const gsl_vector *x, mem_fit *f)
{
    f->emax = sigm(gsl_vector_get(x, 0));
    f->b0 = exp(gsl_vector_get(x, 1));
}

static int mem_res(const gsl_vector *x, void *data, gsl_vector *r)
{
    const ctx *c = data;
    mem_fit f;
    mem_params(x, &f);
    for (int i = 0; i < c->n; i++)
        gsl_vector_set(r, (size_t)i,
                       log(mem_fit_time(&f, c->g, c->p[i].bytes) / c->p[i].t_s));
    return GSL_SUCCESS;
}

static int solve(int (*fn)(const gsl_vector *, void *, gsl_vector *),
                 ctx *c, gsl_vector *x, llm_err *e)
{
    gsl_multifit_nlinear_fdf fdf = {fn, NULL, NULL, (size_t)c->n, x->size, c,
                                    0, 0, 0};
    gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(
        gsl_multifit_nlinear_trust, &prm, (size_t)c->n, x->size);
    if (!w)
        return err_set(e, "out of memory fitting %d points", c->n);
    gsl_multifit_nlinear_init(x, &fdf, w);
    int info;
    int st = gsl_multifit_nlinear_driver(500, 1e-10, 1e-10, 1e-10, NULL, NULL,
                                         &info, w);
    gsl_vector_memcpy(x, gsl_multifit_nlinear_position(w));
    gsl_multifit_nlinear_free(w);
    if (st != GSL_SUCCESS && st != GSL_EMAXITER)
        return err_set(e, "fit did not converge (%s)", gsl_strerror(st));
    return 0;
}

int fit_gemm(const fit_point *p, int n, const gpu_spec *g, double peak,
             gemm_fit *out, llm_err *e)
{
    if (n < GEMM_FIT_PARAMS)
        return err_set(e, "%d GEMM measurements: too few to fit %d parameters",
                       n, GEMM_FIT_PARAMS);
    ctx c = {p, n, g, peak};
    gsl_vector *x = gsl_vector_alloc(GEMM_FIT_PARAMS);
    /* start: 80% of peak, half-efficiency at 64 along n and k, 80% of the
     * bandwidth, 2 us per kernel, a smooth max of sharpness 8 */
    double x0[GEMM_FIT_PARAMS] = {logit(0.8), log(64), log(64), logit(0.8),
                                  log(2e-6), log(7)};
    for (int i = 0; i < GEMM_FIT_PARAMS; i++)
        gsl_vector_set(x, (size_t)i, x0[i]);
    int rc = solve(gemm_res, &c, x, e);
    gemm_params(x, out);
    out->n = n;
    gsl_vector_free(x);
    return rc;
}

gemm_fit gemm_fit_sized(const gemm_fit *base, double size)
{
    gemm_fit f = *base;
    f.n0 *= size;
    f.k0 *= size;
    return f;
}

typedef struct sweep_ctx {
    ctx c;
    const gemm_fit *base;
} sweep_ctx;

/* the size factor, held within 1..4 of the base's: a sweep can say a
 * GPU's tensor cores need larger GEMMs to fill than the base's (Blackwell's
 * wider MMA tiles), and one too flat to say more stops at the base's shape
 * instead of erasing it (a smaller factor also makes the grid's
 * interpolated times fall where the work grows) */
static double sweep_size(double x)
{
    return 1 + 3 * sigm(x);
}

static int sweep_res(const gsl_vector *x, void *data, gsl_vector *r)
{
    const sweep_ctx *s = data;
    gemm_fit f = gemm_fit_sized(s->base, sweep_size(gsl_vector_get(x, 1)));
    double peak = s->c.peak * exp(gsl_vector_get(x, 0));
    for (int i = 0; i < s->c.n; i++) {
        const fit_point *p = &s->c.p[i];
        double t = gemm_fit_time(&f, s->c.g, peak, p->n, p->k, p->flops,
                                 p->bytes);
        gsl_vector_set(r, (size_t)i, log(t / p->t_s));
    }
    return GSL_SUCCESS;
}

int fit_gemm_sweep(const fit_point *p, int n, const gpu_spec *g, double peak,
                   const gemm_fit *base, double *scale, double *size,
                   llm_err *e)
{
    if (n < 3)
        return err_set(e, "%d GEMM measurements of one dtype: too few to fit "
                          "a scale and a size", n);
    sweep_ctx s = {{p, n, g, peak}, base};
    gsl_vector *x = gsl_vector_calloc(2); /* start: the base as it is */
    if (!x)
        return err_set(e, "out of memory fitting %d points", n);
    gsl_multifit_nlinear_fdf fdf = {sweep_res, NULL, NULL, (size_t)n, 2, &s,
                                    0, 0, 0};
    gsl_multifit_nlinear_parameters prm =
        gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(
        gsl_multifit_nlinear_trust, &prm, (size_t)n, 2);
    if (!w) {
        gsl_vector_free(x);
        return err_set(e, "out of memory fitting %d points", n);
    }
    gsl_multifit_nlinear_init(x, &fdf, w);
    int info;
    int st = gsl_multifit_nlinear_driver(500, 1e-10, 1e-10, 1e-10, NULL, NULL,
                                         &info, w);
    const gsl_vector *at = gsl_multifit_nlinear_position(w);
    *scale = exp(gsl_vector_get(at, 0));
    *size = sweep_size(gsl_vector_get(at, 1));
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    if (st != GSL_SUCCESS && st != GSL_EMAXITER)
        return err_set(e, "fit did not converge (%s)", gsl_strerror(st));
    return 0;
}

int fit_mem(const fit_point *p, int n, const gpu_spec *g, mem_fit *out,
            llm_err *e)
{
    if (n < 3)
        return err_set(e, "%d memory-bound measurements: too few", n);
    ctx c = {p, n, g, 0};
    gsl_vector *x = gsl_vector_alloc(2);
    gsl_vector_set(x, 0, logit(0.8));
    gsl_vector_set(x, 1, log(1 << 20));
    int rc = solve(mem_res, &c, x, e);
    mem_params(x, out);
    out->n = n;
    gsl_vector_free(x);
    return rc;
}
