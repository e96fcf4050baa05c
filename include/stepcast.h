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
 *   - stages hand back data (a trace set, an info summary, a graph, a
 *     replay) with accessors; the functions that print (*_write, *_export)
 *     only format what a stage returned, so a script or a binding can read
 *     the same figures as the command-line tool.
 *
 * Sections: 1 errors, 2 traces, 3 trace sets, 4 info, 5 the execution
 * graph, 6 replay, 7 Chakra and Execution Traces, 8 outputs, 9 synthetic
 * traces, 10 communication, 11 diff.
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

/* Progress of a long job, for a caller that shows it (the CLI's progress
 * line): a load's files and bytes, then the graph's ranks, then the
 * simulation's tasks. Counts only grow within a stage; a total of 0 is
 * unknown. */
typedef struct sc_progress {
    const char *stage;                /* "read", "build" or "simulate" */
    uint64_t files_done, files_total; /* read: files finished, of the load's */
    uint64_t bytes_read;              /* read: decompressed bytes parsed so far, all files */
    uint64_t ranks_done, ranks_total; /* build: ranks whose part of the graph is built */
    uint64_t tasks_done, tasks_total; /* simulate: tasks finished */
    double elapsed_s;                 /* since the load began */
} sc_progress;
/* Called from whichever library thread moved on, never two calls at once
 * (the library serialises them), at most every 50 ms or so, and once at
 * the start and once at the end of each stage. It must return quickly
 * and must not call back into the library. */
typedef void (*sc_progress_fn)(void *user, const sc_progress *p);

/* How to load traces. Zero-initialise and set what you need: every 0 means
 * the default. */
typedef struct sc_load_options {
    /* Guards against hostile input. */
    uint64_t max_string_bytes; /* default 256 MiB */
    uint32_t max_depth;        /* default 512 */
    uint64_t max_event_bytes;  /* one traceEvents element; default 1 GiB */
    /* Initial size of the read window; 0 means 256 KiB. Tests set a tiny one
     * (e.g. 64) so that every unit straddles a refill. */
    uint32_t window_bytes;
    /* Threads a load may use; 0 means $STEPCAST_THREADS, else every online
     * core. sc_traceset_load reads files in parallel, one per thread, and
     * gives threads left over to the files; sc_trace_load reads a plain
     * file of 32 MiB or more in slices on that many threads, and a gzip
     * regular file by inflating it on one more thread while they parse it
     * (the trace is the same as with 1). A trace set's graph is built with
     * the same cap. Set 1 to keep the work on the calling thread. */
    uint32_t threads;
    /* Memory the whole job may take; a trace set gives each file an equal
     * share while loading. Over it, loading fails with SC_E_LIMIT instead of
     * swapping. A trace set keeps it for the job built from it: the graph
     * (with the traces not yet released) and a replay's simulation fail
     * with SC_E_LIMIT, before they grow past it, too. 0: $STEPCAST_MAX_MEMORY,
     * else 80% of RAM. */
    uint64_t max_memory_bytes;
    /* Progress reports (see sc_progress_fn); NULL: none. A trace set keeps
     * them for the graph built from it (sc_graph_build, sc_replay_run,
     * sc_predict_run report "build" and "simulate" to the same callback);
     * the set must then outlive nothing but user. */
    sc_progress_fn progress;
    void *progress_user;
} sc_load_options;

/* Reads one Kineto trace (.json or .json.gz, detected by content). opts may
 * be NULL (every default). */
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

/* A job: one trace per rank, ordered by rank. Kineto traces and Chakra
 * execution traces (.et / .et.gz, one file per rank named
 * <prefix>.<rank>.et) are both accepted, told apart by content. */
typedef struct sc_traceset sc_traceset;

/* Each path is a trace file or a directory (every .json/.json.gz/.et/.et.gz
 * under it). Ranks come from distributedInfo.rank, else the file name
 * (rank-N, rank_N, workerN), else argument order; each fallback adds a
 * warning. PyTorch Execution Traces met in a directory are skipped with a
 * warning. */
SC_API sc_status sc_traceset_load(const char *const *paths, size_t npaths,
                                  const sc_load_options *opts, sc_traceset **out,
                                  sc_error *err);
SC_API void sc_traceset_free(sc_traceset *set);
SC_API size_t sc_traceset_count(const sc_traceset *set);
SC_API const sc_trace *sc_traceset_trace(const sc_traceset *set, size_t i);
SC_API size_t sc_traceset_warning_count(const sc_traceset *set);
SC_API const char *sc_traceset_warning(const sc_traceset *set, size_t i);
/* Warnings grouped by kind (the sentence they share, whatever file or rank
 * they name: eight "skipped (PyTorch Execution Trace ...)" lines are one
 * kind), in the order each kind first appears, for a report that prints a
 * kind once with its count. */
typedef struct sc_warning_group {
    const char *example; /* the kind's first warning; lives as long as its owner */
    size_t first;        /* its index among the warnings */
    size_t count;        /* warnings of the kind (>= 1) */
} sc_warning_group;
SC_API size_t sc_traceset_warning_group_count(const sc_traceset *set);
/* SC_E_USAGE when i is out of range. */
SC_API sc_status sc_traceset_warning_group_at(const sc_traceset *set, size_t i, sc_warning_group *out,
                                              sc_error *err);

/* --------------------------------------------------------------- 4 info */

/* `stepcast info`: what each rank's trace holds. */
typedef struct sc_info sc_info;

/* Loads the paths as sc_traceset_load does, in bounded memory: each rank is
 * summed up as soon as its file is read, and its events are then freed. A
 * job then needs the memory of the files read at once (one per thread), not
 * of all its files, and each file gets the memory budget divided by the
 * threads instead of by the files. */
SC_API sc_status sc_info_load(const char *const *paths, size_t npaths, const sc_load_options *opts,
                              sc_info **out, sc_error *err);
/* The same summary of a set already loaded (set keeps its events). */
SC_API sc_status sc_info_of_set(const sc_traceset *set, sc_info **out, sc_error *err);
SC_API void sc_info_free(sc_info *info);

/* One rank's summary; strings live as long as the sc_info. Counts that do
 * not apply to its format are 0. */
typedef struct sc_info_rank {
    const char *file;
    const char *format;     /* "kineto" or "chakra" */
    int64_t rank, world_size; /* -1 when unknown */
    const char *gpu;        /* "" when unknown */
    uint64_t bytes;         /* decompressed input bytes */
    uint64_t events;        /* Kineto events, or Chakra nodes */
    uint64_t kernels;       /* Kineto kernels */
    uint64_t collectives;   /* NCCL kernels, or Chakra GPU collective nodes */
    int64_t gpu_busy_ns;    /* union of kernel/memcpy/memset intervals */
    size_t iterations;      /* ProfilerStep#N annotations */
} sc_info_rank;

SC_API size_t sc_info_rank_count(const sc_info *info);
/* SC_E_USAGE when i is out of range. */
SC_API sc_status sc_info_rank_at(const sc_info *info, size_t i, sc_info_rank *out, sc_error *err);
SC_API size_t sc_info_warning_count(const sc_info *info);
SC_API const char *sc_info_warning(const sc_info *info, size_t i);
SC_API size_t sc_info_warning_group_count(const sc_info *info); /* as sc_traceset_warning_group_* */
SC_API sc_status sc_info_warning_group_at(const sc_info *info, size_t i, sc_warning_group *out, sc_error *err);
/* The report: per rank file, rank, world size, GPU, events by category,
 * kernels per stream, NCCL collectives by kind, iterations, GPU busy time;
 * text for people or JSON for scripts; deterministic. */
