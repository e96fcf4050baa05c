/*
 * cmd_info.c - `stepcast info [--json] TRACE|DIR...`: what each rank's trace
 * holds (see src/report/info.c for the figures).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sc_cmd_info(int argc, char **argv) {
    int json = 0;
    const char *paths[4096];
    size_t n = 0;
    sc_load_options lo = {0}; /* -j N is taken by main.c (STEPCAST_THREADS) */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--") == 0) {
            for (i++; i < argc; i++) {
                if (n == sizeof paths / sizeof paths[0]) return sc_cli_usage("info", "too many paths");
                paths[n++] = argv[i];
            }
        } else if (argv[i][0] == '-' && argv[i][1]) return sc_cli_usage("info", "unknown option '%s'", argv[i]);
        else {
            if (n == sizeof paths / sizeof paths[0]) return sc_cli_usage("info", "too many paths");
            paths[n++] = argv[i];
        }
    }
    if (n == 0) return sc_cli_usage("info", "no trace files given");
    sc_error err;
    sc_traceset *set;
    /* Each rank is summed up as it is read: memory for the files being
     * read, not for the whole job. */
    if (sc_traceset_load_for_info(paths, n, &lo, &set, &err) != SC_OK) return sc_cli_fail(&err);
    sc_cli_print_warnings(set);
    int rc = SC_EXIT_OK;
    if (sc_report_info(set, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_traceset_free(set);
    return rc;
}
