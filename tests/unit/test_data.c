/* Figures moved from C into data files: each loader reads the shipped
 * file (a value checked against the row it comes from) and names file,
 * line and key for a bad row. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

/* A scratch data directory: <dir>/topologies and <dir>/calib. */
static char dir[64];

static void scratch(void)
{
    snprintf(dir, sizeof dir, "/tmp/llmsim-data-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char p[128];
    snprintf(p, sizeof p, "%s/topologies", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/calib", dir);
    assert_int_equal(mkdir(p, 0700), 0);
}

/* Writes text to <dir>/<rel>. */
static void put(const char *rel, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void scratch_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void expect(const char *msg, const char *a, const char *b)
{
    if (!msg) {
        print_error("expected an error containing \"%s\"\n", a);
        fail();
    }
    if (!strstr(msg, a) || (b && !strstr(msg, b))) {
        print_error("message \"%s\" lacks \"%s\" / \"%s\"\n", msg, a,
                    b ? b : "");
        fail();
    }
}

/* ---- topologies/pcie.tsv ---------------------------------------------- */

static void test_pcie_shipped(void **state)
{
    (void)state;
    /* H100 SXM: gen 5 x16 = 16 x 32 GT/s / 8 x 128/130 = 63.0 GB/s per
     * direction; A100 SXM: gen 4 x16 = 31.5 GB/s */
    const gpu_spec *h = gpu_find(&cat, "h100-sxm");
    assert_non_null(h);
    assert_close(gpu_pcie_Bps(h), 16 * 32e9 / 8 * 128.0 / 130.0, 1e-12);
    assert_close(gpu_pcie_Bps(gpu_find(&cat, "a100-sxm-80gb")),
                 16 * 16e9 / 8 * 128.0 / 130.0, 1e-12);
}

static const char *pcie_error(const char *table)
{
    static llm_err e;
    scratch();
    put("topologies/pcie.tsv", table);
    gpu_catalog c;
    int rc = cfg_load_gpus("topologies/gpus.cfg", dir, &c, &e);
    if (rc == 0)
        gpu_catalog_free(&c);
    scratch_remove();
    return rc == 0 ? NULL : e.msg;
}

#define PCIE_HEAD "gen\tlane_GTps\tpayload_bits\tline_bits\tsource\n"

static void test_pcie_errors(void **state)
{
    (void)state;
    expect(pcie_error("# comment\n" PCIE_HEAD "4\t16\t130\t128\tx\n"),
           "pcie.tsv:3: line_bits: 128 is out of range", "expected 130..");
    expect(pcie_error(PCIE_HEAD "4\t16\t128\t130\tx\n4\t16\t128\t130\ty\n"),
           "pcie.tsv:3: gen: a second row for generation 4", NULL);
    expect(pcie_error(PCIE_HEAD "4.5\t16\t128\t130\tx\n"),
           "pcie.tsv:2: gen: 4.5 is not a whole number", NULL);
    expect(pcie_error(PCIE_HEAD "4\t16\t128\t130\t\n"),
           "pcie.tsv:2: source: empty", NULL);
    /* the catalog holds gen 3, 4 and 5 GPUs: the first without a row is
     * named at its pcie_gen line */
    expect(pcie_error(PCIE_HEAD "4\t16\t128\t130\tx\n"),
           "gpus.cfg:", "pcie_gen: no row for generation");
}

/* ---- calib/nccl-arch.tsv and calib/nics.tsv --------------------------- */

/* Node file `node` (topologies/) with its own GPU and nodes, optionally
 * with the NIC at nic_gbps; its keys from datadir. */
static int keys_of(const char *datadir, const char *node, double nic_gbps,
                   cfg_coll_keys *k, llm_err *e)
{
    topo_nodespec s;
    topo_fabricspec f;
    int n;
    char p[128];
    snprintf(p, sizeof p, "topologies/%s.cfg", node);
    assert_int_equal(cfg_load_topology(p, ".", &s, &n, &f, e), 0);
    if (nic_gbps > 0)
        s.nic_bw_Bps = nic_gbps * 1e9 / 8;
    const gpu_spec *g = NULL;
    for (int i = 0; i < s.ndev; i++)
        if (s.dev[i].kind == DEV_GPU)
            g = gpu_find(&cat, s.dev[i].model);
    assert_non_null(g);
    char why[256];
    topo *t = topo_build(&s, g, 1, &f, why, sizeof why);
    assert_non_null(t);
    int rc = cfg_coll_keys_of(datadir, t, k, e);
    topo_destroy(t);
    return rc;
}

static void test_arch_shipped(void **state)
{
    (void)state;
    cfg_coll_keys k;
    llm_err e;
    /* H100 (sm 90): NCCL's hopper rows; PCIe gen 5; 400 Gb/s = 50 GB/s
     * NIC >= the ndr row's 45 GB/s */
    assert_int_equal(keys_of(".", "dgx-h100", 0, &k, &e), 0);
    assert_string_equal(k.nccl, "hopper");
    assert_string_equal(k.link[LINK_NVLINK], "hopper");
    assert_string_equal(k.link[LINK_PCIE], "gen5");
    assert_string_equal(k.link[LINK_NETWORK], "ndr");
    /* A100 (sm 80), 200 Gb/s = 25 GB/s: hdr */
    assert_int_equal(keys_of(".", "dgx-a100", 0, &k, &e), 0);
    assert_string_equal(k.nccl, "ampere");
    assert_string_equal(k.link[LINK_NVLINK], "ampere");
    assert_string_equal(k.link[LINK_NETWORK], "hdr");
    /* RTX A6000 (sm 86): NCCL's ampere tuning rows, but the sm86 NVLink
     * row (the narrower row above the 80..89 one) */
    assert_int_equal(keys_of(".", "pcie-8x-a6000-nvlink-pairs", 0, &k, &e),
                     0);
    assert_string_equal(k.nccl, "ampere");
    assert_string_equal(k.link[LINK_NVLINK], "ampere-sm86");
    /* the cut is the ndr row's min_GBps: 360 Gb/s = 45 GB/s is ndr,
     * 359 Gb/s is hdr */
    assert_int_equal(keys_of(".", "dgx-h100", 360, &k, &e), 0);
    assert_string_equal(k.link[LINK_NETWORK], "ndr");
    assert_int_equal(keys_of(".", "dgx-h100", 359, &k, &e), 0);
    assert_string_equal(k.link[LINK_NETWORK], "hdr");
    /* the Hopper variants' nodes: NCCL's hopper rows; 400 Gb/s RoCE and
     * IB are ndr, JUPITER's NDR200 (25 GB/s) falls to hdr */
    assert_int_equal(keys_of(".", "hgx-h800", 0, &k, &e), 0);
    assert_string_equal(k.nccl, "hopper");
    assert_string_equal(k.link[LINK_NVLINK], "hopper");
    assert_string_equal(k.link[LINK_NETWORK], "ndr");
    assert_int_equal(keys_of(".", "grand-teton-h100", 0, &k, &e), 0);
    assert_string_equal(k.nccl, "hopper");
    assert_string_equal(k.link[LINK_NETWORK], "ndr");
    assert_int_equal(keys_of(".", "quad-gh200", 0, &k, &e), 0);
    assert_string_equal(k.nccl, "hopper");
    assert_string_equal(k.link[LINK_PCIE], "gen5");
    assert_string_equal(k.link[LINK_NETWORK], "hdr");
}

#define ARCH_HEAD "table\tsm_min\tsm_max\tarch\tsource\n"
#define ARCH_OK                                                             \
    "tuning\t0\t9999\tx\ts\nnvlink\t0\t9999\ty\ts\n"
#define NICS_HEAD "kind\tmin_GBps\tline_GBps\tsource\n"
#define NICS_OK "hdr\t0\t25\ts\n"

static const char *keys_error(const char *arch, const char *nics)
{
    static llm_err e;
    scratch();
    put("calib/nccl-arch.tsv", arch);
    put("calib/nics.tsv", nics);
    cfg_coll_keys k;
    int rc = keys_of(dir, "dgx-h100", 0, &k, &e);
    scratch_remove();
    return rc == 0 ? NULL : e.msg;
}

static void test_arch_errors(void **state)
{
    (void)state;
    assert_null(keys_error(ARCH_HEAD ARCH_OK, NICS_HEAD NICS_OK));
    expect(keys_error(ARCH_HEAD ARCH_OK "tunning\t0\t1\tz\ts\n",
                      NICS_HEAD NICS_OK),
           "nccl-arch.tsv:4: table: unknown table \"tunning\"", NULL);
    expect(keys_error(ARCH_HEAD "tuning\t90\t80\tx\ts\n" ARCH_OK,
                      NICS_HEAD NICS_OK),
           "nccl-arch.tsv:2: sm_max: 80 is out of range", NULL);
    /* sm 90 in no nvlink row */
    expect(keys_error(ARCH_HEAD "tuning\t0\t9999\tx\ts\n"
                      "nvlink\t100\t9999\ty\ts\n", NICS_HEAD NICS_OK),
           "nccl-arch.tsv: nvlink: no row holds sm 90", NULL);
    expect(keys_error(ARCH_HEAD ARCH_OK, NICS_HEAD NICS_OK "ndr\t0\t50\ts\n"),
           "nics.tsv:3: min_GBps: 0 again", NULL);
    expect(keys_error(ARCH_HEAD ARCH_OK, NICS_HEAD "ndr\t60\t50\ts\n"),
           "nics.tsv: min_GBps: no row for a NIC of 50 GB/s", NULL);
    expect(keys_error(ARCH_HEAD ARCH_OK, NICS_HEAD "hdr\t0\t25\t\n"),
           "nics.tsv:2: source: empty", NULL);
}

/* ---- calib/overhead.tsv ----------------------------------------------- */

static void test_overhead_shipped(void **state)
{
    (void)state;
    /* the '*' rows: 0.5 GiB context, 4 MiB x 2 x 16 channels of NCCL
     * buffers per communicator, 5% allocator reserve */
    mem_overhead o;
    llm_err e;
    assert_int_equal(cfg_load_overhead(".", gpu_find(&cat, "h100-sxm"), &o,
                                       &e), 0);
    assert_true(o.cuda_context_bytes == 0.5 * GiB);
    assert_true(o.nccl_bytes_per_group == 4 * MiB * 2 * 16);
    assert_true(o.reserve_frac == 0.05);
}

#define OV_HEAD "gpu\tkey\tvalue\tunit\tsource\n"
#define OV_STAR                                                             \
    "*\tcuda_context\t0.5\tGiB\ts\n"                                      \
    "*\tnccl_per_communicator\t128\tMiB\ts\n"                             \
    "*\tallocator_reserve\t0.05\tfraction\ts\n"

/* Loads `table` as calib/overhead.tsv for GPU gpu (NULL: '*'). */
static const char *overhead_error(const char *table, const char *gpu,
                                  mem_overhead *o)
{
    static llm_err e;
    scratch();
    put("calib/overhead.tsv", table);
    int rc = cfg_load_overhead(dir, gpu ? gpu_find(&cat, gpu) : NULL, o, &e);
    scratch_remove();
    return rc == 0 ? NULL : e.msg;
}

static void test_overhead_per_gpu(void **state)
{
    (void)state;
    mem_overhead o;
    const char *t = OV_HEAD OV_STAR "h100-sxm\tcuda_context\t0.75\tGiB\tm\n";
    /* H100 takes its own context row and the '*' rows of the others */
    assert_null(overhead_error(t, "h100-sxm", &o));
    assert_true(o.cuda_context_bytes == 0.75 * GiB);
    assert_true(o.nccl_bytes_per_group == 128 * MiB);
    /* A100 and the '*' request take the defaults */
    assert_null(overhead_error(t, "a100-sxm-80gb", &o));
    assert_true(o.cuda_context_bytes == 0.5 * GiB);
    assert_null(overhead_error(t, NULL, &o));
    assert_true(o.cuda_context_bytes == 0.5 * GiB);
}

static void test_overhead_errors(void **state)
{
    (void)state;
    mem_overhead o;
    expect(overhead_error(OV_HEAD OV_STAR "*\tcuda_contxt\t1\tGiB\ts\n",
                          "h100-sxm", &o),
           "overhead.tsv:5: cuda_contxt: unknown key",
           "did you mean \"cuda_context\"");
    expect(overhead_error(OV_HEAD "*\tallocator_reserve\t5\t%\ts\n",
                          NULL, &o),
           "overhead.tsv:2: allocator_reserve: 5 is out of range",
           "expected 0..0.9 fraction");
    expect(overhead_error(OV_HEAD OV_STAR "*\tcuda_context\t1\tGiB\ts\n",
                          NULL, &o),
           "overhead.tsv:5: cuda_context: a second row for *",
           "the first is line 2");
    expect(overhead_error(OV_HEAD "h100-sxm\tcuda_context\t1\tGiB\ts\n"
                          "*\tnccl_per_communicator\t128\tMiB\ts\n"
                          "*\tallocator_reserve\t0.05\tfraction\ts\n",
                          "a100-sxm-80gb", &o),
           "overhead.tsv: cuda_context: no row for a100-sxm-80gb and no '*'",
           NULL);
    expect(overhead_error(OV_HEAD "*\tcuda_context\tlots\tGiB\ts\n", NULL,
                          &o),
           "overhead.tsv:2: cuda_context: value \"lots\" is not a number",
           NULL);
    expect(overhead_error(OV_HEAD "*\tcuda_context\t0.5\tGiB\t\n", NULL,
                          &o),
           "overhead.tsv:2: cuda_context: empty source", NULL);
    expect(overhead_error("gpu\tkey\tvalue\n*\tcuda_context\t0.5\n", NULL,
                          &o),
           "source: missing column", NULL);
}

/* ---- calib/economics.tsv ---------------------------------------------- */

static void test_econ_shipped(void **state)
{
    (void)state;
    /* 3-year amortization, $0.10/kWh (EIA industrial), PUE 1.3, hosting
     * at CBRE's H2 2024 colocation rate */
    econ_params p;
    llm_err e;
    assert_int_equal(cfg_load_econ(".", &p, &e), 0);
    assert_true(p.amortization_years == 3);
    assert_true(p.usd_per_kwh == 0.10);
    assert_true(p.pue == 1.3);
    assert_true(p.hosting_usd_per_kw_month == 184);
    /* a node type's own rows, and the '*' rows for one without: DGX H100
     * measured 8.4 kW while training, 2.8 kW beyond its 8 x 700 W GPUs;
     * a GPU with no rental price has 0 */
    econ_sources s;
    assert_int_equal(cfg_load_node_econ(".", "dgx-h100", "h100-sxm", &p, &s, &e),
                     0);
    assert_true(p.host_w_per_gpu == 350);
    assert_true(p.server_usd_per_gpu == 6250);
    assert_true(p.rent_usd_per_gpu_hour == 2.99);
    assert_non_null(strstr(s.host_w, "arXiv:2412.08602"));
    assert_int_equal(cfg_load_node_econ(".", "pcie-8x-l40s", "l40s", &p, &s, &e),
                     0);
    assert_true(p.host_w_per_gpu == 350);
    assert_true(p.rent_usd_per_gpu_hour == 0);
    assert_non_null(strstr(s.host_w, "as dgx-h100"));
}

/* A compare file's economics group overrides the data's defaults, key by
 * key (cfg_compare_econ reads the data of $LLMSIM_DATA, as make unit sets
 * it). */
static void test_econ_compare_override(void **state)
{
    (void)state;
    char path[128];
    write_temp(path, sizeof path, ".cfg",
               "training = \"configs/train-llama2-7b-8xh100.cfg\";\n"
               "clusters = ( { cluster = \"dgx-h100\"; },\n"
               "             { cluster = \"dgx-a100\"; } );\n"
               "economics = { pue = 1.5; };\n");
    static exp_compare f; /* large */
    llm_err e;
    int rc = cfg_compare_load(path, &f, &e) || cfg_compare_econ(&f, &e);
    unlink(path);
    if (rc)
        print_error("%s\n", e.msg);
    assert_int_equal(rc, 0);
    assert_true(f.econ.pue == 1.5);
    assert_true(f.econ.usd_per_kwh == 0.10);
    assert_true(f.econ.amortization_years == 3);
}

#define ECON_OK                                                             \
    "amortization_years\t3\ty\ts\nusd_per_kwh\t0.1\tu\ts\n"               \
    "pue\t1.3\tr\ts\nhosting_usd_per_kw_month\t150\tu\ts\n"

static const char *econ_error(const char *table)
{
    static llm_err e;
    scratch();
    put("calib/economics.tsv", table);
    econ_params p;
    int rc = cfg_load_econ(dir, &p, &e);
    scratch_remove();
    return rc == 0 ? NULL : e.msg;
}

static void test_econ_errors(void **state)
{
    (void)state;
    assert_null(econ_error("key\tvalue\tunit\tsource\n" ECON_OK));
    expect(econ_error("key\tvalue\tunit\tsource\n" ECON_OK
                      "pue\t1.2\tr\ts\n"),
           "economics.tsv:6: pue: a second row (the first is line 4",
           NULL);
    expect(econ_error("key\tvalue\tunit\tsource\n" ECON_OK
                      "usd_per_kwhh\t0.1\tu\ts\n"),
           "economics.tsv:6: usd_per_kwhh: unknown key",
           "did you mean \"usd_per_kwh\"");
    expect(econ_error("key\tvalue\tunit\tsource\npue\t0.9\tr\ts\n"),
           "economics.tsv:2: pue: 0.9 is out of range", "expected 1..10");
    expect(econ_error("key\tvalue\tunit\tsource\npue\t1.3\tr\ts\n"),
           "economics.tsv: amortization_years: missing", NULL);
}

/* ---- calib/fit.tsv ---------------------------------------------------- */

static void test_fit_shipped(void **state)
{
    (void)state;
    cfg_fit_gpu *g;
    int n;
    llm_err e;
    assert_int_equal(cfg_load_fit_gpus(".", &g, &n, &e), 0);
    assert_int_equal(n, 16);
    /* traced first (a100 then h100: the order calibrate fits them in) */
    assert_string_equal(g[0].gpu, "a100-sxm-80gb");
    assert_string_equal(g[0].traces, "a100");
    assert_string_equal(g[0].derived_from, "");
    assert_true(g[0].flash_fwd == 0.73); /* FlashAttention-2 on A100 */
    assert_non_null(strstr(g[0].flash_src, "arXiv 2307.08691"));
    /* H200 from H100, FlashAttention-3's 75% */
    assert_string_equal(g[2].gpu, "h200");
    assert_string_equal(g[2].traces, "");
    assert_string_equal(g[2].derived_from, "h100-sxm");
    assert_string_equal(g[2].gemm_measured, ""); /* derived, not measured */
    assert_true(g[2].flash_fwd == 0.75);
    /* the Hopper variants, all from H100 with FlashAttention-3's 75% */
    const char *hopper[] = {"h100-sxm-96gb", "h800-sxm", "gh200-96gb",
                            "gh200-144gb"};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(g[5 + i].gpu, hopper[i]);
        assert_string_equal(g[5 + i].traces, "");
        assert_string_equal(g[5 + i].derived_from, "h100-sxm");
        assert_true(g[5 + i].flash_fwd == 0.75);
        assert_non_null(strstr(g[5 + i].flash_src, "arXiv 2407.08608"));
    }
    /* the GPUs with a published GEMM of their own: Ada from A100's fit
     * (FlashAttention-2's 73%, assumed), the PCIe Hoppers from H100's */
    const char *own[] = {"l40s", "l4", "rtx-6000-ada", "h100-pcie",
                         "h100-nvl"};
    for (int i = 0; i < 5; i++) {
        assert_string_equal(g[9 + i].gpu, own[i]);
        assert_string_equal(g[9 + i].derived_from,
                            i < 3 ? "a100-sxm-80gb" : "h100-sxm");
        assert_true(g[9 + i].flash_fwd == (i < 3 ? 0.73 : 0.75));
    }
    /* Blackwell from H100's fit, scaled to Azure's GB200 sweeps (B200's
     * rows derived from them), FlashAttention-3's 75% assumed */
    const char *blackwell[] = {"gb200", "b200"};
    for (int i = 0; i < 2; i++) {
        assert_string_equal(g[14 + i].gpu, blackwell[i]);
        assert_string_equal(g[14 + i].derived_from, "h100-sxm");
        assert_true(g[14 + i].flash_fwd == 0.75);
    }
    free(g);
}

/* The Hopper variants and the L40S have tables of their own (written by
 * calibrate --fit), not borrowed ones (the L40S took the RTX 4090's); where calib/published.tsv has an FP8 GEMM
 * for the GPU, an fp8 grid of its own too. */
static void test_hopper_variants_tables(void **state)
{
    (void)state;
    const char *names[] = {"h100-sxm-96gb", "h800-sxm", "gh200-96gb",
                           "gh200-144gb", "h100-pcie", "h100-nvl",
                           "l40s"};
    const bool fp8[] = {false, true, false, true, false, false, false};
    for (int i = 0; i < 7; i++) {
        const gpu_spec *g = gpu_find(&cat, names[i]);
        assert_non_null(g);
        cost_calib c;
        llm_err e;
        assert_int_equal(cfg_load_cost_calib(".", &cat, g, &c, &e), 0);
        assert_string_equal(c.gpu, names[i]);
        assert_string_equal(c.derived_from, "");
        assert_true(c.gemm[DT_BF16].nm > 0 && c.gemm[DT_FP16].nm > 0);
        assert_int_equal(c.gemm[DT_FP8].nm > 0, fp8[i]);
        cost_calib_free(&c);
    }
}

/* A GPU and its shipped tables. */
typedef struct gpu_tables {
    const gpu_spec *g;
    cost_calib c;
} gpu_tables;

static void tables_load(gpu_tables *t, const char *gpu)
{
    llm_err e;
    t->g = gpu_find(&cat, gpu);
    assert_non_null(t->g);
    assert_int_equal(cfg_load_cost_calib(".", &cat, t->g, &t->c, &e), 0);
}

/* A GEMM's throughput in TFLOP/s through a GPU's tables. */
static double gemm_tflops(const gpu_tables *t, dtype dt, double m, double n,
                          double k)
{
    cost_op op = {.kind = OP_GEMM, .dt = dt, .m = m, .n = n, .k = k,
                  .batch = 1};
    cost_result r;
    llm_err e;
    assert_int_equal(cost_predict(&t->c, t->g, &op, 0, &r, &e), 0);
    return 2 * m * n * k / r.kernel_s / 1e12;
}

/* calib/published.tsv's kinds as calibrate --fit applies them: a
 * gemm_max_tflops figure (the best of a search over shapes) is an envelope
 * no shape of the grid beats, over a grid of compute-bound shapes; a
 * gemm_ratio puts H200's FP8 grid at 0.9920 x H100's (Azure's one harness
 * on both: 1366.3 / 1377.3 at 16384^3), where scaling it to the absolute
 * 1366.3 left it 20% under H100's at MAMF's shape. */
static void test_gemm_grid_envelopes(void **state)
{
    (void)state;
    const struct {
        const char *gpu;
        dtype dt;
        double best_tflops;
    } top[] = {{"h100-sxm", DT_FP8, 1402.6},   {"gh200-144gb", DT_FP8, 1535.0},
               {"rtx-4090", DT_BF16, 178.8},   {"rtx-a6000", DT_BF16, 131.2},
               {"gh200-96gb", DT_BF16, 852.5}, {"h200", DT_FP8, 1402.6 * 0.992}};
    const double dims[] = {2048, 4096, 8192, 14336, 16384, 32768, 65536};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        gpu_tables gt;
        tables_load(&gt, top[i].gpu);
        double best = 0;
        for (int a = 0; a < 7; a++)
            for (int b = 0; b < 7; b++)
                for (int c = 0; c < 7; c++) {
                    double t = gemm_tflops(&gt, top[i].dt, dims[a], dims[b],
                                           dims[c]);
                    best = t > best ? t : best;
                }
        cost_calib_free(&gt.c);
        if (best > top[i].best_tflops * 1.001)
            fail_msg("%s: %.1f TFLOP/s above its envelope %.1f", top[i].gpu,
                     best, top[i].best_tflops);
        /* and the envelope is reached (or the datasheet peak, which the
         * RTX 4090's boost-clock 178.8 exceeds): not a blanket slowdown */
        double peak = gpu_find(&cat, top[i].gpu)->peak_flops[top[i].dt] / 1e12;
        assert_true(best > fmin(top[i].best_tflops, peak) * 0.97);
    }
    gpu_tables h200, h100;
    tables_load(&h200, "h200");
    tables_load(&h100, "h100-sxm");
    double big = 16384;
    double r = gemm_tflops(&h200, DT_FP8, big, big, big) /
               gemm_tflops(&h100, DT_FP8, big, big, big);
    assert_true(fabs(r - 1366.3 / 1377.3) < 0.005);
    r = gemm_tflops(&h200, DT_FP8, 1024, 9216, 14336) /
        gemm_tflops(&h100, DT_FP8, 1024, 9216, 14336);
    assert_true(r > 0.97 && r < 1.03);
    cost_calib_free(&h200.c);
    cost_calib_free(&h100.c);
}

#define FIT_HEAD \
    "gpu\ttraces\tderived_from\tgemm_measured\tflash_fwd_peak_fraction\tsource\n"
#define FIT_A "a\tta\t-\t-\t0.7\ts\n"

static const char *fit_error(const char *table)
{
    static llm_err e;
    scratch();
    put("calib/fit.tsv", table);
    cfg_fit_gpu *g;
    int n;
    int rc = cfg_load_fit_gpus(dir, &g, &n, &e);
    scratch_remove();
    if (rc == 0)
        free(g);
    return rc == 0 ? NULL : e.msg;
}

static void test_fit_errors(void **state)
{
    (void)state;
    assert_null(fit_error(FIT_HEAD FIT_A "b\t-\ta\t-\t0.7\ts\n"));
    /* a derived GPU may name files of its own measured GEMMs */
    assert_null(fit_error(FIT_HEAD FIT_A "b\t-\ta\tm/b.tsv,m/b8.tsv\t0.7\ts\n"));
    expect(fit_error(FIT_HEAD FIT_A "b\ttb\ta\t-\t0.7\ts\n"),
           "fit.tsv:3: traces: b", "either traces or derived_from");
    expect(fit_error(FIT_HEAD FIT_A "b\t-\ta\t-\t0.7\ts\nc\t-\tb\t-\t0.7\ts\n"),
           "fit.tsv:4: derived_from: b is not a traced row", NULL);
    expect(fit_error(FIT_HEAD FIT_A "b\t-\ta\t-\t1.7\ts\n"),
           "fit.tsv:3: flash_fwd_peak_fraction: 1.7 is out of range", NULL);
    expect(fit_error(FIT_HEAD FIT_A FIT_A), "fit.tsv:3: gpu: a again", NULL);
    expect(fit_error(FIT_HEAD "a\tta\t-\t-\t0.7\t\n"),
           "fit.tsv:2: source: empty", NULL);
    /* measurements replace a derived GPU's shape: not a traced one's */
    expect(fit_error(FIT_HEAD "a\tta\t-\tm/a.tsv\t0.7\ts\n"),
           "fit.tsv:2: gemm_measured: m/a.tsv", "expected - for a GPU with traces");
    /* the column is required: a table without it is refused, named */
    expect(fit_error("gpu\ttraces\tderived_from\tflash_fwd_peak_fraction\tsource\n"
                     "a\tta\t-\t0.7\ts\n"),
           "gemm_measured: missing column", NULL);
}

/* ---- calib/kernels.tsv ------------------------------------------------ */

static void test_kernels_shipped(void **state)
{
    (void)state;
    /* FlashAttention-2: 5 matmuls backward against 2 forward; a one-byte
     * dropout mask; cuBLAS's 128-row tiles, one time up to 64 rows */
    cost_calib c;
    llm_err e;
    assert_int_equal(cfg_load_cost_calib(".", &cat, gpu_find(&cat, "h100-sxm"),
                                         &c, &e), 0);
    assert_true(c.flash_bwd_ratio == 2.5);
    assert_non_null(strstr(c.flash_bwd_source, "2307.08691"));
    assert_true(c.dropout_mask_bytes == 1);
    assert_true(c.gemm_tile_rows == 128 && c.gemm_small_rows == 64);
    cost_calib_free(&c);
}

/* link_real NAME: the scratch directory's NAME is the repository's */
static void link_real(const char *name)
{
    char real[PATH_MAX], link[256];
    assert_non_null(realpath(name, real));
    snprintf(link, sizeof link, "%s/%s", dir, name);
    assert_int_equal(symlink(real, link), 0);
}

/* calib/kernels.tsv, attention-kernels.tsv (attn) and training-load.tsv
 * (load) in a scratch data directory whose calib/h100-sxm and
 * calib/links.tsv are the real ones, as are the tables given as NULL. */
static const char *memk;    /* calib/memory-kernels.tsv; NULL: the real one */

static const char *calib_error(const char *table, const char *attn,
                               const char *load, cost_calib *c)
{
    static llm_err e;
    scratch();
    put("calib/kernels.tsv", table);
    if (load)
        put("calib/training-load.tsv", load);
    else
        link_real("calib/training-load.tsv");
    if (attn)
        put("calib/attention-kernels.tsv", attn);
    else
        link_real("calib/attention-kernels.tsv");
    link_real("calib/h100-sxm");
    link_real("calib/links.tsv");
    if (memk)
        put("calib/memory-kernels.tsv", memk);
    else
        link_real("calib/memory-kernels.tsv");
    int rc = cfg_load_cost_calib(dir, &cat, gpu_find(&cat, "h100-sxm"), c,
                                 &e);
    scratch_remove();
    return rc == 0 ? NULL : e.msg;
}

static const char *kernels_attn_error(const char *table, const char *attn,
                                      cost_calib *c)
{
    return calib_error(table, attn, NULL, c);
}

static const char *kernels_error(const char *table, cost_calib *c)
{
    return kernels_attn_error(table, NULL, c);
}

#define K_HEAD "gpu\tkey\tvalue\tunit\tsource\n"
#define K_STAR                                                              \
    "*\tflash_bwd_over_fwd\t2.5\tratio\ts\n"                             \
    "*\tdropout_mask_bytes\t1\tbytes\ts\n"                               \
    "*\tgemm_tile_rows\t128\trows\ts\n"                                   \
    "*\tgemm_small_rows\t64\trows\ts\n"                                  \
    "*\tflash_tile_tokens\t106\ttokens\ts\n"                              \
    "*\tflash_tile_tokens_causal\t420\ttokens\ts\n"                       \
    "*\tsfu_exp_per_sm_cycle\t16\tper SM per cycle\ts\n"
#define A_HEAD                                                              \
    "kernel\tsm\tfwd\tfwd_causal\tbwd\ttile_tokens\ttile_tokens_causal\t"     \
    "causal_skip\tsource\n"

/* calib/attention-kernels.tsv: the rows of the GPU's sm only, each with
 * fractions of peak in (0, 1], one per kernel and sm, and a source. */
static void test_attention_kernels(void **state)
{
    (void)state;
    cost_calib c;
    const char *t = K_HEAD K_STAR;
    assert_null(kernels_attn_error(t, A_HEAD "fa2\t90\t0.4\t0.3\t0.2\t100\t400\tyes\ts\n"
                                          "fa2\t80\t0.7\t0.6\t0.5\t100\t400\tyes\ts\n",
                                   &c));
    assert_int_equal(c.nattn_k, 1); /* h100-sxm is sm 90 */
    int i = cost_attn_kernel_find(&c, "fa2");
    assert_int_equal(i, 1);
    assert_true(c.attn_k[0].fwd == 0.4 && c.attn_k[0].bwd == 0.2 &&
                c.attn_k[0].tile_tokens == 100 &&
                c.attn_k[0].tile_tokens_causal == 400 &&
                c.attn_k[0].causal_skip);
    assert_true(c.flash_tile_tokens == 106 &&
                c.flash_tile_tokens_causal == 420);
    assert_int_equal(cost_attn_kernel_find(&c, "fa3"), 0);
    cost_calib_free(&c);
    expect(kernels_attn_error(t, A_HEAD "fa2\t90\t0.4\t0.3\t0.2\t100\t400\tyes\ts\n"
                                     "fa2\t90\t0.5\t0.3\t0.2\t100\t400\tyes\ts\n", &c),
           "attention-kernels.tsv:3: fa2: a second row for sm 90", NULL);
    expect(kernels_attn_error(t, A_HEAD "fa3\t90\t1.5\t0.3\t0.2\t100\t400\tyes\ts\n", &c),
           "attention-kernels.tsv:2", "fwd");
    expect(kernels_attn_error(t, A_HEAD "fa3\t90\t0.5\t0.3\t0.2\t-1\t400\tyes\ts\n",
                              &c),
           "attention-kernels.tsv:2", "tile_tokens");
    expect(kernels_attn_error(t, A_HEAD "fa3\t90\t0.5\t0.3\t0.2\t100\t400\tyes\t\n", &c),
           "expected a kernel name of at most 15 characters and a source",
           NULL);
    expect(kernels_attn_error(t, A_HEAD "fa3\t90\t0.5\t0.3\t0.2\t100\t400\tmaybe\ts\n",
                              &c),
           "attention-kernels.tsv:2: fa3: causal_skip \"maybe\" (expected "
           "yes or no)", NULL);
    assert_null(kernels_attn_error(t, A_HEAD "fa3\t90\t0.5\t0.5\t0.2\t100\t400\tno\ts\n",
                                   &c));
    assert_false(c.attn_k[0].causal_skip);
    cost_calib_free(&c);
}

/* calib/training-load.tsv: the shipped fit (Hopper well below the tables,
 * A100 within 5% of them, a GPU without a row at them), and a value out of range or
 * a key missing is an error naming the file, line and key. */
#define L_HEAD "gpu\tkey\tvalue\tunit\tgroup\tcases\tsource\n"
static void test_training_load_table(void **state)
{
    (void)state;
    static const struct {
        const char *gpu;
        bool below;
    } shipped[] = {{"h100-sxm", true}, {"h200", true},
                   {"a100-sxm-80gb", false}, {"b200", false}};
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++) {
        cost_calib c;
        llm_err e;
        assert_int_equal(cfg_load_cost_calib(".", &cat,
                                             gpu_find(&cat, shipped[i].gpu),
                                             &c, &e), 0);
        assert_true(c.train_tensor_16bit > 0.3 && c.train_tensor_fp8 > 0.3);
        assert_true(c.train_tensor_16bit <= 1 && c.train_tensor_fp8 <= 1);
        assert_int_equal(c.train_tensor_16bit < 0.95, shipped[i].below);
        assert_true(c.train_load_source[0] != '\0');
        cost_calib_free(&c);
    }
    cost_calib c;
    assert_null(calib_error(K_HEAD K_STAR, NULL,
                            L_HEAD "*\ttensor_16bit\t1\tfraction\t-\t0\ts\n"
                                   "*\ttensor_fp8\t1\tfraction\t-\t0\ts\n"
                                   "h100-sxm\ttensor_fp8\t0.6\tfraction\th\t3\tfit\n",
                            &c));
    assert_true(c.train_tensor_16bit == 1 && c.train_tensor_fp8 == 0.6);
    cost_calib_free(&c);
    expect(calib_error(K_HEAD K_STAR, NULL,
                       L_HEAD "*\ttensor_16bit\t1.5\tfraction\t-\t0\ts\n"
                              "*\ttensor_fp8\t1\tfraction\t-\t0\ts\n",
                       &c),
           "training-load.tsv:2", "tensor_16bit");
    expect(calib_error(K_HEAD K_STAR, NULL,
                       L_HEAD "*\ttensor_16bit\t1\tfraction\t-\t0\ts\n", &c),
           "training-load.tsv", "tensor_fp8");
}

