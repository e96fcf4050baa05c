/*
 * predict_backward.c - `predict --model-backward`: the recipe of the
 * modelled backward (transforms/bwd_model.h builds it) for each task of
 * the forward, from the structure (which tasks are the layers, the head,
 * the embedding) and the kernel cost model fitted to the trace.
 *
 * Per forward-phase task of the embedding (PRE), the layers (FWD) and the
 * head and loss (FMID):
 *   - a kernel becomes what sc__kcost_backward says (a GEMM its dgrad and
 *     wgrad GEMMs, fused attention its backward, a memory-bound kernel
 *     one of twice the bytes), each lasting its current time (traced, or
 *     re-shaped by a shape edit) x the model's ratio on its shapes (as
 *     re-shaped by that edit); a kernel without a record is timed by its
 *     scale class alone (GEMM: two of its time; attention 2.5x; else 2x);
 *   - a collective in a layer (tensor- or sequence-parallel) becomes one of
 *     the same size (Megatron's f and g operators are each other's
 *     conjugates: each forward all-reduce has a backward one); those of the
 *     embedding and head have none (the vocabulary-parallel embedding's and
 *     loss's all-reduces have no backward collective);
 *   - a launch call becomes as many launches as its kernel has copies, of
 *     its traced duration, other host tasks one copy (the forward's launch
 *     overhead and host time stand for the backward's); syncs none.
 * A traced backward is dropped and replaced, which is how the method is
 * checked against traces that have one. --recompute adds, before each
 * layer's backward, a re-run of its forward (full) or of its attention
 * core (selective), timed as traced (bwd_model.h places it).
 */
#include "predict_parallel.h"

#include "../models/kernel_cost.h"
#include "../models/shape_edit.h"
#include "../sim/sim.h"
#include "../transforms/bwd_model.h"
#include "../transforms/pp_rewrite.h"
#include "../transforms/scale.h"
#include "structure.h"

#include <stdlib.h>

typedef struct recipe_ctx {
    const sc__graph *g;
    const sc__structure *s;
    const uint8_t *seg, *cls;
    const sc__krecs *recs;
    const sc__kcost_model *km;
    const sc__shape_edit *edit;
    uint8_t *copies;
    int64_t *dur;
    sc__bwd_result *res;
} recipe_ctx;

static int64_t times(int64_t d, double r) {
    double x = (double)d * r + 0.5;
    return x >= 9.2e18 ? INT64_MAX / 4 : (int64_t)x;
}

/* A kernel's backward: its copies and their times. */
static void kernel(recipe_ctx *c, uint32_t t) {
    const sc__task *task = &sc__graph_tasks(c->g)[t];
    const sc__krec *r = c->recs ? sc__krecs_task(c->g, c->recs, t) : NULL;
    sc__kshape k;
    if (r) {
        k = r->shape;
        sc__kshape edited;
        if (c->edit && c->edit->changes && k.form != SC__KF_NONE && sc__kshape_edit(c->edit, &k, &edited)) k = edited;
    } else {
        memset(&k, 0, sizeof k);
        k.cls = c->cls[t] == SC_SCALE_GEMM ? SC__KC_GEMM
                : c->cls[t] == SC_SCALE_ATTENTION ? SC__KC_ATTENTION
                : task->kind == SC_T_MEMSET ? SC__KC_MEMSET
                                            : SC__KC_ELEMENTWISE;
    }
    double ratio[2];
    bool shaped;
    int n = sc__kcost_backward(c->km, &k, ratio, &shaped);
    c->copies[t] = (uint8_t)n;
    for (int i = 0; i < n; i++) c->dur[(size_t)t * SC__BWD_COPIES + i] = times(task->dur, ratio[i]);
    if (shaped) c->res->shaped++;
    else c->res->unshaped++;
}

