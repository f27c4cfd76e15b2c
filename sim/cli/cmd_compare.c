/* llmsim compare — one workload (training, serving or both) on two or more
 * clusters, side by side, with what each costs, and a verdict. */
#include <getopt.h>
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/cfg_util.h"
#include "cli/cmd.h"
#include "cli/cmd_compare.h"
#include "decide/econ.h"
#include "decide/search.h"
#include "base/util.h"

static const char usage[] =
    "usage: llmsim compare COMPARE.cfg [--png FILE.png] [--json]\n"
    "           [--no-search]\n\n"
    "Runs one training experiment and/or one serving experiment on every\n"
    "cluster of the compare file and prints them side by side: step time,\n"
    "tokens/s, MFU, memory headroom and the plan (training); throughput,\n"
    "goodput under the SLOs and p90 latencies (serving); then for each the\n"
    "purchase price, TDP and modelled power, energy per million tokens,\n"
    "tokens per dollar (price amortized over the stated years plus\n"
    "electricity at the stated price and PUE), and for training the time\n"
    "and cost of training the stated number of tokens.  Ends with a verdict\n"
    "and its biggest reason, from the GPUs' datasheet ratios.\n\n"
    "Each cluster gets its best training plan from `llmsim search` and its\n"
    "best serving deployment from the serving search (highest goodput),\n"
    "unless search = false in the file or --no-search: then the\n"
    "experiment files' own plans run as written.\n\n"
    "The compare file:\n"
    "  description = \"...\";\n"
    "  training = \"configs/train-....cfg\";   # optional\n"
    "  serving  = \"configs/serve-....cfg\";   # optional (one of the two)\n"
    "  clusters = ( { name = \"8 x A100\"; cluster = \"dgx-a100\"; gpus = 8; },\n"
    "               { name = \"4 x H100\"; cluster = \"dgx-h100\"; gpus = 4;\n"
    "                 set = ( \"serving.dtype=fp8\" ); } );\n"
    "  economics = { amortization_years = 3.0; usd_per_kwh = 0.10;\n"
    "                pue = 1.3; server_usd_per_gpu = 0.0; };\n"
    "  train_tokens = 1.0e9;   # time and cost to train this many\n"
    "  search = true;\n\n"
    "--png renders the comparison as bars (each metric relative to the\n"
    "first cluster; higher is better) with gnuplot (SVG when FILE ends in\n"
    ".svg).  JSON keys: clusters\n"
    "[{name, gpu, gpus, purchase_usd, tdp_w, training {...}, serving\n"
    "{...}}], verdict.\n";

/* What one cluster did. */
typedef struct outcome {
    const gpu_spec *gpu;
    int gpus;
    double purchase_usd;
    json_t *train, *serve;       /* the commands' JSON */
    char train_plan[200], serve_plan[96];
    econ_result te, se;          /* economics of training and serving */
    char error[2][600];          /* why training / serving has no result */
} outcome;

/* ---- the file ------------------------------------------------------------- */

static int load_cluster(cfgu *c, const config_setting_t *g,
                        cmd_compare_cluster *s)
{
    static const char *const keys[] = {"name", "cluster", "gpus", "nodes",
                                       "set"};
    if (cfgu_check_keys(c, g, keys, 5) ||
        cfgu_str(c, g, "cluster", true, s->cluster, sizeof s->cluster) ||
        cfgu_str(c, g, "name", false, s->name, sizeof s->name) ||
        cfgu_int(c, g, "gpus", false, 1, 1 << 24, &s->gpus) ||
        cfgu_int(c, g, "nodes", false, 1, 1 << 20, &s->nodes))
        return -1;
    /* a cluster that does not exist is a mistake in this file, not a
     * cluster that cannot run the workload */
    cmd_topo_size_t z;
    llm_err why = {{0}};
    if (cmd_topo_size(s->cluster, 0, &z, &why)) {
        const char *m = why.msg;
        if (strncmp(m, "--cluster: ", 11) == 0)
            m += 11;
        return err_at(c->e, c->file,
                      cfgu_line(config_setting_get_member(g, "cluster")),
                      "cluster", "%s", m);
    }
    if (!s->name[0])
        memcpy(s->name, s->cluster, sizeof s->name - 1);
    const config_setting_t *set = config_setting_get_member(g, "set");
    int n = set ? config_setting_length(set) : 0;
    if (set && !config_setting_is_list(set) && !config_setting_is_array(set))
        n = -1;
    for (int i = 0; i < n && i < 16; i++) {
        const char *v = config_setting_get_string_elem(set, i);
        if (!v) {
            n = -1;
            break;
        }
        snprintf(s->sets[s->nsets++], sizeof s->sets[0], "%s", v);
    }
    if (n < 0 || n > 16)
        return err_at(c->e, c->file, cfgu_line(set), "set", "expected a list "
                      "of at most 16 \"KEY=VALUE\" strings");
    return 0;
}

