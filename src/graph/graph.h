/*
 * graph.h - the execution graph: the contract between the trace readers,
 * the simulator, the transforms and the exporters.
 *
 * One sc__graph holds every rank of a job (all ranks simulate together).
 * Tasks run on processors: a CPU thread or a GPU stream of one rank. Edges
 * say "B may not start before A ends" and carry a family so reports can tell
 * why. Storage is data-oriented: flat arrays with uint32 indices, successors
 * in CSR form, names interned once per graph.
 *
 * Builders (build.c and its steps from Kineto traces, build_chakra.c from
 * Chakra files) fill a graph through sc__graph_add_* and sc__graph_finish();
 * the simulator (src/sim/) and transforms read the finished arrays.
 *
 * Rules the simulator relies on:
 *   - tasks on one processor run in the order of their `seq` (program order
 *     for threads, stream order for streams), one at a time;
 *   - a CPU task starts no earlier than the end of the previous task on its
 *     thread plus its `gap` (CPU time no traced event covers);
 *   - a GPU task starts no earlier than its launch task's end plus the
 *     modelled launch latency (the LAUNCH edge);
 *   - a GPU task flagged SC__TF_GRAPH_GAP (launched by a graph launch) starts
 *     `gap` after the later of its ready time (predecessors done) and its
 *     stream's previous task. A graph's nodes are enqueued by one call, so
 *     the GPU time between them is a property of the captured graph: nodes
 *     CUPTI did not record, dependencies inside the graph. The builder
 *     measures it as the task's start minus the latest measured end of its
 *     stream predecessor, its launch call and its cross-stream sources. It
 *     is not rescaled by --scale (what fills it is not traced); so is a
 *     task flagged SC__TF_UNTRACED_GAP (a stall no traced event explains,
 *     stalls.c); other GPU tasks have gap 0;
 *   - a SYNC task (cudaStreamSynchronize & co.) waits, at simulated time, for
 *     the last GPU task already launched on its target stream(s); its traced
 *     duration is not used;
 *   - a task with `coll` != SC__NONE belongs to a cross-rank group (a
 *     collective or a send/recv pair): it ends for every member at the latest
 *     member's arrival plus the group's transfer time.
 */
#ifndef SC_GRAPH_H
#define SC_GRAPH_H

#include "../base/base.h"

typedef enum sc__proc_kind { SC_P_THREAD = 0, SC_P_STREAM = 1 } sc__proc_kind;

typedef struct sc__proc {
    uint32_t rank;   /* index into the graph's ranks */
    uint8_t kind;    /* sc__proc_kind */
    uint8_t quiet;   /* a thread beside the main one that calls no GPU runtime (a monitor,
                        a data loader): simulated, but it neither opens nor closes the step */
    int16_t device;  /* GPU index for streams, -1 for threads */
    int64_t id;      /* OS tid or stream id */
    uint32_t first;  /* first task (lowest seq) on this processor, SC__NONE if none */
    uint32_t ntasks;
} sc__proc;

typedef enum sc__task_kind {
    SC_T_CPU = 0,   /* operator self time or any other CPU work */
    SC_T_LAUNCH,    /* runtime call that enqueues GPU work (cudaLaunchKernel, memcpyAsync...) */
    SC_T_RUNTIME,   /* other runtime call that neither launches nor waits */
    SC_T_SYNC,      /* runtime call that blocks on the GPU (see sync_* fields) */
    SC_T_KERNEL,    /* GPU compute kernel */
    SC_T_MEMCPY,
    SC_T_MEMSET,
    SC_T_COLL,      /* GPU collective (all-reduce, all-gather, ...) */
    SC_T_SEND,      /* GPU point-to-point send */
    SC_T_RECV,      /* GPU point-to-point receive */
    SC_T_COUNT
} sc__task_kind;

static inline bool sc__task_on_gpu(uint8_t kind) { return kind >= SC_T_KERNEL; }
static inline bool sc__task_is_comm(uint8_t kind) { return kind >= SC_T_COLL; }

typedef enum sc__sync_kind {
    SC_SYNC_NONE = 0,
    SC_SYNC_STREAM, /* sync_arg = processor index of the stream */
    SC_SYNC_DEVICE, /* sync_arg = device; waits for every stream of the rank on it */
    SC_SYNC_TASK,   /* sync_arg = task index (event sync resolved to a task) */
} sc__sync_kind;