static void recipe(recipe_ctx *c) {
    const sc__graph *g = c->g;
    const sc__task *t = sc__graph_tasks(g);
    for (uint32_t i = 0; i < g->tasks.len; i++) {
        uint8_t sg = c->seg[i];
        bool fwd = c->s->task_phase[i] == SC__PHASE_FORWARD &&
                   (sg == SC__SEG_PRE || sg == SC__SEG_FWD || sg == SC__SEG_FMID);
        if (!fwd || !sc__task_on_gpu(t[i].kind)) continue;
        if (!sc__task_is_comm(t[i].kind)) {
            kernel(c, i);
        } else if (sg == SC__SEG_FWD && t[i].group != SC__NONE) {
            c->copies[i] = 1;
            c->dur[(size_t)i * SC__BWD_COPIES] = t[i].dur;
        }
    }
    for (uint32_t i = 0; i < g->tasks.len; i++) {
        uint8_t sg = c->seg[i];
        bool fwd = c->s->task_phase[i] == SC__PHASE_FORWARD &&
                   (sg == SC__SEG_PRE || sg == SC__SEG_FWD || sg == SC__SEG_FMID);
        if (!fwd || sc__task_on_gpu(t[i].kind) || t[i].kind == SC_T_SYNC) continue;
        uint8_t n = 1;
        for (uint32_t e = g->succ_off[i]; e < g->succ_off[i + 1]; e++)
            if (g->succ_family[e] == SC_E_LAUNCH && c->copies[g->succ[e]] > n) n = c->copies[g->succ[e]];
        c->copies[i] = n;
        for (uint8_t k = 0; k < n; k++) c->dur[(size_t)i * SC__BWD_COPIES + k] = t[i].dur;
    }
}

/* An attention-core kernel: the scores and attention-over-values batched
 * GEMMs, softmax, or fused attention (by its shapes, else its class). */
static bool core_kernel(const recipe_ctx *c, uint32_t t) {
    const sc__krec *r = c->recs ? sc__krecs_task(c->g, c->recs, t) : NULL;
    if (!r) return c->cls[t] == SC_SCALE_ATTENTION;
    const sc__kshape *k = &r->shape;
    return k->cls == SC__KC_ATTENTION || k->cls == SC__KC_SOFTMAX || k->form == SC__KF_BMM ||
           k->form == SC__KF_BADDBMM || k->form == SC__KF_SDPA || k->form == SC__KF_FLASH;
}

/* --recompute: full marks every task of the forward layers; selective,
 * per layer and stream, the GPU work from the first attention-core kernel
 * to the last (so the softmax and dropout between the GEMMs go too) and
 * the launches of what it marked. */
static bool mark_recompute(const recipe_ctx *c, const uint32_t *layer, int mode, uint8_t *rc) {
    const sc__graph *g = c->g;
    const sc__task *t = sc__graph_tasks(g);
    uint32_t L = c->s->nlayers, *off = NULL, *order = NULL;
    for (uint32_t i = 0; i < g->tasks.len; i++)
        rc[i] = mode == SC__RECOMPUTE_FULL && c->seg[i] == SC__SEG_FWD && layer[i] < L &&
                c->s->task_phase[i] == SC__PHASE_FORWARD;
    if (mode != SC__RECOMPUTE_SELECTIVE) return true;
    uint32_t *span = sc__alloc_array(2 * (size_t)L + 1, sizeof *span);
    bool ok = span && sc__proc_order(g, &off, &order);
    for (size_t p = 0; ok && p < g->procs.len; p++) {
        if (sc__graph_procs(g)[p].kind != SC_P_STREAM) continue;
        for (size_t k = 0; k < 2 * (size_t)L; k++) span[k] = SC__NONE;
        for (uint32_t j = off[p]; j < off[p + 1]; j++) {
            uint32_t i = order[j], l = layer[i];
            if (c->seg[i] != SC__SEG_FWD || l >= L || !core_kernel(c, i)) continue;
            if (span[2 * l] == SC__NONE) span[2 * l] = j;
            span[2 * l + 1] = j;
        }
        for (uint32_t l = 0; l < L; l++)
            for (uint32_t j = span[2 * l]; span[2 * l] != SC__NONE && j <= span[2 * l + 1]; j++) {
                uint32_t i = order[j];
                rc[i] = c->seg[i] == SC__SEG_FWD && layer[i] == l && !sc__task_is_comm(t[i].kind);
            }
    }
    for (uint32_t u = 0; ok && u < g->tasks.len; u++)
        for (uint32_t e = g->succ_off[u]; e < g->succ_off[u + 1]; e++)
            if (g->succ_family[e] == SC_E_LAUNCH && rc[g->succ[e]]) rc[u] = 1;
    free(span), free(off), free(order);
    return ok;
}

/* A traced backward runs on autograd's thread while the thread that
 * called it waits: that wait is host time of a forward-phase operator on a
 * thread with no backward work, overlapping the backward's span. The
 * backward it waited for is dropped (or, in a pipeline, no longer one
 * block), so is the wait (the task keeps its time outside the span and is
 * not copied: a wait is no forward work). */
