/* wl: synthetic arrivals have the rate and variability asked for, lengths
 * the distribution asked for, and a seed fixes every byte; the Azure
 * conversation trace reads to the count and span worked out by hand from
 * its first and last lines; broken traces and length specs are refused
 * with file:line: column. */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "serve/wl.h"

#define CONV "azure-llm-2023-conv.csv"
#define CODE "azure-llm-2023-code.csv"

static void trace_path(char *buf, size_t len, const char *name)
{
    const char *root = getenv("LLMSIM_DATA");
    snprintf(buf, len, "%s/configs/traces/%s", root ? root : ".", name);
}

static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void fail_with(const llm_err *e)
{
    print_error("%s\n", e->msg);
    fail();
}

/* Prompt 100, output 10, fixed: arrival tests draw no lengths. */
static wl_spec base_spec(wl_arrival_kind kind, double rate, int n)
{
    wl_spec s = {.arrival = kind,
                 .rate_per_s = rate,
                 .cv = 1,
                 .burst_size = 1,
                 .requests = n,
                 .seed = 1};
    s.prompt = (wl_len){.kind = WL_FIXED, .a = 100};
    s.output = (wl_len){.kind = WL_FIXED, .a = 10};
    return s;
}

static wl_request *generate(const wl_spec *s, int *n)
{
    wl_request *r;
    llm_err e = {{0}};
    if (wl_generate(s, &r, n, &e) != 0)
        fail_with(&e);
    assert_int_equal(*n, s->requests);
    return r;
}

/* The n-1 gaps after the first arrival: their mean and CV.  Also checks
 * that the first request is at 0 and time never goes back. */
static void gap_stats(const wl_request *r, int n, double *mean, double *cv)
{
    double *g = malloc((size_t)(n - 1) * sizeof *g);
    assert_non_null(g);
    assert_true(r[0].arrival_s == 0.0);
    for (int i = 1; i < n; i++) {
        g[i - 1] = r[i].arrival_s - r[i - 1].arrival_s;
        assert_true(g[i - 1] >= 0);
    }
    *mean = gsl_stats_mean(g, 1, (size_t)(n - 1));
    *cv = gsl_stats_sd(g, 1, (size_t)(n - 1)) / *mean;
    free(g);
}

static void len_stats(const wl_len *l, int n, int *v, double *mean,
                      double *median)
{
    wl_spec s = base_spec(WL_OFFLINE, 0, n);
    s.prompt = *l;
    int got;
    wl_request *r = generate(&s, &got);
    double *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    for (int i = 0; i < n; i++)
        x[i] = v[i] = r[i].prompt_tokens;
    *mean = gsl_stats_mean(x, 1, (size_t)n);
    gsl_sort(x, 1, (size_t)n);
    *median = gsl_stats_median_from_sorted_data(x, 1, (size_t)n);
    free(x);
    free(r);
}

/* ---- arrivals --------------------------------------------------------- */

/* Exponential gaps, mean 1/rate = 0.1 s, CV 1.  With n = 20,000 gaps the
 * sample mean's relative standard error is sd/mean/sqrt(n) = 1/sqrt(n) =
 * 0.71 %, so 3 % is 4.2 sigma.  For the CV, delta method on log s - log m:
 * Var = (kurt+2)/4n + cv^2/n - skew cv/n = 2/n + 1/n - 2/n = 1/n for the
 * exponential (kurt 6, skew 2), again 0.71 %: 3 % is 4.2 sigma. */
static void test_poisson(void **state)
{
    (void)state;
    wl_spec s = base_spec(WL_POISSON, 10, 20000);
    int n;
    wl_request *r = generate(&s, &n);
    double mean, cv;
    gap_stats(r, n, &mean, &cv);
    assert_close(mean, 0.1, 0.03);
    assert_close(cv, 1.0, 0.03);
    free(r);
}

/* Gamma, shape k = 1/9: skew 2/sqrt(k) = 6, excess kurtosis 6/k = 54.  The
 * same delta method gives Var(log CV) = 56/4n + 9/n - 6*3/n = 5/n; with
 * n = 100,000 that is 0.71 %, so 10 % is 14 sigma.  The rate's relative
 * error is cv/sqrt(n) = 0.95 %: 5 % is 5.3 sigma. */
