/*
 * gpu_tasks.c - one rank's GPU work: kernels, memcpys and memsets as tasks on
 * (device, stream) processors in stream order, each linked to the runtime
 * call that launched it (same correlation id: cudaLaunchKernel(ExC),
 * cuLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync, cudaGraphLaunch, the HIP
 * calls...). A call found to launch GPU work is a LAUNCH task whatever its
 * name says.
 *
 * Which GPU events belong to the iteration: those whose launch is one of the
 * window's CPU tasks (even when they end after the annotation), plus those
 * with no traced launch at all (no runtime call in the whole trace has their
 * correlation) whose place in their stream's order puts them between the
 * work earlier and later steps launched (orphan_in_window). Work launched
 * before the window is the previous step's. A task with no traced launch
 * gets an inferred LAUNCH edge from the last main-thread task that ended
 * before it started (CUPTI lost the call), unless it was launched before
 * profiling began (its correlation is below every traced call's: ids
 * follow call order): then nothing traced launched it, it is flagged
 * SC__TF_QUEUED, and its stream order, stalls and cross-stream waits place
 * it. The anchor pinned such work to the CPU's measured progress: a
 * GPU-bound first step's queue (trace_diff/test's #1009: 600 kernels over
 * 39 ms) could not run faster than the host had, whatever its kernels did.
 *
 * NCCL / RCCL kernels are communication tasks: SC_T_COLL, or SC_T_SEND /
 * SC_T_RECV when the metadata or the launching operator says point-to-point.
 * They are queued (sc__comm_rec) for cross-rank matching in collectives.c,
 * with their message size as far as the rank's trace tells (msg_size.c).
 *
 * GPU tasks launched by a graph launch (cudaGraphLaunch, hipGraphLaunch...)
 * are flagged SC__TF_GRAPH_GAP and get a gap (graph.h): their measured start
 * minus the latest of the previous task's end on their stream (before the
 * window too: the last GPU event there) and their launch call's end;
 * cross_stream.c lowers it for a task that also waits for another stream.
 * The graph's nodes are enqueued by that one call, so GPU time between them
 * that no traced event covers is part of the captured graph (untraced nodes,
 * dependencies inside it). negative_queue_length_values_check needs this: a
 * torch.compile'd model's CUDA graphs run 20 traced tasks over 25 ms with
 * 6-65 ms stretches in which no traced GPU work runs on any stream, the
 * same in every step. A graph launched before profiling began has no call
 * in the trace, but its nodes share the call's correlation: queued tasks
 * with the correlation of a task beside them on their stream are its nodes
 * (among traced calls only graph launches launch several GPU tasks) and
 * get their gaps the same way, from their stream predecessor alone (none
 * for a stream's first: not measured). #550, the first step profiled,
 * opens with such a graph: 7 nodes over 4.3 ms.
 */
#include "build.h"

#include <stdlib.h>

typedef struct gpu_ev {
    uint32_t event;
    uint32_t proc;
    uint32_t launch;
} gpu_ev;

/* By stream, then start (ctx: the trace's events). */
static int cmp_gpu(const void *a, const void *b, void *ctx) {
    const sc__event *events = ctx;
    const gpu_ev *x = a, *y = b;
    if (x->proc != y->proc) return x->proc < y->proc ? -1 : 1;
    const sc__event *ex = &events[x->event], *ey = &events[y->event];
    if (ex->ts != ey->ts) return ex->ts < ey->ts ? -1 : 1;
    return x->event < y->event ? -1 : (x->event > y->event);
}

uint32_t sc__bctx_stream_proc(const sc__bctx *c, int16_t device, int64_t stream) {
    const sc__proc *p = sc__graph_procs(c->g);
    for (size_t i = 0; i < c->g->procs.len; i++)
        if (p[i].rank == c->rank && p[i].kind == SC_P_STREAM && p[i].device == device && p[i].id == stream)
            return (uint32_t)i;
    return SC__NONE;
}

/* The collective type and p2p direction of an NCCL kernel: its own metadata,
 * else the nearest "nccl:*" operator around the launch, else its name. */
