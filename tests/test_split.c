/*
 * test_split.c - one Kineto file read by several threads gives the very
 * trace the sequential reader gives: the same events, extras, shapes,
 * tracks and strings, id for id (src/readers/kineto_parallel.c). Plain
 * files are cut into slices up front, gzip files are sliced as they are
 * inflated; every check runs both.
 *
 * Every shared Kineto trace of every vintage is read split at several slice
 * sizes and thread counts, written out both plain and compressed.
 * Hostile layouts - `},{` inside strings, arrays of objects in args, cuts,
 * members after the array, bare arrays, a second traceEvents - must either
 * split correctly or make the splitter give up, never change the result; and
 * through sc_trace_load an error reads exactly as the sequential one.
 * The stream's parsing threads step back for its decoder
 * (sc__thread_defer): only the thread that asks, by the steps it asks.
 */
#include "testutil.h"

#include "readers/kineto.h"

#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *shared_kineto[] = {
    "megatron-tp8-a100/megatron_kineto_0.json.gz",
    "megatron-tp8-a100/megatron_kineto_5.json.gz",
    "param-dlrm-8rank/kineto/worker0_step_12.1694128201545.pt.trace.json",
    "param-dlrm-8rank/kineto/worker3_step_12.1694128201557.pt.trace.json",
    "hta-testdata/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta-testdata/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "hta-testdata/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
    "hta-testdata/nccl_parser_config/nccl_data.json.gz",
    "hta-testdata/negative_queue_length_values_check/rank0.json.gz",
    "hta-testdata/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta-testdata/trace_diff/control/control.json.gz",
    "hta-testdata/trace_filter/sampled_rank-1.json.gz",
    "hta-testdata/df_index_resolver/df_index_resolver.json.gz",
};

static sc_trace *load_seq(const char *path) {
    sc_load_options one = {.threads = 1};
    sc_trace *t = NULL;
    sc_error err;
    if (sc_trace_load(path, &one, &t, &err) != SC_OK) fail_msg("%s: %s", path, err.message);
    return t;
}

/* Asserts b is a, id for id. */
static void identical(const sc_trace *a, const sc_trace *b) {
    if (!sc__trace_same(a, b)) fail_msg("the split read differs from the sequential one");
}

/* Reads path split with each thread count and slice (or chunk) size of at
 * least `smallest`; every read that is taken must be identical to the
 * sequential one. Returns how many were; *tried (may be NULL) gets how
 * many were tried. */
static unsigned split_all_ways(const char *path, const sc_trace *seq, size_t smallest, unsigned *tried) {
    static const unsigned threads[] = {2, 3, 8};
    static const size_t sizes[] = {512, 4096, 65536};
    unsigned taken = 0;
    for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
        for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
            if (sizes[j] < smallest) continue;
            if (tried) ++*tried;
            sc_trace *t = NULL;
            if (!sc__kineto_load_parallel(path, NULL, threads[i], sizes[j], &t)) {
                assert_null(t);
                continue;
            }
            identical(seq, t);
            sc_trace_free(t);
            taken++;
        }
    }
    return taken;
}

/* A copy of n bytes of text in a temporary file, gzip'ed or not; returns
 * its path (malloc'ed). */
static char *tmp_copy(const void *text, size_t n, bool gzip) {
    const char *tmp;
    if (gzip) {
        size_t zn;
        unsigned char *z = sc_test_gzip(text, n, &zn);
        assert_non_null(z);
        tmp = sc_test_tmpfile(z, zn, ".json.gz");
        free(z);
    } else {
        tmp = sc_test_tmpfile(text, n, ".json");
    }
    assert_non_null(tmp);
    return strdup(tmp);
}

static void remove_tmp(char *path) {
    unlink(path);
    free(path);
}

