/*
 * cmd_export.c - `stepcast export --chakra PREFIX [--no-cpu|--gpu-only]
 * [--iteration N] [--force] TRACE|DIR...`: the execution graph of the traces
 * (Kineto or Chakra) written as Chakra execution traces, PREFIX.<rank>.et,
 * for ASTRA-sim and other Chakra readers, and PREFIX.comm_group.json, the
 * ranks of each communicator other than the world (ASTRA-sim's
 * --comm-group-configuration; src/report/chakra_export.c).
 */
#include "cli.h"

#include <stdio.h>

int sc_cmd_export(int argc, char **argv) {
    const char *prefix = NULL;
    int no_cpu = 0, gpu_only = 0, force = 0;
    uint64_t iteration = UINT64_MAX;
    const sc_cli_opt opts[] = {
        {.name = "--chakra", .kind = SC_CLI_STRING, .dest = &prefix, .what = "a PREFIX"},
        {.name = "--no-cpu", .kind = SC_CLI_FLAG, .dest = &no_cpu},
        {.name = "--gpu-only", .kind = SC_CLI_FLAG, .dest = &gpu_only},
        {.name = "--force", .kind = SC_CLI_FLAG, .dest = &force},
        {.name = "--iteration", .kind = SC_CLI_UINT, .dest = &iteration, .max = INT64_MAX,
         .what = "a step number >= 0 (N of ProfilerStep#N)"},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("export", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    if (!prefix) {
        sc_cli_args_free(&a);
        return sc_cli_usage("export", "say what to write: --chakra PREFIX");
    }
    unsigned flags = (no_cpu ? SC_EXPORT_NO_CPU : 0) | (gpu_only ? SC_EXPORT_GPU_ONLY : 0) |
                     (force ? SC_EXPORT_FORCE : 0);
    sc_graph_options o = SC_GRAPH_OPTIONS_INIT;
    o.iteration = iteration == UINT64_MAX ? -1 : (int64_t)iteration;
    sc_traceset *set;
    if ((rc = sc_cli_load("export", &a, &set)) != SC_EXIT_OK) return rc;
    sc_error err;
    sc_export_stats es;
    double t0 = sc_cli_now();
    sc_graph *g;
    sc_status st = sc_graph_build(set, &o, &g, &err);
    sc_traceset_free(set);
    if (st == SC_OK) st = sc_graph_export_chakra(g, prefix, flags, &es, &err);
    double dt = sc_cli_now() - t0;
    sc_graph_free(g);
    if (st != SC_OK) return sc_cli_fail(&err);
    fprintf(stderr,
            "stepcast: wrote %llu file%s %s.<rank>.et: %llu nodes (of %llu tasks), %llu dependencies, "
            "%llu bytes in %.3f s; %s.comm_group.json: %llu communicator group%s besides the world\n",
            (unsigned long long)es.files, es.files == 1 ? "" : "s", prefix, (unsigned long long)es.nodes,
            (unsigned long long)es.graph_tasks, (unsigned long long)es.dependencies,
            (unsigned long long)es.bytes, dt, prefix, (unsigned long long)es.comm_groups,
            es.comm_groups == 1 ? "" : "s");
    return SC_EXIT_OK;
}
