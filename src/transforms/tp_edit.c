/*
 * tp_edit.c - re-sharding the layers' work for another tensor-parallel
 * degree (tp_edit.h says what is sharded, what is replicated and what
 * happens to the collectives).
 *
 * The layers' GPU tasks are sorted by (rank, layer, measured start) once and
 * walked with a sharded / replicated state; the collectives are found by
 * their group's flag, split with sc__retime_split and, for T = 1,
 * emptied along with the calls that launched them.
 */
#include "tp_edit.h"

#include "retime.h"
#include "scale.h"

#include <stdlib.h>

int64_t sc__kernel_rescale(int64_t dur, uint8_t cls, double flops_ratio, double bytes_ratio) {
    double f = cls == SC_SCALE_GEMM || cls == SC_SCALE_ATTENTION ? flops_ratio : bytes_ratio;
    return (int64_t)((double)dur * f + 0.5);
}

typedef struct order_ctx {
    const sc__graph *g;
    const uint32_t *layer;
} order_ctx;

/* By rank, layer, measured start: the copies --layers makes keep their
 * template's start, so the layer keeps each copy's tasks together. */
static int cmp_launch(const void *a, const void *b, void *ctx) {
    const order_ctx *c = ctx;
    const sc__graph *g = c->g;
    const sc__task *t = sc__graph_tasks(g);
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t rx = sc__graph_procs(g)[t[x].proc].rank, ry = sc__graph_procs(g)[t[y].proc].rank;
    if (rx != ry) return rx < ry ? -1 : 1;
    if (c->layer[x] != c->layer[y]) return c->layer[x] < c->layer[y] ? -1 : 1;
    if (t[x].ts != t[y].ts) return t[x].ts < t[y].ts ? -1 : 1;
    return x < y ? -1 : x > y;
}

static bool is_tp(const sc__graph *g, const sc__tp_spec *sp, uint32_t t) {
    uint32_t gr = sc__graph_tasks(g)[t].group;
    return gr != SC__NONE && sp->tp_group[gr];
}

/* Sharded kernel i's new duration: by the cost model on its re-sharded
 * shape when its record has one (*modelled set), else by the ratio. */
static int64_t resharded(const sc__graph *g, const sc__tp_spec *sp, uint32_t i, double ratio, bool *modelled) {
    const sc__task *t = sc__graph_tasks(g);
    const sc__krec *r = sp->recs && sp->edit ? sc__krecs_task(g, sp->recs, i) : NULL;
    *modelled = false;
    if (r && r->shape.form != SC__KF_NONE) {
        sc__kshape before = r->shape, after;
        if (sp->pre && sp->pre->changes) sc__kshape_edit(sp->pre, &r->shape, &before);
        sc__kshape_edit(sp->edit, &before, &after);
        double t0 = sc__kcost_time_ns(sp->model, &before), t1 = sc__kcost_time_ns(sp->model, &after);
        if (t0 > 0 && t1 > 0) {
            *modelled = true;
            return (int64_t)((double)t[i].dur * (t1 / t0) + 0.5);
        }
    }
    return sc__kernel_rescale(t[i].dur, sp->cls[i], ratio, ratio);
}

/* The sharded / replicated walk over the layers' GPU work. */
static bool rescale(sc__graph *g, const sc__tp_spec *sp, sc__tp_stats *st) {
    sc__task *t = sc__graph_tasks(g);
    size_t n = 0;
    for (size_t i = 0; i < g->tasks.len; i++) n += sp->layer[i] != SC__NONE && sc__task_on_gpu(t[i].kind);
    uint32_t *idx = sc__alloc_array(n + 1, sizeof *idx);
    if (!idx) return false;
    n = 0;
    for (uint32_t i = 0; i < g->tasks.len; i++)
        if (sp->layer[i] != SC__NONE && sc__task_on_gpu(t[i].kind)) idx[n++] = i;
    order_ctx oc = {g, sp->layer};
    sc__sort(idx, n, sizeof *idx, cmp_launch, &oc);
    double ratio = (double)sp->from / sp->to;
    uint32_t prev_layer = SC__NONE, prev_rank = SC__NONE;
    bool sharded = false;
    for (size_t j = 0; j < n; j++) {
        uint32_t i = idx[j], rank = sc__graph_procs(g)[t[i].proc].rank;
        if (sp->layer[i] != prev_layer || rank != prev_rank) sharded = false;
        prev_layer = sp->layer[i];
        prev_rank = rank;
        if (sc__task_is_comm(t[i].kind)) {
            if (is_tp(g, sp, i)) sharded = false;
            continue;
        }
        if (sp->cls[i] == SC_SCALE_GEMM || sp->cls[i] == SC_SCALE_ATTENTION) sharded = true;
        if (!sharded) {
            st->replicated++;
            continue;
        }
        bool modelled;
        t[i].dur = resharded(g, sp, i, ratio, &modelled);
        st->sharded++;
        st->modelled += modelled;
    }
    free(idx);
    return true;
}

/* T = 1: the collectives and their launch calls take no time. */
static void empty_collectives(sc__graph *g, const sc__tp_spec *sp) {
    sc__task *t = sc__graph_tasks(g);
    for (uint32_t u = 0; u < g->tasks.len; u++) {
        if (is_tp(g, sp, u)) t[u].dur = 0;
        for (uint32_t e = g->succ_off[u]; e < g->succ_off[u + 1]; e++)
            if (g->succ_family[e] == SC_E_LAUNCH && is_tp(g, sp, g->succ[e])) t[u].dur = 0;
    }
    for (size_t i = 0; i < g->groups.len; i++)
        if (sp->tp_group[i]) SC__VEC_AT(&g->groups, sc__group, i).transfer_ns = 0;
}

bool sc__tp_edit(sc__graph *g, const sc__tp_spec *sp, sc__tp_stats *st) {
    *st = (sc__tp_stats){.comm = SC__NONE};
    for (size_t i = 0; i < g->groups.len; i++)
        if (sp->tp_group[i]) {
            st->collectives++;
            st->comm = SC__VEC_AT(&g->groups, sc__group, i).comm;
        }
    if (!rescale(g, sp, st)) return false;
    if (sp->to == 1) empty_collectives(g, sp);
    if (st->comm != SC__NONE && sp->to < sp->from && !sc__retime_split(g, st->comm, sp->to)) return false;
    return true;
}
