/* llmsim gpus — the GPU catalog, and side-by-side comparison. */
#include <getopt.h>

#include "cli/cmd.h"
#include "report/rgpus.h"

static const char usage[] =
    "usage: llmsim gpus [--json]\n"
    "       llmsim gpus --compare GPU GPU [GPU ...] [--json]\n\n"
    "Lists the GPU catalog (topologies/gpus.cfg): dense peak TFLOP/s, memory,\n"
    "bandwidth, NVLink, TDP and price.  --compare puts GPUs side by side\n"
    "with capability flags and derived ratios (TFLOP/s per kW and per\n"
    "$1000, FLOPs per byte of memory bandwidth).  A GPU may also be given\n"
    "as a path to a file in gpus.cfg format.\n";

/* The whole catalog, as a table or JSON. */
static int list(const gpu_catalog *c, int json)
{
    if (json)
        cmd_print_json(rgpus_catalog_json(c));
    else
        rgpus_list_text(stdout, c);
    return EXIT_OK;
}

/* The GPUs named by names[0..n) side by side.  Names are resolved to
 * indices first: cfg_find_gpu may grow (and move) the catalog when a name
 * is a file. */
static int compare(gpu_catalog *c, char **names, int n, int json, llm_err *e)
{
    if (n < 1 || n > 8) {
        err_set(e, "gpus --compare: expected 1 to 8 GPU names, got %d", n);
        return EXIT_BAD_INPUT;
    }
    int idx[8];
    for (int i = 0; i < n; i++) {
        const gpu_spec *g = cfg_find_gpu(c, names[i], e);
        if (!g)
            return EXIT_BAD_INPUT;
        idx[i] = (int)(g - c->gpus);
    }
    const gpu_spec *sel[8];
    for (int i = 0; i < n; i++)
        sel[i] = &c->gpus[idx[i]];
    if (json)
        cmd_print_json(rgpus_json(sel, n));
    else
        rgpus_compare_text(stdout, sel, n);
    return EXIT_OK;
}

static int run(int argc, char **argv, llm_err *e)
{
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'},
        {"compare", no_argument, 0, 'c'},
        {0, 0, 0, 0},
    };
    int json = 0, cmp = 0, ch;
    optind = 0; /* glibc: a full reset, a half-read "-xy" included */
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ch == 'j')
            json = 1;
        else if (ch == 'c')
            cmp = 1;
        else
            return cmd_bad_option("gpus", argv[optind - 1], opts, e),
                   EXIT_BAD_INPUT;
    }
    gpu_catalog c;
    if (cfg_load_catalog(&c, e))
        return EXIT_BAD_INPUT;
    int rc = EXIT_BAD_INPUT;
    if (cmp)
        rc = compare(&c, argv + optind, argc - optind, json, e);
    else if (optind < argc)
        err_set(e, "gpus: unexpected argument \"%s\" (use --compare to "
                   "compare GPUs)", argv[optind]);
    else
        rc = list(&c, json);
    gpu_catalog_free(&c);
    return rc;
}

const cmd_def cmd_gpus_def = {"gpus", "list GPUs, or compare them side by side",
                              usage, run, 0, NULL};
