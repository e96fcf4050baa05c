/*
 * cmd_kernels.c - `stepcast kernels [--json] [--gpu NAME|--profile FILE]
 * [--iteration N] TRACE...`: the kernel cost model against the traces'
 * kernels, per class (sc_kernels_run, src/pipeline/kernels.c).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

int sc_cmd_kernels(int argc, char **argv) {
    int json = 0;
    uint64_t iteration = UINT64_MAX;
    sc_kernels_options o = SC_KERNELS_OPTIONS_INIT;
    const sc_cli_opt opts[] = {
        {.name = "--json", .kind = SC_CLI_FLAG, .dest = &json},
        {.name = "--gpu", .kind = SC_CLI_STRING, .dest = &o.gpu, .what = "a GPU name such as a100-80gb"},
        {.name = "--profile", .kind = SC_CLI_STRING, .dest = &o.profile_path, .what = "a JSON profile file"},
        {.name = "--iteration", .kind = SC_CLI_UINT, .dest = &iteration, .max = INT64_MAX,
         .what = "a step number >= 0 (N of ProfilerStep#N)"},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("kernels", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    if (o.gpu && o.profile_path) {
        sc_cli_args_free(&a);
        return sc_cli_usage("kernels", "--gpu and --profile both name the GPU: give one");
    }
    o.graph.iteration = iteration == UINT64_MAX ? -1 : (int64_t)iteration;
    sc_traceset *set;
    if ((rc = sc_cli_load("kernels", &a, &set)) != SC_EXIT_OK) return rc;
    sc_error err;
    sc_kernels *k;
    sc_status st = sc_kernels_run(set, &o, &k, &err);
    sc_traceset_free(set);
    if (st != SC_OK) return sc_cli_fail(&err);
    rc = sc_kernels_write(k, stdout, json, &err) == SC_OK ? SC_EXIT_OK : sc_cli_fail(&err);
    sc_kernels_free(k);
    return rc;
}
