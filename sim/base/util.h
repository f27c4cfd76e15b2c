/* util — small helpers shared by every layer: "did you mean", size
 * parsing, file reading, unit formatting, write-to-temp-then-rename. */
#ifndef LLMSIM_UTIL_H
#define LLMSIM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"

#define GiB (1024.0 * 1024.0 * 1024.0)
#define MiB (1024.0 * 1024.0)

/* Levenshtein distance, capped: O(|a|·|b|) with two rows of stack. */
int util_edit_distance(const char *a, const char *b);

/* The candidate closest to `word`, or NULL when none is close enough to be
 * a plausible typo (distance <= max(2, len/3)). */
const char *util_suggest(const char *word, const char *const *cands, int n);

/* Formats " (did you mean \"x\"?)" into buf, or "" when there is no
 * suggestion. */
const char *util_did_you_mean(char *buf, size_t len, const char *word,
                              const char *const *cands, int n);

/* Reads a whole file into a NUL-terminated heap buffer (caller frees);
 * what: the kind of file, for the message when path is a directory. */
char *util_read_file(const char *path, const char *what, size_t *len_out,
                     llm_err *e);

/* fopen(path, "rb") of an input file; NULL with "PATH: cannot open: why"
 * or "PATH: is a directory (expected WHAT)" in e. */
FILE *util_open_input(const char *path, const char *what, llm_err *e);

/* 1-based line number of the first occurrence of `needle` in `text`,
 * 0 when absent.  Used to point JSON key errors at a line. */
int util_line_of(const char *text, const char *needle);

/* Parses an integer option ("--tp 8"): whole string, within [lo, hi]. */
int util_parse_int(const char *opt, const char *s, long lo, long hi,
                   long *out, llm_err *e);
/* Parses a real option within [lo, hi]. */
int util_parse_double(const char *opt, const char *s, double lo, double hi,
                      double *out, llm_err *e);

/* A byte size as nccl-tests writes it: 8, 1K, 256M, 8G (powers of 1024). */
int util_parse_size(const char *opt, const char *s, double *out, llm_err *e);

/* Writing output files: a regular file (or a new one) is written to a
 * temporary sibling and renamed into place, so a failed run never leaves
 * a partial file; a device, a pipe or a socket is written directly and
 * never replaced.  Every write, flush and close is checked at commit. */
typedef struct util_outfile {
    FILE *fp;
    char path[1024];
    char tmp[1040];
    int slot;    /* its entry in the table a signal cleans up, or -1 */
    bool direct; /* not a regular file: written in place */
} util_outfile;
int util_out_open(util_outfile *o, const char *path, llm_err *e);
int util_out_commit(util_outfile *o, llm_err *e);
void util_out_abort(util_outfile *o);

/* A growing string (zero-initialize; the owner frees s).  Out of memory
 * leaves it as it was and sets nomem, which whoever uses it checks. */
typedef struct util_buf {
    char *s;
    size_t len, cap;
    bool nomem;
} util_buf;
void util_buf_append(util_buf *b, const char *s, size_t n);
void util_buf_printf(util_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* lower-case-with-dashes basename without extension ("Llama-2-7b-hf.json"
 * -> "llama-2-7b-hf"). */
void util_basename_id(const char *path, char *out, size_t len);

int util_ends_with(const char *s, const char *suffix);

#endif
