/*
 * testgraph.h - graphs built by hand in the tests, through the internal
 * graph API (src/graph/graph.h): one task at a time, with the fields a
 * builder would set and every optional link absent. Include after
 * testutil.h (cmocka).
 */
#ifndef SC_TESTGRAPH_H
#define SC_TESTGRAPH_H

#include <string.h>

#include "graph/graph.h"

/* Adds a task named `name` of `kind` at seq on processor proc, traced at
 * ts for dur; returns its id (SC__NONE on out-of-memory). */
static inline uint32_t sc_test_task(sc__graph *g, uint32_t proc, uint32_t seq, sc__task_kind kind,
                                    int64_t ts, int64_t dur, const char *name) {
    sc__task t;
    memset(&t, 0, sizeof t);
    t.ts = ts;
    t.dur = dur;
    t.proc = proc;
    t.seq = seq;
    t.name = sc__intern_put(&g->strings, name, strlen(name));
    t.op = t.group = t.event = t.sync_arg = SC__NONE;
    t.kind = (uint8_t)kind;
    return sc__graph_add_task(g, &t);
}

/* A new graph of one rank (0) with one CPU thread, *thread, on it. */
static inline sc__graph *sc_test_graph_one_thread(uint32_t *thread) {
    sc__graph *g = sc__graph_new();
    assert_non_null(g);
    sc__graph_add_rank(g, 0, 0);
    *thread = sc__graph_add_proc(g, 0, SC_P_THREAD, -1, 1);
    return g;
}

/* The first task of g named `name`; SC__NONE when none. */
static inline uint32_t sc_test_task_named(const sc__graph *g, const char *name) {
    const sc__task *t = sc__graph_tasks(g);
    for (uint32_t i = 0; i < g->tasks.len; i++)
        if (strcmp(sc__graph_str(g, t[i].name), name) == 0) return i;
    return SC__NONE;
}

#endif