static uint8_t comm_kind(sc__bctx *c, const sc__event *e, uint32_t launch, sc__coll_type *type) {
    const sc_trace *t = c->t;
    const sc__event_ext *x = sc__trace_ext(t, e);
    const char *what = NULL;
    if (x && x->coll_name != SC__NONE) what = sc__trace_str(t, x->coll_name);
    if (!what && launch != SC__NONE) {
        uint32_t op = sc__graph_tasks(c->g)[launch].op;
        for (int depth = 0; op != SC__NONE && depth < 64; depth++) {
            const sc__op *o = &SC__VEC_AT(&c->g->ops, sc__op, op);
            const char *n = sc__graph_str(c->g, o->name);
            if (sc__starts_with(n, "nccl:")) {
                what = n + 5;
                break;
            }
            op = o->parent;
        }
    }
    char buf[64];
    if (!what) {
        sc__nccl_kind(sc__trace_str(t, e->name), buf, sizeof buf);
        what = buf;
    }
    *type = sc__coll_type_from_name(what);
    if (*type == SC_C_SEND_RECV && !sc__contains(what, "SendRecv") && !sc__contains(what, "sendrecv")) {
        if (sc__contains(what, "send") || sc__contains(what, "Send")) return SC_T_SEND;
        if (sc__contains(what, "recv") || sc__contains(what, "Recv")) return SC_T_RECV;
    }
    return SC_T_COLL;
}

static bool queue_comm(sc__bctx *c, const sc__event *e, uint32_t task, sc__coll_type type) {
    const sc__event_ext *x = sc__trace_ext(c->t, e);
    sc__comm_rec *r = sc__vec_push(c->comms);
    if (!r) return false;
    r->task = task;
    r->rank = c->rank;
    r->stream = sc__event_stream(c->t, e);
    r->seq = x ? x->seq : -1;
    r->pg = r->pg_ranks = SC__NONE;
    r->type = (uint8_t)type;
    sc__msg_size(c, e, sc__graph_tasks(c->g)[task].op, r);
    if (!x) return true;
    /* The communicator's size, for the group (sc__group.comm_ranks), when
     * the kernel says it, whatever the size was taken from. */
    if (x->group_size > 0 && r->group_size < 0) r->group_size = x->group_size;
    if (x->pg_name != SC__NONE && (r->pg = sc__bctx_name(c, x->pg_name)) == SC__NONE) return false;
    if (x->pg_ranks != SC__NONE && (r->pg_ranks = sc__bctx_name(c, x->pg_ranks)) == SC__NONE)
        return false;
    return true;
}

/* Correlations of every runtime / driver call in the trace (to tell "launched
 * outside the window" from "launch not traced"). */
static bool all_calls(const sc_trace *t, sc__idmap *m) {
    const sc__event *ev = sc__trace_events(t);
    for (size_t i = 0; i < t->events.len; i++)
        if ((ev[i].kind == SC_K_RUNTIME || ev[i].kind == SC_K_DRIVER) && ev[i].correlation >= 0 &&
            !sc__idmap_put(m, ev[i].correlation, (uint32_t)i))
            return false;
    return true;
}

/* Per stream, where the window's work sits in stream order: the latest
 * start of work launched before the window (earlier steps'), the earliest
 * of work launched after it, and whether the window launched any. */
typedef struct stream_bounds {
    int64_t stream, before, after;
    int16_t device;
    bool launched_in;
} stream_bounds;

static stream_bounds *bounds_of(sc__vec *v, const sc_trace *t, const sc__event *e) {
    int64_t stream = sc__event_stream(t, e);
    int16_t dev = sc__event_device(t, e);
    stream_bounds *x = v->data;
    for (size_t k = 0; k < v->len; k++)
        if (x[k].stream == stream && x[k].device == dev) return &x[k];
    stream_bounds *n = sc__vec_push(v);
    if (n) *n = (stream_bounds){stream, INT64_MIN, INT64_MAX, dev, false};
    return n;
}

static bool stream_bounds_of(const sc__bctx *c, const sc__idmap *calls, sc__vec *out) {
    const sc_trace *t = c->t;
    const sc__event *ev = sc__trace_events(t);
    for (size_t i = 0; i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        if (!(e->flags & SC_EF_GPU) || e->ph != 'X' || e->correlation < 0) continue;
        uint32_t call = sc__idmap_get(calls, e->correlation);
        if (call == SC__NONE) continue;
        stream_bounds *b = bounds_of(out, t, e);
        if (!b) return false;
        if (ev[call].ts < c->win.start) {
            if (e->ts > b->before) b->before = e->ts;
        } else if (ev[call].ts >= c->win.end) {
            if (e->ts < b->after) b->after = e->ts;
        } else {
            b->launched_in = true;
        }
    }
    return true;
}

/* A GPU event with no traced launch belongs to the window by its place in
 * its stream's order, which is launch order: after the work earlier steps
 * launched and before the work later steps launched; and it starts after
 * the window opens, and before it closes unless the window launched work
 * on that stream (which may run long after the annotation). ResNet's
 * (MI300X) orphan copies ran 13 ms after ProfilerStep#15's annotation
 * closed, before #15's last kernels and #15's own leftovers on the stream:
 * taken by time into #16, whose replay came out 43% short. */
