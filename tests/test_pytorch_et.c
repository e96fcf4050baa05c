/*
 * test_pytorch_et.c - PyTorch Execution Traces: reading both schema
 * families, tensor data dependencies, and the link with Kineto.
 *
 * Real files: the Megatron and DLRM ETs with their Kineto traces (neither
 * Kineto trace has record-function ids, so the link goes by order; the
 * shapes each side recorded must then agree). A hand-made 1.1.x ET with a
 * Kineto trace that carries "Record function id" checks the rf_id link.
 */
#include "testutil.h"

#include <stdio.h>

/* Runs sc_et_write as JSON and returns the text (static buffer). */
static const char *report_json(const sc_et *et, const sc_trace *k) {
    static char buf[8192];
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    sc_error err;
    assert_int_equal(sc_et_write(et, k, f, 1, &err), SC_OK);
    fclose(f);
    return buf;
}

static long long field(const char *json, const char *name) {
    char key[128];
    snprintf(key, sizeof key, "\"%s\": ", name);
    const char *p = strstr(json, key);
    if (!p) fail_msg("no %s in %s", name, json);
    return strtoll(p + strlen(key), NULL, 10);
}

static void check_real(const char *et_rel, const char *kineto_rel, long long nodes, double min_agree) {
    sc_error err;
    sc_et *et;
    char et_path[4096];
    snprintf(et_path, sizeof et_path, "%s", sc_test_trace(et_rel));
    assert_int_equal(sc_et_load(et_path, &et, &err), SC_OK);
    sc_trace *k;
    assert_int_equal(sc_trace_load(sc_test_trace(kineto_rel), NULL, &k, &err), SC_OK);
    const char *j = report_json(et, k);
    assert_non_null(strstr(j, "\"schema\": \"1.0.1\""));
    assert_int_equal(field(j, "nodes"), nodes);
    assert_true(field(j, "tensor_data_deps") > 1000);
    assert_non_null(strstr(j, "\"link_method\": \"order\""));
    long long ops = field(j, "kineto_cpu_ops"), linked = field(j, "linked");
    assert_true(ops > 1000);
    assert_int_equal(linked, ops); /* every Kineto cpu_op found its ET node */
    long long cmp = field(j, "shapes_compared"), agree = field(j, "shapes_agree");
    print_message("%s: %lld/%lld cpu_ops linked, shapes agree on %lld of %lld\n", et_rel, linked, ops,
                  agree, cmp);
    assert_true(cmp > 1000);
    assert_true((double)agree >= min_agree * (double)cmp);
    sc_trace_free(k);
    sc_et_free(et);
}

static void test_megatron(void **state) {
    (void)state;
    check_real("megatron-tp8-a100/megatron_et_0.json.gz", "megatron-tp8-a100/megatron_kineto_0.json.gz",
               5424, 0.99);
}

static void test_dlrm(void **state) {
    (void)state;
    check_real("param-dlrm-8rank/et/dlrm_eg_0.json",
               "param-dlrm-8rank/kineto/worker0_step_12.1694128201545.pt.trace.json", 1675, 0.95);
}