int cmd_compare_load(const char *path, cmd_compare_file *f, llm_err *e)
{
    static const char *const keys[] = {"description", "training", "serving",
                                       "clusters", "economics",
                                       "train_tokens", "search"};
    static const char *const econ_keys[] = {"amortization_years",
                                            "usd_per_kwh", "pue",
                                            "server_usd_per_gpu"};
    memset(f, 0, sizeof *f);
    if (cfg_load_econ(cmd_datadir(), &f->econ, e))
        return -1;
    f->train_tokens = 1e9;
    f->search = true;
    cfgu c = {path, e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read(&c, &cfg))
        goto out;
    const config_setting_t *r = config_root_setting(&cfg);
    config_setting_t *ec;
    if (cfgu_check_keys(&c, r, keys, 7) ||
        cfgu_str(&c, r, "description", false, f->desc, sizeof f->desc) ||
        cfgu_str(&c, r, "training", false, f->training, sizeof f->training) ||
        cfgu_str(&c, r, "serving", false, f->serving, sizeof f->serving) ||
        cfgu_double(&c, r, "train_tokens", false, 1, 1e18, &f->train_tokens) ||
        cfgu_bool(&c, r, "search", false, &f->search) ||
        cfgu_group(&c, r, "economics", &ec))
        goto out;
    if (ec && (cfgu_check_keys(&c, ec, econ_keys, 4) ||
               cfgu_double(&c, ec, "amortization_years", false, 0.01, 100,
                           &f->econ.amortization_years) ||
               cfgu_double(&c, ec, "usd_per_kwh", false, 0, 100,
                           &f->econ.usd_per_kwh) ||
               cfgu_double(&c, ec, "pue", false, 1, 10, &f->econ.pue) ||
               cfgu_double(&c, ec, "server_usd_per_gpu", false, 0, 1e9,
                           &f->econ.server_usd_per_gpu)))
        goto out;
    if (!f->training[0] && !f->serving[0]) {
        err_at(e, path, 1, "training", "missing, and so is serving (expected "
               "training = \"EXPERIMENT.cfg\"; or serving = \"...\";)");
        goto out;
    }
    const config_setting_t *cl = config_setting_get_member(r, "clusters");
    if (!cl || !config_setting_is_list(cl) || config_setting_length(cl) < 2 ||
        config_setting_length(cl) > CMD_COMPARE_MAX) {
        err_at(e, path, cl ? cfgu_line(cl) : 1, "clusters", "expected a list "
               "of 2 to %d groups ( { name = ...; cluster = ...; gpus = ...; "
               "}, ... )", CMD_COMPARE_MAX);
        goto out;
    }
    for (int i = 0; i < config_setting_length(cl); i++) {
        const config_setting_t *g = config_setting_get_elem(cl, i);
        if (!config_setting_is_group(g)) {
            err_at(e, path, cfgu_line(g), "clusters", "entry %d is not a "
                   "group (expected { name = ...; cluster = ...; })", i + 1);
            goto out;
        }
        if (load_cluster(&c, g, &f->c[f->n++]))
            goto out;
    }
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}

/* ---- running ---------------------------------------------------------------- */

/* argv for train/serve: the file, the cluster's sets, extra sets. */
typedef struct args {
    char *v[2 + 2 * 64 + 1];
    char buf[40][160];
    int n, nb;
} args;

static void args_init(args *a, const char *cmd, const char *file,
                      const cmd_compare_cluster *c)
{
    a->n = a->nb = 0;
    a->v[a->n++] = (char *)cmd;
    a->v[a->n++] = (char *)file;
    snprintf(a->buf[a->nb], sizeof a->buf[0], "cluster=%s", c->cluster);
    a->v[a->n++] = "--set";
    a->v[a->n++] = a->buf[a->nb++];
    if (c->gpus) {
        snprintf(a->buf[a->nb], sizeof a->buf[0], "gpus=%d", c->gpus);
        a->v[a->n++] = "--set";
        a->v[a->n++] = a->buf[a->nb++];
    }
    if (c->nodes) {
        snprintf(a->buf[a->nb], sizeof a->buf[0], "nodes=%d", c->nodes);
        a->v[a->n++] = "--set";
        a->v[a->n++] = a->buf[a->nb++];
    }
    for (int i = 0; i < c->nsets; i++) {
        a->v[a->n++] = "--set";
        a->v[a->n++] = (char *)c->sets[i];
    }
    a->v[a->n] = NULL;
}

