#include "cfg/cfg_util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

const char cfgu_from_set[] = "--set";

int cfgu_line(const config_setting_t *s)
{
    if (config_setting_get_hook(s) == cfgu_from_set)
        return 0; /* given on the command line: no line to name */
    int l = (int)config_setting_source_line(s);
    return l > 0 ? l : 1;
}

/* libconfig's scanner grows a string by appending each piece, so one
 * 100 MB line takes it hours; and a NUL byte ends its input early.  No
 * llmsim file needs either, so both are refused before it reads. */
#define CFGU_MAX_LINE 65536

static int prescan(cfgu *c, FILE *f)
{
    char buf[1 << 14];
    size_t n, col = 0;
    int line = 1;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++) {
            if (buf[i] == '\0')
                return err_at(c->e, c->file, line, "(binary)",
                              "a NUL byte (expected a libconfig text file)");
            if (buf[i] == '\n') {
                line++;
                col = 0;
            } else if (++col > CFGU_MAX_LINE) {
                return err_at(c->e, c->file, line, "line",
                              "longer than %d bytes (expected a libconfig "
                              "text file)", CFGU_MAX_LINE);
            }
        }
    rewind(f);
    return 0;
}

int cfgu_read(cfgu *c, config_t *cfg)
{
    FILE *f = fopen(c->file, "r");
    if (!f)
        return err_set(c->e, "%s: cannot open: %s", c->file, strerror(errno));
    if (prescan(c, f)) {
        fclose(f);
        return -1;
    }
    int rc = config_read(cfg, f);
    fclose(f);
    if (rc != CONFIG_TRUE)
        return err_at(c->e, c->file, config_error_line(cfg), "(syntax)",
                      "%s (expected libconfig syntax: key = value;)",
                      config_error_text(cfg));
    return 0;
}

int cfgu_check_keys(cfgu *c, const config_setting_t *g,
                    const char *const *allowed, int n)
{
    int len = config_setting_length(g);
    for (int i = 0; i < len; i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(s);
        if (!name)
            continue;
        int known = 0;
        for (int k = 0; k < n && !known; k++)
            known = strcmp(name, allowed[k]) == 0;
        if (known)
            continue;
        char hint[128];
        util_did_you_mean(hint, sizeof hint, name, allowed, n);
        return err_at(c->e, c->file, cfgu_line(s), name,
                      "unknown key%s (expected one of the documented keys)",
                      hint);
    }
    return 0;
}

static config_setting_t *member(cfgu *c, const config_setting_t *g,
                                const char *key, bool required,
                                const char *expect, int *rc)
{
    config_setting_t *s = config_setting_get_member(g, key);
    *rc = 0;
    if (!s && required)
        *rc = err_at(c->e, c->file, cfgu_line(g), key,
                     "missing (expected %s)", expect);
    return s;
}

int cfgu_int(cfgu *c, const config_setting_t *g, const char *key,
             bool required, long lo, long hi, int *out)
{
    char expect[96];
    snprintf(expect, sizeof expect, "an integer %ld..%ld", lo, hi);
    int rc;
    config_setting_t *s = member(c, g, key, required, expect, &rc);
    if (!s)
        return rc;
    int t = config_setting_type(s);
    long long v;
    if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
        v = config_setting_get_int64(s);
    else
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "wrong type (expected %s)", expect);
    if (v < lo || v > hi)
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "%lld is out of range (expected %s)", v, expect);
    *out = (int)v;
    return 0;
}

int cfgu_double(cfgu *c, const config_setting_t *g, const char *key,
                bool required, double lo, double hi, double *out)
{
    char expect[96];
    snprintf(expect, sizeof expect, "a number %g..%g", lo, hi);
    int rc;
    config_setting_t *s = member(c, g, key, required, expect, &rc);
    if (!s)
        return rc;
    int t = config_setting_type(s);
    double v;
    if (t == CONFIG_TYPE_FLOAT)
        v = config_setting_get_float(s);
    else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
        v = (double)config_setting_get_int64(s);
    else
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "wrong type (expected %s)", expect);
    if (!isfinite(v) || v < lo || v > hi)
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "%g is out of range (expected %s)", v, expect);
    *out = v;
    return 0;
}

int cfgu_bool(cfgu *c, const config_setting_t *g, const char *key,
              bool required, bool *out)
{
    int rc;
    config_setting_t *s = member(c, g, key, required, "true or false", &rc);
    if (!s)
        return rc;
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "wrong type (expected true or false)");
    *out = config_setting_get_bool(s);
    return 0;
}

int cfgu_str(cfgu *c, const config_setting_t *g, const char *key,
             bool required, char *out, size_t len)
{
    int rc;
    config_setting_t *s = member(c, g, key, required, "a quoted string", &rc);
    if (!s)
        return rc;
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "wrong type (expected a quoted string)");
    const char *v = config_setting_get_string(s);
    if (strlen(v) >= len)
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "too long (expected at most %zu characters)", len - 1);
    memcpy(out, v, strlen(v) + 1);
    return 0;
}

int cfgu_enum(cfgu *c, const config_setting_t *g, const char *key,
              bool required, const char *const *choices, int n, int *out)
{
    char expect[256] = "one of ";
    for (int i = 0; i < n; i++) {
        strncat(expect, choices[i], sizeof expect - strlen(expect) - 2);
        if (i + 1 < n)
            strncat(expect, "|", sizeof expect - strlen(expect) - 1);
    }
    char buf[64];
    int rc;
    config_setting_t *s = member(c, g, key, required, expect, &rc);
    if (!s)
        return rc;
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "wrong type (expected %s)", expect);
    snprintf(buf, sizeof buf, "%s", config_setting_get_string(s));
    for (int i = 0; i < n; i++)
        if (strcmp(buf, choices[i]) == 0) {
            *out = i;
            return 0;
        }
    char hint[96];
    util_did_you_mean(hint, sizeof hint, buf, choices, n);
    return err_at(c->e, c->file, cfgu_line(s), key,
                  "unknown value \"%s\"%s (expected %s)", buf, hint, expect);
}

