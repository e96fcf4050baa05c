/*
 * predict_parallel.c - `predict --tp` and `predict --pp` (what
 * predict_parallel.h says): checks that the trace supports the edit (its
 * layers, its tensor-parallel degree, dimensions that split), labels the
 * tasks for the rewrite, and carries the replay's per-task, per-rank and
 * per-processor arrays over to the rewritten graph.
 *
 * The pipeline's segments (pp_rewrite.h) come from the structure's phase
 * and layer of each task and its measured start: before the first forward
 * layer (PRE when in the forward, else HEAD), in a layer, between the
 * forward and backward layers (FMID, BMID by phase), after the backward
 * layers (POST when in the backward, else TAIL). A task outside the layers
 * but inside their span (another stream's or thread's work alongside
 * them) goes with the layer running when it started.
 */
#include "predict_parallel.h"

#include "../sim/sim.h"
#include "../transforms/pp_rewrite.h"
#include "../transforms/scale.h"
#include "../transforms/tp_edit.h"
#include "structure.h"

#include <stdlib.h>
#include <string.h>

static sc_status no_layers(const char *opt, const sc__structure *s, sc_error *err) {
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "%s: no repeated layers found in the trace (%s)", opt,
                    s->why_no_layers ? s->why_no_layers : "none");
}

/* A dimension that must split over T ranks. */
static sc_status splits(const char *what, const sc_model_dim *d, uint32_t t, sc_error *err) {
    if (d->value > 0 && d->value % t)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "--tp %u: the %s (%lld) does not split over %u ranks", t,
                        what, (long long)d->value, t);
    return SC_OK;
}

static sc_status check_tp(const sc_predict_options *o, const sc__model *m, const sc__structure *s, sc_error *err) {
    if (!s->nlayers) return no_layers("--tp", s, err);
    if (!s->tp)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "--tp: the trace's tensor-parallel degree is unknown (%s)",
                        s->why_no_tp ? s->why_no_tp : "no collective in the layers");
    if (s->tp == 1 && o->tp > 1)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--tp %u: the trace has no tensor-parallel collectives to resize (TP 1), and inserting "
                        "them is not supported",
                        o->tp);
    if (!m || (m->hidden.value <= 0 && m->heads.value <= 0))
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--tp: the model's hidden size and heads are unknown (%s), so a split cannot be checked",
                        m && m->hidden.why_unknown ? m->hidden.why_unknown : "no shapes");
    sc_status st = splits("hidden size", &m->hidden, o->tp, err);
    if (st == SC_OK) st = splits("attention heads", &m->heads, o->tp, err);
    if (st == SC_OK) st = splits("FFN size", &m->ffn, o->tp, err);
    return st;
}

sc_status sc__predict_tp(sc_replay *r, const sc_predict_options *o, const sc__model *m, const struct sc__krecs *recs,
                         const struct sc__kcost_model *km, const struct sc__shape_edit *pre,
                         const sc_model_dims *dims, sc__par_result *res, sc_error *err) {
    const sc__structure *s;
    sc_status st = sc__replay_structure(r, &s, err);
    if (st != SC_OK) return st;
    res->tp_from = s->tp;
    for (size_t i = 0; i < r->g->groups.len && res->tp_comm == SC__NONE; i++)
        if (s->group_role[i] == SC__ROLE_TP || s->group_role[i] == SC__ROLE_SP)
            res->tp_comm = SC__VEC_AT(&r->g->groups, sc__group, i).comm;
    st = check_tp(o, m, s, err);
    uint8_t *flag = st == SC_OK ? calloc(r->g->groups.len + 1, 1) : NULL;
    if (st == SC_OK && !flag) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    if (st == SC_OK && o->tp != s->tp) { /* the traced degree is the replay itself */
        for (size_t i = 0; i < r->g->groups.len; i++)
            flag[i] = s->group_role[i] == SC__ROLE_TP || s->group_role[i] == SC__ROLE_SP;
        sc__shape_edit edit;
        sc_model_dims d = dims ? *dims : (sc_model_dims){0};
        if (!d.tp) d.tp = s->tp;
        bool shaped = recs && km && dims && d.tp == s->tp && sc__shape_edit_tp(&d, o->tp, &edit);
        sc__tp_spec spec = {s->task_layer, flag, r->cls, s->tp, o->tp, shaped ? recs : NULL, km, pre, &edit};
        sc__tp_stats ts;
        if (!sc__tp_edit(r->g, &spec, &ts)) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        res->sharded = ts.sharded;
        res->replicated = ts.replicated;
        res->modelled = ts.modelled;
        /* the layers' kernels re-timed: the layers are picked by the GPU
         * time they cover, so this structure may no longer be the graph's */
        sc__replay_structure_drop(r);
    }
    free(flag);
    return st;
}