static void args_set(args *a, const char *fmt, long v)
{
    if (a->nb >= 40 || a->n > 2 * 64 - 2)
        return;
    snprintf(a->buf[a->nb], sizeof a->buf[0], fmt, v);
    a->v[a->n++] = "--set";
    a->v[a->n++] = a->buf[a->nb++];
    a->v[a->n] = NULL;
}

static void args_str(args *a, const char *key, const char *v)
{
    if (a->nb >= 40 || a->n > 2 * 64 - 2)
        return;
    snprintf(a->buf[a->nb], sizeof a->buf[0], "%s=%s", key, v);
    a->v[a->n++] = "--set";
    a->v[a->n++] = a->buf[a->nb++];
    a->v[a->n] = NULL;
}

/* The training plan: searched, then simulated as `train` does it. */
static int run_training(const cmd_compare_file *f,
                        const cmd_compare_cluster *c, bool search,
                        outcome *o, llm_err *e)
{
    args a;
    args_init(&a, "train", f->training, c);
    if (search) {
        cfg_experiment x;
        memset(&x, 0, sizeof x);
        plan_train_defaults(&x.plan);
        train_loader_defaults(&x.loader);
        const char *sets[64];
        int ns = 0;
        for (int i = 2; i + 1 < a.n; i += 2)
            sets[ns++] = a.v[i + 1];
        if (cfg_load_experiment(f->training, sets, ns, &x, e))
            return -1;
        x.microbatches = 0;
        cmd_env v;
        search_result s;
        if (cmd_search_train(&x, 24, &s, &v, e))
            return -1;
        cmd_env_free(&v);
        if (s.nranked == 0) {
            search_free(&s);
            return err_set(e, "no plan fits (%ld tried: %ld model states "
                              "exceed memory, %ld activations)",
                           s.enumerated, s.dropped[SEARCH_MODEL_STATES],
                           s.dropped[SEARCH_ACTIVATIONS]);
        }
        const plan_train *p = &s.ranked[0].plan;
        args_set(&a, "parallel.tp=%ld", p->tp);
        args_set(&a, "parallel.pp=%ld", p->pp);
        args_set(&a, "parallel.dp=%ld", p->dp);
        args_set(&a, "parallel.cp=%ld", p->cp);
        args_set(&a, "parallel.ep=%ld", p->ep);
        args_str(&a, "parallel.sp", p->sp ? "true" : "false");
        args_set(&a, "parallel.micro_batch=%ld", p->micro_batch);
        args_set(&a, "parallel.zero=%ld", p->zero);
        args_set(&a, "parallel.vpp=%ld", p->vpp);
        args_str(&a, "parallel.recompute", plan_recompute_names[p->recompute]);
        args_str(&a, "parallel.schedule", plan_schedule_names[p->schedule]);
        search_plan_name(p, o->train_plan, sizeof o->train_plan);
        search_free(&s);
    }
    if (cmd_train_json(a.n, a.v, &o->train, e))
        return -1;
    if (!search) {
        /* the plan as it ran, for its name */
        json_t *pj = json_object_get(o->train, "plan");
        plan_train p;
        plan_train_defaults(&p);
        int *ints[] = {&p.tp, &p.pp, &p.dp, &p.cp, &p.ep, &p.micro_batch,
                       &p.zero, &p.vpp};
        const char *keys[] = {"tp", "pp", "dp", "cp", "ep", "micro_batch",
                              "zero", "vpp"};
        for (int k = 0; k < 8; k++)
            *ints[k] = (int)json_integer_value(json_object_get(pj, keys[k]));
        int v;
        if (cmd_pick("recompute", json_string_value(json_object_get(pj,
                     "recompute")), plan_recompute_names, 3, &v, e) == 0)
            p.recompute = (plan_recompute)v;
        if (cmd_pick("schedule", json_string_value(json_object_get(pj,
                     "schedule")), plan_schedule_names, 3, &v, e) == 0)
            p.schedule = (plan_schedule)v;
        search_plan_name(&p, o->train_plan, sizeof o->train_plan);
    }
    return 0;
}

