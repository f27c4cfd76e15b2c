/* Fuzz target: the length and arrival specs of `llmsim serve`
 * (wl_len_parse, wl_arrival_parse), and a few draws from what they parse
 * (wl_generate).
 *
 * The input's first line is the spec; the rest is the file an
 * "empirical:..." spec reads, whatever path it names (the path is replaced
 * by the scratch file's, so no input reads an arbitrary file). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "serve/wl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t speclen = nl ? (size_t)(nl - data) : size;
    const uint8_t *rest = nl ? nl + 1 : data + size;
    const char *file = fz_write("lengths.txt", rest, size - (size_t)(rest - data));
    if (!file)
        return 0;
    char *spec = fz_strndup(data, speclen);
    char *buf = NULL;
    const char *use = spec;
    if (strncmp(spec, "empirical:", 10) == 0) {
        size_t len = strlen(file) + 11;
        buf = malloc(len);
        if (!buf)
            abort();
        snprintf(buf, len, "empirical:%s", file);
        use = buf;
    }
    llm_err e = {{0}};
    wl_arrival_kind k = WL_POISSON;
    fz_report("arrival", wl_arrival_parse("--arrival", spec, &k, &e), &e);
    wl_spec ws;
    memset(&ws, 0, sizeof ws);
    int col = speclen > 0 && (data[0] & 1);
    if (fz_report("length",
                  wl_len_parse("--prompt-len", use, col, &ws.prompt, &e),
                  &e) == 0) {
        ws.output = (wl_len){.kind = WL_FIXED, .a = 1};
        ws.arrival = k;
        ws.rate_per_s = 10;
        ws.cv = 2;
        ws.burst_size = 3;
        ws.requests = 16;
        ws.seed = 1;
        ws.prompt.max_tokens = size && (data[0] & 2) ? 4096 : 0;
        wl_request *r;
        int n;
        if (wl_generate(&ws, &r, &n, &e) == 0)
            free(r);
        wl_len_free(&ws.prompt);
    }
    free(buf);
    free(spec);
    return 0;
}
