/*
 * cpu_tasks.c - one rank's CPU threads as serial task sequences.
 *
 * On a thread, Kineto events nest: python_function > cpu_op > cpu_op >
 * cuda_runtime. The simulator wants one flat sequence per thread, so each
 * thread's events (those starting in the window) are swept in time order
 * with a stack of open scopes, and the timeline is cut into tasks:
 *   - every runtime / driver call is a task of its own (LAUNCH, SYNC or
 *     RUNTIME); events nested inside a call (cuda_driver under cuda_runtime)
 *     belong to it and only lend it their correlation ids;
 *   - time covered by an operator but by none of its children is CPU work:
 *     one SC_T_CPU task per maximal run with the same innermost operator;
 *   - time covered by no event is the next task's `gap`, from the window's
 *     start for a thread's first task (a thread that wakes up later in the
 *     step than the annotation opened).
 * So, per thread, the sum of gap + dur from the first task to the last is the
 * span from the window's start, and a replay with unchanged durations
 * reproduces it.
 *
 * Overlaps that are not nestings (clock rounding in integer-us traces) are
 * clamped: a child ends no later than its parent; on the main thread nothing
 * ends after the iteration annotation.
 *
 * Every cpu_op / user_annotation becomes an sc__op (name, parent, module =
 * innermost user_annotation or `nn.Module:` python scope, layer when the
 * module name carries a layer number) so reports can say which operator,
 * module and layer launched a kernel.
 */
#include "build.h"

#include <stdlib.h>

enum { SCOPE_OP, SCOPE_PY, SCOPE_CALL };

typedef struct scope {
    int64_t end;
    uint32_t op;     /* innermost operator inside this scope */
    uint32_t module; /* innermost module name (graph string), SC__NONE */
    uint32_t layer;
    uint32_t task;   /* SCOPE_CALL: its task; SCOPE_OP: first task after the push */
    uint8_t type;
} scope;

typedef struct sweep {
    sc__bctx *c;
    uint32_t proc, track;
    uint32_t seq;
    int64_t cursor, gap;
    uint32_t cur_task, cur_op; /* CPU task being extended */
    scope *stack;
    size_t depth, cap;
} sweep;

static bool is_cpu_kind(uint8_t k) {
    return k == SC_K_CPU_OP || k == SC_K_USER_ANNOTATION || k == SC_K_RUNTIME ||
           k == SC_K_DRIVER || k == SC_K_PYTHON;
}

/* Rank of kinds that start together with equal length: the outer first. */
static int kind_rank(uint8_t k) {
    switch (k) {
    case SC_K_USER_ANNOTATION: return 0;
    case SC_K_PYTHON: return 1;
    case SC_K_CPU_OP: return 2;
    case SC_K_RUNTIME: return 3;
    default: return 4;
    }
}

/* By start, then longest first (the enclosing event), then kind (ctx: the
 * trace's events). */
static int cmp_event(const void *a, const void *b, void *ctx) {
    const sc__event *events = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const sc__event *x = &events[i], *y = &events[j];
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
    int kx = kind_rank(x->kind), ky = kind_rank(y->kind);
    if (kx != ky) return kx < ky ? -1 : 1;
    return i < j ? -1 : (i > j);
}

static uint32_t new_task(sweep *s, uint8_t kind, int64_t ts, int64_t dur, uint32_t name, uint32_t op,
                         uint32_t event, uint8_t cls) {
    sc__task t;
    memset(&t, 0, sizeof t);
    t.dur = dur;
    t.gap = s->gap;
    t.ts = ts;
    t.proc = s->proc;
    t.seq = s->seq++;
    t.name = name;
    t.op = op;
    t.group = SC__NONE;
    t.event = event;
    t.sync_arg = SC__NONE;
    t.kind = kind;
    s->gap = 0;
    return sc__bctx_add_task(s->c, &t, cls);
}

