#include "cfg/cfg_util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"

int cfgu_line(const config_setting_t *s)
{
    int l = (int)config_setting_source_line(s);
    return l > 0 ? l : 1;
}

/* What libconfig gets wrong or takes forever over is refused before it
 * reads a file, and the same for every file an @include names:
 *   - a NUL byte (its input ends there) and a line over CFGU_MAX_LINE (its
 *     scanner grows a string piece by piece: one 100 MB line takes hours);
 *   - an integer beyond 32 bits without the L suffix, which libconfig 1.5
 *     reads wrapped (seq_len = 4294971392 became 4096);
 *   - an @include of a directory or of a missing file, and includes nested
 *     deeper than libconfig's own limit.
 * A small state machine over the bytes: strings and comments are skipped,
 * numbers and @include lines looked at. */
#define CFGU_MAX_LINE 65536
#define CFGU_MAX_INCLUDE 10

typedef struct scan {
    cfgu *c;
    const char *path, *dir;
    int depth, line;
    size_t col;
    enum { S_CODE, S_STRING, S_ESCAPE, S_LINE_COMMENT, S_BLOCK_COMMENT } st;
    char prev;          /* the previous byte in code */
    char tok[72];       /* a number being read */
    int ntok;
    bool at_line_start; /* only blanks so far on this line */
    char word[16];      /* "@include" being read */
    int nword;
    bool want_path;     /* after @include: its quoted path */
    char inc[1100];     /* the path being read */
    int ninc;
} scan;

static int scan_file(cfgu *c, const char *path, const char *dir, int depth);

/* A whole number token: beyond 32 bits without L is an error. */
static int end_number(scan *z, char next)
{
    z->tok[z->ntok] = '\0';
    int n = z->ntok;
    z->ntok = 0;
    bool hex = strchr(z->tok, 'x') || strchr(z->tok, 'X');
    if (next == 'L' || next == '.' ||
        (!hex && (next == 'e' || next == 'E' || strpbrk(z->tok, ".eE"))))
        return 0;
    errno = 0;
    long long v = strtoll(z->tok, NULL, hex ? 16 : 10);
    if (n < (int)sizeof z->tok - 2 && errno == 0 && v >= INT_MIN &&
        v <= INT_MAX)
        return 0;
    return err_at(z->c->e, z->path, z->line, z->tok, "beyond a 32-bit integer "
                  "(libconfig would read it wrapped; write %sL for a 64-bit "
                  "one)", z->tok);
}

