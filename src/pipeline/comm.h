/*
 * comm.h - what `stepcast comm` computes, as data (the public sc_comm): the
 * communication model of a GPU's nodes (src/models/comm.c) and its rows,
 * an nccl-tests-like table or a trace's collectives against the model
 * fitted to them; src/report/comm_report.c prints it.
 */
#ifndef SC_PIPELINE_COMM_H
#define SC_PIPELINE_COMM_H

#include "../models/comm.h"

struct sc_comm {
    sc__comm_model model;
    bool traces;          /* the rows are the traces' collectives */
    sc_comm_row *rows;
    size_t nrows;
    sc__warnings warnings; /* the load's, then the graph's and this pipeline's */
    size_t load_warnings;  /* how many of them are the load's */
};

#endif /* SC_PIPELINE_COMM_H */
