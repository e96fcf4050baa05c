/*
 * pp_rewrite.c - a traced iteration laid out as a pipeline of stages
 * (pp_rewrite.h says what is copied where).
 *
 * Every traced rank's tasks are bucketed once by (segment, layer) in
 * processor order; then each new rank appends, unit by unit of its
 * stage's schedule, the buckets of the unit, numbering each processor's
 * tasks as they come. An old task's copy within the current unit is found
 * through a per-task stamp and map, so edges and syncs inside a unit copy
 * are found in time linear in the unit. Groups are re-formed at the end
 * from (old group, stage and unit) keys; the send/recv pairs from per
 * (rank, block, micro-batch) tables.
 */
#include "pp_rewrite.h"

#include "../sim/sim.h"

#include <stdlib.h>

typedef struct pw {
    const sc__graph *g;
    const sc__pp_spec *sp;
    sc__graph *ng;
    uint32_t R, L, nkey, NB, lb; /* traced ranks, layers, bucket keys per rank, blocks, layers per block */
    uint32_t *boff, *bucket;     /* per (rank, key): tasks in processor order */
    uint32_t *rproc_off, *rprocs;/* per rank: its processors */
    uint32_t *procmap;           /* old processor -> new, for the rank being copied */
    uint32_t *seqc;              /* per new processor: next seq */
    uint32_t *map, *stamp, cur;  /* per old task: its copy in the current unit */
    uint32_t *pstamp;            /* per new processor: the unit whose first GPU task was seen */
    uint32_t recv_proc, send_proc;
    sc__vec origin, inst;        /* uint32 per new task */
    uint32_t *fsend, *frecv, *bsend, *brecv; /* per (rank, block, micro): the pair's tasks */
    uint32_t pp_name_send, pp_name_recv, pp_comm;
} pw;

uint32_t sc__pp_seg_key(uint8_t seg, uint32_t layer, uint32_t L, bool bwd_down) {
    uint32_t k = layer < L ? layer : 0;
    switch (seg) {
    case SC__SEG_HEAD: return 0;
    case SC__SEG_PRE: return 1;
    case SC__SEG_FWD: return 2 + k;
    case SC__SEG_FMID: return 2 + L;
    case SC__SEG_BMID: return 3 + L;
    case SC__SEG_BWD: return 4 + L + (bwd_down ? L - 1 - k : k);
    case SC__SEG_POST: return 4 + 2 * L;
    default: return 5 + 2 * L;
    }
}

/* A task's bucket: backward layers by layer, as the schedule's units ask. */
static uint32_t key_of(const pw *w, uint8_t seg, uint32_t layer) { return sc__pp_seg_key(seg, layer, w->L, false); }

static uint32_t rank_of(const sc__graph *g, uint32_t t) {
    return sc__graph_procs(g)[sc__graph_tasks(g)[t].proc].rank;
}

