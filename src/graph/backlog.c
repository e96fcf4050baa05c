/*
 * backlog.c - how long each stream of a rank is still busy, when the step
 * opens, with GPU work queued before it.
 *
 * A GPU-bound job's CPU runs ahead: when the step's annotation opens, its
 * streams may still be running the previous step's kernels, and the measured
 * step (annotation start to last task end) includes that tail. The builder
 * measures, per stream, the end of the last GPU task that started before
 * the stream's first task in the window (clamped to that task's start),
 * relative to the rank's step_start, while the rank's events are at hand:
 * the traces may be freed before a replay. The calibration hands it to the
 * simulator as an initial condition (src/models/calibrate.c), never as a
 * placement.
 */
#include "build.h"

#include <stdlib.h>

/* The rule for one graph rank k from its trace t: streams[0..n) are its
 * stream processors in index order, first_ts[j] the measured start of the
 * first (lowest seq) task of streams[j]; sets out[j]. */
static void measure_rank(const sc__graph *g, uint32_t k, const sc_trace *t, const uint32_t *streams,
                         const int64_t *first_ts, size_t n, int64_t *out) {
    const sc__proc *procs = sc__graph_procs(g);
    const sc__rank *gr = &SC__VEC_AT(&g->ranks, sc__rank, k);
    const sc__event *ev = sc__trace_events(t);
    for (size_t j = 0; j < n; j++) out[j] = 0;
    if (!n) return;
    for (size_t i = 0; i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        if (!(e->flags & SC_EF_GPU) || e->ph != 'X' || e->ts >= gr->step_end) continue;
        int16_t dev = sc__event_device(t, e);
        int64_t stream = sc__event_stream(t, e);
        for (size_t j = 0; j < n; j++) {
            uint32_t q = streams[j];
            if (procs[q].device != dev || procs[q].id != stream) continue;
            int64_t first = first_ts[j];
            if (e->ts >= first) break;
            int64_t end = e->ts + e->dur;
            if (end > first) end = first;
            if (end - gr->step_start > out[j]) out[j] = end - gr->step_start;
            break;
        }
    }
}

bool sc__build_backlog(sc__bctx *c, uint32_t first_proc) {
    sc__graph *g = c->g;
    size_t np = g->procs.len;
    const sc__proc *procs = sc__graph_procs(g);
    const sc__task *tasks = sc__graph_tasks(g);
    if (!sc__vec_reserve(&g->proc_backlog, np)) return false;
    int64_t *bl = (int64_t *)g->proc_backlog.data;
    for (size_t q = g->proc_backlog.len; q < np; q++) bl[q] = 0;
    g->proc_backlog.len = np;
    size_t n = np - first_proc;
    if (!n) return true;
    /* Per processor of the rank: the measured start of its lowest-seq task. */
    uint32_t *first = sc__alloc_array(n, sizeof *first);
    uint32_t *streams = sc__alloc_array(n, sizeof *streams);
    int64_t *first_ts = sc__alloc_array(n, sizeof *first_ts);
    int64_t *out = sc__alloc_array(n, sizeof *out);
    bool ok = first && streams && first_ts && out;
    if (ok) {
        for (size_t j = 0; j < n; j++) first[j] = SC__NONE;
        for (size_t i = c->first_task; i < g->tasks.len; i++) {
            if (tasks[i].proc < first_proc) continue; /* not expected: a rank's processors are its own */
            uint32_t j = tasks[i].proc - first_proc;
            if (first[j] == SC__NONE || tasks[i].seq < tasks[first[j]].seq) first[j] = (uint32_t)i;
        }
        size_t ns = 0;
        for (size_t j = 0; j < n; j++)
            if (procs[first_proc + j].kind == SC_P_STREAM && first[j] != SC__NONE) {
                streams[ns] = (uint32_t)(first_proc + j);
                first_ts[ns++] = tasks[first[j]].ts;
            }
        measure_rank(g, c->rank, c->t, streams, first_ts, ns, out);
        for (size_t j = 0; j < ns; j++) bl[streams[j]] = out[j];
    }
    free(first);
    free(streams);
    free(first_ts);
    free(out);
    return ok;
}
