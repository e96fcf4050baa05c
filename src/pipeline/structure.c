/*
 * structure.c - phases, layers and collective roles of a graph (see
 * structure.h), from the graph alone.
 *
 * Phases: an operator is backward under an autograd engine scope
 * ("autograd::engine::evaluate_function: ...") or a "...Backward" node,
 * optimizer under an "Optimizer.step" / "Optimizer.zero_grad" scope, else
 * forward; a CPU task takes its operator's phase, a GPU task its launch's.
 *
 * Layers: per rank and phase, the GPU tasks in launch order (the launching
 * thread's program order) as a string of kernel names. Candidate periods are the commonest distances
 * between two occurrences of one name; each candidate's longest run of
 * blocks that repeat name for name is scored by the GPU time it covers,
 * and the smallest period within 5% of the best wins (a period of two
 * layers covers as much as one). Fewer than two blocks, or a run that
 * covers under a quarter of the phase's GPU time, is no layer structure.
 * Linear in the tasks but for the sort: candidates are few.
 */
#include "structure.h"

#include "../sim/sim.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NCAND 16
#define NBACK 4 /* previous occurrences of a symbol measured from */
#define MIN_COVER 0.25

const char *sc__phase_name(int phase) {
    static const char *const names[] = {"none", "forward", "backward", "optimizer"};
    return phase >= 0 && phase < SC__PHASE_COUNT ? names[phase] : "none";
}

const char *sc__role_name(int role) {
    static const char *const names[] = {"other", "tensor_parallel", "sequence_parallel", "data_parallel",
                                        "pipeline"};
    return role >= 0 && role < SC__ROLE_COUNT ? names[role] : "other";
}

/* ------------------------------------------------------------ phases */

static bool ci_prefix(const char *s, const char *p) {
    for (; *p; s++, p++)
        if (!*s || (*s | 32) != (*p | 32)) return false;
    return true;
}

static int own_phase(const char *name) {
    if (sc__starts_with(name, "autograd::engine::evaluate_function")) return SC__PHASE_BACKWARD;
    size_t n = strlen(name);
    if (n > 9 && strstr(name, "Backward") && !strchr(name, ' ')) return SC__PHASE_BACKWARD;
    if (ci_prefix(name, "Optimizer.step") || ci_prefix(name, "Optimizer.zero_grad")) return SC__PHASE_OPTIMIZER;
    if (strstr(name, "optimizer.step") || strstr(name, "Optimizer#")) return SC__PHASE_OPTIMIZER;
    return SC__PHASE_NONE;
}

/* Phase of every operator: its own, else its parent's (parents come first),
 * forward at the top. */
static uint8_t *op_phases(const sc__graph *g) {
    const sc__op *ops = g->ops.data;
    uint8_t *ph = sc__alloc_array(g->ops.len ? g->ops.len : 1, 1);
    if (!ph) return NULL;
    for (size_t i = 0; i < g->ops.len; i++) {
        int own = own_phase(sc__graph_str(g, ops[i].name));
        uint32_t p = ops[i].parent;
        ph[i] = (uint8_t)(own ? own : p < i ? ph[p] : SC__PHASE_FORWARD);
    }
    return ph;
}

/* launcher[t]: the task whose LAUNCH edge enqueued GPU task t, SC__NONE. */
static uint32_t *launchers(const sc__graph *g) {
    size_t nt = g->tasks.len;
    uint32_t *l = sc__alloc_array(nt ? nt : 1, sizeof *l);
    if (!l) return NULL;
    for (size_t i = 0; i < nt; i++) l[i] = SC__NONE;
    for (size_t u = 0; u < nt; u++)
        for (uint32_t k = g->succ_off[u]; k < g->succ_off[u + 1]; k++)
            if (g->succ_family[k] == SC_E_LAUNCH && l[g->succ[k]] == SC__NONE) l[g->succ[k]] = (uint32_t)u;
    return l;
}

static void task_phases(const sc__graph *g, const uint8_t *oph, const uint32_t *launcher, uint8_t *out) {
    const sc__task *t = sc__graph_tasks(g);
    for (size_t i = 0; i < g->tasks.len; i++) {
        uint32_t src = sc__task_on_gpu(t[i].kind) && launcher[i] != SC__NONE ? launcher[i] : (uint32_t)i;
        uint32_t op = t[src].op != SC__NONE ? t[src].op : t[i].op;
        out[i] = (uint8_t)(op < g->ops.len ? oph[op] : SC__PHASE_NONE);
    }
}

/* ------------------------------------------------------------ periods */

