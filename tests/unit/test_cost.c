/* Cost model: interpolation, roofline, the memory-bound decode step,
 * capability errors and bad calibration tables. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cost/cost.h"
#include "decide/exp.h"
#include "cost/calib_fit.h"
#include "test_util.h"

/* A calibration directory of its own: a 3x3x3 GEMM grid whose efficiency
 * is a known function of (m, n, k), a streaming curve, attention, launch. */
static void write_dir(const char *dir, const char *gemm_extra)
{
    char p[256];
    mkdir(dir, 0755);
    snprintf(p, sizeof p, "%s/gemm.tsv", dir);
    FILE *f = fopen(p, "w");
    fprintf(f, "dtype\tm\tn\tk\tefficiency\tsource\n");
    const double ax[3] = {16, 256, 4096};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 3; c++)
                fprintf(f, "bf16\t%.0f\t%.0f\t%.0f\t%.4f\ttest\n", ax[a], ax[b],
                        ax[c], 0.1 + 0.1 * a + 0.05 * b + 0.02 * c);
    fputs(gemm_extra, f);
    fclose(f);
    snprintf(p, sizeof p, "%s/hbm.tsv", dir);
    f = fopen(p, "w");
    fprintf(f, "kind\tbytes\tefficiency\tsource\ncopy\t4096\t0.1\tt\n"
               "copy\t1073741824\t0.9\tt\n");
    fclose(f);
    snprintf(p, sizeof p, "%s/attention.tsv", dir);
    f = fopen(p, "w");
    fprintf(f, "kind\tpeak_fraction\tsource\nflash_fwd\t0.7\tt\n");
    fclose(f);
    snprintf(p, sizeof p, "%s/launch.tsv", dir);
    f = fopen(p, "w");
    fprintf(f, "kind\ttime_us\tsource\nlaunch\t4\tt\n");
    fclose(f);
}

static void test_interpolation(void **state)
{
    (void)state;
    write_dir("/tmp/llmsim-cost-test", "");
    cost_calib c;
    llm_err e;
    const gpu_spec *g = gpu_find(&cat, "h100-sxm");
    assert_int_equal(cfg_load_cost_dir("/tmp/llmsim-cost-test", g, true, &c, &e), 0);
    const cost_grid *gr = &c.gemm[DT_BF16];
    assert_int_equal(gr->nm * gr->nn * gr->nk, 27);
    const double ax[3] = {16, 256, 4096};
    /* the table's values at its grid points */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 3; k++)
                assert_close(cost_grid_eff(gr, ax[a], ax[b], ax[k]),
                             0.1 + 0.1 * a + 0.05 * b + 0.02 * k, 1e-12);
    /* between grid points: linear in log2, so halfway (64 = 2^6, halfway
     * between 2^4 and 2^8) is the mean, and always between neighbours */
    assert_close(cost_grid_eff(gr, 64, 16, 16), 0.15, 1e-12);
    for (double m = 16; m <= 4096; m *= 1.7)
        for (double n = 16; n <= 4096; n *= 2.3) {
            double x = cost_grid_eff(gr, m, n, 1000);
            assert_true(x >= 0.1 - 1e-12 && x <= 0.1 + 0.2 + 0.1 + 0.04 + 1e-12);
        }
    /* outside: clamped to the edge */
    assert_close(cost_grid_eff(gr, 1, 1, 1), 0.1, 1e-12);
    assert_close(cost_grid_eff(gr, 1e6, 1e6, 1e6), 0.44, 1e-12);
    assert_close(cost_hbm_eff(&c, MEM_ELEMENTWISE, 4096), 0.1, 1e-12);
    assert_close(cost_hbm_eff(&c, MEM_NORM, 1 << 30), 0.9, 1e-12);
    cost_calib_free(&c);
}

/* No prediction beats the roofline: kernel time >= FLOPs/peak and
 * >= bytes/bandwidth, over a spread of shapes on the shipped tables. */
