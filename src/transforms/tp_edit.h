/*
 * tp_edit.h - the in-place graph edit behind `predict --tp T`: every
 * layer's work re-sharded from the traced tensor-parallel degree to T.
 *
 * Inside the layers (the caller labels them), in each rank's launch order
 * (measured start), a layer opens replicated; a GEMM or attention kernel
 * is sharded (its column- or row-parallel dimension, or its heads, split
 * over the TP ranks) and makes what follows sharded too, up to the next
 * tensor- or sequence-parallel collective, after which the work is
 * replicated again (the residual add, dropout and LayerNorm of Megatron's
 * layer without sequence parallelism). A sharded kernel whose enqueuing
 * operator's shapes are known is re-timed by the kernel cost model: its
 * traced time times model(re-sharded shape) / model(traced shape), so a
 * GEMM's efficiency follows its new N or K and attention its heads; the
 * others (no shapes, or copies made by --layers, which have no traced
 * event) by sc__kernel_rescale with FLOPs and bytes both times from / T;
 * replicated ones keep their time. The TP collectives keep their size (an activation
 * all-reduce moves the whole [s, b, h] tensor whatever T) and are split
 * into groups of T ranks where T < from, so the caller's communication
 * model re-times them for T ranks; with T = 1 they and their launch calls
 * take no time and wait for nobody (their tasks stay, empty).
 */
#ifndef SC_TRANSFORMS_TP_EDIT_H
#define SC_TRANSFORMS_TP_EDIT_H

#include "../graph/graph.h"
#include "../models/shape_edit.h"

typedef struct sc__tp_spec {
    const uint32_t *layer;   /* per task: its layer, SC__NONE outside the layers */
    const uint8_t *tp_group; /* per group: 1 for a tensor- or sequence-parallel collective */
    const uint8_t *cls;      /* per task: sc__scale_class */
    uint32_t from, to;       /* traced and new TP degree */
    /* Optional (NULL: every sharded kernel by the ratio): the traced
     * kernels' records, the cost model fitted to them, the shape edit
     * already applied to the graph (NULL: none) and the re-sharding edit
     * (sc__shape_edit_tp). A sharded kernel with a shaped record is
     * re-timed by the model on its re-sharded shape. */
    const sc__krecs *recs;
    const sc__kcost_model *model;
    const sc__shape_edit *pre, *edit;
} sc__tp_spec;

typedef struct sc__tp_stats {
    uint64_t sharded, replicated, collectives; /* kernels re-timed / kept; TP collectives */
    uint64_t modelled;       /* sharded kernels timed by the cost model on their shapes */
    uint32_t comm;           /* the TP communicator's label, SC__NONE when none */
} sc__tp_stats;

/* A GPU kernel's new duration when its FLOPs grow flops_ratio times (GEMM
 * and attention kernels) or its bytes bytes_ratio times (the others): the
 * one place a kernel cost model takes over. */
int64_t sc__kernel_rescale(int64_t dur, uint8_t cls, double flops_ratio, double bytes_ratio);

/* Edits g (finished) as above. False on out-of-memory. */
bool sc__tp_edit(sc__graph *g, const sc__tp_spec *sp, sc__tp_stats *st);

#endif /* SC_TRANSFORMS_TP_EDIT_H */
