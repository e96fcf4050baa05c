/*
 * kernel_types.h - the words both kernel time models use (kernel_types.c):
 * the kernel classes, the data types that pick a peak rate, and what a
 * GPU reaches at best, derived once from its hardware profile. The
 * trace-driven cost model (kernel_cost.h) and the roofline of `stepcast
 * model` (roofline.h) both take these, so a class or a dtype means the
 * same number in either, and a GPU's peaks and measured ceilings are
 * written in one place.
 */
#ifndef SC_KERNEL_TYPES_H
#define SC_KERNEL_TYPES_H

#include "hardware.h"

/* What a kernel computes. GEMM and attention are timed by their FLOPs
 * (and bytes); every other class by its bytes alone. */
typedef enum sc__kclass {
    SC__KC_GEMM = 0,    /* a (batched) matrix product */
    SC__KC_ATTENTION,   /* fused attention (flash, SDPA memory-efficient / cuDNN) */
    SC__KC_ELEMENTWISE, /* pointwise, fused pointwise (Triton), fills */
    SC__KC_NORM,        /* layer / RMS / group / batch norm */
    SC__KC_SOFTMAX,
    SC__KC_OPTIMIZER,   /* Adam & co., multi-tensor apply, foreach ops */
    SC__KC_COPY,        /* memcpy, copies, casts, gathers, concatenation */
    SC__KC_MEMSET,
    SC__KC_REDUCTION,   /* sums, maxima, norms of a tensor, split-K reductions */
    SC__KC_OTHER,
    SC__KC_COLLECTIVE,  /* NCCL/RCCL: the communication model's (comm.h), not timed here */
    SC__KC_COUNT
} sc__kclass;

/* "gemm", "attention", ... */
const char *sc__kclass_name(uint8_t cls);

/* Data types that pick a peak rate. */
typedef enum sc__kdtype {
    SC__DT_UNKNOWN = 0, SC__DT_FP16, SC__DT_BF16, SC__DT_FP32, SC__DT_FP64, SC__DT_FP8, SC__DT_INT,
    SC__DT_COUNT
} sc__kdtype;

/* "bf16", "fp16", "fp8", ...; "?" for SC__DT_UNKNOWN or out of range. */
const char *sc__dtype_name(uint8_t d);

/* The GPU families with measurements here (by profile name). */
typedef enum sc__gpu_family { SC__GPU_OTHER = 0, SC__GPU_A100, SC__GPU_H100, SC__GPU_H200, SC__GPU_GH200 } sc__gpu_family;

/* What a GPU reaches at best. */
typedef struct sc__gpu_ceilings {
    double peak_tflops[SC__DT_COUNT]; /* dense rate per dtype (0: none) */
    double hbm_GBps;                  /* HBM peak bandwidth */
    double gemm_share;                /* measured best GEMM rate / dense peak */
    double hbm_share;                 /* measured copy bandwidth / HBM peak */
    const char *source;               /* where the shares come from (static text) */
    uint8_t family;                   /* sc__gpu_family */
} sc__gpu_ceilings;

/* The ceilings of profile p: its peaks per dtype (bf16 and fp8 at the
 * fp16 rate where it has no such path, int and unknown types at the fp16
 * rate) and its family's measured shares (the H100's, said by source,
 * where none is measured). */
void sc__gpu_ceilings_of(const sc__hw_profile *p, sc__gpu_ceilings *out);

#endif /* SC_KERNEL_TYPES_H */