/* Schema 1.1.x: ctrl_deps, inputs/outputs objects, attrs; linked by rf_id. */
static void test_schema_11_rf_id(void **state) {
    (void)state;
    static const char et_json[] =
        "{\"schema\": \"1.1.1-chakra.0.0.4\", \"pid\": 1, \"nodes\": [\n"
        " {\"id\": 1, \"name\": \"[pytorch|profiler|execution_trace|process]\", \"ctrl_deps\": 0,\n"
        "  \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []},\n"
        "  \"outputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"attrs\": []},\n"
        " {\"id\": 3, \"name\": \"aten::mm\", \"ctrl_deps\": 1,\n"
        "  \"inputs\": {\"values\": [[10,11,0,6,4,\"cuda:0\"],[12,13,0,12,4,\"cuda:0\"]],\n"
        "             \"shapes\": [[2,3],[3,4]], \"types\": [\"Tensor(float)\",\"Tensor(float)\"]},\n"
        "  \"outputs\": {\"values\": [[14,15,0,8,4,\"cuda:0\"]], \"shapes\": [[2,4]], \"types\": [\"Tensor(float)\"]},\n"
        "  \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 7},\n"
        "            {\"name\": \"tid\", \"type\": \"uint64\", \"value\": 1}]},\n"
        " {\"id\": 5, \"name\": \"aten::relu\", \"ctrl_deps\": 1,\n"
        "  \"inputs\": {\"values\": [[14,15,0,8,4,\"cuda:0\"]], \"shapes\": [[2,4]], \"types\": [\"Tensor(float)\"]},\n"
        "  \"outputs\": {\"values\": [[16,17,0,8,4,\"cuda:0\"]], \"shapes\": [[2,4]], \"types\": [\"Tensor(float)\"]},\n"
        "  \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 9}]},\n"
        " {\"id\": 6, \"name\": \"aten::cat\", \"ctrl_deps\": 1,\n"
        "  \"inputs\": {\"values\": [[[14,15,0,8,4,\"cuda:0\"],[16,17,0,8,4,\"cuda:0\"]], 0],\n"
        "             \"shapes\": [[[2,4],[2,4]],[]], \"types\": [\"GenericList[Tensor(float),Tensor(float)]\",\"Int\"]},\n"
        "  \"outputs\": {\"values\": [], \"shapes\": [], \"types\": []},\n"
        "  \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 11}]}\n"
        "]}\n";
    /* Kineto: mm and relu carry rf ids; a third op matches no ET node. */
    static const char kineto_json[] =
        "{\"traceEvents\": [\n"
        " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 3,\n"
        "  \"args\": {\"Record function id\": 9, \"Input Dims\": [[2, 4]]}},\n"
        " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5,\n"
        "  \"args\": {\"Record function id\": 7, \"Input Dims\": [[2, 3], [3, 4]]}},\n"
        " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 1, \"ts\": 30, \"dur\": 1,\n"
        "  \"args\": {\"Record function id\": 99}}\n"
        "]}\n";
    char et_path[512];
    snprintf(et_path, sizeof et_path, "%s", sc_test_tmpfile(et_json, sizeof et_json - 1, ".json"));
    const char *kp = sc_test_tmpfile(kineto_json, sizeof kineto_json - 1, ".json");
    sc_error err;
    sc_et *et;
    assert_int_equal(sc_et_load(et_path, &et, &err), SC_OK);
    sc_trace *k;
    assert_int_equal(sc_trace_load(kp, NULL, &k, &err), SC_OK);
    const char *j = report_json(et, k);
    assert_non_null(strstr(j, "\"schema\": \"1.1.1-chakra.0.0.4\""));
    assert_int_equal(field(j, "nodes"), 4);
    assert_int_equal(field(j, "ops"), 3);
    /* relu reads mm's output; cat reads both (through a tensor list). */
    assert_int_equal(field(j, "tensor_data_deps"), 3);
    assert_non_null(strstr(j, "\"link_method\": \"rf_id\""));
    assert_int_equal(field(j, "kineto_cpu_ops"), 3);
    assert_int_equal(field(j, "kineto_with_rf_id"), 3);
    assert_int_equal(field(j, "linked"), 2);
    assert_int_equal(field(j, "et_ops_linked"), 2);
    assert_int_equal(field(j, "shapes_compared"), 2);
    assert_int_equal(field(j, "shapes_agree"), 2);
    /* The linked ops, in Kineto file order: relu (ET 5) then mm (ET 3). */
    static char ops[4096];
    FILE *f = fmemopen(ops, sizeof ops - 1, "w");
    assert_non_null(f);
    assert_int_equal(sc_et_write_ops(et, k, 10, f, 1, &err), SC_OK);
    fclose(f);
    const char *relu = strstr(ops, "\"name\": \"aten::relu\""), *mm = strstr(ops, "\"name\": \"aten::mm\"");
    assert_non_null(relu);
    assert_non_null(mm);
    assert_true(relu < mm);
    assert_non_null(strstr(relu, "\"et_id\": 5, \"rf_id\": 9"));
    assert_non_null(strstr(mm, "\"input_shapes\": [[2,3],[3,4]]"));
    assert_null(strstr(ops, "aten::add"));
    sc_trace_free(k);
    sc_et_free(et);
    unlink(et_path);
    unlink(kp);
}

static void test_errors(void **state) {
    (void)state;
    sc_error err;
    sc_et *et;
    static const char not_et[] = "{\"schema\": \"1.0.1\", \"pid\": 7}";
    const char *p = sc_test_tmpfile(not_et, sizeof not_et - 1, ".json");
    assert_int_equal(sc_et_load(p, &et, &err), SC_E_FORMAT);
    assert_non_null(strstr(err.message, "nodes"));
    unlink(p);
    /* A Kineto trace is refused at its "traceEvents" key, not after it. */
    assert_int_equal(sc_et_load(sc_test_trace("megatron-tp8-a100/megatron_kineto_0.json.gz"), &et, &err),
                     SC_E_FORMAT);
    assert_non_null(strstr(err.message, "Kineto trace"));
    assert_true(err.offset < 1000000);
    static const char cut[] = "{\"schema\": \"1.0.1\", \"nodes\": [{\"id\": 1, \"name\": \"x\"";
    p = sc_test_tmpfile(cut, sizeof cut - 1, ".json");
    assert_int_not_equal(sc_et_load(p, &et, &err), SC_OK);
    unlink(p);
}

/* A key written with escapes is decoded into the reader's scratch buffer,
 * which decoding a long escaped string in its value reallocates: the key
 * must have said where the value goes before the value is read. */
static void test_escaped_keys(void **state) {
    (void)state;
    char pad[1200] = {0};
    for (size_t i = 0; i + 2 < sizeof pad; i += 2) memcpy(pad + i, "\\n", 2);
    static char et_json[4096];
    snprintf(et_json, sizeof et_json,
             "{\"schema\": \"1.0.1\", \"nodes\": [\n"
             " {\"id\": 1, \"name\": \"aten::mm\", \"input_\\u0073hapes\": [[2, 3], \"%s\"]},\n"
             " {\"id\": 2, \"name\": \"aten::mm\", \"input_typ\\u0065s\": [\"%s\"]}\n"
             "]}\n",
             pad, pad);
    const char *p = sc_test_tmpfile(et_json, strlen(et_json), ".json");
    sc_error err;
    sc_et *et;
    assert_int_equal(sc_et_load(p, &et, &err), SC_OK);
    const char *j = report_json(et, NULL);
    assert_int_equal(field(j, "nodes"), 2);
    assert_int_equal(field(j, "ops_with_shapes"), 1); /* the types went to types */
    sc_et_free(et);
    unlink(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_megatron),
        cmocka_unit_test(test_dlrm),
        cmocka_unit_test(test_schema_11_rf_id),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_escaped_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
