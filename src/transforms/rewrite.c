/*
 * rewrite.c - copying and removing instances of a repeated block of tasks
 * (rewrite.h says what happens to tasks, edges, groups and order).
 *
 * One pass builds the new task array in the old index order, each rank's
 * copies right after its last template task (a rank's tasks stay
 * contiguous); a pass per processor renumbers seq with the copies of each
 * part after that part's last template task; a pass over the old CSR adds
 * the edges; a pass over the groups re-forms them. Linear in the graph and
 * the copies.
 */
#include "rewrite.h"

#include "../sim/sim.h"

#include <stdlib.h>

#define NP SC__REWRITE_PARTS

typedef struct rw {
    const sc__graph *g;
    const sc__rewrite_spec *sp;
    sc__graph *ng;
    uint32_t T, R, k;       /* template, reference instance (T, or the last kept), copies */
    uint32_t *off, *order;  /* old processor order */
    uint32_t *slot;         /* per old task: place among its instance's tasks of its part on its processor */
    uint32_t *ref, *ref_off; /* R's tasks by (processor, part) in seq order */
    uint32_t *newidx;       /* old -> new, SC__NONE when removed */
    uint32_t *tl, *tl_off;  /* template tasks by rank in index order */
    uint32_t *tpos;         /* template task -> place in its rank's list */
    uint32_t *copybase;     /* per rank: new index of its first copy */
    int64_t *tmpl_last;     /* per rank: the latest measured start of a template task */
    uint32_t *copy_of;      /* per new task: the copy number (0: an old task) */
    sc__vec origin;         /* uint32 per new task */
} rw;

static uint32_t part_of(const rw *w, uint32_t t) {
    uint32_t p = w->sp->part ? w->sp->part[t] : 0;
    return p < NP ? p : NP - 1;
}
static uint32_t rank_of(const rw *w, uint32_t t) {
    return sc__graph_procs(w->g)[sc__graph_tasks(w->g)[t].proc].rank;
}
static bool in_T(const rw *w, uint32_t t) { return w->k && w->sp->inst[t] == w->T; }
static bool removed(const rw *w, uint32_t t) {
    return w->sp->inst[t] != SC__NONE && w->sp->inst[t] >= w->sp->want;
}
/* Copy c (1 ..) of template task t. */
static uint32_t cidx(const rw *w, uint32_t t, uint32_t c) {
    uint32_t r = rank_of(w, t), n = w->tl_off[r + 1] - w->tl_off[r];
    return w->copybase[r] + (c - 1) * n + w->tpos[t];
}
/* The task of R that matches t (same processor, part and place), SC__NONE. */
static uint32_t corr(const rw *w, uint32_t t) {
    uint32_t key = sc__graph_tasks(w->g)[t].proc * NP + part_of(w, t);
    uint32_t a = w->ref_off[key], b = w->ref_off[key + 1];
    if (a == b) return SC__NONE;
    uint32_t j = w->slot[t] < b - a ? w->slot[t] : b - a - 1;
    return w->ref[a + j];
}
/* Where an edge from old task t starts in the new graph. */
static uint32_t src_map(const rw *w, uint32_t t) {
    if (w->newidx[t] != SC__NONE) return w->newidx[t];
    uint32_t c = corr(w, t);
    return c != SC__NONE ? w->newidx[c] : SC__NONE;
}