SC_API sc_status sc_info_write(const sc_info *info, FILE *out, int json, sc_error *err);

/* --------------------------------------------------- 5 the execution graph */

/* The execution graph of one iteration of every rank: CPU tasks with gaps,
 * GPU tasks per stream, launch / stream / cross-stream / cross-thread edges,
 * syncs, collectives matched across ranks. */
typedef struct sc_graph sc_graph;

typedef struct sc_graph_options {
    int64_t iteration;  /* ProfilerStep#N; -1: the last complete one. A Chakra
                           set holds one window: asking it for one is SC_E_USAGE */
    int hide_cuda_sync; /* 1: ignore cuda_sync events and infer cross-stream edges */
    int release_traces; /* 1: free each trace's events once its part of the graph is
                           built (the set then serves only sc_traceset_free):
                           traces and graph are never all in memory */
} sc_graph_options;
#define SC_GRAPH_OPTIONS_INIT {.iteration = -1, .hide_cuda_sync = 0, .release_traces = 0}

/* Builds the graph of the set (opts may be NULL: the defaults); the set's
 * memory budget and thread cap apply. The set must outlive the call only. */
SC_API sc_status sc_graph_build(const sc_traceset *set, const sc_graph_options *opts, sc_graph **out,
                                sc_error *err);
SC_API void sc_graph_free(sc_graph *graph);

/* One rank of the graph; strings live as long as the sc_graph. */
typedef struct sc_graph_rank {
    int64_t rank;
    const char *file;      /* "" for none */
    const char *iteration; /* "ProfilerStep#N", or "" for a whole trace */
    int64_t measured_step_ns;
    uint32_t threads, streams, operators, tasks;
} sc_graph_rank;

SC_API size_t sc_graph_rank_count(const sc_graph *graph);
SC_API sc_status sc_graph_rank_at(const sc_graph *graph, size_t i, sc_graph_rank *out, sc_error *err);
SC_API size_t sc_graph_task_count(const sc_graph *graph);
SC_API uint64_t sc_graph_edge_count(const sc_graph *graph);
SC_API size_t sc_graph_group_count(const sc_graph *graph); /* collectives and p2p pairs */
/* The warnings of the load and of the build (collective mismatches, ...). */
SC_API size_t sc_graph_warning_count(const sc_graph *graph);
SC_API const char *sc_graph_warning(const sc_graph *graph, size_t i);

/* `stepcast graph`: per rank task counts by kind and edge counts by family;
 * cross-rank groups; the self-check of the cross-stream inference when a
 * trace carries cuda_sync events; warnings. Text or JSON; deterministic. */
SC_API sc_status sc_graph_write(const sc_graph *graph, FILE *out, int json, sc_error *err);
/* The graph itself in Graphviz DOT (one cluster per processor, edges
 * coloured by family, dashed lines between members of a cross-rank group);
 * meant for small traces. */
SC_API sc_status sc_graph_write_dot(const sc_graph *graph, FILE *out, sc_error *err);

/* ---------------------------------------------------------------- 6 replay */

/* A simulated iteration of every rank at once, measured against the trace. */
typedef struct sc_replay sc_replay;

/* How a replay times collectives and point-to-point transfers. */
typedef enum sc_comm_mode {
    SC_COMM_COUPLED = 0, /* every member ends at the last arrival plus the transfer
                            time the trace measured (the last arrival's kernel) */
    SC_COMM_TRACED,      /* each rank's traced NCCL durations, no coupling */
    SC_COMM_MODEL,       /* coupled, the transfer time from the communication model
                            fitted to the trace's own collectives (sized ones) */
} sc_comm_mode;

/* Whether a replay also checks that its step responds to its inputs (see
 * sc_replay_sensitivity): three more simulations of the same graph. */
typedef enum sc_sensitivity_mode {
    SC_SENSITIVITY_AUTO = 0, /* on graphs of at most sensitivity_max_tasks tasks, and within
                                the memory budget */
    SC_SENSITIVITY_ON,       /* always (a graph over the memory budget fails with SC_E_LIMIT) */
    SC_SENSITIVITY_OFF,
} sc_sensitivity_mode;
/* The 8-rank Megatron example has 0.15 M tasks, the bench's 1,024
 * synthetic ranks 25 M (a 20 s replay that the check would make half as
 * long again). */
#define SC_SENSITIVITY_AUTO_TASKS 4000000u

/* Which breakdowns a replay reports besides its own (the simulated step's,
 * in sc_replay_rank). */
typedef enum sc_breakdown_kind {
    SC_BREAKDOWN_STEPCAST = 0, /* stepcast's only */
    SC_BREAKDOWN_HTA,          /* also HTA's temporal breakdown of each measured trace
                                  (sc_hta_breakdown) */
} sc_breakdown_kind;

typedef struct sc_replay_options {
    sc_graph_options graph;    /* which iteration, and how the graph is built */
    sc_comm_mode comm;
    const char *const *scales; /* "CLASS=FACTOR": compute, comm, cpu, gemm, attention, gpu, */
    size_t nscales;            /* or a kernel-name substring; applied in order */
    sc_sensitivity_mode sensitivity;
    uint64_t sensitivity_max_tasks; /* AUTO's limit; 0: SC_SENSITIVITY_AUTO_TASKS */
    sc_breakdown_kind breakdown;
} sc_replay_options;
#define SC_REPLAY_OPTIONS_INIT                                                                   \
    {.graph = SC_GRAPH_OPTIONS_INIT, .comm = SC_COMM_COUPLED, .scales = NULL, .nscales = 0,      \
     .sensitivity = SC_SENSITIVITY_AUTO, .sensitivity_max_tasks = 0, .breakdown = SC_BREAKDOWN_STEPCAST}

/* Rebuilds one iteration of every rank as an execution graph, calibrates
 * it from the same traces, applies the --scale rules and simulates it.
 * The result is byte-for-byte the same for identical inputs. */
SC_API sc_status sc_replay_run(const sc_traceset *set, const sc_replay_options *opts, sc_replay **out,
                               sc_error *err);
SC_API void sc_replay_free(sc_replay *replay);

/* One end of a rank's measured step: the traced event whose start opens it
 * (the ProfilerStep#N annotation, or with none the window's first task) or
 * whose end closes it (the last task the step caused, CPU or GPU). */
typedef struct sc_step_mark {
    const char *event; /* its name ("ProfilerStep#3", a kernel's...); NULL: no measured step */
    const char *kind;  /* "step_annotation", or the task's kind: "cpu", "launch", "sync",
                          "kernel", "memcpy", "collective"... */
    int on_stream;     /* 1: it ran on a GPU stream, 0: on a CPU thread */
    int64_t on;        /* that stream's or thread's id */
} sc_step_mark;

/* One rank: measured and simulated step, and where the simulated time went
 * from the GPU's point of view. */
typedef struct sc_replay_rank {
    int64_t rank;
    int64_t measured_ns;       /* the traced step; 0 when the input has none (Chakra) */
    int64_t simulated_ns;
    int64_t launch_latency_ns; /* calibrated */
    int64_t dispatch_gap_ns;   /* calibrated: between queued tasks of a stream */
    int64_t start_offset_ns;   /* when the rank entered the step, after the first */
    int64_t exposed_compute_ns, exposed_comm_ns, overlapped_ns, idle_ns;
    const double *sm_busy;     /* share of each 1 ms window with a busy stream */
    size_t sm_windows;
    sc_step_mark opens, closes; /* what the measured step is measured from */
    int64_t after_annotation_ns; /* how far past the annotation's end the step closes
                                    (a GPU tail); -1 without an annotation */
    const char *no_error_because; /* why the measured and simulated steps cannot be
                                     compared (no error figure); NULL when they can */
} sc_replay_rank;

