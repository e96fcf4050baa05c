/*
 * stalls.c - GPU time before a task that nothing traced explains.
 *
 * A stream runs its queued work back to back, a few microseconds apart
 * (the dispatch gap, src/models/calibrate.c). When a task starts long after
 * everything the trace says it waits for - its launch call, the previous
 * task on its stream (in the window or before it), its cross-stream
 * sources - and the device ran no traced work meanwhile, the stream was
 * held by something the trace does not hold: an event recorded by another
 * process or before profiling began, untraced copies, a peer rank. A GPU
 * does not sit idle for a millisecond with work queued. Such a task gets
 * the wait as its gap, flagged SC__TF_UNTRACED_GAP (graph.h): the simulator
 * starts it that long after the later of its ready time and its stream's
 * previous task, as it does a graph launch's task.
 * negative_queue_length_values_check's ProfilerStep#550, the first
 * profiled step, has 10 such stalls. A wait while the device runs traced
 * work elsewhere is left alone: a kernel of another stream, or an NCCL
 * kernel waiting for peer ranks inside it, may be what the stream waited
 * for; a wait that ends as another stream's task ends is that task's
 * cross-stream edge (cross_stream.c, rules 5 and 7), which the stall is
 * measured after. (#550's long waits were mostly such edges of work
 * launched before profiling: as stalls they replayed it 5.2% short, as
 * edges within 0.1%.)
 *
 * The stream's first task is left to the calibration's untraced backlog
 * (it has no predecessor on its stream in the window), graph launches'
 * tasks to their own gaps (gpu_tasks.c). Both conditions - the wait and
 * the idle device - must hold for at least SC__STALL_MIN_NS.
 */
#include "build.h"

#include <stdlib.h>

#define SC__STALL_MIN_NS 1000000

typedef struct busy {
    int64_t a, b;
} busy;

static int cmp_busy(const void *x, const void *y) {
    const busy *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* The trace's GPU work as disjoint busy spans, ascending (any stream, in
 * the window or not). */
static size_t busy_spans(const sc_trace *t, busy *s) {
    const sc__event *ev = sc__trace_events(t);
    size_t n = 0;
    for (size_t i = 0; i < t->events.len; i++)
        if ((ev[i].flags & SC_EF_GPU) && ev[i].ph == 'X') s[n++] = (busy){ev[i].ts, ev[i].ts + ev[i].dur};
    qsort(s, n, sizeof *s, cmp_busy);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && s[i].a <= s[k - 1].b) {
            if (s[i].b > s[k - 1].b) s[k - 1].b = s[i].b;
        } else {
            s[k++] = s[i];
        }
    }
    return k;
}

/* Time in [a, b) covered by no busy span. */
static int64_t idle_in(const busy *s, size_t n, int64_t a, int64_t b) {
    size_t lo = 0, hi = n; /* first span ending after a */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].b <= a) lo = mid + 1;
        else hi = mid;
    }
    int64_t covered = 0;
    for (size_t i = lo; i < n && s[i].a < b; i++) {
        int64_t x = s[i].a > a ? s[i].a : a, y = s[i].b < b ? s[i].b : b;
        if (y > x) covered += y - x;
    }
    return b - a - covered;
}

/* The trace's GPU events by stream, then start, each with the latest end
 * of its stream's events up to it (a prefix maximum): what a task's stream
 * ran before it, earlier steps' work included, by binary search. */
typedef struct sev {
    int64_t stream, ts, end_max;
    int16_t device;
} sev;

static int cmp_sev(const void *x, const void *y) {
    const sev *p = x, *q = y;
    if (p->device != q->device) return p->device < q->device ? -1 : 1;
    if (p->stream != q->stream) return p->stream < q->stream ? -1 : 1;
    return p->ts < q->ts ? -1 : p->ts > q->ts;
}

static size_t stream_events(const sc_trace *t, sev *s) {
    const sc__event *ev = sc__trace_events(t);
    size_t n = 0;
    for (size_t i = 0; i < t->events.len; i++)
        if ((ev[i].flags & SC_EF_GPU) && ev[i].ph == 'X')
            s[n++] = (sev){sc__event_stream(t, &ev[i]), ev[i].ts, ev[i].ts + ev[i].dur, sc__event_device(t, &ev[i])};
    qsort(s, n, sizeof *s, cmp_sev);
    for (size_t i = 1; i < n; i++)
        if (s[i].device == s[i - 1].device && s[i].stream == s[i - 1].stream && s[i - 1].end_max > s[i].end_max)
            s[i].end_max = s[i - 1].end_max;
    return n;
}

/* The latest end of the events of (device, stream) that started before ts;
 * INT64_MIN when none. */
