/*
 * kernels.h - what `stepcast kernels` computes, as data (the public
 * sc_kernels): the kernel cost model of a GPU, fitted per class to a
 * trace's kernels, and per class how far it is from them;
 * src/report/kernels_report.c prints it. The fit and the records are
 * shared with predict's shape edits (sc__kernels_fit).
 */
#ifndef SC_PIPELINE_KERNELS_H
#define SC_PIPELINE_KERNELS_H

#include "../graph/graph.h"
#include "../models/kernel_cost.h"
#include "../models/shape_edit.h"

struct sc_kernels {
    sc__kcost_model before, after; /* the profile's defaults; fitted */
    sc_kernel_class rows[SC__KC_COUNT];
    sc__model_dims dims;
};

/* Every trace's records (recs[i] for set->traces[i]); false on OOM. */
bool sc__kernels_collect(const sc_traceset *set, sc__krecs **recs);
void sc__kernels_free_recs(sc__krecs *recs, size_t n);

/* Fits m per class to the GPU tasks of g (their traced durations) that
 * have records; false on OOM. */
bool sc__kernels_fit(sc__kcost_model *m, const sc__graph *g, const sc__krecs *recs);

/* The hardware profile a command names (gpu or profile_path) or the
 * traces' GPU (NULL when neither): into *out, or SC_E_USAGE saying which
 * GPUs are known. file holds a profile read from a file. */
sc_status sc__kernels_profile(const sc_traceset *set, const char *gpu, const char *profile_path,
                              sc__hw_profile *file, const sc__hw_profile **out, sc_error *err);

#endif /* SC_PIPELINE_KERNELS_H */
