/*
 * replay.c - the replay pipeline: build the graph of one iteration for every
 * rank (src/graph), calibrate launch latency, sync cost, start offsets,
 * stream backlogs and collective transfer times from the same traces
 * (src/models/calibrate.c), apply the --scale rules (src/transforms/scale.c),
 * simulate all ranks together (src/sim), then derive the per-rank figures
 * (breakdown.c) and the critical path (critical_path.c). The result is
 * data, read through the accessors of stepcast.h; src/report/ prints it.
 */
#include "replay.h"

#include "../models/calibrate.h"
#include "../trace/trace.h"
#include "structure.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of a structure of g (structure.h): per task its layer and phase,
 * per group its role, per rank its runs. */
static size_t structure_memory(const sc__graph *g, const sc__structure *s) {
    if (!s) return 0;
    return sizeof *s + g->tasks.len * (sizeof *s->task_layer + sizeof *s->task_phase) + g->groups.len +
           s->nranks * sizeof *s->ranks;
}

size_t sc__replay_memory(const sc_replay *r) {
    const sc__graph *g = r->g;
    size_t nt = g->tasks.len;
    return nt + (r->traced_dur ? nt * sizeof *r->traced_dur : 0) + structure_memory(g, r->structure) +
           g->ranks.len * (sizeof *r->launch_latency + sizeof *r->sync_base + sizeof *r->sync_wake +
                           sizeof *r->rank_offset +
                           sizeof *r->dispatch_gap) +
           g->procs.len * sizeof *r->backlog;
}

/* The calibrated parameters of every rank and processor (calibrate.h). */
static bool calibrate(sc_replay *r) {
    sc__graph *g = r->g;
    size_t nr = g->ranks.len ? g->ranks.len : 1;
    r->launch_latency = calloc(nr, sizeof *r->launch_latency);
    r->sync_base = calloc(nr, sizeof *r->sync_base);
    r->sync_wake = calloc(nr, sizeof *r->sync_wake);
    r->rank_offset = calloc(nr, sizeof *r->rank_offset);
    r->dispatch_gap = calloc(nr, sizeof *r->dispatch_gap);
    r->backlog = calloc(g->procs.len ? g->procs.len : 1, sizeof *r->backlog);
    if (!r->launch_latency || !r->sync_base || !r->sync_wake || !r->rank_offset || !r->dispatch_gap || !r->backlog ||
        !sc__calibrate_launch(g, r->launch_latency, r->dispatch_gap, &g->spare) || !sc__calibrate_backlog(g, r->launch_latency, r->backlog) ||
        !sc__calibrate_rank_offsets(g, r->rank_offset) || !sc__calibrate_transfers(g))
        return false;
    sc__spare_free(&g->spare); /* before the simulator takes its memory */
    return sc__calibrate_sync_base(g, r->sync_base, r->sync_wake);
}

/* Every task's class, its traced duration kept where it will change (for
 * the measured lane of the timeline), then the --scale rules. */
static bool classify_and_scale(sc_replay *r, bool keep_traced, const sc__scale_rule *rules, size_t nrules) {
    sc__graph *g = r->g;
    size_t n1 = g->tasks.len ? g->tasks.len : 1;
    if (keep_traced || nrules) {
        const sc__task *tasks = sc__graph_tasks(g);
        if (!(r->traced_dur = sc__alloc_array(n1, sizeof *r->traced_dur))) return false;
        for (size_t i = 0; i < g->tasks.len; i++) r->traced_dur[i] = tasks[i].dur;
    }
    r->cls = sc__alloc_array(n1, 1);
    return r->cls && sc__scale_classify(g, r->cls) && sc__scale_apply(g, rules, nrules);
}

