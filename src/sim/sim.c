/*
 * sim.c - the discrete-event loop behind sc__sim_run (contract in sim.h).
 *
 * List scheduling driven by events keyed by (time, kind, task). Only two
 * kinds of event exist:
 *   END(t)   t finishes: its processor takes the next task in seq order, its
 *            successors' ready times rise, waiters on t may finish;
 *   SYNC(t)  a sync task reaches its start time: only then, with every END up
 *            to that instant processed, do we know which GPU task is "the last
 *            one already launched" on its target stream(s).
 * A task is placed the moment its last predecessor ends and its processor
 * is free, so each task costs one event. A processor never has more than one
 * pending event (its running task's), so the pending events are the leaves
 * of a winner tree with one leaf per processor, small and cache-resident;
 * choosing the next event replays one leaf's path without a branch.
 * Group members, once placed, hold their stream until the group's last member
 * arrives; then all of them get their END at max(arrival) + transfer_ns.
 * Total work is O(tasks + edges) plus a log(processors) factor per event.
 *
 * On jobs larger than the cache the loop waits on memory: each processor
 * walks its own slice of the per-task arrays, too many frontiers for the
 * hardware prefetcher. So what a task needs at every step (predecessor
 * count, ready time, waiters, duration, processor, kind) is packed into one
 * 32-byte node, built in the same pass over the tasks that orders them by
 * processor and sums their durations for times_fit (one pass, not three);
 * outputs are written where they belong and only initialised where the
 * loop reads them before writing them. When each processor's tasks are
 * one run of indices (as builders make them) the processor walks the
 * indices themselves, and placing a task prefetches the lines a few tasks
 * ahead in its slice of every per-task array the loop touches: a task's
 * duration passes between its placement and its end, time enough for them
 * to arrive.
 */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>

enum { EV_END = 0, EV_SYNC = 1 };
enum { WH_DONE = SC__NONE - 1 }; /* node.whead of a task that has ended */

/* An event is one 128-bit key: the high half its time with the sign bit
 * flipped (so unsigned order is signed order), the low half kind << 32 |
 * task. One unsigned comparison then orders events by (time, kind, task),
 * ENDs before SYNCs at one instant, and compiles to a branch-free
 * compare-and-select. */
__extension__ typedef unsigned __int128 u128;
typedef u128 evkey;
#define EV_EMPTY (~(evkey)0) /* an empty leaf; no event is as late (times_fit) */
#define EV_SIGN (UINT64_C(1) << 63)

static inline evkey ev_make(int64_t time, uint32_t kind, uint32_t task) {
    return (evkey)((uint64_t)time ^ EV_SIGN) << 64 | ((uint64_t)kind << 32 | task);
}

static inline int64_t ev_time(evkey e) {
    uint64_t u = (uint64_t)(e >> 64) ^ EV_SIGN;
    return u <= INT64_MAX ? (int64_t)u : -(int64_t)~u - 1;
}

static inline uint32_t ev_task(evkey e) { return (uint32_t)e; }
static inline uint32_t ev_kind(evkey e) { return (uint32_t)((uint64_t)e >> 32); }

typedef struct waiter {
    uint32_t sync, next;
} waiter;

/* Per task, what the loop reads and updates every time the task is placed,
 * ends or loses a predecessor: one 32-byte record (two per cache line) built
 * in one pass over the 56-byte sc__task, instead of a miss in each of half a
 * dozen arrays and in sc__task. Rare fields (gap, group, sync, seq) stay in
 * sc__task; `bits` says when to look there. */
typedef struct node {
    int64_t ready;      /* latest predecessor end (+latency); placed sync: latest target end */
    int64_t dur;        /* sc__task.dur */
    uint32_t remaining; /* predecessors not yet ended; placed sync: targets pending */
    uint32_t whead;     /* syncs waiting on this task (into wpool), SC__NONE; WH_DONE once ended */
    uint32_t proc;
    uint8_t kind;       /* sc__task_kind */
    uint8_t bits;       /* NB_* */
    uint16_t unused;
} node;

enum {
    NB_GAP = 1,       /* gap > 0 */
    NB_GRAPH_GAP = 2, /* SC__TF_GRAPH_GAP or SC__TF_UNTRACED_GAP: the gap after ready and stream free */
    NB_GROUP = 4,     /* group != SC__NONE */
    NB_BOUND = 8,     /* a predecessor's end has set out->bound */
};

