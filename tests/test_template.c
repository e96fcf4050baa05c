/*
 * test_template.c - events read by a learned layout
 * (src/readers/kineto_template.c) give exactly what reading them key by key
 * gives: the same trace id for id, and for broken input the same error at
 * the same byte.
 *
 * Every JSON file under shared/traces is read both ways, with the default
 * window and with tiny ones (so that events straddle refills mid-template).
 * Then one event after many of its kind is mutated byte by byte - quotes,
 * digits, signs, escapes, control and non-ASCII bytes, brackets - and each
 * mutant must read the same both ways. A test also checks that templates do
 * match on real traces, so the comparisons are not of one path with itself.
 */
#include "testutil.h"

#include "readers/kineto.h"

#include <ftw.h>

/* Reads text both ways with window w; they must agree. Returns the events
 * the templates matched. */
static uint64_t both_ways(const char *text, size_t n, uint32_t window, const char *what) {
    sc_load_options o = {.window_bytes = window, .threads = 1};
    sc_trace *a = NULL, *b = NULL;
    sc_error ea, eb;
    uint64_t matched = 0;
    sc_status sa = sc__kineto_load_buffer(text, n, "t.json", &o, false, NULL, &a, &ea);
    sc_status sb = sc__kineto_load_buffer(text, n, "t.json", &o, true, &matched, &b, &eb);
    if (sa != sb) fail_msg("%s: status %d key by key, %d by template", what, sa, sb);
    if (sa == SC_OK) {
        if (!sc__trace_same(a, b)) fail_msg("%s: the traces differ", what);
    } else if (strcmp(ea.message, eb.message) != 0 || ea.offset != eb.offset) {
        fail_msg("%s: '%s' at %llu key by key, '%s' at %llu by template", what, ea.message,
                 (unsigned long long)ea.offset, eb.message, (unsigned long long)eb.offset);
    }
    sc_trace_free(a);
    sc_trace_free(b);
    return matched;
}

static uint64_t shared_matched;
static unsigned shared_files;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    if (type != FTW_F || !strstr(path, ".json")) return 0;
    size_t n;
    unsigned char *data = sc_test_read_file(path, &n);
    assert_non_null(data);
    shared_matched += both_ways((const char *)data, n, 0, path);
    if (sc_test_big_ok() || n < (1u << 20)) {
        both_ways((const char *)data, n, 4096, path);
        both_ways((const char *)data, n, 61, path);
    }
    free(data);
    shared_files++;
    return 0;
}

static void test_shared_traces(void **state) {
    (void)state;
    char root[4096];
    snprintf(root, sizeof root, "%s", sc_test_trace(""));
    assert_int_equal(nftw(root, visit, 16, FTW_PHYS), 0);
    assert_true(shared_files >= 20);
    /* the Megatron ranks alone hold hundreds of thousands of events */
    if (shared_matched < 100000) fail_msg("templates matched only %llu events", (unsigned long long)shared_matched);
}

/* Events of every kind the reader knows, each written `copies` times so
 * that templates are learned and then used; `last` goes at the end. */
static const char *kinds[] = {
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":7,\"tid\":8,"
    "\"ts\":1700000000000.125,\"dur\":4.5,\"args\":{\"External id\":12,\"Input Dims\":[[4, 8], [8, 2]],"
    "\"Input type\":[\"float\", \"float\"],\"Sequence number\":3,\"Fwd thread id\":0}}",
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":7,\"tid\":8,"
    "\"ts\":1700000000001,\"dur\":2,\"args\":{\"External id\":12,\"cbid\":211,\"correlation\":99}}",
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce\",\"pid\":0,\"tid\":7,"
    "\"ts\":1700000000003,\"dur\":20,\"args\":{\"device\":0,\"stream\":7,\"correlation\":99,"
    "\"grid\":[1, 2, 3],\"block\":[64, 1, 1],\"Collective name\":\"allreduce\",\"dtype\":\"Float\","
    "\"In msg nelems\":1024,\"Out msg nelems\":1024,\"Group size\":8,\"Process Group Ranks\":\"[0, 1]\"}}",
    "{\"ph\":\"s\",\"id\":99,\"pid\":7,\"tid\":8,\"ts\":1700000000001,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}",
    "{ \"ph\": \"i\", \"s\": \"t\", \"name\": \"mark\", \"pid\": \"host\", \"tid\": \"main\",\n"
    "  \"ts\": 1700000000005, \"args\": { \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 5 } }",
    "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":0,\"args\":{\"name\":\"python\"}}",
};

