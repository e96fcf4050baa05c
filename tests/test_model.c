/*
 * test_model.c - `stepcast model`: the pipeline schedules (order, and the
 * bubble that comes out of the simulation with equal stages), the
 * bucketed overlap of the parameter all-gather, layers of different kinds
 * (dense among experts, sliding windows), hybrid patterns (their
 * parsing, kinds and the Mamba-2 counts), bad
 * configurations (one clear line), --config and --preset giving identical
 * output and the sweep (the published step times the model is judged on
 * are in test_model_published.c).
 */
#include "testutil.h"

#include "models/transformer.h"
#include "transforms/pipeline_schedule.h"

#include <math.h>

static sc_model_config *cfg(const char *const *kv) {
    sc_model_config *c;
    sc_error err;
    assert_int_equal(sc_model_config_new(&c, &err), SC_OK);
    for (size_t i = 0; kv[i]; i += 2) {
        sc_status st = !strcmp(kv[i], "preset") ? sc_model_config_preset(c, kv[i + 1], &err)
                                               : sc_model_config_set(c, kv[i], kv[i + 1], &err);
        if (st != SC_OK) fprintf(stderr, "%s\n", err.message);
        assert_int_equal(st, SC_OK);
    }
    return c;
}

static double step_of(const char *const *kv, sc_model_summary *out) {
    sc_model_config *c = cfg(kv);
    sc_model *m;
    sc_error err;
    sc_status st = sc_model_run(c, &m, &err);
    if (st != SC_OK) fprintf(stderr, "%s\n", err.message);
    assert_int_equal(st, SC_OK);
    sc_model_summary s = sc_model_get_summary(m);
    if (out) *out = s;
    sc_model_free(m);
    sc_model_config_free(c);
    return (double)s.step_ns * 1e-9;
}

static void test_schedule_order(void **state) {
    (void)state;
    sc__pp_unit u[64];
    /* 1F1B, 4 stages, 8 micro-batches: stage 0 warms up with 3 forwards. */
    size_t n = sc__pp_schedule(SC__PP_1F1B, 4, 8, 1, 0, u);
    assert_int_equal(n, 16);
    for (int k = 0; k < 3; k++) assert_int_equal(u[k].backward, 0);
    assert_int_equal(u[3].backward, 0);
    assert_int_equal(u[4].backward, 1);
    assert_int_equal(u[4].micro, 0);
    /* The last stage alternates from the start. */
    n = sc__pp_schedule(SC__PP_1F1B, 4, 8, 1, 3, u);
    assert_int_equal(u[0].backward, 0);
    assert_int_equal(u[1].backward, 1);
    /* Interleaved: every (micro, chunk) once forward and once backward. */
    n = sc__pp_schedule(SC__PP_INTERLEAVED, 4, 8, 2, 1, u);
    assert_int_equal(n, 32);
    int seen[8][2][2] = {{{0}}};
    for (size_t i = 0; i < n; i++) seen[u[i].micro][u[i].chunk][u[i].backward]++;
    for (int m = 0; m < 8; m++)
        for (int c = 0; c < 2; c++) assert_true(seen[m][c][0] == 1 && seen[m][c][1] == 1);
    assert_non_null(sc__pp_check(SC__PP_INTERLEAVED, 4, 6, 2));
    assert_null(sc__pp_check(SC__PP_1F1B, 4, 6, 1));
}

/* Equal stages (a tiny vocabulary, no host cost, one GPU per stage): the
 * simulated bubble is (P-1)/(M+P-1) of the step for 1F1B, and with V
 * virtual stages (P-1)/V over M + (P-1)/V. */
