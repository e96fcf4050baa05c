/*
 * calibrate.c - the few numbers the simulator needs besides durations and
 * gaps, measured from the traces being replayed. Rules:
 *
 * Launch latency (per rank). For each GPU task g with a launch call L (its
 * LAUNCH predecessor) whose stream was idle when L was called - the previous
 * task on g's stream and every other predecessor of g ended (measured) by
 * L's start - the sample is g.start - L.end: how long after the call returns
 * the GPU picks the work up (the first task of each stream gives no sample:
 * the previous iteration may still have held its stream). The rank's latency is the median sample (lower
 * median, so it is a measured value); a rank without samples takes the median
 * over all ranks, and 0 when there are none at all. It may be negative (the
 * kernel often starts before cudaLaunchKernel returns); the simulator never
 * starts a GPU task before its launch call starts.
 *
 * Sync base (per rank). A sync that finds nothing to wait for still costs a
 * call: the shortest traced duration among the rank's syncs that did not
 * wait (the GPU work they target had ended, as measured, before they were
 * called), capped by each sync's own traced length. A rank whose every sync
 * waited takes the least time one of them ran past the end of the work it
 * waited for, not a traced length, which is mostly waiting: a lone
 * hipDeviceSynchronize of 1.3 ms used to cost its whole traced length.
 *
 * Rank start offsets. Ranks do not enter a step together: a rank that
 * finished the previous step late (data loading, a straggler) starts late, and
 * the others wait for it in the first collective. That wait is part of their
 * measured step, so each rank's processors become free at its offset: its
 * step_start minus the earliest rank's, after removing clock skew. Skew
 * between two ranks' clocks is the median difference of the measured ends of
 * the collectives they share (members of a collective end together, within a
 * few us); ranks that share none with the reference rank get no correction.
 * Only this initial condition per rank is taken from the measured times;
 * every task is still placed by the simulation.
 *
 * Stream backlog (per stream). A GPU-bound job's CPU runs ahead: when the
 * step's annotation opens, its streams may still be busy with the previous
 * step's kernels, and the measured step (annotation start to last task end)
 * includes that tail. So a stream becomes free at its rank's offset plus
 * the backlog the Kineto builder measured while the rank's events were at
 * hand (src/graph/backlog.c; graphs from other sources have none: 0).
 * Like the start offsets, this is an initial condition, not a placement.
 * The work that held a stream is not always in the trace: a derived trace
 * keeps one step's events (TraceLens' vLLM graph executions), a stream
 * waits on an event recorded before profiling began (SGLang's overlap
 * scheduler: a hipStreamWaitEvent with no record in the trace). When a
 * stream's first task starts more than SC__UNTRACED_MIN_NS after everything
 * the trace says it waits for (its launch call plus the launch latency, its
 * other predecessors, the traced backlog), and for most of that time, and at
 * least SC__UNTRACED_MIN_NS, the rank's device ran no traced work on any
 * stream, its backlog is that task's start: the stream was busy, or held,
 * by work the trace does not hold. Waits that the device spent busy with
 * traced work elsewhere (contention) do not count: that is not the
 * model's to copy. A task of a graph launch is left alone: its gap holds
 * the untraced time before it already.
 *
 * Collective transfer time (per group). A traced NCCL kernel spans from when
 * its rank arrived to when the collective completed, so it includes waiting
 * for the slowest rank. The last rank to arrive waited for nobody: its kernel
 * is the pure transfer. Since the members end together (within a few us), the
 * last arrival has the shortest kernel, so transfer_ns = min over members of
 * the traced duration. Using durations only keeps the rule valid when ranks'
 * clocks differ (several hosts), where comparing start times would not be.
 */
#include "calibrate.h"

#include <stdlib.h>
#include <string.h>

/* A stream whose first task waited past everything traced that it waits
 * for, the device running no traced work for this long meanwhile, was held
 * by work the trace does not hold (see the rules): a GPU does not sit idle
 * for a millisecond, a hundred launch latencies, with work queued. */
#define SC__UNTRACED_MIN_NS 1000000

typedef struct sample {
    uint32_t rank;
    int64_t value;
} sample;