static bool index_instances(rw *w) {
    const sc__graph *g = w->g;
    size_t nt = g->tasks.len, np = g->procs.len;
    const uint32_t *inst = w->sp->inst;
    uint32_t *cnt = calloc((size_t)w->sp->n * NP, sizeof *cnt);
    w->slot = sc__alloc_array(nt ? nt : 1, sizeof *w->slot);
    w->ref_off = calloc(np * NP + 2, sizeof *w->ref_off);
    if (!cnt || !w->slot || !w->ref_off || !sc__proc_order(g, &w->off, &w->order)) {
        free(cnt);
        return false;
    }
    size_t nref = 0;
    for (size_t p = 0; p < np; p++) {
        for (uint32_t k = w->off[p]; k < w->off[p + 1]; k++) {
            uint32_t t = w->order[k];
            if (inst[t] == SC__NONE || inst[t] >= w->sp->n) continue;
            w->slot[t] = cnt[inst[t] * NP + part_of(w, t)]++;
            if (inst[t] == w->R) {
                w->ref_off[p * NP + part_of(w, t) + 1]++;
                nref++;
            }
        }
        for (uint32_t k = w->off[p]; k < w->off[p + 1]; k++)
            if (inst[w->order[k]] < w->sp->n) cnt[inst[w->order[k]] * NP + part_of(w, w->order[k])] = 0;
    }
    free(cnt);
    for (size_t i = 0; i < np * NP; i++) w->ref_off[i + 1] += w->ref_off[i];
    if (!(w->ref = sc__alloc_array(nref + 1, sizeof *w->ref))) return false;
    uint32_t *fill = calloc(np * NP + 1, sizeof *fill);
    if (!fill) return false;
    for (size_t p = 0; p < np; p++)
        for (uint32_t k = w->off[p]; k < w->off[p + 1]; k++) {
            uint32_t t = w->order[k], key = (uint32_t)p * NP + part_of(w, t);
            if (inst[t] == w->R) w->ref[w->ref_off[key] + fill[key]++] = t;
        }
    free(fill);
    return true;
}

/* Template tasks by rank, in index order. */
static bool index_template(rw *w) {
    const sc__graph *g = w->g;
    size_t nt = g->tasks.len, nr = g->ranks.len;
    w->tl = sc__alloc_array(nt ? nt : 1, sizeof *w->tl);
    w->tl_off = calloc(nr + 2, sizeof *w->tl_off);
    w->tpos = sc__alloc_array(nt ? nt : 1, sizeof *w->tpos);
    w->copybase = calloc(nr + 1, sizeof *w->copybase);
    w->tmpl_last = calloc(nr + 1, sizeof *w->tmpl_last);
    if (!w->tl || !w->tl_off || !w->tpos || !w->copybase || !w->tmpl_last) return false;
    for (size_t r = 0; r < nr; r++) w->tmpl_last[r] = INT64_MIN;
    for (uint32_t t = 0; t < nt; t++)
        if (in_T(w, t)) w->tl_off[rank_of(w, t) + 1]++;
    for (size_t r = 0; r < nr; r++) w->tl_off[r + 1] += w->tl_off[r];
    uint32_t *fill = calloc(nr + 1, sizeof *fill);
    if (!fill) return false;
    for (uint32_t t = 0; t < nt; t++) {
        if (!in_T(w, t)) continue;
        uint32_t r = rank_of(w, t);
        w->tpos[t] = fill[r]++;
        if (sc__graph_tasks(g)[t].ts > w->tmpl_last[r]) w->tmpl_last[r] = sc__graph_tasks(g)[t].ts;
        w->tl[w->tl_off[r] + w->tpos[t]] = t;
    }
    free(fill);
    return true;
}

static bool push(rw *w, const sc__task *t, uint32_t origin, uint32_t copy) {
    if (sc__graph_add_task(w->ng, t) == SC__NONE || !SC__VEC_APPEND(&w->origin, &origin)) return false;
    uint32_t *c = sc__realloc_array(w->copy_of, w->ng->tasks.len, sizeof *c);
    if (!c) return false;
    w->copy_of = c;
    c[w->ng->tasks.len - 1] = copy;
    return true;
}

/* The new tasks, in the old index order, each rank's copies after its last
 * template task; then their sync targets. */
