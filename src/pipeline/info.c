/*
 * info.c - `stepcast info`'s figures: per rank, the event counts by
 * category, kernels per stream, NCCL collectives by kind, iterations
 * (ProfilerStep#N) and GPU busy time (the union of kernel/memcpy/memset
 * intervals) of a Kineto trace; node counts by type, CPU nodes,
 * dependencies and GPU collectives by kind of a Chakra file.
 *
 * sc_info_load works each rank out as soon as its file is read (on the
 * loading threads) and frees its events then, so `info` on a job of
 * thousands of ranks holds the files being read, not the job. The figures
 * are matched to the set's ranks once the load has put them in rank order.
 * report/info_report.c prints them.
 */
#include "info.h"

#include "../readers/chakra_wire.h"
#include "../readers/readers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------ counting */

/* The index of key's entry, added with a count of 0 if new: key is then
 * copied, exactly its size (a rank's few dozen keys and names are kept for
 * the whole job, a thousand ranks and more, so no arena block per rank).
 * SIZE_MAX when out of memory. */
static size_t counts_find(sc__counts *c, const char *key) {
    for (size_t i = 0; i < c->count; i++)
        if (strcmp(c->items[i].key, key) == 0) return i;
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        sc__count *p = sc__realloc_array(c->items, cap, sizeof *p);
        if (!p) return SIZE_MAX;
        c->items = p;
        c->cap = cap;
    }
    char *copy = sc__strdup(key);
    if (!copy) return SIZE_MAX;
    c->items[c->count] = (sc__count){copy, 0};
    return c->count++;
}