/* The job's step: its slowest rank, measured and simulated. */
typedef struct sc_replay_step {
    int64_t measured_ns, simulated_ns;
    size_t slowest_measured, slowest_simulated; /* rank indices */
    const char *no_error_because; /* a rank's reason ("rank N: ..." with several); NULL when
                                     every rank's step can be compared */
} sc_replay_step;

/* A named amount on the critical path, sorted by time, then count, then name. */
typedef struct sc_cp_item {
    const char *name;
    int64_t ns;
    uint64_t count;
} sc_cp_item;

typedef enum sc_cp_view {
    SC_CP_BY_CLASS = 0, /* cpu, launch, gemm, communication, ... */
    SC_CP_BY_OPERATOR,  /* the 15 operators with the most time */
    SC_CP_BY_EDGE,      /* edge families and the simulator's own waits */
} sc_cp_view;

typedef struct sc_critical_path {
    int64_t length_ns; /* end of the last task of the slowest rank */
    uint64_t tasks;    /* tasks on the path */
    int64_t last_rank; /* the job rank it ends on, -1 when none */
    int host_only;     /* 1: no GPU task on it (a host-bound step: the replay reproduces
                          the host's traced time, which says nothing of the GPU model) */
} sc_critical_path;

/* Where each stage's wall time went (the figures behind `--timings`). */
typedef struct sc_replay_timings {
    double build;     /* the graph: every rank's tasks and edges, collectives matched, checked */
    double calibrate; /* contradicted edges pruned; launch latencies, sync costs, backlogs,
                         transfers; --scale */
    double simulate;  /* the simulator: its state set up, then the event loop */
    double simulate_setup; /* of simulate, the set-up: arrays allocated and paged in, tasks
                              ordered (on large jobs bound by fresh memory, not the loop) */
    double summarise; /* per-rank breakdowns and the critical path */
    uint64_t tasks;   /* tasks simulated */
    double sensitivity; /* the sensitivity check's three simulations (0 when not run) */
    double hta;       /* HTA's breakdown of the measured traces (0 when not asked) */
} sc_replay_timings;

/* The ProfilerStep numbers that every Kineto trace of the set holds,
 * ascending (*numbers: the caller frees it with free(); none when a trace
 * has no annotation, or for Chakra files): what `replay --all-iterations`
 * replays, one sc_replay_run with graph.iteration = N each. */
SC_API sc_status sc_replay_iterations(const sc_traceset *set, int64_t **numbers, size_t *count, sc_error *err);

/* `replay --all-iterations`: one row per iteration, written as each
 * iteration's replay finishes (table accumulates what the closing summary
 * says; zero it before the first row), then the summary. Text or JSON
 * ({"iterations":[{"iteration":N,"step":{...},"ranks":[...]}...],
 * "summary":{...}}); iteration -1 is a whole trace without annotations. */
typedef struct sc_iterations_table {
    size_t rows, with_error;
    double sum_abs_error_pct, max_abs_error_pct;
} sc_iterations_table;
SC_API sc_status sc_replay_write_iteration(const sc_replay *replay, int64_t iteration, sc_iterations_table *table,
                                           FILE *out, int json, sc_error *err);
SC_API sc_status sc_replay_write_iterations_end(const sc_iterations_table *table, FILE *out, int json,
                                                sc_error *err);

SC_API size_t sc_replay_rank_count(const sc_replay *replay);
SC_API sc_status sc_replay_rank_at(const sc_replay *replay, size_t i, sc_replay_rank *out,
                                   sc_error *err);
SC_API sc_replay_step sc_replay_get_step(const sc_replay *replay);
SC_API sc_critical_path sc_replay_get_critical_path(const sc_replay *replay);
/* The items of one view of the critical path; *items lives as long as the
 * replay. Returns their count. */
SC_API size_t sc_replay_cp_items(const sc_replay *replay, sc_cp_view view, const sc_cp_item **items);
SC_API int sc_replay_coupled(const sc_replay *replay);
SC_API size_t sc_replay_task_count(const sc_replay *replay);
/* Edges of one family name ("cross_stream", ...) dropped because the trace
 * contradicts them (the destination started before the source ended). */
SC_API uint64_t sc_replay_edges_dropped(const sc_replay *replay, const char *family);
SC_API size_t sc_replay_warning_count(const sc_replay *replay);
SC_API const char *sc_replay_warning(const sc_replay *replay, size_t i);
SC_API sc_replay_timings sc_replay_get_timings(const sc_replay *replay);

/* The check that a replay is not an echo of its trace: the simulated step
 * again with every GPU compute task (the --scale class `compute`), every
 * CPU task with the gap before it (`cpu`), and every collective and p2p
 * transfer (`comm`) twice as long, one class at a time. A simulator that
 * placed tasks at their measured times would not move; a step bound by one
 * class moves by about that class's share. bound_by names the class whose
 * doubling moves the step most ("gpu", "cpu", "communication"), or "mixed"
 * when the runner-up moves it by at least SC_SENSITIVITY_MIXED of as much,
 * or "none" when no doubling moves it at all. */
#define SC_SENSITIVITY_MIXED 0.75
typedef struct sc_replay_sensitivity {
    int computed;              /* 0: not run; why_not says why */
    const char *why_not;       /* "" when computed */
    int64_t step_ns;           /* the simulated step (the job's: its slowest rank) */
    int64_t gpu_x2_ns, cpu_x2_ns, comm_x2_ns; /* the job's step with that class doubled */
    double gpu_x2, cpu_x2, comm_x2;           /* each over step_ns (1: did not move) */
    const char *bound_by;      /* "gpu", "cpu", "communication", "mixed" or "none"; "" when not run */
} sc_replay_sensitivity;
SC_API sc_replay_sensitivity sc_replay_get_sensitivity(const sc_replay *replay);

/* HTA's (HolisticTraceAnalysis) temporal breakdown of one rank's measured
 * trace, computed as HTA's get_temporal_breakdown does, so that the figures
 * match its own: its window is the rank's whole trace, from the first GPU
 * op's start to the last one's end (HTA's kernel_time), not an iteration;
 * GPU ops are the events with an args.stream (kernels, memcpy, memset);
 * compute is the union of the ops that are not NCCL (^nccl.*Kernel), not
 * Memcpy/Memset and not a *Sync; idle is the window minus the union of all
 * ops; non-compute is the rest (HTA reports no finer split), which this
 * splits into communication (NCCL ops under no compute op, what TraceLens
 * calls exposed communication), memory (Memcpy/Memset/dma under neither)
 * and other. As HTA does, a trace with more than one ProfilerStep keeps
 * only the GPU ops launched before its last step begins, and a trace with
 * sub-microsecond timestamps has each op rounded inward to whole us. */
typedef struct sc_hta_breakdown {
    int64_t rank;
    uint64_t gpu_ops;          /* ops counted (0: a trace without GPU ops, all zero) */
    int64_t window_start_ns, window_end_ns;
    int64_t compute_ns, non_compute_ns, idle_ns;
    int64_t comm_ns, memory_ns, other_ns; /* non_compute_ns, split */
    int last_step_dropped;     /* 1: the GPU ops of the last ProfilerStep were left out */
    int rounded_to_us;         /* 1: ops rounded inward to whole microseconds */
} sc_hta_breakdown;
/* Ranks with HTA's breakdown: the Kineto traces of the set (0 unless asked
 * for with SC_BREAKDOWN_HTA). */