static void test_bubble(void **state) {
    (void)state;
    const char *kv[] = {"layers", "32", "hidden", "8192", "heads", "64", "vocab", "8", "seq", "4096", "host-us", "0",
                        "pp", "4", "gbs", "8", "vp", "1", "gpu", "a100-80gb", NULL};
    sc_model_summary s;
    step_of(kv, &s);
    double want = 3.0 / (8 + 3);
    assert_true(fabs(s.bubble - want) <= 0.05 * want + 0.005);
    kv[15] = "16";
    kv[17] = "2";
    step_of(kv, &s);
    want = 1.5 / (16 + 1.5);
    assert_true(fabs(s.bubble - want) <= 0.05 * want + 0.005);
}

/* The distributed optimizer's parameter all-gather, overlapped, runs
 * bucket by bucket under the first forward (each bucket's gather issued
 * when the previous bucket's layers start), so one micro-batch hides most
 * of it; gathered whole before the forward it would hide none. */
static void test_param_gather_buckets(void **state) {
    (void)state;
    const char *kv[] = {"layers", "32", "hidden", "4096", "heads", "32", "seq", "4096", "vocab", "32000", "dp", "64",
                        "nodes", "8", "gbs", "64", "gpu", "h100", "overlap-grad-reduce", "false",
                        "overlap-param-gather", "true", NULL};
    double overlapped = step_of(kv, NULL);
    kv[21] = "false";
    double after = step_of(kv, NULL);
    assert_true(overlapped < 0.95 * after);
}

static void expect_bad(const char *const *kv, const char *words) {
    sc_model_config *c = cfg(kv);
    sc_model *m;
    sc_error err;
    assert_int_equal(sc_model_run(c, &m, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, words));
    assert_null(strchr(err.message, '\n'));
    sc_model_config_free(c);
}

static void test_bad_configs(void **state) {
    (void)state;
    expect_bad((const char *[]){"preset", "gpt3-175b", "tp", "5", NULL}, "not divisible by tp");
    expect_bad((const char *[]){"preset", "gpt3-175b", "pp", "7", NULL}, "not divisible by pp x vp");
    expect_bad((const char *[]){"preset", "gpt3-175b", "dp", "3", "gbs", "64", NULL}, "not divisible by dp x mbs");
    sc_model_config *c = cfg((const char *[]){NULL});
    sc_error err;
    assert_int_equal(sc_model_config_preset(c, "gpt-9", &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "unknown preset"));
    assert_int_equal(sc_model_config_set(c, "tp", "x", &err), SC_E_USAGE);
    sc_model_config_free(c);
}

/* Mixture of experts: the configurations it refuses, a head dimension
 * given equal to hidden / heads changing nothing, and model FLOPs a token
 * counting the top-k expert FFNs, the router and the shared experts. */
static double flops_per_token(const char *const *kv) {
    sc_model_summary s;
    step_of(kv, &s);
    return s.model_tflops_per_gpu * 1e12 / s.tokens_per_s_per_gpu;
}

#define MOE_BASE "layers", "4", "hidden", "1024", "heads", "8", "vocab", "32000", "seq", "1024", "gated", "true"
static void test_moe(void **state) {
    (void)state;
    expect_bad((const char *[]){MOE_BASE, "experts", "8", "tp", "4", "etp", "2", NULL}, "must be 1 or tp");
    expect_bad((const char *[]){MOE_BASE, "experts", "8", "tp", "2", "etp", "1", "sp", "false", NULL}, "sequence parallelism");
    expect_bad((const char *[]){MOE_BASE, "experts", "8", "tp", "2", "etp", "1", "sp", "true", "dp", "2", "ep", "8", NULL},
               "must divide tp x dp x cp");
    double a = step_of((const char *[]){MOE_BASE, NULL}, NULL);
    double b = step_of((const char *[]){MOE_BASE, "head-dim", "128", NULL}, NULL);
    assert_true(a == b);
    assert_true(step_of((const char *[]){MOE_BASE, "head-dim", "256", NULL}, NULL) > a);
    /* per token: 3 x (2 h (g + 1) f k + 2 h E) per layer against 3 x 2 h (g + 1) (k f) */
    double h = 1024, L = 4, g = 2;
    double dense = flops_per_token((const char *[]){MOE_BASE, "ffn", "2048", NULL});
    double moe = flops_per_token((const char *[]){MOE_BASE, "experts", "8", "topk", "2", "moe-ffn", "1024", NULL});
    assert_true(fabs(moe - dense - 3 * L * 2 * h * 8) < 1e-6 * dense);
    double shared = flops_per_token(
        (const char *[]){MOE_BASE, "experts", "8", "topk", "2", "moe-ffn", "1024", "shared-ffn", "512", NULL});
    assert_true(fabs(shared - moe - 3 * L * 2 * h * (g + 1) * 512) < 1e-6 * dense);
}