static void test_roofline_never_beaten(void **state)
{
    (void)state;
    const char *gpus[] = {"a100-sxm-80gb", "h100-sxm"};
    for (int i = 0; i < 2; i++) {
        const gpu_spec *g = gpu_find(&cat, gpus[i]);
        cost_calib c;
        llm_err e;
        assert_int_equal(cfg_load_cost_calib(".", &cat, g, &c, &e), 0);
        for (double m = 1; m <= 65536; m *= 3)
            for (double n = 7; n <= 60000; n *= 5)
                for (double k = 3; k <= 60000; k *= 7) {
                    cost_op op = {.kind = OP_GEMM, .dt = DT_BF16, .m = m,
                                  .n = n, .k = k, .batch = 1};
                    cost_result r;
                    assert_int_equal(cost_predict(&c, g, &op, 0, &r, &e), 0);
                    assert_true(r.kernel_s >= r.flops / g->peak_flops[DT_BF16]);
                    assert_true(r.kernel_s >= r.bytes / g->mem_bw_Bps);
                    assert_true(r.efficiency > 0 && r.efficiency <= 1);
                }
        for (double el = 1e3; el < 1e10; el *= 10) {
            cost_op op = {.kind = OP_NORM, .dt = DT_BF16, .elems = el};
            cost_result r;
            assert_int_equal(cost_predict(&c, g, &op, 0, &r, &e), 0);
            assert_true(r.kernel_s >= r.bytes / g->mem_bw_Bps);
        }
        cost_calib_free(&c);
    }
}

/* One decode step of Llama-2-7B at batch 1 on A100: every GEMM is a
 * matrix-vector product, so the step is memory-bound, and its time is the
 * weights over the bandwidth at which the calibration says weights stream
 * (the GEMM grid at m = 1 on the largest n, k), within 15%. */
static void test_decode_memory_bound(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "a100-sxm-80gb");
    cost_calib c;
    llm_err e;
    assert_int_equal(cfg_load_cost_calib(".", &cat, g, &c, &e), 0);
    const double h = 4096, f = 11008, V = 32000, L = 32;
    const double shapes[4][2] = {{h, 3 * h}, {h, h}, {h, 2 * f}, {f, h}};
    double t = 0, weights = 0;
    for (int i = 0; i < 4; i++) {
        cost_op op = {.kind = OP_GEMM, .dt = DT_FP16, .m = 1,
                      .k = shapes[i][0], .n = shapes[i][1], .batch = 1};
        cost_result r;
        assert_int_equal(cost_predict(&c, g, &op, 0, &r, &e), 0);
        assert_string_equal(r.bound, "memory");
        t += L * r.kernel_s;
        weights += L * 2 * shapes[i][0] * shapes[i][1];
    }
    cost_op lm = {.kind = OP_GEMM, .dt = DT_FP16, .m = 1, .k = h, .n = V,
                  .batch = 1};
    cost_op attn = {.kind = OP_ATTN_DECODE, .dt = DT_FP16, .batch = 1,
                    .heads = 32, .kv_heads = 32, .head_dim = 128,
                    .kv_len = 128, .flash = true};
    cost_op norm = {.kind = OP_NORM, .dt = DT_FP16, .elems = h};
    cost_result r;
    assert_int_equal(cost_predict(&c, g, &lm, 0, &r, &e), 0);
    t += r.kernel_s;
    weights += 2 * h * V;
    assert_int_equal(cost_predict(&c, g, &attn, 0, &r, &e), 0);
    assert_string_equal(r.bound, "memory");
    t += L * r.kernel_s;
    assert_int_equal(cost_predict(&c, g, &norm, 0, &r, &e), 0);
    t += (2 * L + 1) * r.kernel_s;
    /* the grid's efficiency for the rows a one-row GEMM is computed as
     * (whole tiles: kernels.tsv gemm_small_rows) */
    double rows = cost_gemm_rows(1, c.gemm_tile_rows, c.gemm_small_rows);
    double stream = cost_grid_eff(&c.gemm[DT_FP16], rows, 65536, 65536);
    double want = weights / (g->mem_bw_Bps * stream);
    assert_close(t, want, 0.15);
    cost_calib_free(&c);
}

/* A strided batch of GEMMs fills the GPU as one GEMM with batch x m rows:
 * the same FLOPs at the same efficiency, so the same compute time (eight
 * local experts' up-projections, say). */
static void test_batched_gemm(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "a100-sxm-80gb");
    cost_calib c;
    llm_err e;
    assert_int_equal(cfg_load_cost_calib(".", &cat, g, &c, &e), 0);
    cost_op b = {.kind = OP_GEMM, .dt = DT_FP16, .m = 512, .n = 4096,
                 .k = 4096, .batch = 8};
    cost_op one = {.kind = OP_GEMM, .dt = DT_FP16, .m = 512 * 8.0,
                   .n = 4096, .k = 4096, .batch = 1};
    cost_result rb, r1;
    assert_int_equal(cost_predict(&c, g, &b, 0, &rb, &e), 0);
    assert_int_equal(cost_predict(&c, g, &one, 0, &r1, &e), 0);
    assert_close(rb.flops, r1.flops, 1e-12);
    /* the batch moves more bytes (one B per GEMM); compute-bound, the
     * times agree */
    assert_true(rb.bytes > r1.bytes);
    assert_string_equal(rb.bound, "compute");
    assert_close(rb.kernel_s, r1.kernel_s, 1e-9);
    cost_calib_free(&c);
}

