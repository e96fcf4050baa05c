/*
 * streams.c - one rank's GPU tasks by stream, for the lookups the cross-
 * stream and sync steps make: "the last task launched on stream S before
 * time T", "the first launched after T", "the task, launched before T, that
 * ended last by time E".
 *
 * gpu_tasks.c creates a rank's GPU tasks sorted by (stream, start), so each
 * stream is a contiguous range of task indices in stream order. There the
 * launch times and the end times are normally non-decreasing, so lookups
 * are binary searches; a stream where either is not (launches from two
 * threads interleaving) is searched linearly. A GPU task with no traced
 * launch counts as launched together with the task before it on its stream.
 */
#include "build.h"

/* Effective launch time of GPU task i (filled by sc__streams_index). */
static int64_t lts(const sc__bctx *c, uint32_t i) {
    return SC__VEC_AT(&c->gpu_lts, int64_t, i - c->first_gpu_task);
}

bool sc__streams_index(sc__bctx *c) {
    const sc__task *t = sc__graph_tasks(c->g);
    uint32_t end = (uint32_t)c->g->tasks.len;
    c->streams.len = 0;
    if (!sc__vec_reserve(&c->gpu_lts, end - c->first_gpu_task)) return false;
    c->gpu_lts.len = end - c->first_gpu_task;
    for (uint32_t i = c->first_gpu_task; i < end;) {
        uint32_t j = i;
        bool lsorted = true, esorted = true;
        int64_t prev = INT64_MIN;
        while (j < end && t[j].proc == t[i].proc) {
            uint32_t l = SC__SCRATCH(c, launch_of, uint32_t, j);
            int64_t ts = l == SC__NONE ? prev : t[l].ts;
            SC__VEC_AT(&c->gpu_lts, int64_t, j - c->first_gpu_task) = ts;
            if (ts < prev) lsorted = false;
            if (j > i && t[j].ts + t[j].dur < t[j - 1].ts + t[j - 1].dur) esorted = false;
            prev = ts;
            j++;
        }
        sc__stream_span *s = sc__vec_push(&c->streams);
        if (!s) return false;
        *s = (sc__stream_span){t[i].proc, i, j, lsorted, esorted};
        i = j;
    }
    return true;
}

static const sc__stream_span *span_of(const sc__bctx *c, uint32_t proc) {
    const sc__stream_span *s = c->streams.data;
    for (size_t k = 0; k < c->streams.len; k++)
        if (s[k].proc == proc) return &s[k];
    return NULL;
}

