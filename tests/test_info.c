/*
 * test_info.c - `stepcast info` in bounded memory (sc_traceset_load_for_info).
 *
 * A set loaded for info sums each rank up as it is read and keeps only the
 * trace's header. Its report must be the report of a full load, byte for
 * byte, text and JSON, on every shared folder (Kineto of every vintage,
 * Chakra, ranks from names and argument order with their warnings), with 1
 * and 2 threads; its memory budget is shared by the files read at once, not
 * by all of them; and what needs events (graphs, replays, linking an
 * execution trace) refuses its traces by name.
 */
#include "testutil.h"

#include "trace/trace.h"

/* The report of set as text (json 0) or JSON, malloc'ed. */
static char *report(const sc_traceset *set, int json) {
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    sc_error err;
    if (sc_report_info(set, f, json, &err) != SC_OK) fail_msg("info: %s", err.message);
    fclose(f);
    return text;
}

/* Loads paths both ways with `threads` threads: the same reports, the same
 * warnings, and nothing but headers left in the set loaded for info. */
static void same_report(const char *const *paths, size_t n, unsigned threads) {
    sc_load_options o = {.threads = threads};
    sc_traceset *full, *lean;
    sc_error err;
    if (sc_traceset_load(paths, n, &o, &full, &err) != SC_OK) fail_msg("load: %s", err.message);
    if (sc_traceset_load_for_info(paths, n, &o, &lean, &err) != SC_OK) fail_msg("load for info: %s", err.message);
    assert_int_equal(sc_traceset_count(full), sc_traceset_count(lean));
    assert_int_equal(sc_traceset_warning_count(full), sc_traceset_warning_count(lean));
    for (size_t i = 0; i < sc_traceset_warning_count(full); i++)
        assert_string_equal(sc_traceset_warning(full, i), sc_traceset_warning(lean, i));
    for (int json = 0; json <= 1; json++) {
        char *a = report(full, json), *b = report(lean, json);
        if (strcmp(a, b) != 0) fail_msg("%s (json %d, %u threads): the reports differ", paths[0], json, threads);
        free(a);
        free(b);
    }
    for (size_t i = 0; i < sc_traceset_count(lean); i++) {
        const sc_trace *t = sc_traceset_trace(lean, i);
        assert_true(t->header_only);
        assert_int_equal(t->events.len, 0);
        assert_int_equal(t->strings.count, 0);
        assert_null(t->chakra_data);
    }
    sc_traceset_free(full);
    sc_traceset_free(lean);
}