/* Layers that differ: which layers are dense or windowed (Megatron's
 * 1-based window_attn_skip_freq), a windowed flash kernel's FLOPs (w -
 * w^2/2s keys a query), parameters summed over the kinds, a window as long
 * as the sequence changing nothing, and what is refused. */
/* The forward ops of layers of kind `kind` of c, into v (the caller frees it). */
static void kind_fwd_ops(const sc__tf_config *c, uint8_t kind, sc__vec *v) {
    sc__tf_config kc;
    sc__tf_kind_config(c, kind, &kc);
    sc__vec_init(v, sizeof(sc__tf_op));
    assert_true(sc__tf_layer_ops(&kc, SC__PH_FWD, v));
}

static double flash_fwd_flops(const sc__tf_config *c, uint8_t kind) {
    sc__vec v;
    kind_fwd_ops(c, kind, &v);
    double f = -1;
    const sc__tf_op *op = v.data;
    for (size_t i = 0; i < v.len; i++)
        if (!strcmp(op[i].name, "flash_attn_fwd")) f = op[i].k.flops;
    sc__vec_free(&v);
    return f;
}

static void test_layer_kinds(void **state) {
    (void)state;
    sc__tf_config c;
    sc__tf_defaults(&c);
    c.layers = 8, c.hidden = 1024, c.heads = 8, c.vocab = 32000, c.seq = 4096, c.gated = 1;
    c.experts = 8, c.topk = 2, c.moe_ffn = 512, c.dense_layers = 3, c.window = 128, c.window_skip = 2;
    char why[256];
    assert_true(sc__tf_resolve(&c, why, sizeof why));
    assert_int_equal(sc__tf_layer_kind(&c, 0), SC__TFK_DENSE | SC__TFK_WINDOW);
    assert_int_equal(sc__tf_layer_kind(&c, 1), SC__TFK_DENSE);
    assert_int_equal(sc__tf_layer_kind(&c, 2), SC__TFK_DENSE | SC__TFK_WINDOW);
    assert_int_equal(sc__tf_layer_kind(&c, 3), 0);
    assert_int_equal(sc__tf_layer_kind(&c, 6), SC__TFK_WINDOW);
    /* T = 4096 tokens, q = 1024: full causal 4 T (s/2) q, windowed 4 T (w - w^2/2s) q */
    assert_true(flash_fwd_flops(&c, 0) == 4.0 * 4096 * 2048 * 1024);
    assert_true(flash_fwd_flops(&c, SC__TFK_WINDOW) == 4.0 * 4096 * (128 - 128.0 * 128 / 8192) * 1024);
    /* 3 dense layers and 5 with experts, each counted as its kind */
    sc__tf_config dense, moe;
    sc__tf_kind_config(&c, SC__TFK_DENSE, &dense);
    sc__tf_kind_config(&c, 0, &moe);
    assert_true(sc__tf_layer_params(&dense) != sc__tf_layer_params(&moe));
    double emb = 2.0 * c.vocab * c.hidden + 2.0 * c.hidden;
    assert_true(fabs(sc__tf_model_params(&c) - (3 * sc__tf_layer_params(&dense) + 5 * sc__tf_layer_params(&moe) + emb)) < 1);
    c.pp = 2;
    assert_true(sc__tf_resolve(&c, why, sizeof why));
    assert_int_equal(sc__tf_chunk_first_layer(&c, 1), 4);
    double stages = sc__tf_stage_params(&c, 0) + sc__tf_stage_params(&c, 1);
    assert_true(fabs(stages - (3 * sc__tf_layer_params_gpu(&dense) + 5 * sc__tf_layer_params_gpu(&moe) + emb - 2.0 * c.hidden)) < 1);
    /* through the whole model */
    double full = step_of((const char *[]){MOE_BASE, "seq", "4096", NULL}, NULL);
    assert_true(step_of((const char *[]){MOE_BASE, "seq", "4096", "window", "4096", NULL}, NULL) == full);
    double windowed = step_of((const char *[]){MOE_BASE, "seq", "4096", "window", "128", NULL}, NULL);
    double half = step_of((const char *[]){MOE_BASE, "seq", "4096", "window", "128", "window-skip", "2", NULL}, NULL);
    assert_true(windowed < half && half < full);
    expect_bad((const char *[]){MOE_BASE, "window-skip", "2", NULL}, "needs a window");
    expect_bad((const char *[]){MOE_BASE, "dense-layers", "1", NULL}, "need experts");
    expect_bad((const char *[]){MOE_BASE, "experts", "8", "dense-layers", "4", NULL}, "must leave some");
}

