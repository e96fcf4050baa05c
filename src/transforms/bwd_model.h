/*
 * bwd_model.h - the graph rewrite behind `predict --model-backward`: a
 * modelled backward for a trace whose iteration has only a forward (or
 * whose traced backward is to be replaced, to check the method against
 * it), built from copies of the forward's tasks.
 *
 * The caller labels every task with a pipeline segment (pp_rewrite.h:
 * HEAD, PRE, FWD with its layer, FMID, and for a traced backward BMID,
 * BWD, POST, TAIL) and says, per task, how many backward tasks it becomes
 * (0 to 2) and how long each lasts. The traced backward (BMID, BWD, POST)
 * is dropped. On every processor, after its last forward-side task (HEAD,
 * PRE, FWD, FMID) and before the rest (TAIL: the optimizer), go the
 * copies: of FMID (the head's and loss's backward), then of each layer
 * from the last to the first, then of PRE (the embedding's backward),
 * each unit's tasks in the reverse of their processor order. Edges among
 * the copies run the other way (a gradient flows back), except a launch,
 * which still enqueues its kernel (copy k of a launch launches copy k of
 * its kernel); processor order comes from the new places; syncs are not
 * copied (a copied sync is a host call of no duration). A collective's
 * copies form one new group with its size, transfer time and
 * communicator. Copies are modelled: no measured event, their operators
 * mirrored under one "autograd::engine::evaluate_function: modelled
 * backward" operator (so the structure reads them as the backward), their
 * measured starts mirrored about the end of the rank's forward (reports
 * and orderings by start see a backward after the forward).
 *
 * Recomputation: a layer's tasks marked in recompute are copied once more,
 * in their processor order and with their edges the forward way, ahead
 * of the layer's backward copies on each processor (the forward re-run
 * from the layer's checkpointed input); a recomputed collective is a new
 * group like the others.
 */
#ifndef SC_TRANSFORMS_BWD_MODEL_H
#define SC_TRANSFORMS_BWD_MODEL_H

#include "../graph/graph.h"

#define SC__BWD_COPIES 2

typedef struct sc__bwd_spec {
    const uint8_t *seg;    /* per task: sc__pp_seg */
    const uint32_t *layer; /* per task: its layer for SC__SEG_FWD */
    uint32_t layers;
    const uint8_t *copies; /* per task: backward tasks it becomes (<= SC__BWD_COPIES) */
    const int64_t *dur;    /* per task: SC__BWD_COPIES durations */
    const uint8_t *recompute; /* per task: a layer's (FWD) task re-run before the layer's
                                 backward (activation recomputation); NULL: none */
} sc__bwd_spec;

typedef struct sc__bwd_stats {
    uint64_t modelled;   /* tasks added */
    uint64_t recomputed; /* of them, copies of forward tasks re-run */
    uint64_t dropped;  /* traced backward tasks removed */
} sc__bwd_stats;

/* A new finished graph *out from g (finished, not changed), and origin[t]
 * (malloc'ed; the caller frees) for each new task: the old task it is or
 * copies, with SC__BWD_MODELLED set on the copies. SC_E_NOMEM, or
 * SC_E_GRAPH should the copies close a cycle. */
#define SC__BWD_MODELLED 0x80000000u
sc_status sc__bwd_model(const sc__graph *g, const sc__bwd_spec *sp, sc__graph **out, uint32_t **origin,
                        sc__bwd_stats *st, sc_error *err);

#endif /* SC_TRANSFORMS_BWD_MODEL_H */
