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
    uint32_t n, R, k;       /* instances, the last kept one (shrinking), copies */
    uint32_t *off, *order;  /* old processor order */
    uint32_t *it, *it_off;  /* instance tasks by (instance, part), each by (processor, seq) */
    uint32_t *slot;         /* per old task: place among its instance's tasks of its part on its processor */
    uint32_t *rl_off;       /* per (rank, instance): where its tasks start among the rank's copies */
    uint32_t *rpos;         /* per old instance task: place among its (rank, instance) tasks */
    uint32_t *rank_last;    /* per rank: its highest-index instance task, SC__NONE */
    int64_t *region_last;   /* per rank: latest measured start of an instance task */
    uint32_t *newidx;       /* old -> new, SC__NONE when removed */
    uint32_t *copybase;     /* per rank: new index of its first copy */
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
static uint32_t inst_of(const rw *w, uint32_t t) {
    uint32_t x = w->sp->inst[t];
    return x < w->n ? x : SC__NONE;
}
/* The instance copy c (1 ..) copies. */
static uint32_t tmpl(const rw *w, uint32_t c) { return (c - 1) % w->n; }
static bool removed(const rw *w, uint32_t t) { return inst_of(w, t) != SC__NONE && inst_of(w, t) >= w->sp->want; }

/* Copy c of task t (t in instance tmpl(c)). */
static uint32_t cidx(const rw *w, uint32_t t, uint32_t c) {
    uint32_t r = rank_of(w, t), x = tmpl(w, c);
    const uint32_t *o = w->rl_off + (size_t)r * (w->n + 1);
    return w->copybase[r] + ((c - 1) / w->n) * o[w->n] + o[x] + w->rpos[t];
}

/* The tasks of instance x with t's processor and part: [*a, *b) of it. */
static void range_of(const rw *w, uint32_t x, uint32_t proc, uint32_t part, uint32_t *a, uint32_t *b) {
    const sc__task *tk = sc__graph_tasks(w->g);
    uint32_t lo = w->it_off[x * NP + part], hi = w->it_off[x * NP + part + 1], l = lo, h = hi;
    while (l < h) { /* first with processor >= proc */
        uint32_t m = l + (h - l) / 2;
        if (tk[w->it[m]].proc < proc) l = m + 1;
        else h = m;
    }
    *a = l;
    for (h = hi; l < h;) { /* first with processor > proc */
        uint32_t m = l + (h - l) / 2;
        if (tk[w->it[m]].proc <= proc) l = m + 1;
        else h = m;
    }
    *b = l;
}

/* The task of instance x that matches t (same processor, part and place,
 * the last when x has fewer there), SC__NONE when x has none there. */
static uint32_t corr(const rw *w, uint32_t t, uint32_t x) {
    uint32_t a, b;
    range_of(w, x, sc__graph_tasks(w->g)[t].proc, part_of(w, t), &a, &b);
    if (a == b) return SC__NONE;
    return w->it[a + (w->slot[t] < b - a ? w->slot[t] : b - a - 1)];
}

/* Where an edge from old task t starts in the new graph. */
static uint32_t src_map(const rw *w, uint32_t t) {
    if (w->newidx[t] != SC__NONE) return w->newidx[t];
    uint32_t c = corr(w, t, w->R);
    return c != SC__NONE ? w->newidx[c] : SC__NONE;
}

/* The instance whose tasks end the region of t's part on t's processor
 * (the chain's link before the first copy), SC__NONE when none. */
static uint32_t region_end(const rw *w, uint32_t t) {
    const sc__task *tk = sc__graph_tasks(w->g);
    uint32_t best = SC__NONE, proc = tk[t].proc, part = part_of(w, t);
    for (uint32_t x = 0; x < w->n; x++) {
        uint32_t a, b;
        range_of(w, x, proc, part, &a, &b);
        if (a < b && (best == SC__NONE || tk[w->it[b - 1]].seq > tk[best].seq)) best = w->it[b - 1];
    }
    return best == SC__NONE ? SC__NONE : inst_of(w, best);
}

/* it (by instance, part, processor, seq) and each task's slot; per rank,
 * its instance tasks' places (rl_off, rpos), last task and region ends. */
