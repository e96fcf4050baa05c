/*
 * breakdown.c - where each rank's simulated step goes.
 *
 * Per rank: the measured step (the builder's step_start..step_end: the
 * iteration annotation's start to the end of the last task it caused) and
 * the simulated step (step.c: from where the same first task's gap begins
 * to the simulated end of the rank's last task); the job's step is the
 * slowest rank. The simulated step is split from the GPU's point of view: exposed
 * compute (only non-communication GPU work running), exposed communication
 * (only collectives / p2p), overlapped (both), idle (no GPU work: CPU-bound
 * or waiting), and the SM-busy fraction (share of each 1 ms window with at
 * least one busy stream).
 */
#include "replay.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct mark {
    int64_t time;
    int8_t dcompute, dcomm;
} mark;

static int cmp_mark(const void *a, const void *b) {
    const mark *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    /* Same instant: order by deltas so the sweep is deterministic. */
    int kx = x->dcompute * 2 + x->dcomm, ky = y->dcompute * 2 + y->dcomm;
    return kx - ky;
}

/* Adds busy time [a, b) to the 1 ms windows counted from s0. */
static void add_busy(sc__replay_rank *rr, int64_t a, int64_t b) {
    int64_t s0 = rr->sim_start;
    while (a < b) {
        size_t w = (size_t)((a - s0) / SC__SM_WINDOW_NS);
        int64_t wend = s0 + (int64_t)(w + 1) * SC__SM_WINDOW_NS;
        int64_t e = b < wend ? b : wend;
        if (w < rr->nwindows) rr->sm_busy[w] += (double)(e - a);
        a = e;
    }
}

/* Breakdown and SM-busy windows of one rank; tasks = its tasks. */
static bool rank_breakdown(const sc_replay *r, sc__replay_rank *rr, const uint32_t *tasks, size_t n) {
    const sc__task *all = sc__graph_tasks(r->g);
    int64_t s0 = rr->sim_start, s1 = rr->sim_end;
    int64_t span = s1 > s0 ? s1 - s0 : 0;
    rr->nwindows = (size_t)((span + SC__SM_WINDOW_NS - 1) / SC__SM_WINDOW_NS);
    if (rr->nwindows > SC__SM_MAX_WINDOWS) rr->nwindows = SC__SM_MAX_WINDOWS; /* see sc__replay_graph */
    rr->sm_busy = calloc(rr->nwindows ? rr->nwindows : 1, sizeof *rr->sm_busy);
    mark *m = sc__alloc_array(2 * n + 1, sizeof *m);
    if (!rr->sm_busy || !m) {
        free(m);
        return false;
    }
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        const sc__task *t = &all[tasks[i]];
        if (!sc__task_on_gpu(t->kind)) continue;
        int64_t a = r->sim.start[tasks[i]], b = r->sim.end[tasks[i]];
        if (a < s0) a = s0;
        if (b > s1) b = s1;
        if (b <= a) continue;
        int8_t comm = r->cls[tasks[i]] == SC_SCALE_COMM;
        m[nm++] = (mark){a, (int8_t)!comm, comm};
        m[nm++] = (mark){b, (int8_t)-!comm, (int8_t)-comm};
    }
    qsort(m, nm, sizeof *m, cmp_mark);
    int compute = 0, comm = 0;
    int64_t prev = s0;
    for (size_t i = 0; i < nm; i++) {
        int64_t d = m[i].time - prev;
        if (d > 0) {
            if (compute && comm) rr->overlapped_ns += d;
            else if (compute) rr->exposed_compute_ns += d;
            else if (comm) rr->exposed_comm_ns += d;
            if (compute || comm) add_busy(rr, prev, m[i].time);
        }
        prev = m[i].time;
        compute += m[i].dcompute;
        comm += m[i].dcomm;
    }
    rr->idle_ns = span - rr->exposed_compute_ns - rr->exposed_comm_ns - rr->overlapped_ns;
    for (size_t w = 0; w < rr->nwindows; w++) {
        int64_t wlen = SC__SM_WINDOW_NS;
        if (w + 1 == rr->nwindows && span % SC__SM_WINDOW_NS) wlen = span % SC__SM_WINDOW_NS;
        rr->sm_busy[w] /= (double)wlen;
    }
    free(m);
    return true;
}

/* The ProfilerStep#N operator that encloses task t (interned), SC__NONE. */
static uint32_t step_annotation(const sc__graph *g, uint32_t t) {
    uint32_t op = sc__graph_tasks(g)[t].op;
    for (size_t depth = 0; op != SC__NONE && op < g->ops.len && depth < g->ops.len; depth++) {
        const sc__op *o = &SC__VEC_AT(&g->ops, sc__op, op);
        if (sc__starts_with(sc__graph_str(g, o->name), "ProfilerStep#")) return o->name;
        op = o->parent;
    }
    return SC__NONE;
}

static sc_step_mark task_mark(const sc__graph *g, uint32_t t) {
    const sc__task *task = &sc__graph_tasks(g)[t];
    const sc__proc *p = &sc__graph_procs(g)[task->proc];
    return (sc_step_mark){sc__graph_str(g, task->name), sc__task_kind_name(task->kind),
                          p->kind == SC_P_STREAM, p->id};
}