SC_API size_t sc_replay_hta_count(const sc_replay *replay);
SC_API sc_status sc_replay_hta_at(const sc_replay *replay, size_t i, sc_hta_breakdown *out, sc_error *err);

/* What took the simulated time, summed over every rank (the HTML
 * report's tables). Kernels: GPU tasks other than communication, by name,
 * their simulated time; operators: by name, the GPU time of the tasks
 * their launches enqueued (ns) and the host time of the tasks directly
 * under them (cpu_ns: self time with the untraced gap before each, syncs'
 * waits included). Sorted by ns + cpu_ns, then count, then name; the 50
 * with the most time are kept. Strings live as long as the replay. These
 * tables (and the collectives below) are computed the first time one is
 * asked for, not by every replay: ask from one thread first when several
 * threads share a replay. */
typedef struct sc_time_item {
    const char *name;
    const char *cls;   /* kernels: "gemm", "attention", "other_kernel", "memcpy" or
                          "memset" (the critical path's classes); operators: "" */
    int64_t ns, cpu_ns;
    int64_t max_ns;    /* kernels: the longest one; operators: 0 */
    uint64_t count;    /* kernels: how many ran; operators: calls */
} sc_time_item;
SC_API size_t sc_replay_top_kernels(const sc_replay *replay, const sc_time_item **items);
SC_API size_t sc_replay_top_operators(const sc_replay *replay, const sc_time_item **items);

/* The collectives of a replay by kind, communicator size and size bucket
 * (powers of two; sizes unknown in a row of their own), in that order, as
 * `stepcast comm` groups a trace's: the transfer is the group's as the
 * simulator timed it (the last arrival's kernel, calibrated, --scale'd or
 * re-timed by predict), the wait what a member spent before the last
 * arrival. Sizes as nccl-tests' (sc_comm_run). */
typedef struct sc_replay_collective {
    const char *op;       /* "all_reduce", ... */
    uint32_t ranks;       /* the communicator's (predict: as predicted) */
    int64_t bytes;        /* median size; -1 when unknown */
    uint64_t count;       /* collectives in the row */
    int64_t transfer_ns;  /* median transfer */
    int64_t total_ns;     /* transfers summed */
    int64_t wait_ns;      /* mean wait of a member */
    double busbw_gbps;    /* median achieved bus bandwidth, GB/s; -1 when unknown */
} sc_replay_collective;
SC_API size_t sc_replay_collective_count(const sc_replay *replay);
SC_API sc_status sc_replay_collective_at(const sc_replay *replay, size_t i, sc_replay_collective *out,
                                         sc_error *err);

/* ---------------------------------------------------------------- predict */

/* `stepcast predict`: the traced iteration edited into the one of a job
 * nobody ran, then simulated like a replay. Every 0 / NULL field keeps what
 * the trace says; with none set (and comm coupled) it is the replay. */
typedef struct sc_predict_options {
    sc_replay_options replay;  /* iteration, how collectives are timed, --scale rules */
    uint32_t dp;               /* data-parallel degree: the data-parallel communicator
                                  (the only one, when the trace has one) grows or
                                  shrinks to dp ranks; per-rank work stays */
    uint32_t nodes;            /* nodes of the job (with gpus_per_node: its ranks) */
    uint32_t gpus_per_node;
    double net_gbps;           /* network bandwidth per GPU, Gb/s */
    double nvlink_gbps;        /* intra-node link per GPU and direction, GB/s */
    const char *gpu;           /* another GPU, by profile name ("h100", "a100-80gb") */
    const char *profile_path;  /* or by a profile file (JSON, the fields of `stepcast comm`) */
    uint32_t layers;           /* the model's layers: whole layers (forward and backward, with
                                  their collectives) copied or removed (sc_structure) */
    /* Shape edits (0: the trace's): every kernel whose shapes scale with
     * these is re-timed by the kernel cost model (traced time x model(new) /
     * model(traced)), every collective whose message does is re-sized and
     * re-timed. FFN follows hidden when only hidden is given. */
    uint32_t hidden, ffn, heads, seq, micro_batch;
    uint32_t tp;               /* tensor-parallel degree: each layer's sharded work re-timed,
                                  its TP collectives re-timed for tp ranks (1: none) */
    uint32_t pp;               /* pipeline stages: the layers split into pp stages, each
                                  micro-batch's forward and backward run per the schedule */
    const char *schedule;      /* "gpipe", "1f1b" (NULL: 1f1b) or "interleaved" */
    uint32_t virtual_stages;   /* interleaved: model chunks per stage (0: 1) */
    uint32_t microbatches;     /* micro-batches per step with pp (0: 1) */
    int model_backward;        /* a modelled backward from the forward's kernels: added to a
                                  forward-only trace, or replacing a traced one (to check the
                                  method) */
    const char *recompute;     /* "none" (NULL), "selective" (each layer's attention core) or
                                  "full" (each layer's forward) re-run before the layer's
                                  backward; turns the modelled backward on */
} sc_predict_options;
#define SC_PREDICT_OPTIONS_INIT {.replay = SC_REPLAY_OPTIONS_INIT}

/* A transformer's dimensions as its kernels' shapes show them (0:
 * unknown): hidden, FFN and heads of the whole model, the sequence, the
 * micro-batch and the tensor-parallel degree. */
typedef struct sc_model_dims {
    int64_t hidden, ffn, heads, seq, micro_batch, tp, head_dim;
} sc_model_dims;

/* A job's shape as predict sees it. */
typedef struct sc_job_shape {
    uint32_t ranks, dp, nodes, gpus_per_node;
    const char *gpu;           /* a profile name, or the trace's device name */
    double nvlink_gbps, net_gbps;
} sc_job_shape;

/* What a prediction inferred and changed. */
typedef struct sc_prediction {
    sc_job_shape traced, predicted;
    const char *comm_model;    /* how collectives were re-timed: "none", "fitted"
                                  (the model fitted to the trace), "profile" (the new
                                  hardware's model, scaled by the trace's efficiency) */
    uint64_t collectives_retimed, collectives_unsized; /* the latter keep their traced time */
    uint64_t gpu_tasks_retimed;
    double ranks_per_traced_rank; /* predicted ranks each simulated traced rank stands for */
    size_t shapes;             /* distinct rank shapes among the traced ranks */
    uint32_t traced_layers, predicted_layers; /* 0: the structure is unknown */
    /* Shape edits: the model's dimensions as the traced kernels show them
     * and as edited (0: unknown); what was re-timed. */
    sc_model_dims traced_model, predicted_model;
    uint64_t kernels_reshaped;    /* kernels re-shaped and re-timed by the cost model */
    uint64_t kernels_unshaped;    /* kernels without shapes, timed as one activation */
    uint64_t collectives_resized; /* collectives whose message was re-sized */
    uint32_t traced_tp, predicted_tp; /* 0: not asked for (predicted) or unknown */
    uint64_t tp_sharded, tp_replicated; /* layer kernels re-timed for tp / kept */
    uint64_t tp_modelled;      /* of tp_sharded, those timed by the kernel cost model on their shapes */
    uint32_t pp, virtual_stages, microbatches; /* pp 0: no pipeline edit */
    const char *schedule;      /* the pipeline schedule simulated, NULL without pp */
    int64_t p2p_bytes;         /* one stage-to-stage send */
    uint64_t tasks_traced, tasks_modelled; /* tasks simulated: from the trace once, or copies
                                              and inserted ones (pipeline) */
    /* The modelled backward: 1 asked for (model_backward), 2 turned on by
     * pp on a forward-only trace (a pipeline needs a backward), 3 by
     * recompute (the re-run goes into a modelled backward). */
    int backward_modelled;
    uint64_t backward_tasks_traced;    /* tasks of the graph it was built from */
    uint64_t backward_tasks_modelled;  /* the backward's tasks (copies of the forward's) */
    uint64_t backward_tasks_dropped;   /* a traced backward's tasks it replaced */
    uint64_t backward_kernels_shaped, backward_kernels_unshaped; /* timed from shapes / by class */
    const char *recompute;             /* "selective" or "full"; NULL: none */
    uint64_t backward_tasks_recomputed; /* of the modelled tasks, the forward's re-run */
} sc_prediction;

