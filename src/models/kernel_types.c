/*
 * kernel_types.c - the names of kernel classes and dtypes, and a GPU's
 * ceilings (kernel_types.h): its dense peak per dtype and HBM bandwidth
 * from its profile (hardware.c), and the measured shares of those peaks
 * its best GEMMs and copies reach. The cost model of `stepcast kernels` /
 * predict bounds and starts its fit with the shares; the roofline of
 * `stepcast model` takes the peaks and the family (its own efficiencies,
 * other measurements, are in roofline.c).
 */
#include "kernel_types.h"

#include <string.h>

static const char *const class_names[SC__KC_COUNT] = {
    "gemm", "attention", "elementwise", "norm", "softmax", "optimizer",
    "copy", "memset",    "reduction",   "other", "collective"};

const char *sc__kclass_name(uint8_t cls) { return cls < SC__KC_COUNT ? class_names[cls] : "?"; }

const char *sc__dtype_name(uint8_t d) {
    static const char *const n[SC__DT_COUNT] = {[SC__DT_UNKNOWN] = "?", [SC__DT_FP16] = "fp16",
                                                [SC__DT_BF16] = "bf16",  [SC__DT_FP32] = "fp32",
                                                [SC__DT_FP64] = "fp64",  [SC__DT_FP8] = "fp8",
                                                [SC__DT_INT] = "int"};
    return d < SC__DT_COUNT ? n[d] : "?";
}

/* Measured ceilings per GPU: the best GEMM rate over the dense peak, and
 * the best of STREAM-like copy bandwidths over the HBM peak.
 * A100 SXM: shared/data/published/gemm_mamf_h100_class.csv, BF16 MAMF
 * 271.2 of 312 TFLOP/s; shared/data/hardware/azure_nd_a100_v4_results.md,
 * HBM copy 1.61 to dot 1.75 TB/s of 2.039 (the 80GB part; 1.70 triad).
 * H100 SXM: the csv's BF16 MAMF 794.5 of 989; azure_nd_h100_v5_results.md
 * 2.90 (copy) to 3.18 (dot) TB/s of 3.35 (2.97 triad). H200: the csv
 * ("H200 is the same" compute); azure_nd_h200_v5_results.md, 4.15 TB/s
 * triad of 4.8.
 * GH200: the csv's 828.6 of 989. Others: no measurement here, so the
 * H100's shares, said by source. */
static const struct ceiling {
    const char *profile; /* sc__hw_profile.name prefix */
    sc__gpu_family family;
    double gemm, hbm;
    const char *source;
} ceilings[] = {
    {"A100", SC__GPU_A100, 271.2 / 312, 1.70 / 2.039,
     "measured: MAMF (ml-engineering) and Azure ND A100 v4 STREAM triad"},
    {"H100", SC__GPU_H100, 794.5 / 989, 2.97 / 3.35,
     "measured: MAMF (ml-engineering) and Azure ND H100 v5 STREAM triad"},
    {"H200", SC__GPU_H200, 794.5 / 989, 4.15 / 4.8,
     "measured: MAMF (ml-engineering, H100 compute) and Azure ND H200 v5 STREAM triad"},
    {"GH200", SC__GPU_GH200, 828.6 / 989, 2.97 / 3.35,
     "measured: MAMF (ml-engineering); HBM share assumed as H100's"},
};

void sc__gpu_ceilings_of(const sc__hw_profile *p, sc__gpu_ceilings *c) {
    memset(c, 0, sizeof *c);
    c->peak_tflops[SC__DT_FP16] = p->fp16_tflops;
    c->peak_tflops[SC__DT_BF16] = p->bf16_tflops > 0 ? p->bf16_tflops : p->fp16_tflops;
    /* fp32 GEMMs: PyTorch's default (no TF32) runs them on the FP32 units */
    c->peak_tflops[SC__DT_FP32] = p->fp32_tflops;
    c->peak_tflops[SC__DT_FP64] = p->fp64_tflops;
    c->peak_tflops[SC__DT_FP8] = p->fp8_tflops > 0 ? p->fp8_tflops : p->fp16_tflops;
    c->peak_tflops[SC__DT_INT] = p->fp16_tflops;
    c->peak_tflops[SC__DT_UNKNOWN] = p->fp16_tflops;
    c->hbm_GBps = p->hbm_GBps;
    const struct ceiling *row = NULL, *h100 = NULL;
    for (size_t i = 0; i < sizeof ceilings / sizeof *ceilings; i++) {
        if (ceilings[i].family == SC__GPU_H100) h100 = &ceilings[i];
        if (!row && sc__starts_with(p->name, ceilings[i].profile)) row = &ceilings[i];
    }
    c->family = (uint8_t)(row ? row->family : SC__GPU_OTHER);
    c->gemm_share = (row ? row : h100)->gemm;
    c->hbm_share = (row ? row : h100)->hbm;
    c->source = row ? row->source : "assumed: the H100's measured shares (no measurement for this GPU here)";
}