typedef enum sc__edge_family {
    SC_E_THREAD = 0,   /* program order on a CPU thread */
    SC_E_CROSS_THREAD, /* e.g. autograd forward -> backward thread */
    SC_E_LAUNCH,       /* runtime call -> GPU task (correlation id) */
    SC_E_STREAM,       /* stream order */
    SC_E_CROSS_STREAM, /* cudaEventRecord / cudaStreamWaitEvent */
    SC_E_GPU_TO_CPU,   /* a sync resolved statically */
    SC_E_DATA,         /* data dependency from an imported graph (Chakra data_deps) */
    SC_E_CTRL,         /* control dependency from an imported graph (Chakra ctrl_deps) */
    SC_E_FAMILY_COUNT
} sc__edge_family;

const char *sc__task_kind_name(uint8_t kind);
const char *sc__edge_family_name(uint8_t family);

typedef enum sc__coll_type {
    SC_C_ALL_REDUCE = 0, SC_C_REDUCE, SC_C_ALL_GATHER, SC_C_GATHER, SC_C_SCATTER,
    SC_C_BROADCAST, SC_C_ALL_TO_ALL, SC_C_REDUCE_SCATTER, SC_C_BARRIER,
    SC_C_SEND_RECV, SC_C_UNKNOWN, SC_C_COUNT
} sc__coll_type;
/* Same order as Chakra's CollectiveCommType for the first nine. */

const char *sc__coll_type_name(uint8_t type);
/* From a "Collective name" arg or an NCCL kernel name; SC_C_UNKNOWN if neither says. */
sc__coll_type sc__coll_type_from_name(const char *name);

typedef struct sc__task {
    int64_t dur;     /* ns: traced duration (for COLL/SEND/RECV: includes waiting) */
    int64_t gap;     /* ns: uncovered CPU time before this task on its thread
                        (GPU tasks: see SC__TF_GRAPH_GAP) */
    int64_t ts;      /* ns: measured start, for reports and calibration only */
    uint32_t proc;   /* processor index */
    uint32_t seq;    /* position on its processor */
    uint32_t name;   /* interned in graph->strings */
    uint32_t op;     /* enclosing operator for attribution (index into ops), SC__NONE */
    uint32_t group;  /* cross-rank group (collective / p2p pair), SC__NONE */
    uint32_t event;  /* event index in the rank's trace, SC__NONE when synthetic */
    uint32_t sync_arg;
    uint8_t kind;    /* sc__task_kind */
    uint8_t sync;    /* sc__sync_kind */
    uint16_t flags;
} sc__task;

/* sc__task.flags bits. */
enum {
    /* A communication task whose peers were not all found on the other ranks
     * (counts disagree); its group holds only the tasks that were found, so
     * the replay cannot deadlock, but it is less trustworthy. */
    SC__TF_UNMATCHED = 1u << 0,
    /* A GPU task launched by a graph launch (cudaGraphLaunch, hipGraphLaunch):
     * its `gap` is GPU time before it that no traced event covers (see the
     * rules above). */
    SC__TF_GRAPH_GAP = 1u << 1,
    /* A GPU task held long, the device idle, by something the trace does
     * not hold (stalls.c): its `gap` is that wait, placed as a graph
     * launch's task's is. */
    SC__TF_UNTRACED_GAP = 1u << 2,
    /* A GPU task launched before profiling began (its correlation is below
     * every traced call's): already queued on its stream when the trace
     * opened, with no launch call in the graph. */
    SC__TF_QUEUED = 1u << 3,
};

/* An operator instance (cpu_op / user_annotation scope) for attribution. */
typedef struct sc__op {
    uint32_t name;   /* interned */
    uint32_t parent; /* enclosing op, SC__NONE at top level */
    uint32_t module; /* innermost nn.Module / annotation scope name, SC__NONE */
    uint32_t layer;  /* transformer layer number when known, SC__NONE */
} sc__op;