static bool orphan_in_window(const sc__bctx *c, const sc__vec *bounds, const sc__event *e) {
    if (e->ts < c->win.start) return false;
    int64_t stream = sc__event_stream(c->t, e);
    int16_t dev = sc__event_device(c->t, e);
    const stream_bounds *x = bounds->data;
    for (size_t k = 0; k < bounds->len; k++)
        if (x[k].stream == stream && x[k].device == dev)
            return e->ts > x[k].before && e->ts < x[k].after && (x[k].launched_in || e->ts < c->win.end);
    return e->ts < c->win.end;
}

static bool select_events(sc__bctx *c, sc__vec *out) {
    const sc_trace *t = c->t;
    const sc__event *ev = sc__trace_events(t);
    sc__idmap calls = {0};
    sc__vec prev;
    sc__vec_init(&prev, sizeof(stream_bounds));
    if (!c->win.whole && (!all_calls(t, &calls) || !stream_bounds_of(c, &calls, &prev))) {
        sc__idmap_free(&calls);
        sc__vec_free(&prev);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < t->events.len && ok; i++) {
        const sc__event *e = &ev[i];
        if (!(e->flags & SC_EF_GPU) || e->ph != 'X') continue;
        uint32_t launch = e->correlation >= 0 ? sc__idmap_get(&c->corr, e->correlation) : SC__NONE;
        if (launch == SC__NONE && !c->win.whole) {
            if (e->correlation >= 0 && sc__idmap_get(&calls, e->correlation) != SC__NONE) continue;
            if (!orphan_in_window(c, &prev, e)) continue;
        }
        int16_t dev = sc__event_device(t, e);
        int64_t stream = sc__event_stream(t, e);
        uint32_t proc = sc__bctx_stream_proc(c, dev, stream);
        if (proc == SC__NONE) proc = sc__graph_add_proc(c->g, c->rank, SC_P_STREAM, dev, stream);
        gpu_ev *g = sc__vec_push(out);
        ok = proc != SC__NONE && g;
        if (ok) *g = (gpu_ev){(uint32_t)i, proc, launch};
        if (c->device < 0) c->device = dev;
    }
    sc__idmap_free(&calls);
    sc__vec_free(&prev);
    return ok;
}

/* The lowest correlation id of the rank's traced runtime and driver calls
 * (INT64_MAX when none): ids follow call order, so GPU work with a lower
 * one was launched before profiling began. */
static int64_t first_call(const sc_trace *t) {
    const sc__event *ev = sc__trace_events(t);
    int64_t lo = INT64_MAX;
    for (size_t i = 0; i < t->events.len; i++)
        if ((ev[i].kind == SC_K_RUNTIME || ev[i].kind == SC_K_DRIVER) && ev[i].correlation >= 0 &&
            ev[i].correlation < lo)
            lo = ev[i].correlation;
    return lo;
}

static bool add_gpu_task(sc__bctx *c, const gpu_ev *g, uint32_t seq, int64_t first_corr) {
    const sc_trace *t = c->t;
    const sc__event *e = &sc__trace_events(t)[g->event];
    sc__task task;
    memset(&task, 0, sizeof task);
    task.dur = e->dur;
    task.ts = e->ts;
    task.proc = g->proc;
    task.seq = seq;
    task.name = sc__bctx_name(c, e->name);
    task.op = g->launch != SC__NONE ? sc__graph_tasks(c->g)[g->launch].op : SC__NONE;
    task.group = SC__NONE;
    task.event = g->event;
    task.sync_arg = SC__NONE;
    sc__coll_type type = SC_C_UNKNOWN;
    task.kind = e->kind == SC_K_MEMCPY ? SC_T_MEMCPY : e->kind == SC_K_MEMSET ? SC_T_MEMSET : SC_T_KERNEL;
    if (e->flags & SC_EF_NCCL) task.kind = comm_kind(c, e, g->launch, &type);
    if (task.name == SC__NONE) return false;
    uint32_t id = sc__bctx_add_task(c, &task, SC_CALL_OTHER);
    if (id == SC__NONE) return false;
    SC__SCRATCH(c, launch_of, uint32_t, id) = g->launch;
    if (g->launch != SC__NONE) {
        sc__task *l = &sc__graph_tasks(c->g)[g->launch];
        if (l->kind == SC_T_RUNTIME) {
            l->kind = SC_T_LAUNCH;
            SC__SCRATCH(c, call_class, uint8_t, g->launch) = SC_CALL_LAUNCH;
        }
        uint32_t *first = &SC__SCRATCH(c, gpu_first, uint32_t, g->launch);
        uint32_t *last = &SC__SCRATCH(c, gpu_last, uint32_t, g->launch);
        const sc__task *tasks = sc__graph_tasks(c->g);
        if (*first == SC__NONE || tasks[id].ts < tasks[*first].ts) *first = id;
        if (*last == SC__NONE || tasks[id].ts >= tasks[*last].ts) *last = id;
        if (!sc__graph_add_edge(c->g, g->launch, id, SC_E_LAUNCH)) return false;
    }
    bool before_profiling = g->launch == SC__NONE && e->correlation >= 0 && e->correlation < first_corr;
    if (before_profiling) sc__graph_tasks(c->g)[id].flags |= SC__TF_QUEUED;
    if (g->launch == SC__NONE && !before_profiling) {
        /* No traced launch (CUPTI lost it): the launcher ran on the main
         * thread before the task started; anchor the task on the last
         * main-thread task that ended by then, as an inferred launch edge,
         * so the replay does not start it at time zero. Work launched
         * before profiling began has no such launcher in the trace: its
         * stream order, stalls and cross-stream waits place it. */
        uint32_t from = sc__bctx_main_before(c, e->ts);
        if (from != SC__NONE && !sc__graph_add_edge(c->g, from, id, SC_E_LAUNCH)) return false;
    }
    if (sc__task_is_comm(task.kind) && !queue_comm(c, e, id, type)) return false;
    return true;
}

