/*
 * bwd_model.c - a modelled backward from copies of the forward
 * (bwd_model.h says what goes where).
 *
 * Per rank: its kept tasks are appended in their old order, then its
 * copies unit by unit (a counting sort of the rank's copied tasks by unit,
 * each processor's walked in reverse, a layer's re-run forward first); each processor's tasks are then
 * numbered: the kept ones up to the insertion point, the copies, the rest.
 * Edges are copied in one pass over the old edges once every task has its
 * new index; groups are re-formed at the end.
 */
#include "bwd_model.h"

#include "../sim/sim.h"
#include "pp_rewrite.h"

#include <stdlib.h>

typedef struct bw {
    const sc__graph *g;
    const sc__bwd_spec *sp;
    sc__graph *ng;
    uint32_t *off, *order;   /* old processor order */
    uint32_t *map, *cmap;    /* old task -> new kept task / its first copy, SC__NONE */
    uint32_t *rmap;          /* old task -> its recomputed copy, SC__NONE */
    uint32_t *opmap, root_op;
    uint32_t *ins, *ncopy;   /* per processor: kept tasks before the copies; copies */
    uint32_t *cand, *sorted; /* scratch: a rank's copied tasks (RECOMP: the re-run's) */
    uint32_t *cnt;           /* scratch: per slot (two a unit: re-run, backward) */
    sc__vec origin;          /* uint32 per new task */
    sc__bwd_stats st;
} bw;

#define RECOMP 0x80000000u

static bool dropped(uint8_t seg) { return seg == SC__SEG_BMID || seg == SC__SEG_BWD || seg == SC__SEG_POST; }

/* The unit of a copied task: 0 the head's backward, 1 + (L - 1 - l) layer
 * l's, L + 1 the embedding's; L + 2: not copied. */
static uint32_t unit_of(const bw *w, uint32_t t) {
    uint32_t L = w->sp->layers;
    if (!w->sp->copies[t]) return L + 2;
    switch (w->sp->seg[t]) {
    case SC__SEG_FMID: return 0;
    case SC__SEG_FWD: return w->sp->layer[t] < L ? L - w->sp->layer[t] : L + 2;
    case SC__SEG_PRE: return L + 1;
    default: return L + 2;
    }
}

/* The slot of a candidate: a layer's re-run just before its backward. */
static uint32_t slot_of(const bw *w, uint32_t e) {
    uint32_t t = e & ~RECOMP;
    return e & RECOMP ? 2 * (w->sp->layers - w->sp->layer[t]) : 2 * unit_of(w, t) + 1;
}

static bool recomputed(const bw *w, uint32_t t) {
    return w->sp->recompute && w->sp->recompute[t] && w->sp->seg[t] == SC__SEG_FWD &&
           w->sp->layer[t] < w->sp->layers;
}

static uint32_t mirror_op(bw *w, uint32_t op) {
    if (op == SC__NONE || op >= w->g->ops.len) return w->root_op;
    if (w->opmap[op] != SC__NONE) return w->opmap[op];
    sc__op o = ((const sc__op *)w->g->ops.data)[op];
    o.parent = w->root_op;
    w->opmap[op] = (uint32_t)w->ng->ops.len;
    return SC__VEC_APPEND(&w->ng->ops, &o) ? w->opmap[op] : SC__NONE;
}

static bool push(bw *w, const sc__task *t, uint32_t origin) {
    return SC__VEC_APPEND(&w->ng->tasks, t) && SC__VEC_APPEND(&w->origin, &origin);
}

/* Rank r's kept tasks; where each processor's copies go. */
static bool keep_rank(bw *w, const sc__rank *rk) {
    const sc__task *old = sc__graph_tasks(w->g);
    for (uint32_t i = rk->first_task; i < rk->first_task + rk->ntasks; i++) {
        if (dropped(w->sp->seg[i])) {
            w->st.dropped++;
            continue;
        }
        sc__task t = old[i];
        t.group = SC__NONE;
        w->map[i] = (uint32_t)w->ng->tasks.len;
        if (!push(w, &t, i)) return false;
    }
    return true;
}

/* Task s's copy k (k = SC__BWD_COPIES: its re-run) at the next place of
 * its processor, its start mirrored about f. */
