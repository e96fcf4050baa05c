/*
 * test_model_recipe.c - two recipe settings of `stepcast model`: the
 * gradients' dtype (--grad-reduce-in-fp32: the main-grad buffer, every
 * data-parallel reduction of it, its zeroing and its memory in 4 or 2
 * bytes a parameter, and the optimizer's fp32 copy of its shard when 2)
 * and the loss's implementation (--cross-entropy-fusion none|native|te:
 * the bytes each moves an element of the logits, as transformer.c counts
 * them from Megatron-core's and TransformerEngine's source).
 */
#include "testutil.h"
#include "testmodel.h"

#include "models/transformer.h"
#include "pipeline/model.h"

#include <math.h>

/* A small dense model on 8 data-parallel GPUs. */
static void small(sc__tf_config *c) {
    sc__tf_defaults(c);
    c->layers = 4, c->hidden = 1024, c->heads = 8, c->vocab = 32000, c->seq = 1024, c->gated = 1, c->dp = 8;
    char why[256];
    assert_true(sc__tf_resolve(c, why, sizeof why));
}

/* The bytes of the first op named `name` in v; -1 if none. */
static double op_bytes(const sc__vec *v, const char *name) {
    const sc__tf_op *op = v->data;
    for (size_t i = 0; i < v->len; i++)
        if (!strcmp(op[i].name, name)) return op[i].coll == SC__TF_KERNEL ? op[i].k.bytes : (double)op[i].bytes;
    return -1;
}

static double optimizer_op(const sc__tf_config *c, double params, const char *name) {
    sc__vec v;
    sc__vec_init(&v, sizeof(sc__tf_op));
    assert_true(sc__tf_optimizer_ops(c, params, 0, &v));
    double b = op_bytes(&v, name);
    sc__vec_free(&v);
    return b;
}

/* The bytes of op `name` among a phase's ops of one layer or the head. */
typedef bool (*phase_ops)(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out);
static double phase_op(phase_ops ops, const sc__tf_config *c, sc__tf_phase ph, const char *name) {
    sc__vec v;
    sc__vec_init(&v, sizeof(sc__tf_op));
    assert_true(ops(c, ph, &v));
    double b = op_bytes(&v, name);
    sc__vec_free(&v);
    return b;
}
#define layer_op(c, ph, name) phase_op(sc__tf_layer_ops, c, ph, name)
#define head_op(c, ph, name) phase_op(sc__tf_head_ops, c, ph, name)

/* The summed message sizes of the collectives named `name` in the graph
 * of kv's model, and how many there are. */
static double graph_bytes(const char *const *kv, const char *name, size_t *count) {
    sc_model *m = sc_test_model_run(kv);
    const sc__graph *g = m->r->g;
    const sc__task *t = sc__graph_tasks(g);
    const sc__group *gr = g->groups.data;
    double sum = 0;
    size_t n = 0;
    for (uint32_t i = 0; i < g->tasks.len; i++) {
        if (t[i].group == SC__NONE || strcmp(sc__graph_str(g, t[i].name), name) != 0) continue;
        sum += (double)gr[t[i].group].bytes;
        n++;
    }
    sc_model_free(m);
    *count = n;
    return sum;
}

static void test_grad_buffer_and_optimizer(void **state) {
    (void)state;
    sc__tf_config a, b;
    small(&a);
    b = a;
    b.grad_fp32 = 0;
    assert_true(sc__tf_grad_bytes(&a) == 4 && sc__tf_grad_bytes(&b) == 2);
    double p = sc__tf_stage_params(&a, 0), local = p / 8;
    /* the whole local buffer zeroed in half the bytes */
    assert_true(fabs(optimizer_op(&a, p, "zero_grad_buffer") - p * 4) < 1);
    assert_true(fabs(optimizer_op(&b, p, "zero_grad_buffer") - p * 2) < 1);
    /* the fp32 copy of the shard only for 16-bit main grads: read 2, write 4 */
    assert_true(optimizer_op(&a, p, "main_grad_cast") < 0);
    assert_true(fabs(optimizer_op(&b, p, "main_grad_cast") - local * 6) < 1);
    /* the norm and Adam then read fp32 gradients either way */
    assert_true(optimizer_op(&a, p, "grad_norm") == optimizer_op(&b, p, "grad_norm"));
    assert_true(optimizer_op(&a, p, "adam") == optimizer_op(&b, p, "adam"));
    /* memory held for gradients halves; weights and optimizer state stay */
    sc__tf_memory ma, mb;
    sc__tf_stage_memory(&a, 0, &ma);
    sc__tf_stage_memory(&b, 0, &mb);
    assert_true(fabs(mb.grads * 2 - ma.grads) < 1 && ma.grads > 0);
    assert_true(ma.weights == mb.weights && ma.optimizer == mb.optimizer);
    /* FSDP: the per-layer reduce-scatter and the sharded buffer */
    a.fsdp = b.fsdp = 1;
    double fa = layer_op(&a, SC__PH_BWD, "fsdp_reduce_scatter"), fb = layer_op(&b, SC__PH_BWD, "fsdp_reduce_scatter");
    assert_true(fa > 0 && fabs(fb * 2 - fa) < 2);
    sc__tf_stage_memory(&a, 0, &ma);
    sc__tf_stage_memory(&b, 0, &mb);
    assert_true(fabs(mb.grads * 2 - ma.grads) < 1);
    /* LoRA: the adapters' gradients only, in the same dtype */
    a.fsdp = b.fsdp = 0;
    a.lora_rank = b.lora_rank = 16;
    sc__tf_stage_memory(&a, 0, &ma);
    sc__tf_stage_memory(&b, 0, &mb);
    assert_true(ma.grads > 0 && fabs(mb.grads * 2 - ma.grads) < 1);
}

