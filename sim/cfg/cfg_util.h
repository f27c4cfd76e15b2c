/* cfg_util — typed, range-checked getters over libconfig settings, shared by
 * the loaders in cfg*.c.  Private to the cfg edge. */
#ifndef LLMSIM_CFG_UTIL_H
#define LLMSIM_CFG_UTIL_H

#include <libconfig.h>
#include <stdbool.h>

#include "base/err.h"
#include "hw/topo.h"

typedef struct cfgu {
    const char *file;
    llm_err *e;
} cfgu;

/* The hook of a setting an override (--set) put there, not the file. */
extern const char cfgu_from_set[];
/* The setting's line in its file (1 for the root); 0 for an override. */
int cfgu_line(const config_setting_t *s);
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
/* --set a.b=v on a parsed file: the value's type follows the setting it
 * replaces, or its spelling when it is new; marked as coming from the
 * command line (cfgu_from_set). */
int cfgu_apply_set(config_t *cfg, const char *file, const char *set,
                   llm_err *e);
/* cfgu_read, then each "key.path=value" override applied in order. */
int cfgu_read_with_sets(cfgu *c, config_t *cfg, const char *const *sets,
                        int nsets);
/* Reads a libconfig file; syntax errors become file:line messages. */
int cfgu_read(cfgu *c, config_t *cfg);

/* The groups every experiment file may hold besides its own: net = {
 * nvlink_GBps; pcie_GBps; ib_gbps; } (link bandwidths replacing the
 * cluster's) and sweep = { vary = ( "KEY=VALUES", ... ); out = "F.csv"; }
 * (read by `llmsim sweep`, skipped here). */
#define CFGU_SHARED_KEYS "net", "sweep"
int cfgu_net(cfgu *c, const config_setting_t *root, topo_net *net);

#endif
