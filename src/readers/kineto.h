/*
 * kineto.h - the Kineto reader's pieces, shared by the sequential reader
 * (kineto.c) and the reader that parses one large file on several threads
 * (kineto_slice.c, kineto_parallel.c). Internal: nothing here is part of the public API.
 *
 * A kreader parses one rank's trace into an sc_trace through a json.h
 * window. Its top-level walk is a state machine (sc__kr_step, driven one
 * retryable unit at a time); each element of traceEvents is one
 * sc__kr_event call, which stores nothing until the event has parsed whole.
 * An event whose bytes follow the layout of an earlier one is matched
 * against that layout (kineto_template.c) instead of being parsed key by
 * key; both ways run the same value handlers (sc__kr_member).
 */
#ifndef SC_KINETO_H
#define SC_KINETO_H

#include "readers.h"
#include "json.h"

#include <stdatomic.h>
#include <stddef.h>

#define SC__ICACHE 1024u   /* interning cache slots, a power of two */
#define SC__KT_MEMBERS 32u /* members of an event a template can hold */

/* The object keys the reader acts on, of events and of their args, as one
 * id: a key is recognised once and dispatched with a switch instead of a
 * chain of string compares per member. */
typedef enum kkey {
    K_OTHER = 0,
    K_PH, K_NAME, K_CAT, K_TS, K_DUR, K_PID, K_TID, K_ID, K_BP, K_ARGS, /* event */
    K_CORRELATION, K_EXTERNAL_ID, K_STREAM, K_DEVICE, K_CBID, K_BYTES,  /* args */
    K_GRID, K_BLOCK, K_COLL_NAME, K_IN_NELEMS, K_OUT_NELEMS, K_GROUP_SIZE,
    K_DTYPE, K_PG_NAME, K_PG_DESC, K_PG_RANKS, K_SEQ, K_SEQ_NUMBER, K_FWD_TID,
    K_RF_ID, K_WAIT_STREAM, K_WAIT_CORR, K_WAIT_EVENT, K_INPUT_DIMS, K_INPUT_TYPE,
} kkey;

/* Where a member sits: in the event object, or in its "args". */
enum { KL_TOP = 0, KL_ARGS = 1 };

/* One event while it is read: what it will store, and what its members
 * have said so far. Nothing reaches the trace before the event is whole. */
typedef struct kevent {
    sc__event e;
    sc__event_ext x;       /* the extras: set up and stored only when has_ext */
    sc__event_shapes sh;   /* an operator's shapes, stored when has_shapes */
    bool has_ext, has_shapes, has_ts, has_ph, empty;
    int64_t pid, tid;
    uint32_t pid_str, tid_str;
    const char *args_at;   /* "args" seen before "ph": parsed at the end */
} kevent;
/* sc__kr_event_begin copies e and everything from sh on: nothing but x
 * may sit between them. */
_Static_assert(offsetof(kevent, x) == sizeof(sc__event) &&
                   offsetof(kevent, sh) == offsetof(kevent, x) + sizeof(sc__event_ext),
               "sc__kr_event_begin skips only x");

/* What a key-by-key read of an event tells the template learner: each
 * member's level, key and value extent (offsets from the event's '{'). */
typedef struct kmember {
    uint8_t level, key;
    uint32_t at, end;
} kmember;

typedef struct krecord {
    kmember m[SC__KT_MEMBERS];
    uint32_t n;
    bool unusable; /* too many members, or args read before "ph" */
} krecord;

typedef struct ktset ktset; /* the learned layouts (kineto_template.c) */
#define SC__KIND_MEMO 256u /* slots of the kind and NCCL caches; a power of two */

/* A slot of sc__kr_intern's cache: a string's id + 1 (0: empty), its
 * length and its first and last 8 bytes (zero-padded below 8). */
typedef struct kicache {
    uint32_t id1, n;
    uint64_t a, b;
} kicache;

