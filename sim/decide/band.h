/* band — the error model every prediction carries: how far published
 * measurements of runs like this one fell from llmsim's prediction.
 *
 * `make validate` (tests/validate.sh) writes calib/error-bands.tsv from the
 * check cases of its suites (the cases no constant was fitted to): for each
 * family of cases -- training by GPU generation, stack, precision and kind
 * of parallelism; serving by metric and engine -- the ratio measured /
 * predicted of every case, and from them a split-conformal 80% interval:
 * with n cases sorted, the k-th smallest and the k-th largest ratio, k =
 * floor(0.1 (n + 1)).  It holds the next case like them with probability at
 * least (n + 1 - 2k) / (n + 1) if the cases are exchangeable, and it widens
 * by itself when a family has few cases.  A family of 2 to 8 cases, too few
 * for an interval of its own, takes its nearest ancestor's widened to its
 * own cases' range (runs that sit apart from their parent's, as end-to-end
 * latency does beside the other serving metrics, are not held to a band
 * they already fall outside); one of fewer falls back to its ancestor's.
 * A family is a path ("training/hopper/megatron-core/bf16/tp-pp"); its
 * parents are its prefixes. */
#ifndef LLMSIM_BAND_H
#define LLMSIM_BAND_H

#include <stdbool.h>
#include <stddef.h>

#include "model/plan.h"

#define BAND_KEY 128
/* the fewest check cases behind a family's own interval; a row of fewer
 * is an ancestor's interval widened to them (validate-bands.awk's MIN) */
#define BAND_MIN_CASES 9

typedef struct band_row {
    char family[BAND_KEY];
    int cases;
    double lo, hi; /* measured / predicted, the interval's ends */
} band_row;

typedef struct band_table {
    band_row *row; /* owned */
    int n;
    double level;  /* the intervals' coverage, 0.8 */
} band_table;

/* One prediction's band: the deepest family of the table its key falls in. */
typedef struct band_est {
    bool have;     /* the table has the key's suite at least */
    bool like;     /* a family below the suite: runs like this one exist */
    char key[BAND_KEY];    /* the prediction's own family */
    char family[BAND_KEY]; /* the one the band comes from */
    int cases;
    double lo, hi, level;
} band_est;

void band_table_free(band_table *t);

void band_find(const band_table *t, const char *key, band_est *out);

/* "training/<GPU architecture>/<stack>/<precision>/<kind>", kind one of
 * zero3 (ZeRO-3/FSDP, no tensor or pipeline parallelism), dp (other data
 * parallelism alone) and tp-pp. */
void band_train_key(char *buf, size_t n, const char *arch, const char *stack,
                    const plan_train *p);

/* "collectives/<size band>/<fabric>": the size bands of the issue's
 * accuracy goals (under 1 MiB, 1 to 64 MiB, 64 MiB and up), the fabric
 * as coll_fabric names it. */
void band_coll_key(char *buf, size_t n, double size_bytes,
                   const char *fabric);

/* "kernels/<op>/<GPU>": op the cost model's kind of op, or for a
 * memory-bound elementwise op which one (activation, rope, ...). */
void band_kernel_key(char *buf, size_t n, const char *op, const char *gpu);

/* "serving/<kind>/<engine>", kind one of band_serve_kinds. */
typedef enum {
    BAND_THROUGHPUT, BAND_TTFT, BAND_TPOT, BAND_E2E, BAND_SERVE_KINDS
} band_serve_kind;
extern const char *const band_serve_kinds[BAND_SERVE_KINDS];
void band_serve_key(char *buf, size_t n, band_serve_kind k,
                    const char *engine);

/* The text after a figure: " (LO-HI; 80% band from N published runs like
 * this)", or what stands in for it; fmt prints one end (e.g. "%.2f").
 * scale: the figure is a rate (1/time) when inverse is true. */
void band_text(char *buf, size_t n, const band_est *b, double value,
               const char *fmt, bool inverse);

/* The short form for a table's column: "LO-HI (N)", ", none like this"
 * after N when the band is the suite's; "" without a band. */
void band_brief(char *buf, size_t n, const band_est *b, double value,
                const char *fmt, bool inverse);

/* The interval's ends for value: a time-like figure is value x ratio, a
 * rate (inverse) value / ratio. */
void band_ends(const band_est *b, double value, bool inverse, double *lo,
               double *hi);

#endif
