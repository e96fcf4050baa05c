/*
 * iteration.c - which slice of a rank's trace becomes the graph.
 *
 * Iterations are the `ProfilerStep#N` annotations (user_annotation, or
 * cpu_op in older traces) on the main thread. The builder takes the one the
 * caller asked for (--iteration N), else the last *complete* one: it
 * launched kernels and every kernel launch inside it found its GPU event (a
 * step cut off by the end of profiling has launches with no kernels; the
 * stub step the profiler opens on its last step() call launches nothing).
 * With no annotation at all the whole trace is one window.
 *
 * The window is [annotation start, annotation end): CPU events starting in
 * it belong to the step; GPU work belongs to it when its launch does (even if
 * it ends after the annotation), see gpu_tasks.c.
 *
 * Once built, a window may still not be a step to measure a replay against
 * (sc__window_status): a trace with no CPU side, a step whose last kernel
 * launches ran no GPU work (profiling stopped first: when its GPU work ends
 * is unknown; a launch lost in the middle is CUPTI dropping a record), or a
 * stream capture (cudaStreamBeginCapture..EndCapture records launches into
 * a CUDA/HIP graph: they run no GPU work) that no graph launch replays.
 */
#include "build.h"

#include <stdlib.h>

static bool is_step(const sc_trace *t, const sc__event *e, int64_t *number) {
    if (e->ph != 'X' || (e->kind != SC_K_USER_ANNOTATION && e->kind != SC_K_CPU_OP)) return false;
    const char *name = sc__trace_str(t, e->name);
    if (!sc__starts_with(name, "ProfilerStep#")) return false;
    int64_t n = 0;
    const char *p = name + 13;
    if (*p < '0' || *p > '9') return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n > INT64_MAX / 10 - 10) return false;
        n = n * 10 + (*p - '0');
    }
    *number = n;
    return true;
}

