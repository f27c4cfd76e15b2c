#include "base/util.h"
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int util_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    int prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) !=
                       tolower((unsigned char)b[j - 1]);
            int best = prev[j - 1] + cost;
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

const char *util_suggest(const char *word, const char *const *cands, int n)
{
    int limit = (int)strlen(word) / 3;
    if (limit < 2)
        limit = 2;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int i = 0; i < n; i++) {
        int d = util_edit_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}

const char *util_did_you_mean(char *buf, size_t len, const char *word,
                              const char *const *cands, int n)
{
    const char *s = util_suggest(word, cands, n);
    if (s)
        snprintf(buf, len, " (did you mean \"%s\"?)", s);
    else if (len)
        buf[0] = '\0';
    return buf;
}

FILE *util_open_input(const char *path, const char *what, llm_err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        err_set(e, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        err_set(e, "%s: is a directory (expected %s)", path, what);
        return NULL;
    }
    return f;
}

char *util_read_file(const char *path, const char *what, size_t *len_out,
                     llm_err *e)
{
    FILE *f = util_open_input(path, what, e);
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        err_set(e, "%s: out of memory", path);
        return NULL;
    }
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                err_set(e, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        err_set(e, "%s: read error", path);
        return NULL;
    }
    buf[len] = '\0';
    if (len_out)
        *len_out = len;
    return buf;
}

int util_line_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    if (!p)
        return 0;
    int line = 1;
    for (const char *q = text; q < p; q++)
        line += *q == '\n';
    return line;
}

int util_parse_int(const char *opt, const char *s, long lo, long hi,
                   long *out, llm_err *e)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0')
        return err_set(e, "%s: \"%s\" is not an integer (expected %ld..%ld)",
                       opt, s, lo, hi);
    if (v < lo || v > hi)
        return err_set(e, "%s: %ld is out of range (expected %ld..%ld)", opt,
                       v, lo, hi);
    *out = v;
    return 0;
}

int util_parse_double(const char *opt, const char *s, double lo, double hi,
                      double *out, llm_err *e)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v))
        return err_set(e, "%s: \"%s\" is not a number (expected %g..%g)",
                       opt, s, lo, hi);
    if (v < lo || v > hi)
        return err_set(e, "%s: %g is out of range (expected %g..%g)", opt, v,
                       lo, hi);
    *out = v;
    return 0;
}

/* Temporary files being written, removed if a signal ends the run (^C
 * during a long serving replay that streams its Chrome trace): the
 * handler only unlinks and re-raises, both async-signal-safe.  A forked
 * worker inherits the table but not the files: the pid guards them. */
#define OUT_SLOTS 16
static char out_tmp[OUT_SLOTS][1040];
static volatile sig_atomic_t out_used[OUT_SLOTS];
static volatile pid_t out_pid[OUT_SLOTS];

static void out_on_signal(int sig)
{
    pid_t me = getpid();
    for (int i = 0; i < OUT_SLOTS; i++)
        if (out_used[i] && out_pid[i] == me)
            unlink(out_tmp[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* tmp's slot in the table, or -1 when the table is full (then a signal
 * leaves that one file behind). */
static int out_track(const char *tmp)
{
    static bool installed;
    if (!installed) {
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
        for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
            struct sigaction sa, old;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = out_on_signal;
            sigemptyset(&sa.sa_mask);
            /* a signal the caller ignores (nohup) stays ignored */
            if (sigaction(sigs[k], NULL, &old) == 0 &&
                old.sa_handler == SIG_DFL)
                sigaction(sigs[k], &sa, NULL);
        }
        installed = true;
    }
    for (int i = 0; i < OUT_SLOTS; i++)
        if (!out_used[i]) {
            snprintf(out_tmp[i], sizeof out_tmp[i], "%s", tmp);
            out_pid[i] = getpid();
            out_used[i] = 1;
            return i;
        }
    return -1;
}

static void out_untrack(util_outfile *o)
{
    if (o->slot >= 0)
        out_used[o->slot] = 0;
    o->slot = -1;
}

/* A path that exists and is not a regular file (a device, a pipe, a
 * socket) is written as it is: renaming over it would replace /dev/null
 * with a file.  A directory is an error. */
static int out_open_special(util_outfile *o, const char *path, bool *done,
                            llm_err *e)
{
    struct stat st;
    *done = false;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return 0;
    *done = true;
    if (S_ISDIR(st.st_mode))
        return err_set(e, "%s: is a directory (expected a file to write)",
                       path);
    o->direct = true;
    o->fp = fopen(path, "w");
    if (!o->fp)
        return err_set(e, "%s: cannot open: %s", path, strerror(errno));
    return 0;
}

int util_out_open(util_outfile *o, const char *path, llm_err *e)
{
    snprintf(o->path, sizeof o->path, "%s", path);
    o->tmp[0] = '\0';
    o->slot = -1;
    o->direct = false;
    o->fp = NULL;
    bool done;
    int rc = out_open_special(o, path, &done, e);
    if (done)
        return rc;
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        o->fp = NULL;
        return err_set(e, "%s: cannot create: %s", path, strerror(errno));
    }
    o->slot = out_track(o->tmp);
    /* mkstemp makes it 0600; an output file gets what open(2) would give */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->fp = fdopen(fd, "w");
    if (!o->fp)
        return err_set(e, "%s: cannot open: %s", path, strerror(errno));
    return 0;
}