/* Whether queued task i (launched before profiling) is a node of a graph
 * launch: its correlation, the call's, is that of a task beside it on its
 * stream too. One call, several GPU tasks: among traced calls only graph
 * launches do that. */
static bool queued_graph_node(const sc__bctx *c, uint32_t i) {
    const sc__task *t = sc__graph_tasks(c->g);
    const sc__event *ev = sc__trace_events(c->t);
    uint32_t end = (uint32_t)c->g->tasks.len;
    if (!(t[i].flags & SC__TF_QUEUED)) return false;
    int64_t corr = ev[t[i].event].correlation;
    bool before = i > c->first_gpu_task && t[i - 1].proc == t[i].proc && ev[t[i - 1].event].correlation == corr;
    bool after = i + 1 < end && t[i + 1].proc == t[i].proc && ev[t[i + 1].event].correlation == corr;
    return before || after;
}

/* Flags the tasks of graph launches and measures their gaps (top comment). */
static void graph_gaps(sc__bctx *c) {
    sc__task *t = sc__graph_tasks(c->g);
    uint32_t end = (uint32_t)c->g->tasks.len, last_launch = SC__NONE;
    bool graph = false;
    for (uint32_t i = c->first_gpu_task; i < end; i++) {
        uint32_t l = SC__SCRATCH(c, launch_of, uint32_t, i);
        if (l == SC__NONE && !queued_graph_node(c, i)) continue;
        if (l != SC__NONE && l != last_launch) {
            last_launch = l;
            graph = strstr(sc__graph_str(c->g, t[l].name), "GraphLaunch") != NULL;
        }
        if (l != SC__NONE && !graph) continue;
        int64_t ready = l != SC__NONE ? t[l].ts + t[l].dur : INT64_MIN;
        int64_t prev = i > c->first_gpu_task && t[i - 1].proc == t[i].proc ? t[i - 1].ts + t[i - 1].dur
                                                                           : sc__stream_end_before(c, i);
        if (prev > ready) ready = prev;
        t[i].flags |= SC__TF_GRAPH_GAP;
        /* A queued node with nothing before it on its stream: not measured. */
        t[i].gap = ready != INT64_MIN && t[i].ts > ready ? t[i].ts - ready : 0;
    }
}

sc_status sc__build_gpu(sc__bctx *c, sc_error *err) {
    sc__vec sel;
    sc__vec_init(&sel, sizeof(gpu_ev));
    c->first_gpu_task = (uint32_t)c->g->tasks.len;
    bool ok = select_events(c, &sel);
    if (ok && sel.len) {
        sc__sort(sel.data, sel.len, sizeof(gpu_ev), cmp_gpu, sc__trace_events(c->t));
        const gpu_ev *gs = sel.data;
        uint32_t seq = 0;
        int64_t first_corr = first_call(c->t);
        for (size_t i = 0; i < sel.len && ok; i++) {
            seq = i && gs[i].proc == gs[i - 1].proc ? seq + 1 : 0;
            ok = add_gpu_task(c, &gs[i], seq, first_corr);
        }
    }
    sc__vec_free(&sel);
    if (ok) graph_gaps(c);
    if (!ok) return sc__fail(err, SC_E_NOMEM, c->t->path, SC_NO_OFFSET, "out of memory building GPU tasks");
    return SC_OK;
}
