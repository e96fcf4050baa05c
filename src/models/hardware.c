/*
 * hardware.c - the built-in GPU profiles, their lookup by name, and user
 * profiles read from JSON.
 *
 * One row per GPU model. Compute and memory figures are the vendors'
 * datasheets (dense rates: NVIDIA quotes tensor rates with 2:4 sparsity,
 * which are halved here); node figures are those of the common reference
 * node (DGX / HGX, AMD's 8-GPU platform). The communication model's
 * parameters (comm_*, *_eff, nvls_us) are fitted: those of NVLink 3 to the
 * A100 nccl-tests table and those of NVLink 4 to the H100 and H200 tables
 * (shared/data/hardware/azure_nd_*_results.md, all-reduce in place on 8
 * GPUs, 1 KB to 8 GB) by sc__comm_model_fit, which tests/test_comm.c runs
 * again and checks against these values. A GPU without a measured table
 * borrows the fit of the closest link technology, said beside it.
 *
 * A user's profile is a JSON object with exactly the fields of the table
 * below (FIELDS), read with the project's streaming scanner.
 */
#include "hardware.h"

#include "../readers/json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* The fits shared by GPUs of one link technology (see the file comment),
 * as test_comm.c's refit prints them:
 * NVLINK3 by sc__comm_model_fit on azure_nd_a100_v4_results.md (A100
 * 80GB, NCCL 2.18.5, ring: no NVLS); nvlink_eff 0.768 is 230.4 GB/s of
 * ring bus bandwidth over 300.
 * NVLINK4 on azure_nd_h100_v5 and azure_nd_h200_v5 together (NCCL 2.18.5
 * and 2.20.5: ring with the low-latency protocols up to 16 MB, NVLS
 * above); nvls_eff 0.599 is 269.4 GB/s of NVLS algorithm bandwidth over
 * 450. Ring with Simple never wins at 8 GPUs there, so two values come
 * from elsewhere: nvlink_simple_us is NVLINK3's, and nvlink_eff is
 * shared/data/published/nccl_collective_reference_points.csv's 8x H200
 * ring all-reduce with NVLS off, 367.2 GB/s bus bandwidth at 16 GiB, over
 * 450 (the fit, which sees it through the LL bandwidth only, agrees).
 * net_eff (both): the same csv's 4 nodes x 8 H200 (AWS p5en, 3.2 Tb/s a
 * node) ring all-reduce, 364.87 GB/s at 4 GiB, over the node's 400 GB/s
 * (a lower bound: NVLink may be what held it). */
#define NVLINK3_COMM                                                                              \
    .comm_base_us = 33.88, .comm_ll_frac = 0.559, .nvlink_simple_us = 11.85, .nvlink_eff = 0.768, \
    .nvls_us = 0, .nvls_eff = 0, .net_eff = 0.91
#define NVLINK4_COMM                                                                              \
    .comm_base_us = 23.02, .comm_ll_frac = 0.820, .nvlink_simple_us = 11.85, .nvlink_eff = 0.816, \
    .nvls_us = 50.88, .nvls_eff = 0.599, .net_eff = 0.91

