/*
 * cmd_et.c - `stepcast et [--json] ET_FILE [KINETO_TRACE]`: what a PyTorch
 * Execution Trace holds (operators, shapes, tensor data dependencies) and,
 * given the same rank's Kineto trace, how well the two link
 * (src/readers/pytorch_et.c).
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int sc_cmd_et(int argc, char **argv) {
    int json = 0;
    const char *paths[2];
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return sc_cli_usage("et", "unknown option '%s'", argv[i]);
        else if (n == 2) return sc_cli_usage("et", "give one ET file and at most one Kineto trace");
        else paths[n++] = argv[i];
    }
    if (n == 0) return sc_cli_usage("et", "no execution trace given");
    sc_error err;
    sc_et *et;
    if (sc_et_load(paths[0], &et, &err) != SC_OK) return sc_cli_fail(&err);
    sc_trace *k = NULL;
    if (n == 2 && sc_trace_load(paths[1], NULL, &k, &err) != SC_OK) {
        sc_et_free(et);
        return sc_cli_fail(&err);
    }
    int rc = SC_EXIT_OK;
    if (sc_report_et(et, k, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_trace_free(k);
    sc_et_free(et);
    return rc;
}
