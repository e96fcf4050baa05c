/*
 * cmd_info.c - `stepcast info [--json] TRACE|DIR...`: what each rank's trace
 * holds (src/pipeline/info.c works it out, src/report/info_report.c prints it).
 */
#include "cli.h"

#include <stdio.h>

int sc_cmd_info(int argc, char **argv) {
    int json = 0;
    const sc_cli_opt opts[] = {{.name = "--json", .kind = SC_CLI_FLAG, .dest = &json}};
    sc_cli_args a;
    int rc = sc_cli_parse("info", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    if (a.npaths == 0) {
        sc_cli_args_free(&a);
        return sc_cli_usage("info", "no trace files given");
    }
    sc_error err;
    sc_info *info;
    /* Each rank is summed up as it is read: memory for the files being
     * read, not for the whole job. */
    sc_status st = sc_info_load(a.paths, a.npaths, &a.load, &info, &err);
    sc_cli_args_free(&a);
    if (st != SC_OK) return sc_cli_fail(&err);
    sc_cli_print_info_warnings(info);
    if (sc_info_write(info, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_info_free(info);
    return rc;
}
