/*
 * kernel_cost.h - how long a GPU kernel takes, from what it computes: its
 * class (GEMM, attention, elementwise, ...), the shapes and dtype of the
 * operator that enqueued it, and the GPU's hardware profile.
 *
 * The model (kernel_cost.c):
 *   GEMM and attention   floor + max(F / (peak x eff x (1 + edge / d)),
 *                                    B / (HBM x mem_eff))
 *                        F the FLOPs, B the bytes moved, d the smallest of
 *                        a GEMM's dimensions (tiles left part-empty and
 *                        short main loops cost most on a thin operand), or
 *                        attention's shorter sequence;
 *   every other class    floor + B / (HBM x mem_eff).
 * Its parameters start from the profile (sc__kcost_defaults: eff the GPU's
 * measured GEMM ceiling, mem_eff its measured copy bandwidth) and can be
 * fitted per class to a trace's own kernels (sc__kcost_fit), eff never
 * above the measured ceiling. The config-only model times synthesized
 * kernels with the defaults; trace-driven edits use the ratio
 * model(new shape) / model(traced shape), which keeps what the trace knows.
 *
 * Shapes come from the enqueuing operator's "Input Dims" / "Input type"
 * (kernel_shapes.c links kernels to operators); sc__kshape_parse reads
 * them for the operator forms below.
 */
#ifndef SC_KERNEL_COST_H
#define SC_KERNEL_COST_H

#include "../trace/trace.h"
#include "kernel_types.h"

/* How an operator's tensors say what its kernel computes. */
typedef enum sc__kform {
    SC__KF_NONE = 0, /* no shapes */
    SC__KF_MM,       /* mm(A[M,K], B[K,N]) */
    SC__KF_ADDMM,    /* addmm(C, A[M,K], B[K,N]) */
    SC__KF_BMM,      /* bmm(A[b,M,K], B[b,K,N]) */
    SC__KF_BADDBMM,  /* baddbmm(C[b,M,N], A[b,M,K], B[b,K,N]) */
    SC__KF_MATMUL,   /* matmul(A[...,M,K], B[...,K,N]) */
    SC__KF_LINEAR,   /* linear(X[...,K], W[N,K], bias) */
    SC__KF_SDPA,     /* scaled_dot_product_*(q[b,a,s,d], k[b,a,s,d], v) */
    SC__KF_FLASH,    /* flash_attn(q[b,s,a,d], k[b,s,a,d], v) */
    SC__KF_TENSORS,  /* memory-bound: the bytes of its tensors */
    SC__KF_BYTES,    /* a copy or fill of known bytes (the GPU event's "bytes") */
    SC__KF_COUNT
} sc__kform;

#define SC__KS_TENSORS 4
#define SC__KS_DIMS 4

/* What one kernel computes: its class and its operator's first tensors. */
typedef struct sc__kshape {
    int64_t dim[SC__KS_TENSORS][SC__KS_DIMS];
    uint8_t ndim[SC__KS_TENSORS];  /* 0: not a tensor (a scalar, None, or too many dims) */
    uint8_t esize[SC__KS_TENSORS]; /* bytes per element (2 when the type does not say) */
    uint8_t ntensors;              /* argument slots read (tensor or not) */
    uint8_t form;                  /* sc__kform */
    uint8_t cls;                   /* sc__kclass */
    uint8_t dtype;                 /* sc__kdtype of the first tensor */
    uint8_t backward;              /* an attention backward (2.5 x the forward's FLOPs) */
    uint8_t unused[3];
    double extra_bytes;            /* bytes of tensor lists and of tensors past the first
                                      SC__KS_TENSORS (not re-shaped by edits) */
} sc__kshape;

/* The class of a kernel from its name, its enqueuing operator's name
 * (NULL or "" when none) and its task kind (graph.h: SC_T_KERNEL, SC_T_MEMCPY,
 * SC_T_MEMSET, or a communication kind). */
sc__kclass sc__kcost_classify(const char *kernel, const char *op, uint8_t task_kind);

/* The same class in two halves, for a caller with many kernels of few
 * distinct names (kernel_shapes.c, by trace string id): what a kernel's
 * name says (its class as a name and two flags, below 0x40) and the class
 * its operator's name gives, each worked out once per distinct name, then
 * joined with the task kind: sc__kcost_classify(k, op, kind) ==
 * sc__kcost_classify_facts(sc__kcost_name_facts(k), sc__kcost_op_class(op), kind). */
uint8_t sc__kcost_name_facts(const char *kernel);
sc__kclass sc__kcost_op_class(const char *op);
sc__kclass sc__kcost_classify_facts(uint8_t name_facts, sc__kclass op_class, uint8_t task_kind);

/* Reads an operator's "Input Dims" and "Input type" JSON text (either may
 * be NULL) into out, whose cls the caller has set: the form follows from
 * the operator's name and the class. False (out->form SC__KF_NONE) when
 * the shapes say nothing usable. */
bool sc__kshape_parse(const char *op, const char *dims, const char *types, sc__kshape *out);

