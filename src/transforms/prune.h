/*
 * prune.h - drop dependencies that the trace itself contradicts.
 */
#ifndef SC_PRUNE_H
#define SC_PRUNE_H

#include "../graph/graph.h"

/* Tolerance for clock rounding: integer-us traces round both ends. */
#define SC__PRUNE_TOLERANCE_NS 2000

/* Removes every edge u -> v of an inferred family (cross-thread,
 * cross-stream, GPU-to-CPU) whose measured times contradict it: v started
 * more than the tolerance before u ended. Counts per family go to dropped
 * (SC_E_FAMILY_COUNT entries). The graph stays finished (CSR, indeg). */
void sc__prune_contradicted(sc__graph *g, uint64_t *dropped);

#endif /* SC_PRUNE_H */
