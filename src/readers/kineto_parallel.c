/*
 * kineto_parallel.c - one large Kineto file parsed on several threads, so
 * that a single huge file is read at the speed of every core (and a gzip
 * file, ideally, at the speed of its decompression).
 *
 * The file's traceEvents are cut into slices at guessed element starts
 * (kineto_slice.c), which a pool of threads parses in order of their starts
 * as they come. The calling thread verifies them in that order (a slice
 * must stop exactly at the next one's start), appends each verified
 * slice's trace to the result and closes it. After a wrong guess the slice
 * before reads on through the dropped slice's bytes, on the calling thread;
 * the slice that ends the array reads the members after it. Appending as
 * slices come keeps the result the only large thing in memory, and the
 * copying off the critical path: cutting a 5.2 GB file into one slice per
 * thread and appending at the end held 2.9 GB against 1.9 GB and took
 * 3.8-10.4 s against 2.6-2.8 s on 2 cores.
 *
 * Where the slices come from depends on the file:
 *  - plain: slice 0 reads the members before the array, then the rest is
 *    cut at least PLAIN_SLICE bytes apart, all before the pool starts
 *    (cut_plain), and each slice reads the file itself from its start. The
 *    pool runs at most `ahead` slices past the last one appended, which is
 *    all that bounds the slices parsed and waiting.
 *  - gzip: a stream can only be inflated from its start, and a decoded file
 *    is too large to hold whole, so one thread inflates the file into
 *    chunks (src/io/chunks.c). As each chunk is decoded, before any reader
 *    can reach it, a slice is opened at the chunk's first guessed element
 *    start; that start is also the limit of the slice before. The parsing
 *    threads run at a lower priority than the decoder, which all of them
 *    wait on (STREAM_PARSER_DEFER).
 *
 * Why the bounded chunk store cannot stall for good: the decoder waits only
 * while HELD chunks from the lowest open cursor on are kept. A slice's
 * window holds one element of at most one chunk (max_event_bytes below)
 * plus at most one refill, so a slice never reads more than two chunks past
 * its limit, which is the next slice's start. So whichever cursor is
 * lowest, every slice that runs needs only chunks within three of it, all
 * of them decoded once HELD >= 4: the running slices finish, the pool takes
 * the next, the calling thread verifies and closes, and the lowest cursor
 * moves on. Two reads have no limit, so no cursor may sit idle ahead of
 * them: while slice 0 reads the members before the array no slice is
 * opened, and before the members after it are read every slice that is
 * not running is closed and none is opened. A slice that fails is closed
 * at once. Memory: HELD chunks, one window per open slice, and each open
 * slice's trace until it is appended.
 *
 * Any surprise (a parse error, a decoder error, the memory budget) returns
 * false and the caller reads the file sequentially, which reports every
 * error exactly as before.
 */
#include "../io/source.h"
#include "kineto.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#define STREAM_CHUNK ((size_t)4 << 20)
/* Bytes per slice of a plain file, at least: on the 513 MB bench file 16 MB
 * loaded in 0.228 s, 4 MB in 0.233 s, 64 MB in 0.256 s (2 cores; means of 8
 * alternated loads for 4 and 16). Files under two slices are read
 * sequentially: starting threads and merging would cost more than the
 * parse they share. */
#define PLAIN_SLICE ((size_t)16 << 20)
#define STREAM_WINDOW ((size_t)256 << 10)
#define STREAM_MAX_THREADS 64
/* Nice levels the parsing threads step back from the decoder. Everything
 * waits on the decoder, the one stage that cannot be shared out; with more
 * threads than cores (two parsers, the decoder and the calling thread on 2
 * cores) fair shares left it a part of a core. Ten levels down (a tenth of
 * the decoder's weight) the 513 MB bench file loaded in 0.420 s against
 * 0.462 s on 2 cores (means of 10 alternated best-of-5 loads, 8 pairs of 10
 * faster; 5 levels gained less); with a core for every thread it changes
 * nothing. */
#define STREAM_PARSER_DEFER 10

typedef struct sslice {
    sc__slice s;
    bool done; /* parsed (or skipped): the pool is through with it */
} sslice;

/* The event arrays of a slice's trace once appended, kept for the next
 * slice: new arrays would be paged in afresh (30k more page faults on the
 * 513 MB bench file, measured). */
typedef struct spare {
    sc__vec events, exts, shapes;
} spare;

