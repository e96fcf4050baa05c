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
 * Dispatch gap (per rank). Kernels queued back to back on a stream still
 * start a little apart (the GPU's front end: 1-3 us on NVIDIA, more after a
 * cross-stream wait; ~0 in the AMD traces). For each GPU task that was
 * queued and ready before its stream became free (its launch call, plus
 * the latency, had returned by the time its last other predecessor ended;
 * or it was launched before profiling began, SC__TF_QUEUED), the sample
 * is its start minus that end; the rank's gap is the mean of
 * its samples up to 4 x their median + 5 us (longer waits are stalls with
 * another cause), so that the step's thousands of gaps add up: without
 * it, a GPU-bound step ran 1.2% short (negative_queue_length: 1,072 gaps of
 * 1-10 us, 3.4 ms in all; trace_diff/test's first step starts with 600
 * kernels queued before profiling, 5-30 us apart: 1.2% short with them
 * left out of the samples, 0.6% with them in). A graph launch's tasks give
 * no sample and wait
 * no dispatch gap in the simulation: their measured gaps hold it. A rank
 * without samples takes the lowest gap of the others.
 *
 * Sync base and wake (per rank). A sync that finds nothing to wait for
 * still costs a call: the shortest traced duration among the rank's syncs
 * that did not wait (the GPU work they target had ended, as measured,
 * before they were called), capped by each sync's own traced length. A
 * sync that waits returns a little after the work it waited for ends: the
 * wake, the least time one of the rank's waiting syncs ran past the end
 * of that work (4-7 us in the A100 and MI210 traces; 0 when none waited).
 * A rank whose every sync waited takes the wake as its base too, never a
 * traced length, which is mostly waiting: a lone hipDeviceSynchronize of
 * 1.3 ms used to cost its whole traced length.
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

/* Per rank, the lower median of its samples (sorted by rank, then value);
 * a rank without samples takes the lower median over all ranks, and 0 when
 * there are none at all. False on out-of-memory. */
static bool per_rank_median(const sample *samples, size_t ns, size_t nr, int64_t *out) {
    int64_t *all = sc__alloc_array(ns ? ns : 1, sizeof *all);
    if (!all) return false;
    int64_t global = 0;
    if (ns) {
        for (size_t i = 0; i < ns; i++) all[i] = samples[i].value;
        qsort(all, ns, sizeof *all, sc__cmp_i64);
        global = all[(ns - 1) / 2];
    }
    free(all);
    for (size_t r = 0; r < nr; r++) out[r] = global;
    for (size_t i = 0; i < ns;) {
        size_t j = i;
        while (j < ns && samples[j].rank == samples[i].rank) j++;
        if (samples[i].rank < nr) out[samples[i].rank] = samples[i + (j - i - 1) / 2].value;
        i = j;
    }
    return true;
}

/* The dispatch gap of one rank from its samples (sorted, n > 0): the mean
 * of those up to DISPATCH_CUT x the median + DISPATCH_SLACK_NS, negative
 * ones (clock rounding) counted as 0. A mean, not the median: the gap
 * recurs at every queued task, so the sum of the step's gaps is what must
 * come out right, and integer-us traces quantise a 1.5 us gap to 1 or 2.
 * Longer waits are stalls with another cause (a dependency the trace does
 * not show), not the front end's dispatch. */
#define DISPATCH_CUT 4
#define DISPATCH_SLACK_NS 5000
static int64_t trimmed_mean(const sample *s, size_t n) {
    int64_t med = s[(n - 1) / 2].value > 0 ? s[(n - 1) / 2].value : 0;
    int64_t cut = DISPATCH_CUT * med + DISPATCH_SLACK_NS, sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n && s[i].value <= cut; i++, k++) sum += s[i].value > 0 ? s[i].value : 0;
    return k ? sum / (int64_t)k : 0;
}

/* Per rank, trimmed_mean of its samples (sorted by rank, then value); a
 * rank without samples takes the lowest of the other ranks' gaps, and 0
 * when none has any. */
static void per_rank_trimmed_mean(const sample *samples, size_t ns, size_t nr, int64_t *out) {
    int64_t lowest = -1;
    for (size_t r = 0; r < nr; r++) out[r] = -1;
    for (size_t i = 0; i < ns;) {
        size_t j = i;
        while (j < ns && samples[j].rank == samples[i].rank) j++;
        if (samples[i].rank < nr) {
            out[samples[i].rank] = trimmed_mean(samples + i, j - i);
            if (lowest < 0 || out[samples[i].rank] < lowest) lowest = out[samples[i].rank];
        }
        i = j;
    }
    for (size_t r = 0; r < nr; r++)
        if (out[r] < 0) out[r] = lowest > 0 ? lowest : 0;
}