void sc__replay_measured_from(const sc_replay *r, size_t k, sc_step_mark *opens, sc_step_mark *closes,
                              int64_t *after_annotation_ns) {
    const sc__graph *g = r->g;
    const sc__rank *gr = &SC__VEC_AT(&g->ranks, sc__rank, k);
    size_t nt = g->tasks.len;
    *opens = *closes = (sc_step_mark){NULL, NULL, 0, 0};
    *after_annotation_ns = -1;
    if (gr->step_end <= gr->step_start || gr->step_first_task >= nt || gr->step_last_task >= nt) return;
    *opens = task_mark(g, gr->step_first_task);
    *closes = task_mark(g, gr->step_last_task);
    uint32_t step = gr->step_number >= 0 ? step_annotation(g, gr->step_first_task) : SC__NONE;
    if (step == SC__NONE) return;
    opens->event = sc__graph_str(g, step);
    opens->kind = "step_annotation";
    *after_annotation_ns = gr->step_end > gr->annotation_end ? gr->step_end - gr->annotation_end : 0;
}

/* Why rank gr's measured step cannot be compared with its replay, in
 * words (graph.h, sc__step_status); NULL when it can. *oom on failure. */
static char *no_error_text(const sc__rank *gr, int64_t measured_ns, bool *oom) {
    char buf[384];
    switch (gr->step_status) {
    case SC__STEP_NO_HOST:
        snprintf(buf, sizeof buf, "no CPU side: the trace holds only GPU work, so nothing on the host opens "
                                  "the step, launches its work or waits for it");
        break;
    case SC__STEP_OPEN:
        snprintf(buf, sizeof buf, "the step is not closed in the trace: its last %u kernel launch%s ran no GPU work "
                                  "(profiling stopped first), so when its GPU work ends is unknown",
                 gr->step_launches, gr->step_launches == 1 ? "" : "es");
        break;
    case SC__STEP_CAPTURE:
        snprintf(buf, sizeof buf, "a graph capture without replays: %u kernel launch%s of the step %s recorded into a "
                                  "CUDA/HIP graph (stream capture) and ran nothing, and no graph launch replays "
                                  "%s; the measured step is host time only",
                 gr->step_launches, gr->step_launches == 1 ? "" : "es", gr->step_launches == 1 ? "was" : "were",
                 gr->step_launches == 1 ? "it" : "them");
        break;
    default:
        if (gr->step_status == SC__STEP_MEASURED && measured_ns > 0) return NULL;
        snprintf(buf, sizeof buf, "the input has no measured step (a Chakra file without measured times)");
    }
    char *s = sc__strdup(buf);
    *oom = !s;
    return s;
}

const char *sc__replay_no_error(const sc_replay *r, size_t k) {
    if (!r) return NULL;
    if (k == SIZE_MAX) return r->step_no_error;
    return k < r->nranks ? r->ranks[k].no_error : NULL;
}

/* The job's step has an error when every rank's has one; else the first
 * rank without says why. */
static bool job_no_error(sc_replay *r) {
    for (size_t k = 0; k < r->nranks; k++) {
        if (!r->ranks[k].no_error) continue;
        size_t n = strlen(r->ranks[k].no_error) + 32;
        if (!(r->step_no_error = malloc(n))) return false;
        if (r->nranks == 1) snprintf(r->step_no_error, n, "%s", r->ranks[k].no_error);
        else snprintf(r->step_no_error, n, "rank %lld: %s", (long long)r->ranks[k].rank, r->ranks[k].no_error);
        return true;
    }
    return true;
}

bool sc__replay_per_rank(sc_replay *r) {
    const sc__graph *g = r->g;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t nr = g->ranks.len, nt = g->tasks.len;
    uint32_t *off = calloc(nr + 2, sizeof *off);
    uint32_t *by_rank = sc__alloc_array(nt ? nt : 1, sizeof *by_rank);
    int64_t *from = sc__alloc_array(nr ? nr : 1, sizeof *from), *to = sc__alloc_array(nr ? nr : 1, sizeof *to);
    r->ranks = calloc(nr ? nr : 1, sizeof *r->ranks);
    r->nranks = nr;
    bool ok = off && by_rank && from && to && r->ranks;
    if (ok) {
        for (size_t i = 0; i < nt; i++) off[procs[tasks[i].proc].rank + 2]++;
        for (size_t k = 0; k < nr; k++) off[k + 2] += off[k + 1];
        for (size_t i = 0; i < nt; i++) by_rank[off[procs[tasks[i].proc].rank + 1]++] = (uint32_t)i;
        sc__replay_steps(g, r->sim.start, r->sim.end, from, to);
    }
    for (size_t k = 0; ok && k < nr; k++) {
        const sc__rank *gr = &SC__VEC_AT(&g->ranks, sc__rank, k);
        sc__replay_rank *rr = &r->ranks[k];
        rr->rank = gr->rank;
        rr->measured_ns = gr->step_end - gr->step_start;
        bool oom = false;
        rr->no_error = no_error_text(gr, rr->measured_ns, &oom);
        rr->sim_start = from[k];
        rr->sim_end = to[k];
        ok = !oom && rank_breakdown(r, rr, by_rank + off[k], off[k + 1] - off[k]);
    }
    free(from);
    free(to);
    ok = ok && job_no_error(r);
    for (size_t k = 1; ok && k < nr; k++) {
        const sc__replay_rank *a = &r->ranks[k], *b = &r->ranks[r->slowest];
        if (a->sim_end - a->sim_start > b->sim_end - b->sim_start) r->slowest = k;
        if (a->measured_ns > r->ranks[r->slowest_measured].measured_ns) r->slowest_measured = k;
    }
    free(off);
    free(by_rank);
    return ok;
}
