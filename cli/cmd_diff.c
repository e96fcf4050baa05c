/*
 * cmd_diff.c - `stepcast diff [--json] [--top N] [--html FILE [--force]] A B`: two traces or trace
 * sets (a file or a folder each) compared per step, kernel class,
 * collective kind, operator and kernel (src/pipeline/diff.c computes,
 * src/report/diff_report.c prints). Each side is loaded as `replay` loads
 * its paths, warnings and all; --html also writes the comparison as a page
 * (src/report/diff_html.c).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct html_job {
    const sc_diff *diff;
    const char *subtitle;
    size_t top;
} html_job;

static sc_status write_html(const void *ctx, FILE *f, sc_error *err) {
    const html_job *j = ctx;
    return sc_diff_write_html(j->diff, j->subtitle, j->top, f, err);
}

int sc_cmd_diff(int argc, char **argv) {
    int json = 0, force = 0;
    uint64_t top = 20;
    const char *html = NULL;
    const sc_cli_opt opts[] = {
        {.name = "--json", .kind = SC_CLI_FLAG, .dest = &json},
        {.name = "--top", .kind = SC_CLI_UINT, .dest = &top, .max = 1000000, .what = "a row count (0 = all)"},
        {.name = "--html", .kind = SC_CLI_STRING, .dest = &html, .what = "an HTML file name"},
        {.name = "--force", .kind = SC_CLI_FLAG, .dest = &force},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("diff", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    if (a.npaths != 2) {
        size_t n = a.npaths;
        sc_cli_args_free(&a);
        return sc_cli_usage("diff", "wants two traces or folders, A and B (got %zu)", n);
    }
    sc_traceset *set[2] = {NULL, NULL};
    for (int s = 0; s < 2 && rc == SC_EXIT_OK; s++) {
        sc_cli_args one = a;
        one.paths = &a.paths[s];
        one.npaths = 1;
        sc_error err;
        if (sc_traceset_load(one.paths, 1, &one.load, &set[s], &err) != SC_OK) rc = sc_cli_fail(&err);
        else sc_cli_print_warnings(set[s]);
    }
    sc_cli_args_free(&a);
    sc_diff *d = NULL;
    sc_error err;
    if (rc == SC_EXIT_OK && sc_diff_run(set[0], set[1], &d, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_traceset_free(set[0]);
    sc_traceset_free(set[1]);
    char line[1024];
    sc_cli_command_line("diff", argc, argv, line, sizeof line);
    html_job job = {.diff = d, .subtitle = line, .top = (size_t)top};
    if (rc == SC_EXIT_OK && html) rc = sc_cli_write_file(html, force, write_html, &job);
    if (rc == SC_EXIT_OK && sc_diff_write(d, stdout, json, (size_t)top, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_diff_free(d);
    return rc;
}