/* Hybrid patterns (Megatron's hybrid_override_pattern): a character not
 * one of M * - E refused at once with one line naming it and its layer,
 * the pattern's length taken as the layers, and what resolve refuses. */
static void expect_bad_pattern(const char *pattern, const char *words) {
    sc_model_config *c = cfg((const char *[]){NULL});
    sc_error err;
    assert_int_equal(sc_model_config_set(c, "hybrid-pattern", pattern, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, words));
    assert_null(strchr(err.message, '\n'));
    sc_model_config_free(c);
}

#define HYB_BASE "hidden", "256", "heads", "4", "vocab", "1000", "seq", "1024"
static void test_hybrid_pattern(void **state) {
    (void)state;
    expect_bad_pattern("MEx*", "'x' (layer 3) is not one of Megatron's symbols M (Mamba-2), * (attention), - (MLP), E (MoE)");
    expect_bad_pattern("M M", "' ' (layer 2)");
    expect_bad_pattern("M/M", "'/' (layer 2)"); /* multi-token prediction's separator: not modelled */
    expect_bad_pattern("", "hybrid-pattern of 0 layers");
    char longp[300];
    memset(longp, 'M', 299);
    longp[299] = '\0';
    expect_bad_pattern(longp, "hybrid-pattern of 299 layers");
    sc_model_config *c = cfg((const char *[]){"hybrid-pattern", "M*-E", NULL});
    sc_model_config_free(c);
    /* the layers are the pattern's length */
    sc__tf_config t;
    sc__tf_defaults(&t);
    t.hidden = 256, t.heads = 4, t.vocab = 1000, t.seq = 1024;
    snprintf(t.hybrid, sizeof t.hybrid, "M*M-");
    char why[256];
    assert_true(sc__tf_resolve(&t, why, sizeof why));
    assert_int_equal(t.layers, 4);
    /* Megatron's defaults: d_inner = 2 hidden in heads of 64, state 128, 8 groups, chunk 128 */
    assert_int_equal(t.mamba_heads, 8);
    assert_int_equal(t.mamba_head_dim, 64);
    assert_int_equal(t.mamba_state, 128);
    assert_int_equal(t.mamba_groups, 8);
    assert_int_equal(t.mamba_chunk, 128);
    expect_bad((const char *[]){HYB_BASE, "hybrid-pattern", "M*M-", "layers", "6", NULL}, "layers 6, but the hybrid pattern has 4");
    expect_bad((const char *[]){HYB_BASE, "hybrid-pattern", "M*ME", NULL}, "MoE layers ('E') but no experts");
    expect_bad((const char *[]){HYB_BASE, "hybrid-pattern", "M*M-", "mamba-heads", "6", "mamba-groups", "4", NULL},
               "mamba-heads 6 are not divisible by mamba-groups 4");
    expect_bad((const char *[]){HYB_BASE, "hybrid-pattern", "M*M-", "mamba-groups", "2", "tp", "4", NULL},
               "mamba-groups 2 are not divisible by tp 4");
    expect_bad((const char *[]){HYB_BASE, "hybrid-pattern", "M*M-", "mamba-chunk", "100", NULL}, "not divisible by mamba-chunk 100");
    expect_bad((const char *[]){HYB_BASE, "hybrid-pattern", "M*ME", "experts", "4", "dense-layers", "1", NULL},
               "with a hybrid pattern");
    expect_bad((const char *[]){HYB_BASE, "hybrid-pattern", "M*M-", "cp", "2", NULL}, "cp 2 with Mamba layers is not modelled");
}