static int run_serving(const cmd_compare_file *f, const cmd_compare_cluster *c,
                       bool search, outcome *o, llm_err *e)
{
    args a;
    args_init(&a, "serve", f->serving, c);
    if (search) {
        const char *sets[64];
        int ns = 0;
        for (int i = 2; i + 1 < a.n; i += 2)
            sets[ns++] = a.v[i + 1];
        return cmd_search_serve(f->serving, sets, ns, c->gpus, &o->serve,
                                o->serve_plan, sizeof o->serve_plan, e);
    }
    snprintf(o->serve_plan, sizeof o->serve_plan, "as in %s", f->serving);
    return cmd_serve_json(a.n, a.v, &o->serve, e);
}

static double num(json_t *j, const char *k)
{
    return json_number_value(json_object_get(j, k));
}

static double num2(json_t *j, const char *a, const char *b)
{
    return json_number_value(json_object_get(json_object_get(j, a), b));
}

static void evaluate(const cmd_compare_file *f, gpu_catalog *cat, outcome *o)
{
    json_t *j = o->train ? o->train : o->serve;
    if (!j)
        return;
    o->gpu = gpu_find(cat, json_string_value(json_object_get(j, "gpu")));
    o->gpus = (int)json_integer_value(json_object_get(j, "gpus"));
    double price = o->gpu ? o->gpu->price_usd : 0;
    econ_result tmp;
    econ_eval(&f->econ, o->gpus, price, 0, 0, &tmp);
    o->purchase_usd = tmp.purchase_usd;
    if (o->train)
        econ_eval(&f->econ, o->gpus, price,
                  num(o->train, "power_w_per_gpu") * o->gpus,
                  num(o->train, "tokens_per_s"), &o->te);
    if (o->serve)
        econ_eval(&f->econ, (int)num(o->serve, "gpus"), price,
                  num(o->serve, "avg_power_w"),
                  num(o->serve, "throughput_tokens_per_s"), &o->se);
}

/* ---- the verdict -------------------------------------------------------------- */

/* The winner (by tokens per dollar: training's, else serving's) and the
 * datasheet ratio that explains it best. */
static void verdict(const cmd_compare_file *f, const outcome *o, char *buf,
                    size_t n)
{
    int best_t = -1, best_s = -1;
    for (int i = 0; i < f->n; i++) {
        if (o[i].train && (best_t < 0 || o[i].te.tokens_per_usd >
                                             o[best_t].te.tokens_per_usd))
            best_t = i;
        if (o[i].serve && (best_s < 0 || o[i].se.tokens_per_usd >
                                             o[best_s].se.tokens_per_usd))
            best_s = i;
    }
    int w = best_t >= 0 ? best_t : best_s;
    if (w < 0) {
        snprintf(buf, n, "Verdict: no cluster ran the workload.");
        return;
    }
    /* the runner-up the verdict is against */
    int r = -1;
    for (int i = 0; i < f->n; i++)
        if (i != w && (o[i].train || o[i].serve) &&
            (r < 0 || (best_t >= 0 ? o[i].te.tokens_per_usd
                                   : o[i].se.tokens_per_usd) >
                          (best_t >= 0 ? o[r].te.tokens_per_usd
                                       : o[r].se.tokens_per_usd)))
            r = i;
    size_t len = (size_t)snprintf(buf, n, "Verdict: %s", f->c[w].name);
    if (r < 0) {
        snprintf(buf + len, n - len, " is the only cluster that runs it.");
        return;
    }
    if (best_t >= 0 && o[r].train)
        len += (size_t)snprintf(buf + len, n - len,
                                " gives %.2fx the training tokens per dollar "
                                "of %s (%.2fx the speed)",
                                o[w].te.tokens_per_usd /
                                    o[r].te.tokens_per_usd,
                                f->c[r].name,
                                num(o[w].train, "tokens_per_s") /
                                    num(o[r].train, "tokens_per_s"));
    else if (best_t >= 0)
        len += (size_t)snprintf(buf + len, n - len, " trains; %s cannot (%s)",
                                f->c[r].name, o[r].error[0]);
    if (best_s >= 0 && o[w].serve && o[r].serve && len < n)
        len += (size_t)snprintf(buf + len, n - len,
                                "%s %.2fx the serving tokens per dollar%s",
                                best_t >= 0 ? " and" : " gives",
                                o[w].se.tokens_per_usd /
                                    o[r].se.tokens_per_usd,
                                best_t >= 0 ? "" : "");
    if (len >= n || !o[w].gpu || !o[r].gpu)
        return;
    /* why: per-GPU datasheet ratios x GPU counts, the largest first */
    const gpu_spec *a = o[w].gpu, *b = o[r].gpu;
    dtype d = DT_BF16;
    const char *dn = "bf16";
    if (o[w].train) {
        const char *p = json_string_value(
            json_object_get(json_object_get(o[w].train, "plan"), "precision"));
        if (p && dtype_parse(p, &d) == 0)
            dn = p;
    }
    double ga = o[w].gpus, gb = o[r].gpus;
    double fl = ga * a->peak_flops[d] / (gb * b->peak_flops[d]);
    double bw = ga * a->mem_bw_Bps / (gb * b->mem_bw_Bps);
    double mem = ga * a->memory_bytes / (gb * b->memory_bytes);
    double price = o[w].purchase_usd / fmax(o[r].purchase_usd, 1);
    /* what carries it: training leans on FLOP/s, decoding on HBM */
    const char *carry = best_t >= 0 ? (fl >= bw ? "tensor FLOP/s"
                                                : "HBM bandwidth")
                                    : (bw >= fl ? "HBM bandwidth"
                                                : "tensor FLOP/s");
    len += (size_t)snprintf(buf + len, n - len,
                            ". Biggest reason: %s has %.2fx the %s tensor "
                            "FLOP/s, %.2fx the HBM bandwidth and %.2fx the "
                            "memory of %s at %.2fx the purchase price; the "
                            "%s carry it.",
                            f->c[w].name, fl, dn, bw, mem, f->c[r].name,
                            price, carry);
    bool fp8a = gpu_has(a, GPU_CAP_FP8), fp8b = gpu_has(b, GPU_CAP_FP8);
    if (len < n && fp8a != fp8b)
        snprintf(buf + len, n - len, " Only %s has FP8 tensor cores%s.",
                 fp8a ? f->c[w].name : f->c[r].name,
                 d == DT_FP8 ? ", and this workload uses them"
                             : ", which this workload does not use (set "
                               "precision = \"fp8\" to see them)");
}