/* For every task, the latest measured end of its predecessors other than
 * its launch call (pred_end) and that call (launch); returns how many GPU
 * tasks have a launch call. The previous task on each stream counts as a
 * predecessor too: it is one, by the stream order edge that
 * sc__graph_finish adds. Where another family joins the same two tasks,
 * the CSR keeps the lowest family, and all but LAUNCH count here the same.
 * A launch call is CPU work: a LAUNCH edge out of a GPU task (only a
 * crafted Chakra file has one) counts as a plain predecessor, so that it
 * cannot hide the stream order either. */
static size_t collect_preds(const sc__graph *g, int64_t *pred_end, uint32_t *launch) {
    const sc__task *tasks = sc__graph_tasks(g);
    size_t nt = g->tasks.len, nl = 0;
    for (size_t i = 0; i < nt; i++) {
        launch[i] = SC__NONE;
        pred_end[i] = INT64_MIN;
    }
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
    return nl;
}

/* Launch-latency samples: a GPU task whose stream was idle when its launch
 * call began (every other predecessor had ended by then). */
static size_t latency_samples(const sc__graph *g, const int64_t *pred_end, const uint32_t *launch,
                              sample *samples) {
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t ns = 0;
    for (size_t v = 0; v < g->tasks.len; v++) {
        if (!sc__task_on_gpu(tasks[v].kind) || launch[v] == SC__NONE) continue;
        const sc__task *l = &tasks[launch[v]];
        if (pred_end[v] > l->ts) continue;
        samples[ns++] = (sample){procs[tasks[v].proc].rank, tasks[v].ts - (l->ts + l->dur)};
    }
    qsort(samples, ns, sizeof *samples, cmp_sample);
    return ns;
}

/* Dispatch-gap samples: a GPU task that was queued and ready before its
 * stream became free - its launch call had returned (plus the rank's
 * latency, when positive) by the time its last other predecessor, the
 * previous task on the stream or a cross-stream source, ended, or it was
 * launched before profiling began - so that nothing but the GPU's front
 * end stood between that end and its start.
 * A graph launch's tasks are left out: their measured gaps hold it. */
static size_t dispatch_samples(const sc__graph *g, const int64_t *pred_end, const uint32_t *launch,
                               const int64_t *latency, sample *samples) {
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t ns = 0;
    for (size_t v = 0; v < g->tasks.len; v++) {
        bool queued = tasks[v].flags & SC__TF_QUEUED;
        if (!sc__task_on_gpu(tasks[v].kind) || (launch[v] == SC__NONE && !queued) ||
            (tasks[v].flags & (SC__TF_GRAPH_GAP | SC__TF_UNTRACED_GAP)))
            continue;
        if (pred_end[v] == INT64_MIN || pred_end[v] == INT64_MAX) continue;
        uint32_t r = procs[tasks[v].proc].rank;
        int64_t lat = r < g->ranks.len && latency[r] > 0 ? latency[r] : 0;
        if (!queued) {
            const sc__task *l = &tasks[launch[v]];
            if (l->ts + l->dur + lat > pred_end[v]) continue;
        }
        samples[ns++] = (sample){r, tasks[v].ts - pred_end[v]};
    }
    qsort(samples, ns, sizeof *samples, cmp_sample);
    return ns;
}

bool sc__calibrate_launch(const sc__graph *g, int64_t *latency, int64_t *dispatch, sc__spare *spare) {
    size_t nt = g->tasks.len, nr = g->ranks.len, n1 = nt ? nt : 1;
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
        size_t nl = collect_preds(g, pred_end, launch);
        /* The first task of a stream has none in the graph, but work from
         * before the window (the previous iteration's tail) may still have
         * held the stream: we cannot tell, so it gives no sample. */
        for (size_t p = 0; p < g->procs.len; p++)
            if (procs[p].kind == SC_P_STREAM && procs[p].first != SC__NONE)
                pred_end[procs[p].first] = INT64_MAX;
        /* One sample per launched or queued GPU task at most. */
        const sc__task *tasks = sc__graph_tasks(g);
        for (size_t v = 0; v < nt; v++) nl += launch[v] == SC__NONE && (tasks[v].flags & SC__TF_QUEUED);
        ok = (samples = sc__alloc_array(nl ? nl : 1, sizeof *samples)) != NULL;
    }
    if (ok) ok = per_rank_median(samples, latency_samples(g, pred_end, launch, samples), nr, latency);
    if (ok && dispatch) per_rank_trimmed_mean(samples, dispatch_samples(g, pred_end, launch, latency, samples), nr, dispatch);
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
        qsort(se->ends + se->off[p], se->off[p + 1] - se->off[p], sizeof *se->ends, sc__cmp_i64);
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

bool sc__calibrate_sync_base(const sc__graph *g, int64_t *base, int64_t *wake) {
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
    for (size_t r = 0; ok && r < nr; r++) {
        if (base[r] < 0) base[r] = after[r] > 0 ? after[r] : 0;
        if (wake) wake[r] = after[r] > 0 ? after[r] : 0;
    }
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