typedef struct seq_ctx {
    const sc__task *tasks;
    const uint32_t *launcher;
} seq_ctx;

/* Launch order: the launching thread's program order (processor, then
 * seq), a GPU task without a launch by its own place; never measured time,
 * so a rewritten graph's copies (which keep their source's times) are in
 * their place. */
static int cmp_launch(const void *a, const void *b, void *ctx) {
    const seq_ctx *c = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t lx = c->launcher[x] != SC__NONE ? c->launcher[x] : x, ly = c->launcher[y] != SC__NONE ? c->launcher[y] : y;
    const sc__task *tx = &c->tasks[lx], *ty = &c->tasks[ly];
    if (tx->proc != ty->proc) return tx->proc < ty->proc ? -1 : 1;
    if (tx->seq != ty->seq) return tx->seq < ty->seq ? -1 : 1;
    return x < y ? -1 : x > y;
}

typedef struct run_pick {
    uint32_t start, period, count;
    int64_t time;
} run_pick;

/* The commonest distances (>= 2, <= n/2) between an occurrence of a
 * symbol and each of its NBACK previous ones (a block where every name
 * occurs twice, a forward re-run before its backward, repeats at the
 * distance to the second before); their count returned. */
static size_t candidates(const uint32_t *sym, uint32_t n, uint32_t nsym, uint32_t *cand) {
    uint32_t *last = malloc((size_t)(nsym ? nsym : 1) * NBACK * sizeof *last);
    uint32_t *hist = calloc((size_t)n / 2 + 1, sizeof *hist);
    size_t nc = 0;
    if (last && hist) {
        for (size_t s = 0; s < (size_t)nsym * NBACK; s++) last[s] = SC__NONE;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t *l = last + (size_t)(sym[i] < nsym ? sym[i] : 0) * NBACK;
            for (int k = 0; k < NBACK; k++)
                if (l[k] != SC__NONE && i - l[k] >= 2 && i - l[k] <= n / 2) hist[i - l[k]]++;
            memmove(l + 1, l, (NBACK - 1) * sizeof *l);
            l[0] = i;
        }
        for (; nc < NCAND; nc++) {
            uint32_t best = 0;
            for (uint32_t d = 2; d <= n / 2; d++)
                if (hist[d] > hist[best]) best = d;
            if (!hist[best]) break;
            cand[nc] = best;
            hist[best] = 0;
        }
    }
    free(last);
    free(hist);
    return nc;
}

/* Period p's best run: the longest stretch where sym[i] == sym[i + p], in
 * whole blocks, by GPU time covered (pre: prefix sums of durations). */
static run_pick best_for(const uint32_t *sym, const int64_t *pre, uint32_t n, uint32_t p) {
    run_pick best = {0};
    for (uint32_t i = 0; i + p < n;) {
        if (sym[i] != sym[i + p]) {
            i++;
            continue;
        }
        uint32_t a = i;
        while (i + p < n && sym[i] == sym[i + p]) i++;
        uint32_t count = (i + p - a) / p;
        int64_t time = pre[a + count * p] - pre[a];
        if (count >= 2 && time > best.time) best = (run_pick){a, p, count, time};
    }
    return best;
}

static run_pick find_period(const uint32_t *sym, const int64_t *pre, uint32_t n, uint32_t nsym) {
    uint32_t cand[NCAND];
    size_t nc = n >= 4 ? candidates(sym, n, nsym, cand) : 0;
    run_pick runs[NCAND], best = {0};
    for (size_t k = 0; k < nc; k++) {
        runs[k] = best_for(sym, pre, n, cand[k]);
        if (runs[k].time > best.time) best = runs[k];
    }
    for (size_t k = 0; k < nc; k++)
        if (runs[k].count && runs[k].period < best.period && (double)runs[k].time >= 0.95 * (double)best.time)
            best = runs[k];
    return best;
}

/* ------------------------------------------------------------ layers */

typedef struct finder {
    const sc__graph *g;
    sc__structure *s;
    seq_ctx ctx;
    uint32_t *off, *order, *pos; /* processor order (sc__proc_order) and each task's place in it */
} finder;

/* Marks the host tasks of a block on its launching thread: from the launch
 * of its first GPU task to before `stop` (a position on that thread), or
 * through `last_pos` plus `trail` when stop is SC__NONE. */
