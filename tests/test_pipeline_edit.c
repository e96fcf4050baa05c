/*
 * test_pipeline_edit.c - predict's tensor- and pipeline-parallel edits:
 * the pipeline rewrite (transforms/pp_rewrite.c) on a graph built here,
 * whose equal stages must give 1F1B's and GPipe's bubble (P-1)/(M+P-1)
 * out of the simulation; 64 micro-batches on 16 stages simulated in
 * seconds; and on the Megatron set, --tp 8 (the traced degree) equal to
 * the replay, --tp 4 re-timing the layers, and edits the trace cannot
 * support (--tp 3 on hidden 4096, --pp 7 on 40 layers, --pp 3 on 8
 * layers) failing with one line saying why; --pp on the forward-only
 * set modelling a backward by itself; --tp 4 --pp 2 --layers 48 --gpu h100
 * composed on it, the report saying so; and the model's structure found
 * once per graph a prediction makes, not once per edit that reads it.
 */
#include "testutil.h"

#include "pipeline/replay.h"
#include "pipeline/structure.h"
#include "sim/sim.h"
#include "testgraph.h"
#include "transforms/pp_rewrite.h"

#include <stdlib.h>
#include <math.h>
#include <time.h>

enum { FWD_NS = 1000, BWD_NS = 2000 };

/* One rank, one stream: L forward layer kernels then L backward ones. */
static sc__graph *layered(uint32_t L, uint8_t **seg, uint32_t **layer) {
    sc__graph *g = sc__graph_new();
    assert_non_null(g);
    sc__graph_add_rank(g, 0, 0);
    uint32_t s = sc__graph_add_proc(g, 0, SC_P_STREAM, 0, 7);
    *seg = calloc(2 * L, 1);
    *layer = calloc(2 * L, sizeof **layer);
    int64_t ts = 0;
    for (uint32_t i = 0; i < 2 * L; i++) {
        bool bw = i >= L;
        int64_t d = bw ? BWD_NS : FWD_NS;
        assert_int_not_equal(sc_test_task(g, s, i, SC_T_KERNEL, ts, d, bw ? "layer_bwd" : "layer_fwd"), SC__NONE);
        ts += d;
        (*seg)[i] = bw ? SC__SEG_BWD : SC__SEG_FWD;
        (*layer)[i] = bw ? 2 * L - 1 - i : i;
    }
    sc_error err;
    assert_int_equal(sc__graph_finish(g, true, &err), SC_OK);
    return g;
}

static int64_t pipeline_ns(uint32_t L, uint32_t P, uint32_t M, sc__pp_kind kind, double *seconds) {
    uint8_t *seg;
    uint32_t *layer, *origin;
    sc__graph *g = layered(L, &seg, &layer), *ng;
    sc__pp_spec sp = {seg, layer, L, P, M, 1, kind, 1 << 20, 0, 1.0};
    sc_error err;
    clock_t c0 = clock();
    assert_int_equal(sc__pp_rewrite(g, &sp, &ng, &origin, &err), SC_OK);
    assert_int_equal(ng->ranks.len, P);
    assert_int_equal(ng->tasks.len, (size_t)2 * L * M + 2 * (size_t)M * (P - 1) * 2);
    sc__sim_params p = {.coupled = true};
    sc__sim s;
    assert_int_equal(sc__sim_run(ng, &p, &s, &err), SC_OK);
    if (seconds) *seconds = (double)(clock() - c0) / CLOCKS_PER_SEC;
    int64_t makespan = s.makespan;
    sc__sim_free(&s);
    free(origin);
    free(seg);
    free(layer);
    sc__graph_free(ng);
    sc__graph_free(g);
    return makespan;
}

/* Equal stages: the step is (M + P - 1) stage-micro-batch times, so the
 * bubble over the step is (P-1)/(M+P-1). */
static void check_bubble(sc__pp_kind kind, uint32_t P, uint32_t M) {
    uint32_t L = 4 * P;
    int64_t per = (int64_t)(L / P) * (FWD_NS + BWD_NS);
    int64_t step = pipeline_ns(L, P, M, kind, NULL), ideal = (int64_t)M * per;
    double bubble = (double)(step - ideal) / (double)step, want = (double)(P - 1) / (M + P - 1);
    if (fabs(bubble / want - 1) > 0.05)
        fail_msg("%s P=%u M=%u: bubble %.4f, (P-1)/(M+P-1) %.4f", sc__pp_kind_name(kind), P, M, bubble, want);
}

