/*
 * rewrite.h - the graph rewrite every structural edit goes through: copy
 * or remove whole instances of a repeated block of tasks (layers), with
 * their edges, launches, processor order and cross-rank groups, the same
 * way on every rank.
 *
 * The caller labels tasks: inst[t] is the instance (0 .. n-1) task t
 * belongs to, SC__NONE for tasks outside every instance; part[t] splits an
 * instance into parts that run apart (a layer's forward and backward).
 * Growing to `want` instances adds want - n copies; copy c (1 ..) copies
 * instance (c - 1) mod n, so the added instances carry the traced ones'
 * differences in turn rather than one instance's. On each processor the
 * copies of a part go, in order, right after the last task of that part of
 * any instance there (the end of the repeated region). Shrinking removes
 * instances want .. n-1.
 *
 * A copy keeps its source's durations, gaps, kinds, operators and names;
 * its measured event is none (it is modelled, not traced). Edges:
 *   - inside the copied instance: copied inside the copy;
 *   - into it from another instance (the previous layer): into copy c from
 *     the matching task of the one before it in the chain (copy c - 1, or
 *     for the first copy the instance that ends the region), matched by
 *     processor, part and place among the instance's tasks there;
 *   - into it from outside every instance: kept, and copied;
 *   - out of it to a task outside every instance that started after the
 *     region of its part: from every copy too (what follows the layers
 *     waits for the copies); edges to tasks that ran alongside the region
 *     (a helper thread) are not copied, as they may lead back into it.
 * A removed task's out-edges move to the matching task of the last kept
 * instance. A group (a collective, a send/recv pair) must lie wholly inside
 * one instance or wholly outside them: copied with it, or removed with it;
 * one that straddles is an error naming it. Processor order is renumbered
 * and re-derived (sc__graph_finish). With want == n the result is the same
 * graph, task for task.
 */
#ifndef SC_TRANSFORMS_REWRITE_H
#define SC_TRANSFORMS_REWRITE_H

#include "../graph/graph.h"

#define SC__REWRITE_PARTS 8

typedef struct sc__rewrite_spec {
    const uint32_t *inst; /* per task: instance, SC__NONE outside */
    const uint8_t *part;  /* per task: part (< SC__REWRITE_PARTS); NULL: one part */
    uint32_t n;           /* instances (>= 1) */
    uint32_t want;        /* instances wanted (>= 1) */
} sc__rewrite_spec;

/* A new finished graph *out from g (finished; not changed), and origin[t]
 * (malloc'ed; the caller frees) for each new task: the old task it is, or
 * the task it copies. SC_E_USAGE for a group that straddles the
 * instances; SC_E_NOMEM. */
sc_status sc__rewrite_repeat(const sc__graph *g, const sc__rewrite_spec *spec, sc__graph **out, uint32_t **origin,
                             sc_error *err);

#endif /* SC_TRANSFORMS_REWRITE_H */
