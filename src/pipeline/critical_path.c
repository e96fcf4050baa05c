/*
 * critical_path.c - what the step waited for: from the slowest rank's last
 * task back along what bound each start (sim.h records it), summarised by
 * task class, operator and edge, so a user sees what to make faster.
 *
 * A path with no GPU task on it (host_only) is a host-bound step: the
 * simulated step follows the host's traced time, whatever the GPU model.
 *
 * Each task on the path contributes its own time (from its start, or for a
 * collective member from the last arrival, to its end) to its class and
 * operator, and the slack before it (its start minus its binding
 * predecessor's end) to the edge that bound it: an edge family of graph.h,
 * or the simulator's own reasons (the rank's late start, the backlog a
 * stream still ran from before the step, collective wait, sync wait, the
 * untraced time inside a CUDA graph, a stream held by what the trace does
 * not hold).
 */
#include "replay.h"

#include <stdlib.h>

enum { CLS_CPU, CLS_LAUNCH, CLS_RUNTIME, CLS_SYNC, CLS_GEMM, CLS_ATTENTION, CLS_KERNEL,
       CLS_MEMCPY, CLS_MEMSET, CLS_COMM, CLS_COUNT };
static const char *const class_names[CLS_COUNT] = {
    "cpu", "launch", "runtime", "sync", "gemm", "attention", "other_kernel", "memcpy", "memset",
    "communication"};

static int task_class(const sc__task *t, uint8_t cls) {
    switch (t->kind) {
    case SC_T_LAUNCH: return CLS_LAUNCH;
    case SC_T_RUNTIME: return CLS_RUNTIME;
    case SC_T_SYNC: return CLS_SYNC;
    case SC_T_MEMCPY: return CLS_MEMCPY;
    case SC_T_MEMSET: return CLS_MEMSET;
    case SC_T_CPU: return CLS_CPU;
    default: break;
    }
    switch (cls) {
    case SC_SCALE_COMM: return CLS_COMM;
    case SC_SCALE_GEMM: return CLS_GEMM;
    case SC_SCALE_ATTENTION: return CLS_ATTENTION;
    default: return CLS_KERNEL;
    }
}

/* Edge buckets: the graph's families, then the simulator's own reasons. */
enum { EDGE_ROOT = SC_E_FAMILY_COUNT, EDGE_BACKLOG, EDGE_GROUP_WAIT, EDGE_SYNC_WAIT, EDGE_GRAPH_GAP,
       EDGE_UNTRACED, EDGE_COUNT };

static const char *edge_name(int e) {
    switch (e) {
    case EDGE_ROOT: return "rank_start_offset"; /* the rank entered the step late */
    case EDGE_BACKLOG: return "stream_backlog"; /* the stream still ran earlier work */
    case EDGE_GROUP_WAIT: return "collective_wait";
    case EDGE_SYNC_WAIT: return "sync_wait";
    case EDGE_GRAPH_GAP: return "graph_gap"; /* untraced GPU time in a CUDA graph (graph.h) */
    case EDGE_UNTRACED: return "untraced_gap"; /* a stream held by what the trace lacks (stalls.c) */
    default: return sc__edge_family_name((uint8_t)e);
    }
}