static const struct row {
    const char *alias;  /* the short name a user types */
    const char *names;  /* more names, ',' between them */
    /* A trace's device name matches when it holds every token of `need`
     * and none of `never` (',' between them; compared normalised). Rows
     * are tried in order, the more specific first. */
    const char *need, *never;
    sc__hw_profile p;
} rows[] = {
    {"a100-80gb", "a100-sxm4-80gb,a100-sxm-80gb", "a100,80gb", "pcie", {
        .name = "A100-SXM4-80GB",
        /* NVIDIA A100 datasheet (2021): FP64 9.7, FP32 19.5, TF32 156 and
         * FP16/BF16 312 dense (312 / 624 with sparsity); no FP8. */
        .fp64_tflops = 9.7, .fp32_tflops = 19.5, .tf32_tflops = 156, .fp16_tflops = 312,
        .bf16_tflops = 312, .fp8_tflops = 0,
        .hbm_GBps = 2039, .memory_GB = 80, /* datasheet: 80GB HBM2e, 2,039 GB/s */
        .sm_count = 108,                    /* A100 whitepaper: 108 SMs */
        .nvlink_GBps = 300,                 /* NVLink 3: 600 GB/s both ways */
        .nvls = false,                      /* NVSwitch gen 2: no SHARP */
        /* DGX A100: 8 GPUs, 8 single-port ConnectX-6 HDR 200 Gb/s for compute */
        .gpus_per_node = 8, .nics_per_node = 8, .nic_Gbps = 200,
        NVLINK3_COMM}},
    {"a100", "a100-40gb,a100-sxm4-40gb,a100-sxm4,a100-sxm", "a100", "pcie", {
        .name = "A100-SXM4-40GB",
        /* NVIDIA A100 datasheet: as the 80GB part but 40GB HBM2, 1,555 GB/s.
         * Trace names without a size (A100-PG509-200) land here: their
         * compute and links are the same. */
        .fp64_tflops = 9.7, .fp32_tflops = 19.5, .tf32_tflops = 156, .fp16_tflops = 312,
        .bf16_tflops = 312, .fp8_tflops = 0,
        .hbm_GBps = 1555, .memory_GB = 40, .sm_count = 108,
        .nvlink_GBps = 300, .nvls = false,
        .gpus_per_node = 8, .nics_per_node = 8, .nic_Gbps = 200, /* DGX A100 */
        NVLINK3_COMM}},
    {"gh200", "gh200-144gb,grace-hopper", "gh200", "", {
        .name = "GH200",
        /* NVIDIA GH200 Grace Hopper Superchip datasheet: the H100 GPU's rates
         * (FP64 34, FP32 67, TF32 494, FP16/BF16 990, FP8 1,979 dense), with
         * 144GB HBM3e at 4.9 TB/s. The 96GB HBM3 part (4 TB/s; "GH200
         * 480GB" in traces, counting the CPU's memory) finds this row too. */
        .fp64_tflops = 34, .fp32_tflops = 67, .tf32_tflops = 494, .fp16_tflops = 990,
        .bf16_tflops = 990, .fp8_tflops = 1979,
        .hbm_GBps = 4900, .memory_GB = 144,
        .sm_count = 132, /* the H100 GPU's */
        .nvlink_GBps = 450, /* NVLink 4 to other superchips: 900 GB/s both ways */
        /* The common node (NVIDIA MGX GH200) holds one superchip and one
         * ConnectX-7 400 Gb/s: no NVSwitch inside the node, so no NVLS. */
        .nvls = false, .gpus_per_node = 1, .nics_per_node = 1, .nic_Gbps = 400,
        NVLINK4_COMM}},
    {"h200", "h200-sxm,h200-141gb", "h200", "nvl,pcie", {
        .name = "H200-SXM-141GB",
        /* NVIDIA H200 datasheet: FP64 34, FP32 67, TF32 989, FP16/BF16 1,979,
         * FP8 3,958 with sparsity (halved here); 141GB HBM3e, 4.8 TB/s. */
        .fp64_tflops = 34, .fp32_tflops = 67, .tf32_tflops = 494.5, .fp16_tflops = 989.5,
        .bf16_tflops = 989.5, .fp8_tflops = 1979,
        .hbm_GBps = 4800, .memory_GB = 141,
        .sm_count = 132, /* the H100's GH100 die */
        .nvlink_GBps = 450, /* NVLink 4: 900 GB/s both ways */
        .nvls = true,       /* NVSwitch gen 3 (NVLink SHARP) */
        /* DGX H200: 8 GPUs, 8 ConnectX-7 400 Gb/s for compute */
        .gpus_per_node = 8, .nics_per_node = 8, .nic_Gbps = 400,
        NVLINK4_COMM}},
    {"h100", "h100-sxm5,h100-sxm,h100-80gb,h100-sxm5-80gb", "h100", "nvl,pcie", {
        .name = "H100-SXM5-80GB",
        /* NVIDIA H100 datasheet (SXM): FP64 34, FP32 67, TF32 989, FP16/BF16
         * 1,979, FP8 3,958 with sparsity (halved here); 80GB HBM3, 3.35 TB/s.
         * shared/data/published/gemm_mamf_h100_class.csv: BF16 989, FP8 1979. */
        .fp64_tflops = 34, .fp32_tflops = 67, .tf32_tflops = 494.5, .fp16_tflops = 989.5,
        .bf16_tflops = 989.5, .fp8_tflops = 1979,
        .hbm_GBps = 3350, .memory_GB = 80,
        .sm_count = 132, /* H100 SXM5: 132 SMs (NVIDIA Hopper whitepaper) */
        .nvlink_GBps = 450, /* NVLink 4: 900 GB/s both ways */
        .nvls = true,       /* NVSwitch gen 3 (NVLink SHARP) */
        /* DGX H100: 8 GPUs, 4 NVSwitch gen 3, 8 ConnectX-7 400 Gb/s */
        .gpus_per_node = 8, .nics_per_node = 8, .nic_Gbps = 400,
        NVLINK4_COMM}},
    {"b200", "b200-sxm,b200-180gb", "b200", "gb200,pcie", {
        .name = "B200",
        /* NVIDIA HGX B200 datasheet, for its 8 GPUs: FP64 296 and FP32 600
         * TFLOPS; TF32 18, FP16/BF16 36 and FP8 72 PFLOPS with sparsity
         * (halved here); 1,440GB HBM3e at 64 TB/s. Per GPU below.
         * gemm_mamf_h100_class.csv: BF16 2250, FP8 4500 dense. */
        .fp64_tflops = 37, .fp32_tflops = 75, .tf32_tflops = 1125, .fp16_tflops = 2250,
        .bf16_tflops = 2250, .fp8_tflops = 4500,
        .hbm_GBps = 8000, .memory_GB = 180,
        .sm_count = 148, /* as CUDA reports it (not in the datasheets) */
        .nvlink_GBps = 900, /* NVLink 5: 1.8 TB/s both ways */
        .nvls = true,       /* NVLink 5 switch, SHARP */
        /* DGX B200: 8 GPUs, 8 ConnectX-7 400 Gb/s */
        .gpus_per_node = 8, .nics_per_node = 8, .nic_Gbps = 400,
        /* No measured table: NVLink 4's fit, on twice the bandwidth. */
        NVLINK4_COMM}},
    {"mi300x", "mi300x-192gb,instinct-mi300x", "mi300x", "", {
        .name = "MI300X",
        /* AMD Instinct MI300X datasheet: FP64 81.7 and FP32 163.4 (vector),
         * TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 dense; 192GB HBM3,
         * 5.3 TB/s; 304 compute units. */
        .fp64_tflops = 81.7, .fp32_tflops = 163.4, .tf32_tflops = 653.7, .fp16_tflops = 1307.4,
        .bf16_tflops = 1307.4, .fp8_tflops = 2614.9,
        .hbm_GBps = 5300, .memory_GB = 192, .sm_count = 304,
        /* Infinity Fabric: 7 links of 128 GB/s both ways, 896 GB/s: 448 GB/s
         * each way, to 7 peers directly (no switch, so no NVLS). */
        .nvlink_GBps = 448, .nvls = false,
        /* AMD's 8-GPU platform as clouds deploy it (Azure ND MI300X v5):
         * 8 NICs of 400 Gb/s */
        .gpus_per_node = 8, .nics_per_node = 8, .nic_Gbps = 400,
        /* No measured table here: NVLink 3's ring fit (an assumption). */
        NVLINK3_COMM}},
    {"v100", "v100-32gb,v100-sxm2,v100-sxm2-32gb", "v100,sxm2,32gb", "", {
        .name = "V100-SXM2-32GB",
        /* NVIDIA Tesla V100 datasheet (SXM2): FP64 7.8, FP32 15.7, tensor
         * FP16 125; no TF32, BF16 or FP8; 32GB HBM2, 900 GB/s; 80 SMs. */
        .fp64_tflops = 7.8, .fp32_tflops = 15.7, .tf32_tflops = 0, .fp16_tflops = 125,
        .bf16_tflops = 0, .fp8_tflops = 0,
        .hbm_GBps = 900, .memory_GB = 32, .sm_count = 80,
        /* NVLink 2: 6 links, 300 GB/s both ways; DGX-1's hybrid cube-mesh,
         * no NVSwitch */
        .nvlink_GBps = 150, .nvls = false,
        /* DGX-1 (V100): 8 GPUs, 4 EDR InfiniBand 100 Gb/s */
        .gpus_per_node = 8, .nics_per_node = 4, .nic_Gbps = 100,
        /* No measured table here: NVLink 3's ring fit (an assumption). */
        NVLINK3_COMM}},
    {"v100-16gb", "v100-sxm2-16gb", "v100,sxm2", "", {
        .name = "V100-SXM2-16GB",
        /* Tesla V100 datasheet: as the 32GB part with 16GB HBM2 */
        .fp64_tflops = 7.8, .fp32_tflops = 15.7, .tf32_tflops = 0, .fp16_tflops = 125,
        .bf16_tflops = 0, .fp8_tflops = 0,
        .hbm_GBps = 900, .memory_GB = 16, .sm_count = 80,
        .nvlink_GBps = 150, .nvls = false,
        .gpus_per_node = 8, .nics_per_node = 4, .nic_Gbps = 100, /* DGX-1 */
        NVLINK3_COMM}},
};
#define NROWS (sizeof rows / sizeof *rows)