/* Attributes [cursor, to) to whatever is on top of the stack. */
static bool advance(sweep *s, int64_t to) {
    if (to <= s->cursor) return true;
    int64_t d = to - s->cursor;
    if (s->depth == 0) {
        s->gap += d;
        s->cur_task = SC__NONE;
    } else if (s->stack[s->depth - 1].type != SCOPE_CALL) {
        uint32_t op = s->stack[s->depth - 1].op;
        sc__graph *g = s->c->g;
        if (s->cur_task != SC__NONE && s->cur_op == op) {
            sc__graph_tasks(g)[s->cur_task].dur += d;
        } else {
            uint32_t name = op == SC__NONE ? sc__bctx_intern(s->c, "(python)")
                                           : SC__VEC_AT(&g->ops, sc__op, op).name;
            if (name == SC__NONE) return false;
            s->cur_task = new_task(s, SC_T_CPU, s->cursor, d, name, op, SC__NONE, SC_CALL_OTHER);
            if (s->cur_task == SC__NONE) return false;
            s->cur_op = op;
        }
    }
    s->cursor = to;
    return true;
}

static bool push(sweep *s, scope sc) {
    if (s->depth == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        scope *n = sc__realloc_array(s->stack, cap, sizeof *n);
        if (!n) return false;
        s->stack = n;
        s->cap = cap;
    }
    s->stack[s->depth++] = sc;
    return true;
}

static bool pop(sweep *s) {
    scope *top = &s->stack[s->depth - 1];
    if (!advance(s, top->end)) return false;
    sc__bctx *c = s->c;
    if (top->type == SCOPE_CALL) s->cur_task = SC__NONE;
    if (top->type == SCOPE_OP) {
        uint32_t ntasks = (uint32_t)c->g->tasks.len;
        uint32_t local = top->op - c->first_op;
        if (ntasks > top->task) {
            SC__VEC_AT(&c->op_first, uint32_t, local) = top->task;
            SC__VEC_AT(&c->op_last, uint32_t, local) = ntasks - 1;
        }
    }
    s->depth--;
    return true;
}

/* The layer number in a module name: the first digit run after "layer"
 * ("layers.3", "ParallelTransformerLayer_3", "layer 3"). */
static uint32_t layer_of(const char *name) {
    for (const char *p = name; *p; p++) {
        if ((p[0] | 32) != 'l' || (p[1] | 32) != 'a' || (p[2] | 32) != 'y' || (p[3] | 32) != 'e' ||
            (p[4] | 32) != 'r')
            continue;
        const char *q = p + 5;
        while (*q && (*q < '0' || *q > '9') && q - p < 40) q++;
        if (*q < '0' || *q > '9') return SC__NONE;
        uint32_t n = 0;
        for (; *q >= '0' && *q <= '9' && n < 100000000u; q++) n = n * 10 + (uint32_t)(*q - '0');
        return n;
    }
    return SC__NONE;
}

static bool is_module_scope(const char *name, uint8_t kind) {
    if (kind == SC_K_PYTHON) return sc__starts_with(name, "nn.Module: ");
    if (kind != SC_K_USER_ANNOTATION) return false;
    return !sc__starts_with(name, "ProfilerStep#") && !sc__starts_with(name, "nccl:") &&
           !sc__starts_with(name, "enumerate(DataLoader)");
}