void sc__drop_backward_waits(const sc__structure *s, sc__graph *g, uint8_t *copies) {
    size_t nr = g->ranks.len, np = g->procs.len;
    int64_t *lo = sc__alloc_array(nr + 1, sizeof *lo), *hi = sc__alloc_array(nr + 1, sizeof *hi);
    uint8_t *bwd = calloc(np + 1, 1);
    sc__task *t = sc__graph_tasks(g);
    const sc__proc *pr = sc__graph_procs(g);
    if (lo && hi && bwd) {
        for (size_t r = 0; r < nr; r++) lo[r] = INT64_MAX, hi[r] = INT64_MIN;
        for (uint32_t i = 0; i < g->tasks.len; i++) {
            if (s->task_phase[i] != SC__PHASE_BACKWARD || pr[t[i].proc].kind != SC_P_THREAD) continue;
            uint32_t r = pr[t[i].proc].rank;
            bwd[t[i].proc] = 1;
            lo[r] = t[i].ts < lo[r] ? t[i].ts : lo[r];
            hi[r] = t[i].ts + t[i].dur > hi[r] ? t[i].ts + t[i].dur : hi[r];
        }
        for (uint32_t i = 0; i < g->tasks.len; i++) {
            uint32_t r = pr[t[i].proc].rank;
            if (t[i].kind != SC_T_CPU || bwd[t[i].proc] || s->task_phase[i] == SC__PHASE_BACKWARD || lo[r] > hi[r])
                continue;
            int64_t a = t[i].ts > lo[r] ? t[i].ts : lo[r], e = t[i].ts + t[i].dur, b = e < hi[r] ? e : hi[r];
            if (b <= a) continue;
            t[i].dur -= b - a;
            if (copies) copies[i] = 0;
        }
    }
    free(lo), free(hi), free(bwd);
}

/* The replay's per-task arrays for the new graph (the processors and ranks
 * are the old ones, in order). */
static bool carry(sc_replay *r, sc__graph *ng, const uint32_t *origin) {
    size_t n = ng->tasks.len ? ng->tasks.len : 1;
    uint8_t *cls = sc__alloc_array(n, 1);
    int64_t *dur = r->traced_dur ? sc__alloc_array(n, sizeof *dur) : NULL;
    if (!cls || (r->traced_dur && !dur)) {
        free(cls), free(dur);
        return false;
    }
    const sc__task *nt = sc__graph_tasks(ng);
    for (size_t i = 0; i < ng->tasks.len; i++) {
        uint32_t o = origin[i] & ~SC__BWD_MODELLED;
        cls[i] = r->cls[o];
        if (dur) dur[i] = origin[i] & SC__BWD_MODELLED ? nt[i].dur : r->traced_dur[o];
    }
    sc__replay_adopt_graph(r, ng, cls, dur);
    return true;
}

sc_status sc__predict_backward(sc_replay *r, const sc__krecs *recs, const sc__kcost_model *km,
                               const sc__shape_edit *edit, int recompute, sc__bwd_result *res, sc_error *err) {
    memset(res, 0, sizeof *res);
    const sc__structure *s;
    sc_status st = sc__replay_structure(r, &s, err);
    if (st != SC_OK) return st;
    if (!s->nlayers)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--model-backward: no repeated layers found in the trace (%s)",
                        s->why_no_layers ? s->why_no_layers : "none");
    size_t n = r->g->tasks.len + 1;
    uint8_t *seg = sc__alloc_array(n, 1), *copies = calloc(n, 1), *rc = calloc(n, 1);
    uint32_t *layer = sc__alloc_array(n, sizeof *layer);
    int64_t *dur = calloc(n * SC__BWD_COPIES, sizeof *dur);
    sc__graph *ng = NULL;
    uint32_t *origin = NULL;
    if (!seg || !copies || !rc || !layer || !dur || !sc__pp_label(r->g, s, seg, layer))
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    if (st == SC_OK) {
        recipe_ctx c = {r->g, s, seg, r->cls, recs, km, edit, copies, dur, res};
        recipe(&c);
        if (s->nbackward) sc__drop_backward_waits(s, r->g, copies);
        if (!mark_recompute(&c, layer, recompute, rc)) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    if (st == SC_OK) {
        sc__bwd_spec spec = {seg, layer, s->nlayers, copies, dur, recompute ? rc : NULL};
        sc__bwd_stats bs;
        st = sc__bwd_model(r->g, &spec, &ng, &origin, &bs, err);
        res->traced = r->g->tasks.len;
        res->modelled = bs.modelled;
        res->dropped = bs.dropped;
        res->recomputed = bs.recomputed;
    }
    free(seg), free(copies), free(rc), free(layer), free(dur);
    /* the waits dropped changed durations; on success carry gives r the
     * new graph, which drops it too */
    sc__replay_structure_drop(r);
    if (st == SC_OK && !carry(r, ng, origin)) {
        sc__graph_free(ng);
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    free(origin);
    return st;
}