static bool tasks(rw *w) {
    const sc__graph *g = w->g;
    const sc__task *old = sc__graph_tasks(g);
    size_t nt = g->tasks.len;
    if (!(w->newidx = sc__alloc_array(nt ? nt : 1, sizeof *w->newidx))) return false;
    if (!sc__vec_reserve(&w->ng->tasks, nt + (size_t)w->k * (w->tl_off[g->ranks.len]))) return false;
    for (uint32_t i = 0; i < nt; i++) {
        w->newidx[i] = removed(w, i) ? SC__NONE : (uint32_t)w->ng->tasks.len;
        if (w->newidx[i] != SC__NONE && !push(w, &old[i], i, 0)) return false;
        uint32_t r = rank_of(w, i);
        if (!in_T(w, i) || w->tl[w->tl_off[r + 1] - 1] != i) continue;
        w->copybase[r] = (uint32_t)w->ng->tasks.len;
        for (uint32_t c = 1; c <= w->k; c++)
            for (uint32_t j = w->tl_off[r]; j < w->tl_off[r + 1]; j++) {
                sc__task t = old[w->tl[j]];
                t.event = SC__NONE;
                if (!push(w, &t, w->tl[j], c)) return false;
            }
    }
    sc__task *nt2 = sc__graph_tasks(w->ng);
    const uint32_t *origin = w->origin.data;
    for (size_t i = 0; i < w->ng->tasks.len; i++) {
        nt2[i].group = SC__NONE;
        if (nt2[i].sync != SC_SYNC_TASK || nt2[i].sync_arg >= nt) continue;
        uint32_t target = nt2[i].sync_arg, c = w->copy_of[i];
        (void)origin;
        nt2[i].sync_arg = c && in_T(w, target) ? cidx(w, target, c) : src_map(w, target);
        if (nt2[i].sync_arg == SC__NONE) nt2[i].sync = SC_SYNC_NONE;
    }
    return true;
}

/* seq: each processor's kept tasks in order, the copies of each part after
 * the template's last task of that part there. */
static void renumber(rw *w) {
    const sc__graph *g = w->g;
    sc__task *nt = sc__graph_tasks(w->ng);
    for (size_t p = 0; p < g->procs.len; p++) {
        uint32_t seq = 0;
        for (uint32_t k = w->off[p]; k < w->off[p + 1]; k++) {
            uint32_t t = w->order[k];
            if (w->newidx[t] != SC__NONE) nt[w->newidx[t]].seq = seq++;
            if (!in_T(w, t)) continue;
            uint32_t key = (uint32_t)p * NP + part_of(w, t), a = w->ref_off[key], b = w->ref_off[key + 1];
            if (w->ref[b - 1] != t) continue;
            for (uint32_t c = 1; c <= w->k; c++)
                for (uint32_t j = a; j < b; j++) nt[cidx(w, w->ref[j], c)].seq = seq++;
        }
    }
}

static bool edges(rw *w) {
    const sc__graph *g = w->g;
    const uint32_t *inst = w->sp->inst;
    bool ok = true;
    for (uint32_t u = 0; ok && u < g->tasks.len; u++) {
        for (uint32_t e = g->succ_off[u]; ok && e < g->succ_off[u + 1]; e++) {
            uint32_t v = g->succ[e];
            sc__edge_family f = (sc__edge_family)g->succ_family[e];
            uint32_t s = src_map(w, u);
            /* A removed source that maps into the destination's own instance
             * would point backwards inside it: the order edges keep it. */
            bool moved = w->newidx[u] == SC__NONE && s != SC__NONE && inst[v] == w->R;
            if (w->newidx[v] != SC__NONE && s != SC__NONE && !moved) ok = sc__graph_add_edge(w->ng, s, w->newidx[v], f);
            bool ut = in_T(w, u), vt = in_T(w, v);
            /* An edge out of the template to a task that ran while it did
             * (a helper thread, work the layer's range left out) may lead
             * back into it: only what came after waits for the copies. */
            if (ut && !vt && sc__graph_tasks(g)[v].ts < w->tmpl_last[rank_of(w, v)]) ut = false;
            for (uint32_t c = 1; ok && c <= w->k && (ut || vt); c++) {
                if (ut && vt) {
                    ok = sc__graph_add_edge(w->ng, cidx(w, u, c), cidx(w, v, c), f);
                } else if (vt) {
                    uint32_t cu = inst[u] != SC__NONE ? corr(w, u) : SC__NONE;
                    uint32_t from = cu == SC__NONE ? w->newidx[u] : c == 1 ? w->newidx[cu] : cidx(w, cu, c - 1);
                    ok = sc__graph_add_edge(w->ng, from, cidx(w, v, c), f);
                } else {
                    ok = sc__graph_add_edge(w->ng, cidx(w, u, c), w->newidx[v], f);
                }
            }
        }
    }
    return ok;
}