static void counts_free(sc__counts *c) {
    for (size_t i = 0; i < c->count; i++) free((char *)c->items[i].key);
    free(c->items);
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

/* Remembers that num stands for key (copied), whose entry is added if
 * new; returns the entry, SIZE_MAX on out-of-memory. */
static size_t memo_add(sc__counts *c, sc__vec *memos, int64_t num, const char *key) {
    size_t at = counts_find(c, key);
    key_memo *m = at == SIZE_MAX ? NULL : sc__vec_push(memos);
    if (!m) return SIZE_MAX;
    *m = (key_memo){num, at};
    return at;
}

static bool count_key(sc__counts *c, const char *key) {
    size_t at = counts_find(c, key);
    if (at == SIZE_MAX) return false;
    c->items[at].count++;
    return true;
}

static int cmp_count(const void *a, const void *b) {
    return strcmp(((const sc__count *)a)->key, ((const sc__count *)b)->key);
}

/* ------------------------------------------------------------ Kineto */

typedef struct interval {
    int64_t start, end;
} interval;

static int cmp_interval(const void *a, const void *b) {
    const interval *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Union length of the GPU intervals, in ns; -1 on out-of-memory. */
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

static bool is_iteration(const sc_trace *t, const sc__event *e) {
    return e->ph == 'X' && (e->kind == SC_K_USER_ANNOTATION || e->kind == SC_K_CPU_OP) &&
           sc__starts_with(sc__trace_str(t, e->name), "ProfilerStep#");
}

/* The ProfilerStep#N annotations, in file order. */
static bool gather_iterations(const sc_trace *t, sc__rank_info *ri) {
    const sc__event *ev = sc__trace_events(t);
    size_t n = 0;
    for (size_t i = 0; i < t->events.len; i++) n += is_iteration(t, &ev[i]);
    if (!n) return true;
    ri->iters = sc__alloc_array(n, sizeof *ri->iters);
    if (!ri->iters) return false;
    for (size_t i = 0; i < t->events.len; i++) {
        if (!is_iteration(t, &ev[i])) continue;
        const char *name = sc__trace_str(t, ev[i].name);
        char *copy = sc__strdup(name);
        if (!copy) return false;
        ri->iters[ri->niters++] = (sc__iteration){copy, ev[i].dur};
    }
    return true;
}

/* Counts e, a kernel: its stream, and when it is NCCL's its collective. */
static bool count_kernel(const sc_trace *t, sc__rank_info *ri, sc__vec *stream_memo, const sc__event *e) {
    ri->kernels++;
    int64_t stream = sc__event_stream(t, e);
    char key[64];
    size_t at = memo_find(stream_memo, stream);
    if (at == SIZE_MAX) { /* the key is made on the stream's first sight only */
        snprintf(key, sizeof key, "%lld", (long long)stream);
        if ((at = memo_add(&ri->streams, stream_memo, stream, key)) == SIZE_MAX) return false;
    }
    ri->streams.items[at].count++;
    if (!(e->flags & SC_EF_NCCL)) return true;
    ri->nccl++;
    const sc__event_ext *x = sc__trace_ext(t, e);
    if (x && x->coll_name != SC__NONE) snprintf(key, sizeof key, "%s", sc__trace_str(t, x->coll_name));
    else sc__nccl_kind(sc__trace_str(t, e->name), key, sizeof key);
    return count_key(&ri->colls, key);
}

static bool gather_kineto(const sc_trace *t, sc__rank_info *ri) {
    const sc__event *ev = sc__trace_events(t);
    const char *gpu = sc__trace_gpu_name(t);
    ri->gpu = sc__strdup(gpu);
    ri->events = t->events.len;
    sc__vec cats, streams; /* key_memo */
    sc__vec_init(&cats, sizeof(key_memo));
    sc__vec_init(&streams, sizeof(key_memo));
    bool ok = ri->gpu != NULL;
    for (size_t i = 0; ok && i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        size_t at = memo_find(&cats, e->cat);
        if (at == SIZE_MAX)
            at = memo_add(&ri->cats, &cats, e->cat, e->cat ? sc__trace_str(t, e->cat) : "(none)");
        if (!(ok = at != SIZE_MAX)) break;
        ri->cats.items[at].count++;
        if (e->kind == SC_K_KERNEL && e->ph == 'X') ok = count_kernel(t, ri, &streams, e);
    }
    sc__vec_free(&cats);
    sc__vec_free(&streams);
    if (!ok || !gather_iterations(t, ri)) return false;
    ri->busy_ns = gpu_busy_ns(t);
    if (ri->busy_ns < 0) return false;
    if (ri->cats.count) qsort(ri->cats.items, ri->cats.count, sizeof(sc__count), cmp_count);
    if (ri->colls.count) qsort(ri->colls.items, ri->colls.count, sizeof(sc__count), cmp_count);
    return true;
}

/* ------------------------------------------------------------ Chakra */

/* Counts one decoded node of a Chakra rank. */
static void count_node(sc__rank_info *ri, const sc__chakra_node *n) {
    ri->by_type[n->type < SC__INFO_CK_TYPES ? n->type : SC__INFO_CK_TYPES]++;
    bool is_cpu = sc__ck_has(n, SC__CA_IS_CPU_OP) && n->attr[SC__CA_IS_CPU_OP];
    ri->cpu += is_cpu;
    ri->deps += n->ctrl_count + n->data_count;
    ri->dur_us += n->dur_us;
    if (n->type == SC__CK_COLL && !is_cpu) {
        int64_t ct = sc__ck_has(n, SC__CA_COMM_TYPE) ? n->attr[SC__CA_COMM_TYPE] : SC__INFO_CK_COMMS;
        ri->gpu_coll[ct >= 0 && ct < SC__INFO_CK_COMMS ? ct : SC__INFO_CK_COMMS]++;
    }
}

static sc_status gather_chakra(const sc_trace *t, sc__rank_info *ri, sc_error *err) {
    sc__chakra_meta meta = {0};
    sc__vec ctrl, dd;
    sc__vec_init(&ctrl, sizeof(uint64_t));
    sc__vec_init(&dd, sizeof(uint64_t));
    sc__chakra_cursor c = {t->chakra_data, t->chakra_size, 0};
    const uint8_t *msg;
    size_t len;
    bool bad, first = true;
    sc_status st = SC_OK;
    while (sc__chakra_next(&c, &msg, &len, &bad)) {
        if (first) {
            first = false;
            sc__chakra_decode_meta(msg, len, &meta);
            continue;
        }
        sc__chakra_node n;
        bool oom;
        ctrl.len = dd.len = 0;
        if (!sc__chakra_decode_node(msg, len, &n, &ctrl, &dd, &oom)) {
            st = sc__fail(err, oom ? SC_E_NOMEM : SC_E_PARSE, t->path, SC_NO_OFFSET, "malformed Chakra node");
            break;
        }
        count_node(ri, &n);
    }
    sc__vec_free(&ctrl);
    sc__vec_free(&dd);
    ri->nodes = t->chakra_nodes;
    snprintf(ri->version, sizeof ri->version, "%.*s", (int)(meta.version_len < 64 ? meta.version_len : 64),
             meta.version ? meta.version : "");
    return st;
}

/* ------------------------------------------------------------ a rank */

static void rank_info_free(sc__rank_info *ri) {
    if (!ri) return;
    counts_free(&ri->cats);
    counts_free(&ri->streams);
    counts_free(&ri->colls);
    for (size_t i = 0; i < ri->niters; i++) free((char *)ri->iters[i].name);
    free(ri->iters);
    free((char *)ri->gpu);
    free((char *)ri->file);
}

/* The figures of trace t into ri (zeroed here); its head (file, rank) is
 * set once the set's ranks are known (take_head). */
static sc_status gather(const sc_trace *t, sc__rank_info *ri, sc_error *err) {
    memset(ri, 0, sizeof *ri);
    ri->format = t->format;
    ri->world_size = t->world_size;
    ri->input_bytes = t->input_bytes;
    sc_status st = SC_OK;
    if (t->format == SC__FMT_CHAKRA) st = gather_chakra(t, ri, err);
    else if (!gather_kineto(t, ri)) st = sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
    if (st != SC_OK) rank_info_free(ri);
    return st;
}

static bool take_head(sc__rank_info *ri, const sc_trace *t) {
    ri->rank = t->rank;
    ri->file = sc__strdup(t->path);
    return ri->file != NULL;
}

/* ------------------------------------------------------------ a job */

/* What the loading threads hand over: each trace's figures, under a lock
 * (several files are read at once). */
typedef struct done_rank {
    const sc_trace *t;
    sc__rank_info *ri;
} done_rank;

typedef struct collect {
    pthread_mutex_t lock;
    sc__vec done; /* done_rank */
} collect;

static sc_status summarize(void *ctx, sc_trace *t, sc_error *err) {
    collect *c = ctx;
    sc__rank_info *ri = malloc(sizeof *ri);
    if (!ri) return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
    sc_status st = gather(t, ri, err);
    if (st != SC_OK) {
        free(ri);
        return st;
    }
    sc__trace_keep_header(t); /* strings too (256 KiB and more a rank), and a Chakra file */
    pthread_mutex_lock(&c->lock);
    done_rank *d = sc__vec_push(&c->done);
    if (d) *d = (done_rank){t, ri};
    pthread_mutex_unlock(&c->lock);
    if (d) return SC_OK;
    rank_info_free(ri);
    free(ri);
    return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
}

static int cmp_done(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const done_rank *)a)->t, y = (uintptr_t)((const done_rank *)b)->t;
    return x < y ? -1 : x > y;
}

