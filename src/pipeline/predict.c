/*
 * predict.c - `stepcast predict`: the traced iteration edited into the one
 * of a job nobody ran, then simulated like a replay (replay.c).
 *
 * What the trace says of its job (the traced shape): its ranks (the world
 * size), its GPU (the device name, and the hardware profile of that name),
 * the GPUs of a node (the devices the trace's host lists), and its
 * data-parallel degree: the size of the data-parallel communicator, which
 * is the trace's only communicator when it has one (telling several apart
 * needs the model's structure, not recovered yet: --dp then says so).
 *
 * The edits, applied to the calibrated graph between replay.c's prepare
 * and finish:
 *   --dp N       the data-parallel communicator has N ranks; its
 *                collectives keep their size (per-rank work is constant)
 *                and are re-timed for N ranks (N = 1: no communication);
 *   --nodes, --gpus-per-node, --net-gbps, --nvlink-gbps
 *                the fabric: every sized collective is re-timed for it;
 *   --layers L   the model's layers (structure.c finds them): whole layers,
 *                forward and backward with their collectives, copied from
 *                the last one or removed from the end (transforms/rewrite.c);
 *                applied first, so the other edits see the new graph;
 *   --gpu, --profile
 *                another GPU: GEMM and attention kernels by the ratio of
 *                dense tensor TFLOP/s, other GPU work by the ratio of HBM
 *                bandwidths (transforms/retime.c), collectives by the new
 *                node's fabric; CPU time stays;
 *   --hidden, --ffn, --heads, --seq, --micro-batch
 *                the model's dimensions, read off the traced kernels'
 *                shapes (models/shape_edit.c): every kernel whose shapes
 *                scale with them re-timed by the kernel cost model fitted
 *                to the trace (traced time x model(new) / model(traced)),
 *                every collective whose message does re-sized
 *                (transforms/reshape.c). The shapes are read before the
 *                build releases the traces' events.
 * Collectives are re-timed by the communication model (models/comm.c):
 * fitted to the trace's own collectives while the fabric is the traced
 * one, else the new hardware's model times the trace's efficiency against
 * the traced hardware's model (how much slower its collectives ran than
 * the model says), so what the trace knows is kept either way.
 *
 * Many ranks from few: the graph keeps the traced ranks; each stands for
 * the predicted ranks that hold its position (its data-parallel replicas)
 * and is simulated once, its collectives ending at the last simulated
 * arrival plus the modelled transfer for the whole predicted
 * communicator. 4,096 predicted ranks from 8 traced ones cost the 8-rank
 * replay. Rank shapes (symmetry.c) are counted and reported: real traces
 * rarely have two ranks of exactly one shape, and each keeps its own
 * measured durations.
 */
#include "replay.h"

#include "../models/comm.h"
#include "../models/hardware.h"
#include "../trace/trace.h"
#include "../transforms/reshape.h"
#include "../transforms/retime.h"
#include "../transforms/rewrite.h"
#include "kernels.h"
#include "structure.h"
#include "predict_parallel.h"
#include "structure_run.h"
#include "symmetry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The profile collectives are modelled from when the trace's GPU has none. */
#define FALLBACK_PROFILE "a100-80gb"

/* The shape edits: every trace's kernel records (read before the build),
 * the edit, and the cost model fitted to the graph's traced kernels. */
typedef struct shape_ctx {
    sc__krecs *recs;
    size_t nrecs;
    sc__shape_edit edit;
    sc__kcost_model model;
} shape_ctx;


/* ------------------------------------------------------------ the traced job */

/* The distinct communicators of g's groups of two ranks or more: their
 * label ids in labels (up to max), their count returned. */
static size_t communicators(const sc__graph *g, uint32_t *labels, uint32_t *sizes, size_t max) {
    const sc__group *groups = g->groups.data;
    size_t n = 0;
    for (size_t i = 0; i < g->groups.len; i++) {
        if (groups[i].comm == SC__NONE || groups[i].comm_ranks < 2 || groups[i].type == SC_C_SEND_RECV) continue;
        size_t k = 0;
        while (k < n && k < max && labels[k] != groups[i].comm) k++;
        if (k < n) continue;
        if (n < max) {
            labels[n] = groups[i].comm;
            sizes[n] = groups[i].comm_ranks;
        }
        n++;
    }
    return n;
}

typedef struct traced_job {
    sc_job_shape shape;
    const sc__hw_profile *profile; /* the traced GPU's, NULL when unknown */
    uint32_t dp_comm;               /* label of the data-parallel communicator, SC__NONE */
    size_t ncomms;                  /* communicators with collectives */
    uint32_t mp_num, mp_den;        /* the model-parallel ranks grow mp_num / mp_den times (--tp, --pp) */
    char comm_names[256];           /* their labels, for an error */
} traced_job;