typedef struct sim_state {
    const sc__graph *g;
    const sc__sim_params *p;
    const sc__task *tasks;
    const sc__proc *procs;
    sc__sim *out;
    node *node;     /* per task, 64-byte aligned: two nodes a cache line */
    void *node_mem; /* what node was carved from */
    /* per processor: its tasks in seq order are order[off[p] .. off[p+1]),
     * or when each processor's tasks are one run of indices (order NULL)
     * run[p] ..; cur[p] walks up to stop[p] in whichever of the two */
    uint32_t *off, *order, *run, *cur, *stop;
    uint32_t *prev, *launched;
    int64_t *free_at;
    uint8_t *busy;
    /* per rank: its stream processors */
    uint32_t *rs_off, *rs;
    /* per group */
    uint32_t *arrived, *last;
    int64_t *max_arrival;
    /* tournament of pending events: leaf p = tree[leaves + p] */
    evkey *tree;
    uint32_t leaves;
    uint32_t popped; /* processor whose leaf still holds the event being handled, SC__NONE */
    bool clash;      /* two pending events on one processor (a malformed graph) */
    /* waiter pool */
    waiter *wpool;
    size_t nw, capw;
    uint64_t ndone;
    bool oom;
    bool too_many_waits; /* more sync waits than whead can index */
    u128 mag; /* durations' and gaps' magnitudes, for times_fit */
    sc__prefaulter pf; /* faults the outputs in on another core (state_init) */
} sim_state;

/* The pending events are the leaves of a winner tree, one leaf per
 * processor: a processor has at most one pending event, its running task's
 * END or SYNC. Every inner node holds the earlier of its two children, so
 * the root is the next event. Putting an event in a leaf replays its path to
 * the root: log2(processors) compare-and-selects with no branch to
 * mispredict, where a binary heap's pop mispredicts at about every level. */
static inline void tour_fix(evkey *tree, uint32_t i) {
    evkey w = tree[i];
    for (; i > 1; i >>= 1) {
        evkey sibling = tree[i ^ 1];
        w = sibling < w ? sibling : w;
        tree[i >> 1] = w;
    }
}

/* The root's event has been handled: empty its leaf, unless an event for
 * the same processor took its place meanwhile (push_event). Emptying lazily
 * saves a replay in the common case, a processor's next task placed as its
 * last one ends. */
static void clear_popped(sim_state *s) {
    if (s->popped == SC__NONE) return;
    s->tree[s->leaves + s->popped] = EV_EMPTY;
    tour_fix(s->tree, s->leaves + s->popped);
    s->popped = SC__NONE;
}

static void push_event(sim_state *s, uint32_t p, int64_t time, uint32_t kind, uint32_t task) {
    if (p == s->popped) {
        s->popped = SC__NONE;
    } else {
        clear_popped(s);
        if (s->tree[s->leaves + p] != EV_EMPTY) {
            s->clash = true;
            return;
        }
    }
    s->tree[s->leaves + p] = ev_make(time, kind, task);
    tour_fix(s->tree, s->leaves + p);
}

static inline int64_t rank_param(const int64_t *arr, uint32_t rank) { return arr ? arr[rank] : 0; }

static void finish_task(sim_state *s, uint32_t t, int64_t end) {
    s->out->end[t] = end;
    push_event(s, s->node[t].proc, end, EV_END, t);
}

/* A group member has arrived; when the last one does, all of them end. */
static void group_arrive(sim_state *s, uint32_t t) {
    const sc__group *grp = &SC__VEC_AT(&s->g->groups, sc__group, s->tasks[t].group);
    uint32_t gi = s->tasks[t].group;
    int64_t at = s->out->start[t];
    if (s->arrived[gi] == 0 || at > s->max_arrival[gi]) {
        s->max_arrival[gi] = at;
        s->last[gi] = t;
    }
    if (++s->arrived[gi] < grp->count) return;
    int64_t end = s->max_arrival[gi] + (grp->transfer_ns > 0 ? grp->transfer_ns : 0);
    const uint32_t *members = &SC__VEC_AT(&s->g->group_members, uint32_t, grp->first);
    for (uint32_t i = 0; i < grp->count; i++) {
        s->out->waited[members[i]] = s->last[gi];
        s->out->wait_kind[members[i]] = SC_SIM_W_GROUP;
        finish_task(s, members[i], end);
    }
}

