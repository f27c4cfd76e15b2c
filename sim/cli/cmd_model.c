/* llmsim model — parameters, FLOPs per token and KV-cache bytes of a model. */
#include <dirent.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "report/rmodel.h"
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the .cfg files in models/, sorted (at most 512: the shipped set is a
 * few dozen); none when the folder cannot be read. */
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
    rmodel_list_text(stdout, names, n);
    for (int i = 0; i < n; i++)
        free(names[i]);
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
    optind = 0; /* glibc: a full reset, a half-read "-xy" included */
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
        cmd_print_json(rmodel_json(&m, s));
    else
        rmodel_text(stdout, &m, s);
    return EXIT_OK;
}

const cmd_def cmd_model_def = {
    "model", "parameters, FLOPs per token and KV-cache size of a model",
    usage, run, 0, NULL};
