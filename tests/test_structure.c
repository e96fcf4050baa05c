/*
 * test_structure.c - the model's structure recovered from traces
 * (`stepcast structure`) and the layer edit built on it
 * (`predict --layers`): the Megatron set's 40 layers and dimensions, a set
 * without repeated layers said so with reasons, the identity edit equal to
 * the replay, more layers lengthening the step by the per-layer time.
 */
#include "testutil.h"

#include "pipeline/replay.h"
#include "pipeline/structure.h"

static sc_structure *structure(const sc_traceset *set) {
    sc_structure *s;
    sc_error err;
    if (sc_structure_run(set, NULL, &s, &err) != SC_OK) fail_msg("structure: %s", err.message);
    return s;
}

static char *json_of(const sc_structure *s) {
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    sc_error err;
    assert_int_equal(sc_structure_write(s, f, 1, &err), SC_OK);
    fclose(f);
    return text;
}

/* The bar: 40 layers, hidden 4096, seq 2048, micro-batch 4, TP 8; and what
 * the README of the set reads off its shapes: FFN 4 x hidden, 64 heads of
 * 64, fp16, a forward-only step. */
static void test_megatron(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("megatron-tp8-a100");
    sc_structure *s = structure(set);
    sc_structure_summary o = sc_structure_get(s);
    assert_int_equal(o.layers, 40);
    assert_int_equal(o.backward_layers, 0);
    assert_string_equal(o.layers_from, "period");
    assert_int_equal(o.hidden.value, 4096);
    assert_int_equal(o.seq.value, 2048);
    assert_int_equal(o.micro_batch.value, 4);
    assert_int_equal(o.tp.value, 8);
    assert_int_equal(o.ffn.value, 16384);
    assert_int_equal(o.heads.value, 64);
    assert_int_equal(o.head_dim, 64);
    assert_string_equal(o.dtype, "fp16");
    assert_true(o.per_layer_forward_us > 1000 && o.per_layer_forward_us < 100000);
    assert_true(o.first_task != UINT32_MAX);
    char *j = json_of(s);
    assert_non_null(strstr(j, "\"layers\":{\"count\":40,"));
    assert_non_null(strstr(j, "\"per_layer_us\":{\"forward\":"));
    assert_non_null(strstr(j, "\"model\":{\"hidden\":4096,\"ffn\":16384,\"heads\":64,\"seq\":2048,\"micro_batch\":4,"
                              "\"tp\":8,\"dtype\":\"fp16\""));
    assert_non_null(strstr(j, "\"tensor_parallel\":2"));
    free(j);
    sc_structure_free(s);
    sc_traceset_free(set);
}

/* SGLang's Qwen3-8B (ROCm): the layers' main norms are a fused add +
 * RMSNorm whose weight is its fifth input, and the per-head q/k RMSNorms
 * (128 wide) are as many; hidden was read as 128 before the weight was
 * looked for in any position. */
static void test_qwen3_hidden(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("tracelens/inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.gz");
    sc_structure *s = structure(set);
    sc_structure_summary o = sc_structure_get(s);
    assert_int_equal(o.layers, 36);
    assert_int_equal(o.hidden.value, 4096);
    assert_int_equal(o.ffn.value, 12288);
    sc_structure_free(s);
    sc_traceset_free(set);
}

/* DLRM repeats no layer: none, with a reason, and every dimension unknown
 * with its own reason rather than a guess. */
static void test_no_layers_says_why(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("param-dlrm-8rank/kineto");
    sc_structure *s = structure(set);
    sc_structure_summary o = sc_structure_get(s);
    assert_int_equal(o.layers, 0);
    assert_non_null(o.why_no_layers);
    const sc_model_dim *dims[] = {&o.hidden, &o.ffn, &o.heads, &o.seq, &o.micro_batch, &o.tp};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(dims[i]->value, -1);
        assert_non_null(dims[i]->why_unknown);
    }
    char *j = json_of(s);
    assert_non_null(strstr(j, "\"hidden\":null"));
    assert_non_null(strstr(j, "\"unknown\":{\"hidden\":"));
    free(j);
    sc_structure_free(s);
    sc_traceset_free(set);
}

static sc_replay *predict_layers(const sc_traceset *set, uint32_t layers) {
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    o.layers = layers;
    o.replay.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r;
    sc_error err;
    if (sc_predict_run(set, &o, &r, &err) != SC_OK) fail_msg("predict: %s", err.message);
    return r;
}

/* --layers 40 on the 40-layer trace goes through the whole rewrite and
 * simulates exactly the replay, rank for rank. */
