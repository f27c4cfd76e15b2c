#include "base/tsv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static int split(char *line, char **out, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *tab = strchr(p, '\t');
        if (n < max)
            out[n] = p;
        n++;
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

int tsv_load(const char *path, tsv *t, llm_err *e)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    size_t len;
    t->text = util_read_file(path, "a tab-separated table", &len, e);
    if (!t->text)
        return -1;
    if (memchr(t->text, '\0', len))
        return err_at(e, path, 1, "(file)", "binary data (expected a "
                      "tab-separated text table)"), tsv_free(t), -1;
    int nlines = 1;
    for (size_t i = 0; i < len; i++)
        nlines += t->text[i] == '\n';
    char **lines = malloc(sizeof(char *) * (size_t)nlines);
    int *lineno = malloc(sizeof(int) * (size_t)nlines);
    if (!lines || !lineno) {
        free(lines);
        free(lineno);
        tsv_free(t);
        return err_set(e, "%s: out of memory", path);
    }
    int n = 0, no = 0;
    char *p = t->text;
    while (p && *p) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        no++;
        size_t l = strlen(p);
        if (l && p[l - 1] == '\r')
            p[l - 1] = '\0';
        if (p[0] != '#' && p[0] != '\0') {
            lines[n] = p;
            lineno[n++] = no;
        }
        p = nl ? nl + 1 : NULL;
    }
    if (n == 0) {
        free(lines);
        free(lineno);
        tsv_free(t);
        return err_at(e, path, 1, "(header)", "empty table (expected a "
                      "header line of column names)");
    }
    t->cols = 1;
    for (const char *c = lines[0]; *c; c++)
        t->cols += *c == '\t';
    t->head = malloc(sizeof(char *) * (size_t)t->cols);
    t->rows = n - 1;
    t->cell = malloc(sizeof(char *) * (size_t)(t->rows ? t->rows : 1) *
                     (size_t)t->cols);
    t->line = malloc(sizeof(int) * (size_t)(t->rows ? t->rows : 1));
    int rc = 0;
    if (!t->head || !t->cell || !t->line) {
        rc = err_set(e, "%s: out of memory", path);
    } else {
        split(lines[0], t->head, t->cols);
        for (int r = 0; r < t->rows && rc == 0; r++) {
            int c = split(lines[r + 1], t->cell + (size_t)r * t->cols,
                          t->cols);
            t->line[r] = lineno[r + 1];
            if (c != t->cols)
                rc = err_at(e, path, lineno[r + 1], "(row)",
                            "%d fields (expected %d, one per column of the "
                            "header)", c, t->cols);
        }
    }
    free(lines);
    free(lineno);
    if (rc)
        tsv_free(t);
    return rc;
}

void tsv_free(tsv *t)
{
    free(t->text);
    free(t->cell);
    free(t->line);
    free(t->head);
    memset(t, 0, sizeof *t);
}

int tsv_col(const tsv *t, const char *name, llm_err *e)
{
    for (int c = 0; c < t->cols; c++)
        if (strcmp(t->head[c], name) == 0)
            return c;
    return err_at(e, t->path, 1, name, "missing column (expected a header "
                  "column named \"%s\")", name);
}

const char *tsv_get(const tsv *t, int row, int col)
{
    return t->cell[(size_t)row * t->cols + col];
}

int tsv_num(const tsv *t, int row, int col, double lo, double hi,
            double *out, llm_err *e)
{
    const char *s = tsv_get(t, row, col);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v))
        return err_at(e, t->path, t->line[row], t->head[col],
                      "\"%s\" is not a number (expected %g..%g)", s, lo, hi);
    if (v < lo || v > hi)
        return err_at(e, t->path, t->line[row], t->head[col],
                      "%g is out of range (expected %g..%g)", v, lo, hi);
    *out = v;
    return 0;
}
