/* replay — runs a fuzz target's LLVMFuzzerTestOneInput on every file named
 * on the command line (directories recursively, in name order), without
 * libFuzzer: how `make unit` (and so `make test` and `make asan`) replays
 * the seed corpus and every regression input with gcc.
 *
 *   build/fuzz/replay-model fuzz/corpus/model fuzz/regress/model
 *
 * Prints "replay <target>: N inputs" (the target from argv[0], after
 * "replay-").  A crash or a sanitizer report ends the process as it would
 * under libFuzzer; an unreadable argument is exit status 2. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

static long ninputs;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0, n;
    unsigned char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0)
        if ((len += n) == cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    /* an exact-size copy, so ASan sees a read past the input's end */
    unsigned char *in = malloc(len ? len : 1);
    if (!in) {
        free(buf);
        return -1;
    }
    memcpy(in, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(in, len);
    free(in);
    ninputs++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue; /* ., .. and hidden files (.gitkeep) */
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                abort();
            names = nn;
        }
        size_t len = strlen(path) + strlen(de->d_name) + 2;
        if (!(names[n] = malloc(len)))
            abort();
        snprintf(names[n++], len, "%s/%s", path, de->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (run_path(names[i]))
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    const char *target = strrchr(argv[0], '/');
    target = target ? target + 1 : argv[0];
    if (strncmp(target, "replay-", 7) == 0)
        target += 7;
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i]))
            rc = 2;
    printf("replay %s: %ld inputs\n", target, ninputs);
    return rc;
}
