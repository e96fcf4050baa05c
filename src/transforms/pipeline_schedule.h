/*
 * pipeline_schedule.h - the order in which one pipeline stage runs its
 * micro-batches' forward and backward passes, as plain data.
 *
 * A schedule is, per stage, an array of units (micro-batch, model chunk,
 * forward or backward) in execution order. Builders of pipelined graphs
 * (the synthesised iteration of `stepcast model`, later edits of traced
 * graphs) lay a stage's work out in this order and add the send/recv
 * dependencies between stages themselves; bubbles then come out of the
 * simulation, never from a formula.
 *
 * Kinds: gpipe (every forward, then every backward), 1f1b (PipeDream-Flush
 * as Megatron runs it: P - s - 1 warm-up forwards on stage s, then one
 * forward one backward, then the cool-down backwards) and interleaved
 * (Megatron's interleaved 1F1B over V virtual stages, i.e. model chunks:
 * stage s holds chunks c = 0 .. V-1, layer block c * P + s).
 */
#ifndef SC_PIPELINE_SCHEDULE_H
#define SC_PIPELINE_SCHEDULE_H

#include "../base/base.h"

typedef enum sc__pp_kind { SC__PP_GPIPE = 0, SC__PP_1F1B, SC__PP_INTERLEAVED } sc__pp_kind;

typedef struct sc__pp_unit {
    uint32_t micro;   /* micro-batch, 0 .. M-1 */
    uint16_t chunk;   /* model chunk on this stage, 0 .. V-1 */
    uint8_t backward; /* 0 forward, 1 backward */
    uint8_t unused;
} sc__pp_unit;

/* Checks a schedule's shape: P >= 1 stages, M >= 1 micro-batches, V >= 1
 * chunks (V > 1 only for interleaved, which also needs M % P == 0 as
 * Megatron does). NULL when fine, else a static reason. */
const char *sc__pp_check(sc__pp_kind kind, uint32_t stages, uint32_t micro, uint32_t chunks);

/* Writes stage s's 2 * M * V units in order into out (room for that
 * many). The shape must pass sc__pp_check. Returns the count. */
size_t sc__pp_schedule(sc__pp_kind kind, uint32_t stages, uint32_t micro, uint32_t chunks, uint32_t stage,
                       sc__pp_unit *out);

/* "gpipe", "1f1b", "interleaved". */
const char *sc__pp_kind_name(sc__pp_kind kind);

#endif /* SC_PIPELINE_SCHEDULE_H */