/* The traced fabric's model fitted to one graph's collectives, kept with
 * what it was fitted to: a later fit to the same samples (the edits
 * between left every collective as it was) is this one. */
typedef struct fit_memo {
    bool have;
    const sc__hw_profile *profile;
    uint32_t gpn;
    sc__comm_sample *in; /* the samples (owned) */
    size_t n;
    sc__comm_model m;
} fit_memo;

struct sc__prediction {
    sc_prediction pub;
    char traced_gpu[96], predicted_gpu[96];
    sc__hw_profile file_profile; /* --profile */
    traced_job tj;               /* the traced job, before any edit */
    sc__model model;             /* the model's dimensions (have_model) */
    bool have_model;
    sc__par_result par;          /* --tp, --pp */
    bool have_pre;               /* the models below, from the graph before --tp / --pp */
    sc__comm_model pre_fit, pre_prof;
    double pre_factor[SC_C_COUNT];
    uint32_t dp_comm, dp;        /* the data-parallel communicator re-timed for dp ranks; SC__NONE */
    sc__kcost_model bwd_model;   /* the profile's cost model, when no kernel records */
    fit_memo fit;                /* the last fit of the traced fabric's model */
};

static void infer_traced(const sc_traceset *set, const sc__graph *g, traced_job *tj, char *gpu_name, size_t cap) {
    memset(tj, 0, sizeof *tj);
    uint32_t ranks = (uint32_t)g->ranks.len;
    for (size_t i = 0; set && i < set->count; i++)
        if (set->traces[i]->world_size > (int64_t)ranks && set->traces[i]->world_size <= UINT32_MAX)
            ranks = (uint32_t)set->traces[i]->world_size;
    const sc_trace *t0 = set && set->count ? set->traces[0] : NULL;
    const char *device = t0 ? sc__trace_gpu_name(t0) : "";
    tj->profile = *device ? sc__hw_find(device) : NULL;
    snprintf(gpu_name, cap, "%s", tj->profile ? tj->profile->name : *device ? device : "unknown");
    uint32_t gpn = t0 && t0->devices.len ? (uint32_t)t0->devices.len : tj->profile ? tj->profile->gpus_per_node : 8;
    if (ranks && gpn > ranks) gpn = ranks;
    if (!gpn) gpn = 1;
    uint32_t labels[16], sizes[16];
    tj->ncomms = communicators(g, labels, sizes, 16);
    tj->dp_comm = tj->ncomms == 1 ? labels[0] : SC__NONE;
    size_t len = 0;
    for (size_t k = 0; k < tj->ncomms && k < 16; k++) {
        int w = snprintf(tj->comm_names + len, sizeof tj->comm_names - len, "%s%s", k ? ", " : "",
                         sc__graph_str(g, labels[k]));
        if (w > 0 && (size_t)w < sizeof tj->comm_names - len) len += (size_t)w;
    }
    tj->shape = (sc_job_shape){.ranks = ranks ? ranks : 1,
                               .dp = tj->ncomms == 1 ? sizes[0] : tj->ncomms == 0 ? 1 : 0,
                               .gpus_per_node = gpn,
                               .nodes = ranks ? (ranks + gpn - 1) / gpn : 1,
                               .gpu = gpu_name,
                               .nvlink_gbps = tj->profile ? tj->profile->nvlink_GBps : 0,
                               .net_gbps = tj->profile ? tj->profile->nics_per_node * tj->profile->nic_Gbps /
                                                             tj->profile->gpus_per_node
                                                       : 0};
}

/* ------------------------------------------------------------ the new job */

/* The new GPU's profile: --profile's file, --gpu's row, else the traced one. */
static sc_status new_profile(const sc_predict_options *o, const traced_job *tj, struct sc__prediction *pd,
                             const sc__hw_profile **out, sc_error *err) {
    *out = tj->profile;
    if (o->profile_path) {
        sc_status st = sc__hw_load(o->profile_path, &pd->file_profile, err);
        if (st == SC_OK) *out = &pd->file_profile;
        return st;
    }
    if (!o->gpu) return SC_OK;
    if ((*out = sc__hw_find(o->gpu))) return SC_OK;
    char known[512];
    size_t len = 0;
    for (size_t i = 0; i < sc__hw_count(); i++) {
        int w = snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", sc__hw_alias(i));
        if (w > 0 && (size_t)w < sizeof known - len) len += (size_t)w;
    }
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "unknown GPU '%s' (known: %s; or give --profile FILE)",
                    o->gpu, known);
}

/* The predicted shape from the traced one and the edits; SC_E_USAGE when
 * they do not fit together. */
