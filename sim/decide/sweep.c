#include "decide/sweep.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

/* ---- axes ------------------------------------------------------------- */

static int push_value(sweep_axis *a, const char *v, size_t len)
{
    /* the array doubles when n reaches a power of two (its capacity then),
     * so a million values cost 20 reallocs, not a million (quadratic where
     * realloc copies) */
    if ((a->n & (a->n - 1)) == 0) {
        char **nv = realloc(a->values,
                            (size_t)(a->n ? 2 * a->n : 1) * sizeof *nv);
        if (!nv)
            return -1;
        a->values = nv;
    }
    a->values[a->n] = strndup(v, len);
    return a->values[a->n++] ? 0 : -1;
}

static bool is_integral(double x) { return fabs(x - round(x)) < 1e-9; }

static int push_number(sweep_axis *a, double x, bool integral)
{
    char buf[64];
    if (integral)
        snprintf(buf, sizeof buf, "%.0f", round(x));
    else
        snprintf(buf, sizeof buf, "%.10g", x);
    return push_value(a, buf, strlen(buf));
}

/* How many values LO:HI[:STEP] or LO:HI:*F spans (the generating loop's
 * own recurrence, so rounding agrees), counting no further than one past
 * SWEEP_MAX_POINTS: a step too small to move x (1e20:2e20) counts to that
 * and stops. */
static long range_count(double lo, double hi, double step, bool geometric)
{
    long n = 0;
    for (double x = lo; x <= hi * (1 + 1e-12) + 1e-12 && n <= SWEEP_MAX_POINTS;
         x = geometric ? x * step : x + step)
        n++;
    return n;
}

/* LO:HI[:STEP] or LO:HI:*F; `others` is the product of the other axes'
 * sizes, so that a sweep too large is refused before its values are made. */
static int parse_range(sweep_axis *a, const char *spec, const char *v,
                       long others, llm_err *e)
{
    char *end;
    double lo = strtod(v, &end);
    if (end == v || *end != ':')
        return err_set(e, "\"%s\": \"%s\" is not a range (expected "
                          "LO:HI, LO:HI:STEP or LO:HI:*FACTOR)", spec, v);
    const char *h = end + 1;
    double hi = strtod(h, &end);
    if (end == h || (*end && *end != ':'))
        return err_set(e, "\"%s\": HI is not a number (expected "
                          "LO:HI, LO:HI:STEP or LO:HI:*FACTOR)", spec);
    bool geometric = false;
    double step = 1;
    if (*end == ':') {
        const char *st = end + 1;
        geometric = *st == '*';
        if (geometric)
            st++;
        step = strtod(st, &end);
        if (end == st || *end)
            return err_set(e, "\"%s\": the step is not a number "
                              "(expected LO:HI:STEP or LO:HI:*FACTOR)", spec);
    }
    if (!isfinite(lo) || !isfinite(hi) || !isfinite(step))
        return err_set(e, "\"%s\": expected finite numbers", spec);
    if (hi < lo)
        return err_set(e, "\"%s\": empty range (LO %g > HI %g; "
                          "expected LO <= HI)", spec, lo, hi);
    if (geometric && (step <= 1 || lo <= 0))
        return err_set(e, "\"%s\": a geometric range needs LO > 0 "
                          "and FACTOR > 1", spec);
    if (!geometric && step <= 0)
        return err_set(e, "\"%s\": empty range (STEP %g; expected "
                          "STEP > 0)", spec, step);
    long n = range_count(lo, hi, step, geometric);
    if (n > SWEEP_MAX_POINTS)
        return err_set(e, "\"%s\": more than %ld values", spec,
                       SWEEP_MAX_POINTS);
    if (others * n > SWEEP_MAX_POINTS)
        return err_set(e, "\"%s\": the sweep would have %ld points "
                          "(at most %ld)", spec, others * n, SWEEP_MAX_POINTS);
    bool integral = is_integral(lo) && is_integral(step);
    double x = lo;
    for (long i = 0; i < n; i++, x = geometric ? x * step : x + step)
        if (push_number(a, x, integral && is_integral(x)))
            return err_set(e, "out of memory");
    return 0;
}

