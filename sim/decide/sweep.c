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
        return err_set(e, "--vary \"%s\": \"%s\" is not a range (expected "
                          "LO:HI, LO:HI:STEP or LO:HI:*FACTOR)", spec, v);
    const char *h = end + 1;
    double hi = strtod(h, &end);
    if (end == h || (*end && *end != ':'))
        return err_set(e, "--vary \"%s\": HI is not a number (expected "
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
            return err_set(e, "--vary \"%s\": the step is not a number "
                              "(expected LO:HI:STEP or LO:HI:*FACTOR)", spec);
    }
    if (!isfinite(lo) || !isfinite(hi) || !isfinite(step))
        return err_set(e, "--vary \"%s\": expected finite numbers", spec);
    if (hi < lo)
        return err_set(e, "--vary \"%s\": empty range (LO %g > HI %g; "
                          "expected LO <= HI)", spec, lo, hi);
    if (geometric && (step <= 1 || lo <= 0))
        return err_set(e, "--vary \"%s\": a geometric range needs LO > 0 "
                          "and FACTOR > 1", spec);
    if (!geometric && step <= 0)
        return err_set(e, "--vary \"%s\": empty range (STEP %g; expected "
                          "STEP > 0)", spec, step);
    long n = range_count(lo, hi, step, geometric);
    if (n > SWEEP_MAX_POINTS)
        return err_set(e, "--vary \"%s\": more than %ld values", spec,
                       SWEEP_MAX_POINTS);
    if (others * n > SWEEP_MAX_POINTS)
        return err_set(e, "--vary \"%s\": the sweep would have %ld points "
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
            return err_set(e, "--vary \"%s\": an empty value (expected "
                              "KEY=V1,V2,...)", spec);
        for (size_t i = 0; i < len; i++)
            if (p[i] == '"' || p[i] == '\n' || p[i] == '\r')
                return err_set(e, "--vary \"%s\": values cannot hold quotes "
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
        return err_set(e, "--vary \"%s\": expected KEY=V1,V2,... or "
                          "KEY=LO:HI[:STEP] (e.g. nodes=1,2,4 or "
                          "parallel.tp=1:8:*2)", spec);
    size_t klen = (size_t)(eq - spec);
    if (klen >= sizeof s->axes[0].key)
        return err_set(e, "--vary \"%s\": the key is too long", spec);
    for (size_t i = 0; i < klen; i++)
        if (!isalnum((unsigned char)spec[i]) && spec[i] != '_' &&
            spec[i] != '.')
            return err_set(e, "--vary \"%s\": \"%.*s\" is not a config key "
                              "(expected names like parallel.tp)",
                           spec, (int)klen, spec);
    for (int i = 0; i < s->naxes; i++)
        if (strlen(s->axes[i].key) == klen &&
            strncmp(s->axes[i].key, spec, klen) == 0)
            return err_set(e, "--vary \"%s\": %s is varied twice", spec,
                           s->axes[i].key);
    if (!eq[1])
        return err_set(e, "--vary \"%s\": no values (expected KEY=V1,V2,... "
                          "or KEY=LO:HI[:STEP])", spec);
    sweep_axis a = {.n = 0};
    snprintf(a.key, sizeof a.key, "%.*s", (int)klen, spec);
    int rc = looks_like_range(eq + 1)
                 ? parse_range(&a, spec, eq + 1, s->naxes ? s->npoints : 1, e)
                 : parse_list(&a, spec, eq + 1, e);
    long total = (s->naxes ? s->npoints : 1) * (long)a.n;
    if (!rc && total > SWEEP_MAX_POINTS)
        rc = err_set(e, "--vary \"%s\": the sweep would have %ld points "
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

/* ---- JSON to columns -------------------------------------------------- */

typedef struct strvec {
    char **v;
    int n, cap;
} strvec;

static int sv_push(strvec *s, char *owned)
{
    if (!owned)
        return -1;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 32;
        char **nv = realloc(s->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            free(owned);
            return -1;
        }
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = owned;
    return 0;
}

static void sv_free(strvec *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static char *scalar_text(json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING: return strdup(json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL: snprintf(buf, sizeof buf, "%.10g", json_real_value(v)); break;
    case JSON_TRUE: return strdup("true");
    case JSON_FALSE: return strdup("false");
    default: return strdup("");
    }
    return strdup(buf);
}

static int flatten(json_t *j, const char *prefix, strvec *names,
                   strvec *values)
{
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) {
        char name[512];
        snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", k);
        if (json_is_object(v)) {
            if (flatten(v, name, names, values))
                return -1;
        } else if (!json_is_array(v) && !json_is_null(v)) {
            if (sv_push(names, strdup(name)) ||
                sv_push(values, scalar_text(v)))
                return -1;
        }
    }
    return 0;
}

int sweep_flatten(json_t *j, char ***names, char ***values, int *n)
{
    strvec N = {0}, V = {0};
    if (flatten(j, "", &N, &V)) {
        sv_free(&N);
        sv_free(&V);
        return -1;
    }
    *names = N.v;
    *values = V.v;
    *n = N.n;
    return 0;
}

/* ---- CSV text --------------------------------------------------------- */

static void csv_field(util_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        util_buf_printf(b, "%s", s);
        return;
    }
    util_buf_printf(b, "\"");
    for (; *s; s++)
        util_buf_printf(b, *s == '"' ? "\"\"" : "%c", *s);
    util_buf_printf(b, "\"");
}

/* Splits one CSV line (no line break) into fields, undoing the quoting. */
static int csv_split(const char *line, strvec *out)
{
    const char *p = line;
    for (;;) {
        util_buf f = {0};
        if (*p == '"') {
            for (p++; *p; p++) {
                if (*p == '"' && p[1] == '"')
                    util_buf_printf(&f, "\""), p++;
                else if (*p == '"')
                    break;
                else
                    util_buf_printf(&f, "%c", *p);
            }
            if (*p != '"') {
                free(f.s);
                return -1;
            }
            p++;
        } else {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            util_buf_printf(&f, "%.*s", (int)len, p);
            p += len;
        }
        if (sv_push(out, f.s ? f.s : strdup("")))
            return -1;
        if (*p == '\0')
            return 0;
        if (*p != ',')
            return -1;
        p++;
    }
}

static void base_header(util_buf *b, const sweep_spec *s)
{
    util_buf_printf(b, "point,sweep");
    for (int i = 0; i < s->naxes; i++) {
        util_buf_printf(b, ",");
        csv_field(b, s->axes[i].key);
    }
    util_buf_printf(b, ",status,error");
}

/* ---- the file --------------------------------------------------------- */

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static int append_line(sweep_file *f, util_buf *b, llm_err *e)
{
    util_buf_printf(b, "\n");
    if (write_all(f->fd, b->s, b->len) || fsync(f->fd))
        return err_set(e, "%s: %s", f->path, strerror(errno));
    return 0;
}

static char *slurp(const char *path, size_t *len, llm_err *e)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        err_set(e, "%s: %s", path, strerror(errno));
        return NULL;
    }
    util_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        util_buf_append(&b, chunk, n);
    bool bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(b.s);
        err_set(e, "%s: read error", path);
        return NULL;
    }
    *len = b.len;
    return b.s ? b.s : strdup("");
}

