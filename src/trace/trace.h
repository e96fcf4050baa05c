/*
 * trace.h - the in-memory model of one rank's Kineto trace.
 *
 * The reader (src/readers/kineto.c) fills an sc_trace; every later stage
 * (graph, simulator, reports) reads it. Events are kept in one flat array of
 * compact records in file order; the rare rich arguments (collective metadata,
 * shapes, launch geometry, cuda_sync fields) live in a side array of extras so
 * the common record stays small. Names, categories and string-valued pids/tids
 * are interned. Times are int64 nanoseconds on the trace's absolute clock
 * (baseTimeNanoseconds already added).
 */
#ifndef SC_TRACE_H
#define SC_TRACE_H

#include "../base/base.h"

/* What an event is, derived from its category (and name for a few). */
typedef enum sc__kind {
    SC_K_OTHER = 0,
    SC_K_CPU_OP,          /* cpu_op */
    SC_K_USER_ANNOTATION, /* user_annotation (ProfilerStep#N, module scopes) */
    SC_K_GPU_ANNOTATION,  /* gpu_user_annotation */
    SC_K_RUNTIME,         /* cuda_runtime / hip runtime */
    SC_K_DRIVER,          /* cuda_driver */
    SC_K_KERNEL,          /* kernel */
    SC_K_MEMCPY,          /* gpu_memcpy */
    SC_K_MEMSET,          /* gpu_memset */
    SC_K_PYTHON,          /* python_function */
    SC_K_INSTANT,         /* cpu_instant_event */
    SC_K_CUDA_SYNC,       /* cuda_sync (enable_cuda_sync_events) */
    SC_K_FLOW_LAUNCH,     /* ac2g / async_cpu_to_gpu flow */
    SC_K_FLOW_FWDBWD,     /* fwdbwd flow */
    SC_K_TRACE_SPAN,      /* Trace ("PyTorch Profiler (0)") */
    SC_K_METADATA,        /* ph M */
    SC_K_COUNT
} sc__kind;

enum {
    SC_EF_BP_ENCLOSING = 1u << 0, /* flow "bp":"e" */
    SC_EF_NCCL = 1u << 1,         /* a kernel of NCCL/RCCL (collective or p2p) */
    SC_EF_GPU = 1u << 2,          /* kernel, memcpy or memset */
};

typedef struct sc__event {
    int64_t ts;          /* ns, absolute */
    int64_t dur;         /* ns, 0 for instants */
    int64_t correlation; /* args.correlation, or the flow id; -1 when absent */
    int64_t external_id; /* args."External id"; -1 when absent */
    uint32_t name;       /* interned */
    uint32_t cat;        /* interned category text ("" when absent) */
    uint32_t track;      /* index into sc_trace.tracks */
    uint32_t ext;        /* index into sc_trace.exts, SC__NONE when none */
    int32_t stream;      /* args.stream, -1 when absent */
    int16_t device;      /* args.device, -1 when absent */
    uint8_t kind;        /* sc__kind */
    char ph;             /* phase: X, s, f, i, M, ... */
    uint16_t flags;      /* SC_EF_* */
    uint16_t cbid;       /* args.cbid (runtime callback id), 0 when absent */
    uint32_t shapes;     /* index into sc_trace.shapes, SC__NONE when none */
} sc__event;

/* An operator's "Input Dims" and "Input type", raw JSON text, interned
 * (SC__NONE when absent). Nearly every cpu_op carries both and nothing else
 * rich, so they have this 8-byte side array of their own rather than a
 * 136-byte extras record each: half the memory of a trace with shapes. */
typedef struct sc__event_shapes {
    uint32_t dims, types;
} sc__event_shapes;

/* Rich arguments; integer fields are -1 and string ids SC__NONE when absent. */
typedef struct sc__event_ext {
    int64_t bytes;         /* memcpy/memset bytes */
    int64_t in_nelems;     /* "In msg nelems" */
    int64_t out_nelems;    /* "Out msg nelems" */
    int64_t seq;           /* collective "Seq" */
    int64_t seq_number;    /* autograd "Sequence number" */
    int64_t fwd_tid;       /* "Fwd thread id" */
    int64_t rf_id;         /* "Record function id" */
    int64_t wait_corr;     /* "wait_on_cuda_event_record_corr_id" */
    int64_t wait_event;    /* "wait_on_cuda_event_id" */
    int64_t group_size;    /* "Group size" */
    int32_t wait_stream;   /* "wait_on_stream" */
    int32_t grid[3];
    int32_t block[3];
    uint32_t coll_name;    /* "Collective name" */
    uint32_t dtype;        /* "dtype" */
    uint32_t pg_name;      /* "Process Group Name" */
    uint32_t pg_desc;      /* "Process Group Description" */
    uint32_t pg_ranks;     /* "Process Group Ranks" (raw text) */
    uint32_t label;        /* args.name of metadata events */
    uint32_t unused;       /* zero: padding made explicit */
} sc__event_ext;

/* No hidden padding in the records a reader stores: every byte is a field
 * the reader sets, so two reads compare with memcmp (sc__trace_same). */
_Static_assert(sizeof(sc__event) == 64, "sc__event has hidden padding");
_Static_assert(sizeof(sc__event_ext) == 136, "sc__event_ext has hidden padding");

/* A CPU thread (pid = OS pid, tid = OS tid) or a GPU stream (pid = device,
 * tid = stream). String pids/tids ("Spans", "Traces") are interned and kept
 * apart from numeric ones. */
typedef struct sc__track {
    int64_t pid, tid;
    uint32_t pid_str, tid_str; /* SC__NONE when numeric */
} sc__track;

typedef struct sc__device_prop {
    int64_t id;
    uint32_t name; /* interned */
    int32_t num_sms;
} sc__device_prop;

