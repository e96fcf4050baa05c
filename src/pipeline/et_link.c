/*
 * et_link.c - which Kineto cpu_op is which node of the rank's PyTorch
 * Execution Trace, so ops get the ET's shapes, dtypes and data
 * dependencies. A Kineto cpu_op with a "Record function id" maps to the ET
 * node with that rf_id; when the Kineto trace has none (2023-24 traces),
 * the k-th cpu_op of a name (by start time) maps to the k-th ET node of
 * that name (by id). Coverage is counted both ways, and the shapes each
 * side records are compared, an independent check that a link is right.
 */
#include "et_link.h"

#include <stdlib.h>

/* The link being built: its figures, the pairs when asked for, and which
 * ET nodes have a partner. */
typedef struct linker {
    const sc_et *et;
    const sc_trace *k;
    sc__et_link *out;
    sc__vec *pairs; /* sc__et_pair, or NULL */
    bool pairs_oom;
    uint8_t *et_hit; /* per ET node */
} linker;

/* The tensor shapes of a shape list: its innermost lists that hold numbers,
 * concatenated without spaces ("[[4, 2048], [], [[]]]" -> "[4,2048]").
 * Kineto and the ET spell non-tensor arguments differently ([] vs [[]]),
 * so only tensor shapes are compared. False when out is too small. */
