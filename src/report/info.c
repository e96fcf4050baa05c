/*
 * info.c - `stepcast info`: what is in each rank's trace.
 *
 * Per rank: file, rank, world size, GPU, event counts by category, kernels
 * per stream, NCCL collectives by kind, iterations (ProfilerStep#N) and GPU
 * busy time (the union of kernel/memcpy/memset intervals). Text for people,
 * JSON for scripts; both are built in memory and written at once.
 *
 * A rank's report is a head that holds its rank, which a set assigns only
 * once every file is read, and a body worked out from the trace. A set
 * loaded with sc_traceset_load_for_info (the CLI's way) renders both
 * bodies as each file is read and keeps only the trace's header, so `info`
 * on a job of thousands of ranks holds the files being read, not the job.
 */
#include "../readers/chakra.h"
#include "../trace/trace.h"

#include <stdlib.h>

typedef struct count_entry {
    const char *key;
    uint64_t count;
} count_entry;

typedef struct counter {
    count_entry *items;
    size_t count, cap;
} counter;

/* The index of key's entry, added with a count of 0 if new: key is then
 * copied into `keys`, or kept as given where keys is NULL (a string that
 * outlives the counter). SIZE_MAX when out of memory. */
static size_t counter_find(counter *c, sc__arena *keys, const char *key) {
    for (size_t i = 0; i < c->count; i++)
        if (strcmp(c->items[i].key, key) == 0) return i;
    if (keys && !(key = sc__arena_strndup(keys, key, strlen(key)))) return SIZE_MAX;
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        count_entry *p = sc__realloc_array(c->items, cap, sizeof *p);
        if (!p) return SIZE_MAX;
        c->items = p;
        c->cap = cap;
    }
    c->items[c->count] = (count_entry){key, 0};
    return c->count++;
}

/* A counter's entry by a number that stands for its key (an interned
 * string's id, a stream): a trace names a few categories and streams over
 * millions of events, so comparing numbers, and making and comparing the
 * key only on a number's first sight, spares a strcmp per entry and an
 * snprintf per kernel (7% of `stepcast info`, perf). Two numbers may share
 * an entry (category id 0 reads "(none)"); the entries are the same as
 * counting by key. */
typedef struct key_memo {
    int64_t num;
    size_t at;
} key_memo;

/* The entry for num in memos (an sc__vec of key_memo), or SIZE_MAX where
 * its key must be found first. */
static size_t memo_find(const sc__vec *memos, int64_t num) {
    const key_memo *m = memos->data;
    for (size_t i = 0; i < memos->len; i++)
        if (m[i].num == num) return m[i].at;
    return SIZE_MAX;
}

static bool memo_add(sc__vec *memos, int64_t num, size_t at) {
    key_memo *m = sc__vec_push(memos);
    if (m) *m = (key_memo){num, at};
    return m != NULL;
}

static int cmp_entry(const void *a, const void *b) {
    return strcmp(((const count_entry *)a)->key, ((const count_entry *)b)->key);
}

typedef struct interval {
    int64_t start, end;
} interval;

static int cmp_interval(const void *a, const void *b) {
    const interval *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Union length of the GPU intervals, in ns. */
static int64_t gpu_busy_ns(const sc_trace *t) {
    const sc__event *ev = sc__trace_events(t);
    size_t n = 0;
    for (size_t i = 0; i < t->events.len; i++) n += (ev[i].flags & SC_EF_GPU) && ev[i].ph == 'X';
    if (!n) return 0;
    interval *iv = sc__alloc_array(n, sizeof *iv);
    if (!iv) return -1;
    size_t k = 0;
    for (size_t i = 0; i < t->events.len; i++)
        if ((ev[i].flags & SC_EF_GPU) && ev[i].ph == 'X')
            iv[k++] = (interval){ev[i].ts, ev[i].ts + ev[i].dur};
    qsort(iv, n, sizeof *iv, cmp_interval);
    int64_t busy = 0, s = iv[0].start, e = iv[0].end;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start > e) {
            busy += e - s;
            s = iv[i].start;
            e = iv[i].end;
        } else if (iv[i].end > e) {
            e = iv[i].end;
        }
    }
    free(iv);
    return busy + (e - s);
}