static void test_bubble_1f1b(void **state) {
    (void)state;
    check_bubble(SC__PP_1F1B, 2, 8);
    check_bubble(SC__PP_1F1B, 4, 8);
}

static void test_bubble_gpipe(void **state) {
    (void)state;
    check_bubble(SC__PP_GPIPE, 2, 8);
}

/* The schedule's dependencies are real: one stage holds the whole step. */
static void test_one_stage_is_sequential(void **state) {
    (void)state;
    assert_int_equal(pipeline_ns(8, 1, 3, SC__PP_1F1B, NULL), 3 * 8 * (FWD_NS + BWD_NS));
}

static void test_1f1b_64_on_16_in_seconds(void **state) {
    (void)state;
    double sec;
    int64_t step = pipeline_ns(32, 16, 64, SC__PP_1F1B, &sec);
    assert_int_equal(step, (int64_t)(64 + 15) * 2 * (FWD_NS + BWD_NS));
    assert_true(sec < 5.0);
}

static void test_uneven_stages_refused(void **state) {
    (void)state;
    uint8_t *seg;
    uint32_t *layer, *origin;
    sc__graph *g = layered(40, &seg, &layer), *ng;
    sc__pp_spec sp = {seg, layer, 40, 7, 8, 1, SC__PP_1F1B, 1, 0, 1.0};
    sc_error err;
    assert_int_equal(sc__pp_rewrite(g, &sp, &ng, &origin, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "40 layers do not split evenly into 7 stages"));
    free(seg);
    free(layer);
    sc__graph_free(g);
}

/* ------------------------------------------------------------ Megatron */

static sc_traceset *megatron(void) {
    const char *p = sc_test_trace("megatron-tp8-a100");
    sc_traceset *set;
    sc_error err;
    if (sc_traceset_load(&p, 1, NULL, &set, &err) != SC_OK) fail_msg("%s", err.message);
    return set;
}

static sc_status predict(const sc_traceset *set, uint32_t tp, uint32_t pp, sc_replay **out, sc_error *err) {
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    o.replay.sensitivity = SC_SENSITIVITY_OFF;
    o.tp = tp;
    o.pp = pp;
    return sc_predict_run(set, &o, out, err);
}

static void test_megatron_tp(void **state) {
    (void)state;
    sc_traceset *set = megatron();
    sc_replay_options ro = SC_REPLAY_OPTIONS_INIT;
    ro.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r, *p, *p4;
    sc_error err;
    assert_int_equal(sc_replay_run(set, &ro, &r, &err), SC_OK);
    assert_int_equal(predict(set, 8, 0, &p, &err), SC_OK);
    assert_int_equal(sc_replay_rank_count(r), sc_replay_rank_count(p));
    for (size_t i = 0; i < sc_replay_rank_count(r); i++) {
        sc_replay_rank a, b;
        assert_int_equal(sc_replay_rank_at(r, i, &a, &err), SC_OK);
        assert_int_equal(sc_replay_rank_at(p, i, &b, &err), SC_OK);
        assert_int_equal(a.simulated_ns, b.simulated_ns);
    }
    assert_int_equal(sc_replay_prediction(p)->traced_tp, 8);
    assert_int_equal(sc_replay_prediction(p)->predicted.ranks, 8);
    /* TP 4: twice the sharded work per rank, half the ranks */
    assert_int_equal(predict(set, 4, 0, &p4, &err), SC_OK);
    const sc_prediction *q = sc_replay_prediction(p4);
    assert_int_equal(q->predicted.ranks, 4);
    assert_true(q->tp_sharded > 0 && q->tp_replicated > 0);
    /* every sharded kernel of the set has its operator's shapes: all are
     * re-timed by the kernel cost model, none by the ratio */
    assert_int_equal(q->tp_modelled, q->tp_sharded);
    sc_replay_layers l8 = sc_replay_get_layers(p), l4 = sc_replay_get_layers(p4);
    assert_true(l4.forward_us > l8.forward_us);
    /* 80 layers: the copies (which keep their templates' measured starts)
     * are sharded as their templates are, by the ratio (no traced event,
     * so no shapes) */
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    o.replay.sensitivity = SC_SENSITIVITY_OFF;
    o.tp = 4;
    o.layers = 80;
    sc_replay *p80;
    assert_int_equal(sc_predict_run(set, &o, &p80, &err), SC_OK);
    const sc_prediction *q80 = sc_replay_prediction(p80);
    assert_int_equal(q80->tp_sharded, 2 * q->tp_sharded);
    assert_int_equal(q80->tp_replicated, 2 * q->tp_replicated);
    assert_int_equal(q80->tp_modelled, q->tp_modelled);
    sc_replay_free(p80);
    sc_replay_free(r);
    sc_replay_free(p);
    sc_replay_free(p4);
    /* what the trace cannot support */
    assert_int_equal(predict(set, 3, 0, &r, &err), SC_E_USAGE);
    assert_string_equal(err.message, "--tp 3: the hidden size (4096) does not split over 3 ranks");
    sc_traceset_free(set);
}