static sc_status new_shape(const sc_predict_options *o, const traced_job *tj, sc_job_shape *s, sc_error *err) {
    const sc_job_shape *t = &tj->shape;
    *s = *t;
    if (o->dp && t->dp == 0)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--dp: the trace has %zu communicators (%s) and which one is data-parallel "
                        "cannot be told from it",
                        tj->ncomms, tj->comm_names);
    if (o->dp && tj->ncomms == 0)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--dp: the trace has no collectives, so no data-parallel communicator to grow");
    uint32_t mp = t->dp ? t->ranks / t->dp : t->ranks;
    if (tj->mp_den) mp = (uint32_t)((uint64_t)mp * tj->mp_num / tj->mp_den);
    if (!mp) mp = 1;
    if (t->dp && t->ranks % t->dp)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--dp: the data-parallel communicator's %u ranks do not divide the job's %u", t->dp,
                        t->ranks);
    if (o->gpus_per_node) s->gpus_per_node = o->gpus_per_node;
    if (o->dp) s->dp = o->dp;
    if (o->nodes && !o->dp) {
        uint64_t ranks = (uint64_t)o->nodes * s->gpus_per_node;
        if (ranks % mp)
            return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                            "--nodes %u x %u GPUs = %llu ranks, not a multiple of the %u model-parallel ranks "
                            "of the trace",
                            o->nodes, s->gpus_per_node, (unsigned long long)ranks, mp);
        s->dp = (uint32_t)(ranks / mp);
    }
    uint64_t ranks = (uint64_t)(s->dp ? s->dp : 1) * mp;
    if (ranks > UINT32_MAX) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "--dp: too many ranks");
    s->ranks = (uint32_t)ranks;
    s->nodes = o->nodes ? o->nodes : (s->ranks + s->gpus_per_node - 1) / s->gpus_per_node;
    if (s->ranks > s->gpus_per_node && s->ranks % s->gpus_per_node)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "the %u ranks of %u data-parallel x %u model-parallel do not fill nodes of %u GPUs",
                        s->ranks, s->dp, mp, s->gpus_per_node);
    if ((uint64_t)s->nodes * s->gpus_per_node < s->ranks || (o->nodes && (uint64_t)s->nodes * s->gpus_per_node != s->ranks))
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "%u nodes of %u GPUs do not hold the %u ranks of %u data-parallel x %u model-parallel",
                        s->nodes, s->gpus_per_node, s->ranks, s->dp, mp);
    if (o->nvlink_gbps) s->nvlink_gbps = o->nvlink_gbps;
    if (o->net_gbps) s->net_gbps = o->net_gbps;
    return SC_OK;
}

static bool finite_positive_or_zero(double x) { return isfinite(x) && x >= 0 && x < 1e9; }

static bool shape_edits(const sc_predict_options *o) {
    return o->hidden || o->ffn || o->heads || o->seq || o->micro_batch;
}

/* --recompute as an SC__RECOMPUTE_*, -1 when not a mode. */
static int recompute_mode(const sc_predict_options *o) {
    if (!o->recompute || !strcmp(o->recompute, "none")) return SC__RECOMPUTE_NONE;
    if (!strcmp(o->recompute, "selective")) return SC__RECOMPUTE_SELECTIVE;
    return strcmp(o->recompute, "full") ? -1 : SC__RECOMPUTE_FULL;
}

static sc_status check_options(const sc_predict_options *o, sc_error *err) {
    if (recompute_mode(o) < 0)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "--recompute: '%s' is not none, selective or full",
                        o->recompute);
    if (!finite_positive_or_zero(o->net_gbps) || !finite_positive_or_zero(o->nvlink_gbps))
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "a link bandwidth must be a number > 0");
    if (o->gpu && o->profile_path)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "give --gpu or --profile, not both");
    if (shape_edits(o) && o->replay.comm == SC_COMM_TRACED)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--comm traced keeps each rank's traced collectives: it cannot take shape edits that re-size them");
    return SC_OK;
}

/* The shape edit the options ask for, from the traces' kernel records
 * (read now, while the traces hold their events). */
static sc_status shape_prepare(const sc_traceset *set, const sc_predict_options *o, shape_ctx *sx, sc_error *err) {
    for (size_t i = 0; i < set->count; i++)
        if (set->traces[i]->format != SC__FMT_KINETO)
            return sc__fail(err, SC_E_USAGE, set->traces[i]->path, SC_NO_OFFSET,
                            "shape edits need Kineto traces with shapes; this is a Chakra file");
    if (!sc__kernels_collect(set, &sx->recs)) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    sx->nrecs = set->count;
    sc__model_dims traced, want = {.hidden = o->hidden, .ffn = o->ffn, .heads = o->heads, .seq = o->seq,
                                   .micro_batch = o->micro_batch};
    sc__model_dims_infer(sx->recs[0].recs, sx->recs[0].n, &traced);
    sc_status st = sc__shape_edit_init(&traced, &want, &sx->edit, err);
    /* without a shape edit the records serve the cost model alone: dimensions
     * the shapes do not show are not an error (what needs them says so) */
    if (st == SC_E_USAGE && !shape_edits(o)) {
        sc__error_clear(err);
        memset(&sx->edit, 0, sizeof sx->edit);
        sx->edit.from = sx->edit.to = traced;
        return SC_OK;
    }
    return st;
}