typedef struct rank_info {
    counter cats, streams, colls;
    uint64_t kernels, nccl, gpu_events;
    int64_t busy_ns;
} rank_info;

static void rank_info_free(rank_info *ri) {
    free(ri->cats.items);
    free(ri->streams.items);
    free(ri->colls.items);
}

/* Counts key (copied into the arena on first sight). */
static bool count_key(counter *c, sc__arena *keys, const char *key) {
    size_t at = counter_find(c, keys, key);
    if (at == SIZE_MAX) return false;
    c->items[at].count++;
    return true;
}

/* Counts event e's category, by its string id. */
static bool count_category(const sc_trace *t, counter *c, sc__vec *m, const sc__event *e) {
    size_t at = memo_find(m, e->cat);
    if (at == SIZE_MAX) {
        at = counter_find(c, NULL, e->cat ? sc__trace_str(t, e->cat) : "(none)");
        if (at == SIZE_MAX || !memo_add(m, e->cat, at)) return false;
    }
    c->items[at].count++;
    return true;
}

/* Counts kernel e's stream, its key the stream's number in decimal. */
static bool count_stream(const sc_trace *t, counter *c, sc__vec *m, sc__arena *keys,
                         const sc__event *e) {
    int64_t stream = sc__event_stream(t, e);
    size_t at = memo_find(m, stream);
    if (at == SIZE_MAX) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)stream);
        at = counter_find(c, keys, key);
        if (at == SIZE_MAX || !memo_add(m, stream, at)) return false;
    }
    c->items[at].count++;
    return true;
}

static bool gather(const sc_trace *t, rank_info *ri, sc__arena *keys) {
    memset(ri, 0, sizeof *ri);
    const sc__event *ev = sc__trace_events(t);
    sc__vec cats, streams; /* key_memo */
    sc__vec_init(&cats, sizeof(key_memo));
    sc__vec_init(&streams, sizeof(key_memo));
    bool ok = true;
    for (size_t i = 0; ok && i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        ok = count_category(t, &ri->cats, &cats, e);
        if (!ok || e->kind != SC_K_KERNEL || e->ph != 'X') continue;
        ri->kernels++;
        ok = count_stream(t, &ri->streams, &streams, keys, e);
        if (!ok || !(e->flags & SC_EF_NCCL)) continue;
        ri->nccl++;
        const sc__event_ext *x = sc__trace_ext(t, e);
        char key[64];
        if (x && x->coll_name != SC__NONE) snprintf(key, sizeof key, "%s", sc__trace_str(t, x->coll_name));
        else sc__nccl_kind(sc__trace_str(t, e->name), key, sizeof key);
        ok = count_key(&ri->colls, keys, key);
    }
    sc__vec_free(&cats);
    sc__vec_free(&streams);
    if (!ok) return false;
    ri->busy_ns = gpu_busy_ns(t);
    if (ri->busy_ns < 0) return false;
    if (ri->cats.count) qsort(ri->cats.items, ri->cats.count, sizeof(count_entry), cmp_entry);
    if (ri->colls.count) qsort(ri->colls.items, ri->colls.count, sizeof(count_entry), cmp_entry);
    return true;
}

static bool is_iteration(const sc_trace *t, const sc__event *e) {
    return e->ph == 'X' && (e->kind == SC_K_USER_ANNOTATION || e->kind == SC_K_CPU_OP) &&
           sc__starts_with(sc__trace_str(t, e->name), "ProfilerStep#");
}

static void put_counter_json(sc__buf *b, const counter *c) {
    sc__buf_puts(b, "{");
    for (size_t i = 0; i < c->count; i++) {
        if (i) sc__buf_puts(b, ", ");
        sc__buf_json_str(b, c->items[i].key, strlen(c->items[i].key));
        sc__buf_printf(b, ": %llu", (unsigned long long)c->items[i].count);
    }
    sc__buf_puts(b, "}");
}

/* A rank's report opens with its rank, which a set assigns after every
 * file is read (from the file name or argument order where the trace has
 * none); the rest, its body, comes from the trace alone. */
