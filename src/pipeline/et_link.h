/*
 * et_link.h - a PyTorch Execution Trace linked with the Kineto trace of the
 * same rank (et_link.c): which Kineto cpu_op is which ET node, and how well
 * the two cover each other. `stepcast et` reports it (report/et_report.c).
 */
#ifndef SC_PIPELINE_ET_LINK_H
#define SC_PIPELINE_ET_LINK_H

#include "../readers/pytorch_et.h"

typedef struct sc__et_pair {
    uint32_t event, node; /* Kineto event index, ET node index */
} sc__et_pair;

typedef struct sc__et_link {
    uint64_t cpu_ops, with_rf, linked, et_ops, et_linked;
    uint64_t shapes_compared, shapes_agree; /* Kineto "Input Dims" vs ET input shapes */
    bool by_order;                          /* linked by name order, not rf_id */
} sc__et_link;

/* Links et with kineto (may be NULL: only the ET's counts). With pairs (an
 * sc__vec of sc__et_pair, or NULL) every linked pair is appended, in the
 * order they were found. False on out-of-memory. */
bool sc__et_link_traces(const sc_et *et, const sc_trace *kineto, sc__et_link *out, sc__vec *pairs);

#endif /* SC_PIPELINE_ET_LINK_H */
