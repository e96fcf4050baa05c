/*
 * kernel_backward.c - the backward of a forward kernel under the kernel
 * cost model (kernel_cost.h), for a forward-only trace extended with a
 * modelled backward (transforms/bwd_model.c): what each forward kernel
 * becomes and how long that takes relative to its traced forward time.
 *
 * GEMM Y[M, N] = X[M, K] W[K, N]: the input gradient dX = dY W^T is an
 * [M, N] x [N, K] product and the weight gradient dW = X^T dY a
 * [K, M] x [M, N] one; batched GEMMs (attention's scores and context) the
 * same per batch (the gradients of both operands). Each is timed by the
 * model on its own shape, so a thin wgrad or a long inner dimension costs
 * what the fitted efficiency says, not a blanket 2x. Fused attention: the
 * backward shape (2.5 x the FLOPs, twice the bytes). Elementwise, norm,
 * softmax, reduction, copy and other memory-bound kernels: one kernel
 * moving twice the forward's bytes (it reads the output's gradient and a
 * saved input); fills: one fill.
 */
#include "kernel_cost.h"

#include <string.h>

static double ratio_of(const sc__kcost_model *m, const sc__kshape *fwd, const sc__kshape *bwd) {
    double t0 = sc__kcost_time_ns(m, fwd), t1 = sc__kcost_time_ns(m, bwd);
    return t0 > 0 && t1 > 0 ? t1 / t0 : -1;
}

static int gemm(const sc__kcost_model *m, const sc__kshape *k, double r[2], bool *shaped) {
    int64_t b, M, N, K;
    if (sc__kshape_gemm_dims(k, &b, &M, &N, &K)) {
        uint8_t dt = k->dtype;
        sc__kshape f = sc__kshape_gemm(b, M, N, K, dt), dx = sc__kshape_gemm(b, M, K, N, dt),
                   dw = sc__kshape_gemm(b, K, N, M, dt);
        r[0] = ratio_of(m, &f, &dx);
        r[1] = ratio_of(m, &f, &dw);
        if (r[0] > 0 && r[1] > 0) {
            *shaped = true;
            return 2;
        }
    }
    r[0] = r[1] = 1;
    return 2;
}

static double bytes_ratio(const sc__kcost_model *m, const sc__kshape *k, bool *shaped) {
    double flops, bytes;
    if (!sc__kshape_work(k, &flops, &bytes) || bytes <= 0) return 2;
    sc__kshape a = sc__kshape_bytes(k->cls, bytes), b = sc__kshape_bytes(k->cls, 2 * bytes);
    double r = ratio_of(m, &a, &b);
    if (r <= 0) return 2;
    *shaped = true;
    return r;
}

int sc__kcost_backward(const sc__kcost_model *m, const sc__kshape *k, double ratio[2], bool *shaped) {
    *shaped = false;
    ratio[0] = ratio[1] = 1;
    switch (k->cls) {
    case SC__KC_GEMM: return gemm(m, k, ratio, shaped);
    case SC__KC_ATTENTION:
        if (k->form == SC__KF_SDPA || k->form == SC__KF_FLASH) {
            sc__kshape b = *k;
            b.backward = 1;
            double r = ratio_of(m, k, &b);
            if (r > 0) {
                *shaped = true;
                ratio[0] = r;
                return 1;
            }
        }
        ratio[0] = 2.5;
        return 1;
    case SC__KC_MEMSET: return 1;
    default: ratio[0] = bytes_ratio(m, k, shaped); return 1;
    }
}
