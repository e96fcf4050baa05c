/*
 * predict_parallel.h - predict's tensor- and pipeline-parallel edits
 * (--tp, --pp with its schedule and micro-batches): the traced graph's
 * layers and collectives found (structure.h), checked against the model's
 * dimensions, and handed to the graph rewrites (transforms/tp_edit.h,
 * transforms/pp_rewrite.h). predict.c calls them between the replay's
 * prepare and finish, then re-times every collective, the new ones too.
 */
#ifndef SC_PIPELINE_PREDICT_PARALLEL_H
#define SC_PIPELINE_PREDICT_PARALLEL_H

#include "../models/comm.h"
#include "replay.h"
#include "structure_run.h"

typedef struct sc__par_result {
    uint32_t tp_from, tp_comm;   /* traced TP degree; the TP communicator's label (SC__NONE) */
    uint32_t pp_comm, p2p_ranks; /* the pipeline's send/recv label; the ranks to time them over */
    uint64_t sharded, replicated, modelled; /* --tp: layer kernels re-timed (by the cost model) / kept */
    int64_t p2p_bytes;
    uint64_t traced_tasks, modelled_tasks;
    const char *schedule;
} sc__par_result;

/* Each task's pipeline segment (transforms/pp_rewrite.h) and layer, from
 * the structure s of g; false on out-of-memory. */
bool sc__pp_label(const sc__graph *g, const sc__structure *s, uint8_t *seg, uint32_t *layer);

/* The host time a thread spent waiting for a traced backward on another
 * thread (a forward-phase operator's own time on a thread without backward
 * work, inside the backward's span) taken off its task, and the task not
 * copied (copies[t] = 0; copies may be NULL). */
void sc__drop_backward_waits(const sc__structure *s, sc__graph *g, uint8_t *copies);

/* --model-backward (predict_backward.c): the forward's layers, head and
 * embedding given a modelled backward; a traced backward is replaced.
 * recs: the traces' kernel records (shapes), km the cost model fitted to
 * the trace, edit the shape edit already applied (NULL: none), recompute
 * an SC__RECOMPUTE_* (the layers' forward re-run in their backward). */
typedef struct sc__bwd_result {
    uint64_t traced, modelled, dropped, shaped, unshaped, recomputed;
} sc__bwd_result;
enum { SC__RECOMPUTE_NONE = 0, SC__RECOMPUTE_SELECTIVE, SC__RECOMPUTE_FULL };
struct sc__krecs;
struct sc__kcost_model;
struct sc__shape_edit;
sc_status sc__predict_backward(sc_replay *r, const struct sc__krecs *recs, const struct sc__kcost_model *km,
                               const struct sc__shape_edit *edit, int recompute, sc__bwd_result *res,
                               sc_error *err);

/* --tp: m the model's dimensions (NULL: unknown); recs, km, pre as for
 * sc__predict_backward (recs NULL: every sharded kernel by the ratio
 * from / T), dims the dimensions the records show (the traced ones, or
 * pre's result when pre changes them). */
sc_status sc__predict_tp(sc_replay *r, const sc_predict_options *o, const sc__model *m, const struct sc__krecs *recs,
                         const struct sc__kcost_model *km, const struct sc__shape_edit *pre,
                         const sc_model_dims *dims, sc__par_result *res, sc_error *err);

/* --pp: cm times the stage-to-stage sends, gpn GPUs per node. */
sc_status sc__predict_pp(sc_replay *r, const sc_predict_options *o, const sc__model *m, const sc__comm_model *cm,
                         uint32_t gpn, sc__par_result *res, sc_error *err);

#endif /* SC_PIPELINE_PREDICT_PARALLEL_H */
