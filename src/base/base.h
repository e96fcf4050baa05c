/*
 * base.h - the internal toolbox every stage of stepcast shares.
 *
 * Arenas (one per trace, freed at once), growable arrays with 32-bit-friendly
 * sizes, a string interner that hands out uint32 ids, and helpers that fill an
 * sc_error. Nothing here knows about traces; it is the layer the readers,
 * graph and simulator stand on.
 */
#ifndef SC_BASE_H
#define SC_BASE_H

#include "stepcast.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__)
#define SC__LIKELY(x) __builtin_expect(!!(x), 1)
#define SC__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SC__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SC__LIKELY(x) (x)
#define SC__UNLIKELY(x) (x)
#define SC__PRINTF(a, b)
#endif

#define SC__NONE UINT32_MAX /* "no index" for uint32 indices */

/* ------------------------------------------------------------------ errors */

/* Sets err (if non-NULL) and returns status, so callers can write
 * `return sc__fail(err, SC_E_PARSE, path, off, "...")`. */
sc_status sc__fail(sc_error *err, sc_status status, const char *file, uint64_t offset,
                   const char *fmt, ...) SC__PRINTF(5, 6);
void sc__error_clear(sc_error *err);

/* ------------------------------------------------------------------ memory */

/* The memory budget of a load (budget.c): opts->max_memory_bytes, else
 * $STEPCAST_MAX_MEMORY, else 80% of physical memory. */
uint64_t sc__default_memory_budget(void);
uint64_t sc__load_budget(const sc_load_options *opts);
/* A size in the largest binary unit ("B", "KiB", "MiB", "GiB", "TiB": unit
 * 1024^power, power at most max_power) that leaves at least one of it:
 * whole is the size in that unit rounded down, value the quotient.
 * The one unit ladder of the size texts (sc__budget_text, the graph and
 * HTML reports), which each print it their own way. */
typedef struct sc__size {
    const char *unit;
    unsigned power;
    uint64_t whole;
    double value;
} sc__size;
sc__size sc__size_in_units(uint64_t bytes, unsigned max_power);
/* A budget for an error message: "3 MiB", or "512 KiB" below 1 MiB (a set
 * of many files divides it), or "100 bytes". buf has at least 32 bytes;
 * returns buf. */
const char *sc__budget_text(uint64_t bytes, char *buf);
/* Threads a load may use: opts->threads, else $STEPCAST_THREADS, else
 * every online core; at most 64. With NULL: the job's thread cap. */
unsigned sc__load_threads(const sc_load_options *opts);
/* Lowers the calling thread's scheduling priority by `steps` nice levels
 * (to 19 at most), so that where threads outnumber cores the one they all
 * wait on runs first (kineto_parallel.c: the decoder before its parsers).
 * Only the calling thread's; a hint that changes no result. */
void sc__thread_defer(int steps);

/* malloc/realloc that return NULL on overflow of n*size. */
void *sc__alloc_array(size_t n, size_t size);
void *sc__realloc_array(void *p, size_t n, size_t size);

/* A bump allocator: many small allocations, one free. */
typedef struct sc__arena_block sc__arena_block;
typedef struct sc__arena {
    sc__arena_block *head;
    size_t used_total; /* bytes handed out + block overhead, for reporting */
} sc__arena;

void sc__arena_init(sc__arena *a);
void sc__arena_free(sc__arena *a);
void *sc__arena_alloc(sc__arena *a, size_t size); /* 8-byte aligned, NULL on OOM */
char *sc__arena_strndup(sc__arena *a, const char *s, size_t n);

/* A growable array of fixed-size elements. */
typedef struct sc__vec {
    void *data;
    size_t len, cap, elem;
} sc__vec;

void sc__vec_init(sc__vec *v, size_t elem);
void sc__vec_free(sc__vec *v);
/* Bytes v has allocated (its capacity). */
static inline size_t sc__vec_bytes(const sc__vec *v) { return v->cap * v->elem; }
bool sc__vec_reserve(sc__vec *v, size_t cap);
/* Room for exactly cap items (no doubling): for a final size known ahead. */
bool sc__vec_reserve_exact(sc__vec *v, size_t cap);
/* The capacity v grows to for `need` items (its own while they fit): of
 * an array filled in step with reading an input of about `total` bytes, of
 * which `done` are read, the length it is on course for once it holds 2 MB
 * (and at least 1.25 times its capacity), else the next doubling. total 0:
 * unknown, always doubling. See memory.c for why. */