sc_status sc__replay_prepare(sc__graph *g, bool coupled, bool keep_traced, const sc__scale_rule *rules,
                             size_t nrules, sc_replay **out, sc_error *err) {
    *out = NULL;
    sc_replay *r = calloc(1, sizeof *r);
    if (!r) {
        sc__graph_free(g);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory replaying");
    }
    r->g = g;
    r->coupled = coupled;
    double t0 = sc__now();
    sc__prune_contradicted(g, r->pruned);
    if (!calibrate(r)) {
        sc_replay_free(r);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory calibrating");
    }
    if (!classify_and_scale(r, keep_traced, rules, nrules)) {
        sc_replay_free(r);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory scaling");
    }
    r->timings.calibrate = sc__now() - t0;
    *out = r;
    return SC_OK;
}

/* The SM-busy table holds one double per simulated millisecond of each
 * rank. A step beyond 2^24 ms (4.7 h) comes from a corrupt timestamp (the
 * fuzzer moved one event 17 years back: a 4 TB table); refuse it as bad
 * input rather than fail to allocate, or worse, succeed and swap. */
static sc_status check_span(const sc_replay *r, sc_error *err) {
    if (r->sim.makespan <= (int64_t)SC__SM_MAX_WINDOWS * SC__SM_WINDOW_NS) return SC_OK;
    return sc__fail(err, SC_E_LIMIT, NULL, SC_NO_OFFSET,
                    "the simulated step lasts %.1f hours, more than the %.1f hours "
                    "stepcast summarises: a corrupt or mis-scaled timestamp?",
                    (double)r->sim.makespan / 3.6e12, (double)SC__SM_MAX_WINDOWS * SC__SM_WINDOW_NS / 3.6e12);
}

sc__sim_params sc__replay_sim_params(const sc_replay *r, const sc_traceset *set) {
    return (sc__sim_params){.coupled = r->coupled,
                            .launch_latency = r->launch_latency,
                            .sync_base = r->sync_base,
                            .sync_wake = r->sync_wake,
                            .rank_offset = r->rank_offset,
                            .proc_backlog = r->backlog,
                            .dispatch_gap = r->dispatch_gap,
                            .threads = set ? set->threads : 1,
                            .progress = set ? set->progress : NULL};
}

sc_status sc__replay_structure(sc_replay *r, const sc__structure **out, sc_error *err) {
    if (!r->structure) {
        sc__structure *s = malloc(sizeof *s);
        if (!s) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory recovering the model's structure");
        sc_status st = sc__structure_find(r->g, s, err);
        if (st != SC_OK) {
            free(s);
            return st;
        }
        r->structure = s;
    }
    *out = r->structure;
    return SC_OK;
}

void sc__replay_structure_drop(sc_replay *r) {
    if (!r->structure) return;
    sc__structure_free(r->structure);
    free(r->structure);
    r->structure = NULL;
}

void sc__replay_structure_give(sc_replay *r, sc__structure *s) {
    sc__replay_structure_drop(r);
    sc__structure *mine = malloc(sizeof *mine);
    if (mine) *mine = *s; /* out of memory: found again when asked */
    else sc__structure_free(s);
    memset(s, 0, sizeof *s);
    r->structure = mine;
}

/* The model's layers in the simulated graph and one layer's simulated
 * time, forward and backward (none above SC__LAYERS_MAX_TASKS tasks). */
static sc_status simulated_layers(sc_replay *r, sc_error *err) {
    const sc_prediction *pd = sc_replay_prediction(r);
    if (pd && pd->pp) { /* the structure of a pipeline is not the model's */
        r->layers = (sc_replay_layers){
            .why_none = "a pipelined graph runs each stage's layers once per micro-batch, interleaved with "
                        "other micro-batches' work and waits: no span of a stage's layers is one layer's time"};
        return SC_OK;
    }
    if (r->g->tasks.len > SC__LAYERS_MAX_TASKS) return SC_OK;
    const sc__structure *s;
    sc_status st = sc__replay_structure(r, &s, err);
    if (st != SC_OK) return st;
    r->layers = (sc_replay_layers){
        .count = s->nlayers,
        .backward_count = s->nbackward,
        .forward_us = sc__structure_layer_us(r->g, s, SC__PHASE_FORWARD, r->sim.start, r->sim.end),
        .backward_us = sc__structure_layer_us(r->g, s, SC__PHASE_BACKWARD, r->sim.start, r->sim.end)};
    return SC_OK;
}

