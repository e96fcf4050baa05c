/*
 * test_model_scale.c - `stepcast model` at scale and its uneven pipeline
 * splits: the layers per stage and chunk (--pp-first-layers /
 * --pp-last-layers, --pp-embedding), the bad splits (one clear line),
 * Llama 3 405B on 16,384 H100s as Meta ran it within the 10 s bar, the
 * Chrome timeline of a modelled step, and the tied embedding's gradient
 * all-reduce between the first and last stages.
 */
#include "testutil.h"
#include "testmodel.h"

#include "models/transformer.h"

static char *write_of(const sc_model *m, int json) {
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    sc_error err;
    assert_int_equal(sc_model_write(m, f, json, &err), SC_OK);
    fclose(f);
    return buf;
}

static void test_split_layers(void **state) {
    (void)state;
    sc__tf_config c;
    sc__tf_defaults(&c);
    c.layers = 126, c.pp = 16, c.pp_first = 7, c.pp_last = 7;
    uint32_t sum = 0;
    for (uint32_t s = 0; s < c.pp; s++) sum += sc__tf_stage_layers(&c, s);
    assert_int_equal(sum, 126);
    assert_int_equal(sc__tf_stage_layers(&c, 0), 7);
    assert_int_equal(sc__tf_stage_layers(&c, 1), 8);
    assert_int_equal(sc__tf_stage_layers(&c, 15), 7);
    /* only the first given: the rest split over the other 15 */
    c.pp_last = 0, c.pp_first = 6;
    assert_int_equal(sc__tf_stage_layers(&c, 15), 8);
    /* the embedding and the loss as layers: 128 units over 8 x 8 chunks */
    sc__tf_defaults(&c);
    c.layers = 126, c.pp = 8, c.vp = 8, c.pp_embedding = 1;
    sum = 0;
    for (uint32_t s = 0; s < c.pp; s++)
        for (uint32_t k = 0; k < c.vp; k++) sum += sc__tf_chunk_layers(&c, s, k);
    assert_int_equal(sum, 126);
    assert_int_equal(sc__tf_chunk_layers(&c, 0, 0), 1);
    assert_int_equal(sc__tf_chunk_layers(&c, 0, 1), 2);
    assert_int_equal(sc__tf_chunk_layers(&c, 7, 7), 1);
    assert_int_equal(sc__tf_stage_layers(&c, 3), 16);
}

static void test_bad_splits(void **state) {
    (void)state;
    sc_test_model_bad((const char *[]){"preset", "llama3-405b", "pp", "16", NULL}, "--pp-first-layers");
    sc_test_model_bad((const char *[]){"preset", "llama3-405b", "pp", "16", "pp-first-layers", "8", "pp-last-layers", "7", NULL},
                      "not divisible by the 14 other stages");
    sc_test_model_bad((const char *[]){"preset", "llama3-405b", "pp", "16", "vp", "2", "pp-first-layers", "7", "pp-last-layers", "7", NULL},
                      "needs vp 1");
    sc_test_model_bad((const char *[]){"preset", "llama3-405b", "pp", "2", "pp-first-layers", "100", "pp-last-layers", "30", NULL},
                      "do not leave");
    sc_test_model_bad((const char *[]){"preset", "llama3-405b", "pp", "5", "pp-embedding", "true", NULL}, "layers + 2");
    sc_test_model_bad((const char *[]){"preset", "llama3-405b", "pp", "16", "pp-embedding", "true", "pp-first-layers", "7", NULL},
                      "not both");
}

#define LLAMA405_16K                                                                                              \
    "preset", "llama3-405b", "pp-first-layers", "7", "pp-last-layers", "7", "tp", "8", "sp", "true", "cp", "16", \
        "pp", "16", "dp", "8", "seq", "131072", "mbs", "1", "gbs", "128", "gpu", "h100", "nodes", "2048"

/* Meta's long-context run of Llama 3 405B: 16,384 GPUs simulate within the
 * bar (10 s; measured 0.04 s and 21 MiB on the 2-core machine), the first
 * and last stages with 7 layers. */
