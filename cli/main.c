/*
 * main.c - the stepcast command-line tool: dispatch to subcommands, help,
 * and the error/exit-code conventions every subcommand follows.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const sc_cli_command commands[] = {
    {"info", "summarise traces: ranks, events, kernels, collectives, iterations",
     "stepcast info [--json] [-j N] TRACE|DIR...", sc_cmd_info},
    {"synth", "write synthetic Kineto traces for N ranks, modelled on a real one",
     "stepcast synth --ranks N [--iterations I] [--layers L] [--seed S] [--gzip] [--template FILE] [--force] -o DIR",
     sc_cmd_synth},
    {"graph", "build the execution graph: tasks, edges by family, matched collectives (issue 3)",
     "stepcast graph [--json] [--dot FILE [--force]] [--iteration N] [--hide-cuda-sync] TRACE|DIR...", sc_cmd_graph},
    /* replay (issue 4) */
    {"replay", "simulate the traced iteration: measured vs simulated step, breakdown, critical path",
     "stepcast replay [--json] [--chrome FILE [--force]] [--iteration N] [--comm coupled|traced] "
     "[--scale CLASS=FACTOR]... [--timings] TRACE|DIR...",
     sc_cmd_replay},
    /* Chakra / Execution Trace interop (issue 7) */
    {"export", "write Chakra execution traces (PREFIX.<rank>.et) for ASTRA-sim & co.",
     "stepcast export --chakra PREFIX [--no-cpu|--gpu-only] [--iteration N] [--force] TRACE|DIR...",
     sc_cmd_export},
    {"et", "read a PyTorch Execution Trace; link it with the rank's Kineto trace",
     "stepcast et [--json] [--ops N] ET_FILE|ET_DIR [KINETO_TRACE|DIR]", sc_cmd_et},
    {"help", "show this help, or a command's usage", "stepcast help [COMMAND]", cmd_help},
    {"version", "print the version", "stepcast version", cmd_version},
};

const sc_cli_command *sc_cli_find(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

int sc_cli_exit_code(sc_status status) {
    switch (status) {
    case SC_OK: return SC_EXIT_OK;
    case SC_E_USAGE: return SC_EXIT_USAGE;
    case SC_E_NOMEM:
    case SC_E_INTERNAL: return SC_EXIT_INTERNAL;
    default: return SC_EXIT_INPUT;
    }
}

int sc_cli_fail(const sc_error *err) {
    char buf[1024];
    fprintf(stderr, "stepcast: %s\n", sc_error_format(err, buf, sizeof buf));
    return sc_cli_exit_code(err->status);
}

int sc_cli_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "stepcast %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    const sc_cli_command *c = sc_cli_find(cmd);
    if (c) fprintf(stderr, "usage: %s\n", c->usage);
    return SC_EXIT_USAGE;
}

void sc_cli_print_warnings(const sc_traceset *set) {
    for (size_t i = 0; i < sc_traceset_warning_count(set); i++)
        fprintf(stderr, "stepcast: warning: %s\n", sc_traceset_warning(set, i));
}

static void print_help(FILE *out) {
    fprintf(out,
            "stepcast %s - replay and predict the step time of distributed training from\n"
            "PyTorch profiler traces.\n\nusage: stepcast COMMAND [OPTIONS] TRACE|DIR...\n\ncommands:\n",
            sc_version());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\ninputs: Kineto (PyTorch profiler) Chrome-trace JSON, .json or .json.gz (detected\n"
            "by content), one file per rank; a directory means every trace file under it.\n"
            "Chakra execution traces (<prefix>.<rank>.et[.gz]) are accepted wherever traces are.\n"
            "\nevery command: --max-memory SIZE (e.g. 512M, 8G) caps the memory of the job:\n"
            "the traces (split evenly across the files), the graph and the simulation;\n"
            "default $STEPCAST_MAX_MEMORY, else 80%% of RAM. A job over it fails with exit 1\n"
            "instead of swapping. -j N (--jobs N) caps the threads that read and build\n"
            "(0 = every core, the default; $STEPCAST_THREADS); a large plain file is read\n"
            "by several threads. Outputs go to a temporary file renamed into place; an\n"
            "existing output is replaced only with --force.\n"
            "\nexit codes: 0 ok, 1 bad or unreadable input, 2 bad command line,\n"
            "            3 internal error (out of memory, cannot write output, bug)\n");
}

