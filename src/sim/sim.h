/*
 * sim.h - the discrete-event replay of an execution graph.
 *
 * Every CPU thread and GPU stream of every rank is a processor that runs its
 * tasks one at a time in `seq` order. A task starts at
 *     max(processor free [+ gap for CPU tasks],
 *         every predecessor's end [+ launch latency on LAUNCH edges])
 * (a stream's task that is not a graph launch's also waits the rank's
 * dispatch gap after the previous task on its stream: the GPU's front end)
 * and ends `dur` later, except:
 *   - SYNC tasks wait, at simulated time, for the last GPU task already
 *     launched on their target stream(s) and last as long as they must wait
 *     plus the rank's wake, or the rank's sync base when they need not wait
 *     (never their traced length), see sim.c;
 *   - in coupled mode, members of a cross-rank group (collective, send/recv
 *     pair) each arrive when their own dependencies allow and all end at
 *     max(arrival) + the group's transfer_ns.
 * The only measured inputs are durations, gaps and the calibrated parameters
 * below: no task is ever placed at its measured start time.
 *
 * The result keeps, per task, its simulated start/end and what bound it
 * (the predecessor whose end set the start, and for waiting tasks the task
 * whose end set theirs), which is all the critical path needs.
 */
#ifndef SC_SIM_H
#define SC_SIM_H

#include "../graph/graph.h"

/* Per-rank parameters (indexed by graph rank index), from src/models/calibrate.c. */
typedef struct sc__sim_params {
    bool coupled;                  /* groups couple across ranks; false = traced durations */
    const int64_t *launch_latency; /* ns added after a LAUNCH task's end; NULL = 0 */
    const int64_t *sync_base;      /* ns a sync costs when it need not wait; NULL = 0 */
    const int64_t *sync_wake;      /* ns a waiting sync returns after its work ends; NULL = 0 */
    const int64_t *rank_offset;    /* ns at which the rank's processors become free; NULL = 0 */
    const int64_t *proc_backlog;   /* per processor: busy this long after the offset; NULL = 0 */
    const int64_t *dispatch_gap;   /* ns between two tasks of a stream, the second queued
                                      (not a graph launch's: those have their gap); NULL = 0 */
    unsigned threads;              /* 2+: a helper may fault the outputs in (no effect on them) */
    sc__progress *progress;        /* tasks finished are reported to it; NULL: none */
} sc__sim_params;

/* Why a task started when it did (bound_fam): an edge family of graph.h
 * (SC_E_THREAD / SC_E_STREAM also stand for processor order), or: */
enum {
    SC_SIM_ROOT = 0xff, /* nothing: started at time 0 (+ gap) */
};

/* Why a task ended when it did (wait_kind), when not start + dur. */
enum {
    SC_SIM_W_NONE = 0,
    SC_SIM_W_SYNC,  /* a sync that waited for waited[t] */
    SC_SIM_W_GROUP, /* a group member that waited for the last arrival, waited[t] */
};

typedef struct sc__sim {
    size_t ntasks;
    int64_t *start, *end; /* ns of simulated time, from 0 */
    uint32_t *bound;      /* task whose end set the start, SC__NONE */
    uint8_t *bound_fam;   /* see above */
    uint32_t *waited;     /* task whose end set this end (sync target, last arrival) */
    uint8_t *wait_kind;   /* SC_SIM_W_* */
    int64_t makespan;     /* latest end */
    uint64_t events;      /* heap events processed */
    double setup_s;       /* wall seconds before the first event: state allocated and
                             paged in, tasks ordered (the rest of the run is the loop) */
} sc__sim;

/* Simulates every rank of g (finished). On a deadlock (groups whose members
 * wait on one another) fails with SC_E_GRAPH naming a stuck task. */
sc_status sc__sim_run(const sc__graph *g, const sc__sim_params *p, sc__sim *out, sc_error *err);
void sc__sim_free(sc__sim *s);
/* Bytes sc__sim_run takes for g at its peak (outputs and working state,
 * the waiters' pool aside): what a replay checks against its budget. */
size_t sc__sim_memory(const sc__graph *g);

/* Tasks grouped by processor and ordered by seq: the tasks of processor p are
 * order[off[p] .. off[p+1]). Caller frees both with free(). */
bool sc__proc_order(const sc__graph *g, uint32_t **off_out, uint32_t **order_out);

#endif /* SC_SIM_H */
