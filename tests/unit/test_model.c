/* Parameter counts, FLOPs and KV-cache bytes against published figures and
 * closed forms. */
#include <unistd.h>
#include <dirent.h>
#include <stdlib.h>

#include "test_util.h"

/* Published totals (within 1%): model cards / papers. */
static void test_hf_params_match_published(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        double total, active;
    } cases[] = {
        {"Llama-2-7b-hf.json", 6.74e9, 0},   /* Touvron et al. 2023 */
        {"Llama-2-70b-hf.json", 68.98e9, 0}, /* HF checkpoint count */
        {"Meta-Llama-3-8B.json", 8.03e9, 0},
        {"Llama-3.1-405B.json", 405.9e9, 0}, /* Llama 3 herd paper */
        {"Mixtral-8x7B-v0.1.json", 46.7e9, 12.9e9}, /* Mistral AI blog */
        {"bloom.json", 176.2e9, 0},          /* BigScience 2022 */
        {"opt-175b.json", 175e9, 0},         /* Zhang et al. 2022 */
        {"gpt-neox-20b.json", 20.6e9, 0},    /* Black et al. 2022 */
        {"DeepSeek-R1.json", 671e9, 0},      /* DeepSeek-V3 report */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_spec m;
        load_hf(cases[i].file, &m);
        assert_close(model_params_total(&m), cases[i].total, 0.01);
        if (cases[i].active > 0)
            assert_close(model_params_active(&m), cases[i].active, 0.01);
    }
}

/* DeepSeek-V3's "37B activated" is a rounded figure: the exact per-token
 * count from the config is 61 MLA blocks (187.1 M each) + 3 dense MLPs
 * (3·7168·18432) + 58 x (8 routed + 1 shared) experts (3·7168·2048 each)
 * + routers + embedding and output (2·129280·7168) = 37.55 B. */
static void test_deepseek_active(void **state)
{
    (void)state;
    model_spec m;
    load_hf("DeepSeek-R1.json", &m);
    double mla = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 +
                 512 + 512.0 * 128 * 256 + 128.0 * 128 * 7168 + 2 * 7168;
    double expert = 3.0 * 7168 * 2048;
    double active = 61 * mla + 3 * 3.0 * 7168 * 18432 +
                    58 * (9 * expert + 7168.0 * 256) + 2.0 * 129280 * 7168 +
                    7168;
    assert_close(model_params_active(&m), active, 1e-9);
    assert_close(model_params_active(&m), 37e9, 0.02);
    assert_string_equal(model_attention_kind(&m), "MLA");
}

/* The released Llama-2-7B checkpoint has exactly 6,738,415,616 params:
 * 32·(4·4096² + 3·4096·11008 + 2·4096) + 2·32000·4096 + 4096. */
static void test_llama2_7b_exact(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-2-7b", &m);
    assert_true(model_params_total(&m) == 6738415616.0);
    load_hf("Llama-2-7b-hf.json", &m);
    assert_true(model_params_total(&m) == 6738415616.0);
}

/* KV bytes per token: 2·layers·kv_heads·head_dim·bytes, or the MLA latent. */
static void test_kv_bytes(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-2-70b", &m);
    assert_true(model_kv_bytes_per_token(&m, DT_FP16) ==
                2.0 * 80 * 8 * 128 * 2); /* 327,680: GQA, 8 KV heads */
    load_model("llama-2-7b", &m);
    assert_true(model_kv_bytes_per_token(&m, DT_FP16) == 2.0 * 32 * 32 * 128 * 2);
    load_model("mixtral-8x7b", &m);
    assert_true(model_kv_bytes_per_token(&m, DT_BF16) == 2.0 * 32 * 8 * 128 * 2);
    load_model("deepseek-v3", &m);
    /* (kv_lora 512 + rope 64) values per layer */
    assert_true(model_kv_bytes_per_token(&m, DT_BF16) == 61.0 * 576 * 2);
    /* TP 8 on Llama-2-70B: one KV head per GPU; TP 16 would replicate */
    load_model("llama-2-70b", &m);
    assert_true(model_kv_bytes_per_token_layer_gpu(&m, DT_FP16, 8) ==
                2.0 * 1 * 128 * 2);
}

