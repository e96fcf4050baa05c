/*
 * roofline.h - the time of one GPU kernel from its class, shape, data type
 * and the GPU, through one small interface (sc__kernel_timer) so that the
 * synthesised iteration of `stepcast model` can take any kernel cost model:
 * the default here (a roofline with efficiencies from hardware
 * measurements, roofline.c), calibrated from a trace, or a richer model
 * plugged in later.
 */
#ifndef SC_ROOFLINE_H
#define SC_ROOFLINE_H

#include "kernel_types.h"

/* A kernel as the timer sees it: class and dtype in the words of
 * kernel_types.h. The roofline times SC__KC_GEMM by its FLOPs,
 * SC__KC_ATTENTION by its FLOPs at the bf16 rate, every other class as
 * memory-bound work by its bytes. */
typedef struct sc__kernel_shape {
    uint8_t cls;    /* sc__kclass */
    uint8_t dtype;  /* sc__kdtype of the math (GEMM, attention); SC__DT_UNKNOWN: bf16 */
    uint32_t batch; /* batched products (GEMM), 1 otherwise */
    uint64_t m, n, k;
    double flops;   /* FLOPs performed */
    double bytes;   /* HBM bytes read and written */
} sc__kernel_shape;

/* The interface: microseconds for kernel k. ctx is the implementation's. */
typedef double (*sc__kernel_time_fn)(const void *ctx, const sc__kernel_shape *k);
typedef struct sc__kernel_timer {
    sc__kernel_time_fn time_us;
    const void *ctx;
} sc__kernel_timer;

/* The default implementation's parameters: the peaks and bandwidth are
 * the profile's sc__gpu_ceilings (kernel_types.c), the efficiencies each
 * with its source in roofline.c. */
typedef struct sc__roofline {
    double peak_tflops[SC__DT_COUNT]; /* dense tensor peaks (fp32: the non-tensor rate) */
    double gemm_eff[SC__DT_COUNT];    /* best large-GEMM throughput / peak (bf16, fp16, fp8, fp32) */
    double gemm_k0[SC__DT_COUNT], gemm_d0[SC__DT_COUNT]; /* shape per dtype: x k/(k+k0) x d/(d+d0),
                                         d = min(m,n) */
    double attn_eff;                  /* fused attention FLOP/s / bf16 peak */
    double hbm_GBps, hbm_eff;         /* achieved = hbm_GBps x hbm_eff */
    double min_us;                    /* the shortest kernel */
    /* Where each came from, for the report: "profile", "calibrated", ... */
    const char *gemm_from, *attn_from, *hbm_from;
} sc__roofline;

/* The roofline of profile p (its peaks and bandwidth, the measured
 * efficiencies of its GPU family). */
void sc__roofline_init(sc__roofline *r, const sc__hw_profile *p);
/* The roofline as a timer (r must outlive it). */
sc__kernel_timer sc__roofline_timer(const sc__roofline *r);
double sc__roofline_time_us(const void *ctx, const sc__kernel_shape *k);
/* The shape factor of a GEMM in dtype (sc__kdtype; 1 for a large,
 * square one). */
double sc__roofline_gemm_shape(const sc__roofline *r, uint8_t dtype, uint64_t m, uint64_t n, uint64_t k);

#endif /* SC_ROOFLINE_H */