SC_API sc_status sc_predict_run(const sc_traceset *set, const sc_predict_options *opts, sc_replay **out,
                                sc_error *err);
/* The prediction behind a replay made by sc_predict_run; NULL for a replay. */
SC_API const sc_prediction *sc_replay_prediction(const sc_replay *replay);

/* `stepcast replay`: per rank the measured and simulated step time, the
 * error, the breakdown and SM-busy share, then the critical path. Text or
 * JSON; byte-identical for identical inputs. */
SC_API sc_status sc_replay_write(const sc_replay *replay, FILE *out, int json, sc_error *err);
/* The simulated and the measured timeline of every rank as Chrome-trace
 * JSON (ui.perfetto.dev). */
SC_API sc_status sc_replay_write_chrome(const sc_replay *replay, FILE *out, sc_error *err);

/* `stepcast report -o FILE.html`: one self-contained HTML page (inline
 * SVG, CSS and a short script; nothing fetched) of a replay, or of a
 * prediction beside the replay of the traced configuration: the step,
 * measured vs simulated step per rank, each rank's breakdown, SM busy over
 * time, the critical path, top kernels and operators, collectives with
 * their bus bandwidth, warnings. Past max_rank_rows ranks, per-rank charts
 * draw rows of consecutive ranks (mean, with min-max whiskers) and say so.
 * Byte-identical for identical inputs. */
typedef struct sc_html_options {
    const char *title;          /* the page's heading; NULL: "stepcast replay report" or "... predict ..." */
    const char *subtitle;       /* a line under it (the command, the inputs); NULL: none */
    const sc_traceset *set;     /* the traces replayed, for their load warnings; NULL: none */
    const sc_replay *predicted; /* sc_predict_run's result, shown beside the replay; NULL: none */
    uint32_t max_rank_rows;     /* ranks drawn one a row up to this; 0: 64 */
} sc_html_options;
SC_API sc_status sc_replay_write_html(const sc_replay *replay, const sc_html_options *opts, FILE *out,
                                      sc_error *err);

/* -------------------------------------------- 7 Chakra and Execution Traces */

/* `stepcast export --chakra`: the graph as Chakra execution traces, the
 * format ASTRA-sim reads. */
#define SC_EXPORT_NO_CPU 1u   /* drop CPU operator tasks, keep runtime calls */
#define SC_EXPORT_GPU_ONLY 2u /* keep only GPU tasks (kernels, copies, communication) */
#define SC_EXPORT_FORCE 4u    /* replace existing files */

typedef struct sc_export_stats {
    uint64_t files, nodes, dependencies, bytes;
    uint64_t graph_tasks; /* tasks in the graph before any were dropped */
    uint64_t comm_groups; /* communicator groups in prefix.comm_group.json */
} sc_export_stats;

/* Writes prefix.<rank>.et per rank: a GlobalMetadata, then COMP / COMM_COLL
 * / COMM_SEND / COMM_RECV nodes with durations and dependencies; and
 * prefix.comm_group.json, the ranks of each collective's pg_name other than
 * the world's "0" (ASTRA-sim's --comm-group-configuration). Each file goes
 * via a temporary name and a rename. stats may be NULL. */
SC_API sc_status sc_graph_export_chakra(const sc_graph *graph, const char *prefix, unsigned flags,
                                        sc_export_stats *stats, sc_error *err);

/* A PyTorch Execution Trace (host graph JSON, schema 1.0.1 - 1.1.x) and its
 * link with the Kineto trace of the same rank. */
typedef struct sc_et sc_et;
SC_API sc_status sc_et_load(const char *path, sc_et **out, sc_error *err);
SC_API void sc_et_free(sc_et *et);
/* `stepcast et`: nodes, operators with shapes, tensor data dependencies and,
 * with a Kineto trace (may be NULL), how many of its CPU ops link to an ET
 * node by record-function id (or by order as a fallback). */
SC_API sc_status sc_et_write(const sc_et *et, const sc_trace *kineto, FILE *out, int json,
                             sc_error *err);
/* `stepcast et --ops N`: the first max linked operators (Kineto file
 * order): Kineto start and duration, ET id, rf_id, input shapes and types. */
SC_API sc_status sc_et_write_ops(const sc_et *et, const sc_trace *kineto, size_t max, FILE *out,
                                 int json, sc_error *err);

/* A benchmark generated from Execution Traces (`stepcast benchgen`): per
 * rank the ET's leaf operators as calls, collectives, waits and emulated
 * kernels for a generated PyTorch program to replay, with what is skipped
 * and why. kinetos[i] (may be NULL) is the Kineto trace of ets[i];
 * ranks[i] its rank. The ETs and traces must outlive the result. */
typedef struct sc_benchgen sc_benchgen;
typedef struct sc_benchgen_options {
    int device_cpu;      /* the program runs on the CPU: half types widened */
    uint32_t shrink;     /* divide large dimensions by this (0 or 1: none) */
    uint32_t iterations; /* timed iterations (0: 5) */
    int64_t iteration;   /* ProfilerStep#N to replay; -1: the last complete one
                            present in both the ET and the Kineto trace */
} sc_benchgen_options;
#define SC_BENCHGEN_OPTIONS_INIT {.iteration = -1}
SC_API sc_status sc_benchgen_build(const sc_et *const *ets, const sc_trace *const *kinetos,
                                   const int64_t *ranks, size_t n, const sc_benchgen_options *opts,
                                   sc_benchgen **out, sc_error *err);
SC_API void sc_benchgen_free(sc_benchgen *bg);
/* What needs saying about the input (an ET without its Kineto trace, one
 * from another iteration, ops skipped for an unknown schema). */
SC_API size_t sc_benchgen_warning_count(const sc_benchgen *bg);
SC_API const char *sc_benchgen_warning(const sc_benchgen *bg, size_t i);
/* The op list (JSON, the program's data file), the program itself
 * (Python), and the report: ranks, ops, coverage by op name, collectives by
 * kind and size, GPU work left out. */
SC_API sc_status sc_benchgen_write_data(const sc_benchgen *bg, FILE *out, sc_error *err);
SC_API sc_status sc_benchgen_write_program(const sc_benchgen *bg, FILE *out, sc_error *err);
SC_API sc_status sc_benchgen_write(const sc_benchgen *bg, FILE *out, int json, sc_error *err);

/* ---------------------------------------------------------------- 8 outputs */

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

/* An in-memory output, for callers that cannot hand the library a FILE of
 * their own (the Python module): open one, pass sc_buffer_file(b) to any
 * *_write function, then take what was written as one NUL-terminated
 * string, for example the JSON that `stepcast replay --json` prints:
 *
 *   sc_buffer *b;
 *   char *json;
 *   if (sc_buffer_open(&b, &err) == SC_OK) {
 *       if (sc_replay_write(r, sc_buffer_file(b), 1, &err) != SC_OK) sc_buffer_abort(b);
 *       else if (sc_buffer_take(b, &json, NULL, &err) == SC_OK) { ...; sc_free(json); }
 *   }
 */