static void test_identity_is_the_replay(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("megatron-tp8-a100");
    sc_replay_options ro = SC_REPLAY_OPTIONS_INIT;
    ro.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r, *p = predict_layers(set, 40);
    sc_error err;
    assert_int_equal(sc_replay_run(set, &ro, &r, &err), SC_OK);
    assert_int_equal(sc_replay_rank_count(r), sc_replay_rank_count(p));
    assert_int_equal(sc_replay_task_count(r), sc_replay_task_count(p));
    for (size_t i = 0; i < sc_replay_rank_count(r); i++) {
        sc_replay_rank a, b;
        assert_int_equal(sc_replay_rank_at(r, i, &a, &err), SC_OK);
        assert_int_equal(sc_replay_rank_at(p, i, &b, &err), SC_OK);
        assert_int_equal(a.simulated_ns, b.simulated_ns);
    }
    assert_int_equal(sc_replay_prediction(p)->traced_layers, 40);
    assert_int_equal(sc_replay_prediction(p)->predicted_layers, 40);
    sc_replay_layers l = sc_replay_get_layers(r);
    assert_int_equal(l.count, 40);
    assert_true(l.forward_us > 0);
    sc_replay_free(r);
    sc_replay_free(p);
    sc_traceset_free(set);
}

/* One more layer's cost, per the replay r: the busiest host thread's time
 * per layer when the job is host-bound (the Megatron set is: every rank's
 * host is busy without a break through its layers), else the layers'
 * simulated span per layer. */
static double layer_cost_us(const sc_replay *r, double *host_us) {
    sc__structure s;
    sc_error err;
    assert_int_equal(sc__structure_find(r->g, &s, &err), SC_OK);
    *host_us = sc__structure_host_layer_us(r->g, &s, SC__PHASE_FORWARD);
    sc__structure_free(&s);
    double span = sc_replay_get_layers(r).forward_us;
    return *host_us > span ? *host_us : span;
}

/* The forward's simulated length: the layers' span, averaged over ranks. */
static double forward_us(const sc_replay *r) {
    sc_replay_layers l = sc_replay_get_layers(r);
    return l.count * l.forward_us;
}

/* 80 layers: the edited graph has 80 layers (found again in it), and the
 * forward grows by 40 layers' cost within 2%. The cost of a layer is the
 * busiest host thread's time per layer (14.82 ms, rank 6), not the
 * traced span over 40 (14.07 ms): the set is host-bound (each rank's host
 * is busy without a break through its layers, 561-593 ms for the 40) and
 * the span is shortened by the head start the slower hosts have when the
 * last rank's host (rank 0, 32 ms after rank 3's) enters the first layer;
 * added layers have no head start left to use. Measured: +590.4 ms
 * against 40 x 14.82 = 592.6 ms (-0.4%); against 40 x 14.07 it would be
 * +4.9%. 20 layers: the forward shrinks by about 20 spans per layer
 * (within 5%): removing the last layers keeps the head starts, and which
 * host is busiest over the 20 kept differs from the 40. */
static void test_more_and_fewer_layers(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("megatron-tp8-a100");
    sc_replay_options ro = SC_REPLAY_OPTIONS_INIT;
    ro.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r, *p80 = predict_layers(set, 80), *p20 = predict_layers(set, 20);
    sc_error err;
    assert_int_equal(sc_replay_run(set, &ro, &r, &err), SC_OK);
    double host, cost = layer_cost_us(r, &host), span = sc_replay_get_layers(r).forward_us;
    double grown = (forward_us(p80) - forward_us(r)) / cost, shrunk = (forward_us(r) - forward_us(p20)) / span;
    print_message("per layer: span %.1f us, busiest host %.1f us; 80 layers: forward +%.1f ms = %.3f layers' "
                  "cost; 20 layers: -%.3f spans\n",
                  span, host, (forward_us(p80) - forward_us(r)) / 1e3, grown, shrunk);
    assert_true(grown > 40 * 0.98 && grown < 40 * 1.02);
    assert_true(shrunk > 20 * 0.95 && shrunk < 20 * 1.05);
    assert_int_equal(sc_replay_get_layers(p80).count, 80);
    assert_int_equal(sc_replay_get_layers(p20).count, 20);
    assert_true(sc_replay_task_count(p80) > sc_replay_task_count(r));
    sc_replay_free(r);
    sc_replay_free(p80);
    sc_replay_free(p20);
    sc_traceset_free(set);
}

/* A trace without repeated layers: --layers fails with one line. */
static void test_layers_without_structure_fails(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_shared("param-dlrm-8rank/kineto");
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    o.layers = 12;
    sc_replay *r;
    sc_error err;
    assert_int_equal(sc_predict_run(set, &o, &r, &err), SC_E_USAGE);
    assert_null(r);
    assert_non_null(strstr(err.message, "--layers: no repeated layers"));
    assert_null(strchr(err.message, '\n'));
    sc_traceset_free(set);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_megatron),
        cmocka_unit_test(test_no_layers_says_why),
        cmocka_unit_test(test_qwen3_hidden),
        cmocka_unit_test(test_identity_is_the_replay),
        cmocka_unit_test(test_more_and_fewer_layers),
        cmocka_unit_test(test_layers_without_structure_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