typedef struct kreader {
    sc__jp jp;
    sc_trace *t;
    bool saw_events;
    bool bare_array; /* the file is [ ...events ] without the wrapping object */
    bool first_member;
    unsigned top_seen; /* TOP_* bits of the top-level members read so far */
    uint64_t budget; /* bytes this trace may hold (src/base/budget.c) */
    kicache icache[SC__ICACHE]; /* see sc__kr_intern() */
    uint32_t cat_memo[SC__KIND_MEMO];  /* see classify(): category id + 1 ... */
    uint8_t cat_kind[SC__KIND_MEMO];   /* ... and its kind, direct-mapped by id */
    uint32_t nccl_memo[SC__KIND_MEMO]; /* (name id + 1) << 1 | is NCCL */
    uint32_t last_track, last_pid_str, last_tid_str; /* see event_track() */
    int64_t last_pid, last_tid;
    ktset *tmpl; /* NULL: every event is read key by key */
    uint64_t matched; /* events read by a template */
    uintptr_t warm[3]; /* sc__vec_prefault of events, exts, shapes */
    /* The input whose size the trace's arrays grow to in step with
     * (grown_cap in kineto.c): the whole file's, for a reader that fills
     * the trace from its start; NULL (set by sc__kr_open): doubling. */
    const struct sc__source *sized_by;
    kevent blank;     /* an event before its first member */
} kreader;

/* Starts an event's extras, which most events have none of: copying the
 * blank extras only on first use saves copying 136 bytes per event. */
static inline void sc__kr_ext_begin(const kreader *r, kevent *ev) {
    if (!ev->has_ext) {
        ev->x = r->blank.x;
        ev->has_ext = true;
    }
}

/* Interning with a small direct-mapped cache in front: names, categories
 * and shapes repeat in nearly every event, and a hit costs a cheap key (the
 * length and the first and last 8 bytes) instead of hashing every byte and
 * probing the table. The slot keeps its string's key, so a string of up to
 * 16 bytes (most operator names) is compared whole without touching the
 * interner; a longer one compares its middle with memcmp. Misses go to the
 * interner, so ids are assigned exactly as without the cache. */
static inline uint32_t sc__kr_intern(kreader *r, sc__jstr s) {
    sc__intern *in = &r->t->strings;
    uint64_t a = 0, b = 0;
    if (s.n >= 8) {
        memcpy(&a, s.s, 8);
        memcpy(&b, s.s + s.n - 8, 8);
    } else {
        memcpy(&a, s.s, s.n);
    }
    uint32_t slot = (uint32_t)(sc__hash_u64(a ^ (b * 0x9e3779b97f4a7c15ULL) ^ s.n) & (SC__ICACHE - 1));
    kicache *c = &r->icache[slot];
    if (c->id1 && c->n == s.n && c->a == a && c->b == b &&
        (s.n <= 16 || memcmp(in->strs[c->id1 - 1] + 8, s.s + 8, s.n - 16) == 0))
        return c->id1 - 1;
    uint32_t id = sc__intern_put(in, s.s, s.n);
    if (id != SC__NONE && s.n <= UINT32_MAX) *c = (kicache){id + 1, (uint32_t)s.n, a, b};
    return id;
}

/* The integer args: a number, or a string of decimal or 0x-hex digits. */
#define SC__KR_INT_ARGS                                                                        \
    ((1ull << K_CORRELATION) | (1ull << K_EXTERNAL_ID) | (1ull << K_STREAM) |                  \
     (1ull << K_DEVICE) | (1ull << K_CBID) | (1ull << K_BYTES) | (1ull << K_IN_NELEMS) |        \
     (1ull << K_OUT_NELEMS) | (1ull << K_GROUP_SIZE) | (1ull << K_SEQ) |                       \
     (1ull << K_SEQ_NUMBER) | (1ull << K_FWD_TID) | (1ull << K_RF_ID) |                        \
     (1ull << K_WAIT_STREAM) | (1ull << K_WAIT_CORR) | (1ull << K_WAIT_EVENT))

static inline bool sc__kr_is_int_arg(kkey key) { return (SC__KR_INT_ARGS >> key) & 1; }

/* Stores the interned raw text id of a shapes arg ("Input Dims", "Input
 * type"). */
static inline void sc__kr_shape_arg(kevent *ev, kkey key, uint32_t id) {
    *(key == K_INPUT_DIMS ? &ev->sh.dims : &ev->sh.types) = id;
    ev->has_shapes = true;
}

