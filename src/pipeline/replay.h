/*
 * replay.h - one replay of a job, as data: what the pipeline hands the
 * reports (the replay report, the Chrome timeline), the tests and the
 * benchmarks, and what `predict` will build on.
 *
 * sc__replay_graph() takes a built graph, calibrates it (src/models),
 * applies the --scale rules (src/transforms), simulates it (src/sim) and
 * derives the per-rank figures (breakdown.c) and the critical path
 * (critical_path.c). It prints nothing: src/report/ formats the result.
 */
#ifndef SC_PIPELINE_REPLAY_H
#define SC_PIPELINE_REPLAY_H

#include "../sim/sim.h"
#include "../transforms/prune.h"
#include "../transforms/scale.h"

#define SC__SM_WINDOW_NS 1000000 /* SM-busy windows of 1 ms */
/* Graphs up to this many tasks have their layers found after the
 * simulation (a sort of each rank's GPU tasks: ~1 s per 4 M tasks). */
#define SC__LAYERS_MAX_TASKS ((size_t)8 << 20)
#define SC__SM_MAX_WINDOWS ((size_t)1 << 24) /* 4.7 h of step; longer is refused */

typedef struct sc__replay_rank {
    int64_t rank;           /* job rank */
    int64_t measured_ns;    /* step_end - step_start (from the builder) */
    int64_t sim_start, sim_end; /* simulated step: start of step_first_task .. last end */
    int64_t exposed_compute_ns, exposed_comm_ns, overlapped_ns, idle_ns;
    double *sm_busy;        /* per 1 ms window of the simulated step */
    size_t nwindows;
    char *no_error;         /* why its error is not defined (owned), NULL when it is */
} sc__replay_rank;

typedef struct sc__cp_summary {
    int64_t length_ns; /* end of the last task of the slowest rank */
    uint64_t ntasks;   /* tasks on the path */
    uint32_t last_rank; /* graph rank index */
    bool host_only;     /* no GPU task on it: the step follows the host's traced time */
    sc_cp_item *by_class, *by_op, *by_edge;
    size_t nclass, nop, nedge;
} sc__cp_summary;

/* The sensitivity check (sensitivity.c): the job's step with one class of
 * tasks doubled at a time, in the order of sc__sens_class. */
enum { SC_SENS_GPU = 0, SC_SENS_CPU, SC_SENS_COMM, SC_SENS_COUNT };
typedef struct sc__sensitivity {
    bool computed;
    const char *why_not;            /* static text; "" when computed */
    int64_t x2_ns[SC_SENS_COUNT];   /* the step with that class doubled */
} sc__sensitivity;

/* What took the simulated time, summed over the ranks (tops.c). */
typedef struct sc__tops {
    sc_time_item *kernels, *ops;
    size_t nkernels, nops;
    sc_replay_collective *colls;
    size_t ncolls;
    bool computed; /* on first use: only the HTML report and the API read them */
} sc__tops;

struct sc_replay {
    sc__graph *g; /* owned */
    sc__sim sim;
    bool coupled;
    bool modelled; /* --comm model: every sized collective timed by the fitted model */
    int64_t *launch_latency, *sync_base, *sync_wake, *rank_offset, *dispatch_gap; /* per graph rank */
    int64_t *backlog; /* per processor */
    uint64_t pruned[SC_E_FAMILY_COUNT]; /* edges the trace contradicts, dropped (prune.h) */
    int64_t *traced_dur; /* durations before --scale (NULL when nothing was scaled) */
    uint8_t *cls;        /* per task: sc__scale_class */
    sc__replay_rank *ranks;
    size_t nranks;
    size_t slowest; /* rank index with the longest simulated step */
    size_t slowest_measured;
    char *step_no_error; /* why the job's step error is not defined (owned), NULL when it is */
    sc__cp_summary cp;
    sc_replay_timings timings; /* wall time of each stage */
    struct sc__prediction *prediction; /* what predict inferred and changed, NULL for a replay */
    sc__sensitivity sens;
    sc_replay_layers layers; /* the model's layers and one layer's simulated time (structure.h) */
    sc_hta_breakdown *hta; /* HTA's breakdown per Kineto trace (hta_breakdown.c), NULL unless asked */
    size_t nhta;
    bool hta_asked;
    sc__tops tops;
    struct sc__structure *structure; /* of g, found once and kept (sc__replay_structure); NULL */
};

