/*
 * cmd_predict.c - `stepcast predict [--json] [--chrome FILE] [--force]
 * [--iteration N] [--comm coupled|traced|model] [--scale CLASS=FACTOR]...
 * [--dp N] [--nodes N] [--gpus-per-node G] [--net-gbps X] [--nvlink-gbps X]
 * [--gpu NAME|--profile FILE] [--layers L] [--tp T] [--pp P [--schedule gpipe|1f1b|interleaved]
 * [--virtual-stages V] [--microbatches M]] TRACE...`: the traced iteration edited into
 * another job's (sc_predict_run, src/pipeline/predict.c) and simulated; the
 * report is replay's with what was inferred and changed.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bandwidth option: a positive decimal number. */
static bool parse_rate(const char *name, const char *text, double *out) {
    if (!text) return true;
    char *end;
    double v = strtod(text, &end);
    if (!*text || *end || !(v > 0 && v < 1e9)) {
        sc_cli_usage("predict", "%s wants a bandwidth > 0, got '%s'", name, text);
        return false;
    }
    *out = v;
    return true;
}

int sc_cmd_predict(int argc, char **argv) {
    static sc_cli_replay_args ra;
    const char *net = NULL, *nvlink = NULL;
    uint64_t dp = 0, nodes = 0, gpn = 0, layers = 0, tp = 0, pp = 0, vs = 0, mb = 0;
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    const sc_cli_opt own[] = {
        {.name = "--dp", .kind = SC_CLI_UINT, .dest = &dp, .min = 1, .max = 1u << 24,
         .what = "a data-parallel degree from 1 to 16777216"},
        {.name = "--nodes", .kind = SC_CLI_UINT, .dest = &nodes, .min = 1, .max = 1u << 20,
         .what = "a node count from 1"},
        {.name = "--gpus-per-node", .kind = SC_CLI_UINT, .dest = &gpn, .min = 1, .max = 1024,
         .what = "a GPU count from 1 to 1024"},
        {.name = "--net-gbps", .kind = SC_CLI_STRING, .dest = &net, .what = "a bandwidth in Gb/s per GPU"},
        {.name = "--nvlink-gbps", .kind = SC_CLI_STRING, .dest = &nvlink,
         .what = "a bandwidth in GB/s per GPU and direction"},
        {.name = "--gpu", .kind = SC_CLI_STRING, .dest = &o.gpu, .what = "a GPU name (`stepcast comm --gpu` takes the same)"},
        {.name = "--profile", .kind = SC_CLI_STRING, .dest = &o.profile_path, .what = "a profile file"},
        {.name = "--layers", .kind = SC_CLI_UINT, .dest = &layers, .min = 1, .max = 1u << 16,
         .what = "a layer count from 1 to 65536"},
        {.name = "--tp", .kind = SC_CLI_UINT, .dest = &tp, .min = 1, .max = 1024,
         .what = "a tensor-parallel degree from 1 to 1024"},
        {.name = "--pp", .kind = SC_CLI_UINT, .dest = &pp, .min = 1, .max = 1024,
         .what = "a pipeline stage count from 1 to 1024"},
        {.name = "--schedule", .kind = SC_CLI_STRING, .dest = &o.schedule, .what = "gpipe, 1f1b or interleaved"},
        {.name = "--virtual-stages", .kind = SC_CLI_UINT, .dest = &vs, .min = 1, .max = 1024,
         .what = "a chunk count per stage from 1 to 1024"},
        {.name = "--microbatches", .kind = SC_CLI_UINT, .dest = &mb, .min = 1, .max = 1u << 16,
         .what = "a micro-batch count from 1 to 65536"},
    };
    sc_cli_opt opts[SC_CLI_REPLAY_NOPTS + SC_CLI_NOPTS(own)];
    sc_cli_replay_opts(&ra, opts);
    memcpy(opts + SC_CLI_REPLAY_NOPTS, own, sizeof own);
    sc_cli_args a;
    int rc = sc_cli_parse("predict", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    if (!parse_rate("--net-gbps", net, &o.net_gbps) || !parse_rate("--nvlink-gbps", nvlink, &o.nvlink_gbps)) {
        sc_cli_args_free(&a);
        return SC_EXIT_USAGE;
    }
    if ((rc = sc_cli_replay_options("predict", &ra, &o.replay)) != SC_EXIT_OK) {
        sc_cli_args_free(&a);
        return rc;
    }
    o.dp = (uint32_t)dp;
    o.nodes = (uint32_t)nodes;
    o.gpus_per_node = (uint32_t)gpn;
    o.layers = (uint32_t)layers;
    o.tp = (uint32_t)tp;
    o.pp = (uint32_t)pp;
    o.virtual_stages = (uint32_t)vs;
    o.microbatches = (uint32_t)mb;
    if (!pp && (o.schedule || vs || mb)) {
        sc_cli_usage("predict", "--schedule, --virtual-stages and --microbatches go with --pp");
        sc_cli_args_free(&a);
        return SC_EXIT_USAGE;
    }
    sc_traceset *set;
    if ((rc = sc_cli_load("predict", &a, &set)) != SC_EXIT_OK) return rc;
    sc_error err;
    sc_replay *r;
    sc_status st = sc_predict_run(set, &o, &r, &err);
    sc_traceset_free(set);
    if (st != SC_OK) return sc_cli_fail(&err);
    rc = sc_cli_replay_output(r, &ra);
    sc_replay_free(r);
    return rc;
}
