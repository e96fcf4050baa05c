/*
 * kineto.h - the Kineto reader's pieces, shared by the sequential reader
 * (kineto.c) and the reader that splits one large file over threads
 * (kineto_split.c). Internal: nothing here is part of the public API.
 *
 * A kreader parses one rank's trace into an sc_trace through a json.h
 * window. Its top-level walk is a state machine (sc__kr_step, driven one
 * retryable unit at a time); each element of traceEvents is one
 * sc__kr_event call, which stores nothing until the event has parsed whole.
 */
#ifndef SC_KINETO_H
#define SC_KINETO_H

#include "../trace/trace.h"
#include "json.h"

#define SC__ICACHE 1024u   /* interning cache slots, a power of two */
#define SC__KIND_MEMO 256u /* slots of the kind and NCCL caches; a power of two */

typedef struct kreader {
    sc__jp jp;
    sc_trace *t;
    bool saw_events;
    bool bare_array; /* the file is [ ...events ] without the wrapping object */
    bool first_member;
    unsigned top_seen; /* TOP_* bits of the top-level members read so far */
    uint64_t budget; /* bytes this trace may hold (src/base/budget.c) */
    uint32_t icache[SC__ICACHE]; /* see intern(): id + 1, 0 = empty */
    uint32_t cat_memo[SC__KIND_MEMO];  /* see classify(): category id + 1 ... */
    uint8_t cat_kind[SC__KIND_MEMO];   /* ... and its kind, direct-mapped by id */
    uint32_t nccl_memo[SC__KIND_MEMO]; /* (name id + 1) << 1 | is NCCL */
    uint32_t last_track, last_pid_str, last_tid_str; /* see event_track() */
    int64_t last_pid, last_tid;
} kreader;

/* The states of the top-level walk; each step is one retryable unit.
 * ST_END is handled by sc__jp_drive. */
typedef enum { ST_START, ST_MEMBER, ST_EVENTS_FIRST, ST_EVENTS, ST_END } kstate;

/* Sets r up to read into t through w; budget is the bytes t may hold.
 * False on OOM. */
bool sc__kr_init(kreader *r, sc_trace *t, sc__jwin *w, const char *name,
                 const sc_load_options *opts, uint64_t budget, sc_error *err);
void sc__kr_free(kreader *r);
/* One unit of the top-level walk (an sc__jp_step_fn; ctx is a kreader). */
int sc__kr_step(void *ctx, int *state);
/* One element of traceEvents, at the cursor. */
int sc__kr_event(kreader *r);
/* After the last byte is read: gives back array slack and makes times
 * absolute (baseTimeNanoseconds); fails when a time leaves the range. */
sc_status sc__kr_finish(sc_trace *t, const char *name, sc_error *err);

/* Reads the plain (uncompressed) Kineto file at path with up to `threads`
 * threads, each parsing a slice of traceEvents of at least min_slice bytes
 * (0: 16 MiB; tests set less), and merges the slices in file order: the
 * trace is the one the sequential reader makes, id for id.
 * Returns false, with nothing in *out, whenever it cannot promise that
 * (the file is small or compressed, a slice boundary was guessed wrong,
 * any slice failed); the caller then reads the file sequentially, which
 * also reports any error exactly. Never fails for another reason. */
bool sc__kineto_load_split(const char *path, const sc_load_options *opts, unsigned threads,
                           size_t min_slice, sc_trace **out);

#endif /* SC_KINETO_H */