size_t sc__vec_grown_cap(const sc__vec *v, size_t need, uint64_t done, uint64_t total);
void *sc__vec_push(sc__vec *v); /* pointer to a new zeroed slot, NULL on OOM */
/* A hint for an array filled front to back: once it holds 2 MB, makes the
 * room just past its length resident ahead of the appends, a megabyte per
 * system call instead of a page fault per page. *warm is the caller's
 * record of how far that has gone (0 at first). Call it now and then
 * (every thousand appends): it returns at once while enough room is warm. */
void sc__vec_prefault(const sc__vec *v, uintptr_t *warm);
/* Makes the whole pages of [p, p + bytes) resident and writable at once,
 * for memory about to be written front to back. A hint: it needs Linux
 * 5.14 and headers that name MADV_POPULATE_WRITE; elsewhere, or on
 * failure, nothing happens. */
void sc__prefault(void *p, size_t bytes);
/* sc__prefault of up to SC__PREFAULT_RANGES ranges on a thread of its own,
 * for arrays that one thread will touch at scattered places (a page fault
 * each) while another core is idle: the faults' work (zeroing, mapping)
 * moves to that core. Only a hint, and it changes no byte of the arrays:
 * where the thread cannot start (or n is too large), nothing happens.
 * sc__prefault_start copies the n ranges p[i], bytes[i] into pf; the
 * arrays, and the sc__prefaulter itself (the thread reads it), must stay
 * where they are until sc__prefault_join, which waits for the thread. A
 * zeroed sc__prefaulter is not started: joining it does nothing. */
#define SC__PREFAULT_RANGES 8
typedef struct sc__prefaulter {
    void *p[SC__PREFAULT_RANGES];
    size_t bytes[SC__PREFAULT_RANGES];
    unsigned n;
    bool started;
    pthread_t thread;
} sc__prefaulter;
void sc__prefault_start(sc__prefaulter *pf, void *const *p, const size_t *bytes, unsigned n);
void sc__prefault_join(sc__prefaulter *pf);
/* A block of memory that one stage is done with, kept for a later stage's
 * temporary arrays: its pages are already faulted in, where fresh ones cost
 * a fault and zeroing each (on a large job, more than the work done in
 * them). The graph's edge list serves so for its cycle check and for
 * calibration (graph.h). */
typedef struct sc__spare {
    void *p;      /* from malloc; NULL when none is kept */
    size_t bytes;
} sc__spare;
/* s takes p (bytes long, from malloc), freeing the block it held. */
void sc__spare_keep(sc__spare *s, void *p, size_t bytes);
/* s's block when it is at least `bytes` long (its length in *got), else
 * NULL. The caller then owns it: sc__spare_keep gives it back. */
void *sc__spare_take(sc__spare *s, size_t bytes, size_t *got);
/* A block of at least `bytes` for temporaries: s's when it has room (s may
 * be NULL), else a fresh one; NULL when out of memory. *got is what
 * sc__spare_return needs to give it back to s, or to free a fresh one. */
void *sc__spare_borrow(sc__spare *s, size_t bytes, size_t *got);
void sc__spare_return(sc__spare *s, void *p, size_t got);
void sc__spare_free(sc__spare *s);
/* Appends a copy of *item (size == v->elem bytes), with no zeroing first (a
 * reader's hot path: every event is built whole, then stored); false on
 * OOM. Inline, and through SC__VEC_APPEND with the size a constant, so that
 * the copy is inlined too instead of a memcpy call (2% of a trace load). */
static inline bool sc__vec_append_n(sc__vec *v, const void *item, size_t size) {
    if (v->len == v->cap && !sc__vec_reserve(v, v->len + 1)) return false;
    memcpy((char *)v->data + v->len * size, item, size);
    v->len++;
    return true;
}
#define SC__VEC_APPEND(v, item) sc__vec_append_n((v), (item), sizeof *(item))
#define SC__VEC_AT(v, type, i) (((type *)(v)->data)[i])
/* Just past the last element, for appending in place after a reserve; NULL
 * for an array that has no storage yet (NULL + 0 is undefined behaviour). */