static void mark_host(finder *f, uint32_t first_gpu, uint32_t stop, uint32_t last_pos, uint32_t trail,
                      uint32_t layer, uint8_t phase) {
    uint32_t l = f->ctx.launcher[first_gpu];
    if (l == SC__NONE) return;
    uint32_t p = f->ctx.tasks[l].proc, lo = f->off[p], hi = f->off[p + 1];
    uint32_t from = lo + f->pos[l], to = stop != SC__NONE ? lo + stop : lo + last_pos + trail + 1;
    if (to > hi) to = hi;
    for (uint32_t k = from; k < to; k++) {
        uint32_t t = f->order[k];
        if (f->s->task_layer[t] == SC__NONE && f->s->task_phase[t] == phase) f->s->task_layer[t] = layer;
    }
}

/* Position of GPU task t's launch on its thread when that thread is p,
 * else SC__NONE. */
static uint32_t launch_pos(const finder *f, uint32_t t, uint32_t p) {
    uint32_t l = t != SC__NONE ? f->ctx.launcher[t] : SC__NONE;
    return l != SC__NONE && f->ctx.tasks[l].proc == p ? f->pos[l] : SC__NONE;
}

static void mark_run(finder *f, const uint32_t *seq, uint32_t n, const run_pick *r, uint8_t phase, uint32_t nlayers) {
    uint32_t trail = 0;
    for (uint32_t k = 0; k < r->count; k++) {
        const uint32_t *blk = seq + r->start + k * r->period;
        uint32_t layer = phase == SC__PHASE_BACKWARD ? nlayers - 1 - k : k;
        if (layer >= nlayers) layer = SC__NONE;
        for (uint32_t j = 0; j < r->period; j++) f->s->task_layer[blk[j]] = layer;
        if (layer == SC__NONE) continue;
        uint32_t l = f->ctx.launcher[blk[0]];
        if (l == SC__NONE) continue;
        uint32_t p = f->ctx.tasks[l].proc;
        bool last = k + 1 == r->count;
        uint32_t next = last ? (r->start + r->count * r->period < n ? seq[r->start + r->count * r->period] : SC__NONE)
                             : blk[r->period];
        uint32_t stop = launch_pos(f, next, p), end = launch_pos(f, blk[r->period - 1], p);
        if (!last && stop != SC__NONE && end != SC__NONE && stop > end) trail = stop - end - 1;
        if (last && end == SC__NONE) end = f->pos[l];
        if (last && stop != SC__NONE && stop > end + trail + 1) stop = SC__NONE;
        mark_host(f, blk[0], stop, end, trail, layer, phase);
    }
}

/* One rank, one phase: its GPU tasks in launch order, their period, and
 * the marks. */
static bool rank_phase(finder *f, uint32_t rank, uint8_t phase, uint32_t *seq, uint32_t *sym, int64_t *pre,
                       run_pick *out) {
    const sc__graph *g = f->g;
    const sc__rank *rk = &((const sc__rank *)g->ranks.data)[rank];
    uint32_t n = 0;
    for (uint32_t t = rk->first_task; t < rk->first_task + rk->ntasks; t++)
        if (sc__task_on_gpu(f->ctx.tasks[t].kind) && f->s->task_phase[t] == phase) seq[n++] = t;
    sc__sort(seq, n, sizeof *seq, cmp_launch, &f->ctx);
    pre[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        sym[i] = f->ctx.tasks[seq[i]].name;
        pre[i + 1] = pre[i] + (f->ctx.tasks[seq[i]].dur > 0 ? f->ctx.tasks[seq[i]].dur : 0);
    }
    *out = find_period(sym, pre, n, g->strings.count);
    sc__layer_run *lr = &f->s->ranks[rank].run[phase];
    if (!out->count || (double)out->time < MIN_COVER * (double)pre[n]) {
        *out = (run_pick){0};
        return true;
    }
    uint32_t first = seq[out->start];
    *lr = (sc__layer_run){out->count, out->period,
                          f->ctx.launcher[first] != SC__NONE ? f->ctx.launcher[first] : first,
                          pre[n] ? (double)out->time / (double)pre[n] : 0};
    return true;
}

static void phase_spans(const sc__graph *g, sc__structure *s) {
    const sc__task *t = sc__graph_tasks(g);
    const sc__rank *rk = g->ranks.data;
    for (size_t r = 0; r < g->ranks.len; r++) {
        sc__structure_rank *sr = &s->ranks[r];
        for (uint32_t i = rk[r].first_task; i < rk[r].first_task + rk[r].ntasks; i++) {
            int ph = s->task_phase[i];
            if (!sr->phase_tasks[ph]++ || t[i].ts < sr->phase_start[ph]) sr->phase_start[ph] = t[i].ts;
            if (t[i].ts + t[i].dur > sr->phase_end[ph]) sr->phase_end[ph] = t[i].ts + t[i].dur;
        }
    }
}