/* Never faster with more work, for a strided batch of 8 GEMMs (an MoE
 * layer's experts): over a grid of shapes, doubling m, n or k never
 * shortens its time, on every GPU of the catalog, in its 16-bit dtype and
 * in FP8 where it has it.  8 x 32-row expert GEMMs once took longer than 8
 * x 128 rows on A100 (874 vs 708 us): their bytes were priced at the
 * efficiency of one GEMM of 8 x m rows.  (Along n and k a single GEMM is
 * not covered: its efficiency, interpolated in log-shape between grid
 * points, can dip, e.g. H100 1x1448x1024 faster than 1x1024x1024; along m
 * test_gemm_tile_steps checks it.) */
static double gemm_s(const cost_calib *c, const gpu_spec *g, dtype dt,
                     double m, double n, double k, double batch)
{
    cost_op op = {.kind = OP_GEMM, .dt = dt, .m = m, .n = n, .k = k,
                  .batch = batch};
    cost_result r;
    llm_err e;
    assert_int_equal(cost_predict(c, g, &op, COST_FALLBACK_DTYPE, &r, &e), 0);
    return r.time_s;
}

/* The shipped tables of catalog GPU g, as every command loads them. */
static void load_calib(const gpu_spec *g, cost_calib *c)
{
    llm_err e;
    if (cfg_load_cost_calib(".", &cat, g, c, &e))
        fail_msg("%s: %s", g->name, e.msg);
}

/* The rows a prediction used are named only when asked (the kernel
 * command): the same time either way, an empty note otherwise. */
static void test_explain_on_demand(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "h100-sxm");
    cost_calib c;
    load_calib(g, &c);
    cost_op op = {.kind = OP_GEMM, .dt = DT_BF16, .m = 4096, .n = 4096,
                  .k = 4096, .batch = 1};
    cost_result quiet, told;
    llm_err e;
    assert_int_equal(cost_predict(&c, g, &op, 0, &quiet, &e), 0);
    op.explain = true;
    assert_int_equal(cost_predict(&c, g, &op, 0, &told, &e), 0);
    assert_true(quiet.time_s == told.time_s);
    assert_string_equal(quiet.calibration, "");
    assert_non_null(strstr(told.calibration, "gemm.tsv bf16 grid"));
    cost_calib_free(&c);
}

static void test_batched_gemm_monotone(void **state)
{
    (void)state;
    const double nk[] = {1024, 4096, 14336};
    const dtype dts[] = {DT_BF16, DT_FP8, DT_FP4};
    int checked = 0;
    for (int gi = 0; gi < cat.n; gi++) {
        const gpu_spec *g = &cat.gpus[gi];
        cost_calib c;
        load_calib(g, &c);
        for (int di = 0; di < 3; di++) {
            dtype dt = dts[di];
            if (g->peak_flops[dt] <= 0)
                continue;
            for (int a = 0; a < 3; a++)
                for (int z = 0; z < 3; z++)
                    for (double m = 1; m <= 16384; m *= 2) {
                        double n = nk[a], k = nk[z];
                        double t = gemm_s(&c, g, dt, m, n, k, 8);
                        double up[3] = {gemm_s(&c, g, dt, 2 * m, n, k, 8),
                                        gemm_s(&c, g, dt, m, 2 * n, k, 8),
                                        gemm_s(&c, g, dt, m, n, 2 * k, 8)};
                        for (int d = 0; d < 3; d++)
                            if (up[d] < t)
                                fail_msg("%s %s: 8 x %.0fx%.0fx%.0f takes "
                                         "%.4g s, doubling %c %.4g s",
                                         g->name, dtype_name(dt), m, n, k, t,
                                         "mnk"[d], up[d]);
                        checked++;
                    }
        }
        cost_calib_free(&c);
    }
    assert_true(checked > 1000);
}

/* Memory-bound kernels on every catalog GPU, over a grid of sizes and
 * rows: never faster with more bytes or a longer row, never beyond the
 * datasheet bandwidth; and with one row of nothing to loop over, the
 * fixed latency of calib/memory-kernels.tsv at the GPU's clock. */
