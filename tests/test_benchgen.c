/*
 * test_benchgen.c - benchmark generation from Execution Traces
 * (src/pipeline/benchgen.c, src/report/benchgen_report.c).
 *
 * The op schema parser; the Megatron rank 0 ET with its Kineto trace (at
 * least 98% of its leaf ops replayable, collectives and streams found);
 * bad input (no Kineto trace, the Kineto trace of another job, an unknown
 * schema: said, and the program still written for the rest); and the
 * generated program itself on the 8 DLRM ranks, run on the CPU with 8
 * gloo processes when python3 has torch (Debian's python3-torch; skipped,
 * saying so, when it has not): it must run to the end with every traced
 * collective executed with its traced size (tests/benchgen_check.py).
 */
#include "testutil.h"

#include "pipeline/benchgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static sc_et *load_et(const char *rel) {
    sc_error err;
    sc_et *et;
    char path[4096];
    snprintf(path, sizeof path, "%s", strncmp(rel, "tests/", 6) == 0 ? rel : sc_test_trace(rel));
    if (sc_et_load(path, &et, &err) != SC_OK) fail_msg("%s: %s", path, err.message);
    return et;
}

static sc_trace *load_kineto(const char *rel) {
    sc_error err;
    sc_trace *k;
    if (sc_trace_load(strncmp(rel, "tests/", 6) == 0 ? rel : sc_test_trace(rel), NULL, &k, &err) != SC_OK) fail_msg("%s: %s", rel, err.message);
    return k;
}

static void test_schema(void **state) {
    (void)state;
    sc__bg_schema s;
    assert_true(sc__bg_parse_schema("aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, "
                                    "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
                                    &s));
    assert_int_equal(s.nparams, 6);
    assert_int_equal(s.kwonly, 2);
    assert_int_equal(s.overload.n, 0);
    assert_memory_equal(s.op.s, "empty_strided", 13);
    assert_memory_equal(s.name[2].s, "dtype", 5);
    assert_memory_equal(s.type[2].s, "ScalarType?", 11);
    assert_true(sc__bg_parse_schema("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                                    "ScalarType? dtype=None) -> Tensor",
                                    &s));
    assert_memory_equal(s.overload.s, "dim_IntList", 11);
    assert_int_equal(s.nparams, 4);
    assert_int_equal(s.kwonly, 3);
    assert_memory_equal(s.type[1].s, "int[1]?", 7);
    assert_true(sc__bg_parse_schema("fbgemm::permute_2D_sparse_data(Tensor permute, Tensor lengths, Tensor values, "
                                    "Tensor? weights=None, SymInt? permuted_lengths_sum=None) -> (Tensor, Tensor, Tensor?)",
                                    &s));
    assert_memory_equal(s.ns.s, "fbgemm", 6);
    assert_int_equal(s.nparams, 5);
    assert_int_equal(s.kwonly, 5);
    assert_false(sc__bg_parse_schema("", &s));
    assert_false(sc__bg_parse_schema("not a schema", &s));
    assert_false(sc__bg_parse_schema("aten::mm(Tensor self, Tensor", &s));
    sc__span it[8];
    assert_int_equal(sc__bg_json_items("[[1, 2, 0, 8, 4, \"cuda:0\"], \"a,]\", [], 3]", it, 8), 4);
    assert_int_equal(it[1].n, 5);
    assert_int_equal(sc__bg_json_items("{}", it, 8), -1);
}

