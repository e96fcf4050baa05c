/*
 * build_any.c - one graph entry point for every input format.
 *
 * A trace set holds Kineto traces or Chakra ranks (the loader tells them
 * apart by content). Commands call sc__graph_build() and never care which:
 * this is what makes "every command that takes traces also takes Chakra .et
 * files" true. The format-specific builders stay separate (build.c for
 * Kineto, build_chakra.c for Chakra).
 */
#include "../trace/job_check.h"
#include "../trace/trace.h"
#include "graph.h"

/* A Chakra file is one window already: asking it for an iteration would
 * silently build the same graph as not asking, so it is refused. */
static sc_status build_chakra(const sc_traceset *set, const sc__build_options *opts, sc__graph **out,
                              sc__build_stats *stats, sc_error *err) {
    if (stats) memset(stats, 0, sizeof *stats);
    if (opts && opts->iteration >= 0)
        return sc__fail(err, SC_E_USAGE, set->traces[0]->path, SC_NO_OFFSET,
                        "a Chakra execution trace holds one window, not ProfilerStep#%lld: "
                        "no iteration can be chosen in it",
                        (long long)opts->iteration);
    /* Duplicate or out-of-range ranks are errors here too; the Kineto
     * builder runs the same check itself, with its warnings. */
    sc_status st = sc__traceset_check_job(set, NULL, NULL, err);
    if (st != SC_OK) return st;
    return sc__graph_build_chakra(set, out, err);
}

sc_status sc__graph_build(const sc_traceset *set, const sc__build_options *opts, sc__graph **out,
                          sc__build_stats *stats, sc_error *err) {
    *out = NULL;
    if (!set || set->count == 0)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no traces to build a graph from");
    size_t chakra = 0;
    for (size_t i = 0; i < set->count; i++) chakra += set->traces[i]->format == SC__FMT_CHAKRA;
    if (chakra == 0) return sc__graph_build_kineto_stats(set, opts, out, stats, err);
    if (chakra == set->count) return build_chakra(set, opts, out, stats, err);
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                    "the inputs mix %zu Chakra files with %zu Kineto traces; give one kind", chakra,
                    set->count - chakra);
}
