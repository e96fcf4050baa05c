/*
 * chakra_export.h - the Chakra writer seen from its callers: the public
 * sc_graph_export_chakra, and the graph-level writer the tests and the
 * benchmark call on graphs they build themselves (chakra_export.c).
 */
#ifndef SC_CHAKRA_EXPORT_H
#define SC_CHAKRA_EXPORT_H

#include "../graph/graph.h"

typedef struct sc__chakra_export_stats {
    uint64_t nodes, deps, bytes, files;
    uint64_t comm_groups; /* numbered pg_names in PREFIX.comm_group.json */
} sc__chakra_export_stats;

/* Writes PREFIX.<rank>.et for every rank of a finished graph, and
 * PREFIX.comm_group.json, the ranks of each numbered pg_name; flags are
 * SC_EXPORT_* from stepcast.h. */
sc_status sc__chakra_export(const sc__graph *g, const char *prefix, unsigned flags,
                            sc__chakra_export_stats *stats, sc_error *err);

#endif /* SC_CHAKRA_EXPORT_H */
