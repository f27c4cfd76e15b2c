/* Fuzz target: an Azure-format trace CSV through wl_read_trace (all rows,
 * and the first three only), and the summary of what it read. */
#include <stdlib.h>

#include "fuzz_util.h"
#include "serve/wl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_write("trace.csv", data, size);
    if (!p)
        return 0;
    wl_request *r;
    int n;
    llm_err e = {{0}};
    if (fz_report("trace", wl_read_trace(p, 1.0, 0, &r, &n, &e), &e) == 0) {
        wl_summary s;
        (void)wl_summarize(r, n, &s, &e);
        free(r);
    }
    if (wl_read_trace(p, 2.5, 3, &r, &n, &e) == 0)
        free(r);
    return 0;
}