size_t sc__hw_count(void) { return NROWS; }
const sc__hw_profile *sc__hw_at(size_t i) { return i < NROWS ? &rows[i].p : NULL; }
const char *sc__hw_alias(size_t i) { return i < NROWS ? rows[i].alias : ""; }

/* ----------------------------------------------------------------- lookup */

/* s lower-cased without '-', '_' and spaces, into buf (cut at size - 1). */
static const char *normalise(const char *s, size_t n, char *buf, size_t size) {
    size_t k = 0;
    for (size_t i = 0; i < n && s[i] && k + 1 < size; i++) {
        char c = s[i];
        if (c == '-' || c == '_' || c == ' ') continue;
        buf[k++] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    buf[k] = '\0';
    return buf;
}

/* Does the ','-separated list hold norm (exact), or, with `contains`, a
 * token that norm contains? An empty list holds nothing. */
static bool list_has(const char *list, const char *norm, bool contains) {
    while (*list) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        char tok[64];
        normalise(list, n, tok, sizeof tok);
        if (*tok && (contains ? strstr(norm, tok) != NULL : strcmp(norm, tok) == 0)) return true;
        list += n + (end != NULL);
    }
    return false;
}

/* Does norm hold every token of the list? */
static bool has_all(const char *list, const char *norm) {
    while (*list) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        char tok[64];
        normalise(list, n, tok, sizeof tok);
        if (!strstr(norm, tok)) return false;
        list += n + (end != NULL);
    }
    return true;
}