static void test_gamma(void **state)
{
    (void)state;
    wl_spec s = base_spec(WL_GAMMA, 10, 100000);
    s.cv = 3;
    int n;
    wl_request *r = generate(&s, &n);
    double mean, cv;
    gap_stats(r, n, &mean, &cv);
    assert_close(cv, 3.0, 0.10);
    wl_summary sum;
    assert_int_equal(wl_summarize(r, n, &sum, NULL), 0);
    assert_close(sum.rate_per_s, 10.0, 0.05);
    free(r);
}

/* 50 requests in bursts of 8 at 4/s: a burst every 8/4 = 2 s, so request
 * i arrives at 2 * floor(i/8) exactly; the last burst holds 50 - 48 = 2. */
static void test_burst(void **state)
{
    (void)state;
    wl_spec s = base_spec(WL_BURST, 4, 50);
    s.burst_size = 8;
    int n;
    wl_request *r = generate(&s, &n);
    for (int i = 0; i < n; i++)
        assert_true(r[i].arrival_s == 2.0 * (i / 8));
    assert_true(r[48].arrival_s == 12.0 && r[49].arrival_s == 12.0);
    assert_true(r[47].arrival_s == 10.0);
    free(r);
}

/* Offline needs no rate: every request is there at t = 0, and the summary
 * reports no span and no rate rather than a division by zero. */
static void test_offline(void **state)
{
    (void)state;
    wl_spec s = base_spec(WL_OFFLINE, 0, 1000);
    int n;
    wl_request *r = generate(&s, &n);
    for (int i = 0; i < n; i++)
        assert_true(r[i].arrival_s == 0.0);
    wl_summary sum;
    assert_int_equal(wl_summarize(r, n, &sum, NULL), 0);
    assert_true(sum.duration_s == 0.0 && sum.rate_per_s == 0.0);
    free(r);
}

static void test_arrival_parse(void **state)
{
    (void)state;
    wl_arrival_kind k;
    llm_err e = {{0}};
    assert_int_equal(wl_arrival_parse("--arrival", "gamma", &k, &e), 0);
    assert_int_equal(k, WL_GAMMA);
    assert_int_equal(wl_arrival_parse("--arrival", "poison", &k, &e), -1);
    assert_non_null(
        strstr(e.msg, "--arrival: unknown arrival process \"poison\""));
    assert_non_null(strstr(e.msg, "did you mean \"poisson\""));
}

/* ---- lengths ---------------------------------------------------------- */

#define NLEN 20000

static void parse_len(const char *spec, int col, wl_len *l)
{
    llm_err e = {{0}};
    if (wl_len_parse("--prompt-len", spec, col, l, &e) != 0)
        fail_with(&e);
}

static void test_len_fixed(void **state)
{
    (void)state;
    static int v[NLEN];
    wl_len l;
    parse_len("512", 0, &l);
    assert_int_equal(l.kind, WL_FIXED);
    double mean, median;
    len_stats(&l, NLEN, v, &mean, &median);
    for (int i = 0; i < NLEN; i++)
        assert_int_equal(v[i], 512);
}

/* Integers in [128, 1024]: 897 values, mean (128+1024)/2 = 576, sd
 * 897/sqrt(12) = 259, so the mean of 20,000 has sd 1.83 (0.32 %); 1.5 %
 * is 4.7 sigma.  Each bound is missed by all draws with probability
 * (896/897)^20000 = e^-22: both must appear (an off-by-one at HI shows). */
static void test_len_uniform(void **state)
{
    (void)state;
    static int v[NLEN];
    wl_len l;
    parse_len("uniform:128:1024", 0, &l);
    double mean, median;
    len_stats(&l, NLEN, v, &mean, &median);
    int lo = 0, hi = 0;
    for (int i = 0; i < NLEN; i++) {
        assert_in_range(v[i], 128, 1024);
        lo += v[i] == 128;
        hi += v[i] == 1024;
    }
    assert_true(lo > 0 && hi > 0);
    assert_close(mean, 576.0, 0.015);
}