/* calib/host-cpus.tsv through the node files: a node names its host CPU
 * and gets that row's speed; the reference host runs at 1, the DGX A100's
 * EPYC 7742 slower, and a node that names none at the reference speed. */
static void test_host_cpus(void **state)
{
    (void)state;
    static const struct {
        const char *node, *cpu;
        double lo, hi;
    } shipped[] = {{"dgx-h100", "xeon-8480c", 1, 1},
                   {"hgx-h200", "xeon-8480c", 1, 1},
                   {"dgx-a100", "epyc-7742", 0.5, 0.9},
                   {"pcie-8x-l40s", "", 1, 1}};
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++) {
        char path[256];
        snprintf(path, sizeof path, "topologies/%s.cfg", shipped[i].node);
        topo_nodespec spec;
        topo_fabricspec fab;
        int nodes;
        llm_err e;
        assert_int_equal(cfg_load_topology(path, ".", &spec, &nodes, &fab, &e),
                         0);
        assert_string_equal(spec.host_cpu, shipped[i].cpu);
        assert_true(spec.host_speed >= shipped[i].lo &&
                    spec.host_speed <= shipped[i].hi);
    }
}

/* calib/memory-kernels.tsv: the shipped table loads (the GPU's own issue
 * rate over the '*' one); a missing figure and one out of range are errors
 * naming the file and the key. */