static sc_info *info_new(const sc_traceset *set) {
    sc_info *info = calloc(1, sizeof *info);
    if (!info) return NULL;
    info->ranks = calloc(set->count ? set->count : 1, sizeof *info->ranks);
    bool ok = info->ranks != NULL;
    ok = ok && sc__warnings_copy(&info->warnings, &set->warnings);
    if (ok) return info;
    sc_info_free(info);
    return NULL;
}

/* Moves each trace's figures from c into info, in the set's order. */
static bool assemble(sc_info *info, const sc_traceset *set, collect *c) {
    done_rank *d = c->done.data;
    if (c->done.len) qsort(d, c->done.len, sizeof *d, cmp_done);
    for (size_t i = 0; i < set->count; i++) {
        done_rank key = {set->traces[i], NULL};
        done_rank *hit = c->done.len ? bsearch(&key, d, c->done.len, sizeof *d, cmp_done) : NULL;
        if (!hit || !hit->ri) return false;
        info->ranks[i] = *hit->ri;
        free(hit->ri);
        hit->ri = NULL;
        info->nranks++;
        if (!take_head(&info->ranks[i], set->traces[i])) return false;
    }
    return true;
}

sc_status sc_info_load(const char *const *paths, size_t npaths, const sc_load_options *opts,
                       sc_info **out, sc_error *err) {
    *out = NULL;
    collect c;
    pthread_mutex_init(&c.lock, NULL);
    sc__vec_init(&c.done, sizeof(done_rank));
    sc_traceset *set = NULL;
    sc_status st = sc__traceset_load_each(paths, npaths, opts, summarize, &c, &set, err);
    sc_info *info = st == SC_OK ? info_new(set) : NULL;
    if (st == SC_OK && (!info || !assemble(info, set, &c))) {
        sc_info_free(info);
        info = NULL;
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    done_rank *d = c.done.data;
    for (size_t i = 0; i < c.done.len; i++) {
        rank_info_free(d[i].ri);
        free(d[i].ri);
    }
    sc__vec_free(&c.done);
    pthread_mutex_destroy(&c.lock);
    sc_traceset_free(set);
    *out = info;
    return st;
}

sc_status sc_info_of_set(const sc_traceset *set, sc_info **out, sc_error *err) {
    *out = NULL;
    if (!set) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no traces");
    sc_info *info = info_new(set);
    if (!info) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < set->count; i++) {
        sc_status st = sc__trace_check_whole(set->traces[i], err);
        if (st == SC_OK) st = gather(set->traces[i], &info->ranks[i], err);
        if (st == SC_OK) {
            info->nranks++;
            if (!take_head(&info->ranks[i], set->traces[i]))
                st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        }
        if (st != SC_OK) {
            sc_info_free(info);
            return st;
        }
    }
    *out = info;
    return SC_OK;
}