/* Buckets every task by (rank, key) in processor order; each rank's procs. */
static bool index_tasks(pw *w) {
    const sc__graph *g = w->g;
    size_t nt = g->tasks.len, nb = (size_t)w->R * w->nkey;
    uint32_t *off = NULL, *order = NULL;
    w->boff = calloc(nb + 1, sizeof *w->boff);
    w->bucket = sc__alloc_array(nt + 1, sizeof *w->bucket);
    w->rproc_off = calloc(w->R + 1, sizeof *w->rproc_off);
    w->rprocs = sc__alloc_array(g->procs.len + 1, sizeof *w->rprocs);
    uint32_t *fill = calloc(nb + 1, sizeof *fill);
    bool ok = w->boff && w->bucket && w->rproc_off && w->rprocs && fill && sc__proc_order(g, &off, &order);
    for (uint32_t t = 0; ok && t < nt; t++)
        w->boff[(size_t)rank_of(g, t) * w->nkey + key_of(w, w->sp->seg[t], w->sp->layer[t]) + 1]++;
    for (size_t i = 0; ok && i < nb; i++) w->boff[i + 1] += w->boff[i];
    for (size_t p = 0; ok && p < g->procs.len; p++)
        for (uint32_t j = off[p]; j < off[p + 1]; j++) {
            uint32_t t = order[j];
            size_t k = (size_t)rank_of(g, t) * w->nkey + key_of(w, w->sp->seg[t], w->sp->layer[t]);
            w->bucket[w->boff[k] + fill[k]++] = t;
        }
    const sc__proc *pr = g->procs.data;
    for (size_t p = 0; ok && p < g->procs.len; p++) w->rproc_off[pr[p].rank + 1]++;
    for (uint32_t r = 0; ok && r < w->R; r++) w->rproc_off[r + 1] += w->rproc_off[r];
    memset(fill, 0, (nb + 1) * sizeof *fill);
    for (size_t p = 0; ok && p < g->procs.len; p++)
        w->rprocs[w->rproc_off[pr[p].rank] + fill[pr[p].rank]++] = (uint32_t)p;
    free(fill);
    free(off);
    free(order);
    return ok;
}

static bool push(pw *w, const sc__task *t, uint32_t origin, uint32_t inst) {
    return SC__VEC_APPEND(&w->ng->tasks, t) && SC__VEC_APPEND(&w->origin, &origin) && SC__VEC_APPEND(&w->inst, &inst);
}

/* A send or recv task on proc; its index, SC__NONE on out-of-memory. */
static uint32_t p2p_task(pw *w, uint32_t proc, bool send, uint32_t inst) {
    sc__task t = {.dur = w->sp->p2p_ns, .proc = proc, .seq = w->seqc[proc]++,
                  .name = send ? w->pp_name_send : w->pp_name_recv, .op = SC__NONE, .group = SC__NONE,
                  .event = SC__NONE, .sync_arg = SC__NONE, .kind = send ? SC_T_SEND : SC_T_RECV};
    uint32_t id = (uint32_t)w->ng->tasks.len;
    return push(w, &t, SC__NONE, inst) ? id : SC__NONE;
}

/* Copies rank r's buckets keys[0 .. n) as one unit; with recv / send
 * (SC__NONE: none wanted; else set to the new task) around it. */