/* The trace text (malloc'ed): `copies` rounds of every kind, then last. */
static char *many_events(size_t copies, const char *last) {
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_puts(&b, "{\"traceEvents\":[\n");
    for (size_t i = 0; i < copies; i++)
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) sc__buf_printf(&b, "%s,\n", kinds[k]);
    sc__buf_printf(&b, "%s\n]}\n", last);
    assert_false(b.oom);
    return b.data;
}

/* The last event of text, bytes [at, at + len), with each byte replaced by
 * each of a set of troublemakers, then cut short: every variant must read
 * the same both ways. */
static void mutate_last(char *text, size_t n, size_t at, size_t len, const char *label) {
    static const char swaps[] = {'"', '\\', '0', '9', '-', '.', 'e', ' ', '\n', ',', ':', '}',
                                 ']', '[', '{', 'x', '\x01', '\xc3', '\xff'};
    for (size_t i = at; i < at + len; i++) {
        char keep = text[i];
        for (size_t s = 0; s < sizeof swaps; s++) {
            if (swaps[s] == keep) continue;
            text[i] = swaps[s];
            char what[128];
            snprintf(what, sizeof what, "%s, byte %zu as 0x%02x", label, i - at, (unsigned char)swaps[s]);
            both_ways(text, n, 0, what);
        }
        text[i] = keep;
    }
    /* cut short at every third byte of the last event: truncated files */
    for (size_t i = at; i < at + len; i += 3) {
        char what[128];
        snprintf(what, sizeof what, "%s cut at %zu", label, i - at);
        both_ways(text, i, 0, what);
    }
}

/* Each kind of event, then a copy of it with each byte replaced by each of
 * a set of troublemakers, after 3 copies of every kind. */
static void test_mutants(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        char *text = many_events(3, kinds[k]);
        size_t n = strlen(text), at = n - strlen(kinds[k]) - 4;
        assert_memory_equal(text + at, kinds[k], strlen(kinds[k]));
        assert_true(both_ways(text, n, 0, "the unmutated text") >= 3 * (sizeof kinds / sizeof *kinds) - 6);
        char label[32];
        snprintf(label, sizeof label, "kind %zu", k);
        mutate_last(text, n, at, strlen(kinds[k]), label);
        free(text);
    }
}

/* Operators whose shapes cycle through a few arrays, in two layouts: a
 * hole's remembered last value misses and the shapes cache answers. The
 * cache keys on the 32 bytes at the value, so arrays longer than that are
 * found whatever follows them: the first event (layout A) reads the long
 * ones, and later events of layout B find them. The last event repeats
 * them and is mutated, so input that starts like a cached array but
 * differs past its first 32 bytes, or goes on past it, is read both ways
 * too. */