static void test_memory_kernels_table(void **state)
{
    (void)state;
    cost_calib c;
    assert_null(kernels_error(K_HEAD K_STAR, &c));
    assert_true(c.memk[MEM_NORM].fixed_cycles > 0 &&
                c.memk[MEM_NORM].row_cycles > 0);
    assert_true(c.memk[MEM_ELEMENTWISE].bytes_per_sm_cycle == 0);
    cost_calib_free(&c);
    memk = K_HEAD "*\telementwise_fixed_cycles\t2000\tcycles\ts\n";
    expect(kernels_error(K_HEAD K_STAR, &c), "memory-kernels.tsv",
           "elementwise_row_cycles: no row");
    memk = K_HEAD "*\tnorm_fixed_cycles\t-5\tcycles\ts\n";
    expect(kernels_error(K_HEAD K_STAR, &c), "memory-kernels.tsv:2",
           "norm_fixed_cycles");
    memk = NULL;
}

static void test_kernels_errors(void **state)
{
    (void)state;
    cost_calib c;
    /* a GPU's own row wins */
    assert_null(kernels_error(K_HEAD K_STAR
                              "h100-sxm\tflash_bwd_over_fwd\t3\tratio\tm\n",
                              &c));
    assert_true(c.flash_bwd_ratio == 3);
    assert_string_equal(c.flash_bwd_source, "m");
    cost_calib_free(&c);
    expect(kernels_error(K_HEAD K_STAR "*\tflash_bwd\t3\tratio\ts\n", &c),
           "kernels.tsv:9: flash_bwd: unknown key",
           "expected flash_bwd_over_fwd, dropout_mask_bytes, gemm_tile_rows, "
           "gemm_small_rows, flash_tile_tokens, flash_tile_tokens_causal, "
           "sfu_exp_per_sm_cycle");
    expect(kernels_error(K_HEAD "*\tflash_bwd_over_fwd\t2.5\tratio\ts\n"
                         "*\tdropout_mask_bytes\t1\tbytes\ts\n"
                         "*\tgemm_tile_rows\t2048\trows\ts\n"
                         "*\tgemm_small_rows\t64\trows\ts\n", &c),
           "kernels.tsv:4: gemm_tile_rows: 2048 is out of range", NULL);
    expect(kernels_error(K_HEAD "*\tflash_bwd_over_fwd\t0\tratio\ts\n", &c),
           "kernels.tsv:2: flash_bwd_over_fwd: 0 is out of range", NULL);
    /* the attention keys: a GPU's row out of range, and one missing */
    expect(kernels_error(K_HEAD K_STAR
                         "h100-sxm\tsfu_exp_per_sm_cycle\t2048\tper SM per "
                         "cycle\ts\n", &c),
           "kernels.tsv:9: sfu_exp_per_sm_cycle: 2048 is out of range", NULL);
    expect(kernels_error(K_HEAD K_STAR
                         "h100-sxm\tflash_tile_tokens\t-5\ttokens\ts\n", &c),
           "kernels.tsv:9: flash_tile_tokens: -5 is out of range", NULL);
    expect(kernels_error(K_HEAD "*\tflash_bwd_over_fwd\t2.5\tratio\ts\n"
                         "*\tdropout_mask_bytes\t1\tbytes\ts\n"
                         "*\tgemm_tile_rows\t128\trows\ts\n"
                         "*\tgemm_small_rows\t64\trows\ts\n"
                         "*\tflash_tile_tokens\t106\ttokens\ts\n"
                         "*\tflash_tile_tokens_causal\t420\ttokens\ts\n",
                         &c),
           "kernels.tsv: sfu_exp_per_sm_cycle: no row for h100-sxm", NULL);
    expect(kernels_error(K_HEAD "*\tflash_bwd_over_fwd\t2.5\tratio\ts\n",
                         &c),
           "kernels.tsv: dropout_mask_bytes: no row for h100-sxm", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcie_shipped),
        cmocka_unit_test(test_pcie_errors),
        cmocka_unit_test(test_arch_shipped),
        cmocka_unit_test(test_arch_errors),
        cmocka_unit_test(test_overhead_shipped),
        cmocka_unit_test(test_overhead_per_gpu),
        cmocka_unit_test(test_overhead_errors),
        cmocka_unit_test(test_econ_shipped),
        cmocka_unit_test(test_econ_compare_override),
        cmocka_unit_test(test_econ_errors),
        cmocka_unit_test(test_fit_shipped),
        cmocka_unit_test(test_fit_errors),
        cmocka_unit_test(test_hopper_variants_tables),
        cmocka_unit_test(test_gemm_grid_envelopes),
        cmocka_unit_test(test_kernels_shipped),
        cmocka_unit_test(test_kernels_errors),
        cmocka_unit_test(test_memory_kernels_table),
        cmocka_unit_test(test_host_cpus),
        cmocka_unit_test(test_training_load_table),
        cmocka_unit_test(test_attention_kernels),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