/* The header of an existing file: base columns must be this sweep's. */
static int read_header(sweep_file *f, const char *line, llm_err *e)
{
    util_buf want = {0};
    base_header(&want, f->spec);
    size_t wl = want.len;
    bool ok = strncmp(line, want.s, wl) == 0 &&
              (line[wl] == '\0' || line[wl] == ',');
    if (!ok) {
        err_set(e, "%s:1: the columns are another sweep's (expected the "
                   "header to start %s); remove the file or name another "
                   "with --out", f->path, want.s);
        free(want.s);
        return -1;
    }
    free(want.s);
    f->header = true;
    if (line[wl] == ',') {
        strvec cols = {0};
        if (csv_split(line + wl + 1, &cols)) {
            sv_free(&cols);
            return err_set(e, "%s:1: a broken header", f->path);
        }
        f->outputs = cols.v;
        f->noutputs = cols.n;
    }
    return 0;
}

static int read_row(sweep_file *f, const char *line, int lineno, llm_err *e)
{
    strvec c = {0};
    const sweep_spec *s = f->spec;
    int rc = 0;
    char *end;
    long point = -1;
    if (csv_split(line, &c) || c.n < 4 + s->naxes) {
        rc = err_set(e, "%s:%d: a broken row (expected point, sweep, %d "
                        "axis values, status and error)", f->path, lineno,
                     s->naxes);
        goto out;
    }
    if (strcmp(c.v[1], s->id) != 0) {
        rc = err_set(e, "%s:%d: written by another sweep (its experiment "
                        "file or --set options differ: %s, this one %s); "
                        "remove the file or name another with --out",
                     f->path, lineno, c.v[1], s->id);
        goto out;
    }
    point = strtol(c.v[0], &end, 10);
    if (*end || point < 0 || point >= s->npoints) {
        rc = err_set(e, "%s:%d: point \"%s\" is not one of this sweep's "
                        "(expected 0..%ld)", f->path, lineno, c.v[0],
                     s->npoints - 1);
        goto out;
    }
    for (int a = 0; a < s->naxes; a++)
        if (strcmp(c.v[2 + a], sweep_value(s, point, a)) != 0) {
            rc = err_set(e, "%s:%d: point %ld has %s=%s where this sweep has "
                            "%s; remove the file or name another with --out",
                         f->path, lineno, point, s->axes[a].key, c.v[2 + a],
                         sweep_value(s, point, a));
            goto out;
        }
    if (!f->done[point]) {
        f->done[point] = true;
        f->ndone++;
    }
out:
    sv_free(&c);
    return rc;
}

