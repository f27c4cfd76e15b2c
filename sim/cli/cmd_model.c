/* llmsim model — parameters, FLOPs per token and KV-cache bytes of a model. */
#include <dirent.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "report/rjson.h"
#include "base/util.h"

static const char usage[] =
    "usage: llmsim model NAME|FILE.cfg|config.json [--seq-len N] [--json]\n"
    "       llmsim model --list\n\n"
    "Prints a model's total and active parameters (and where they sit),\n"
    "forward FLOPs per token at context --seq-len (default: the model's\n"
    "max_seq; PaLM/MFU convention: 2 x active matmul params + 4 x layers x\n"
    "seq x attention width, no causal halving), training FLOPs (3x), and\n"
    "KV-cache bytes per token for each precision, beside the popular rule of\n"
    "thumb 2 x layers x hidden x bytes that ignores GQA/MQA/MLA.\n\n"
    "JSON keys: params_total, params_active, flops_per_token_fwd,\n"
    "flops_per_token_train, kv_bytes_per_token (at the model's dtype), ...\n";

static const char *const group_names[] = {"attention", "MLP", "experts",
                                          "routers", "norms", "embedding",
                                          "positions", "output"};

static void group_params(const model_spec *m, double g[8])
{
    model_tensor t[MODEL_MAX_TENSORS];
    memset(g, 0, sizeof(double) * 8);
    for (int l = 0; l < m->layers; l++) {
        int n = model_layer_tensors(m, l, t);
        for (int i = 0; i < n; i++)
            g[t[i].group] += model_tensor_numel(&t[i]);
    }
    int n = model_edge_tensors(m, true, true, t);
    for (int i = 0; i < n; i++)
        g[t[i].group] += model_tensor_numel(&t[i]);
}

static void print_arch(const model_spec *m)
{
    printf("architecture: %d layers, hidden %d, %d heads (%s", m->layers,
           m->hidden, m->heads, model_attention_kind(m));
    if (m->mla)
        printf(", kv_lora %d + rope %d", m->kv_lora_rank,
               m->qk_rope_head_dim);
    else if (m->kv_heads != m->heads)
        printf(", %d KV heads", m->kv_heads);
    printf(", head dim %d), %s MLP %d", model_qk_head_dim(m),
           model_mlp_name(m->mlp), m->ffn);
    if (m->moe_experts)
        printf(", MoE %d experts x %d (top-%d, %d shared, first %d dense)",
               m->moe_experts, m->moe_expert_ffn, m->moe_active,
               m->moe_shared, m->moe_dense_layers);
    printf(", vocab %d, %s, %s%s\n", m->vocab,
           m->pos == POS_LEARNED ? "learned positions"
           : m->pos == POS_ALIBI ? "ALiBi"
                                 : "RoPE",
           m->norm == NORM_RMS ? "RMSNorm" : "LayerNorm",
           m->tied_embeddings ? ", tied embeddings" : "");
}

static void print_human(const model_spec *m, int seq)
{
    double total = model_params_total(m), active = model_params_active(m);
    printf("%s (%s)\n", m->display, m->name);
    printf("source: %s\n", m->source);
    print_arch(m);
    printf("parameters: %.3f B total, %.3f B active per token", total / 1e9,
           active / 1e9);
    if (m->published_params > 0)
        printf(" (published %.2f B, %+.2f%%)", m->published_params / 1e9,
               100 * (total / m->published_params - 1));
    printf("\n  ");
    double g[8];
    group_params(m, g);
    int first = 1;
    for (int i = 0; i < 8; i++)
        if (g[i] > 0) {
            printf("%s%s %.3f B", first ? "" : ", ", group_names[i],
                   g[i] / 1e9);
            first = 0;
        }
    double fwd = model_flops_per_token_fwd(m, seq);
    double dense = model_flops_per_token_dense(m);
    printf("\nFLOPs per token at seq %d: forward %.2f GFLOP (matmuls %.2f + "
           "attention %.2f), training 3x = %.2f GFLOP\n",
           seq, fwd / 1e9, dense / 1e9, (fwd - dense) / 1e9, 3 * fwd / 1e9);
    printf("KV cache per token (%s, all %d layers):", model_attention_kind(m),
           m->layers);
    static const dtype kvs[] = {DT_FP32, DT_FP16, DT_FP8};
    for (int i = 0; i < 3; i++)
        printf(" %s %.1f KiB%s", dtype_name(kvs[i]),
               model_kv_bytes_per_token(m, kvs[i]) / 1024, i < 2 ? "," : "");
    double rule = 2.0 * m->layers * m->hidden * 2;
    double kv16 = model_kv_bytes_per_token(m, DT_FP16);
    printf("\n  rule of thumb 2 x layers x hidden x 2 B = %.1f KiB per token "
           "(%.1fx the real fp16 figure)\n",
           rule / 1024, rule / kv16);
}