/* Shapes built in code, for kernels no trace holds (the config-only
 * model): a GEMM of b batches of [m, k] x [k, n]; fused attention over
 * b x heads, query and key lengths sq and sk, head dim d; a memory-bound
 * kernel of class cls that moves `bytes`. dtype: sc__kdtype. */
sc__kshape sc__kshape_gemm(int64_t b, int64_t m, int64_t n, int64_t k, uint8_t dtype);
sc__kshape sc__kshape_attention(int64_t b, int64_t heads, int64_t sq, int64_t sk, int64_t d, bool backward,
                                uint8_t dtype);
sc__kshape sc__kshape_bytes(uint8_t cls, double bytes);

/* FLOPs and bytes of a shape; false when it has none. */
bool sc__kshape_work(const sc__kshape *k, double *flops, double *bytes);
/* The smallest problem dimension of a GEMM shape, the shorter sequence of
 * an attention shape (0: none). */
int64_t sc__kshape_min_dim(const sc__kshape *k);

/* A GEMM form's (batch, M, N, K) for out = A[M, K] B[K, N]; false when
 * k is not a GEMM form or its tensors do not fit it. */
bool sc__kshape_gemm_dims(const sc__kshape *k, int64_t *b, int64_t *m, int64_t *n, int64_t *kk);

/* One class's parameters. */
typedef struct sc__kclass_params {
    double eff;      /* share of the peak rate reached (GEMM, attention) */
    double edge;     /* the thin-operand penalty's scale, elements */
    double mem_eff;  /* share of HBM bandwidth reached */
    double floor_ns; /* fixed cost of a kernel */
    uint64_t fitted; /* traced kernels the fit used; 0: the profile's defaults */
} sc__kclass_params;

/* Its rates and ceilings are the profile's sc__gpu_ceilings (kernel_types.h). */
typedef struct sc__kcost_model {
    char gpu[64];
    double peak_tflops[SC__DT_COUNT]; /* dense rate per dtype (0: none) */
    double hbm_GBps;
    double gemm_ceiling; /* measured best GEMM rate / dense peak: eff's bound */
    double hbm_ceiling;  /* measured copy bandwidth / HBM peak: mem_eff's default */
    const char *ceiling_source; /* where the ceilings come from (static text) */
    sc__kclass_params cls[SC__KC_COUNT];
} sc__kcost_model;

/* The model of profile p with no trace: each class at its defaults. */
void sc__kcost_defaults(const sc__hw_profile *p, sc__kcost_model *m);

/* The modelled time (ns) of a kernel of shape k; -1 when k has no shape or
 * its class is not timed here (collectives). */
double sc__kcost_time_ns(const sc__kcost_model *m, const sc__kshape *k);

/* Fits class cls's parameters to n traced kernels of that class (shapes k,
 * traced durations ns > 0): minimises the squared log error, eff bounded by
 * m->gemm_ceiling and mem_eff by 1. Kernels of one shape count as their
 * median, weighted by their number. Returns the kernels used (0: the
 * parameters are unchanged); false on out-of-memory via *ok. */
uint64_t sc__kcost_fit(sc__kcost_model *m, uint8_t cls, const sc__kshape *k, const int64_t *ns, size_t n,
                       bool *ok);

/* The backward of a forward kernel of shape k (kernel_backward.c): how
 * many kernels it becomes (returned, 1 or 2) and each one's time as a
 * ratio to the forward's under model m. A GEMM Y = X W becomes
 * dX = dY W^T and dW = X^T dY; fused attention its backward (2.5 x the
 * FLOPs); the memory-bound classes one kernel reading twice the bytes;
 * a fill one fill. Without shapes, a GEMM is two GEMMs of its FLOPs and
 * attention 2.5 x; *shaped says whether the shapes were used. */
int sc__kcost_backward(const sc__kcost_model *m, const sc__kshape *k, double ratio[2], bool *shaped);

/* ------------------------------------------------------------ from a trace */

/* One GPU event of a trace with its shape (kernel_shapes.c). */
typedef struct sc__krec {
    uint32_t event;    /* the GPU event's index in its trace */
    uint32_t op_event; /* its enqueuing operator's event index, SC__NONE */
    sc__kshape shape;  /* cls always set; form SC__KF_NONE when no shape */
} sc__krec;

typedef struct sc__krecs {
    sc__krec *recs; /* by ascending event */
    size_t n;
} sc__krecs;

/* The kernels, copies and fills of t (collectives included, class
 * SC__KC_COLLECTIVE), each linked to the innermost operator enclosing its
 * launch call on the launching thread (the nearest enclosing one with
 * shapes when that has none), classified and shaped. False on
 * out-of-memory. */
bool sc__krecs_collect(const sc_trace *t, sc__krecs *out);
void sc__krecs_free(sc__krecs *r);
/* The record of GPU event `event`, NULL when none. */
const sc__krec *sc__krecs_find(const sc__krecs *r, uint32_t event);

struct sc__graph;
/* The record of graph task `task` (NULL when none): recs holds every
 * trace's records, indexed as the set's traces; the task's rank says
 * which, its event which record. */
const sc__krec *sc__krecs_task(const struct sc__graph *g, const sc__krecs *recs, uint32_t task);

#endif /* SC_KERNEL_COST_H */
