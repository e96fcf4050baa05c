/*
 * replay.h - one replay of a job (internal view shared by the replay report,
 * the Chrome timeline writer, the tests and the benchmark).
 *
 * sc__replay_graph() takes a built graph, calibrates it (src/models),
 * applies the --scale rules (src/transforms), simulates it (src/sim) and
 * derives the per-rank figures; sc__replay_write() prints them and
 * sc__chrome_write() draws the timelines.
 */
#ifndef SC_REPLAY_H
#define SC_REPLAY_H

#include "../sim/sim.h"
#include "../transforms/prune.h"
#include "../transforms/scale.h"

#define SC__SM_WINDOW_NS 1000000 /* SM-busy windows of 1 ms */
#define SC__SM_MAX_WINDOWS ((size_t)1 << 24) /* 4.7 h of step; longer is refused (issue 6) */

typedef struct sc__replay_rank {
    int64_t rank;           /* job rank */
    int64_t measured_ns;    /* step_end - step_start (from the builder) */
    int64_t sim_start, sim_end; /* simulated step: start of step_first_task .. last end */
    int64_t exposed_compute_ns, exposed_comm_ns, overlapped_ns, idle_ns;
    double *sm_busy;        /* per 1 ms window of the simulated step */
    size_t nwindows;
} sc__replay_rank;

/* A named amount on the critical path (sorted by ns, then name). */
typedef struct sc__cp_item {
    const char *name;
    int64_t ns;
    uint64_t count;
} sc__cp_item;

typedef struct sc__cp_summary {
    int64_t length_ns; /* end of the last task of the slowest rank */
    uint64_t ntasks;   /* tasks on the path */
    uint32_t last_rank;
    sc__cp_item *by_class, *by_op, *by_edge;
    size_t nclass, nop, nedge;
} sc__cp_summary;

typedef struct sc__replay {
    sc__graph *g; /* owned */
    sc__sim sim;
    bool coupled;
    int64_t *launch_latency, *sync_base, *rank_offset; /* per graph rank */
    int64_t *backlog; /* per processor */
    uint64_t pruned[SC_E_FAMILY_COUNT]; /* edges the trace contradicts, dropped (prune.h) */
    int64_t *traced_dur; /* durations before --scale (NULL when nothing was scaled) */
    uint8_t *cls;        /* per task: sc__scale_class */
    sc__replay_rank *ranks;
    size_t nranks;
    size_t slowest; /* rank index with the longest simulated step */
    size_t slowest_measured;
    sc__cp_summary cp;
    double calibrate_s, simulate_s, summarise_s; /* wall time of each stage (sc_replay_timings) */
} sc__replay;

/* Takes ownership of g (finished) even on failure. set: the traces g was
 * built from (for the stream backlog), or NULL. */
sc_status sc__replay_graph(sc__graph *g, const sc_traceset *set, bool coupled, const sc__scale_rule *rules, size_t nrules,
                           sc__replay **out, sc_error *err);
void sc__replay_free(sc__replay *r);

static inline double sc__replay_error_pct(int64_t measured, int64_t simulated) {
    return measured > 0 ? 100.0 * (double)(simulated - measured) / (double)measured : 0.0;
}

/* The report, as text or JSON (byte-identical for identical inputs). */
sc_status sc__replay_write(const sc__replay *r, FILE *out, int json, sc_error *err);

/* Chrome-trace JSON: per rank a "simulated" and a "measured" process. */
sc_status sc__chrome_write(const sc__replay *r, FILE *out, sc_error *err);

#endif /* SC_REPLAY_H */
