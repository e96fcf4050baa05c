/*
 * retime.h - edits that re-time a calibrated graph for a job nobody ran
 * (retime.c): collectives by the communication model, GPU work by the
 * ratio of two GPUs' peaks. The graph's structure does not change.
 */
#ifndef SC_RETIME_H
#define SC_RETIME_H

#include "../models/comm.h"
#include "../models/hardware.h"

/* The measured collectives of g as samples for sc__comm_model_fit: every
 * group with a type the model knows, a size, two ranks or more and a
 * calibrated transfer time. *n gets their count; NULL on out-of-memory
 * (or none: *n = 0). The caller frees. */
sc__comm_sample *sc__retime_samples(const sc__graph *g, size_t *n);

/* Per collective type, the median of measured transfer over model time of
 * g's samples under m: how much slower (> 1) the traced fabric ran than
 * the model says. 1 for a type without samples. */
void sc__retime_efficiency(const sc__graph *g, const sc__comm_model *m, double factor[SC_C_COUNT]);

typedef struct sc__retime_stats {
    uint64_t retimed;   /* groups given a modelled transfer time */
    uint64_t unsized;   /* groups the model cannot time (no size): traced time kept */
} sc__retime_stats;

/* Gives every group of g a transfer time from m, times factor[type] (NULL:
 * 1): in a communicator of ranks[comm] ranks where ranks (indexed by the
 * group's comm label id, g->strings.count entries, 0 = keep) says so, else
 * its own. Groups without a size keep theirs; so do what the model cannot
 * time. */
void sc__retime_groups(sc__graph *g, const sc__comm_model *m, const double *factor, const uint32_t *ranks,
                       sc__retime_stats *stats);

/* Shrinks communicator `comm` (a label id of g's strings) to `ranks` ranks:
 * each of its groups with more members is split into groups of `ranks`
 * consecutive members (in rank order), which couple only among themselves
 * (a group of one waits for nobody). Groups keep their type, size and
 * transfer time. False on out-of-memory (g is then unchanged). */
bool sc__retime_split(sc__graph *g, uint32_t comm, uint32_t ranks);

/* Re-times GPU work for another GPU: GEMM and attention kernels (cls, from
 * sc__scale_classify) by the ratio of the two GPUs' dense tensor TFLOP/s,
 * other kernels, copies and memsets by the ratio of their HBM bandwidths.
 * Collectives are the communication model's; CPU work stays. Returns the
 * tasks re-timed. */
uint64_t sc__retime_gpu(sc__graph *g, const uint8_t *cls, const sc__hw_profile *from, const sc__hw_profile *to);

#endif /* SC_RETIME_H */
