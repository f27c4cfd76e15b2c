#include "cfg/cfg_util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

int cfgu_line(const config_setting_t *s)
{
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