/* A cross-rank group: the tasks (one per participating rank) of one
 * collective, or the send and recv tasks of one transfer.
 *
 * `bytes` is the message size as nccl-tests reports it in its "size"
 * column, so a communication model (bus bandwidth = size / time x a factor
 * per type) takes it as it is:
 *   - all-reduce, broadcast, reduce: the buffer;
 *   - all-gather (and gather): the whole gathered output, i.e. one rank's
 *     input x the group size;
 *   - reduce-scatter (and scatter): the whole input, i.e. one rank's output
 *     x the group size;
 *   - all-to-all: the whole buffer one rank sends (its input);
 *   - send/recv: the bytes sent.
 * Chakra's comm_size, as ASTRA-sim reads it (its Ring.cc), is the buffer
 * each rank starts with: the same for every type but all-gather, where it
 * is one rank's input, i.e. `bytes` / the communicator's ranks. The Chakra
 * export divides (astra_comm_size in src/report/chakra_export.c) and the
 * import multiplies by the group's members (member_bytes in
 * build_chakra.c).
 * Where it comes from (msg_size.c, collectives.c): the NCCL kernel's args,
 * "Out msg nelems" for an all-gather (PyTorch records the gathered output
 * there) and "In msg nelems" for the others (a reduce-scatter's input is the
 * whole, an all-to-all's the sent buffer), times the "dtype" size; else the
 * "Input Dims" of the operator that enqueued it: the `nccl:*` annotation and
 * record_param_comms hold the collective's input (an all-gather's is one
 * rank's piece, times the group size), c10d::allgather_ / _allgather_base_
 * the gathered output first, c10d::reduce_scatter_ / _reduce_scatter_base_
 * and alltoall_ / alltoall_base_ their input second (their first argument is
 * the output); else a Chakra node's comm_size. Members that disagree (uneven
 * all-to-all splits) keep the largest. */
typedef struct sc__group {
    uint32_t first;      /* into graph->group_members */
    uint32_t count;
    uint8_t type;        /* sc__coll_type */
    int64_t bytes;       /* message size (above), -1 when unknown */
    int64_t transfer_ns; /* modelled pure transfer time (set by the calibration) */
    uint32_t comm;       /* its communicator: an interned label ("process group 0",
                            "stream 24"), SC__NONE when unknown */
    uint32_t comm_ranks; /* ranks in the communicator: a "Group size" arg, else the
                            ranks of the job that ran it (members of a p2p pair: 2) */
} sc__group;

/* The message size of a communication task that is in no group (a
 * foreign Chakra file's eager send/recv pairs and unpaired ones), with the
 * same meaning as sc__group.bytes. */
typedef struct sc__task_bytes {
    int64_t bytes;
    uint32_t task;
    uint32_t unused; /* zero: padding made explicit */
} sc__task_bytes;

typedef struct sc__rank {
    int64_t rank;          /* the job rank */
    uint32_t trace;        /* index in the trace set, SC__NONE for imported graphs */
    uint32_t first_task, ntasks; /* tasks of a rank are contiguous */
    /* The measured step, for measured-vs-simulated: it opens at step_start,
     * the start of the ProfilerStep#N annotation (or, with none, of the
     * window's first task), and closes at step_end, the end of the last task
     * the step caused, CPU or GPU (step_last_task): the GPU tail after the
     * annotation counts. The simulated step opens at step_first_task. */
    int64_t step_start;    /* ns */
    int64_t step_end;
    int64_t step_number;   /* N of the ProfilerStep#N that opens the step, -1 when none */
    int64_t annotation_end; /* ns: where that annotation ends (step_end may be later) */
    uint32_t step_first_task; /* task whose start opens the step (the annotation's first) */
    uint32_t step_last_task;  /* task whose end closes it, SC__NONE when none */
    uint32_t step_launches;   /* SC__STEP_CAPTURE: launches captured; SC__STEP_OPEN: lost */
    uint8_t step_status;      /* sc__step_status: can the replay be compared with it */
} sc__rank;

/* Whether a rank's measured step can be compared with its replay, and if
 * not, why (the builder decides, iteration.c). */
typedef enum sc__step_status {
    SC__STEP_MEASURED = 0, /* yes */
    SC__STEP_NONE,         /* the input has no measured step (a Chakra file without times) */
    SC__STEP_NO_HOST,      /* no CPU side: nothing on the host opens the step or waits for it */
    SC__STEP_OPEN,         /* not closed in the trace: its last kernel launches ran no GPU work */
    SC__STEP_CAPTURE,      /* a graph capture that no graph launch replays: its kernels never ran */
} sc__step_status;

