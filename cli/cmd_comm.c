/*
 * cmd_comm.c - `stepcast comm [--json] [--gpu NAME] [--profile FILE]
 * [--ranks N] [--gpus-per-node G] [--op OP] [--sizes LIST] [--net-gbps X]
 * [--nvlink-gbps X] [--iteration N] [TRACE...]`: the communication model
 * of a GPU's nodes (sc_comm_run). Without traces, an nccl-tests-like table
 * of one collective over sizes; with traces, their collectives by kind and
 * size, measured against the model fitted to them.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64

/* "1K,64K,1G" into sizes; false (after saying why) on a bad list. */
static bool parse_sizes(const char *list, uint64_t *sizes, size_t *n) {
    *n = 0;
    char item[64];
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || len >= sizeof item || *n == MAX_SIZES) {
            sc_cli_usage("comm", "--sizes wants up to %d sizes such as 1K,64K,1G, got '%s'", MAX_SIZES, list);
            return false;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (sc_parse_bytes(item, &sizes[*n]) != SC_OK) {
            sc_cli_usage("comm", "--sizes wants sizes such as 1K,64K,1G, got '%s'", item);
            return false;
        }
        (*n)++;
        if (!end) return true;
        p = end + 1;
    }
}

/* Options that do not go together; SC_EXIT_OK or the usage exit code. */
static int conflicts(bool traces, const char *op, uint64_t ranks, const char *sizes, uint64_t iteration,
                     const char *gpu, const char *profile) {
    if (traces && (op || ranks || sizes))
        return sc_cli_usage("comm", "--op, --ranks and --sizes make a table: give them without traces");
    if (!traces && iteration != UINT64_MAX)
        return sc_cli_usage("comm", "--iteration picks the traces' iteration: give traces");
    if (gpu && profile) return sc_cli_usage("comm", "--gpu and --profile both name the GPU: give one");
    return SC_EXIT_OK;
}

/* Loads the traces (if any), runs the model and prints it. Frees a. */
static int run(sc_cli_args *a, const sc_comm_options *o, int json) {
    sc_traceset *set = NULL;
    int rc = SC_EXIT_OK;
    if (a->npaths) {
        if ((rc = sc_cli_load("comm", a, &set)) != SC_EXIT_OK) return rc;
    } else {
        sc_cli_args_free(a);
    }
    sc_error err;
    sc_comm *c;
    sc_status st = sc_comm_run(set, o, &c, &err);
    sc_traceset_free(set);
    if (st != SC_OK) return sc_cli_fail(&err);
    if (sc_comm_write(c, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_comm_free(c);
    return rc;
}

int sc_cmd_comm(int argc, char **argv) {
    int json = 0;
    const char *gpu = NULL, *profile = NULL, *op = NULL, *sizes_text = NULL;
    uint64_t ranks = 0, per_node = 0, iteration = UINT64_MAX;
    sc_comm_options o = SC_COMM_OPTIONS_INIT;
    const sc_cli_opt opts[] = {
        {.name = "--json", .kind = SC_CLI_FLAG, .dest = &json},
        {.name = "--gpu", .kind = SC_CLI_STRING, .dest = &gpu, .what = "a GPU name such as h100"},
        {.name = "--profile", .kind = SC_CLI_STRING, .dest = &profile, .what = "a JSON profile file"},
        {.name = "--ranks", .kind = SC_CLI_UINT, .dest = &ranks, .min = 1, .max = 1u << 24,
         .what = "a rank count >= 1"},
        {.name = "--gpus-per-node", .kind = SC_CLI_UINT, .dest = &per_node, .min = 1, .max = 1u << 16,
         .what = "a GPU count >= 1"},
        {.name = "--op", .kind = SC_CLI_STRING, .dest = &op, .what = "a collective such as all_reduce"},
        {.name = "--sizes", .kind = SC_CLI_STRING, .dest = &sizes_text, .what = "sizes such as 1K,64K,1G"},
        {.name = "--net-gbps", .kind = SC_CLI_RATE, .dest = &o.net_gbps,
         .what = "gigabits/s of network per GPU (> 0)"},
        {.name = "--nvlink-gbps", .kind = SC_CLI_RATE, .dest = &o.nvlink_gbps,
         .what = "gigabytes/s of intra-node link per GPU each way (> 0)"},
        {.name = "--iteration", .kind = SC_CLI_UINT, .dest = &iteration, .max = INT64_MAX,
         .what = "a step number >= 0 (N of ProfilerStep#N)"},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("comm", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    uint64_t sizes[MAX_SIZES];
    if ((rc = conflicts(a.npaths > 0, op, ranks, sizes_text, iteration, gpu, profile)) != SC_EXIT_OK ||
        (sizes_text && !parse_sizes(sizes_text, sizes, &o.nsizes))) {
        sc_cli_args_free(&a);
        return SC_EXIT_USAGE;
    }
    o.gpu = gpu;
    o.profile_path = profile;
    o.op = op;
    o.ranks = (uint32_t)ranks;
    o.gpus_per_node = (uint32_t)per_node;
    o.sizes = sizes_text ? sizes : NULL;
    o.graph.iteration = iteration == UINT64_MAX ? -1 : (int64_t)iteration;
    return run(&a, &o, json);
}