static bool copy_unit(pw *w, uint32_t r, const uint32_t *keys, size_t n, uint32_t inst, bool tail, uint32_t *recv,
                      uint32_t *send) {
    const sc__graph *g = w->g;
    const sc__task *old = sc__graph_tasks(g);
    w->cur++;
    if (recv && (*recv = p2p_task(w, w->recv_proc, false, inst)) == SC__NONE) return false;
    uint32_t first = (uint32_t)w->ng->tasks.len;
    for (size_t k = 0; k < n; k++) {
        const uint32_t *b = w->bucket + w->boff[(size_t)r * w->nkey + keys[k]];
        const uint32_t *e = w->bucket + w->boff[(size_t)r * w->nkey + keys[k] + 1];
        for (; b < e; b++) {
            sc__task t = old[*b];
            t.proc = w->procmap[t.proc];
            t.seq = w->seqc[t.proc]++;
            t.event = SC__NONE;
            t.group = SC__NONE;
            if (t.sync == SC_SYNC_STREAM && t.sync_arg < g->procs.len) t.sync_arg = w->procmap[t.sync_arg];
            if (tail && sc__task_on_gpu(t.kind) && !sc__task_is_comm(t.kind))
                t.dur = (int64_t)((double)t.dur * w->sp->tail_scale + 0.5);
            w->map[*b] = (uint32_t)w->ng->tasks.len;
            w->stamp[*b] = w->cur;
            if (!push(w, &t, *b, inst)) return false;
        }
    }
    uint32_t end = (uint32_t)w->ng->tasks.len;
    sc__task *nt = sc__graph_tasks(w->ng);
    for (uint32_t i = first; i < end; i++) {
        uint32_t o = ((const uint32_t *)w->origin.data)[i];
        if (nt[i].sync == SC_SYNC_TASK)
            nt[i].sync_arg = nt[i].sync_arg < g->tasks.len && w->stamp[nt[i].sync_arg] == w->cur
                                 ? w->map[nt[i].sync_arg]
                                 : (nt[i].sync = SC_SYNC_NONE, SC__NONE);
        for (uint32_t e = g->succ_off[o]; e < g->succ_off[o + 1]; e++)
            if (w->stamp[g->succ[e]] == w->cur &&
                !sc__graph_add_edge(w->ng, i, w->map[g->succ[e]], (sc__edge_family)g->succ_family[e]))
                return false;
    }
    /* the recv before each stream's first GPU task of the unit, the send
     * after each stream's last */
    for (uint32_t i = first; recv && i < end; i++)
        if (sc__task_on_gpu(nt[i].kind) && w->pstamp[nt[i].proc] != w->cur) {
            w->pstamp[nt[i].proc] = w->cur;
            if (!sc__graph_add_edge(w->ng, *recv, i, SC_E_DATA)) return false;
        }
    if (!send) return true;
    if ((*send = p2p_task(w, w->send_proc, true, inst)) == SC__NONE) return false;
    nt = sc__graph_tasks(w->ng);
    w->cur++;
    for (uint32_t i = end; i-- > first;)
        if (sc__task_on_gpu(nt[i].kind) && w->pstamp[nt[i].proc] != w->cur) {
            w->pstamp[nt[i].proc] = w->cur;
            if (!sc__graph_add_edge(w->ng, i, *send, SC_E_DATA)) return false;
        }
    return true;
}

/* The bucket keys of a unit of block b. */
static size_t unit_keys(const pw *w, uint32_t b, bool backward, uint32_t *keys) {
    size_t n = 0;
    uint32_t lo = b * w->lb, hi = lo + w->lb;
    if (!backward) {
        if (b == 0) keys[n++] = key_of(w, SC__SEG_PRE, 0);
        for (uint32_t k = lo; k < hi; k++) keys[n++] = key_of(w, SC__SEG_FWD, k);
        if (b == w->NB - 1) keys[n++] = key_of(w, SC__SEG_FMID, 0);
    } else {
        if (b == w->NB - 1) keys[n++] = key_of(w, SC__SEG_BMID, 0);
        for (uint32_t k = hi; k-- > lo;) keys[n++] = key_of(w, SC__SEG_BWD, k);
        if (b == 0) keys[n++] = key_of(w, SC__SEG_POST, 0);
    }
    return n;
}

static size_t pidx(const pw *w, uint32_t r, uint32_t b, uint32_t m) {
    return ((size_t)r * w->NB + b) * w->sp->micro + m;
}