typedef struct stream {
    const char *path;
    const sc__source *src; /* the file; its size sizes the result's arrays */
    sc_load_options opts; /* the caller's, with the slices' window */
    uint64_t budget;
    sc_trace *t0;
    pthread_mutex_t mu;
    pthread_cond_t changed; /* a slice was added or done, or the decoder ended */
    sslice **sl;            /* by start; sl[0] starts the file */
    size_t n, cap;
    size_t next_run; /* the next slice the pool takes */
    bool ended;      /* the decoder is through: no slice will be added */
    bool quit;       /* the pool takes no more slices, and none are added */
    bool head_read;  /* slice 0 is past the '[' of traceEvents */
    bool plain;      /* a plain file: every slice is cut before the pool starts (cut_plain) */
    size_t merged;   /* slices verified; on a plain file the pool runs at most `ahead` past them */
    size_t ahead;
    spare *spares;   /* under mu */
    size_t nspares, spares_cap;
} stream;

/* Gives t's event arrays, emptied, to the spares (or frees them). */
static void keep_arrays(stream *st, sc_trace *t) {
    spare sp = {t->events, t->exts, t->shapes};
    sp.events.len = sp.exts.len = sp.shapes.len = 0;
    sc__vec_init(&t->events, sizeof(sc__event));
    sc__vec_init(&t->exts, sizeof(sc__event_ext));
    sc__vec_init(&t->shapes, sizeof(sc__event_shapes));
    pthread_mutex_lock(&st->mu);
    bool kept = st->nspares < st->spares_cap;
    if (kept) st->spares[st->nspares++] = sp;
    pthread_mutex_unlock(&st->mu);
    if (!kept) {
        sc__vec_free(&sp.events);
        sc__vec_free(&sp.exts);
        sc__vec_free(&sp.shapes);
    }
}

/* A new trace for a slice, with spare arrays when there are some. */
static sc_trace *slice_trace(stream *st) {
    sc_trace *t = sc__trace_new(st->path);
    if (!t) return NULL;
    pthread_mutex_lock(&st->mu);
    if (st->nspares) {
        spare *sp = &st->spares[--st->nspares];
        t->events = sp->events;
        t->exts = sp->exts;
        t->shapes = sp->shapes;
    }
    pthread_mutex_unlock(&st->mu);
    return t;
}

static sslice *new_slice(uint64_t start) {
    sslice *s = calloc(1, sizeof *s);
    if (s) {
        s->s.start = start;
        s->s.after = s->s.stop = SC__NO_OFFSET;
        s->s.limit = SC__NO_OFFSET;
    }
    return s;
}

/* Adds s after the slices held, as the limit of the last one not dropped;
 * false when out of memory. Under mu once the pool runs. */
static bool push_slice(stream *st, sslice *s) {
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 64;
        sslice **grown = realloc(st->sl, cap * sizeof *grown);
        if (!grown) return false;
        st->sl = grown;
        st->cap = cap;
    }
    if (st->n) { /* the slice before, past any dropped since */
        size_t i = st->n - 1;
        while (i > 0 && st->sl[i]->s.dropped) i--;
        atomic_store_explicit(&st->sl[i]->s.limit, s->s.start, memory_order_relaxed);
    }
    st->sl[st->n++] = s;
    return true;
}

static void free_slice(stream *st, sslice *s) {
    sc__slice_close(&s->s);
    if (s->s.t != st->t0) sc_trace_free(s->s.t);
    s->s.t = NULL;
}

/* Runs on the decoder thread for each chunk before any cursor can read
 * it: opens a slice at its first likely element (chunk 0: at its start)
 * and makes that the limit of the slice before. No slice starts while
 * slice 0 reads the members before the array (a guess there is no element,
 * and its cursor, parked, would hold chunks that slice 0 needs: the head
 * has no limit), nor once the array has ended. */
static void on_chunk(void *ctx, sc__chunks *c, const char *bytes, size_t len, uint64_t offset) {
    stream *st = ctx;
    /* The guess scans up to a whole chunk: outside the lock the pool waits on. */
    size_t q = !bytes ? SIZE_MAX : offset ? sc__slice_guess(bytes, len) : 0;
    pthread_mutex_lock(&st->mu);
    if (!bytes) {
        st->ended = true;
        pthread_cond_broadcast(&st->changed);
        pthread_mutex_unlock(&st->mu);
        return;
    }
    bool wanted = q != SIZE_MAX && !st->quit && (offset == 0 || st->head_read);
    sslice *s = wanted ? new_slice(offset + q) : NULL;
    if (s && sc__source_open_chunks(&s->s.src, c, s->s.start, &s->s.err) == SC_OK) {
        s->s.has_src = true;
        if (push_slice(st, s)) {
            pthread_cond_broadcast(&st->changed);
            s = NULL;
        } else {
            sc__slice_close(&s->s);
        }
    }
    free(s); /* no slice here: the one before reads on */
    pthread_mutex_unlock(&st->mu);
}