sc_replay_layers sc_replay_get_layers(const sc_replay *r) { return r ? r->layers : (sc_replay_layers){0}; }

sc_status sc__replay_finish(sc_replay *r, const sc_traceset *set, sc_error *err) {
    sc__graph *g = r->g;
    sc__sim_params p = sc__replay_sim_params(r, set);
    double t1 = sc__now();
    /* The simulation's arrays are the job's last large ones: over the
     * budget, say so now rather than swap (traces still held count too). */
    uint64_t besides = sc__sim_memory(g) + sc__traceset_memory(set) + sc__replay_memory(r);
    sc_status st = sc__graph_check_budget(g, set ? set->budget : 0, besides, "simulating the graph",
                                          "the simulation's arrays and any traces held", err);
    if (st != SC_OK) return st;
    st = sc__sim_run(g, &p, &r->sim, err);
    double t2 = sc__now();
    r->timings.simulate = t2 - t1;
    r->timings.simulate_setup = r->sim.setup_s;
    r->timings.tasks = g->tasks.len;
    if (st == SC_OK) st = check_span(r, err);
    if (st != SC_OK) return st;
    if ((st = simulated_layers(r, err)) != SC_OK) return st;
    if (!sc__replay_per_rank(r) || !sc__replay_critical_path(r))
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory summarising the replay");
    r->timings.summarise = sc__now() - t2;
    return SC_OK;
}

sc_status sc__replay_graph(sc__graph *g, const sc_traceset *set, bool coupled, const sc__scale_rule *rules,
                           size_t nrules, sc_replay **out, sc_error *err) {
    sc_status st = sc__replay_prepare(g, coupled, false, rules, nrules, out, err);
    if (st == SC_OK && (st = sc__replay_finish(*out, set, err)) != SC_OK) {
        sc_replay_free(*out);
        *out = NULL;
    }
    return st;
}

void sc__replay_adopt_graph(sc_replay *r, sc__graph *ng, uint8_t *cls, int64_t *dur) {
    sc__replay_structure_drop(r); /* the old graph's */
    free(r->cls);
    free(r->traced_dur);
    sc__graph_free(r->g);
    r->cls = cls;
    r->traced_dur = dur;
    r->g = ng;
}

void sc_replay_free(sc_replay *r) {
    if (!r) return;
    for (size_t k = 0; r->ranks && k < r->nranks; k++) {
        free(r->ranks[k].sm_busy);
        free(r->ranks[k].no_error);
    }
    free(r->step_no_error);
    free(r->ranks);
    free(r->launch_latency);
    free(r->sync_base);
    free(r->sync_wake);
    free(r->rank_offset);
    free(r->dispatch_gap);
    free(r->backlog);
    free(r->traced_dur);
    free(r->cls);
    free(r->cp.by_class);
    free(r->cp.by_op);
    free(r->cp.by_edge);
    sc__sim_free(&r->sim);
    sc__graph_free(r->g);
    sc__prediction_free(r->prediction);
    free(r->hta);
    sc__replay_tops_free(&r->tops);
    sc__replay_structure_drop(r);
    free(r);
}

/* ------------------------------------------------------------ public API */

sc_status sc__replay_parse_scales(const sc_replay_options *o, sc__scale_rule **out, sc_error *err) {
    *out = NULL;
    if (!o->nscales) return SC_OK;
    sc__scale_rule *rules = sc__alloc_array(o->nscales, sizeof *rules);
    if (!rules) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < o->nscales; i++) {
        sc_status st = sc__scale_parse(o->scales[i], &rules[i], err);
        if (st != SC_OK) {
            free(rules);
            return st;
        }
    }
    *out = rules;
    return SC_OK;
}

sc_status sc__replay_hta_before(const sc_traceset *set, const sc_replay_options *o, sc__hta_held *h,
                                sc_error *err) {
    *h = (sc__hta_held){.asked = o->breakdown == SC_BREAKDOWN_HTA};
    if (!h->asked) return SC_OK;
    double t0 = sc__now();
    sc_status st = sc__hta_breakdown(set, &h->ranks, &h->n, err);
    h->seconds = sc__now() - t0;
    return st;
}