/* 3 x forward FLOPs per token of a GPT model equals Narayanan et al.'s
 * 72·l·h²·(1 + s/(6h) + V/(12·l·h)) per token (eq. in SC21 appendix with
 * the recompute term removed: 96 -> 72). */
static void test_flops_megatron_formula(void **state)
{
    (void)state;
    model_spec m;
    load_model("gpt3-175b", &m);
    const double l = 96, h = 12288, s = 2048, V = 50257;
    double want = 72 * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    assert_close(3 * model_flops_per_token_fwd(&m, 2048), want, 1e-9);
}

/* Dense matmul FLOPs of an untied Llama = 2 x (params - embedding table -
 * norm vectors). */
static void test_flops_dense_llama(void **state)
{
    (void)state;
    model_spec m;
    load_model("llama-2-7b", &m);
    double norms = 32 * 2 * 4096.0 + 4096;
    double want = 2 * (6738415616.0 - 32000.0 * 4096 - norms);
    assert_true(model_flops_per_token_dense(&m) == want);
}

/* Every shipped model file matches its published total: within 1%, or
 * within half a unit of the published figure's last digit (Megatron's
 * Table 1 rounds to 0.1 B). */
static void test_all_model_files(void **state)
{
    (void)state;
    static const char *const names[] = {
        "gpt3-175b", "megatron-1.7b", "megatron-3.6b", "megatron-7.5b",
        "megatron-18.4b", "megatron-39.1b", "megatron-76.1b",
        "megatron-145.6b", "megatron-310.1b", "megatron-529.6b",
        "megatron-1t", "korthikanti-22b", "llama-2-7b", "llama-2-13b",
        "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-405b",
        "mixtral-8x7b", "deepseek-v3", "deepseek-r1",
        "deepseek-r1-distill-qwen-1.5b", "deepseek-r1-distill-qwen-7b",
        "deepseek-r1-distill-qwen-14b", "deepseek-r1-distill-qwen-32b",
        "deepseek-r1-distill-llama-8b", "deepseek-r1-distill-llama-70b",
        "gpt-neox-20b", "bloom-176b", "opt-175b", "mpt-30b", "nemotron-4-15b",
        "nemotron-4-340b", "bloom-prelaunch-181b", "llama-2-34b",
        "llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "mistral-7b",
        "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        model_spec m;
        load_model(names[i], &m);
        double got = model_params_total(&m), pub = m.published_params;
        assert_true(pub > 0);
        if (!(fabs(got - pub) <= 0.01 * pub || fabs(got - pub) <= 0.05e9)) {
            print_error("%s: %.4g vs published %.4g\n", names[i], got, pub);
            fail();
        }
    }
}

/* Every Hugging Face config.json the project ships (tests/data/hf-configs,
 * copied from the reference data with its attribution in
 * tests/data/README.md) imports to a model of more than a billion
 * parameters; the directory is part of every clone, so this never skips. */
static void test_shipped_hf_configs(void **state)
{
    (void)state;
    DIR *d = opendir("tests/data/hf-configs");
    assert_non_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        if (!util_ends_with(de->d_name, ".json"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "tests/data/hf-configs/%s", de->d_name);
        model_spec m;
        llm_err e;
        if (cfg_load_model(path, &m, &e) != 0) {
            print_error("%s\n", e.msg);
            fail();
        }
        assert_true(model_params_total(&m) > 1e9);
        n++;
    }
    closedir(d);
    assert_true(n >= 17);
}

/* Sliding-window attention: the pairs a causal kernel computes, which
 * layers attend through the window, and the keys config.json names. */