/* The forward-only set: --pp models a backward by itself (the rewrite
 * used to meet a cycle there: GPU tasks placed by their start rather than
 * their stream order); --pp 7 on its 40 layers is refused. */
static void test_megatron_pp_models_backward(void **state) {
    (void)state;
    sc_traceset *set = megatron();
    sc_replay *r;
    sc_error err;
    if (predict(set, 0, 2, &r, &err) != SC_OK) fail_msg("%s", err.message);
    const sc_prediction *q = sc_replay_prediction(r);
    assert_int_equal(q->backward_modelled, 2);
    assert_true(q->backward_tasks_modelled > 0);
    assert_int_equal(q->pp, 2);
    assert_int_equal(sc_replay_rank_count(r), 16);
    /* a pipeline's layer structure is not the model's: no per-layer time,
     * and the reason, rather than a wrong one */
    sc_replay_layers l = sc_replay_get_layers(r);
    assert_int_equal(l.count, 0);
    assert_non_null(l.why_none);
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_int_equal(sc_replay_write(r, f, 1, &err), SC_OK);
    fclose(f);
    assert_non_null(strstr(text, "\"layers\":{\"count\":null,\"per_layer_us\":null,\"why_none\":\"a pipelined"));
    free(text);
    sc_replay_free(r);
    assert_int_equal(predict(set, 0, 7, &r, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "40 layers do not split evenly into 7 stages"));
    sc_traceset_free(set);
}

/* Edits compose: TP 4, two stages, 48 layers on H100 from the TP 8,
 * 40-layer, forward-only A100 set; the report says what was simulated. */
static void test_megatron_compose(void **state) {
    (void)state;
    sc_traceset *set = megatron();
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    o.replay.sensitivity = SC_SENSITIVITY_OFF;
    o.tp = 4;
    o.pp = 2;
    o.layers = 48;
    o.gpu = "h100";
    sc_replay *r;
    sc_error err;
    if (sc_predict_run(set, &o, &r, &err) != SC_OK) fail_msg("%s", err.message);
    const sc_prediction *q = sc_replay_prediction(r);
    assert_int_equal(q->predicted_layers, 48);
    assert_int_equal(q->predicted_tp, 4);
    assert_int_equal(q->pp, 2);
    assert_int_equal(q->backward_modelled, 2);
    assert_int_equal(q->predicted.ranks, 8);
    assert_non_null(strstr(q->predicted.gpu, "H100"));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(sc_replay_write(r, f, 0, &err), SC_OK);
    fclose(f);
    assert_non_null(strstr(text, "simulated: 48 layers, tp 4, pp 2 (1f1b, 1 micro-batch, 1 virtual stage), dp 1: "
                                 "8 ranks on 1 node of 8 H100-SXM5-80GB; backward modelled, recompute none\n"));
    free(text);
    sc_replay_free(r);
    sc_traceset_free(set);
}

/* A real backward (the H100 GPT small trace, 8 layers): two stages, one
 * micro-batch, the activation [B, S, H] bf16 sent between. */