/* An @include's path, relative to the including file's directory. */
static int end_include(scan *z)
{
    z->inc[z->ninc] = '\0';
    char full[2300];
    if (z->inc[0] == '/' || !z->dir[0])
        snprintf(full, sizeof full, "%s", z->inc);
    else
        snprintf(full, sizeof full, "%s/%s", z->dir, z->inc);
    if (z->depth + 1 > CFGU_MAX_INCLUDE)
        return err_at(z->c->e, z->path, z->line, "@include", "nested more "
                      "than %d deep", CFGU_MAX_INCLUDE);
    /* a file that is not there is the including line's mistake */
    struct stat st;
    if (stat(full, &st) != 0)
        return err_at(z->c->e, z->path, z->line, "@include", "\"%s\": "
                      "cannot open %s: %s", z->inc, full, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return err_at(z->c->e, z->path, z->line, "@include", "\"%s\": %s "
                      "is not a regular file (expected a libconfig text "
                      "file)", z->inc, full);
    return scan_file(z->c, full, z->dir, z->depth + 1) ? -2 : 0;
}

static int code_byte(scan *z, char ch)
{
    bool ident = (z->prev >= 'a' && z->prev <= 'z') ||
                 (z->prev >= 'A' && z->prev <= 'Z') || z->prev == '_' ||
                 z->prev == '.' || (z->ntok == 0 && z->prev >= '0' &&
                                    z->prev <= '9');
    if (z->ntok > 0 && !((ch >= '0' && ch <= '9') ||
                         (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F') ||
                         ch == 'x' || ch == 'X') &&
        end_number(z, ch))
        return -1;
    if (ch >= '0' && ch <= '9' && (z->ntok > 0 || !ident)) {
        if (z->ntok == 0 && z->prev == '-')
            z->tok[z->ntok++] = '-';
        if (z->ntok < (int)sizeof z->tok - 1)
            z->tok[z->ntok++] = ch;
    } else if (z->ntok > 0 && z->ntok < (int)sizeof z->tok - 1 &&
               ((ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F') ||
                ch == 'x' || ch == 'X')) {
        z->tok[z->ntok++] = ch;
    }
    if (ch == '@' && z->at_line_start)
        z->nword = 0;
    if (z->nword >= 0 && z->nword < (int)sizeof z->word - 1 &&
        (ch == '@' || (ch >= 'a' && ch <= 'z'))) {
        z->word[z->nword++] = ch;
        z->word[z->nword] = '\0';
        if (strcmp(z->word, "@include") == 0)
            z->want_path = true;
    } else if (ch != ' ' && ch != '\t') {
        z->nword = -1;
    }
    if (ch == '"') {
        z->st = S_STRING;
        z->ninc = 0;
    } else if (ch == '#') {
        z->st = S_LINE_COMMENT;
    } else if (ch == '/' && z->prev == '/') {
        z->st = S_LINE_COMMENT;
    } else if (ch == '*' && z->prev == '/') {
        z->st = S_BLOCK_COMMENT;
    }
    if (ch != ' ' && ch != '\t')
        z->at_line_start = false;
    z->prev = ch;
    return 0;
}

static int scan_byte(scan *z, char ch)
{
    if (ch == '\0')
        return err_at(z->c->e, z->path, z->line, "(binary)", "a NUL byte "
                      "(expected a libconfig text file)");
    if (ch == '\n') {
        if (z->st == S_CODE && z->ntok > 0 && end_number(z, ch))
            return -1;
        z->line++;
        z->col = 0;
        z->at_line_start = true;
        z->nword = -1;
        if (z->st == S_LINE_COMMENT)
            z->st = S_CODE;
        z->prev = ch;
        return 0;
    }
    if (++z->col > CFGU_MAX_LINE)
        return err_at(z->c->e, z->path, z->line, "line", "longer than %d "
                      "bytes (expected a libconfig text file)", CFGU_MAX_LINE);
    switch (z->st) {
    case S_CODE:
        return code_byte(z, ch);
    case S_STRING:
        if (ch == '\\')
            z->st = S_ESCAPE;
        else if (ch == '"') {
            z->st = S_CODE;
            z->prev = ch;
            if (z->want_path) {
                z->want_path = false;
                return end_include(z);
            }
        } else if (z->ninc < (int)sizeof z->inc - 1) {
            z->inc[z->ninc++] = ch;
        }
        return 0;
    case S_ESCAPE:
        z->st = S_STRING;
        return 0;
    case S_BLOCK_COMMENT:
        if (ch == '/' && z->prev == '*')
            z->st = S_CODE, ch = ' ';
        z->prev = ch;
        return 0;
    default:
        return 0;
    }
}

static int scan_file(cfgu *c, const char *path, const char *dir, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return err_set(c->e, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return err_set(c->e, "%s: is a directory (expected a libconfig text "
                             "file)", path);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(c->e, "%s: cannot open: %s", path, strerror(errno));
    scan z = {.c = c, .path = path, .dir = dir, .depth = depth, .line = 1,
              .st = S_CODE, .at_line_start = true, .nword = -1};
    char buf[1 << 14];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; !rc && i < n; i++)
            rc = scan_byte(&z, buf[i]);
    if (!rc && z.st == S_CODE && z.ntok > 0)
        rc = end_number(&z, '\n');
    fclose(f);
    return rc ? -1 : 0;
}

/* The directory of path ("" for the working directory). */
static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, len, "%s", "");
    else if (slash == path)
        snprintf(dir, len, "/");
    else
        snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* libconfig names an @include'd file as written, relative to the
 * include directory: the answer names it from the working directory. */
static const char *resolve(cfgu *c, const char *f)
{
    if (f[0] == '/' || !c->dir[0])
        return f;
    snprintf(c->where, sizeof c->where, "%s/%s", c->dir, f);
    return c->where;
}

const char *cfgu_file(cfgu *c, const config_setting_t *s)
{
    const char *f = s ? config_setting_source_file(s) : NULL;
    return f ? resolve(c, f) : c->file;
}

int cfgu_read(cfgu *c, config_t *cfg)
{
    dir_of(c->file, c->dir, sizeof c->dir);
    if (scan_file(c, c->file, c->dir, 0))
        return -1;
    /* an @include names a file beside the one that includes it */
    if (c->dir[0]) /* (libconfig 1.7 strdup()s the argument: never NULL) */
        config_set_include_dir(cfg, c->dir);
    FILE *f = fopen(c->file, "r");
    if (!f)
        return err_set(c->e, "%s: cannot open: %s", c->file, strerror(errno));
    int rc = config_read(cfg, f);
    fclose(f);
    if (rc != CONFIG_TRUE) {
        const char *ef = config_error_file(cfg);
        return err_at(c->e, ef ? resolve(c, ef) : c->file,
                      config_error_line(cfg),
                      "(syntax)", "%s (expected libconfig syntax: key = "
                      "value;)", config_error_text(cfg));
    }
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
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), name,
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
        *rc = err_at(c->e, cfgu_file(c, g), cfgu_line(g), key,
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
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
                      "wrong type (expected %s)", expect);
    if (v < lo || v > hi)
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
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
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
                      "wrong type (expected %s)", expect);
    if (!isfinite(v) || v < lo || v > hi)
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
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
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
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
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
                      "wrong type (expected a quoted string)");
    const char *v = config_setting_get_string(s);
    if (strlen(v) >= len)
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
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
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
                      "wrong type (expected %s)", expect);
    snprintf(buf, sizeof buf, "%s", config_setting_get_string(s));
    for (int i = 0; i < n; i++)
        if (strcmp(buf, choices[i]) == 0) {
            *out = i;
            return 0;
        }
    char hint[96];
    util_did_you_mean(hint, sizeof hint, buf, choices, n);
    return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
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
        return err_at(c->e, cfgu_file(c, s), cfgu_line(s), key,
                      "wrong type (expected a group { ... })");
    *out = s;
    return 0;
}
