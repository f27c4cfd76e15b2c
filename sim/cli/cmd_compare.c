/* llmsim compare — one workload (training, serving or both) on two or more
 * clusters, side by side, with what each costs, and a verdict. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "decide/compare.h"
#include "report/rcompare.h"

static const char usage[] =
    "usage: llmsim compare COMPARE.cfg [--png FILE.png] [--json]\n"
    "           [--no-search]\n\n"
    "Runs one training experiment and/or one serving experiment on every\n"
    "cluster of the compare file and prints them side by side: step time,\n"
    "tokens/s, MFU, memory headroom and the plan (training); throughput,\n"
    "goodput under the SLOs and p90 latencies (serving); then for each the\n"
    "purchase price (GPUs, the rest of the servers, the network), TDP,\n"
    "modelled power (GPUs, hosts and switches), energy per million tokens,\n"
    "tokens per dollar with its 80% band (owned: the purchase amortized\n"
    "over the stated years, electricity at the stated price and PUE, and\n"
    "hosting per kW; rented: a cloud's price per GPU-hour), and for\n"
    "training the time and cost of training the stated number of tokens;\n"
    "under the table every cost assumption and where it came from.  Ends\n"
    "with a verdict that ranks by the low end of each cluster's range, says\n"
    "when the two are indistinguishable within their error bands, and gives\n"
    "its biggest reason from the GPUs' datasheet ratios.\n\n"
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
    "  economics = { mode = \"own\";   # or \"rent\" (calib/cloud-prices.tsv)\n"
    "                amortization_years = 3.0; usd_per_kwh = 0.10;\n"
    "                pue = 1.3; hosting_usd_per_kw_month = 184.0;\n"
    "                server_usd_per_gpu = 6250.0; host_w_per_gpu = 350.0; };\n"
    "                # each optional: calib/economics.tsv and, per node type\n"
    "                # and GPU, calib/node-economics.tsv and cloud-prices.tsv\n"
    "  train_tokens = 1.0e9;   # time and cost to train this many\n"
    "  search = true;\n\n"
    "--png renders the comparison with gnuplot, a panel per metric in its\n"
    "own unit, each bar with its value and its 80% error band, the cost\n"
    "assumptions at the foot (SVG when FILE ends in\n"
    ".svg).  JSON keys: clusters\n"
    "[{name, gpu, gpus, purchase_usd, tdp_w, training {...}, serving\n"
    "{...}}], verdict.\n";

/* The experiment files the compare file names, at their defaults and
 * file values. */
static int load_experiments(const exp_compare *f, exp_train *t, exp_serve *s,
                            llm_err *e)
{
    if (f->training[0]) {
        exp_train_defaults(t);
        snprintf(t->h.file, sizeof t->h.file, "%s", f->training);
        if (cfg_exp_read(f->training, EXP_TRAIN, t, e))
            return -1;
    }
    if (f->serving[0]) {
        exp_serve_defaults(s);
        snprintf(s->h.file, sizeof s->h.file, "%s", f->serving);
        if (cfg_exp_read(f->serving, EXP_SERVE, s, e))
            return -1;
    }
    return 0;
}

enum { C_PNG = 1, C_JSON };

typedef struct copts {
    const char *png;
    bool json;
} copts;

static int parse_one(void *ctx, int id, const char *v, llm_err *e)
{
    copts *o = ctx;
    (void)e;
    if (id == C_PNG)
        o->png = v;
    else if (id == C_JSON)
        o->json = true;
    else
        return -1;
    return 0;
}

static const struct option opts[] = {
    {"png", 1, 0, C_PNG}, {"json", 0, 0, C_JSON}, {0, 0, 0, 0},
};

static int run(int argc, char **argv, llm_err *e)
{
    copts o = {0};
    cmd_args a;
    if (cmd_parse("compare", EXP_COMPARE, -1, NULL, argc, argv, opts,
                  parse_one, &o, &a, e))
        return EXIT_BAD_INPUT;
    if (!a.file)
        return err_set(e, "one compare file is needed (see `llmsim help "
                          "compare`)"), EXIT_BAD_INPUT;
    static exp_compare f;
    static exp_train t;
    static exp_serve s;
    if (cfg_compare_load(a.file, &f, e))
        return EXIT_BAD_INPUT;
    a.file = NULL; /* read above, with its clusters */
    if (cmd_load_exp(EXP_COMPARE, &f, &a, e) ||
        cfg_compare_econ(&f, e) || load_experiments(&f, &t, &s, e))
        return EXIT_BAD_INPUT;
    if (cmd_inputs_only)
        return EXIT_OK;
    static compare_result r;
    if (compare_run(&f, f.training[0] ? &t : NULL, f.serving[0] ? &s : NULL,
                    f.search, cfg_loader(), &r, e)) {
        compare_free(&r);
        return EXIT_BAD_INPUT;
    }
    int rc = EXIT_OK;
    if (o.png && rcompare_png(o.png, &f, &r, e))
        rc = EXIT_BAD_INPUT;
    else if (o.json)
        cmd_print_json(rcompare_json(&f, &r));
    else
        rcompare_text(stdout, &f, &r);
    compare_free(&r);
    return rc;
}

const cmd_def cmd_compare_def = {
    "compare", "one workload on several clusters: speed, cost, energy, "
    "verdict", usage, run, 1u << EXP_COMPARE, NULL};
