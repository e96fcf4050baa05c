/*
 * retime.c - re-timing a calibrated graph for another job: collectives by
 * the communication model (src/models/comm.c), GPU work by the ratio of
 * two GPUs' peaks (src/models/hardware.c). The durations a trace measured
 * keep what no model knows (the efficiency the kernels reached, the CPU's
 * pace); only the part a new configuration changes is scaled.
 *
 * A GEMM that reached 60% of the traced GPU's peak is taken to reach 60% of
 * the new one's: its time scales by the ratio of the dense tensor TFLOP/s
 * (bf16 where both GPUs have it, else fp16). Memory-bound kernels (every
 * other kernel, copies, memsets) scale by the ratio of HBM bandwidths.
 * Collectives take the model's time for their size, their communicator's
 * ranks and the new fabric, times the trace's own efficiency against the
 * model when the model is not the one fitted to the trace.
 */
#include "retime.h"

#include "../models/kernel_cost.h"

#include "scale.h"

#include <stdlib.h>

static bool sample_of(const sc__group *gr, sc__comm_sample *s) {
    /* A group some of whose ranks are not traced measured waiting too. */
    if (gr->type >= SC_C_BARRIER || gr->bytes < 0 || gr->comm_ranks < 2 || gr->transfer_ns <= 0 ||
        gr->count < gr->comm_ranks)
        return false;
    *s = (sc__comm_sample){.type = gr->type, .bytes = gr->bytes, .ranks = gr->comm_ranks, .ns = gr->transfer_ns};
    return true;
}

sc__comm_sample *sc__retime_samples(const sc__graph *g, size_t *n) {
    *n = 0;
    const sc__group *groups = g->groups.data;
    sc__comm_sample *s = sc__alloc_array(g->groups.len ? g->groups.len : 1, sizeof *s);
    if (!s) return NULL;
    for (size_t i = 0; i < g->groups.len; i++)
        if (sample_of(&groups[i], &s[*n])) (*n)++;
    return s;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void sc__retime_efficiency(const sc__graph *g, const sc__comm_model *m, double factor[SC_C_COUNT]) {
    for (int t = 0; t < SC_C_COUNT; t++) factor[t] = 1.0;
    size_t n = 0;
    sc__comm_sample *s = sc__retime_samples(g, &n);
    double *ratio = s ? sc__alloc_array(n ? n : 1, sizeof *ratio) : NULL;
    for (int t = 0; t < SC_C_COUNT && ratio; t++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (s[i].type != t) continue;
            int64_t model = sc__comm_time_ns(m, s[i].type, s[i].bytes, s[i].ranks);
            if (model > 0) ratio[k++] = (double)s[i].ns / (double)model;
        }
        if (!k) continue;
        qsort(ratio, k, sizeof *ratio, cmp_double);
        factor[t] = k % 2 ? ratio[k / 2] : (ratio[k / 2 - 1] + ratio[k / 2]) / 2;
    }
    free(ratio);
    free(s);
}

void sc__retime_groups(sc__graph *g, const sc__comm_model *m, const double *factor, const uint32_t *ranks,
                       sc__retime_stats *stats) {
    memset(stats, 0, sizeof *stats);
    sc__group *groups = g->groups.data;
    for (size_t i = 0; i < g->groups.len; i++) {
        sc__group *gr = &groups[i];
        uint32_t n = gr->comm_ranks;
        if (ranks && gr->comm != SC__NONE && gr->comm < g->strings.count && ranks[gr->comm]) n = ranks[gr->comm];
        int64_t ns = gr->bytes < 0 ? -1 : sc__comm_time_ns(m, gr->type, gr->bytes, n);
        if (ns < 0) {
            stats->unsized++;
            continue;
        }
        double f = factor && gr->type < SC_C_COUNT ? factor[gr->type] : 1.0;
        gr->transfer_ns = (int64_t)((double)ns * f + 0.5);
        stats->retimed++;
    }
}

/* The pieces after the first of a group of count members cut into pieces
 * of `ranks`. */
