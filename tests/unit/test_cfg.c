/* Config loading: every bad input names file, line, key and expectation. */
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

/* Loads `text` as a model file; returns the error message (static). */
static const char *model_error(const char *text, const char *suffix)
{
    static llm_err e;
    char path[128];
    write_temp(path, sizeof path, suffix, text);
    model_spec m;
    int rc = cfg_load_model(path, &m, &e);
    unlink(path);
    return rc == 0 ? NULL : e.msg;
}

static const char *gpus_error(const char *text)
{
    static llm_err e;
    char path[128];
    write_temp(path, sizeof path, ".cfg", text);
    gpu_catalog c;
    int rc = cfg_load_gpus(path, ".", &c, &e);
    unlink(path);
    if (rc == 0)
        gpu_catalog_free(&c);
    return rc == 0 ? NULL : e.msg;
}

#define GOOD_MODEL                                                          \
    "source = \"test\";\nlayers = 2;\nhidden = 64;\nheads = 4;\n"           \
    "ffn = 256;\nmlp = \"gelu\";\nvocab = 100;\n"

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

static void test_good_model(void **state)
{
    (void)state;
    assert_null(model_error(GOOD_MODEL, ".cfg"));
}

static void test_unknown_key_suggests(void **state)
{
    (void)state;
    /* line 8 holds the typo */
    expect(model_error(GOOD_MODEL "hiden_size = 3;\n", ".cfg"),
           ":8: hiden_size: unknown key", NULL);
    expect(model_error(GOOD_MODEL "kv_head = 2;\n", ".cfg"),
           "did you mean \"kv_heads\"", NULL);
}

static void test_bad_values(void **state)
{
    (void)state;
    expect(model_error("source = \"x\";\nlayers = -2;\nhidden = 64;\n"
                       "heads = 4;\nffn = 256;\nmlp = \"gelu\";\nvocab = 9;\n",
                       ".cfg"),
           ":2: layers: -2 is out of range", "expected an integer 1..");
    expect(model_error("source = \"x\";\nlayers = 0;\n", ".cfg"),
           ":2: layers: 0 is out of range", NULL);
    expect(model_error(GOOD_MODEL "dropout = \"high\";\n", ".cfg"),
           ":8: dropout: wrong type", "expected a number");
    expect(model_error("source = \"x\";\nlayers = 2.5;\n", ".cfg"),
           ":2: layers: wrong type", "integer");
    expect(model_error(GOOD_MODEL "position = \"rotary\";\n", ".cfg"),
           "unknown value \"rotary\"", "expected one of rope|alibi|learned");
    /* a check across settings names the setting at fault, at its line */
    expect(model_error(GOOD_MODEL "kv_heads = 3;\n", ".cfg"),
           ":8: kv_heads: 3 does not divide heads 4", NULL);
    /* hidden 66 over 4 heads: the head dimension would be truncated */
    expect(model_error("source = \"x\";\nlayers = 2;\nhidden = 66;\n"
                       "heads = 4;\nffn = 256;\nmlp = \"gelu\";\nvocab = 9;\n",
                       ".cfg"),
           ":4: heads: 4 heads do not divide hidden 66", "head_dim");
    assert_null(model_error("source = \"x\";\nlayers = 2;\nhidden = 66;\n"
                            "heads = 4;\nhead_dim = 16;\nffn = 256;\n"
                            "mlp = \"gelu\";\nvocab = 9;\n", ".cfg"));
    /* every size at its bound: refused on the parameter count, not
     * reported as a wrapped negative */
    expect(model_error("source = \"x\";\nlayers = 100000;\n"
                       "hidden = 1000000000;\nheads = 100000;\n"
                       "head_dim = 100000;\nffn = 1000000000;\n"
                       "mlp = \"gelu\";\nvocab = 1000000000;\n", ".cfg"),
           ":3: hidden: 1000000000 with layers 100000", "expected at most 1e+15");
    expect(model_error("source = \"x\";\nlayers = 2000000000;\n", ".cfg"),
           ":2: layers: 2000000000 is out of range", "1..100000");
}

static void test_missing_and_syntax(void **state)
{
    (void)state;
    expect(model_error("source = \"x\";\nlayers = 2;\n", ".cfg"),
           "hidden: missing", "expected an integer");
    /* libconfig's ';' is optional; a doubled '=' is not */
    expect(model_error("source = \"x\";\nlayers = 2;\nhidden = = 4;\n",
                       ".cfg"),
           ":3: (syntax)", NULL);
    llm_err e;
    model_spec m;
    assert_int_equal(cfg_load_model("/nonexistent/m.cfg", &m, &e), -1);
    expect(e.msg, "/nonexistent/m.cfg: cannot open", NULL);
}

