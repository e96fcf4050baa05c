/*
 * job.h - a job's execution graph as the pipeline hands it out (the public
 * sc_graph): the graph of one iteration of every rank, with what the
 * reports need once the traces may be gone (file names, the load's
 * warnings, the builder's self-check).
 */
#ifndef SC_PIPELINE_JOB_H
#define SC_PIPELINE_JOB_H

#include "../graph/graph.h"

struct sc_graph {
    sc__graph *g;
    sc__build_stats stats;  /* the cross-stream self-check (Kineto only) */
    char **files;           /* per trace of the set (sc__rank.trace indexes it) */
    size_t nfiles;
    sc__warnings load;      /* the trace set's warnings, before the builder's */
};

/* The graph's file for graph rank r ("" when it has none). */
const char *sc__job_file(const sc_graph *jg, const sc__rank *r);
/* "ProfilerStep#N" when graph rank r is one annotated iteration: its
 * step's first task is the annotation's own time. "" for a whole trace. */
const char *sc__job_iteration(const sc__graph *g, const sc__rank *r);

#endif /* SC_PIPELINE_JOB_H */