static uint32_t add_group(rw *w, const sc__group *old, const uint32_t *members) {
    uint32_t id = sc__graph_add_group(w->ng, (sc__coll_type)old->type, old->bytes, members, old->count);
    if (id == SC__NONE) return id;
    sc__group *ng = &SC__VEC_AT(&w->ng->groups, sc__group, id);
    ng->transfer_ns = old->transfer_ns;
    ng->comm = old->comm;
    ng->comm_ranks = old->comm_ranks;
    return id;
}

static sc_status groups(rw *w, sc_error *err) {
    const sc__graph *g = w->g;
    const sc__group *gr = g->groups.data;
    const uint32_t *mem = g->group_members.data;
    uint32_t most = 1;
    for (size_t i = 0; i < g->groups.len; i++)
        if (gr[i].count > most) most = gr[i].count;
    uint32_t *m = sc__alloc_array(most, sizeof *m);
    if (!m) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory rewriting the graph");
    sc_status st = SC_OK;
    for (size_t i = 0; st == SC_OK && i < g->groups.len; i++) {
        uint32_t gone = 0, tmpl = 0;
        for (uint32_t j = 0; j < gr[i].count; j++) {
            gone += removed(w, mem[gr[i].first + j]);
            tmpl += in_T(w, mem[gr[i].first + j]);
        }
        if ((gone && gone < gr[i].count) || (tmpl && tmpl < gr[i].count)) {
            const sc__task *t = &sc__graph_tasks(g)[mem[gr[i].first]];
            st = sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                          "the collective %s (%u ranks) lies in a layer on some ranks and outside it on others: "
                          "the ranks' layers do not line up",
                          sc__graph_str(g, t->name), gr[i].count);
            break;
        }
        if (gone) continue;
        for (uint32_t j = 0; j < gr[i].count; j++) m[j] = w->newidx[mem[gr[i].first + j]];
        bool ok = add_group(w, &gr[i], m) != SC__NONE;
        for (uint32_t c = 1; ok && tmpl && c <= w->k; c++) {
            for (uint32_t j = 0; j < gr[i].count; j++) m[j] = cidx(w, mem[gr[i].first + j], c);
            ok = add_group(w, &gr[i], m) != SC__NONE;
        }
        if (!ok) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory rewriting the graph");
    }
    free(m);
    return st;
}

static int cmp_loose(const void *a, const void *b, void *ctx) {
    uint32_t x = ((const sc__task_bytes *)a)->task, y = ((const sc__task_bytes *)b)->task;
    return x < y ? -1 : x > y;
}

