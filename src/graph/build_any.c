/*
 * build_any.c - one graph entry point for every input format.
 *
 * A trace set holds Kineto traces or Chakra ranks (traceset.c tells them
 * apart by content). Commands call sc__graph_build() and never care which:
 * this is what makes "every command that takes traces also takes Chakra .et
 * files" true. The format-specific builders stay separate (build.c for
 * Kineto, src/readers/chakra.c for Chakra).
 */
#include "../trace/trace.h"
#include "../trace/job_check.h"
#include "graph.h"

sc_status sc__graph_build(const sc_traceset *set, const sc__build_options *opts, sc__graph **out,
                          sc_error *err) {
    *out = NULL;
    if (!set || set->count == 0)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no traces to build a graph from");
    size_t chakra = 0;
    for (size_t i = 0; i < set->count; i++) chakra += set->traces[i]->format == SC__FMT_CHAKRA;
    if (chakra == 0) return sc__graph_build_kineto(set, opts, out, err);
    if (chakra == set->count) {
        /* Duplicate or out-of-range ranks are errors here too (issue 6); the
         * Kineto builder runs the same check itself, with its warnings. */
        sc_status st = sc__traceset_check_job(set, NULL, NULL, err);
        if (st != SC_OK) return st;
        return sc__graph_build_chakra(set, out, err);
    }
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                    "the inputs mix %zu Chakra files with %zu Kineto traces; give one kind", chakra,
                    set->count - chakra);
}