/* The ops of one kind's forward: whether it has op `name`. */
static bool kind_has(const sc__tf_config *c, uint8_t kind, const char *name) {
    sc__vec v;
    kind_fwd_ops(c, kind, &v);
    bool found = false;
    const sc__tf_op *op = v.data;
    for (size_t i = 0; i < v.len; i++) found |= !strcmp(op[i].name, name);
    sc__vec_free(&v);
    return found;
}

/* A hybrid's kinds: each character's blocks, a '-' layer dense among
 * experts, windows on attention layers only; each kind's program holds its
 * blocks' kernels and no other's; and a pattern of attention and MLP
 * layers is the transformer of half as many layers, kernel for kernel. */
static void test_hybrid_kinds(void **state) {
    (void)state;
    sc__tf_config c;
    sc__tf_defaults(&c);
    c.hidden = 256, c.heads = 4, c.vocab = 1000, c.seq = 1024, c.experts = 4, c.topk = 2;
    snprintf(c.hybrid, sizeof c.hybrid, "M*-E");
    char why[256];
    assert_true(sc__tf_resolve(&c, why, sizeof why));
    assert_int_equal(sc__tf_layer_kind(&c, 0), SC__TFK_MAMBA | SC__TFK_NO_MLP);
    assert_int_equal(sc__tf_layer_kind(&c, 1), SC__TFK_NO_MLP);
    assert_int_equal(sc__tf_layer_kind(&c, 2), SC__TFK_NO_MIXER | SC__TFK_DENSE);
    assert_int_equal(sc__tf_layer_kind(&c, 3), SC__TFK_NO_MIXER);
    assert_int_equal(sc__tf_hybrid_kind('-', false), SC__TFK_NO_MIXER);
    assert_int_equal(sc__tf_hybrid_kind('?', false), 0xff);
    c.window = 128;
    assert_int_equal(sc__tf_layer_kind(&c, 0), SC__TFK_MAMBA | SC__TFK_NO_MLP);
    assert_int_equal(sc__tf_layer_kind(&c, 1), SC__TFK_NO_MLP | SC__TFK_WINDOW);
    assert_int_equal(sc__tf_layer_kind(&c, 3), SC__TFK_NO_MIXER);
    c.window = 0;
    uint8_t M = SC__TFK_MAMBA | SC__TFK_NO_MLP, A = SC__TFK_NO_MLP, D = SC__TFK_NO_MIXER | SC__TFK_DENSE, E = SC__TFK_NO_MIXER;
    assert_true(kind_has(&c, M, "mamba_in_proj") && kind_has(&c, M, "ssd_chunk_scan") && kind_has(&c, M, "mamba_out_proj"));
    assert_true(!kind_has(&c, M, "qkv") && !kind_has(&c, M, "moe_router") && !kind_has(&c, M, "mlp_fc1"));
    assert_true(kind_has(&c, A, "qkv") && !kind_has(&c, A, "mamba_in_proj") && !kind_has(&c, A, "moe_router"));
    assert_true(kind_has(&c, D, "mlp_fc1") && !kind_has(&c, D, "qkv") && !kind_has(&c, D, "moe_router"));
    assert_true(kind_has(&c, E, "moe_router") && !kind_has(&c, E, "qkv") && !kind_has(&c, E, "mlp_fc1"));
    /* "*-*-" runs what 2 attention + MLP layers run */
    double tf = step_of((const char *[]){HYB_BASE, "layers", "2", NULL}, NULL);
    double hy = step_of((const char *[]){HYB_BASE, "hybrid-pattern", "*-*-", NULL}, NULL);
    assert_true(tf == hy);
    assert_true(step_of((const char *[]){HYB_BASE, "hybrid-pattern", "M-M-", NULL}, NULL) != hy);
}