int util_out_commit(util_outfile *o, llm_err *e)
{
    if (o->direct) { /* a device or a pipe: no fsync, no rename */
        int bad = ferror(o->fp) || fflush(o->fp) != 0;
        int err = errno;
        if (fclose(o->fp) != 0 && !bad) {
            bad = 1;
            err = errno;
        }
        o->fp = NULL;
        return bad ? err_set(e, "%s: write error: %s", o->path, strerror(err))
                   : 0;
    }
    /* on disk before the rename, so a crash leaves the old file or the new */
    int bad = ferror(o->fp) || fflush(o->fp) != 0 || fsync(fileno(o->fp)) != 0;
    int err = errno;
    if (fclose(o->fp) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    o->fp = NULL;
    if (bad) {
        remove(o->tmp);
        out_untrack(o);
        return err_set(e, "%s: write error: %s", o->path, strerror(err));
    }
    int moved = rename(o->tmp, o->path);
    out_untrack(o);
    if (moved != 0) {
        remove(o->tmp);
        return err_set(e, "%s: cannot rename into place: %s", o->path,
                       strerror(errno));
    }
    return 0;
}

void util_out_abort(util_outfile *o)
{
    if (o->fp)
        fclose(o->fp);
    o->fp = NULL;
    if (!o->direct && o->tmp[0])
        remove(o->tmp);
    o->tmp[0] = '\0';
    out_untrack(o);
}

void util_basename_id(const char *path, char *out, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = 0;
    for (; *b && *b != '.' && n + 1 < len; b++) {
        /* keep dots that sit between digits: "llama-3.1-405b" */
        out[n++] = (char)tolower((unsigned char)*b);
    }
    /* a dot followed by a digit is part of the name, not the extension */
    while (*b == '.' && isdigit((unsigned char)b[1]) && n + 1 < len) {
        out[n++] = *b++;
        for (; *b && *b != '.' && n + 1 < len; b++)
            out[n++] = (char)tolower((unsigned char)*b);
    }
    out[n] = '\0';
}

int util_ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lf = strlen(suffix);
    return ls >= lf && strcmp(s + ls - lf, suffix) == 0;
}

int util_parse_size(const char *opt, const char *s, double *out, llm_err *e)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0)
        return err_set(e, "%s: \"%s\" is not a size (expected bytes such as "
                          "8, 1K, 256M, 8G)", opt, s);
    double mul = 1;
    switch (*end) {
    case 'K': case 'k': mul = 1024.0; end++; break;
    case 'M': case 'm': mul = 1024.0 * 1024; end++; break;
    case 'G': case 'g': mul = 1024.0 * 1024 * 1024; end++; break;
    case 'T': case 't': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return err_set(e, "%s: \"%s\" is not a size (expected bytes such as "
                          "8, 1K, 256M, 8G)", opt, s);
    *out = v * mul;
    return 0;
}

void util_buf_append(util_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->nomem = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void util_buf_printf(util_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        util_buf_append(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->nomem = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    util_buf_append(b, big, (size_t)n);
    free(big);
}