static void test_same_report_as_a_full_load(void **state) {
    (void)state;
    static const char *const folders[] = {"megatron-tp8-a100", "hta-testdata", "param-dlrm-8rank",
                                          "chakra-et"};
    for (size_t k = 0; k < sizeof folders / sizeof *folders; k++) {
        if (!sc_test_big_ok() && strcmp(folders[k], "hta-testdata") == 0) continue; /* 9.6 MB of gzip */
        char path[4096];
        snprintf(path, sizeof path, "%s", sc_test_trace(folders[k]));
        const char *p = path;
        same_report(&p, 1, 1);
        same_report(&p, 1, 2);
    }
    /* ranks from file names, and from argument order, with their warnings */
    const char *mini = "tests/corpus/mini";
    same_report(&mini, 1, 2);
    static const char text[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                               "\"pid\": 0, \"tid\": 7, \"ts\": 5, \"dur\": 2, \"args\": {\"stream\": 7}}]}";
    char nameless[512];
    snprintf(nameless, sizeof nameless, "%s", sc_test_tmpfile(text, sizeof text - 1, ".json"));
    const char *two[] = {"tests/corpus/mini/rank1.json", nameless};
    same_report(two, 2, 2);
    unlink(nameless);
}

/* The eight ranks of the bundled example need about 1.5 MiB each, plus a
 * read window. A budget of 8 MiB is too small for all eight at once (1 MiB
 * each) but not for the two read at once when info loads them on two
 * threads (4 MiB each). */
static void test_budget_is_shared_by_the_files_read_at_once(void **state) {
    (void)state;
    const char *p = "examples/megatron-tp8";
    sc_load_options o = {.threads = 2, .max_memory_bytes = (uint64_t)8 << 20};
    sc_traceset *set = NULL;
    sc_error err;
    assert_int_equal(sc_traceset_load(&p, 1, &o, &set, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "memory budget of 1 MiB"));
    assert_int_equal(sc_traceset_load_for_info(&p, 1, &o, &set, &err), SC_OK);
    assert_int_equal(sc_traceset_count(set), 8);
    sc_traceset_free(set);
    o.threads = 8; /* eight at once: 1 MiB each again */
    assert_int_equal(sc_traceset_load_for_info(&p, 1, &o, &set, &err), SC_E_LIMIT);
    /* A budget smaller than the files: each share is 1 byte, not 0, which
     * would mean the default (80% of RAM) */
    o.max_memory_bytes = 3;
    assert_int_equal(sc_traceset_load_for_info(&p, 1, &o, &set, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "memory budget of 1 bytes"));
    assert_int_equal(sc_traceset_load(&p, 1, &o, &set, &err), SC_E_LIMIT);
}

/* What reads events refuses a set loaded for info, naming the file. */
static void test_graph_refuses_header_only_traces(void **state) {
    (void)state;
    const char *p = "tests/corpus/mini";
    sc_traceset *set;
    sc_error err;
    assert_int_equal(sc_traceset_load_for_info(&p, 1, NULL, &set, &err), SC_OK);
    FILE *f = fopen("/dev/null", "w");
    assert_non_null(f);
    assert_int_equal(sc_report_replay(set, NULL, f, 0, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "loaded for info only"));
    assert_non_null(strstr(err.file, "rank0.json"));
    assert_int_equal(sc_report_graph(set, NULL, f, 0, &err), SC_E_USAGE);
    sc_traceset_free(set);

    char chakra[4096]; /* Chakra ranks go through a builder of their own */
    snprintf(chakra, sizeof chakra, "%s", sc_test_trace("chakra-et/custom-ring-allreduce"));
    p = chakra;
    assert_int_equal(sc_traceset_load_for_info(&p, 1, NULL, &set, &err), SC_OK);
    assert_int_equal(sc_report_replay(set, NULL, f, 0, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "loaded for info only"));
    assert_int_equal(sc_report_graph(set, NULL, f, 0, &err), SC_E_USAGE);
    sc_traceset_free(set);

    /* and so does linking an execution trace to one of its ranks */
    char et_path[4096], kineto_path[4096];
    snprintf(et_path, sizeof et_path, "%s", sc_test_trace("megatron-tp8-a100/megatron_et_0.json.gz"));
    snprintf(kineto_path, sizeof kineto_path, "%s",
             sc_test_trace("megatron-tp8-a100/megatron_kineto_0.json.gz"));
    sc_et *et;
    assert_int_equal(sc_et_load(et_path, &et, &err), SC_OK);
    p = kineto_path;
    assert_int_equal(sc_traceset_load_for_info(&p, 1, NULL, &set, &err), SC_OK);
    const sc_trace *k = sc_traceset_trace(set, 0);
    assert_int_equal(sc_report_et(et, k, f, 0, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "loaded for info only"));
    assert_int_equal(sc_report_et_ops(et, k, 10, f, 0, &err), SC_E_USAGE);
    sc_traceset_free(set);
    sc_et_free(et);
    fclose(f);
}

/* Categories are counted by string id and streams by number, each key
 * made on first sight: an event with no category and one whose category
 * is the string "(none)" share an entry, as when counted by key; streams
 * keep the order they were first seen in. */
static void test_counts_by_key(void **state) {
    (void)state;
    static const char json[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n"
        "{\"ph\":\"X\",\"cat\":\"(none)\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":20,\"ts\":10,\"dur\":1,"
        "\"args\":{\"device\":0,\"stream\":20,\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"d\",\"pid\":1,\"tid\":1,\"ts\":7,\"dur\":1},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":12,\"dur\":1,"
        "\"args\":{\"device\":0,\"stream\":7,\"correlation\":2}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k3\",\"pid\":0,\"tid\":20,\"ts\":14,\"dur\":1,"
        "\"args\":{\"device\":0,\"stream\":20,\"correlation\":3}}\n"
        "]}\n";
    const char *p = sc_test_tmpfile(json, sizeof json - 1, ".json");
    sc_traceset *set;
    sc_error err;
    assert_int_equal(sc_traceset_load_for_info(&p, 1, NULL, &set, &err), SC_OK);
    char *text = report(set, 0), *js = report(set, 1);
    if (!strstr(text, "categories          (none)=2, cpu_op=2, kernel=3\n") ||
        !strstr(text, "kernels per stream  20=2, 7=1\n"))
        fail_msg("counts:\n%s", text);
    if (!strstr(js, "\"categories\": {\"(none)\": 2, \"cpu_op\": 2, \"kernel\": 3}") ||
        !strstr(js, "\"kernels_per_stream\": {\"20\": 2, \"7\": 1}"))
        fail_msg("counts:\n%s", js);
    free(text);
    free(js);
    sc_traceset_free(set);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_report_as_a_full_load),
        cmocka_unit_test(test_counts_by_key),
        cmocka_unit_test(test_budget_is_shared_by_the_files_read_at_once),
        cmocka_unit_test(test_graph_refuses_header_only_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
