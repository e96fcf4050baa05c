/*
 * bench_chakra.c - Chakra interop figures for `make bench`:
 *   - export of the bundled 8-rank Megatron example: the graph's nodes per
 *     second written (best of 5, graph built once, files to a temp dir), and
 *     the end-to-end export time (sc_graph_build + sc_graph_export_chakra);
 *   - import of those files back into a graph (nodes per second, best of 5);
 *   - the wire codec alone on 1 M synthetic nodes shaped like an export's
 *     (name, type, 2 deps, duration, 4 attrs): encode and decode nodes/s;
 *   - those 1 M nodes as one .et file read into a graph (load, build).
 *
 *   bench_chakra [EXAMPLE_DIR ...]   (the other bench/run.sh arguments are ignored)
 *
 * Prints `figure<TAB>name<TAB>value<TAB>unit` lines. The machine is shared:
 * compare ratios within one run.
 */
#include "stepcast.h"
#include "graph/graph.h"
#include "report/chakra_export.h"
#include "readers/chakra_wire.h"
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void row(const char *name, double value, const char *unit) {
    printf("chakra\t%s\t%.6g\t%s\n", name, value, unit);
}

static int fail(const char *what, const sc_error *err) {
    fprintf(stderr, "bench_chakra: %s: %s\n", what, err->message);
    return 1;
}

/* Imports one file of 1 M nodes (the codec bench's nodes behind a
 * GlobalMetadata): load (decompress + frame check) and graph build. */
static void import_big(const sc__pbuf *nodes) {
    sc__pbuf file, body;
    sc__pbuf_init(&file);
    sc__pbuf_init(&body);
    sc__pb_put_str(&body, 1, "0.0.4", 5);
    sc__pb_frame(&file, &body);
    sc__pbuf_bytes(&file, nodes->data, nodes->len);
    char path[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/stepcast-bench-big-%ld.0.et", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(file.data, 1, file.len, f) != file.len) {
        fprintf(stderr, "bench_chakra: cannot write %s\n", path);
        if (f) fclose(f);
        return;
    }
    fclose(f);
    sc_error err;
    sc_traceset *set;
    const char *p = path;
    double t0 = now();
    if (sc_traceset_load(&p, 1, NULL, &set, &err) != SC_OK) {
        fprintf(stderr, "bench_chakra: %s\n", err.message);
        unlink(path);
        return;
    }
    double t_load = now() - t0;
    t0 = now();
    sc__graph *g;
    if (sc__graph_build_chakra(set, &g, &err) == SC_OK) {
        double t_build = now() - t0;
        row("import 1M-node file: load + check", 1e6 / t_load / 1e6, "M nodes/s");
        row("import 1M-node file: graph build", 1e6 / t_build / 1e6, "M nodes/s");
        row("import 1M-node file: graph memory per task", (double)sc__graph_memory(g) / 1e6, "B");
        sc__graph_free(g);
    } else {
        fprintf(stderr, "bench_chakra: %s\n", err.message);
    }
    sc_traceset_free(set);
    unlink(path);
    sc__pbuf_free(&file);
    sc__pbuf_free(&body);
}

