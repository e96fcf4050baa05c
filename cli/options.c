/*
 * options.c - the one command-line parser every stepcast command uses.
 *
 * A command describes its options in a table (sc_cli_opt); the parser walks
 * argv once and fills the destinations, so every command accepts the same
 * spellings: "--name VALUE" and "--name=VALUE" for long options, "-x VALUE"
 * and "-xVALUE" for short ones, flags alone, "--" to end the options, and
 * "-" as a path (standard input). The options of every command, --max-memory
 * SIZE and -j/--jobs N, are parsed here too, into the sc_load_options the
 * command hands to the library: no option travels through the environment.
 * A bad option prints one line and the command's usage and gives
 * SC_EXIT_USAGE.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Does argv[*i] name opt? Sets *value to its value where it takes one
 * ("--opt V", "--opt=V", "-x V", "-xV"; NULL when missing) and moves *i past
 * a separate value. */
static bool matches(const sc_cli_opt *opt, int argc, char **argv, int *i, const char **value) {
    const char *a = argv[*i];
    bool takes = opt->kind != SC_CLI_FLAG;
    *value = NULL;
    for (int k = 0; k < 2; k++) {
        const char *name = k ? opt->alias : opt->name;
        if (!name) continue;
        size_t n = strlen(name);
        if (strncmp(a, name, n) != 0) continue;
        bool is_long = name[1] == '-';
        if (a[n] == '\0') {
            if (takes && *i + 1 < argc) *value = argv[++*i];
            return true;
        }
        if (!takes) continue;
        if (is_long && a[n] == '=') {
            *value = a + n + 1;
            return true;
        }
        if (!is_long) {
            *value = a + n;
            return true;
        }
    }
    return false;
}

static bool parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
    if (!s || *s < '0' || *s > '9') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max) return false;
    *out = v;
    return true;
}

/* A positive decimal below 1e9 (a bandwidth, a rate). */
static bool parse_rate(const char *s, double *out) {
    if (!s || !*s) return false;
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v > 0 && v < 1e9)) return false;
    *out = v;
    return true;
}

/* Stores the value of opt; false when it is not a valid one. */
static bool store(const sc_cli_opt *opt, const char *value) {
    switch (opt->kind) {
    case SC_CLI_FLAG: *(int *)opt->dest = 1; return true;
    case SC_CLI_STRING:
        if (!value || !*value) return false;
        *(const char **)opt->dest = value;
        return true;
    case SC_CLI_UINT:
        return parse_uint(value, opt->min, opt->max ? opt->max : UINT64_MAX, (uint64_t *)opt->dest);
    case SC_CLI_BYTES: return value && sc_parse_bytes(value, (uint64_t *)opt->dest) == SC_OK;
    case SC_CLI_RATE: return parse_rate(value, (double *)opt->dest);
    case SC_CLI_CHOICE:
        for (int c = 0; value && opt->choices[c]; c++)
            if (strcmp(value, opt->choices[c]) == 0) {
                *(int *)opt->dest = c;
                return true;
            }
        return false;
    case SC_CLI_LIST:
        if (!value || !*value || *opt->count == opt->cap) return false;
        ((const char **)opt->dest)[(*opt->count)++] = value;
        return true;
    }
    return false;
}

static int bad_value(const char *cmd, const sc_cli_opt *opt, const char *value) {
    if (opt->kind == SC_CLI_LIST && value && *value && *opt->count == opt->cap)
        return sc_cli_usage(cmd, "too many %s options (at most %zu)", opt->name, opt->cap);
    if (!value || !*value) return sc_cli_usage(cmd, "%s wants %s", opt->name, opt->what);
    return sc_cli_usage(cmd, "%s wants %s, got '%s'", opt->name, opt->what, value);
}

/* The option of the table that argv[*i] names, or NULL. */
static const sc_cli_opt *find(const sc_cli_opt *opts, size_t nopts, int argc, char **argv, int *i,
                              const char **value) {
    for (size_t k = 0; k < nopts; k++)
        if (matches(&opts[k], argc, argv, i, value)) return &opts[k];
    return NULL;
}

int sc_cli_parse(const char *cmd, int argc, char **argv, const sc_cli_opt *opts, size_t nopts,
                 sc_cli_args *out) {
    memset(out, 0, sizeof *out);
    /* The options every command takes. */
    uint64_t max_memory = 0, jobs = UINT64_MAX; /* UINT64_MAX: -j not given */
    const sc_cli_opt globals[] = {
        {.name = "--max-memory", .kind = SC_CLI_BYTES, .dest = &max_memory,
         .what = "a size such as 512M or 8G"},
        {.name = "--jobs", .alias = "-j", .kind = SC_CLI_UINT, .dest = &jobs, .max = 4096,
         .what = "a thread count (0 = every core)"},
        {.name = "--verbose", .alias = "-v", .kind = SC_CLI_FLAG, .dest = &sc_cli_ui.verbose},
        {.name = "--quiet", .alias = "-q", .kind = SC_CLI_FLAG, .dest = &sc_cli_ui.quiet},
        {.name = "--progress", .kind = SC_CLI_FLAG, .dest = &sc_cli_ui.progress},
    };
    out->paths = calloc((size_t)(argc > 0 ? argc : 1), sizeof *out->paths);
    if (!out->paths) {
        fprintf(stderr, "stepcast: out of memory\n");
        return SC_EXIT_INTERNAL;
    }
    bool only_paths = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || a[1] == '\0') {
            out->paths[out->npaths++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_paths = true;
            continue;
        }
        const char *value;
        const sc_cli_opt *opt = find(opts, nopts, argc, argv, &i, &value);
        if (!opt) opt = find(globals, sizeof globals / sizeof *globals, argc, argv, &i, &value);
        if (!opt) {
            sc_cli_args_free(out);
            return sc_cli_usage(cmd, "unknown option '%s'", a);
        }
        if (!store(opt, value)) {
            sc_cli_args_free(out);
            return bad_value(cmd, opt, value);
        }
    }
    out->load.max_memory_bytes = max_memory;
    /* -j 0 asks for every core, whatever $STEPCAST_THREADS says; no -j
     * leaves the library's default (which reads it). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (jobs == 0) jobs = cores > 0 ? (uint64_t)cores : 1;
    out->load.threads = jobs == UINT64_MAX ? 0 : (uint32_t)jobs;
    sc_cli_progress_setup(&out->load);
    return SC_EXIT_OK;
}

void sc_cli_args_free(sc_cli_args *a) {
    free(a->paths);
    a->paths = NULL;
    a->npaths = 0;
}

long long sc_cli_rank_of_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    long long r = -1;
    for (const char *p = base; *p; p++) {
        if (!isdigit((unsigned char)*p)) continue;
        char *end;
        r = strtoll(p, &end, 10);
        p = end - 1;
    }
    return r;
}
