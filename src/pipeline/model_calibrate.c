/*
 * model_calibrate.c - `stepcast model --calibrate TRACE...`: the model's
 * parameters measured on a real trace (any model, same GPU family) instead
 * of the profile's defaults. From the last ProfilerStep of each Kineto
 * trace of the set:
 *
 *   host per launch   the CPU time of the threads that launched GPU work
 *                     (the time one of them is busy in the step, waits in
 *                     *Synchronize calls taken out) over the GPU tasks they
 *                     launched; and the launch calls' own time (reported);
 *   launches/kernel   the launches the step made over those the model's
 *                     program makes for the trace's own layer count (found
 *                     by `stepcast structure`): an eager framework launches
 *                     casts, bias adds and optimizer chunks the model's fused
 *                     kernels stand for, and each of the model's launches
 *                     carries the host time of that many;
 *   GEMM efficiency   the bf16/fp16 GEMM kernels launched inside aten::mm,
 *                     addmm, bmm, baddbmm, their shapes from the op's "Input
 *                     Dims": sum of 2 b m n k / shape factor over their
 *                     traced time, over the dense peak (the roofline's
 *                     shape factor kept);
 *   HBM efficiency    elementwise and norm ops (add, mul, gelu, layer norm,
 *                     copy) whose kernels run 20 us or more: bytes from
 *                     their "Input Dims"/"Input type" (inputs read, the first
 *                     written again; copy_: both once) over time;
 *   dispatch gap,     the replay's own calibration (calibrate.c) of the same
 *   launch latency    traces, the mean over ranks;
 *   communication     the replay's sized collectives as samples for
 *                     sc__comm_model_fit, applied to each communicator.
 * What the trace lacks keeps the profile's value, and the report says
 * which parameter came from where.
 */
#include "model.h"

#include "../graph/build.h"
#include "../trace/trace.h"
#include "../transforms/retime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_MIN_NS 20000

typedef struct span {
    uint32_t track;
    int64_t ts, end;
} span;

typedef struct launch {
    int64_t corr, ts, dur;
    uint32_t track;
} launch;

/* An op whose kernels are measured: a GEMM (flops over the shape factor) or
 * a memory-bound op (bytes). */
typedef struct meas_op {
    uint32_t track;
    int64_t ts, end;
    double work; /* shaped FLOPs or bytes */
    int64_t gpu_ns, longest;
    uint8_t gemm;
} meas_op;

static int cmp_span(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}
static int cmp_launch(const void *a, const void *b) {
    const launch *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}
