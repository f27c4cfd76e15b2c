/* cfg_util — typed, range-checked getters over libconfig settings, shared by
 * the loaders in cfg*.c.  Private to the cfg edge. */
#ifndef LLMSIM_CFG_UTIL_H
#define LLMSIM_CFG_UTIL_H

#include <libconfig.h>
#include <stdbool.h>

#include "base/err.h"

/* Entries of a static array (key lists). */
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct cfgu {
    const char *file;
    llm_err *e;
    char dir[1024];     /* file's directory, where @include looks ("": .) */
    char where[2400];   /* cfgu_file's answer for an @include'd setting */
} cfgu;

/* The setting's line in its file (1 for the root), and its file (an
 * @include'd one, else c's). */
int cfgu_line(const config_setting_t *s);
const char *cfgu_file(cfgu *c, const config_setting_t *s);
/* Every child of `g` must be named in `allowed`. */
int cfgu_check_keys(cfgu *c, const config_setting_t *g,
                    const char *const *allowed, int n);
/* Getters leave *out unchanged when the key is absent and !required. */
int cfgu_int(cfgu *c, const config_setting_t *g, const char *key,
             bool required, long lo, long hi, int *out);
int cfgu_double(cfgu *c, const config_setting_t *g, const char *key,
                bool required, double lo, double hi, double *out);
int cfgu_bool(cfgu *c, const config_setting_t *g, const char *key,
              bool required, bool *out);
int cfgu_str(cfgu *c, const config_setting_t *g, const char *key,
             bool required, char *out, size_t len);
/* A string that must be one of `choices`; stores the index. */
int cfgu_enum(cfgu *c, const config_setting_t *g, const char *key,
              bool required, const char *const *choices, int n, int *out);
/* A group-typed member, or NULL if absent (error when present but not a
 * group). */
int cfgu_group(cfgu *c, const config_setting_t *g, const char *key,
               config_setting_t **out);
/* Reads a libconfig file; syntax errors become file:line messages. */
int cfgu_read(cfgu *c, config_t *cfg);

#endif
