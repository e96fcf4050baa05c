/*
 * main.c - the stepcast command-line tool: dispatch to subcommands, help,
 * and the error/exit-code conventions every subcommand follows.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const sc_cli_command commands[] = {
    {"info", "summarise traces: ranks, events, kernels, collectives, iterations",
     "stepcast info [--json] [-j N] TRACE|DIR...", sc_cmd_info},
    {"synth", "write synthetic Kineto traces for N ranks, modelled on a real one",
     "stepcast synth --ranks N [--iterations I] [--layers L] [--seed S] [--gzip [--gzip-level L]] [--template FILE] [--force] -o DIR",
     sc_cmd_synth},
    {"graph", "build the execution graph: tasks, edges by family, matched collectives",
     "stepcast graph [--json] [--dot FILE [--force]] [--iteration N] [--hide-cuda-sync] TRACE|DIR...", sc_cmd_graph},
    {"replay", "simulate the traced iteration: measured vs simulated step, breakdown, critical path",
     "stepcast replay [--json] [--chrome FILE [--force]] [--iteration N | --all-iterations] "
     "[--comm coupled|traced|model] [--scale CLASS=FACTOR]... [--sensitivity|--no-sensitivity] "
     "[--breakdown stepcast|hta] [--timings] TRACE|DIR...",
     sc_cmd_replay},
    {"predict", "edit the traced iteration into another job (data-parallel degree, nodes, links, GPU, layers, model shape) and simulate it",
     "stepcast predict [--json] [--chrome FILE [--force]] [--iteration N] [--comm coupled|traced|model] "
     "[--scale CLASS=FACTOR]... [--sensitivity|--no-sensitivity] [--breakdown stepcast|hta] [--dp N] [--nodes N] [--gpus-per-node G] [--net-gbps X] [--nvlink-gbps X] "
     "[--gpu NAME|--profile FILE] [--layers L] [--hidden H] [--ffn F] [--heads A] [--seq S] [--micro-batch B] [--tp T] "
     "[--pp P [--schedule gpipe|1f1b|interleaved] [--virtual-stages V] [--microbatches M]] [--model-backward] [--recompute none|selective|full] TRACE|DIR...",
     sc_cmd_predict},
    {"model", "predict a training step from its configuration alone (model, parallelism, GPU): step, MFU, memory",
     "stepcast model [--json] [--chrome FILE [--force]] [--config FILE] [--preset NAME] [--sweep] [--layers N] [--hidden N] "
     "[--ffn N] [--heads N] [--kv-heads N] [--vocab N] [--seq N] [--dtype bf16|fp16|fp8] [--experts N] [--topk N] "
     "[--moe-ffn N] [--shared-ffn N] [--etp N] [--dense-layers N] [--head-dim N] [--window N] [--window-skip N] [--lora-rank N] "
     "[--hybrid-pattern STR] [--mamba-heads N] [--mamba-head-dim N] [--mamba-state N] [--mamba-groups N] [--mamba-chunk N] "
     "[--tp N] [--sp true|false] [--pp N] [--vp N] [--dp N] [--cp N] [--ep N] [--fsdp true|false] [--mbs N] [--gbs N] "
     "[--recompute none|selective|full] [--gpu NAME] [--nodes N] [--gpus-per-node N] [--net-gbps X] [--gated B] "
     "[--tied B] [--rope B] [--attention flash|unfused] [--distributed-optimizer B] [--overlap-grad-reduce B] "
     "[--overlap-param-gather B] [--tp-comm-overlap B] [--grad-reduce-in-fp32 B] [--cross-entropy-fusion none|native|te] [--moe-dispatcher alltoall|deepep|hybridep] [--moe-router-num-groups N] [--moe-router-group-topk N] [--host-us X] [--pp-first-layers N] [--pp-last-layers N] "
     "[--pp-embedding B] [--multi-latent-attention B] [--q-lora-rank N] [--kv-lora-rank N] [--qk-head-dim N] "
     "[--qk-pos-emb-head-dim N] [--v-head-dim N] [--mtp-layers N] [--recompute-modules LIST] [--calibrate TRACE...]",
     sc_cmd_model},
    {"report", "write the replay (or a prediction beside it) as one self-contained HTML page of charts",
     "stepcast report -o FILE.html [--force] [--rank-rows N] [--chrome FILE] [--iteration N] "
     "[--comm coupled|traced|model] [--scale CLASS=FACTOR]... [--sensitivity|--no-sensitivity] "
     "[--breakdown stepcast|hta] [--predict] [--dp N] [--nodes N] [--gpus-per-node G] [--net-gbps X] "
     "[--nvlink-gbps X] [--gpu NAME|--profile FILE] [--layers L] [--hidden H] [--ffn F] [--heads A] [--seq S] "
     "[--micro-batch B] [--tp T] [--pp P [--schedule gpipe|1f1b|interleaved] [--virtual-stages V] "
     "[--microbatches M]] [--model-backward] [--recompute none|selective|full] TRACE|DIR...",
     sc_cmd_report},
    {"comm", "model collectives on a GPU's nodes (nccl-tests-like table), or a trace's against the model",
     "stepcast comm [--json] [--gpu NAME|--profile FILE] [--gpus-per-node G] [--net-gbps X] [--nvlink-gbps X] "
     "([--op OP] [--ranks N] [--sizes LIST] | [--iteration N] TRACE|DIR...)",
     sc_cmd_comm},
    {"structure", "recover the model: phases, repeated layers, collective roles, dimensions",
     "stepcast structure [--json] [--iteration N] TRACE|DIR...", sc_cmd_structure},
    {"diff", "compare two traces or trace sets per step, kernel class, collective, operator and kernel",
     "stepcast diff [--json] [--top N] [--html FILE [--force]] A B   (A, B: a trace file or a folder of them)", sc_cmd_diff},
    {"kernels", "the kernel cost model against a trace's kernels: per class count, time and median error",
     "stepcast kernels [--json] [--gpu NAME|--profile FILE] [--iteration N] TRACE|DIR...", sc_cmd_kernels},
    {"export", "write Chakra execution traces (PREFIX.<rank>.et) for ASTRA-sim & co.",
     "stepcast export --chakra PREFIX [--no-cpu|--gpu-only] [--iteration N] [--force] TRACE|DIR...",
     sc_cmd_export},
    {"et", "read a PyTorch Execution Trace; link it with the rank's Kineto trace",
     "stepcast et [--json] [--ops N] ET_FILE|ET_DIR [KINETO_TRACE|DIR]", sc_cmd_et},
    {"benchgen", "turn a traced iteration into a runnable PyTorch benchmark (bench.py + op list)",
     "stepcast benchgen [-o DIR] [--device cuda|cpu] [--shrink K] [--iterations N] [--iteration N] [--json] [--force] ET... [KINETO...]",
     sc_cmd_benchgen},
    {"help", "show this help, or a command's usage", "stepcast help [COMMAND]", cmd_help},
    {"version", "print the version", "stepcast version", cmd_version},
};

const sc_cli_command *sc_cli_find(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

int sc_cli_exit_code(sc_status status) {
    switch (status) {
    case SC_OK: return SC_EXIT_OK;
    case SC_E_USAGE: return SC_EXIT_USAGE;
    case SC_E_NOMEM:
    case SC_E_INTERNAL: return SC_EXIT_INTERNAL;
    default: return SC_EXIT_INPUT;
    }
}

int sc_cli_fail(const sc_error *err) {
    char buf[1024];
    sc_cli_progress_clear();
    fprintf(stderr, "stepcast: %s\n", sc_error_format(err, buf, sizeof buf));
    return sc_cli_exit_code(err->status);
}

int sc_cli_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sc_cli_progress_clear();
    fprintf(stderr, "stepcast %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    const sc_cli_command *c = sc_cli_find(cmd);
    if (c) fprintf(stderr, "usage: %s\n", c->usage);
    return SC_EXIT_USAGE;
}

sc_cli_ui_options sc_cli_ui;

/* Warnings on stderr: one line per kind with its count, or with --verbose
 * every one. */
