/* llmsim — entry point: dispatches `llmsim <command> [options]`, prints
 * errors, and is the only place that exits. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "base/util.h"


static void usage(FILE *out)
{
    fprintf(out,
            "llmsim %s — simulator of LLM training and inference on GPU "
            "clusters\n\n"
            "usage: llmsim <command> [options]\n"
            "       llmsim help <command>\n"
            "       llmsim --version\n\n"
            "commands:\n",
            LLMSIM_VERSION);
    for (int i = 0; i < cmd_count; i++)
        fprintf(out, "  %-10s %s\n", cmd_list[i]->name, cmd_list[i]->summary);
    fprintf(out, "\nExit status: 0 success, 1 bad input, 2 does not fit "
                 "(memory checks).\nData files: %s\n",
            cfg_datadir());
}

static int unknown_command(const char *name)
{
    const char *names[32]; /* more than cmd_count */
    for (int i = 0; i < cmd_count && i < 32; i++)
        names[i] = cmd_list[i]->name;
    char hint[96];
    util_did_you_mean(hint, sizeof hint, name, names,
                      cmd_count < 32 ? cmd_count : 32);
    fprintf(stderr, "llmsim: unknown command \"%s\"%s; `llmsim --help` "
                    "lists the commands\n",
            name, hint);
    return EXIT_BAD_INPUT;
}

/* Everything printed reached stdout: a full disk or a file-size limit is
 * an error, never a silent truncation. */
static int flush_stdout(const char *cmd, int rc)
{
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int err = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (!bad)
        return rc;
    fprintf(stderr, "llmsim%s%s: stdout: write error: %s\n", cmd ? " " : "",
            cmd ? cmd : "", strerror(err));
    return rc == EXIT_OK ? EXIT_BAD_INPUT : rc;
}

int main(int argc, char **argv)
{
    /* past a file-size limit a write fails (EFBIG) and is reported, instead
     * of the signal killing the run mid-file */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return EXIT_BAD_INPUT;
    }
    const char *c = argv[1];
    if (strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0) {
        usage(stdout);
        return flush_stdout(NULL, EXIT_OK);
    }
    if (strcmp(c, "--version") == 0 || strcmp(c, "-V") == 0) {
        printf("llmsim %s\n", LLMSIM_VERSION);
        return flush_stdout(NULL, EXIT_OK);
    }
    if (strcmp(c, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return flush_stdout(NULL, EXIT_OK);
        }
        const cmd_def *d = cmd_find(argv[2]);
        if (!d)
            return unknown_command(argv[2]);
        cmd_help(d, stdout);
        return flush_stdout(NULL, EXIT_OK);
    }
    const cmd_def *d = cmd_find(c);
    if (!d)
        return unknown_command(c);
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cmd_help(d, stdout);
            return flush_stdout(d->name, EXIT_OK);
        }
    llm_err e = {{0}};
    int rc = d->run(argc - 1, argv + 1, &e);
    if (rc == EXIT_BAD_INPUT)
        fprintf(stderr, "llmsim %s: %s\n", d->name,
                e.msg[0] ? e.msg : "bad input");
    return flush_stdout(d->name, rc);
}