/* lognormal:512:0.5 has mu = ln 512 - 0.125.  Mean: sd/mean =
 * sqrt(e^0.25 - 1) = 0.533, so over 20,000 draws 0.38 %; 3 % is 8 sigma
 * (rounding to integers moves the mean by < 0.01 %).  Median exp(mu) =
 * 512 e^-0.125 = 451.84; its log has sd 1.2533*0.5/sqrt(n) = 0.44 %: a mu
 * without the -sigma^2/2 would be 13 % off. */
static void test_len_lognormal(void **state)
{
    (void)state;
    static int v[NLEN];
    wl_len l;
    parse_len("lognormal:512:0.5", 0, &l);
    double mean, median;
    len_stats(&l, NLEN, v, &mean, &median);
    assert_close(mean, 512.0, 0.03);
    assert_close(median, 512.0 * exp(-0.125), 0.03);
}

/* lognormal:512:1 capped at 600: P(X > 600) = P(z > (ln 600 - ln 512 +
 * 0.5)/1) = P(z > 0.66) = 25 %, so the cap is hit; lognormal:2:2 has
 * median 2 e^-2 = 0.27, so most draws round to 0 and are raised to 1. */
static void test_len_clamp(void **state)
{
    (void)state;
    static int v[NLEN];
    wl_len l;
    parse_len("lognormal:512:1", 0, &l);
    l.max_tokens = 600;
    double mean, median;
    len_stats(&l, NLEN, v, &mean, &median);
    int at_cap = 0;
    for (int i = 0; i < NLEN; i++) {
        assert_in_range(v[i], 1, 600);
        at_cap += v[i] == 600;
    }
    assert_in_range(at_cap, NLEN / 5, NLEN * 3 / 10);
    parse_len("lognormal:2:2", 0, &l);
    len_stats(&l, NLEN, v, &mean, &median);
    int ones = 0;
    for (int i = 0; i < NLEN; i++) {
        assert_true(v[i] >= 1);
        ones += v[i] == 1;
    }
    assert_true(ones > NLEN / 2);
}

/* The conversation trace read here with sscanf, independently of wl. */
static int read_column(const char *path, int col, int *vals, int max)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int n = 0, p, o;
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f) && n < max)
        if (sscanf(line, "%*[^,],%d,%d", &p, &o) == 2)
            vals[n++] = col == 0 ? p : o;
    fclose(f);
    return n;
}

/* Draws come only from the file's values, and their mean is the file's
 * within 4 standard errors: sd_file/sqrt(20,000) (about 7.8 tokens for
 * ContextTokens, sd 1109 about a mean of 1155). */
static void test_len_empirical_trace(void **state)
{
    (void)state;
    static int file[20000], v[NLEN];
    static unsigned char seen[1 << 16];
    char path[512], spec[600];
    trace_path(path, sizeof path, CONV);
    int nf = read_column(path, 0, file, 20000);
    assert_int_equal(nf, 19366);
    double fmean = 0, fsq = 0;
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < nf; i++) {
        assert_in_range(file[i], 1, (1 << 16) - 1);
        seen[file[i]] = 1;
        fmean += file[i];
        fsq += (double)file[i] * file[i];
    }
    fmean /= nf;
    double fsd = sqrt(fsq / nf - fmean * fmean);

    wl_len l;
    snprintf(spec, sizeof spec, "empirical:%s", path);
    parse_len(spec, 0, &l);
    assert_int_equal(l.kind, WL_EMPIRICAL);
    assert_int_equal(l.nvalues, 19366);
    assert_int_equal(l.values[0], 374);
    double mean, median;
    len_stats(&l, NLEN, v, &mean, &median);
    for (int i = 0; i < NLEN; i++)
        assert_true(v[i] < (1 << 16) && seen[v[i]]);
    assert_true(fabs(mean - fmean) < 4 * fsd / sqrt(NLEN));
    wl_len_free(&l);
    assert_null(l.values);

    parse_len(spec, 1, &l); /* GeneratedTokens */
    assert_int_equal(l.values[0], 44);
    wl_len_free(&l);
}