/* Every rank's layers; the count is the forward's, which every rank must
 * share (else none, with a reason). */
static bool find_layers(finder *f) {
    const sc__graph *g = f->g;
    sc__structure *s = f->s;
    const sc__rank *rk = g->ranks.data;
    uint32_t most = 0;
    for (size_t r = 0; r < g->ranks.len; r++)
        if (rk[r].ntasks > most) most = rk[r].ntasks;
    uint32_t *seq = sc__alloc_array(most + 1, sizeof *seq), *sym = sc__alloc_array(most + 1, sizeof *sym);
    int64_t *pre = sc__alloc_array(most + 2, sizeof *pre);
    run_pick *picks = sc__alloc_array(g->ranks.len * 2 + 1, sizeof *picks);
    bool ok = seq && sym && pre && picks;
    for (size_t r = 0; ok && r < g->ranks.len; r++)
        ok = rank_phase(f, (uint32_t)r, SC__PHASE_FORWARD, seq, sym, pre, &picks[2 * r]) &&
             rank_phase(f, (uint32_t)r, SC__PHASE_BACKWARD, seq, sym, pre, &picks[2 * r + 1]);
    uint32_t nf = g->ranks.len ? picks[0].count : 0, nb = g->ranks.len ? picks[1].count : 0;
    for (size_t r = 0; ok && r < g->ranks.len; r++) {
        if (picks[2 * r].count != nf) nf = UINT32_MAX;
        if (picks[2 * r + 1].count != nb) nb = 0;
    }
    if (!ok) s->why_no_layers = "out of memory";
    else if (nf == UINT32_MAX) s->why_no_layers = "the ranks repeat different numbers of blocks in the forward";
    else if (nf == 0) s->why_no_layers = "no block of GPU work repeats over a quarter of the forward's GPU time";
    else {
        s->nlayers = nf;
        s->nbackward = nb == nf ? nb : 0;
        s->source = "period";
        for (size_t r = 0; r < g->ranks.len; r++) {
            uint32_t n = 0;
            for (int ph = SC__PHASE_FORWARD; ph <= SC__PHASE_BACKWARD; ph++) {
                if (ph == SC__PHASE_BACKWARD && !s->nbackward) break;
                rank_phase(f, (uint32_t)r, (uint8_t)ph, seq, sym, pre, &picks[0]);
                n = 0;
                for (uint32_t t = rk[r].first_task; t < rk[r].first_task + rk[r].ntasks; t++)
                    if (sc__task_on_gpu(f->ctx.tasks[t].kind) && s->task_phase[t] == ph) n++;
                mark_run(f, seq, n, &picks[0], (uint8_t)ph, nf);
            }
        }
    }
    free(seq);
    free(sym);
    free(pre);
    free(picks);
    return ok;
}

/* ------------------------------------------------------------ roles */

static void roles(const sc__graph *g, sc__structure *s) {
    const sc__group *gr = g->groups.data;
    const uint32_t *mem = g->group_members.data;
    /* The tensor-parallel communicator: the one of the forward layers'
     * collectives (the data-parallel gradients have no forward part). */
    uint32_t tp_comm = SC__NONE, tp_ranks = 0;
    bool in_fwd_layer_any = false;
    for (size_t i = 0; i < g->groups.len && s->nlayers; i++) {
        if (gr[i].type == SC_C_SEND_RECV || !gr[i].count) continue;
        uint32_t t = mem[gr[i].first];
        if (s->task_layer[t] == SC__NONE || s->task_phase[t] != SC__PHASE_FORWARD) continue;
        if (!in_fwd_layer_any) tp_comm = gr[i].comm, tp_ranks = gr[i].comm_ranks;
        in_fwd_layer_any = true;
    }
    for (size_t i = 0; i < g->groups.len; i++) {
        uint32_t t = gr[i].count ? mem[gr[i].first] : SC__NONE;
        uint8_t role = SC__ROLE_OTHER;
        bool same = in_fwd_layer_any && gr[i].comm == tp_comm && gr[i].comm_ranks == tp_ranks;
        if (gr[i].type == SC_C_SEND_RECV) role = SC__ROLE_PP;
        else if (t != SC__NONE && s->task_layer[t] != SC__NONE && same)
            role = gr[i].type == SC_C_ALL_REDUCE ? SC__ROLE_TP : SC__ROLE_SP;
        else if (t != SC__NONE && (!same || s->task_phase[t] != SC__PHASE_FORWARD)) role = SC__ROLE_DP;
        s->group_role[i] = role;
        if (t != SC__NONE && s->task_layer[t] == 0 && sc__graph_tasks(g)[t].proc < g->procs.len &&
            sc__graph_procs(g)[sc__graph_tasks(g)[t].proc].rank == 0)
            s->per_layer[role]++;
    }
    if (in_fwd_layer_any) s->tp = tp_ranks;
    else if (s->nlayers) s->tp = 1; /* layers with no collective in them: not sharded */
    else s->why_no_tp = "no layers found, so no collective inside one";
}