static int cmp_op(const void *a, const void *b) {
    const meas_op *x = a, *y = b;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* ------------------------------------------------------------ shapes */

#define MAXA 8
typedef struct argdims {
    int n;
    int rank[MAXA]; /* -1: not a plain tensor */
    int64_t d[MAXA][4];
    int esize[MAXA]; /* bytes per element, 0: not a tensor */
} argdims;

static void parse_dims(const char *s, argdims *a) {
    int depth = 0, arg = -1;
    for (; *s; s++) {
        if (*s == '[') {
            if (++depth == 2 && ++arg < MAXA) a->n = arg + 1;
            if (depth == 3 && arg >= 0 && arg < MAXA) a->rank[arg] = -1;
        } else if (*s == ']') {
            depth--;
        } else if (*s >= '0' && *s <= '9' && depth == 2 && arg >= 0 && arg < MAXA && a->rank[arg] >= 0) {
            int64_t v = 0;
            while (*s >= '0' && *s <= '9' && v < INT64_MAX / 10) v = v * 10 + (*s++ - '0');
            s--;
            if (a->rank[arg] < 4) a->d[arg][a->rank[arg]] = v;
            a->rank[arg]++;
        }
    }
}

static int type_size(const char *t, size_t n) {
    static const struct {
        const char *name;
        int size;
    } sz[] = {{"c10::BFloat16", 2}, {"c10::Half", 2}, {"float", 4}, {"double", 8}, {"long int", 8}, {"int", 4},
              {"bool", 1}, {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1}};
    for (size_t i = 0; i < sizeof sz / sizeof *sz; i++)
        if (strlen(sz[i].name) == n && strncmp(t, sz[i].name, n) == 0) return sz[i].size;
    return 0;
}

static void parse_types(const char *s, argdims *a) {
    int arg = 0;
    while (*s && arg < MAXA) {
        const char *q = strchr(s, '"');
        if (!q) break;
        const char *e = strchr(q + 1, '"');
        if (!e) break;
        a->esize[arg++] = type_size(q + 1, (size_t)(e - q - 1));
        s = e + 1;
    }
}

static double numel(const argdims *a, int i) {
    if (i >= a->n || a->rank[i] < 0 || a->rank[i] > 4) return 0;
    double x = 1;
    for (int k = 0; k < a->rank[i]; k++) x *= (double)a->d[i][k];
    return x;
}

/* A GEMM op's shaped FLOPs (0 when not one, or not 16-bit). */
static double gemm_work(const sc__roofline *r, const char *name, const argdims *a) {
    int x = -1, y = -1;
    bool batched = false;
    if (!strcmp(name, "aten::mm")) x = 0, y = 1;
    else if (!strcmp(name, "aten::addmm")) x = 1, y = 2;
    else if (!strcmp(name, "aten::bmm")) x = 0, y = 1, batched = true;
    else if (!strcmp(name, "aten::baddbmm")) x = 1, y = 2, batched = true;
    if (x < 0 || a->n <= y || a->esize[x] != 2) return 0;
    int rk = batched ? 3 : 2;
    if (a->rank[x] != rk || a->rank[y] != rk) return 0;
    int o = batched ? 1 : 0;
    uint64_t b = batched ? (uint64_t)a->d[x][0] : 1, m = (uint64_t)a->d[x][o], k = (uint64_t)a->d[x][o + 1],
             n = (uint64_t)a->d[y][o + 1];
    if ((uint64_t)a->d[y][o] != k || !m || !n || !k) return 0;
    return 2.0 * (double)b * (double)m * (double)n * (double)k / sc__roofline_gemm_shape(r, SC__DT_BF16, m, n, k);
}

/* A memory-bound op's bytes (0 when not one of the ops measured). */
static double mem_work(const char *name, const argdims *a) {
    static const char *const ops[] = {"aten::add", "aten::add_", "aten::mul", "aten::mul_", "aten::gelu",
                                      "aten::gelu_backward", "aten::native_layer_norm", "aten::copy_", NULL};
    int i = 0;
    while (ops[i] && strcmp(ops[i], name) != 0) i++;
    if (!ops[i] || !a->n) return 0;
    double bytes = 0;
    for (int k = 0; k < a->n; k++) bytes += numel(a, k) * a->esize[k];
    if (strcmp(name, "aten::copy_") != 0) bytes += numel(a, 0) * a->esize[0];
    return bytes;
}

/* ------------------------------------------------------------ the scan */

/* The last ProfilerStep#N annotation (NULL: none). */
static const sc__event *last_step(const sc_trace *tr) {
    const sc__event *ev = sc__trace_events(tr), *best = NULL;
    for (size_t i = 0; i < tr->events.len; i++)
        if (ev[i].kind == SC_K_USER_ANNOTATION && ev[i].dur > 0 &&
            sc__starts_with(sc__trace_str(tr, ev[i].name), "ProfilerStep#") && (!best || ev[i].ts > best->ts))
            best = &ev[i];
    return best;
}

/* The time at least one launching thread is busy in [t0, t1]: the union
 * of their spans (the main thread waits inside backward() while the
 * autograd thread launches, so their sum would count that twice). */
static int64_t busy_union(span *s, size_t n, int64_t t0, int64_t t1, const bool *launching, uint32_t ntracks) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].track < ntracks && launching[s[i].track]) s[k++] = (span){.track = 0, .ts = s[i].ts, .end = s[i].end};
    qsort(s, k, sizeof *s, cmp_span);
    int64_t total = 0, cur_end = INT64_MIN;
    for (size_t i = 0; i < k; i++) {
        int64_t a = s[i].ts < t0 ? t0 : s[i].ts, b = s[i].end > t1 ? t1 : s[i].end;
        if (a < cur_end) a = cur_end;
        if (b > a) total += b - a, cur_end = b;
    }
    return total;
}