const sc__hw_profile *sc__hw_find(const char *name) {
    if (!name) return NULL;
    char norm[256], row_name[64];
    normalise(name, strlen(name), norm, sizeof norm);
    if (!*norm) return NULL;
    for (size_t i = 0; i < NROWS; i++) /* a name a user types */
        if (list_has(rows[i].alias, norm, false) || list_has(rows[i].names, norm, false) ||
            strcmp(normalise(rows[i].p.name, sizeof rows[i].p.name, row_name, sizeof row_name), norm) == 0)
            return &rows[i].p;
    for (size_t i = 0; i < NROWS; i++) /* a trace's device name */
        if (has_all(rows[i].need, norm) && !list_has(rows[i].never, norm, true)) return &rows[i].p;
    return NULL;
}

/* ----------------------------------------------------------------- fields */

typedef enum { F_STR, F_NUM, F_UINT, F_BOOL } field_kind;

/* A profile's fields: JSON name, type, place, and what a value may be:
 * at least `lo` (more than 0 when `positive`) and at most `hi`. */
typedef struct field {
    const char *name;
    field_kind kind;
    size_t off;
    bool positive;
    double lo, hi;
} field;

#define NUM(f, pos, hi) {#f, F_NUM, offsetof(sc__hw_profile, f), pos, 0, hi}
#define UINT(f, lo, hi) {#f, F_UINT, offsetof(sc__hw_profile, f), false, lo, hi}
static const field FIELDS[] = {
    {"name", F_STR, offsetof(sc__hw_profile, name), false, 0, 0},
    NUM(fp64_tflops, false, 1e6), NUM(fp32_tflops, false, 1e6), NUM(tf32_tflops, false, 1e6),
    NUM(fp16_tflops, false, 1e6), NUM(bf16_tflops, false, 1e6), NUM(fp8_tflops, false, 1e6),
    NUM(hbm_GBps, false, 1e7), NUM(memory_GB, false, 1e7), UINT(sm_count, 0, 1e6),
    NUM(nvlink_GBps, true, 1e7),
    {"nvls", F_BOOL, offsetof(sc__hw_profile, nvls), false, 0, 0},
    UINT(gpus_per_node, 1, 1e6), UINT(nics_per_node, 1, 1e6), NUM(nic_Gbps, true, 1e7),
    NUM(comm_base_us, false, 1e7), NUM(comm_ll_frac, true, 1), NUM(nvlink_simple_us, false, 1e7),
    NUM(nvlink_eff, true, 4), NUM(nvls_us, false, 1e7), NUM(nvls_eff, false, 4), NUM(net_eff, true, 4),
};
#undef NUM
#undef UINT
#define NFIELDS (sizeof FIELDS / sizeof *FIELDS)

