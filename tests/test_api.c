/*
 * test_api.c - the public API as a script or a binding sees it: only
 * stepcast.h, every stage's result read through its accessors, and the
 * figures the accessors give agreeing with the reports the CLI prints.
 */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>

static sc_traceset *load(const char *path, unsigned threads) {
    sc_load_options o = {.threads = threads};
    sc_traceset *set;
    sc_error err;
    if (sc_traceset_load(&path, 1, &o, &set, &err) != SC_OK) fail_msg("%s", err.message);
    return set;
}

/* A report written to memory; malloc'ed. */
typedef sc_status (*write_fn)(const void *result, FILE *f, int json, sc_error *err);

static char *written(write_fn write, const void *result, int json) {
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    sc_error err;
    if (write(result, f, json, &err) != SC_OK) fail_msg("%s", err.message);
    fclose(f);
    return text;
}

static sc_status replay_write(const void *r, FILE *f, int json, sc_error *err) { return sc_replay_write(r, f, json, err); }
static sc_status graph_write(const void *g, FILE *f, int json, sc_error *err) { return sc_graph_write(g, f, json, err); }
static sc_status info_write(const void *i, FILE *f, int json, sc_error *err) { return sc_info_write(i, f, json, err); }
static sc_status comm_write(const void *c, FILE *f, int json, sc_error *err) { return sc_comm_write(c, f, json, err); }

/* The replay's accessors: every rank's breakdown adds up to its simulated
 * step, the job's step is its slowest rank, the report prints the same
 * numbers, and the critical path's classes and edges add up to its length. */
static void test_replay_accessors(void **state) {
    (void)state;
    sc_traceset *set = load("examples/megatron-tp8", 2);
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    sc_replay *r;
    sc_error err;
    assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_OK);
    assert_int_equal(sc_replay_rank_count(r), 8);
    int64_t slowest = 0;
    char *json = written(replay_write, r, 1);
    for (size_t i = 0; i < sc_replay_rank_count(r); i++) {
        sc_replay_rank k;
        assert_int_equal(sc_replay_rank_at(r, i, &k, &err), SC_OK);
        assert_int_equal(k.rank, (int64_t)i);
        assert_int_equal(k.exposed_compute_ns + k.exposed_comm_ns + k.overlapped_ns + k.idle_ns, k.simulated_ns);
        assert_true(k.measured_ns > 0 && k.sm_windows > 0 && k.sm_busy);
        if (k.simulated_ns > slowest) slowest = k.simulated_ns;
        char want[96];
        snprintf(want, sizeof want, "{\"rank\":%lld,\"measured_us\":%.3f,\"simulated_us\":%.3f,", (long long)k.rank,
                 (double)k.measured_ns / 1e3, (double)k.simulated_ns / 1e3);
        if (!strstr(json, want)) fail_msg("the report does not say %s", want);
    }
    sc_replay_step step = sc_replay_get_step(r);
    assert_int_equal(step.simulated_ns, slowest);
    sc_critical_path cp = sc_replay_get_critical_path(r);
    assert_true(cp.tasks > 0 && cp.last_rank >= 0);
    int64_t sum = 0;
    const sc_cp_item *items;
    size_t n = sc_replay_cp_items(r, SC_CP_BY_CLASS, &items);
    for (size_t i = 0; i < n; i++) sum += items[i].ns;
    n = sc_replay_cp_items(r, SC_CP_BY_EDGE, &items);
    for (size_t i = 0; i < n; i++) sum += items[i].ns;
    assert_int_equal(sum, cp.length_ns);
    assert_true(sc_replay_cp_items(r, SC_CP_BY_OPERATOR, &items) > 0);
    assert_true(sc_replay_coupled(r));
    assert_true(sc_replay_task_count(r) > 100000);
    assert_int_equal(sc_replay_edges_dropped(r, "no_such_family"), 0);
    sc_replay_rank k;
    assert_int_equal(sc_replay_rank_at(r, 8, &k, &err), SC_E_USAGE);
    free(json);
    sc_replay_free(r);
    sc_traceset_free(set);
}