/* ---- output ------------------------------------------------------------------ */

static void row(const cmd_compare_file *f, const char *label, const char *fmt,
                const double *v)
{
    printf("  %-34s", label);
    for (int i = 0; i < f->n; i++) {
        char cell[64];
        if (isnan(v[i]))
            snprintf(cell, sizeof cell, "-");
        else
            snprintf(cell, sizeof cell, fmt, v[i]);
        printf(" %20s", cell);
    }
    printf("\n");
}

static void print_human(const cmd_compare_file *f, const outcome *o,
                        const char *verdict_text)
{
    printf("%s\n\n  %-34s", f->desc[0] ? f->desc : "Comparison", "");
    for (int i = 0; i < f->n; i++)
        printf(" %20s", f->c[i].name);
    printf("\n");
    double v[CMD_COMPARE_MAX];
#define ROW(label, fmt, expr)                                                \
    do {                                                                     \
        for (int i_ = 0; i_ < f->n; i_++) {                                  \
            const outcome *x = &o[i_];                                       \
            v[i_] = (expr);                                                  \
        }                                                                    \
        row(f, label, fmt, v);                                               \
    } while (0)
    ROW("GPUs", "%.0f", x->gpus ? x->gpus : NAN);
    ROW("purchase (GPUs + servers), $", "%.0f", x->purchase_usd);
    ROW("TDP, all GPUs, W", "%.0f", x->gpu ? x->gpus * x->gpu->tdp_w : NAN);
    if (f->training[0]) {
        printf("\n  training: %s\n", f->training);
        for (int i = 0; i < f->n; i++)
            printf("    %-20s %s\n", f->c[i].name,
                   o[i].train ? o[i].train_plan : o[i].error[0]);
        ROW("step time, s", "%.3f",
            x->train ? num(x->train, "step_time_s") : NAN);
        ROW("tokens/s", "%.0f", x->train ? num(x->train, "tokens_per_s") : NAN);
        ROW("MFU", "%.3f", x->train ? num(x->train, "mfu") : NAN);
        ROW("memory peak, GiB", "%.1f",
            x->train ? num(x->train, "memory_peak_bytes") / GiB : NAN);
        ROW("memory headroom, GiB", "%.1f",
            x->train ? (num(x->train, "gpu_memory_bytes") -
                        num(x->train, "memory_peak_bytes")) / GiB
                     : NAN);
        ROW("modelled power, W", "%.0f", x->train ? x->te.power_w : NAN);
        ROW("energy per M tokens, kWh", "%.3f",
            x->train ? x->te.energy_j_per_mtok / 3.6e6 : NAN);
        ROW("cost per hour, $", "%.2f", x->train ? x->te.usd_per_h : NAN);
        ROW("tokens per $", "%.0f", x->train ? x->te.tokens_per_usd : NAN);
        char lab[64];
        snprintf(lab, sizeof lab, "time to train %.3g tokens, h",
                 f->train_tokens);
        ROW(lab, "%.1f",
            x->train ? f->train_tokens / num(x->train, "tokens_per_s") / 3600
                     : NAN);
        snprintf(lab, sizeof lab, "cost to train %.3g tokens, $",
                 f->train_tokens);
        ROW(lab, "%.0f",
            x->train ? f->train_tokens / num(x->train, "tokens_per_s") / 3600 *
                           x->te.usd_per_h
                     : NAN);
    }
    if (f->serving[0]) {
        printf("\n  serving: %s\n", f->serving);
        for (int i = 0; i < f->n; i++)
            printf("    %-20s %s\n", f->c[i].name,
                   o[i].serve ? o[i].serve_plan : o[i].error[1]);
        ROW("output tokens/s", "%.0f",
            x->serve ? num(x->serve, "throughput_tokens_per_s") : NAN);
        ROW("goodput, requests/s in SLO", "%.2f",
            x->serve ? num(x->serve, "goodput_requests_per_s") : NAN);
        ROW("p90 TTFT, ms", "%.0f",
            x->serve ? 1e3 * num2(x->serve, "ttft_s", "p90") : NAN);
        ROW("p90 TPOT, ms", "%.1f",
            x->serve ? 1e3 * num2(x->serve, "tpot_s", "p90") : NAN);
        ROW("modelled power, W", "%.0f", x->serve ? x->se.power_w : NAN);
        ROW("energy per M tokens, kWh", "%.3f",
            x->serve ? x->se.energy_j_per_mtok / 3.6e6 : NAN);
        ROW("$ per M output tokens", "%.3f", x->serve ? x->se.usd_per_mtok : NAN);
        ROW("tokens per $", "%.0f", x->serve ? x->se.tokens_per_usd : NAN);
    }
#undef ROW
    printf("\n  economics: %.3g-year amortization, $%.3g/kWh, PUE %.2f, "
           "server $%.0f per GPU\n\n%s\n",
           f->econ.amortization_years, f->econ.usd_per_kwh, f->econ.pue,
           f->econ.server_usd_per_gpu, verdict_text);
}