typedef struct scan_acc {
    uint64_t launches;
    int64_t host_ns, launch_api_ns, gpu_ns, step_ns, sync_ns;
    double gemm_work, mem_work;
    int64_t gemm_ns, mem_ns;
    uint64_t gemm_ops, mem_ops;
} scan_acc;

/* The op of ops (sorted) whose interval on track holds ts, or NULL. */
static meas_op *op_at(meas_op *ops, size_t n, uint32_t track, int64_t ts) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ops[mid].track < track || (ops[mid].track == track && ops[mid].ts <= ts)) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NULL;
    meas_op *o = &ops[lo - 1];
    return o->track == track && ts <= o->end ? o : NULL;
}

static bool scan_trace(const sc_trace *tr, const sc__roofline *roof, scan_acc *acc) {
    const sc__event *st = last_step(tr);
    if (!st) return true;
    int64_t t0 = st->ts, t1 = st->ts + st->dur;
    const sc__event *ev = sc__trace_events(tr);
    size_t ne = tr->events.len;
    uint32_t ntracks = (uint32_t)tr->tracks.len;
    span *spans = sc__alloc_array(ne ? ne : 1, sizeof *spans);
    launch *ls = sc__alloc_array(ne ? ne : 1, sizeof *ls);
    meas_op *ops = sc__alloc_array(ne ? ne : 1, sizeof *ops);
    bool *launching = calloc(ntracks ? ntracks : 1, sizeof *launching);
    if (!spans || !ls || !ops || !launching) {
        free(spans), free(ls), free(ops), free(launching);
        return false;
    }
    size_t ns = 0, nl = 0, no = 0;
    for (size_t i = 0; i < ne; i++) {
        const sc__event *e = &ev[i];
        if (e->ts < t0 || e->ts > t1 || e->ph != 'X') continue;
        bool host = e->kind == SC_K_CPU_OP || e->kind == SC_K_USER_ANNOTATION || e->kind == SC_K_RUNTIME ||
                    e->kind == SC_K_DRIVER || e->kind == SC_K_PYTHON;
        if (!host) continue;
        const char *name = sc__trace_str(tr, e->name);
        sc__call_class call = e->kind == SC_K_RUNTIME ? sc__call_classify(name) : SC_CALL_OTHER;
        if (call == SC_CALL_SYNC_STREAM || call == SC_CALL_SYNC_DEVICE || call == SC_CALL_SYNC_EVENT) {
            acc->sync_ns += e->dur;
            continue; /* a wait, not CPU work */
        }
        spans[ns++] = (span){.track = e->track, .ts = e->ts, .end = e->ts + e->dur};
        if ((e->kind == SC_K_RUNTIME || e->kind == SC_K_DRIVER) && e->correlation >= 0 && sc__call_classify(name) == SC_CALL_LAUNCH)
            ls[nl++] = (launch){.corr = e->correlation, .ts = e->ts, .dur = e->dur, .track = e->track};
        const sc__event_shapes *sh = e->kind == SC_K_CPU_OP ? sc__trace_shapes(tr, e) : NULL;
        if (!sh || sh->dims == SC__NONE || sh->types == SC__NONE) continue;
        argdims a;
        memset(&a, 0, sizeof a);
        parse_dims(sc__trace_str(tr, sh->dims), &a);
        parse_types(sc__trace_str(tr, sh->types), &a);
        double g = gemm_work(roof, name, &a), m = g > 0 ? 0 : mem_work(name, &a);
        if (g > 0 || m > 0)
            ops[no++] = (meas_op){.track = e->track, .ts = e->ts, .end = e->ts + e->dur, .work = g > 0 ? g : m, .gemm = g > 0};
    }
    qsort(ls, nl, sizeof *ls, cmp_launch);
    qsort(ops, no, sizeof *ops, cmp_op);
    for (size_t i = 0; i < ne; i++) {
        const sc__event *e = &ev[i];
        if ((e->kind != SC_K_KERNEL && e->kind != SC_K_MEMCPY && e->kind != SC_K_MEMSET) || e->correlation < 0) continue;
        launch key = {.corr = e->correlation};
        const launch *l = bsearch(&key, ls, nl, sizeof *ls, cmp_launch);
        if (!l) continue;
        acc->launches++;
        acc->launch_api_ns += l->dur;
        acc->gpu_ns += e->dur;
        if (l->track < ntracks) launching[l->track] = true;
        meas_op *o = e->kind == SC_K_KERNEL ? op_at(ops, no, l->track, l->ts) : NULL;
        if (o) {
            o->gpu_ns += e->dur;
            if (e->dur > o->longest) o->longest = e->dur;
        }
    }
    for (size_t i = 0; i < no; i++) {
        const meas_op *o = &ops[i];
        if (!o->gpu_ns) continue;
        if (o->gemm) {
            acc->gemm_work += o->work, acc->gemm_ns += o->gpu_ns, acc->gemm_ops++;
        } else if (o->longest >= MEM_MIN_NS) {
            acc->mem_work += o->work, acc->mem_ns += o->gpu_ns, acc->mem_ops++;
        }
    }
    acc->host_ns += busy_union(spans, ns, t0, t1, launching, ntracks);
    acc->step_ns += st->dur;
    free(spans), free(ls), free(ops), free(launching);
    return true;
}

