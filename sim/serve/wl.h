/* wl — serving workloads: request arrivals and lengths drawn with GSL
 * from a seed, or replayed from a trace file.
 *
 * Traces are in the Azure LLM inference trace format (Patel et al.,
 * "Splitwise", ISCA 2024; AzurePublicDataset, AzureLLMInferenceDataset2023):
 * a CSV with header TIMESTAMP,ContextTokens,GeneratedTokens.  Everything
 * here is input-facing: errors return -1 and fill an llm_err naming
 * file:line and column. */
#ifndef LLMSIM_WL_H
#define LLMSIM_WL_H

#include "base/err.h"

/* Longest trace or length-file line accepted, without its line ending. */
#define WL_LINE_MAX 4096

typedef struct wl_request {
    double arrival_s;  /* from the first request, >= 0, non-decreasing */
    int prompt_tokens; /* >= 1 */
    int output_tokens; /* >= 1 */
} wl_request;

typedef enum { WL_POISSON, WL_GAMMA, WL_BURST, WL_OFFLINE } wl_arrival_kind;
/* "poisson", "gamma", "burst", "offline" */
extern const char *const wl_arrival_names[4];

/* Parses an arrival kind by name; an unknown name gets a "did you mean"
 * and the list of names.  `opt` names the option for messages. */
int wl_arrival_parse(const char *opt, const char *name, wl_arrival_kind *out,
                     llm_err *e);

typedef enum { WL_FIXED, WL_UNIFORM, WL_LOGNORMAL, WL_EMPIRICAL } wl_len_kind;

typedef struct wl_len {
    wl_len_kind kind;
    double a, b;    /* fixed: a; uniform: integers in [a, b];
                       lognormal: mean a, sigma b of log */
    int *values;    /* empirical: the sample drawn from uniformly (owned) */
    int nvalues;
    int max_tokens; /* 0 = no cap; draws are clamped to [1, max_tokens] */
} wl_len;

typedef struct wl_spec {
    wl_arrival_kind arrival;
    double rate_per_s; /* mean arrival rate (> 0 unless offline) */
    double cv;         /* gamma: coefficient of variation of inter-arrival
                          times (> 0) */
    int burst_size;    /* burst: this many requests arrive together every
                          burst_size/rate s */
    wl_len prompt, output;
    int requests;      /* how many to draw (>= 1) */
    unsigned long seed;
} wl_spec;

/* Parses a length spec given on the command line or in a config:
 *   "512"                   fixed
 *   "uniform:128:1024"      integers uniform in [128, 1024]
 *   "lognormal:MEAN:SIGMA"  lognormal with that mean (tokens, >= 1) and
 *                           log-space sigma (>= 0), mu = ln(MEAN) -
 *                           SIGMA^2/2, rounded to the nearest integer, >= 1
 *   "empirical:PATH"        draws uniformly from the values in PATH: either
 *                           a trace in the Azure format (header TIMESTAMP,
 *                           ContextTokens,GeneratedTokens; the column is
 *                           ContextTokens when `which_col` is 0,
 *                           GeneratedTokens when 1) or a file of one
 *                           positive integer per line ('#' comments and
 *                           blank lines allowed).
 *   "empirical:PATH:MEAN"   the same values, each times MEAN over their
 *                           mean (rounded, >= 1): the file's shape at
 *                           another mean (MEAN >= 1 tokens)
 * `opt` names the option/key for messages ("--prompt-len").  Errors say
 * what was expected, e.g. `--prompt-len: "uniform:9:3": lower bound above
 * upper (expected uniform:LO:HI with 1 <= LO <= HI)`; errors in an
 * empirical file read "OPT: FILE:LINE: COLUMN: ...".  *out has max_tokens
 * 0 (the caller sets a cap); on error it owns nothing. */
int wl_len_parse(const char *opt, const char *spec, int which_col,
                 wl_len *out, llm_err *e);
void wl_len_free(wl_len *l);

/* Draws spec->requests requests: inter-arrival times exponential
 * (Poisson), gamma with shape 1/cv^2 and mean 1/rate (so cv = 1 is
 * Poisson), bursts (burst_size requests at the same instant, bursts every
 * burst_size/rate seconds, first at t = 0), or offline (every request at
 * t = 0).  The first Poisson/gamma request arrives at t = 0 (the draws are
 * the gaps after it).  Lengths drawn from prompt/output.  One gsl_rng
 * (gsl_rng_mt19937) seeded with spec->seed; the draw order is fixed (for
 * each request: gap (none for the first, nor for burst/offline), prompt,
 * output; a fixed length draws nothing) so output is byte-identical for a
 * seed.  *out is malloc'd.  A spec out of range (rate <= 0, cv <= 0,
 * uniform a > b, ...) is an error, *out NULL and *n 0. */
int wl_generate(const wl_spec *spec, wl_request **out, int *n, llm_err *e);

/* Reads a trace: CSV with header TIMESTAMP,ContextTokens,GeneratedTokens
 * (required, column order as given; a UTF-8 BOM, CRLF and spaces around
 * fields tolerated; trailing empty lines are fine, an empty line followed
 * by rows is not; no quoting).  TIMESTAMP is
 * "YYYY-MM-DD HH:MM:SS[.fraction up to 9 digits]" (UTC, no leap seconds)
 * or a plain number of seconds >= 0 (so synthetic traces can be written by
 * hand); every row uses the same form.  arrival_s = (t - t_first) /
 * rate_scale, differenced in whole seconds and nanoseconds so the
 * sub-microsecond digits survive.  Rows must be non-decreasing in time.
 * ContextTokens and GeneratedTokens are integers >= 1.
 * rate_scale > 0 divides every arrival time (2 = twice the rate).
 * limit > 0 keeps only the first `limit` rows and stops reading there (the
 * rest is not validated); limit <= 0 reads all.  Any malformed line: -1,
 * "FILE:LINE: COLUMN: what is wrong (expected ...)", *out NULL and *n 0 —
 * missing/extra column, non-numeric, negative, bad date, a line longer
 * than WL_LINE_MAX bytes, a NUL byte, an empty file, a header with no rows.
 * Streams the file: O(rows) memory, O(WL_LINE_MAX) per line. */
int wl_read_trace(const char *path, double rate_scale, int limit,
                  wl_request **out, int *n, llm_err *e);

/* Summary of a request list, for reports: count, duration (last arrival),
 * mean rate, mean/p50/p99 of prompt and output lengths (GSL quantiles,
 * linear interpolation between order statistics).  rate_per_s =
 * (n - 1) / duration, the gaps after the first arrival per second (0 when
 * duration is 0, e.g. offline).  n == 0 gives all zeros.  -1 ("out of
 * memory") when the O(n) scratch for sorting cannot be allocated. */
typedef struct wl_summary {
    int n;
    double duration_s, rate_per_s;
    double prompt_mean, prompt_p50, prompt_p99;
    double output_mean, output_p50, output_p99;
} wl_summary;
int wl_summarize(const wl_request *r, int n, wl_summary *s, llm_err *e);

#endif