static void test_membound_invariants(void **state)
{
    (void)state;
    static const cost_kind kinds[] = {OP_NORM, OP_ELEMENTWISE, OP_ELEMENTWISE,
                                      OP_ELEMENTWISE, OP_EMBEDDING};
    static const cost_mem_kind mems[] = {MEM_NORM, MEM_ELEMENTWISE,
                                         MEM_ACTIVATION, MEM_ROPE,
                                         MEM_EMBEDDING};
    int checked = 0;
    for (int gi = 0; gi < cat.n; gi++) {
        const gpu_spec *g = &cat.gpus[gi];
        cost_calib c;
        llm_err e;
        load_calib(g, &c);
        assert_true(g->boost_clock_hz > 0 && g->sm_count > 0);
        for (int k = 0; k < 5; k++) {
            double t1 = cost_membound_time_s(&c, g, mems[k], 1, 0);
            assert_float_equal(t1, c.memk[mems[k]].fixed_cycles /
                                       g->boost_clock_hz, t1 * 1e-3 + 1e-12);
            for (double row = 256; row <= 65536; row *= 4)
                for (double el = row; el <= 0x1p31; el *= 8) {
                    cost_op op = {.kind = kinds[k], .mem = mems[k],
                                  .dt = DT_FP16, .elems = el, .reads = 1,
                                  .writes = 1, .row_elems = row};
                    cost_result r, more, wider;
                    assert_int_equal(cost_predict(&c, g, &op, 0, &r, &e), 0);
                    op.elems = 2 * el;
                    assert_int_equal(cost_predict(&c, g, &op, 0, &more, &e), 0);
                    op.elems = el, op.row_elems = 2 * row;
                    assert_int_equal(cost_predict(&c, g, &op, 0, &wider, &e), 0);
                    if (more.time_s < r.time_s || wider.time_s < r.time_s)
                        fail_msg("%s %s: %.0f elements in rows of %.0f take "
                                 "%.4g s; twice the elements %.4g s, twice "
                                 "the row %.4g s", g->name,
                                 cost_mem_kind_names[mems[k]], el, row,
                                 r.time_s, more.time_s, wider.time_s);
                    if (r.bytes / r.time_s > g->mem_bw_Bps * (1 + 1e-9))
                        fail_msg("%s %s: %.4g B/s beats the datasheet",
                                 g->name, cost_mem_kind_names[mems[k]],
                                 r.bytes / r.time_s);
                    checked++;
                }
        }
        cost_calib_free(&c);
    }
    assert_true(checked > 2000);
}

static void test_capabilities(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "v100-sxm2-32gb");
    cost_calib c;
    llm_err e;
    assert_int_equal(cfg_load_cost_calib(".", &cat, g, &c, &e), 0);
    assert_true(c.derived_from[0] != '\0'); /* borrowed, and it says so */
    cost_op op = {.kind = OP_GEMM, .dt = DT_BF16, .m = 4096, .n = 4096,
                  .k = 4096, .batch = 1};
    cost_result r;
    assert_int_equal(cost_predict(&c, g, &op, 0, &r, &e), -1);
    assert_non_null(strstr(e.msg, "no BF16"));
    assert_int_equal(cost_predict(&c, g, &op, COST_FALLBACK_DTYPE, &r, &e), 0);
    assert_int_equal(r.dt, DT_FP16);
    assert_non_null(strstr(r.fallback, "bf16 -> fp16"));
    cost_op fa = {.kind = OP_ATTN_PREFILL, .dt = DT_FP16, .batch = 1,
                  .heads = 32, .kv_heads = 32, .head_dim = 128, .q_len = 2048,
                  .kv_len = 2048, .flash = true};
    assert_int_equal(cost_predict(&c, g, &fa, 0, &r, &e), -1);
    assert_non_null(strstr(e.msg, "FlashAttention"));
    assert_int_equal(cost_predict(&c, g, &fa, COST_FALLBACK_UNFUSED, &r, &e), 0);
    assert_non_null(strstr(r.fallback, "unfused"));
    cost_calib_free(&c);
    /* FP8 before Ada/Hopper */
    g = gpu_find(&cat, "a100-sxm-80gb");
    assert_int_equal(cfg_load_cost_calib(".", &cat, g, &c, &e), 0);
    op.dt = DT_FP8;
    assert_int_equal(cost_predict(&c, g, &op, 0, &r, &e), -1);
    assert_non_null(strstr(e.msg, "FP8"));
    cost_calib_free(&c);
}

static void expect_bad(const char *gemm_extra, const char *want)
{
    write_dir("/tmp/llmsim-cost-bad", gemm_extra);
    cost_calib c;
    llm_err e;
    memset(&c, 0, sizeof c);
    const gpu_spec *g = gpu_find(&cat, "h100-sxm");
    assert_int_equal(cfg_load_cost_dir("/tmp/llmsim-cost-bad", g, true, &c, &e),
                     -1);
    if (!strstr(e.msg, want)) {
        print_error("\"%s\" lacks \"%s\"\n", e.msg, want);
        fail();
    }
}