/* A processor's tasks are consecutive (one run, the usual case), and the
 * node after t is read when t ends, as its successor, along with t's
 * succ_off; the outputs of the tasks after t are written as they are
 * placed and end. Left alone, those accesses miss whenever they cross into
 * a new line on a job larger than the cache: hundreds of processors each
 * walk their own slice of the arrays, too many streams for the hardware
 * prefetcher. Placing t comes a whole task duration (many events) before
 * its end, time enough to bring in the lines ahead.
 * always_inline: a helper made only of prefetches looks free of side
 * effects to GCC, which then deletes calls to it that it did not inline. */
#define PREFETCH_HELPER static inline __attribute__((always_inline)) void
PREFETCH_HELPER prefetch_ahead_of(const sim_state *s, uint32_t t) {
    if (s->order) return; /* tasks not in runs: t + k is another processor's */
    size_t nt = s->g->tasks.len;
    if (t + 2 < nt) __builtin_prefetch(&s->node[t + 2], 1);
    if (t + 16 < nt) __builtin_prefetch(&s->g->succ_off[t + 16]);
    if (t + 8 < nt) {
        __builtin_prefetch(&s->out->start[t + 8], 1);
        __builtin_prefetch(&s->out->end[t + 8], 1);
    }
    if (t + 16 < nt) __builtin_prefetch(&s->out->bound[t + 16], 1);
    if (t + 64 < nt) __builtin_prefetch(&s->out->bound_fam[t + 64], 1);
}

/* The same for the edge arrays, a line ahead of edge k (read at an end). */
PREFETCH_HELPER prefetch_edges_after(const sc__graph *g, uint32_t k) {
    if (k + 16 < g->nedges) __builtin_prefetch(&g->succ[k + 16]);
    if (k + 64 < g->nedges) __builtin_prefetch(&g->succ_family[k + 64]);
}

/* Places the next task of processor p if its predecessors have all ended. */
static void try_place(sim_state *s, uint32_t p) {
    if (s->busy[p] || s->cur[p] == s->stop[p]) return;
    uint32_t t = s->order ? s->order[s->cur[p]] : s->cur[p];
    node *n = &s->node[t];
    if (n->remaining) return;
    int64_t gap = n->bits & NB_GAP ? s->tasks[t].gap : 0;
    int64_t from_proc = s->free_at[p];
    if (s->procs[p].kind == SC_P_THREAD) from_proc += gap;
    else if (!(n->bits & NB_GRAPH_GAP) && s->prev[p] != SC__NONE)
        from_proc += rank_param(s->p->dispatch_gap, s->procs[p].rank);
    int64_t start = n->ready;
    if (!(n->bits & NB_BOUND) || from_proc > start) {
        /* The processor (previous task + gap) binds, or nothing else does. */
        if (from_proc > start) start = from_proc;
        s->out->bound[t] = s->prev[p];
        s->out->bound_fam[t] = s->prev[p] == SC__NONE          ? SC_SIM_ROOT
                               : s->procs[p].kind == SC_P_THREAD ? SC_E_THREAD
                                                                 : SC_E_STREAM;
    }
    /* A graph launch's task: the untraced GPU time before it (graph.h). */
    if (n->bits & NB_GRAPH_GAP) start += gap;
    s->out->start[t] = start;
    s->busy[p] = 1;
    prefetch_ahead_of(s, t);
    if (n->kind == SC_T_SYNC) push_event(s, p, start, EV_SYNC, t);
    else if ((n->bits & NB_GROUP) && s->p->coupled) group_arrive(s, t);
    else finish_task(s, t, start + (n->dur > 0 ? n->dur : 0));
}

static void add_wait(sim_state *s, uint32_t sync, uint32_t target) {
    if (target == SC__NONE) return;
    if (s->node[target].whead == WH_DONE) {
        if (s->out->end[target] > s->node[sync].ready) {
            s->node[sync].ready = s->out->end[target];
            s->out->waited[sync] = target;
        }
        return;
    }
    if (s->nw >= WH_DONE) { /* whead could not tell the index from WH_DONE */
        s->too_many_waits = true;
        return;
    }
    if (s->nw == s->capw) {
        size_t cap = s->capw ? s->capw * 2 : 64;
        waiter *w = sc__realloc_array(s->wpool, cap, sizeof *w);
        if (!w) {
            s->oom = true;
            return;
        }
        s->wpool = w;
        s->capw = cap;
    }
    s->wpool[s->nw] = (waiter){sync, s->node[target].whead};
    s->node[target].whead = (uint32_t)s->nw++;
    s->node[sync].remaining++;
}