static bool copy_task(bw *w, uint32_t s, uint32_t k, int64_t f) {
    const sc__task *old = sc__graph_tasks(w->g);
    sc__task t = old[s];
    t.dur = k < SC__BWD_COPIES ? w->sp->dur[(size_t)s * SC__BWD_COPIES + k] : old[s].dur;
    t.ts = 2 * f - (old[s].ts + old[s].dur);
    t.event = SC__NONE;
    t.group = SC__NONE;
    t.flags &= (uint16_t)~SC__TF_QUEUED;
    if (t.kind == SC_T_SYNC) t.kind = SC_T_RUNTIME, t.dur = 0;
    t.sync = SC_SYNC_NONE;
    t.sync_arg = SC__NONE;
    if ((t.op = mirror_op(w, old[s].op)) == SC__NONE) return false;
    t.seq = w->ncopy[t.proc]++; /* numbered after the kept ones below */
    w->st.modelled++;
    return push(w, &t, s | SC__BWD_MODELLED);
}

/* Rank r's copies, slot by slot; the mirror of their starts about f. */
static bool copy_rank(bw *w, uint32_t r) {
    const sc__graph *g = w->g;
    const sc__task *old = sc__graph_tasks(g);
    const sc__proc *pr = g->procs.data;
    uint32_t U = w->sp->layers + 3, S = 2 * U, n = 0, *cnt = w->cnt;
    memset(cnt, 0, ((size_t)S + 1) * sizeof *cnt);
    int64_t f = INT64_MIN;
    for (size_t p = 0; p < g->procs.len; p++) {
        if (pr[p].rank != r) continue;
        for (uint32_t j = w->off[p]; j < w->off[p + 1]; j++)
            if (recomputed(w, w->order[j])) {
                w->cand[n++] = w->order[j] | RECOMP;
                cnt[slot_of(w, w->order[j] | RECOMP) + 1]++;
            }
        for (uint32_t j = w->off[p + 1]; j-- > w->off[p];) {
            uint32_t t = w->order[j], u = unit_of(w, t);
            if (u >= U - 1) continue;
            w->cand[n++] = t;
            cnt[slot_of(w, t) + 1]++;
            if (old[t].ts + old[t].dur > f) f = old[t].ts + old[t].dur;
        }
    }
    for (uint32_t u = 0; u < S; u++) cnt[u + 1] += cnt[u];
    for (uint32_t i = 0; i < n; i++) w->sorted[cnt[slot_of(w, w->cand[i])]++] = w->cand[i];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = w->sorted[i] & ~RECOMP;
        if (w->sorted[i] & RECOMP) {
            w->rmap[s] = (uint32_t)w->ng->tasks.len;
            if (!copy_task(w, s, SC__BWD_COPIES, f)) return false;
            w->st.recomputed++;
            continue;
        }
        w->cmap[s] = (uint32_t)w->ng->tasks.len;
        for (uint32_t k = 0; k < w->sp->copies[s] && k < SC__BWD_COPIES; k++)
            if (!copy_task(w, s, k, f)) return false;
    }
    return true;
}

/* Each processor's new order: kept tasks before the insertion point, the
 * copies, the kept rest. */
static void number(bw *w) {
    const sc__graph *g = w->g;
    sc__task *nt = sc__graph_tasks(w->ng);
    for (size_t p = 0; p < g->procs.len; p++) {
        uint32_t kept = 0, ins = 0;
        for (uint32_t j = w->off[p]; j < w->off[p + 1]; j++) {
            uint32_t t = w->order[j];
            if (w->map[t] == SC__NONE) continue;
            kept++;
            uint8_t s = w->sp->seg[t];
            if (s == SC__SEG_HEAD || s == SC__SEG_PRE || s == SC__SEG_FWD || s == SC__SEG_FMID) ins = kept;
        }
        w->ins[p] = ins;
        kept = 0;
        for (uint32_t j = w->off[p]; j < w->off[p + 1]; j++) {
            uint32_t t = w->order[j];
            if (w->map[t] == SC__NONE) continue;
            nt[w->map[t]].seq = kept < ins ? kept : kept + w->ncopy[p];
            kept++;
        }
    }
    const uint32_t *origin = w->origin.data;
    for (size_t i = 0; i < w->ng->tasks.len; i++)
        if (origin[i] & SC__BWD_MODELLED) nt[i].seq += w->ins[nt[i].proc];
}

static bool add(bw *w, uint32_t a, uint32_t b, uint8_t fam) {
    return sc__graph_add_edge(w->ng, a, b, (sc__edge_family)fam);
}

