/*
 * stepcast.h - the one public header of libstepcast.
 *
 * stepcast turns PyTorch profiler (Kineto) traces of distributed training into
 * an execution graph, replays it in a discrete-event simulator and predicts the
 * step time of configurations nobody has run yet.
 *
 * Conventions (as in yyjson and libuv):
 *   - every public name starts with sc_ (internal ones with sc__);
 *   - handles are opaque; whoever creates one frees it with the matching _free;
 *   - fallible functions return an sc_status and fill an sc_error (message,
 *     file, byte offset) supplied by the caller; the library never prints to
 *     the terminal and never exits;
 *   - times are int64 nanoseconds unless a name says otherwise.
 *
 * Sections: 1 errors, 2 traces, 3 trace sets, 4 reports.
 */
#ifndef STEPCAST_H
#define STEPCAST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SC_API __attribute__((visibility("default")))
#else
#define SC_API
#endif

#define SC_VERSION_MAJOR 0
#define SC_VERSION_MINOR 1
#define SC_VERSION_PATCH 0
#define SC_VERSION_STRING "0.1.0"

SC_API const char *sc_version(void);

/* ---------------------------------------------------------------- 1 errors */

typedef enum sc_status {
    SC_OK = 0,
    SC_E_IO,       /* a file could not be opened or read */
    SC_E_PARSE,    /* the bytes are not valid JSON / gzip / protobuf */
    SC_E_FORMAT,   /* valid syntax, but not the trace format we expect */
    SC_E_LIMIT,    /* an input exceeds a guard (string length, nesting, memory) */
    SC_E_NOMEM,    /* an allocation failed */
    SC_E_USAGE,    /* the caller passed bad arguments */
    SC_E_GRAPH,    /* the traces cannot form a consistent graph */
    SC_E_INTERNAL  /* a bug in stepcast */
} sc_status;

#define SC_NO_OFFSET UINT64_MAX

typedef struct sc_error {
    sc_status status;
    uint64_t offset;    /* byte offset into the (decompressed) input, or SC_NO_OFFSET */
    uint32_t line;      /* 1-based line of the offset, 0 when unknown */
    uint32_t column;    /* 1-based column of the offset, 0 when unknown */
    char file[256];     /* the input the error is about, "" when none */
    char message[512];  /* one line, no trailing newline */
} sc_error;

/* A short name for a status ("parse error", ...). */
SC_API const char *sc_status_name(sc_status status);

/* Formats an error as "file:line:column: message" (or "file: offset N: ...")
 * into buf; returns buf. */
SC_API const char *sc_error_format(const sc_error *err, char *buf, size_t size);

/* ---------------------------------------------------------------- 2 traces */

typedef struct sc_trace sc_trace;

typedef struct sc_load_options {
    /* Guards against hostile input; 0 means the default. */
    uint64_t max_string_bytes; /* default 256 MiB */
    uint32_t max_depth;        /* default 512 */
    uint64_t max_event_bytes;  /* one traceEvents element; default 1 GiB */
    /* Initial size of the read window; 0 means 256 KiB. Tests set a tiny one
     * (e.g. 64) so that every unit straddles a refill. */
    uint32_t window_bytes;
    /* Threads a load may use (issue 5, `-j N`); 0 means $STEPCAST_THREADS,
     * else every online core. sc_traceset_load reads files in parallel, one
     * per thread, and gives threads left over to the files; sc_trace_load
     * reads a plain file of 32 MiB or more in slices on that many threads,
     * and a gzip regular file by inflating it on one more thread while
     * they parse it (the trace is the same as with 1). A trace set's graph
     * (replay, graph, export) is built with the same cap. Set 1 to keep the
     * work on the calling thread. */
    uint32_t threads;
    /* Memory the readers may hold for the whole load (issue 6); a trace set
     * gives each file an equal share. Over it, loading fails with SC_E_LIMIT
     * instead of swapping. A trace set keeps it for the job built from it
     * (issue 5): the graph (with the traces not yet released) and a replay's
     * simulation fail with SC_E_LIMIT, before they grow past it, too.
     * 0: $STEPCAST_MAX_MEMORY, else 80% of RAM. */
    uint64_t max_memory_bytes;
} sc_load_options;

/* Reads one Kineto trace (.json or .json.gz, detected by content). */
SC_API sc_status sc_trace_load(const char *path, const sc_load_options *opts,
                               sc_trace **out, sc_error *err);

/* Reads a Kineto trace from memory; name is used in error messages. */
SC_API sc_status sc_trace_load_buffer(const void *data, size_t size, const char *name,
                                      const sc_load_options *opts, sc_trace **out,
                                      sc_error *err);
SC_API void sc_trace_free(sc_trace *trace);

SC_API const char *sc_trace_path(const sc_trace *trace);
SC_API int64_t sc_trace_rank(const sc_trace *trace);       /* -1 when unknown */
SC_API int64_t sc_trace_world_size(const sc_trace *trace); /* -1 when unknown */
SC_API size_t sc_trace_event_count(const sc_trace *trace);
/* Bytes the trace holds in memory (arenas, arrays, strings). */
SC_API size_t sc_trace_memory(const sc_trace *trace);

