/*
 * cli.h - what the stepcast subcommands share: exit codes, error printing,
 * the option parser (options.c) and the table that main.c dispatches on.
 * Each subcommand lives in its own cmd_*.c and uses only the public API in
 * stepcast.h.
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

/* What an option's value is (sc_cli_opt.kind) and where it goes (dest). */
typedef enum sc_cli_opt_kind {
    SC_CLI_FLAG,   /* int: set to 1; takes no value */
    SC_CLI_STRING, /* const char *: a non-empty value */
    SC_CLI_UINT,   /* uint64_t: a decimal in [min, max] (max 0: no bound) */
    SC_CLI_BYTES,  /* uint64_t: a size such as 512M (sc_parse_bytes) */
    SC_CLI_RATE,   /* double: a decimal > 0 and < 1e9, such as a bandwidth */
    SC_CLI_CHOICE, /* int: the index of the value in choices */
    SC_CLI_LIST,   /* const char *[cap]: each use appends its value; *count counts them */
} sc_cli_opt_kind;

typedef struct sc_cli_opt {
    const char *name;  /* "--iteration" */
    const char *alias; /* a short spelling, "-o", or NULL */
    sc_cli_opt_kind kind;
    void *dest;
    uint64_t min, max;          /* SC_CLI_UINT */
    const char *what;           /* the value, for errors: "a step number >= 0" */
    const char *const *choices; /* SC_CLI_CHOICE: NULL-terminated */
    size_t *count, cap;         /* SC_CLI_LIST */
} sc_cli_opt;

/* What is left once the options are taken: the paths, and the options
 * every command has (--max-memory, -j) as the library's load options. */
typedef struct sc_cli_args {
    const char **paths;
    size_t npaths;
    sc_load_options load;
} sc_cli_args;

/* Parses argv[1 ..) (argv[0] is the command) against opts and the options
 * of every command; SC_EXIT_OK, or the usage exit code after saying why.
 * out->paths is malloc'ed: sc_cli_args_free. */
int sc_cli_parse(const char *cmd, int argc, char **argv, const sc_cli_opt *opts, size_t nopts,
                 sc_cli_args *out);
void sc_cli_args_free(sc_cli_args *a);
#define SC_CLI_NOPTS(table) (sizeof(table) / sizeof *(table))

/* The options replay and predict share (cmd_replay.c), parsed into a. */
#define SC_CLI_MAX_SCALES 64
typedef struct sc_cli_replay_args {
    int json, force, comm; /* comm: index into coupled, traced, model */
    const char *chrome;
    uint64_t iteration;    /* UINT64_MAX: not given */
    const char *scales[SC_CLI_MAX_SCALES];
    size_t nscales;
    int sensitivity, no_sensitivity; /* neither: the library's default (auto) */
    int breakdown;         /* index into stepcast, hta */
} sc_cli_replay_args;
#define SC_CLI_REPLAY_NOPTS 9
/* Writes the SC_CLI_REPLAY_NOPTS shared options into opts, pointing at a
 * (zeroed here but for its iteration). */
void sc_cli_replay_opts(sc_cli_replay_args *a, sc_cli_opt *opts);
/* The replay options they say: SC_EXIT_OK, or the usage exit code after
 * saying why (options that contradict each other). */
int sc_cli_replay_options(const char *cmd, const sc_cli_replay_args *a, sc_replay_options *o);
/* The Chrome timeline where --chrome asks for it, then the report. */
int sc_cli_replay_output(const sc_replay *r, const sc_cli_replay_args *a);

/* The options predict adds to replay's (cmd_predict.c), shared with report. */
typedef struct sc_cli_predict_args {
    uint64_t dp, nodes, gpus_per_node, layers, hidden, ffn, heads, seq, micro_batch;
    uint64_t tp, pp, virtual_stages, microbatches;
    double net_gbps, nvlink_gbps; /* 0: not given */
    const char *gpu, *profile, *schedule;
    int model_backward;
    const char *recompute;
} sc_cli_predict_args;
#define SC_CLI_PREDICT_NOPTS 20
/* Writes the SC_CLI_PREDICT_NOPTS options into opts, pointing at a (zeroed). */
void sc_cli_predict_opts(sc_cli_predict_args *a, sc_cli_opt *opts);
/* Sets o's edits from a: SC_EXIT_OK, or the usage exit code after saying why. */
int sc_cli_predict_options(const char *cmd, const sc_cli_predict_args *a, sc_predict_options *o);
/* Whether a asks for any edit (then report predicts). */
bool sc_cli_predict_edits(const sc_cli_predict_args *a);

/* Prints "stepcast: <formatted error>" to stderr; returns the exit code. */
int sc_cli_fail(const sc_error *err);
/* Prints "stepcast <cmd>: message" and the usage line; returns SC_EXIT_USAGE. */
int sc_cli_usage(const char *cmd, const char *fmt, ...);
int sc_cli_exit_code(sc_status status);
/* What every command's --verbose, --quiet and --progress say (options.c
 * sets them): how much goes to stderr besides the result. */
typedef struct sc_cli_ui_options {
    int verbose;  /* every warning, not one line per kind */
    int quiet;    /* no progress line */
    int progress; /* a progress line even when stderr is not a terminal */
} sc_cli_ui_options;
extern sc_cli_ui_options sc_cli_ui;
/* Prints the trace set's warnings to stderr, one line per kind with its
 * count (every one with --verbose). */
void sc_cli_print_warnings(const sc_traceset *set);
void sc_cli_print_info_warnings(const sc_info *info);
/* The progress line (progress.c): load gets the callback that draws it
 * where stderr is a terminal (or --progress) and not --quiet; clear takes
 * the line away before anything else goes to stderr. */
void sc_cli_progress_setup(sc_load_options *load);
void sc_cli_progress_clear(void);
/* The trace set of a command's paths (a usage error when there are none),
 * loaded with its load options, its warnings printed; frees a either way.
 * SC_EXIT_OK with *set, or the exit code. */
int sc_cli_load(const char *cmd, sc_cli_args *a, sc_traceset **set);
/* Writes through an sc_output (a temporary file renamed into place): the
 * exit code of open, write(ctx, file) and commit. */
int sc_cli_write_file(const char *path, int force, sc_status (*write)(const void *ctx, FILE *f, sc_error *err),
                      const void *ctx);
const sc_cli_command *sc_cli_find(const char *name);

/* Seconds on the monotonic clock, for the times commands report. */
static inline double sc_cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int sc_cmd_info(int argc, char **argv);
int sc_cmd_export(int argc, char **argv);
int sc_cmd_et(int argc, char **argv);
int sc_cmd_replay(int argc, char **argv);
int sc_cmd_synth(int argc, char **argv);
int sc_cmd_graph(int argc, char **argv);
int sc_cmd_predict(int argc, char **argv);
int sc_cmd_comm(int argc, char **argv);
int sc_cmd_structure(int argc, char **argv);
int sc_cmd_model(int argc, char **argv);
int sc_cmd_diff(int argc, char **argv);
int sc_cmd_report(int argc, char **argv);
int sc_cmd_benchgen(int argc, char **argv);
int sc_cmd_kernels(int argc, char **argv);

/* "stepcast CMD ARGS..." (argv[1..]) into buf, cut to size: a page's subtitle. */
void sc_cli_command_line(const char *cmd, int argc, char **argv, char *buf, size_t size);

/* The last run of digits in a file name (ranks of ET files), -1 when none. */
long long sc_cli_rank_of_name(const char *path);

#endif
