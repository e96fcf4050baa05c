/*
 * diff.h - what `stepcast diff` computes, as data (the public sc_diff): two
 * trace sets' per-step means by section and name, side by side
 * (src/pipeline/diff.c); src/report/diff_report.c prints them.
 */
#ifndef SC_PIPELINE_DIFF_H
#define SC_PIPELINE_DIFF_H

#include "../base/base.h"

struct sc_diff {
    sc__intern names;     /* row names (a step's is built), owned here */
    sc_diff_side side[2];
    char *label[2], *gpu[2];
    sc_diff_row *rows;
    size_t nrows;
};

#endif /* SC_PIPELINE_DIFF_H */