/* A hand-written list: comments, blank lines, CRLF, spaces; every draw is
 * one of 5, 7, 9. */
static void test_len_empirical_list(void **state)
{
    (void)state;
    char path[256], spec[300];
    write_temp(path, sizeof path, ".txt",
               "# prompt lengths\n\n5\n7  # seven\n 9\r\n");
    snprintf(spec, sizeof spec, "empirical:%s", path);
    wl_len l;
    parse_len(spec, 0, &l);
    assert_int_equal(l.nvalues, 3);
    static int v[1000];
    double mean, median;
    len_stats(&l, 1000, v, &mean, &median);
    for (int i = 0; i < 1000; i++)
        assert_true(v[i] == 5 || v[i] == 7 || v[i] == 9);
    wl_len_free(&l);
    unlink(path);

    write_temp(path, sizeof path, ".txt", "5\n6 7\n");
    snprintf(spec, sizeof spec, "empirical:%s", path);
    llm_err e = {{0}};
    assert_int_equal(wl_len_parse("--prompt-len", spec, 0, &l, &e), -1);
    char want[400];
    snprintf(want, sizeof want,
             "--prompt-len: %s:2: value: \"6 7\" is not an integer", path);
    assert_non_null(strstr(e.msg, want));
    assert_null(l.values);
    unlink(path);
}

/* empirical:PATH:MEAN: the file's values, each times MEAN over their
 * mean, rounded and at least 1: 10, 20, 60 (mean 30) at mean 15 are 5,
 * 10, 30; at mean 1, 0.33 rounds to 0 and is held at 1.  A mean below 1
 * is refused. */
static void test_len_empirical_rescaled(void **state)
{
    (void)state;
    char path[256], spec[300];
    write_temp(path, sizeof path, ".txt", "10\n20\n60\n");
    static const struct {
        const char *mean;
        int v[3];
    } cases[] = {{"15", {5, 10, 30}}, {"30", {10, 20, 60}}, {"1", {1, 1, 2}}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(spec, sizeof spec, "empirical:%s:%s", path, cases[c].mean);
        wl_len l;
        parse_len(spec, 0, &l);
        assert_int_equal(l.nvalues, 3);
        for (int i = 0; i < 3; i++)
            assert_int_equal(l.values[i], cases[c].v[i]);
        wl_len_free(&l);
    }
    snprintf(spec, sizeof spec, "empirical:%s:0.5", path);
    wl_len l;
    llm_err e = {{0}};
    assert_int_equal(wl_len_parse("--output-len", spec, 1, &l, &e), -1);
    assert_non_null(strstr(e.msg, "mean below 1 (expected "
                                  "empirical:PATH:MEAN with MEAN >= 1"));
    assert_null(l.values);
    unlink(path);
}

static void test_len_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *want;
    } cases[] = {
        {"uniform:9:3",
         "--prompt-len: \"uniform:9:3\": lower bound above upper "
         "(expected uniform:LO:HI with 1 <= LO <= HI)"},
        {"uniform:0:3", "lower bound \"0\" is below 1"},
        {"uniform:5", "two bounds needed"},
        {"lognormal:0:1", "mean \"0\" is not a number >= 1 (expected "
                          "lognormal:MEAN:SIGMA"},
        {"lognormal:100:-1", "sigma \"-1\" is not a number >= 0"},
        {"abc",
         "--prompt-len: \"abc\": unknown length form \"abc\" (expected N, "
         "uniform:LO:HI, lognormal:MEAN:SIGMA or empirical:PATH[:MEAN])"},
        {"unifrom:1:9", "(did you mean \"uniform\"?)"},
        {"0",
         "\"0\" is below 1 (expected a token count N >= 1, or uniform:LO:HI"},
        {"12x", "\"12x\" is not an integer"},
        {"empirical:/nonexistent", "--prompt-len: /nonexistent: cannot open: "},
        {"", "empty length"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wl_len l;
        llm_err e = {{0}};
        assert_int_equal(wl_len_parse("--prompt-len", cases[i].spec, 0, &l, &e),
                         -1);
        if (!strstr(e.msg, cases[i].want)) {
            print_error("\"%s\": got \"%s\", want \"%s\"\n", cases[i].spec,
                        e.msg, cases[i].want);
            fail();
        }
        assert_null(l.values);
    }
}