static size_t extra_pieces(uint32_t count, uint32_t ranks) { return count > ranks ? (count - 1) / ranks : 0; }

bool sc__retime_split(sc__graph *g, uint32_t comm, uint32_t ranks) {
    if (!ranks) return true;
    size_t add = 0;
    for (size_t i = 0; i < g->groups.len; i++) {
        const sc__group *gr = &SC__VEC_AT(&g->groups, sc__group, i);
        if (gr->comm == comm) add += extra_pieces(gr->count, ranks);
    }
    if (!add) return true;
    if (g->groups.len + add >= SC__NONE || !sc__vec_reserve(&g->groups, g->groups.len + add)) return false;
    sc__task *tasks = sc__graph_tasks(g);
    const uint32_t *members = g->group_members.data;
    size_t n = g->groups.len;
    for (size_t i = 0; i < n; i++) {
        sc__group *gr = &SC__VEC_AT(&g->groups, sc__group, i);
        if (gr->comm != comm || gr->count <= ranks) continue;
        /* the pieces reuse the member list: a group is a range of it */
        for (uint32_t at = ranks; at < gr->count; at += ranks) {
            sc__group piece = *gr;
            piece.first = gr->first + at;
            piece.count = gr->count - at < ranks ? gr->count - at : ranks;
            piece.comm_ranks = ranks;
            uint32_t id = (uint32_t)g->groups.len;
            SC__VEC_AT(&g->groups, sc__group, g->groups.len++) = piece;
            for (uint32_t m = 0; m < piece.count; m++) tasks[members[piece.first + m]].group = id;
        }
        gr->count = ranks;
        gr->comm_ranks = ranks;
    }
    return true;
}

/* The dense tensor-core rate both GPUs share (bf16, else fp16) and their
 * HBM bandwidths, each times the share of it that was measured reachable
 * (sc__kcost_defaults: MAMF GEMMs, STREAM triad): a datasheet peak is not
 * what a kernel gets, and the share differs between GPUs (A100 87% of its
 * GEMM peak, H100 80%). Megatron rank 0's GEMMs, 86.8 ms on its A100,
 * ran 29.6 ms on an H100 when `stepcast benchgen`'s program replayed them
 * (README, "Generated benchmarks"): 2.93x, the measured ratio; the
 * datasheets' is 3.17x. */
static void gpu_rates(const sc__hw_profile *a, const sc__hw_profile *b, double *compute, double *memory) {
    sc__kcost_model ma, mb;
    sc__kcost_defaults(a, &ma);
    sc__kcost_defaults(b, &mb);
    bool bf16 = a->bf16_tflops > 0 && b->bf16_tflops > 0;
    double ta = (bf16 ? a->bf16_tflops : a->fp16_tflops) * ma.gemm_ceiling;
    double tb = (bf16 ? b->bf16_tflops : b->fp16_tflops) * mb.gemm_ceiling;
    double ha = a->hbm_GBps * ma.hbm_ceiling, hb = b->hbm_GBps * mb.hbm_ceiling;
    *compute = ta > 0 && tb > 0 ? ta / tb : 1.0;
    *memory = ha > 0 && hb > 0 ? ha / hb : 1.0;
}

uint64_t sc__retime_gpu(sc__graph *g, const uint8_t *cls, const sc__hw_profile *from, const sc__hw_profile *to) {
    double compute, memory;
    gpu_rates(from, to, &compute, &memory);
    sc__task *tasks = sc__graph_tasks(g);
    uint64_t n = 0;
    for (size_t i = 0; i < g->tasks.len; i++) {
        sc__task *t = &tasks[i];
        if (!sc__task_on_gpu(t->kind) || sc__task_is_comm(t->kind)) continue;
        double f = cls[i] == SC_SCALE_GEMM || cls[i] == SC_SCALE_ATTENTION ? compute : memory;
        t->dur = (int64_t)((double)t->dur * f + 0.5);
        n++;
    }
    return n;
}