/* The graph's accessors against its report; the warnings are the load's
 * and the builder's. */
static void test_graph_accessors(void **state) {
    (void)state;
    sc_traceset *set = load("examples/megatron-tp8", 2);
    sc_graph_options o = SC_GRAPH_OPTIONS_INIT;
    o.iteration = 3; /* the only complete one */
    sc_graph *g;
    sc_error err;
    assert_int_equal(sc_graph_build(set, &o, &g, &err), SC_OK);
    sc_traceset_free(set); /* the graph keeps what its reports need */
    assert_int_equal(sc_graph_rank_count(g), 8);
    char *text = written(graph_write, g, 0);
    size_t tasks = 0;
    for (size_t i = 0; i < sc_graph_rank_count(g); i++) {
        sc_graph_rank k;
        assert_int_equal(sc_graph_rank_at(g, i, &k, &err), SC_OK);
        assert_string_equal(k.iteration, "ProfilerStep#3");
        assert_non_null(strstr(k.file, "megatron_kineto_"));
        assert_true(k.threads > 0 && k.streams > 0 && k.operators > 0 && k.measured_step_ns > 0);
        tasks += k.tasks;
        char want[160];
        snprintf(want, sizeof want, "rank %lld  %s\n", (long long)k.rank, k.file);
        if (!strstr(text, want)) fail_msg("the report does not say %s", want);
    }
    assert_int_equal(tasks, sc_graph_task_count(g));
    assert_true(sc_graph_edge_count(g) > tasks);
    assert_int_equal(sc_graph_group_count(g), 84); /* the 84 all-reduces, one group each */
    for (size_t i = 0; i < sc_graph_warning_count(g); i++) assert_non_null(sc_graph_warning(g, i));
    assert_null(sc_graph_warning(g, sc_graph_warning_count(g)));
    free(text);
    sc_graph_free(g);
}