/* Traced rank r as stage s: its rank, processors, and every unit. */
static bool copy_rank(pw *w, uint32_t s, uint32_t r, const sc__pp_unit *units, size_t nu, uint32_t *keys) {
    const sc__graph *g = w->g;
    const sc__rank *ork = &((const sc__rank *)g->ranks.data)[r];
    uint32_t nr = (uint32_t)w->ng->ranks.len, first = (uint32_t)w->ng->tasks.len;
    const int64_t *bl = g->proc_backlog.data;
    int16_t device = -1;
    for (uint32_t j = w->rproc_off[r]; j < w->rproc_off[r + 1]; j++) {
        const sc__proc *p = &sc__graph_procs(g)[w->rprocs[j]];
        w->procmap[w->rprocs[j]] = sc__graph_add_proc(w->ng, nr, (sc__proc_kind)p->kind, p->device, p->id);
        if (w->procmap[w->rprocs[j]] == SC__NONE) return false;
        sc__graph_procs(w->ng)[w->procmap[w->rprocs[j]]].quiet = p->quiet;
        if (p->kind == SC_P_STREAM && device < 0) device = p->device;
        int64_t b = g->proc_backlog.len ? bl[w->rprocs[j]] : 0;
        if (g->proc_backlog.len && !SC__VEC_APPEND(&w->ng->proc_backlog, &b)) return false;
    }
    w->recv_proc = sc__graph_add_proc(w->ng, nr, SC_P_STREAM, device < 0 ? 0 : device, INT64_MAX - 1);
    w->send_proc = sc__graph_add_proc(w->ng, nr, SC_P_STREAM, device < 0 ? 0 : device, INT64_MAX);
    int64_t zero = 0;
    if (w->recv_proc == SC__NONE || w->send_proc == SC__NONE) return false;
    if (g->proc_backlog.len &&
        (!SC__VEC_APPEND(&w->ng->proc_backlog, &zero) || !SC__VEC_APPEND(&w->ng->proc_backlog, &zero)))
        return false;
    uint32_t base = s * (uint32_t)(nu + 2), stamp0 = w->cur + 1;
    uint32_t k = key_of(w, SC__SEG_HEAD, 0);
    if (!copy_unit(w, r, &k, 1, base, false, NULL, NULL)) return false;
    for (size_t u = 0; u < nu; u++) {
        uint32_t b = units[u].chunk * w->sp->stages + s, m = units[u].micro;
        bool bw = units[u].backward;
        size_t n = unit_keys(w, b, bw, keys);
        bool rv = bw ? b + 1 < w->NB : b > 0, sd = bw ? b > 0 : b + 1 < w->NB;
        uint32_t *recv = rv ? &(bw ? w->brecv : w->frecv)[pidx(w, r, b, m)] : NULL;
        uint32_t *send = sd ? &(bw ? w->bsend : w->fsend)[pidx(w, r, b, m)] : NULL;
        if (!copy_unit(w, r, keys, n, base + 1 + (uint32_t)u, false, recv, send)) return false;
    }
    k = key_of(w, SC__SEG_TAIL, 0);
    if (!copy_unit(w, r, &k, 1, base + (uint32_t)nu + 1, true, NULL, NULL)) return false;
    sc__rank rk = *ork;
    rk.rank = ork->rank + (int64_t)s * w->R;
    rk.first_task = first;
    rk.ntasks = (uint32_t)w->ng->tasks.len - first;
    bool f = rk.step_first_task != SC__NONE && w->stamp[rk.step_first_task] >= stamp0;
    rk.step_first_task = f ? w->map[rk.step_first_task] : first;
    bool l = rk.step_last_task != SC__NONE && w->stamp[rk.step_last_task] >= stamp0;
    rk.step_last_task = l ? w->map[rk.step_last_task] : SC__NONE;
    return SC__VEC_APPEND(&w->ng->ranks, &rk);
}

typedef struct gkey {
    uint32_t group, inst, task;
} gkey;

static int cmp_gkey(const void *a, const void *b, void *ctx) {
    (void)ctx;
    const gkey *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->inst != y->inst) return x->inst < y->inst ? -1 : 1;
    return x->task < y->task ? -1 : x->task > y->task;
}

