/*
 * layer_time.c - simulated time of a stretch of a rank's work: what a
 * replay or a prediction says one transformer layer takes.
 *
 * Two ways in. With the layer structure known (the tasks of a layer,
 * first to last), sc__replay_span_ns is the simulated time from the first
 * one's start to the last one's end. Without it, sc__replay_marker_period_ns
 * times the period of a kernel that opens every layer a fixed number of
 * times (Megatron's layer norms: two per layer): the median, over the
 * rank's occurrences, of the simulated start of one occurrence to that of
 * the occurrence `every` later, which takes in everything the layer does
 * in between, its collectives' waits included.
 */
#include "replay.h"

#include <stdlib.h>

int64_t sc__replay_span_ns(const sc_replay *r, uint32_t first, uint32_t last) {
    if (!r || first >= r->sim.ntasks || last >= r->sim.ntasks) return -1;
    return r->sim.end[last] - r->sim.start[first];
}

/* Rank `rank`'s GPU tasks whose name contains marker, in simulated start
 * order (their starts into s); the count. */
static size_t marker_starts(const sc_replay *r, uint32_t rank, const char *marker, int64_t *s) {
    const sc__graph *g = r->g;
    const sc__rank *rk = &SC__VEC_AT(&g->ranks, sc__rank, rank);
    const sc__task *tasks = sc__graph_tasks(g);
    size_t n = 0;
    for (uint32_t i = rk->first_task; i < rk->first_task + rk->ntasks; i++)
        if (sc__task_on_gpu(tasks[i].kind) && strstr(sc__graph_str(g, tasks[i].name), marker))
            s[n++] = r->sim.start[i];
    qsort(s, n, sizeof *s, sc__cmp_i64);
    return n;
}

int64_t sc__replay_marker_period_ns(const sc_replay *r, uint32_t rank, const char *marker, uint32_t every) {
    if (!r || !every || rank >= r->g->ranks.len) return -1;
    const sc__rank *rk = &SC__VEC_AT(&r->g->ranks, sc__rank, rank);
    int64_t *s = sc__alloc_array(rk->ntasks ? rk->ntasks : 1, sizeof *s);
    if (!s) return -1;
    size_t n = marker_starts(r, rank, marker, s), k = 0;
    for (size_t i = 0; i + every < n; i += every) s[k++] = s[i + every] - s[i];
    int64_t period = -1;
    if (k) {
        qsort(s, k, sizeof *s, sc__cmp_i64);
        period = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
    }
    free(s);
    return period;
}