static void print_grouped(const void *owner, size_t n, const char *(*line)(const void *, size_t),
                          size_t ngroups, sc_status (*group)(const void *, size_t, sc_warning_group *, sc_error *)) {
    sc_cli_progress_clear();
    if (sc_cli_ui.verbose) {
        for (size_t i = 0; i < n; i++) fprintf(stderr, "stepcast: warning: %s\n", line(owner, i));
        return;
    }
    for (size_t g = 0; g < ngroups; g++) {
        sc_warning_group wg;
        if (group(owner, g, &wg, NULL) != SC_OK) continue;
        if (wg.count == 1) fprintf(stderr, "stepcast: warning: %s\n", wg.example);
        else
            fprintf(stderr, "stepcast: warning: %s (and %zu more like it; --verbose lists them)\n", wg.example,
                    wg.count - 1);
    }
}

static const char *set_line(const void *o, size_t i) { return sc_traceset_warning(o, i); }
static sc_status set_group(const void *o, size_t i, sc_warning_group *g, sc_error *e) {
    return sc_traceset_warning_group_at(o, i, g, e);
}
static const char *info_line(const void *o, size_t i) { return sc_info_warning(o, i); }
static sc_status info_group(const void *o, size_t i, sc_warning_group *g, sc_error *e) {
    return sc_info_warning_group_at(o, i, g, e);
}