/* Takes ownership of g (finished) even on failure. set: the traces g was
 * built from, for the job's thread cap and memory budget (and the memory
 * its traces still hold), or NULL. */
sc_status sc__replay_graph(sc__graph *g, const sc_traceset *set, bool coupled,
                           const sc__scale_rule *rules, size_t nrules, sc_replay **out,
                           sc_error *err);

/* Gives r an edited graph ng with its per-task classes and traced
 * durations (ng's tasks; dur NULL when r has none), taking ownership and
 * freeing r's old ones: how the graph edits of predict hand back their
 * result. */
void sc__replay_adopt_graph(sc_replay *r, sc__graph *ng, uint8_t *cls, int64_t *dur);

/* sc__replay_graph in two steps, for a caller that edits the calibrated
 * graph before it is simulated (predict): prepare prunes contradicted
 * edges, calibrates, classifies every task and applies the --scale rules
 * (keep_traced: keep the traced durations even without rules, for the
 * measured timeline of an edited graph); it takes g even on failure.
 * finish simulates and summarises; on failure the caller frees r. */
sc_status sc__replay_prepare(sc__graph *g, bool coupled, bool keep_traced, const sc__scale_rule *rules,
                             size_t nrules, sc_replay **out, sc_error *err);
sc_status sc__replay_finish(sc_replay *r, const sc_traceset *set, sc_error *err);

/* The model's structure of r's graph (structure.h), found on first use and
 * kept, so the edits of predict and the replay's layer times, which all
 * read it, share one finding per graph (finding it sorts every rank's GPU
 * work). It is found from the tasks' names, kinds, processors, program
 * order, operators, times and durations, the launch edges and the
 * cross-rank groups' members and communicators (not their sizes or
 * transfer times): an edit that changes any of these drops it
 * (sc__replay_structure_drop) after its last use, and a new graph
 * (sc__replay_adopt_graph) drops it too. *out stays r's. */
struct sc__structure;
sc_status sc__replay_structure(sc_replay *r, const struct sc__structure **out, sc_error *err);
void sc__replay_structure_drop(sc_replay *r);
/* Hands r a structure s found on its graph before sc__replay_prepare, for
 * a caller that needed it first (predict reads the model's dimensions
 * before the replay exists); prepare must have left what it is found
 * from alone (no --scale rule: the rules change durations). *s is moved
 * (left empty). */
void sc__replay_structure_give(sc_replay *r, struct sc__structure *s);

/* Bytes r holds besides its graph before the simulation: per-task classes
 * and traced durations, per-rank and per-processor calibration, and the
 * model's structure when it is kept. */
size_t sc__replay_memory(const sc_replay *r);

/* HTA's breakdown, taken from a set's traces before the graph build may
 * release their events, and held until the replay exists: before fills h
 * when o asks for it (SC_BREAKDOWN_HTA); attach hands it to r, or frees it
 * when r is NULL (a failed run). */
typedef struct sc__hta_held {
    sc_hta_breakdown *ranks;
    size_t n;
    bool asked;
    double seconds;
} sc__hta_held;
sc_status sc__replay_hta_before(const sc_traceset *set, const sc_replay_options *o, sc__hta_held *h,
                                sc_error *err);
void sc__replay_hta_attach(sc_replay *r, sc__hta_held *h);

/* The steps of sc_replay_run that predict shares: the --scale rules parsed
 * (*out NULL when there are none; the caller frees), and the graph built
 * for a replay (keeping the edge list's memory for the calibration). */
sc_status sc__replay_parse_scales(const sc_replay_options *o, sc__scale_rule **out, sc_error *err);
sc_status sc__replay_build(const sc_traceset *set, const sc_replay_options *o, sc__graph **g, sc_error *err);