/* Stores the value v of the integer arg key (one with sc__kr_is_int_arg;
 * v is -1 when absent or not a number): a field of the event, else of the
 * extras. */
static inline void sc__kr_int_arg(const kreader *r, kevent *ev, kkey key, int64_t v) {
    sc__event *e = &ev->e;
    sc__event_ext *x = &ev->x;
    switch (key) {
    case K_CORRELATION: e->correlation = v; return;
    case K_EXTERNAL_ID: e->external_id = v; return;
    case K_STREAM: e->stream = v < INT32_MIN || v > INT32_MAX ? -1 : (int32_t)v; return;
    case K_DEVICE: e->device = v < 0 || v > INT16_MAX ? -1 : (int16_t)v; return;
    case K_CBID: e->cbid = v < 0 || v > UINT16_MAX ? 0 : (uint16_t)v; return;
    default: break; /* every other integer arg is one of the extras */
    }
    sc__kr_ext_begin(r, ev);
    switch (key) {
    case K_BYTES: x->bytes = v; break;
    case K_IN_NELEMS: x->in_nelems = v; break;
    case K_OUT_NELEMS: x->out_nelems = v; break;
    case K_GROUP_SIZE: x->group_size = v; break;
    case K_SEQ: x->seq = v; break;
    case K_SEQ_NUMBER: x->seq_number = v; break;
    case K_FWD_TID: x->fwd_tid = v; break;
    case K_RF_ID: x->rf_id = v; break;
    case K_WAIT_STREAM: x->wait_stream = v < INT32_MIN || v > INT32_MAX ? -1 : (int32_t)v; break;
    case K_WAIT_CORR: x->wait_corr = v; break;
    case K_WAIT_EVENT: x->wait_event = v; break;
    default: break;
    }
}

/* The states of the top-level walk; each step is one retryable unit.
 * ST_END is handled by sc__jp_drive. */
typedef enum { ST_START, ST_MEMBER, ST_EVENTS_FIRST, ST_EVENTS, ST_END } kstate;

/* Sets up the window w over src as opts asks (window_bytes,
 * max_event_bytes) and r to read through it into t; budget is the bytes t
 * may hold. templates: match recurring event layouts (false: read every
 * event key by key, the reference the tests compare against). On an error
 * nothing is left to free. The one setup of the sequential reader and of
 * each slice of the parallel one (kineto_slice.c). */
sc_status sc__kr_open(kreader *r, sc__jwin *w, sc__source *src, sc_trace *t, const char *name,
                      const sc_load_options *opts, uint64_t budget, bool templates, sc_error *err);
void sc__kr_close(kreader *r, sc__jwin *w);
/* One unit of the top-level walk (an sc__jp_step_fn; ctx is a kreader). */
int sc__kr_step(void *ctx, int *state);
/* One element of traceEvents, at the cursor. */
int sc__kr_event(kreader *r);
/* An event before its first member: every field absent. */
void sc__kr_event_begin(kreader *r, kevent *ev);
/* One member's value, at the cursor (whitespace before it skipped), into
 * ev: the handler both ways of reading an event share. */
int sc__kr_member(kreader *r, int level, kkey key, kevent *ev);
/* Any value at the cursor, validated, as the interned id of its raw text
 * (how shapes are kept). */
int sc__kr_raw_id(kreader *r, uint32_t *id);

/* Templates (kineto_template.c). sc__kt_match reads the event at the
 * cursor by a learned layout: SC__J_OK with ev filled and the cursor after
 * the event, SC__J_MORE or SC__J_ERR exactly as a key-by-key read would
 * return them, or SC__KT_MISS with nothing consumed when no layout fits.
 * sc__kt_learn takes the layout of an event just read key by key. */
enum { SC__KT_MISS = 3 };
ktset *sc__kt_new(void);
void sc__kt_free(ktset *ts);
int sc__kt_match(kreader *r, kevent *ev);
void sc__kt_learn(ktset *ts, const krecord *rec, const kevent *ev, const char *start, size_t len);

/* After the last byte is read: gives back array slack and makes times
 * absolute (baseTimeNanoseconds); fails when a time leaves the range. */
sc_status sc__kr_finish(sc_trace *t, const char *name, sc_error *err);

