#include "report/rsweep.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

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

int rsweep_flatten(json_t *j, char ***names, char ***values, int *n)
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

/* Splits one CSV line (no line break) into fields, undoing the quoting:
 * -1 when it is malformed, -2 when memory ran out. */
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
        if (f.nomem) {
            free(f.s);
            return -2;
        }
        if (sv_push(out, f.s ? f.s : strdup("")))
            return -2;
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

static int append_line(rsweep_file *f, util_buf *b, llm_err *e)
{
    util_buf_printf(b, "\n");
    if (b->nomem)
        return err_set(e, "out of memory");
    if (write_all(f->fd, b->s, b->len) || fsync(f->fd))
        return err_set(e, "%s: write error: %s", f->path, strerror(errno));
    return 0;
}

static char *slurp(const char *path, size_t *len, llm_err *e)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        err_set(e, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    util_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        util_buf_append(&b, chunk, n);
    bool bad = ferror(fp);
    fclose(fp);
    if (bad || b.nomem) {
        free(b.s);
        if (bad)
            err_set(e, "%s: read error", path);
        else
            err_set(e, "out of memory");
        return NULL;
    }
    *len = b.len;
    char *text = b.s ? b.s : strdup("");
    if (!text)
        err_set(e, "out of memory");
    return text;
}

/* The header of an existing file: base columns must be this sweep's. */
static int read_header(rsweep_file *f, const char *line, llm_err *e)
{
    util_buf want = {0};
    base_header(&want, f->spec);
    if (want.nomem) {
        free(want.s);
        return err_set(e, "out of memory");
    }
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
        int bad = csv_split(line + wl + 1, &cols);
        if (bad) {
            sv_free(&cols);
            return bad == -2 ? err_set(e, "out of memory")
                             : err_set(e, "%s:1: a broken header", f->path);
        }
        f->outputs = cols.v;
        f->noutputs = cols.n;
    }
    return 0;
}

static int read_row(rsweep_file *f, const char *line, int lineno, llm_err *e)
{
    strvec c = {0};
    const sweep_spec *s = f->spec;
    int rc = 0;
    char *end;
    long point = -1;
    int bad = csv_split(line, &c);
    if (bad == -2) {
        rc = err_set(e, "out of memory");
        goto out;
    }
    if (bad || c.n < 4 + s->naxes) {
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
static int resume(rsweep_file *f, llm_err *e)
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

int rsweep_open(rsweep_file *f, const char *path, const sweep_spec *s,
               llm_err *e)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->spec = s;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->done = calloc((size_t)s->npoints, sizeof *f->done);
    if (!f->done)
        return err_set(e, "out of memory");
    /* the file is read back to resume and rewritten at the end: a device
     * or a pipe cannot be either */
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        rsweep_close(f);
        return err_set(e, "%s: not a regular file (expected a CSV file the "
                          "sweep appends to and resumes from)", path);
    }
    f->fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (f->fd < 0) {
        err_set(e, "%s: cannot create: %s", path, strerror(errno));
        rsweep_close(f);
        return -1;
    }
    /* two sweeps on one file would interleave their rows */
    if (flock(f->fd, LOCK_EX | LOCK_NB) != 0) {
        err_set(e, "%s: another sweep is writing it (expected one sweep per "
                   "--out file)", path);
        rsweep_close(f);
        return -1;
    }
    if (exists && resume(f, e)) {
        rsweep_close(f);
        return -1;
    }
    return 0;
}

static int write_header(rsweep_file *f, char **names, int n, llm_err *e)
{
    util_buf b = {0};
    base_header(&b, f->spec);
    f->outputs = calloc((size_t)(n ? n : 1), sizeof *f->outputs);
    bool ok = f->outputs != NULL;
    for (int i = 0; ok && i < n; i++) {
        ok = (f->outputs[i] = strdup(names[i])) != NULL;
        util_buf_printf(&b, ",");
        csv_field(&b, names[i]);
    }
    if (!ok && f->outputs) {
        for (int i = 0; i < n; i++)
            free(f->outputs[i]);
        free(f->outputs);
        f->outputs = NULL;
    }
    f->noutputs = ok ? n : 0;
    f->header = true;
    int rc = ok ? append_line(f, &b, e) : err_set(e, "out of memory");
    free(b.s);
    return rc;
}

/* A failed point before any success: held until the header exists (a
 * killed sweep reruns it). */
static int hold(rsweep_file *f, long point, const char *error, llm_err *e)
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

static int append_row(rsweep_file *f, long point, json_t *j, const char *error,
                      llm_err *e);

static int flush_held(rsweep_file *f, llm_err *e)
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

int rsweep_append(rsweep_file *f, long point, json_t *j, const char *error,
                 llm_err *e)
{
    if (!f->header && !j)
        return hold(f, point, error, e);
    return append_row(f, point, j, error, e);
}

static int append_row(rsweep_file *f, long point, json_t *j, const char *error,
                      llm_err *e)
{
    char **names = NULL, **values = NULL;
    int n = 0;
    if (j && rsweep_flatten(j, &names, &values, &n))
        return err_set(e, "out of memory");
    int rc = 0;
    if (!f->header)
        rc = write_header(f, names, n, e) || flush_held(f, e);
    util_buf b = {0};
    if (rc)
        goto out;
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
out:
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
int rsweep_finish(rsweep_file *f, llm_err *e)
{
    if (!f->header && (write_header(f, NULL, 0, e) || flush_held(f, e)))
        return -1; /* every point failed: the base columns only */
    size_t len;
    char *text = slurp(f->path, &len, e);
    if (!text)
        return -1;
    char **row = calloc((size_t)f->spec->npoints, sizeof *row);
    char *first = strchr(text, '\n');
    int rc = !row    ? err_set(e, "out of memory")
             : first ? 0
                     : err_set(e, "%s: no header", f->path);
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

void rsweep_close(rsweep_file *f)
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