static void test_shared_traces(void **state) {
    (void)state;
    size_t count = sizeof shared_kineto / sizeof *shared_kineto;
    if (!sc_test_big_ok()) count = 4; /* valgrind, ThreadSanitizer: the small ones */
    /* ThreadSanitizer: one of each pair (Megatron gzip, DLRM plain) */
    for (size_t k = 0; k < count; k += SC_TEST_TSAN ? 2 : 1) {
        size_t n;
        unsigned char *text = sc_test_read_file(sc_test_trace(shared_kineto[k]), &n);
        assert_non_null(text);
        char *plain = tmp_copy(text, n, false), *gz = tmp_copy(text, n, true);
        free(text);
        sc_trace *seq = load_seq(plain);
        /* Small slices and chunks only where they make few of them: every
         * slice costs a reader, a file or chunk cursor and a hand-over
         * between threads, and 512-byte slices of the 54 MB trace took
         * most of a minute (most of an hour under ThreadSanitizer). */
        size_t smallest = n < (1u << 20) ? 0 : n < (4u << 20) ? 4096 : 65536;
        /* well-formed traces split every way but where a slice would be
         * smaller than an element (at most the smallest size, on every
         * thread count) */
        unsigned tried = 0, taken = split_all_ways(plain, seq, smallest, &tried);
        if (taken < (tried > 3 ? tried - 3 : tried))
            fail_msg("%s: split only %u of %u ways", shared_kineto[k], taken, tried);
        /* An element larger than a chunk makes the stream give up, so only
         * the largest chunks must work on every trace. */
        taken = split_all_ways(gz, seq, smallest, NULL);
        if (taken < 3) fail_msg("%s: streamed only %u ways", shared_kineto[k], taken);
        sc_trace_free(seq);
        remove_tmp(plain);
        remove_tmp(gz);
    }
}

/* A trace whose text is full of `},{` that starts no element. */
static char *hostile_text(size_t events, const char *head, const char *tail) {
    size_t cap = 256 + events * 300 + strlen(head) + strlen(tail), n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    n += (size_t)snprintf(s + n, cap - n, "%s", head);
    for (size_t i = 0; i < events; i++) {
        const char *sep = i ? ",\n" : "";
        if (i % 3 == 0)
            n += (size_t)snprintf(s + n, cap - n,
                                  "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op},{\\\"x\\\"},{%zu\","
                                  "\"pid\":1,\"tid\":2,\"ts\":%zu.5,\"dur\":1}",
                                  sep, i % 7, 100 + i);
        else if (i % 3 == 1)
            n += (size_t)snprintf(s + n, cap - n,
                                  "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%zu\",\"pid\":0,"
                                  "\"tid\":7,\"ts\":%zu,\"dur\":2,\"args\":{\"list\":[{\"a\":1},\n"
                                  " {\"ph\":\"X\",\"ts\":1}, {\"b\":[{},{}]}],\"stream\":7}}",
                                  sep, i % 5, 100 + i);
        else
            n += (size_t)snprintf(s + n, cap - n,
                                  "%s{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                                  "\"pid\":1,\"tid\":2,\"ts\":%zu,\"dur\":1,\"args\":{\"correlation\":%zu}}",
                                  sep, 100 + i, i);
    }
    n += (size_t)snprintf(s + n, cap - n, "%s", tail);
    return s;
}

static void check_text(const char *text, bool must_split) {
    char *path = tmp_copy(text, strlen(text), false), *gz = tmp_copy(text, strlen(text), true);
    sc_trace *seq = load_seq(path);
    unsigned taken = 0, streamed = 0;
    for (size_t slice = 64; slice < 4096; slice = slice * 3 / 2) {
        for (unsigned threads = 2; threads <= 5; threads += 3) {
            for (int gzip = 0; gzip < 2; gzip++) {
                sc_trace *t = NULL;
                if (!sc__kineto_load_parallel(gzip ? gz : path, NULL, threads, slice, &t)) continue;
                identical(seq, t);
                sc_trace_free(t);
                *(gzip ? &streamed : &taken) += 1;
            }
        }
    }
    if (must_split && (taken == 0 || streamed == 0)) fail_msg("never split: %s", path);
    sc_trace_free(seq);
    remove_tmp(path);
    remove_tmp(gz);
}

