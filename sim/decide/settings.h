/* settings — every experiment setting, declared once.
 *
 * One entry per setting gives its command-line flag, its type, unit,
 * bounds, default and one line of help, and, for each kind of experiment
 * that has it (training, serving, the memory command's inference plan, a
 * compare file), its key in experiment files and where it lives in that
 * kind's struct (exp.h).  Everything that reads or shows a setting goes
 * through here: flags (cli), experiment files (cfg), --set and sweep axes
 * (decide), --help text and the bad-input message.  Adding a setting is one
 * entry in settings.c (and its struct field).
 *
 * Nothing here reads files or prints: values arrive as text (a flag, a
 * --set) or typed (what cfg read from a file) and land in the struct with
 * their bounds checked; a failure returns -1 with "what is wrong
 * (expected ...)" in `why`, and the caller says where the value was. */
#ifndef LLMSIM_SETTINGS_H
#define LLMSIM_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

/* Kinds of experiment, each one struct in exp.h. */
typedef enum {
    EXP_TRAIN,   /* exp_train: `train`, `search`, `memory --train` */
    EXP_SERVE,   /* exp_serve: `serve`, serving search */
    EXP_INFER,   /* exp_infer: `memory` (inference) */
    EXP_COMPARE, /* exp_compare: a compare file's scalars */
    EXP_KINDS
} exp_kind;

extern const char *const exp_kind_names[EXP_KINDS];
/* The command whose `llmsim help` lists a kind's settings. */
extern const char *const exp_kind_command[EXP_KINDS];

typedef enum {
    SET_INT,    /* int */
    SET_LONG,   /* long */
    SET_DOUBLE, /* double, stored x scale */
    SET_BOOL,   /* bool */
    SET_ENUM,   /* an int index into names (a C enum field) */
    SET_DTYPE,  /* a dtype among names; "auto" = DT_COUNT */
    SET_STR,    /* char[size] */
    SET_INTLIST, /* plan_int_list: integers lo..hi, at most size of them */
    SET_RECOMPUTE /* the field is a plan_train: its recompute mode and,
                     for "every:K", recompute_every (plan_recompute_parse) */
} set_type;

/* How a bool flag works: --sp sets true, --no-flash-attn sets false. */
enum { FLAG_VALUE, FLAG_TRUE, FLAG_FALSE };

/* Where a setting lives in one kind of experiment. */
typedef struct setting_at {
    const char *key; /* file key, --set and sweep key ("parallel.tp");
                        NULL: command line only */
    size_t off;      /* offset of the field in the kind's struct */
    bool in;         /* the kind has this setting */
} setting_at;

typedef struct setting {
    const char *flag;  /* "tp" for --tp; NULL: files only */
    set_type type;
    double lo, hi;     /* bounds, in the unit the user writes */
    double scale;      /* stored = written x scale (0: 1) */
    const char *unit;  /* "MiB", "ms", "GB/s" ... ("" when none) */
    const char *const *names; /* SET_ENUM, SET_DTYPE: the accepted values */
    int nnames;
    size_t size;       /* SET_STR: the field's size */
    int flag_kind;     /* FLAG_VALUE, or a bool flag without a value */
    const char *dflt;  /* the default as a user would write it; NULL: 0,
                          false, "" (whatever dflt_help says) */
    const char *dflt_help; /* the default in words when it is not a value
                              ("as the cluster file says") */
    const char *help;  /* one line */
    setting_at at[EXP_KINDS];
} setting;

#define SETTINGS_MAX 160

/* Where each setting's value came from, kept with the experiment so that
 * an error found later names the file and line, the --set or the flag.
 * In the order they are applied: a later one overrides an earlier. */
enum { SRC_DEFAULT, SRC_FILE, SRC_SET, SRC_FLAG, SRC_AXIS /* a sweep's */ };
typedef struct exp_src {
    unsigned char how;
    unsigned char file; /* SRC_FILE: 0 the experiment file, i its i-th
                           @include'd file */
    int line;           /* SRC_FILE */
} exp_src;

extern const setting settings_table[];
extern const int settings_count;

/* Two settings of one kind that contradict each other when both are
 * given (neither left at its default): one would override or void the
 * other without a word. */
typedef struct setting_conflict {
    exp_kind kind;
    const char *a, *b; /* their flags */
    const char *why;   /* "what b would do to a" */
} setting_conflict;

extern const setting_conflict settings_conflicts[];
extern const int settings_nconflicts;

/* The setting of kind k with that --flag name (without "--") or that file
 * key, or NULL. */
const setting *settings_by_flag(exp_kind k, const char *flag);
const setting *settings_by_key(exp_kind k, const char *key);
int settings_index(const setting *s);

/* Every key of kind k, for "did you mean" (n returned; at most cap). */
int settings_keys(exp_kind k, const char **keys, int cap);

/* Whether kind k has a key under `group` ("parallel"), so a group's name
 * in a file can be told from a typo. */
bool settings_has_group(exp_kind k, const char *group);

/* Every field of x (a kind-k struct) at its default; sources cleared. */
void settings_defaults(exp_kind k, void *x, exp_src *src);

/* s's field of x back at its default; its source SRC_DEFAULT. */
void settings_reset(const setting *s, exp_kind k, void *x, exp_src *src);

/* Stores `text` ("8", "bf16", "true", "25.5") into s's field of x.  A
 * string may be quoted.  -1 and why ("\"two\" is not an integer
 * (expected 1..4096)") when it does not parse or is out of bounds. */
int settings_parse(const setting *s, exp_kind k, void *x, const char *text,
                   char *why, size_t len);

/* Typed stores, as a file gives the values: an integer (also for reals
 * whose setting is a number), a real, a bool, a string.  `what` names
 * the type the file gave when it is the wrong one.  -1 and why. */
int settings_put_int(const setting *s, exp_kind k, void *x, long long v,
                     char *why, size_t len);
int settings_put_real(const setting *s, exp_kind k, void *x, double v,
                      char *why, size_t len);
int settings_put_bool(const setting *s, exp_kind k, void *x, bool v,
                      char *why, size_t len);
int settings_put_str(const setting *s, exp_kind k, void *x, const char *v,
                     char *why, size_t len);
/* A list of integers (a file's [7, 8, 8, 7]) into a SET_INTLIST. */
int settings_put_ints(const setting *s, exp_kind k, void *x,
                      const long long *v, int n, char *why, size_t len);

/* "KEY: unknown key (did you mean ...?) (expected ...)" for kind k. */
void settings_unknown(exp_kind k, const char *key, char *why, size_t len);

/* "KEY=VALUE" (a --set, a sweep point) into x; the message names the key.
 * how: SRC_SET, recorded in src (may be NULL). */
int settings_apply(exp_kind k, void *x, exp_src *src, const char *assign,
                   char *why, size_t len);

/* The current value of s in x as text (as the user would write it). */
void settings_format(const setting *s, exp_kind k, const void *x, char *buf,
                     size_t len);

/* "expected ..." for s: "an integer 1..4096", "one of a|b|c" ... */
void settings_expect(const setting *s, char *buf, size_t len);

/* One line of --help for s in kind k: flag, key, what it is, its bounds
 * and its default. */
void settings_help_line(const setting *s, exp_kind k, char *buf, size_t len);

#endif
