/*
 * symmetry.h - which ranks of a job run the same graph (symmetry.c).
 *
 * A rank's shape is its processors and, on each, the sequence of its tasks'
 * kinds and names, its cross-rank groups' types and sizes; durations and
 * times are left out (they always differ). Ranks of one shape are one class:
 * replicas of one position of the job (data-parallel peers), where ranks of
 * other shapes hold other positions (pipeline stages, a rank that logs).
 * `predict` says how many classes a trace has and warns when the replicas
 * it grows are not all alike.
 */
#ifndef SC_PIPELINE_SYMMETRY_H
#define SC_PIPELINE_SYMMETRY_H

#include "../graph/graph.h"

/* class_of[k] (g->ranks.len entries, the caller's) gets the class of graph
 * rank k: the index of the first rank of its shape. Returns the number of
 * classes, 0 on out-of-memory. */
size_t sc__rank_classes(const sc__graph *g, uint32_t *class_of);

#endif /* SC_PIPELINE_SYMMETRY_H */
