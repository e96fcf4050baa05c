/*
 * test_hta_breakdown.c - `replay --breakdown hta`: HTA's temporal breakdown
 * of the measured traces, against the figures HTA itself gives on Megatron
 * rank 0 (compute 131,390 us, non-compute 241,337 of which communication
 * 241,191, idle 222,514, over a 595,241 us window) and, on traces that take
 * HTA's other paths (several ProfilerSteps, sub-microsecond timestamps,
 * cuda_sync events), against a line-by-line replica of its code
 * (get_temporal_breakdown, the iteration filter, the float rounding), run
 * in Python over the same files; stepcast's own conventions in the JSON.
 */
#include "testutil.h"

#include <math.h>

static sc_replay *run_hta(const sc_traceset *set) {
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.breakdown = SC_BREAKDOWN_HTA;
    o.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r;
    sc_error err;
    if (sc_replay_run(set, &o, &r, &err) != SC_OK) fail_msg("replay: %s", err.message);
    return r;
}

static double us(int64_t ns) { return (double)ns / 1000.0; }

/* Within 0.1% of HTA's figure (us). */
static void near(const char *what, int64_t ns, double want_us) {
    printf("#   %s %.3f us (HTA %.0f)\n", what, us(ns), want_us);
    if (fabs(us(ns) - want_us) > 0.001 * want_us) fail_msg("%s: %.3f us, HTA says %.0f", what, us(ns), want_us);
}

/* The parts add up to the window, every one of them >= 0. */
static void check_parts(const sc_hta_breakdown *h) {
    int64_t w = h->window_end_ns - h->window_start_ns;
    assert_int_equal(h->compute_ns + h->non_compute_ns + h->idle_ns, w);
    assert_int_equal(h->comm_ns + h->memory_ns + h->other_ns, h->non_compute_ns);
    assert_true(h->compute_ns >= 0 && h->comm_ns >= 0 && h->memory_ns >= 0 && h->other_ns >= 0 && h->idle_ns >= 0);
}

static void test_megatron_as_hta(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("megatron-tp8-a100");
    sc_replay *r = run_hta(set);
    assert_int_equal(sc_replay_hta_count(r), 8);
    sc_hta_breakdown h;
    sc_error err;
    for (size_t i = 0; i < 8; i++) {
        assert_int_equal(sc_replay_hta_at(r, i, &h, &err), SC_OK);
        assert_int_equal(h.rank, (int64_t)i);
        assert_false(h.last_step_dropped); /* one ProfilerStep: HTA keeps every op */
        assert_false(h.rounded_to_us);     /* integer microseconds */
        check_parts(&h);
    }
    assert_int_equal(sc_replay_hta_at(r, 0, &h, &err), SC_OK);
    printf("# Megatron rank 0, %llu GPU ops:\n", (unsigned long long)h.gpu_ops);
    near("window", h.window_end_ns - h.window_start_ns, 595241);
    near("compute", h.compute_ns, 131390);
    near("communication", h.comm_ns, 241191);
    near("idle", h.idle_ns, 222514);
    near("non-compute", h.non_compute_ns, 241337);
    /* The replica gives them to the microsecond. */
    assert_int_equal(h.compute_ns, 131390000);
    assert_int_equal(h.comm_ns, 241191000);
    assert_int_equal(h.memory_ns, 146000); /* 81 memsets and 6 memcpys outside compute */
    assert_int_equal(h.other_ns, 0);
    assert_int_equal(h.idle_ns, 222514000);
    assert_int_equal(h.gpu_ops, 777); /* 690 kernels, 81 memsets, 6 memcpys */
    assert_int_equal(sc_replay_hta_at(r, 8, &h, &err), SC_E_USAGE);
    sc_replay_free(r);
    sc_traceset_free(set);
}

typedef struct expect {
    const char *rel;
    uint64_t ops;
    double window, compute, non_compute, comm, memory, idle; /* us */
    int dropped, rounded;
} expect;

