#include "serve/wl.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_int.h>

#include "base/util.h"

const char *const wl_arrival_names[4] = {"poisson", "gamma", "burst",
                                         "offline"};

int wl_arrival_parse(const char *opt, const char *name, wl_arrival_kind *out,
                     llm_err *e)
{
    for (int i = 0; i < 4; i++) {
        if (strcmp(name, wl_arrival_names[i]) == 0) {
            *out = (wl_arrival_kind)i;
            return 0;
        }
    }
    char hint[96];
    util_did_you_mean(hint, sizeof hint, name, wl_arrival_names, 4);
    return err_set(e,
                   "%s: unknown arrival process \"%s\"%s (expected poisson, "
                   "gamma, burst or offline)",
                   opt, name, hint);
}

/* ---- reading lines ---------------------------------------------------- */

#define TRACE_HEADER "TIMESTAMP,ContextTokens,GeneratedTokens"
#define TRACE_EXPECT_ROW "a row " TRACE_HEADER
#define TIME_EXPECT "expected YYYY-MM-DD HH:MM:SS[.fraction] or seconds >= 0"
#define LIST_EXPECT                                                            \
    "one integer >= 1 per line; '#' comments and blank lines allowed"

static const char *const trace_cols[3] = {"TIMESTAMP", "ContextTokens",
                                          "GeneratedTokens"};

/* One line at a time through stdio's buffer: a `limit` stops reading early,
 * and a 100 MB line (a wrong or binary file) costs WL_LINE_MAX bytes, not
 * 100 MB, because reading stops at the first byte past the limit. */
typedef struct line_rd {
    FILE *f;
    const char *path;
    const char *expect; /* what a line should be, for the too-long message */
    int lineno;         /* of the line in buf, 1-based */
    long nul_at;        /* offset of the first NUL byte in buf, -1 if none */
    char buf[WL_LINE_MAX + 2]; /* the line, a CR it may end in, a NUL */
} line_rd;

static void rd_init(line_rd *rd, FILE *f, const char *path, const char *expect)
{
    rd->f = f;
    rd->path = path;
    rd->expect = expect;
    rd->lineno = 0;
    rd->nul_at = -1;
    rd->buf[0] = '\0';
}

/* Reads the next line into rd->buf without its "\n" or "\r\n".  Returns 1
 * for a line, 0 at the end of the file, -1 (e set) on a read error or a
 * line over WL_LINE_MAX bytes.  A NUL byte is not an error here (the caller
 * knows which column it fell in); rd->nul_at says where it is. */
