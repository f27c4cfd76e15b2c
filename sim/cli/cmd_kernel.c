/* llmsim kernel — one op's predicted time on one GPU, and why. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cli/cmd.h"
#include "cost/cost.h"
#include "base/util.h"
#include "report/rkernel.h"

static const char usage[] =
    "usage: llmsim kernel --gpu NAME OP [--dtype D] [--tp N] [--fallback F]\n"
    "                     [--json]\n\n"
    "Predicts one operation's time: its FLOPs and bytes, the roofline bound\n"
    "(FLOPs at the dtype's dense peak or bytes at the memory bandwidth), the\n"
    "efficiency looked up in calib/<gpu>/ over its shape, and the launch\n"
    "overhead.  OP is one of:\n"
    "  --gemm MxNxK           A[M x K] times B[K x N]; --batch B for B of them;\n"
    "                         --tp N splits N over N GPUs (column parallel)\n"
    "  --attention prefill|decode --batch B --heads H [--kv-heads H]\n"
    "                         --head-dim D --seq S [--q-len Q] [--causal]\n"
    "                         [--no-flash] [--attention-kernel NAME]\n"
    "                         [--backward]\n"
    "                         (a fused kernel of calib/attention-kernels.tsv\n"
    "                         at its own rates, forward or backward)\n"
    "  --norm RxC  --softmax RxC  --embedding RxC (rows x columns)\n"
    "  --elementwise N [--reads R] [--writes W] [--activation] [--row C]\n"
    "  --rope TxC             rotary embedding of T tokens, C elements of\n"
    "                         q and k heads each\n"
    "A memory-bound op's thread blocks each loop over a row (--row C: C\n"
    "elements; a norm's, softmax's or embedding's columns; rope's C): with\n"
    "few rows its time is that loop's latency (calib/memory-kernels.tsv).\n"
    "  --optimizer N          Adam update of N parameters\n"
    "  --memcpy h2d|d2h --bytes B\n"
    "--dtype fp32|tf32|fp16|bf16|fp8 (bf16).  A GPU that lacks a capability\n"
    "(BF16 or FlashAttention on V100, FP8 before Ada/Hopper) is an error unless\n"
    "--fallback dtype (bf16->fp16, fp8->bf16/fp16) or --fallback unfused is\n"
    "given; the output then names the fallback.  --calib DIR uses the tables\n"
    "in DIR (gemm.tsv, hbm.tsv, attention.tsv, launch.tsv) instead of\n"
    "calib/<gpu>/.\n\n"
    "JSON keys: time_s, tflops, bound, calibration, and flops, bytes,\n"
    "kernel_s, launch_s, efficiency, fallback.\n";

enum {
    K_GPU = 300, K_GEMM, K_ATTN, K_NORM, K_SOFTMAX, K_EMB, K_ELEM, K_OPT,
    K_MEMCPY, K_DTYPE, K_TP, K_BATCH, K_HEADS, K_KVH, K_HD, K_SEQ, K_QLEN,
    K_CAUSAL, K_NOFLASH, K_READS, K_WRITES, K_ACT, K_BYTES, K_FALLBACK, K_JSON,
    K_CALIB, K_ROPE, K_ROW, K_AKERNEL, K_BACKWARD
};

static int dims(const char *opt, const char *s, double *v, int n, llm_err *e)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL, *tok = strtok_r(buf, "xX", &save);
    for (int i = 0; i < n; i++, tok = strtok_r(NULL, "xX", &save)) {
        char *end;
        if (!tok || (v[i] = strtod(tok, &end), *end != '\0') || v[i] < 1 ||
            !isfinite(v[i]))
            return err_set(e, "%s: \"%s\" (expected %s of positive integers)",
                           opt, s, n == 3 ? "MxNxK" : "ROWSxCOLS");
    }
    if (tok)
        return err_set(e, "%s: \"%s\" has too many dimensions", opt, s);
    return 0;
}

typedef struct kopts {
    cost_op op;
    const char *gpu, *calib;
    const char *attn_kernel; /* --attention-kernel NAME */
    int have_op, json;
    unsigned fallbacks;
    int tp;
    double tp_n; /* N before the TP split, for the message */
} kopts;

static int num(const char *opt, const char *v, double lo, double *out,
               llm_err *e)
{
    return util_parse_double(opt, v, lo, 1e18, out, e);
}