/* A plain file needs no decoder. Slice 0 reads the members before the
 * array here, then the rest is cut at guessed element starts
 * (sc__slice_guess_file) at least `every` bytes apart, all before the pool
 * starts; each slice opens the file at its own start when the pool takes
 * it. False when that fails or makes one slice only: then the file is read
 * sequentially. */
static bool cut_plain(stream *st, int fd, uint64_t size, size_t every) {
    sslice *s0 = new_slice(0);
    if (!s0 || !push_slice(st, s0)) {
        free(s0);
        return false;
    }
    s0->s.t = st->t0;
    if (sc__source_open_at(&s0->s.src, st->path, 0, &s0->s.err) != SC_OK) return false;
    s0->s.has_src = true;
    if (!sc__slice_open(&s0->s, st->path, 0, &st->opts, st->budget)) return false;
    s0->s.r->sized_by = st->src; /* it fills the result from the file's start */
    if (!sc__slice_head(&s0->s)) return false;
    st->head_read = true;
    char *buf = malloc(SC__SLICE_GUESS_BUF);
    bool ok = buf != NULL;
    uint64_t g = sc__jp_offset(&s0->s.r->jp, s0->s.r->jp.p);
    while (ok && size - g > every) {
        if ((g = sc__slice_guess_file(fd, g + every, buf)) == SC__NO_OFFSET || g >= size) break;
        sslice *s = new_slice(g);
        if (!(ok = s && push_slice(st, s))) free(s);
    }
    free(buf);
    st->ended = true;
    return ok && st->n >= 2;
}

/* Sets up slice `index` and parses it to its limit. On a plain file each
 * slice reads the file itself, from its start on, and slice 0 read the
 * head before the cuts were made. */
static void run_slice(stream *st, sslice *s, size_t index) {
    if (st->plain && index == 0) {
        sc__slice_parse(&s->s);
        return;
    }
    s->s.rc = SC__J_ERR;
    s->s.t = index == 0 ? st->t0 : slice_trace(st);
    if (!s->s.t) return;
    if (st->plain) {
        if (sc__source_open_at(&s->s.src, st->path, s->s.start, &s->s.err) != SC_OK) return;
        s->s.has_src = true;
    }
    if (!sc__slice_open(&s->s, st->path, s->s.start, &st->opts, st->budget)) return;
    if (index == 0) {
        s->s.r->sized_by = st->src; /* it fills the result from the file's start */
        if (!sc__slice_head(&s->s)) return;
        pthread_mutex_lock(&st->mu);
        st->head_read = true;
        pthread_mutex_unlock(&st->mu);
    }
    sc__slice_parse(&s->s);
}

/* Must the pool leave the next slice for now? On a plain file nothing
 * else bounds how far parsing runs ahead of the appends (no decoder to
 * wait for), and every slice parsed and not yet appended holds its
 * events. Under mu. */
static bool held_back(const stream *st) {
    return st->plain && st->next_run >= st->merged + st->ahead;
}