static void put_head_json(sc__buf *b, const sc_trace *t) {
    sc__buf_puts(b, "    {\"file\": ");
    sc__buf_json_str(b, t->path, strlen(t->path));
    if (t->format == SC__FMT_CHAKRA) sc__buf_puts(b, ", \"format\": \"chakra\"");
    sc__buf_printf(b, ", \"rank\": %lld, ", (long long)t->rank);
}

static void put_body_json(sc__buf *b, const sc_trace *t, const rank_info *ri) {
    sc__buf_printf(b, "\"world_size\": %lld, ", (long long)t->world_size);
    const char *gpu = sc__trace_gpu_name(t);
    sc__buf_puts(b, "\"gpu\": ");
    sc__buf_json_str(b, gpu, strlen(gpu));
    sc__buf_printf(b, ", \"bytes\": %llu, \"events\": %zu, \"categories\": ",
                   (unsigned long long)t->input_bytes, t->events.len);
    put_counter_json(b, &ri->cats);
    sc__buf_printf(b, ", \"kernels\": %llu, \"kernels_per_stream\": ", (unsigned long long)ri->kernels);
    put_counter_json(b, &ri->streams);
    sc__buf_printf(b, ", \"collectives\": %llu, \"collectives_by_kind\": ", (unsigned long long)ri->nccl);
    put_counter_json(b, &ri->colls);
    sc__buf_puts(b, ", \"iterations\": [");
    const sc__event *ev = sc__trace_events(t);
    bool first = true;
    for (size_t i = 0; i < t->events.len; i++) {
        if (!is_iteration(t, &ev[i])) continue;
        const char *name = sc__trace_str(t, ev[i].name);
        sc__buf_puts(b, first ? "{\"name\": " : ", {\"name\": ");
        sc__buf_json_str(b, name, strlen(name));
        sc__buf_printf(b, ", \"dur_us\": %.3f}", (double)ev[i].dur / 1000.0);
        first = false;
    }
    sc__buf_printf(b, "], \"gpu_busy_us\": %.3f}", (double)ri->busy_ns / 1000.0);
}

static void put_counter_text(sc__buf *b, const char *label, const counter *c) {
    sc__buf_printf(b, "  %-20s", label);
    for (size_t i = 0; i < c->count; i++)
        sc__buf_printf(b, "%s%s=%llu", i ? ", " : "", c->items[i].key,
                       (unsigned long long)c->items[i].count);
    sc__buf_puts(b, c->count ? "\n" : "-\n");
}

static void put_head_text(sc__buf *b, const sc_trace *t) {
    if (t->format == SC__FMT_CHAKRA) /* its body goes on with the path and the format */
        sc__buf_printf(b, "rank %lld  ", (long long)t->rank);
    else
        sc__buf_printf(b, "rank %lld of %lld  %s\n", (long long)t->rank, (long long)t->world_size, t->path);
}

static void put_body_text(sc__buf *b, const sc_trace *t, const rank_info *ri) {
    const char *gpu = sc__trace_gpu_name(t);
    sc__buf_printf(b, "  %-20s%s\n", "gpu", gpu[0] ? gpu : "(unknown)");
    sc__buf_printf(b, "  %-20s%zu (%.1f MB of JSON)\n", "events", t->events.len,
                   (double)t->input_bytes / 1e6);
    put_counter_text(b, "categories", &ri->cats);
    sc__buf_printf(b, "  %-20s%llu\n", "kernels", (unsigned long long)ri->kernels);
    put_counter_text(b, "kernels per stream", &ri->streams);
    sc__buf_printf(b, "  %-20s%llu\n", "nccl collectives", (unsigned long long)ri->nccl);
    put_counter_text(b, "collective kinds", &ri->colls);
    const sc__event *ev = sc__trace_events(t);
    size_t nit = 0;
    for (size_t i = 0; i < t->events.len; i++) {
        if (!is_iteration(t, &ev[i])) continue;
        sc__buf_printf(b, "  %-20s%s %.3f ms\n", nit++ ? "" : "iterations", sc__trace_str(t, ev[i].name),
                       (double)ev[i].dur / 1e6);
    }
    if (!nit) sc__buf_printf(b, "  %-20s(none annotated)\n", "iterations");
    sc__buf_printf(b, "  %-20s%.3f ms\n", "gpu busy", (double)ri->busy_ns / 1e6);
}