static bool open_scope(sweep *s, uint32_t i, const sc__event *e, int64_t end) {
    sc__bctx *c = s->c;
    const scope *top = s->depth ? &s->stack[s->depth - 1] : NULL;
    scope sc = {end, top ? top->op : SC__NONE, top ? top->module : SC__NONE,
                top ? top->layer : SC__NONE, SC__NONE, SCOPE_PY};
    const char *name = sc__trace_str(c->t, e->name);
    if (is_module_scope(name, e->kind)) {
        const char *m = e->kind == SC_K_PYTHON ? name + 11 : name;
        sc.module = sc__bctx_intern(c, m);
        if (sc.module == SC__NONE) return false;
        uint32_t layer = layer_of(m);
        if (layer != SC__NONE) sc.layer = layer;
    }
    if (e->kind != SC_K_PYTHON) {
        sc__op *op = sc__vec_push(&c->g->ops);
        uint32_t *f = sc__vec_push(&c->op_first), *l = sc__vec_push(&c->op_last);
        uint32_t *ev = sc__vec_push(&c->op_event);
        if (!op || !f || !l || !ev) return false;
        *f = *l = SC__NONE;
        *ev = i;
        op->name = sc__bctx_name(c, e->name);
        if (op->name == SC__NONE) return false;
        op->parent = sc.op;
        op->module = sc.module;
        op->layer = sc.layer;
        sc.op = (uint32_t)c->g->ops.len - 1;
        sc.type = SCOPE_OP;
        sc.task = (uint32_t)c->g->tasks.len;
        if (!sc__idmap_put_new(&c->op_at, sc__op_key(e->track, e->ts), sc.op)) return false;
    }
    return push(s, sc);
}

static bool open_call(sweep *s, uint32_t i, const sc__event *e, int64_t end) {
    sc__bctx *c = s->c;
    const scope *top = s->depth ? &s->stack[s->depth - 1] : NULL;
    sc__call_class cls = sc__bctx_call_class(c, e->name);
    uint8_t kind = cls == SC_CALL_LAUNCH ? SC_T_LAUNCH
                   : (cls >= SC_CALL_SYNC_STREAM && cls <= SC_CALL_SYNC_MEMCPY) ? SC_T_SYNC
                                                                                 : SC_T_RUNTIME;
    uint32_t name = sc__bctx_name(c, e->name);
    if (name == SC__NONE) return false;
    s->cur_task = SC__NONE;
    uint32_t task = new_task(s, kind, e->ts, end - e->ts, name, top ? top->op : SC__NONE, i, (uint8_t)cls);
    if (task == SC__NONE) return false;
    if (e->correlation >= 0 && !sc__idmap_put(&c->corr, e->correlation, task)) return false;
    scope sc = {end, top ? top->op : SC__NONE, SC__NONE, SC__NONE, task, SCOPE_CALL};
    return push(s, sc);
}

static bool sweep_thread(sweep *s, const uint32_t *idx, size_t n, bool main_thread) {
    sc__bctx *c = s->c;
    const sc__event *ev = sc__trace_events(c->t);
    /* From the window's start: a thread's idle time before its first event
     * is its first task's gap, as between any two of its tasks. */
    s->cursor = n ? ev[idx[0]].ts : 0;
    if (n && c->win.start < s->cursor) s->cursor = c->win.start;
    for (size_t k = 0; k < n; k++) {
        const sc__event *e = &ev[idx[k]];
        while (s->depth && s->stack[s->depth - 1].end <= e->ts)
            if (!pop(s)) return false;
        int64_t end = e->ts + e->dur;
        if (s->depth && end > s->stack[s->depth - 1].end) end = s->stack[s->depth - 1].end;
        if (main_thread && !c->win.whole && end > c->win.end) end = c->win.end;
        if (s->depth && s->stack[s->depth - 1].type == SCOPE_CALL) {
            /* Inside a runtime call: lend it the correlation, nothing else. */
            if (e->correlation >= 0 &&
                !sc__idmap_put_new(&c->corr, e->correlation, s->stack[s->depth - 1].task))
                return false;
            continue;
        }
        if (!advance(s, e->ts)) return false;
        bool ok = (e->kind == SC_K_RUNTIME || e->kind == SC_K_DRIVER) ? open_call(s, idx[k], e, end)
                                                                         : open_scope(s, idx[k], e, end);
        if (!ok) return false;
    }
    while (s->depth)
        if (!pop(s)) return false;
    return true;
}

/* Tracks of numeric (pid, tid) that hold CPU events in the window, bucketed. */
typedef struct buckets {
    uint32_t *off; /* ntracks + 1 */
    uint32_t *idx;
} buckets;

