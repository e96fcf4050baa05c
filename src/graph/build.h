/*
 * build.h - what the files of the Kineto graph builder share (internal to
 * src/graph/): the per-rank build context, the correlation map, the class of
 * a runtime call, and one entry point per step.
 *
 * The driver (build.c) runs, for each rank in order:
 *   iteration.c    choose the window (ProfilerStep#N, or the whole trace);
 *   cpu_tasks.c    flatten each CPU thread's nested events into serial tasks
 *                  with gaps, and record the operator hierarchy;
 *   cross_thread.c link the autograd thread (and any other) to the main one;
 *   gpu_tasks.c    GPU tasks on (device, stream) processors, launch edges;
 *   cross_stream.c cudaEventRecord / cudaStreamWaitEvent edges;
 *   stalls.c       GPU waits that nothing traced explains;
 *   syncs.c        what each GPU->CPU sync task waits for;
 *   backlog.c      how long each stream is still busy from before the step;
 * then, across ranks, collectives.c matches collectives into groups.
 * Helpers: runtime_calls.c (what a CUDA/HIP call does, by name), streams.c (a
 * rank's GPU tasks by stream, for launch-time lookups), msg_size.c (the
 * message size of a communication task, while the rank's events are at hand).
 *
 * Scratch data lives in the context, in flat arrays indexed by the task's
 * offset from the rank's first task, and is reset for each rank.
 */
#ifndef SC_GRAPH_BUILD_H
#define SC_GRAPH_BUILD_H

#include "../trace/trace.h"
#include "graph.h"

/* What a CUDA / HIP runtime or driver call does (runtime_calls.c). */
typedef enum sc__call_class {
    SC_CALL_OTHER = 0,
    SC_CALL_LAUNCH,       /* enqueues GPU work and returns */
    SC_CALL_SYNC_STREAM,  /* cudaStreamSynchronize */
    SC_CALL_SYNC_DEVICE,  /* cudaDeviceSynchronize */
    SC_CALL_SYNC_EVENT,   /* cudaEventSynchronize */
    SC_CALL_SYNC_MEMCPY,  /* blocking cudaMemcpy: enqueues a copy and waits for it */
    SC_CALL_EVENT_RECORD, /* cudaEventRecord */
    SC_CALL_STREAM_WAIT,  /* cudaStreamWaitEvent */
} sc__call_class;

sc__call_class sc__call_classify(const char *name);

/* One collective / p2p GPU task waiting to be matched across ranks. */
typedef struct sc__comm_rec {
    uint32_t task;
    uint32_t rank;     /* graph rank index */
    int64_t stream;    /* stream id */
    int64_t seq;       /* "Seq", -1 when absent */
    int64_t bytes;     /* message size (sc__group.bytes' convention), -1 when unknown */
    int64_t piece;     /* bytes unknown: one rank's piece of it (an all-gather's
                          input...), -1 when unknown; times the group size */
    int64_t group_size; /* ranks in the communicator when an arg says, else -1 */
    uint32_t pg;       /* process group name interned in the graph, SC__NONE */
    uint32_t pg_ranks; /* "Process Group Ranks" interned in the graph, SC__NONE */
    uint8_t type;      /* sc__coll_type */
} sc__comm_rec;

/* Message sizes (msg_size.c). Element size of a data type as traces spell
 * it (a "dtype" arg, an "Input type", an NCCL kernel name's suffix); 0 when
 * unknown. */
int64_t sc__dtype_bytes(const char *name);
/* The element size an NCCL reduction kernel's name gives; 0 when none. */
int64_t sc__nccl_kernel_dtype_bytes(const char *kernel);

/* The iteration window of one rank. */
typedef struct sc__window {
    int64_t start, end;  /* ns; events starting in [start, end) belong to it */
    int64_t number;      /* N of ProfilerStep#N, -1 for the whole trace */
    uint32_t track;      /* main thread's track, SC__NONE when none */
    bool whole;          /* no annotation: the whole trace */
} sc__window;

/* The per-rank build context: what the steps share, and scratch indexed by
 * the local task offset (task - first_task). */
typedef struct sc__bctx {
    sc__graph *g;
    const sc_trace *t;
    const sc__build_options *opts;
    uint32_t rank;       /* graph rank index */
    uint32_t first_task; /* first task of the rank */
    sc__window win;
    uint32_t main_proc;  /* processor of the main thread, SC__NONE */
    uint32_t main_end;   /* main-thread tasks are [first_task, main_end) */
    int16_t device;      /* the rank's GPU, -1 until a GPU task is seen */
    uint32_t first_gpu_task; /* GPU tasks of the rank are [first_gpu_task, end) */

    sc__idmap corr;      /* runtime correlation -> CPU task (launches and every call) */
    sc__idmap op_at;     /* (track, ts) hash -> op index, for flow events */
    sc__vec op_first;    /* uint32 per op (index - first op): first task of the op */
    sc__vec op_last;     /* uint32 per op: last task */
    sc__vec op_event;    /* uint32 per op: its event index in the trace */
    uint32_t first_op;   /* first op of the rank */
    sc__vec call_class;  /* uint8 per local task: sc__call_class (CPU tasks) */
    sc__vec gpu_first;   /* uint32 per local task: first GPU task a launch caused */
    sc__vec gpu_last;    /* uint32 per local task: last GPU task a launch caused */
    sc__vec launch_of;   /* uint32 per local task: launch task of a GPU task */

    sc__vec name_map;    /* uint32 per trace string id: graph string id, SC__NONE = not yet */
    sc__vec class_map;   /* uint8 per trace string id: sc__call_class + 1, 0 = not yet */

    sc__vec streams;     /* sc__stream_span: the rank's GPU tasks by stream (streams.c) */
    sc__vec gpu_lts;     /* int64 per GPU task (index - first_gpu_task): launch time */

    sc__vec *comms;      /* sc__comm_rec, across ranks */
    /* Sync-inference self-check, summed over ranks. */
    uint64_t sync_recorded, sync_matched, sync_missed, sync_extra;
    bool sync_checked;
} sc__bctx;