/* The info accessors, and the same report from a set already loaded. */
static void test_info_accessors(void **state) {
    (void)state;
    const char *p = "examples/megatron-tp8";
    sc_info *info, *again;
    sc_error err;
    assert_int_equal(sc_info_load(&p, 1, NULL, &info, &err), SC_OK);
    sc_traceset *set = load(p, 1);
    assert_int_equal(sc_info_of_set(set, &again, &err), SC_OK);
    assert_int_equal(sc_info_rank_count(info), 8);
    for (size_t i = 0; i < 8; i++) {
        sc_info_rank k;
        assert_int_equal(sc_info_rank_at(info, i, &k, &err), SC_OK);
        assert_string_equal(k.format, "kineto");
        assert_int_equal(k.rank, (int64_t)i);
        assert_int_equal(k.world_size, 8);
        assert_int_equal(k.events, sc_trace_event_count(sc_traceset_trace(set, i)));
        assert_true(k.kernels > 0 && k.collectives > 0 && k.gpu_busy_ns > 0 && k.iterations == 1);
        assert_non_null(strstr(k.gpu, "A100"));
    }
    for (int json = 0; json < 2; json++) {
        char *a = written(info_write, info, json), *b = written(info_write, again, json);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    sc_info_free(info);
    sc_info_free(again);
    sc_traceset_free(set);
}

/* `comm` without traces: an nccl-tests table of the profile, 1 KiB to 8
 * GiB by 2 on the node's GPUs, that the JSON report repeats row for row;
 * bus bandwidth is the size over the time times 2(n-1)/n. */
static void test_comm_table(void **state) {
    (void)state;
    sc_comm_options o = SC_COMM_OPTIONS_INIT;
    o.gpu = "NVIDIA H100 80GB HBM3";
    sc_comm *c;
    sc_error err;
    assert_int_equal(sc_comm_run(NULL, &o, &c, &err), SC_OK);
    sc_comm_model m = sc_comm_get_model(c);
    assert_string_equal(m.gpu, "H100-SXM5-80GB");
    assert_false(m.fitted);
    assert_true(m.nvls && m.gpus_per_node == 8 && m.nvlink_busbw_gbps > 300);
    assert_false(sc_comm_from_traces(c));
    assert_int_equal(sc_comm_row_count(c), 24);
    char *json = written(comm_write, c, 1);
    assert_non_null(strstr(json, "\"source\": \"profile\""));
    for (size_t i = 0; i < sc_comm_row_count(c); i++) {
        sc_comm_row r;
        assert_int_equal(sc_comm_row_at(c, i, &r, &err), SC_OK);
        assert_string_equal(r.op, "all_reduce");
        assert_int_equal(r.ranks, 8);
        assert_int_equal(r.bytes, (int64_t)1024 << i);
        assert_true(r.us > 0 && r.count == 0 && r.measured_us < 0 && *r.algorithm && *r.links);
        assert_true(fabs(r.busbw_gbps - (double)r.bytes / (r.us * 1e3) * 1.75) < 0.01 * r.busbw_gbps + 1e-3);
        char want[200];
        snprintf(want, sizeof want, "{\"op\": \"all_reduce\", \"ranks\": 8, \"bytes\": %lld, \"us\": %.3f, ",
                 (long long)r.bytes, r.us);
        if (!strstr(json, want)) fail_msg("the report does not say %s", want);
    }
    sc_comm_row r;
    assert_int_equal(sc_comm_row_at(c, 24, &r, &err), SC_E_USAGE);
    free(json);
    sc_comm_free(c);
    /* another op, group and sizes */
    const uint64_t sizes[] = {4096, 1u << 30};
    o.op = "all-gather";
    o.ranks = 16;
    o.sizes = sizes;
    o.nsizes = 2;
    assert_int_equal(sc_comm_run(NULL, &o, &c, &err), SC_OK);
    assert_int_equal(sc_comm_row_count(c), 2);
    assert_int_equal(sc_comm_row_at(c, 1, &r, &err), SC_OK);
    assert_string_equal(r.op, "all_gather");
    assert_int_equal(r.ranks, 16);
    assert_string_equal(r.links, "nvlink+net");
    sc_comm_free(c);
}

/* `comm` on traces: a Chakra all-reduce of 8 ranks (every rank there, a
 * known size) is fitted; one rank of a two-rank job is shown against the
 * profile with a warning; traces without sizes get rows of their own. */
static void test_comm_traces(void **state) {
    (void)state;
    sc_comm_options o = SC_COMM_OPTIONS_INIT;
    o.gpu = "h100";
    sc_comm *c;
    sc_error err;
    sc_traceset *set = load(sc_test_trace("chakra-et/microbenchmarks/all_reduce"), 2);
    assert_int_equal(sc_comm_run(set, &o, &c, &err), SC_OK);
    sc_traceset_free(set);
    assert_true(sc_comm_from_traces(c));
    assert_true(sc_comm_get_model(c).fitted);
    assert_int_equal(sc_comm_get_model(c).samples, 1);
    sc_comm_row r;
    assert_int_equal(sc_comm_row_count(c), 1);
    assert_int_equal(sc_comm_row_at(c, 0, &r, &err), SC_OK);
    assert_string_equal(r.op, "all_reduce");
    assert_int_equal(r.ranks, 8);
    assert_int_equal(r.count, 1);
    assert_true(r.bytes > 0 && r.measured_us > 0 && fabs(r.us / r.measured_us - 1) < 0.05);
    char *json = written(comm_write, c, 1);
    assert_non_null(strstr(json, "\"source\": \"fitted\""));
    free(json);
    sc_comm_free(c);

    o.gpu = NULL; /* the trace's GPU: an A100 board */
    set = load(sc_test_trace("hta-testdata/nccl_parser_config"), 1);
    assert_int_equal(sc_comm_run(set, &o, &c, &err), SC_OK);
    sc_traceset_free(set);
    assert_string_equal(sc_comm_get_model(c).gpu, "A100-SXM4-40GB");
    assert_false(sc_comm_get_model(c).fitted);
    uint64_t groups = 0;
    for (size_t i = 0; i < sc_comm_row_count(c); i++) {
        assert_int_equal(sc_comm_row_at(c, i, &r, &err), SC_OK);
        assert_int_equal(r.ranks, 2); /* "Group size", though one rank is traced */
        assert_true(r.bytes > 0 && r.us > 0 && r.measured_us > 0);
        groups += r.count;
    }
    assert_int_equal(groups, 7);
    bool said = false;
    for (size_t i = 0; i < sc_comm_warning_count(c); i++) said |= strstr(sc_comm_warning(c, i), "ranks missing") != NULL;
    assert_true(said);
    sc_comm_free(c);

    /* the example's 84 all-reduces have their sizes from the enqueuing
     * operators: the model is fitted to them and follows them */
    set = load("examples/megatron-tp8", 2);
    assert_int_equal(sc_comm_run(set, &o, &c, &err), SC_OK);
    sc_traceset_free(set);
    assert_string_equal(sc_comm_get_model(c).gpu, "A100-SXM4-80GB");
    assert_true(sc_comm_get_model(c).fitted);
    assert_int_equal(sc_comm_row_count(c), 2);
    groups = 0;
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(sc_comm_row_at(c, i, &r, &err), SC_OK);
        assert_true(r.bytes == 32768 || r.bytes == 67108864);
        assert_true(fabs(r.us / r.measured_us - 1) < 0.05);
        groups += r.count;
    }
    assert_int_equal(groups, 84);
    sc_comm_free(c);

    /* a trace whose collectives have no size: shown, not modelled */
    set = load(sc_test_trace("hta-testdata/df_index_resolver"), 1);
    assert_int_equal(sc_comm_run(set, &o, &c, &err), SC_OK);
    sc_traceset_free(set);
    assert_false(sc_comm_get_model(c).fitted);
    assert_int_equal(sc_comm_row_count(c), 1);
    assert_int_equal(sc_comm_row_at(c, 0, &r, &err), SC_OK);
    assert_true(r.bytes == -1 && r.us < 0 && r.busbw_gbps < 0 && r.count == 404 && r.measured_us > 0);
    assert_string_equal(r.algorithm, "");
    json = written(comm_write, c, 1);
    assert_non_null(strstr(json, "\"bytes\": null, \"us\": null"));
    free(json);
    sc_comm_free(c);
}