static void test_llama405_16k(void **state) {
    (void)state;
    sc_model *m = sc_test_model_run((const char *[]){LLAMA405_16K, NULL});
    sc_model_summary s = sc_model_get_summary(m);
    assert_int_equal(s.gpus, 16384);
    assert_true(s.simulate_s <= 10);
    assert_true(s.step_ns > 0);
    char *j = write_of(m, 1);
    assert_non_null(strstr(j, "\"pp_first_layers\":7,\"pp_last_layers\":7"));
    free(j);
    sc_model_free(m);
}

/* The tied embedding's gradient is all-reduced between the first and the
 * last stage (each holds a copy) before the optimizer; untied, or with one
 * stage, there is nothing to reduce. */
static void test_tied_allreduce(void **state) {
    (void)state;
#define SMALL_PP "preset", "gpt3-5b", "pp", "4", "dp", "2", "gbs", "16", "gpu", "h100"
    sc_model *tied = sc_test_model_run((const char *[]){SMALL_PP, "tied", "true", NULL});
    sc_model *untied = sc_test_model_run((const char *[]){SMALL_PP, NULL});
    sc_model *one = sc_test_model_run((const char *[]){"preset", "gpt3-5b", "gbs", "8", "gpu", "h100", "tied", "true", NULL});
    size_t n = 0;
    FILE *f;
    char *buf = NULL;
    size_t len = 0;
    f = open_memstream(&buf, &len);
    sc_error err;
    assert_int_equal(sc_replay_write_chrome(sc_model_replay(tied), f, &err), SC_OK);
    fclose(f);
    for (const char *p = buf; (p = strstr(p, "\"name\":\"tied_embedding_grad_all_reduce\"")); p++) n++;
    assert_int_equal(n, 2); /* one on the first stage, one on the last */
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(sc_replay_write_chrome(sc_model_replay(untied), f, &err), SC_OK);
    fclose(f);
    assert_null(strstr(buf, "tied_embedding_grad_all_reduce"));
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(sc_replay_write_chrome(sc_model_replay(one), f, &err), SC_OK);
    fclose(f);
    assert_null(strstr(buf, "tied_embedding_grad_all_reduce"));
    free(buf);
    /* the reduce costs time: the tied step is not shorter */
    assert_true(sc_model_get_summary(tied).step_ns >= sc_model_get_summary(untied).step_ns);
    sc_model_free(tied), sc_model_free(untied), sc_model_free(one);
}

/* --chrome on a modelled step: valid JSON with the simulated lanes and no
 * empty "measured" lane (a model has no trace to measure). */
static void test_chrome(void **state) {
    (void)state;
    sc_model *m = sc_test_model_run((const char *[]){"preset", "gpt3-5b", "pp", "2", "dp", "2", "gbs", "8", "gpu", "h100", NULL});
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sc_error err;
    assert_int_equal(sc_replay_write_chrome(sc_model_replay(m), f, &err), SC_OK);
    fclose(f);
    assert_true(len > 100);
    assert_true(buf[0] == '{' || buf[0] == '[');
    assert_non_null(strstr(buf, "simulated"));
    assert_null(strstr(buf, "measured"));
    assert_non_null(strstr(buf, "\"name\":\"qkv\""));
    assert_non_null(strstr(buf, "\"name\":\"pp_send\""));
    /* brackets and braces balance outside strings */
    int depth = 0;
    bool in = false;
    for (size_t i = 0; i < len; i++) {
        char ch = buf[i];
        if (in) {
            if (ch == '\\') i++;
            else if (ch == '"') in = false;
            continue;
        }
        if (ch == '"') in = true;
        else if (ch == '{' || ch == '[') depth++;
        else if (ch == '}' || ch == ']') assert_true(--depth >= 0);
    }
    assert_int_equal(depth, 0);
    free(buf);
    sc_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_layers), cmocka_unit_test(test_bad_splits),    cmocka_unit_test(test_llama405_16k),
        cmocka_unit_test(test_tied_allreduce), cmocka_unit_test(test_chrome),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
