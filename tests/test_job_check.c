/*
 * test_job_check.c - sc__traceset_check_job (src/trace/job_check.c) on the
 * corpus jobs (tests/corpus/<job>/, one change each from mini/) and on the
 * real multi-rank trace sets, which must pass without errors.
 */
#include "testutil.h"

#include "../src/trace/job_check.h"

typedef struct warnings {
    char text[4096];
    int count;
} warnings;

static bool collect(void *ctx, const char *msg) {
    warnings *w = ctx;
    size_t n = strlen(w->text);
    snprintf(w->text + n, sizeof w->text - n, "%s\n", msg);
    w->count++;
    return true;
}

/* Loads paths and runs the check; returns its status, fills w and err. */
static sc_status check(const char *path, warnings *w, sc_error *err) {
    sc_traceset *set;
    memset(w, 0, sizeof *w);
    assert_int_equal(sc_traceset_load(&path, 1, NULL, &set, err), SC_OK);
    sc_status st = sc__traceset_check_job(set, collect, w, err);
    sc_traceset_free(set);
    return st;
}

static void test_clean_job_passes(void **state) {
    (void)state;
    warnings w;
    sc_error err;
    assert_int_equal(check("tests/corpus/mini", &w, &err), SC_OK);
    assert_int_equal(w.count, 0);
}

static void test_same_rank_twice_is_an_error(void **state) {
    (void)state;
    warnings w;
    sc_error err;
    assert_int_equal(check("tests/corpus/same_rank_twice", &w, &err), SC_E_FORMAT);
    assert_non_null(strstr(err.message, "both claim rank 0"));
}

static void test_world_size_mismatch_is_an_error(void **state) {
    (void)state;
    warnings w;
    sc_error err;
    assert_int_equal(check("tests/corpus/world_size_mismatch", &w, &err), SC_E_FORMAT);
    assert_non_null(strstr(err.message, "world size 4 differs"));
}

static void test_rank_outside_world_is_an_error(void **state) {
    (void)state;
    warnings w;
    sc_error err;
    assert_int_equal(check("tests/corpus/rank_out_of_range", &w, &err), SC_E_FORMAT);
    assert_non_null(strstr(err.message, "rank 5 is outside"));
}

static void test_clock_offset_warns(void **state) {
    (void)state;
    warnings w;
    sc_error err;
    assert_int_equal(check("tests/corpus/clock_offset_hours", &w, &err), SC_OK);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.text, "rank 1 starts 3.00 h after rank 0"));
}

/* Uneven whole-trace collective counts are not a check_job warning: the
 * graph builder words them with its per-communicator count (build.c). */
static void test_one_rank_collective_counts(void **state) {
    (void)state;
    warnings w;
    sc_error err;
    assert_int_equal(check("tests/corpus/collective_one_rank", &w, &err), SC_OK);
    assert_int_equal(w.count, 0);
    const char *path = "tests/corpus/collective_one_rank";
    sc_traceset *set;
    assert_int_equal(sc_traceset_load(&path, 1, NULL, &set, &err), SC_OK);
    char msg[256] = "";
    assert_true(sc__traceset_collective_counts_differ(set, msg, sizeof msg));
    assert_string_equal(msg, "rank 1 ran 0 NCCL collectives in its whole trace, rank 0 ran 1");
    sc_traceset_free(set);
}

static void test_partial_job_warns(void **state) {
    (void)state;
    warnings w;
    sc_error err;
    assert_int_equal(check("tests/corpus/mini/rank1.json", &w, &err), SC_OK);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.text, "world size 2 but 1 trace is given"));
}

/* The real jobs are consistent: no error, and no clock or collective
 * warning (each README says all ranks ran the same iteration). */
static void test_real_jobs_pass(void **state) {
    (void)state;
    const char *jobs[] = {"megatron-tp8-a100", "param-dlrm-8rank/kineto"};
    for (size_t i = 0; i < 2; i++) {
        warnings w;
        sc_error err;
        sc_status st = check(sc_test_trace(jobs[i]), &w, &err);
        if (st != SC_OK) fail_msg("%s: %s", jobs[i], err.message);
        if (w.count) fail_msg("%s: unexpected warnings:\n%s", jobs[i], w.text);
        const char *path = sc_test_trace(jobs[i]);
        sc_traceset *set;
        assert_int_equal(sc_traceset_load(&path, 1, NULL, &set, &err), SC_OK);
        char msg[256] = "";
        if (sc__traceset_collective_counts_differ(set, msg, sizeof msg)) fail_msg("%s: %s", jobs[i], msg);
        sc_traceset_free(set);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_job_passes),
        cmocka_unit_test(test_same_rank_twice_is_an_error),
        cmocka_unit_test(test_world_size_mismatch_is_an_error),
        cmocka_unit_test(test_rank_outside_world_is_an_error),
        cmocka_unit_test(test_clock_offset_warns),
        cmocka_unit_test(test_one_rank_collective_counts),
        cmocka_unit_test(test_partial_job_warns),
        cmocka_unit_test(test_real_jobs_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