/* A Mamba-2 layer's counts on a small mixer (hidden 256, 8 heads of 64,
 * state 16, 2 groups, chunk 128), by hand: parameters (in_proj 256 x
 * (2 x 512 + 2 x 32 + 8), conv1d (512 + 64) x (4 + 1), dt_bias, A_log, D,
 * the norm's 512, out_proj 512 x 256), the same split by tp beside the
 * layer's norm, Megatron's mamba_layer_flops a token (d_in = 2 hidden),
 * the SSD kernels' products a token (2 x 2 H P N + 2 G Q N + H P Q) halved
 * by tp 2, in_proj's GEMM width, and the model FLOPs of "M*" through a
 * whole run. */
static double ssd_flops(const sc__tf_config *c) {
    sc__vec v;
    kind_fwd_ops(c, SC__TFK_MAMBA | SC__TFK_NO_MLP, &v);
    double f = 0;
    const sc__tf_op *op = v.data;
    for (size_t i = 0; i < v.len; i++) {
        if (!strncmp(op[i].name, "ssd_", 4)) f += op[i].k.flops;
        if (!strcmp(op[i].name, "mamba_in_proj")) assert_int_equal(op[i].k.n, (2 * 512 + 2 * 32 + 8) / c->tp);
    }
    sc__vec_free(&v);
    return f;
}

static void test_mamba_counts(void **state) {
    (void)state;
    sc__tf_config c;
    sc__tf_defaults(&c);
    c.hidden = 256, c.heads = 4, c.vocab = 1000, c.seq = 1024;
    c.mamba_heads = 8, c.mamba_head_dim = 64, c.mamba_state = 16, c.mamba_groups = 2;
    snprintf(c.hybrid, sizeof c.hybrid, "M*");
    char why[256];
    assert_true(sc__tf_resolve(&c, why, sizeof why));
    double mixer = 256.0 * 1096 + 576 * 5 + 24 + 512 + 512 * 256;
    assert_true(sc__tf_mamba_params(&c) == mixer);
    sc__tf_config kc;
    sc__tf_kind_config(&c, SC__TFK_MAMBA | SC__TFK_NO_MLP, &kc);
    assert_true(sc__tf_layer_params(&kc) == mixer + 2 * 256);
    assert_true(sc__tf_mamba_flops(&c) == 2.0 * 256 * (1024 + 64 + 8) + 7.0 * 512 * 16 + 2.0 * 512 * 256);
    double per_token = 4.0 * 8 * 64 * 16 + 2.0 * 2 * 128 * 16 + 8.0 * 64 * 128;
    assert_true(ssd_flops(&c) == 1024 * per_token);
    c.tp = 2;
    sc__tf_kind_config(&c, SC__TFK_MAMBA | SC__TFK_NO_MLP, &kc);
    assert_true(sc__tf_layer_params_gpu(&kc) == mixer / 2 + 2 * 256);
    assert_true(ssd_flops(&c) == 1024 * per_token / 2);
    /* M then *: 3 x (mamba + attention 4 q (h + h kv/a + s/2) + 2 h V) a token */
    double want = 3 * (sc__tf_mamba_flops(&c) + 4.0 * 256 * (256 + 256 + 512) + 2.0 * 256 * 1000);
    double got = flops_per_token((const char *[]){HYB_BASE, "hybrid-pattern", "M*", "mamba-heads", "8", "mamba-state", "16",
                                                  "mamba-groups", "2", NULL});
    assert_true(fabs(got - want) < 1e-6 * want);
}