static bool tensor_shapes(const char *s, char *out, size_t cap) {
    size_t n = 0, start = 0;
    bool leaf = false;
    for (const char *p = s; *p; p++) {
        if (*p == '[') {
            leaf = true;
            start = n;
        } else if (*p == ']') {
            if (leaf && n > start) {
                if (n + 2 >= cap) return false;
                memmove(out + start + 1, out + start, n - start);
                out[start] = '[';
                out[++n] = ']';
                n++;
            } else if (leaf) {
                n = start;
            }
            leaf = false;
        } else if (leaf && *p != ' ' && *p != '\n') {
            if (n + 3 >= cap) return false;
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return true;
}

static bool same_shapes(const char *a, const char *b) {
    char x[4096], y[4096];
    if (!tensor_shapes(a, x, sizeof x) || !tensor_shapes(b, y, sizeof y)) return false;
    return strcmp(x, y) == 0;
}

/* Records a link of Kineto event i and ET node j; checks their shapes
 * agree, an independent sign that the link is right. */
static void link_pair(linker *l, size_t i, uint32_t j) {
    const sc_et *et = l->et;
    const sc_trace *k = l->k;
    l->out->linked++;
    l->et_hit[j] = 1;
    if (l->pairs) {
        sc__et_pair *r = sc__vec_push(l->pairs);
        if (r) *r = (sc__et_pair){(uint32_t)i, j};
        else l->pairs_oom = true;
    }
    const sc__event_shapes *sh = sc__trace_shapes(k, &sc__trace_events(k)[i]);
    uint32_t es = ((const sc__et_node *)et->nodes.data)[j].in_shapes;
    if (!sh || sh->dims == SC__NONE || es == SC__NONE) return;
    l->out->shapes_compared++;
    l->out->shapes_agree += same_shapes(sc__trace_str(k, sh->dims), sc__intern_str(&et->strings, es));
}

typedef struct name_pos {
    uint32_t key;  /* ET-interned name (or SC__NONE when the ET lacks it) */
    uint32_t rank; /* k-th of its name */
    uint32_t idx;  /* ET node or Kineto event */
} name_pos;

static int cmp_name_pos(const void *a, const void *b) {
    const name_pos *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

typedef struct rf_pos {
    int64_t rf;
    uint32_t idx;
} rf_pos;

static int cmp_rf_pos(const void *a, const void *b) {
    const rf_pos *x = a, *y = b;
    if (x->rf != y->rf) return x->rf < y->rf ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* By start time (ctx: the Kineto trace's events). */
static int cmp_event_ts(const void *a, const void *b, void *ctx) {
    const sc__event *events = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const sc__event *ex = &events[x], *ey = &events[y];
    if (ex->ts != ey->ts) return ex->ts < ey->ts ? -1 : 1;
    return x < y ? -1 : x > y;
}

static bool is_cpu_op(const sc__event *e) { return e->kind == SC_K_CPU_OP && e->ph == 'X'; }

/* By record-function id: rf_id -> ET node through (rf_id, index) pairs
 * sorted by rf_id. */
static bool link_by_rf(linker *l) {
    const sc_et *et = l->et;
    const sc__et_node *n = et->nodes.data;
    const sc__event *ev = sc__trace_events(l->k);
    size_t ne = et->nodes.len;
    rf_pos *by_rf = sc__alloc_array(ne ? ne : 1, sizeof *by_rf);
    if (!by_rf) return false;
    for (size_t j = 0; j < ne; j++) by_rf[j] = (rf_pos){n[j].rf_id, (uint32_t)j};
    qsort(by_rf, ne, sizeof *by_rf, cmp_rf_pos);
    for (size_t i = 0; i < l->k->events.len; i++) {
        const sc__event_ext *x = sc__trace_ext(l->k, &ev[i]);
        if (!is_cpu_op(&ev[i]) || !x || x->rf_id < 0) continue;
        size_t lo = 0, hi = ne;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (by_rf[mid].rf < x->rf_id) lo = mid + 1;
            else hi = mid;
        }
        if (lo < ne && by_rf[lo].rf == x->rf_id) link_pair(l, i, by_rf[lo].idx);
    }
    free(by_rf);
    return true;
}

/* The Kineto cpu_ops as (ET name id, k-th of that name, event) in start
 * order: ET ids follow the order ops started, across threads; Kineto files
 * are not in that order (DLRM's interleave threads). cnt has a slot per ET
 * string, zeroed. */
static bool kineto_positions(const linker *l, name_pos *a, size_t *na, uint32_t *cnt) {
    const sc__event *ev = sc__trace_events(l->k);
    uint32_t *by_ts = sc__alloc_array(l->out->cpu_ops ? l->out->cpu_ops : 1, sizeof *by_ts);
    if (!by_ts) return false;
    size_t n = 0;
    for (size_t i = 0; i < l->k->events.len; i++)
        if (is_cpu_op(&ev[i])) by_ts[n++] = (uint32_t)i;
    sc__sort(by_ts, n, sizeof *by_ts, cmp_event_ts, (void *)ev);
    for (size_t r = 0; r < n; r++) {
        uint32_t i = by_ts[r];
        const char *nm = sc__trace_str(l->k, ev[i].name);
        uint32_t key = sc__intern_find(&l->et->strings, nm, strlen(nm));
        a[r] = (name_pos){key, key == SC__NONE ? 0 : cnt[key]++, i};
    }
    free(by_ts);
    *na = n;
    return true;
}

/* Pairs the two sorted lists of positions where name and rank agree. */
static void merge_positions(linker *l, const name_pos *a, size_t na, const name_pos *b, size_t ne) {
    size_t p = 0, q = 0;
    while (p < na && q < ne) {
        if (a[p].key == SC__NONE) break; /* SC__NONE sorts last */
        int c = a[p].key != b[q].key ? (a[p].key < b[q].key ? -1 : 1)
                                     : a[p].rank != b[q].rank ? (a[p].rank < b[q].rank ? -1 : 1) : 0;
        if (c < 0) p++;
        else if (c > 0) q++;
        else link_pair(l, a[p++].idx, b[q++].idx);
    }
}

/* By order, for traces without record-function ids: the k-th cpu_op named
 * X (by start time) is the k-th ET node named X (by id). */
static bool link_by_order(linker *l) {
    const sc_et *et = l->et;
    const sc__et_node *n = et->nodes.data;
    size_t ne = et->nodes.len, na = 0;
    name_pos *a = sc__alloc_array(l->out->cpu_ops ? l->out->cpu_ops : 1, sizeof *a);
    name_pos *b = sc__alloc_array(ne ? ne : 1, sizeof *b);
    uint32_t *cnt = calloc(et->strings.count + 1, sizeof *cnt);
    bool ok = a && b && cnt && kineto_positions(l, a, &na, cnt);
    if (ok) {
        memset(cnt, 0, (et->strings.count + 1) * sizeof *cnt);
        for (size_t j = 0; j < ne; j++) b[j] = (name_pos){n[j].name, cnt[n[j].name]++, (uint32_t)j};
        qsort(a, na, sizeof *a, cmp_name_pos);
        qsort(b, ne, sizeof *b, cmp_name_pos);
        merge_positions(l, a, na, b, ne);
    }
    free(a);
    free(b);
    free(cnt);
    return ok;
}

bool sc__et_link_traces(const sc_et *et, const sc_trace *k, sc__et_link *out, sc__vec *pairs) {
    memset(out, 0, sizeof *out);
    const sc__et_node *n = et->nodes.data;
    for (size_t i = 0; i < et->nodes.len; i++) out->et_ops += sc__et_is_op(et, &n[i]);
    if (!k) return true;
    const sc__event *ev = sc__trace_events(k);
    for (size_t i = 0; i < k->events.len; i++) {
        if (!is_cpu_op(&ev[i])) continue;
        out->cpu_ops++;
        const sc__event_ext *x = sc__trace_ext(k, &ev[i]);
        if (x && x->rf_id >= 0) out->with_rf++;
    }
    linker l = {.et = et, .k = k, .out = out, .pairs = pairs};
    l.et_hit = calloc(et->nodes.len ? et->nodes.len : 1, 1);
    if (!l.et_hit) return false;
    out->by_order = out->with_rf == 0;
    bool ok = out->by_order ? link_by_order(&l) : link_by_rf(&l);
    for (size_t j = 0; ok && j < et->nodes.len; j++) out->et_linked += l.et_hit[j] && sc__et_is_op(et, &n[j]);
    free(l.et_hit);
    return ok && !l.pairs_oom;
}