struct sc_trace {
    char *path;
    sc__intern strings;
    sc__vec events;  /* sc__event */
    sc__vec exts;    /* sc__event_ext */
    sc__vec shapes;  /* sc__event_shapes */
    sc__vec tracks;  /* sc__track */
    sc__vec devices; /* sc__device_prop */
    uint32_t *track_slots; /* hash of tracks: index+1, 0 = empty */
    uint32_t track_nslots;

    int64_t rank, world_size; /* -1 when unknown */
    uint32_t backend;         /* interned, "" when unknown */
    int64_t base_time_ns;     /* baseTimeNanoseconds, 0 when absent */
    int64_t schema_version;   /* -1 when absent */
    uint64_t input_bytes;     /* bytes of JSON read */
    uint32_t rank_source;     /* 0 distributedInfo, 1 file name, 2 argument order */

    /* Chakra ranks (src/readers/chakra.c): no events; the file's
     * decompressed bytes are kept and decoded by sc__graph_build(). */
    uint8_t format;        /* SC__FMT_KINETO (0) or SC__FMT_CHAKRA */
    uint8_t *chakra_data;  /* malloc'ed, freed by sc_trace_free */
    size_t chakra_size;
    uint64_t chakra_nodes; /* Node messages in the file */

    bool header_only; /* sc__trace_keep_header: nothing else is left */
};

enum { SC__FMT_KINETO = 0, SC__FMT_CHAKRA = 1 };

sc_trace *sc__trace_new(const char *path);
/* Frees the events and their args (the bulk of a trace), keeping its
 * metadata, strings and tracks: for a caller done with the events (the graph
 * builder's release_traces). The trace then has no events. */
void sc__trace_release_events(sc_trace *t);
/* Frees everything but the header - path, rank, world size, format, byte
 * and node counts - strings, tracks and a Chakra file's bytes included, for
 * a caller that has taken what it needs from a trace of a large set
 * (`info`). What reads events refuses such a trace (sc__trace_check_whole). */
void sc__trace_keep_header(sc_trace *t);
/* SC_E_USAGE, naming the file, for a trace cut to its header; else SC_OK. */
sc_status sc__trace_check_whole(const sc_trace *t, sc_error *err);
/* Appends src's events (with their extras and shapes) to dst, mapping
 * src's string and track ids into dst's. Ids are interned in src's id
 * order, which is the order they first occur in src: a trace read in slices
 * and appended slice by slice gets exactly the ids of one sequential read.
 * False on OOM (dst then holds a prefix of src's events). */
bool sc__trace_append(sc_trace *dst, const sc_trace *src);
/* Are a and b the same trace, array for array and string id for string id?
 * For the tests and fuzzers that compare two ways of reading one file. */
bool sc__trace_same(const sc_trace *a, const sc_trace *b);
/* Track index of (pid, tid), created on first use; SC__NONE on OOM. */
uint32_t sc__trace_track(sc_trace *t, int64_t pid, uint32_t pid_str, int64_t tid,
                         uint32_t tid_str);
static inline sc__event *sc__trace_events(const sc_trace *t) {
    return (sc__event *)t->events.data;
}
static inline const sc__event_ext *sc__trace_ext(const sc_trace *t, const sc__event *e) {
    return e->ext == SC__NONE ? NULL : &((const sc__event_ext *)t->exts.data)[e->ext];
}
static inline const sc__event_shapes *sc__trace_shapes(const sc_trace *t, const sc__event *e) {
    return e->shapes == SC__NONE ? NULL : &((const sc__event_shapes *)t->shapes.data)[e->shapes];
}
static inline const sc__track *sc__trace_track_at(const sc_trace *t, uint32_t i) {
    return &((const sc__track *)t->tracks.data)[i];
}
static inline const char *sc__trace_str(const sc_trace *t, uint32_t id) {
    return sc__intern_str(&t->strings, id);
}
/* Device and stream of a GPU event: its args when present, else its track
 * (pid = device, tid = stream), as Kineto lays GPU events out. */
static inline int16_t sc__event_device(const sc_trace *t, const sc__event *e) {
    if (e->device >= 0) return e->device;
    int64_t pid = sc__trace_track_at(t, e->track)->pid;
    return pid >= 0 && pid <= INT16_MAX ? (int16_t)pid : 0;
}
static inline int64_t sc__event_stream(const sc_trace *t, const sc__event *e) {
    return e->stream >= 0 ? e->stream : sc__trace_track_at(t, e->track)->tid;
}
sc__kind sc__kind_from_category(const char *cat, size_t n);
/* True for NCCL / RCCL kernel names (ncclKernel_*, ncclDevKernel_*). */
bool sc__is_nccl_kernel_name(const char *name);
/* The collective kind of an NCCL kernel name ("AllReduce", "SendRecv", ...). */
size_t sc__nccl_kind(const char *name, char *buf, size_t size);
/* The GPU name of the device the trace's kernels ran on ("" when unknown). */
const char *sc__trace_gpu_name(const sc_trace *t);

/* Trace sets: the job's ranks, sorted by rank (traceset.c; loaded by
 * src/readers/traceset_load.c). */
struct sc_traceset {
    sc_trace **traces;
    size_t count;
    unsigned threads; /* the load's thread cap, kept for building its graph */
    uint64_t budget;  /* the load's memory budget, which the job built from it keeps too */
    sc__warnings warnings;
    sc__progress *progress; /* the load's, kept for the graph and simulation; NULL: none */
    bool progress_owned;    /* made by the load (else a caller's, from its options) */
};

/* Bytes the set's traces hold now (sc_trace_memory of each). */
uint64_t sc__traceset_memory(const sc_traceset *set);

#endif /* SC_TRACE_H */