static int cmd_help(int argc, char **argv) {
    if (argc > 1) {
        const sc_cli_command *c = sc_cli_find(argv[1]);
        if (!c) return sc_cli_usage("help", "unknown command '%s'", argv[1]);
        printf("%s\n\n%s\n", c->usage, c->summary);
        return SC_EXIT_OK;
    }
    print_help(stdout);
    return SC_EXIT_OK;
}

static int cmd_version(int argc, char **argv) {
    if (argc > 1) return sc_cli_usage("version", "unexpected argument '%s'", argv[1]);
    printf("stepcast %s\n", sc_version());
    return SC_EXIT_OK;
}

/* Removes argv[i .. i+used) (and keeps the terminating NULL). */
static void drop_args(int *argc, char **argv, int i, int used) {
    memmove(&argv[i], &argv[i + used], (size_t)(*argc - i - used + 1) * sizeof *argv);
    *argc -= used;
}

/* The value of global option `opt` at argv[i] ("--opt V" or "--opt=V"),
 * with *used set to the arguments it takes; NULL when argv[i] is not it,
 * "" when its value is missing. */
static const char *global_value(int argc, char **argv, int i, const char *opt, int *used) {
    size_t n = strlen(opt);
    if (strncmp(argv[i], opt, n) != 0) return NULL;
    if (argv[i][n] == '=' && opt[1] == '-') {
        *used = 1;
        return argv[i] + n + 1;
    }
    if (argv[i][n] != '\0') return NULL;
    *used = i + 1 < argc ? 2 : 1;
    return i + 1 < argc ? argv[i + 1] : "";
}

/* Options of every command, taken out of the arguments here (up to a "--")
 * and handed to the library through the environment, which every load
 * without options of its own reads (src/base/budget.c):
 *   --max-memory SIZE  (issues 5, 6) STEPCAST_MAX_MEMORY: the memory of the job
 *                      (traces, graph, simulation);
 *   -j N, --jobs N     (issue 5) STEPCAST_THREADS: threads for reading and
 *                      building, 0 = every core.
 * Returns SC_EXIT_OK or the usage exit code. */
static int take_global_options(int *argc, char **argv, const char *cmd) {
    for (int i = 2; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        const char *v;
        int used = 0;
        if ((v = global_value(*argc, argv, i, "--max-memory", &used))) {
            uint64_t bytes;
            if (sc_parse_bytes(v, &bytes) != SC_OK)
                return sc_cli_usage(cmd, "--max-memory wants a size such as 512M or 8G, got '%s'", v);
            if (setenv("STEPCAST_MAX_MEMORY", v, 1) != 0) return SC_EXIT_INTERNAL;
        } else if ((v = global_value(*argc, argv, i, "--jobs", &used)) ||
                   (v = global_value(*argc, argv, i, "-j", &used))) {
            char *end = NULL;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 0 || n > 4096)
                return sc_cli_usage(cmd, "-j wants a thread count (0 = every core), got '%s'", v);
            if (setenv("STEPCAST_THREADS", v, 1) != 0) return SC_EXIT_INTERNAL;
        } else {
            continue;
        }
        drop_args(argc, argv, i, used);
        i--;
    }
    return SC_EXIT_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_help(stderr);
        return SC_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) name = "help";
    if (strcmp(name, "--version") == 0) name = "version";
    const sc_cli_command *c = sc_cli_find(name);
    if (!c) {
        fprintf(stderr, "stepcast: unknown command '%s' (try 'stepcast help')\n", argv[1]);
        return SC_EXIT_USAGE;
    }
    int urc = take_global_options(&argc, argv, c->name);
    if (urc != SC_EXIT_OK) return urc;
    int rc = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "stepcast: cannot write to standard output\n");
        return SC_EXIT_INTERNAL;
    }
    return rc;
}