/* The kernel cost model of the traced GPU fitted to g's traced kernels. */
static sc_status shape_fit(const sc_traceset *set, const sc__graph *g, shape_ctx *sx, sc_error *err) {
    const char *device = set->count ? sc__trace_gpu_name(set->traces[0]) : "";
    const sc__hw_profile *p = *device ? sc__hw_find(device) : NULL;
    if (!p) p = sc__hw_find(FALLBACK_PROFILE);
    if (!p) return sc__fail(err, SC_E_INTERNAL, NULL, SC_NO_OFFSET, "no profile %s", FALLBACK_PROFILE);
    sc__kcost_defaults(p, &sx->model);
    if (!sc__kernels_fit(&sx->model, g, sx->recs))
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory fitting the kernel model");
    return SC_OK;
}

/* Does the prediction change the fabric or the GPU (not only sizes)? */
static bool hardware_changes(const sc_predict_options *o, const sc_job_shape *t, const sc_job_shape *s,
                             const traced_job *tj, const sc__hw_profile *np) {
    return np != tj->profile || o->net_gbps || o->nvlink_gbps || s->gpus_per_node != t->gpus_per_node;
}

static bool edits_comm(const sc_predict_options *o, const sc_job_shape *t, const sc_job_shape *s,
                       const traced_job *tj, const sc__hw_profile *np) {
    return s->dp != t->dp || hardware_changes(o, t, s, tj, np);
}

/* ------------------------------------------------------------ re-timing */

static bool same_samples(const sc__comm_sample *a, const sc__comm_sample *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i].type != b[i].type || a[i].bytes != b[i].bytes || a[i].ranks != b[i].ranks || a[i].ns != b[i].ns)
            return false;
    return true;
}

/* Is memo's fit the one of profile p, gpn GPUs a node and samples s? */
static bool memo_holds(const fit_memo *memo, const sc__hw_profile *p, uint32_t gpn, const sc__comm_sample *s,
                       size_t n) {
    return memo && memo->have && memo->profile == p && memo->gpn == gpn && memo->n == n &&
           same_samples(memo->in, s, n);
}

/* The traced fabric's model: its GPU's profile (or the fallback's), fitted
 * to the trace's collectives when fit is set; memo (NULL: none) holds the
 * last fit, reused when g's collectives are the ones it was fitted to. */
static sc_status traced_model(const sc__graph *g, const traced_job *tj, bool fit, fit_memo *memo,
                              sc__comm_model *m, sc_error *err) {
    const sc__hw_profile *p = tj->profile ? tj->profile : sc__hw_find(FALLBACK_PROFILE);
    if (!p) return sc__fail(err, SC_E_INTERNAL, NULL, SC_NO_OFFSET, "no profile %s", FALLBACK_PROFILE);
    sc_status st = sc__comm_model_from_profile(p, tj->shape.gpus_per_node, 0, 0, m, err);
    if (st != SC_OK || !fit) return st;
    size_t n;
    sc__comm_sample *s = sc__retime_samples(g, &n);
    if (s && memo_holds(memo, p, tj->shape.gpus_per_node, s, n)) {
        free(s);
        *m = memo->m;
        return SC_OK;
    }
    bool ok = s && sc__comm_model_fit(m, s, n);
    if (ok && memo) {
        free(memo->in);
        *memo = (fit_memo){true, p, tj->shape.gpus_per_node, s, n, *m};
    } else {
        free(s);
    }
    return ok ? SC_OK : sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory fitting the communication model");
}

