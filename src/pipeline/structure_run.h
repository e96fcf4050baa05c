/*
 * structure_run.h - `stepcast structure` as data: the public sc_structure
 * (structure_run.c builds it: the graph, its structure (structure.h), the
 * dimensions read off the shapes (structure_dims.c)); src/report/ prints it.
 */
#ifndef SC_PIPELINE_STRUCTURE_RUN_H
#define SC_PIPELINE_STRUCTURE_RUN_H

#include "../trace/trace.h"
#include "structure.h"

/* The model's dimensions (sc_structure_summary's). */
typedef struct sc__model {
    sc_model_dim hidden, ffn, heads, seq, micro_batch, tp;
    int64_t head_dim;
    const char *dtype, *why_no_dtype;
} sc__model;

struct sc_structure {
    sc__graph *g;
    sc__structure s;
    sc__model model;
    double seconds;
};

/* The dimensions of the model of g (its structure s) from the set's
 * traces, whose events must still be held. */
void sc__structure_dims(const sc_traceset *set, const sc__graph *g, const sc__structure *s, sc__model *m);

#endif /* SC_PIPELINE_STRUCTURE_RUN_H */
