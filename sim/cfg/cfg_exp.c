/* Experiment files (configs/NAME.cfg) read through the settings table: every
 * key of the file must be a setting of its kind (settings.c), and each
 * value is stored with that setting's type and bounds.  The groups a file
 * holds are the first parts of the keys (parallel, serving, workload,
 * ...); `sweep` belongs to `llmsim sweep` (cfg_sweep.c) and is skipped. */
#include <libconfig.h>
#include <string.h>

#include "base/util.h"
#include "cfg/cfg.h"
#include "cfg/cfg_util.h"

/* "file:line: KEY: unknown key (did you mean ...?)" among kind k's keys
 * and groups. */
static int unknown_key(cfgu *c, exp_kind k, const config_setting_t *s,
                       const char *key)
{
    char why[600];
    settings_unknown(k, key, why, sizeof why);
    /* why is "KEY: unknown key ...": err_at puts the key itself */
    return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key, "%s",
                  why + strlen(key) + 2);
}

/* The index of v's file in h (0: the experiment file; an @include'd one
 * is added, up to EXP_INC_FILES, then named by its includer). */
static unsigned char file_index(cfgu *c, exp_head *h,
                                const config_setting_t *v)
{
    const char *f = cfgu_file(c, v);
    if (strcmp(f, c->file) == 0)
        return 0;
    for (int i = 0; i < h->ninc; i++)
        if (strcmp(h->inc[i], f) == 0)
            return (unsigned char)(i + 1);
    if (h->ninc == EXP_INC_FILES)
        return 0;
    snprintf(h->inc[h->ninc], sizeof h->inc[0], "%s", f);
    return (unsigned char)++h->ninc;
}

/* A list of integers ([7, 8, 8, 7]) into a list setting. */
static int put_list(const setting *s, exp_kind k, void *x,
                    const config_setting_t *v, char *why, size_t len)
{
    static long long vals[PLAN_MAX_VSTAGES + 1];
    int n = config_setting_length(v);
    int keep = n < PLAN_MAX_VSTAGES + 1 ? n : PLAN_MAX_VSTAGES + 1;
    for (int i = 0; i < keep; i++) {
        const config_setting_t *e = config_setting_get_elem(v, (unsigned)i);
        int t = config_setting_type(e);
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            char expect[200];
            settings_expect(s, expect, sizeof expect);
            snprintf(why, len, "entry %d is not an integer (expected %s)",
                     i + 1, expect);
            return -1;
        }
        vals[i] = config_setting_get_int64(e);
    }
    return settings_put_ints(s, k, x, vals, keep, why, len);
}

/* One value of the file into its setting. */
static int put(cfgu *c, exp_kind k, void *x, exp_src *src,
               const config_setting_t *v, const char *key)
{
    const setting *s = settings_by_key(k, key);
    if (!s)
        return unknown_key(c, k, v, key);
    char why[1200];
    int rc;
    switch (config_setting_type(v)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        rc = settings_put_int(s, k, x, config_setting_get_int64(v), why,
                              sizeof why);
        break;
    case CONFIG_TYPE_FLOAT:
        rc = settings_put_real(s, k, x, config_setting_get_float(v), why,
                               sizeof why);
        break;
    case CONFIG_TYPE_BOOL:
        rc = settings_put_bool(s, k, x, config_setting_get_bool(v), why,
                               sizeof why);
        break;
    case CONFIG_TYPE_STRING:
        rc = settings_put_str(s, k, x, config_setting_get_string(v), why,
                              sizeof why);
        break;
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST:
        rc = put_list(s, k, x, v, why, sizeof why);
        break;
    default: {
        char expect[200];
        settings_expect(s, expect, sizeof expect);
        snprintf(why, sizeof why, "wrong type (expected %s)", expect);
        rc = -1;
    }
    }
    if (rc)
        return err_at(c->e, cfgu_file(c, v), cfgu_line(v), key, "%s", why);
    if (src)
        src[settings_index(s)] = (exp_src){
            .how = SRC_FILE, .file = file_index(c, x, v), .line = cfgu_line(v)};
    return 0;
}

/* Every member of group g (a group of kind k's settings). */
static int put_group(cfgu *c, exp_kind k, void *x, exp_src *src,
                     const config_setting_t *g, const char *name)
{
    int n = config_setting_length(g);
    for (int i = 0; i < n; i++) {
        const config_setting_t *v = config_setting_get_elem(g, (unsigned)i);
        char key[160];
        snprintf(key, sizeof key, "%s.%s", name, config_setting_name(v));
        if (put(c, k, x, src, v, key))
            return -1;
    }
    return 0;
}

static int walk(cfgu *c, exp_kind k, void *x, exp_src *src,
                const config_setting_t *root, const char *const *skip,
                int nskip)
{
    int n = config_setting_length(root);
    for (int i = 0; i < n; i++) {
        const config_setting_t *v = config_setting_get_elem(root, (unsigned)i);
        const char *name = config_setting_name(v);
        bool skipped = false;
        for (int j = 0; j < nskip; j++)
            skipped |= strcmp(name, skip[j]) == 0;
        if (skipped)
            continue;
        int rc = config_setting_is_group(v) && settings_has_group(k, name)
                     ? put_group(c, k, x, src, v, name)
                 : config_setting_is_group(v) ? unknown_key(c, k, v, name)
                                              : put(c, k, x, src, v, name);
        if (rc)
            return -1;
    }
    return 0;
}

/* The keys and groups a file of kind k must hold. */
static int required(cfgu *c, exp_kind k, const config_setting_t *root,
                    const exp_src *src)
{
    static const struct {
        exp_kind k;
        const char *key, *expect;
    } need[] = {
        {EXP_TRAIN, "model", "a quoted string"},
        {EXP_TRAIN, "cluster", "a quoted string"},
        {EXP_TRAIN, "parallel", "parallel = { tp = ...; pp = ...; ... };"},
        {EXP_SERVE, "model", "a quoted string"},
        {EXP_SERVE, "cluster", "a quoted string"},
        {EXP_SERVE, "serving", "serving = { tp = ...; replicas = ...; ... };"},
        {EXP_SERVE, "workload", "workload = { trace = \"FILE.csv\"; }; or { "
                                "rate = ...; prompt_len = ...; output_len = "
                                "...; requests = ...; }"},
    };
    (void)src;
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (need[i].k == k && !config_setting_get_member(root, need[i].key))
            return err_at(c->e, c->file, 1, need[i].key,
                          "missing (expected %s)", need[i].expect);
    return 0;
}

int cfg_exp_read(const char *path, exp_kind k, void *x, llm_err *e)
{
    exp_head *h = x;
    exp_src *src = h->src;
    snprintf(h->file, sizeof h->file, "%s", path);
    static const char *const skip[] = {"sweep", "clusters"};
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = -1;
    if (cfgu_read(&c, &cfg))
        goto out;
    const config_setting_t *root = config_root_setting(&cfg);
    config_setting_t *sw;
    if (cfgu_group(&c, root, "sweep", &sw) ||
        walk(&c, k, x, src, root, skip, k == EXP_COMPARE ? 2 : 1) ||
        required(&c, k, root, src))
        goto out;
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}

int cfg_exp_kind(const char *path, exp_kind *k, llm_err *e)
{
    cfgu c = {.file = path, .e = e};
    config_t cfg;
    config_init(&cfg);
    int rc = cfgu_read(&c, &cfg);
    if (rc == 0)
        *k = config_setting_get_member(config_root_setting(&cfg), "serving")
                 ? EXP_SERVE
                 : EXP_TRAIN;
    config_destroy(&cfg);
    return rc;
}