static void test_bad_tables(void **state)
{
    (void)state;
    expect_bad("bf16\t16\t16\t16\t-0.5\tt\n", "efficiency: -0.5 is out of range");
    expect_bad("bf16\t16\t16\t16\t1.5\tt\n", "efficiency: 1.5 is out of range");
    expect_bad("bf16\t16\t16\n", "fields (expected 6");
    expect_bad("bf17\t16\t16\t16\t0.5\tt\n", "unknown dtype \"bf17\"");
    expect_bad("bf16\t16\t16\t8\t0.5\tt\n", "the bf16 grid misses");
    /* a missing column */
    FILE *f = fopen("/tmp/llmsim-cost-bad/gemm.tsv", "w");
    fprintf(f, "dtype\tm\tn\tefficiency\tsource\nbf16\t1\t1\t0.5\tt\n");
    fclose(f);
    cost_calib c;
    llm_err e;
    assert_int_equal(cfg_load_cost_dir("/tmp/llmsim-cost-bad",
                                       gpu_find(&cat, "h100-sxm"), true, &c, &e),
                     -1);
    assert_non_null(strstr(e.msg, "k: missing column"));
}

/* Activations are the op's dtype wide (16-bit below that): a norm reads
 * and writes one element, 2 x 2 B in bf16 and fp8, 2 x 4 B in fp32; an
 * elementwise add reads two and writes one; attention reads Q, K, V and
 * writes O.  The plan's activation dtype follows its precision, with FP8
 * training keeping bf16 activations. */
static void test_activation_bytes(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "h100-sxm");
    cost_calib c;
    llm_err e;
    assert_int_equal(cfg_load_cost_calib(".", &cat, g, &c, &e), 0);
    const dtype dts[3] = {DT_BF16, DT_FP8, DT_FP32};
    const double size[3] = {2, 2, 4};
    for (int i = 0; i < 3; i++) {
        cost_result r;
        cost_op norm = {.kind = OP_NORM, .dt = dts[i], .elems = 1e6};
        assert_int_equal(cost_predict(&c, g, &norm, 0, &r, &e), 0);
        assert_true(r.bytes == 2 * size[i] * 1e6);
        cost_op add = {.kind = OP_ELEMENTWISE, .dt = dts[i], .elems = 1e6,
                       .reads = 2, .writes = 1};
        assert_int_equal(cost_predict(&c, g, &add, 0, &r, &e), 0);
        assert_true(r.bytes == 3 * size[i] * 1e6);
        /* b 1, 8 heads (and KV heads) of 128, 1024 tokens: Q and O, K
         * and V, 1024 x 8 x 256 elements each pair */
        cost_op at = {.kind = OP_ATTN_PREFILL, .dt = dts[i], .batch = 1,
                      .heads = 8, .kv_heads = 8, .head_dim = 128,
                      .q_len = 1024, .kv_len = 1024, .flash = true};
        assert_int_equal(cost_predict(&c, g, &at, 0, &r, &e), 0);
        assert_true(r.bytes == 2 * size[i] * 1024 * 8 * 256);
    }
    plan_train p;
    p = exp_plan_train_defaults();
    p.precision = DT_FP8;
    assert_int_equal(plan_act_dtype(&p), DT_BF16);
    p.precision = DT_FP32;
    assert_int_equal(plan_act_dtype(&p), DT_FP32);
    p.precision = DT_FP16;
    assert_int_equal(plan_act_dtype(&p), DT_FP16);
    cost_calib_free(&c);
}

/* Sliding-window attention in a fused kernel: a prefill computes the
 * window's pairs (their FLOPs at the same shape's efficiency, so the time
 * in proportion), a decode reads at most the window's keys; a window wider
 * than the sequence changes nothing, and the unfused path computes the
 * full square either way. */
