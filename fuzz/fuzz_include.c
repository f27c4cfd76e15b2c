/* Fuzz target: an experiment file and the file it @includes.  The input
 * is two files cut at the first line "@@@": before it main.cfg, after it
 * plan.cfg, side by side in the scratch directory; main.cfg is read as a
 * training experiment (cfg_exp_read), so its @include "plan.cfg" (or one
 * of plan.cfg's own, main.cfg included) goes through the prescanner's
 * checks (line length, 32-bit integers, depth, missing files and
 * directories) and libconfig's include, and a value from plan.cfg is
 * recorded with its file. */
#include <string.h>

#include "cfg/cfg.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *cut = NULL;
    for (size_t i = 0; i + 4 <= size && !cut; i++)
        if ((i == 0 || data[i - 1] == '\n') && memcmp(data + i, "@@@\n", 4) == 0)
            cut = data + i;
    size_t nmain = cut ? (size_t)(cut - data) : size;
    const uint8_t *inc = cut ? cut + 4 : data + size;
    const char *p = fz_write("main.cfg", data, nmain);
    if (!p || !fz_write("plan.cfg", inc, (size_t)(data + size - inc)))
        return 0;
    static exp_train x;
    exp_train_defaults(&x);
    llm_err e = {{0}};
    int rc = cfg_exp_read(p, EXP_TRAIN, &x, &e);
    if (rc == 0) /* every recorded file is one of the two, by index */
        for (int i = 0; i < SETTINGS_MAX; i++)
            if (x.h.src[i].how == SRC_FILE && x.h.src[i].file > x.h.ninc)
                __builtin_trap();
    fz_report("include", rc, &e);
    return 0;
}