/* A spec built by code gets the checks a parsed one would. */
static void test_generate_errors(void **state)
{
    (void)state;
    static const struct {
        wl_arrival_kind kind;
        double rate, cv, a, b;
        int burst, n;
        const char *want;
    } cases[] = {
        {WL_POISSON, 0, 1, 1, 1, 1, 10, "rate 0/s"},
        {WL_GAMMA, 1, 0, 1, 1, 1, 10, "cv 0"},
        {WL_BURST, 1, 1, 1, 1, 0, 10, "burst size 0"},
        {WL_POISSON, 1, 1, 1, 1, 1, 0, "requests 0"},
        {WL_POISSON, 1, 1, 9, 3, 1, 10, "uniform [9, 3]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wl_spec s = base_spec(cases[i].kind, cases[i].rate, cases[i].n);
        s.cv = cases[i].cv;
        s.burst_size = cases[i].burst;
        s.output =
            (wl_len){.kind = WL_UNIFORM, .a = cases[i].a, .b = cases[i].b};
        static wl_request sentinel;
        wl_request *r = &sentinel; /* must be reset to NULL */
        int n = -1;
        llm_err e = {{0}};
        assert_int_equal(wl_generate(&s, &r, &n, &e), -1);
        assert_null(r);
        assert_int_equal(n, 0);
        if (!strstr(e.msg, cases[i].want)) {
            print_error("case %zu: got \"%s\", want \"%s\"\n", i, e.msg,
                        cases[i].want);
            fail();
        }
    }
}

/* ---- seeds ------------------------------------------------------------ */

static void test_seed(void **state)
{
    (void)state;
    wl_spec s = base_spec(WL_GAMMA, 5, 5000);
    s.cv = 2;
    parse_len("lognormal:1000:1", 0, &s.prompt);
    parse_len("uniform:1:512", 1, &s.output);
    int n1, n2, n3;
    wl_request *a = generate(&s, &n1);
    wl_request *b = generate(&s, &n2);
    s.seed = 2;
    wl_request *c = generate(&s, &n3);
    assert_memory_equal(a, b, (size_t)n1 * sizeof *a);
    assert_memory_not_equal(a, c, (size_t)n1 * sizeof *a);
    free(a);
    free(b);
    free(c);
}

/* ---- traces ----------------------------------------------------------- */

static wl_request *read_trace(const char *name, double scale, int limit, int *n)
{
    char path[512];
    trace_path(path, sizeof path, name);
    wl_request *r;
    llm_err e = {{0}};
    if (wl_read_trace(path, scale, limit, &r, n, &e) != 0)
        fail_with(&e);
    return r;
}

/* First and last TIMESTAMP lines of the conversation trace:
 *   2023-11-16 18:15:46.6805900   and   2023-11-16 19:14:08.4025270
 *   19:14:08.4025270 - 18:15:46.6805900
 *     = 1 h - 1 min + (08.4025270 - 46.6805900) s
 *     = 3600 - 60 - 38.2780630 = 3501.7219370 s.
 * 19,367 lines = header + 19,366 rows (CRLF endings, no final newline). */
static void test_trace_conv(void **state)
{
    (void)state;
    int n;
    wl_request *r = read_trace(CONV, 1, 0, &n);
    assert_int_equal(n, 19366);
    assert_true(r[0].arrival_s == 0.0);
    assert_int_equal(r[0].prompt_tokens, 374);
    assert_int_equal(r[0].output_tokens, 44);
    assert_int_equal(r[n - 1].prompt_tokens, 197);
    assert_int_equal(r[n - 1].output_tokens, 183);
    assert_true(fabs(r[n - 1].arrival_s - 3501.7219370) < 1e-6);
    for (int i = 1; i < n; i++)
        assert_true(r[i].arrival_s >= r[i - 1].arrival_s);
    wl_summary s;
    assert_int_equal(wl_summarize(r, n, &s, NULL), 0);
    assert_int_equal(s.n, n);
    assert_true(s.duration_s == r[n - 1].arrival_s);
    assert_close(s.rate_per_s, 19365 / 3501.7219370, 1e-9);

    int n2;
    wl_request *h = read_trace(CONV, 2, 0, &n2); /* twice the rate */
    assert_int_equal(n2, n);
    assert_true(fabs(h[n - 1].arrival_s - 3501.7219370 / 2) < 1e-6);
    free(h);

    int n3;
    wl_request *l = read_trace(CONV, 1, 100, &n3);
    assert_int_equal(n3, 100);
    assert_memory_equal(l, r, 100 * sizeof *r);
    free(l);
    free(r);

    r = read_trace(CODE, 1, 0, &n);
    assert_int_equal(n, 8819);
    assert_int_equal(r[0].prompt_tokens, 4808);
    free(r);
}

/* wl_summarize on 4 hand-made requests, GSL quantiles interpolating at
 * index q (n-1) = 3q of the sorted values:
 *   prompts 1 2 3 4: mean 2.5, p50 at 1.5 -> 2.5, p99 at 2.97 -> 3.97;
 *   outputs 10 10 10 100: mean 32.5, p50 10, p99 10 + 0.97 * 90 = 97.3;
 *   arrivals 0 1 2 4: duration 4, rate 3 gaps / 4 s = 0.75. */
static void test_summary(void **state)
{
    (void)state;
    const wl_request r[4] = {{0, 3, 10}, {1, 1, 100}, {2, 4, 10}, {4, 2, 10}};
    wl_summary s;
    assert_int_equal(wl_summarize(r, 4, &s, NULL), 0);
    assert_int_equal(s.n, 4);
    assert_close(s.duration_s, 4, 1e-12);
    assert_close(s.rate_per_s, 0.75, 1e-12);
    assert_close(s.prompt_mean, 2.5, 1e-12);
    assert_close(s.prompt_p50, 2.5, 1e-12);
    assert_close(s.prompt_p99, 3.97, 1e-12);
    assert_close(s.output_mean, 32.5, 1e-12);
    assert_close(s.output_p50, 10, 1e-12);
    assert_close(s.output_p99, 97.3, 1e-12);
    assert_int_equal(wl_summarize(r, 0, &s, NULL), 0);
    assert_int_equal(s.n, 0);
}

static wl_request *read_text(const char *dir, const char *text, double scale,
                             int limit, int *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/ok.csv", dir);
    write_bytes(path, text, strlen(text));
    wl_request *r;
    llm_err e = {{0}};
    if (wl_read_trace(path, scale, limit, &r, n, &e) != 0)
        fail_with(&e);
    unlink(path);
    return r;
}

#define HDR "TIMESTAMP,ContextTokens,GeneratedTokens\n"

/* Forms a trace may take besides the Azure files' own. */
static void test_trace_forms(void **state)
{
    (void)state;
    char dir[] = "/tmp/llmsim-wl-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int n;
    /* BOM, CRLF, spaces, plain seconds, trailing blank lines: 5.5 -> 0,
     * 6 -> 0.5, 6 again -> 0.5 (ties are fine) */
    wl_request *r =
        read_text(dir,
                  "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                  " 5.5 , 10 ,2\r\n6,3,4\r\n6,1,1\r\n\r\n\n",
                  1, 0, &n);
    assert_int_equal(n, 3);
    assert_true(r[0].arrival_s == 0.0 && r[1].arrival_s == 0.5 &&
                r[2].arrival_s == 0.5);
    assert_int_equal(r[0].prompt_tokens, 10);
    assert_int_equal(r[1].output_tokens, 4);
    free(r);
    /* 2024 is a leap year: from 2024-02-28 23:59:59.5, Feb 29 noon is
     * 0.5 + 43200 = 43200.5 s later and 2024-03-01 00:00:00.5 is 0.5 +
     * 86400 (all of Feb 29) + 0.5 = 86401 s; 00:00:00.500000001 is one
     * nanosecond more, which a double of seconds since 1970 (ulp 2.4e-7 at
     * 1.7e9) could not hold.  2000 is a leap year too (divisible by 400). */
    r = read_text(dir,
                  "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                  "2024-02-28 23:59:59.5,1,1\n"
                  "2024-02-29 12:00:00,1,1\n"
                  "2024-03-01 00:00:00.5,1,1\n"
                  "2024-03-01 00:00:00.500000001,1,1\n",
                  1, 0, &n);
    assert_int_equal(n, 4);
    assert_true(r[1].arrival_s == 43200.5);
    assert_true(r[2].arrival_s == 86401.0);
    assert_true(fabs(r[3].arrival_s - 86401.000000001) < 1e-10);
    assert_true(r[3].arrival_s > r[2].arrival_s);
    free(r);
    r = read_text(dir, HDR "2000-02-29 00:00:00,1,1\n2000-03-01 00:00:00,1,1\n",
                  1, 0, &n);
    assert_true(r[1].arrival_s == 86400.0);
    free(r);
    /* limit 2 stops before the broken fourth line */
    r = read_text(
        dir, "TIMESTAMP,ContextTokens,GeneratedTokens\n0,1,1\n1,1,1\nbroken\n",
        1, 2, &n);
    assert_int_equal(n, 2);
    free(r);
    assert_int_equal(rmdir(dir), 0);
}

#define BAD(name, text, w1, w2) {name, text, sizeof text - 1, w1, w2}

static void check_bad(const char *dir, const char *name, const char *data,
                      size_t len, const char *want1, const char *want2)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_bytes(path, data, len);
    static wl_request sentinel;
    wl_request *r = &sentinel; /* must be reset to NULL */
    int n = -1;
    llm_err e = {{0}};
    int rc = wl_read_trace(path, 1, 0, &r, &n, &e);
    unlink(path);
    if (rc != -1 || r || n != 0 || strncmp(e.msg, path, strlen(path)) != 0 ||
        !strstr(e.msg, want1) || !strstr(e.msg, want2)) {
        print_error("%s: rc %d, \"%s\", want \"%s\" and \"%s\"\n", name, rc,
                    e.msg, want1, want2);
        fail();
    }
}

