/*
 * test_model_dispatch.c - how `stepcast model` sends MoE tokens to their
 * experts: the expected fan-out of a token under balanced (and group-
 * limited) routing, the deduplicating dispatchers (DeepEP, HybridEP)
 * against the plain all-to-all, and the configurations refused.
 */
#include "testutil.h"
#include "testmodel.h"

#include "graph/graph.h"
#include "models/transformer.h"

#include <math.h>

/* C(E - b, k) / C(E, k), the chance k of E miss a bin of b: the reference
 * values below are 1 minus it, written out. */
static double miss(double E, double b, double k) {
    double q = 1;
    for (double i = 0; i < k; i++) q *= (E - b - i) / (E - i);
    return q;
}

static void moe_config(sc__tf_config *c, uint32_t experts, uint32_t topk, uint32_t ep, uint32_t groups, uint32_t gk) {
    sc__tf_defaults(c);
    c->layers = 4, c->hidden = 1024, c->heads = 8, c->vocab = 32000, c->seq = 2048, c->sp = 1;
    c->experts = experts, c->topk = topk, c->ep = ep, c->dp = ep, c->etp = 1;
    c->router_groups = groups, c->router_group_topk = gk;
    char why[256];
    assert_true(sc__tf_resolve(c, why, sizeof why));
}

/* DeepSeek-V3's routing over EP 64 on 8 nodes: top-8 of 256 reaches 8 (1 -
 * C(224,8)/C(256,8)) = 5.29 nodes and 7.68 GPUs; limited to 4 of 8 groups
 * (a node each), 4 (1 - C(96,8)/C(128,8)) = 3.63 nodes, and a GPU is hit
 * when its group is chosen and one of its 4 experts drawn: 64 x 1/2 x (1 -
 * C(124,8)/C(128,8)) = 7.36. EP inside one node: one node. */
static void test_fanout(void **state) {
    (void)state;
    sc__tf_config c;
    double nodes, gpus;
    moe_config(&c, 256, 8, 64, 0, 0);
    sc__tf_dispatch_fanout(&c, 8, &nodes, &gpus);
    assert_true(fabs(nodes - 8 * (1 - miss(256, 32, 8))) < 1e-9);
    assert_true(fabs(nodes - 5.2947) < 1e-3);
    assert_true(fabs(gpus - 64 * (1 - miss(256, 4, 8))) < 1e-9);
    moe_config(&c, 256, 8, 64, 8, 4);
    sc__tf_dispatch_fanout(&c, 8, &nodes, &gpus);
    assert_true(fabs(nodes - 4 * (1 - miss(128, 32, 8))) < 1e-9);
    assert_true(fabs(nodes - 3.6290) < 1e-3);
    assert_true(fabs(gpus - 32 * (1 - miss(128, 4, 8))) < 1e-9);
    /* two groups a node: hypergeometric over how many of the node's two
     * are among the 4 chosen of 16 */
    moe_config(&c, 256, 8, 64, 16, 4);
    sc__tf_dispatch_fanout(&c, 8, &nodes, &gpus);
    double p1 = 2.0 * 364 / 1820, p2 = 1.0 * 91 / 1820; /* C(2,1)C(14,3), C(2,2)C(14,2) over C(16,4) */
    assert_true(fabs(nodes - 8 * (p1 * (1 - miss(64, 16, 8)) + p2 * (1 - miss(64, 32, 8)))) < 1e-9);
    /* 5 nodes of 51.2 experts each straddle groups of 32: counted as
     * unlimited routing, and never more than top-k or the nodes */
    moe_config(&c, 256, 8, 64, 8, 4);
    sc__tf_dispatch_fanout(&c, 5, &nodes, &gpus);
    assert_true(fabs(nodes - fmin(5, 5 * (1 - miss(256, 256.0 / 5, 8)))) < 1e-9);
    /* a GPU's 12 experts against groups of 8 (Megatron accepts it): the
     * same; a top-1 token reaches one GPU */
    moe_config(&c, 96, 1, 8, 12, 1);
    sc__tf_dispatch_fanout(&c, 1, &nodes, &gpus);
    assert_true(fabs(gpus - 1) < 1e-9 && fabs(nodes - 1) < 1e-12);
    moe_config(&c, 96, 4, 8, 12, 2);
    sc__tf_dispatch_fanout(&c, 1, &nodes, &gpus);
    assert_true(fabs(gpus - 8 * (1 - miss(96, 12, 4))) < 1e-9);
    moe_config(&c, 64, 1, 8, 0, 0);
    sc__tf_dispatch_fanout(&c, 2, &nodes, &gpus);
    assert_true(fabs(gpus - 1) < 1e-12 && fabs(nodes - 1) < 1e-12);
    moe_config(&c, 128, 8, 8, 0, 0);
    sc__tf_dispatch_fanout(&c, 1, &nodes, &gpus);
    assert_true(fabs(nodes - 1) < 1e-12);
    assert_true(fabs(gpus - 8 * (1 - miss(128, 16, 8))) < 1e-9);
}