static bool edges(bw *w) {
    const sc__graph *g = w->g;
    const uint8_t *c = w->sp->copies;
    for (uint32_t u = 0; u < g->tasks.len; u++)
        for (uint32_t e = g->succ_off[u]; e < g->succ_off[u + 1]; e++) {
            uint32_t v = g->succ[e];
            uint8_t fam = g->succ_family[e];
            if (w->map[u] != SC__NONE && w->map[v] != SC__NONE && !add(w, w->map[u], w->map[v], fam)) return false;
            bool order = fam == SC_E_THREAD || fam == SC_E_STREAM || fam == SC_E_GPU_TO_CPU;
            if (!order && w->rmap[u] != SC__NONE && w->rmap[v] != SC__NONE && !add(w, w->rmap[u], w->rmap[v], fam))
                return false;
            if (w->cmap[u] == SC__NONE || w->cmap[v] == SC__NONE) continue;
            if (order) continue;
            if (fam == SC_E_LAUNCH) {
                for (uint32_t k = 0; k < c[v]; k++)
                    if (!add(w, w->cmap[u] + (k < c[u] ? k : c[u] - 1u), w->cmap[v] + k, fam)) return false;
            } else if (!add(w, w->cmap[v] + c[v] - 1u, w->cmap[u], fam)) {
                return false;
            }
        }
    /* a kept task's sync on a dropped task syncs on nothing */
    sc__task *nt = sc__graph_tasks(w->ng);
    const uint32_t *origin = w->origin.data;
    for (size_t i = 0; i < w->ng->tasks.len; i++)
        if (!(origin[i] & SC__BWD_MODELLED) && nt[i].sync == SC_SYNC_TASK) {
            uint32_t s = nt[i].sync_arg;
            nt[i].sync_arg = s < g->tasks.len ? w->map[s] : SC__NONE;
            if (nt[i].sync_arg == SC__NONE) nt[i].sync = SC_SYNC_NONE;
        }
    return true;
}

static bool group_like(bw *w, const sc__group *o, const uint32_t *m, uint32_t n) {
    if (!n) return true;
    uint32_t id = sc__graph_add_group(w->ng, (sc__coll_type)o->type, o->bytes, m, n);
    if (id == SC__NONE) return false;
    sc__group *gr = &SC__VEC_AT(&w->ng->groups, sc__group, id);
    gr->transfer_ns = o->transfer_ns;
    gr->comm = o->comm;
    gr->comm_ranks = o->comm_ranks;
    return true;
}

/* The kept groups (their kept members), then one per copied group, then
 * one per recomputed group. */
static bool groups(bw *w) {
    const sc__graph *g = w->g;
    const sc__group *og = g->groups.data;
    const uint32_t *mem = g->group_members.data;
    uint32_t most = 0;
    for (size_t i = 0; i < g->groups.len; i++) most = og[i].count > most ? og[i].count : most;
    uint32_t *m = sc__alloc_array(most + 1, sizeof *m);
    bool ok = m != NULL;
    for (int pass = 0; ok && pass < 3; pass++)
        for (size_t i = 0; ok && i < g->groups.len; i++) {
            uint32_t n = 0;
            for (uint32_t k = 0; k < og[i].count; k++) {
                uint32_t t = mem[og[i].first + k], x = pass == 2 ? w->rmap[t] : pass ? w->cmap[t] : w->map[t];
                if (x != SC__NONE && (pass != 1 || w->sp->copies[t])) m[n++] = x;
            }
            ok = group_like(w, &og[i], m, n);
        }
    free(m);
    return ok;
}

static bool strings(bw *w) {
    const sc__graph *g = w->g;
    for (uint32_t i = 0; i < g->strings.count; i++)
        if (sc__intern_put(&w->ng->strings, g->strings.strs[i], g->strings.lens[i]) != i) return false;
    const sc__op *ops = g->ops.data;
    for (size_t i = 0; i < g->ops.len; i++)
        if (!SC__VEC_APPEND(&w->ng->ops, &ops[i])) return false;
    static const char root[] = "autograd::engine::evaluate_function: modelled backward";
    sc__op r = {.name = sc__intern_put(&w->ng->strings, root, sizeof root - 1), .parent = SC__NONE,
                .module = SC__NONE, .layer = SC__NONE};
    w->root_op = (uint32_t)w->ng->ops.len;
    if (r.name == SC__NONE || !SC__VEC_APPEND(&w->ng->ops, &r)) return false;
    for (size_t i = 0; i < g->warnings.count; i++)
        if (!sc__warnings_add(&w->ng->warnings, "%s", g->warnings.items[i])) return false;
    const int64_t *bl = g->proc_backlog.data;
    for (size_t i = 0; i < g->proc_backlog.len; i++)
        if (!SC__VEC_APPEND(&w->ng->proc_backlog, &bl[i])) return false;
    w->ng->budget = g->budget;
    w->ng->finish_threads = g->finish_threads;
    return true;
}