/* ------------------------------------------------------------ pipeline */

typedef struct span {
    int64_t lo, hi; /* the layers' measured span in one phase, lo > hi: none */
} span;

static bool in(const span *s, int64_t t) { return t >= s->lo && t < s->hi; }

/* Per rank the forward and backward layers' spans and each layer's start,
 * from their host tasks (the host runs ahead of the GPU: a GPU end would
 * stretch the last layer over the head's launches), or from all their
 * tasks where a rank's layers have none on a thread. */
static void spans(const sc__graph *g, const sc__structure *s, span *sp, int64_t *start) {
    const sc__task *t = sc__graph_tasks(g);
    const sc__proc *pr = sc__graph_procs(g);
    size_t nr = g->ranks.len, L = s->nlayers;
    for (size_t i = 0; i < 2 * nr; i++) sp[i] = (span){INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < 2 * nr * L; i++) start[i] = INT64_MAX;
    for (int host = 1; host >= 0; host--)
        for (size_t i = 0; i < g->tasks.len; i++) {
            if (s->task_layer[i] == SC__NONE || s->task_layer[i] >= L) continue;
            size_t r = pr[t[i].proc].rank, b = s->task_phase[i] == SC__PHASE_BACKWARD;
            span *x = &sp[2 * r + b];
            if (host ? pr[t[i].proc].kind != SC_P_THREAD : x->lo <= x->hi) continue;
            if (t[i].ts < x->lo) x->lo = t[i].ts;
            if (t[i].ts + t[i].dur > x->hi) x->hi = t[i].ts + t[i].dur;
            int64_t *k = &start[(2 * r + b) * L + s->task_layer[i]];
            if (t[i].ts < *k) *k = t[i].ts;
        }
}

/* The layer running at ts among starts st[0 .. L) (any order). */
static uint32_t layer_at(const int64_t *st, uint32_t L, int64_t ts) {
    uint32_t best = 0;
    int64_t at = INT64_MIN;
    for (uint32_t k = 0; k < L; k++)
        if (st[k] <= ts && st[k] > at) at = st[k], best = k;
    return best;
}

static void segments(const sc__graph *g, const sc__structure *s, const span *sp, const int64_t *start, uint8_t *seg,
                     uint32_t *layer) {
    const sc__task *t = sc__graph_tasks(g);
    uint32_t L = s->nlayers;
    for (size_t i = 0; i < g->tasks.len; i++) {
        size_t r = sc__graph_procs(g)[t[i].proc].rank;
        const span *f = &sp[2 * r], *b = &sp[2 * r + 1];
        uint8_t ph = s->task_phase[i];
        layer[i] = s->task_layer[i];
        if (layer[i] != SC__NONE && layer[i] < L) {
            seg[i] = ph == SC__PHASE_BACKWARD ? SC__SEG_BWD : SC__SEG_FWD;
            continue;
        }
        int64_t ts = t[i].ts;
        if (in(f, ts) || in(b, ts)) { /* alongside the layers */
            bool bw = in(b, ts);
            layer[i] = layer_at(start + (2 * r + bw) * L, L, ts);
            seg[i] = bw ? SC__SEG_BWD : SC__SEG_FWD;
        } else if (ts < f->lo) {
            seg[i] = ph == SC__PHASE_FORWARD ? SC__SEG_PRE : SC__SEG_HEAD;
        } else if (ts < b->lo) {
            seg[i] = ph == SC__PHASE_BACKWARD ? SC__SEG_BMID : SC__SEG_FMID;
        } else {
            seg[i] = ph == SC__PHASE_BACKWARD ? SC__SEG_POST : SC__SEG_TAIL;
        }
    }
    /* A GPU task outside the layers goes with its launch: the stream runs
     * behind the host, so its start says which layer the host was
     * launching, not where it sits in the stream's order (an embedding's
     * kernel starting while the host launches layer 2 still precedes layer
     * 0's kernels). */
    for (uint32_t u = 0; u < g->tasks.len; u++)
        for (uint32_t e = g->succ_off[u]; e < g->succ_off[u + 1]; e++) {
            uint32_t v = g->succ[e];
            if (g->succ_family[e] != SC_E_LAUNCH || (s->task_layer[v] != SC__NONE && s->task_layer[v] < L)) continue;
            seg[v] = seg[u];
            layer[v] = layer[u];
        }
}

/* A segment and layer as its place in the iteration's order: HEAD, PRE,
 * the forward layers up, FMID, BMID, the backward layers down, POST, TAIL
 * (unplace is its inverse). */
static uint32_t place_of(uint8_t seg, uint32_t layer, uint32_t L) { return sc__pp_seg_key(seg, layer, L, true); }