static int parse_one(void *ctx, int ch, const char *v, llm_err *e)
{
    kopts *o = ctx;
    double x;
    cost_op *op = &o->op;
    switch (ch) {
    case K_GPU: o->gpu = v; return 0;
    case K_JSON: o->json = 1; return 0;
    case K_CALIB: o->calib = v; return 0;
    case K_GEMM:
        o->have_op++;
        op->kind = OP_GEMM;
        return dims("--gemm", v, &op->m, 3, e);
    case K_ATTN:
        o->have_op++;
        if (strcmp(v, "prefill") && strcmp(v, "decode"))
            return err_set(e, "--attention: \"%s\" (expected prefill or "
                              "decode)", v);
        op->kind = v[0] == 'p' ? OP_ATTN_PREFILL : OP_ATTN_DECODE;
        return 0;
    case K_NORM: case K_SOFTMAX: case K_EMB: case K_ROPE: {
        /* ROWSxCOLS ops: each thread block loops over a row of COLS */
        static const struct { int ch; const char *opt; cost_kind kind; }
            rc[] = {{K_NORM, "--norm", OP_NORM},
                    {K_SOFTMAX, "--softmax", OP_SOFTMAX},
                    {K_EMB, "--embedding", OP_EMBEDDING},
                    {K_ROPE, "--rope", OP_ELEMENTWISE}};
        int i = 0;
        while (rc[i].ch != ch)
            i++;
        double d[2];
        o->have_op++;
        op->kind = rc[i].kind;
        if (ch == K_ROPE)
            op->mem = MEM_ROPE, op->reads = op->writes = 1;
        if (dims(rc[i].opt, v, d, 2, e))
            return -1;
        op->elems = d[0] * d[1];
        op->row_elems = d[1];
        return 0;
    }
    case K_ROW: return num("--row", v, 1, &op->row_elems, e);
    case K_ELEM: o->have_op++; op->kind = OP_ELEMENTWISE; return num("--elementwise", v, 1, &op->elems, e);
    case K_OPT: o->have_op++; op->kind = OP_OPTIMIZER; return num("--optimizer", v, 1, &op->elems, e);
    case K_MEMCPY:
        o->have_op++;
        if (strcmp(v, "h2d") && strcmp(v, "d2h"))
            return err_set(e, "--memcpy: \"%s\" (expected h2d or d2h)", v);
        op->kind = v[0] == 'h' ? OP_MEMCPY_H2D : OP_MEMCPY_D2H;
        return 0;
    case K_DTYPE:
        if (dtype_parse(v, &op->dt) != 0 || op->dt == DT_INT4 || op->dt == DT_FP64)
            return err_set(e, "--dtype: unknown value \"%s\" (expected "
                              "fp32|tf32|fp16|bf16|fp8|int8)", v);
        return 0;
    case K_TP: return cmd_setting_int(EXP_TRAIN, "tp", v, &o->tp, e);
    case K_BATCH: return num("--batch", v, 1, &op->batch, e);
    case K_HEADS: if (num("--heads", v, 1, &x, e)) return -1; op->heads = (int)x; return 0;
    case K_KVH: if (num("--kv-heads", v, 1, &x, e)) return -1; op->kv_heads = (int)x; return 0;
    case K_HD: if (num("--head-dim", v, 1, &x, e)) return -1; op->head_dim = (int)x; return 0;
    case K_SEQ: return num("--seq", v, 1, &op->kv_len, e);
    case K_QLEN: return num("--q-len", v, 1, &op->q_len, e);
    case K_CAUSAL: op->causal = true; return 0;
    case K_NOFLASH: op->flash = false; return 0;
    case K_AKERNEL:
        if (strlen(v) >= sizeof ((cost_calib *)0)->attn_k[0].name)
            return err_set(e, "--attention-kernel: \"%s\" is too long "
                              "(expected a name of calib/attention-kernels.tsv)",
                           v);
        o->attn_kernel = v;
        return 0;
    case K_BACKWARD: op->backward = true; return 0;
    case K_READS: if (num("--reads", v, 1, &x, e)) return -1; op->reads = (int)x; return 0;
    case K_WRITES: if (num("--writes", v, 1, &x, e)) return -1; op->writes = (int)x; return 0;
    case K_ACT: op->mem = MEM_ACTIVATION; return 0;
    case K_BYTES: return util_parse_size("--bytes", v, &op->bytes, e);
    case K_FALLBACK:
        if (strcmp(v, "dtype") == 0)
            o->fallbacks |= COST_FALLBACK_DTYPE;
        else if (strcmp(v, "unfused") == 0)
            o->fallbacks |= COST_FALLBACK_UNFUSED;
        else
            return err_set(e, "--fallback: \"%s\" (expected dtype or "
                              "unfused)", v);
        return 0;
    }
    return -1;
}