/* Ranks, processors, strings, operators, backlogs and loose sizes. */
static bool rest(rw *w) {
    const sc__graph *g = w->g;
    sc__graph *ng = w->ng;
    for (uint32_t i = 0; i < g->strings.count; i++)
        if (sc__intern_put(&ng->strings, g->strings.strs[i], g->strings.lens[i]) != i) return false;
    const sc__rank *rk = g->ranks.data;
    for (size_t r = 0; r < g->ranks.len; r++) {
        sc__rank nr = rk[r];
        uint32_t lo = SC__NONE, hi = 0;
        for (uint32_t t = rk[r].first_task; t < rk[r].first_task + rk[r].ntasks; t++)
            if (w->newidx[t] != SC__NONE) {
                if (lo == SC__NONE) lo = w->newidx[t];
                hi = w->newidx[t];
            }
        if (w->k && w->tl_off[r + 1] > w->tl_off[r]) {
            uint32_t last = w->copybase[r] + w->k * (w->tl_off[r + 1] - w->tl_off[r]) - 1;
            if (last > hi) hi = last;
        }
        nr.first_task = lo == SC__NONE ? (uint32_t)ng->tasks.len : lo;
        nr.ntasks = lo == SC__NONE ? 0 : hi - lo + 1;
        if (nr.step_first_task != SC__NONE) nr.step_first_task = src_map(w, nr.step_first_task);
        if (nr.step_last_task != SC__NONE) {
            uint32_t l = nr.step_last_task;
            nr.step_last_task = in_T(w, l) ? cidx(w, l, w->k) : src_map(w, l);
        }
        if (!SC__VEC_APPEND(&ng->ranks, &nr)) return false;
    }
    const sc__proc *pr = g->procs.data;
    for (size_t p = 0; p < g->procs.len; p++)
        if (!SC__VEC_APPEND(&ng->procs, &pr[p])) return false;
    const sc__op *ops = g->ops.data;
    if (!sc__vec_reserve(&ng->ops, g->ops.len + 1)) return false;
    for (size_t i = 0; i < g->ops.len; i++) SC__VEC_AT(&ng->ops, sc__op, ng->ops.len++) = ops[i];
    const int64_t *bl = g->proc_backlog.data;
    for (size_t i = 0; i < g->proc_backlog.len; i++)
        if (!SC__VEC_APPEND(&ng->proc_backlog, &bl[i])) return false;
    const sc__task_bytes *lb = g->loose_bytes.data;
    const uint32_t *origin = w->origin.data;
    for (size_t i = 0; i < g->loose_bytes.len; i++) {
        sc__task_bytes b = lb[i];
        if ((b.task = w->newidx[lb[i].task]) != SC__NONE && !SC__VEC_APPEND(&ng->loose_bytes, &b)) return false;
    }
    for (size_t i = 0; i < ng->tasks.len && g->loose_bytes.len; i++) {
        if (!w->copy_of[i]) continue;
        int64_t bytes = sc__graph_task_bytes(g, origin[i]);
        sc__task_bytes b = {bytes, (uint32_t)i, 0};
        if (sc__graph_tasks(g)[origin[i]].group == SC__NONE && bytes >= 0 && !SC__VEC_APPEND(&ng->loose_bytes, &b))
            return false;
    }
    sc__sort(ng->loose_bytes.data, ng->loose_bytes.len, sizeof(sc__task_bytes), cmp_loose, NULL);
    for (size_t i = 0; i < g->warnings.count; i++)
        if (!sc__warnings_add(&ng->warnings, "%s", g->warnings.items[i])) return false;
    ng->budget = g->budget;
    ng->finish_threads = g->finish_threads;
    return true;
}

static void rw_free(rw *w) {
    free(w->off);
    free(w->order);
    free(w->slot);
    free(w->ref);
    free(w->ref_off);
    free(w->newidx);
    free(w->tl);
    free(w->tl_off);
    free(w->tpos);
    free(w->copybase);
    free(w->tmpl_last);
    free(w->copy_of);
}

sc_status sc__rewrite_repeat(const sc__graph *g, const sc__rewrite_spec *spec, sc__graph **out, uint32_t **origin,
                             sc_error *err) {
    *out = NULL;
    *origin = NULL;
    if (!spec->n || !spec->want)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "a rewrite needs at least one instance to keep");
    rw w = {.g = g, .sp = spec, .T = spec->n - 1, .R = spec->want >= spec->n ? spec->n - 1 : spec->want - 1,
            .k = spec->want > spec->n ? spec->want - spec->n : 0};
    sc__vec_init(&w.origin, sizeof(uint32_t));
    sc_status st = SC_OK;
    if (!(w.ng = sc__graph_new()) || !index_instances(&w) || !index_template(&w) || !tasks(&w) || !rest(&w))
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory rewriting the graph");
    if (st == SC_OK) renumber(&w);
    if (st == SC_OK && !edges(&w)) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory rewriting the graph");
    if (st == SC_OK) st = groups(&w, err);
    if (st == SC_OK) st = sc__graph_finish(w.ng, true, err);
    rw_free(&w);
    if (st != SC_OK) {
        sc__graph_free(w.ng);
        sc__vec_free(&w.origin);
        return st;
    }
    *out = w.ng;
    *origin = w.origin.data;
    return SC_OK;
}