static void test_megatron_coverage(void **state) {
    (void)state;
    sc_et *et = load_et("megatron-tp8-a100/megatron_et_0.json.gz");
    sc_trace *k = load_kineto("megatron-tp8-a100/megatron_kineto_0.json.gz");
    sc__bg_rank r;
    sc_error err;
    assert_int_equal(sc__bg_rank_build(&r, et, k, 0, -1, &err), SC_OK);
    const uint64_t *lk = r.leaves_by_kind;
    uint64_t run = lk[SC__BG_CALL] + lk[SC__BG_COLL] + lk[SC__BG_WAIT] + lk[SC__BG_EMULATED];
    print_message("megatron rank 0: %llu leaf ops, %llu run (%llu emulated), %llu markers, %llu skipped; "
                  "GPU ops %llu of %llu inside replayed ops\n",
                  (unsigned long long)r.leaves, (unsigned long long)run, (unsigned long long)lk[SC__BG_EMULATED],
                  (unsigned long long)lk[SC__BG_MARKER], (unsigned long long)lk[SC__BG_SKIP],
                  (unsigned long long)r.kernels_covered, (unsigned long long)r.kernels_total);
    uint64_t sum = 0;
    for (int i = 0; i < SC__BG_KINDS; i++) sum += lk[i];
    assert_int_equal(sum, r.leaves);                     /* every leaf covered by one unit */
    assert_true(r.leaves > 3000);
    assert_true((run + lk[SC__BG_MARKER]) * 100 >= r.leaves * 98); /* the bar */
    assert_true(lk[SC__BG_EMULATED] <= 120 && lk[SC__BG_MARKER] <= 120);
    assert_false(r.kineto_mismatch);
    assert_int_equal(r.main_stream, 7);
    /* 85 all-reduces (2 per layer + 5 more) and one wait each */
    size_t coll = 0, wait = 0;
    const sc__bg_unit *u = r.units.data;
    for (size_t i = 0; i < r.units.len; i++) coll += u[i].kind == SC__BG_COLL, wait += u[i].kind == SC__BG_WAIT;
    assert_int_equal(coll, 85);
    assert_int_equal(wait, 85);
    const sc__bg_comm *c = r.comms.data;
    assert_int_equal(c[0].group_size, 8);
    assert_int_equal(c[0].in_elems, 33554432);
    assert_int_equal(c[0].elem_size, 2);
    assert_true(r.kernels_total > 600 && r.kernels_covered * 10 > r.kernels_total * 7);
    sc__bg_rank_free(&r);
    sc_trace_free(k);
    sc_et_free(et);
}

/* The report of a build (static buffer). */
static const char *report(const sc_benchgen *bg, int json) {
    static char buf[1 << 16];
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    sc_error err;
    assert_int_equal(sc_benchgen_write(bg, f, json, &err), SC_OK);
    fclose(f);
    return buf;
}

static bool has_warning(const sc_benchgen *bg, const char *what) {
    for (size_t i = 0; i < sc_benchgen_warning_count(bg); i++)
        if (strstr(sc_benchgen_warning(bg, i), what)) return true;
    return false;
}

