/* tsv — tab-separated tables with a header line (calibration tables,
 * validation cases).  Lines starting with '#' and blank lines are skipped.
 * Errors name the file, the line and the column. */
#ifndef LLMSIM_TSV_H
#define LLMSIM_TSV_H

#include "base/err.h"

typedef struct tsv {
    char path[1024];
    char *text;      /* owned: the file, cut into fields in place */
    char **cell;     /* rows x cols field pointers */
    int *line;       /* source line of each row */
    char **head;     /* column names */
    int rows, cols;
} tsv;

int tsv_load(const char *path, tsv *t, llm_err *e);
void tsv_free(tsv *t);

/* Index of a named column, or an error naming the file and the column. */
int tsv_col(const tsv *t, const char *name, llm_err *e);
const char *tsv_get(const tsv *t, int row, int col);
/* A number in [lo, hi]; error "file:line: column: ..." otherwise. */
int tsv_num(const tsv *t, int row, int col, double lo, double hi,
            double *out, llm_err *e);

#endif