/* Appends the bodies of t's report, as text and as JSON, to `text` and
 * `json` where they are not NULL. */
static sc_status put_bodies(const sc_trace *t, sc__buf *text, sc__buf *json, sc_error *err) {
    bool ok = true;
    if (t->format == SC__FMT_CHAKRA) { /* issue 7: a Chakra rank */
        sc_status st = sc__chakra_info_body(t, text, json, err);
        if (st != SC_OK) return st;
    } else {
        rank_info ri;
        sc__arena keys;
        sc__arena_init(&keys);
        ok = gather(t, &ri, &keys);
        if (ok && text) put_body_text(text, t, &ri);
        if (ok && json) put_body_json(json, t, &ri);
        rank_info_free(&ri);
        sc__arena_free(&keys);
    }
    if (!ok || (text && text->oom) || (json && json->oom))
        return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
    return SC_OK;
}

/* sc__traceset_load_each's step for sc_traceset_load_for_info: both
 * bodies of the rank's report; then all but the trace's header goes. */
static sc_status summarize(void *ctx, sc_trace *t, sc_error *err) {
    (void)ctx;
    sc__buf text, json;
    sc__buf_init(&text);
    sc__buf_init(&json);
    sc_status st = put_bodies(t, &text, &json, err);
    if (st == SC_OK && (!text.data || !json.data)) /* a body always has lines */
        st = sc__fail(err, SC_E_INTERNAL, t->path, SC_NO_OFFSET, "empty info report");
    if (st != SC_OK) {
        sc__buf_free(&text);
        sc__buf_free(&json);
        return st;
    }
    /* Kept for the whole set: no buffer slack (4 KiB each for ~500 B). */
    char *a = realloc(text.data, text.len + 1), *b = realloc(json.data, json.len + 1);
    t->info_body[0] = a ? a : text.data;
    t->info_body[1] = b ? b : json.data;
    sc__trace_keep_header(t); /* strings too (256 KiB and more a rank), and a Chakra file */
    return SC_OK;
}

sc_status sc_traceset_load_for_info(const char *const *paths, size_t npaths,
                                    const sc_load_options *opts, sc_traceset **out, sc_error *err) {
    return sc__traceset_load_each(paths, npaths, opts, summarize, NULL, out, err);
}

sc_status sc_report_info(const sc_traceset *set, FILE *out, int json, sc_error *err) {
    sc__buf b;
    sc__buf_init(&b);
    if (json) sc__buf_puts(&b, "{\n  \"ranks\": [\n");
    for (size_t i = 0; i < set->count; i++) {
        const sc_trace *t = set->traces[i];
        if (json) put_head_json(&b, t);
        else put_head_text(&b, t);
        const char *body = t->info_body[json ? 1 : 0];
        if (body) {
            sc__buf_puts(&b, body);
        } else {
            sc_status bst = put_bodies(t, json ? NULL : &b, json ? &b : NULL, err);
            if (bst != SC_OK) {
                sc__buf_free(&b);
                return bst;
            }
        }
        if (json) sc__buf_puts(&b, i + 1 < set->count ? ",\n" : "\n");
    }
    if (json) {
        sc__buf_puts(&b, "  ],\n  \"warnings\": [");
        for (size_t i = 0; i < set->nwarnings; i++) {
            sc__buf_puts(&b, i ? ", " : "");
            sc__buf_json_str(&b, set->warnings[i], strlen(set->warnings[i]));
        }
        sc__buf_puts(&b, "]\n}\n");
    }
    if (b.oom) {
        sc__buf_free(&b);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory building the report");
    }
    bool ok = fwrite(b.data, 1, b.len, out) == b.len;
    sc__buf_free(&b);
    if (!ok) return sc__fail(err, SC_E_IO, NULL, SC_NO_OFFSET, "cannot write the report");
    return SC_OK;
}
