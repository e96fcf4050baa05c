/*
 * cli.h - what the stepcast subcommands share: exit codes, error printing
 * and the table that main.c dispatches on. Each subcommand lives in its own
 * cmd_*.c and uses only the public API in stepcast.h.
 */
#ifndef SC_CLI_H
#define SC_CLI_H

#include "stepcast.h"

#include <stdbool.h>
#include <time.h>

/* Exit codes, the same for every command (documented in `stepcast help`). */
enum {
    SC_EXIT_OK = 0,
    SC_EXIT_INPUT = 1,    /* bad or unreadable input */
    SC_EXIT_USAGE = 2,    /* bad command line */
    SC_EXIT_INTERNAL = 3, /* out of memory, write failure or a bug */
};

typedef struct sc_cli_command {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv);
} sc_cli_command;

/* Prints "stepcast: <formatted error>" to stderr; returns the exit code. */
int sc_cli_fail(const sc_error *err);
/* Prints "stepcast <cmd>: message" and the usage line; returns SC_EXIT_USAGE. */
int sc_cli_usage(const char *cmd, const char *fmt, ...);
int sc_cli_exit_code(sc_status status);
/* Prints the trace set's warnings to stderr. */
void sc_cli_print_warnings(const sc_traceset *set);
const sc_cli_command *sc_cli_find(const char *name);

/* Seconds on the monotonic clock, for the times commands report. */
static inline double sc_cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int sc_cmd_info(int argc, char **argv);
int sc_cmd_export(int argc, char **argv); /* issue 7 */
int sc_cmd_et(int argc, char **argv);     /* issue 7 */
int sc_cmd_replay(int argc, char **argv); /* issue 4 */
int sc_cmd_synth(int argc, char **argv);
int sc_cmd_graph(int argc, char **argv); /* issue 3 */

#endif
