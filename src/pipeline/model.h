/*
 * model.h - `stepcast model`: a training step synthesised from its
 * configuration (models/transformer.h), simulated like a replay.
 *
 * model.c builds the graph: one simulated rank per pipeline stage (every
 * other GPU of the job is a tensor-, context- or data-parallel peer doing
 * the same work at the same time: rank symmetry), each with a CPU thread
 * that launches every kernel (a host cost per launch), a compute stream,
 * a side stream for overlapped collectives, a data-parallel stream and
 * four point-to-point streams; the pipeline schedule
 * (transforms/pipeline_schedule.h) orders each stage's micro-batches and
 * its send/recv pairs tie the stages. Collectives are groups of the one
 * simulated member, timed by the communication model for their whole
 * communicator (laid out as Megatron lays ranks out: tp, cp, dp, pp from
 * the innermost). model_config.c holds the configuration (flags, JSON
 * files, presets).
 */
#ifndef SC_PIPELINE_MODEL_H
#define SC_PIPELINE_MODEL_H

#include "../models/comm.h"
#include "../models/transformer.h"
#include "replay.h"

struct sc_model_config {
    sc__tf_config c;
    uint32_t set_mask; /* unused by the run; which keys were given */
    char schedule[16];
};

/* What a calibration changed, for the report. */
typedef struct sc__model_calib {
    bool host, gemm;
    double host_us, gemm_eff;
    char trace[256];
} sc__model_calib;

struct sc_model {
    sc__tf_config c;
    sc_replay *r;
    sc__roofline roof;
    sc__comm_model cm;
    sc_model_summary sum;
    sc__tf_memory *mem; /* per stage */
    double *bubble;     /* per stage: idle share of its compute stream */
    sc__model_calib calib;
};

typedef struct sc__sweep_row {
    char desc[160];
    sc_model_summary sum;
} sc__sweep_row;
typedef sc__sweep_row sweep_row;

struct sc_model_sweep {
    sweep_row *rows;
    size_t nrows, tried, not_fitting, invalid;
    double seconds;
};

/* Builds, simulates and summarises (or with build_only, stops after the
 * summary figures that need no simulation: memory, FLOPs). */
sc_status sc__model_run(const sc__tf_config *c, const sc__model_calib *calib, sc_model **out, sc_error *err);

#endif