static int cmp_i64(const void *a, const void *b, void *ctx) {
    (void)ctx;
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

bool sc__trace_step_numbers(const sc_trace *t, sc__vec *out) {
    const sc__event *ev = sc__trace_events(t);
    size_t first = out->len;
    for (size_t i = 0; i < t->events.len; i++) {
        int64_t n;
        if (!is_step(t, &ev[i], &n)) continue;
        int64_t *slot = sc__vec_push(out);
        if (!slot) return false;
        *slot = n;
    }
    size_t k = 0, n = out->len - first;
    if (!n) return true; /* data may be NULL: no offset from it */
    int64_t *v = (int64_t *)out->data + first;
    sc__sort(v, n, sizeof *v, cmp_i64, NULL);
    for (size_t i = 0; i < n; i++)
        if (!k || v[i] != v[k - 1]) v[k++] = v[i];
    out->len = first + k;
    return true;
}

/* Latest start first; on equal starts the longest (the outer annotation).
 * ctx: the trace's events. */
static int cmp_step_desc(const void *a, const void *b, void *ctx) {
    const sc__event *events = ctx;
    const sc__event *x = &events[*(const uint32_t *)a], *y = &events[*(const uint32_t *)b];
    if (x->ts != y->ts) return x->ts > y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static bool is_cpu_kind(uint8_t k) {
    return k == SC_K_CPU_OP || k == SC_K_USER_ANNOTATION || k == SC_K_RUNTIME ||
           k == SC_K_DRIVER || k == SC_K_PYTHON;
}

/* A step is complete when it launched kernels and every kernel launch
 * (a call with "Launch" in its name and a correlation id) found its GPU
 * event. Copies and memsets are not counted: CUPTI drops some (host-side
 * or empty cudaMemsetAsync), which says nothing about truncation. */
static bool complete(sc__bctx *c, const sc__idmap *gpu_corr, uint32_t track, int64_t start,
                     int64_t end) {
    const sc_trace *t = c->t;
    const sc__event *ev = sc__trace_events(t);
    size_t launches = 0;
    for (size_t i = 0; i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        if (e->ph != 'X' || e->track != track || e->ts < start || e->ts >= end) continue;
        if (e->kind != SC_K_RUNTIME && e->kind != SC_K_DRIVER) continue;
        if (e->correlation < 0 || !sc__bctx_kernel_launch(c, e->name)) continue;
        if (sc__idmap_get(gpu_corr, e->correlation) == SC__NONE) return false;
        launches++;
    }
    return launches > 0;
}

/* A whole trace's start: its earliest CPU event on a thread that calls the
 * GPU runtime (a thread that calls none, a monitor or a loader, opens
 * nothing: graph.h, sc__proc.quiet); INT64_MAX when no thread calls it.
 * False on out-of-memory. */
static bool whole_start(const sc_trace *t, int64_t *start) {
    const sc__event *ev = sc__trace_events(t);
    uint8_t *loud = calloc(t->tracks.len ? t->tracks.len : 1, 1);
    if (!loud) return false;
    for (size_t i = 0; i < t->events.len; i++)
        if ((ev[i].kind == SC_K_RUNTIME || ev[i].kind == SC_K_DRIVER) && ev[i].track < t->tracks.len)
            loud[ev[i].track] = 1;
    *start = INT64_MAX;
    for (size_t i = 0; i < t->events.len; i++)
        if (is_cpu_kind(ev[i].kind) && ev[i].ph == 'X' && ev[i].track < t->tracks.len && loud[ev[i].track] &&
            ev[i].ts < *start)
            *start = ev[i].ts;
    free(loud);
    return true;
}

sc_status sc__build_window(sc__bctx *c, sc_error *err) {
    const sc_trace *t = c->t;
    const sc__event *ev = sc__trace_events(t);
    sc__window *w = &c->win;
    memset(w, 0, sizeof *w);
    w->number = -1;
    w->track = SC__NONE;
    /* Candidates: each step number once (the longest event of that name). */
    size_t nsteps = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < t->events.len; i++) {
        int64_t n;
        if (is_cpu_kind(ev[i].kind) && ev[i].ph == 'X') {
            if (ev[i].ts < lo) lo = ev[i].ts;
            if (ev[i].ts + ev[i].dur > hi) hi = ev[i].ts + ev[i].dur;
        }
        if (is_step(t, &ev[i], &n)) nsteps++;
    }
    if (nsteps == 0) {
        if (c->opts->iteration >= 0)
            return sc__fail(err, SC_E_USAGE, t->path, SC_NO_OFFSET,
                            "no ProfilerStep#%lld in this trace (it has no ProfilerStep annotations)",
                            (long long)c->opts->iteration);
        w->whole = true;
        w->end = hi == INT64_MIN ? 0 : hi + 1;
        if (!whole_start(t, &w->start)) return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
        if (w->start == INT64_MAX) w->start = lo == INT64_MAX ? 0 : lo;
        /* GPU-only traces still get a window covering their GPU events. */
        for (size_t i = 0; i < t->events.len; i++)
            if (ev[i].flags & SC_EF_GPU) {
                if (ev[i].ts < w->start) w->start = ev[i].ts;
                if (ev[i].ts + ev[i].dur >= w->end) w->end = ev[i].ts + ev[i].dur + 1;
            }
        return SC_OK;
    }
    sc__idmap gpu_corr = {0};
    if (c->opts->iteration < 0) {
        if (!sc__idmap_init(&gpu_corr, 1024))
            return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
        for (size_t i = 0; i < t->events.len; i++)
            if ((ev[i].flags & SC_EF_GPU) && ev[i].correlation >= 0 &&
                !sc__idmap_put(&gpu_corr, ev[i].correlation, (uint32_t)i)) {
                sc__idmap_free(&gpu_corr);
                return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
            }
    }
    /* The steps, latest start first; the first complete one wins. */
    uint32_t *steps = sc__alloc_array(nsteps, sizeof *steps);
    if (!steps) {
        sc__idmap_free(&gpu_corr);
        return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
    }
    size_t k = 0;
    int64_t min_n = INT64_MAX, max_n = -1;
    for (size_t i = 0; i < t->events.len; i++) {
        int64_t n;
        if (!is_step(t, &ev[i], &n)) continue;
        if (n < min_n) min_n = n;
        if (n > max_n) max_n = n;
        steps[k++] = (uint32_t)i;
    }
    sc__sort(steps, nsteps, sizeof *steps, cmp_step_desc, (void *)ev);
    const sc__event *best = NULL;
    int64_t best_n = -1;
    for (size_t j = 0; j < nsteps && !best; j++) {
        const sc__event *e = &ev[steps[j]];
        int64_t n;
        is_step(t, e, &n);
        if (c->opts->iteration >= 0 ? n == c->opts->iteration
                                    : complete(c, &gpu_corr, e->track, e->ts, e->ts + e->dur)) {
            best = e;
            best_n = n;
        }
    }
    const sc__event *last = &ev[steps[0]];
    int64_t last_n;
    is_step(t, last, &last_n);
    free(steps);
    sc__idmap_free(&gpu_corr);
    if (c->opts->iteration >= 0 && !best)
        return sc__fail(err, SC_E_USAGE, t->path, SC_NO_OFFSET,
                        "no ProfilerStep#%lld in this trace (it has #%lld to #%lld)",
                        (long long)c->opts->iteration, (long long)min_n, (long long)max_n);
    if (!best) { /* none complete: take the last and say so */
        best = last;
        best_n = last_n;
        if (!sc__graph_warn(c->g, "rank %lld: no complete ProfilerStep (some launches have no GPU "
                            "event); using ProfilerStep#%lld", (long long)t->rank, (long long)last_n))
            return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    w->start = best->ts;
    w->end = best->ts + best->dur;
    w->number = best_n;
    w->track = best->track;
    return SC_OK;
}

/* Kernel launches of the rank's CPU tasks that ran no GPU work, in a
 * stream capture or not (lost after the last launch that ran: the tail);
 * graph launches and captures begun; the start of the last launch that ran. */
typedef struct launch_census {
    uint32_t captured, lost_tail, graph_launches, captures;
    int64_t last_ran;
} launch_census;

static bool name_has(const sc__bctx *c, const sc__task *t, const char *what) {
    return strstr(sc__graph_str(c->g, t->name), what) != NULL;
}

/* One pass over the rank's CPU tasks (each thread's in seq order), a
 * launch inside BeginCapture..EndCapture on its thread being captured. The
 * tail counts lost launches after n->last_ran, which the first pass finds. */
static void census_pass(sc__bctx *c, launch_census *n) {
    const sc__task *t = sc__graph_tasks(c->g);
    const sc__event *ev = sc__trace_events(c->t);
    int64_t tail_after = n->last_ran;
    uint32_t depth = 0, proc = SC__NONE;
    *n = (launch_census){0, 0, 0, 0, INT64_MIN};
    for (uint32_t i = c->first_task; i < c->first_gpu_task; i++) {
        if (t[i].proc != proc) proc = t[i].proc, depth = 0;
        if (t[i].kind == SC_T_CPU || t[i].event == SC__NONE) continue;
        if (name_has(c, &t[i], "BeginCapture")) depth++, n->captures++;
        else if (name_has(c, &t[i], "EndCapture") && depth) depth--;
        if (name_has(c, &t[i], "GraphLaunch")) n->graph_launches++;
        if (!sc__bctx_kernel_launch(c, ev[t[i].event].name) || ev[t[i].event].correlation < 0) continue;
        if (SC__SCRATCH(c, gpu_first, uint32_t, i) != SC__NONE) {
            if (t[i].ts > n->last_ran) n->last_ran = t[i].ts;
        } else if (depth) {
            n->captured++;
        } else if (t[i].ts > tail_after) {
            n->lost_tail++;
        }
    }
}

void sc__window_status(sc__bctx *c, sc__rank *r) {
    r->step_status = SC__STEP_MEASURED;
    r->step_launches = 0;
    if (c->first_gpu_task == c->first_task) {
        r->step_status = SC__STEP_NO_HOST;
        return;
    }
    launch_census n = {.last_ran = INT64_MAX}; /* no tail on the first pass */
    census_pass(c, &n);
    census_pass(c, &n);
    if (n.captures && !n.graph_launches) {
        r->step_status = SC__STEP_CAPTURE;
        r->step_launches = n.captured;
    } else if (n.lost_tail) {
        r->step_status = SC__STEP_OPEN;
        r->step_launches = n.lost_tail;
    }
}