static void test_sliding_window(void **state)
{
    (void)state;
    /* no window, or one wider than the sequence: the causal triangle */
    assert_close(model_causal_pairs(8, 8, 0), 36, 1e-12);
    assert_close(model_causal_pairs(8, 8, 8), 36, 1e-12);
    /* a window of 1: each query sees itself */
    assert_close(model_causal_pairs(8, 8, 1), 8, 1e-12);
    /* 8 queries, window 3: 1 + 2 + 3 x 6 */
    assert_close(model_causal_pairs(8, 8, 3), 21, 1e-12);
    /* the last 4 of 8 positions (5..8), window 6: 5 + 6 + 6 + 6 */
    assert_close(model_causal_pairs(4, 8, 6), 23, 1e-12);
    /* ... window 4: every one of them sees 4 */
    assert_close(model_causal_pairs(4, 8, 4), 16, 1e-12);
    model_spec m;
    load_model("llama-2-7b", &m);
    assert_false(model_layer_windowed(&m, 0));
    assert_close(model_windowed_share(&m), 0, 1e-12);
    m.sliding_window = 4096;
    assert_true(model_layer_windowed(&m, 31));
    assert_close(model_windowed_share(&m), 1, 1e-12);
    m.sliding_global_every = 2; /* Gemma 2: odd layers global */
    assert_true(model_layer_windowed(&m, 0));
    assert_false(model_layer_windowed(&m, 1));
    assert_close(model_windowed_share(&m), 0.5, 1e-12);
    m.sliding_global_every = 6; /* Gemma 3: 5 local, 1 global */
    assert_false(model_layer_windowed(&m, 5));
    assert_close(model_windowed_share(&m), 27.0 / 32, 1e-12);
    const char *why_key;
    char why[256];
    m.sliding_global_every = 33;
    assert_int_equal(model_check(&m, &why_key, why, sizeof why), -1);
    assert_string_equal(why_key, "sliding_global_every");
    m.sliding_window = 0, m.sliding_global_every = 2;
    assert_int_equal(model_check(&m, &why_key, why, sizeof why), -1);

    /* config.json: Mistral 7B v0.1's window, Qwen2's switched off, Gemma
     * 3's pattern, null for none */
    static const struct {
        const char *type, *extra;
        int window, every;
    } cases[] = {
        {"mistral", "\"sliding_window\": 4096", 4096, 0},
        {"qwen2", "\"sliding_window\": 4096, \"use_sliding_window\": false",
         0, 0},
        {"llama", "\"sliding_window\": 1024, \"sliding_window_pattern\": 6",
         1024, 6},
        {"mistral", "\"sliding_window\": null", 0, 0},
    };
    const char *base = "\"hidden_size\": 4096, \"num_hidden_layers\": 32, "
                       "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                       "\"intermediate_size\": 14336, \"vocab_size\": 32000, "
                       "\"max_position_embeddings\": 32768";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024], path[128];
        llm_err e;
        snprintf(text, sizeof text, "{\"model_type\": \"%s\", %s, %s}",
                 cases[i].type, base, cases[i].extra);
        write_temp(path, sizeof path, ".json", text);
        assert_int_equal(cfg_load_model(path, &m, &e), 0);
        unlink(path);
        assert_int_equal(m.sliding_window, cases[i].window);
        assert_int_equal(m.sliding_global_every, cases[i].every);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hf_params_match_published),
        cmocka_unit_test(test_deepseek_active),
        cmocka_unit_test(test_llama2_7b_exact),
        cmocka_unit_test(test_kv_bytes),
        cmocka_unit_test(test_flops_megatron_formula),
        cmocka_unit_test(test_flops_dense_llama),
        cmocka_unit_test(test_all_model_files),
        cmocka_unit_test(test_shipped_hf_configs),
        cmocka_unit_test(test_sliding_window),
    };
    return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