static void *pool_thread(void *arg) {
    stream *st = arg;
    sc__thread_defer(STREAM_PARSER_DEFER);
    pthread_mutex_lock(&st->mu);
    for (;;) {
        while (!st->quit && (st->next_run < st->n ? held_back(st) : !st->ended))
            pthread_cond_wait(&st->changed, &st->mu);
        if (st->quit || st->next_run >= st->n) break;
        size_t index = st->next_run++;
        sslice *s = st->sl[index];
        bool skip = s->s.dropped;
        pthread_mutex_unlock(&st->mu);
        if (!skip) run_slice(st, s, index);
        pthread_mutex_lock(&st->mu);
        s->done = true;
        /* Dropped while it ran, failed (it is dropped, or the read gives
         * up, when it is reached), or past the array's end: nobody will
         * read on in it, and its cursor would hold chunks back. Freed under
         * the lock, as stop_pool frees the done ones. */
        if (s->s.dropped || s->s.rc != SC__J_OK || st->quit) free_slice(st, s);
        pthread_cond_broadcast(&st->changed);
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* Grows the result's arrays for a slice's events, which end at offset
 * `done` of the decoded file, to the size the whole file is on course for
 * (sc__vec_grown_cap), as the sequential reader does, where that fits the
 * budget; else (or out of memory here) sc__trace_append doubles them. */
static void size_result(stream *st, const sc_trace *add, uint64_t done) {
    sc_trace *t0 = st->t0;
    sc__vec *to[3] = {&t0->events, &t0->exts, &t0->shapes};
    const sc__vec *from[3] = {&add->events, &add->exts, &add->shapes};
    uint64_t total = sc__source_expected_size(st->src, done), grow = 0;
    size_t cap[3];
    for (int i = 0; i < 3; i++) {
        cap[i] = sc__vec_grown_cap(to[i], to[i]->len + from[i]->len, done, total);
        grow += (uint64_t)(cap[i] - to[i]->cap) * to[i]->elem;
    }
    if (!grow || sc_trace_memory(t0) + grow > st->budget) return;
    for (int i = 0; i < 3; i++) (void)sc__vec_reserve_exact(to[i], cap[i]);
}

/* Appends a verified slice's events to the result (slice 0 holds them
 * already) and frees its trace. */
static bool append_slice(stream *st, sslice *s) {
    if (s->s.t == st->t0) return true;
    size_result(st, s->s.t, s->s.after != SC__NO_OFFSET ? s->s.after : s->s.stop);
    bool ok = sc__trace_append(st->t0, s->s.t) && sc_trace_memory(st->t0) <= st->budget;
    keep_arrays(st, s->s.t);
    sc_trace_free(s->s.t);
    s->s.t = NULL;
    return ok;
}

/* A verified slice that the next one follows: it is done with its window
 * and cursor (slice 0 keeps its reader for the tail). */
static bool accept_slice(stream *st, sslice *s) {
    if (s->s.t == st->t0) sc__slice_release_input(&s->s);
    else sc__slice_close(&s->s);
    return append_slice(st, s);
}

/* Verifies the slices in order as the pool finishes them, appending each
 * to the result; returns the slice that ended the array, or NULL to give
 * up. Where a slice did not stop at the next one's start, that one is
 * dropped and this one reads on, here. */
static sslice *merge_in_order(stream *st) {
    size_t v = 0;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        while (!(v < st->n && st->sl[v]->done) && !(st->ended && v >= st->n))
            pthread_cond_wait(&st->changed, &st->mu);
        if (v >= st->n) break;
        sslice *cur = st->sl[v];
        if ((v == 0 && cur->s.start != 0) || cur->s.rc != SC__J_OK) break;
        if (cur->s.after != SC__NO_OFFSET) { /* its window reads the tail */
            pthread_mutex_unlock(&st->mu);
            return append_slice(st, cur) ? cur : NULL;
        }
        size_t j = v + 1; /* cur stopped at its limit: some later slice set it */
        while (j < st->n && st->sl[j]->s.dropped) j++;
        if (j >= st->n) break;
        sslice *next = st->sl[j];
        if (cur->s.stop == next->s.start) {
            pthread_mutex_unlock(&st->mu);
            if (!accept_slice(st, cur)) return NULL;
            pthread_mutex_lock(&st->mu);
            if (v > 0) { /* nothing refers to it any more (slice 0 reads the tail) */
                free(cur); /* its descriptor (the reader went at its close) */
                st->sl[v] = NULL;
            }
            v = st->merged = j;
            pthread_cond_broadcast(&st->changed); /* a held-back pool may go on */
            continue;
        }
        next->s.dropped = true;
        uint64_t limit = atomic_load_explicit(&next->s.limit, memory_order_relaxed);
        atomic_store_explicit(&cur->s.limit, limit, memory_order_relaxed);
        bool close = next->done; /* else its pool thread closes it */
        pthread_mutex_unlock(&st->mu);
        if (close) free_slice(st, next);
        /* Where it stopped may already be the first element past the new
         * limit; else it reads on to it. */
        if (cur->s.stop < limit) sc__slice_parse(&cur->s);
        pthread_mutex_lock(&st->mu);
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* The pool takes no more slices and none are added. The ones after
 * `last` (the slice that ended the array; NULL: giving up) that are done
 * or were never taken are freed here, so that their cursors hold no chunks
 * back from the tail read; the running ones their threads free. */
static void stop_pool(stream *st, const sslice *last) {
    pthread_mutex_lock(&st->mu);
    st->quit = true;
    pthread_cond_broadcast(&st->changed);
    bool after = false;
    for (size_t k = 0; last && k < st->n; k++) {
        sslice *s = st->sl[k];
        if (!s) continue; /* appended and freed */
        if (after && (s->done || k >= st->next_run)) free_slice(st, s);
        after |= s == last;
    }
    pthread_mutex_unlock(&st->mu);
}

bool sc__kineto_load_parallel(const char *path, const sc_load_options *opts, unsigned threads,
                              size_t slice_bytes, sc_trace **out) {
    *out = NULL;
    if (threads < 2 || (opts && opts->window_bytes)) return false; /* a set window: sequential */
    if (threads > STREAM_MAX_THREADS) threads = STREAM_MAX_THREADS;
    /* Only a regular file can be read again, as the sequential read that
     * follows a failure does. */
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return false;
    sc__source src;
    sc_error e;
    if (sc__source_open_file(&src, path, &e) != SC_OK) return false;
    stream st = {.path = path, .src = &src, .budget = sc__load_budget(opts), .plain = !src.gzip, .ahead = threads + 2};
    size_t chunk = slice_bytes ? slice_bytes : st.plain ? PLAIN_SLICE : STREAM_CHUNK;
    /* A small gzip file is one slice: then decoding and parsing still
     * overlap, as fast as the read-ahead thread that this replaced
     * (measured). */
    if ((st.plain && (uint64_t)sb.st_size < 2 * (uint64_t)chunk) || !(st.t0 = sc__trace_new(path))) {
        sc__source_close(&src);
        return false;
    }
    if (opts) st.opts = *opts;
    st.opts.window_bytes = chunk / 2 < STREAM_WINDOW ? chunk / 2 : STREAM_WINDOW;
    /* Elements of at most one chunk (see the top of the file); a larger
     * one fails its slice, and the sequential read takes it. */
    if (!st.plain && (!st.opts.max_event_bytes || st.opts.max_event_bytes > chunk))
        st.opts.max_event_bytes = chunk;
    st.spares_cap = threads + 2; /* the slices that parse at once, and some */
    if (!(st.spares = calloc(st.spares_cap, sizeof *st.spares))) {
        sc_trace_free(st.t0);
        sc__source_close(&src);
        return false;
    }
    pthread_mutex_init(&st.mu, NULL);
    pthread_cond_init(&st.changed, NULL);
    bool ok = false;
    pthread_t tids[STREAM_MAX_THREADS];
    unsigned started = 0;
    sc__chunks *chunks = NULL;
    if (st.plain ? cut_plain(&st, src.fd, (uint64_t)sb.st_size, chunk)
                 : (chunks = sc__chunks_start(&src, chunk, threads + 4, on_chunk, &st)) != NULL)
        while (started < threads && pthread_create(&tids[started], NULL, pool_thread, &st) == 0) started++;
    sslice *last = started ? merge_in_order(&st) : NULL;
    stop_pool(&st, last);
    pthread_mutex_lock(&st.mu); /* the decoder may still be adding slices */
    sslice *s0 = st.n ? st.sl[0] : NULL;
    pthread_mutex_unlock(&st.mu);
    if (last && sc__slice_tail(&s0->s, &last->s) && sc_trace_memory(st.t0) <= st.budget) {
        st.t0->input_bytes = s0->s.w.base + s0->s.w.len;
        ok = sc__kr_finish(st.t0, path, &e) == SC_OK;
    }
    if (chunks) sc__chunks_stop(chunks); /* slices past the array stop reading */
    for (unsigned k = 0; k < started; k++) pthread_join(tids[k], NULL);
    for (size_t k = 0; k < st.n; k++) {
        if (st.sl[k]) free_slice(&st, st.sl[k]);
        free(st.sl[k]);
    }
    sc__chunks_free(chunks);
    sc__source_close(&src);
    free(st.sl);
    for (size_t k = 0; k < st.nspares; k++) {
        sc__vec_free(&st.spares[k].events);
        sc__vec_free(&st.spares[k].exts);
        sc__vec_free(&st.spares[k].shapes);
    }
    free(st.spares);
    pthread_mutex_destroy(&st.mu);
    pthread_cond_destroy(&st.changed);
    if (!ok) {
        sc_trace_free(st.t0);
        return false;
    }
    *out = st.t0;
    return true;
}
