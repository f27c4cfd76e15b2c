#include "decide/band.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"

const char *const band_serve_kinds[BAND_SERVE_KINDS] = {"throughput", "ttft",
                                                        "tpot", "e2e"};

void band_table_free(band_table *t)
{
    free(t->row);
    t->row = NULL;
    t->n = 0;
}

static const band_row *row_of(const band_table *t, const char *family)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->row[i].family, family) == 0)
            return &t->row[i];
    return NULL;
}

void band_find(const band_table *t, const char *key, band_est *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->key, sizeof out->key, "%s", key);
    char f[BAND_KEY];
    snprintf(f, sizeof f, "%s", key);
    /* the deepest prefix with a row: cut the last component each time */
    for (;;) {
        const band_row *r = row_of(t, f);
        if (r) {
            out->have = true;
            out->like = strchr(f, '/') != NULL;
            snprintf(out->family, sizeof out->family, "%s", f);
            out->cases = r->cases;
            out->lo = r->lo;
            out->hi = r->hi;
            out->level = t->level;
            return;
        }
        char *slash = strrchr(f, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
}

void band_train_key(char *buf, size_t n, const char *arch, const char *stack,
                    const plan_train *p)
{
    const char *kind = p->tp > 1 || p->pp > 1 ? "tp-pp"
                       : p->zero >= 3         ? "zero3"
                                              : "dp";
    snprintf(buf, n, "training/%s/%s/%s/%s", arch, stack,
             dtype_name(p->precision), kind);
}

void band_coll_key(char *buf, size_t n, double size_bytes,
                   const char *fabric)
{
    const char *size = size_bytes < 1048576    ? "under-1MiB"
                       : size_bytes < 67108864 ? "1-64MiB"
                                               : "64MiB-up";
    snprintf(buf, n, "collectives/%s/%s", size, fabric);
}

void band_kernel_key(char *buf, size_t n, const char *op, const char *gpu)
{
    snprintf(buf, n, "kernels/%s/%s", op, gpu);
}

void band_serve_key(char *buf, size_t n, band_serve_kind k,
                    const char *engine)
{
    snprintf(buf, n, "serving/%s/%s", band_serve_kinds[k], engine);
}

void band_ends(const band_est *b, double value, bool inverse, double *lo,
               double *hi)
{
    *lo = inverse ? value / b->hi : value * b->lo;
    *hi = inverse ? value / b->lo : value * b->hi;
}

void band_brief(char *buf, size_t n, const band_est *b, double value,
                const char *fmt, bool inverse)
{
    buf[0] = '\0';
    if (!b->have)
        return;
    double lo, hi;
    band_ends(b, value, inverse, &lo, &hi);
    char l[32], h[32];
    snprintf(l, sizeof l, fmt, lo);
    snprintf(h, sizeof h, fmt, hi);
    snprintf(buf, n, "%s-%s (%d%s)", l, h, b->cases,
             b->like ? "" : ", none like this");
}

void band_text(char *buf, size_t n, const band_est *b, double value,
               const char *fmt, bool inverse)
{
    if (!b->have) {
        snprintf(buf, n, " (no error band: %s has no published runs)",
                 b->key);
        return;
    }
    double lo, hi;
    band_ends(b, value, inverse, &lo, &hi);
    char l[32], h[32];
    snprintf(l, sizeof l, fmt, lo);
    snprintf(h, sizeof h, fmt, hi);
    if (b->like && b->cases < BAND_MIN_CASES)
        snprintf(buf, n, " (%s-%s; %.0f%% band from the %d published runs "
                         "like this and their wider family's)", l, h,
                 100 * b->level, b->cases);
    else if (b->like)
        snprintf(buf, n, " (%s-%s; %.0f%% band from %d published runs like "
                         "this)", l, h, 100 * b->level, b->cases);
    else
        snprintf(buf, n, " (%s-%s; %.0f%% band of all %d published %s runs: "
                         "none like this)", l, h, 100 * b->level, b->cases,
                 b->family);
}
