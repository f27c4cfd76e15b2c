/* What every command shares: help, JSON on stdout, option parsing. */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/cmd.h"
#include "report/rjson.h"

void cmd_help(const cmd_def *d, FILE *fp)
{
    fputs(d->usage, fp);
    for (int k = 0; k < EXP_KINDS; k++) {
        if (!(d->settings & (1u << k)))
            continue;
        fprintf(fp, "\nSettings of a%s %s experiment (flag, experiment-file "
                    "and --set key, what, accepted values, default):\n",
                k == EXP_INFER ? "n" : "", exp_kind_names[k]);
        for (int i = 0; i < settings_count; i++) {
            if (!settings_table[i].at[k].in ||
                (d->takes && !d->takes(&settings_table[i], (exp_kind)k)))
                continue;
            char line[1024];
            settings_help_line(&settings_table[i], (exp_kind)k, line,
                               sizeof line);
            fprintf(fp, "%s\n", line);
        }
    }
}

void cmd_print_json(json_t *j) { rjson_print(stdout, j); }

int cmd_bad_option(const char *cmd, const char *arg, const void *longopts,
                   llm_err *e)
{
    const struct option *o = longopts;
    const char *names[128];
    int n = 0;
    for (; o->name && n < 128; o++)
        names[n++] = o->name;
    const char *word = arg;
    while (*word == '-')
        word++;
    char w[64];
    snprintf(w, sizeof w, "%s", word);
    char *eq = strchr(w, '=');
    if (eq)
        *eq = '\0';
    const char *s = util_suggest(w, names, n);
    if (s)
        return err_set(e, "unknown option \"%s\" (did you mean --%s?); see "
                          "`llmsim help %s`",
                       arg, s, cmd);
    return err_set(e, "unknown option \"%s\"; see `llmsim help %s`", arg,
                   cmd);
}

const cmd_def *const cmd_list[] = {
    &cmd_gpus_def,  &cmd_model_def,  &cmd_memory_def, &cmd_topo_def,
    &cmd_collective_def, &cmd_train_def, &cmd_serve_def, &cmd_sweep_def,
    &cmd_search_def, &cmd_compare_def, &cmd_kernel_def, &cmd_calibrate_def,
};
const int cmd_count = (int)(sizeof cmd_list / sizeof cmd_list[0]);
bool cmd_inputs_only;

const cmd_def *cmd_find(const char *name)
{
    for (int i = 0; i < cmd_count; i++)
        if (strcmp(cmd_list[i]->name, name) == 0)
            return cmd_list[i];
    return NULL;
}

int cmd_getopt(const char *cmd, int argc, char **argv, const void *longopts,
               int (*one)(void *ctx, int ch, const char *v, llm_err *e),
               void *ctx, llm_err *e)
{
    int ch;
    optind = 0; /* glibc: a full reset, a half-read "-xy" included */
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        if (ch == ':')
            return err_set(e, "option %s needs a value (see `llmsim help "
                              "%s`)", argv[optind - 1], cmd);
        if (ch == '?')
            return cmd_bad_option(cmd, argv[optind - 1], longopts, e);
        if (one(ctx, ch, optarg, e))
            return -1;
    }
    return 0;
}

int cmd_pick(const char *opt, const char *v, const char *const *names, int n,
             int *out, llm_err *e)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char hint[96], all[200] = "";
    util_did_you_mean(hint, sizeof hint, v, names, n);
    for (int i = 0; i < n; i++) {
        strncat(all, names[i], sizeof all - strlen(all) - 2);
        if (i + 1 < n)
            strncat(all, "|", sizeof all - strlen(all) - 1);
    }
    return err_set(e, "%s: unknown value \"%s\"%s (expected %s)", opt, v,
                   hint, all);
}

int cmd_int_opt(const char *opt, const char *v, long lo, long hi, int *out,
                llm_err *e)
{
    long x;
    if (util_parse_int(opt, v, lo, hi, &x, e))
        return -1;
    *out = (int)x;
    return 0;
}

int cmd_setting_int(exp_kind k, const char *flag, const char *v, int *out,
                    llm_err *e)
{
    const setting *s = settings_by_flag(k, flag);
    LLM_ASSERT(s && s->type == SET_INT);
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", flag);
    return cmd_int_opt(opt, v, (long)s->lo, (long)s->hi, out, e);
}