static int parse_list(sweep_axis *a, const char *spec, const char *v,
                      llm_err *e)
{
    for (const char *p = v;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == 0)
            return err_set(e, "\"%s\": an empty value (expected "
                              "KEY=V1,V2,...)", spec);
        for (size_t i = 0; i < len; i++)
            if (p[i] == '"' || p[i] == '\n' || p[i] == '\r')
                return err_set(e, "\"%s\": values cannot hold quotes "
                                  "or line breaks", spec);
        if (push_value(a, p, len))
            return err_set(e, "out of memory");
        if (!c)
            return 0;
        p = c + 1;
    }
}

static bool looks_like_range(const char *v)
{
    return strchr(v, ':') && !strchr(v, ',') && (isdigit((unsigned char)*v) ||
                                                 *v == '-' || *v == '.');
}

int sweep_add_axis(sweep_spec *s, const char *spec, llm_err *e)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return err_set(e, "\"%s\": expected KEY=V1,V2,... or "
                          "KEY=LO:HI[:STEP] (e.g. nodes=1,2,4 or "
                          "parallel.tp=1:8:*2)", spec);
    size_t klen = (size_t)(eq - spec);
    if (klen >= sizeof s->axes[0].key)
        return err_set(e, "\"%s\": the key is too long", spec);
    for (size_t i = 0; i < klen; i++)
        if (!isalnum((unsigned char)spec[i]) && spec[i] != '_' &&
            spec[i] != '.')
            return err_set(e, "\"%s\": \"%.*s\" is not a config key "
                              "(expected names like parallel.tp)",
                           spec, (int)klen, spec);
    for (int i = 0; i < s->naxes; i++)
        if (strlen(s->axes[i].key) == klen &&
            strncmp(s->axes[i].key, spec, klen) == 0)
            return err_set(e, "\"%s\": %s is varied twice", spec,
                           s->axes[i].key);
    if (!eq[1])
        return err_set(e, "\"%s\": no values (expected KEY=V1,V2,... "
                          "or KEY=LO:HI[:STEP])", spec);
    sweep_axis a = {.n = 0};
    snprintf(a.key, sizeof a.key, "%.*s", (int)klen, spec);
    int rc = looks_like_range(eq + 1)
                 ? parse_range(&a, spec, eq + 1, s->naxes ? s->npoints : 1, e)
                 : parse_list(&a, spec, eq + 1, e);
    long total = (s->naxes ? s->npoints : 1) * (long)a.n;
    if (!rc && total > SWEEP_MAX_POINTS)
        rc = err_set(e, "\"%s\": the sweep would have %ld points "
                        "(at most %ld)", spec, total, SWEEP_MAX_POINTS);
    sweep_axis *na = rc ? NULL
                        : realloc(s->axes, (size_t)(s->naxes + 1) * sizeof *na);
    if (!na) {
        for (int i = 0; i < a.n; i++)
            free(a.values[i]);
        free(a.values);
        return rc ? rc : err_set(e, "out of memory");
    }
    s->axes = na;
    s->axes[s->naxes++] = a;
    s->npoints = total;
    return 0;
}

void sweep_free(sweep_spec *s)
{
    for (int i = 0; i < s->naxes; i++) {
        for (int k = 0; k < s->axes[i].n; k++)
            free(s->axes[i].values[k]);
        free(s->axes[i].values);
    }
    free(s->axes);
    memset(s, 0, sizeof *s);
}

static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void sweep_fingerprint(sweep_spec *s, const char *bytes, size_t len,
                       const char *const *sets, int nsets)
{
    uint64_t h = fnv(14695981039346656037ULL, bytes, len);
    for (int i = 0; i < nsets; i++)
        h = fnv(h, sets[i], strlen(sets[i]) + 1);
    snprintf(s->id, sizeof s->id, "%016llx", (unsigned long long)h);
}

const char *sweep_value(const sweep_spec *s, long point, int axis)
{
    long stride = 1;
    for (int i = s->naxes - 1; i > axis; i--)
        stride *= s->axes[i].n;
    const sweep_axis *a = &s->axes[axis];
    return a->values[(point / stride) % a->n];
}

void sweep_set(const sweep_spec *s, long point, int axis, char *buf,
               size_t size)
{
    snprintf(buf, size, "%s=%s", s->axes[axis].key,
             sweep_value(s, point, axis));
}
