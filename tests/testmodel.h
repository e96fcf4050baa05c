/*
 * testmodel.h - `stepcast model` from a test program: a configuration from
 * key/value pairs as the CLI's flags give them, run, and its step time or
 * its one-line error (test_model*.c). Include after testutil.h (cmocka).
 */
#ifndef SC_TESTMODEL_H
#define SC_TESTMODEL_H

/* The configuration of kv: key, value, ..., NULL ("preset" applies a
 * preset, later keys change it). Every pair must be accepted. */
static inline sc_model_config *sc_test_model_cfg(const char *const *kv) {
    sc_model_config *c;
    sc_error err;
    assert_int_equal(sc_model_config_new(&c, &err), SC_OK);
    for (size_t i = 0; kv[i]; i += 2) {
        sc_status st = !strcmp(kv[i], "preset") ? sc_model_config_preset(c, kv[i + 1], &err)
                                               : sc_model_config_set(c, kv[i], kv[i + 1], &err);
        if (st != SC_OK) fprintf(stderr, "%s: %s\n", kv[i], err.message);
        assert_int_equal(st, SC_OK);
    }
    return c;
}

/* The model of kv, which must run. */
static inline sc_model *sc_test_model_run(const char *const *kv) {
    sc_model_config *c = sc_test_model_cfg(kv);
    sc_model *m;
    sc_error err;
    sc_status st = sc_model_run(c, &m, &err);
    if (st != SC_OK) fprintf(stderr, "%s\n", err.message);
    assert_int_equal(st, SC_OK);
    sc_model_config_free(c);
    return m;
}

/* The modelled step of kv in seconds; its summary into *out unless NULL. */
static inline double sc_test_model_step(const char *const *kv, sc_model_summary *out) {
    sc_model *m = sc_test_model_run(kv);
    sc_model_summary s = sc_model_get_summary(m);
    if (out) *out = s;
    sc_model_free(m);
    return (double)s.step_ns * 1e-9;
}

/* kv must fail to run with SC_E_USAGE and one line that contains words. */
static inline void sc_test_model_bad(const char *const *kv, const char *words) {
    sc_model_config *c = sc_test_model_cfg(kv);
    sc_model *m;
    sc_error err;
    assert_int_equal(sc_model_run(c, &m, &err), SC_E_USAGE);
    if (!strstr(err.message, words)) fprintf(stderr, "%s\n", err.message);
    assert_non_null(strstr(err.message, words));
    assert_null(strchr(err.message, '\n'));
    sc_model_config_free(c);
}

#endif