static void test_hostile_boundaries(void **state) {
    (void)state;
    char *text = hostile_text(300, "{\"schemaVersion\":1,\"traceEvents\":[\n", "\n]}\n");
    check_text(text, true);
    free(text);
}

static void test_members_after_events(void **state) {
    (void)state;
    char *text = hostile_text(
        200, "{\"traceEvents\": [",
        "], \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\", \"numSms\": 9},{\"id\": 1}],"
        " \"distributedInfo\": {\"rank\": 5, \"world_size\": 8, \"backend\": \"nccl\"},"
        " \"baseTimeNanoseconds\": 1000000000}");
    check_text(text, true);
    free(text);
    text = hostile_text(200, "[", "]\n"); /* a bare array */
    check_text(text, true);
    free(text);
}

/* Broken files: the splitter gives up and sc_trace_load reports the
 * sequential reader's error, byte offset and all. */
static void same_error(const char *text) {
    for (int gzip = 0; gzip < 2; gzip++) {
        char *path = tmp_copy(text, strlen(text), gzip);
        sc_load_options one = {.threads = 1}, many = {.threads = 4};
        sc_trace *t = NULL;
        sc_error e1, e2;
        assert_false(sc__kineto_load_parallel(path, NULL, 4, 64, &t));
        assert_null(t);
        sc_status s1 = sc_trace_load(path, &one, &t, &e1);
        assert_int_not_equal(s1, SC_OK);
        sc_status s2 = sc_trace_load(path, &many, &t, &e2);
        assert_int_equal(s1, s2);
        assert_string_equal(e1.message, e2.message);
        assert_int_equal(e1.offset, e2.offset);
        remove_tmp(path);
    }
}

static void test_errors_as_sequential(void **state) {
    (void)state;
    char *text = hostile_text(200, "{\"traceEvents\":[", "]}");
    size_t n = strlen(text);
    for (size_t cut = n / 4; cut < n; cut += n / 7) { /* truncated files */
        char keep = text[cut];
        text[cut] = '\0';
        same_error(text);
        text[cut] = keep;
    }
    free(text);
    text = hostile_text(200, "{\"traceEvents\":[", "], \"traceEvents\": []}");
    same_error(text); /* a second traceEvents after the first */
    free(text);
    text = hostile_text(200, "{\"traceEvents\":[", "]} trailing");
    same_error(text);
    free(text);
}

/* The gzip stream's own edges: elements larger than a chunk (its slices
 * refuse them, so it gives up, or reads them whole when chunks are
 * larger), a file of several gzip members; and a memory budget, plain
 * and gzip. */