static bool setup(bw *w) {
    const sc__graph *g = w->g;
    size_t nt = g->tasks.len + 1, np = g->procs.len + 1;
    w->map = sc__alloc_array(nt, sizeof *w->map);
    w->cmap = sc__alloc_array(nt, sizeof *w->cmap);
    w->rmap = sc__alloc_array(nt, sizeof *w->rmap);
    w->cand = sc__alloc_array(2 * nt, sizeof *w->cand);
    w->sorted = sc__alloc_array(2 * nt, sizeof *w->sorted);
    w->opmap = sc__alloc_array(g->ops.len + 1, sizeof *w->opmap);
    w->cnt = sc__alloc_array(2 * (size_t)w->sp->layers + 8, sizeof *w->cnt);
    w->ins = calloc(np, sizeof *w->ins);
    w->ncopy = calloc(np, sizeof *w->ncopy);
    if (!w->map || !w->cmap || !w->rmap || !w->cand || !w->sorted || !w->opmap || !w->cnt || !w->ins || !w->ncopy) return false;
    for (size_t i = 0; i < nt; i++) w->map[i] = w->cmap[i] = w->rmap[i] = SC__NONE;
    for (size_t i = 0; i <= g->ops.len; i++) w->opmap[i] = SC__NONE;
    if (!(w->ng = sc__graph_new()) || !strings(w) || !sc__proc_order(g, &w->off, &w->order)) return false;
    const sc__proc *pr = g->procs.data;
    for (size_t i = 0; i < g->ranks.len; i++) {
        const sc__rank *rk = &((const sc__rank *)g->ranks.data)[i];
        if (sc__graph_add_rank(w->ng, rk->rank, rk->trace) == SC__NONE) return false;
    }
    for (size_t p = 0; p < g->procs.len; p++) {
        uint32_t id = sc__graph_add_proc(w->ng, pr[p].rank, (sc__proc_kind)pr[p].kind, pr[p].device, pr[p].id);
        if (id == SC__NONE) return false;
        sc__graph_procs(w->ng)[id].quiet = pr[p].quiet;
    }
    return true;
}

static void bw_free(bw *w) {
    void *p[] = {w->off, w->order, w->map, w->cmap, w->rmap, w->opmap, w->ins, w->ncopy, w->cand, w->sorted, w->cnt};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) free(p[i]);
}

static bool build(bw *w) {
    const sc__graph *g = w->g;
    for (uint32_t r = 0; r < g->ranks.len; r++) {
        const sc__rank *ork = &((const sc__rank *)g->ranks.data)[r];
        uint32_t first = (uint32_t)w->ng->tasks.len;
        if (!keep_rank(w, ork) || !copy_rank(w, r)) return false;
        sc__rank *rk = &SC__VEC_AT(&w->ng->ranks, sc__rank, r);
        sc__rank keep = *rk;
        *rk = *ork;
        rk->rank = keep.rank;
        rk->first_task = first;
        rk->ntasks = (uint32_t)w->ng->tasks.len - first;
        uint32_t f = ork->step_first_task, l = ork->step_last_task;
        rk->step_first_task = f < g->tasks.len && w->map[f] != SC__NONE ? w->map[f] : first;
        rk->step_last_task = l < g->tasks.len && w->map[l] != SC__NONE ? w->map[l] : SC__NONE;
    }
    number(w);
    return edges(w) && groups(w);
}

sc_status sc__bwd_model(const sc__graph *g, const sc__bwd_spec *sp, sc__graph **out, uint32_t **origin,
                        sc__bwd_stats *st, sc_error *err) {
    *out = NULL;
    *origin = NULL;
    if ((uint64_t)g->tasks.len * (SC__BWD_COPIES + 2) >= SC__BWD_MODELLED)
        return sc__fail(err, SC_E_LIMIT, NULL, SC_NO_OFFSET, "--model-backward: the graph is too large to copy");
    bw w = {.g = g, .sp = sp};
    sc__vec_init(&w.origin, sizeof(uint32_t));
    sc_status s = setup(&w) && build(&w) ? SC_OK
                                         : sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET,
                                                    "out of memory modelling the backward");
    if (s == SC_OK) s = sc__graph_finish(w.ng, true, err);
    *st = w.st;
    bw_free(&w);
    if (s != SC_OK) {
        sc__graph_free(w.ng);
        sc__vec_free(&w.origin);
        return s;
    }
    *out = w.ng;
    *origin = w.origin.data;
    return SC_OK;
}
