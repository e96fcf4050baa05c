/*
 * chakra.h - Chakra interop seen from the rest of the library: the summary
 * `stepcast info` prints for a Chakra rank (src/readers/chakra.c) and the
 * exporter (src/report/chakra_export.c). Loading lives in trace.h
 * (sc__chakra_load) and graph building in graph.h (sc__graph_build_chakra).
 */
#ifndef SC_CHAKRA_H
#define SC_CHAKRA_H

#include "../graph/graph.h"
#include "../trace/trace.h"

/* The body of one Chakra rank's `info` summary (node counts by type, CPU
 * nodes, dependencies, GPU collectives by comm_type), after the head that
 * report/info.c writes for every format (it holds the rank, which a set
 * assigns after every file is read): as text and as JSON, to whichever of
 * the two is not NULL; the file's nodes are decoded once for both. */
sc_status sc__chakra_info_body(const sc_trace *t, sc__buf *text, sc__buf *json, sc_error *err);

typedef struct sc__chakra_export_stats {
    uint64_t nodes, deps, bytes, files;
} sc__chakra_export_stats;

/* Writes PREFIX.<rank>.et for every rank of a finished graph; flags are
 * SC_EXPORT_* from stepcast.h. */
sc_status sc__chakra_export(const sc__graph *g, const char *prefix, unsigned flags,
                            sc__chakra_export_stats *stats, sc_error *err);

#endif
