/*
 * kernel_shapes.c - every GPU kernel, copy and fill of a trace with the
 * operator that enqueued it, its class and its shape (kernel_cost.h).
 *
 * A GPU event shares its correlation id with the runtime call that
 * launched it; that call sits inside the operator that enqueued it on the
 * launching thread. Each thread's operators and runtime calls are swept in
 * time order with a stack of open operators, so every launch finds its
 * innermost enclosing operator (time containment works for every trace
 * vintage; External ids do not, see docs/background.md). An operator
 * without shapes lends its launch to the nearest enclosing one that has
 * them. The records feed `stepcast kernels` and the shape edits of
 * `predict`, which read them by the GPU event's index (a graph task's
 * `event`).
 *
 * Classes come from names (long C++ template names, matched without case
 * against some fifty keys): a trace's kernels share a few hundred distinct
 * names, so what each kernel name and operator name says is worked out
 * once per interned string and kept by its id (name_memo).
 */
#include "kernel_cost.h"

#include <stdlib.h>

#include "../graph/graph.h"

/* Outer first among events that start together: longer first, then
 * operators before calls. */
static int cmp_cpu(const void *a, const void *b, void *ctx) {
    const sc__event *ev = ctx;
    const sc__event *x = &ev[*(const uint32_t *)a], *y = &ev[*(const uint32_t *)b];
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
    bool xo = x->kind == SC_K_CPU_OP, yo = y->kind == SC_K_CPU_OP;
    if (xo != yo) return xo ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static bool wanted_cpu(const sc__event *e) {
    if (e->ph != 'X') return false;
    if (e->kind == SC_K_CPU_OP) return true;
    return (e->kind == SC_K_RUNTIME || e->kind == SC_K_DRIVER) && e->correlation >= 0;
}

/* The innermost operator of stack[0 .. depth) with shapes, else the
 * innermost one; SC__NONE when empty. */
static uint32_t enqueuing_op(const sc__event *ev, const uint32_t *stack, size_t depth) {
    for (size_t k = depth; k-- > 0;)
        if (ev[stack[k]].shapes != SC__NONE) return stack[k];
    return depth ? stack[depth - 1] : SC__NONE;
}

/* Fills corr -> the enqueuing operator's event index. */
static bool link_launches(const sc_trace *t, sc__idmap *corr) {
    const sc__event *ev = sc__trace_events(t);
    size_t n = t->events.len, m = 0;
    uint32_t *idx = sc__alloc_array(n ? n : 1, sizeof *idx);
    uint32_t *stack = sc__alloc_array(n ? n : 1, sizeof *stack);
    if (!idx || !stack) {
        free(idx);
        free(stack);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (wanted_cpu(&ev[i])) idx[m++] = (uint32_t)i;
    sc__sort(idx, m, sizeof *idx, cmp_cpu, (void *)ev);
    size_t depth = 0;
    uint32_t track = SC__NONE;
    bool ok = true;
    for (size_t k = 0; k < m && ok; k++) {
        const sc__event *e = &ev[idx[k]];
        if (e->track != track) depth = 0, track = e->track;
        while (depth && ev[stack[depth - 1]].ts + ev[stack[depth - 1]].dur <= e->ts) depth--;
        if (e->kind == SC_K_CPU_OP) {
            stack[depth++] = idx[k];
            continue;
        }
        uint32_t op = enqueuing_op(ev, stack, depth);
        if (op != SC__NONE) ok = sc__idmap_put(corr, e->correlation, op);
    }
    free(idx);
    free(stack);
    return ok;
}

static uint8_t task_kind(const sc__event *e) {
    if (e->flags & SC_EF_NCCL) return SC_T_COLL;
    return e->kind == SC_K_MEMCPY ? SC_T_MEMCPY : e->kind == SC_K_MEMSET ? SC_T_MEMSET : SC_T_KERNEL;
}

/* What each trace string says as a kernel name and as an operator name
 * (kernel_cost.h's two halves of a class), by string id: 1 + the value,
 * 0 while not yet asked. */
typedef struct name_memo {
    uint8_t *kernel, *op;
    uint32_t n;
} name_memo;

static bool memo_init(name_memo *m, const sc_trace *t) {
    m->n = t->strings.count;
    m->kernel = calloc(2 * (size_t)m->n + 2, 1);
    m->op = m->kernel ? m->kernel + m->n + 1 : NULL;
    return m->kernel != NULL;
}

/* What string `id` says as a kernel name (sc__kcost_name_facts) or, with
 * as_op, as an operator name (sc__kcost_op_class). */
static uint8_t memo_get(name_memo *m, const sc_trace *t, uint32_t id, bool as_op) {
    uint8_t *slot = id < m->n ? &(as_op ? m->op : m->kernel)[id] : NULL;
    if (slot && *slot) return (uint8_t)(*slot - 1);
    const char *s = sc__trace_str(t, id);
    uint8_t v = as_op ? (uint8_t)sc__kcost_op_class(s) : sc__kcost_name_facts(s);
    if (slot) *slot = (uint8_t)(v + 1);
    return v;
}

static void shape_record(const sc_trace *t, name_memo *memo, const sc__event *e, sc__krec *r) {
    const sc__event *ev = sc__trace_events(t);
    const sc__event *op = r->op_event != SC__NONE ? &ev[r->op_event] : NULL;
    uint8_t kind = task_kind(e);
    sc__kclass op_class = op ? (sc__kclass)memo_get(memo, t, op->name, true) : sc__kcost_op_class(NULL);
    r->shape.cls = (uint8_t)sc__kcost_classify_facts(memo_get(memo, t, e->name, false), op_class, kind);
    if (kind == SC_T_MEMCPY || kind == SC_T_MEMSET) {
        /* a copy or fill moves what its event says, whatever its operator */
        const sc__event_ext *x = sc__trace_ext(t, e);
        if (x && x->bytes > 0) {
            r->shape.form = SC__KF_BYTES;
            r->shape.extra_bytes = (double)x->bytes * (kind == SC_T_MEMCPY ? 2 : 1); /* read + write */
        }
        return;
    }
    const sc__event_shapes *sh = op ? sc__trace_shapes(t, op) : NULL;
    if (!sh) return;
    const char *dims = sh->dims != SC__NONE ? sc__trace_str(t, sh->dims) : NULL;
    const char *types = sh->types != SC__NONE ? sc__trace_str(t, sh->types) : NULL;
    sc__kshape_parse(sc__trace_str(t, op->name), dims, types, &r->shape);
}

bool sc__krecs_collect(const sc_trace *t, sc__krecs *out) {
    memset(out, 0, sizeof *out);
    const sc__event *ev = sc__trace_events(t);
    size_t n = t->events.len, ngpu = 0;
    for (size_t i = 0; i < n; i++)
        if ((ev[i].flags & SC_EF_GPU) && ev[i].ph == 'X') ngpu++;
    sc__idmap corr;
    if (!sc__idmap_init(&corr, ngpu + 16)) return false;
    name_memo memo;
    out->recs = sc__alloc_array(ngpu ? ngpu : 1, sizeof *out->recs);
    if (!memo_init(&memo, t) || !out->recs || !link_launches(t, &corr)) {
        free(memo.kernel);
        sc__idmap_free(&corr);
        sc__krecs_free(out);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const sc__event *e = &ev[i];
        if (!(e->flags & SC_EF_GPU) || e->ph != 'X') continue;
        sc__krec *r = &out->recs[out->n++];
        memset(r, 0, sizeof *r);
        r->event = (uint32_t)i;
        r->op_event = e->correlation >= 0 ? sc__idmap_get(&corr, e->correlation) : SC__NONE;
        shape_record(t, &memo, e, r);
    }
    free(memo.kernel);
    sc__idmap_free(&corr);
    return true;
}

void sc__krecs_free(sc__krecs *r) {
    free(r->recs);
    r->recs = NULL;
    r->n = 0;
}

const sc__krec *sc__krecs_find(const sc__krecs *r, uint32_t event) {
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->recs[mid].event < event) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->n && r->recs[lo].event == event ? &r->recs[lo] : NULL;
}

const sc__krec *sc__krecs_task(const sc__graph *g, const sc__krecs *recs, uint32_t task) {
    const sc__task *t = &sc__graph_tasks(g)[task];
    if (!recs || t->event == SC__NONE || !sc__task_on_gpu(t->kind)) return NULL;
    uint32_t rank = sc__graph_procs(g)[t->proc].rank;
    uint32_t trace = SC__VEC_AT(&g->ranks, sc__rank, rank).trace;
    return trace == SC__NONE ? NULL : sc__krecs_find(&recs[trace], t->event);
}