typedef struct sc_buffer sc_buffer;
SC_API sc_status sc_buffer_open(sc_buffer **out, sc_error *err);
/* The stream to write to (valid until take or abort). */
SC_API FILE *sc_buffer_file(sc_buffer *b);
/* Closes the stream and hands its bytes over: *data (NUL-terminated; *size
 * bytes before the NUL, size may be NULL) is the caller's, freed with
 * sc_free. Frees b, also on failure (then *data is NULL). */
SC_API sc_status sc_buffer_take(sc_buffer *b, char **data, size_t *size, sc_error *err);
/* Discards everything written; frees b. */
SC_API void sc_buffer_abort(sc_buffer *b);
/* Frees memory the library handed over (sc_buffer_take's string). */
SC_API void sc_free(void *p);

/* Parses a byte count with an optional K/M/G/T suffix (powers of 1024;
 * "512M", "4GiB", "100000"): SC_OK, or SC_E_USAGE for anything else,
 * zero, or a value that overflows. For --max-memory. */
SC_API sc_status sc_parse_bytes(const char *text, uint64_t *out);

/* ------------------------------------------------------ 9 synthetic traces */

/* `stepcast synth`: Kineto traces for `ranks` ranks modelled on a real
 * template trace (its step, nesting, launches, flows, streams, event
 * record/wait pattern and per-layer repetition), with per-rank jitter and
 * NCCL collectives consistent across ranks (one communicator of all ranks;
 * a collective ends at the latest arrival plus its transfer time). Writes
 * out_dir/rank-NNNNN.json[.gz]; byte-identical for the same options. */
typedef struct sc_synth_options {
    const char *template_path; /* a Kineto trace to model on (required) */
    const sc_load_options *load; /* how to read it; NULL: the defaults */
    uint32_t ranks;            /* >= 1 */
    uint32_t iterations;       /* ProfilerSteps per rank; 0 means 1 */
    uint32_t layers;           /* repeated layers per step; 0: as in the template */
    uint64_t seed;
    int gzip;                  /* write .json.gz */
    int gzip_level;            /* 1-9; 0 means 1 (fast) */
    int force;                 /* replace existing files */
} sc_synth_options;

SC_API sc_status sc_synth(const sc_synth_options *opts, const char *out_dir, sc_error *err);

/* ------------------------------------------------------ 10 communication */

/* `stepcast comm`: the modelled time and bus bandwidth of collectives on a
 * GPU's nodes, as an nccl-tests table; or, given traces, their collectives
 * by kind and size, measured against the model fitted to them. The model
 * (NCCL's ring, tree and NVLS algorithms over the intra-node link and the
 * network) starts from a hardware profile: a built-in GPU, or a JSON file
 * with the same fields (README). Sizes are nccl-tests' "size": all-reduce,
 * broadcast and reduce the buffer; all-gather the gathered output;
 * reduce-scatter the whole input; all-to-all what one rank sends in all;
 * send/recv the bytes sent. Bus bandwidth is algorithm bandwidth times
 * 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and
 * all-to-all, 1 for broadcast, reduce and send/recv. */
typedef struct sc_comm sc_comm;

typedef struct sc_comm_options {
    const char *gpu;          /* a built-in profile: "h100", "a100-80gb", "mi300x", or a device
                                 name such as "NVIDIA H100 80GB HBM3"; NULL: the traces' GPU */
    const char *profile_path; /* a JSON profile file instead of gpu */
    uint32_t gpus_per_node;   /* 0: the profile's */
    double net_gbps;          /* network gigabits/s per GPU; 0: the profile's NICs over its GPUs */
    double nvlink_gbps;       /* intra-node link gigabytes/s per GPU each way; 0: the profile's */
    /* Without traces, the table: */
    const char *op;           /* "all_reduce" (NULL), "all_gather", "reduce_scatter", "all_to_all",
                                 "broadcast", "reduce", "send_recv", "gather", "scatter" */
    uint32_t ranks;           /* 0: gpus_per_node */
    const uint64_t *sizes;    /* bytes, in order; NULL: 1 KiB to 8 GiB by 2 */
    size_t nsizes;
    /* With traces: the iteration whose collectives are read. */
    sc_graph_options graph;
} sc_comm_options;
#define SC_COMM_OPTIONS_INIT                                                                     \
    {.gpu = NULL, .profile_path = NULL, .gpus_per_node = 0, .net_gbps = 0, .nvlink_gbps = 0,     \
     .op = NULL, .ranks = 0, .sizes = NULL, .nsizes = 0, .graph = SC_GRAPH_OPTIONS_INIT}

/* The table (set NULL), or the collectives of set's graph (built as
 * sc_graph_build does) against the model fitted to those of known size.
 * An unknown GPU or collective is SC_E_USAGE; a bad profile file
 * SC_E_FORMAT (or SC_E_PARSE, SC_E_IO), naming the file and the field. */
SC_API sc_status sc_comm_run(const sc_traceset *set, const sc_comm_options *opts, sc_comm **out,
                             sc_error *err);
SC_API void sc_comm_free(sc_comm *comm);

/* One row: a size of the table, or the groups of the traces of one kind,
 * group size and size bucket (powers of two; sizes unknown in a row of
 * their own). Strings live as long as the sc_comm. */
typedef struct sc_comm_row {
    const char *op;         /* "all_reduce", ... ("unknown" for a kind the traces do not say) */
    uint32_t ranks;         /* the group's ranks */
    int64_t bytes;          /* nccl-tests' size (traces: the bucket's median); -1 when unknown */
    double us;              /* modelled time; -1 when not modelled */
    double busbw_gbps;      /* modelled bus bandwidth, GB/s; -1 when not modelled */
    const char *algorithm;  /* "ring", "tree", "nvls", "nvls_tree", "p2p"; "" when not modelled */
    const char *protocol;   /* "LL" (NCCL's LL and LL128) or "Simple"; "" when not modelled */
    const char *links;      /* "nvlink", "net" or "nvlink+net"; "" when not modelled */
    uint64_t count;         /* traces: groups in the row; 0 in a table */
    double measured_us;     /* traces: median transfer time (the last arrival's kernel); -1 in a table */
} sc_comm_row;

/* The model behind the rows. */
typedef struct sc_comm_model {
    const char *gpu;        /* the profile's name */
    int fitted;             /* 1: fitted to the traces' collectives; 0: the profile's values */
    uint64_t samples;       /* collectives the fit used */
    uint32_t gpus_per_node;
    double base_us;         /* fixed cost of a collective */
    double nvlink_busbw_gbps, net_busbw_gbps; /* achievable: the intra-node link, the network per GPU */
    double ll_frac;         /* low-latency protocols' share of the bandwidth */
    double nvlink_ll_step_us, nvlink_simple_step_us, net_ll_step_us, net_simple_step_us;
    int nvls;               /* NVLink SHARP all-reduce available */
    double nvls_us, nvls_gbps; /* its fixed cost over base_us, its algorithm bandwidth */
} sc_comm_model;

