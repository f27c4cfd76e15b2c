/* Experiment command lines: the settings table's flags as getopt_long
 * options, --set KEY=VALUE, and the experiment file operand. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/cmd.h"

#define ID_SET (CMD_OPT_SETTING - 1)

typedef struct parse_ctx {
    exp_kind k;
    int alt;
    const char *alt_why;
    cmd_args *a;
    int (*one)(void *ctx, int id, const char *v, llm_err *e);
    void *ctx;
} parse_ctx;

static int one_opt(void *ctx_, int id, const char *v, llm_err *e)
{
    parse_ctx *c = ctx_;
    cmd_args *a = c->a;
    if (id == ID_SET) {
        if (a->nsets >= 64)
            return err_set(e, "--set: at most 64");
        a->sets[a->nsets++] = v;
        return 0;
    }
    if (id < CMD_OPT_SETTING)
        return c->one ? c->one(c->ctx, id, v, e) : -1;
    const setting *s = &settings_table[id - CMD_OPT_SETTING];
    if (!s->at[c->k].in)
        return err_set(e, c->alt_why, s->flag);
    if (a->nflags >= CMD_MAX_FLAGS)
        return err_set(e, "at most %d options", CMD_MAX_FLAGS);
    a->flag[a->nflags] = s;
    a->value[a->nflags++] = v;
    return 0;
}

/* The options of kind k (and alt) followed by the command's own. */
static struct option *options(exp_kind k, int alt, const struct option *extra)
{
    int n = 0, next = 0;
    while (extra && extra[n].name)
        n++;
    struct option *o = calloc((size_t)(n + settings_count + 2), sizeof *o);
    if (!o)
        return NULL;
    /* kind k's flags first: a flag alt also has stays k's */
    for (int pass = 0; pass < (alt >= 0 ? 2 : 1); pass++)
        for (int i = 0; i < settings_count; i++) {
            const setting *s = &settings_table[i];
            if (!s->flag || !s->at[pass ? alt : (int)k].in)
                continue;
            bool dup = false;
            for (int j = 0; j < next && !dup; j++)
                dup = strcmp(o[j].name, s->flag) == 0;
            if (dup)
                continue;
            bool bare = s->type == SET_BOOL && s->flag_kind != FLAG_VALUE;
            o[next++] = (struct option){s->flag,
                                        bare ? no_argument : required_argument,
                                        NULL, CMD_OPT_SETTING + i};
        }
    o[next++] = (struct option){"set", required_argument, NULL, ID_SET};
    for (int i = 0; i < n; i++)
        o[next++] = extra[i];
    return o;
}

int cmd_parse(const char *cmd, exp_kind k, int alt, const char *alt_why,
              int argc, char **argv, const struct option *extra,
              int (*one)(void *ctx, int id, const char *v, llm_err *e),
              void *ctx, cmd_args *a, llm_err *e)
{
    memset(a, 0, sizeof *a);
    struct option *opts = options(k, alt, extra);
    if (!opts)
        return err_set(e, "out of memory");
    parse_ctx c = {k, alt, alt_why ? alt_why : "--%s: not an option here",
                   a, one, ctx};
    int rc = cmd_getopt(cmd, argc, argv, opts, one_opt, &c, e);
    free(opts);
    if (rc)
        return -1;
    if (optind < argc - 1)
        return err_set(e, "unexpected argument \"%s\"", argv[optind + 1]);
    if (optind == argc - 1)
        a->file = argv[optind];
    return 0;
}

static int apply_flag(exp_kind k, void *x, exp_src *src, const setting *s,
                      const char *v, llm_err *e)
{
    char why[1200];
    if (s->type == SET_BOOL && s->flag_kind != FLAG_VALUE)
        v = s->flag_kind == FLAG_TRUE ? "true" : "false";
    if (settings_parse(s, k, x, v, why, sizeof why))
        return err_set(e, "--%s: %s", s->flag, why);
    src[settings_index(s)] = (exp_src){.how = SRC_FLAG};
    return 0;
}

int cmd_load_exp(exp_kind k, void *x, const cmd_args *a, llm_err *e)
{
    exp_src *src = ((exp_head *)x)->src;
    if (a->file && cfg_exp_read(a->file, k, x, e))
        return -1;
    char why[1300];
    for (int i = 0; i < a->nsets; i++)
        if (settings_apply(k, x, src, a->sets[i], why, sizeof why))
            return err_set(e, "--set %s", why);
    for (int i = 0; i < a->nflags; i++)
        if (apply_flag(k, x, src, a->flag[i], a->value[i], e))
            return -1;
    return exp_settle(k, x, e);
}