/* End of the prefix of the span launched before `before` (sorted spans). */
static uint32_t launched_prefix(const sc__bctx *c, const sc__stream_span *s, int64_t before) {
    uint32_t lo = s->lo, hi = s->hi;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (lts(c, mid) < before) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

uint32_t sc__stream_last_launched(const sc__bctx *c, uint32_t proc, int64_t before) {
    const sc__stream_span *s = span_of(c, proc);
    if (!s) return SC__NONE;
    if (s->launch_sorted) {
        uint32_t k = launched_prefix(c, s, before);
        return k > s->lo ? k - 1 : SC__NONE;
    }
    uint32_t best = SC__NONE;
    int64_t best_ts = INT64_MIN;
    for (uint32_t i = s->lo; i < s->hi; i++) {
        int64_t l = lts(c, i);
        if (l < before && l >= best_ts) {
            best = i;
            best_ts = l;
        }
    }
    return best;
}

uint32_t sc__stream_first_launched(const sc__bctx *c, uint32_t proc, int64_t after) {
    const sc__stream_span *s = span_of(c, proc);
    if (!s) return SC__NONE;
    if (s->launch_sorted) {
        uint32_t k = launched_prefix(c, s, after == INT64_MAX ? after : after + 1);
        return k < s->hi ? k : SC__NONE;
    }
    uint32_t best = SC__NONE;
    int64_t best_ts = INT64_MAX;
    for (uint32_t i = s->lo; i < s->hi; i++) {
        int64_t l = lts(c, i);
        if (l > after && l < best_ts) {
            best = i;
            best_ts = l;
        }
    }
    return best;
}

/* On one stream: the task launched before `before` with the latest end <= limit. */
static uint32_t stream_latest_end(const sc__bctx *c, const sc__stream_span *s, int64_t before,
                                  int64_t limit) {
    const sc__task *t = sc__graph_tasks(c->g);
    if (s->launch_sorted && s->end_sorted) {
        uint32_t hi = launched_prefix(c, s, before), lo = s->lo;
        while (lo < hi) { /* first index in [lo, hi) whose end > limit */
            uint32_t mid = lo + (hi - lo) / 2;
            if (t[mid].ts + t[mid].dur <= limit) lo = mid + 1;
            else hi = mid;
        }
        return lo > s->lo ? lo - 1 : SC__NONE;
    }
    uint32_t best = SC__NONE;
    int64_t best_end = INT64_MIN;
    for (uint32_t i = s->lo; i < s->hi; i++) {
        int64_t l = lts(c, i), e = t[i].ts + t[i].dur;
        if (l < before && e <= limit && e > best_end) {
            best = i;
            best_end = e;
        }
    }
    return best;
}

uint32_t sc__stream_latest_end(const sc__bctx *c, uint32_t proc, int64_t launched_before, int64_t end_limit) {
    const sc__stream_span *s = span_of(c, proc);
    return s ? stream_latest_end(c, s, launched_before, end_limit) : SC__NONE;
}

uint32_t sc__latest_end(const sc__bctx *c, int64_t launched_before, int64_t end_limit) {
    const sc__task *t = sc__graph_tasks(c->g);
    const sc__stream_span *s = c->streams.data;
    uint32_t best = SC__NONE;
    for (size_t k = 0; k < c->streams.len; k++) {
        uint32_t i = stream_latest_end(c, &s[k], launched_before, end_limit);
        if (i != SC__NONE && (best == SC__NONE || t[i].ts + t[i].dur > t[best].ts + t[best].dur)) best = i;
    }
    return best;
}

/* The end of all work launched on the span before `before` and that work's
 * last task (the one ending last); SC__NONE when nothing was launched. */
static uint32_t launched_tail(const sc__bctx *c, const sc__stream_span *s, int64_t before) {
    const sc__task *t = sc__graph_tasks(c->g);
    if (s->launch_sorted && s->end_sorted) {
        uint32_t k = launched_prefix(c, s, before);
        return k > s->lo ? k - 1 : SC__NONE;
    }
    uint32_t best = SC__NONE;
    for (uint32_t i = s->lo; i < s->hi; i++)
        if (lts(c, i) < before && (best == SC__NONE || t[i].ts + t[i].dur > t[best].ts + t[best].dur))
            best = i;
    return best;
}

uint32_t sc__stream_drained(const sc__bctx *c, int64_t launched_before, int64_t end_limit) {
    const sc__task *t = sc__graph_tasks(c->g);
    const sc__stream_span *s = c->streams.data;
    uint32_t best = SC__NONE;
    for (size_t k = 0; k < c->streams.len; k++) {
        uint32_t i = launched_tail(c, &s[k], launched_before);
        if (i == SC__NONE || t[i].ts + t[i].dur > end_limit) continue; /* still busy: not this one */
        if (best == SC__NONE || t[i].ts + t[i].dur > t[best].ts + t[best].dur) best = i;
    }
    return best;
}

int64_t sc__stream_end_before(const sc__bctx *c, uint32_t i) {
    const sc__task *t = sc__graph_tasks(c->g);
    const sc__event *ev = sc__trace_events(c->t);
    const sc__proc *p = &sc__graph_procs(c->g)[t[i].proc];
    int64_t end = INT64_MIN;
    for (size_t k = 0; k < c->t->events.len; k++) {
        const sc__event *e = &ev[k];
        if (!(e->flags & SC_EF_GPU) || e->ph != 'X' || e->ts >= t[i].ts) continue;
        if (sc__event_stream(c->t, e) != p->id || sc__event_device(c->t, e) != p->device) continue;
        if (e->ts + e->dur > end) end = e->ts + e->dur;
    }
    return end;
}