/* The copied collectives, one per (old group, stage and unit). */
static bool copy_groups(pw *w) {
    const sc__task *old = sc__graph_tasks(w->g);
    const uint32_t *origin = w->origin.data, *inst = w->inst.data;
    size_t n = 0, nt = w->ng->tasks.len;
    for (size_t i = 0; i < nt; i++) n += origin[i] != SC__NONE && old[origin[i]].group != SC__NONE;
    gkey *k = sc__alloc_array(n + 1, sizeof *k);
    uint32_t *m = sc__alloc_array(n + 1, sizeof *m);
    bool ok = k && m;
    n = 0;
    for (size_t i = 0; ok && i < nt; i++)
        if (origin[i] != SC__NONE && old[origin[i]].group != SC__NONE)
            k[n++] = (gkey){old[origin[i]].group, inst[i], (uint32_t)i};
    if (ok) sc__sort(k, n, sizeof *k, cmp_gkey, NULL);
    const sc__group *og = w->g->groups.data;
    for (size_t a = 0, b; ok && a < n; a = b) {
        for (b = a; b < n && k[b].group == k[a].group && k[b].inst == k[a].inst; b++) m[b - a] = k[b].task;
        const sc__group *o = &og[k[a].group];
        uint32_t id = sc__graph_add_group(w->ng, (sc__coll_type)o->type, o->bytes, m, (uint32_t)(b - a));
        ok = id != SC__NONE;
        if (!ok) break;
        sc__group *gr = &SC__VEC_AT(&w->ng->groups, sc__group, id);
        gr->transfer_ns = o->transfer_ns;
        gr->comm = o->comm;
        gr->comm_ranks = o->comm_ranks;
    }
    free(k);
    free(m);
    return ok;
}

/* The send/recv pairs between consecutive blocks. */
static bool pair_p2p(pw *w) {
    for (uint32_t r = 0; r < w->R; r++)
        for (uint32_t b = 0; b + 1 < w->NB; b++)
            for (uint32_t m = 0; m < w->sp->micro; m++) {
                uint32_t f[2] = {w->fsend[pidx(w, r, b, m)], w->frecv[pidx(w, r, b + 1, m)]};
                uint32_t k[2] = {w->bsend[pidx(w, r, b + 1, m)], w->brecv[pidx(w, r, b, m)]};
                for (int x = 0; x < 2; x++) {
                    const uint32_t *pair = x ? k : f;
                    if (pair[0] == SC__NONE || pair[1] == SC__NONE) continue;
                    uint32_t id = sc__graph_add_group(w->ng, SC_C_SEND_RECV, w->sp->p2p_bytes, pair, 2);
                    if (id == SC__NONE) return false;
                    sc__group *gr = &SC__VEC_AT(&w->ng->groups, sc__group, id);
                    gr->transfer_ns = w->sp->p2p_ns;
                    gr->comm = w->pp_comm;
                }
            }
    return true;
}

static sc_status check(const sc__graph *g, const sc__pp_spec *sp, sc_error *err) {
    const char *why = sc__pp_check(sp->kind, sp->stages, sp->micro, sp->chunks);
    if (why) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "--pp: %s", why);
    uint64_t blocks = (uint64_t)sp->stages * sp->chunks;
    if (!sp->layers || sp->layers % blocks)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--pp %u%s: the %u layers do not split evenly into %llu stage%s (uneven stages are not "
                        "supported)",
                        sp->stages, sp->chunks > 1 ? " with virtual stages" : "", sp->layers,
                        (unsigned long long)blocks, blocks == 1 ? "" : "s");
    uint64_t copies = (uint64_t)g->tasks.len * sp->micro * sp->stages;
    if (copies > (uint64_t)SC__NONE / 2)
        return sc__fail(err, SC_E_LIMIT, NULL, SC_NO_OFFSET, "--pp: %llu tasks would not fit one graph",
                        (unsigned long long)copies);
    return SC_OK;
}

static bool strings(pw *w) {
    const sc__graph *g = w->g;
    for (uint32_t i = 0; i < g->strings.count; i++)
        if (sc__intern_put(&w->ng->strings, g->strings.strs[i], g->strings.lens[i]) != i) return false;
    static const char s[] = "pipeline send (modelled)", r[] = "pipeline recv (modelled)", c[] = "pipeline";
    w->pp_name_send = sc__intern_put(&w->ng->strings, s, sizeof s - 1);
    w->pp_name_recv = sc__intern_put(&w->ng->strings, r, sizeof r - 1);
    w->pp_comm = sc__intern_put(&w->ng->strings, c, sizeof c - 1);
    const sc__op *ops = g->ops.data;
    for (size_t i = 0; i < g->ops.len; i++)
        if (!SC__VEC_APPEND(&w->ng->ops, &ops[i])) return false;
    for (size_t i = 0; i < g->warnings.count; i++)
        if (!sc__warnings_add(&w->ng->warnings, "%s", g->warnings.items[i])) return false;
    w->ng->budget = g->budget;
    w->ng->finish_threads = g->finish_threads;
    return w->pp_name_send != SC__NONE && w->pp_name_recv != SC__NONE && w->pp_comm != SC__NONE;
}