static int cmp_sample(const void *a, const void *b) {
    const sample *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->value < y->value ? -1 : x->value > y->value;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

bool sc__calibrate_launch(const sc__graph *g, int64_t *latency, sc__spare *spare) {
    size_t nt = g->tasks.len, nr = g->ranks.len, n1 = nt ? nt : 1;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    /* pred_end and launch in one block, from the spare where it has room:
     * 12 bytes a task, written whole, on a large job fresh pages (the
     * spare's are mostly faulted in already). The samples, one per
     * launched GPU task, are few. */
    size_t got;
    char *block = sc__spare_borrow(spare, n1 * (sizeof(int64_t) + sizeof(uint32_t)), &got);
    int64_t *pred_end = (int64_t *)(void *)block;
    uint32_t *launch = block ? (uint32_t *)(void *)(block + n1 * sizeof *pred_end) : NULL;
    sample *samples = NULL;
    bool ok = block != NULL;
    if (ok) {
        for (size_t i = 0; i < nt; i++) {
            launch[i] = SC__NONE;
            pred_end[i] = INT64_MIN;
        }
        /* The previous task on each stream counts as a predecessor too: it
         * is one, by the stream order edge that sc__graph_finish adds. Where
         * another family joins the same two tasks, the CSR keeps the lowest
         * family, and all but LAUNCH count here the same. A launch call is
         * CPU work: a LAUNCH edge out of a GPU task (only a crafted Chakra
         * file has one) counts as a plain predecessor, so that it cannot
         * hide the stream order either. */
        size_t nl = 0;
        for (size_t u = 0; u < nt; u++) {
            int64_t end = tasks[u].ts + tasks[u].dur;
            bool calls = !sc__task_on_gpu(tasks[u].kind);
            for (uint32_t k = g->succ_off[u]; k < g->succ_off[u + 1]; k++) {
                uint32_t v = g->succ[k];
                if (calls && g->succ_family[k] == SC_E_LAUNCH) {
                    nl += launch[v] == SC__NONE;
                    launch[v] = (uint32_t)u;
                } else if (end > pred_end[v]) {
                    pred_end[v] = end;
                }
            }
        }
        /* The first task of a stream has none in the graph, but work from
         * before the window (the previous iteration's tail) may still have
         * held the stream: we cannot tell, so it gives no sample. */
        for (size_t p = 0; p < g->procs.len; p++)
            if (procs[p].kind == SC_P_STREAM && procs[p].first != SC__NONE)
                pred_end[procs[p].first] = INT64_MAX;
        ok = (samples = sc__alloc_array(nl ? nl : 1, sizeof *samples)) != NULL; /* one per launched task at most */
    }
    if (ok) {
        size_t ns = 0;
        for (size_t v = 0; v < nt; v++) {
            if (!sc__task_on_gpu(tasks[v].kind) || launch[v] == SC__NONE) continue;
            const sc__task *l = &tasks[launch[v]];
            if (pred_end[v] > l->ts) continue;
            samples[ns++] = (sample){procs[tasks[v].proc].rank, tasks[v].ts - (l->ts + l->dur)};
        }
        qsort(samples, ns, sizeof *samples, cmp_sample);
        int64_t *all = sc__alloc_array(ns ? ns : 1, sizeof *all);
        ok = all != NULL;
        int64_t global = 0;
        if (ok && ns) {
            for (size_t i = 0; i < ns; i++) all[i] = samples[i].value;
            qsort(all, ns, sizeof *all, cmp_i64);
            global = all[(ns - 1) / 2];
        }
        free(all);
        for (size_t r = 0; r < nr; r++) latency[r] = global;
        for (size_t i = 0; i < ns;) {
            size_t j = i;
            while (j < ns && samples[j].rank == samples[i].rank) j++;
            if (samples[i].rank < nr) latency[samples[i].rank] = samples[i + (j - i - 1) / 2].value;
            i = j;
        }
    }
    sc__spare_return(spare, block, got);
    free(samples);
    return ok;
}

/* Every GPU task's measured end, grouped by stream: the ends of processor
 * p are ends[off[p] .. off[p + 1]), ascending. */
typedef struct stream_ends {
    uint32_t *off;
    int64_t *ends;
} stream_ends;

static bool stream_ends_build(const sc__graph *g, stream_ends *se) {
    size_t np = g->procs.len, nt = g->tasks.len;
    const sc__task *tasks = sc__graph_tasks(g);
    se->off = calloc(np + 2, sizeof *se->off);
    se->ends = sc__alloc_array(nt ? nt : 1, sizeof *se->ends);
    if (!se->off || !se->ends) return false;
    for (size_t i = 0; i < nt; i++)
        if (sc__task_on_gpu(tasks[i].kind)) se->off[tasks[i].proc + 2]++;
    for (size_t p = 0; p < np; p++) se->off[p + 2] += se->off[p + 1];
    for (size_t i = 0; i < nt; i++)
        if (sc__task_on_gpu(tasks[i].kind)) se->ends[se->off[tasks[i].proc + 1]++] = tasks[i].ts + tasks[i].dur;
    for (size_t p = 0; p < np; p++)
        qsort(se->ends + se->off[p], se->off[p + 1] - se->off[p], sizeof *se->ends, cmp_i64);
    return true;
}

/* The latest end <= at on processor p; INT64_MIN when none. */
static int64_t stream_end_by(const stream_ends *se, uint32_t p, int64_t at) {
    uint32_t lo = se->off[p], hi = se->off[p + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (se->ends[mid] <= at) lo = mid + 1;
        else hi = mid;
    }
    return lo > se->off[p] ? se->ends[lo - 1] : INT64_MIN;
}

/* The measured end of the GPU work sync task t waited for: the latest end,
 * by the time t returned, on its target stream(s) or of its target task;
 * INT64_MIN when none ended by then. */
static int64_t waited_end(const sc__graph *g, const stream_ends *se, uint32_t t) {
    const sc__task *s = &sc__graph_tasks(g)[t];
    const sc__proc *procs = sc__graph_procs(g);
    int64_t at = s->ts + s->dur, e = INT64_MIN;
    if (s->sync == SC_SYNC_TASK && s->sync_arg < g->tasks.len) {
        const sc__task *x = &sc__graph_tasks(g)[s->sync_arg];
        return x->ts + x->dur <= at ? x->ts + x->dur : INT64_MIN;
    }
    if (s->sync == SC_SYNC_STREAM && s->sync_arg < g->procs.len) return stream_end_by(se, s->sync_arg, at);
    for (uint32_t p = 0; p < g->procs.len; p++) { /* device (or unresolved): every stream of the rank */
        if (procs[p].kind != SC_P_STREAM || procs[p].rank != procs[s->proc].rank) continue;
        if (s->sync == SC_SYNC_DEVICE && procs[p].device != (int64_t)s->sync_arg) continue;
        int64_t x = stream_end_by(se, p, at);
        if (x > e) e = x;
    }
    return e;
}

bool sc__calibrate_sync_base(const sc__graph *g, int64_t *base) {
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t nr = g->ranks.len;
    stream_ends se = {NULL, NULL};
    int64_t *after = sc__alloc_array(nr ? nr : 1, sizeof *after);
    bool ok = after && stream_ends_build(g, &se);
    for (size_t r = 0; r < nr; r++) base[r] = after ? (after[r] = -1) : 0;
    for (size_t i = 0; ok && i < g->tasks.len; i++) {
        if (tasks[i].kind != SC_T_SYNC) continue;
        uint32_t r = procs[tasks[i].proc].rank;
        if (r >= nr) continue;
        int64_t e = waited_end(g, &se, (uint32_t)i), end = tasks[i].ts + tasks[i].dur;
        if (e <= tasks[i].ts) { /* nothing left to wait for: the call's own cost */
            if (base[r] < 0 || tasks[i].dur < base[r]) base[r] = tasks[i].dur;
        } else if (after[r] < 0 || end - e < after[r]) {
            after[r] = end - e;
        }
    }
    for (size_t r = 0; ok && r < nr; r++)
        if (base[r] < 0) base[r] = after[r] > 0 ? after[r] : 0;
    free(after);
    free(se.off);
    free(se.ends);
    return ok;
}

bool sc__calibrate_transfers(sc__graph *g) {
    const sc__task *tasks = sc__graph_tasks(g);
    for (size_t gi = 0; gi < g->groups.len; gi++) {
        sc__group *grp = &SC__VEC_AT(&g->groups, sc__group, gi);
        const uint32_t *m = &SC__VEC_AT(&g->group_members, uint32_t, grp->first);
        int64_t best = -1;
        for (uint32_t i = 0; i < grp->count; i++)
            if (best < 0 || tasks[m[i]].dur < best) best = tasks[m[i]].dur;
        grp->transfer_ns = best < 0 ? 0 : best;
    }
    return true;
}

bool sc__calibrate_rank_offsets(const sc__graph *g, int64_t *offset) {
    size_t nr = g->ranks.len;
    if (!nr) return true;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    sample *samples = sc__alloc_array(g->group_members.len ? g->group_members.len : 1, sizeof *samples);
    if (!samples) return false;
    /* Samples of (member end - reference member end), reference = graph rank 0. */
    size_t ns = 0;
    for (size_t gi = 0; gi < g->groups.len; gi++) {
        const sc__group *grp = &SC__VEC_AT(&g->groups, sc__group, gi);
        const uint32_t *m = &SC__VEC_AT(&g->group_members, uint32_t, grp->first);
        uint32_t ref = SC__NONE;
        for (uint32_t i = 0; i < grp->count; i++)
            if (procs[tasks[m[i]].proc].rank == 0) ref = m[i];
        if (ref == SC__NONE) continue;
        int64_t ref_end = tasks[ref].ts + tasks[ref].dur;
        for (uint32_t i = 0; i < grp->count; i++) {
            uint32_t r = procs[tasks[m[i]].proc].rank;
            if (m[i] != ref && r != 0) samples[ns++] = (sample){r, tasks[m[i]].ts + tasks[m[i]].dur - ref_end};
        }
    }
    qsort(samples, ns, sizeof *samples, cmp_sample);
    for (size_t r = 0; r < nr; r++) offset[r] = 0; /* skew first */
    for (size_t i = 0; i < ns;) {
        size_t j = i;
        while (j < ns && samples[j].rank == samples[i].rank) j++;
        if (samples[i].rank < nr) offset[samples[i].rank] = samples[i + (j - i - 1) / 2].value;
        i = j;
    }
    free(samples);
    int64_t lo = INT64_MAX;
    for (size_t r = 0; r < nr; r++) {
        offset[r] = SC__VEC_AT(&g->ranks, sc__rank, r).step_start - offset[r];
        if (offset[r] < lo) lo = offset[r];
    }
    for (size_t r = 0; r < nr; r++) offset[r] -= lo;
    return true;
}


/* Per stream, the latest measured end of what the graph says its first
 * task waits for: its launch call (plus the rank's launch latency, when
 * positive) and every other predecessor; INT64_MIN when it has none. */
static void first_task_ready(const sc__graph *g, const int64_t *latency, int64_t *ready) {
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    for (size_t q = 0; q < g->procs.len; q++) ready[q] = INT64_MIN;
    for (size_t u = 0; u < g->tasks.len; u++) {
        int64_t end = tasks[u].ts + tasks[u].dur;
        for (uint32_t k = g->succ_off[u]; k < g->succ_off[u + 1]; k++) {
            uint32_t v = g->succ[k], q = tasks[v].proc;
            if (procs[q].kind != SC_P_STREAM || procs[q].first != v) continue;
            int64_t at = end;
            uint32_t r = procs[q].rank;
            if (g->succ_family[k] == SC_E_LAUNCH && r < g->ranks.len && latency[r] > 0) at += latency[r];
            if (at > ready[q]) ready[q] = at;
        }
    }
}

typedef struct span {
    int64_t a, b;
} span;

static int cmp_span(const void *x, const void *y) {
    const span *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* Measured time in [a, b) during which no traced GPU task of rank r ran
 * (on any stream); -1 on out-of-memory. Called for the few streams whose
 * first task waited long for no traced reason, so a pass over the rank's
 * tasks each time is cheap. */
static int64_t device_idle(const sc__graph *g, uint32_t r, int64_t a, int64_t b) {
    const sc__rank *rk = &SC__VEC_AT(&g->ranks, sc__rank, r);
    const sc__task *tasks = sc__graph_tasks(g);
    size_t lo = rk->first_task, hi = lo + rk->ntasks, n = 0;
    if (hi > g->tasks.len) hi = g->tasks.len;
    span *s = sc__alloc_array(hi > lo ? hi - lo : 1, sizeof *s);
    if (!s) return -1;
    for (size_t i = lo; i < hi; i++) {
        int64_t x = tasks[i].ts, y = tasks[i].ts + tasks[i].dur;
        if (!sc__task_on_gpu(tasks[i].kind) || y <= a || x >= b) continue;
        s[n++] = (span){x < a ? a : x, y > b ? b : y};
    }
    qsort(s, n, sizeof *s, cmp_span);
    int64_t idle = 0, at = a;
    for (size_t i = 0; i < n; i++) {
        if (s[i].a > at) idle += s[i].a - at;
        if (s[i].b > at) at = s[i].b;
    }
    free(s);
    return idle + (b > at ? b - at : 0);
}

bool sc__calibrate_backlog(const sc__graph *g, const int64_t *latency, int64_t *backlog) {
    size_t np = g->procs.len;
    if (g->proc_backlog.len == np) { /* measured by the Kineto builder */
        if (np) memcpy(backlog, g->proc_backlog.data, np * sizeof *backlog);
    } else {
        for (size_t q = 0; q < np; q++) backlog[q] = 0;
    }
    int64_t *ready = sc__alloc_array(np ? np : 1, sizeof *ready);
    if (!ready) return false;
    first_task_ready(g, latency, ready);
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    bool ok = true;
    for (size_t q = 0; ok && q < np; q++) {
        if (procs[q].kind != SC_P_STREAM || procs[q].first == SC__NONE || procs[q].rank >= g->ranks.len) continue;
        const sc__task *f = &tasks[procs[q].first];
        if (f->flags & SC__TF_GRAPH_GAP) continue; /* its gap holds the untraced time already */
        int64_t start = SC__VEC_AT(&g->ranks, sc__rank, procs[q].rank).step_start;
        int64_t held = f->ts - start, explained = backlog[q];
        if (ready[q] != INT64_MIN && ready[q] - start > explained) explained = ready[q] - start;
        if (held - explained < SC__UNTRACED_MIN_NS) continue;
        int64_t idle = device_idle(g, procs[q].rank, start + explained, f->ts);
        ok = idle >= 0;
        if (ok && idle >= SC__UNTRACED_MIN_NS && 2 * idle >= held - explained) backlog[q] = held;
    }
    free(ready);
    return ok;
}