#define DENSE "layers", "4", "hidden", "1024", "heads", "8", "vocab", "32000", "seq", "1024", "gated", "true"

static void test_grad_reduction_bytes(void **state) {
    (void)state;
    size_t na, nb;
    /* overlapped bucket by bucket, and all at once after the backward */
    for (int overlap = 0; overlap < 2; overlap++) {
        const char *ov = overlap ? "true" : "false";
        double a = graph_bytes((const char *[]){DENSE, "dp", "8", "overlap-grad-reduce", ov, NULL}, "dp_grad_reduce_scatter", &na);
        double b = graph_bytes((const char *[]){DENSE, "dp", "8", "overlap-grad-reduce", ov, "grad-reduce-in-fp32", "false", NULL},
                               "dp_grad_reduce_scatter", &nb);
        assert_true(na > 0 && na == nb);
        assert_true(fabs(b * 2 - a) <= 2.0 * (double)na);
    }
    /* the experts' buffer over the expert-data-parallel group */
#define MOE DENSE, "experts", "8", "topk", "2", "tp", "2", "sp", "true", "etp", "1", "dp", "8", "ep", "4", "gbs", "16"
    double a = graph_bytes((const char *[]){MOE, NULL}, "edp_grad_reduce_scatter", &na);
    double b = graph_bytes((const char *[]){MOE, "grad-reduce-in-fp32", "false", NULL}, "edp_grad_reduce_scatter", &nb);
    assert_true(na > 0 && na == nb && fabs(b * 2 - a) <= 2.0 * (double)na);
#undef MOE
    /* the tied embedding's gradient between the first and last stage */
#define TIED DENSE, "tied", "true", "pp", "2", "gbs", "8"
    a = graph_bytes((const char *[]){TIED, NULL}, "tied_embedding_grad_all_reduce", &na);
    b = graph_bytes((const char *[]){TIED, "grad-reduce-in-fp32", "false", NULL}, "tied_embedding_grad_all_reduce", &nb);
    assert_true(na > 0 && na == nb && fabs(b * 2 - a) <= 2.0 * (double)na);
#undef TIED
    /* less to move and zero: the step can only get shorter */
    double sa = sc_test_model_step((const char *[]){DENSE, "dp", "8", "overlap-grad-reduce", "false", NULL}, NULL);
    double sb = sc_test_model_step((const char *[]){DENSE, "dp", "8", "overlap-grad-reduce", "false", "grad-reduce-in-fp32", "false", NULL}, NULL);
    assert_true(sb < sa);
}

static void test_cross_entropy_fusion(void **state) {
    (void)state;
    sc__tf_config c;
    small(&c);
    c.tp = 2, c.sp = 1, c.dp = 4;
    char why[256];
    assert_true(sc__tf_resolve(&c, why, sizeof why));
    /* b s x V/t logits on this GPU */
    double logits = (double)c.mbs * c.seq * c.vocab / c.tp;
    /* the passes each implementation's source makes (transformer.c) */
    static const double fwd[3] = {38, 30, 6}, bwd[3] = {14, 18, 4};
    double total[3];
    for (uint8_t i = 0; i < 3; i++) {
        c.ce_fusion = i;
        double f = head_op(&c, SC__PH_FWD, "cross_entropy"), b = head_op(&c, SC__PH_BWD, "cross_entropy_bwd");
        assert_true(fabs(f - logits * fwd[i]) < 1 && fabs(b - logits * bwd[i]) < 1);
        assert_true(sc__tf_ce_bytes(&c, false) == fwd[i] && sc__tf_ce_bytes(&c, true) == bwd[i]);
        total[i] = f + b;
        /* the loss all-reduce of the b s partial sums is the same */
        c.ce_fusion = 0;
        double r0 = head_op(&c, SC__PH_FWD, "tp_loss_all_reduce");
        c.ce_fusion = i;
        assert_true(head_op(&c, SC__PH_FWD, "tp_loss_all_reduce") == r0);
    }
    /* fused costs less than unfused, TransformerEngine's least */
    assert_true(total[SC__CE_NATIVE] < total[SC__CE_NONE] && total[SC__CE_TE] < total[SC__CE_NATIVE]);
    /* and the step follows */
#define CE DENSE, "tp", "2", "sp", "true", "dp", "4"
    double none = sc_test_model_step((const char *[]){CE, NULL}, NULL);
    double native = sc_test_model_step((const char *[]){CE, "cross-entropy-fusion", "native", NULL}, NULL);
    double te = sc_test_model_step((const char *[]){CE, "cross-entropy-fusion", "te", NULL}, NULL);
    assert_true(te < native && native < none);
#undef CE
    sc_model_config *mc = sc_test_model_cfg((const char *[]){DENSE, NULL});
    sc_error err;
    assert_int_equal(sc_model_config_set(mc, "cross-entropy-fusion", "fused", &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "cross-entropy-fusion"));
    assert_int_equal(sc_model_config_set(mc, "grad_reduce_in_fp32", "maybe", &err), SC_E_USAGE);
    sc_model_config_free(mc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grad_buffer_and_optimizer),
        cmocka_unit_test(test_grad_reduction_bytes),
        cmocka_unit_test(test_cross_entropy_fusion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