/* ------------------------------------------------------------ entry */

static _Atomic uint64_t finds; /* sc__structure_find_count */

uint64_t sc__structure_find_count(void) { return atomic_load(&finds); }

sc_status sc__structure_find(const sc__graph *g, sc__structure *s, sc_error *err) {
    atomic_fetch_add(&finds, 1);
    memset(s, 0, sizeof *s);
    size_t nt = g->tasks.len ? g->tasks.len : 1;
    s->nranks = g->ranks.len;
    s->task_layer = sc__alloc_array(nt, sizeof *s->task_layer);
    s->task_phase = calloc(nt, 1);
    s->group_role = calloc(g->groups.len ? g->groups.len : 1, 1);
    s->ranks = calloc(s->nranks ? s->nranks : 1, sizeof *s->ranks);
    finder f = {.g = g, .s = s, .ctx = {sc__graph_tasks(g), launchers(g)}};
    uint8_t *oph = op_phases(g);
    bool ok = s->task_layer && s->task_phase && s->group_role && s->ranks && f.ctx.launcher && oph &&
              sc__proc_order(g, &f.off, &f.order);
    if (ok && !(f.pos = sc__alloc_array(nt, sizeof *f.pos))) ok = false;
    if (ok) {
        for (size_t i = 0; i < g->tasks.len; i++) s->task_layer[i] = SC__NONE;
        for (size_t p = 0; p < g->procs.len; p++)
            for (uint32_t k = f.off[p]; k < f.off[p + 1]; k++) f.pos[f.order[k]] = k - f.off[p];
        task_phases(g, oph, f.ctx.launcher, s->task_phase);
        phase_spans(g, s);
        ok = find_layers(&f);
    }
    if (ok) roles(g, s);
    free(oph);
    free((void *)f.ctx.launcher);
    free(f.off);
    free(f.order);
    free(f.pos);
    if (!ok) {
        sc__structure_free(s);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory recovering the model's structure");
    }
    return SC_OK;
}

void sc__structure_free(sc__structure *s) {
    free(s->task_layer);
    free(s->task_phase);
    free(s->group_role);
    free(s->ranks);
    memset(s, 0, sizeof *s);
}

double sc__structure_layer_us(const sc__graph *g, const sc__structure *s, int phase, const int64_t *start,
                              const int64_t *end) {
    uint32_t n = phase == SC__PHASE_BACKWARD ? s->nbackward : s->nlayers;
    if (!n || !s->task_layer) return 0;
    const sc__task *t = sc__graph_tasks(g);
    const sc__rank *rk = g->ranks.data;
    double sum = 0;
    size_t nr = 0;
    for (size_t r = 0; r < g->ranks.len; r++) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t i = rk[r].first_task; i < rk[r].first_task + rk[r].ntasks; i++) {
            if (s->task_layer[i] == SC__NONE || s->task_phase[i] != phase || !sc__task_on_gpu(t[i].kind)) continue;
            int64_t a = start ? start[i] : t[i].ts, b = end ? end[i] : t[i].ts + t[i].dur;
            if (a < lo) lo = a;
            if (b > hi) hi = b;
        }
        if (hi > lo) {
            sum += (double)(hi - lo) / 1e3 / n;
            nr++;
        }
    }
    return nr ? sum / (double)nr : 0;
}

double sc__structure_host_layer_us(const sc__graph *g, const sc__structure *s, int phase) {
    uint32_t n = phase == SC__PHASE_BACKWARD ? s->nbackward : s->nlayers;
    if (!n || !s->task_layer || !g->procs.len) return 0;
    int64_t *busy = calloc(g->procs.len, sizeof *busy);
    if (!busy) return -1;
    const sc__task *t = sc__graph_tasks(g);
    for (size_t i = 0; i < g->tasks.len; i++)
        if (s->task_layer[i] != SC__NONE && s->task_phase[i] == phase && !sc__task_on_gpu(t[i].kind))
            busy[t[i].proc] += t[i].gap + t[i].dur;
    int64_t most = 0;
    for (size_t p = 0; p < g->procs.len; p++)
        if (busy[p] > most) most = busy[p];
    free(busy);
    return (double)most / 1e3 / n;
}
