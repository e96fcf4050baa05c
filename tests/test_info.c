/*
 * test_info.c - `stepcast info` in bounded memory (sc_info_load).
 *
 * sc_info_load sums each rank up as it is read and keeps only the trace's
 * header. Its report must be the report of a full load, byte for byte,
 * text and JSON, on every shared folder (Kineto of every vintage, Chakra,
 * ranks from names and argument order with their warnings), with 1 and 2
 * threads; its memory budget is shared by the files read at once, not by
 * all of them; and what needs events (graphs, replays, linking an
 * execution trace) refuses traces cut to their header, by name.
 */
#include "testutil.h"

#include "readers/readers.h"
#include "trace/trace.h"

/* The report of info as text (json 0) or JSON, malloc'ed. */
static char *write_info(const sc_info *info, int json) {
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    sc_error err;
    if (sc_info_write(info, f, json, &err) != SC_OK) fail_msg("info: %s", err.message);
    fclose(f);
    return text;
}

static sc_info *load_info(const char *const *paths, size_t n, const sc_load_options *o) {
    sc_info *info;
    sc_error err;
    if (sc_info_load(paths, n, o, &info, &err) != SC_OK) fail_msg("load for info: %s", err.message);
    return info;
}

/* Loads paths both ways with `threads` threads: the same reports and the
 * same warnings. */
static void same_report(const char *const *paths, size_t n, unsigned threads) {
    sc_load_options o = {.threads = threads};
    sc_traceset *full;
    sc_info *whole, *lean;
    sc_error err;
    if (sc_traceset_load(paths, n, &o, &full, &err) != SC_OK) fail_msg("load: %s", err.message);
    if (sc_info_of_set(full, &whole, &err) != SC_OK) fail_msg("info of the set: %s", err.message);
    lean = load_info(paths, n, &o);
    assert_int_equal(sc_traceset_count(full), sc_info_rank_count(lean));
    assert_int_equal(sc_traceset_warning_count(full), sc_info_warning_count(lean));
    for (size_t i = 0; i < sc_traceset_warning_count(full); i++)
        assert_string_equal(sc_traceset_warning(full, i), sc_info_warning(lean, i));
    for (int json = 0; json <= 1; json++) {
        char *a = write_info(whole, json), *b = write_info(lean, json);
        if (strcmp(a, b) != 0) fail_msg("%s (json %d, %u threads): the reports differ", paths[0], json, threads);
        free(a);
        free(b);
    }
    for (size_t i = 0; i < sc_info_rank_count(lean); i++) {
        sc_info_rank r;
        assert_int_equal(sc_info_rank_at(lean, i, &r, &err), SC_OK);
        const sc_trace *t = sc_traceset_trace(full, i);
        assert_string_equal(r.file, sc_trace_path(t));
        assert_int_equal(r.rank, sc_trace_rank(t));
        assert_int_equal(r.events, t->format == SC__FMT_CHAKRA ? t->chakra_nodes : sc_trace_event_count(t));
    }
    sc_info_rank r;
    assert_int_equal(sc_info_rank_at(lean, sc_info_rank_count(lean), &r, &err), SC_E_USAGE);
    sc_info_free(whole);
    sc_info_free(lean);
    sc_traceset_free(full);
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
    sc_info *info = NULL;
    sc_error err;
    assert_int_equal(sc_traceset_load(&p, 1, &o, &set, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "memory budget of 1 MiB"));
    assert_int_equal(sc_info_load(&p, 1, &o, &info, &err), SC_OK);
    assert_int_equal(sc_info_rank_count(info), 8);
    sc_info_free(info);
    o.threads = 8; /* eight at once: 1 MiB each again */
    assert_int_equal(sc_info_load(&p, 1, &o, &info, &err), SC_E_LIMIT);
    assert_null(info);
    /* A budget smaller than the files: each share is 1 byte, not 0, which
     * would mean the default (80% of RAM) */
    o.max_memory_bytes = 3;
    assert_int_equal(sc_info_load(&p, 1, &o, &info, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "memory budget of 1 bytes"));
    assert_int_equal(sc_traceset_load(&p, 1, &o, &set, &err), SC_E_LIMIT);
}

/* A load step that keeps only each trace's header, as sc_info_load does. */
static sc_status keep_header(void *ctx, sc_trace *t, sc_error *err) {
    (void)ctx;
    (void)err;
    sc__trace_keep_header(t);
    return SC_OK;
}

static sc_traceset *load_headers(const char *path) {
    sc_traceset *set;
    sc_error err;
    if (sc__traceset_load_each(&path, 1, NULL, keep_header, NULL, &set, &err) != SC_OK)
        fail_msg("load: %s", err.message);
    return set;
}

/* What reads events refuses a trace cut to its header, naming the file. */
static void test_graph_refuses_header_only_traces(void **state) {
    (void)state;
    sc_traceset *set = load_headers("tests/corpus/mini");
    FILE *f = fopen("/dev/null", "w");
    assert_non_null(f);
    sc_error err;
    sc_replay *r;
    sc_graph *g;
    sc_info *info;
    assert_int_equal(sc_replay_run(set, NULL, &r, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "loaded for info only"));
    assert_non_null(strstr(err.file, "rank0.json"));
    assert_int_equal(sc_graph_build(set, NULL, &g, &err), SC_E_USAGE);
    assert_int_equal(sc_info_of_set(set, &info, &err), SC_E_USAGE);
    sc_traceset_free(set);

    char chakra[4096]; /* Chakra ranks go through a builder of their own */
    snprintf(chakra, sizeof chakra, "%s", sc_test_trace("chakra-et/custom-ring-allreduce"));
    set = load_headers(chakra);
    assert_int_equal(sc_replay_run(set, NULL, &r, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "loaded for info only"));
    assert_int_equal(sc_graph_build(set, NULL, &g, &err), SC_E_USAGE);
    sc_traceset_free(set);

    /* and so does linking an execution trace to one of its ranks */
    char et_path[4096], kineto_path[4096];
    snprintf(et_path, sizeof et_path, "%s", sc_test_trace("megatron-tp8-a100/megatron_et_0.json.gz"));
    snprintf(kineto_path, sizeof kineto_path, "%s",
             sc_test_trace("megatron-tp8-a100/megatron_kineto_0.json.gz"));
    sc_et *et;
    assert_int_equal(sc_et_load(et_path, &et, &err), SC_OK);
    set = load_headers(kineto_path);
    const sc_trace *k = sc_traceset_trace(set, 0);
    assert_int_equal(sc_et_write(et, k, f, 0, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "loaded for info only"));
    assert_int_equal(sc_et_write_ops(et, k, 10, f, 0, &err), SC_E_USAGE);
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
    sc_info *info = load_info(&p, 1, NULL);
    char *text = write_info(info, 0), *js = write_info(info, 1);
    if (!strstr(text, "categories          (none)=2, cpu_op=2, kernel=3\n") ||
        !strstr(text, "kernels per stream  20=2, 7=1\n"))
        fail_msg("counts:\n%s", text);
    if (!strstr(js, "\"categories\": {\"(none)\": 2, \"cpu_op\": 2, \"kernel\": 3}") ||
        !strstr(js, "\"kernels_per_stream\": {\"20\": 2, \"7\": 1}"))
        fail_msg("counts:\n%s", js);
    free(text);
    free(js);
    sc_info_free(info);
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
