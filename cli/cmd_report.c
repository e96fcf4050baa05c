/*
 * cmd_report.c - `stepcast report -o FILE.html [replay's options]
 * [predict's edits | --predict] TRACE...`: the replay of the traces as one
 * self-contained HTML page (sc_replay_write_html, src/report/html_report.c).
 * With any of predict's edits (--dp, --nodes, --gpus-per-node, --net-gbps,
 * --nvlink-gbps, --gpu, --profile), or --predict, it also predicts the new
 * configuration (sc_predict_run) and the page shows the traced and the new
 * side by side; the traces are then kept in memory until both have run.
 * --chrome FILE also writes the timeline (the prediction's, with one).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct html_job {
    const sc_replay *replay;
    sc_html_options opts;
} html_job;

static sc_status write_html(const void *ctx, FILE *f, sc_error *err) {
    const html_job *j = ctx;
    return sc_replay_write_html(j->replay, &j->opts, f, err);
}

static sc_status write_chrome(const void *replay, FILE *f, sc_error *err) {
    return sc_replay_write_chrome(replay, f, err);
}

/* "stepcast report ARGS..." for the page's subtitle (cut at its size). */
void sc_cli_command_line(const char *cmd, int argc, char **argv, char *buf, size_t size) {
    size_t len = (size_t)snprintf(buf, size, "stepcast %s", cmd);
    for (int i = 1; i < argc && len < size; i++) len += (size_t)snprintf(buf + len, size - len, " %s", argv[i]);
}

/* The replay, and with edits the prediction: SC_EXIT_OK or the exit code. */
static int run(sc_traceset *set, sc_predict_options *o, bool predict, sc_replay **replay, sc_replay **pred) {
    sc_error err;
    *replay = *pred = NULL;
    o->replay.graph.release_traces = !predict; /* predict builds its graph from them again */
    if (sc_replay_run(set, &o->replay, replay, &err) != SC_OK) return sc_cli_fail(&err);
    o->replay.graph.release_traces = 1;
    if (predict && sc_predict_run(set, o, pred, &err) != SC_OK) return sc_cli_fail(&err);
    return SC_EXIT_OK;
}

int sc_cmd_report(int argc, char **argv) {
    static sc_cli_replay_args ra;
    static sc_cli_predict_args pa;
    const char *output = NULL;
    int predict_flag = 0;
    uint64_t rows = 0;
    sc_cli_opt opts[SC_CLI_REPLAY_NOPTS + SC_CLI_PREDICT_NOPTS + 3];
    sc_cli_replay_opts(&ra, opts);
    sc_cli_predict_opts(&pa, opts + SC_CLI_REPLAY_NOPTS);
    sc_cli_opt *own = opts + SC_CLI_REPLAY_NOPTS + SC_CLI_PREDICT_NOPTS;
    own[0] = (sc_cli_opt){.name = "--output", .alias = "-o", .kind = SC_CLI_STRING, .dest = &output,
                          .what = "an HTML file name"};
    own[1] = (sc_cli_opt){.name = "--predict", .kind = SC_CLI_FLAG, .dest = &predict_flag};
    own[2] = (sc_cli_opt){.name = "--rank-rows", .kind = SC_CLI_UINT, .dest = &rows, .min = 1, .max = 100000,
                          .what = "a number of rows from 1 (ranks drawn one a row up to it)"};
    sc_cli_args a;
    int rc = sc_cli_parse("report", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    if (!output) rc = sc_cli_usage("report", "-o FILE.html is required");
    else if (ra.json) rc = sc_cli_usage("report", "--json: the report is HTML (replay --json writes JSON)");
    else if ((rc = sc_cli_predict_options("report", &pa, &o)) == SC_EXIT_OK)
        rc = sc_cli_replay_options("report", &ra, &o.replay);
    if (rc != SC_EXIT_OK) {
        sc_cli_args_free(&a);
        return rc;
    }
    bool predict = predict_flag || sc_cli_predict_edits(&pa);
    sc_traceset *set;
    if ((rc = sc_cli_load("report", &a, &set)) != SC_EXIT_OK) return rc;
    sc_replay *replay, *pred;
    rc = run(set, &o, predict, &replay, &pred);
    char line[1024];
    sc_cli_command_line("report", argc, argv, line, sizeof line);
    html_job job = {.replay = replay,
                    .opts = {.subtitle = line, .set = set, .predicted = pred, .max_rank_rows = (uint32_t)rows}};
    if (rc == SC_EXIT_OK && ra.chrome) rc = sc_cli_write_file(ra.chrome, ra.force, write_chrome, pred ? pred : replay);
    if (rc == SC_EXIT_OK) rc = sc_cli_write_file(output, ra.force, write_html, &job);
    if (rc == SC_EXIT_OK) printf("wrote %s\n", output);
    sc_replay_free(replay);
    sc_replay_free(pred);
    sc_traceset_free(set);
    return rc;
}
