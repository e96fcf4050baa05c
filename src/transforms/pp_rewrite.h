/*
 * pp_rewrite.h - the graph rewrite behind `predict --pp`: a traced
 * iteration (one micro-batch's forward and backward through every layer)
 * laid out as a pipeline of P stages running M micro-batches in the order
 * of a schedule (pipeline_schedule.h), with a send/recv pair between the
 * stages for every micro-batch's activations and gradients.
 *
 * The caller labels every task with a segment (sc__pp_seg) and, for the
 * layer segments, its layer. A traced rank r becomes P ranks (stage s is
 * rank s * R + r of the new graph, with the same threads and streams plus
 * a receive stream and a send stream). Stage s runs, on each processor in
 * order: the HEAD segment once; then per schedule unit (micro-batch m,
 * chunk c, forward or backward; block b = c * P + s of L / (P * V) layers)
 * a copy of the unit's segments (forward: PRE when b is the first block,
 * the block's layers in order, FMID when b is the last; backward: BMID
 * when last, the block's layers in reverse, POST when first); then the
 * TAIL once, its GPU compute times tail_scale (the optimizer of 1/P of the
 * parameters). A copy keeps durations, gaps, names and operators; edges
 * between tasks of one unit copy are copied, the others dropped (the
 * processor order of the copies carries what ran before). Groups
 * (collectives) are re-formed per stage and unit copy among the ranks of
 * the stage. A forward unit of a block after the first waits for a recv
 * (on the receive stream) paired with the previous block's send of the
 * same micro-batch (on its send stream, after the unit's GPU work); the
 * backward runs the other way. Each pair's transfer is p2p_ns; bubbles
 * come out of the simulation.
 */
#ifndef SC_TRANSFORMS_PP_REWRITE_H
#define SC_TRANSFORMS_PP_REWRITE_H

#include "../graph/graph.h"
#include "pipeline_schedule.h"

typedef enum sc__pp_seg {
    SC__SEG_HEAD = 0, /* before the forward layers, not the forward's (once per stage) */
    SC__SEG_PRE,      /* the forward before the layers (embedding): first block */
    SC__SEG_FWD,      /* a forward layer */
    SC__SEG_FMID,     /* after the forward layers, before the backward's (head, loss): last block */
    SC__SEG_BMID,     /* the backward before the layers' (head's backward): last block */
    SC__SEG_BWD,      /* a backward layer */
    SC__SEG_POST,     /* the backward after the layers (embedding's backward): first block */
    SC__SEG_TAIL,     /* after the backward (optimizer): once per stage */
    SC__SEG_COUNT
} sc__pp_seg;

/* A segment and layer as one index in [0, 6 + 2L): HEAD, PRE, the forward
 * layers up, FMID, BMID, the backward layers, POST, TAIL; a layer outside
 * [0, L) counts as 0. The backward layers count up (by layer: the
 * rewrite's buckets) or, with bwd_down, down from L - 1 (the iteration's
 * order, in which the last layer's backward runs first). */
uint32_t sc__pp_seg_key(uint8_t seg, uint32_t layer, uint32_t L, bool bwd_down);

typedef struct sc__pp_spec {
    const uint8_t *seg;     /* per task: sc__pp_seg */
    const uint32_t *layer;  /* per task: its layer for FWD / BWD */
    uint32_t layers;        /* L */
    uint32_t stages;        /* P */
    uint32_t micro;         /* M */
    uint32_t chunks;        /* V (interleaved), else 1 */
    sc__pp_kind kind;
    int64_t p2p_bytes;      /* one send's message */
    int64_t p2p_ns;         /* its transfer time */
    double tail_scale;      /* GPU compute of the TAIL times this */
} sc__pp_spec;

/* A new finished graph *out from g (finished, not changed), origin[t]
 * (malloc'ed; the caller frees) the old task each new task copies, or
 * SC__NONE for the inserted send/recv tasks. SC_E_USAGE when the layers do
 * not split into P * V equal blocks or the schedule's shape is bad;
 * SC_E_NOMEM. */
sc_status sc__pp_rewrite(const sc__graph *g, const sc__pp_spec *spec, sc__graph **out, uint32_t **origin,
                         sc_error *err);

#endif /* SC_TRANSFORMS_PP_REWRITE_H */