static void test_hf_errors(void **state)
{
    (void)state;
    expect(model_error("{\n  \"hidden_size\": 64,\n  \"num_hidden_layers\": 2,"
                       "\n  \"vocab_size\": 10,\n  oops\n}\n", ".json"),
           ":5: (json): malformed JSON", NULL);
    expect(model_error("{\"hidden_size\": 64, \"num_hidden_layers\": 2, "
                       "\"vocab_size\": 10}", ".json"),
           "num_attention_heads: missing required key",
           "num_attention_heads or n_head");
    expect(model_error("{\n\"hidden_size\": 64,\n\"num_hidden_layers\": -1,\n"
                       "\"num_attention_heads\": 4, \"vocab_size\": 10}",
                       ".json"),
           ":3: num_hidden_layers: -1 is out of range", NULL);
    expect(model_error("{\"hidden_size\": \"big\"}", ".json"),
           "hidden_size: wrong type", NULL);
    /* the same bounds as a .cfg model: 867777777 layers is refused before
     * anything loops over them */
    expect(model_error("{\"hidden_size\": 64, \"num_hidden_layers\": 867777777, "
                       "\"num_attention_heads\": 4, \"vocab_size\": 10}",
                       ".json"),
           "num_hidden_layers: 867777777 is out of range", "1..100000");
    expect(model_error("{\"hidden_size\": 66, \"num_hidden_layers\": 2,\n"
                       "\"num_attention_heads\": 4, \"vocab_size\": 10}",
                       ".json"),
           ":2: num_attention_heads: 4 heads do not divide hidden 66", NULL);
    expect(model_error("{\"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                       "\"num_attention_heads\": 4, \"vocab_size\": 10,\n"
                       "\"n_head\": 4, \"num_key_value_heads\": 3}", ".json"),
           ":3: num_key_value_heads: 3 does not divide heads 4", NULL);
    expect(model_error("{\"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                       "\"num_attention_heads\": 4, \"vocab_size\": 10,\n"
                       "\"model_type\": 5}", ".json"),
           ":3: model_type: wrong type", "expected a string");
    expect(model_error("[1, 2]", ".json"), "top level is not an object",
           NULL);
    /* a family not in the importer's lists that says silu is gated */
    {
        char path[128];
        write_temp(path, sizeof path, ".json",
                   "{\"hidden_size\": 64, \"num_hidden_layers\": 2, "
                   "\"num_attention_heads\": 4, \"vocab_size\": 10, "
                   "\"model_type\": \"newfamily\", \"hidden_act\": \"silu\"}");
        model_spec m;
        llm_err e;
        assert_int_equal(cfg_load_model(path, &m, &e), 0);
        unlink(path);
        assert_int_equal(m.mlp, MLP_SWIGLU);
    }
    /* extra keys are ignored */
    assert_null(model_error("{\"hidden_size\": 64, \"num_hidden_layers\": 2, "
                            "\"num_attention_heads\": 4, \"vocab_size\": 10, "
                            "\"bos_token_id\": 1, \"rope_scaling\": null}",
                            ".json"));
}

#define GPU_HEAD "{ name = \"x\"; architecture = \"ampere\"; sm = 80;\n"
#define GPU_REST                                                            \
    "form_factor = \"sxm\"; memory_gib = 80.0;\n"                          \
    "tflops = { fp32 = 19.5; bf16 = 312.0; };\n"                            \
    "pcie_gen = 4; pcie_lanes = 16; tdp_w = 400; source = \"t\"; }"

static void test_gpu_errors(void **state)
{
    (void)state;
#define BW "memory_bw_GBps = 1.0;\n"
#define ONE(extra) GPU_HEAD extra GPU_REST
    assert_null(gpus_error("gpus = (" ONE(BW) ");\n"));
    expect(gpus_error("gpus = (" ONE("memory_bw_GBps = -1.0;\n") ");\n"),
           ":2: memory_bw_GBps: -1 is out of range", NULL);
    expect(gpus_error("gpus = (" ONE("\n") ");\n"),
           "memory_bw_GBps: missing", NULL);
    expect(gpus_error("gpus = (" ONE(BW "sm_count = 0;\n") ");\n"),
           ":3: sm_count: 0 is out of range", NULL);
    expect(gpus_error("gpus = (" ONE(BW "tdp = 3;\n") ");\n"),
           ":3: tdp: unknown key", "did you mean \"tdp_w\"");
    expect(gpus_error("gpus = (" ONE(BW) ",\n" ONE(BW) ");\n"),
           "duplicate GPU \"x\"", NULL);
    expect(gpus_error("gpus = (" ONE(BW "caps = [\"bf17\"];\n") ");\n"),
           "unknown capability \"bf17\"", "did you mean \"bf16\"");
    expect(gpus_error("gpus = ();\n"), "gpus: missing or empty", NULL);
}

