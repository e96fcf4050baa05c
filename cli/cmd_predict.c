/*
 * cmd_predict.c - `stepcast predict [--json] [--chrome FILE] [--force]
 * [--iteration N] [--comm coupled|traced|model] [--scale CLASS=FACTOR]...
 * [--dp N] [--nodes N] [--gpus-per-node G] [--net-gbps X] [--nvlink-gbps X]
 * [--gpu NAME|--profile FILE] [--hidden H] [--ffn F] [--heads A] [--seq S]
 * [--micro-batch B] TRACE...`: the traced iteration edited into another
 * job's (sc_predict_run, src/pipeline/predict.c) and simulated; the report
 * is replay's with what was inferred and changed.
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
    uint64_t dp = 0, nodes = 0, gpn = 0, hidden = 0, ffn = 0, heads = 0, seq = 0, mbs = 0;
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
        {.name = "--hidden", .kind = SC_CLI_UINT, .dest = &hidden, .min = 1, .max = 1u << 24,
         .what = "a hidden size from 1"},
        {.name = "--ffn", .kind = SC_CLI_UINT, .dest = &ffn, .min = 1, .max = 1u << 26, .what = "an FFN size from 1"},
        {.name = "--heads", .kind = SC_CLI_UINT, .dest = &heads, .min = 1, .max = 1u << 16,
         .what = "a head count from 1"},
        {.name = "--seq", .kind = SC_CLI_UINT, .dest = &seq, .min = 1, .max = 1u << 24,
         .what = "a sequence length from 1"},
        {.name = "--micro-batch", .kind = SC_CLI_UINT, .dest = &mbs, .min = 1, .max = 1u << 16,
         .what = "a micro-batch size from 1"},
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
    o.hidden = (uint32_t)hidden;
    o.ffn = (uint32_t)ffn;
    o.heads = (uint32_t)heads;
    o.seq = (uint32_t)seq;
    o.micro_batch = (uint32_t)mbs;
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