static char *report(sc_model_config *c) {
    sc_model *m;
    sc_error err;
    assert_int_equal(sc_model_run(c, &m, &err), SC_OK);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_int_equal(sc_model_write(m, f, 1, &err), SC_OK);
    fclose(f);
    sc_model_free(m);
    return buf;
}

static void test_config_equals_preset(void **state) {
    (void)state;
    /* in the temporary folder: a clean checkout has no build/ folder when
     * a sanitizer build (build-asan...) runs this */
    static const char json[] = "{\"name\":\"llama3-8b\",\"layers\":32,\"hidden\":4096,\"ffn\":14336,\"heads\":32,"
                               "\"kv_heads\":8,\"vocab\":128256,\"seq\":8192,\"gated\":true,\"rope\":true,\"tp\":2,\"sp\":true,"
                               "\"dp\":4,\"gbs\":32}";
    char path[256];
    const char *tmp = sc_test_tmpfile(json, sizeof json - 1, ".json");
    assert_non_null(tmp);
    snprintf(path, sizeof path, "%s", tmp);
    sc_model_config *a = cfg((const char *[]){"preset", "llama3-8b", "tp", "2", "sp", "true", "dp", "4", "gbs", "32", NULL});
    sc_model_config *b = cfg((const char *[]){NULL});
    sc_error err;
    assert_int_equal(sc_model_config_load(b, path, &err), SC_OK);
    char *ra = report(a), *rb = report(b);
    assert_string_equal(ra, rb);
    free(ra);
    free(rb);
    FILE *g = fopen(path, "w");
    assert_non_null(g);
    fputs("{\"layers\":32,\"wings\":2}", g);
    fclose(g);
    assert_int_equal(sc_model_config_load(b, path, &err), SC_E_FORMAT);
    assert_non_null(strstr(err.message, "unknown field 'wings'"));
    sc_model_config_free(a);
    sc_model_config_free(b);
    remove(path);
}

static void test_sweep(void **state) {
    (void)state;
    sc_model_config *c = cfg((const char *[]){"preset", "gpt3-175b", "nodes", "128", "gbs", "1536", "gpu", "a100-80gb",
                                              "recompute", "full", NULL});
    const char *keys[] = {"tp", "pp"}, *lists[] = {"4,8", "8,16"};
    sc_model_sweep *s;
    sc_error err;
    assert_int_equal(sc_model_sweep_run(c, keys, lists, 2, &s, &err), SC_OK);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_int_equal(sc_model_sweep_write(s, f, 0, &err), SC_OK);
    fclose(f);
    assert_non_null(strstr(buf, "4 configurations"));
    free(buf);
    sc_model_sweep_free(s);
    sc_model_config_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule_order),   cmocka_unit_test(test_bubble),
        cmocka_unit_test(test_param_gather_buckets),
        cmocka_unit_test(test_bad_configs),      cmocka_unit_test(test_config_equals_preset),
        cmocka_unit_test(test_sweep),            cmocka_unit_test(test_moe), cmocka_unit_test(test_layer_kinds),
        cmocka_unit_test(test_hybrid_pattern), cmocka_unit_test(test_hybrid_kinds), cmocka_unit_test(test_mamba_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