static void test_shapes_cache(void **state) {
    (void)state;
    static const char *dims[] = {"[[8192, 512], [512, 4096], [4096, 8192], [1]]",
                                 "[[8192, 512], [512, 4096]]", "[]", "[[1]]", "[[4, 8], [8, 2], [2]]"};
    static const char *types[] = {"[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]",
                                  "[\"c10::Half\", \"c10::Half\"]", "[]", "[\"\"]",
                                  "[\"float\", \"float\", \"Scalar\"]"};
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_puts(&b, "{\"traceEvents\":[\n");
    size_t at = 0;
    for (int i = 0; i < 301; i++) {
        int d = (i * 3) % 5, t = (i * 2) % 5;
        at = b.len;
        if (i % 2 || i == 0)
            sc__buf_printf(&b,
                           "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":1,"
                           "\"ts\":%d,\"dur\":1,\"args\":{\"External id\":%d,\"Input Dims\":%s,"
                           "\"Input type\":%s}}",
                           i % 7, i, i, dims[d], types[t]);
        else
            sc__buf_printf(&b,
                           "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":1,"
                           "\"ts\":%d,\"dur\":1,\"args\":{\"Input type\":%s,\"Input Dims\":%s,"
                           "\"Sequence number\":%d}}",
                           i % 7, i, types[t], dims[d], i);
        if (i < 300) sc__buf_puts(&b, ",\n");
    }
    size_t last = b.len - at;
    sc__buf_puts(&b, "\n]}\n");
    assert_false(b.oom);
    assert_true(both_ways(b.data, b.len, 0, "cycling shapes") >= 290);
    for (uint32_t w = 61; w < 400; w += 113) both_ways(b.data, b.len, w, "cycling shapes, tiny window");
    mutate_last(b.data, b.len, at, last, "cycling shapes");
    sc__buf_free(&b);
}

/* A trace of `events` events, the i-th written by event(b, i): read both
 * ways (also with a tiny window), the templates matching at least
 * `min_matched` of them; then its last event is mutated. */
static void read_then_mutate(int events, void (*event)(sc__buf *, int), uint64_t min_matched,
                             const char *label) {
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_puts(&b, "{\"traceEvents\":[\n");
    size_t at = 0;
    for (int i = 0; i < events; i++) {
        at = b.len;
        event(&b, i);
        if (i + 1 < events) sc__buf_puts(&b, ",\n");
    }
    size_t len = b.len - at;
    sc__buf_puts(&b, "\n]}\n");
    assert_false(b.oom);
    if (both_ways(b.data, b.len, 0, label) < min_matched)
        fail_msg("%s: too few events matched", label);
    both_ways(b.data, b.len, 89, label);
    mutate_last(b.data, b.len, at, len, label);
    sc__buf_free(&b);
}

/* More arrays than a set of the shapes cache holds, all alike in their
 * first 32 bytes (so in one set), some longer than 64 bytes and one longer
 * than the cache keeps: ways are replaced over and over and the result
 * must not change. */
static void alike_shapes_event(sc__buf *b, int i) {
    static const char *types[] = {
        "[\"c10::Half\", \"c10::Half\", \"c10::Half\"]",
        "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"\"]",
        "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"Scalar\"]",
        "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"c10::Half\", \"Scalar\", \"\"]",
        ("[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"c10::Half\", \"c10::Half\", "
         "\"c10::Half\", \"\"]"),
        ("[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"ScalarList\", \"ScalarList\", "
         "\"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]"),
        "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"int\"]",
    };
    const int n = (int)(sizeof types / sizeof *types);
    sc__buf_printf(b,
                   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":1,"
                   "\"ts\":%d,\"dur\":1,\"args\":{\"External id\":%d,\"Input type\":%s}}",
                   i, i, types[(i * 3 + i / 5) % n]);
}

static void test_shapes_ways(void **state) {
    (void)state;
    read_then_mutate(120, alike_shapes_event, 118, "shapes alike");
}

/* Kernels' launch shapes and flows' ids in every form the reader takes,
 * cycling, so that each is read from a hole's memory, inline and by the
 * handler: packed shapes at their limits and past them (21 bits, then
 * int32), short and long arrays, odd spacing, and ids as numbers and
 * strings. */