/* Figures of the Python replica of HTA's code on the same files. */
static void test_hta_paths(void **state) {
    (void)state;
    static const expect cases[] = {
        /* five ProfilerSteps (the last left out), ns timestamps (rounded inward) */
        {"hta-testdata/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 4876, 384634, 372150,
         2371, 0, 2371, 10113, 1, 1},
        /* three steps, relative fractional timestamps, collectives with metadata */
        {"hta-testdata/nccl_parser_config/nccl_data.json.gz", 2516, 435586, 75169, 21636, 20805, 831, 338781, 1, 1},
        /* 2022 format, several steps, SendRecv and AllReduce kernels */
        {"hta-testdata/trace_diff/control/control.json.gz", 7875, 383404, 234760, 86525, 70197, 16328, 62119, 1, 0},
        /* no ProfilerStep; cuda_sync events, Context Sync with stream 4294967295 counted */
        {"hta-testdata/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 139, 12996011,
         10637, 55690, 0, 55511, 12929684, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const expect *x = &cases[c];
        sc_traceset *set = sc_test_load_shared(x->rel);
        sc_replay *r = run_hta(set);
        assert_int_equal(sc_replay_hta_count(r), 1);
        sc_hta_breakdown h;
        sc_error err;
        assert_int_equal(sc_replay_hta_at(r, 0, &h, &err), SC_OK);
        printf("# %s: %llu ops\n", x->rel, (unsigned long long)h.gpu_ops);
        check_parts(&h);
        assert_int_equal(h.gpu_ops, x->ops);
        assert_int_equal(h.last_step_dropped, x->dropped);
        assert_int_equal(h.rounded_to_us, x->rounded);
        double got[] = {us(h.window_end_ns - h.window_start_ns), us(h.compute_ns), us(h.non_compute_ns),
                        us(h.comm_ns), us(h.memory_ns), us(h.idle_ns)};
        double want[] = {x->window, x->compute, x->non_compute, x->comm, x->memory, x->idle};
        for (size_t k = 0; k < 6; k++)
            if (got[k] != want[k]) fail_msg("%s: figure %zu is %.3f us, the replica's %.0f", x->rel, k, got[k], want[k]);
        sc_replay_free(r);
        sc_traceset_free(set);
    }
}

static char *write_report(const sc_replay *r, int json) {
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    sc_error err;
    assert_int_equal(sc_replay_write(r, f, json, &err), SC_OK);
    fclose(f);
    return text;
}

/* The report says which window and classes each breakdown has; HTA's only
 * when asked for, and then from predict too. */
static void test_report(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("megatron-tp8-a100");
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r;
    sc_error err;
    assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_OK);
    assert_int_equal(sc_replay_hta_count(r), 0);
    char *json = write_report(r, 1), *text = write_report(r, 0);
    assert_non_null(strstr(json, "\"breakdown_conventions\":{\"window\":\"the simulated step"));
    assert_non_null(strstr(json, "\"compute\":\"GPU tasks that are not communication: kernels, memcpy and memset\""));
    assert_null(strstr(json, "breakdown_hta"));
    assert_null(strstr(text, "HTA"));
    free(json);
    free(text);
    sc_replay_free(r);

    sc_replay *h = run_hta(set);
    json = write_report(h, 1);
    text = write_report(h, 0);
    const char *b = strstr(json, ",\"breakdown_hta\":{\"source\":\"HolisticTraceAnalysis get_temporal_breakdown");
    assert_non_null(b);
    assert_non_null(strstr(b, "\"window\":\"the rank's whole trace"));
    assert_non_null(strstr(b, "{\"rank\":0,\"gpu_ops\":777,\"window_us\":595241.000,\"compute_us\":131390.000,"
                              "\"non_compute_us\":241337.000,\"communication_us\":241191.000,\"memory_us\":146.000,"
                              "\"other_us\":0.000,\"idle_us\":222514.000,\"compute_pct\":22.07,"
                              "\"non_compute_pct\":40.54,\"idle_pct\":37.38,"));
    assert_non_null(strstr(text, "HTA temporal breakdown of the measured traces"));
    assert_non_null(strstr(text, "   0       595.241      131.390         241.337     241.191       0.146"));
    free(json);
    free(text);
    sc_replay_free(h);

    sc_predict_options po = SC_PREDICT_OPTIONS_INIT;
    po.replay.breakdown = SC_BREAKDOWN_HTA;
    po.replay.sensitivity = SC_SENSITIVITY_OFF;
    assert_int_equal(sc_predict_run(set, &po, &r, &err), SC_OK);
    assert_int_equal(sc_replay_hta_count(r), 8);
    sc_replay_free(r);
    sc_traceset_free(set);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_megatron_as_hta),
        cmocka_unit_test(test_hta_paths),
        cmocka_unit_test(test_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