/* Re-times the collectives of r for the new job. */
static sc_status retime_comm(sc_replay *r, const sc_predict_options *o, const traced_job *tj,
                             const sc__hw_profile *np, struct sc__prediction *pd, sc_error *err) {
    sc__graph *g = r->g;
    const sc_job_shape *s = &pd->pub.predicted;
    sc__comm_model m;
    double factor[SC_C_COUNT];
    bool fitted = !hardware_changes(o, &tj->shape, s, tj, np);
    sc_status st = SC_OK;
    if (pd->have_pre) {
        m = fitted ? pd->pre_fit : pd->pre_prof;
        memcpy(factor, pd->pre_factor, sizeof factor);
    } else {
        st = traced_model(g, tj, fitted, &pd->fit, &m, err);
    }
    if (st != SC_OK) return st;
    if (!fitted) {
        if (!pd->have_pre) sc__retime_efficiency(g, &m, factor);
        st = sc__comm_model_from_profile(np, s->gpus_per_node, o->net_gbps, o->nvlink_gbps, &m, err);
        if (st != SC_OK) return st;
    }
    /* A smaller data-parallel communicator splits the traced one: its
     * replicas no longer wait for one another. The structure's roles are
     * found from the groups' members: found again if asked. */
    if (tj->dp_comm != SC__NONE && s->dp < tj->shape.dp) {
        if (!sc__retime_split(g, tj->dp_comm, s->dp)) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        sc__replay_structure_drop(r);
    }
    uint32_t *ranks = NULL;
    const sc__par_result *pr = &pd->par;
    bool tp = pr->tp_comm != SC__NONE && o->tp && o->tp != pr->tp_from, pp = o->pp && pr->pp_comm != SC__NONE;
    if ((tj->dp_comm != SC__NONE && s->dp != tj->shape.dp) || tp || pp) {
        if (!(ranks = calloc(g->strings.count ? g->strings.count : 1, sizeof *ranks)))
            return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        if (tj->dp_comm != SC__NONE && s->dp != tj->shape.dp) {
            ranks[tj->dp_comm] = s->dp;
            pd->dp_comm = tj->dp_comm;
            pd->dp = s->dp;
        }
        if (tp) ranks[pr->tp_comm] = o->tp;
        if (pp) ranks[pr->pp_comm] = pr->p2p_ranks;
    }
    sc__retime_stats rs;
    /* transfer times only: the model's structure is not found from them */
    sc__retime_groups(g, &m, fitted ? NULL : factor, ranks, &rs);
    free(ranks);
    pd->pub.comm_model = fitted ? "fitted" : "profile";
    pd->pub.collectives_retimed = rs.retimed;
    pd->pub.collectives_unsized = rs.unsized;
    return SC_OK;
}

sc_status sc__replay_model_comm(sc_replay *r, const sc_traceset *set, sc_error *err) {
    traced_job tj;
    char gpu[96];
    infer_traced(set, r->g, &tj, gpu, sizeof gpu);
    sc__comm_model m;
    sc_status st = traced_model(r->g, &tj, true, NULL, &m, err);
    if (st != SC_OK) return st;
    sc__retime_stats rs;
    sc__retime_groups(r->g, &m, NULL, NULL, &rs); /* transfer times: the structure stays */
    r->modelled = true;
    return SC_OK;
}

/* ------------------------------------------------------------ the run */

/* The shape edits on r's calibrated graph, and what they did into pd. */
static sc_status reshape(sc_replay *r, const traced_job *tj, const shape_ctx *sx, struct sc__prediction *pd,
                         sc_error *err) {
    pd->pub.traced_model = sx->edit.from;
    pd->pub.predicted_model = sx->edit.to;
    sc__comm_model m;
    sc_status st = traced_model(r->g, tj, true, &pd->fit, &m, err);
    if (st != SC_OK) return st;
    sc__reshape_stats rs;
    sc__reshape_graph(r->g, sx->recs, &sx->model, &sx->edit, &m, &rs);
    /* new durations: the layers are picked by the GPU time they cover, so
     * a structure found before may not be this graph's */
    sc__replay_structure_drop(r);
    pd->pub.kernels_reshaped = rs.kernels;
    pd->pub.kernels_unshaped = rs.unshaped;
    pd->pub.collectives_resized = rs.collectives;
    return SC_OK;
}

