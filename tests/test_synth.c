/*
 * test_synth.c - `stepcast synth` (src/transforms/synth.c): determinism, the
 * template's structure kept, and collectives consistent across ranks.
 *
 * Expected counts are facts of the Megatron template read independently of
 * stepcast (its README: 690 kernels, 84 of them NCCL, per rank; 40 layers
 * with two all-reduces each).
 */
#include "testutil.h"
#include "trace/trace.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *template_path(void) {
    return sc_test_trace("megatron-tp8-a100/megatron_kineto_0.json.gz");
}

/* A fresh empty directory under /tmp. */
static const char *tmpdir(char *buf, size_t n) {
    snprintf(buf, n, "/tmp/sc_synth_XXXXXX");
    assert_non_null(mkdtemp(buf));
    return buf;
}

static void rmdir_all(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    char p[512];
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static void synth(const char *dir, uint32_t ranks, uint32_t iters, uint32_t layers, uint64_t seed,
                  int gzip) {
    char tpl[4096];
    snprintf(tpl, sizeof tpl, "%s", template_path());
    sc_synth_options o = {.template_path = tpl, .ranks = ranks, .iterations = iters,
                          .layers = layers, .seed = seed, .gzip = gzip, .force = 1};
    sc_error err;
    sc_status st = sc_synth(&o, dir, &err);
    if (st != SC_OK) fprintf(stderr, "synth: %s\n", err.message);
    assert_int_equal(st, SC_OK);
}

static bool same_file(const char *a, const char *b) {
    size_t na, nb;
    unsigned char *x = sc_test_read_raw(a, &na), *y = sc_test_read_raw(b, &nb);
    bool same = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

static void test_deterministic(void **state) {
    (void)state;
    char a[64], b[64], c[64], pa[128], pb[128], pc[128];
    tmpdir(a, sizeof a);
    tmpdir(b, sizeof b);
    tmpdir(c, sizeof c);
    synth(a, 2, 1, 3, 42, 0);
    synth(b, 2, 1, 3, 42, 0);
    synth(c, 2, 1, 3, 43, 0);
    for (int r = 0; r < 2; r++) {
        snprintf(pa, sizeof pa, "%s/rank-%05d.json", a, r);
        snprintf(pb, sizeof pb, "%s/rank-%05d.json", b, r);
        snprintf(pc, sizeof pc, "%s/rank-%05d.json", c, r);
        assert_true(same_file(pa, pb));
        assert_false(same_file(pa, pc)); /* the seed matters */
    }
    rmdir_all(a);
    rmdir_all(b);
    rmdir_all(c);
}

static size_t count_kernels(const sc_trace *t, bool nccl_only) {
    const sc__event *ev = sc__trace_events(t);
    size_t n = 0;
    for (size_t i = 0; i < t->events.len; i++)
        if (ev[i].kind == SC_K_KERNEL && (!nccl_only || (ev[i].flags & SC_EF_NCCL))) n++;
    return n;
}

static size_t count_steps(const sc_trace *t) {
    const sc__event *ev = sc__trace_events(t);
    size_t n = 0;
    for (size_t i = 0; i < t->events.len; i++)
        if (ev[i].kind == SC_K_USER_ANNOTATION && sc__starts_with(sc__trace_str(t, ev[i].name), "ProfilerStep#"))
            n++;
    return n;
}

/* Default layers reproduce the template's counts, per iteration; gzip and
 * plain output carry the same content. */
static void test_template_counts(void **state) {
    (void)state;
    char d[64], g[64], p[160], q[160];
    tmpdir(d, sizeof d);
    tmpdir(g, sizeof g);
    synth(d, 1, 2, 0, 1, 0);
    synth(g, 1, 2, 0, 1, 1);
    snprintf(p, sizeof p, "%s/rank-00000.json", d);
    snprintf(q, sizeof q, "%s/rank-00000.json.gz", g);
    sc_trace *t, *u;
    sc_error err;
    assert_int_equal(sc_trace_load(p, NULL, &t, &err), SC_OK);
    assert_int_equal(sc_trace_load(q, NULL, &u, &err), SC_OK);
    assert_int_equal(count_kernels(t, false), 2 * 690);
    assert_int_equal(count_kernels(t, true), 2 * 84);
    assert_int_equal(count_steps(t), 2);
    assert_int_equal(sc_trace_rank(t), 0);
    assert_int_equal(sc_trace_world_size(t), 1);
    assert_int_equal(sc_trace_event_count(t), sc_trace_event_count(u));
    assert_int_equal(t->input_bytes, u->input_bytes);
    sc_trace_free(t);
    sc_trace_free(u);
    rmdir_all(d);
    rmdir_all(g);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Structure a replay relies on: launches precede their GPU op, CPU nesting
 * is valid, ops on a stream do not overlap, and the k-th collective ends at
 * nearly the same time on every rank while starts differ. */
static void test_replayable(void **state) {
    (void)state;
    char d[64];
    tmpdir(d, sizeof d);
    enum { R = 4, L = 3 };
    synth(d, R, 2, L, 7, 0);
    const char *paths[1] = {d};
    sc_traceset *set;
    sc_error err;
    assert_int_equal(sc_traceset_load(paths, 1, NULL, &set, &err), SC_OK);
    assert_int_equal(sc_traceset_count(set), R);
    int64_t *starts[R], *ends[R];
    size_t ncoll = 0;
    for (size_t r = 0; r < R; r++) {
        const sc_trace *t = sc_traceset_trace(set, r);
        assert_int_equal(sc_trace_rank(t), (int64_t)r);
        assert_int_equal(sc_trace_world_size(t), R);
        const sc__event *ev = sc__trace_events(t);
        size_t n = t->events.len, k = 0;
        /* launches: correlation of each GPU op on exactly one earlier CPU call */
        for (size_t i = 0; i < n; i++) {
            if (!(ev[i].flags & SC_EF_GPU)) continue;
            size_t found = 0;
            for (size_t j = 0; j < n; j++)
                if ((ev[j].kind == SC_K_RUNTIME || ev[j].kind == SC_K_DRIVER) &&
                    ev[j].correlation == ev[i].correlation) {
                    found++;
                    assert_true(ev[j].ts <= ev[i].ts);
                }
            assert_int_equal(found, 1);
        }
        /* per track: GPU ops never overlap; CPU events nest */
        for (uint32_t tr = 0; tr < t->tracks.len; tr++) {
            int64_t stack[64];
            int depth = 0;
            int64_t last_end = INT64_MIN;
            for (size_t i = 0; i < n; i++) { /* file order is time order per track here */
                if (ev[i].track != tr || ev[i].ph != 'X') continue;
                if (ev[i].flags & SC_EF_GPU) {
                    assert_true(ev[i].ts >= last_end);
                    last_end = ev[i].ts + ev[i].dur;
                } else if (ev[i].kind != SC_K_USER_ANNOTATION ||
                           !sc__starts_with(sc__trace_str(t, ev[i].name), "ProfilerStep#")) {
                    while (depth && stack[depth - 1] <= ev[i].ts) depth--;
                    if (depth) assert_true(ev[i].ts + ev[i].dur <= stack[depth - 1]);
                    assert_true(depth < 64);
                    stack[depth++] = ev[i].ts + ev[i].dur;
                }
            }
        }
        starts[r] = calloc(n, sizeof(int64_t));
        ends[r] = calloc(n, sizeof(int64_t));
        for (size_t i = 0; i < n; i++)
            if (ev[i].flags & SC_EF_NCCL) {
                starts[r][k] = ev[i].ts;
                ends[r][k++] = ev[i].ts + ev[i].dur;
            }
        if (r == 0) ncoll = k;
        assert_int_equal(k, ncoll); /* same count on every rank */
        assert_int_equal(k, 2 * 2 * L + 2 * 4); /* 2 per layer + the prologue's/epilogue's, x2 iterations */
        qsort(starts[r], k, sizeof(int64_t), cmp_i64);
        qsort(ends[r], k, sizeof(int64_t), cmp_i64);
    }
    int64_t max_start_spread = 0;
    for (size_t c = 0; c < ncoll; c++) {
        int64_t lo_e = INT64_MAX, hi_e = INT64_MIN, lo_s = INT64_MAX, hi_s = INT64_MIN;
        for (size_t r = 0; r < R; r++) {
            if (ends[r][c] < lo_e) lo_e = ends[r][c];
            if (ends[r][c] > hi_e) hi_e = ends[r][c];
            if (starts[r][c] < lo_s) lo_s = starts[r][c];
            if (starts[r][c] > hi_s) hi_s = starts[r][c];
        }
        assert_true(hi_e - lo_e <= 2000); /* ends within 2 us */
        assert_true(lo_e >= hi_s);       /* nobody ends before the last arrival */
        if (hi_s - lo_s > max_start_spread) max_start_spread = hi_s - lo_s;
    }
    assert_true(max_start_spread > 10000); /* ranks arrive at different times */
    for (size_t r = 0; r < R; r++) {
        free(starts[r]);
        free(ends[r]);
    }
    sc_traceset_free(set);
    rmdir_all(d);
}

/* The text of a file (gunzipped), NUL-terminated. */
static char *text_of(const char *path) {
    size_t n;
    unsigned char *b = sc_test_read_file(path, &n);
    assert_non_null(b);
    char *t = realloc(b, n + 1);
    assert_non_null(t);
    t[n] = '\0';
    return t;
}

/* The metadata event named `name` for (pid, tid) says `want` in its args
 * (its pid and tid are on its first lines, its args after them). */
static void metadata_says(const char *text, const char *name, const char *pid_tid, const char *want) {
    char head[160];
    snprintf(head, sizeof head, "\"name\": \"%s\", \"ph\": \"M\", \"ts\": ", name);
    const char *open = "\n    \"args\": {\n      ";
    for (const char *p = strstr(text, head); p; p = strstr(p + 1, head)) {
        const char *args = strstr(p, open), *at = strstr(p, pid_tid);
        if (!args) fail_msg("%s: no args", name);
        if (!at || at > args) continue; /* another process's or thread's */
        if (strncmp(args + strlen(open), want, strlen(want)) != 0)
            fail_msg("%s of %s: args are not %s", name, pid_tid, want);
        return;
    }
    fail_msg("no %s for %s", name, pid_tid);
}

/* What other tools read as text is Kineto's own: the header up to the rank
 * byte for byte the template's, distributedInfo spelt as Kineto spells it,
 * record_shapes; events in Kineto's layout; metadata events with Kineto's
 * args (TraceLens fails on empty ones); whole-microsecond timestamps like
 * the template's; every operator the template recorded with shapes keeps
 * them; and stepcast reads it back. */
static void test_kineto_layout(void **state) {
    (void)state;
    char d[64], p[160];
    tmpdir(d, sizeof d);
    synth(d, 4, 1, 0, 5, 1);
    snprintf(p, sizeof p, "%s/rank-00003.json.gz", d);
    char *syn = text_of(p), *tpl = text_of(template_path());
    const char *cut = strstr(tpl, "\"distributedInfo\"");
    assert_non_null(cut);
    assert_memory_equal(syn, tpl, (size_t)(cut - tpl));
    assert_non_null(strstr(syn, "\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 4},\n"
                                "  \"record_shapes\": 1,\n  \"traceEvents\": [\n  {\n    \"ph\": \"X\", \"cat\": "
                                "\"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 2590092, \"tid\": 2590092,\n"
                                "    \"ts\": "));
    assert_non_null(strstr(syn, "\n    \"args\": {\n      \"External id\": 1,\"Ev Idx\": 0\n    }\n  },\n  {\n"));
    assert_non_null(strstr(syn, ",\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": 7, "
                                "\"correlation\": "));
    assert_non_null(strstr(syn, "\"blocks per SM\": 0.14814815,\n      \"warps per SM\": 0.5925926,\n      "
                                "\"grid\": [16, 1, 1],\n      \"block\": [128, 1, 1]\n    }"));
    assert_non_null(strstr(syn, ",\n      \"cbid\": 138, \"correlation\": "));
    assert_non_null(strstr(syn, "\"Input type\": [\"c10::Half\"], \"Input Dims\": [[4, 2048, 4096]], \"Ev Idx\": "));
    const char *tail = "\n  }\n  ],\n  \"traceName\": \"rank-00003.json\"\n}";
    assert_string_equal(syn + strlen(syn) - strlen(tail), tail);
    metadata_says(syn, "process_labels", "\"pid\": 2590092, \"tid\": 0", "\"labels\": \"CPU\"\n");
    metadata_says(syn, "process_labels", "\"pid\": 5, \"tid\": 0", "\"labels\": \"GPU 5\"\n");
    metadata_says(syn, "process_sort_index", "\"pid\": 2590092, \"tid\": 0", "\"sort_index\": 2590092\n");
    metadata_says(syn, "process_sort_index", "\"pid\": 1, \"tid\": 0", "\"sort_index\": 16777217\n");
    metadata_says(syn, "process_sort_index", "\"pid\": \"Spans\", \"tid\": 0", "\"sort_index\": 536870912\n");
    metadata_says(syn, "thread_sort_index", "\"pid\": 0, \"tid\": 24", "\"sort_index\": 24\n");
    metadata_says(syn, "thread_name", "\"pid\": 0, \"tid\": 24", "\"name\": \"stream 24 \"\n");
    metadata_says(syn, "process_name", "\"pid\": 3, \"tid\": 0", "\"name\": \"python\"\n");
    assert_null(strstr(syn, "\"args\": {}"));
    assert_null(strstr(syn, "\"args\": {\n    }"));

    sc_trace *t, *u;
    sc_error err;
    assert_int_equal(sc_trace_load(p, NULL, &t, &err), SC_OK);
    assert_int_equal(sc_trace_load(template_path(), NULL, &u, &err), SC_OK);
    assert_int_equal(sc_trace_rank(t), 3);
    assert_int_equal(sc_trace_world_size(t), 4);
    size_t shaped[2] = {0, 0};
    const sc_trace *both[2] = {t, u};
    for (int k = 0; k < 2; k++) {
        const sc__event *ev = sc__trace_events(both[k]);
        for (size_t i = 0; i < both[k]->events.len; i++) {
            if (k == 0) assert_int_equal((ev[i].ts - both[k]->base_time_ns) % 1000, 0);
            if (ev[i].kind == SC_K_CPU_OP && ev[i].shapes != SC__NONE) shaped[k]++;
        }
    }
    printf("# cpu_ops with shapes: %zu synthetic, %zu in the template\n", shaped[0], shaped[1]);
    assert_int_equal(shaped[0], shaped[1]);
    assert_true(shaped[0] > 4000);
    sc_trace_free(t);
    sc_trace_free(u);
    free(syn);
    free(tpl);
    rmdir_all(d);
}

static void test_bad_options(void **state) {
    (void)state;
    sc_synth_options o = {.template_path = "/nonexistent/trace.json", .ranks = 2};
    sc_error err;
    char d[64];
    tmpdir(d, sizeof d);
    assert_int_equal(sc_synth(&o, d, &err), SC_E_IO);
    o.ranks = 0;
    assert_int_equal(sc_synth(&o, d, &err), SC_E_USAGE);
    rmdir_all(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_template_counts),
        cmocka_unit_test(test_replayable),
        cmocka_unit_test(test_kineto_layout),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
