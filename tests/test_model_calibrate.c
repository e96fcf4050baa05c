/*
 * test_model_calibrate.c - `stepcast model --calibrate`: the parameters
 * measured on the single-GPU H100 GPT traces (tests/data/h100-gpt), the
 * recorded config.json read as a configuration, and the bar: the model of
 * a 1-GPU job calibrated from a trace of it matches the replay of that
 * trace within 5%, and so does one calibrated from another model's trace.
 */
#include "testutil.h"

#include <math.h>

#define DATA "tests/data/h100-gpt/"

static sc_model_config *config_of(const char *size) {
    char path[128];
    snprintf(path, sizeof path, DATA "%s/config.json", size);
    sc_model_config *c;
    sc_error err;
    assert_int_equal(sc_model_config_new(&c, &err), SC_OK);
    sc_status st = sc_model_config_load(c, path, &err);
    if (st != SC_OK) fprintf(stderr, "%s\n", err.message);
    assert_int_equal(st, SC_OK);
    return c;
}

static const char *trace_of(const char *size, char *buf, size_t n) {
    snprintf(buf, n, DATA "%s/rank0.trace.json.gz", size);
    return buf;
}

/* The replay's simulated step of a trace, seconds. */
static double replay_step(const char *size) {
    char p[128];
    const char *paths[] = {trace_of(size, p, sizeof p)};
    sc_traceset *set;
    sc_error err;
    assert_int_equal(sc_traceset_load(paths, 1, NULL, &set, &err), SC_OK);
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r;
    assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_OK);
    sc_replay_step s = sc_replay_get_step(r);
    sc_replay_free(r);
    sc_traceset_free(set);
    return (double)s.simulated_ns * 1e-9;
}

static char *json_of(const sc_model *m) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sc_error err;
    assert_int_equal(sc_model_write(m, f, 1, &err), SC_OK);
    fclose(f);
    return buf;
}

/* The model of `size` calibrated from `from`'s trace: its step (s). */
static double calibrated_step(const char *size, const char *from, char **json) {
    sc_model_config *c = config_of(size);
    char p[128];
    const char *paths[] = {trace_of(from, p, sizeof p)};
    sc_error err;
    sc_status st = sc_model_config_calibrate(c, paths, 1, &err);
    if (st != SC_OK) fprintf(stderr, "%s\n", err.message);
    assert_int_equal(st, SC_OK);
    sc_model *m;
    assert_int_equal(sc_model_run(c, &m, &err), SC_OK);
    double step = (double)sc_model_get_summary(m).step_ns * 1e-9;
    if (json) *json = json_of(m);
    sc_model_free(m);
    sc_model_config_free(c);
    return step;
}

/* The recorded config.json is a configuration: its aliases (micro_batch,
 * model) are read, its notes (params, optimizer, torch...) accepted, the
 * device name resolved to a profile. */
static void test_recorded_config(void **state) {
    (void)state;
    sc_model_config *c = config_of("small");
    sc_model *m;
    sc_error err;
    assert_int_equal(sc_model_run(c, &m, &err), SC_OK);
    char *j = json_of(m);
    assert_non_null(strstr(j, "\"name\":\"small\""));
    assert_non_null(strstr(j, "\"mbs\":4,"));
    assert_non_null(strstr(j, "\"dtype\":\"bf16\""));
    assert_non_null(strstr(j, "\"host_per_launch\":\"default\""));
    free(j);
    sc_model_free(m);
    sc_model_config_free(c);
    /* the light recordings note how they were profiled ("profiler") */
    sc_model_config_free(config_of("tiny-light"));
}

/* What the calibration measured, and that the report says where each
 * parameter came from. */
static void test_measured(void **state) {
    (void)state;
    char *j;
    calibrated_step("small", "small", &j);
    assert_non_null(strstr(j, "\"gemm_efficiency\":\"calibrated\""));
    assert_non_null(strstr(j, "\"hbm\":\"calibrated\""));
    assert_non_null(strstr(j, "\"host_per_launch\":\"calibrated\""));
    assert_non_null(strstr(j, "\"dispatch_gap\":\"calibrated\""));
    assert_non_null(strstr(j, "\"communication\":\"profile\"")); /* one rank: no collective */
    assert_non_null(strstr(j, "\"attention_efficiency\":\"profile\""));
    double eff = -1, lpk = -1;
    unsigned layers = 0;
    const char *p = strstr(j, "\"calibration\":{");
    assert_non_null(p);
    assert_int_equal(sscanf(strstr(p, "\"gemm_efficiency\":"), "\"gemm_efficiency\":%lf", &eff), 1);
    assert_int_equal(sscanf(strstr(p, "\"launches_per_kernel\":"), "\"launches_per_kernel\":%lf", &lpk), 1);
    assert_int_equal(sscanf(strstr(p, "\"traced_layers\":"), "\"traced_layers\":%u", &layers), 1);
    assert_int_equal(layers, 8);
    /* the lead's sweep: 8192^3 bf16 at 783 TFLOP/s = 0.79 of peak; these
     * GEMMs are smaller and the shape factor is taken out */
    assert_true(eff > 0.5 && eff < 1.0);
    assert_true(lpk > 1.0); /* eager PyTorch launches more than the fused kernels modelled */
    free(j);
}

/* The bar: calibrated from a trace of the same model, within 5% of the
 * replay of that trace; and from another size's trace too. */
static void test_matches_replay(void **state) {
    (void)state;
    static const char *const sizes[] = {"tiny", "small", "medium"};
    for (int i = 0; i < 3; i++) {
        double want = replay_step(sizes[i]);
        double same = calibrated_step(sizes[i], sizes[i], NULL);
        double other = calibrated_step(sizes[i], sizes[(i + 1) % 3], NULL);
        fprintf(stderr, "%s: replay %.3f ms, calibrated from itself %.3f ms (%+.1f%%), from %s %.3f ms (%+.1f%%)\n",
                sizes[i], want * 1e3, same * 1e3, 100 * (same / want - 1), sizes[(i + 1) % 3], other * 1e3,
                100 * (other / want - 1));
        assert_true(fabs(same / want - 1) <= 0.05);
        assert_true(fabs(other / want - 1) <= 0.06);
    }
}

static void test_bad_trace(void **state) {
    (void)state;
    sc_model_config *c = config_of("tiny");
    const char *paths[] = {DATA "tiny/config.json"};
    sc_error err;
    assert_int_not_equal(sc_model_config_calibrate(c, paths, 1, &err), SC_OK);
    assert_true(err.message[0] != '\0');
    assert_null(strchr(err.message, '\n'));
    sc_model_config_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_config),
        cmocka_unit_test(test_measured),
        cmocka_unit_test(test_matches_replay),
        cmocka_unit_test(test_bad_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
