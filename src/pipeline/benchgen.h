/*
 * benchgen.h - the op list of a benchmark generated from a PyTorch
 * Execution Trace (benchgen.c): which ET nodes the generated program runs,
 * how (an aten call, a collective, a wait on one, an emulated Triton
 * kernel), on which traced CUDA stream and after which events, and what it
 * leaves out and why. report/benchgen_report.c writes it out as the data
 * file of the generated Python program and as `stepcast benchgen`'s report.
 */
#ifndef SC_PIPELINE_BENCHGEN_H
#define SC_PIPELINE_BENCHGEN_H

#include "et_link.h"
#include "../readers/json.h"

/* What the program does with a replay unit. */
typedef enum sc__bg_kind {
    SC__BG_CALL,     /* torch.ops.<ns>.<op>.<overload> with the traced arguments */
    SC__BG_COLL,     /* a collective through torch.distributed */
    SC__BG_WAIT,     /* waits for an earlier collective (record_param_comms "wait") */
    SC__BG_EMULATED, /* an Inductor (Triton) kernel whose arguments the ET lacks:
                        one elementwise kernel over the buffer allocated before it */
    SC__BG_MARKER,   /* an annotation left as a leaf: no tensor work, nothing to run */
    SC__BG_SKIP,     /* not replayable (reason) */
    SC__BG_KINDS
} sc__bg_kind;

/* Why a unit is skipped (sc__bg_reason_text). */
typedef enum sc__bg_reason {
    SC__BGR_NONE,
    SC__BGR_NO_SCHEMA,      /* a leaf with arguments but no operator schema */
    SC__BGR_BAD_SCHEMA,     /* an operator schema that does not parse */
    SC__BGR_OPAQUE_ARG,     /* an argument of a type the ET does not record (Stream, Storage, Object) */
    SC__BGR_COMM_LAYOUT,    /* a record_param_comms whose arguments are not understood */
    SC__BGR_COMM_KIND,      /* a collective kind the program does not issue (send, recv, ...) */
    SC__BGR_TRITON_NO_BUF,  /* a Triton kernel with no buffer allocated before it */
    SC__BGR_COUNT
} sc__bg_reason;

const char *sc__bg_reason_text(sc__bg_reason r);
const char *sc__bg_kind_name(sc__bg_kind k);

/* A span of text: an op schema's parts. */
typedef struct sc__span {
    const char *s;
    uint32_t n;
} sc__span;

#define SC__BG_MAX_PARAMS 64
/* "ns::op.overload(Type name, ..., *, Type name=default) -> Ret". */
typedef struct sc__bg_schema {
    sc__span ns, op, overload; /* overload empty for "default" */
    uint32_t nparams, kwonly;  /* params at index >= kwonly are keyword-only */
    sc__span type[SC__BG_MAX_PARAMS], name[SC__BG_MAX_PARAMS];
} sc__bg_schema;

/* Parses an op schema; false when it does not have that shape. */
bool sc__bg_parse_schema(const char *s, sc__bg_schema *out);

/* The top-level elements of a raw JSON array (spans into raw); at most max.
 * Returns their count, or -1 when raw is not an array. */
int sc__bg_json_items(const char *raw, sc__span *items, int max);

/* A collective, read off its record_param_comms node. */
typedef struct sc__bg_comm {
    uint32_t info_node;          /* the record_param_comms node */
    sc__span kind;               /* "allreduce", "all_to_allv", "wait", ... */
    int64_t seq, pg, group_size; /* group_size -1 when the ET does not say */
    sc__span in_split, out_split; /* raw JSON lists (elements), possibly "[]" */
    sc__span in_tensors, out_tensors; /* raw JSON values */
    uint64_t in_elems, out_elems; /* numel of the traced tensors */
    uint32_t elem_size;
} sc__bg_comm;

typedef struct sc__bg_unit {
    uint32_t node;        /* ET node index (id order) */
    uint32_t top;         /* its top-level ancestor (a child of a thread root) */
    uint32_t leaves;      /* leaf ops of the ET this unit covers */
    uint32_t kernels;     /* GPU ops launched inside it (Kineto), 0 without Kineto */
    int32_t stream;       /* the stream of its GPU work, -1 when none or unknown */
    uint32_t wait_first, wait_count; /* units on other streams it waits for (sc__bg_rank.waits) */
    uint32_t emu_buf;     /* EMULATED: the unit whose output it writes */
    uint32_t comm;        /* COLL/WAIT: index into sc__bg_rank.comms, else SC__NONE */
    uint8_t kind, reason; /* sc__bg_kind, sc__bg_reason */
    uint8_t record;       /* a unit on another stream waits for this one */
} sc__bg_unit;

/* GPU ops launched outside every replayed unit, by top-level op name. */
typedef struct sc__bg_gap {
    uint32_t name; /* ET-interned */
    uint32_t ops, kernels;
} sc__bg_gap;

/* Leaf ops of one name: how many, and how many the program runs. */
typedef struct sc__bg_name {
    uint32_t name; /* ET-interned */
    uint32_t leaves, run, markers;
} sc__bg_name;

typedef struct sc__bg_rank {
    const sc_et *et;
    const sc_trace *kineto; /* may be NULL */
    int64_t rank;
    sc__et_link link;
    bool kineto_mismatch;   /* the Kineto trace is not of the ET's iteration */
    int64_t step;           /* the ProfilerStep#N replayed; -1: the ET has none (all of it) */
    int64_t et_steps[2];    /* the ET's first and last ProfilerStep numbers, -1 when none */
    int64_t kineto_steps[2]; /* the Kineto trace's, -1 when none (or no trace) */
    bool kineto_lacks_step; /* the Kineto trace has ProfilerSteps, not this one */
    uint32_t whole_ops;     /* aten ops run whole (not their children): they launch
                               GPU work of their own, or their children only allocate */
    sc__vec units;          /* sc__bg_unit, in ET id order */
    sc__vec waits;          /* uint32_t unit indices */
    sc__vec comms;          /* sc__bg_comm */
    sc__vec gaps;           /* sc__bg_gap */
    sc__vec names;          /* sc__bg_name, in order of first appearance */
    uint64_t leaves, leaves_by_kind[SC__BG_KINDS];
    uint64_t skipped_by_reason[SC__BGR_COUNT];
    uint64_t kernels_total, kernels_covered;
    int32_t main_stream;    /* the stream most CALL units run on, -1 */
} sc__bg_rank;

/* Computes the op list of one rank for ProfilerStep#iteration (-1: the
 * last one complete in the Kineto trace too). kineto may be NULL (streams
 * and GPU coverage then unknown). SC_E_USAGE when the ET lacks that step. */
sc_status sc__bg_rank_build(sc__bg_rank *r, const sc_et *et, const sc_trace *kineto, int64_t rank, int64_t iteration,
                            sc_error *err);
void sc__bg_rank_free(sc__bg_rank *r);

/* --shrink K applied to one dimension: a dimension of at least 64 that K
 * divides is divided by K, any other is kept (the generated program applies
 * the same rule). */
static inline int64_t sc__bg_shrink_dim(int64_t d, int64_t k) {
    return k > 1 && d >= 64 && d % k == 0 ? d / k : d;
}

/* The public sc_benchgen: every rank's op list, the options, and the
 * warnings (strings, malloc'ed). */
struct sc_benchgen {
    sc__bg_rank *ranks;
    size_t nranks;
    sc_benchgen_options opts;
    char **warnings;
    size_t nwarnings;
};

#endif /* SC_PIPELINE_BENCHGEN_H */