static void sync_done(sim_state *s, uint32_t t) {
    const node *n = &s->node[t];
    int64_t base = rank_param(s->p->sync_base, s->procs[n->proc].rank);
    if (base > n->dur) base = n->dur;
    if (base < 0) base = 0;
    int64_t end = s->out->start[t] + base;
    int64_t wake = rank_param(s->p->sync_wake, s->procs[n->proc].rank);
    if (wake < 0) wake = 0;
    if (s->out->waited[t] != SC__NONE && n->ready + wake > end) {
        end = n->ready + wake;
        s->out->wait_kind[t] = SC_SIM_W_SYNC;
    } else {
        s->out->waited[t] = SC__NONE;
    }
    finish_task(s, t, end);
}

/* The sync's start time has come: find what it waits for. */
static void sync_start(sim_state *s, uint32_t t) {
    const sc__task *task = &s->tasks[t];
    uint32_t rank = s->procs[task->proc].rank;
    s->node[t].ready = INT64_MIN; /* reused: latest target end */
    s->node[t].remaining = 0;     /* reused: targets still running */
    switch (task->sync) {
    case SC_SYNC_STREAM:
        if (task->sync_arg < s->g->procs.len) add_wait(s, t, s->launched[task->sync_arg]);
        break;
    case SC_SYNC_TASK:
        if (task->sync_arg < s->g->tasks.len) add_wait(s, t, task->sync_arg);
        break;
    default: /* SC_SYNC_DEVICE, or a sync the builder could not resolve: every stream */
        for (uint32_t k = s->rs_off[rank]; k < s->rs_off[rank + 1]; k++) {
            uint32_t q = s->rs[k];
            if (task->sync == SC_SYNC_DEVICE && s->procs[q].device != (int64_t)task->sync_arg) continue;
            add_wait(s, t, s->launched[q]);
        }
    }
    if (!s->node[t].remaining) sync_done(s, t);
}

static inline void note_launched(sim_state *s, uint32_t gpu) {
    uint32_t q = s->node[gpu].proc;
    uint32_t cur = s->launched[q];
    if (cur == SC__NONE || s->tasks[gpu].seq > s->tasks[cur].seq) s->launched[q] = gpu;
}

/* t ends at `end` (its END event's time, = out->end[t]). */
static void task_end(sim_state *s, uint32_t t, int64_t end) {
    const sc__graph *g = s->g;
    node *n = &s->node[t];
    uint32_t p = n->proc;
    uint32_t whead = n->whead;
    n->whead = WH_DONE;
    s->ndone++;
    if (end > s->out->makespan) s->out->makespan = end;
    s->busy[p] = 0;
    s->free_at[p] = end;
    s->prev[p] = t;
    s->cur[p]++;
    if (s->procs[p].kind == SC_P_STREAM) note_launched(s, t);

    for (uint32_t w = whead; w != SC__NONE; w = s->wpool[w].next) {
        node *sn = &s->node[s->wpool[w].sync];
        if (end > sn->ready) {
            sn->ready = end;
            s->out->waited[s->wpool[w].sync] = t;
        }
        if (--sn->remaining == 0) sync_done(s, s->wpool[w].sync);
    }

    int64_t lat = rank_param(s->p->launch_latency, s->procs[p].rank);
    prefetch_edges_after(g, g->succ_off[t]);
    for (uint32_t k = g->succ_off[t]; k < g->succ_off[t + 1]; k++) {
        uint32_t v = g->succ[k];
        uint8_t fam = g->succ_family[k];
        int64_t at = end;
        if (fam == SC_E_LAUNCH) {
            note_launched(s, v);
            at = end + lat;
            if (at < s->out->start[t]) at = s->out->start[t];
        }
        node *nv = &s->node[v];
        if (!(nv->bits & NB_BOUND) || at > nv->ready) {
            nv->bits |= NB_BOUND;
            nv->ready = at;
            s->out->bound[v] = t;
            s->out->bound_fam[v] = fam;
        }
        if (--nv->remaining == 0) try_place(s, nv->proc);
    }
    try_place(s, p);
}

