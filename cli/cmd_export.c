/*
 * cmd_export.c - `stepcast export --chakra PREFIX [--no-cpu|--gpu-only]
 * [--iteration N] [--force] TRACE|DIR...`: the execution graph of the traces
 * (Kineto or Chakra) written as Chakra execution traces, PREFIX.<rank>.et,
 * for ASTRA-sim and other Chakra readers (src/report/chakra_export.c).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_i64(const char *s, int64_t *out) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end) return false;
    *out = v;
    return true;
}

int sc_cmd_export(int argc, char **argv) {
    const char *prefix = NULL;
    unsigned flags = 0;
    int64_t iteration = -1;
    const char *paths[4096];
    size_t n = 0;
    bool opts_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || !a[1]) {
            if (n == sizeof paths / sizeof paths[0]) return sc_cli_usage("export", "too many paths");
            paths[n++] = a;
        } else if (strcmp(a, "--") == 0) {
            opts_done = true;
        } else if (strcmp(a, "--chakra") == 0) {
            if (++i == argc) return sc_cli_usage("export", "--chakra needs a PREFIX");
            prefix = argv[i];
        } else if (strcmp(a, "--no-cpu") == 0) {
            flags |= SC_EXPORT_NO_CPU;
        } else if (strcmp(a, "--gpu-only") == 0) {
            flags |= SC_EXPORT_GPU_ONLY;
        } else if (strcmp(a, "--force") == 0) {
            flags |= SC_EXPORT_FORCE;
        } else if (strcmp(a, "--iteration") == 0) {
            if (++i == argc || !parse_i64(argv[i], &iteration))
                return sc_cli_usage("export", "--iteration needs a number");
        } else {
            return sc_cli_usage("export", "unknown option '%s'", a);
        }
    }
    if (!prefix) return sc_cli_usage("export", "say what to write: --chakra PREFIX");
    if (n == 0) return sc_cli_usage("export", "no trace files given");
    sc_error err;
    sc_traceset *set;
    if (sc_traceset_load(paths, n, NULL, &set, &err) != SC_OK) return sc_cli_fail(&err);
    sc_cli_print_warnings(set);
    sc_export_stats st;
    double t0 = sc_cli_now();
    sc_status s = sc_export_chakra(set, prefix, flags, iteration, &st, &err);
    double dt = sc_cli_now() - t0;
    sc_traceset_free(set);
    if (s != SC_OK) return sc_cli_fail(&err);
    fprintf(stderr,
            "stepcast: wrote %llu file%s %s.<rank>.et: %llu nodes (of %llu tasks), %llu dependencies, "
            "%llu bytes in %.3f s\n",
            (unsigned long long)st.files, st.files == 1 ? "" : "s", prefix, (unsigned long long)st.nodes,
            (unsigned long long)st.graph_tasks, (unsigned long long)st.dependencies,
            (unsigned long long)st.bytes, dt);
    return SC_EXIT_OK;
}