/* --------------------------------------------------------------- 3 trace sets */

/* A job: one trace per rank, ordered by rank. */
typedef struct sc_traceset sc_traceset;

/* Each path is a trace file or a directory (every .json/.json.gz in it).
 * Ranks come from distributedInfo.rank, else the file name (rank-N, rank_N,
 * workerN), else argument order; each fallback adds a warning. */
SC_API sc_status sc_traceset_load(const char *const *paths, size_t npaths,
                                  const sc_load_options *opts, sc_traceset **out,
                                  sc_error *err);
SC_API void sc_traceset_free(sc_traceset *set);
SC_API size_t sc_traceset_count(const sc_traceset *set);
SC_API const sc_trace *sc_traceset_trace(const sc_traceset *set, size_t i);
SC_API size_t sc_traceset_warning_count(const sc_traceset *set);
SC_API const char *sc_traceset_warning(const sc_traceset *set, size_t i);

/* --------------------------------------------------------------- 4 reports */

/* `stepcast info`: per-rank summary, as text or JSON, written to out. */
SC_API sc_status sc_report_info(const sc_traceset *set, FILE *out, int json, sc_error *err);
/* sc_traceset_load for sc_report_info alone, in bounded memory: each rank's
 * report is worked out as soon as its file is read, and its events are then
 * freed. A job then needs the memory of the files read at once (one per
 * thread), not of all its files, and each file gets the memory budget
 * divided by the threads instead of by the files. The set's traces have no
 * events: it is for sc_report_info and the accessors above only. */
SC_API sc_status sc_traceset_load_for_info(const char *const *paths, size_t npaths,
                                           const sc_load_options *opts, sc_traceset **out,
                                           sc_error *err);

/* -------------------------------------------------- 5 safe output (issue 6) */

/* An output file written to a temporary name in the same directory and
 * renamed into place on commit, so a failure never leaves a partial file.
 * An existing file is replaced only with SC_OUTPUT_FORCE (else open fails
 * with SC_E_USAGE: "exists; use --force"). The path "-" is stdout. */
typedef struct sc_output sc_output;
#define SC_OUTPUT_FORCE 1u

SC_API sc_status sc_output_open(const char *path, unsigned flags, sc_output **out,
                                sc_error *err);
/* The stream to write to (valid until commit or abort). */
SC_API FILE *sc_output_file(sc_output *o);
/* Flushes, syncs and renames into place; frees o, also on failure (then the
 * temporary file is removed and the final name is untouched). */
SC_API sc_status sc_output_commit(sc_output *o, sc_error *err);
/* Discards everything written; removes the temporary file; frees o. */
SC_API void sc_output_abort(sc_output *o);

/* Parses a byte count with an optional K/M/G/T suffix (powers of 1024;
 * "512M", "4GiB", "100000"): SC_OK, or SC_E_USAGE for anything else,
 * zero, or a value that overflows. For --max-memory. */
SC_API sc_status sc_parse_bytes(const char *text, uint64_t *out);

/* ------------------------------------------- synthetic traces (issue 5) */

/* `stepcast synth`: Kineto traces for `ranks` ranks modelled on a real
 * template trace (its step, nesting, launches, flows, streams, event
 * record/wait pattern and per-layer repetition), with per-rank jitter and
 * NCCL collectives consistent across ranks (one communicator of all ranks;
 * a collective ends at the latest arrival plus its transfer time). Writes
 * out_dir/rank-NNNNN.json[.gz]; byte-identical for the same options. */
typedef struct sc_synth_options {
    const char *template_path; /* a Kineto trace to model on (required) */
    uint32_t ranks;            /* >= 1 */
    uint32_t iterations;       /* ProfilerSteps per rank; 0 means 1 */
    uint32_t layers;           /* repeated layers per step; 0: as in the template */
    uint64_t seed;
    int gzip;                  /* write .json.gz */
    int gzip_level;            /* 1-9; 0 means 1 (fast) */
    int force;                 /* replace existing files */
} sc_synth_options;

SC_API sc_status sc_synth(const sc_synth_options *opts, const char *out_dir, sc_error *err);

/* ------------------------------------------- execution graph (issue 3) */

/* `stepcast graph`: build the execution graph of one iteration of every
 * rank (CPU tasks with gaps, GPU tasks per stream, launch / stream /
 * cross-stream / cross-thread edges, syncs, collectives matched across
 * ranks) and describe it: per rank task counts by kind and edge counts by
 * family; cross-rank groups; the self-check of the cross-stream inference
 * when a trace carries cuda_sync events; warnings (e.g. ranks that disagree
 * on their number of collectives). Text or JSON to out; deterministic. */
typedef struct sc_graph_options {
    int64_t iteration;  /* ProfilerStep#N; -1: the last complete one */
    int hide_cuda_sync; /* 1: ignore cuda_sync events and infer cross-stream edges */
} sc_graph_options;
#define SC_GRAPH_OPTIONS_INIT {-1, 0}

SC_API sc_status sc_report_graph(const sc_traceset *set, const sc_graph_options *opts, FILE *out,
                                 int json, sc_error *err);