static void test_bad_input(void **state) {
    (void)state;
    sc_et *et = load_et("megatron-tp8-a100/megatron_et_0.json.gz");
    sc_trace *other = load_kineto("param-dlrm-8rank/kineto/worker0_step_12.1694128201545.pt.trace.json");
    const sc_et *ets[] = {et};
    int64_t ranks[] = {0};
    sc_error err;
    sc_benchgen *bg;
    /* no Kineto trace: said; the ops are all still there, on no stream */
    const sc_trace *none[] = {NULL};
    assert_int_equal(sc_benchgen_build(ets, none, ranks, 1, NULL, &bg, &err), SC_OK);
    assert_true(has_warning(bg, "no Kineto trace of rank 0"));
    assert_non_null(strstr(report(bg, 1), "\"replayable_pct\": 100.00"));
    sc_benchgen_free(bg);
    /* the Kineto trace of another job (and so another iteration): said, not used */
    const sc_trace *ks[] = {other};
    assert_int_equal(sc_benchgen_build(ets, ks, ranks, 1, NULL, &bg, &err), SC_OK);
    assert_true(has_warning(bg, "is not of this ET's iteration"));
    assert_true(bg->ranks[0].kineto_mismatch);
    assert_int_equal(bg->ranks[0].main_stream, -1);
    sc_benchgen_free(bg);
    sc_trace_free(other);
    sc_et_free(et);
    /* an unknown op schema and a leaf without one: skipped, counted, the rest kept */
    static const char mini[] =
        "{\"schema\": \"1.0.1\", \"nodes\": ["
        "{\"name\": \"[pytorch|profiler|execution_trace|thread]\", \"id\": 2, \"parent\": 1, \"op_schema\": \"\","
        " \"inputs\": [], \"input_shapes\": [], \"input_types\": [], \"outputs\": [], \"output_shapes\": [], \"output_types\": []},"
        "{\"name\": \"aten::mm\", \"id\": 3, \"parent\": 2, \"op_schema\": \"aten::mm(Tensor self, Tensor mat2) -> Tensor\","
        " \"inputs\": [[10, 11, 0, 4, 4, \"cpu\"], [12, 13, 0, 4, 4, \"cpu\"]], \"input_shapes\": [[2, 2], [2, 2]],"
        " \"input_types\": [\"Tensor(float)\", \"Tensor(float)\"], \"outputs\": [[14, 15, 0, 4, 4, \"cpu\"]],"
        " \"output_shapes\": [[2, 2]], \"output_types\": [\"Tensor(float)\"]},"
        "{\"name\": \"my::op\", \"id\": 4, \"parent\": 2, \"op_schema\": \"my::op(Tensor self\","
        " \"inputs\": [[14, 15, 0, 4, 4, \"cpu\"]], \"input_shapes\": [[2, 2]], \"input_types\": [\"Tensor(float)\"],"
        " \"outputs\": [], \"output_shapes\": [], \"output_types\": []},"
        "{\"name\": \"mystery\", \"id\": 5, \"parent\": 2, \"op_schema\": \"\","
        " \"inputs\": [[14, 15, 0, 4, 4, \"cpu\"]], \"input_shapes\": [[2, 2]], \"input_types\": [\"Tensor(float)\"],"
        " \"outputs\": [], \"output_shapes\": [], \"output_types\": []}]}";
    const char *path = sc_test_tmpfile(mini, sizeof mini - 1, ".json");
    assert_int_equal(sc_et_load(path, &et, &err), SC_OK);
    ets[0] = et;
    assert_int_equal(sc_benchgen_build(ets, none, ranks, 1, NULL, &bg, &err), SC_OK);
    assert_true(has_warning(bg, "1 leaf ops skipped: operator schema does not parse (e.g. my::op)"));
    assert_true(has_warning(bg, "1 leaf ops skipped: no operator schema (e.g. mystery)"));
    assert_int_equal(bg->ranks[0].leaves_by_kind[SC__BG_CALL], 1);
    assert_int_equal(bg->ranks[0].leaves_by_kind[SC__BG_SKIP], 2);
    char data[8192];
    FILE *f = fmemopen(data, sizeof data - 1, "w");
    assert_int_equal(sc_benchgen_write_data(bg, f, &err), SC_OK);
    fclose(f);
    assert_non_null(strstr(data, "\"target\": [\"aten\", \"mm\", \"default\"]"));
    assert_null(strstr(data, "my::op"));
    sc_benchgen_free(bg);
    sc_et_free(et);
}

/* A python3 that has torch, or NULL. */
static const char *python_with_torch(void) {
    static const char *const cands[] = {"python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "%s -c 'import torch.distributed' >/dev/null 2>&1", cands[i]);
        if (system(cmd) == 0) return cands[i];
    }
    return NULL;
}

static sc_status write_to(const char *path, const sc_benchgen *bg,
                          sc_status (*w)(const sc_benchgen *, FILE *, sc_error *)) {
    sc_error err;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    sc_status st = w(bg, f, &err);
    fclose(f);
    return st;
}