/* Mistakes: an unknown GPU or collective, table options with traces, no
 * GPU at all, a bad profile file; each one line, no result. */
static void test_comm_errors(void **state) {
    (void)state;
    sc_comm *c = (sc_comm *)1;
    sc_error err;
    sc_comm_options o = SC_COMM_OPTIONS_INIT;
    assert_int_equal(sc_comm_run(NULL, &o, &c, &err), SC_E_USAGE);
    assert_null(c);
    o.gpu = "tpu-v5";
    assert_int_equal(sc_comm_run(NULL, &o, &c, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "unknown GPU 'tpu-v5'"));
    o.gpu = "h100";
    o.op = "all_sum";
    assert_int_equal(sc_comm_run(NULL, &o, &c, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "unknown collective 'all_sum'"));
    o.op = "all_reduce";
    sc_traceset *set = load("examples/megatron-tp8", 2);
    assert_int_equal(sc_comm_run(set, &o, &c, &err), SC_E_USAGE);
    sc_traceset_free(set);
    o = (sc_comm_options)SC_COMM_OPTIONS_INIT;
    o.profile_path = sc_test_tmpfile("{\"name\": \"x\"}", 13, ".json");
    assert_int_equal(sc_comm_run(NULL, &o, &c, &err), SC_E_FORMAT);
    assert_string_equal(err.file, o.profile_path);
    assert_non_null(strstr(err.message, "missing field 'fp64_tflops'"));
    unlink(o.profile_path);
    assert_null(strchr(err.message, '\n'));
}