static void test_attention_window(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "h100-sxm");
    cost_calib c;
    load_calib(g, &c);
    llm_err e;
    const double S = 32768, W = 4096;
    cost_op a = {.kind = OP_ATTN_PREFILL, .dt = DT_BF16, .batch = 1,
                 .heads = 32, .kv_heads = 8, .head_dim = 128,
                 .v_head_dim = 128, .q_len = S, .kv_len = S, .causal = true,
                 .flash = true};
    cost_result full, win, wide;
    assert_int_equal(cost_predict(&c, g, &a, 0, &full, &e), 0);
    a.window = W;
    assert_int_equal(cost_predict(&c, g, &a, 0, &win, &e), 0);
    double pairs = W * (W + 1) / 2 + (S - W) * W;
    assert_close(win.flops / full.flops, pairs / (S * S / 2), 1e-9);
    assert_close(win.time_s / full.time_s, pairs / (S * S / 2), 1e-9);
    a.window = 2 * S;
    assert_int_equal(cost_predict(&c, g, &a, 0, &wide, &e), 0);
    assert_close(wide.time_s, full.time_s, 1e-3);
    a.window = W, a.flash = false;
    cost_result unf, unf_w;
    assert_int_equal(cost_predict(&c, g, &a, 0, &unf_w, &e), 0);
    a.window = 0;
    assert_int_equal(cost_predict(&c, g, &a, 0, &unf, &e), 0);
    assert_true(unf.time_s == unf_w.time_s);
    cost_op d = {.kind = OP_ATTN_DECODE, .dt = DT_BF16, .batch = 64,
                 .heads = 32, .kv_heads = 8, .head_dim = 128,
                 .v_head_dim = 128, .q_len = 1, .kv_len = S, .flash = true};
    cost_result dl, dw, ds;
    assert_int_equal(cost_predict(&c, g, &d, 0, &dl, &e), 0);
    d.window = W;
    assert_int_equal(cost_predict(&c, g, &d, 0, &dw, &e), 0);
    d.window = 0, d.kv_len = W;
    assert_int_equal(cost_predict(&c, g, &d, 0, &ds, &e), 0);
    assert_true(dw.time_s < dl.time_s);
    assert_close(dw.time_s, ds.time_s, 1e-12);
    assert_close(dw.bytes, ds.bytes, 1e-12);
    assert_close(dw.flops, ds.flops, 1e-12);
    cost_calib_free(&c);
}

/* A fused prefill of `batch` sequences of `tokens` tokens, every head
 * with its own K and V, through attention kernel `kernel` (1 + its index). */
static cost_op fused_prefill(int kernel, dtype dt, double batch, int heads,
                             int head_dim, double tokens, bool causal)
{
    return (cost_op){.kind = OP_ATTN_PREFILL, .dt = dt, .batch = batch,
                     .heads = heads, .kv_heads = heads, .head_dim = head_dim,
                     .q_len = tokens, .kv_len = tokens, .causal = causal,
                     .flash = true, .attn_kernel = kernel};
}

/* A kernel that skips the blocks a causal mask empties (fa2) prices a
 * causal prefill at half the square's FLOPs; one that masks after
 * computing (the pre-MLIR Triton kernel, causal_skip no) at the whole
 * square's, its time as the unmasked call's when its causal rate is its
 * plain one, and never below the skipping kernel's at equal rates.  Both
 * forward and backward; no kernel exceeds the GPU's peak. */
static void test_attention_causal_skip(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "a100-sxm-80gb");
    cost_calib c;
    load_calib(g, &c);
    llm_err e;
    int tri = cost_attn_kernel_find(&c, "fa-triton");
    int fa2 = cost_attn_kernel_find(&c, "fa2");
    assert_true(tri > 0 && fa2 > 0);
    assert_false(c.attn_k[tri - 1].causal_skip);
    assert_true(c.attn_k[fa2 - 1].causal_skip);
    for (int bwd = 0; bwd < 2; bwd++) {
        cost_op a = fused_prefill(tri, DT_BF16, 2, 32, 128, 8192, true);
        a.backward = bwd;
        cost_result tc, tn, fc;
        assert_int_equal(cost_predict(&c, g, &a, 0, &tc, &e), 0);
        a.causal = false;
        assert_int_equal(cost_predict(&c, g, &a, 0, &tn, &e), 0);
        a.causal = true, a.attn_kernel = fa2;
        assert_int_equal(cost_predict(&c, g, &a, 0, &fc, &e), 0);
        assert_close(tc.flops, tn.flops, 1e-12);
        assert_close(fc.flops, tn.flops / 2, 1e-12);
        assert_close(tc.time_s, tn.time_s, 1e-9);
        assert_true(tc.time_s > 1.5 * fc.time_s);
        assert_true(tc.flops / tc.time_s <= g->peak_flops[DT_BF16]);
    }
    cost_calib_free(&c);
}

