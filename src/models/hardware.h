/*
 * hardware.h - GPU hardware profiles: what one GPU model computes, holds and
 * moves, and how fast its node talks, for the models that re-time work on
 * another GPU or another fabric (comm.c for collectives).
 *
 * A profile comes from the built-in table (hardware.c: one row per GPU
 * model, every number with its source), found by a name a user types
 * ("h100", "a100-80gb") or by the device name a trace carries ("NVIDIA
 * H100 80GB HBM3"), or from a user's JSON file with the same field names.
 */
#ifndef SC_HARDWARE_H
#define SC_HARDWARE_H

#include "../base/base.h"

typedef struct sc__hw_profile {
    char name[64];
    /* Dense (no 2:4 sparsity) peak TFLOP/s per data type; 0 where the GPU
     * has no such path (fp8 before Hopper, tf32 and bf16 on Volta). fp32
     * and fp64 are the non-tensor rates. */
    double fp64_tflops, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops;
    double hbm_GBps;  /* memory bandwidth, GB/s */
    double memory_GB; /* memory size, GB */
    uint32_t sm_count; /* SMs (NVIDIA) or compute units (AMD) */
    /* The node: intra-node link bandwidth per GPU per direction (NVLink,
     * Infinity Fabric), GB/s; whether an NVSwitch does NVLink SHARP
     * reductions (NVLS); and the common reference node (DGX / HGX). */
    double nvlink_GBps;
    bool nvls;
    uint32_t gpus_per_node, nics_per_node;
    double nic_Gbps; /* per NIC, gigabits/s */
    /* The communication model's parameters (comm.h), fitted to measured
     * nccl-tests tables (hardware.c says which):
     *   comm_base_us   fixed cost of a collective (launch, set-up), us
     *   comm_ll_frac   low-latency protocols' share of Simple's bandwidth
     *   nvlink_simple_us  latency of one step of NCCL's Simple protocol over
     *                  the intra-node link, us (its large chunks fill later)
     *   nvlink_eff     achievable ring bus bandwidth / nvlink_GBps
     *   nvls_us        NVLS all-reduce's fixed cost over comm_base_us
     *   nvls_eff       NVLS all-reduce algorithm bandwidth / nvlink_GBps
     *   net_eff        achievable share of the NICs' bandwidth */
    double comm_base_us, comm_ll_frac, nvlink_simple_us, nvlink_eff, nvls_us, nvls_eff, net_eff;
} sc__hw_profile;

/* The built-in profiles, in table order. */
size_t sc__hw_count(void);
const sc__hw_profile *sc__hw_at(size_t i);
/* The short name a user types for row i ("h100"). */
const char *sc__hw_alias(size_t i);

/* The profile of a name a user types ("h100", "H100-SXM5", "a100-80gb"),
 * or of a trace's device name ("NVIDIA A100-SXM4-80GB", "Tesla
 * V100-SXM2-32GB", "AMD Instinct MI300X"): case, '-', '_' and spaces do
 * not matter. NULL when no row matches (a PCIe card, an unknown GPU). */
const sc__hw_profile *sc__hw_find(const char *name);

/* Reads a profile from a JSON object with the fields of sc__hw_profile
 * ("name" a string, "nvls" true or false, every other a number >= 0). A
 * missing, unknown, mistyped or negative field fails with SC_E_FORMAT
 * naming the file and the field; bytes that are not JSON with SC_E_PARSE. */
sc_status sc__hw_load(const char *path, sc__hw_profile *out, sc_error *err);

/* Checks the values of p (for a profile built in code): SC_E_USAGE naming
 * the first field out of range, with `what` as the file in the error. */
sc_status sc__hw_check(const sc__hw_profile *p, const char *what, sc_error *err);

#endif /* SC_HARDWARE_H */