void sc_cli_print_warnings(const sc_traceset *set) {
    print_grouped(set, sc_traceset_warning_count(set), set_line, sc_traceset_warning_group_count(set), set_group);
}

void sc_cli_print_info_warnings(const sc_info *info) {
    print_grouped(info, sc_info_warning_count(info), info_line, sc_info_warning_group_count(info), info_group);
}

int sc_cli_load(const char *cmd, sc_cli_args *a, sc_traceset **set) {
    *set = NULL;
    if (a->npaths == 0) {
        sc_cli_args_free(a);
        return sc_cli_usage(cmd, "no trace files given");
    }
    sc_error err;
    sc_status st = sc_traceset_load(a->paths, a->npaths, &a->load, set, &err);
    sc_cli_args_free(a);
    if (st != SC_OK) return sc_cli_fail(&err);
    sc_cli_print_warnings(*set);
    return SC_EXIT_OK;
}

static void print_help(FILE *out) {
    fprintf(out,
            "stepcast %s - replay and predict the step time of distributed training from\n"
            "PyTorch profiler traces.\n\nusage: stepcast COMMAND [OPTIONS] TRACE|DIR...\n\ncommands:\n",
            sc_version());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\ninputs: Kineto (PyTorch profiler) Chrome-trace JSON, .json or .json.gz (detected\n"
            "by content), one file per rank; a directory means every trace file under it.\n"
            "Chakra execution traces (<prefix>.<rank>.et[.gz]) are accepted wherever traces are.\n"
            "\nevery command: --max-memory SIZE (e.g. 512M, 8G) caps the memory of the job:\n"
            "the traces (split evenly across the files), the graph and the simulation;\n"
            "default $STEPCAST_MAX_MEMORY, else 80%% of RAM. A job over it fails with exit 1\n"
            "instead of swapping. -j N (--jobs N) caps the threads that read and build\n"
            "(0 = every core, the default; $STEPCAST_THREADS); a large plain file is read\n"
            "by several threads. Outputs go to a temporary file renamed into place; an\n"
            "existing output is replaced only with --force. On a terminal a run longer\n"
            "than a second shows a progress line on stderr: --quiet (-q) drops it,\n"
            "--progress draws it anyway. Warnings of one kind print once with a count:\n"
            "--verbose (-v) prints every one.\n"
            "\nexit codes: 0 ok, 1 bad or unreadable input, 2 bad command line (an output in\n"
            "            a missing folder, or one that exists without --force, too),\n"
            "            3 internal error (out of memory, an output that fails to write, bug)\n");
}

static int cmd_help(int argc, char **argv) {
    if (argc > 1) {
        const sc_cli_command *c = sc_cli_find(argv[1]);
        if (!c) return sc_cli_usage("help", "unknown command '%s'", argv[1]);
        printf("%s\n\n%s\n", c->usage, c->summary);
        return SC_EXIT_OK;
    }
    print_help(stdout);
    return SC_EXIT_OK;
}

static int cmd_version(int argc, char **argv) {
    if (argc > 1) return sc_cli_usage("version", "unexpected argument '%s'", argv[1]);
    printf("stepcast %s\n", sc_version());
    return SC_EXIT_OK;
}

int sc_cli_write_file(const char *path, int force, sc_status (*write)(const void *ctx, FILE *f, sc_error *err),
                      const void *ctx) {
    sc_error err;
    sc_output *out;
    if (sc_output_open(path, force ? SC_OUTPUT_FORCE : 0, &out, &err) != SC_OK) return sc_cli_fail(&err);
    if (write(ctx, sc_output_file(out), &err) != SC_OK) {
        sc_output_abort(out);
        return sc_cli_fail(&err);
    }
    if (sc_output_commit(out, &err) != SC_OK) return sc_cli_fail(&err);
    return SC_EXIT_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_help(stderr);
        return SC_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) name = "help";
    if (strcmp(name, "--version") == 0) name = "version";
    const sc_cli_command *c = sc_cli_find(name);
    if (!c) {
        fprintf(stderr, "stepcast: unknown command '%s' (try 'stepcast help')\n", argv[1]);
        return SC_EXIT_USAGE;
    }
    int rc = c->run(argc - 1, argv + 1);
    sc_cli_progress_clear();
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "stepcast: cannot write to standard output\n");
        return SC_EXIT_INTERNAL;
    }
    return rc;
}
