/* err — error messages that travel up to main.
 *
 * Input-facing functions return 0 on success or -1 on error and fill an
 * llm_err; only main prints it and exits.  Messages that concern a file read
 * "file:line: key: what is wrong (expected ...)" (ARCHITECTURE.md). */
#ifndef LLMSIM_ERR_H
#define LLMSIM_ERR_H

#include <stdio.h>
#include <stdlib.h>

typedef struct llm_err {
    char msg[1536];
} llm_err;

/* Formats a free-form message; always returns -1 so callers can
 * `return err_set(e, ...)`. */
int err_set(llm_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "file:line: key: <message>" — line <= 0 omits the line number. */
int err_at(llm_err *e, const char *file, int line, const char *key,
           const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Internal invariant: prints file:line and the failed expression, aborts.
 * Never used for user input. */
#define LLM_ASSERT(cond)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: internal error: %s\n", __FILE__,        \
                    __LINE__, #cond);                                       \
            abort();                                                        \
        }                                                                   \
    } while (0)

#endif