static bool in_window(const sc__bctx *c, const sc__event *e) {
    return c->win.whole || (e->ts >= c->win.start && e->ts < c->win.end);
}

static bool bucket_events(const sc__bctx *c, buckets *b) {
    const sc_trace *t = c->t;
    const sc__event *ev = sc__trace_events(t);
    size_t nt = t->tracks.len;
    b->off = calloc(nt + 2, sizeof *b->off);
    if (!b->off) return false;
    size_t total = 0;
    for (size_t i = 0; i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        if (e->ph != 'X' || !is_cpu_kind(e->kind) || !in_window(c, e)) continue;
        const sc__track *tr = sc__trace_track_at(t, e->track);
        if (tr->pid_str != SC__NONE || tr->tid_str != SC__NONE) continue;
        b->off[e->track + 2]++;
        total++;
    }
    for (size_t k = 0; k < nt; k++) b->off[k + 2] += b->off[k + 1];
    b->idx = sc__alloc_array(total ? total : 1, sizeof *b->idx);
    if (!b->idx) return false;
    for (size_t i = 0; i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        if (e->ph != 'X' || !is_cpu_kind(e->kind) || !in_window(c, e)) continue;
        const sc__track *tr = sc__trace_track_at(t, e->track);
        if (tr->pid_str != SC__NONE || tr->tid_str != SC__NONE) continue;
        b->idx[b->off[e->track + 1]++] = (uint32_t)i;
    }
    /* off[k] .. off[k+1] is track k's slice now. */
    return true;
}

/* The main thread: the annotation's, else the one with the most launches. */
static uint32_t pick_main(sc__bctx *c, const buckets *b) {
    if (c->win.track != SC__NONE) return c->win.track;
    const sc__event *ev = sc__trace_events(c->t);
    uint32_t best = SC__NONE;
    size_t best_launch = 0, best_n = 0;
    for (uint32_t k = 0; k < c->t->tracks.len; k++) {
        size_t n = b->off[k + 1] - b->off[k], launches = 0;
        for (uint32_t j = b->off[k]; j < b->off[k + 1]; j++)
            launches += ev[b->idx[j]].kind == SC_K_RUNTIME &&
                        sc__bctx_call_class(c, ev[b->idx[j]].name) == SC_CALL_LAUNCH;
        if (n && (best == SC__NONE || launches > best_launch || (launches == best_launch && n > best_n))) {
            best = k;
            best_launch = launches;
            best_n = n;
        }
    }
    return best;
}

sc_status sc__build_cpu(sc__bctx *c, sc_error *err) {
    const sc_trace *t = c->t;
    buckets b = {0};
    sweep s;
    memset(&s, 0, sizeof s);
    s.c = c;
    bool ok = bucket_events(c, &b);
    uint32_t main_track = ok ? pick_main(c, &b) : SC__NONE;
    sc__event *events = sc__trace_events(t);
    for (uint32_t pass = 0; ok && pass < 2; pass++) {
        for (uint32_t k = 0; ok && k < t->tracks.len; k++) {
            if ((pass == 0) != (k == main_track)) continue;
            uint32_t n = b.off[k + 1] - b.off[k];
            if (!n) continue;
            uint32_t *idx = b.idx + b.off[k];
            sc__sort(idx, n, sizeof *idx, cmp_event, events);
            const sc__track *tr = sc__trace_track_at(t, k);
            s.proc = sc__graph_add_proc(c->g, c->rank, SC_P_THREAD, -1, tr->tid);
            ok = s.proc != SC__NONE;
            if (!ok) break;
            if (k == main_track) c->main_proc = s.proc;
            s.track = k;
            s.seq = 0;
            s.gap = 0;
            s.depth = 0;
            s.cur_task = SC__NONE;
            ok = sweep_thread(&s, idx, n, k == main_track);
        }
    }
    free(s.stack);
    free(b.off);
    free(b.idx);
    if (!ok) return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory building CPU tasks");
    return SC_OK;
}