SC_API sc_comm_model sc_comm_get_model(const sc_comm *comm);
SC_API int sc_comm_from_traces(const sc_comm *comm); /* 1: rows are the traces' collectives */
SC_API size_t sc_comm_row_count(const sc_comm *comm);
/* SC_E_USAGE when i is out of range. */
SC_API sc_status sc_comm_row_at(const sc_comm *comm, size_t i, sc_comm_row *out, sc_error *err);
/* The load's and the graph's warnings (none for a table). */
SC_API size_t sc_comm_warning_count(const sc_comm *comm);
SC_API const char *sc_comm_warning(const sc_comm *comm, size_t i);
/* `stepcast comm`: the model and the rows, text or JSON ({"gpu", "source":
 * "profile" or "fitted", "model", "rows": [{"op", "ranks", "bytes", "us",
 * "busbw_gbps", ...}]}); deterministic. */
SC_API sc_status sc_comm_write(const sc_comm *comm, FILE *out, int json, sc_error *err);

/* ------------------------------------------------------ 11 model structure */

/* `stepcast structure`: the traced iteration's phases (forward, backward,
 * optimizer), its repeated layers (from the period of each rank's GPU work,
 * so it works without module names), the role of each collective, and the
 * model's dimensions read off the operators' recorded shapes. */
typedef struct sc_structure sc_structure;

typedef struct sc_structure_options {
    int64_t iteration; /* ProfilerStep#N; -1: the last complete one */
} sc_structure_options;
#define SC_STRUCTURE_OPTIONS_INIT {.iteration = -1}

SC_API sc_status sc_structure_run(const sc_traceset *set, const sc_structure_options *opts, sc_structure **out,
                                  sc_error *err);
SC_API void sc_structure_free(sc_structure *s);

/* One dimension of the model: its value, or -1 and why it is unknown. */
typedef struct sc_model_dim {
    int64_t value;           /* -1: unknown */
    const char *from;        /* what it was read from; NULL when unknown */
    const char *why_unknown; /* NULL when known */
} sc_model_dim;

typedef struct sc_structure_summary {
    size_t ranks;
    uint32_t layers;           /* 0: none found (why_no_layers says why) */
    uint32_t backward_layers;  /* layers found in a backward (0: forward-only, or none repeat) */
    const char *layers_from;   /* "period"; NULL when none */
    const char *why_no_layers; /* NULL when found */
    uint32_t first_task;       /* the graph task that opens rank 0's first layer */
    uint32_t layer_gpu_tasks;  /* GPU tasks per forward layer (rank 0) */
    double per_layer_forward_us, per_layer_backward_us; /* traced, averaged over ranks; 0: none */
    sc_model_dim hidden, ffn, heads, seq, micro_batch, tp;
    int64_t head_dim;          /* 0: unknown */
    const char *dtype;         /* "fp16", "bf16", "fp32"...; NULL: unknown */
    const char *why_no_dtype;
    double seconds;            /* wall time of the analysis after the load */
} sc_structure_summary;

SC_API sc_structure_summary sc_structure_get(const sc_structure *s);
/* Text, or JSON {"layers": {"count", "first_task", "per_layer_us":
 * {"forward", "backward"}, ...}, "phases", "collectives", "model": {"hidden",
 * "ffn", "heads", "seq", "micro_batch", "tp", "dtype"}} with unknowns as
 * null and a reason; deterministic. */
SC_API sc_status sc_structure_write(const sc_structure *s, FILE *out, int json, sc_error *err);

/* The layers of a replayed (or predicted) graph and one layer's simulated
 * time: per rank the span of its layers' GPU tasks over their count,
 * averaged over ranks. count 0: none found (or a graph too large to look). */
typedef struct sc_replay_layers {
    uint32_t count, backward_count;
    double forward_us, backward_us;
    const char *why_none; /* static text when count is 0 on purpose (a pipelined prediction), else NULL */
} sc_replay_layers;
SC_API sc_replay_layers sc_replay_get_layers(const sc_replay *replay);
/* ------------------------------------------------------------ 12 model */

/* `stepcast model`: a decoder-only transformer training step built from its
 * configuration alone (layers, hidden, ffn, heads, kv-heads, vocab, seq,
 * dtype, experts, topk; tp, sp, pp, vp, dp, cp, ep, fsdp, mbs, gbs,
 * recompute; gpu, nodes, gpus-per-node, net-gbps), simulated with the
 * replay's simulator: step time, throughput, MFU, pipeline bubble, memory
 * per GPU, breakdown per pipeline stage and the critical path. */
typedef struct sc_model_config sc_model_config;
typedef struct sc_model sc_model;

SC_API sc_status sc_model_config_new(sc_model_config **out, sc_error *err);
SC_API sc_model_config *sc_model_config_copy(const sc_model_config *c);
SC_API void sc_model_config_free(sc_model_config *c);
/* A preset ("gpt3-175b", "llama3-8b", ...; sc_model_preset_name lists them):
 * every field it names is set. SC_E_USAGE for an unknown name. */
SC_API sc_status sc_model_config_preset(sc_model_config *c, const char *name, sc_error *err);
SC_API size_t sc_model_preset_count(void);
SC_API const char *sc_model_preset_name(size_t i);
/* One field by its flag name, with '-' or '_' ("kv-heads", "kv_heads"), from
 * its text ("8", "bf16", "selective", "true"). SC_E_USAGE naming the field. */
SC_API sc_status sc_model_config_set(sc_model_config *c, const char *key, const char *value, sc_error *err);
/* A JSON object whose members are fields (numbers, strings or booleans). */
SC_API sc_status sc_model_config_load(sc_model_config *c, const char *path, sc_error *err);
/* --calibrate: host cost per launch, GEMM and HBM efficiency, dispatch gap,
 * launch latency and the collectives' fit measured on Kineto traces (any
 * model, same GPU family); the run then uses them instead of the profile's. */
SC_API sc_status sc_model_config_calibrate(sc_model_config *c, const char *const *paths, size_t n, sc_error *err);

typedef struct sc_model_summary {
    int64_t step_ns;
    uint64_t gpus, micro_batches, tasks;
    double tokens_per_s_per_gpu;
    double model_tflops_per_gpu; /* model FLOPs (Megatron convention) / step / GPUs */
    double mfu;                  /* model_tflops_per_gpu / the GPU's dense bf16 peak */
    double bubble;               /* pipeline bubble: idle share of the compute stream, worst stage */
    double memory_gb, gpu_memory_gb; /* peak memory of the fullest GPU; the GPU's */
    int fits;                    /* 1: memory_gb <= gpu_memory_gb */
    double simulate_s;           /* wall seconds to build and simulate */
    double gpu_busy_s;           /* the busiest stage's compute-stream time (kernels, TP collectives) */
} sc_model_summary;

/* Checks the configuration (one clear line on a bad one: heads % tp, layers
 * % (pp x vp), gbs % (dp x mbs), ...), builds the graph and simulates it. */
SC_API sc_status sc_model_run(const sc_model_config *c, sc_model **out, sc_error *err);
SC_API sc_model_summary sc_model_get_summary(const sc_model *m);
/* The replay behind it (per-stage breakdown, critical path, Chrome timeline). */
SC_API const sc_replay *sc_model_replay(const sc_model *m);
SC_API void sc_model_free(sc_model *m);
/* Text or JSON report; deterministic. */
SC_API sc_status sc_model_write(const sc_model *m, FILE *out, int json, sc_error *err);

/* `stepcast model --sweep`: every combination of the comma lists given per
 * key (keys[i] takes lists[i], e.g. "tp" "2,4,8"), run on top of base; rows
 * sorted by step time, those that do not fit or are invalid counted apart. */