/* Kernel launches of the model's program for a 1-GPU job of `layers`
 * layers (the sizes do not change the count). */
static uint64_t modelled_launches(uint32_t layers, uint32_t tp) {
    sc__tf_config c;
    sc__tf_defaults(&c);
    c.layers = layers;
    c.hidden = 1024, c.heads = 16, c.vocab = 1024, c.seq = 1024, c.tp = tp ? tp : 1;
    c.gpus_per_node = c.tp, c.nodes = 1;
    char why[128];
    if (!sc__tf_resolve(&c, why, sizeof why)) return 0;
    sc__vec v;
    sc__vec_init(&v, sizeof(sc__tf_op));
    uint64_t n = 0;
    for (int ph = SC__PH_FWD; ph <= SC__PH_RECOMPUTE; ph++) {
        v.len = 0;
        if (!sc__tf_layer_ops(&c, (sc__tf_phase)ph, &v)) break;
        n += (uint64_t)v.len * layers;
    }
    for (int ph = SC__PH_FWD; ph <= SC__PH_BWD; ph++) {
        v.len = 0;
        if (sc__tf_embed_ops(&c, (sc__tf_phase)ph, &v)) n += v.len;
        v.len = 0;
        if (sc__tf_head_ops(&c, (sc__tf_phase)ph, &v)) n += v.len;
    }
    v.len = 0;
    if (sc__tf_optimizer_ops(&c, 1e6, 0, &v)) n += v.len;
    sc__vec_free(&v);
    return n;
}

/* Dispatch gap, launch latency and the collectives, from a replay. */
static sc_status from_replay(const sc_traceset *set, sc__model_calib *k, sc_error *err) {
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r;
    sc_status st = sc_replay_run(set, &o, &r, err);
    if (st != SC_OK) return st;
    size_t nr = r->g->ranks.len;
    int64_t gap = 0, lat = 0;
    for (size_t i = 0; i < nr; i++) gap += r->dispatch_gap[i], lat += r->launch_latency[i];
    if (nr) {
        k->dispatch_gap_ns = gap / (int64_t)nr;
        k->launch_latency_ns = lat / (int64_t)nr;
        k->gap = true;
    }
    size_t n = 0;
    sc__comm_sample *s = sc__retime_samples(r->g, &n);
    sc_replay_free(r);
    if (n && !s) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    free(k->samples);
    k->samples = s;
    k->nsamples = s ? n : 0;
    return SC_OK;
}

