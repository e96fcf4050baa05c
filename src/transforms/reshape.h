/*
 * reshape.h - predict's shape edits on a calibrated graph (reshape.c): the
 * kernels whose shapes scale with the edited dimensions re-timed by the
 * kernel cost model, the collectives whose messages do re-sized and
 * re-timed by the communication model. The graph's structure does not
 * change. recs: every trace's records (sc__krecs_task finds a task's).
 */
#ifndef SC_RESHAPE_H
#define SC_RESHAPE_H

#include "../models/comm.h"
#include "../models/kernel_cost.h"
#include "../models/shape_edit.h"

typedef struct sc__reshape_stats {
    uint64_t kernels;     /* shaped kernels re-timed */
    uint64_t unshaped;    /* kernels without shapes, timed as one activation */
    uint64_t collectives; /* groups re-sized */
} sc__reshape_stats;

/* Re-times g's GPU tasks for edit e: a kernel whose re-shaped shape
 * differs from its traced one lasts its traced time x model(new) /
 * model(traced) under m; a compute kernel without shapes scales as one
 * activation of its class would (sc__shape_edit_activation); copies and
 * fills of known bytes keep theirs. A group's message grows by
 * sc__shape_edit_message_ratio of its first member's record and its
 * transfer time by cm's time for the new size over the old. */
void sc__reshape_graph(sc__graph *g, const sc__krecs *recs, const sc__kcost_model *m,
                       const sc__shape_edit *e, const sc__comm_model *cm, sc__reshape_stats *stats);

#endif /* SC_RESHAPE_H */
