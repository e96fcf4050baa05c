/*
 * structure.h - the model's structure recovered from a traced iteration:
 * its phases (forward, backward, optimizer), its repeated layers, the role
 * of each collective, and the model's dimensions.
 *
 * Two halves. structure.c works on the graph alone (no trace events), so a
 * replay or a prediction, whose traces are released while the graph is
 * built, can ask it too: it labels every task with its phase and layer and
 * every cross-rank group with its role. structure_dims.c reads the shapes
 * ("Input Dims", "Input type") of the operators of a set whose events are
 * still held, for `stepcast structure`.
 *
 * Layers come from the period of each rank's GPU work in launch order: the
 * run of identical blocks of kernel names that covers the most GPU time.
 * A forward layer k is its block of GPU tasks plus the host tasks of the
 * launching thread from the launch of its first GPU task up to the launch
 * of the next layer's; the backward's blocks run in reverse, the last
 * layer's first. The layer sets are what the graph rewrite
 * (transforms/rewrite.h) copies or removes for `predict --layers`, and the
 * seams for the edits that partition or re-shard layers.
 */
#ifndef SC_PIPELINE_STRUCTURE_H
#define SC_PIPELINE_STRUCTURE_H

#include "../graph/graph.h"

typedef enum sc__phase {
    SC__PHASE_NONE = 0, /* not classified (no operator above it) */
    SC__PHASE_FORWARD,
    SC__PHASE_BACKWARD,
    SC__PHASE_OPTIMIZER,
    SC__PHASE_COUNT
} sc__phase;

typedef enum sc__coll_role {
    SC__ROLE_OTHER = 0,  /* none of the below (outside layers, in the forward) */
    SC__ROLE_TP,         /* tensor-parallel all-reduce inside a layer */
    SC__ROLE_SP,         /* sequence-parallel all-gather / reduce-scatter inside a layer */
    SC__ROLE_DP,         /* data-parallel gradients: another communicator, or the backward /
                            optimizer's collectives outside layers */
    SC__ROLE_PP,         /* pipeline send / recv */
    SC__ROLE_COUNT
} sc__coll_role;

const char *sc__phase_name(int phase);
const char *sc__role_name(int role);

/* One phase's repeated run on one rank. */
typedef struct sc__layer_run {
    uint32_t count;      /* blocks (layers); 0: none found */
    uint32_t period;     /* GPU tasks per block */
    uint32_t first_task; /* the task that opens the run: the first block's first launch
                            (its first GPU task when it has no launch) */
    double covered;      /* share of the phase's GPU time the run covers */
} sc__layer_run;

typedef struct sc__structure_rank {
    sc__layer_run run[SC__PHASE_COUNT]; /* forward and backward used */
    uint32_t phase_tasks[SC__PHASE_COUNT];
    int64_t phase_start[SC__PHASE_COUNT], phase_end[SC__PHASE_COUNT]; /* traced ns, 0 when none */
} sc__structure_rank;

typedef struct sc__structure {
    uint32_t nlayers;           /* layers of every rank (forward count); 0: none */
    uint32_t nbackward;         /* backward blocks found (0: none, or not layer-periodic) */
    const char *why_no_layers;  /* static text when nlayers == 0 */
    const char *source;         /* how they were found: "period" */
    uint32_t *task_layer;       /* per graph task: its layer, SC__NONE outside layers */
    uint8_t *task_phase;        /* per graph task: sc__phase */
    uint8_t *group_role;        /* per graph group: sc__coll_role */
    sc__structure_rank *ranks;  /* per graph rank */
    size_t nranks;
    uint32_t per_layer[SC__ROLE_COUNT]; /* collectives per layer (rank 0's layer 0, both phases) */
    uint32_t tp;                /* ranks of the tensor-parallel communicator; 0 unknown */
    const char *why_no_tp;      /* static text when tp == 0 */
} sc__structure;

/* Labels g's tasks and groups (g finished). SC_OK with s->nlayers == 0 and
 * a reason when no layers repeat; errors only on out-of-memory. */
sc_status sc__structure_find(const sc__graph *g, sc__structure *s, sc_error *err);
void sc__structure_free(sc__structure *s);
/* How many times sc__structure_find has run in this process: for the
 * tests that hold a prediction to one finding per graph. */
uint64_t sc__structure_find_count(void);

/* One layer's time (us) in phase f: per rank, the span of its layers' GPU
 * tasks divided by the count, averaged over ranks. start / end: per task
 * times (the simulation's), or NULL for the traced ts and ts + dur. 0 when
 * the phase has no layers. */
double sc__structure_layer_us(const sc__graph *g, const sc__structure *s, int phase, const int64_t *start,
                              const int64_t *end);

/* One layer's host time (us) in phase f on the busiest host thread: per
 * CPU thread, the uncovered gaps and durations of its tasks in the phase's
 * layers over the count; the most of any thread of any rank. In a
 * host-bound job whose ranks meet in every layer's collectives this, not
 * the traced span over the count, is what one more layer costs: the span
 * is shortened by the head start the other hosts have while the last one
 * to reach the layers holds up their first collective.
 * 0 when the phase has no layers, -1 out of memory. */
double sc__structure_host_layer_us(const sc__graph *g, const sc__structure *s, int phase);

#endif /* SC_PIPELINE_STRUCTURE_H */