typedef struct sc__graph {
    sc__intern strings;
    sc__vec tasks;   /* sc__task */
    sc__vec procs;   /* sc__proc */
    sc__vec ops;     /* sc__op */
    sc__vec groups;  /* sc__group */
    sc__vec group_members; /* uint32 task indices */
    sc__vec ranks;   /* sc__rank */

    /* Edges: appended as (from, to, family) while building, then turned
     * into CSR by sc__graph_finish(). */
    sc__vec edge_list; /* sc__edge; finish hands its memory to spare */
    uint32_t *succ_off; /* ntasks + 1 */
    uint32_t *succ;     /* nedges: successor task */
    uint8_t *succ_family; /* nedges */
    uint32_t *indeg;    /* ntasks */
    uint64_t nedges;

    /* int64 per processor: how long (ns) after its rank's step_start a stream
     * is still busy with GPU work from before the window (backlog.c); the
     * Kineto builder measures it while the rank's events are at hand, so the
     * traces may be freed before the replay. Empty when not measured. */
    sc__vec proc_backlog;

    /* sc__task_bytes by ascending task: the sizes of communication tasks
     * in no group (build_chakra.c), so that an export writes their
     * comm_size again. Empty for Kineto graphs, whose every communication
     * task is in a group. */
    sc__vec loose_bytes;

    /* The edge list's memory after finish: its cycle check takes its
     * arrays from it, and when keep_spare was set before, it is kept for a
     * replay's calibration (calibrate.h), which then drops it; else freed. */
    bool keep_spare;
    sc__spare spare;
    /* 2+: finish may fault the CSR arrays in on a helper thread (no effect
     * on them); the Kineto builder sets its thread cap. */
    unsigned finish_threads;
    /* The job's memory budget (0: none) and the bytes the builder holds
     * besides the graph (traces, records) while finishing: finish checks
     * that its peak fits before it allocates (sc__graph_check_budget). */
    uint64_t budget, budget_held;

    /* Warnings from building (collective mismatches, unmatched launches...). */
    sc__warnings warnings;
} sc__graph;

typedef struct sc__edge {
    uint32_t from, to;
    uint8_t family;
} sc__edge;

sc__graph *sc__graph_new(void);
void sc__graph_free(sc__graph *g);
/* One task's step in telling whether every processor's tasks are one run
 * of consecutive indices in non-decreasing seq, as builders add them (then
 * seq order is index order: no scatter, no sort), while counting them:
 * count[p] counts processor p's tasks and first[p] is where its run starts
 * (both zeroed before the first task). Task indices come in order. */
typedef struct sc__runs {
    uint32_t prev_proc, prev_seq;
    bool all; /* so far, every processor's tasks are one run */
} sc__runs;
#define SC__RUNS_INIT {SC__NONE, 0, true}
static inline void sc__runs_add(sc__runs *r, uint32_t *count, uint32_t *first, uint32_t i,
                                uint32_t proc, uint32_t seq) {
    if (proc != r->prev_proc) {
        if (count[proc]) r->all = false; /* proc had a run before this one */
        first[proc] = i;
    } else if (seq < r->prev_seq) {
        r->all = false;
    }
    count[proc]++;
    r->prev_proc = proc;
    r->prev_seq = seq;
}

/* Sorts s[0 .. n), indices of one processor's tasks, by seq (ties keep
 * their order). */
void sc__sort_by_seq(const sc__task *tasks, uint32_t *s, uint32_t n);

static inline sc__task *sc__graph_tasks(const sc__graph *g) { return (sc__task *)g->tasks.data; }
static inline sc__proc *sc__graph_procs(const sc__graph *g) { return (sc__proc *)g->procs.data; }
static inline size_t sc__graph_ntasks(const sc__graph *g) { return g->tasks.len; }
static inline const char *sc__graph_str(const sc__graph *g, uint32_t id) {
    return sc__intern_str(&g->strings, id);
}

