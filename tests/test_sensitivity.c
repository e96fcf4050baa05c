/*
 * test_sensitivity.c - the check that a replay is not an echo of its trace:
 * a host-bound job (the Megatron ranks), a GPU-bound one (HTA's
 * ns_resolution_trace) and communication-bound ones (ASTRA-sim's all-reduce
 * microbenchmark, a TraceLens training step) say so; each doubled step is
 * the step `--scale CLASS=2` gives; the check leaves the replay's own
 * simulation as it would have been; the modes and the memory budget.
 */
#include "testutil.h"

#include <math.h>

#include "pipeline/replay.h"
#include "trace/trace.h"

static sc_replay *run(const sc_traceset *set, const sc_replay_options *o) {
    sc_replay *r;
    sc_error err;
    if (sc_replay_run(set, o, &r, &err) != SC_OK) fail_msg("replay: %s", err.message);
    return r;
}

/* The sensitivity of a replay with the default options, printed. */
static sc_replay_sensitivity check(const char *rel) {
    sc_traceset *set = sc_test_load_shared(rel);
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    sc_replay *r = run(set, &o);
    sc_replay_sensitivity s = sc_replay_get_sensitivity(r);
    if (!s.computed) fail_msg("%s: not checked: %s", rel, s.why_not);
    printf("# %s: step %.3f ms; gpu x%.3f, cpu x%.3f, comm x%.3f: %s\n", rel, s.step_ns / 1e6, s.gpu_x2, s.cpu_x2,
           s.comm_x2, s.bound_by);
    assert_int_equal(s.step_ns, sc_replay_get_step(r).simulated_ns);
    assert_string_equal(s.why_not, "");
    sc_replay_free(r);
    sc_traceset_free(set);
    return s;
}

static void test_megatron_is_host_bound(void **state) {
    (void)state;
    sc_replay_sensitivity s = check("megatron-tp8-a100");
    assert_true(s.cpu_x2 > 1.9 && s.cpu_x2 < 2.05);
    assert_true(s.gpu_x2 >= 0.999 && s.gpu_x2 < 1.05);
    assert_true(s.comm_x2 >= 0.999 && s.comm_x2 < 1.05);
    assert_string_equal(s.bound_by, "cpu");
}