static bool index_instances(rw *w) {
    const sc__graph *g = w->g;
    const sc__task *tk = sc__graph_tasks(g);
    size_t nt = g->tasks.len, nr = g->ranks.len, nb = (size_t)w->n * NP;
    w->it_off = calloc(nb + 1, sizeof *w->it_off);
    w->slot = sc__alloc_array(nt ? nt : 1, sizeof *w->slot);
    w->rpos = sc__alloc_array(nt ? nt : 1, sizeof *w->rpos);
    w->rl_off = calloc(nr * (w->n + 1) + 1, sizeof *w->rl_off);
    w->rank_last = sc__alloc_array(nr + 1, sizeof *w->rank_last);
    w->region_last = sc__alloc_array(nr + 1, sizeof *w->region_last);
    w->copybase = calloc(nr + 1, sizeof *w->copybase);
    uint32_t *fill = calloc(nb + 1, sizeof *fill);
    bool ok = w->it_off && w->slot && w->rpos && w->rl_off && w->rank_last && w->region_last && w->copybase && fill &&
              sc__proc_order(g, &w->off, &w->order);
    size_t nin = 0;
    for (uint32_t t = 0; ok && t < nt; t++)
        if (inst_of(w, t) != SC__NONE) w->it_off[inst_of(w, t) * NP + part_of(w, t) + 1]++, nin++;
    for (size_t i = 0; ok && i < nb; i++) w->it_off[i + 1] += w->it_off[i];
    if (ok && !(w->it = sc__alloc_array(nin + 1, sizeof *w->it))) ok = false;
    for (size_t p = 0; ok && p < g->procs.len; p++)
        for (uint32_t j = w->off[p]; j < w->off[p + 1]; j++) {
            uint32_t t = w->order[j], x = inst_of(w, t);
            if (x == SC__NONE) continue;
            uint32_t key = x * NP + part_of(w, t);
            w->it[w->it_off[key] + fill[key]++] = t;
        }
    /* slots: place within each (instance, part, processor) run of it */
    for (size_t i = 0; ok && i < nin; i++) {
        uint32_t t = w->it[i], prev = i ? w->it[i - 1] : SC__NONE;
        bool same = prev != SC__NONE && inst_of(w, prev) == inst_of(w, t) && part_of(w, prev) == part_of(w, t) &&
                    tk[prev].proc == tk[t].proc;
        w->slot[t] = same ? w->slot[prev] + 1 : 0;
    }
    for (size_t r = 0; ok && r < nr; r++) w->rank_last[r] = SC__NONE;
    for (size_t i = 0; ok && i < nr; i++) w->region_last[i] = INT64_MIN;
    for (uint32_t t = 0; ok && t < nt; t++) {
        uint32_t x = inst_of(w, t), r = rank_of(w, t);
        if (x == SC__NONE) continue;
        w->rpos[t] = w->rl_off[(size_t)r * (w->n + 1) + x + 1]++;
        w->rank_last[r] = t;
        if (tk[t].ts > w->region_last[r]) w->region_last[r] = tk[t].ts;
    }
    for (size_t r = 0; ok && r < nr; r++) { /* counts -> starts; o[n] = the rank's instance tasks */
        uint32_t *o = w->rl_off + r * (w->n + 1);
        for (uint32_t x = 0; x < w->n; x++) o[x + 1] += o[x];
    }
    free(fill);
    return ok;
}

/* Appends a task (room was reserved: no reallocation, no failure). */
static void push(rw *w, const sc__task *t, uint32_t origin, uint32_t copy) {
    w->copy_of[w->ng->tasks.len] = copy;
    SC__VEC_AT(&w->origin, uint32_t, w->origin.len++) = origin;
    SC__VEC_AT(&w->ng->tasks, sc__task, w->ng->tasks.len++) = *t;
}

/* The new tasks, in the old index order, each rank's copies after its last
 * instance task; then their sync targets. */