typedef struct sc_model_sweep sc_model_sweep;
SC_API sc_status sc_model_sweep_run(const sc_model_config *base, const char *const *keys,
                                    const char *const *lists, size_t n, sc_model_sweep **out, sc_error *err);
SC_API void sc_model_sweep_free(sc_model_sweep *s);
SC_API sc_status sc_model_sweep_write(const sc_model_sweep *s, FILE *out, int json, sc_error *err);
/* ---------------------------------------------------------------- 13 diff */

/* `stepcast diff A B`: two traces or trace sets (before and after a change,
 * two GPUs, two library versions) compared as HTA's TraceDiff does, per
 * name, and per kernel class, collective kind and step. Every figure is a
 * mean per step per rank, so that sets of different lengths and sizes
 * compare: a side's sums are divided by its rank-steps (each rank's
 * ProfilerStep#N annotations; a rank without any is one step, its whole
 * trace). Only the events of a step count: a CPU event by its start, a GPU
 * event by the start of the runtime call that launched it (its own start
 * when none is traced). Times are inclusive (an operator's nested
 * operators are in its time too, as in HTA). */
typedef struct sc_diff sc_diff;

/* A and B must outlive the call only. A Chakra trace (no events to sum)
 * is SC_E_USAGE. */
SC_API sc_status sc_diff_run(const sc_traceset *a, const sc_traceset *b, sc_diff **out, sc_error *err);
SC_API void sc_diff_free(sc_diff *diff);

/* What is compared, section by section (sc_diff_row.section). */
typedef enum sc_diff_section {
    SC_DIFF_STEP = 0,     /* the i-th ProfilerStep of each side, in order */
    SC_DIFF_KERNEL_CLASS, /* GPU work by class: gemm, attention, communication, other_kernel,
                             memcpy, memset */
    SC_DIFF_COLLECTIVE,   /* NCCL kernels by collective kind (AllReduce, SendRecv, ...) */
    SC_DIFF_OPERATOR,     /* CPU operators and user annotations, by name */
    SC_DIFF_KERNEL,       /* GPU kernels, copies and sets by normalised name: template
                             arguments <...> and the parameter list (...) dropped, a
                             leading "void " too, and the trailing _N launch or compile
                             number of a Triton kernel (triton_poi_fused_add_3) */
    SC_DIFF_SECTION_COUNT
} sc_diff_section;
SC_API const char *sc_diff_section_name(sc_diff_section s); /* "step", "kernel_class", ... */

/* One side: what its traces hold. Strings live as long as the sc_diff. */
typedef struct sc_diff_side {
    const char *label;   /* the first trace's file, or its folder with "(N files)" */
    const char *gpu;     /* the first rank's GPU; "" when unknown */
    size_t ranks;
    uint64_t rank_steps; /* what the side's sums are divided by */
    double step_us;      /* mean step (ProfilerStep duration), per rank-step; 0 without steps */
} sc_diff_side;
/* which: 0 for A, 1 for B. */
SC_API sc_diff_side sc_diff_get_side(const sc_diff *diff, int which);

/* One name of one section, both sides. Strings live as long as the sc_diff. */
typedef struct sc_diff_row {
    sc_diff_section section;
    const char *name;      /* a step's row: A's ProfilerStep name, " | " and B's where they differ */
    double a_us, b_us;     /* time per step per rank */
    double a_count, b_count; /* occurrences per step per rank (a step's row: the ranks that have it) */
    double delta_us;       /* b_us - a_us */
    double delta_pct;      /* delta_us / a_us * 100; 0 when a_us is 0 (JSON: null) */
    const char *change;    /* by count, as HTA's ops_diff: "added" (not in A), "removed" (not in B),
                              "more", "fewer" or "same" */
} sc_diff_row;
/* Rows by section in sc_diff_section order; steps in step order, every
 * other section by impact, |delta_us| largest first (ties by name). */
SC_API size_t sc_diff_row_count(const sc_diff *diff);
SC_API sc_status sc_diff_row_at(const sc_diff *diff, size_t i, sc_diff_row *out, sc_error *err);
/* `stepcast diff`: both sides, then each section's rows (top: at most that
 * many per section but steps, 0 for all; JSON always has all); text or
 * JSON, deterministic. */
SC_API sc_status sc_diff_write(const sc_diff *diff, FILE *out, int json, size_t top, sc_error *err);
/* `stepcast diff --html FILE`: the same as one self-contained HTML page
 * (the building blocks of sc_replay_write_html): both sides, then per
 * section its rows' differences as bars and a sortable table (top as for
 * sc_diff_write). subtitle: a line under the heading, or NULL.
 * Byte-identical for identical inputs. */
SC_API sc_status sc_diff_write_html(const sc_diff *diff, const char *subtitle, size_t top, FILE *out,
                                    sc_error *err);
/* -------------------------------------------------------------- 14 kernels */

/* `stepcast kernels`: the kernel cost model against a trace's own kernels.
 * Every kernel, copy and fill of the iteration is classified (GEMM,
 * attention, elementwise, norm, softmax, optimizer, copy, memset,
 * reduction, other; collectives are counted, and timed by the
 * communication model), given FLOPs and bytes from its enqueuing
 * operator's shapes, and timed by the GPU's profile (before) and by the
 * model fitted per class to the trace (after). */
typedef struct sc_kernels sc_kernels;

typedef struct sc_kernels_options {
    const char *gpu;          /* a built-in profile; NULL: the traces' GPU */
    const char *profile_path; /* a JSON profile file instead */
    sc_graph_options graph;   /* the iteration */
} sc_kernels_options;
#define SC_KERNELS_OPTIONS_INIT {.gpu = NULL, .profile_path = NULL, .graph = SC_GRAPH_OPTIONS_INIT}

/* An unknown GPU (and traces naming none) is SC_E_USAGE. */
SC_API sc_status sc_kernels_run(const sc_traceset *set, const sc_kernels_options *opts, sc_kernels **out,
                                sc_error *err);
SC_API void sc_kernels_free(sc_kernels *k);

/* One class. Errors are |model - traced| / traced in percent, the median
 * over the class's kernels with shapes; -1 when none. */
typedef struct sc_kernel_class {
    const char *name;       /* "gemm", "attention", ... */
    uint64_t count;         /* kernels of the class in the iteration, every rank */
    uint64_t with_shapes;   /* those the model can time */
    double traced_us;       /* their summed traced time */
    double error_before_pct, error_after_pct; /* the profile's defaults; fitted */
    uint64_t fitted;        /* kernels the fit used (0: defaults kept) */
    double eff;             /* GEMM, attention: share of the dense peak reached */
    double edge;            /* ... the thin-operand penalty's scale (elements) */
    double mem_eff;         /* share of HBM bandwidth reached */
    double floor_us;        /* fixed cost of a kernel */
} sc_kernel_class;

SC_API size_t sc_kernels_class_count(const sc_kernels *k);
SC_API sc_status sc_kernels_class_at(const sc_kernels *k, size_t i, sc_kernel_class *out, sc_error *err);
/* The profile's name, its measured ceilings and their source. */
SC_API const char *sc_kernels_gpu(const sc_kernels *k);
SC_API double sc_kernels_gemm_ceiling(const sc_kernels *k);
/* The model's dimensions as the first rank's shapes show them. */
SC_API sc_model_dims sc_kernels_dims(const sc_kernels *k);
/* `stepcast kernels`: one line per class, text or JSON ({"gpu", "ceiling",
 * "model", "classes": [{"class", "count", ...}]}); deterministic. */
SC_API sc_status sc_kernels_write(const sc_kernels *k, FILE *out, int json, sc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* STEPCAST_H */