static void test_stream_edges(void **state) {
    (void)state;
    char *text = hostile_text(400, "{\"traceEvents\":[\n", "\n]}\n");
    size_t n = strlen(text);
    char big_name[6001];
    memset(big_name, 'x', sizeof big_name - 1);
    big_name[sizeof big_name - 1] = '\0';
    size_t cap = n + 20 * 6100;
    char *wide = malloc(cap);
    assert_non_null(wide);
    size_t w = (size_t)snprintf(wide, cap, "%.*s", (int)(n - 4), text); /* without "\n]}\n" */
    for (int i = 0; i < 20; i++)
        w += (size_t)snprintf(wide + w, cap - w, ",\n{\"ph\":\"X\",\"name\":\"%s%d\",\"ts\":%d,\"dur\":1}",
                              big_name, i, 1000 + i);
    snprintf(wide + w, cap - w, "\n]}\n");
    char *plain = tmp_copy(wide, strlen(wide), false), *gz = tmp_copy(wide, strlen(wide), true);
    sc_trace *seq = load_seq(plain), *t = NULL;
    if (sc__kineto_load_parallel(gz, NULL, 3, 4096, &t)) { /* may give up, never differ */
        identical(seq, t);
        sc_trace_free(t);
    }
    assert_true(sc__kineto_load_parallel(gz, NULL, 3, 65536, &t));
    identical(seq, t);
    sc_trace_free(t);
    sc_trace_free(seq);
    remove_tmp(plain);
    remove_tmp(gz);
    free(wide);

    /* three gzip members, cut anywhere in the text */
    plain = tmp_copy(text, n, false);
    seq = load_seq(plain);
    size_t cut1 = n / 3 + 7, cut2 = 2 * n / 3 + 3, zn[3];
    unsigned char *z[3] = {sc_test_gzip(text, cut1, &zn[0]), sc_test_gzip(text + cut1, cut2 - cut1, &zn[1]),
                           sc_test_gzip(text + cut2, n - cut2, &zn[2])};
    unsigned char *all = malloc(zn[0] + zn[1] + zn[2]);
    assert_non_null(all);
    size_t an = 0;
    for (int i = 0; i < 3; i++) {
        assert_non_null(z[i]);
        memcpy(all + an, z[i], zn[i]);
        an += zn[i];
        free(z[i]);
    }
    const char *members = sc_test_tmpfile(all, an, ".json.gz");
    assert_non_null(members);
    assert_true(sc__kineto_load_parallel(members, NULL, 3, 4096, &t));
    identical(seq, t);
    sc_trace_free(t);
    unlink(members);
    free(all);
    sc_trace_free(seq);
    remove_tmp(plain);

    /* over the memory budget: the stream gives up and the error is the
     * sequential read's */
    for (int gzip = 0; gzip < 2; gzip++) {
        char *path = tmp_copy(text, n, gzip);
        sc_load_options small = {.max_memory_bytes = 20000, .threads = 1};
        assert_false(sc__kineto_load_parallel(path, &small, 3, 4096, &t));
        assert_null(t);
        sc_error e1, e4;
        assert_int_equal(sc_trace_load(path, &small, &t, &e1), SC_E_LIMIT);
        small.threads = 4;
        assert_int_equal(sc_trace_load(path, &small, &t, &e4), SC_E_LIMIT);
        assert_string_equal(e1.message, e4.message);
        remove_tmp(path);
    }
    free(text);
}

/* Members made of `},{` arrays, count of them, joined by "," - e.g.
 * "m0":[{"a":1},\n{"b":2}],"m1":... */
static char *boundary_members(int count) {
    size_t cap = (size_t)count * 40 + 1, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    for (int i = 0; i < count; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s\"m%d\":[{\"a\":1},\n{\"b\":2}]", i ? "," : "", i);
    return s;
}

/* Regression (review): members before or after the array, full of `},{`
 * and longer than the chunks the stream keeps, hung it. Guesses in the
 * head opened slices whose parked cursors held back the chunks slice 0
 * still had to read; after the array, slices never run held back the
 * chunks of the tail. alarm() turns a hang into a failure. */
static void test_stream_long_head_and_tail(void **state) {
    (void)state;
    char *members = boundary_members(3000); /* ~100 KB: 25 chunks of 4 KiB */
    size_t cap = strlen(members) + 64;
    char *head = malloc(cap), *tail = malloc(cap);
    assert_non_null(head);
    assert_non_null(tail);
    snprintf(head, cap, "{\"schemaVersion\":1,%s,\"traceEvents\":[\n", members);
    snprintf(tail, cap, "\n],%s}\n", members);
    char *texts[2] = {hostile_text(200, head, "\n]}\n"), hostile_text(200, "{\"traceEvents\":[\n", tail)};
    alarm(600); /* minutes under valgrind; milliseconds here */
    for (int k = 0; k < 2; k++) {
        char *plain = tmp_copy(texts[k], strlen(texts[k]), false);
        char *gz = tmp_copy(texts[k], strlen(texts[k]), true);
        sc_trace *seq = load_seq(plain);
        for (unsigned threads = 2; threads <= 8; threads *= 2) {
            for (int gzip = 0; gzip < 2; gzip++) { /* plain files too: their head is read first */
                sc_trace *t = NULL;
                assert_true(sc__kineto_load_parallel(gzip ? gz : plain, NULL, threads, 4096, &t));
                identical(seq, t);
                sc_trace_free(t);
            }
        }
        sc_trace_free(seq);
        remove_tmp(plain);
        remove_tmp(gz);
        free(texts[k]);
    }
    alarm(0);
    free(members);
    free(head);
    free(tail);
}