static void launch_event(sc__buf *b, int i) {
    static const char *dims[] = {"[1, 2, 3]",  "[1,2,3]",    "[2097151, 2097151, 2097151]",
                                 "[2097152, 1, 1]", "[2147483648, 1, 1]", "[-1, 1, 1]",
                                 "[1, 2]",     "[1, 2, 3, 4]", "[]",
                                 "[ 1, 2, 3]", "[1 , 2, 3]", "[1, 2, 3 ]",
                                 "[0, 0, 0]",  "[1,  2, 3]"};
    static const char *ids[] = {"99", "-5", "\"0x63\"", "\"99\"", "0", "9007199254740993"};
    const int nd = (int)(sizeof dims / sizeof *dims), ni = (int)(sizeof ids / sizeof *ids);
    if (i % 3 == 2)
        sc__buf_printf(b, "{\"ph\":\"f\",\"id\":%s,\"pid\":0,\"tid\":7,\"ts\":%d,\"cat\":\"ac2g\","
                          "\"name\":\"ac2g\",\"bp\":\"e\"}",
                       ids[(i / 3) % ni], i);
    else
        sc__buf_printf(b, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                          "\"ts\":%d,\"dur\":1,\"args\":{\"correlation\":%d,\"grid\":%s,"
                          "\"block\":%s}}",
                       i, i, dims[(i / 2) % nd], dims[(i / 5) % nd]);
}

static void test_launch_shapes(void **state) {
    (void)state;
    read_then_mutate(120, launch_event, 116, "launch shapes");
}

/* Layouts whose first literals run past the 32 bytes by which
 * sc__kt_match picks the templates to try (ktset.head) and differ only
 * after them: a template picked by those bytes must miss at its first
 * literal, in run, and another go on, or the event is read key by key.
 * Two kinds of event alike in their first 32 bytes ("cat" values that
 * differ at their end) are among them. */
static void long_first_literal_event(sc__buf *b, int i) {
    static const char *heads[] = {
        "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"a\", \"pid\": 0",
        "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"pid\": 0, \"name\": \"a\"",
        "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"pid\": 0, \"name\": \"b\"",
        "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation2\", \"name\": \"a\", \"pid\": 0",
        "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"a\", \"pid\": 0",
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":0",
    };
    const int n = (int)(sizeof heads / sizeof *heads);
    sc__buf_printf(b, "%s, \"tid\": %d, \"ts\": %d, \"dur\": 2}", heads[(i * 5 + i / 7) % n],
                   1 + i % 2, 10 * i);
}

static void test_long_first_literals(void **state) {
    (void)state;
    read_then_mutate(150, long_first_literal_event, 120, "long first literals");
}

/* More layouts than template slots (32), in blocks of ten events: each
 * block's first event is read key by key and its template replaces the
 * one used least recently, and the other nine must match by it. The
 * layouts differ within the first 32 bytes, where sc__kt_match picks the
 * templates to try, so a slot whose pick were left from its previous
 * template would stop matching. */
static void block_of_layouts_event(sc__buf *b, int i) {
    int layout = (i / 10 * 7) % 40;
    sc__buf_printf(b, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"k%d\":%d,\"name\":\"n%d\",\"ts\":%d,\"dur\":1}",
                   layout, i, i % 3, i);
}

static void test_replaced_templates(void **state) {
    (void)state;
    read_then_mutate(800, block_of_layouts_event, 720, "replaced templates");
}

/* Layouts that share their first members and differ later, interleaved
 * (as a profiler writes them): a template misses late, at an args key or
 * at its tail, and one that agrees up to there goes on from the miss.
 * Operators differ in their last args; the last two layouts put "cat" and
 * "ph" after the name and time, so a template that agrees on those holes
 * is of another kind of event and must not go on (it would keep the kind
 * of the first). Each layout's last event is then mutated, so a template
 * going on from a miss that meets broken input must fail as key by key
 * does. Every format takes the same six ints. */
