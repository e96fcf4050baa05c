/*
 * cross_thread.c - edges between CPU threads of one rank (SC_E_CROSS_THREAD).
 *
 * PyTorch runs backward on an autograd engine thread while the main thread
 * blocks in loss.backward(); DataLoader / pin-memory threads work beside
 * the main one. Two sources of edges:
 *
 *   1. `fwdbwd` flow events (newer traces): the flow starts at a forward op
 *      on the main thread and finishes at the backward op that consumes it;
 *      edge: last task of the forward op -> first task of the backward op.
 *      Traces without these flows may still pair the two by the backward
 *      op's "Fwd thread id" (> 0) and "Sequence number", which equals the
 *      forward op's; the same edge is drawn (DLRM: 76 edges per rank).
 *
 *   2. The burst rule (all traces; Lumos detects these from gaps): a
 *      secondary thread's work comes in bursts separated by idle time. A
 *      burst starts at the thread's first task or at a task whose gap is at
 *      least SC__BURST_GAP_NS. Edges: the main-thread task that ended last
 *      at or before the burst's start -> the burst's first task (the main
 *      thread triggered it), and the burst's last task -> the first main-
 *      thread task that starts at or after the burst's end (the main thread
 *      waited for it, as in backward()). Both follow measured time, so they
 *      cannot form a cycle with program order. The burst's first task keeps
 *      the thread's idle time before it as its gap, so an unchanged replay
 *      starts it when it was measured to start; the trigger edge matters
 *      when the main thread is slowed down (the burst then waits for it).
 */
#include "build.h"

#define SC__BURST_GAP_NS 50000 /* 50 us of idle on a secondary thread */

/* Main-thread tasks are [c->first_task, c->main_end), in time order. */
typedef struct main_range {
    uint32_t lo, hi;
} main_range;

static main_range main_tasks(const sc__bctx *c) {
    main_range m = {c->first_task, c->main_end};
    return m;
}

/* First main task with start >= at, SC__NONE if none. */
static uint32_t main_after(const sc__task *t, main_range m, int64_t at) {
    uint32_t lo = m.lo, hi = m.hi;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t[mid].ts < at) lo = mid + 1;
        else hi = mid;
    }
    return lo < m.hi ? lo : SC__NONE;
}

static bool burst_edges(sc__bctx *c, main_range m) {
    sc__task *t = sc__graph_tasks(c->g);
    uint32_t end = (uint32_t)c->g->tasks.len;
    for (uint32_t i = m.hi; i < end;) {
        /* A thread's tasks are contiguous; walk its bursts. */
        uint32_t proc = t[i].proc, j = i;
        while (j < end && t[j].proc == proc) j++;
        for (uint32_t k = i; k < j;) {
            uint32_t b = k + 1;
            while (b < j && t[b].gap < SC__BURST_GAP_NS) b++;
            /* burst [k, b) */
            uint32_t from = sc__bctx_main_before(c, t[k].ts);
            if (from != SC__NONE && !sc__graph_add_edge(c->g, from, k, SC_E_CROSS_THREAD)) return false;
            /* The thread's first burst, triggered by the main thread: it
             * starts when its trigger lets it, not at its measured idle
             * time since the step opened (cpu_tasks.c), which would pin it
             * there when what comes before it gets faster (a prediction
             * that drops communication). A thread nothing triggers keeps
             * that idle time. */
            if (k == i && from != SC__NONE) t[k].gap = 0;
            uint32_t to = main_after(t, m, t[b - 1].ts + t[b - 1].dur);
            if (to != SC__NONE && !sc__graph_add_edge(c->g, b - 1, to, SC_E_CROSS_THREAD)) return false;
            k = b;
        }
        i = j;
    }
    return true;
}

/* Edge from the last task of op `fop` to the first of op `bop` when they run
 * on different threads and measured time agrees. */