static int rd_next(line_rd *rd, llm_err *e)
{
    size_t len = 0;
    int c;
    rd->nul_at = -1;
    /* getc_unlocked: the FILE is ours alone, and the lock per byte would
     * triple the cost of a large trace */
    while ((c = getc_unlocked(rd->f)) != EOF && c != '\n') {
        if (len == WL_LINE_MAX + 1)
            break; /* one byte more than a line and its CR: too long */
        if (c == '\0' && rd->nul_at < 0)
            rd->nul_at = (long)len;
        rd->buf[len++] = (char)c;
    }
    if (ferror(rd->f))
        return err_at(e, rd->path, rd->lineno + 1, "line", "read error: %s",
                      strerror(errno));
    if (c == EOF && len == 0)
        return 0;
    rd->lineno++;
    if (len > 0 && rd->buf[len - 1] == '\r')
        len--;
    if (len > WL_LINE_MAX)
        return err_at(e, rd->path, rd->lineno, "line",
                      "longer than %d bytes (expected %s)", WL_LINE_MAX,
                      rd->expect);
    rd->buf[len] = '\0';
    return 1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

static char *skip_bom(char *s)
{
    return strncmp(s, "\xEF\xBB\xBF", 3) == 0 ? s + 3 : s;
}

/* Splits `line` at commas in place, keeps the first `max` fields trimmed,
 * and returns how many fields there are in all (more than max: extra
 * columns).  No quoting: the Azure traces have none. */
static int split_csv(char *line, char **fld, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (n < max)
            fld[n] = trim(p);
        n++;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

/* A whole-string integer in [1, INT_MAX]; on error `why` says what is
 * wrong with it (the caller adds what was expected). */
static int parse_count(const char *s, int *out, char *why, size_t len)
{
    if (*s == '\0') {
        snprintf(why, len, "missing value");
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0') {
        snprintf(why, len, "\"%.40s\" is not an integer", s);
        return -1;
    }
    if (v < 0) {
        snprintf(why, len, "\"%.40s\" is negative", s);
        return -1;
    }
    if (v < 1) {
        snprintf(why, len, "\"%.40s\" is below 1", s);
        return -1;
    }
    if (errno == ERANGE || v > INT_MAX) {
        snprintf(why, len, "\"%.40s\" is above %d", s, INT_MAX);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* ---- timestamps ------------------------------------------------------- */

/* Whole seconds and nanoseconds apart: a 2023 date is 1.7e9 s since the
 * epoch, where a double keeps only ~0.2 us, so arrivals are differenced in
 * integers first. */
typedef struct trace_time {
    int64_t sec;
    int32_t ns;
} trace_time;

enum { TS_DATE = 1, TS_SECONDS = 2 };

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant,
 * "chrono-Compatible Low-Level Date Algorithms", days_from_civil): exact,
 * no timegm, no time zone, no locale. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400; /* [0, 399] */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30,
                                 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

/* Exactly n decimal digits at s.  Stops at a NUL (not a digit), so callers
 * may chain it with && over a short string without reading past its end. */
static int digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        *v = *v * 10 + (s[i] - '0');
    }
    return 1;
}

static int looks_like_date(const char *s)
{
    int y;
    return digits(s, 4, &y) && s[4] == '-';
}

static int range_error(char *why, size_t len, const char *what, int v, int lo,
                       int hi)
{
    snprintf(why, len, "%s %02d out of range %02d-%02d", what, v, lo, hi);
    return -1;
}

/* The optional ".fraction" after the seconds: 1 to 9 digits. */
static int parse_fraction(const char *p, int32_t *ns, char *why, size_t len)
{
    *ns = 0;
    if (*p == '\0')
        return 0;
    int k = 0;
    if (*p == '.') /* digits past the ninth are counted, not added: an int */
        for (p++; isdigit((unsigned char)*p); p++, k++)
            if (k < 9)
                *ns = *ns * 10 + (*p - '0');
    if (k == 0 || k > 9 || *p != '\0') {
        snprintf(why, len,
                 "bad fraction of a second (1 to 9 digits after "
                 "the point, nothing after them)");
        return -1;
    }
    for (; k < 9; k++)
        *ns *= 10;
    return 0;
}

/* "YYYY-MM-DD HH:MM:SS[.fffffffff]", UTC (a 'T' for the space is fine). */
static int parse_date(const char *s, trace_time *t, char *why, size_t len)
{
    int y, mo, d, h, mi, se;
    if (!(digits(s, 4, &y) && s[4] == '-' && digits(s + 5, 2, &mo) &&
          s[7] == '-' && digits(s + 8, 2, &d) &&
          (s[10] == ' ' || s[10] == 'T') && digits(s + 11, 2, &h) &&
          s[13] == ':' && digits(s + 14, 2, &mi) && s[16] == ':' &&
          digits(s + 17, 2, &se))) {
        snprintf(why, len, "\"%.40s\" is not a date and time", s);
        return -1;
    }
    if (mo < 1 || mo > 12)
        return range_error(why, len, "month", mo, 1, 12);
    if (d < 1 || d > days_in_month(y, mo))
        return range_error(why, len, "day", d, 1, days_in_month(y, mo));
    if (h > 23)
        return range_error(why, len, "hour", h, 0, 23);
    if (mi > 59)
        return range_error(why, len, "minute", mi, 0, 59);
    if (se > 59)
        return range_error(why, len, "second", se, 0, 59);
    if (parse_fraction(s + 19, &t->ns, why, len) != 0)
        return -1;
    t->sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    return 0;
}

/* Plain seconds, for hand-written traces.  The 1e15 cap keeps the whole
 * seconds inside int64 with room to spare. */
static int parse_seconds(const char *s, trace_time *t, char *why, size_t len)
{
    char *end;
    double x = strtod(s, &end);
    if (*s == '\0') {
        snprintf(why, len, "missing value");
        return -1;
    }
    if (end == s || *end != '\0' || !isfinite(x)) {
        snprintf(why, len, "\"%.40s\" is not a date or a number", s);
        return -1;
    }
    if (x < 0 || x >= 1e15) {
        snprintf(why, len, "\"%.40s\" is %s", s,
                 x < 0 ? "negative" : "too large");
        return -1;
    }
    double whole = floor(x);
    t->sec = (int64_t)whole;
    t->ns = (int32_t)llround((x - whole) * 1e9);
    if (t->ns >= 1000000000) {
        t->sec++;
        t->ns -= 1000000000;
    }
    return 0;
}

static int parse_time(const char *s, trace_time *t, int *form, char *why,
                      size_t len)
{
    *form = looks_like_date(s) ? TS_DATE : TS_SECONDS;
    return *form == TS_DATE ? parse_date(s, t, why, len)
                            : parse_seconds(s, t, why, len);
}

static int time_before(trace_time a, trace_time b)
{
    return a.sec < b.sec || (a.sec == b.sec && a.ns < b.ns);
}

/* ---- traces ----------------------------------------------------------- */

typedef struct trace_acc {
    wl_request *r;
    int n, cap;
    int form; /* TS_DATE or TS_SECONDS, fixed by the first row */
    trace_time first, prev;
    int blank_line; /* the first blank line not (yet) followed by a row */
    double rate_scale;
} trace_acc;

/* A NUL byte means a binary file; name the column it fell in. */
static int nul_error(const line_rd *rd, llm_err *e)
{
    int commas = 0;
    for (long i = 0; i < rd->nul_at; i++)
        commas += rd->buf[i] == ',';
    char col[32];
    snprintf(col, sizeof col, "column %d", commas + 1);
    return err_at(
        e, rd->path, rd->lineno, commas < 3 ? trace_cols[commas] : col,
        "NUL byte: a binary file? (expected a text CSV, %s)", TRACE_EXPECT_ROW);
}

static int trace_header(line_rd *rd, llm_err *e)
{
    int got = rd_next(rd, e);
    if (got < 0)
        return -1;
    if (got == 0)
        return err_at(e, rd->path, 1, "header",
                      "empty file (expected a first line " TRACE_HEADER
                      " and rows)");
    if (rd->nul_at >= 0)
        return err_at(e, rd->path, 1, "header",
                      "NUL byte: a binary file? (expected a text CSV whose "
                      "first line is " TRACE_HEADER ")");
    char *fld[3];
    char *line = skip_bom(rd->buf);
    line = trim(line);
    if (isdigit((unsigned char)line[0])) /* a date or plain seconds */
        return err_at(e, rd->path, 1, "header",
                      "missing: the first line is a row (expected a first "
                      "line " TRACE_HEADER ")");
    int nf = split_csv(line, fld, 3);
    for (int i = 0; i < 3; i++) {
        const char *got_name = i < nf ? fld[i] : "";
        if (strcmp(got_name, trace_cols[i]) != 0)
            return err_at(e, rd->path, 1, "header",
                          "column %d is \"%.40s\" (expected %s; the header "
                          "is " TRACE_HEADER ")",
                          i + 1, got_name, trace_cols[i]);
    }
    if (nf > 3)
        return err_at(e, rd->path, 1, "header",
                      "%d columns (expected 3: " TRACE_HEADER ")", nf);
    return 0;
}

static int acc_push(trace_acc *acc, const char *path, wl_request r, llm_err *e)
{
    if (acc->n == acc->cap) {
        int cap = acc->cap ? acc->cap * 2 : 4096;
        wl_request *nr = realloc(acc->r, (size_t)cap * sizeof *nr);
        if (!nr)
            return err_set(e, "%s: out of memory after %d rows", path, acc->n);
        acc->r = nr;
        acc->cap = cap;
    }
    acc->r[acc->n++] = r;
    return 0;
}

/* The TIMESTAMP column: well formed, the same form as the first row, not
 * earlier than the row before. */
static int trace_time_field(const line_rd *rd, trace_acc *acc, const char *s,
                            trace_time *t, llm_err *e)
{
    char why[160];
    int form;
    if (parse_time(s, t, &form, why, sizeof why) != 0)
        return err_at(e, rd->path, rd->lineno, trace_cols[0], "%s (%s)", why,
                      TIME_EXPECT);
    if (acc->n == 0) {
        acc->form = form;
        acc->first = *t;
    } else if (form != acc->form) {
        return err_at(e, rd->path, rd->lineno, trace_cols[0],
                      "\"%.40s\" is %s but the first row had %s (expected the "
                      "same form on every row)",
                      s, form == TS_DATE ? "a date" : "plain seconds",
                      acc->form == TS_DATE ? "a date" : "plain seconds");
    } else if (time_before(*t, acc->prev)) {
        return err_at(e, rd->path, rd->lineno, trace_cols[0],
                      "\"%.40s\" is earlier than the row before (expected "
                      "rows in non-decreasing time)",
                      s);
    }
    acc->prev = *t;
    return 0;
}

static int trace_count_field(const line_rd *rd, int col, const char *s, int *v,
                             llm_err *e)
{
    char why[96];
    if (parse_count(s, v, why, sizeof why) != 0)
        return err_at(e, rd->path, rd->lineno, trace_cols[col],
                      "%s (expected an integer >= 1)", why);
    return 0;
}

static int trace_row(line_rd *rd, trace_acc *acc, llm_err *e)
{
    if (rd->nul_at >= 0)
        return nul_error(rd, e);
    char *fld[3];
    int nf = split_csv(rd->buf, fld, 3);
    if (nf == 1 && fld[0][0] == '\0') {
        if (!acc->blank_line)
            acc->blank_line = rd->lineno;
        return 0; /* fine if nothing follows */
    }
    if (acc->blank_line)
        return err_at(e, rd->path, acc->blank_line, trace_cols[0],
                      "empty line before more rows (expected %s; blank lines "
                      "only at the end)",
                      TRACE_EXPECT_ROW);
    if (nf < 3)
        return err_at(e, rd->path, rd->lineno, trace_cols[nf],
                      "missing (expected 3 columns: " TRACE_HEADER ")");
    if (nf > 3)
        return err_at(e, rd->path, rd->lineno, "column 4",
                      "extra column (expected 3 columns: " TRACE_HEADER ")");
    trace_time t;
    wl_request r;
    if (trace_time_field(rd, acc, fld[0], &t, e) != 0 ||
        trace_count_field(rd, 1, fld[1], &r.prompt_tokens, e) != 0 ||
        trace_count_field(rd, 2, fld[2], &r.output_tokens, e) != 0)
        return -1;
    r.arrival_s = ((double)(t.sec - acc->first.sec) +
                   (double)(t.ns - acc->first.ns) * 1e-9) /
                  acc->rate_scale;
    return acc_push(acc, rd->path, r, e);
}

int wl_read_trace(const char *path, double rate_scale, int limit,
                  wl_request **out, int *n, llm_err *e)
{
    *out = NULL;
    *n = 0;
    if (!(rate_scale > 0) || !isfinite(rate_scale))
        return err_set(e,
                       "%s: rate scale %g (expected a number > 0; 2 = "
                       "twice the rate)",
                       path, rate_scale);
    FILE *f = util_open_input(path, "a text CSV with columns " TRACE_HEADER,
                              e);
    if (!f)
        return -1;
    line_rd rd;
    rd_init(&rd, f, path, "a text CSV with columns " TRACE_HEADER);
    trace_acc acc = {.rate_scale = rate_scale};
    int rc = trace_header(&rd, e);
    while (rc == 0 && (limit <= 0 || acc.n < limit)) {
        int got = rd_next(&rd, e);
        if (got <= 0) {
            rc = got;
            break;
        }
        rc = trace_row(&rd, &acc, e);
    }
    fclose(f);
    if (rc == 0 && acc.n == 0)
        rc = err_at(e, path, 2, trace_cols[0],
                    "no rows after the header (expected at least %s)",
                    TRACE_EXPECT_ROW);
    if (rc != 0) {
        free(acc.r);
        return -1;
    }
    *out = acc.r;
    *n = acc.n;
    return 0;
}

/* ---- length specs ----------------------------------------------------- */

/* the forms besides a fixed count, and all of them, for messages */
#define LEN_OTHER_FORMS                                                        \
    "uniform:LO:HI, lognormal:MEAN:SIGMA or empirical:PATH[:MEAN]"
#define LEN_FORMS "N, " LEN_OTHER_FORMS
#define UNIFORM_EXPECT "expected uniform:LO:HI with 1 <= LO <= HI"
#define LOGNORMAL_EXPECT                                                       \
    "expected lognormal:MEAN:SIGMA with MEAN >= 1 tokens and SIGMA >= 0"

static const char *const len_forms[3] = {"uniform", "lognormal", "empirical"};

/* "OPT: " before a message that names a file, so the user knows which
 * option pointed at it. */
static int prefix_opt(llm_err *e, const char *opt)
{
    if (!e)
        return -1;
    char body[sizeof e->msg];
    memcpy(body, e->msg, sizeof body);
    return err_set(e, "%s: %s", opt, body);
}

/* Splits "X:Y" at its one colon into a and b (copies, `cap` bytes each). */
static int split2(const char *args, char *a, char *b, size_t cap)
{
    const char *colon = strchr(args, ':');
    if (!colon || strchr(colon + 1, ':') || (size_t)(colon - args) >= cap ||
        strlen(colon + 1) >= cap)
        return -1;
    memcpy(a, args, (size_t)(colon - args));
    a[colon - args] = '\0';
    strcpy(b, colon + 1);
    return 0;
}

static int len_uniform(const char *opt, const char *spec, const char *args,
                       wl_len *out, llm_err *e)
{
    char lo_s[64], hi_s[64], why[96];
    int lo, hi;
    if (split2(args, lo_s, hi_s, sizeof lo_s) != 0)
        return err_set(e, "%s: \"%s\": two bounds needed (" UNIFORM_EXPECT ")",
                       opt, spec);
    if (parse_count(lo_s, &lo, why, sizeof why) != 0)
        return err_set(e, "%s: \"%s\": lower bound %s (" UNIFORM_EXPECT ")",
                       opt, spec, why);
    if (parse_count(hi_s, &hi, why, sizeof why) != 0)
        return err_set(e, "%s: \"%s\": upper bound %s (" UNIFORM_EXPECT ")",
                       opt, spec, why);
    if (lo > hi)
        return err_set(
            e, "%s: \"%s\": lower bound above upper (" UNIFORM_EXPECT ")", opt,
            spec);
    out->kind = WL_UNIFORM;
    out->a = lo;
    out->b = hi;
    return 0;
}

static int parse_real(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return *s != '\0' && end != s && *end == '\0' && isfinite(*v) ? 0 : -1;
}

static int len_lognormal(const char *opt, const char *spec, const char *args,
                         wl_len *out, llm_err *e)
{
    char mean_s[64], sigma_s[64];
    double mean, sigma;
    if (split2(args, mean_s, sigma_s, sizeof mean_s) != 0)
        return err_set(
            e, "%s: \"%s\": a mean and a sigma needed (" LOGNORMAL_EXPECT ")",
            opt, spec);
    if (parse_real(mean_s, &mean) != 0 || mean < 1)
        return err_set(
            e,
            "%s: \"%s\": mean \"%s\" is not a number >= 1 (" LOGNORMAL_EXPECT
            ")",
            opt, spec, mean_s);
    if (parse_real(sigma_s, &sigma) != 0 || sigma < 0)
        return err_set(
            e,
            "%s: \"%s\": sigma \"%s\" is not a number >= 0 (" LOGNORMAL_EXPECT
            ")",
            opt, spec, sigma_s);
    out->kind = WL_LOGNORMAL;
    out->a = mean;
    out->b = sigma;
    return 0;
}

static int list_push(wl_len *out, int *cap, int v)
{
    if (out->nvalues == *cap) {
        int ncap = *cap ? *cap * 2 : 1024;
        int *nv = realloc(out->values, (size_t)ncap * sizeof *nv);
        if (!nv)
            return -1;
        out->values = nv;
        *cap = ncap;
    }
    out->values[out->nvalues++] = v;
    return 0;
}

/* One integer per line; `got` says whether rd->buf already holds the first
 * line (read to tell a list from a trace). */
static int empirical_list(line_rd *rd, int got, wl_len *out, llm_err *e)
{
    int cap = 0;
    char why[96];
    for (; got > 0; got = rd_next(rd, e)) {
        if (rd->nul_at >= 0)
            return err_at(e, rd->path, rd->lineno, "value",
                          "NUL byte: a binary file? (expected " LIST_EXPECT
                          ")");
        char *hash = strchr(rd->buf, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(rd->lineno == 1 ? skip_bom(rd->buf) : rd->buf);
        if (*s == '\0')
            continue;
        int v;
        if (parse_count(s, &v, why, sizeof why) != 0)
            return err_at(e, rd->path, rd->lineno, "value",
                          "%s (expected " LIST_EXPECT ")", why);
        if (list_push(out, &cap, v) != 0)
            return err_set(e, "%s: out of memory after %d values", rd->path,
                           out->nvalues);
    }
    if (got < 0)
        return -1;
    if (out->nvalues == 0)
        return err_at(e, rd->path, 0, NULL,
                      "no values (expected " LIST_EXPECT ")");
    return 0;
}

static int empirical_trace(const char *path, int which_col, wl_len *out,
                           llm_err *e)
{
    wl_request *r;
    int n;
    if (wl_read_trace(path, 1.0, 0, &r, &n, e) != 0)
        return -1;
    out->values = malloc((size_t)n * sizeof *out->values);
    if (!out->values) {
        free(r);
        return err_set(e, "%s: out of memory for %d values", path, n);
    }
    for (int i = 0; i < n; i++)
        out->values[i] =
            which_col == 0 ? r[i].prompt_tokens : r[i].output_tokens;
    out->nvalues = n;
    free(r);
    return 0;
}

/* "PATH:MEAN": the mean the values are rescaled to, split off the path
 * when what follows its last colon is a number; 0 when there is none.
 * -1 when that number is below 1. */
static double split_mean(const char *args, char *path, size_t cap)
{
    const char *colon = strrchr(args, ':');
    char *end = NULL;
    double mean = colon ? strtod(colon + 1, &end) : 0;
    if (!colon || end == colon + 1 || *end != '\0') {
        snprintf(path, cap, "%s", args);
        return 0;
    }
    snprintf(path, cap, "%.*s", (int)(colon - args), args);
    return mean >= 1 && isfinite(mean) ? mean : -1;
}

/* Each value times mean / the values' mean, rounded, at least 1: the
 * file's shape at another scale. */
static void rescale(wl_len *l, double mean)
{
    double k = mean / gsl_stats_int_mean(l->values, 1, (size_t)l->nvalues);
    for (int i = 0; i < l->nvalues; i++) {
        double v = floor(l->values[i] * k + 0.5);
        l->values[i] = v < 1 ? 1 : v > INT_MAX ? INT_MAX : (int)v;
    }
}

/* A trace if its first line starts with TIMESTAMP (wl_read_trace then
 * checks the whole header), else a list of integers; ":MEAN" after the
 * path rescales the values to that mean. */
static int len_empirical(const char *opt, const char *spec, const char *args,
                         int which_col, wl_len *out, llm_err *e)
{
    char path[4096];
    double mean = split_mean(args, path, sizeof path);
    if (mean < 0)
        return err_set(e, "%s: \"%s\": mean below 1 (expected "
                          "empirical:PATH:MEAN with MEAN >= 1 tokens)",
                       opt, spec);
    if (*path == '\0')
        return err_set(e, "%s: \"%s\": no file (expected empirical:PATH)", opt,
                       spec);
    llm_err why;
    FILE *f = util_open_input(path, "empirical:PATH, a trace or a file of "
                                    "integers", &why);
    if (!f) /* the directory message says what was expected already */
        return err_set(e, "%s: %s%s", opt, why.msg,
                       strstr(why.msg, "(expected") ? ""
                       : " (expected empirical:PATH, a trace or a file of "
                         "integers)");
    line_rd rd;
    rd_init(&rd, f, path, LIST_EXPECT);
    int got = rd_next(&rd, e);
    int rc;
    out->kind = WL_EMPIRICAL;
    if (got > 0 && strncmp(skip_bom(rd.buf), "TIMESTAMP", 9) == 0) {
        fclose(f);
        rc = empirical_trace(path, which_col, out, e);
    } else {
        rc = got < 0 ? -1 : empirical_list(&rd, got, out, e);
        fclose(f);
    }
    if (rc != 0) {
        wl_len_free(out);
        return prefix_opt(e, opt);
    }
    if (mean > 0)
        rescale(out, mean);
    return 0;
}

/* No colon and a number-like start: a fixed count. */
static int len_fixed(const char *opt, const char *spec, wl_len *out, llm_err *e)
{
    char why[96];
    int v;
    if (parse_count(spec, &v, why, sizeof why) != 0)
        return err_set(e,
                       "%s: %s (expected a token count N >= 1, or "
                       LEN_OTHER_FORMS ")",
                       opt, why);
    out->kind = WL_FIXED;
    out->a = v;
    return 0;
}

int wl_len_parse(const char *opt, const char *spec, int which_col, wl_len *out,
                 llm_err *e)
{
    LLM_ASSERT(which_col == 0 || which_col == 1);
    *out = (wl_len){.kind = WL_FIXED};
    if (!spec || *spec == '\0')
        return err_set(e, "%s: empty length (expected %s)", opt, LEN_FORMS);
    const char *colon = strchr(spec, ':');
    if (!colon && (isdigit((unsigned char)spec[0]) || strchr("+-.", spec[0])))
        return len_fixed(opt, spec, out, e);
    size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *args = colon ? colon + 1 : "";
    if (klen == 7 && strncmp(spec, "uniform", 7) == 0)
        return len_uniform(opt, spec, args, out, e);
    if (klen == 9 && strncmp(spec, "lognormal", 9) == 0)
        return len_lognormal(opt, spec, args, out, e);
    if (klen == 9 && strncmp(spec, "empirical", 9) == 0)
        return len_empirical(opt, spec, args, which_col, out, e);
    char kind[64], hint[96];
    snprintf(kind, sizeof kind, "%.*s", (int)(klen < 63 ? klen : 63), spec);
    util_did_you_mean(hint, sizeof hint, kind, len_forms, 3);
    return err_set(e, "%s: \"%s\": unknown length form \"%s\"%s (expected %s)",
                   opt, spec, kind, hint, LEN_FORMS);
}

void wl_len_free(wl_len *l)
{
    free(l->values);
    l->values = NULL;
    l->nvalues = 0;
}

/* ---- drawing ---------------------------------------------------------- */

static int is_int_in(double x, double lo, double hi)
{
    return x >= lo && x <= hi && x == floor(x);
}

/* A wl_len built by code rather than wl_len_parse gets the same checks. */
static int len_check(const char *what, const wl_len *l, llm_err *e)
{
    if (l->max_tokens < 0)
        return err_set(e, "wl: %s: max_tokens %d (expected >= 0; 0 = no cap)",
                       what, l->max_tokens);
    switch (l->kind) {
    case WL_FIXED:
        if (is_int_in(l->a, 1, INT_MAX))
            return 0;
        return err_set(e, "wl: %s: fixed length %g (expected an integer >= 1)",
                       what, l->a);
    case WL_UNIFORM:
        if (is_int_in(l->a, 1, INT_MAX) && is_int_in(l->b, l->a, INT_MAX))
            return 0;
        return err_set(e,
                       "wl: %s: uniform [%g, %g] (expected integers 1 <= "
                       "a <= b)",
                       what, l->a, l->b);
    case WL_LOGNORMAL:
        if (l->a >= 1 && isfinite(l->a) && l->b >= 0 && isfinite(l->b))
            return 0;
        return err_set(e,
                       "wl: %s: lognormal mean %g sigma %g (expected mean "
                       ">= 1, sigma >= 0)",
                       what, l->a, l->b);
    case WL_EMPIRICAL:
        if (l->values && l->nvalues >= 1)
            return 0;
        return err_set(e, "wl: %s: empirical length with no values", what);
    }
    return err_set(e, "wl: %s: unknown length kind %d", what, (int)l->kind);
}

static int spec_check(const wl_spec *s, llm_err *e)
{
    if ((unsigned)s->arrival > WL_OFFLINE)
        return err_set(e, "wl: unknown arrival kind %d", (int)s->arrival);
    if (s->requests < 1)
        return err_set(e, "wl: requests %d (expected >= 1)", s->requests);
    if (s->arrival != WL_OFFLINE &&
        !(s->rate_per_s > 0 && isfinite(s->rate_per_s)))
        return err_set(e, "wl: %s arrivals at rate %g/s (expected a rate > 0)",
                       wl_arrival_names[s->arrival], s->rate_per_s);
    if (s->arrival == WL_GAMMA && !(s->cv > 0 && isfinite(s->cv)))
        return err_set(e,
                       "wl: gamma arrivals with cv %g (expected cv > 0; "
                       "1 is Poisson)",
                       s->cv);
    if (s->arrival == WL_BURST && s->burst_size < 1)
        return err_set(e, "wl: burst size %d (expected >= 1)", s->burst_size);
    if (len_check("prompt length", &s->prompt, e) != 0 ||
        len_check("output length", &s->output, e) != 0)
        return -1;
    return 0;
}

static int clamp_tokens(double x, int max_tokens)
{
    double hi = max_tokens > 0 ? max_tokens : INT_MAX;
    if (!(x >= 1)) /* also NaN */
        return 1;
    return x > hi ? (int)hi : (int)x;
}

static int len_draw(const wl_len *l, gsl_rng *rng)
{
    double x = 1;
    switch (l->kind) {
    case WL_FIXED:
        x = l->a;
        break;
    case WL_UNIFORM:
        x = l->a +
            (double)gsl_rng_uniform_int(rng, (unsigned long)(l->b - l->a) + 1);
        break;
    case WL_LOGNORMAL: {
        /* E[X] = exp(mu + sigma^2/2), so mu = ln(mean) - sigma^2/2 */
        double mu = log(l->a) - l->b * l->b / 2;
        x = floor(gsl_ran_lognormal(rng, mu, l->b) + 0.5);
        break;
    }
    case WL_EMPIRICAL:
        x = l->values[gsl_rng_uniform_int(rng, (unsigned long)l->nvalues)];
        break;
    }
    return clamp_tokens(x, l->max_tokens);
}

/* Gamma with shape k = 1/cv^2 and scale theta = 1/(rate k): mean k theta =
 * 1/rate, sd sqrt(k) theta = cv/rate. */
static double gap_draw(const wl_spec *s, gsl_rng *rng)
{
    if (s->arrival == WL_POISSON)
        return gsl_ran_exponential(rng, 1.0 / s->rate_per_s);
    double k = 1.0 / (s->cv * s->cv);
    return gsl_ran_gamma(rng, k, 1.0 / (s->rate_per_s * k));
}

/* Burst times are computed, not summed, so the 1000th burst is exactly
 * 999 * size / rate. */
static double arrival_at(const wl_spec *s, int i, double prev, gsl_rng *rng)
{
    switch (s->arrival) {
    case WL_POISSON:
    case WL_GAMMA:
        return i == 0 ? 0.0 : prev + gap_draw(s, rng);
    case WL_BURST:
        return (double)(i / s->burst_size) * s->burst_size / s->rate_per_s;
    case WL_OFFLINE:
        break;
    }
    return 0.0;
}

int wl_generate(const wl_spec *spec, wl_request **out, int *n, llm_err *e)
{
    *out = NULL;
    *n = 0;
    if (spec_check(spec, e) != 0)
        return -1;
    wl_request *r = malloc((size_t)spec->requests * sizeof *r);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r || !rng) {
        free(r);
        if (rng)
            gsl_rng_free(rng);
        return err_set(e, "wl: out of memory for %d requests", spec->requests);
    }
    gsl_rng_set(rng, spec->seed);
    double t = 0.0;
    for (int i = 0; i < spec->requests; i++) {
        t = arrival_at(spec, i, t, rng);
        r[i].arrival_s = t;
        r[i].prompt_tokens = len_draw(&spec->prompt, rng);
        r[i].output_tokens = len_draw(&spec->output, rng);
    }
    gsl_rng_free(rng);
    *out = r;
    *n = spec->requests;
    return 0;
}

/* ---- summary ---------------------------------------------------------- */

/* Sorts v in place; mean, median and 99th percentile (GSL's linear
 * interpolation between order statistics). */
static void int_stats(int *v, int n, double *mean, double *p50, double *p99)
{
    *mean = gsl_stats_int_mean(v, 1, (size_t)n);
    gsl_sort_int(v, 1, (size_t)n);
    *p50 = gsl_stats_int_quantile_from_sorted_data(v, 1, (size_t)n, 0.50);
    *p99 = gsl_stats_int_quantile_from_sorted_data(v, 1, (size_t)n, 0.99);
}

int wl_summarize(const wl_request *r, int n, wl_summary *s, llm_err *e)
{
    *s = (wl_summary){0};
    if (n <= 0)
        return 0;
    s->n = n;
    s->duration_s = r[n - 1].arrival_s;
    s->rate_per_s = s->duration_s > 0 ? (n - 1) / s->duration_s : 0.0;
    int *p = malloc(2 * (size_t)n * sizeof *p); /* prompts, then outputs */
    if (!p)
        return err_set(e, "out of memory");
    for (int i = 0; i < n; i++) {
        p[i] = r[i].prompt_tokens;
        p[n + i] = r[i].output_tokens;
    }
    int_stats(p, n, &s->prompt_mean, &s->prompt_p50, &s->prompt_p99);
    int_stats(p + n, n, &s->output_mean, &s->output_p50, &s->output_p99);
    free(p);
    return 0;
}
