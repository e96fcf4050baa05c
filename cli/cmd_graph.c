/*
 * cmd_graph.c - `stepcast graph [--json] [--dot FILE [--force]] [--iteration N]
 * [--hide-cuda-sync] TRACE|DIR...`: parses the options and calls
 * sc_report_graph() / sc_report_graph_dot() (src/report/graph_report.c;
 * the graph itself is built by src/graph/build.c).
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_i64(const char *s, int64_t *out) {
    if (!s || !*s || *s == '-') return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

static int write_dot(const sc_traceset *set, const sc_graph_options *o, const char *path, int force) {
    sc_error err;
    sc_output *out;
    if (sc_output_open(path, force ? SC_OUTPUT_FORCE : 0, &out, &err) != SC_OK) return sc_cli_fail(&err);
    if (sc_report_graph_dot(set, o, sc_output_file(out), &err) != SC_OK) {
        sc_output_abort(out);
        return sc_cli_fail(&err);
    }
    if (sc_output_commit(out, &err) != SC_OK) return sc_cli_fail(&err);
    return SC_EXIT_OK;
}

int sc_cmd_graph(int argc, char **argv) {
    sc_graph_options o = SC_GRAPH_OPTIONS_INIT;
    int json = 0, force = 0;
    const char *dot = NULL;
    const char *paths[4096];
    size_t n = 0;
    bool only_paths = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || !a[1]) {
            if (n == sizeof paths / sizeof paths[0]) return sc_cli_usage("graph", "too many paths");
            paths[n++] = a;
        } else if (strcmp(a, "--") == 0) {
            only_paths = true;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--force") == 0) {
            force = 1;
        } else if (strcmp(a, "--hide-cuda-sync") == 0) {
            o.hide_cuda_sync = 1;
        } else if (strcmp(a, "--dot") == 0) {
            if (i + 1 >= argc) return sc_cli_usage("graph", "--dot needs a file name");
            dot = argv[++i];
        } else if (strcmp(a, "--iteration") == 0) {
            if (i + 1 >= argc || !parse_i64(argv[i + 1], &o.iteration))
                return sc_cli_usage("graph", "--iteration needs a step number (N of ProfilerStep#N)");
            i++;
        } else {
            return sc_cli_usage("graph", "unknown option '%s'", a);
        }
    }
    if (n == 0) return sc_cli_usage("graph", "no trace files given");
    sc_error err;
    sc_traceset *set;
    if (sc_traceset_load(paths, n, NULL, &set, &err) != SC_OK) return sc_cli_fail(&err);
    sc_cli_print_warnings(set);
    int rc = SC_EXIT_OK;
    if (dot) rc = write_dot(set, &o, dot, force);
    if (rc == SC_EXIT_OK && sc_report_graph(set, &o, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_traceset_free(set);
    return rc;
}
