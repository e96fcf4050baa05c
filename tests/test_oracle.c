/*
 * test_oracle.c - the Kineto reader against yajl, an independent JSON parser.
 *
 * For every Kineto trace under shared/traces (found by walking the folder
 * and looking for "traceEvents", so new traces are picked up), yajl's
 * callback parser streams the file and this program works out, with its
 * own code: the number of events, the count per category and per phase, the
 * sums of ts and dur in nanoseconds, and the names of the first and last
 * events. The reader must give the same figures. yajl is used here only,
 * never in the library.
 */
#include "testutil.h"

#include "trace/trace.h"

#include <ftw.h>
#include <sys/stat.h>
#include <yajl/yajl_parse.h>

/* ------------------------------------------------------------- the oracle */

#define MAX_CATS 64

typedef struct figures {
    uint64_t events;
    uint64_t sum_ts, sum_dur; /* ns, wrapping */
    uint64_t base_eligible;   /* events that baseTimeNanoseconds is added to */
    int64_t base;
    char cats[MAX_CATS][48];
    uint64_t cat_count[MAX_CATS];
    size_t ncats;
    uint64_t ph_count[128];
    char first[256], last[256];
    int64_t rank;
} figures;

typedef struct oracle {
    figures *f;
    int depth;           /* open containers */
    int events_depth;    /* depth of the traceEvents array, 0 when not in it */
    bool next_is_events; /* the last top-level key was traceEvents */
    bool next_is_base;   /* ... was baseTimeNanoseconds */
    bool in_dist;        /* inside distributedInfo */
    bool next_is_rank;
    char key[64];        /* the current key of the event object */
    /* the event being read */
    int nkeys;
    char ph, name[256], cat[48];
    int64_t ts, dur;
    bool has_ts;
} oracle;

/* Decimal microseconds to ns: the integer part exactly, three decimals, the
 * fourth rounds half away from zero; exponent forms through long double. */
static int64_t us_text_to_ns(const char *s, size_t n) {
    char buf[128];
    assert_true(n < sizeof buf);
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (strpbrk(buf, "eE")) {
        long double v = strtold(buf, NULL) * 1000.0L;
        return (int64_t)(v < 0 ? v - 0.5L : v + 0.5L);
    }
    const char *p = buf;
    bool neg = *p == '-';
    if (neg) p++;
    __int128 v = 0;
    for (; *p >= '0' && *p <= '9'; p++) v = v * 10 + (*p - '0');
    v *= 1000;
    if (*p == '.') {
        p++;
        int scale = 100;
        for (int i = 0; i < 3; i++, scale /= 10)
            if (*p >= '0' && *p <= '9') v += (*p++ - '0') * scale;
        if (*p >= '5' && *p <= '9') v += 1;
    }
    return (int64_t)(neg ? -v : v);
}

static int64_t int_text(const char *s, size_t n) {
    char buf[64];
    assert_true(n < sizeof buf);
    memcpy(buf, s, n);
    buf[n] = '\0';
    return strtoll(buf, NULL, 10);
}

static bool in_event(const oracle *o) {
    return o->events_depth && o->depth == o->events_depth + 1;
}