/* Options with named fields: a Chakra set has one window, so asking it for
 * an iteration is a usage error naming the file, not a silent no-op. */
static void test_iteration_on_chakra_is_an_error(void **state) {
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", sc_test_trace("chakra-et/microbenchmarks/all_reduce"));
    sc_traceset *set = load(dir, 1);
    sc_graph_options o = SC_GRAPH_OPTIONS_INIT;
    o.iteration = 3;
    sc_graph *g;
    sc_error err;
    assert_int_equal(sc_graph_build(set, &o, &g, &err), SC_E_USAGE);
    assert_null(g);
    assert_non_null(strstr(err.message, "one window"));
    assert_non_null(strstr(err.file, "all_reduce"));
    sc_replay_options ro = SC_REPLAY_OPTIONS_INIT;
    ro.graph.iteration = 3;
    sc_replay *r;
    assert_int_equal(sc_replay_run(set, &ro, &r, &err), SC_E_USAGE);
    ro.graph.iteration = -1;
    assert_int_equal(sc_replay_run(set, &ro, &r, &err), SC_OK);
    sc_replay_free(r);
    sc_traceset_free(set);
}

/* sc_buffer hands back, as one string, the bytes a report writes to a
 * FILE: the same as a memory stream of our own gets, in both formats; an
 * aborted buffer and a failed take leave nothing behind (ASan's leak check
 * under make check). */
static void test_buffer(void **state) {
    (void)state;
    sc_comm_options o = SC_COMM_OPTIONS_INIT;
    o.gpu = "h100";
    sc_comm *c;
    sc_error err;
    assert_int_equal(sc_comm_run(NULL, &o, &c, &err), SC_OK);
    for (int json = 0; json < 2; json++) {
        sc_buffer *b;
        assert_int_equal(sc_buffer_open(&b, &err), SC_OK);
        assert_int_equal(sc_comm_write(c, sc_buffer_file(b), json, &err), SC_OK);
        char *text;
        size_t n;
        assert_int_equal(sc_buffer_take(b, &text, &n, &err), SC_OK);
        char *want = written(comm_write, c, json);
        assert_int_equal(n, strlen(want));
        assert_string_equal(text, want);
        assert_true(n > 1000 && text[n] == '\0');
        free(want);
        sc_free(text);
    }
    sc_buffer *b;
    assert_int_equal(sc_buffer_open(&b, &err), SC_OK);
    assert_int_equal(sc_comm_write(c, sc_buffer_file(b), 1, &err), SC_OK);
    sc_buffer_abort(b);
    assert_int_equal(sc_buffer_open(&b, &err), SC_OK);
    fputs("x", sc_buffer_file(b));
    assert_int_equal(sc_buffer_take(b, NULL, NULL, &err), SC_E_USAGE);
    assert_int_equal(sc_buffer_open(NULL, &err), SC_E_USAGE);
    assert_int_equal(sc_buffer_take(NULL, NULL, NULL, &err), SC_E_USAGE);
    assert_null(sc_buffer_file(NULL));
    sc_buffer_abort(NULL);
    sc_free(NULL);
    sc_comm_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_accessors),
        cmocka_unit_test(test_graph_accessors),
        cmocka_unit_test(test_info_accessors),
        cmocka_unit_test(test_comm_table),
        cmocka_unit_test(test_comm_traces),
        cmocka_unit_test(test_comm_errors),
        cmocka_unit_test(test_iteration_on_chakra_is_an_error),
        cmocka_unit_test(test_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
