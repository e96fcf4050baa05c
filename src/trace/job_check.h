/*
 * job_check.h - is a trace set one consistent job?
 *
 * Loading accepts anything readable, so `stepcast info` can describe odd
 * inputs. Commands that combine ranks (graph, replay, export) must not: two
 * files claiming one rank, ranks that disagree on the world size, or a rank
 * outside it would produce a confident wrong answer. The graph builder calls
 * sc__traceset_check_job() before building; see job_check.c for each rule
 * and whether it is an error or a warning.
 */
#ifndef SC_JOB_CHECK_H
#define SC_JOB_CHECK_H

#include "trace.h"

/* Receives one warning (a full sentence, no trailing newline); returns
 * false on OOM. */
typedef bool (*sc__warn_fn)(void *ctx, const char *msg);

/* Clock offsets between ranks above this (ns) are reported. */
#define SC__JOB_CLOCK_SKEW_NS (10LL * 60 * 1000000000)

/* SC_OK, or SC_E_FORMAT naming the offending files. warn may be NULL. */
sc_status sc__traceset_check_job(const sc_traceset *set, sc__warn_fn warn, void *ctx,
                                 sc_error *err);

/* True when ranks' whole traces ran different numbers of NCCL collectives;
 * msg gets "rank 1 ran 83 NCCL collectives in its whole trace, rank 0 ran
 * 84" (and how many ranks differ). Not one of check_job's warnings: the
 * graph builder words it together with its own per-communicator count. */
bool sc__traceset_collective_counts_differ(const sc_traceset *set, char *msg, size_t cap);

#endif