static void unplace(uint32_t p, uint32_t L, uint8_t *seg, uint32_t *layer) {
    static const uint8_t fixed[] = {SC__SEG_HEAD, SC__SEG_PRE};
    *layer = SC__NONE;
    if (p < 2) *seg = fixed[p];
    else if (p < 2 + L) *seg = SC__SEG_FWD, *layer = p - 2;
    else if (p == 2 + L) *seg = SC__SEG_FMID;
    else if (p == 3 + L) *seg = SC__SEG_BMID;
    else if (p < 4 + 2 * L) *seg = SC__SEG_BWD, *layer = L - 1 - (p - 4 - L);
    else *seg = p == 4 + 2 * L ? SC__SEG_POST : SC__SEG_TAIL;
}

/* The rewrite copies each processor's tasks segment by segment, so their
 * segments must follow the processor's order, or a copied edge would run
 * against it. A task the structure put in a layer keeps its place; one
 * placed by its time (or its launch) is kept between the structure's
 * places before and after it on its processor; then every place is raised
 * to the greatest before it (only a structure that contradicts itself is
 * changed by that). */
static void monotone(const sc__graph *g, const sc__structure *s, const uint32_t *off, const uint32_t *order,
                     uint8_t *seg, uint32_t *layer) {
    uint32_t L = s->nlayers;
    for (size_t p = 0; p < g->procs.len; p++) {
        uint32_t next = UINT32_MAX;
        for (uint32_t j = off[p + 1]; j-- > off[p];) {
            uint32_t t = order[j], at = place_of(seg[t], layer[t], L);
            if (s->task_layer[t] != SC__NONE && s->task_layer[t] < L) next = at;
            else if (at > next) unplace(next, L, &seg[t], &layer[t]);
        }
        uint32_t most = 0;
        for (uint32_t j = off[p]; j < off[p + 1]; j++) {
            uint32_t t = order[j], at = place_of(seg[t], layer[t], L);
            if (at < most) unplace(most, L, &seg[t], &layer[t]);
            else most = at;
        }
    }
}

bool sc__pp_label(const sc__graph *g, const sc__structure *s, uint8_t *seg, uint32_t *layer) {
    size_t nr = g->ranks.len, L = s->nlayers;
    span *sp = sc__alloc_array(2 * nr + 1, sizeof *sp);
    int64_t *start = sc__alloc_array(2 * nr * L + 1, sizeof *start);
    uint32_t *off = NULL, *order = NULL;
    bool ok = sp && start && sc__proc_order(g, &off, &order);
    if (ok) {
        spans(g, s, sp, start);
        segments(g, s, sp, start, seg, layer);
        monotone(g, s, off, order, seg, layer);
    }
    free(sp), free(start), free(off), free(order);
    return ok;
}

static int dtype_bytes(const char *dtype) {
    if (!dtype) return 2;
    if (!strcmp(dtype, "fp32") || !strcmp(dtype, "tf32")) return 4;
    if (!strcmp(dtype, "fp8")) return 1;
    return 2;
}

static sc_status parse_schedule(const sc_predict_options *o, sc__pp_kind *k, sc_error *err) {
    const char *s = o->schedule ? o->schedule : "1f1b";
    if (!strcmp(s, "gpipe")) *k = SC__PP_GPIPE;
    else if (!strcmp(s, "1f1b")) *k = SC__PP_1F1B;
    else if (!strcmp(s, "interleaved")) *k = SC__PP_INTERLEAVED;
    else
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "--schedule: '%s' is not gpipe, 1f1b or interleaved", s);
    return SC_OK;
}

static sc_status check_pp(const sc__structure *s, const sc__model *m, sc_error *err) {
    if (!s->nlayers) return no_layers("--pp", s, err);
    if (s->nbackward != s->nlayers)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--pp: the trace has %s, so a micro-batch's backward cannot be laid out per stage "
                        "(give --model-backward to model one from the forward)",
                        s->nbackward ? "a backward that does not repeat its forward layers" : "no backward");
    if (!m || m->hidden.value <= 0 || m->seq.value <= 0 || m->micro_batch.value <= 0)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--pp: the activation a stage sends is unknown: hidden, sequence or micro-batch not found "
                        "in the trace (%s)",
                        !m ? "no shapes" : m->hidden.why_unknown ? m->hidden.why_unknown
                                         : m->seq.why_unknown     ? m->seq.why_unknown
                                                                  : "micro-batch unknown");
    return SC_OK;
}

/* The replay's per-task, per-rank and per-processor arrays for the new
 * graph (new rank s * R + r is old rank r; the added processors last). */