/* The 8 DLRM ranks on the CPU, 8 gloo processes: one warm-up, one timed
 * and one profiled iteration (scripts/benchgen_dlrm_cpu.sh runs more). */
/* The unit of the first node named name, NULL when none. */
static const sc__bg_unit *unit_named(const sc__bg_rank *r, const char *name) {
    const sc__bg_unit *u = r->units.data;
    const sc__et_node *n = r->et->nodes.data;
    for (size_t i = 0; i < r->units.len; i++)
        if (strcmp(sc__intern_str(&r->et->strings, n[u[i].node].name), name) == 0) return &u[i];
    return NULL;
}

/* torch 2.11's ET of the tiny GPT holds ProfilerStep#3 to #5 (the observer
 * ran through the profiler's active cycle): one step is replayed, the last
 * complete one by default; the autograd engine's backward ops of that step
 * (another thread) come with it; aten ops that launch their own kernels
 * under allocating children (layer norm, attention, loss, embedding
 * backward) run whole, so every GPU op of the step is inside a replayed op. */
static void test_h100_iteration(void **state) {
    (void)state;
    sc_et *et = load_et("tests/data/h100-gpt/tiny/rank0.et.json.gz");
    sc_trace *k = load_kineto("tests/data/h100-gpt/tiny/rank0.trace.json.gz");
    sc__bg_rank r, r3;
    sc_error err;
    assert_int_equal(sc__bg_rank_build(&r, et, k, 0, -1, &err), SC_OK);
    assert_int_equal(r.step, 5);
    assert_int_equal(r.et_steps[0], 3);
    assert_int_equal(r.et_steps[1], 5);
    assert_int_equal(r.kineto_steps[1], 5);
    assert_false(r.kineto_mismatch);
    print_message("tiny step 5: %llu leaf ops, GPU ops %llu of %llu inside replayed ops, %u run whole\n",
                  (unsigned long long)r.leaves, (unsigned long long)r.kernels_covered,
                  (unsigned long long)r.kernels_total, r.whole_ops);
    assert_true(r.leaves > 1000 && r.leaves < 1300); /* one step of three (3367 leaves in all) */
    assert_int_equal(r.comms.len, 3);                 /* one DDP all-reduce per bucket */
    assert_true(r.kernels_total > 250);
    assert_int_equal(r.kernels_covered, r.kernels_total);
    static const char *const whole[] = {"aten::native_layer_norm_backward", "aten::nll_loss_backward",
                                        "aten::embedding_dense_backward", "aten::_cudnn_attention_backward"};
    for (size_t i = 0; i < 4; i++) {
        const sc__bg_unit *u = unit_named(&r, whole[i]);
        if (!u || u->kind != SC__BG_CALL || u->kernels == 0) fail_msg("%s is not a call with kernels", whole[i]);
    }
    assert_int_equal(sc__bg_rank_build(&r3, et, k, 0, 3, &err), SC_OK);
    assert_int_equal(r3.step, 3);
    assert_int_equal(r3.leaves, r.leaves);
    assert_int_equal(r3.kernels_covered, r3.kernels_total);
    sc__bg_rank_free(&r3);
    sc__bg_rank r9; /* a failed build frees what it made */
    assert_int_equal(sc__bg_rank_build(&r9, et, k, 0, 9, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "no ProfilerStep#9 in this execution trace (it has #3 to #5)"));
    /* a Kineto trace of another iteration: said, the step still replayed */
    char path[4096];
    snprintf(path, sizeof path, "%s/stepcast_test_benchgen_step7.json", sc_test_tmpdir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#7\", "
          "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 10}]}\n", f);
    fclose(f);
    sc_trace *other;
    assert_int_equal(sc_trace_load(path, NULL, &other, &err), SC_OK);
    const sc_et *ets[] = {et};
    const sc_trace *ks[] = {other};
    int64_t ranks[] = {0};
    sc_benchgen *bg;
    assert_int_equal(sc_benchgen_build(ets, ks, ranks, 1, NULL, &bg, &err), SC_OK);
    assert_true(has_warning(bg, "has no ProfilerStep#5 (it has #7 to #7): the ET is from another iteration"));
    assert_true(bg->ranks[0].kineto_mismatch);
    assert_int_equal(bg->ranks[0].leaves, r.leaves);
    assert_non_null(strstr(report(bg, 0), "ProfilerStep#5 (the ET has #3 to #5, the Kineto trace #7 to #7): not in"));
    sc_benchgen_free(bg);
    sc_trace_free(other);
    remove(path);
    sc__bg_rank_free(&r);
    sc_trace_free(k);
    sc_et_free(et);
}