static inline void *sc__vec_end(const sc__vec *v) {
    return v->data ? (char *)v->data + v->len * v->elem : NULL;
}

/* ------------------------------------------------------------------ maps */

/* int64 key -> uint32 value, open addressing on flat arrays (idmap.c). A
 * value may be anything but SC__NONE, which marks an empty slot. */
typedef struct sc__idmap {
    int64_t *keys;
    uint32_t *vals; /* SC__NONE = empty slot */
    size_t nslots, count;
} sc__idmap;

bool sc__idmap_init(sc__idmap *m, size_t expected);
void sc__idmap_free(sc__idmap *m);
void sc__idmap_clear(sc__idmap *m);
/* Inserts or overwrites; false on OOM. */
bool sc__idmap_put(sc__idmap *m, int64_t key, uint32_t val);
/* Inserts only when absent; false on OOM. */
bool sc__idmap_put_new(sc__idmap *m, int64_t key, uint32_t val);
/* sc__idmap_put_new that also says whether key was new (*added). */
bool sc__idmap_insert(sc__idmap *m, int64_t key, uint32_t val, bool *added);
uint32_t sc__idmap_get(const sc__idmap *m, int64_t key); /* SC__NONE when absent */

/* ------------------------------------------------------------------ sorting */

/* qsort with a context handed to every comparison (sort.c), so a comparator
 * that looks items up in a table needs no global or thread-local to find
 * it. Same order as qsort with the same comparator. */
typedef int (*sc__cmp_fn)(const void *a, const void *b, void *ctx);
void sc__sort(void *base, size_t n, size_t size, sc__cmp_fn cmp, void *ctx);
/* Ascending int64_t, for qsort (medians and percentiles of durations). */
int sc__cmp_i64(const void *a, const void *b);

/* ------------------------------------------------------------------ progress */

/* A job's progress (progress.c): counters any thread may add to, and the
 * caller's sc_progress_fn, called at most every 50 ms and never twice at
 * once. Loads pass it down in their sc_load_options as the pair
 * (sc__progress_relay, the sc__progress), which sc__progress_of finds
 * again; a trace set keeps one for the graph and simulation. */
typedef struct sc__progress {
    sc_progress_fn fn;
    void *user;
    pthread_mutex_t mu;
    _Atomic uint64_t bytes, files_done, ranks_done, tasks_done;
    _Atomic int64_t next_ns; /* no call before this monotonic time */
    uint64_t files_total, ranks_total, tasks_total;
    const char *stage;
    int64_t began_ns;
} sc__progress;

/* A new one reporting to fn (NULL: fn is NULL, nothing to report). */
sc__progress *sc__progress_new(sc_progress_fn fn, void *user);
void sc__progress_free(sc__progress *p);
/* The marker a load's options carry in place of the caller's callback. */
void sc__progress_relay(void *user, const sc_progress *p);
/* The sc__progress of opts (NULL when it has none). */
sc__progress *sc__progress_of(const sc_load_options *opts);
/* A copy of opts that carries p (opts may be NULL). */
sc_load_options sc__progress_options(const sc_load_options *opts, sc__progress *p);
/* Starts a stage ("read", "build", "simulate") with its total, and reports. */
void sc__progress_stage(sc__progress *p, const char *stage, uint64_t total);
/* Adds to a counter and reports when 50 ms have passed; p may be NULL. */
void sc__progress_bytes(sc__progress *p, uint64_t n);
void sc__progress_files(sc__progress *p, uint64_t n);
void sc__progress_ranks(sc__progress *p, uint64_t n);
void sc__progress_tasks(sc__progress *p, uint64_t n);
/* Reports now (the end of a stage). */
void sc__progress_flush(sc__progress *p);

/* ------------------------------------------------------------------ warnings */

/* A list of one-line warnings (a full sentence each, no newline), for
 * whatever collects them for the user to read: a trace set while loading, a
 * graph while building (warnings.c). Each warning has a kind, the format
 * string that made it (a string literal, so it lives for good): the lines
 * of one kind differ only in what they name (a file, a rank), and groups
 * (one per kind, in the order each kind first appears) let a report print
 * one line per kind with a count and an example. */
