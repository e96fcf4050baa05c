/*
 * calibrate.h - the simulator's parameters, measured from the trace itself.
 */
#ifndef SC_CALIBRATE_H
#define SC_CALIBRATE_H

#include "../graph/graph.h"

/* Per graph rank: the launch latency (ns) added after a launch call's end
 * before its GPU task may start, the dispatch gap (ns) between two tasks of
 * a stream when the second was queued (dispatch may be NULL), and the cost
 * of a sync that need not wait (false on out-of-memory).
 * Arrays of g->ranks.len entries, allocated by the caller. The latency
 * reads a GPU task's predecessors from g's edges, so a graph finished
 * without order edges gets its samples without the stream order. Its
 * temporary arrays come from spare (NULL: none) when it is large enough,
 * and the block goes back there. */
bool sc__calibrate_launch(const sc__graph *g, int64_t *latency, int64_t *dispatch, sc__spare *spare);
/* ... and per rank (wake may be NULL) how long after the work it waited
 * for a waiting sync returns. */
bool sc__calibrate_sync_base(const sc__graph *g, int64_t *base, int64_t *wake);

/* Per graph rank: when its processors become free (ns), relative to the
 * earliest rank's step start, clock skew removed (see calibrate.c). */
bool sc__calibrate_rank_offsets(const sc__graph *g, int64_t *offset);

/* Per processor: how long (ns) after its rank's offset a stream is still
 * busy with GPU work from before the window (0 for threads): what the
 * builder measured (g->proc_backlog), else 0; or, for a stream whose first
 * task was held with the device idle by work the trace does not hold, that
 * task's start (calibrate.c). latency: sc__calibrate_launch's. False on
 * out-of-memory. */
bool sc__calibrate_backlog(const sc__graph *g, const int64_t *latency, int64_t *backlog);

/* Fills every group's transfer_ns from its members' traced durations. */
bool sc__calibrate_transfers(sc__graph *g);

#endif /* SC_CALIBRATE_H */