static void test_h100_pp2(void **state) {
    (void)state;
    const char *path = "tests/data/h100-gpt/small/rank0.trace.json.gz";
    sc_traceset *set;
    sc_replay *r;
    sc_error err;
    if (sc_traceset_load(&path, 1, NULL, &set, &err) != SC_OK) fail_msg("%s", err.message);
    assert_int_equal(predict(set, 0, 2, &r, &err), SC_OK);
    const sc_prediction *q = sc_replay_prediction(r);
    assert_int_equal(q->predicted.ranks, 2);
    assert_int_equal(sc_replay_rank_count(r), 2);
    assert_int_equal(q->p2p_bytes, (int64_t)4 * 1024 * 1024 * 2);
    assert_true(q->tasks_modelled > 0);
    sc_replay_free(r);
    assert_int_equal(predict(set, 0, 3, &r, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "8 layers do not split evenly into 3 stages"));
    sc_traceset_free(set);
}

/* How many times predict (tp, pp) or, with both 0 and replay set, the
 * replay finds the model's structure. */
static uint64_t finds(const sc_traceset *set, bool replay, uint32_t tp, uint32_t pp, sc_replay **out) {
    sc_error err;
    uint64_t before = sc__structure_find_count();
    sc_replay_options ro = SC_REPLAY_OPTIONS_INIT;
    sc_status st = replay ? sc_replay_run(set, &ro, out, &err) : predict(set, tp, pp, out, &err);
    if (st != SC_OK) fail_msg("%s", err.message);
    return sc__structure_find_count() - before;
}

/* Is the structure r kept the one its graph has now? */
static void kept_is_current(const sc_replay *r) {
    assert_non_null(r->structure);
    sc__structure now;
    sc_error err;
    assert_int_equal(sc__structure_find(r->g, &now, &err), SC_OK);
    const sc__structure *kept = r->structure;
    assert_int_equal(kept->nlayers, now.nlayers);
    assert_int_equal(kept->nbackward, now.nbackward);
    assert_int_equal(kept->tp, now.tp);
    assert_memory_equal(kept->task_layer, now.task_layer, r->g->tasks.len * sizeof *now.task_layer);
    assert_memory_equal(kept->task_phase, now.task_phase, r->g->tasks.len);
    assert_memory_equal(kept->group_role, now.group_role, r->g->groups.len);
    sc__structure_free(&now);
}

/* The structure is read by the dimensions, --tp, --pp, the modelled
 * backward, --layers and the replay's layer times: found once per graph
 * they read, and again only after an edit that changes what it is found
 * from. On the Megatron set: a replay, a plain prediction and --tp 8 (the
 * traced degree: no edit) find it once and keep the one of the graph
 * they simulated; --tp 4 twice (the traced graph, then the graph whose
 * layers it re-timed); --pp 2 twice (the traced graph, read for the
 * dimensions and the modelled backward, then the one with the backward). */
static void test_structure_found_once_per_graph(void **state) {
    (void)state;
    sc_traceset *set = megatron();
    static const struct {
        bool replay;
        uint32_t tp, pp;
        uint64_t finds;
    } runs[] = {{true, 0, 0, 1}, {false, 0, 0, 1}, {false, 8, 0, 1}, {false, 4, 0, 2}, {false, 0, 2, 2}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        sc_replay *r;
        assert_int_equal(finds(set, runs[i].replay, runs[i].tp, runs[i].pp, &r), runs[i].finds);
        if (runs[i].pp) assert_null(r->structure); /* a pipeline's layer times are not read */
        else kept_is_current(r);
        sc_replay_free(r);
    }
    sc_traceset_free(set);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bubble_1f1b),
        cmocka_unit_test(test_bubble_gpipe),
        cmocka_unit_test(test_one_stage_is_sequential),
        cmocka_unit_test(test_1f1b_64_on_16_in_seconds),
        cmocka_unit_test(test_uneven_stages_refused),
        cmocka_unit_test(test_megatron_tp),
        cmocka_unit_test(test_megatron_pp_models_backward),
        cmocka_unit_test(test_megatron_compose),
        cmocka_unit_test(test_h100_pp2),
        cmocka_unit_test(test_structure_found_once_per_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