void sc__replay_hta_attach(sc_replay *r, sc__hta_held *h) {
    if (r) {
        r->hta = h->ranks;
        r->nhta = h->n;
        r->hta_asked = h->asked;
        r->timings.hta = h->seconds;
    } else {
        free(h->ranks);
    }
    *h = (sc__hta_held){0};
}

sc_status sc__replay_build(const sc_traceset *set, const sc_replay_options *o, sc__graph **g, sc_error *err) {
    sc__build_options bo = {.iteration = o->graph.iteration,
                            .hide_cuda_sync = o->graph.hide_cuda_sync != 0,
                            .release_traces = o->graph.release_traces != 0,
                            .keep_spare = true};
    return sc__graph_build(set, &bo, g, NULL, err); /* Kineto or Chakra */
}

/* prepare, the communication model where asked for, the sensitivity
 * check, finish. */
static sc_status replay_graph(sc__graph *g, const sc_traceset *set, const sc_replay_options *o,
                              const sc__scale_rule *rules, sc_replay **out, sc_error *err) {
    sc_status st = sc__replay_prepare(g, o->comm != SC_COMM_TRACED, false, rules, o->nscales, out, err);
    if (st != SC_OK) return st;
    if (o->comm == SC_COMM_MODEL) st = sc__replay_model_comm(*out, set, err);
    if (st == SC_OK) st = sc__replay_sensitivity(*out, set, o, err);
    if (st == SC_OK) st = sc__replay_finish(*out, set, err);
    if (st != SC_OK) {
        sc_replay_free(*out);
        *out = NULL;
    }
    return st;
}

sc_status sc_replay_run(const sc_traceset *set, const sc_replay_options *opts, sc_replay **out,
                        sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    sc_replay_options defaults = SC_REPLAY_OPTIONS_INIT;
    if (!opts) opts = &defaults;
    if (!set) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "replay: no traces");
    sc__scale_rule *rules;
    sc_status st = sc__replay_parse_scales(opts, &rules, err);
    if (st != SC_OK) return st;
    sc__hta_held hta; /* from the traces' events, before the build releases them */
    if ((st = sc__replay_hta_before(set, opts, &hta, err)) != SC_OK) {
        free(rules);
        return st;
    }
    double t0 = sc__now();
    sc__graph *g;
    st = sc__replay_build(set, opts, &g, err);
    double build = sc__now() - t0;
    if (st == SC_OK) st = replay_graph(g, set, opts, rules, out, err);
    free(rules);
    if (st == SC_OK) (*out)->timings.build = build;
    sc__replay_hta_attach(*out, &hta);
    return st;
}

/* Keeps in a[0 .. *n) the numbers also in b[0 .. m), both ascending. */
static void intersect(int64_t *a, size_t *n, const int64_t *b, size_t m) {
    size_t k = 0, j = 0;
    for (size_t i = 0; i < *n; i++) {
        while (j < m && b[j] < a[i]) j++;
        if (j < m && b[j] == a[i]) a[k++] = a[i];
    }
    *n = k;
}

sc_status sc_replay_iterations(const sc_traceset *set, int64_t **numbers, size_t *count, sc_error *err) {
    sc__error_clear(err);
    *numbers = NULL;
    *count = 0;
    if (!set) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "replay: no traces");
    sc__vec all, one;
    sc__vec_init(&all, sizeof(int64_t));
    sc__vec_init(&one, sizeof(int64_t));
    bool ok = true, seen = false;
    for (size_t i = 0; ok && i < set->count; i++) {
        if (set->traces[i]->format != SC__FMT_KINETO) continue; /* a Chakra file is one window */
        one.len = 0;
        ok = sc__trace_step_numbers(set->traces[i], seen ? &one : &all);
        if (ok && seen) intersect(all.data, &all.len, one.data, one.len);
        seen = true;
    }
    sc__vec_free(&one);
    if (!ok) {
        sc__vec_free(&all);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory listing iterations");
    }
    *numbers = all.data; /* the caller frees it */
    *count = all.len;
    return SC_OK;
}

