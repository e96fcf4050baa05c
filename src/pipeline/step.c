/*
 * step.c - each rank's simulated step, the one definition that the
 * replay's per-rank figures (breakdown.c) and the sensitivity check's
 * doubled runs (sensitivity.c) both measure with, so a doubled step and
 * the step it is compared with are the same kind of span.
 *
 * A rank's simulated step opens where the gap before the task that opens
 * its measured step begins (the builder's step_first_task: the step
 * annotation's task, whose gap is 0, or the first task of the window),
 * else at its first task's simulated start; it closes at the end of its
 * last task. Tasks on quiet threads (graph.h: a monitor or data-loader
 * thread beside the main one) are left out of the span, as the measured
 * step leaves them out; a rank without tasks has an empty step.
 */
#include "replay.h"

void sc__replay_steps(const sc__graph *g, const int64_t *start, const int64_t *end, int64_t *from, int64_t *to) {
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t nr = g->ranks.len, nt = g->tasks.len;
    /* from: the first start of a task not on a quiet thread (INT64_MAX:
     * none); to: INT64_MIN until the rank has a task, then the last end
     * of one not on a quiet thread, at least 0 */
    for (size_t k = 0; k < nr; k++) {
        from[k] = INT64_MAX;
        to[k] = INT64_MIN;
    }
    for (size_t i = 0; i < nt; i++) {
        const sc__proc *p = &procs[tasks[i].proc];
        uint32_t k = p->rank;
        if (to[k] == INT64_MIN) to[k] = 0;
        if (p->quiet) continue;
        if (start[i] < from[k]) from[k] = start[i];
        if (end[i] > to[k]) to[k] = end[i];
    }
    for (size_t k = 0; k < nr; k++) {
        const sc__rank *gr = &SC__VEC_AT(&g->ranks, sc__rank, k);
        bool any = to[k] != INT64_MIN;
        int64_t lo = from[k] == INT64_MAX ? 0 : from[k], hi = any ? to[k] : 0;
        uint32_t f = gr->step_first_task;
        from[k] = f < nt ? start[f] - (tasks[f].gap > 0 ? tasks[f].gap : 0) : any ? lo : 0;
        to[k] = any && hi > from[k] ? hi : from[k];
    }
}
