/* llmsim memory — does a model fit, where the memory goes, what to do when
 * it does not, and the cheapest GPU set that fits. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "mem/mem.h"
#include "report/rmemory.h"

static const char usage[] =
    "usage: llmsim memory --model M --gpu G[,G...] [--inference] [options]\n"
    "       llmsim memory --model M --gpu G --train [options]\n"
    "       llmsim memory --model M --recommend [--train] [options]\n\n"
    "Per-GPU memory, broken down, with a verdict for each GPU; when it does\n"
    "not fit, the remedies (each one computed) in the order that saves most.\n"
    "--recommend lists, for every catalog GPU, the fewest GPUs that fit and\n"
    "their price, cheapest first.\n\n"
    "The plan and the overheads are the settings listed below: an\n"
    "inference plan by default, a training plan with --train.  Overheads are\n"
    "stated in the output, never hidden.\n\n"
    "output:\n"
    "  --json                 weights_bytes, gradients_bytes, optimizer_bytes,\n"
    "                         activations_bytes, kv_cache_bytes, overhead_bytes,\n"
    "                         total_bytes, gpu_memory_bytes, fits, remedies\n"
    "                         (an array of such objects for several GPUs)\n\n"
    "Exit status: 0 fits (on at least one GPU given), 1 bad input, 2 does not fit.\n";

typedef struct opts {
    const char *gpus;
    int train, infer, recommend, json;
    plan_train t;
    plan_infer i;
    mem_overhead o;
} opts;

enum { O_GPU = 1, O_TRAIN, O_INFER, O_RECOMMEND, O_JSON };

static const struct option longopts[] = {
    {"gpu", required_argument, 0, O_GPU},
    {"train", no_argument, 0, O_TRAIN},
    {"inference", no_argument, 0, O_INFER},
    {"recommend", no_argument, 0, O_RECOMMEND},
    {"json", no_argument, 0, O_JSON},
    {0, 0, 0, 0},
};

static int parse_one(void *ctx, int ch, const char *v, llm_err *e)
{
    opts *o = ctx;
    (void)e;
    switch (ch) {
    case O_GPU: o->gpus = v; return 0;
    case O_TRAIN: o->train = 1; return 0;
    case O_INFER: o->infer = 1; return 0;
    case O_RECOMMEND: o->recommend = 1; return 0;
    case O_JSON: o->json = 1; return 0;
    }
    return -1;
}

/* Memory needs a model and a plan: a cluster, its links or a data loader
 * are the simulating commands' settings. */
static bool takes(const setting *s, exp_kind k)
{
    const char *key = s->at[k].key;
    return !key || strcmp(key, "model") == 0 ||
           strncmp(key, "parallel.", 9) == 0 ||
           strncmp(key, "overhead.", 9) == 0;
}

/* The plan of the mode --train picks (training or inference), from the
 * settings table's flags; the model named by --model. */
static int parse(int argc, char **argv, opts *o, char *model, size_t len,
                 llm_err *e)
{
    bool train = false;
    for (int i = 1; i < argc; i++)
        train |= strcmp(argv[i], "--train") == 0;
    exp_kind k = train ? EXP_TRAIN : EXP_INFER;
    cmd_args a;
    if (cmd_parse("memory", k, train ? EXP_INFER : EXP_TRAIN,
                  train ? "--%s is an inference option (drop --train)"
                        : "--%s is a training option (add --train)",
                  argc, argv, longopts, parse_one, o, &a, e))
        return -1;
    if (a.file)
        return err_set(e, "unexpected argument \"%s\" (options start with "
                          "--; see `llmsim help memory`)", a.file);
    for (int i = 0; i < a.nflags; i++)
        if (!takes(a.flag[i], k))
            return err_set(e, "--%s is not a memory option (it is `llmsim "
                              "train`'s; see `llmsim help memory`)",
                           a.flag[i]->flag);
    static exp_train x;
    static exp_infer y;
    if (train) {
        exp_train_defaults(&x);
        if (cmd_load_exp(k, &x, &a, e))
            return -1;
        o->t = x.plan;
        if (x.microbatches > 0 && x.plan.dp > 0)
            o->t.global_batch = x.plan.micro_batch * x.plan.dp * x.microbatches;
        else if (x.microbatches > 0 || x.plan.dp == 0)
            return err_set(e, "--dp 0 (fill the cluster) needs a cluster: "
                              "give memory --dp N");
        snprintf(model, len, "%s", x.model);
        exp_overhead_apply(&o->o, &x.overhead);
    } else {
        exp_infer_defaults(&y);
        if (cmd_load_exp(k, &y, &a, e))
            return -1;
        o->i = y.plan;
        snprintf(model, len, "%s", y.model);
        exp_overhead_apply(&o->o, &y.overhead);
    }
    if (!model[0])
        return err_set(e, "--model is required (a name such as llama-2-7b, "
                          "a .cfg or a config.json)");
    if (o->train && o->infer)
        return err_set(e, "--train and --inference are exclusive");
    if (!o->gpus && !o->recommend)
        return err_set(e, "--gpu NAME[,NAME...] is required (or "
                          "--recommend); `llmsim gpus` lists the names");
    return 0;
}