/* The simulator's parameters for r's graph: its calibration, its coupling
 * and the job's thread cap (set may be NULL). */
sc__sim_params sc__replay_sim_params(const sc_replay *r, const sc_traceset *set);

/* The sensitivity check of a prepared replay, before it is simulated
 * (sensitivity.c): each class doubled in turn, simulated, and restored to
 * the exact durations it had, so the replay's own simulation is unchanged.
 * Not run when o says so (its reason in r->sens.why_not); in AUTO mode
 * neither on a graph over o->sensitivity_max_tasks tasks nor over the
 * memory budget. Fails only as a simulation of the graph would. */
sc_status sc__replay_sensitivity(sc_replay *r, const sc_traceset *set, const sc_replay_options *o, sc_error *err);

/* HTA's temporal breakdown of every Kineto trace of set (hta_breakdown.c),
 * before the graph build releases their events: *out (malloc'ed) holds
 * *n ranks in set order. */
sc_status sc__hta_breakdown(const sc_traceset *set, sc_hta_breakdown **out, size_t *n, sc_error *err);

/* --comm model: every sized collective of a prepared replay re-timed by
 * the communication model fitted to the graph's own collectives
 * (predict.c). */
sc_status sc__replay_model_comm(sc_replay *r, const sc_traceset *set, sc_error *err);
void sc__prediction_free(struct sc__prediction *pd);

/* Simulated time (layer_time.c): from task first's start to task last's
 * end (-1 when out of range), for one layer's tasks once the layer
 * structure says which they are; and, without it, the median period of a
 * marker kernel on rank `rank`'s GPU (the simulated start of one
 * occurrence to that of the occurrence `every` later; -1 when fewer). */
int64_t sc__replay_span_ns(const sc_replay *r, uint32_t first, uint32_t last);
int64_t sc__replay_marker_period_ns(const sc_replay *r, uint32_t rank, const char *marker, uint32_t every);

/* "coupled", "traced" or "model": how the replay timed its collectives. */
static inline const char *sc__replay_mode(const sc_replay *r) {
    return r->modelled ? "model" : r->coupled ? "coupled" : "traced";
}

/* Why rank k's, or (k = SIZE_MAX) the job's, step error is not defined; NULL
 * when it is. */
const char *sc__replay_no_error(const sc_replay *r, size_t k);

static inline double sc__replay_error_pct(int64_t measured, int64_t simulated) {
    return measured > 0 ? 100.0 * (double)(simulated - measured) / (double)measured : 0.0;
}

/* Per rank: the measured and simulated step, the breakdown of the simulated
 * step and its SM-busy windows (breakdown.c); then the slowest ranks. False
 * on out-of-memory. */
bool sc__replay_per_rank(sc_replay *r);
/* Each rank's simulated step (step.c) under the simulated task times
 * start and end: from[k] .. to[k] for graph rank k (g->ranks.len entries
 * each): what the replay reports and the sensitivity check compares. */
void sc__replay_steps(const sc__graph *g, const int64_t *start, const int64_t *end, int64_t *from, int64_t *to);
/* What rank k's measured step is measured from (breakdown.c): the events
 * that open and close it (event NULL when it has none), and how far past
 * its annotation it closes (-1 without one). */
void sc__replay_measured_from(const sc_replay *r, size_t k, sc_step_mark *opens, sc_step_mark *closes,
                              int64_t *after_annotation_ns);
/* The critical path from the slowest rank's last task back (critical_path.c).
 * False on out-of-memory. */
bool sc__replay_critical_path(sc_replay *r);
/* The top kernels, operators and collectives of a simulated replay
 * (tops.c); false on out-of-memory. */
bool sc__replay_tops(sc_replay *r);
void sc__replay_tops_free(sc__tops *t);
/* The ranks of a group's communicator as r simulated it: the traced one's,
 * or for predict's data-parallel communicator its new degree (predict.c). */
uint32_t sc__replay_group_ranks(const sc_replay *r, const sc__group *grp);

#endif /* SC_PIPELINE_REPLAY_H */