typedef struct sc__warning_group {
    const char *kind;   /* the format string */
    size_t first;       /* index of the kind's first warning */
    size_t count;
} sc__warning_group;
typedef struct sc__warnings {
    char **items;
    uint32_t *group;    /* items[i]'s index in groups */
    size_t count;
    sc__warning_group *groups;
    size_t ngroups;
} sc__warnings;

/* Appends the formatted line, of kind fmt; false on OOM (the list is
 * unchanged). */
bool sc__warnings_add(sc__warnings *w, const char *fmt, ...) SC__PRINTF(2, 3);
bool sc__warnings_vadd(sc__warnings *w, const char *fmt, va_list ap);
/* Appends a copy of line, of kind (a text that outlives w; lines of one
 * kind are grouped); false on OOM. For notes made without a format. */
bool sc__warnings_add_text(sc__warnings *w, const char *kind, const char *line);
/* Appends a copy of src's warnings, with their kinds; false on OOM. */
bool sc__warnings_copy(sc__warnings *dst, const sc__warnings *src);
/* Drops the warnings past the first `keep`. */
void sc__warnings_truncate(sc__warnings *w, size_t keep);
void sc__warnings_free(sc__warnings *w);
/* Group i of w as the public API hands it out; SC_E_USAGE when out of
 * range. */
sc_status sc__warnings_group_at(const sc__warnings *w, size_t i, sc_warning_group *out, sc_error *err);

/* ------------------------------------------------------------------ strings */

/* Interns byte strings: equal strings get equal uint32 ids; id 0 is "". The
 * bytes live in the interner's arena until sc__intern_free. */
typedef struct sc__intern {
    sc__arena arena;
    const char **strs; /* id -> NUL-terminated bytes */
    uint32_t *lens;    /* id -> length */
    uint32_t count, cap;
    uint32_t *slots; /* open addressing: id+1, 0 = empty */
    uint32_t *hashes;
    uint32_t nslots;
} sc__intern;

bool sc__intern_init(sc__intern *in);
void sc__intern_free(sc__intern *in);
/* Returns the id, or SC__NONE on OOM or a string over 4 GiB. */
uint32_t sc__intern_put(sc__intern *in, const char *s, size_t n);
/* Returns the id, or SC__NONE when the string was never interned. */
uint32_t sc__intern_find(const sc__intern *in, const char *s, size_t n);
static inline const char *sc__intern_str(const sc__intern *in, uint32_t id) {
    return id < in->count ? in->strs[id] : "";
}
static inline uint32_t sc__intern_len(const sc__intern *in, uint32_t id) {
    return id < in->count ? in->lens[id] : 0;
}
size_t sc__intern_memory(const sc__intern *in);

uint32_t sc__hash_bytes(const void *p, size_t n);
/* Seconds on the monotonic clock, for the timings a caller asks for. */
static inline double sc__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t sc__hash_u64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

bool sc__starts_with(const char *s, const char *prefix);
/* A malloc'ed copy of s, exactly its size; NULL on out-of-memory. */
char *sc__strdup(const char *s);
bool sc__contains(const char *s, const char *needle);
/* Whether s (NULL: no) contains key, ignoring the case of s; key is lower
 * case. For kernel and operator names, which are short. */
bool sc__contains_ci(const char *s, const char *key);

/* A growable text buffer for reports (JSON and text output). */
typedef struct sc__buf {
    char *data;
    size_t len, cap;
    bool oom;
} sc__buf;

void sc__buf_init(sc__buf *b);
void sc__buf_free(sc__buf *b);
void sc__buf_put(sc__buf *b, const char *s, size_t n);
void sc__buf_puts(sc__buf *b, const char *s);
void sc__buf_printf(sc__buf *b, const char *fmt, ...) SC__PRINTF(2, 3);
/* Appends s as a JSON string literal, quotes included. */
void sc__buf_json_str(sc__buf *b, const char *s, size_t n);
/* The same for a NUL-terminated s. */
void sc__buf_json_cstr(sc__buf *b, const char *s);
/* Writes a finished report to out in one call and frees b: SC_OK, SC_E_NOMEM
 * when building it ran out of memory (nothing is written), SC_E_IO when
 * the write failed. */
sc_status sc__buf_write(sc__buf *b, FILE *out, sc_error *err);

#endif /* SC_BASE_H */