/* The all-to-alls are marked for the deduplicating dispatchers only. */
static void test_ops_marked(void **state) {
    (void)state;
    for (uint8_t d = 0; d < 3; d++) {
        sc__tf_config c;
        moe_config(&c, 64, 4, 8, 0, 0);
        c.dispatcher = d;
        sc__vec v;
        sc__vec_init(&v, sizeof(sc__tf_op));
        assert_true(sc__tf_layer_ops(&c, SC__PH_BWD, &v));
        size_t n = 0;
        for (size_t i = 0; i < v.len; i++) {
            const sc__tf_op *op = (const sc__tf_op *)v.data + i;
            if (op->coll != SC_C_ALL_TO_ALL) continue;
            n++;
            assert_int_equal(op->dedup, d != 0);
        }
        assert_int_equal(n, 2);
        sc__vec_free(&v);
    }
}

/* Across nodes DeepEP moves a top-8 token over the network to the ~2
 * nodes it reaches rather than 8 times: the step is shorter, HybridEP the
 * same; inside one node it still saves the copies to the same GPU. */
#define QWEN "preset", "qwen3-30b-a3b", "layers", "8", "tp", "1", "mbs", "1", "gbs", "16", "dtype", "fp8"
static void test_dedup_faster(void **state) {
    (void)state;
    const char *kv2[] = {QWEN, "dp", "16", "ep", "16", NULL};
    double a2a = sc_test_model_step(kv2, NULL);
    const char *kd[] = {QWEN, "dp", "16", "ep", "16", "moe-dispatcher", "deepep", NULL};
    const char *kh[] = {QWEN, "dp", "16", "ep", "16", "moe-dispatcher", "hybridep", NULL};
    double deep = sc_test_model_step(kd, NULL), hyb = sc_test_model_step(kh, NULL);
    print_message("qwen3-30b, 8 layers, EP 16 on 2 nodes: all-to-all %.1f ms, DeepEP %.1f ms\n", a2a * 1e3, deep * 1e3);
    assert_true(deep < 0.9 * a2a);
    assert_true(hyb == deep);
    const char *k8[] = {QWEN, "dp", "8", "ep", "8", NULL};
    const char *k8d[] = {QWEN, "dp", "8", "ep", "8", "moe-dispatcher", "deepep", NULL};
    assert_true(sc_test_model_step(k8d, NULL) < sc_test_model_step(k8, NULL));
}

static void test_refused(void **state) {
    (void)state;
    sc_test_model_bad((const char *[]){QWEN, "dp", "8", "moe-dispatcher", "deepep", NULL},
                      "moe-dispatcher deepep needs expert parallelism (ep 1)");
    sc_test_model_bad((const char *[]){"preset", "llama3-8b", "moe-router-num-groups", "8", "moe-router-group-topk", "4", NULL},
                      "moe-router-num-groups 8 needs experts");
    sc_test_model_bad((const char *[]){QWEN, "moe-router-num-groups", "8", NULL}, "go together");
    sc_test_model_bad((const char *[]){QWEN, "moe-router-num-groups", "5", "moe-router-group-topk", "1", NULL},
                      "experts 128 are not divisible by moe-router-num-groups 5");
    sc_test_model_bad((const char *[]){QWEN, "moe-router-num-groups", "8", "moe-router-group-topk", "9", NULL},
                      "moe-router-group-topk 9 exceeds moe-router-num-groups 8");
    sc_test_model_bad((const char *[]){QWEN, "moe-router-num-groups", "64", "moe-router-group-topk", "2", NULL},
                      "topk 8 exceeds the 4 experts of the chosen groups");
    sc_model_config *c;
    sc_error err;
    assert_int_equal(sc_model_config_new(&c, &err), SC_OK);
    assert_int_equal(sc_model_config_set(c, "moe-dispatcher", "nccl", &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "moe-dispatcher"));
    sc_model_config_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fanout),
        cmocka_unit_test(test_ops_marked),
        cmocka_unit_test(test_dedup_faster),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