/* The value of a numeric field of p. */
static double value_of(const sc__hw_profile *p, const field *f) {
    const char *at = (const char *)p + f->off;
    if (f->kind == F_NUM) return *(const double *)(const void *)at;
    if (f->kind == F_UINT) return (double)*(const uint32_t *)(const void *)at;
    return 0;
}

static void set_value(sc__hw_profile *p, const field *f, double v) {
    char *at = (char *)p + f->off;
    if (f->kind == F_NUM) *(double *)(void *)at = v;
    else if (f->kind == F_UINT) *(uint32_t *)(void *)at = (uint32_t)v;
}

/* Why v does not fit f, into buf; NULL when it does. */
static const char *out_of_range(const field *f, double v, char *buf, size_t size) {
    if (!isfinite(v)) snprintf(buf, size, "field '%s' is not a finite number", f->name);
    else if (v < 0) snprintf(buf, size, "field '%s' is negative (%g)", f->name, v);
    else if (f->positive && v == 0) snprintf(buf, size, "field '%s' must be more than 0", f->name);
    else if (v < f->lo) snprintf(buf, size, "field '%s' must be at least %g, got %g", f->name, f->lo, v);
    else if (v > f->hi) snprintf(buf, size, "field '%s' must be at most %g, got %g", f->name, f->hi, v);
    else if (f->kind == F_UINT && v != floor(v))
        snprintf(buf, size, "field '%s' must be a whole number, got %g", f->name, v);
    else return NULL;
    return buf;
}

sc_status sc__hw_check(const sc__hw_profile *p, const char *what, sc_error *err) {
    char why[160];
    if (!memchr(p->name, '\0', sizeof p->name) || !p->name[0])
        return sc__fail(err, SC_E_USAGE, what, SC_NO_OFFSET, "field 'name' is empty");
    for (size_t i = 0; i < NFIELDS; i++)
        if ((FIELDS[i].kind == F_NUM || FIELDS[i].kind == F_UINT) &&
            out_of_range(&FIELDS[i], value_of(p, &FIELDS[i]), why, sizeof why))
            return sc__fail(err, SC_E_USAGE, what, SC_NO_OFFSET, "%s", why);
    return SC_OK;
}

/* ------------------------------------------------------------------- JSON */

typedef struct loader {
    sc__jp *jp;
    sc__hw_profile p;
    uint32_t seen; /* bit i: FIELDS[i] read */
} loader;