static sc_status edit(sc_replay *r, const sc_traceset *set, const sc_predict_options *o, struct sc__prediction *pd,
                      sc_error *err) {
    traced_job tj = pd->tj;
    pd->pub.traced = tj.shape;
    pd->pub.traced.gpu = pd->traced_gpu;
    pd->pub.comm_model = "none";
    const sc__hw_profile *np;
    sc_status st = new_profile(o, &tj, pd, &np, err);
    if (st == SC_OK) st = new_shape(o, &tj, &pd->pub.predicted, err);
    if (st != SC_OK) return st;
    snprintf(pd->predicted_gpu, sizeof pd->predicted_gpu, "%s", np ? np->name : pd->traced_gpu);
    pd->pub.predicted.gpu = pd->predicted_gpu;
    if (np && np != tj.profile) {
        pd->pub.predicted.nvlink_gbps = o->nvlink_gbps ? o->nvlink_gbps : np->nvlink_GBps;
        pd->pub.predicted.net_gbps = o->net_gbps ? o->net_gbps : np->nics_per_node * np->nic_Gbps / np->gpus_per_node;
    }
    if (np != tj.profile && !tj.profile)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--gpu: the traced GPU '%s' has no hardware profile to scale from", pd->traced_gpu);
    bool par = (o->tp && o->tp != pd->par.tp_from) || o->pp;
    bool comm = o->replay.comm == SC_COMM_MODEL || par || edits_comm(o, &tj.shape, &pd->pub.predicted, &tj, np);
    if (comm && o->replay.comm == SC_COMM_TRACED)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--comm traced keeps each rank's traced collectives: it cannot take edits that re-time them");
    if (comm && np && (st = retime_comm(r, o, &tj, np, pd, err)) != SC_OK) return st;
    if (comm && !np && (st = retime_comm(r, o, &tj, sc__hw_find(FALLBACK_PROFILE), pd, err)) != SC_OK) return st;
    if (np != tj.profile) pd->pub.gpu_tasks_retimed = sc__retime_gpu(r->g, r->cls, tj.profile, np);
    if (pd->pub.gpu_tasks_retimed) sc__replay_structure_drop(r); /* new durations, as in reshape */
    pd->pub.ranks_per_traced_rank =
        (double)pd->pub.predicted.ranks / ((double)pd->pub.traced.ranks * (o->pp ? o->pp : 1));
    return SC_OK;
}

/* --layers: the graph rewritten to o->layers layers; the per-task arrays
 * of the replay follow the tasks. */
static sc_status edit_layers(sc_replay *r, const sc_predict_options *o, struct sc__prediction *pd, sc_error *err) {
    const sc__structure *s;
    sc_status st = sc__replay_structure(r, &s, err);
    if (st != SC_OK) return st;
    pd->pub.traced_layers = s->nlayers;
    bool backward = false;
    for (size_t i = 0; i < r->g->tasks.len && !backward; i++)
        backward = s->task_phase[i] == SC__PHASE_BACKWARD && sc__task_on_gpu(sc__graph_tasks(r->g)[i].kind);
    if (!s->nlayers)
        st = sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "--layers: no repeated layers found in the trace (%s)",
                      s->why_no_layers);
    else if (backward && s->nbackward != s->nlayers)
        st = sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                      "--layers: the trace's backward does not repeat its %u forward layers, so its layers "
                      "cannot be copied whole",
                      s->nlayers);
    sc__graph *ng = NULL;
    uint32_t *origin = NULL;
    if (st == SC_OK) {
        sc__rewrite_spec spec = {s->task_layer, s->task_phase, s->nlayers, o->layers};
        st = sc__rewrite_repeat(r->g, &spec, &ng, &origin, err);
    }
    if (st != SC_OK) return st;
    size_t n = ng->tasks.len ? ng->tasks.len : 1;
    uint8_t *cls = sc__alloc_array(n, 1);
    int64_t *dur = r->traced_dur ? sc__alloc_array(n, sizeof *dur) : NULL;
    if (!cls || (r->traced_dur && !dur)) {
        free(cls);
        free(origin);
        sc__graph_free(ng);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    for (size_t i = 0; i < ng->tasks.len; i++) {
        cls[i] = r->cls[origin[i]];
        if (dur) dur[i] = r->traced_dur[origin[i]];
    }
    free(origin);
    sc__replay_adopt_graph(r, ng, cls, dur);
    pd->pub.predicted_layers = o->layers;
    return SC_OK;
}

/* The communication models of the graph before --tp / --pp change its
 * collectives: fitted to them, the traced profile's, and the efficiency
 * of the one against the other. */
static sc_status comm_before(const sc__graph *g, struct sc__prediction *pd, sc_error *err) {
    sc_status st = traced_model(g, &pd->tj, true, &pd->fit, &pd->pre_fit, err);
    if (st == SC_OK) st = traced_model(g, &pd->tj, false, NULL, &pd->pre_prof, err);
    if (st != SC_OK) return st;
    sc__retime_efficiency(g, &pd->pre_prof, pd->pre_factor);
    pd->have_pre = true;
    return SC_OK;
}