/* Reads what an earlier run left; cuts a torn last line. */
static int resume(sweep_file *f, llm_err *e)
{
    size_t len;
    char *text = slurp(f->path, &len, e);
    if (!text)
        return -1;
    if (memchr(text, '\0', len)) {
        free(text);
        return err_set(e, "%s: a binary file, not a sweep's CSV", f->path);
    }
    size_t keep = len;
    while (keep > 0 && text[keep - 1] != '\n')
        keep--;
    int rc = 0;
    if (keep < len && truncate(f->path, (off_t)keep) != 0)
        rc = err_set(e, "%s: %s", f->path, strerror(errno));
    text[keep] = '\0';
    int lineno = 0;
    for (char *p = text, *nl; !rc && (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = '\0';
        if (nl > p && nl[-1] == '\r')
            nl[-1] = '\0';
        lineno++;
        rc = lineno == 1 ? read_header(f, p, e) : read_row(f, p, lineno, e);
    }
    free(text);
    return rc;
}

int sweep_open(sweep_file *f, const char *path, const sweep_spec *s,
               llm_err *e)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->spec = s;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->done = calloc((size_t)s->npoints, sizeof *f->done);
    if (!f->done)
        return err_set(e, "out of memory");
    struct stat st;
    if (stat(path, &st) == 0 && resume(f, e)) {
        sweep_close(f);
        return -1;
    }
    f->fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (f->fd < 0) {
        err_set(e, "%s: %s", path, strerror(errno));
        sweep_close(f);
        return -1;
    }
    return 0;
}

static int write_header(sweep_file *f, char **names, int n, llm_err *e)
{
    util_buf b = {0};
    base_header(&b, f->spec);
    f->outputs = calloc((size_t)(n ? n : 1), sizeof *f->outputs);
    for (int i = 0; f->outputs && i < n; i++) {
        f->outputs[i] = strdup(names[i]);
        util_buf_printf(&b, ",");
        csv_field(&b, names[i]);
    }
    f->noutputs = f->outputs ? n : 0;
    f->header = true;
    int rc = f->outputs ? append_line(f, &b, e) : err_set(e, "out of memory");
    free(b.s);
    return rc;
}

/* A failed point before any success: held until the header exists (a
 * killed sweep reruns it). */
