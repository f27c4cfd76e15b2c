#include "fuzz_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"

#ifndef FUZZ_REPO
#define FUZZ_REPO "."
#endif

static char scratch[1024];

/* rm -r: the scratch tree is ours, a few levels deep, without links */
static void rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    DIR *d = S_ISDIR(st.st_mode) ? opendir(path) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", path, de->d_name);
        rm_tree(p);
    }
    if (d)
        closedir(d);
    remove(path);
}

static void rm_scratch(void)
{
    if (scratch[0])
        rm_tree(scratch);
}

const char *fz_tmpdir(void)
{
    if (scratch[0])
        return scratch;
    /* memory-backed where there is one: targets write a file per input,
     * and the sweep file is fsync'd */
    const char *t = getenv("TMPDIR");
    if (!t || !*t)
        t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(scratch, sizeof scratch, "%s/llmsim-fuzz-XXXXXX", t);
    if (!mkdtemp(scratch)) {
        perror(scratch);
        abort(); /* the harness cannot run at all: not an input's fault */
    }
    atexit(rm_scratch);
    return scratch;
}

/* A few slots so that a target can hold several paths at once. */
const char *fz_path(const char *name)
{
    static char slot[8][2048];
    static char names[8][256];
    int i = 0;
    while (i < 8 && names[i][0] && strcmp(names[i], name) != 0)
        i++;
    if (i == 8)
        i = 7; /* more names than slots: reuse the last */
    snprintf(names[i], sizeof names[i], "%s", name);
    snprintf(slot[i], sizeof slot[i], "%s/%s", fz_tmpdir(), name);
    return slot[i];
}

const char *fz_write(const char *name, const void *data, size_t size)
{
    const char *p = fz_path(name);
    FILE *f = fopen(p, "wb");
    if (!f)
        return NULL;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || w != size)
        return NULL;
    return p;
}

char *fz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

const char *fz_datadir(void)
{
    const char *d = getenv("LLMSIM_DATA");
    return d && *d ? d : FUZZ_REPO;
}

int fz_copy(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb");
    if (!in)
        return -1;
    FILE *out = fopen(dst, "wb");
    if (!out) {
        fclose(in);
        return -1;
    }
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (ferror(in))
        rc = -1;
    fclose(in);
    if (fclose(out) != 0)
        rc = -1;
    return rc;
}

int fz_report(const char *what, int rc, const struct llm_err *e)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("LLMSIM_FUZZ_VERBOSE") != NULL;
    if (verbose)
        fprintf(stderr, "%s: %s\n", what, rc == 0 ? "ok" : e->msg);
    return rc;
}

int fz_find_sets(char *text, const char **sets, int max)
{
    int n = 0;
    for (char *p = text; p && n < max;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(p, "#set ", 5) == 0)
            sets[n++] = p + 5;
        p = nl ? nl + 1 : NULL;
    }
    return n;
}