static void state_free(sim_state *s) {
    sc__prefault_join(&s->pf); /* before anyone frees the outputs */
    free(s->node_mem);
    free(s->off);
    free(s->order);
    free(s->cur);
    free(s->stop);
    free(s->run);
    free(s->prev);
    free(s->launched);
    free(s->free_at);
    free(s->busy);
    free(s->rs_off);
    free(s->rs);
    free(s->arrived);
    free(s->last);
    free(s->max_arrival);
    free(s->tree);
    free(s->wpool);
}

/* Fills order from the runs found by sc__proc_order's count: processor p's
 * tasks are run[p] .. run[p] + count, already in seq order. */
static void order_from_runs(uint32_t *off, uint32_t *order, const uint32_t *run, size_t np) {
    for (size_t p = 0; p < np; p++) {
        uint32_t n = off[p + 2] - off[p + 1];
        for (uint32_t j = 0; j < n; j++) order[off[p + 1] + j] = run[p] + j;
        off[p + 1] += n;
    }
}

/* Scatters tasks to their processor's slice, then sorts the slices that are
 * not in seq order (linear when in order). */
static bool order_by_scatter(const sc__graph *g, uint32_t *off, uint32_t *order) {
    size_t nt = g->tasks.len, np = g->procs.len;
    const sc__task *tasks = sc__graph_tasks(g);
    /* last[p]: seq of p's latest task + 1, 0 = none yet; top bit: out of order. */
    uint32_t *last = calloc(np ? np : 1, sizeof *last);
    if (!last) return false;
    for (size_t i = 0; i < nt; i++) {
        uint32_t p = tasks[i].proc, sq = tasks[i].seq;
        order[off[p + 1]++] = (uint32_t)i;
        uint32_t l = last[p] & 0x7fffffffu;
        if (l && (uint64_t)sq + 1 < l) last[p] |= 0x80000000u;
        else if (sq < 0x7fffffffu) last[p] = (last[p] & 0x80000000u) | (sq + 1);
        else last[p] |= 0x80000000u; /* huge seq: just sort */
    }
    /* off[p] is now the start of p's slice; sort each by seq. */
    for (size_t p = 0; p < np; p++) {
        if (last[p] & 0x80000000u) sc__sort_by_seq(tasks, order + off[p], off[p + 1] - off[p]);
    }
    free(last);
    return true;
}