static bool op_edge(sc__bctx *c, uint32_t fop, uint32_t bop) {
    const sc__task *t = sc__graph_tasks(c->g);
    uint32_t from = SC__VEC_AT(&c->op_last, uint32_t, fop - c->first_op);
    uint32_t to = SC__VEC_AT(&c->op_first, uint32_t, bop - c->first_op);
    if (from == SC__NONE || to == SC__NONE || t[from].proc == t[to].proc) return true;
    if (t[from].ts + t[from].dur > t[to].ts) return true;
    return sc__graph_add_edge(c->g, from, to, SC_E_CROSS_THREAD);
}

/* fwdbwd flows: 's' at the forward op, 'f' at the backward op, same id. */
static bool flow_edges(sc__bctx *c) {
    const sc_trace *tr = c->t;
    const sc__event *ev = sc__trace_events(tr);
    sc__idmap starts = {0};
    bool ok = true;
    for (size_t i = 0; i < tr->events.len && ok; i++)
        if (ev[i].kind == SC_K_FLOW_FWDBWD && ev[i].ph == 's' && ev[i].correlation >= 0) {
            uint32_t op = sc__idmap_get(&c->op_at, sc__op_key(ev[i].track, ev[i].ts));
            if (op != SC__NONE) ok = sc__idmap_put(&starts, ev[i].correlation, op);
        }
    for (size_t i = 0; i < tr->events.len && ok && starts.count; i++) {
        if (ev[i].kind != SC_K_FLOW_FWDBWD || ev[i].ph != 'f' || ev[i].correlation < 0) continue;
        uint32_t fop = sc__idmap_get(&starts, ev[i].correlation);
        uint32_t bop = sc__idmap_get(&c->op_at, sc__op_key(ev[i].track, ev[i].ts));
        if (fop == SC__NONE || bop == SC__NONE) continue;
        ok = op_edge(c, fop, bop);
    }
    sc__idmap_free(&starts);
    return ok;
}

/* Without flows: a backward op carries "Fwd thread id" (> 0, a logical id)
 * and the "Sequence number" of the forward op that recorded it; forward ops
 * carry the number alone (or with Fwd thread id 0). */
static bool seqnr_edges(sc__bctx *c) {
    const sc_trace *tr = c->t;
    const sc__event *ev = sc__trace_events(tr);
    size_t nops = c->op_event.len;
    sc__idmap fwd = {0};
    bool ok = true;
    for (size_t k = 0; k < nops && ok; k++) {
        const sc__event_ext *x = sc__trace_ext(tr, &ev[SC__VEC_AT(&c->op_event, uint32_t, k)]);
        if (x && x->seq_number >= 0 && x->fwd_tid <= 0)
            ok = sc__idmap_put_new(&fwd, x->seq_number, c->first_op + (uint32_t)k);
    }
    for (size_t k = 0; k < nops && ok && fwd.count; k++) {
        const sc__event_ext *x = sc__trace_ext(tr, &ev[SC__VEC_AT(&c->op_event, uint32_t, k)]);
        if (!x || x->seq_number < 0 || x->fwd_tid <= 0) continue;
        uint32_t fop = sc__idmap_get(&fwd, x->seq_number);
        if (fop != SC__NONE) ok = op_edge(c, fop, c->first_op + (uint32_t)k);
    }
    sc__idmap_free(&fwd);
    return ok;
}

static bool has_flows(const sc_trace *tr) {
    const sc__event *ev = sc__trace_events(tr);
    for (size_t i = 0; i < tr->events.len; i++)
        if (ev[i].kind == SC_K_FLOW_FWDBWD) return true;
    return false;
}

sc_status sc__build_cross_thread(sc__bctx *c, sc_error *err) {
    main_range m = main_tasks(c);
    bool ok = true;
    if (m.hi > m.lo) ok = burst_edges(c, m);
    if (ok) ok = has_flows(c->t) ? flow_edges(c) : seqnr_edges(c);
    if (!ok) return sc__fail(err, SC_E_NOMEM, c->t->path, SC_NO_OFFSET, "out of memory (cross-thread edges)");
    return SC_OK;
}
