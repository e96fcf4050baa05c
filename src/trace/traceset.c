/*
 * traceset.c - a job's traces once loaded: one sc_trace per rank, in rank
 * order, with the warnings the load raised. Loading (finding the files,
 * telling formats apart, reading in parallel) is the readers' work
 * (src/readers/traceset_load.c); this file owns the container.
 */
#include "trace.h"

#include <stdlib.h>

void sc_traceset_free(sc_traceset *set) {
    if (!set) return;
    for (size_t i = 0; i < set->count; i++) sc_trace_free(set->traces[i]);
    free(set->traces);
    sc__warnings_free(&set->warnings);
    if (set->progress_owned) sc__progress_free(set->progress);
    free(set);
}

uint64_t sc__traceset_memory(const sc_traceset *set) {
    uint64_t bytes = 0;
    for (size_t i = 0; set && i < set->count; i++) bytes += sc_trace_memory(set->traces[i]);
    return bytes;
}

size_t sc_traceset_count(const sc_traceset *set) { return set ? set->count : 0; }
const sc_trace *sc_traceset_trace(const sc_traceset *set, size_t i) {
    return set && i < set->count ? set->traces[i] : NULL;
}
size_t sc_traceset_warning_count(const sc_traceset *set) { return set ? set->warnings.count : 0; }
const char *sc_traceset_warning(const sc_traceset *set, size_t i) {
    return set && i < set->warnings.count ? set->warnings.items[i] : NULL;
}
size_t sc_traceset_warning_group_count(const sc_traceset *set) { return set ? set->warnings.ngroups : 0; }
sc_status sc_traceset_warning_group_at(const sc_traceset *set, size_t i, sc_warning_group *out, sc_error *err) {
    return sc__warnings_group_at(set ? &set->warnings : NULL, i, out, err);
}
