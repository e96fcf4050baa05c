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

/* What --calibrate measured (model_calibrate.c), for the run and the
 * report; a flag false: the trace did not give it, the profile's stands. */
typedef struct sc__model_calib {
    bool host, gemm, mem, gap;
    size_t ranks;                 /* Kineto traces measured */
    double host_us;               /* host time per modelled launch */
    double host_per_traced_us;    /* CPU time of the launching threads per traced launch */
    double launch_api_us;         /* the launch calls' own time per launch */
    double launches_per_kernel;   /* traced launches / the model program's for the trace's layers */
    uint64_t traced_launches, modelled_launches;
    uint32_t traced_layers;
    double traced_step_ms, traced_gpu_ms, traced_host_ms; /* per rank */
    double gemm_work;             /* sum of 2 b m n k / shape factor */
    int64_t gemm_ns;
    uint64_t gemm_ops;
    double mem_bytes;
    int64_t mem_ns;
    uint64_t mem_ops;
    int64_t dispatch_gap_ns, launch_latency_ns;
    sc__comm_sample *samples;     /* the trace's sized collectives (owned) */
    size_t nsamples;
    char trace[256];
} sc__model_calib;

/* Measures k from the traces at paths (k's samples freed first). */
sc_status sc__model_calibrate(const char *const *paths, size_t n, sc__model_calib *k, sc_error *err);
void sc__model_calib_free(sc__model_calib *k);
/* A deep copy (false on out-of-memory). */
bool sc__model_calib_copy(sc__model_calib *dst, const sc__model_calib *src);

struct sc_model_config {
    sc__tf_config c;
    bool calibrated;
    sc__model_calib calib;
    uint32_t set_mask; /* unused by the run; which keys were given */
    char schedule[16];
};

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