static void codec_bench(void) {
    enum { N = 1000000 };
    sc__pbuf file, body;
    sc__pbuf_init(&file);
    sc__pbuf_init(&body);
    double best_enc = 1e30, best_dec = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        file.len = 0;
        double t0 = now();
        for (uint64_t i = 0; i < N; i++) {
            body.len = 0;
            sc__pb_put_uint(&body, 1, i);
            sc__pb_put_str(&body, 2, "void at::native::elementwise_kernel<128, 4>", 43);
            sc__pb_put_uint(&body, 3, SC__CK_COMP);
            uint64_t deps[2] = {i ? i - 1 : 0, i > 7 ? i - 7 : 0};
            sc__pb_put_packed(&body, 5, deps, i ? 2 : 0);
            sc__pb_put_uint(&body, 7, 3 + i % 50);
            sc__pb_attr_bool(&body, 10, "is_cpu_op", false);
            sc__pb_attr_int64(&body, 10, "stream", 7);
            sc__pb_attr_int64(&body, 10, "sc_dur_ns", 3456 + (int64_t)(i % 50) * 1000);
            uint8_t fam[2] = {SC_E_STREAM, SC_E_LAUNCH};
            sc__pb_attr_bytes(&body, 10, "sc_fam", fam, i ? 2 : 0);
            sc__pb_frame(&file, &body);
        }
        double dt = now() - t0;
        if (dt < best_enc) best_enc = dt;
        sc__vec ctrl, data;
        sc__vec_init(&ctrl, sizeof(uint64_t));
        sc__vec_init(&data, sizeof(uint64_t));
        sc__chakra_cursor c = {file.data, file.len, 0};
        const uint8_t *msg;
        size_t len;
        bool bad, oom;
        uint64_t sum = 0, n = 0;
        t0 = now();
        while (sc__chakra_next(&c, &msg, &len, &bad)) {
            sc__chakra_node node;
            ctrl.len = data.len = 0;
            if (!sc__chakra_decode_node(msg, len, &node, &ctrl, &data, &oom)) break;
            sum += node.dur_us + (uint64_t)node.attr[SC__CA_STREAM];
            n++;
        }
        dt = now() - t0;
        if (dt < best_dec) best_dec = dt;
        if (n != N || !sum) fprintf(stderr, "bench_chakra: decoded %llu of %d nodes\n", (unsigned long long)n, N);
        sc__vec_free(&ctrl);
        sc__vec_free(&data);
    }
    row("codec encode, 1M synthetic nodes", N / best_enc / 1e6, "M nodes/s");
    row("codec decode, 1M synthetic nodes", N / best_dec / 1e6, "M nodes/s");
    row("codec bytes per node", (double)file.len / N, "B");
    import_big(&file);
    sc__pbuf_free(&file);
    sc__pbuf_free(&body);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "examples/megatron-tp8";
    sc_error err;
    sc_traceset *set;
    double t0 = now();
    if (sc_traceset_load(&dir, 1, NULL, &set, &err) != SC_OK) return fail("load", &err);
    sc__build_options bo = {.iteration = -1};
    sc__graph *g;
    if (sc__graph_build(set, &bo, &g, NULL, &err) != SC_OK) return fail("build", &err);
    double t_build = now() - t0;

    char prefix[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(prefix, sizeof prefix, "%s/stepcast-bench-chakra-%ld", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    double best = 1e30;
    sc__chakra_export_stats st = {0};
    for (int rep = 0; rep < 5; rep++) {
        double t = now();
        if (sc__chakra_export(g, prefix, SC_EXPORT_FORCE, &st, &err) != SC_OK) return fail("export", &err);
        t = now() - t;
        if (t < best) best = t;
    }
    row("export 8-rank Megatron graph (write only)", (double)st.nodes / best / 1e6, "M nodes/s");
    row("export 8-rank Megatron graph (write only)", best * 1e3, "ms");
    row("export 8-rank Megatron bytes", (double)st.bytes / 1e6, "MB");
    row("export 8-rank Megatron load+build (before writing)", t_build * 1e3, "ms");

    /* Import the files back. */
    char names[64][300];
    const char *paths[64];
    size_t nr = g->ranks.len < 64 ? g->ranks.len : 64;
    for (size_t r = 0; r < nr; r++) {
        snprintf(names[r], sizeof names[r], "%s.%lld.et", prefix,
                 (long long)SC__VEC_AT(&g->ranks, sc__rank, r).rank);
        paths[r] = names[r];
    }
    sc_traceset *cset;
    if (sc_traceset_load(paths, nr, NULL, &cset, &err) != SC_OK) return fail("reload", &err);
    best = 1e30;
    size_t ntasks = 0;
    for (int rep = 0; rep < 5; rep++) {
        sc__graph *h;
        double t = now();
        if (sc__graph_build_chakra(cset, &h, &err) != SC_OK) return fail("import", &err);
        t = now() - t;
        if (t < best) best = t;
        ntasks = h->tasks.len;
        sc__graph_free(h);
    }
    row("import 8 exported ranks into a graph", (double)ntasks / best / 1e6, "M nodes/s");
    sc_traceset_free(cset);

    /* End to end through the public API, as `stepcast export` runs it. */
    double t = now();
    sc_export_stats es;
    sc_graph *jg;
    if (sc_graph_build(set, NULL, &jg, &err) != SC_OK) return fail("build", &err);
    sc_status est = sc_graph_export_chakra(jg, prefix, SC_EXPORT_FORCE, &es, &err);
    sc_graph_free(jg);
    if (est != SC_OK) return fail("export", &err);
    row("export 8-rank Megatron (build + write)", (now() - t) * 1e3, "ms");
    for (size_t r = 0; r < nr; r++) unlink(names[r]);
    snprintf(names[0], sizeof names[0], "%s.comm_group.json", prefix);
    unlink(names[0]);
    sc__graph_free(g);
    sc_traceset_free(set);
    codec_bench();
    return 0;
}
