/*
 * job_check.c - the rules that make a trace set one job (see job_check.h).
 *
 * Errors (the set cannot be replayed as given):
 *   - two files claim the same rank;
 *   - ranks disagree on world_size (distributedInfo.world_size);
 *   - a rank is negative or not below the world size.
 * Warnings (the answer is still defined, but the user should know):
 *   - fewer traces than the world size: a partial job; collectives with the
 *     missing ranks cannot be matched;
 *   - ranks whose first event is more than 10 minutes apart: the clocks are
 *     not synchronised (or the traces come from different runs); the replay
 *     uses durations and dependencies, not absolute times, so its answer does
 *     not move, but measured cross-rank waits in the trace are meaningless;
 * Ranks without events (Chakra inputs) only take part in the rank rules.
 * A set loaded for `info` alone (header_only traces) is refused outright.
 *
 * Apart, sc__traceset_collective_counts_differ(): ranks whose whole traces
 * ran different numbers of NCCL collectives (send/recv not counted). The
 * graph builder says that once, with what it means for the replay: it
 * counts per communicator inside the replayed iteration too
 * (collectives.c), and only when that finds nothing uneven does the
 * whole-trace count need a line of its own.
 */
#include "job_check.h"

#include <stdio.h>
#include <stdlib.h>

static bool warnf(sc__warn_fn warn, void *ctx, const char *fmt, ...) SC__PRINTF(3, 4);
static bool warnf(sc__warn_fn warn, void *ctx, const char *fmt, ...) {
    if (!warn) return true;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return warn(ctx, msg);
}

static sc_status check_ranks(const sc_traceset *set, sc_error *err) {
    const sc_trace *ws_from = NULL; /* first trace that states a world size */
    for (size_t i = 0; i < set->count; i++) {
        const sc_trace *t = set->traces[i];
        if (t->world_size <= 0) continue;
        if (!ws_from) ws_from = t;
        else if (t->world_size != ws_from->world_size)
            return sc__fail(err, SC_E_FORMAT, t->path, SC_NO_OFFSET,
                            "world size %lld differs from %s's %lld: these traces are not one job",
                            (long long)t->world_size, ws_from->path, (long long)ws_from->world_size);
    }
    for (size_t i = 0; i < set->count; i++) {
        const sc_trace *t = set->traces[i];
        if (t->rank < 0 || (ws_from && t->rank >= ws_from->world_size))
            return sc__fail(err, SC_E_FORMAT, t->path, SC_NO_OFFSET,
                            "rank %lld is outside the job's world size %lld", (long long)t->rank,
                            ws_from ? (long long)ws_from->world_size : -1LL);
        /* The set is sorted by rank, so a duplicate sits next to its twin. */
        if (i > 0 && set->traces[i - 1]->rank == t->rank)
            return sc__fail(err, SC_E_FORMAT, t->path, SC_NO_OFFSET,
                            "%s and %s both claim rank %lld: give one trace per rank",
                            set->traces[i - 1]->path, t->path, (long long)t->rank);
    }
    return SC_OK;
}

/* Earliest timed event (metadata excluded); false when there is none. */
static bool first_ts(const sc_trace *t, int64_t *out) {
    const sc__event *ev = sc__trace_events(t);
    bool any = false;
    for (size_t i = 0; i < t->events.len; i++) {
        if (ev[i].ph == 'M') continue;
        if (!any || ev[i].ts < *out) *out = ev[i].ts;
        any = true;
    }
    return any;
}

/* NCCL collective kernels, point-to-point excluded. */
static uint64_t count_collectives(const sc_trace *t) {
    const sc__event *ev = sc__trace_events(t);
    uint64_t n = 0;
    char kind[64];
    for (size_t i = 0; i < t->events.len; i++) {
        if (!(ev[i].flags & SC_EF_NCCL)) continue;
        sc__nccl_kind(sc__trace_str(t, ev[i].name), kind, sizeof kind);
        if (strcmp(kind, "SendRecv") == 0 || strcmp(kind, "Send") == 0 || strcmp(kind, "Recv") == 0)
            continue;
        n++;
    }
    return n;
}

static bool check_events(const sc_traceset *set, sc__warn_fn warn, void *ctx) {
    const sc_trace *ref = NULL;
    int64_t ref_ts = 0;
    for (size_t i = 0; i < set->count; i++) {
        const sc_trace *t = set->traces[i];
        int64_t ts = 0;
        if (!first_ts(t, &ts)) continue;
        if (!ref) {
            ref = t;
            ref_ts = ts;
            continue;
        }
        /* Both sides are int64 ns well inside +-2^62 (the reader's range). */
        int64_t skew = ts - ref_ts;
        if ((skew < 0 ? -skew : skew) > SC__JOB_CLOCK_SKEW_NS &&
            !warnf(warn, ctx,
                   "rank %lld starts %.2f h %s rank %lld: clocks are not synchronised (or the "
                   "traces are from different runs); the replay uses durations, not clock times",
                   (long long)t->rank, (double)(skew < 0 ? -skew : skew) / 3.6e12,
                   skew < 0 ? "before" : "after", (long long)ref->rank))
            return false;
    }
    return true;
}

bool sc__traceset_collective_counts_differ(const sc_traceset *set, char *msg, size_t cap) {
    const sc_trace *ref = NULL;
    uint64_t ref_coll = 0;
    size_t odd = 0;
    for (size_t i = 0; i < set->count; i++) {
        const sc_trace *t = set->traces[i];
        int64_t ts = 0;
        if (!first_ts(t, &ts)) continue;
        uint64_t coll = count_collectives(t);
        if (!ref) {
            ref = t;
            ref_coll = coll;
        } else if (coll != ref_coll && odd++ == 0 && cap) {
            snprintf(msg, cap, "rank %lld ran %llu NCCL collectives in its whole trace, rank %lld ran %llu",
                     (long long)t->rank, (unsigned long long)coll, (long long)ref->rank,
                     (unsigned long long)ref_coll);
        }
    }
    if (odd > 1 && cap) {
        size_t n = strlen(msg);
        snprintf(msg + n, cap - n, " (%zu ranks differ from rank %lld)", odd, (long long)ref->rank);
    }
    return odd > 0;
}

sc_status sc__traceset_check_job(const sc_traceset *set, sc__warn_fn warn, void *ctx,
                                 sc_error *err) {
    if (!set || set->count == 0)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no traces given");
    for (size_t i = 0; i < set->count; i++) {
        sc_status whole = sc__trace_check_whole(set->traces[i], err);
        if (whole != SC_OK) return whole;
    }
    sc_status st = check_ranks(set, err);
    if (st != SC_OK) return st;
    int64_t ws = -1;
    for (size_t i = 0; i < set->count; i++)
        if (set->traces[i]->world_size > 0) ws = set->traces[i]->world_size;
    if (ws > 0 && (uint64_t)ws > set->count &&
        !warnf(warn, ctx, "the job has world size %lld but %zu trace%s given: collectives with "
               "the missing ranks cannot be matched", (long long)ws, set->count,
               set->count == 1 ? " is" : "s are"))
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    if (!check_events(set, warn, ctx))
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    return SC_OK;
}
