/*
 * roofline.c - the default kernel timer of `stepcast model` (roofline.h):
 *
 *   GEMM       2*b*m*n*k / (peak[dtype] x gemm_eff[dtype] x shape(m, n, k))
 *   attention  flops / (bf16 peak x attn_eff)
 *   memory     bytes / (HBM bandwidth x hbm_eff)
 *
 * each at least min_us, and a GEMM or attention kernel never faster than
 * its bytes allow. The peaks per dtype, the HBM bandwidth and the GPU's
 * family are the profile's, derived once for this and the trace-driven
 * kernel cost model (sc__gpu_ceilings_of, kernel_types.c). Every constant
 * below is a hardware measurement, not a fit to training step times:
 *
 *   gemm_eff   H100 bf16: 805.8 TFLOP/s, the best product of the lead's
 *              sweep (tests/data/h100-gpt/gemm_hbm_sweep.csv, 8192x2048x
 *              8192, CUDA events) over 989.5 = 0.814 (MAMF finder: 794.5 /
 *              989 = 0.803, ../shared/data/published/gemm_mamf_h100_class.csv);
 *              H100 fp8: 1382.2 / 1979 = 0.698 (Azure ND H100 v5 cuBLASLt
 *              32768^3, ../shared/data/hardware/azure_nd_h100_v5_results.md);
 *              A100 fp16/bf16: 256.5 / 312 = 0.822 (Azure ND A100 v4
 *              cuBLASLt 16384^3).
 *   sustained  H100/H200 only: x 0.873 (bf16/fp16) and x 0.880 (fp8), the
 *              median over transformer-shaped products of the throughput
 *              after 12 s of back-to-back products over that of a 10-product
 *              burst (tests/data/h100-gpt/gemm_sustained.csv, scripts/
 *              gemm_sustained.py on one H100 SXM at its 700 W cap: the SM
 *              clock falls from 1,980 to ~1,500 MHz on the large ones).
 *              A training step runs GEMMs back to back for seconds; the
 *              bursts above are what a short benchmark sees. No such
 *              measurement exists here for the A100: it keeps the burst.
 *   shape      x k/(k + k0) x d/(d + d0), d = min(m, n). 16-bit: k0 175,
 *              d0 72, from the same H100 sweep: K = 512 and 2048 at M = N =
 *              8192 run at 0.747 and 0.920 of the best (k0 = 170, 178),
 *              N = 256 at M = K = 8192 at 0.78 after the k factor (d0 =
 *              72). fp8: k0 640, d0 26, the least-squares fit (in log) of
 *              the form to the Azure H100 cuBLASLt fp8 table's 7 products
 *              of 2048^3 or more, each over its best (32768^3, 1382.2):
 *              2048^3 0.732 (fitted 0.752), 4096^3 0.880 (0.859), 8192^3
 *              0.933 (0.925), 16384^3 0.996 (0.961), 6144 x 12288 x 12288
 *              0.978 (0.946), 802816 x 192 x 768 0.480 (0.480): fp8 math
 *              runs twice as fast, so a product's fixed costs along K
 *              weigh more (the 16-bit form would give 2048^3 0.890). Both
 *              taken for every GPU (an assumption where no sweep exists).
 *   attn_eff   Flash Attention 2 on the Azure nodes: H100 327.9 TFLOP/s
 *              (0.331 of 989.5, head dim 128, seq 8192), A100 179.5 (0.575 of
 *              312, head dim 64).
 *   hbm_eff    a 1 GiB device-to-device copy on the lead's H100: 3,013 GB/s
 *              of 3,350 = 0.90 (Azure's STREAM copy 2.90 TB/s: 0.87);
 *              taken for every GPU.
 *   min_us     2 us: the shortest kernels (elementwise on small tensors) in
 *              the lead's H100 traces last 2-3 us.
 */
#include "roofline.h"

#include <string.h>

#define SHAPE_K0 175.0
#define SHAPE_D0 72.0
#define SHAPE_K0_FP8 640.0
#define SHAPE_D0_FP8 26.0
#define SUSTAINED_16 0.873
#define SUSTAINED_FP8 0.880
#define HBM_EFF 0.90
#define MIN_US 2.0

void sc__roofline_init(sc__roofline *r, const sc__hw_profile *p) {
    memset(r, 0, sizeof *r);
    sc__gpu_ceilings g;
    sc__gpu_ceilings_of(p, &g);
    memcpy(r->peak_tflops, g.peak_tflops, sizeof r->peak_tflops);
    bool ampere = g.family == SC__GPU_A100;
    bool hopper = g.family == SC__GPU_H100 || g.family == SC__GPU_H200; /* GH200: no sustained measurement */
    double e16 = ampere ? 0.822 : 0.814;
    r->gemm_eff[SC__DT_BF16] = r->gemm_eff[SC__DT_FP16] = e16 * (hopper ? SUSTAINED_16 : 1);
    r->gemm_eff[SC__DT_FP8] = p->fp8_tflops > 0 ? 0.698 * (hopper ? SUSTAINED_FP8 : 1) : r->gemm_eff[SC__DT_BF16];
    r->gemm_eff[SC__DT_FP32] = 0.9;
    for (int t = 0; t < SC__DT_COUNT; t++) {
        r->gemm_k0[t] = t == SC__DT_FP8 ? SHAPE_K0_FP8 : SHAPE_K0;
        r->gemm_d0[t] = t == SC__DT_FP8 ? SHAPE_D0_FP8 : SHAPE_D0;
    }
    r->attn_eff = ampere ? 0.575 : 0.331;
    r->hbm_GBps = g.hbm_GBps;
    r->hbm_eff = HBM_EFF;
    r->min_us = MIN_US;
    r->gemm_from = r->attn_from = r->hbm_from = "profile";
}

double sc__roofline_gemm_shape(const sc__roofline *r, uint8_t dtype, uint64_t m, uint64_t n, uint64_t k) {
    double d = (double)(m < n ? m : n);
    uint8_t t = dtype < SC__DT_COUNT ? dtype : SC__DT_BF16;
    return (double)k / ((double)k + r->gemm_k0[t]) * d / (d + r->gemm_d0[t]);
}

double sc__roofline_time_us(const void *ctx, const sc__kernel_shape *k) {
    const sc__roofline *r = ctx;
    double mem_us = k->bytes > 0 ? k->bytes / (r->hbm_GBps * r->hbm_eff * 1e3) : 0;
    double us = mem_us;
    uint8_t dt = k->dtype != SC__DT_UNKNOWN && k->dtype < SC__DT_COUNT ? k->dtype : SC__DT_BF16;
    if (k->cls == SC__KC_GEMM) {
        double flops = k->flops > 0 ? k->flops : 2.0 * (k->batch ? k->batch : 1) * (double)k->m * (double)k->n * (double)k->k;
        double rate = r->peak_tflops[dt] * r->gemm_eff[dt] * sc__roofline_gemm_shape(r, dt, k->m, k->n, k->k);
        double c = rate > 0 ? flops / (rate * 1e6) : 0;
        if (c > us) us = c;
    } else if (k->cls == SC__KC_ATTENTION) {
        double rate = r->peak_tflops[SC__DT_BF16] * r->attn_eff;
        double c = rate > 0 ? k->flops / (rate * 1e6) : 0;
        if (c > us) us = c;
    }
    return us > r->min_us ? us : r->min_us;
}

sc__kernel_timer sc__roofline_timer(const sc__roofline *r) {
    return (sc__kernel_timer){.time_us = sc__roofline_time_us, .ctx = r};
}