static json_t *model_json(const model_spec *m, int seq)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "params_total",
                        rjson_bytes(model_params_total(m)));
    json_object_set_new(o, "params_active",
                        rjson_bytes(model_params_active(m)));
    json_object_set_new(o, "published_params",
                        json_real(m->published_params));
    json_object_set_new(o, "seq_len", json_integer(seq));
    json_object_set_new(o, "flops_per_token_fwd",
                        json_real(model_flops_per_token_fwd(m, seq)));
    json_object_set_new(o, "flops_per_token_train",
                        json_real(3 * model_flops_per_token_fwd(m, seq)));
    json_object_set_new(o, "dtype", json_string(dtype_name(m->weight_dtype)));
    json_object_set_new(o, "kv_bytes_per_token",
                        json_real(model_kv_bytes_per_token(m, m->weight_dtype)));
    json_t *kv = json_object();
    static const dtype kvs[] = {DT_FP32, DT_FP16, DT_BF16, DT_FP8};
    for (int i = 0; i < 4; i++)
        json_object_set_new(kv, dtype_name(kvs[i]),
                            json_real(model_kv_bytes_per_token(m, kvs[i])));
    json_object_set_new(o, "kv_bytes_per_token_by_dtype", kv);
    json_object_set_new(o, "attention", json_string(model_attention_kind(m)));
    json_object_set_new(o, "layers", json_integer(m->layers));
    json_object_set_new(o, "hidden", json_integer(m->hidden));
    json_object_set_new(o, "heads", json_integer(m->heads));
    json_object_set_new(o, "kv_heads", json_integer(m->kv_heads));
    json_object_set_new(o, "vocab", json_integer(m->vocab));
    json_object_set_new(o, "max_seq", json_integer(m->max_seq));
    return o;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_models(void)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", cfg_datadir());
    DIR *d = opendir(dir);
    if (!d)
        return EXIT_OK;
    char *names[512];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 512)
        if (util_ends_with(de->d_name, ".cfg"))
            names[n++] = strndup(de->d_name, strlen(de->d_name) - 4);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        printf("%s\n", names[i]);
        free(names[i]);
    }
    return EXIT_OK;
}

static int run(int argc, char **argv, llm_err *e)
{
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'},
        {"list", no_argument, 0, 'l'},
        {"seq-len", required_argument, 0, 's'},
        {0, 0, 0, 0},
    };
    int json = 0, list = 0, ch;
    int seq = 0;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (ch) {
        case 'j': json = 1; break;
        case 'l': list = 1; break;
        case 's':
            if (cmd_setting_int(EXP_TRAIN, "seq-len", optarg, &seq, e))
                return EXIT_BAD_INPUT;
            break;
        case ':':
            err_set(e, "option %s needs a value", argv[optind - 1]);
            return EXIT_BAD_INPUT;
        default:
            cmd_bad_option("model", argv[optind - 1], opts, e);
            return EXIT_BAD_INPUT;
        }
    }
    if (list)
        return list_models();
    if (optind != argc - 1) {
        err_set(e, "expected one model name or file, got %d (see `llmsim "
                   "model --list`)", argc - optind);
        return EXIT_BAD_INPUT;
    }
    model_spec m;
    if (cfg_load_model_named(argv[optind], &m, e))
        return EXIT_BAD_INPUT;
    int s = seq > 0 ? (int)seq : m.max_seq;
    if (json)
        cmd_print_json(model_json(&m, s));
    else
        print_human(&m, s);
    return EXIT_OK;
}

const cmd_def cmd_model_def = {
    "model", "parameters, FLOPs per token and KV-cache size of a model",
    usage, run, 0, NULL};
