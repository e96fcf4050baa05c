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

#include "hardware.h"

typedef enum sc__kclass {
    SC__K_GEMM = 0, /* a (batched) matrix product: 2 * batch * m * n * k FLOPs */
    SC__K_ATTN,     /* a fused (flash) attention kernel: its FLOPs given */
    SC__K_MEM,      /* memory-bound work (norms, activations, softmax, copies, the optimizer) */
    SC__K_COUNT
} sc__kclass;

typedef enum sc__dtype { SC__DT_BF16 = 0, SC__DT_FP16, SC__DT_FP8, SC__DT_FP32, SC__DT_COUNT } sc__dtype;

/* A kernel as the timer sees it. */
typedef struct sc__kernel_shape {
    uint8_t cls;    /* sc__kclass */
    uint8_t dtype;  /* sc__dtype of the math (GEMM, attention) */
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

/* The default implementation's parameters, each with its source in
 * roofline.c. */
typedef struct sc__roofline {
    double peak_tflops[SC__DT_COUNT]; /* dense tensor peaks (fp32: the non-tensor rate) */
    double gemm_eff[SC__DT_COUNT];    /* best large-GEMM throughput / peak */
    double gemm_k0, gemm_d0;          /* shape: x k/(k+k0) x min(m,n)/(min(m,n)+d0) */
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
/* The shape factor of a GEMM (1 for a large, square one). */
double sc__roofline_gemm_shape(const sc__roofline *r, uint64_t m, uint64_t n, uint64_t k);

#endif /* SC_ROOFLINE_H */