static inline uint64_t magnitude(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

static inline node node_of(const sc__task *t, uint32_t indeg) {
    return (node){
        .ready = 0,
        .dur = t->dur,
        .remaining = indeg,
        .whead = SC__NONE,
        .proc = t->proc,
        .kind = t->kind,
        .bits = (uint8_t)((t->gap > 0 ? NB_GAP : 0) |
                          (t->flags & (SC__TF_GRAPH_GAP | SC__TF_UNTRACED_GAP) ? NB_GRAPH_GAP : 0) |
                          (t->group != SC__NONE ? NB_GROUP : 0)),
    };
}

/* sc__proc_order, and for the simulator (nodes != NULL) in the same pass
 * over the (large) task array: each task's node and the sum of the
 * magnitudes of all durations and gaps (*mag, for times_fit). One pass
 * instead of three: on a job larger than the cache each costs about as
 * much as reading the whole array from memory. With run_out, when every
 * processor's tasks are one run, *order_out is NULL and *run_out says where
 * each run starts (caller frees): processor p's tasks are then run[p] ..
 * run[p] + off[p + 1] - off[p]. */
static inline bool order_pass(const sc__graph *g, node *nodes, u128 *mag, uint32_t **off_out,
                              uint32_t **order_out, uint32_t **run_out) {
    size_t nt = g->tasks.len, np = g->procs.len;
    const sc__task *tasks = sc__graph_tasks(g);
    uint32_t *off = calloc(np + 2, sizeof *off);
    uint32_t *order = sc__alloc_array(nt ? nt : 1, sizeof *order);
    uint32_t *run = calloc(np ? np : 1, sizeof *run); /* a processor without tasks: an empty run at 0 */
    if (!off || !order || !run) {
        free(off);
        free(order);
        free(run);
        return false;
    }
    /* Builders add each processor's tasks in seq order, usually all in a
     * row: while counting, note whether every processor's tasks are one run
     * of consecutive indices with non-decreasing seq (run[p]: where it
     * starts). Then the order follows from the counts, without a second
     * pass over the task array. */
    sc__runs seen = SC__RUNS_INIT;
    u128 sum = 0;
    for (size_t i = 0; i < nt; i++) {
        const sc__task *t = &tasks[i];
        sc__runs_add(&seen, off + 2, run, (uint32_t)i, t->proc, t->seq);
        if (nodes) {
            nodes[i] = node_of(t, g->indeg ? g->indeg[i] : 0);
            sum += (u128)magnitude(t->dur) + magnitude(t->gap);
        }
    }
    if (mag) *mag = sum;
    for (size_t p = 0; p < np; p++) off[p + 2] += off[p + 1];
    bool runs = seen.all;
    if (runs && run_out) {
        for (size_t p = 0; p < np; p++) off[p + 1] = off[p + 2];
        free(order);
        *off_out = off;
        *order_out = NULL;
        *run_out = run;
        return true;
    }
    bool ok = true;
    if (runs) order_from_runs(off, order, run, np);
    else ok = order_by_scatter(g, off, order);
    free(run);
    if (!ok) {
        free(off);
        free(order);
        return false;
    }
    *off_out = off;
    *order_out = order;
    return true;
}

bool sc__proc_order(const sc__graph *g, uint32_t **off_out, uint32_t **order_out) {
    return order_pass(g, NULL, NULL, off_out, order_out, NULL);
}

/* Every simulated time is a sum of durations, gaps, launch latencies, sync
 * costs, dispatch gaps, transfer times and one start offset along some path. When the total
 * of all of them over the graph stays below 2^62 ns (146 years), no addition
 * in the simulation can overflow; durations near the int64 limit (a corrupt
 * or hostile trace) used to overflow start + dur, which is undefined
 * behaviour. Magnitudes are summed, so negative values count too.
 * mag: the durations' and gaps' part, from order_pass; a task's launch
 * latency and sync cost count once per task, so per processor they count
 * once per task on it. 128 bits cannot overflow here (2^32 terms < 2^64). */
static bool times_fit(const sc__graph *g, const sc__sim_params *p, const uint32_t *off, u128 mag) {
    const sc__proc *pr = sc__graph_procs(g);
    const sc__group *gr = (const sc__group *)g->groups.data;
    size_t nr = g->ranks.len;
    u128 total = mag, offset = 0;
    for (size_t q = 0; q < g->procs.len; q++) {
        uint32_t r = pr[q].rank, ntasks = off[q + 1] - off[q];
        if (r < nr) {
            if (p->launch_latency) total += (u128)ntasks * magnitude(p->launch_latency[r]);
            if (p->sync_base) total += (u128)ntasks * magnitude(p->sync_base[r]);
            if (p->sync_wake) total += (u128)ntasks * magnitude(p->sync_wake[r]);
            if (p->dispatch_gap) total += (u128)ntasks * magnitude(p->dispatch_gap[r]);
        }
        u128 o = 0;
        if (p->rank_offset && r < nr) o += magnitude(p->rank_offset[r]);
        if (p->proc_backlog) o += magnitude(p->proc_backlog[q]);
        if (o > offset) offset = o;
    }
    for (size_t i = 0; i < g->groups.len; i++) total += magnitude(gr[i].transfer_ns);
    return total + offset < (u128)1 << 62;
}

/* The outputs are written at scattered places as tasks are placed and
 * end, and on a large graph their first touch (a page fault, the zeroing
 * of a huge page) was a third of the run: in a 1,024-rank replay
 * (25M tasks), 2.7 of 6.3 s were clear_page in try_place and sc__sim_run
 * (perf). Given a second thread, a helper faults them in while this one
 * sets up and starts the run; on small graphs a thread costs more.
 * The nodes come first: order_pass writes them from the first on, and
 * their first touch was 9% of that replay's samples, all on this thread
 * (perf), so the helper takes the second half while this one faults in
 * the first. */
#define SIM_PREFAULT_MIN_TASKS ((size_t)1 << 20)
static void prefault_outputs(sim_state *s, unsigned threads) {
    const sc__sim *o = s->out;
    size_t n = o->ntasks;
    if (threads < 2 || n < SIM_PREFAULT_MIN_TASKS) return;
    /* Not wait_kind: calloc's zero pages, written for few tasks (syncs
     * and group members that waited), so faulting it in costs memory. */
    void *arrays[] = {s->node + n / 2, o->start, o->end, o->bound, o->bound_fam};
    size_t bytes[] = {(n - n / 2) * sizeof *s->node, n * sizeof *o->start, n * sizeof *o->end,
                      n * sizeof *o->bound, n};
    sc__prefault_start(&s->pf, arrays, bytes, sizeof arrays / sizeof *arrays);
}

static bool state_init(sim_state *s, const sc__graph *g, const sc__sim_params *p, sc__sim *out) {
    size_t nt = g->tasks.len, np = g->procs.len, nr = g->ranks.len, ng = g->groups.len;
    size_t n1 = nt ? nt : 1, p1 = np ? np : 1, g1 = ng ? ng : 1;
    memset(s, 0, sizeof *s);
    s->g = g;
    s->p = p;
    s->tasks = sc__graph_tasks(g);
    s->procs = sc__graph_procs(g);
    s->out = out;
    out->ntasks = nt;
    out->start = sc__alloc_array(n1, sizeof *out->start);
    out->end = sc__alloc_array(n1, sizeof *out->end);
    out->bound = sc__alloc_array(n1, sizeof *out->bound);
    out->bound_fam = sc__alloc_array(n1, 1);
    out->waited = sc__alloc_array(n1, sizeof *out->waited);
    out->wait_kind = calloc(n1, 1);
    /* malloc aligns to 16 bytes, so every other node would straddle two
     * cache lines: one more line, and often one more miss, per task. */
    s->node_mem = sc__alloc_array(n1 + 2, sizeof *s->node);
    s->node = s->node_mem ? (node *)(((uintptr_t)s->node_mem + 63) & ~(uintptr_t)63) : NULL;
    if (!out->start || !out->end || !out->bound || !out->bound_fam || !out->waited || !out->wait_kind ||
        !s->node)
        return false;
    prefault_outputs(s, p->threads);
    s->cur = sc__alloc_array(p1, sizeof *s->cur);
    s->stop = sc__alloc_array(p1, sizeof *s->stop);
    s->prev = sc__alloc_array(p1, sizeof *s->prev);
    s->launched = sc__alloc_array(p1, sizeof *s->launched);
    s->free_at = calloc(p1, sizeof *s->free_at);
    s->busy = calloc(p1, 1);
    s->rs_off = calloc(nr + 2, sizeof *s->rs_off);
    s->rs = sc__alloc_array(p1, sizeof *s->rs);
    s->arrived = calloc(g1, sizeof *s->arrived);
    s->last = sc__alloc_array(g1, sizeof *s->last);
    s->max_arrival = calloc(g1, sizeof *s->max_arrival);
    for (s->leaves = 1; s->leaves < np; s->leaves *= 2) {}
    s->tree = sc__alloc_array(2 * (size_t)s->leaves, sizeof *s->tree);
    s->popped = SC__NONE;
    if (!s->tree || !s->node || !s->cur || !s->stop || !s->prev ||
        !s->launched || !s->free_at || !s->busy || !s->rs_off || !s->rs || !s->arrived ||
        !s->last || !s->max_arrival || !order_pass(g, s->node, &s->mag, &s->off, &s->order, &s->run))
        return false;
    for (size_t i = 0; i < 2 * (size_t)s->leaves; i++) s->tree[i] = EV_EMPTY;
    for (size_t q = 0; q < np; q++) {
        if (p->rank_offset && s->procs[q].rank < nr) s->free_at[q] = p->rank_offset[s->procs[q].rank];
        if (p->proc_backlog && p->proc_backlog[q] > 0) s->free_at[q] += p->proc_backlog[q];
        s->cur[q] = s->order ? s->off[q] : s->run[q];
        s->stop[q] = s->cur[q] + (s->off[q + 1] - s->off[q]);
        s->prev[q] = SC__NONE;
        s->launched[q] = SC__NONE;
    }
    for (size_t q = 0; q < np; q++)
        if (s->procs[q].kind == SC_P_STREAM && s->procs[q].rank < nr) s->rs_off[s->procs[q].rank + 2]++;
    for (size_t r = 0; r < nr; r++) s->rs_off[r + 2] += s->rs_off[r + 1];
    for (size_t q = 0; q < np; q++)
        if (s->procs[q].kind == SC_P_STREAM && s->procs[q].rank < nr)
            s->rs[s->rs_off[s->procs[q].rank + 1]++] = (uint32_t)q;

    /* start, end, bound and bound_fam need no initial value: every task is
     * placed (start, bound, bound_fam) and ends (end) before anything reads
     * them, or the run fails and frees them. */
    memset(out->waited, 0xff, nt * sizeof *out->waited);
    out->makespan = 0;
    out->events = 0;
    return true;
}

sc_status sc__sim_run(const sc__graph *g, const sc__sim_params *p, sc__sim *out, sc_error *err) {
    sim_state s;
    double began = sc__now();
    memset(out, 0, sizeof *out);
    if (!g->succ_off && g->tasks.len)
        return sc__fail(err, SC_E_INTERNAL, NULL, SC_NO_OFFSET, "simulating a graph that is not finished");
    if (!state_init(&s, g, p, out)) {
        state_free(&s);
        sc__sim_free(out);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory simulating");
    }
    if (!times_fit(g, p, s.off, s.mag)) {
        state_free(&s);
        sc__sim_free(out);
        return sc__fail(err, SC_E_LIMIT, NULL, SC_NO_OFFSET,
                        "the traced durations add up to more than 2^62 ns (146 years): "
                        "not a real trace, refusing to simulate it");
    }
    out->setup_s = sc__now() - began;
    for (uint32_t q = 0; q < g->procs.len; q++) try_place(&s, q);
    uint64_t events = 0, reported = 0;
    sc__progress_stage(p->progress, "simulate", g->tasks.len);
    for (;;) {
        clear_popped(&s);
        evkey e = s.tree[1];
        if (e == EV_EMPTY || s.oom || s.too_many_waits || s.clash) break;
        if (p->progress && (events & 0xffff) == 0) { /* a clock read per 65,536 events */
            sc__progress_tasks(p->progress, s.ndone - reported);
            reported = s.ndone;
        }
        uint32_t t = ev_task(e);
        s.popped = s.node[t].proc;
        events++;
        if (ev_kind(e) == EV_SYNC) sync_start(&s, t);
        else task_end(&s, t, ev_time(e));
    }
    out->events = events;
    sc__progress_tasks(p->progress, s.ndone - reported);
    sc__progress_flush(p->progress);
    sc_status st = SC_OK;
    if (s.oom) {
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory simulating");
    } else if (s.too_many_waits) {
        st = sc__fail(err, SC_E_LIMIT, NULL, SC_NO_OFFSET,
                      "simulating: more than %u sync waits in one run", (unsigned)WH_DONE);
    } else if (s.clash) {
        st = sc__fail(err, SC_E_INTERNAL, NULL, SC_NO_OFFSET,
                      "simulating a malformed graph: two events pending on one processor");
    } else if (s.ndone != g->tasks.len) {
        uint32_t stuck = 0;
        while (stuck < g->tasks.len && s.node[stuck].whead == WH_DONE) stuck++;
        const sc__task *t = &s.tasks[stuck];
        st = sc__fail(err, SC_E_GRAPH, NULL, SC_NO_OFFSET,
                      "simulation deadlocked: %llu of %zu tasks never ended, e.g. '%s' (task %u, rank "
                      "%u%s)",
                      (unsigned long long)(g->tasks.len - s.ndone), g->tasks.len,
                      sc__graph_str(g, t->name), stuck, s.procs[t->proc].rank,
                      t->group != SC__NONE ? ", a group member whose peers never arrived" : "");
    }
    state_free(&s);
    if (st != SC_OK) sc__sim_free(out);
    return st;
}

size_t sc__sim_memory(const sc__graph *g) {
    size_t nt = g->tasks.len, np = g->procs.len, ng = g->groups.len;
    /* start, end, bound, waited, bound_fam, wait_kind */
    size_t outputs = 2 * sizeof(int64_t) + 2 * sizeof(uint32_t) + 2;
    /* off, run, cur, stop, prev, launched, rs, rs_off; free_at, backlog; the tree's two leaves; busy */
    size_t per_proc = 8 * sizeof(uint32_t) + 2 * sizeof(int64_t) + 2 * sizeof(evkey) + 1;
    size_t per_group = 2 * sizeof(uint32_t) + sizeof(int64_t); /* arrived, last, max_arrival */
    /* node_mem (and its alignment), order (when a processor's tasks are not one run) */
    return (nt + 2) * sizeof(node) + nt * (outputs + sizeof(uint32_t)) + np * per_proc + ng * per_group;
}

void sc__sim_free(sc__sim *s) {
    if (!s) return;
    free(s->start);
    free(s->end);
    free(s->bound);
    free(s->bound_fam);
    free(s->waited);
    free(s->wait_kind);
    memset(s, 0, sizeof *s);
}