static int cmp_item(const void *a, const void *b) {
    const sc_cp_item *x = a, *y = b;
    if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static sc_cp_item *collect(const int64_t *ns, const uint64_t *count, size_t n,
                            const char *(*name)(const void *, size_t), const void *ctx,
                            size_t keep, size_t *out_n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += ns[i] != 0 || count[i] != 0;
    sc_cp_item *items = sc__alloc_array(k ? k : 1, sizeof *items);
    if (!items) return NULL;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (ns[i] != 0 || count[i] != 0) items[k++] = (sc_cp_item){name(ctx, i), ns[i], count[i]};
    qsort(items, k, sizeof *items, cmp_item);
    *out_n = k < keep ? k : keep;
    return items;
}

static const char *class_name_at(const void *ctx, size_t i) {
    (void)ctx;
    return class_names[i];
}
static const char *edge_name_at(const void *ctx, size_t i) {
    (void)ctx;
    return edge_name((int)i);
}
static const char *string_at(const void *ctx, size_t i) {
    return sc__graph_str((const sc__graph *)ctx, (uint32_t)i);
}

/* A task that nothing but its processor's initial condition held back
 * (bound to no task) started `*slack` after time 0. What is not the rank's
 * late start is told apart: a thread's idle time before its first traced
 * event (its gap, on the thread) and the backlog its stream was still
 * running from before the step (an initial condition of the simulator,
 * src/graph/backlog.c). The rest stays with the rank's start offset. */
static void root_parts(const sc_replay *r, uint32_t t, int64_t *slack, int64_t *edge_ns, uint64_t *edge_n) {
    const sc__task *task = &sc__graph_tasks(r->g)[t];
    const sc__proc *p = &sc__graph_procs(r->g)[task->proc];
    int64_t part = 0;
    int bucket = SC_E_THREAD;
    if (p->kind == SC_P_THREAD && task->gap > 0) {
        part = task->gap;
    } else if (p->kind == SC_P_STREAM && r->backlog && r->backlog[task->proc] > 0) {
        part = r->backlog[task->proc];
        bucket = EDGE_BACKLOG;
    }
    if (part > *slack) part = *slack;
    if (part <= 0) return;
    edge_ns[bucket] += part, edge_n[bucket]++;
    *slack -= part;
}

bool sc__replay_critical_path(sc_replay *r) {
    const sc__graph *g = r->g;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__sim *s = &r->sim;
    sc__cp_summary *cp = &r->cp;
    size_t nstr = g->strings.count;
    int64_t cls_ns[CLS_COUNT] = {0}, edge_ns[EDGE_COUNT] = {0};
    uint64_t cls_n[CLS_COUNT] = {0}, edge_n[EDGE_COUNT] = {0};
    int64_t *op_ns = calloc(nstr ? nstr : 1, sizeof *op_ns);
    uint64_t *op_n = calloc(nstr ? nstr : 1, sizeof *op_n);
    if (!op_ns || !op_n) {
        free(op_ns);
        free(op_n);
        return false;
    }
    /* The last task to end on the slowest rank (lowest index on ties), on
     * a processor that can close its step (graph.h: not a quiet thread). */
    uint32_t cur = SC__NONE;
    if (r->nranks) {
        const sc__proc *procs = sc__graph_procs(g);
        uint32_t want = (uint32_t)r->slowest;
        for (size_t i = 0; i < g->tasks.len; i++)
            if (procs[tasks[i].proc].rank == want && !procs[tasks[i].proc].quiet &&
                (cur == SC__NONE || s->end[i] > s->end[cur]))
                cur = (uint32_t)i;
        cp->last_rank = want;
    }
    cp->length_ns = cur == SC__NONE ? 0 : s->end[cur];
    /* Each step moves to a task that ended no later than this one started
     * (or to the task it waited for), so the walk is bounded by ntasks. */
    for (size_t steps = 0; cur != SC__NONE && steps <= 2 * g->tasks.len; steps++) {
        const sc__task *t = &tasks[cur];
        uint32_t key = t->op != SC__NONE && t->op < g->ops.len
                           ? SC__VEC_AT(&g->ops, sc__op, t->op).name
                           : t->name;
        int cls = task_class(t, r->cls[cur]);
        cp->ntasks++;
        if (s->wait_kind[cur] == SC_SIM_W_SYNC && s->waited[cur] != SC__NONE) {
            int64_t own = s->end[cur] - s->end[s->waited[cur]];
            cls_ns[cls] += own, cls_n[cls]++;
            op_ns[key] += own, op_n[key]++;
            edge_n[EDGE_SYNC_WAIT]++;
            cur = s->waited[cur];
            continue;
        }
        uint32_t from = cur;
        if (s->wait_kind[cur] == SC_SIM_W_GROUP && s->waited[cur] != SC__NONE) {
            from = s->waited[cur];
            if (from != cur) edge_n[EDGE_GROUP_WAIT]++;
        }
        int64_t own = s->end[cur] - s->start[from];
        cls_ns[cls] += own, cls_n[cls]++;
        op_ns[key] += own, op_n[key]++;
        uint32_t pred = s->bound[from];
        int fam = s->bound_fam[from] == SC_SIM_ROOT ? EDGE_ROOT : s->bound_fam[from];
        int64_t slack = s->start[from] - (pred == SC__NONE ? 0 : s->end[pred]);
        const sc__task *f = &tasks[from];
        if ((f->flags & (SC__TF_GRAPH_GAP | SC__TF_UNTRACED_GAP)) && f->gap > 0 && slack >= f->gap) {
            int bucket = f->flags & SC__TF_GRAPH_GAP ? EDGE_GRAPH_GAP : EDGE_UNTRACED;
            edge_ns[bucket] += f->gap, edge_n[bucket]++;
            slack -= f->gap;
        }
        if (fam == EDGE_ROOT) root_parts(r, from, &slack, edge_ns, edge_n);
        edge_ns[fam] += slack, edge_n[fam]++;
        cur = pred;
    }
    cp->host_only = cp->ntasks > 0;
    for (int c = CLS_GEMM; c < CLS_COUNT; c++) /* the GPU's classes */
        if (cls_n[c]) cp->host_only = false;
    cp->by_class = collect(cls_ns, cls_n, CLS_COUNT, class_name_at, NULL, CLS_COUNT, &cp->nclass);
    cp->by_edge = collect(edge_ns, edge_n, EDGE_COUNT, edge_name_at, NULL, EDGE_COUNT, &cp->nedge);
    cp->by_op = collect(op_ns, op_n, nstr, string_at, g, 15, &cp->nop);
    free(op_ns);
    free(op_n);
    return cp->by_class && cp->by_edge && cp->by_op;
}
