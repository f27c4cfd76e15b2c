/* Fuzz target: the command line.  The input is argv, one argument per
 * line (at most 48; the first names the command, as `llmsim CMD ...`),
 * handed to the command's run() with cmd_inputs_only set: it parses its
 * options, reads and checks the files they name, and stops before it
 * builds a cluster, simulates or writes (so an output name in the input
 * creates nothing).  Paths are relative to the working directory, the
 * repository's root under `make unit` and fuzz/run.sh, so a seed may name
 * configs/x.cfg.  What the commands print goes to /dev/null. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "fuzz_util.h"

#define MAX_ARGS 48

/* Once per process: the data directory, and the commands held to their
 * inputs. */
static void setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    setenv("LLMSIM_DATA", fz_datadir(), 0);
    cmd_inputs_only = true;
}

/* Cuts text into arguments at newlines (text is changed). */
static int split(char *text, char **argv)
{
    int n = 0;
    for (char *p = text; n < MAX_ARGS; n++) {
        argv[n] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            return n + 1;
        *nl = '\0';
        p = nl + 1;
        if (!*p)
            return n + 1;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    char *text = fz_strndup(data, size);
    char *argv[MAX_ARGS + 1];
    int argc = split(text, argv);
    argv[argc] = NULL;
    const cmd_def *d = cmd_find(argv[0]);
    if (d) {
        fflush(stdout);
        int keep = dup(1), null = open("/dev/null", O_WRONLY);
        if (keep >= 0 && null >= 0)
            dup2(null, 1);
        llm_err e = {{0}};
        int rc = d->run(argc, argv, &e);
        fflush(stdout);
        if (keep >= 0)
            dup2(keep, 1);
        if (keep >= 0)
            close(keep);
        if (null >= 0)
            close(null);
        fz_report(d->name, rc == EXIT_OK ? 0 : -1, &e);
    }
    free(text);
    return 0;
}