static int parse(int argc, char **argv, kopts *o, llm_err *e)
{
    static const struct option opts[] = {
        {"gpu", 1, 0, K_GPU}, {"gemm", 1, 0, K_GEMM},
        {"attention", 1, 0, K_ATTN}, {"norm", 1, 0, K_NORM},
        {"softmax", 1, 0, K_SOFTMAX}, {"embedding", 1, 0, K_EMB},
        {"elementwise", 1, 0, K_ELEM}, {"optimizer", 1, 0, K_OPT},
        {"memcpy", 1, 0, K_MEMCPY}, {"dtype", 1, 0, K_DTYPE},
        {"tp", 1, 0, K_TP}, {"batch", 1, 0, K_BATCH},
        {"heads", 1, 0, K_HEADS}, {"kv-heads", 1, 0, K_KVH},
        {"head-dim", 1, 0, K_HD}, {"seq", 1, 0, K_SEQ},
        {"q-len", 1, 0, K_QLEN}, {"causal", 0, 0, K_CAUSAL},
        {"no-flash", 0, 0, K_NOFLASH}, {"reads", 1, 0, K_READS},
        {"rope", 1, 0, K_ROPE}, {"row", 1, 0, K_ROW},
        {"writes", 1, 0, K_WRITES}, {"activation", 0, 0, K_ACT},
        {"bytes", 1, 0, K_BYTES}, {"fallback", 1, 0, K_FALLBACK},
        {"json", 0, 0, K_JSON}, {"calib", 1, 0, K_CALIB},
        {"attention-kernel", 1, 0, K_AKERNEL}, {"backward", 0, 0, K_BACKWARD},
        {0, 0, 0, 0},
    };
    if (cmd_getopt("kernel", argc, argv, opts, parse_one, o, e))
        return -1;
    if (optind < argc)
        return err_set(e, "unexpected argument \"%s\"", argv[optind]);
    if (!o->gpu)
        return err_set(e, "--gpu NAME is required (`llmsim gpus` lists them)");
    if (o->have_op != 1)
        return err_set(e, "expected exactly one op (--gemm, --attention, "
                          "--norm, ...; see `llmsim help kernel`)");
    cost_op *op = &o->op;
    if (op->kind == OP_GEMM && o->tp > 1) {
        o->tp_n = op->n;
        if (fmod(op->n, (double)o->tp) != 0)
            return err_set(e, "--tp %d does not divide N = %.0f", o->tp, op->n);
        op->n /= (double)o->tp;
    }
    if ((op->kind == OP_ATTN_PREFILL || op->kind == OP_ATTN_DECODE)) {
        if (!op->heads || !op->head_dim || op->kv_len <= 0)
            return err_set(e, "--attention needs --heads, --head-dim and "
                              "--seq");
        if (!op->kv_heads)
            op->kv_heads = op->heads;
        if (op->heads % op->kv_heads)
            return err_set(e, "--kv-heads %d must divide --heads %d",
                           op->kv_heads, op->heads);
        if (op->q_len <= 0)
            op->q_len = op->kind == OP_ATTN_DECODE ? 1 : op->kv_len;
        if (op->batch <= 0)
            op->batch = 1;
    } else if (o->attn_kernel || op->backward) {
        return err_set(e, "--attention-kernel and --backward go with "
                          "--attention");
    }
    if ((op->kind == OP_MEMCPY_H2D || op->kind == OP_MEMCPY_D2H) &&
        op->bytes <= 0)
        return err_set(e, "--memcpy needs --bytes");
    return 0;
}

static int run(int argc, char **argv, llm_err *e)
{
    kopts o;
    memset(&o, 0, sizeof o);
    o.op.dt = DT_BF16;
    o.op.flash = true;
    o.op.batch = 1;
    if (parse(argc, argv, &o, e))
        return EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    gpu_catalog cat;
    if (cfg_load_catalog(&cat, e))
        return EXIT_BAD_INPUT;
    const gpu_spec *g = cfg_find_gpu(&cat, o.gpu, e);
    cost_calib c;
    cost_result r;
    int rc = EXIT_BAD_INPUT;
    if (!g || (o.calib ? cfg_load_cost_dir(o.calib, g, true, &c, e)
                       : cfg_load_cost_calib(cfg_datadir(), &cat, g, &c, e))) {
        gpu_catalog_free(&cat);
        return EXIT_BAD_INPUT;
    }
    band_table bands = {0};
    if (o.attn_kernel && o.op.flash &&
        (o.op.attn_kernel = cost_attn_kernel_need(&c, g, o.attn_kernel, e)) < 0)
        goto out;
    o.op.explain = true; /* the report names the rows used */
    if (cost_predict(&c, g, &o.op, o.fallbacks, &r, e) ||
        cfg_load_bands(cfg_datadir(), &bands, e))
        goto out;
    char key[BAND_KEY];
    band_est b;
    band_kernel_key(key, sizeof key, rkernel_band_op(&o.op), g->name);
    band_find(&bands, key, &b);
    if (o.json)
        cmd_print_json(rkernel_json(g, &o.op, &r, &b));
    else
        rkernel_text(stdout, g, &o.op, &r, o.tp, o.tp_n, &b);
    rc = EXIT_OK;
out:
    band_table_free(&bands);
    cost_calib_free(&c);
    gpu_catalog_free(&cat);
    return rc;
}

const cmd_def cmd_kernel_def = {
    "kernel", "predicted time of one op (GEMM, attention, ...) on a GPU",
    usage, run, 0, NULL};