static json_t *econ_json(const econ_result *r)
{
    json_t *j = json_object();
    json_object_set_new(j, "power_w", json_real(r->power_w));
    json_object_set_new(j, "usd_per_hour", json_real(r->usd_per_h));
    json_object_set_new(j, "tokens_per_usd", json_real(r->tokens_per_usd));
    json_object_set_new(j, "usd_per_mtok", json_real(r->usd_per_mtok));
    json_object_set_new(j, "energy_j_per_mtok",
                        json_real(r->energy_j_per_mtok));
    return j;
}

static json_t *as_json(const cmd_compare_file *f, const outcome *o,
                       const char *verdict_text)
{
    json_t *a = json_array();
    for (int i = 0; i < f->n; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "name", json_string(f->c[i].name));
        json_object_set_new(c, "gpu", json_string(o[i].gpu ? o[i].gpu->name
                                                            : ""));
        json_object_set_new(c, "gpus", json_integer(o[i].gpus));
        json_object_set_new(c, "purchase_usd", json_real(o[i].purchase_usd));
        json_object_set_new(c, "tdp_w", json_real(
            o[i].gpu ? o[i].gpus * o[i].gpu->tdp_w : 0));
        if (o[i].train) {
            json_t *t = json_deep_copy(o[i].train);
            json_object_set_new(t, "plan_name", json_string(o[i].train_plan));
            json_object_set_new(t, "economics", econ_json(&o[i].te));
            json_object_set_new(t, "train_hours", json_real(
                f->train_tokens / num(o[i].train, "tokens_per_s") / 3600));
            json_object_set_new(c, "training", t);
        } else if (f->training[0]) {
            json_object_set_new(c, "training_error",
                                json_string(o[i].error[0]));
        }
        if (o[i].serve) {
            json_t *s = json_object();
            json_object_set_new(s, "deployment", json_string(o[i].serve_plan));
            const char *keys[] = {"throughput_tokens_per_s",
                                  "goodput_requests_per_s", "slo_attainment",
                                  "avg_power_w"};
            for (int k = 0; k < 4; k++)
                json_object_set_new(s, keys[k],
                                    json_real(num(o[i].serve, keys[k])));
            json_object_set_new(s, "ttft_p90_s", json_real(
                num2(o[i].serve, "ttft_s", "p90")));
            json_object_set_new(s, "tpot_p90_s", json_real(
                num2(o[i].serve, "tpot_s", "p90")));
            json_object_set_new(s, "economics", econ_json(&o[i].se));
            json_object_set_new(c, "serving", s);
        } else if (f->serving[0]) {
            json_object_set_new(c, "serving_error", json_string(o[i].error[1]));
        }
        json_array_append_new(a, c);
    }
    json_t *j = json_object();
    json_object_set_new(j, "clusters", a);
    json_object_set_new(j, "verdict", json_string(verdict_text));
    return j;
}