void sc_info_free(sc_info *info) {
    if (!info) return;
    for (size_t i = 0; i < info->nranks; i++) rank_info_free(&info->ranks[i]);
    free(info->ranks);
    sc__warnings_free(&info->warnings);
    free(info);
}

/* ------------------------------------------------------------ accessors */

size_t sc_info_rank_count(const sc_info *info) { return info ? info->nranks : 0; }
size_t sc_info_warning_count(const sc_info *info) { return info ? info->warnings.count : 0; }
const char *sc_info_warning(const sc_info *info, size_t i) {
    return info && i < info->warnings.count ? info->warnings.items[i] : NULL;
}
size_t sc_info_warning_group_count(const sc_info *info) { return info ? info->warnings.ngroups : 0; }
sc_status sc_info_warning_group_at(const sc_info *info, size_t i, sc_warning_group *out, sc_error *err) {
    return sc__warnings_group_at(info ? &info->warnings : NULL, i, out, err);
}

static uint64_t sum(const uint64_t *v, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    return s;
}

sc_status sc_info_rank_at(const sc_info *info, size_t i, sc_info_rank *out, sc_error *err) {
    if (!info || !out || i >= info->nranks)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "info rank %zu out of range", i);
    const sc__rank_info *ri = &info->ranks[i];
    bool chakra = ri->format == SC__FMT_CHAKRA;
    *out = (sc_info_rank){.file = ri->file,
                          .format = chakra ? "chakra" : "kineto",
                          .rank = ri->rank,
                          .world_size = ri->world_size,
                          .gpu = ri->gpu ? ri->gpu : "",
                          .bytes = ri->input_bytes,
                          .events = chakra ? ri->nodes : ri->events,
                          .kernels = ri->kernels,
                          .collectives = chakra ? sum(ri->gpu_coll, SC__INFO_CK_COMMS + 1) : ri->nccl,
                          .gpu_busy_ns = ri->busy_ns,
                          .iterations = ri->niters};
    return SC_OK;
}