size_t sc_replay_rank_count(const sc_replay *r) { return r ? r->nranks : 0; }

sc_status sc_replay_rank_at(const sc_replay *r, size_t i, sc_replay_rank *out, sc_error *err) {
    if (!r || i >= r->nranks || !out)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "replay rank %zu out of range", i);
    const sc__replay_rank *rr = &r->ranks[i];
    *out = (sc_replay_rank){.rank = rr->rank,
                            .measured_ns = rr->measured_ns,
                            .simulated_ns = rr->sim_end - rr->sim_start,
                            .launch_latency_ns = r->launch_latency[i],
                            .dispatch_gap_ns = r->dispatch_gap[i],
                            .start_offset_ns = r->rank_offset[i],
                            .exposed_compute_ns = rr->exposed_compute_ns,
                            .exposed_comm_ns = rr->exposed_comm_ns,
                            .overlapped_ns = rr->overlapped_ns,
                            .idle_ns = rr->idle_ns,
                            .sm_busy = rr->sm_busy,
                            .sm_windows = rr->nwindows};
    sc__replay_measured_from(r, i, &out->opens, &out->closes, &out->after_annotation_ns);
    out->no_error_because = rr->no_error;
    return SC_OK;
}

sc_replay_step sc_replay_get_step(const sc_replay *r) {
    sc_replay_step s = {0};
    if (!r || !r->nranks) return s;
    const sc__replay_rank *slow = &r->ranks[r->slowest];
    s.measured_ns = r->ranks[r->slowest_measured].measured_ns;
    s.simulated_ns = slow->sim_end - slow->sim_start;
    s.slowest_measured = r->slowest_measured;
    s.slowest_simulated = r->slowest;
    s.no_error_because = r->step_no_error;
    return s;
}

sc_critical_path sc_replay_get_critical_path(const sc_replay *r) {
    sc_critical_path cp = {.last_rank = -1};
    if (!r) return cp;
    cp.length_ns = r->cp.length_ns;
    cp.tasks = r->cp.ntasks;
    cp.host_only = r->cp.host_only;
    if (r->nranks) cp.last_rank = r->ranks[r->cp.last_rank].rank;
    return cp;
}

size_t sc_replay_cp_items(const sc_replay *r, sc_cp_view view, const sc_cp_item **items) {
    *items = NULL;
    if (!r) return 0;
    switch (view) {
    case SC_CP_BY_CLASS: *items = r->cp.by_class; return r->cp.nclass;
    case SC_CP_BY_OPERATOR: *items = r->cp.by_op; return r->cp.nop;
    case SC_CP_BY_EDGE: *items = r->cp.by_edge; return r->cp.nedge;
    }
    return 0;
}

int sc_replay_coupled(const sc_replay *r) { return r && r->coupled; }
size_t sc_replay_task_count(const sc_replay *r) { return r ? r->g->tasks.len : 0; }

uint64_t sc_replay_edges_dropped(const sc_replay *r, const char *family) {
    for (int f = 0; r && family && f < SC_E_FAMILY_COUNT; f++)
        if (strcmp(sc__edge_family_name((uint8_t)f), family) == 0) return r->pruned[f];
    return 0;
}

size_t sc_replay_warning_count(const sc_replay *r) { return r ? r->g->warnings.count : 0; }
const char *sc_replay_warning(const sc_replay *r, size_t i) {
    return r && i < r->g->warnings.count ? r->g->warnings.items[i] : NULL;
}

sc_replay_timings sc_replay_get_timings(const sc_replay *r) {
    sc_replay_timings t = {0};
    return r ? r->timings : t;
}

size_t sc_replay_hta_count(const sc_replay *r) { return r ? r->nhta : 0; }

sc_status sc_replay_hta_at(const sc_replay *r, size_t i, sc_hta_breakdown *out, sc_error *err) {
    if (!r || i >= r->nhta || !out)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "HTA breakdown %zu out of range", i);
    *out = r->hta[i];
    return SC_OK;
}