sc_status sc__model_calibrate(const char *const *paths, size_t n, sc__model_calib *k, sc_error *err) {
    free(k->samples);
    memset(k, 0, sizeof *k);
    sc_load_options lo;
    memset(&lo, 0, sizeof lo);
    sc_traceset *set;
    sc_status st = sc_traceset_load(paths, n, &lo, &set, err);
    if (st != SC_OK) return st;
    /* The shape factor is the same for every GPU: any roofline's serves. */
    sc__roofline roof;
    const sc__hw_profile *any = sc__hw_find("h100");
    if (any) sc__roofline_init(&roof, any);
    scan_acc acc;
    memset(&acc, 0, sizeof acc);
    for (size_t i = 0; i < set->count && any; i++) {
        const sc_trace *tr = set->traces[i];
        if (tr->format != SC__FMT_KINETO) continue;
        if (!scan_trace(tr, &roof, &acc)) {
            sc_traceset_free(set);
            return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        }
        k->ranks++;
    }
    if (!acc.launches) {
        sc_traceset_free(set);
        return sc__fail(err, SC_E_USAGE, paths[0], SC_NO_OFFSET,
                        "--calibrate: no ProfilerStep with launched GPU work in the trace (a Kineto trace of a training step is needed)");
    }
    sc_structure_options so = SC_STRUCTURE_OPTIONS_INIT;
    sc_structure *s = NULL;
    uint32_t layers = 0, tp = 1;
    if (sc_structure_run(set, &so, &s, err) == SC_OK) {
        sc_structure_summary ss = sc_structure_get(s);
        layers = ss.layers;
        tp = ss.tp.value > 0 ? (uint32_t)ss.tp.value : 1;
    }
    sc_structure_free(s);
    sc__error_clear(err);
    k->traced_launches = acc.launches / k->ranks;
    k->traced_layers = layers;
    k->host_per_traced_us = (double)acc.host_ns / (double)acc.launches * 1e-3;
    k->launch_api_us = (double)acc.launch_api_ns / (double)acc.launches * 1e-3;
    k->traced_step_ms = (double)acc.step_ns / k->ranks * 1e-6;
    k->traced_gpu_ms = (double)acc.gpu_ns / k->ranks * 1e-6;
    k->traced_host_ms = (double)acc.host_ns / k->ranks * 1e-6;
    k->modelled_launches = layers ? modelled_launches(layers, tp) : 0;
    k->launches_per_kernel = k->modelled_launches ? (double)k->traced_launches / (double)k->modelled_launches : 1.0;
    k->host_us = k->host_per_traced_us * k->launches_per_kernel;
    k->host = true;
    if (acc.gemm_ns > 0) {
        k->gemm = true;
        k->gemm_work = acc.gemm_work, k->gemm_ns = acc.gemm_ns, k->gemm_ops = acc.gemm_ops;
    }
    if (acc.mem_ns > 0) {
        k->mem = true;
        k->mem_bytes = acc.mem_work, k->mem_ns = acc.mem_ns, k->mem_ops = acc.mem_ops;
    }
    snprintf(k->trace, sizeof k->trace, "%s%s", paths[0], n > 1 ? " ..." : "");
    st = from_replay(set, k, err);
    sc_traceset_free(set);
    return st;
}

void sc__model_calib_free(sc__model_calib *k) {
    free(k->samples);
    k->samples = NULL;
    k->nsamples = 0;
}

bool sc__model_calib_copy(sc__model_calib *dst, const sc__model_calib *src) {
    *dst = *src;
    dst->samples = NULL;
    if (!src->nsamples) return true;
    dst->samples = sc__alloc_array(src->nsamples, sizeof *src->samples);
    if (!dst->samples) return false;
    memcpy(dst->samples, src->samples, src->nsamples * sizeof *src->samples);
    return true;
}