/* Regression (fuzz_split, clang UBSan): appending traces whose extras or
 * shapes are empty did arithmetic on their NULL arrays. */
static void test_append_empty_arrays(void **state) {
    (void)state;
    sc_trace *a = sc__trace_new("a"), *b = sc__trace_new("b");
    assert_true(sc__trace_append(a, b)); /* nothing to nothing */
    sc__event *e = sc__vec_push(&b->events);
    e->name = sc__intern_put(&b->strings, "k", 1);
    e->cat = 0;
    e->track = sc__trace_track(b, 1, SC__NONE, 2, SC__NONE);
    e->ext = e->shapes = SC__NONE;
    assert_true(sc__trace_append(a, b)); /* events, but no extras or shapes */
    assert_int_equal(a->events.len, 1);
    assert_int_equal(a->exts.len, 0);
    assert_string_equal(sc__trace_str(a, sc__trace_events(a)[0].name), "k");
    sc_trace_free(a);
    sc_trace_free(b);
}

/* A set's files share its threads: spare ones go to the files (which may
 * split), the first files taking the remainder, so all of them are used. */
static void test_threads_shared_out(void **state) {
    (void)state;
    const unsigned want16[3] = {6, 5, 5};
    for (size_t i = 0; i < 3; i++) assert_int_equal(sc__file_threads(16, 3, i), want16[i]);
    assert_int_equal(sc__file_threads(2, 1, 0), 2);
    for (size_t i = 0; i < 5; i++) assert_int_equal(sc__file_threads(2, 5, i), 1);
    assert_int_equal(sc__file_threads(3, 3, 2), 1);
    assert_int_equal(sc__file_threads(8, 0, 0), 1);
    for (unsigned threads = 1; threads < 40; threads++)
        for (size_t files = 1; files < threads; files++) {
            unsigned sum = 0;
            for (size_t i = 0; i < files; i++) sum += sc__file_threads(threads, files, i);
            assert_int_equal(sum, threads);
        }
}

/* A thread's nice value, or -100 where it cannot be read. */
static int nice_of(pid_t tid) {
    errno = 0;
    int v = getpriority(PRIO_PROCESS, (id_t)tid);
    return v == -1 && errno ? -100 : v;
}

typedef struct deferred {
    int before, after_ten, after_more;
} deferred;

static void *defer_thread(void *arg) {
    deferred *d = arg;
    pid_t self = gettid();
    d->before = nice_of(self);
    sc__thread_defer(10);
    d->after_ten = nice_of(self);
    sc__thread_defer(100); /* past the lowest priority: stays there */
    d->after_more = nice_of(self);
    return NULL;
}

static void test_parsers_defer(void **state) {
    (void)state;
    int mine = nice_of(gettid());
    assert_int_not_equal(mine, -100);
    deferred d;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, defer_thread, &d), 0);
    pthread_join(t, NULL);
    assert_int_equal(d.before, mine); /* a new thread starts where its creator is */
    assert_int_equal(d.after_ten, mine + 10 > 19 ? 19 : mine + 10);
    assert_int_equal(d.after_more, 19);
    assert_int_equal(nice_of(gettid()), mine); /* only the thread that asked */
}