/* Fills r's bytes, piece and group_size (r->type set) for the NCCL kernel
 * event `kernel` whose launch ran inside operator `op` (SC__NONE: none):
 * from the kernel's args, else from the operators that enqueued it. */
void sc__msg_size(sc__bctx *c, const sc__event *kernel, uint32_t op, sc__comm_rec *r);

/* Scratch accessors (local index = task - first_task). */
#define SC__LOCAL(c, task) ((task) - (c)->first_task)
/* Adds a task and its scratch slots; SC__NONE on OOM. */
uint32_t sc__bctx_add_task(sc__bctx *c, const sc__task *t, uint8_t call_class);
/* The graph's id for a string of the trace; SC__NONE on OOM. */
uint32_t sc__bctx_name(sc__bctx *c, uint32_t trace_str);
uint32_t sc__bctx_intern(sc__bctx *c, const char *s);
/* sc__call_classify of a trace string, computed once per name and rank. */
sc__call_class sc__bctx_call_class(sc__bctx *c, uint32_t trace_str);
/* A kernel launch proper (class LAUNCH and "Launch" in the name). */
bool sc__bctx_kernel_launch(sc__bctx *c, uint32_t trace_str);
/* The last main-thread task that ended at or before `at`; SC__NONE. */
uint32_t sc__bctx_main_before(const sc__bctx *c, int64_t at);
/* Key of (track, ts) in op_at. */
static inline int64_t sc__op_key(uint32_t track, int64_t ts) {
    return (int64_t)sc__hash_u64((uint64_t)ts * 0x9E3779B97F4A7C15ULL + track);
}
#define SC__SCRATCH(c, vec, type, task) SC__VEC_AT(&(c)->vec, type, SC__LOCAL(c, task))

sc_status sc__build_window(sc__bctx *c, sc_error *err);
/* Whether the rank's window can be compared with its replay (graph.h,
 * sc__step_status), once its CPU and GPU tasks are built. */
void sc__window_status(sc__bctx *c, sc__rank *r);
sc_status sc__build_cpu(sc__bctx *c, sc_error *err);
sc_status sc__build_cross_thread(sc__bctx *c, sc_error *err);
sc_status sc__build_gpu(sc__bctx *c, sc_error *err);
sc_status sc__build_cross_stream(sc__bctx *c, sc_error *err);
sc_status sc__build_syncs(sc__bctx *c, sc_error *err);
sc_status sc__build_stalls(sc__bctx *c, sc_error *err);
/* The rank's stream backlog (backlog.c) into g->proc_backlog, while its
 * events are at hand: processors [first_proc, end) are the rank's. False
 * on out-of-memory. */
bool sc__build_backlog(sc__bctx *c, uint32_t first_proc);
/* *uneven: some communicator's member ranks ran different numbers of
 * collectives in the window (already a warning). */
sc_status sc__build_collectives(sc__graph *g, sc__vec *comms, bool *uneven, sc_error *err);

/* Cross-stream edges as (from, to) task pairs, for the self-check. */
typedef struct sc__pair {
    uint32_t from, to;
} sc__pair;

/* The GPU task's processor is a stream of the rank; returns SC__NONE if the
 * rank has no such stream. */
uint32_t sc__bctx_stream_proc(const sc__bctx *c, int16_t device, int64_t stream);

/* The rank's GPU tasks by stream (streams.c): each stream is a contiguous
 * range of tasks in stream order. Built once the GPU tasks exist. */
typedef struct sc__stream_span {
    uint32_t proc, lo, hi;
    bool launch_sorted, end_sorted; /* binary search allowed */
} sc__stream_span;

bool sc__streams_index(sc__bctx *c);
/* Last task on proc launched before `before` / first launched after `after`. */
uint32_t sc__stream_last_launched(const sc__bctx *c, uint32_t proc, int64_t before);
uint32_t sc__stream_first_launched(const sc__bctx *c, uint32_t proc, int64_t after);
/* On one stream (proc), then over all the rank's streams: the task launched
 * before `launched_before` whose end is the latest one <= end_limit;
 * SC__NONE if none. */
uint32_t sc__stream_latest_end(const sc__bctx *c, uint32_t proc, int64_t launched_before, int64_t end_limit);
uint32_t sc__latest_end(const sc__bctx *c, int64_t launched_before, int64_t end_limit);
/* Over all the rank's streams whose work launched before `launched_before`
 * had all ended by end_limit: the last task of the one that finished last
 * (the stream a stream sync most likely waited for); SC__NONE if none. */
uint32_t sc__stream_drained(const sc__bctx *c, int64_t launched_before, int64_t end_limit);
/* The measured end of the last GPU event of the trace on task i's stream
 * that started before it (in the window or before it); INT64_MIN when none.
 * A scan of the rank's events: for a few tasks per stream. */
int64_t sc__stream_end_before(const sc__bctx *c, uint32_t i);

sc_status sc__graph_build_kineto_stats(const sc_traceset *set, const sc__build_options *opts,
                                       sc__graph **out, sc__build_stats *stats, sc_error *err);

#endif /* SC_GRAPH_BUILD_H */