/* Each broken trace is refused, with the line and the column at fault. */
static void test_trace_bad(void **state)
{
    (void)state;
    static const struct {
        const char *name, *data;
        size_t len;
        const char *want1, *want2;
    } cases[] = {
        BAD("missing-col.csv", HDR "0,10,5\n1,10\n",
            ":3: GeneratedTokens: ", "missing"),
        BAD("extra-col.csv", HDR "0,10,5,7\n",
            ":2: column 4: ", "extra column"),
        BAD("non-numeric.csv", HDR "0,10,5\n1,abc,5\n",
            ":3: ContextTokens: ", "\"abc\" is not an integer"),
        BAD("fraction-tokens.csv", HDR "0,10.5,5\n",
            ":2: ContextTokens: ", "not an integer"),
        BAD("gen-zero.csv", HDR "0,10,0\n",
            ":2: GeneratedTokens: ", "expected an integer >= 1"),
        BAD("negative-tokens.csv", HDR "0,-3,5\n",
            ":2: ContextTokens: ", "negative"),
        BAD("negative-time.csv", HDR "-1,3,5\n", ":2: TIMESTAMP: ", "negative"),
        BAD("backwards.csv",
            HDR "2023-11-16 18:15:46.5,1,1\n2023-11-16 18:15:46.6,1,1\n"
                "2023-11-16 18:15:46.4,1,1\n",
            ":4: TIMESTAMP: ", "earlier than the row before"),
        BAD("month13.csv", HDR "2023-13-16 18:15:46.68,1,1\n",
            ":2: TIMESTAMP: ", "month 13 out of range 01-12"),
        BAD("feb29.csv", HDR "2023-02-29 00:00:00,1,1\n",
            ":2: TIMESTAMP: ", "day 29 out of range 01-28"),
        BAD("feb29-1900.csv", HDR "1900-02-29 00:00:00,1,1\n",
            ":2: TIMESTAMP: ", "day 29 out of range 01-28"),
        BAD("hour24.csv", HDR "2023-11-16 24:00:00,1,1\n",
            ":2: TIMESTAMP: ", "hour 24"),
        BAD("fraction10.csv", HDR "2023-11-16 18:15:46.1234567890,1,1\n",
            ":2: TIMESTAMP: ", "fraction"),
        BAD("not-date.csv", HDR "2023-11-16T18:15,1,1\n",
            ":2: TIMESTAMP: ", "not a date"),
        BAD("mixed.csv", HDR "0,1,1\n2023-11-16 18:15:46,1,1\n",
            ":3: TIMESTAMP: ", "first row had plain seconds"),
        BAD("nul.csv", HDR "0,1,1\n1,1\0,1\n",
            ":3: ContextTokens: ", "NUL byte"),
        BAD("nul-header.csv", "TIME\0STAMP", ":1: header: ", "NUL byte"),
        BAD("empty.csv", "", ":1: header: ", "empty file"),
        BAD("header-only.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\r\n",
            ":2: TIMESTAMP: ", "no rows after the header"),
        BAD("no-header.csv", "2023-11-16 18:15:46.6805900,374,44\n",
            ":1: header: ",
            "missing: the first line is a row (expected a first line "
            "TIMESTAMP,ContextTokens,GeneratedTokens)"),
        BAD("no-header-secs.csv", "0,1,1\n",
            ":1: header: ", "missing: the first line is a row"),
        BAD("wrong-header.csv", "TIMESTAMP,Context,GeneratedTokens\n0,1,1\n",
            ":1: header: ", "column 2 is \"Context\" (expected ContextTokens"),
        BAD("blank-middle.csv", HDR "0,1,1\n\n1,1,1\n",
            ":3: TIMESTAMP: ", "empty line before more rows"),
    };
    char dir[] = "/tmp/llmsim-wl-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad(dir, cases[i].name, cases[i].data, cases[i].len,
                  cases[i].want1, cases[i].want2);

    /* 5000 digits on one line: refused at 4096 without reading on */
    size_t len = strlen(HDR) + 5000 + 5;
    char *big = malloc(len + 1);
    assert_non_null(big);
    memcpy(big, HDR "0,1,", strlen(HDR) + 4);
    memset(big + strlen(HDR) + 4, '7', len - strlen(HDR) - 4);
    big[len] = '\0';
    check_bad(dir, "long-line.csv", big, len,
              ":2: line: ", "longer than 4096 bytes");
    free(big);

    wl_request *r;
    int n;
    llm_err e = {{0}};
    assert_int_equal(wl_read_trace("/nonexistent.csv", 1, 0, &r, &n, &e), -1);
    assert_non_null(strstr(e.msg, "/nonexistent.csv: cannot open"));
    char path[512];
    trace_path(path, sizeof path, CONV);
    assert_int_equal(wl_read_trace(path, 0, 0, &r, &n, &e), -1);
    assert_non_null(strstr(e.msg, "rate scale 0 (expected a number > 0"));
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poisson),
        cmocka_unit_test(test_gamma),
        cmocka_unit_test(test_burst),
        cmocka_unit_test(test_offline),
        cmocka_unit_test(test_arrival_parse),
        cmocka_unit_test(test_len_fixed),
        cmocka_unit_test(test_len_uniform),
        cmocka_unit_test(test_len_lognormal),
        cmocka_unit_test(test_len_clamp),
        cmocka_unit_test(test_len_empirical_trace),
        cmocka_unit_test(test_len_empirical_list),
        cmocka_unit_test(test_len_empirical_rescaled),
        cmocka_unit_test(test_len_parse_errors),
        cmocka_unit_test(test_generate_errors),
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_trace_conv),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_trace_forms),
        cmocka_unit_test(test_trace_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