/* `events` events of three kinds in turn (with shapes, with extras,
 * bare), then `padded` bare ones each carrying an argument of `pad` bytes
 * that the reader skips: a file whose events thin out. */
static char *sized_text(int events, int padded, size_t pad, size_t *n_out) {
    size_t cap = (size_t)events * 160 + (size_t)padded * (pad + 120) + 64, n = 0;
    char *text = malloc(cap), *filler = malloc(pad + 1);
    assert_non_null(text);
    assert_non_null(filler);
    memset(filler, 'x', pad);
    filler[pad] = '\0';
    n += (size_t)snprintf(text, cap, "{\"traceEvents\":[");
    for (int i = 0; i < events + padded; i++) {
        const char *sep = i ? "," : "";
        if (i >= events)
            n += (size_t)snprintf(text + n, cap - n,
                                  "%s{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1,"
                                  "\"args\":{\"note\":\"%s\"}}",
                                  sep, i, filler);
        else if (i % 3 == 0)
            n += (size_t)snprintf(text + n, cap - n,
                                  "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"mm\",\"pid\":1,\"tid\":1,"
                                  "\"ts\":%d,\"dur\":1,\"args\":{\"Input Dims\":[[%d]]}}",
                                  sep, i, i % 7);
        else if (i % 3 == 1)
            n += (size_t)snprintf(text + n, cap - n,
                                  "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                                  "\"ts\":%d,\"dur\":1,\"args\":{\"grid\":[%d,1,1]}}",
                                  sep, i, i % 5);
        else
            n += (size_t)snprintf(text + n, cap - n,
                                  "%s{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1}",
                                  sep, i);
    }
    n += (size_t)snprintf(text + n, cap - n, "]}");
    free(filler);
    *n_out = n;
    return text;
}

/* The result's arrays grow to the size the whole file is on course for as
 * slices are appended (size_result), past 2 MB of events: the trace is the
 * sequential one. Where that size would pass the budget they double
 * instead: 40,000 events, then 20,000 that carry 800 bytes each, project
 * to ~12 MB of events when 2 MB are in, over a budget of 8 MB that the
 * doubled arrays fit; the split read must still be taken, as the
 * sequential one is. */
static void test_sized_result(void **state) {
    (void)state;
    static const struct {
        int events, padded;
        uint64_t budget;
    } cases[] = {{90000, 0, 0}, {40000, 20000, (uint64_t)8 << 20}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        size_t n;
        char *text = sized_text(cases[c].events, cases[c].padded, 800, &n);
        for (int gzip = 0; gzip < 2; gzip++) {
            char *path = tmp_copy(text, n, gzip);
            sc_trace *seq = load_seq(path), *t = NULL;
            assert_int_equal(sc_trace_event_count(seq), (size_t)(cases[c].events + cases[c].padded));
            sc_load_options o = {.max_memory_bytes = cases[c].budget};
            sc_error err;
            o.threads = 1;
            assert_int_equal(sc_trace_load(path, &o, &t, &err), SC_OK);
            identical(seq, t);
            sc_trace_free(t);
            t = NULL;
            if (!sc__kineto_load_parallel(path, &o, 2, 256 << 10, &t))
                fail_msg("case %zu, %s: the split read gave up", c, gzip ? "gzip" : "plain");
            identical(seq, t);
            sc_trace_free(t);
            sc_trace_free(seq);
            remove_tmp(path);
        }
        free(text);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_traces),
        cmocka_unit_test(test_hostile_boundaries),
        cmocka_unit_test(test_members_after_events),
        cmocka_unit_test(test_errors_as_sequential),
        cmocka_unit_test(test_stream_edges),
        cmocka_unit_test(test_stream_long_head_and_tail),
        cmocka_unit_test(test_append_empty_arrays),
        cmocka_unit_test(test_threads_shared_out),
        cmocka_unit_test(test_parsers_defer),
        cmocka_unit_test(test_sized_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
