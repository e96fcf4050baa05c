/*
 * reports.h - what the fuzz targets run on a trace they could load: each
 * stage the CLI runs (info, graph, replay) and its report, to /dev/null.
 * Errors are fine (hostile input); crashes, leaks and hangs are not.
 */
#ifndef SC_FUZZ_REPORTS_H
#define SC_FUZZ_REPORTS_H

#include "stepcast.h"

static inline void fuzz_info(const sc_traceset *set, FILE *out, int json) {
    sc_error err;
    sc_info *info;
    if (sc_info_of_set(set, &info, &err) == SC_OK) sc_info_write(info, out, json, &err);
    sc_info_free(info);
}

static inline void fuzz_graph(const sc_traceset *set, FILE *out, int json) {
    sc_error err;
    sc_graph *g;
    if (sc_graph_build(set, NULL, &g, &err) == SC_OK) sc_graph_write(g, out, json, &err);
    sc_graph_free(g);
}

static inline void fuzz_replay(const sc_traceset *set, FILE *out, int json) {
    sc_error err;
    sc_replay *r;
    if (sc_replay_run(set, NULL, &r, &err) == SC_OK) sc_replay_write(r, out, json, &err);
    sc_replay_free(r);
}

#endif /* SC_FUZZ_REPORTS_H */