static bool tasks(rw *w) {
    const sc__graph *g = w->g;
    const sc__task *old = sc__graph_tasks(g);
    size_t nt = g->tasks.len, nr = g->ranks.len, total = nt;
    for (size_t r = 0; r < nr; r++) {
        const uint32_t *o = w->rl_off + r * (w->n + 1);
        total += (size_t)(w->k / w->n) * o[w->n] + o[w->k % w->n];
    }
    if (total >= SC__NONE - 1) return false;
    if (!(w->newidx = sc__alloc_array(nt ? nt : 1, sizeof *w->newidx)) ||
        !(w->copy_of = calloc(total + 1, sizeof *w->copy_of)) || !sc__vec_reserve(&w->ng->tasks, total + 1) ||
        !sc__vec_reserve(&w->origin, total + 1))
        return false;
    uint32_t *list = sc__alloc_array(nt ? nt : 1, sizeof *list); /* a rank's instance tasks by (instance, index) */
    if (!list) return false;
    for (uint32_t i = 0; i < nt; i++) {
        w->newidx[i] = removed(w, i) ? SC__NONE : (uint32_t)w->ng->tasks.len;
        if (w->newidx[i] != SC__NONE) push(w, &old[i], i, 0);
        uint32_t r = rank_of(w, i);
        if (!w->k || w->rank_last[r] != i) continue;
        const sc__rank *rk = &((const sc__rank *)g->ranks.data)[r];
        const uint32_t *o = w->rl_off + (size_t)r * (w->n + 1);
        for (uint32_t t = rk->first_task; t < rk->first_task + rk->ntasks; t++)
            if (inst_of(w, t) != SC__NONE) list[o[inst_of(w, t)] + w->rpos[t]] = t;
        w->copybase[r] = (uint32_t)w->ng->tasks.len;
        for (uint32_t c = 1; c <= w->k; c++)
            for (uint32_t j = o[tmpl(w, c)]; j < o[tmpl(w, c) + 1]; j++) {
                sc__task t = old[list[j]];
                t.event = SC__NONE;
                push(w, &t, list[j], c);
            }
    }
    free(list);
    sc__task *nt2 = sc__graph_tasks(w->ng);
    for (size_t i = 0; i < w->ng->tasks.len; i++) {
        nt2[i].group = SC__NONE;
        if (nt2[i].sync != SC_SYNC_TASK || nt2[i].sync_arg >= nt) continue;
        uint32_t target = nt2[i].sync_arg, c = w->copy_of[i];
        bool inside = c && inst_of(w, target) == tmpl(w, c);
        nt2[i].sync_arg = inside ? cidx(w, target, c) : src_map(w, target);
        if (nt2[i].sync_arg == SC__NONE) nt2[i].sync = SC_SYNC_NONE;
    }
    return true;
}

/* seq: each processor's kept tasks in order, the copies of each part after
 * the last instance task of that part there. */
static void renumber(rw *w) {
    const sc__graph *g = w->g;
    sc__task *nt = sc__graph_tasks(w->ng);
    const sc__task *tk = sc__graph_tasks(g);
    for (size_t p = 0; p < g->procs.len; p++) {
        uint32_t seq = 0, last[NP];
        for (int q = 0; q < NP; q++) last[q] = SC__NONE;
        for (uint32_t j = w->off[p]; j < w->off[p + 1]; j++)
            if (inst_of(w, w->order[j]) != SC__NONE) last[part_of(w, w->order[j])] = w->order[j];
        for (uint32_t j = w->off[p]; j < w->off[p + 1]; j++) {
            uint32_t t = w->order[j];
            if (w->newidx[t] != SC__NONE) nt[w->newidx[t]].seq = seq++;
            if (!w->k || inst_of(w, t) == SC__NONE || last[part_of(w, t)] != t) continue;
            for (uint32_t c = 1; c <= w->k; c++) {
                uint32_t a, b;
                range_of(w, tmpl(w, c), tk[t].proc, part_of(w, t), &a, &b);
                for (uint32_t i = a; i < b; i++) nt[cidx(w, w->it[i], c)].seq = seq++;
            }
        }
    }
}

/* Copy c's edges from old edge u -> v (family f), where u or v is in
 * instance tmpl(c). */
static bool copy_edge(rw *w, uint32_t u, uint32_t v, sc__edge_family f, uint32_t c) {
    uint32_t x = tmpl(w, c);
    bool ux = inst_of(w, u) == x, vx = inst_of(w, v) == x;
    if (ux && vx) return sc__graph_add_edge(w->ng, cidx(w, u, c), cidx(w, v, c), f);
    if (vx) {
        if (inst_of(w, u) == SC__NONE) return sc__graph_add_edge(w->ng, w->newidx[u], cidx(w, v, c), f);
        /* from the chain's previous link: copy c - 1, or the instance
         * that ends the region */
        uint32_t prev = c > 1 ? tmpl(w, c - 1) : region_end(w, u);
        uint32_t m = prev != SC__NONE ? corr(w, u, prev) : SC__NONE;
        if (m == SC__NONE) return true;
        return sc__graph_add_edge(w->ng, c > 1 ? cidx(w, m, c - 1) : w->newidx[m], cidx(w, v, c), f);
    }
    /* out of the copy: to what follows the region only */
    if (inst_of(w, v) != SC__NONE) return true;
    const sc__task *tk = sc__graph_tasks(w->g);
    if (tk[v].ts < w->region_last[rank_of(w, v)]) return true;
    return sc__graph_add_edge(w->ng, cidx(w, u, c), w->newidx[v], f);
}