/* ---- recommend --------------------------------------------------------- */

static int by_price(const void *a, const void *b)
{
    const mem_choice *x = a, *y = b;
    int fx = x->gpus > 0, fy = y->gpus > 0;
    if (fx != fy)
        return fy - fx;
    int px = x->price_usd > 0, py = y->price_usd > 0;
    if (px != py)
        return py - px;
    if (x->price_usd != y->price_usd)
        return x->price_usd < y->price_usd ? -1 : 1;
    if (x->gpus != y->gpus)
        return x->gpus - y->gpus;
    return strcmp(x->gpu->name, y->gpu->name);
}

/* What was asked, for the report. */
static rmemory_case case_of(const opts *o, const model_spec *m)
{
    return (rmemory_case){.m = m, .train = o->train, .t = &o->t, .i = &o->i,
                          .o = &o->o};
}

/* For every catalog GPU the fewest that fit, cheapest first.  The search
 * goes to 16,384 GPUs for training, 1,024 for one inference replica. */
static int recommend(const opts *o, const model_spec *m, const gpu_catalog *c)
{
    mem_choice *ch = calloc((size_t)c->n, sizeof *ch);
    if (!ch)
        return EXIT_BAD_INPUT;
    int limit = o->train ? 16384 : 1024;
    for (int i = 0; i < c->n; i++) {
        if (o->train)
            mem_recommend_train(m, &o->t, &o->o, &c->gpus[i], limit, &ch[i]);
        else
            mem_recommend_infer(m, &o->i, &o->o, &c->gpus[i], limit, &ch[i]);
    }
    qsort(ch, (size_t)c->n, sizeof *ch, by_price);
    rmemory_case rc = case_of(o, m);
    if (o->json)
        cmd_print_json(rmemory_recommend_json(&rc, ch, c->n));
    else
        rmemory_recommend_text(stdout, &rc, ch, c->n, limit);
    free(ch);
    return EXIT_OK;
}

/* ---- run ----------------------------------------------------------------- */

static int split_gpus(const char *list, char names[][128], int cap)
{
    int n = 0;
    const char *p = list;
    while (*p && n < cap) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        snprintf(names[n++], 128, "%.*s", (int)len, p);
        p += len + (comma ? 1 : 0);
    }
    return n;
}

/* A precision the GPU lacks: inference and bf16/fp16 training run it as
 * fp16 at the same footprint (a note says so); fp8 training cannot. */
static int check_capabilities(const opts *o, const gpu_spec *g, llm_err *e)
{
    const char *why = NULL;
    dtype d = o->train ? o->t.precision : o->i.weight_dtype;
    if (!gpu_supports_dtype(g, d, &why) && d != DT_FP8)
        rmemory_emulated_text(stdout, g, d, why);
    if (!gpu_supports_dtype(g, d, &why) && d == DT_FP8 && o->train)
        return err_set(e, "--precision fp8 on %s: %s (expected a Hopper, Ada "
                          "or Blackwell GPU, or --precision bf16)",
                       g->name, why);
    return 0;
}

enum { MAX_GPUS = 16 }; /* names after --gpu that are kept */