int cfgu_group(cfgu *c, const config_setting_t *g, const char *key,
               config_setting_t **out)
{
    config_setting_t *s = config_setting_get_member(g, key);
    *out = NULL;
    if (!s)
        return 0;
    if (config_setting_type(s) != CONFIG_TYPE_GROUP)
        return err_at(c->e, c->file, cfgu_line(s), key,
                      "wrong type (expected a group { ... })");
    *out = s;
    return 0;
}

/* --set a.b=v: the value's type follows the setting it replaces, or its
 * spelling (integer, real, true/false, else string) when it is new. */
int cfgu_apply_set(config_t *cfg, const char *file, const char *set,
                     llm_err *e)
{
    char path[128];
    const char *eq = strchr(set, '=');
    if (!eq || eq == set || (size_t)(eq - set) >= sizeof path)
        return err_set(e, "--set \"%s\": expected KEY=VALUE (e.g. "
                          "parallel.tp=4)", set);
    snprintf(path, sizeof path, "%.*s", (int)(eq - set), set);
    const char *v = eq + 1;
    char *dot = strrchr(path, '.');
    config_setting_t *parent = dot ? config_lookup(cfg, (*dot = '\0', path))
                                   : config_root_setting(cfg);
    if (!parent && dot && !strchr(path, '.') &&
        !config_setting_get_member(config_root_setting(cfg), path)) {
        /* a group the file leaves out (net = {...}): the key check of
         * whoever reads the file says whether it may exist */
        parent = config_setting_add(config_root_setting(cfg), path,
                                    CONFIG_TYPE_GROUP);
        if (parent)
            config_setting_set_hook(parent, (void *)cfgu_from_set);
    }
    const char *name = dot ? dot + 1 : path;
    if (!parent || config_setting_type(parent) != CONFIG_TYPE_GROUP)
        return err_set(e, "--set %s: %s is not a group of %s", set, path, file);
    config_setting_t *s = config_setting_get_member(parent, name);
    char *end;
    errno = 0;
    long long iv = strtoll(v, &end, 10);
    bool is_int = *v && *end == '\0' && errno != ERANGE;
    double dv = strtod(v, &end);
    bool is_real = *v && *end == '\0';
    bool is_bool = strcmp(v, "true") == 0 || strcmp(v, "false") == 0;
    int type = s ? config_setting_type(s)
                 : is_bool ? CONFIG_TYPE_BOOL
                 : is_int  ? CONFIG_TYPE_INT
                 : is_real ? CONFIG_TYPE_FLOAT
                           : CONFIG_TYPE_STRING;
    /* beyond an int: a 64-bit setting, so the reader's range check sees
     * the value rather than its low 32 bits */
    if (type == CONFIG_TYPE_INT && is_int && (iv > INT_MAX || iv < INT_MIN))
        type = CONFIG_TYPE_INT64;
    if (s)
        config_setting_remove(parent, name);
    s = config_setting_add(parent, name, type);
    if (!s) /* libconfig refuses the name */
        return err_set(e, "--set %s: \"%s\" is not a valid key (expected a "
                          "letter, then letters, digits, '-' or '_')", set,
                       name);
    config_setting_set_hook(s, (void *)cfgu_from_set);
    int ok = 0;
    switch (type) {
    case CONFIG_TYPE_BOOL: ok = is_bool && config_setting_set_bool(s, v[0] == 't'); break;
    case CONFIG_TYPE_INT: ok = is_int && config_setting_set_int(s, (int)iv); break;
    case CONFIG_TYPE_INT64: ok = is_int && config_setting_set_int64(s, iv); break;
    case CONFIG_TYPE_FLOAT: ok = is_real && config_setting_set_float(s, dv); break;
    default: ok = config_setting_set_string(s, v) == CONFIG_TRUE;
    }
    if (!ok)
        return err_set(e, "--set %s: \"%s\" has the wrong type for %s.%s", set,
                       v, dot ? path : "", name);
    return 0;
}

int cfgu_read_with_sets(cfgu *c, config_t *cfg, const char *const *sets,
                        int nsets)
{
    if (cfgu_read(c, cfg))
        return -1;
    for (int i = 0; i < nsets; i++)
        if (cfgu_apply_set(cfg, c->file, sets[i], c->e))
            return -1;
    return 0;
}

int cfgu_net(cfgu *c, const config_setting_t *root, topo_net *net)
{
    static const char *const keys[] = {"nvlink_GBps", "pcie_GBps", "ib_gbps"};
    config_setting_t *g, *sw;
    if (cfgu_group(c, root, "net", &g) || cfgu_group(c, root, "sweep", &sw))
        return -1;
    if (!g)
        return 0;
    return cfgu_check_keys(c, g, keys, 3) ||
                   cfgu_double(c, g, "nvlink_GBps", false, 1e-3, 1e6,
                               &net->nvlink_GBps) ||
                   cfgu_double(c, g, "pcie_GBps", false, 1e-3, 1e6,
                               &net->pcie_GBps) ||
                   cfgu_double(c, g, "ib_gbps", false, 1e-3, 1e7,
                               &net->nic_gbps)
               ? -1
               : 0;
}