static bool edges(rw *w) {
    const sc__graph *g = w->g;
    bool ok = true;
    for (uint32_t u = 0; ok && u < g->tasks.len; u++) {
        for (uint32_t e = g->succ_off[u]; ok && e < g->succ_off[u + 1]; e++) {
            uint32_t v = g->succ[e];
            sc__edge_family f = (sc__edge_family)g->succ_family[e];
            uint32_t s = src_map(w, u);
            /* A removed source that maps into the destination's own instance
             * would point backwards inside it: the order edges keep it. */
            bool moved = w->newidx[u] == SC__NONE && s != SC__NONE && inst_of(w, v) == w->R;
            if (w->newidx[v] != SC__NONE && s != SC__NONE && !moved) ok = sc__graph_add_edge(w->ng, s, w->newidx[v], f);
            /* the copies of u's and of v's instance */
            uint32_t xs[2] = {inst_of(w, u), inst_of(w, v)};
            for (int side = 0; ok && w->k && side < 2; side++) {
                if (xs[side] == SC__NONE || (side == 1 && xs[1] == xs[0])) continue;
                for (uint32_t c = xs[side] + 1; ok && c <= w->k; c += w->n) ok = copy_edge(w, u, v, f, c);
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
        const uint32_t *gm = mem + gr[i].first;
        uint32_t x = gr[i].count ? inst_of(w, gm[0]) : SC__NONE, gone = 0;
        bool mixed = false;
        for (uint32_t j = 0; j < gr[i].count; j++) {
            gone += removed(w, gm[j]);
            mixed |= inst_of(w, gm[j]) != x;
        }
        if (mixed) {
            st = sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                          "the collective %s (%u ranks) lies in a different layer on some ranks, or outside "
                          "the layers: the ranks' layers do not line up",
                          sc__graph_str(g, sc__graph_tasks(g)[gm[0]].name), gr[i].count);
            break;
        }
        if (gone) continue;
        for (uint32_t j = 0; j < gr[i].count; j++) m[j] = w->newidx[gm[j]];
        bool ok = add_group(w, &gr[i], m) != SC__NONE;
        for (uint32_t c = x + 1; ok && x != SC__NONE && c <= w->k; c += w->n) {
            for (uint32_t j = 0; j < gr[i].count; j++) m[j] = cidx(w, gm[j], c);
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
        const uint32_t *o = w->rl_off + r * (w->n + 1);
        uint32_t copies = (w->k / w->n) * o[w->n] + o[w->k % w->n];
        if (copies && w->copybase[r] + copies - 1 > hi) hi = w->copybase[r] + copies - 1;
        nr.first_task = lo == SC__NONE ? (uint32_t)ng->tasks.len : lo;
        nr.ntasks = lo == SC__NONE ? 0 : hi - lo + 1;
        if (nr.step_first_task != SC__NONE) nr.step_first_task = src_map(w, nr.step_first_task);
        if (nr.step_last_task != SC__NONE) nr.step_last_task = src_map(w, nr.step_last_task);
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
    free(w->it);
    free(w->it_off);
    free(w->slot);
    free(w->rl_off);
    free(w->rpos);
    free(w->rank_last);
    free(w->region_last);
    free(w->newidx);
    free(w->copybase);
    free(w->copy_of);
}

sc_status sc__rewrite_repeat(const sc__graph *g, const sc__rewrite_spec *spec, sc__graph **out, uint32_t **origin,
                             sc_error *err) {
    *out = NULL;
    *origin = NULL;
    if (!spec->n || !spec->want)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "a rewrite needs at least one instance to keep");
    rw w = {.g = g, .sp = spec, .n = spec->n, .R = spec->want >= spec->n ? spec->n - 1 : spec->want - 1,
            .k = spec->want > spec->n ? spec->want - spec->n : 0};
    sc__vec_init(&w.origin, sizeof(uint32_t));
    sc_status st = SC_OK;
    if (!(w.ng = sc__graph_new()) || !index_instances(&w) || !tasks(&w) || !rest(&w))
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