/* The GPUs named by --gpu into v[0..*n), each checked for the plan's
 * precision as it is found (the text notes come before the table).
 * Indices first: cfg_find_gpu may grow (and move) the catalog when a name
 * is a file. */
static int find_gpus(const opts *o, gpu_catalog *cat, rmemory_verdict *v,
                     int *n, llm_err *e)
{
    char names[MAX_GPUS][128];
    int idx[MAX_GPUS];
    *n = split_gpus(o->gpus, names, MAX_GPUS);
    for (int k = 0; k < *n; k++) {
        const gpu_spec *g = cfg_find_gpu(cat, names[k], e);
        if (!g)
            return -1;
        idx[k] = (int)(g - cat->gpus);
        if (!o->json && check_capabilities(o, g, e))
            return -1;
    }
    for (int k = 0; k < *n; k++) {
        v[k].g = &cat->gpus[idx[k]];
        v[k].nrm = 0;
    }
    return 0;
}

/* Each GPU's remedies where the breakdown does not fit; whether it fits
 * on at least one. */
static bool find_remedies(const opts *o, const model_spec *m,
                          const mem_result *r, rmemory_verdict *v, int n)
{
    bool fits_any = false;
    for (int k = 0; k < n; k++) {
        const gpu_spec *g = v[k].g;
        if (r->total <= g->memory_bytes) {
            fits_any = true;
            continue;
        }
        v[k].nrm = o->train ? mem_train_remedies(m, &o->t, &o->o, g, v[k].rm)
                            : mem_infer_remedies(m, &o->i, &o->o, g, v[k].rm);
    }
    return fits_any;
}

/* The breakdown, then a verdict (and remedies) for each GPU of --gpu. */
static int report(const opts *o, const model_spec *m, gpu_catalog *cat,
                  llm_err *e)
{
    rmemory_verdict v[MAX_GPUS];
    int n;
    if (find_gpus(o, cat, v, &n, e))
        return EXIT_BAD_INPUT;
    mem_result r;
    if (o->train)
        mem_train_breakdown(m, &o->t, &o->o, &r);
    else
        mem_infer_breakdown(m, &o->i, &o->o, &r);
    bool fits_any = find_remedies(o, m, &r, v, n);
    rmemory_case c = case_of(o, m);
    if (o->json)
        cmd_print_json(rmemory_json(&c, &r, v, n));
    else
        rmemory_text(stdout, &c, &r, v, n);
    return fits_any ? EXIT_OK : EXIT_NO_FIT;
}

/* Inference defaults that depend on the model: its max_seq and dtype. */
static void fill_infer_defaults(plan_infer *i, const model_spec *m)
{
    if (i->context == 0)
        i->context = m->max_seq;
    if (i->weight_dtype == DT_COUNT)
        i->weight_dtype = m->weight_dtype;
}

static int run(int argc, char **argv, llm_err *e)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (cfg_load_overhead(cfg_datadir(), NULL, &o.o, e))
        return EXIT_BAD_INPUT;
    char name[256] = "";
    if (parse(argc, argv, &o, name, sizeof name, e))
        return EXIT_BAD_INPUT;
    model_spec m;
    if (cfg_load_model_named(name, &m, e))
        return EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    fill_infer_defaults(&o.i, &m);
    /* --recommend alone checks each layout it tries, not the given one */
    bool check = o.gpus != NULL;
    if (check && (o.train ? plan_train_check(&m, &o.t, e)
                          : plan_infer_check(&m, &o.i, e)))
        return EXIT_BAD_INPUT;
    gpu_catalog cat;
    if (cfg_load_catalog(&cat, e))
        return EXIT_BAD_INPUT;
    int rc = o.recommend && !o.gpus ? recommend(&o, &m, &cat)
                                    : report(&o, &m, &cat, e);
    if (o.recommend && o.gpus && rc != EXIT_BAD_INPUT) {
        rmemory_section_break(stdout);
        recommend(&o, &m, &cat);
    }
    gpu_catalog_free(&cat);
    return rc;
}

const cmd_def cmd_memory_def = {
    "memory", "per-GPU memory for training or inference: fits? remedies? "
              "cheapest GPUs",
    usage, run, 1u << EXP_INFER | 1u << EXP_TRAIN, takes};