/* The shipped catalog: capability flags agree with the peak figures. */
static void test_catalog_consistent(void **state)
{
    (void)state;
    gpu_catalog c;
    llm_err e;
    assert_int_equal(cfg_load_gpus("topologies/gpus.cfg", ".", &c, &e), 0);
    assert_true(c.n >= 28);
    for (int i = 0; i < c.n; i++) {
        const gpu_spec *g = &c.gpus[i];
        assert_true(g->memory_bytes > 0 && g->mem_bw_Bps > 0);
        assert_int_equal(gpu_has(g, GPU_CAP_BF16), g->peak_flops[DT_BF16] > 0);
        assert_int_equal(gpu_has(g, GPU_CAP_FP8), g->peak_flops[DT_FP8] > 0);
        assert_int_equal(gpu_has(g, GPU_CAP_NVLINK), g->nvlink_gen > 0);
        assert_int_equal(gpu_has(g, GPU_CAP_FLASH_ATTN), g->sm >= 80);
        assert_true(g->source[0] != '\0');
    }
    /* dense, not sparse: A100 312, H100 SXM 989.4 BF16 TFLOP/s */
    assert_close(gpu_find(&c, "a100-sxm-80gb")->peak_flops[DT_BF16], 312e12,
                 1e-9);
    assert_close(gpu_find(&c, "h100-sxm")->peak_flops[DT_BF16], 989.4e12,
                 1e-3);
    assert_false(gpu_has(gpu_find(&c, "v100-sxm2-32gb"), GPU_CAP_BF16));
    assert_false(gpu_has(gpu_find(&c, "rtx-4090"), GPU_CAP_NVLINK));
    gpu_catalog_free(&c);
}

/* The Hopper variants load with the figures their entries cite. */
static void test_catalog_hopper_variants(void **state)
{
    (void)state;
    gpu_catalog c;
    llm_err e;
    assert_int_equal(cfg_load_gpus("topologies/gpus.cfg", ".", &c, &e), 0);
    /* Meta's H100 96GB HBM2e (torchtitan): 2.4 TB/s, 500 W; its compute
     * is the assumed midpoint of H100 SXM and NVL, (989.4 + 835.5) / 2 */
    const gpu_spec *m = gpu_find(&c, "h100-sxm-96gb");
    assert_non_null(m);
    assert_close(m->mem_bw_Bps, 2400e9, 1e-12);
    assert_close(m->peak_flops[DT_BF16], (989.4e12 + 835.5e12) / 2, 1e-9);
    assert_true(m->tdp_w == 500 && m->sm == 90 && m->sm_count == 132);
    /* H800: H100 SXM compute, 8 NVLink4 links = 400 GB/s, FP64 cut to 1 */
    const gpu_spec *h8 = gpu_find(&c, "h800-sxm");
    assert_non_null(h8);
    assert_close(h8->peak_flops[DT_BF16],
                 gpu_find(&c, "h100-sxm")->peak_flops[DT_BF16], 1e-12);
    assert_close(h8->nvlink_Bps, 400e9, 1e-12);
    assert_int_equal(h8->nvlink_links, 8);
    assert_close(h8->peak_flops[DT_FP64], 1e12, 1e-12);
    /* GH200: 96 GB HBM3 at 4 TB/s (nvidia-smi 97871 MiB = 95.58 GiB) and
     * 144 GB HBM3e at 4.9 TB/s (146831 MiB = 143.39 GiB) */
    const gpu_spec *g96 = gpu_find(&c, "gh200-96gb");
    const gpu_spec *g144 = gpu_find(&c, "gh200-144gb");
    assert_non_null(g96);
    assert_non_null(g144);
    assert_close(g96->mem_bw_Bps, 4000e9, 1e-12);
    assert_close(g96->memory_bytes, 95.58 * 1073741824.0, 1e-12);
    assert_close(g144->mem_bw_Bps, 4900e9, 1e-12);
    assert_close(g144->memory_bytes, 143.39 * 1073741824.0, 1e-12);
    assert_true(gpu_has(g144, GPU_CAP_FP8) && gpu_has(g144, GPU_CAP_MIG));
    gpu_catalog_free(&c);
}

static void test_suggest(void **state)
{
    (void)state;
    const char *c[] = {"llama-2-7b", "llama-2-70b", "gpt3-175b"};
    assert_string_equal(util_suggest("llama-2-7", c, 3), "llama-2-7b");
    assert_null(util_suggest("bert", c, 3));
    assert_int_equal(util_edit_distance("kitten", "sitting"), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_model),
        cmocka_unit_test(test_unknown_key_suggests),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_missing_and_syntax),
        cmocka_unit_test(test_hf_errors),
        cmocka_unit_test(test_gpu_errors),
        cmocka_unit_test(test_catalog_consistent),
        cmocka_unit_test(test_catalog_hopper_variants),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests_name("cfg", tests, NULL, NULL);
}