/* The graph itself in Graphviz DOT (one cluster per processor, edges
 * coloured by family, dashed lines between members of a cross-rank group);
 * meant for small traces. */
SC_API sc_status sc_report_graph_dot(const sc_traceset *set, const sc_graph_options *opts, FILE *out,
                                     sc_error *err);

/* ---------------------------------------------------- replay (issue 4) */

/* Where a replay's time went, in wall seconds (sc_replay_options.timings):
 * the figures behind `stepcast replay --timings`. */
typedef struct sc_replay_timings {
    double build;     /* the graph: every rank's tasks and edges, collectives matched, checked */
    double calibrate; /* contradicted edges pruned; launch latencies, sync costs, backlogs,
                         transfers; --scale */
    double simulate;  /* the simulator: its state set up, then the event loop */
    double simulate_setup; /* of simulate, the set-up: arrays allocated and paged in, tasks
                              ordered (on large jobs bound by fresh memory, not the loop) */
    double summarise; /* per-rank breakdowns and the critical path */
    double write;     /* the report, and the Chrome timeline when asked for */
    uint64_t tasks;   /* tasks simulated */
} sc_replay_timings;

typedef struct sc_replay_options {
    int64_t iteration;         /* ProfilerStep#N to replay; -1: the last complete one */
    int comm_traced;           /* 1: each rank's traced NCCL durations, no coupling */
    const char *const *scales; /* "CLASS=FACTOR": compute, comm, cpu, gemm, attention, gpu, */
    size_t nscales;            /* or a kernel-name substring; applied in order */
    const char *chrome_path;   /* write the simulated + measured timeline here (NULL: no) */
    int force;                 /* replace an existing chrome_path */
    int release_traces;        /* 1: free each trace's events once its part of the graph is
                                  built (the set then serves only sc_traceset_free): traces
                                  and graph are never all in memory (issue 5) */
    sc_replay_timings *timings; /* filled in when not NULL; a replay that fails before its
                                   report (bad --scale, build, calibration, simulation,
                                   summary) leaves all 0 but the build's time, if it ran */
} sc_replay_options;
#define SC_REPLAY_OPTIONS_INIT {-1, 0, NULL, 0, NULL, 0, 0, NULL}

/* `stepcast replay`: rebuild one iteration of every rank as an execution
 * graph, simulate it (collectives coupled across ranks unless comm_traced)
 * and print per rank the measured and simulated step time, the error, a
 * breakdown (exposed compute / exposed communication / overlapped / idle,
 * SM-busy per 1 ms window) and the critical path. Text or JSON to out;
 * byte-identical for identical inputs. */
SC_API sc_status sc_report_replay(const sc_traceset *set, const sc_replay_options *opts, FILE *out,
                                  int json, sc_error *err);

/* ------------------------------------ Chakra and Execution Traces (issue 7) */

/* Trace sets also hold Chakra execution traces (.et / .et.gz, one file per
 * rank named <prefix>.<rank>.et): every command that builds a graph takes
 * them. `stepcast export --chakra` goes the other way. */
#define SC_EXPORT_NO_CPU 1u   /* drop CPU operator tasks, keep runtime calls */
#define SC_EXPORT_GPU_ONLY 2u /* keep only GPU tasks (kernels, copies, communication) */
#define SC_EXPORT_FORCE 4u    /* replace existing files */

typedef struct sc_export_stats {
    uint64_t files, nodes, dependencies, bytes;
    uint64_t graph_tasks; /* tasks in the graph before any were dropped */
} sc_export_stats;

/* Builds the graph of the set (iteration: ProfilerStep number, -1 = last
 * complete one) and writes prefix.<rank>.et per rank: a GlobalMetadata,
 * then COMP / COMM_COLL / COMM_SEND / COMM_RECV nodes with durations and
 * dependencies (each file via a temporary name and a rename). stats may be
 * NULL. */
SC_API sc_status sc_export_chakra(const sc_traceset *set, const char *prefix, unsigned flags,
                                  int64_t iteration, sc_export_stats *stats, sc_error *err);

/* A PyTorch Execution Trace (host graph JSON, schema 1.0.1 - 1.1.x) and its
 * link with the Kineto trace of the same rank. */
typedef struct sc_et sc_et;
SC_API sc_status sc_et_load(const char *path, sc_et **out, sc_error *err);
SC_API void sc_et_free(sc_et *et);
/* `stepcast et`: nodes, operators with shapes, tensor data dependencies and,
 * with a Kineto trace (may be NULL), how many of its CPU ops link to an ET
 * node by record-function id (or by order as a fallback). */
SC_API sc_status sc_report_et(const sc_et *et, const sc_trace *kineto, FILE *out, int json,
                              sc_error *err);
/* `stepcast et --ops N`: the first max linked operators (Kineto file
 * order): Kineto start and duration, ET id, rf_id, input shapes and types. */
SC_API sc_status sc_report_et_ops(const sc_et *et, const sc_trace *kineto, size_t max, FILE *out,
                                  int json, sc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* STEPCAST_H */
