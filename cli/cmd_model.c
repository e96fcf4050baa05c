/*
 * cmd_model.c - `stepcast model [--json] [--chrome FILE [--force]]
 * [--config FILE] [--preset NAME] [FLAGS] [--sweep] [--calibrate TRACE...]`:
 * a training step predicted from its configuration alone (sc_model_run).
 * The flags are the configuration's fields; the order of precedence is
 * preset, then config file, then flags. With --sweep, a flag may hold a
 * comma list and every combination is run. --calibrate takes the kernel,
 * host and communication parameters from traces (its first path, and any
 * path after the options).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fields[] = {
    "layers", "hidden", "ffn", "heads", "kv-heads", "vocab", "seq", "dtype", "experts", "topk", "tp", "sp", "pp",
    "vp", "dp", "cp", "ep", "fsdp", "mbs", "gbs", "recompute", "gpu", "nodes", "gpus-per-node", "net-gbps",
    "gated", "tied", "rope", "attention", "distributed-optimizer", "overlap-grad-reduce", "overlap-param-gather",
    "tp-comm-overlap", "host-us", "pp-first-layers", "pp-last-layers", "pp-embedding", "head-dim", "moe-ffn",
    "shared-ffn", "etp", "dense-layers", "window", "window-skip", "lora-rank", "multi-latent-attention", "q-lora-rank",
    "kv-lora-rank", "qk-head-dim", "qk-pos-emb-head-dim", "v-head-dim", "mtp-layers", "recompute-modules",
    "hybrid-pattern", "mamba-heads", "mamba-head-dim", "mamba-state", "mamba-groups", "mamba-chunk",
    "grad-reduce-in-fp32", "cross-entropy-fusion", "moe-dispatcher", "moe-router-num-groups", "moe-router-group-topk"};
#define NFIELDS (sizeof fields / sizeof *fields)

static sc_status model_chrome(const void *ctx, FILE *f, sc_error *err) { return sc_replay_write_chrome(ctx, f, err); }

int sc_cmd_model(int argc, char **argv) {
    int json = 0, force = 0, sweep = 0;
    const char *chrome = NULL, *config = NULL, *preset = NULL, *calibrate = NULL;
    const char *values[NFIELDS] = {0};
    char names[NFIELDS][40];
    sc_cli_opt opts[4 + 4 + NFIELDS];
    size_t n = 0;
    opts[n++] = (sc_cli_opt){.name = "--json", .kind = SC_CLI_FLAG, .dest = &json};
    opts[n++] = (sc_cli_opt){.name = "--force", .kind = SC_CLI_FLAG, .dest = &force};
    opts[n++] = (sc_cli_opt){.name = "--sweep", .kind = SC_CLI_FLAG, .dest = &sweep};
    opts[n++] = (sc_cli_opt){.name = "--chrome", .kind = SC_CLI_STRING, .dest = &chrome, .what = "a file name"};
    opts[n++] = (sc_cli_opt){.name = "--config", .kind = SC_CLI_STRING, .dest = &config, .what = "a JSON file"};
    opts[n++] = (sc_cli_opt){.name = "--preset", .kind = SC_CLI_STRING, .dest = &preset, .what = "a preset name"};
    opts[n++] = (sc_cli_opt){.name = "--calibrate", .kind = SC_CLI_STRING, .dest = &calibrate, .what = "a trace"};
    for (size_t i = 0; i < NFIELDS; i++) {
        snprintf(names[i], sizeof names[i], "--%s", fields[i]);
        opts[n++] = (sc_cli_opt){.name = names[i], .kind = SC_CLI_STRING, .dest = &values[i], .what = "a value"};
    }
    sc_cli_args a;
    int rc = sc_cli_parse("model", argc, argv, opts, n, &a);
    if (rc != SC_EXIT_OK) return rc;
    if (a.npaths && !calibrate) {
        rc = sc_cli_usage("model", "takes no paths but --calibrate's traces (got '%s')", a.paths[0]);
        sc_cli_args_free(&a);
        return rc;
    }
    sc_error err;
    sc_model_config *c;
    if (sc_model_config_new(&c, &err) != SC_OK) {
        sc_cli_args_free(&a);
        return sc_cli_fail(&err);
    }
    sc_status st = SC_OK;
    if (calibrate) {
        const char **traces = malloc((a.npaths + 1) * sizeof *traces);
        if (!traces) {
            sc_cli_args_free(&a);
            sc_model_config_free(c);
            return sc_cli_usage("model", "out of memory");
        }
        traces[0] = calibrate;
        for (size_t i = 0; i < a.npaths; i++) traces[i + 1] = a.paths[i];
        st = sc_model_config_calibrate(c, traces, a.npaths + 1, &err);
        free(traces);
    }
    sc_cli_args_free(&a);
    if (st == SC_OK && preset) st = sc_model_config_preset(c, preset, &err);
    if (st == SC_OK && config) st = sc_model_config_load(c, config, &err);
    const char *skeys[NFIELDS], *slists[NFIELDS];
    size_t ns = 0;
    for (size_t i = 0; i < NFIELDS && st == SC_OK; i++) {
        if (!values[i]) continue;
        /* --recompute-modules is itself a comma list (one setting, not swept) */
        if (sweep && strchr(values[i], ',') && strcmp(fields[i], "recompute-modules") != 0) {
            skeys[ns] = fields[i];
            slists[ns++] = values[i];
            continue;
        }
        st = sc_model_config_set(c, fields[i], values[i], &err);
    }
    if (st != SC_OK) {
        sc_model_config_free(c);
        return sc_cli_fail(&err);
    }
    if (sweep) {
        sc_model_sweep *s;
        st = sc_model_sweep_run(c, skeys, slists, ns, &s, &err);
        sc_model_config_free(c);
        if (st != SC_OK) return sc_cli_fail(&err);
        st = sc_model_sweep_write(s, stdout, json, &err);
        sc_model_sweep_free(s);
        return st == SC_OK ? SC_EXIT_OK : sc_cli_fail(&err);
    }
    sc_model *m;
    st = sc_model_run(c, &m, &err);
    sc_model_config_free(c);
    if (st != SC_OK) return sc_cli_fail(&err);
    rc = SC_EXIT_OK;
    if (chrome) rc = sc_cli_write_file(chrome, force, model_chrome, sc_model_replay(m));
    if (rc == SC_EXIT_OK && sc_model_write(m, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    sc_model_free(m);
    return rc;
}
