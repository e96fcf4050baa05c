/*
 * reshape.c - predict's shape edits (--hidden, --ffn, --heads, --seq,
 * --micro-batch) applied to a calibrated graph.
 *
 * Nothing is timed from scratch: a kernel keeps its traced time times the
 * cost model's ratio between its new and its traced shape, so what the
 * trace knows and the model does not (the kernel a library picked, its
 * efficiency on this GPU) carries over; a kernel whose shape does not
 * change keeps its time exactly, so an identity edit is the replay. A
 * collective's message grows as its tensor does (an activation: tokens x
 * hidden; a flat bucket of gradients: a layer's parameters) and its
 * transfer time by the communication model's ratio.
 */
#include "reshape.h"

#include <math.h>

#include "../graph/graph.h"

static int64_t scaled(int64_t v, double ratio) {
    double x = (double)v * ratio;
    return x >= 9.2e18 ? INT64_MAX / 4 : (int64_t)llround(x);
}

/* The cost model's ratio for kernel r re-shaped by e; 1 when it does not
 * change or cannot be timed. *shaped says whether its own shape was used. */
static double kernel_ratio(const sc__kcost_model *m, const sc__shape_edit *e, const sc__krec *r, uint8_t kind,
                           bool *shaped) {
    sc__kshape before = r->shape, after;
    *shaped = before.form != SC__KF_NONE;
    if (!*shaped) {
        if (kind != SC_T_KERNEL || before.cls >= SC__KC_COLLECTIVE) return 1;
        sc__shape_edit_activation(e, before.cls, &before, &after);
    } else if (!sc__kshape_edit(e, &before, &after)) {
        return 1;
    }
    double t0 = sc__kcost_time_ns(m, &before), t1 = sc__kcost_time_ns(m, &after);
    return t0 > 0 && t1 > 0 ? t1 / t0 : 1;
}

static void reshape_groups(sc__graph *g, const sc__krecs *recs, const sc__shape_edit *e, const sc__comm_model *cm,
                           sc__reshape_stats *stats) {
    const uint32_t *members = g->group_members.data;
    for (size_t i = 0; i < g->groups.len; i++) {
        sc__group *gr = &SC__VEC_AT(&g->groups, sc__group, i);
        if (!gr->count || gr->bytes <= 0) continue;
        const sc__krec *r = sc__krecs_task(g, recs, members[gr->first]);
        double ratio = r ? sc__shape_edit_message_ratio(e, &r->shape) : 1;
        int64_t bytes = scaled(gr->bytes, ratio);
        if (bytes == gr->bytes) continue;
        int64_t t0 = sc__comm_time_ns(cm, gr->type, gr->bytes, gr->comm_ranks);
        int64_t t1 = sc__comm_time_ns(cm, gr->type, bytes, gr->comm_ranks);
        if (t0 > 0 && t1 > 0) gr->transfer_ns = scaled(gr->transfer_ns, (double)t1 / (double)t0);
        gr->bytes = bytes;
        stats->collectives++;
    }
}

void sc__reshape_graph(sc__graph *g, const sc__krecs *recs, const sc__kcost_model *m, const sc__shape_edit *e,
                       const sc__comm_model *cm, sc__reshape_stats *stats) {
    memset(stats, 0, sizeof *stats);
    if (!e->changes) return;
    sc__task *tasks = sc__graph_tasks(g);
    for (uint32_t i = 0; i < g->tasks.len; i++) {
        sc__task *t = &tasks[i];
        if (!sc__task_on_gpu(t->kind) || sc__task_is_comm(t->kind)) continue;
        const sc__krec *r = sc__krecs_task(g, recs, i);
        if (!r) continue;
        bool shaped;
        double ratio = kernel_ratio(m, e, r, t->kind, &shaped);
        if (ratio == 1) continue;
        t->dur = scaled(t->dur, ratio);
        if (shaped) stats->kernels++;
        else stats->unshaped++;
    }
    reshape_groups(g, recs, e, cm, stats);
}