static int64_t stream_end_before(const sev *s, size_t n, int16_t device, int64_t stream, int64_t ts) {
    sev key = {stream, ts, 0, device};
    size_t lo = 0, hi = n; /* first event >= key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_sev(&s[mid], &key) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (!lo || s[lo - 1].device != device || s[lo - 1].stream != stream) return INT64_MIN;
    return s[lo - 1].end_max;
}

/* What stall_of reads: the busy spans, the events by stream, the rank's
 * cross-stream edges (few). */
typedef struct stall_ctx {
    busy *spans;
    size_t nspans;
    sev *events;
    size_t nevents;
    sc__vec cross; /* sc__edge */
} stall_ctx;

/* The latest measured end of what task v waits for besides its launch and
 * its predecessor in the window: work of its stream that started before it
 * (earlier steps'), and its cross-stream sources. */
static int64_t other_ends(const sc__bctx *c, const stall_ctx *x, uint32_t v) {
    const sc__task *t = sc__graph_tasks(c->g);
    const sc__proc *p = &sc__graph_procs(c->g)[t[v].proc];
    int64_t end = stream_end_before(x->events, x->nevents, p->device, p->id, t[v].ts);
    const sc__edge *edges = x->cross.data;
    for (size_t k = 0; k < x->cross.len; k++)
        if (edges[k].to == v) {
            const sc__task *u = &t[edges[k].from];
            if (u->ts + u->dur > end) end = u->ts + u->dur;
        }
    return end;
}

/* Task i's untraced wait, 0 when it has none. */
static int64_t stall_of(const sc__bctx *c, const stall_ctx *x, uint32_t i) {
    const sc__task *t = sc__graph_tasks(c->g);
    if (i == c->first_gpu_task || t[i - 1].proc != t[i].proc || (t[i].flags & SC__TF_GRAPH_GAP)) return 0;
    int64_t ready = t[i - 1].ts + t[i - 1].dur;
    uint32_t l = SC__SCRATCH(c, launch_of, uint32_t, i);
    if (l != SC__NONE && t[l].ts + t[l].dur > ready) ready = t[l].ts + t[l].dur;
    if (t[i].ts - ready < SC__STALL_MIN_NS) return 0;
    int64_t other = other_ends(c, x, i);
    if (other > ready) ready = other;
    int64_t wait = t[i].ts - ready, idle = wait > 0 ? idle_in(x->spans, x->nspans, ready, t[i].ts) : 0;
    return wait >= SC__STALL_MIN_NS && idle >= SC__STALL_MIN_NS && 2 * idle >= wait ? wait : 0;
}

static bool stall_ctx_init(const sc__bctx *c, stall_ctx *x) {
    const sc__event *ev = sc__trace_events(c->t);
    size_t ngpu = 0;
    for (size_t i = 0; i < c->t->events.len; i++) ngpu += (ev[i].flags & SC_EF_GPU) && ev[i].ph == 'X';
    sc__vec_init(&x->cross, sizeof(sc__edge));
    x->spans = sc__alloc_array(ngpu ? ngpu : 1, sizeof *x->spans);
    x->events = sc__alloc_array(ngpu ? ngpu : 1, sizeof *x->events);
    if (!x->spans || !x->events) return false;
    x->nspans = busy_spans(c->t, x->spans);
    x->nevents = stream_events(c->t, x->events);
    const sc__edge *edges = c->g->edge_list.data;
    for (size_t k = 0; k < c->g->edge_list.len; k++) {
        if (edges[k].family != SC_E_CROSS_STREAM || edges[k].to < c->first_gpu_task) continue;
        sc__edge *e = sc__vec_push(&x->cross);
        if (!e) return false;
        *e = edges[k];
    }
    return true;
}

static void stall_ctx_free(stall_ctx *x) {
    free(x->spans);
    free(x->events);
    sc__vec_free(&x->cross);
}

sc_status sc__build_stalls(sc__bctx *c, sc_error *err) {
    uint32_t end = (uint32_t)c->g->tasks.len;
    if (c->first_gpu_task >= end) return SC_OK;
    stall_ctx x = {0};
    bool ok = stall_ctx_init(c, &x);
    for (uint32_t i = c->first_gpu_task; ok && i < end; i++) {
        int64_t wait = stall_of(c, &x, i);
        if (!wait) continue;
        sc__task *t = &sc__graph_tasks(c->g)[i];
        t->flags |= SC__TF_UNTRACED_GAP;
        t->gap = wait;
    }
    stall_ctx_free(&x);
    if (!ok) return sc__fail(err, SC_E_NOMEM, c->t->path, SC_NO_OFFSET, "out of memory (GPU stalls)");
    return SC_OK;
}
