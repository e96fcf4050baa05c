/*
 * kernels.c - `stepcast kernels`: the kernel cost model (models/
 * kernel_cost.c) against a trace's own kernels.
 *
 * Every trace's GPU events are linked to their enqueuing operators and
 * shaped (kernel_shapes.c) while the events are at hand; the graph of the
 * chosen iteration (built as `graph` builds it) says which of them the
 * iteration holds, and each GPU task finds its record by its event. The
 * model starts from the GPU's profile (the defaults, "before") and is
 * fitted per class to the iteration's kernels ("after"); each class gets
 * its count, traced time, how many have shapes, and the median
 * |model - traced| / traced before and after. predict's shape edits reuse
 * the records and the fit.
 */
#include "kernels.h"

#include "../trace/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

bool sc__kernels_collect(const sc_traceset *set, sc__krecs **recs) {
    *recs = calloc(set->count ? set->count : 1, sizeof **recs);
    if (!*recs) return false;
    for (size_t i = 0; i < set->count; i++)
        if (set->traces[i]->format == SC__FMT_KINETO && !sc__krecs_collect(set->traces[i], &(*recs)[i])) {
            sc__kernels_free_recs(*recs, set->count);
            *recs = NULL;
            return false;
        }
    return true;
}

void sc__kernels_free_recs(sc__krecs *recs, size_t n) {
    for (size_t i = 0; recs && i < n; i++) sc__krecs_free(&recs[i]);
    free(recs);
}

/* The shaped GPU tasks of g: their shapes and traced durations. */
static size_t shaped_tasks(const sc__graph *g, const sc__krecs *recs, sc__kshape *k, int64_t *ns) {
    size_t n = 0;
    const sc__task *tasks = sc__graph_tasks(g);
    for (uint32_t i = 0; i < g->tasks.len; i++) {
        const sc__krec *r = sc__krecs_task(g, recs, i);
        if (!r || r->shape.form == SC__KF_NONE || r->shape.cls >= SC__KC_COLLECTIVE) continue;
        k[n] = r->shape;
        ns[n++] = tasks[i].dur;
    }
    return n;
}

bool sc__kernels_fit(sc__kcost_model *m, const sc__graph *g, const sc__krecs *recs) {
    size_t cap = g->tasks.len ? g->tasks.len : 1;
    sc__kshape *k = sc__alloc_array(cap, sizeof *k);
    int64_t *ns = sc__alloc_array(cap, sizeof *ns);
    bool ok = k && ns;
    size_t n = ok ? shaped_tasks(g, recs, k, ns) : 0;
    for (uint8_t c = 0; ok && c < SC__KC_COLLECTIVE; c++) sc__kcost_fit(m, c, k, ns, n, &ok);
    free(k);
    free(ns);
    return ok;
}

sc_status sc__kernels_profile(const sc_traceset *set, const char *gpu, const char *profile_path,
                              sc__hw_profile *file, const sc__hw_profile **out, sc_error *err) {
    *out = NULL;
    if (gpu && profile_path) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "give --gpu or --profile, not both");
    if (profile_path) {
        sc_status st = sc__hw_load(profile_path, file, err);
        if (st == SC_OK) *out = file;
        return st;
    }
    const char *name = gpu;
    if (!name && set && set->count) name = sc__trace_gpu_name(set->traces[0]);
    if (name && *name && (*out = sc__hw_find(name))) return SC_OK;
    char known[512];
    size_t len = 0;
    for (size_t i = 0; i < sc__hw_count(); i++) {
        int w = snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", sc__hw_alias(i));
        if (w > 0 && (size_t)w < sizeof known - len) len += (size_t)w;
    }
    if (gpu) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "unknown GPU '%s' (known: %s)", gpu, known);
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                    "the traces' GPU '%s' has no hardware profile: give --gpu NAME (%s) or --profile FILE",
                    name && *name ? name : "(none named)", known);
}

/* ------------------------------------------------------------ the rows */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
    if (!n) return -1;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Row c's counts and its median errors under both models. */