static void test_dlrm_cpu_run(void **state) {
    (void)state;
    const char *py = python_with_torch();
    if (!py) {
        print_message("SKIPPED: no python3 with torch (apt-get install python3-torch): the generated DLRM "
                      "program was not run\n");
        skip();
    }
    sc_et *ets[8];
    sc_trace *ks[8];
    int64_t ranks[8];
    static const char *const kfiles[8] = {
        "worker0_step_12.1694128201545.pt.trace.json", "worker1_step_12.1694128201556.pt.trace.json",
        "worker2_step_12.1694128201554.pt.trace.json", "worker3_step_12.1694128201557.pt.trace.json",
        "worker4_step_12.1694128201547.pt.trace.json", "worker5_step_12.1694128201549.pt.trace.json",
        "worker6_step_12.1694128201553.pt.trace.json", "worker7_step_12.1694128201553.pt.trace.json"};
    for (int i = 0; i < 8; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "param-dlrm-8rank/et/dlrm_eg_%d.json", i);
        ets[i] = load_et(rel);
        snprintf(rel, sizeof rel, "param-dlrm-8rank/kineto/%s", kfiles[i]);
        ks[i] = load_kineto(rel);
        ranks[i] = i;
    }
    sc_benchgen_options o = {.device_cpu = 1, .shrink = 2, .iterations = 1, .iteration = -1};
    sc_error err;
    sc_benchgen *bg;
    assert_int_equal(sc_benchgen_build((const sc_et *const *)ets, (const sc_trace *const *)ks, ranks, 8, &o, &bg, &err),
                     SC_OK);
    char dir[4096], path[4200], cmd[16384];
    snprintf(dir, sizeof dir, "%s/benchgen-dlrm", sc_test_tmpdir());
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/bench_ops.json", dir);
    assert_int_equal(write_to(path, bg, sc_benchgen_write_data), SC_OK);
    snprintf(path, sizeof path, "%s/bench.py", dir);
    assert_int_equal(write_to(path, bg, sc_benchgen_write_program), SC_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    snprintf(cmd, sizeof cmd,
             "cd %s && timeout 300 %s bench.py --nproc 8 --warmup 1 --iterations 1 --trace-dir traces > run.txt 2>&1",
             dir, py);
    int rc = system(cmd);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    print_message("DLRM 8 ranks on the CPU (gloo, --shrink 2): exit %d after %.1f s\n", rc, secs);
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "tail -20 %s/run.txt", dir);
        (void)system(cmd);
    }
    assert_int_equal(rc, 0);
    snprintf(cmd, sizeof cmd, "%s tests/benchgen_check.py %s/bench_ops.json %s/traces 8", py, dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/traces/rank0.trace.json", dir);
    struct stat sb;
    if (stat(path, &sb) != 0) print_message("note: torch wrote no profiler trace here (see %s/run.txt)\n", dir);
    assert_true(secs < 120);
    sc_benchgen_free(bg);
    for (int i = 0; i < 8; i++) {
        sc_trace_free(ks[i]);
        sc_et_free(ets[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_megatron_coverage),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_h100_iteration),
        cmocka_unit_test(test_dlrm_cpu_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