static void test_ns_resolution_is_gpu_bound(void **state) {
    (void)state;
    sc_replay_sensitivity s = check("hta-testdata/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    assert_true(s.gpu_x2 > 1.35);
    assert_true(s.gpu_x2 - 1 > 2 * (s.cpu_x2 - 1));
    assert_string_equal(s.bound_by, "gpu");
}

/* ASTRA-sim's 8-rank all-reduce: one collective per rank and nothing
 * else, so doubling the transfer doubles the step; and a real training
 * step (ResNet with activation checkpointing on MI300X, TraceLens) whose
 * two large all-reduces bound it. */
static void test_communication_bound(void **state) {
    (void)state;
    sc_replay_sensitivity s = check("chakra-et/microbenchmarks/all_reduce");
    assert_true(fabs(s.comm_x2 - 2.0) < 0.01);
    assert_true(fabs(s.gpu_x2 - 1.0) < 0.01 && fabs(s.cpu_x2 - 1.0) < 0.01);
    assert_string_equal(s.bound_by, "communication");
    s = check("tracelens/mi300__resnet_act_checkpoint.json.gz");
    assert_true(s.comm_x2 > 1.15);
    assert_true(s.comm_x2 - 1 > 2 * (s.gpu_x2 - 1) && s.comm_x2 - 1 > 2 * (s.cpu_x2 - 1));
    assert_string_equal(s.bound_by, "communication");
}

/* Each doubled step of set's check (r) is the step of a replay with
 * `--scale CLASS=2`, to the nanosecond. */
static void check_scale_rules(sc_traceset *set, const sc_replay *r) {
    sc_replay_sensitivity s = sc_replay_get_sensitivity(r);
    assert_true(s.computed);
    const char *rules[] = {"compute=2", "cpu=2", "comm=2"};
    int64_t want[] = {s.gpu_x2_ns, s.cpu_x2_ns, s.comm_x2_ns};
    for (int c = 0; c < 3; c++) {
        sc_replay_options so = SC_REPLAY_OPTIONS_INIT;
        so.scales = &rules[c];
        so.nscales = 1;
        so.sensitivity = SC_SENSITIVITY_OFF;
        sc_replay *x = run(set, &so);
        printf("# %s: %lld ns, the check's %lld ns\n", rules[c], (long long)sc_replay_get_step(x).simulated_ns,
               (long long)want[c]);
        assert_int_equal(sc_replay_get_step(x).simulated_ns, want[c]);
        sc_replay_free(x);
    }
}

/* Each doubled step is the step of a replay with `--scale CLASS=2`, to the
 * nanosecond, also where quiet threads (graph.h) run past the step: a
 * vLLM graph capture, whose replayed step is 59.1 ms while its quiet
 * threads run on to 174 ms (the check used to measure its doubled steps
 * over them, against the replay's step without them: compute and comm
 * x2.95, cpu x5.90, where the replays with the rules say x1.00, x1.00
 * and x2.00). And the replay's own figures are those of a replay without
 * the check, byte for byte up to the check's fields. */
static void test_same_as_scale_rules(void **state) {
    (void)state;
    sc_traceset *quiet = sc_test_load_shared("tracelens/inference__vllm_prefilldecode_piecewise__capture__graph_capture_rank_0.json.gz");
    sc_replay_options qo = SC_REPLAY_OPTIONS_INIT;
    sc_replay *q = run(quiet, &qo);
    check_scale_rules(quiet, q);
    assert_true(sc_replay_get_sensitivity(q).cpu_x2 <= 2.0);
    sc_replay_free(q);
    sc_traceset_free(quiet);

    sc_traceset *set = sc_test_load_shared("param-dlrm-8rank/kineto");
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    sc_replay *r = run(set, &o);
    check_scale_rules(set, r);

    sc_replay_options off = SC_REPLAY_OPTIONS_INIT;
    off.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *plain = run(set, &off);
    assert_int_equal(plain->sim.ntasks, r->sim.ntasks);
    assert_memory_equal(plain->sim.start, r->sim.start, r->sim.ntasks * sizeof *r->sim.start);
    assert_memory_equal(plain->sim.end, r->sim.end, r->sim.ntasks * sizeof *r->sim.end);
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    FILE *fa = open_memstream(&a, &na), *fb = open_memstream(&b, &nb);
    sc_error err;
    assert_int_equal(sc_replay_write(r, fa, 1, &err), SC_OK);
    assert_int_equal(sc_replay_write(plain, fb, 1, &err), SC_OK);
    fclose(fa);
    fclose(fb);
    const char *ca = strstr(a, ",\"sensitivity\":"), *cb = strstr(b, ",\"sensitivity\":");
    assert_non_null(ca);
    assert_non_null(cb);
    assert_int_equal(ca - a, cb - b);
    assert_memory_equal(a, b, (size_t)(ca - a));
    assert_non_null(strstr(cb, "\"sensitivity\":{\"computed\":false,\"why_not\":\"not asked for\"},\"bound_by\":null"));
    assert_non_null(strstr(ca, "\"bound_by\":\"cpu\""));
    free(a);
    free(b);
    sc_replay_free(plain);
    sc_replay_free(r);
    sc_traceset_free(set);
}

/* AUTO runs the check up to its task limit; ON beyond it; OFF never. */
static void test_modes(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("hta-testdata/critical_path/cuda_event_sync/event_sync_trace.json.gz");
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    sc_replay *r = run(set, &o);
    size_t tasks = sc_replay_task_count(r);
    assert_true(sc_replay_get_sensitivity(r).computed);
    sc_replay_free(r);
    o.sensitivity_max_tasks = tasks - 1;
    r = run(set, &o);
    sc_replay_sensitivity s = sc_replay_get_sensitivity(r);
    assert_false(s.computed);
    assert_non_null(strstr(s.why_not, "more tasks"));
    assert_string_equal(s.bound_by, "");
    assert_true(sc_replay_get_timings(r).sensitivity == 0);
    sc_replay_free(r);
    o.sensitivity = SC_SENSITIVITY_ON;
    r = run(set, &o);
    assert_true(sc_replay_get_sensitivity(r).computed);
    assert_true(sc_replay_get_timings(r).sensitivity > 0);
    sc_replay_free(r);
    o.sensitivity = SC_SENSITIVITY_OFF;
    o.sensitivity_max_tasks = 0;
    r = run(set, &o);
    assert_false(sc_replay_get_sensitivity(r).computed);
    sc_replay_free(r);
    assert_false(sc_replay_get_sensitivity(NULL).computed);
    sc_traceset_free(set);
}

/* The least budget under which a replay with options o succeeds. */
static uint64_t least_budget(sc_traceset *set, const sc_replay_options *o) {
    uint64_t lo = 1, hi = (uint64_t)1 << 34; /* fails at lo - 1... succeeds at hi */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        set->budget = mid;
        sc_replay *r;
        sc_error err;
        sc_status st = sc_replay_run(set, o, &r, &err);
        sc_replay_free(r);
        if (st == SC_OK) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* The check needs the memory of the replay's own simulation and no more:
 * the least budget of a replay without it runs it too; one byte less and
 * AUTO leaves it out, the replay failing at its own simulation, while ON
 * fails at the check, saying so. */
static void test_memory_budget(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("param-dlrm-8rank/kineto");
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.sensitivity = SC_SENSITIVITY_OFF;
    uint64_t least = least_budget(set, &o);
    printf("# the replay needs %llu B\n", (unsigned long long)least);
    o.sensitivity = SC_SENSITIVITY_AUTO;
    set->budget = least;
    sc_replay *r = run(set, &o);
    assert_true(sc_replay_get_sensitivity(r).computed);
    sc_replay_free(r);
    set->budget = least - 1;
    sc_error err;
    assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "simulating the graph"));
    o.sensitivity = SC_SENSITIVITY_ON;
    assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "sensitivity"));
    assert_null(r);
    sc_traceset_free(set);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_megatron_is_host_bound),
        cmocka_unit_test(test_ns_resolution_is_gpu_bound),
        cmocka_unit_test(test_communication_bound),
        cmocka_unit_test(test_same_as_scale_rules),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_memory_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
