/* fuzz_util — what the fuzz targets share.
 *
 * Each target is one fuzz/fuzz_<name>.c defining LLVMFuzzerTestOneInput,
 * linked either with libFuzzer (clang -fsanitize=fuzzer: `make fuzz`) or
 * with fuzz/replay.c (any compiler: `make unit` replays the corpus and the
 * regression inputs).  Most loaders take a path, so the bytes go to a file
 * in a scratch directory made once per process and removed at exit. */
#ifndef LLMSIM_FUZZ_UTIL_H
#define LLMSIM_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* The entry point every target defines (libFuzzer's contract: return 0). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The per-process scratch directory (mkdtemp under $TMPDIR, else
 * /dev/shm, else /tmp), removed with everything in it at exit. */
const char *fz_tmpdir(void);

/* Writes data to <scratch>/<name> (replacing it) and returns its path, a
 * static buffer per name slot: valid until the next fz_write of the same
 * name.  NULL if it cannot be written (the caller skips the input). */
const char *fz_write(const char *name, const void *data, size_t size);

/* <scratch>/<name>, whether or not it exists (static buffer, as above). */
const char *fz_path(const char *name);

/* A NUL-terminated copy of data (malloc'd; the caller frees). */
char *fz_strndup(const uint8_t *data, size_t size);

/* The repository's data directory (topologies/, models/, calib/):
 * $LLMSIM_DATA, else the source tree the target was built from. */
const char *fz_datadir(void);

/* With LLMSIM_FUZZ_VERBOSE set, prints "<what>: ok" or "<what>: <error>"
 * to stderr (to see what seeds reach); returns rc. */
struct llm_err;
int fz_report(const char *what, int rc, const struct llm_err *e);

/* Copies the file src to dst; 0 or -1. */
int fz_copy(const char *src, const char *dst);

/* "#set KEY=VALUE" lines of text into sets[] (pointers into text, cut in
 * place): the --set overrides of an experiment-file input. */
int fz_find_sets(char *text, const char **sets, int max);

#endif
