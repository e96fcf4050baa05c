/*
 * cmd_predict.c - `stepcast predict [--json] [--chrome FILE] [--force]
 * [--iteration N] [--comm coupled|traced|model] [--scale CLASS=FACTOR]...
 * [--dp N] [--nodes N] [--gpus-per-node G] [--net-gbps X] [--nvlink-gbps X]
 * [--gpu NAME|--profile FILE] [--layers L] [--hidden H] [--ffn F] [--heads A]
 * [--seq S] [--micro-batch B] [--tp T] [--pp P [--schedule gpipe|1f1b|interleaved]
 * [--virtual-stages V] [--microbatches M]] [--model-backward] TRACE...`: the traced iteration edited into
 * another job's (sc_predict_run, src/pipeline/predict.c) and simulated; the
 * report is replay's with what was inferred and changed.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sc_cli_predict_opts(sc_cli_predict_args *a, sc_cli_opt *opts) {
    memset(a, 0, sizeof *a);
    const sc_cli_opt own[SC_CLI_PREDICT_NOPTS] = {
        {.name = "--dp", .kind = SC_CLI_UINT, .dest = &a->dp, .min = 1, .max = 1u << 24,
         .what = "a data-parallel degree from 1 to 16777216"},
        {.name = "--nodes", .kind = SC_CLI_UINT, .dest = &a->nodes, .min = 1, .max = 1u << 20,
         .what = "a node count from 1"},
        {.name = "--gpus-per-node", .kind = SC_CLI_UINT, .dest = &a->gpus_per_node, .min = 1, .max = 1024,
         .what = "a GPU count from 1 to 1024"},
        {.name = "--net-gbps", .kind = SC_CLI_RATE, .dest = &a->net_gbps, .what = "a bandwidth > 0"},
        {.name = "--nvlink-gbps", .kind = SC_CLI_RATE, .dest = &a->nvlink_gbps, .what = "a bandwidth > 0"},
        {.name = "--gpu", .kind = SC_CLI_STRING, .dest = &a->gpu, .what = "a GPU name (`stepcast comm --gpu` takes the same)"},
        {.name = "--profile", .kind = SC_CLI_STRING, .dest = &a->profile, .what = "a profile file"},
        {.name = "--layers", .kind = SC_CLI_UINT, .dest = &a->layers, .min = 1, .max = 1u << 16,
         .what = "a layer count from 1 to 65536"},
        {.name = "--hidden", .kind = SC_CLI_UINT, .dest = &a->hidden, .min = 1, .max = 1u << 24,
         .what = "a hidden size from 1"},
        {.name = "--ffn", .kind = SC_CLI_UINT, .dest = &a->ffn, .min = 1, .max = 1u << 26, .what = "an FFN size from 1"},
        {.name = "--heads", .kind = SC_CLI_UINT, .dest = &a->heads, .min = 1, .max = 1u << 16,
         .what = "a head count from 1"},
        {.name = "--seq", .kind = SC_CLI_UINT, .dest = &a->seq, .min = 1, .max = 1u << 24,
         .what = "a sequence length from 1"},
        {.name = "--micro-batch", .kind = SC_CLI_UINT, .dest = &a->micro_batch, .min = 1, .max = 1u << 16,
         .what = "a micro-batch size from 1"},
        {.name = "--tp", .kind = SC_CLI_UINT, .dest = &a->tp, .min = 1, .max = 1024,
         .what = "a tensor-parallel degree from 1 to 1024"},
        {.name = "--pp", .kind = SC_CLI_UINT, .dest = &a->pp, .min = 1, .max = 1024,
         .what = "a pipeline stage count from 1 to 1024"},
        {.name = "--schedule", .kind = SC_CLI_STRING, .dest = &a->schedule, .what = "gpipe, 1f1b or interleaved"},
        {.name = "--virtual-stages", .kind = SC_CLI_UINT, .dest = &a->virtual_stages, .min = 1, .max = 1024,
         .what = "a chunk count per stage from 1 to 1024"},
        {.name = "--microbatches", .kind = SC_CLI_UINT, .dest = &a->microbatches, .min = 1, .max = 1u << 16,
         .what = "a micro-batch count from 1 to 65536"},
        {.name = "--model-backward", .kind = SC_CLI_FLAG, .dest = &a->model_backward},
        {.name = "--recompute", .kind = SC_CLI_STRING, .dest = &a->recompute, .what = "none, selective or full"},
    };
    memcpy(opts, own, sizeof own);
}

int sc_cli_predict_options(const char *cmd, const sc_cli_predict_args *a, sc_predict_options *o) {
    o->net_gbps = a->net_gbps;
    o->nvlink_gbps = a->nvlink_gbps;
    o->dp = (uint32_t)a->dp;
    o->nodes = (uint32_t)a->nodes;
    o->gpus_per_node = (uint32_t)a->gpus_per_node;
    o->layers = (uint32_t)a->layers;
    o->hidden = (uint32_t)a->hidden;
    o->ffn = (uint32_t)a->ffn;
    o->heads = (uint32_t)a->heads;
    o->seq = (uint32_t)a->seq;
    o->micro_batch = (uint32_t)a->micro_batch;
    o->tp = (uint32_t)a->tp;
    o->pp = (uint32_t)a->pp;
    o->schedule = a->schedule;
    o->virtual_stages = (uint32_t)a->virtual_stages;
    o->microbatches = (uint32_t)a->microbatches;
    o->model_backward = a->model_backward;
    o->recompute = a->recompute;
    if (!a->pp && (a->schedule || a->virtual_stages || a->microbatches)) {
        sc_cli_usage(cmd, "--schedule, --virtual-stages and --microbatches go with --pp");
        return SC_EXIT_USAGE;
    }
    o->gpu = a->gpu;
    o->profile_path = a->profile;
    return SC_EXIT_OK;
}

bool sc_cli_predict_edits(const sc_cli_predict_args *a) {
    return a->dp || a->nodes || a->gpus_per_node || a->layers || a->hidden || a->ffn || a->heads || a->seq ||
           a->micro_batch || a->tp || a->pp || a->model_backward || a->recompute || a->net_gbps > 0 || a->nvlink_gbps > 0 || a->gpu || a->profile;
}

int sc_cmd_predict(int argc, char **argv) {
    static sc_cli_replay_args ra;
    static sc_cli_predict_args pa;
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    sc_cli_opt opts[SC_CLI_REPLAY_NOPTS + SC_CLI_PREDICT_NOPTS];
    sc_cli_replay_opts(&ra, opts);
    sc_cli_predict_opts(&pa, opts + SC_CLI_REPLAY_NOPTS);
    sc_cli_args a;
    int rc = sc_cli_parse("predict", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    if ((rc = sc_cli_predict_options("predict", &pa, &o)) != SC_EXIT_OK ||
        (rc = sc_cli_replay_options("predict", &ra, &o.replay)) != SC_EXIT_OK) {
        sc_cli_args_free(&a);
        return rc;
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