static bool carry(sc_replay *r, sc__graph *ng, const uint32_t *origin, int64_t p2p_ns) {
    size_t n = ng->tasks.len ? ng->tasks.len : 1, nr = ng->ranks.len ? ng->ranks.len : 1, R = r->g->ranks.len;
    uint8_t *cls = sc__alloc_array(n, 1);
    int64_t *dur = r->traced_dur ? sc__alloc_array(n, sizeof *dur) : NULL;
    int64_t **per_rank[] = {&r->launch_latency, &r->sync_base, &r->sync_wake, &r->rank_offset, &r->dispatch_gap};
    int64_t *nrk[5] = {0}, *bl = calloc(ng->procs.len + 1, sizeof *bl);
    bool ok = cls && bl && (!r->traced_dur || dur);
    for (int k = 0; ok && k < 5; k++) ok = (nrk[k] = sc__alloc_array(nr, sizeof *nrk[k])) != NULL;
    if (!ok) {
        free(cls), free(dur), free(bl);
        for (int k = 0; k < 5; k++) free(nrk[k]);
        return false;
    }
    for (size_t i = 0; i < ng->tasks.len; i++) {
        cls[i] = origin[i] == SC__NONE ? SC_SCALE_COMM : r->cls[origin[i]];
        if (dur) dur[i] = origin[i] == SC__NONE ? p2p_ns : r->traced_dur[origin[i]];
    }
    for (int k = 0; k < 5; k++) {
        for (size_t i = 0; i < ng->ranks.len; i++) nrk[k][i] = (*per_rank[k])[i % R];
        free(*per_rank[k]);
        *per_rank[k] = nrk[k];
    }
    /* each new rank's processors: the old rank's in order, then two */
    const sc__proc *np = ng->procs.data, *op = r->g->procs.data;
    size_t j = 0;
    for (size_t p = 0; p < ng->procs.len; p++) {
        while (j < r->g->procs.len && (op[j].rank != np[p].rank % R || op[j].id != np[p].id)) j = (j + 1);
        if (j < r->g->procs.len) bl[p] = r->backlog[j];
        j = 0;
    }
    free(r->backlog);
    r->backlog = bl;
    sc__replay_adopt_graph(r, ng, cls, dur);
    return true;
}

sc_status sc__predict_pp(sc_replay *r, const sc_predict_options *o, const sc__model *m, const sc__comm_model *cm,
                         uint32_t gpn, sc__par_result *res, sc_error *err) {
    sc__pp_kind kind = SC__PP_1F1B;
    sc_status st = parse_schedule(o, &kind, err);
    if (st != SC_OK) return st;
    res->schedule = sc__pp_kind_name(kind);
    const sc__structure *s;
    if ((st = sc__replay_structure(r, &s, err)) != SC_OK) return st;
    st = check_pp(s, m, err);
    const sc__graph *g = r->g;
    size_t nr = g->ranks.len, n = g->tasks.len + 1;
    uint8_t *seg = st == SC_OK ? sc__alloc_array(n, 1) : NULL;
    uint32_t *layer = st == SC_OK ? sc__alloc_array(n, sizeof *layer) : NULL;
    if (st == SC_OK) sc__drop_backward_waits(s, r->g, NULL);
    /* the structure found before the waits were dropped labels the tasks */
    if (st == SC_OK && (!seg || !layer || !sc__pp_label(g, s, seg, layer)))
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    sc__graph *ng = NULL;
    uint32_t *origin = NULL;
    int64_t p2p_ns = 0;
    if (st == SC_OK) {
        res->p2p_bytes = m->seq.value * m->micro_batch.value * m->hidden.value * dtype_bytes(m->dtype);
        res->p2p_ranks = nr * 2 > gpn ? gpn + 1 : 2;
        p2p_ns = sc__comm_time_ns(cm, SC_C_SEND_RECV, res->p2p_bytes, res->p2p_ranks);
        sc__pp_spec spec = {seg, layer, s->nlayers, o->pp, o->microbatches ? o->microbatches : 1,
                            o->virtual_stages ? o->virtual_stages : 1, kind, res->p2p_bytes, p2p_ns < 0 ? 0 : p2p_ns,
                            1.0 / o->pp};
        st = sc__pp_rewrite(g, &spec, &ng, &origin, err);
    }
    free(seg), free(layer);
    /* the waits dropped changed durations; on success carry gives r the
     * new graph, which drops it too */
    sc__replay_structure_drop(r);
    if (st != SC_OK) return st;
    res->traced_tasks = g->tasks.len;
    res->modelled_tasks = ng->tasks.len > g->tasks.len ? ng->tasks.len - g->tasks.len : 0;
    static const char label[] = "pipeline";
    res->pp_comm = sc__intern_put(&ng->strings, label, sizeof label - 1);
    bool ok = carry(r, ng, origin, p2p_ns);
    free(origin);
    if (!ok) {
        sc__graph_free(ng);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    return SC_OK;
}