static void class_row(sc_kernels *k, const sc__graph *g, const sc__krecs *recs, uint8_t c, double *eb, double *ea) {
    sc_kernel_class *row = &k->rows[c];
    const sc__task *tasks = sc__graph_tasks(g);
    size_t n = 0;
    for (uint32_t i = 0; i < g->tasks.len; i++) {
        const sc__krec *r = sc__krecs_task(g, recs, i);
        if (!r || r->shape.cls != c) continue;
        row->count++;
        row->traced_us += (double)tasks[i].dur / 1e3;
        double b = sc__kcost_time_ns(&k->before, &r->shape), a = sc__kcost_time_ns(&k->after, &r->shape);
        if (b < 0 || a < 0 || tasks[i].dur <= 0) continue;
        row->with_shapes++;
        eb[n] = 100 * fabs(b - (double)tasks[i].dur) / (double)tasks[i].dur;
        ea[n++] = 100 * fabs(a - (double)tasks[i].dur) / (double)tasks[i].dur;
    }
    row->error_before_pct = median(eb, n);
    row->error_after_pct = median(ea, n);
    const sc__kclass_params *p = &k->after.cls[c];
    row->fitted = p->fitted;
    row->eff = p->eff;
    row->edge = p->edge;
    row->mem_eff = c < SC__KC_COLLECTIVE ? p->mem_eff : 0;
    row->floor_us = c < SC__KC_COLLECTIVE ? p->floor_ns / 1e3 : 0;
}

static sc_status run(sc_kernels *k, const sc_traceset *set, const sc_kernels_options *o, sc_error *err) {
    sc__hw_profile file;
    const sc__hw_profile *p;
    sc_status st = sc__kernels_profile(set, o->gpu, o->profile_path, &file, &p, err);
    if (st != SC_OK) return st;
    sc__kcost_defaults(p, &k->before);
    k->after = k->before;
    sc__krecs *recs;
    if (!sc__kernels_collect(set, &recs)) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    sc__build_options bo = {.iteration = o->graph.iteration, .hide_cuda_sync = o->graph.hide_cuda_sync != 0};
    sc__graph *g;
    st = sc__graph_build(set, &bo, &g, NULL, err);
    if (st != SC_OK) {
        sc__kernels_free_recs(recs, set->count);
        return st;
    }
    if (set->count) sc__model_dims_infer(recs[0].recs, recs[0].n, &k->dims);
    size_t cap = g->tasks.len ? g->tasks.len : 1;
    double *eb = sc__alloc_array(cap, sizeof *eb), *ea = sc__alloc_array(cap, sizeof *ea);
    bool ok = eb && ea && sc__kernels_fit(&k->after, g, recs);
    for (uint8_t c = 0; ok && c < SC__KC_COUNT; c++) {
        k->rows[c].name = sc__kclass_name(c);
        class_row(k, g, recs, c, eb, ea);
    }
    free(eb);
    free(ea);
    sc__graph_free(g);
    sc__kernels_free_recs(recs, set->count);
    return ok ? SC_OK : sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory fitting the kernel model");
}

sc_status sc_kernels_run(const sc_traceset *set, const sc_kernels_options *opts, sc_kernels **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    sc_kernels_options defaults = SC_KERNELS_OPTIONS_INIT;
    const sc_kernels_options *o = opts ? opts : &defaults;
    if (!set || !set->count) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "kernels: no traces");
    for (size_t i = 0; i < set->count; i++) {
        sc_status st = sc__trace_check_whole(set->traces[i], err);
        if (st != SC_OK) return st;
        if (set->traces[i]->format != SC__FMT_KINETO)
            return sc__fail(err, SC_E_USAGE, set->traces[i]->path, SC_NO_OFFSET,
                            "kernels needs Kineto traces (operators with shapes); this is a Chakra file");
    }
    sc_kernels *k = calloc(1, sizeof *k);
    if (!k) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    sc_status st = run(k, set, o, err);
    if (st != SC_OK) {
        free(k);
        return st;
    }
    *out = k;
    return SC_OK;
}

void sc_kernels_free(sc_kernels *k) { free(k); }

size_t sc_kernels_class_count(const sc_kernels *k) { return k ? SC__KC_COUNT : 0; }

sc_status sc_kernels_class_at(const sc_kernels *k, size_t i, sc_kernel_class *out, sc_error *err) {
    if (!k || !out || i >= SC__KC_COUNT)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "kernel class %zu out of range", i);
    *out = k->rows[i];
    return SC_OK;
}

const char *sc_kernels_gpu(const sc_kernels *k) { return k ? k->before.gpu : ""; }
double sc_kernels_gemm_ceiling(const sc_kernels *k) { return k ? k->before.gemm_ceiling : 0; }

sc_model_dims sc_kernels_dims(const sc_kernels *k) {
    sc_model_dims d;
    memset(&d, 0, sizeof d);
    return k ? k->dims : d;
}