/* One kernel's sweep of test_attention_kernel_bound: 64 to 32k tokens. */
static void kernel_sweep_bound(const cost_calib *c, const gpu_spec *g, int k,
                               bool causal, double batch)
{
    const struct cost_attn_kernel *ak = &c->attn_k[k - 1];
    bool skip = causal && ak->causal_skip;
    double f = skip ? ak->fwd_causal : ak->fwd;
    double tok = skip ? ak->tile_tokens_causal : ak->tile_tokens;
    double limit = f * g->peak_flops[DT_BF16] /
                   cost_attn_tile_share(COST_ATTN_REF_TOKENS, tok);
    double prev = 0, prev_rate = 0;
    llm_err e;
    for (double s = 64; s <= 32768; s *= 2) {
        cost_op a = fused_prefill(k, DT_BF16, batch, 16, 128, s, causal);
        cost_result r;
        assert_int_equal(cost_predict(c, g, &a, 0, &r, &e), 0);
        double rate = r.flops / r.kernel_s;
        assert_true(rate <= limit * (1 + 1e-9));
        assert_true(rate >= prev_rate * (1 - 1e-9));
        assert_true(r.kernel_s >= prev);
        prev = r.kernel_s;
        prev_rate = rate;
    }
}

/* A fused attention runs at most at its kernel's long-sequence rate (the
 * table's fraction at the reference length over the tile share there),
 * however few bytes a short sequence moves (a prefill of 512 tokens leans
 * to memory on the roofline; before, it then ran at the HBM streaming
 * rate: FA3 at 512 tokens came out 847 TFLOP/s, 86% of H100's peak, where
 * the kernel's figure is 65%); the rate rises with the length as the
 * tile share does, and more tokens never take less time: every kernel of
 * H100 and A100, causal or not, 64 to 32k tokens, 1 to 64 sequences. */
static void test_attention_kernel_bound(void **state)
{
    (void)state;
    const char *gpus[] = {"a100-sxm-80gb", "h100-sxm"};
    for (int i = 0; i < 2; i++) {
        const gpu_spec *g = gpu_find(&cat, gpus[i]);
        cost_calib c;
        load_calib(g, &c);
        for (int k = 1; k <= c.nattn_k; k++)
            for (int causal = 0; causal < 2; causal++)
                for (double b = 1; b <= 64; b *= 4)
                    kernel_sweep_bound(&c, g, k, causal, b);
        cost_calib_free(&c);
    }
}

/* The head dims in closed form: a score costs its matmuls (which scale
 * with the head dims and, in FP8, take half the time) plus one exponential
 * at the SFUs' 16 per SM per cycle, the rest of the table's head-dim-128
 * time: FA3 on H100 at 8k tokens (tile share 1) with head dim 64 in BF16,
 * and 128 in FP8; 128 in BF16 is the table's own fraction. */
static void test_attention_head_dims(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "h100-sxm");
    cost_calib c;
    load_calib(g, &c);
    llm_err e;
    int k = cost_attn_kernel_find(&c, "fa3");
    assert_true(k > 0);
    double f = c.attn_k[k - 1].fwd, p16 = g->peak_flops[DT_BF16];
    double ex = 1 / (16 * g->sm_count * g->boost_clock_hz);
    double mm = 512 / (f * p16) - ex; /* one score's matmuls at hd 128 */
    const struct { double hd; dtype dt; double rate; } want[] = {
        {128, DT_BF16, f * p16},
        {64, DT_BF16, 256 / (mm / 2 + ex)},
        {128, DT_FP8, 512 / (mm * p16 / g->peak_flops[DT_FP8] + ex)},
    };
    for (int i = 0; i < 3; i++) {
        cost_op a = fused_prefill(k, want[i].dt, 2, 16, (int)want[i].hd,
                                  8192, false);
        cost_result r;
        assert_int_equal(cost_predict(&c, g, &a, 0, &r, &e), 0);
        assert_close(r.flops / r.kernel_s, want[i].rate, 1e-9);
    }
    cost_calib_free(&c);
}

/* cuBLAS computes whole tiles of rows (calib/kernels.tsv gemm_tile_rows
 * 128, gemm_small_rows 64): the padded rows in closed form; on the shipped
 * tables of every catalog GPU a GEMM one row past a tile boundary takes
 * exactly what the full next tile takes, and no GEMM is faster with more
 * rows, in steps of 8 rows (finer than the grid's). */