static void copy_text(char *dst, size_t cap, const unsigned char *s, size_t n) {
    if (n >= cap) n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static int cb_null(void *ctx) {
    (void)ctx;
    return 1;
}

static int cb_bool(void *ctx, int b) {
    (void)ctx;
    (void)b;
    return 1;
}

static int cb_number(void *ctx, const char *s, size_t n) {
    oracle *o = ctx;
    if (o->depth == 1 && o->next_is_base) o->f->base = int_text(s, n);
    if (o->in_dist && o->depth == 2 && o->next_is_rank) o->f->rank = int_text(s, n);
    if (in_event(o)) {
        if (strcmp(o->key, "ts") == 0) {
            o->ts = us_text_to_ns(s, n);
            o->has_ts = true;
        } else if (strcmp(o->key, "dur") == 0) {
            o->dur = us_text_to_ns(s, n);
        }
    }
    o->next_is_base = o->next_is_rank = false;
    return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t n) {
    oracle *o = ctx;
    if (in_event(o)) {
        if (strcmp(o->key, "name") == 0) copy_text(o->name, sizeof o->name, s, n);
        else if (strcmp(o->key, "cat") == 0) copy_text(o->cat, sizeof o->cat, s, n);
        else if (strcmp(o->key, "ph") == 0 && n == 1) o->ph = (char)s[0];
    }
    if (o->depth == 1 && o->next_is_base) o->f->base = int_text((const char *)s, n);
    if (o->in_dist && o->depth == 2 && o->next_is_rank) o->f->rank = int_text((const char *)s, n);
    o->next_is_base = o->next_is_rank = false;
    return 1;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n) {
    oracle *o = ctx;
    if (o->depth == 1) {
        o->next_is_events = n == 11 && memcmp(s, "traceEvents", 11) == 0;
        o->next_is_base = n == 19 && memcmp(s, "baseTimeNanoseconds", 19) == 0;
        o->in_dist = n == 15 && memcmp(s, "distributedInfo", 15) == 0;
    } else if (o->in_dist && o->depth == 2) {
        o->next_is_rank = n == 4 && memcmp(s, "rank", 4) == 0;
    } else if (in_event(o)) {
        copy_text(o->key, sizeof o->key, s, n);
        o->nkeys++;
    }
    return 1;
}

static int cb_start_map(void *ctx) {
    oracle *o = ctx;
    if (o->events_depth && o->depth == o->events_depth) { /* an event begins */
        o->nkeys = 0;
        o->ph = 0;
        o->name[0] = o->cat[0] = '\0';
        o->ts = o->dur = 0;
        o->has_ts = false;
        o->key[0] = '\0';
    }
    o->depth++;
    if (o->depth > 2 || !o->in_dist) o->next_is_events = false;
    return 1;
}

static void finish_event(oracle *o) {
    figures *f = o->f;
    if (o->nkeys == 0) return; /* {} carries nothing */
    f->events++;
    f->sum_ts += (uint64_t)o->ts;
    f->sum_dur += (uint64_t)o->dur;
    if (o->ph != 'M' || o->ts != 0) f->base_eligible++;
    f->ph_count[(unsigned char)o->ph & 127]++;
    size_t i;
    for (i = 0; i < f->ncats; i++)
        if (strcmp(f->cats[i], o->cat) == 0) break;
    if (i == f->ncats) {
        assert_true(f->ncats < MAX_CATS);
        snprintf(f->cats[f->ncats++], sizeof f->cats[0], "%s", o->cat);
    }
    f->cat_count[i]++;
    if (f->events == 1) snprintf(f->first, sizeof f->first, "%s", o->name);
    snprintf(f->last, sizeof f->last, "%s", o->name);
}

static int cb_end_map(void *ctx) {
    oracle *o = ctx;
    o->depth--;
    if (o->events_depth && o->depth == o->events_depth) finish_event(o);
    if (o->depth == 1) o->in_dist = false;
    return 1;
}

static int cb_start_array(void *ctx) {
    oracle *o = ctx;
    if ((o->depth == 1 && o->next_is_events) || o->depth == 0) o->events_depth = o->depth + 1;
    o->next_is_events = false;
    o->depth++;
    return 1;
}

static int cb_end_array(void *ctx) {
    oracle *o = ctx;
    if (o->events_depth && o->depth == o->events_depth) o->events_depth = 0;
    o->depth--;
    return 1;
}

static const yajl_callbacks callbacks = {
    cb_null,    cb_bool,    NULL,         NULL,       cb_number,     cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

static void oracle_figures(const char *path, figures *f) {
    memset(f, 0, sizeof *f);
    f->rank = -1;
    oracle o;
    memset(&o, 0, sizeof o);
    o.f = f;
    yajl_handle h = yajl_alloc(&callbacks, NULL, &o);
    assert_non_null(h);
    gzFile g = gzopen(path, "rb"); /* reads plain files as they are */
    assert_non_null(g);
    static unsigned char buf[1 << 16];
    for (;;) {
        int n = gzread(g, buf, sizeof buf);
        assert_true(n >= 0);
        if (n == 0) break;
        if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) {
            unsigned char *msg = yajl_get_error(h, 0, buf, (size_t)n);
            fail_msg("yajl: %s: %s", path, msg);
        }
    }
    assert_int_equal(yajl_complete_parse(h), yajl_status_ok);
    gzclose(g);
    yajl_free(h);
}

/* ------------------------------------------------------------ our figures */

static void reader_figures(const sc_trace *t, figures *f) {
    memset(f, 0, sizeof *f);
    const sc__event *ev = sc__trace_events(t);
    f->events = t->events.len;
    f->base = t->base_time_ns;
    f->rank = t->rank;
    for (size_t k = 0; k < t->events.len; k++) {
        const sc__event *e = &ev[k];
        f->sum_ts += (uint64_t)e->ts;
        f->sum_dur += (uint64_t)e->dur;
        f->ph_count[(unsigned char)e->ph & 127]++;
        const char *cat = sc__trace_str(t, e->cat);
        size_t i;
        for (i = 0; i < f->ncats; i++)
            if (strcmp(f->cats[i], cat) == 0) break;
        if (i == f->ncats) {
            assert_true(f->ncats < MAX_CATS);
            snprintf(f->cats[f->ncats++], sizeof f->cats[0], "%s", cat);
        }
        f->cat_count[i]++;
    }
    if (t->events.len) {
        snprintf(f->first, sizeof f->first, "%s", sc__trace_str(t, ev[0].name));
        snprintf(f->last, sizeof f->last, "%s", sc__trace_str(t, ev[t->events.len - 1].name));
    }
}

static uint64_t cat_count(const figures *f, const char *cat) {
    for (size_t i = 0; i < f->ncats; i++)
        if (strcmp(f->cats[i], cat) == 0) return f->cat_count[i];
    return 0;
}

static void compare(const char *path) {
    figures want, got;
    oracle_figures(path, &want);
    /* the reader adds baseTimeNanoseconds to every timed event */
    want.sum_ts += (uint64_t)want.base * want.base_eligible;

    sc_trace *t = NULL;
    sc_error err;
    char msg[1024];
    if (sc_trace_load(path, NULL, &t, &err) != SC_OK)
        fail_msg("%s", sc_error_format(&err, msg, sizeof msg));
    reader_figures(t, &got);
    sc_trace_free(t);

    if (got.events != want.events)
        fail_msg("%s: %llu events, yajl %llu", path, (unsigned long long)got.events,
                 (unsigned long long)want.events);
    assert_int_equal(got.base, want.base);
    assert_int_equal(got.rank, want.rank);
    if (got.sum_ts != want.sum_ts) fail_msg("%s: sum of ts differs", path);
    if (got.sum_dur != want.sum_dur) fail_msg("%s: sum of dur differs", path);
    assert_int_equal(got.ncats, want.ncats);
    for (size_t i = 0; i < want.ncats; i++)
        if (cat_count(&got, want.cats[i]) != want.cat_count[i])
            fail_msg("%s: category '%s': %llu, yajl %llu", path, want.cats[i],
                     (unsigned long long)cat_count(&got, want.cats[i]),
                     (unsigned long long)want.cat_count[i]);
    for (int c = 0; c < 128; c++)
        if (got.ph_count[c] != want.ph_count[c]) fail_msg("%s: phase '%c' count differs", path, c);
    assert_string_equal(got.first, want.first);
    assert_string_equal(got.last, want.last);
}

/* ----------------------------------------------------------- the file walk */

static char found[64][4096];
static size_t nfound;
static size_t skipped_big;

static bool is_kineto(const char *path) {
    gzFile g = gzopen(path, "rb");
    if (!g) return false;
    static char head[1 << 16];
    int n = gzread(g, head, sizeof head - 1);
    gzclose(g);
    if (n <= 0) return false;
    head[n] = '\0';
    return memmem(head, (size_t)n, "\"traceEvents\"", 13) != NULL;
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int visit(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)ftw;
    if (type != FTW_F || !(has_suffix(path, ".json") || has_suffix(path, ".json.gz"))) return 0;
    if (!is_kineto(path)) return 0;
    if (!sc_test_big_ok() && sb->st_size > 1000000) { /* under valgrind */
        skipped_big++;
        return 0;
    }
    if (nfound < sizeof found / sizeof found[0])
        snprintf(found[nfound++], sizeof found[0], "%s", path);
    return 0;
}

static int cmp_path(const void *a, const void *b) { return strcmp(a, b); }

static void test_oracle_every_trace(void **state) {
    (void)state;
    char root[4096];
    snprintf(root, sizeof root, "%s", sc_test_trace(""));
    nfound = skipped_big = 0;
    assert_int_equal(nftw(root, visit, 16, FTW_PHYS), 0);
    qsort(found, nfound, sizeof found[0], cmp_path);
    /* 8 Megatron + 8 DLRM + 13 HTA files today; more are welcome */
    assert_true(nfound + skipped_big >= 29);
    for (size_t i = 0; i < nfound; i++) compare(found[i]);
    print_message("compared %zu traces with yajl (%zu large ones left out)\n", nfound, skipped_big);
}

/* The oracle itself, on a hand-made trace with every figure known. */
static void test_oracle_self_check(void **state) {
    (void)state;
    static const char text[] =
        "{\"distributedInfo\": {\"rank\": 2}, \"traceEvents\": [\n"
        " {\"ph\": \"M\", \"name\": \"process_name\", \"args\": {\"name\": \"x\", \"ts\": 99}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1.0005, \"dur\": 2,\n"
        "  \"args\": {\"dur\": 7, \"nested\": [{\"name\": \"no\"}]}},\n"
        " {},\n"
        " {\"name\": \"last\", \"ph\": \"i\", \"ts\": 3e0, \"cat\": \"kernel\"}],\n"
        " \"baseTimeNanoseconds\": 10}";
    const char *path = sc_test_tmpfile(text, sizeof text - 1, ".json");
    assert_non_null(path);
    char copy[512];
    snprintf(copy, sizeof copy, "%s", path);
    figures f;
    oracle_figures(copy, &f);
    assert_int_equal(f.events, 3);
    assert_int_equal(f.sum_ts, 1001 + 3000);
    assert_int_equal(f.sum_dur, 2000);
    assert_int_equal(f.base, 10);
    assert_int_equal(f.base_eligible, 2);
    assert_int_equal(f.rank, 2);
    assert_int_equal(cat_count(&f, "kernel"), 2);
    assert_int_equal(cat_count(&f, ""), 1);
    assert_int_equal(f.ph_count['X'], 1);
    assert_string_equal(f.first, "process_name");
    assert_string_equal(f.last, "last");
    compare(copy);
    unlink(copy);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_self_check),
        cmocka_unit_test(test_oracle_every_trace),
    };
    return cmocka_run_group_tests_name("kineto reader vs yajl", tests, NULL, NULL);
}