/* --tp, --pp (predict_parallel.c), and what they make of the job. */
static sc_status edit_parallel(sc_replay *r, const sc_predict_options *o, const shape_ctx *sx,
                               struct sc__prediction *pd, sc_error *err) {
    if (o->replay.comm == SC_COMM_TRACED)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--tp and --pp re-time collectives: they cannot take --comm traced");
    sc_status st = comm_before(r->g, pd, err);
    const sc__model *m = pd->have_model ? &pd->model : NULL;
    /* the records' shapes are the traced ones, or the shape edit's result */
    const sc__shape_edit *pre = sx && shape_edits(o) ? &sx->edit : NULL;
    const sc_model_dims *dims = !sx ? NULL : pre && pre->changes ? &sx->edit.to : &sx->edit.from;
    if (st == SC_OK && o->tp)
        st = sc__predict_tp(r, o, m, sx ? sx->recs : NULL, sx ? &sx->model : NULL, pre, dims, &pd->par, err);
    if (st != SC_OK) return st;
    /* the trace's one communicator is the tensor-parallel one, not data-parallel */
    if (pd->par.tp_comm != SC__NONE && pd->par.tp_comm == pd->tj.dp_comm) {
        pd->tj.dp_comm = SC__NONE;
        pd->tj.shape.dp = 1;
    }
    if (o->pp) st = sc__predict_pp(r, o, m, &pd->pre_fit, pd->tj.shape.gpus_per_node, &pd->par, err);
    if (st != SC_OK) return st;
    bool tp = o->tp && pd->par.tp_from;
    pd->tj.mp_num = (tp ? o->tp : 1) * (o->pp ? o->pp : 1);
    pd->tj.mp_den = tp ? pd->par.tp_from : 1;
    sc_prediction *p = &pd->pub;
    p->traced_tp = pd->par.tp_from;
    p->predicted_tp = o->tp;
    p->tp_sharded = pd->par.sharded;
    p->tp_replicated = pd->par.replicated;
    p->tp_modelled = pd->par.modelled;
    if (o->pp) {
        p->pp = o->pp;
        p->virtual_stages = o->virtual_stages ? o->virtual_stages : 1;
        p->microbatches = o->microbatches ? o->microbatches : 1;
        p->schedule = pd->par.schedule;
        p->p2p_bytes = pd->par.p2p_bytes;
        p->tasks_traced = pd->par.traced_tasks;
        p->tasks_modelled = pd->par.modelled_tasks;
    }
    return SC_OK;
}

/* --model-backward: the modelled backward (predict_backward.c), timed by
 * the cost model fitted to the trace when the kernel records are at hand. */
static sc_status model_backward(sc_replay *r, const sc_predict_options *o, const shape_ctx *sx,
                                struct sc__prediction *pd, sc_error *err) {
    sc__bwd_result br;
    int mode = recompute_mode(o);
    sc_status st = sc__predict_backward(r, sx ? sx->recs : NULL, sx ? &sx->model : &pd->bwd_model,
                                        sx && shape_edits(o) ? &sx->edit : NULL, mode, &br, err);
    if (st != SC_OK) return st;
    sc_prediction *p = &pd->pub;
    p->backward_modelled = o->model_backward ? 1 : mode ? 3 : 2;
    p->recompute = mode == SC__RECOMPUTE_FULL ? "full" : mode ? "selective" : NULL;
    p->backward_tasks_recomputed = br.recomputed;
    p->backward_tasks_traced = br.traced;
    p->backward_tasks_modelled = br.modelled;
    p->backward_tasks_dropped = br.dropped;
    p->backward_kernels_shaped = br.shaped;
    p->backward_kernels_unshaped = br.unshaped;
    return SC_OK;
}

/* bwd: model a backward (--model-backward, --recompute, or --pp on a
 * forward-only trace: a pipeline needs one). */
static sc_status predict_graph(sc__graph *g, const sc_traceset *set, const sc_predict_options *o,
                               const sc__scale_rule *rules, shape_ctx *sx, const sc__model *model,
                               sc__structure *pre, bool bwd, sc_replay **out, sc_error *err) {
    struct sc__prediction *pd = calloc(1, sizeof *pd);
    sc_status st = pd ? SC_OK : sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    /* fitted to the traced durations, before --scale touches them */
    if (st == SC_OK && sx) st = shape_fit(set, g, sx, err);
    if (st != SC_OK) {
        free(pd);
        sc__graph_free(g);
        return st;
    }
    pd->dp_comm = SC__NONE;
    st = sc__replay_prepare(g, o->replay.comm != SC_COMM_TRACED, true, rules, o->replay.nscales, out, err);
    if (st != SC_OK) {
        free(pd);
        return st;
    }
    (*out)->prediction = pd;
    /* The structure found for the model's dimensions is this graph's:
     * prepare dropped only inferred edges (the structure follows launch
     * edges) and calibrated without touching a task. --scale rules re-time
     * tasks, and the layers are picked by the GPU time they cover: then it
     * is found again when asked. */
    if (pre && pre->task_layer && !o->replay.nscales) sc__replay_structure_give(*out, pre);
    uint32_t *cls = sc__alloc_array((*out)->g->ranks.len ? (*out)->g->ranks.len : 1, sizeof *cls);
    pd->pub.shapes = cls ? sc__rank_classes((*out)->g, cls) : 0;
    free(cls);
    if (!pd->pub.shapes) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    if (st == SC_OK) {
        infer_traced(set, (*out)->g, &pd->tj, pd->traced_gpu, sizeof pd->traced_gpu);
        pd->par.tp_comm = pd->par.pp_comm = SC__NONE;
        if (model) pd->model = *model, pd->have_model = true;
    }
    /* Shapes first: the kernel records are keyed by traced events, which
     * the layer and pipeline copies do not have; the copies then carry the
     * new times. */
    if (st == SC_OK && sx && shape_edits(o)) st = reshape(*out, &pd->tj, sx, pd, err);
    if (st == SC_OK && bwd) st = model_backward(*out, o, sx, pd, err);
    if (st == SC_OK && o->layers) st = edit_layers(*out, o, pd, err);
    if (st == SC_OK && (o->tp || o->pp)) st = edit_parallel(*out, o, sx, pd, err);
    if (st == SC_OK) st = edit(*out, set, o, pd, err);
    if (st == SC_OK) st = sc__replay_sensitivity(*out, set, &o->replay, err);
    if (st == SC_OK) st = sc__replay_finish(*out, set, err);
    if (st != SC_OK) {
        sc_replay_free(*out);
        *out = NULL;
    }
    return st;
}

