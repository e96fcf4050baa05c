/*
 * cmd_structure.c - `stepcast structure [--json] [--iteration N] TRACE...`:
 * the model's phases, layers, collective roles and dimensions recovered
 * from the traces (sc_structure_run, src/pipeline/structure_run.c), printed
 * by sc_structure_write.
 */
#include "cli.h"

#include <stdio.h>

int sc_cmd_structure(int argc, char **argv) {
    int json = 0;
    uint64_t iteration = UINT64_MAX;
    const sc_cli_opt opts[] = {
        {.name = "--json", .kind = SC_CLI_FLAG, .dest = &json},
        {.name = "--iteration", .kind = SC_CLI_UINT, .dest = &iteration, .max = INT64_MAX,
         .what = "a step number >= 0 (N of ProfilerStep#N)"},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("structure", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    sc_traceset *set;
    if (rc != SC_EXIT_OK || (rc = sc_cli_load("structure", &a, &set)) != SC_EXIT_OK) return rc;
    sc_structure_options o = SC_STRUCTURE_OPTIONS_INIT;
    o.iteration = iteration == UINT64_MAX ? -1 : (int64_t)iteration;
    sc_error err;
    sc_structure *s;
    sc_status st = sc_structure_run(set, &o, &s, &err);
    sc_traceset_free(set);
    if (st != SC_OK) return sc_cli_fail(&err);
    if (sc_structure_write(s, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_structure_free(s);
    return rc;
}