/* sc_trace_load_buffer with templates chosen (false: every event key by
 * key), for the tests and fuzzers that compare the two ways; *matched (when
 * not NULL) is set to the number of events a template read. */
sc_status sc__kineto_load_buffer(const void *data, size_t size, const char *name,
                                 const sc_load_options *opts, bool templates, uint64_t *matched,
                                 sc_trace **out, sc_error *err);

/* Slices (kineto_slice.c): one byte range of traceEvents parsed by a
 * reader of its own into a trace of its own, from a guessed element start
 * to the first element at or after the next slice's start (its limit). The
 * reader that parses one file on several threads (kineto_parallel.c) is
 * built from them. */
#define SC__NO_OFFSET UINT64_MAX
typedef struct sc__slice {
    uint64_t start; /* offset of its first element's '{' (slice 0: see sc__slice_head) */
    _Atomic uint64_t limit; /* the next slice's start; SC__NO_OFFSET for none (yet) */
    sc_trace *t;            /* slice 0 reads into the result itself */
    sc__source src;
    sc__jwin w;
    kreader *r;             /* set up by sc__slice_open: 27 KB, only while it reads */
    sc_error err;
    bool has_src;  /* src is open (and must be closed) */
    bool ready;    /* w and r are set up over it */
    bool first;    /* slice 0: starts just after the array's '[' */
    bool dropped;  /* its start was no element's: read by the slice before */
    int rc;        /* of the last sc__slice_parse */
    uint64_t stop;  /* offset of the element at or after limit where it stopped */
    uint64_t after; /* offset just past the array's ']' when it ended the array */
} sc__slice;

/* The offset in buf[0..n) of a likely element start: the '{' of a `}` `,`
 * `{` (one with a newline between preferred near the start); SIZE_MAX when
 * there is none. A guess: it may sit in a string, so slices verify it. */
size_t sc__slice_guess(const char *buf, size_t n);
/* The same in a plain file: the offset of a likely element start at or
 * after `from`, SC__NO_OFFSET when none is near; buf is scratch of
 * SC__SLICE_GUESS_BUF bytes. */
#define SC__SLICE_GUESS_BUF 65536
uint64_t sc__slice_guess_file(int fd, uint64_t from, char *buf);
/* A slice over s->src (open, has_src set), whose offsets start at
 * `offset`; false on an error (no memory), s then closed. */
bool sc__slice_open(sc__slice *s, const char *path, uint64_t offset, const sc_load_options *opts,
                    uint64_t budget);
void sc__slice_close(sc__slice *s);
/* Slice 0: reads the top-level members up to the '[' of traceEvents and
 * sets first; false when that fails or the file has no such array. */
bool sc__slice_head(sc__slice *s);
/* Parses the slice's elements until it reaches its limit or the array's
 * end (stop or after set, rc SC__J_OK), or fails (rc). Called again after
 * its limit moved on, it carries on from the element it stopped at. */
void sc__slice_parse(sc__slice *s);
/* Frees the slice's window and source but keeps its reader (its walk
 * state), which must not parse again until sc__slice_tail gives it a
 * window: slice 0 once the slice after it is verified. */
void sc__slice_release_input(sc__slice *s);
/* Reads the top-level members after the array with slice 0's reader (its
 * walk state: which keys were seen), taking over the window of the slice
 * `last` that ended the array (last may be s0). */
bool sc__slice_tail(sc__slice *s0, sc__slice *last);

/* Reads the Kineto file at path with up to `threads` threads, each
 * parsing slices of traceEvents in turn (kineto_parallel.c), and appends
 * the slices in file order: the trace is the one the sequential reader
 * makes, id for id. A plain file is cut into slices of at least
 * slice_bytes (0: 16 MiB) and read only when that makes two; a gzip file
 * is inflated on one more thread into chunks of slice_bytes (0: 4 MiB), a
 * slice starting in each. Returns false, with nothing in *out, whenever it
 * cannot promise the sequential reader's trace (the file is small, a slice
 * failed, the memory budget); the caller then reads the file sequentially,
 * which also reports any error exactly. Never fails for another reason. */
bool sc__kineto_load_parallel(const char *path, const sc_load_options *opts, unsigned threads,
                              size_t slice_bytes, sc_trace **out);

#endif /* SC_KINETO_H */