static int hold(sweep_file *f, long point, const char *error, llm_err *e)
{
    long *h = realloc(f->held, (size_t)(f->nheld + 1) * sizeof *h);
    if (h)
        f->held = h;
    char **m = h ? realloc(f->held_error, (size_t)(f->nheld + 1) * sizeof *m)
                 : NULL;
    if (m)
        f->held_error = m;
    if (!h || !m || !(m[f->nheld] = strdup(error)))
        return err_set(e, "out of memory");
    h[f->nheld++] = point;
    return 0;
}

static int append_row(sweep_file *f, long point, json_t *j, const char *error,
                      llm_err *e);

static int flush_held(sweep_file *f, llm_err *e)
{
    int rc = 0;
    for (int i = 0; i < f->nheld; i++) {
        if (!rc)
            rc = append_row(f, f->held[i], NULL, f->held_error[i], e);
        free(f->held_error[i]);
    }
    free(f->held);
    free(f->held_error);
    f->held = NULL;
    f->held_error = NULL;
    f->nheld = 0;
    return rc;
}

int sweep_append(sweep_file *f, long point, json_t *j, const char *error,
                 llm_err *e)
{
    if (!f->header && !j)
        return hold(f, point, error, e);
    return append_row(f, point, j, error, e);
}

static int append_row(sweep_file *f, long point, json_t *j, const char *error,
                      llm_err *e)
{
    char **names = NULL, **values = NULL;
    int n = 0;
    if (j && sweep_flatten(j, &names, &values, &n))
        return err_set(e, "out of memory");
    int rc = 0;
    if (!f->header)
        rc = write_header(f, names, n, e) || flush_held(f, e);
    util_buf b = {0};
    util_buf_printf(&b, "%ld,%s", point, f->spec->id);
    for (int a = 0; a < f->spec->naxes; a++) {
        util_buf_printf(&b, ",");
        csv_field(&b, sweep_value(f->spec, point, a));
    }
    util_buf_printf(&b, ",%s,", j ? "ok" : "error");
    csv_field(&b, j ? "" : error);
    for (int c = 0; c < f->noutputs; c++) {
        util_buf_printf(&b, ",");
        for (int i = 0; i < n; i++)
            if (strcmp(names[i], f->outputs[c]) == 0) {
                csv_field(&b, values[i]);
                break;
            }
    }
    if (!rc)
        rc = append_line(f, &b, e);
    if (!rc && !f->done[point]) {
        f->done[point] = true;
        f->ndone++;
    }
    free(b.s);
    for (int i = 0; i < n; i++) {
        free(names[i]);
        free(values[i]);
    }
    free(names);
    free(values);
    return rc;
}

/* The file's rows in point order, one per point, through a temporary. */
int sweep_finish(sweep_file *f, llm_err *e)
{
    if (!f->header && (write_header(f, NULL, 0, e) || flush_held(f, e)))
        return -1; /* every point failed: the base columns only */
    size_t len;
    char *text = slurp(f->path, &len, e);
    if (!text)
        return -1;
    char **row = calloc((size_t)f->spec->npoints, sizeof *row);
    char *first = strchr(text, '\n');
    int rc = row && first ? 0 : err_set(e, "%s: no header", f->path);
    if (!rc) {
        *first = '\0';
        for (char *p = first + 1, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
            *nl = '\0';
            long point = strtol(p, NULL, 10);
            if (point >= 0 && point < f->spec->npoints && !row[point])
                row[point] = p;
        }
    }
    util_outfile out;
    if (!rc && util_out_open(&out, f->path, e) == 0) {
        fprintf(out.fp, "%s\n", text);
        for (long i = 0; i < f->spec->npoints; i++)
            if (row[i])
                fprintf(out.fp, "%s\n", row[i]);
        rc = util_out_commit(&out, e);
    } else {
        rc = -1;
    }
    free(row);
    free(text);
    return rc;
}

void sweep_close(sweep_file *f)
{
    for (int i = 0; i < f->nheld; i++)
        free(f->held_error[i]);
    free(f->held);
    free(f->held_error);
    if (f->fd >= 0)
        close(f->fd);
    for (int i = 0; i < f->noutputs; i++)
        free(f->outputs[i]);
    free(f->outputs);
    free(f->done);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}