static bool setup(pw *w) {
    const sc__graph *g = w->g;
    size_t nt = g->tasks.len + 1, np = (g->procs.len + 2 * (size_t)w->R) * w->sp->stages + 1;
    size_t npp = (size_t)w->R * w->NB * w->sp->micro + 1;
    w->procmap = sc__alloc_array(g->procs.len + 1, sizeof *w->procmap);
    w->seqc = calloc(np, sizeof *w->seqc);
    w->pstamp = calloc(np, sizeof *w->pstamp);
    w->map = sc__alloc_array(nt, sizeof *w->map);
    w->stamp = calloc(nt, sizeof *w->stamp);
    uint32_t **p2p[] = {&w->fsend, &w->frecv, &w->bsend, &w->brecv};
    bool ok = w->procmap && w->seqc && w->pstamp && w->map && w->stamp;
    for (int i = 0; ok && i < 4; i++) {
        *p2p[i] = sc__alloc_array(npp, sizeof **p2p[i]);
        ok = *p2p[i] != NULL;
        for (size_t j = 0; ok && j < npp; j++) (*p2p[i])[j] = SC__NONE;
    }
    return ok && (w->ng = sc__graph_new()) && strings(w) && index_tasks(w);
}

static void pw_free(pw *w) {
    void *p[] = {w->boff, w->bucket, w->rproc_off, w->rprocs, w->procmap, w->seqc, w->map, w->stamp,
                 w->pstamp, w->fsend, w->frecv, w->bsend, w->brecv};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) free(p[i]);
    sc__vec_free(&w->inst);
}

sc_status sc__pp_rewrite(const sc__graph *g, const sc__pp_spec *sp, sc__graph **out, uint32_t **origin,
                         sc_error *err) {
    *out = NULL;
    *origin = NULL;
    sc_status st = check(g, sp, err);
    if (st != SC_OK) return st;
    pw w = {.g = g, .sp = sp, .R = (uint32_t)g->ranks.len, .L = sp->layers, .nkey = 6 + 2 * sp->layers,
            .NB = sp->stages * sp->chunks, .lb = sp->layers / (sp->stages * sp->chunks)};
    sc__vec_init(&w.origin, sizeof(uint32_t));
    sc__vec_init(&w.inst, sizeof(uint32_t));
    size_t nu = (size_t)2 * sp->micro * sp->chunks;
    sc__pp_unit *units = sc__alloc_array(nu, sizeof *units);
    uint32_t *keys = sc__alloc_array(w.lb + 2, sizeof *keys);
    bool ok = units && keys && setup(&w);
    for (uint32_t s = 0; ok && s < sp->stages; s++) {
        size_t n = sc__pp_schedule(sp->kind, sp->stages, sp->micro, sp->chunks, s, units);
        for (uint32_t r = 0; ok && r < w.R; r++) ok = copy_rank(&w, s, r, units, n, keys);
    }
    ok = ok && copy_groups(&w) && pair_p2p(&w);
    free(units);
    free(keys);
    if (!ok) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory laying out the pipeline");
    if (st == SC_OK) st = sc__graph_finish(w.ng, true, err);
    pw_free(&w);
    if (st != SC_OK) {
        sc__graph_free(w.ng);
        sc__vec_free(&w.origin);
        return st;
    }
    *out = w.ng;
    *origin = w.origin.data;
    return SC_OK;
}