static void test_gemm_tile_steps(void **state)
{
    (void)state;
    assert_close(cost_gemm_rows(1, 128, 64), 64, 0);
    assert_close(cost_gemm_rows(64, 128, 64), 64, 0);
    assert_close(cost_gemm_rows(65, 128, 64), 128, 0);
    assert_close(cost_gemm_rows(129, 128, 64), 256, 0);
    assert_close(cost_gemm_rows(4096, 128, 64), 4096, 0);
    assert_close(cost_gemm_rows(37, 0, 0), 37, 0);
    int checked = 0;
    for (int gi = 0; gi < cat.n; gi++) {
        const gpu_spec *g = &cat.gpus[gi];
        cost_calib c;
        load_calib(g, &c);
        assert_close(c.gemm_tile_rows, 128, 0);
        const double nk[] = {1024, 4096, 14336};
        for (int a = 0; a < 3; a++)
            for (int z = 0; z < 3; z++) {
                double n = nk[a], k = nk[z];
                double past = gemm_s(&c, g, DT_BF16, 129, n, k, 1);
                double full = gemm_s(&c, g, DT_BF16, 256, n, k, 1);
                if (fabs(past / full - 1) > 1e-12)
                    fail_msg("%s: 129x%.0fx%.0f takes %.6g s, 256 rows %.6g s",
                             g->name, n, k, past, full);
                double prev = 0;
                for (double m = 8; m <= 2048; m += 8) {
                    double t = gemm_s(&c, g, DT_BF16, m, n, k, 1);
                    if (t < prev * (1 - 1e-12))
                        fail_msg("%s: %.0fx%.0fx%.0f takes %.6g s, %.0f rows "
                                 "%.6g s", g->name, m, n, k, t, m - 8, prev);
                    prev = t;
                    checked++;
                }
            }
        cost_calib_free(&c);
    }
    assert_true(checked > 10000);
}

/* A derived GPU's sweep (fit_gemm_sweep): points made by the base shape
 * with a known compute scale and size factor give both back; a sweep that
 * asks for a smaller size than the base's stops at the base's; too few
 * points are refused. */
static void test_gemm_sweep_fit(void **state)
{
    (void)state;
    const gpu_spec *g = gpu_find(&cat, "gb200");
    assert_non_null(g);
    const gemm_fit base = {.emax = 0.8, .n0 = 260, .k0 = 44,
                           .em = 0.98, .t0 = 5e-6, .p = 8};
    const double peak = g->peak_flops[DT_FP4];
    const double shapes[][3] = {{1024, 1024, 1024}, {2048, 2048, 2048},
                                {4096, 4096, 4096}, {8192, 8192, 8192},
                                {16384, 16384, 16384}, {400, 10240, 8192},
                                {1024, 2145, 1024}, {802816, 192, 768}};
    const int n = (int)(sizeof shapes / sizeof shapes[0]);
    const double want_scale[] = {0.9, 1.1}, want_size[] = {1.7, 0.5};
    llm_err e;
    for (int c = 0; c < 2; c++) {
        gemm_fit truth = gemm_fit_sized(&base, want_size[c]);
        fit_point pt[8];
        for (int i = 0; i < n; i++) {
            double m = shapes[i][0], nn = shapes[i][1], k = shapes[i][2];
            double fl = 2 * m * nn * k, by = (m * k + k * nn) * 0.5 + m * nn * 2;
            pt[i] = (fit_point){.m = m, .n = nn, .k = k, .flops = fl,
                                .bytes = by,
                                .t_s = gemm_fit_time(&truth, g,
                                                     peak * want_scale[c], nn,
                                                     k, fl, by)};
        }
        double scale, size;
        assert_int_equal(fit_gemm_sweep(pt, n, g, peak, &base, &scale, &size,
                                        &e), 0);
        if (c == 0) {
            assert_close(scale, want_scale[c], 1e-4);
            assert_close(size, want_size[c], 1e-4);
        } else {
            assert_true(size >= 1 && size < 1.01);
        }
    }
    fit_point two[2] = {{0}};
    double sc, sz;
    assert_int_equal(fit_gemm_sweep(two, 2, g, peak, &base, &sc, &sz, &e), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interpolation),
        cmocka_unit_test(test_roofline_never_beaten),
        cmocka_unit_test(test_decode_memory_bound),
        cmocka_unit_test(test_batched_gemm),
        cmocka_unit_test(test_batched_gemm_monotone),
        cmocka_unit_test(test_membound_invariants),
        cmocka_unit_test(test_capabilities),
        cmocka_unit_test(test_activation_bytes),
        cmocka_unit_test(test_bad_tables),
        cmocka_unit_test(test_explain_on_demand),
        cmocka_unit_test(test_gemm_sweep_fit),
        cmocka_unit_test(test_gemm_tile_steps),
        cmocka_unit_test(test_attention_window),
        cmocka_unit_test(test_attention_causal_skip),
        cmocka_unit_test(test_attention_kernel_bound),
        cmocka_unit_test(test_attention_head_dims),
    };
    return cmocka_run_group_tests_name("cost", tests, catalog_setup, catalog_teardown);
}
