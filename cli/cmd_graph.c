/*
 * cmd_graph.c - `stepcast graph [--json] [--dot FILE [--force]] [--iteration N]
 * [--hide-cuda-sync] TRACE|DIR...`: builds the execution graph
 * (sc_graph_build, src/pipeline/job.c) and prints what it holds
 * (sc_graph_write), and with --dot the graph itself (sc_graph_write_dot).
 */
#include "cli.h"

#include <stdio.h>

static sc_status write_dot(const void *graph, FILE *f, sc_error *err) {
    return sc_graph_write_dot(graph, f, err);
}

int sc_cmd_graph(int argc, char **argv) {
    int json = 0, force = 0, hide = 0;
    const char *dot = NULL;
    uint64_t iteration = UINT64_MAX;
    const sc_cli_opt opts[] = {
        {.name = "--json", .kind = SC_CLI_FLAG, .dest = &json},
        {.name = "--force", .kind = SC_CLI_FLAG, .dest = &force},
        {.name = "--hide-cuda-sync", .kind = SC_CLI_FLAG, .dest = &hide},
        {.name = "--dot", .kind = SC_CLI_STRING, .dest = &dot, .what = "a file name"},
        {.name = "--iteration", .kind = SC_CLI_UINT, .dest = &iteration, .max = INT64_MAX,
         .what = "a step number >= 0 (N of ProfilerStep#N)"},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("graph", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    sc_traceset *set;
    if (rc != SC_EXIT_OK || (rc = sc_cli_load("graph", &a, &set)) != SC_EXIT_OK) return rc;
    sc_graph_options o = SC_GRAPH_OPTIONS_INIT;
    o.iteration = iteration == UINT64_MAX ? -1 : (int64_t)iteration;
    o.hide_cuda_sync = hide;
    sc_error err;
    sc_graph *g;
    sc_status st = sc_graph_build(set, &o, &g, &err);
    sc_traceset_free(set);
    if (st != SC_OK) return sc_cli_fail(&err);
    if (dot) rc = sc_cli_write_file(dot, force, write_dot, g);
    if (rc == SC_EXIT_OK && sc_graph_write(g, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_graph_free(g);
    return rc;
}