/* Bars relative to the first cluster, through gnuplot, into png. */
static int render_png(const cmd_compare_file *f, const outcome *o,
                      const char *png, llm_err *e)
{
    util_outfile out;
    if (util_out_open(&out, png, e))
        return -1;
    fclose(out.fp);
    out.fp = NULL;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "gnuplot > /dev/null");
    FILE *g = popen(cmd, "w");
    if (!g) {
        remove(out.tmp);
        return err_set(e, "--png: cannot run gnuplot (install gnuplot-nox)");
    }
    if (util_ends_with(png, ".svg"))
        fprintf(g, "set terminal svg size 1100,560 font 'sans,11'\n");
    else
        fprintf(g, "set terminal pngcairo size 1100,560 font 'sans,11'\n");
    fprintf(g, "set output '%s'\n", out.tmp);
    fprintf(g, "set title \"%s\"\nset style data histograms\n"
               "set style histogram clustered gap 1\nset style fill solid 0.85 "
               "border -1\nset boxwidth 0.9\nset grid ytics\nset key top left\n"
               "set ylabel 'relative to %s (higher is better)'\n"
               "set yrange [0:*]\nset xtics noenhanced\nset datafile "
               "separator '\\t'\n",
            f->desc[0] ? f->desc : "comparison", f->c[0].name);
    fprintf(g, "$d << EOD\nmetric");
    for (int i = 0; i < f->n; i++)
        fprintf(g, "\t%s", f->c[i].name);
    fprintf(g, "\n");
    struct {
        const char *name;
        int kind; /* 0 train, 1 serve */
        double (*get)(const outcome *);
    } m[] = {
        {"train tokens/s", 0, NULL},  {"train tokens/$", 0, NULL},
        {"train tokens/J", 0, NULL}, {"serve goodput", 1, NULL},
        {"serve tokens/$", 1, NULL}, {"serve tokens/J", 1, NULL},
    };
    int rows = 0;
    for (int k = 0; k < 6; k++) {
        double v[CMD_COMPARE_MAX];
        int ran = 0;
        for (int i = 0; i < f->n; i++) {
            const outcome *x = &o[i];
            json_t *j = m[k].kind ? x->serve : x->train;
            v[i] = 0; /* could not run: a bar of 0 */
            if (!j)
                continue;
            ran++;
            switch (k) {
            case 0: v[i] = num(j, "tokens_per_s"); break;
            case 1: v[i] = x->te.tokens_per_usd; break;
            case 2: v[i] = 1 / fmax(x->te.energy_j_per_mtok, 1e-30); break;
            case 3: v[i] = num(j, "goodput_requests_per_s"); break;
            case 4: v[i] = x->se.tokens_per_usd; break;
            default: v[i] = 1 / fmax(x->se.energy_j_per_mtok, 1e-30); break;
            }
        }
        if (ran == 0 || v[0] <= 0)
            continue; /* nothing to compare, or nothing to compare to */
        rows++;
        fprintf(g, "%s", m[k].name);
        for (int i = 0; i < f->n; i++)
            fprintf(g, "\t%.4f", v[i] / v[0]);
        fprintf(g, "\n");
    }
    if (rows == 0)
        fprintf(g, "nothing\t1\nEOD\nset label 1 '%s could not run "
                   "the workload' at graph 0.5, 0.5 center\nunset key\n"
                   "plot $d using 2:xtic(1) with points notitle\n",
                f->c[0].name);
    else
        fprintf(g, "EOD\nplot for [c=2:%d] $d using c:xtic(1) title "
                   "columnheader(c)\n", f->n + 1);
    int rc = pclose(g);
    if (rc != 0) {
        remove(out.tmp);
        return err_set(e, "--png %s: gnuplot failed (exit %d; is gnuplot "
                          "with the pngcairo terminal installed?)", png, rc);
    }
    if (rename(out.tmp, png) != 0) {
        remove(out.tmp);
        return err_set(e, "--png %s: cannot rename into place", png);
    }
    return 0;
}