static void test_shared_prefixes(void **state) {
    (void)state;
    static const char *layouts[] = {
        ("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,\"ts\":%d.5,\"dur\":%d,"
         "\"args\":{\"External id\":%d,\"Sequence number\":%d,\"Fwd thread id\":0,"
         "\"Input Dims\":[[4, 8]],\"Input type\":[\"float\"]}}"),
        ("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,\"ts\":%d.5,\"dur\":%d,"
         "\"args\":{\"External id\":%d,\"Input Dims\":[[4, 8], [8]],\"Input type\":[\"float\", \"float\"]}}"),
        ("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,\"ts\":%d.5,\"dur\":%d,"
         "\"args\":{\"External id\":%d}}"),
        ("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,\"ts\":%d.5,\"dur\":%d,"
         "\"args\":{\"External id\":%d,\"Sequence number\":%d}}"),
        ("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,\"ts\":%d.5,\"dur\":%d,"
         "\"stage\":%d,\"Sequence number\":%d}"),
        ("{\"name\":\"op%d\",\"tid\":%d,\"ts\":%d.5,\"pid\":0,\"cat\":\"cpu_op\",\"ph\":\"X\",\"dur\":%d}"),
        ("{\"name\":\"op%d\",\"tid\":%d,\"ts\":%d.5,\"pid\":0,\"cat\":\"kernel\",\"ph\":\"X\",\"dur\":%d,"
         "\"args\":{\"stream\":%d,\"correlation\":%d}}"),
    };
    const size_t n = sizeof layouts / sizeof *layouts, events = 70;
    for (size_t last = 0; last < n; last++) {
        sc__buf b;
        sc__buf_init(&b);
        sc__buf_puts(&b, "{\"traceEvents\":[\n");
        size_t at = 0;
        for (size_t i = 0; i < events; i++) {
            size_t k = i + 1 == events ? last : (i * 3 + i / 4) % n;
            int v = (int)i;
            at = b.len;
            sc__buf_printf(&b, layouts[k], v % 3, 1 + v % 2, 1000 + v, v % 4, v, 2 * v);
            if (i + 1 < events) sc__buf_puts(&b, ",\n");
        }
        size_t len = b.len - at;
        sc__buf_puts(&b, "\n]}\n");
        assert_false(b.oom);
        assert_true(both_ways(b.data, b.len, 0, "shared prefixes") >= events - 2 * n);
        both_ways(b.data, b.len, 97, "shared prefixes, tiny window");
        char label[32];
        snprintf(label, sizeof label, "shared prefixes, layout %zu", last);
        mutate_last(b.data, b.len, at, len, label);
        sc__buf_free(&b);
    }
}

/* Events straddling the end of a tiny window at every offset. */
static void test_refills(void **state) {
    (void)state;
    char *text = many_events(20, kinds[0]);
    size_t n = strlen(text);
    for (uint32_t w = 16; w < 420; w += 7) both_ways(text, n, w, "a tiny window");
    free(text);
}

/* More layouts than template slots, interleaved: templates are replaced
 * over and over and the result must not change. */
static void test_many_layouts(void **state) {
    (void)state;
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_puts(&b, "{\"traceEvents\":[");
    for (int i = 0; i < 2000; i++) {
        int layout = (i * 7) % 13;
        sc__buf_printf(&b, "%s{\"ph\":\"X\",\"k%d\":%d,\"name\":\"n%d\",\"ts\":%d,\"dur\":1}",
                               i ? "," : "", layout, i, i % 5, i);
    }
    sc__buf_puts(&b, "]}");
    assert_false(b.oom);
    both_ways(b.data, b.len, 0, "thirteen layouts");
    sc__buf_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_traces),
        cmocka_unit_test(test_mutants),
        cmocka_unit_test(test_shapes_cache),
        cmocka_unit_test(test_shapes_ways),
        cmocka_unit_test(test_launch_shapes),
        cmocka_unit_test(test_shared_prefixes),
        cmocka_unit_test(test_long_first_literals),
        cmocka_unit_test(test_replaced_templates),
        cmocka_unit_test(test_refills),
        cmocka_unit_test(test_many_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