/* Building. Each returns an index, or SC__NONE on out-of-memory. */
uint32_t sc__graph_add_rank(sc__graph *g, int64_t rank, uint32_t trace);
uint32_t sc__graph_add_proc(sc__graph *g, uint32_t rank, sc__proc_kind kind, int16_t device, int64_t id);
uint32_t sc__graph_add_task(sc__graph *g, const sc__task *t);
bool sc__graph_add_edge(sc__graph *g, uint32_t from, uint32_t to, sc__edge_family family);
uint32_t sc__graph_add_group(sc__graph *g, sc__coll_type type, int64_t bytes,
                             const uint32_t *members, uint32_t count);
bool sc__graph_warn(sc__graph *g, const char *fmt, ...) SC__PRINTF(2, 3);
/* The message size of a communication task: its group's bytes, else its
 * loose_bytes entry; -1 when unknown. */
int64_t sc__graph_task_bytes(const sc__graph *g, uint32_t task);

/* Sorts and dedups edges into CSR, adds processor-order edges implied by
 * seq (SC_E_THREAD / SC_E_STREAM) when add_order_edges is set, fills
 * procs[].first/ntasks, and checks acyclicity (iteratively). On a cycle it
 * fails with SC_E_GRAPH and a message naming tasks of the cycle; when its
 * arrays would take the job past g->budget, with SC_E_LIMIT first. */
sc_status sc__graph_finish(sc__graph *g, bool add_order_edges, sc_error *err);

/* Building from Kineto traces (src/graph/build*.c). */
typedef struct sc__build_options {
    int64_t iteration;    /* ProfilerStep number to build; -1 = the last complete one */
    bool hide_cuda_sync;  /* ignore cuda_sync events (to check the inference) */
    bool release_traces;  /* free each trace's events once its rank is built (the caller
                             reads them no more): traces and graph are never all in memory */
    bool keep_spare;      /* the graph's keep_spare: a replay calibrates it next */
} sc__build_options;

/* The N of every ProfilerStep#N annotation of a Kineto trace, ascending,
 * each once, appended to out (int64_t); false on out-of-memory. */
bool sc__trace_step_numbers(const sc_trace *t, sc__vec *out);

/* One graph for every rank of the set: the chosen iteration's tasks with all
 * edge families, cross-rank groups matched, finished (CSR, acyclic). */
sc_status sc__graph_build_kineto(const sc_traceset *set, const sc__build_options *opts,
                                 sc__graph **out, sc_error *err);

/* Build results beyond the graph: the self-check of the cross-stream
 * inference (when some rank had cuda_sync events). */
typedef struct sc__build_stats {
    bool sync_checked;
    uint64_t recorded, matched, missed, extra;
    unsigned threads; /* ranks built on this many threads at most */
} sc__build_stats;

/* The Kineto builder, with the self-check of the cross-stream inference
 * (stats may be NULL). */
sc_status sc__graph_build_kineto_stats(const sc_traceset *set, const sc__build_options *opts,
                                       sc__graph **out, sc__build_stats *stats, sc_error *err);

/* One graph from a set of Chakra .et ranks (build_chakra.c documents the
 * mapping): a Chakra file is one window already, so there are no options. */
sc_status sc__graph_build_chakra(const sc_traceset *set, sc__graph **out, sc_error *err);

/* The entry point for every command that takes traces (build_any.c): Kineto
 * traces go to the Kineto builder, Chakra ranks to build_chakra.c; a set
 * that mixes both, or asks a Chakra set for an iteration, is a usage error.
 * stats (may be NULL) gets the Kineto builder's self-check, zero for Chakra. */
sc_status sc__graph_build(const sc_traceset *set, const sc__build_options *opts, sc__graph **out,
                          sc__build_stats *stats, sc_error *err);

/* Bytes held by the graph (for bytes-per-task figures). */
size_t sc__graph_memory(const sc__graph *g);
/* The job's memory budget, so that a large job fails with a clear error
 * instead of swapping: g (its arrays as far
 * as written: capacity not yet used is not resident) and `besides` bytes
 * that the job holds or is about to take (traces not yet released, the
 * simulation) must fit `budget` (0: no cap); else SC_E_LIMIT
 * with what was being done - a clear error instead of swapping or the
 * out-of-memory killer. */
sc_status sc__graph_check_budget(const sc__graph *g, uint64_t budget, uint64_t besides,
                                 const char *doing, const char *besides_what, sc_error *err);

#endif /* SC_GRAPH_H */