/* An error of the scanner inside field f's value names the field too. */
static int in_field(const loader *l, const field *f, int rc) {
    sc_error *e = l->jp->err;
    if (rc == SC__J_ERR && e && e->status != SC_OK) {
        char prefix[64];
        int n = snprintf(prefix, sizeof prefix, "field '%s': ", f->name);
        size_t len = strnlen(e->message, sizeof e->message - 1), cap = sizeof e->message - 1;
        if (n > 0 && (size_t)n < sizeof prefix) {
            size_t keep = len + (size_t)n > cap ? cap - (size_t)n : len;
            memmove(e->message + n, e->message, keep);
            memcpy(e->message, prefix, (size_t)n);
            e->message[(size_t)n + keep] = '\0';
        }
    }
    return rc;
}

static int read_field(loader *l, const field *f, const char *at) {
    sc__jp *jp = l->jp;
    char why[160];
    switch (f->kind) {
    case F_STR: {
        sc__jstr s;
        if (sc__jp_peek(jp) != '"' && jp->p < jp->end)
            return sc__jp_error_at(jp, jp->p, SC_E_FORMAT, "field '%s' wants a string", f->name);
        SC__JTRY(in_field(l, f, sc__jp_string(jp, &s)));
        if (s.n == 0 || s.n >= sizeof l->p.name || memchr(s.s, '\0', s.n))
            return sc__jp_error_at(jp, at, SC_E_FORMAT, "field '%s' wants 1 to %zu characters", f->name,
                                   sizeof l->p.name - 1);
        memcpy(l->p.name, s.s, s.n);
        l->p.name[s.n] = '\0';
        return SC__J_OK;
    }
    case F_BOOL: {
        char c = sc__jp_peek(jp);
        sc__jstr raw;
        if (c != 't' && c != 'f' && jp->p < jp->end)
            return sc__jp_error_at(jp, jp->p, SC_E_FORMAT, "field '%s' wants true or false", f->name);
        SC__JTRY(in_field(l, f, sc__jp_raw(jp, &raw)));
        l->p.nvls = raw.s[0] == 't';
        return SC__J_OK;
    }
    case F_NUM:
    case F_UINT: {
        char c = sc__jp_peek(jp);
        if (c != '-' && (c < '0' || c > '9') && jp->p < jp->end)
            return sc__jp_error_at(jp, jp->p, SC_E_FORMAT, "field '%s' wants a number", f->name);
        const char *start = jp->p;
        double v;
        SC__JTRY(in_field(l, f, sc__jp_double(jp, &v)));
        if (out_of_range(f, v, why, sizeof why)) return sc__jp_error_at(jp, start, SC_E_FORMAT, "%s", why);
        set_value(&l->p, f, v);
        return SC__J_OK;
    }
    }
    return SC__J_ERR;
}

/* Every try at the members starts from an empty profile. */
static void load_begin(void *ctx) {
    loader *l = ctx;
    memset(&l->p, 0, sizeof l->p);
    l->seen = 0;
}

static int load_member(void *ctx, sc__jp *jp, sc__jstr key) {
    loader *l = ctx;
    l->jp = jp;
    const char *at = key.s;
    size_t i = 0;
    while (i < NFIELDS && !(strlen(FIELDS[i].name) == key.n && memcmp(FIELDS[i].name, key.s, key.n) == 0)) i++;
    if (i == NFIELDS)
        return sc__jp_error_at(jp, at, SC_E_FORMAT, "unknown field '%.*s'", (int)(key.n < 64 ? key.n : 64), key.s);
    if (l->seen & (1u << i)) return sc__jp_error_at(jp, at, SC_E_FORMAT, "field '%s' given twice", FIELDS[i].name);
    SC__JTRY(read_field(l, &FIELDS[i], at));
    l->seen |= 1u << i;
    return SC__J_OK;
}

sc_status sc__hw_load(const char *path, sc__hw_profile *out, sc_error *err) {
    sc__error_clear(err);
    loader l;
    memset(&l, 0, sizeof l);
    sc_status st = sc__json_read_object_file(path, "profile", load_begin, load_member, &l, err);
    for (size_t i = 0; i < NFIELDS && st == SC_OK; i++)
        if (!(l.seen & (1u << i)))
            st = sc__fail(err, SC_E_FORMAT, path, SC_NO_OFFSET, "missing field '%s'", FIELDS[i].name);
    if (st == SC_OK) *out = l.p;
    return st;
}