/* A mistake in an experiment file is everyone's: found before anything
 * runs, with each cluster's settings applied.  What is left to fail per
 * cluster is the hardware (no plan fits), which the table shows. */
static int check_files(const cmd_compare_file *f, llm_err *e)
{
    for (int i = 0; i < f->n; i++) {
        for (int k = 0; k < 2; k++) {
            const char *file = k ? f->serving : f->training;
            if (!file[0])
                continue;
            args a;
            args_init(&a, "", file, &f->c[i]);
            const char *sets[64];
            int ns = 0;
            for (int j = 2; j + 1 < a.n; j += 2)
                sets[ns++] = a.v[j + 1];
            int rc;
            if (k) {
                cfg_serving x;
                cfg_serving_defaults(&x);
                rc = cfg_load_serving(file, sets, ns, &x, e);
            } else {
                cfg_experiment x;
                memset(&x, 0, sizeof x);
                plan_train_defaults(&x.plan);
                rc = cfg_load_experiment(file, sets, ns, &x, e);
            }
            if (rc) {
                char m[sizeof e->msg];
                snprintf(m, sizeof m, "%s: %s", f->c[i].name, e->msg);
                return err_set(e, "%s", m);
            }
        }
    }
    return 0;
}

static int run(int argc, char **argv, llm_err *e)
{
    enum { C_PNG = 700, C_JSON, C_NOSEARCH };
    static const struct option opts[] = {
        {"png", 1, 0, C_PNG}, {"json", 0, 0, C_JSON},
        {"no-search", 0, 0, C_NOSEARCH}, {0, 0, 0, 0},
    };
    struct {
        const char *png;
        bool json, nosearch;
    } o = {0};
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ch == C_PNG)
            o.png = optarg;
        else if (ch == C_JSON)
            o.json = true;
        else if (ch == C_NOSEARCH)
            o.nosearch = true;
        else if (ch == ':')
            return err_set(e, "option %s needs a value", argv[optind - 1]),
                   EXIT_BAD_INPUT;
        else
            return cmd_bad_option("compare", argv[optind - 1], opts, e),
                   EXIT_BAD_INPUT;
    }
    if (optind != argc - 1)
        return err_set(e, "one compare file is needed (see `llmsim help "
                          "compare`)"), EXIT_BAD_INPUT;
    static cmd_compare_file f;
    if (cmd_compare_load(argv[optind], &f, e))
        return EXIT_BAD_INPUT;
    bool search = f.search && !o.nosearch;
    if (check_files(&f, e))
        return EXIT_BAD_INPUT;
    gpu_catalog cat;
    if (cmd_load_catalog(&cat, e))
        return EXIT_BAD_INPUT;
    outcome out[CMD_COMPARE_MAX];
    memset(out, 0, sizeof out);
    int rc = EXIT_OK;
    for (int i = 0; i < f.n && rc == EXIT_OK; i++) {
        llm_err te = {{0}}, se = {{0}};
        if (f.training[0] && run_training(&f, &f.c[i], search, &out[i], &te))
            snprintf(out[i].error[0], sizeof out[i].error[0], "%s", te.msg);
        if (f.serving[0] && run_serving(&f, &f.c[i], search, &out[i], &se))
            snprintf(out[i].error[1], sizeof out[i].error[1], "%s", se.msg);
        evaluate(&f, &cat, &out[i]);
    }
    char vt[1200];
    if (rc == EXIT_OK) {
        verdict(&f, out, vt, sizeof vt);
        if (o.png && render_png(&f, out, o.png, e))
            rc = EXIT_BAD_INPUT;
    }
    if (rc == EXIT_OK) {
        if (o.json)
            cmd_print_json(as_json(&f, out, vt));
        else
            print_human(&f, out, vt);
    }
    for (int i = 0; i < f.n; i++) {
        json_decref(out[i].train);
        json_decref(out[i].serve);
    }
    gpu_catalog_free(&cat);
    return rc;
}

const cmd_def cmd_compare_def = {
    "compare", "one workload on several clusters: speed, cost, energy, "
    "verdict", usage, run};
