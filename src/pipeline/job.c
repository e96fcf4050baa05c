/*
 * job.c - building a job's execution graph for the commands that show it
 * (`graph`, `export`): the format's builder (src/graph/build_any.c) with the
 * caller's options, and a copy of what the reports read about the traces
 * (file names, the load's warnings), so the traces may be released while
 * the graph is built and freed after.
 */
#include "job.h"

#include "../trace/trace.h"

#include <stdlib.h>

/* The set's file names and warnings into jg; false on out-of-memory. */
static bool copy_set(sc_graph *jg, const sc_traceset *set) {
    jg->files = calloc(set->count ? set->count : 1, sizeof *jg->files);
    if (!jg->files) return false;
    jg->nfiles = set->count;
    for (size_t i = 0; i < set->count; i++)
        if (!(jg->files[i] = sc__strdup(set->traces[i]->path))) return false;
    return sc__warnings_copy(&jg->load, &set->warnings);
}

sc_status sc_graph_build(const sc_traceset *set, const sc_graph_options *opts, sc_graph **out,
                         sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    sc_graph_options defaults = SC_GRAPH_OPTIONS_INIT;
    if (!opts) opts = &defaults;
    if (!set) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no traces to build a graph from");
    sc_graph *jg = calloc(1, sizeof *jg);
    if (!jg || !copy_set(jg, set)) {
        sc_graph_free(jg);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    sc__build_options bo = {.iteration = opts->iteration,
                            .hide_cuda_sync = opts->hide_cuda_sync != 0,
                            .release_traces = opts->release_traces != 0};
    sc_status st = sc__graph_build(set, &bo, &jg->g, &jg->stats, err);
    if (st != SC_OK) {
        sc_graph_free(jg);
        return st;
    }
    *out = jg;
    return SC_OK;
}

void sc_graph_free(sc_graph *jg) {
    if (!jg) return;
    sc__graph_free(jg->g);
    for (size_t i = 0; jg->files && i < jg->nfiles; i++) free(jg->files[i]);
    free(jg->files);
    sc__warnings_free(&jg->load);
    free(jg);
}

const char *sc__job_file(const sc_graph *jg, const sc__rank *r) {
    return r->trace < jg->nfiles && jg->files[r->trace] ? jg->files[r->trace] : "";
}

const char *sc__job_iteration(const sc__graph *g, const sc__rank *r) {
    if (r->step_first_task == SC__NONE) return "";
    uint32_t op = sc__graph_tasks(g)[r->step_first_task].op;
    if (op == SC__NONE) return "";
    const char *name = sc__graph_str(g, SC__VEC_AT(&g->ops, sc__op, op).name);
    return sc__starts_with(name, "ProfilerStep#") ? name : "";
}

/* ------------------------------------------------------------ accessors */

size_t sc_graph_rank_count(const sc_graph *jg) { return jg ? jg->g->ranks.len : 0; }
size_t sc_graph_task_count(const sc_graph *jg) { return jg ? jg->g->tasks.len : 0; }
uint64_t sc_graph_edge_count(const sc_graph *jg) { return jg ? jg->g->nedges : 0; }
size_t sc_graph_group_count(const sc_graph *jg) { return jg ? jg->g->groups.len : 0; }

size_t sc_graph_warning_count(const sc_graph *jg) {
    return jg ? jg->load.count + jg->g->warnings.count : 0;
}

const char *sc_graph_warning(const sc_graph *jg, size_t i) {
    if (!jg) return NULL;
    if (i < jg->load.count) return jg->load.items[i];
    i -= jg->load.count;
    return i < jg->g->warnings.count ? jg->g->warnings.items[i] : NULL;
}

/* Operators of graph rank r: ops are added rank by rank, so a rank's are
 * the range its tasks name. */
static uint32_t rank_ops(const sc__graph *g, const sc__rank *rk) {
    const sc__task *t = sc__graph_tasks(g);
    uint32_t lo = SC__NONE, hi = 0;
    for (uint32_t i = rk->first_task; i < rk->first_task + rk->ntasks; i++)
        if (t[i].op != SC__NONE) {
            if (t[i].op < lo) lo = t[i].op;
            if (t[i].op + 1 > hi) hi = t[i].op + 1;
        }
    return lo == SC__NONE ? 0 : hi - lo;
}

sc_status sc_graph_rank_at(const sc_graph *jg, size_t i, sc_graph_rank *out, sc_error *err) {
    if (!jg || !out || i >= jg->g->ranks.len)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "graph rank %zu out of range", i);
    const sc__graph *g = jg->g;
    const sc__rank *rk = &SC__VEC_AT(&g->ranks, sc__rank, i);
    *out = (sc_graph_rank){.rank = rk->rank,
                           .file = sc__job_file(jg, rk),
                           .iteration = sc__job_iteration(g, rk),
                           .measured_step_ns = rk->step_end - rk->step_start,
                           .operators = rank_ops(g, rk),
                           .tasks = rk->ntasks};
    const sc__proc *p = sc__graph_procs(g);
    for (size_t q = 0; q < g->procs.len; q++)
        if (p[q].rank == i) {
            if (p[q].kind == SC_P_THREAD) out->threads++;
            else out->streams++;
        }
    return SC_OK;
}