/* The model's dimensions from the set (its events held) and g, and the
 * structure of g they were read with (s: the caller frees it). */
static sc_status model_dims(const sc_traceset *set, const sc__graph *g, sc__model *m, bool *fwd_only,
                            sc__structure *s, sc_error *err) {
    sc_status st = sc__structure_find(g, s, err);
    if (st != SC_OK) return st;
    *fwd_only = s->nlayers && !s->nbackward;
    sc__structure_dims(set, g, s, m);
    return SC_OK;
}

sc_status sc_predict_run(const sc_traceset *set, const sc_predict_options *opts, sc_replay **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    sc_predict_options defaults = SC_PREDICT_OPTIONS_INIT;
    if (!opts) opts = &defaults;
    if (!set) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "predict: no traces");
    sc_status st = check_options(opts, err);
    if (st != SC_OK) return st;
    sc__scale_rule *rules;
    if ((st = sc__replay_parse_scales(&opts->replay, &rules, err)) != SC_OK) return st;
    sc__hta_held hta; /* of the measured traces, before the build releases them */
    if ((st = sc__replay_hta_before(set, &opts->replay, &hta, err)) != SC_OK) {
        free(rules);
        return st;
    }
    shape_ctx sx = {0};
    /* the modelled backward times kernels from their shapes too (--pp
     * turns it on for a forward-only trace, known once the graph is built) */
    bool ask = opts->model_backward || recompute_mode(opts) > 0;
    bool kineto = true, bwd = ask || opts->pp;
    for (size_t i = 0; i < set->count; i++) kineto = kineto && set->traces[i]->format == SC__FMT_KINETO;
    if ((shape_edits(opts) || ((bwd || opts->tp) && kineto)) && (st = shape_prepare(set, opts, &sx, err)) != SC_OK) {
        sc__kernels_free_recs(sx.recs, sx.nrecs);
        sc__replay_hta_attach(NULL, &hta);
        free(rules);
        return st;
    }
    double t0 = sc__now();
    sc__graph *g;
    sc_replay_options ro = opts->replay;
    bool dims = opts->tp || opts->pp; /* the model's dimensions, read off the traces' shapes */
    if (dims) ro.graph.release_traces = 0;
    st = sc__replay_build(set, &ro, &g, err);
    double build = sc__now() - t0;
    sc__model model;
    sc__structure pre = {0}; /* g's, read for the dimensions; handed to the replay */
    bool fwd_only = false;
    if (st == SC_OK && dims && (st = model_dims(set, g, &model, &fwd_only, &pre, err)) != SC_OK) sc__graph_free(g);
    else if (st == SC_OK)
        st = predict_graph(g, set, opts, rules, sx.recs ? &sx : NULL, dims ? &model : NULL, &pre,
                           ask || (opts->pp && fwd_only), out, err);
    sc__structure_free(&pre);
    sc__kernels_free_recs(sx.recs, sx.nrecs);
    free(rules);
    if (st == SC_OK) (*out)->timings.build = build;
    sc__replay_hta_attach(*out, &hta);
    return st;
}

const sc_prediction *sc_replay_prediction(const sc_replay *r) { return r && r->prediction ? &r->prediction->pub : NULL; }

void sc__prediction_free(struct sc__prediction *pd) {
    if (pd) free(pd->fit.in);
    free(pd);
}

uint32_t sc__replay_group_ranks(const sc_replay *r, const sc__group *grp) {
    const struct sc__prediction *pd = r->prediction;
    if (pd && pd->dp_comm != SC__NONE && grp->comm == pd->dp_comm) return pd->dp;
    return grp->comm_ranks > grp->count ? grp->comm_ranks : grp->count;
}
