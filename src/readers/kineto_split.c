/*
 * kineto_split.c - one large plain Kineto file read by several threads
 * (issue 5: a single huge file parsed in parallel where that pays).
 *
 * The calling thread reads the top-level members up to the '[' of
 * traceEvents with the ordinary reader. The rest of the file is cut into one
 * slice per thread at guessed element boundaries: from each cut point, the
 * '{' of the next `}` `,` `{` (with any whitespace between). Such a '{'
 * starts an element unless the pattern sits inside a string or a nested
 * array of objects, so guesses are verified, not trusted: each slice streams
 * its own byte range through its own window (sc__source_open_at), parses
 * whole elements and stops at the first element that starts at or after the
 * next slice's guess, noting where that is - which is the guess itself
 * exactly when the guess was right. Slice k+1's events are kept only then;
 * after a wrong guess slice k+1 is dropped and slice k reads on through its
 * bytes (a decoy costs one slice's time). So every byte of the array is
 * parsed once, in order, as the sequential reader does; slices past the end
 * of the array are dropped. The slices' traces are appended to the first in
 * file order (sc__trace_append), which gives every string and track the id
 * a sequential read gives it, and the window of the slice that ended the
 * array reads the members after it. The slice pieces (sc__slice_*) also
 * serve the gzip reader, kineto_stream.c, which slices a stream as it is
 * inflated.
 *
 * Memory: one read window per slice; events as in a sequential read, plus
 * the slices' own arrays until each is appended.
 *
 * Any other surprise - a parse error, the memory budget - returns false and
 * the caller reads the file sequentially, which reports every error exactly
 * as before, so this path never has to.
 */
#include "../io/source.h"
#include "kineto.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Smallest slice by default (a file is split only when it makes two):
 * below it, starting threads and merging cost more than the parse they
 * share. A guess is searched for at most GUESS_SPAN bytes past its cut. */
#define SPLIT_MIN_SLICE ((uint64_t)16 << 20)
#define SPLIT_MAX 64
#define GUESS_SPAN ((uint64_t)16 << 20)
#define GUESS_BUF 65536
#define NO_OFFSET SC__NO_OFFSET

typedef sc__slice slice;

static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* If a `}` ws* `,` ws* `{` starts at buf[i] (within n bytes): the offset of
 * its '{' in buf, with *newline set when its whitespace holds a newline;
 * 0 when there is none; SIZE_MAX when the buffer ends first. */
static size_t boundary_at(const char *buf, size_t i, size_t n, bool *newline) {
    size_t q = i + 1;
    *newline = false;
    for (; q < n && is_ws(buf[q]); q++) *newline |= buf[q] == '\n';
    if (q < n && buf[q] != ',') return 0;
    for (q++; q < n && is_ws(buf[q]); q++) *newline |= buf[q] == '\n';
    if (q >= n) return SIZE_MAX;
    return buf[q] == '{' ? q : 0;
}

/* Scans buf[0..n) for boundaries: the offset of the '{' of the first one
 * whose whitespace holds a newline, else SIZE_MAX, with *first set to the
 * first boundary's when it was SIZE_MAX. *scanned: the bytes looked at for
 * good (a boundary cut by the end of buf is looked at again from its '}'). */
static size_t scan_boundaries(const char *buf, size_t n, size_t *first, size_t *scanned) {
    size_t i = 0;
    for (; i < n; i++) {
        if (buf[i] != '}') continue;
        bool newline;
        size_t q = boundary_at(buf, i, n, &newline);
        if (q == SIZE_MAX) break;
        if (q && newline) return q;
        if (q && *first == SIZE_MAX) *first = q;
    }
    *scanned = i ? i : n;
    return SIZE_MAX;
}

/* Offset of a likely element start at or after `from` (within GUESS_SPAN
 * bytes), NO_OFFSET when none: the '{' of a `}` `,` `{`. A raw newline
 * cannot stand inside a JSON string and Kineto writes one event per line,
 * so within the first buffer a boundary with a newline in it is preferred;
 * else the first boundary found. buf has GUESS_BUF bytes. */
static uint64_t guess_element(int fd, uint64_t from, char *buf) {
    for (uint64_t at = from; at - from < GUESS_SPAN;) {
        ssize_t got = pread(fd, buf, GUESS_BUF, (off_t)at);
        if (got <= 0) break;
        size_t first = SIZE_MAX, scanned;
        size_t q = scan_boundaries(buf, (size_t)got, &first, &scanned);
        if (q != SIZE_MAX) return at + q;
        if (first != SIZE_MAX) return at + first;
        at += scanned;
    }
    return NO_OFFSET;
}

size_t sc__slice_guess(const char *buf, size_t n) {
    size_t first = SIZE_MAX, scanned, rest;
    size_t q = scan_boundaries(buf, n < GUESS_BUF ? n : GUESS_BUF, &first, &scanned);
    if (q != SIZE_MAX || first != SIZE_MAX) return q != SIZE_MAX ? q : first;
    /* none near the start: the first boundary anywhere in the chunk */
    q = scan_boundaries(buf + scanned, n - scanned, &first, &rest);
    if (first == SIZE_MAX && q == SIZE_MAX) return SIZE_MAX;
    return scanned + (first != SIZE_MAX ? first : q);
}

/* The steps of a slice; each is one retryable unit (json.h). */
enum { SL_FIRST, SL_EVENT, SL_NEXT, SL_DONE };

static int slice_step(void *ctx, int *state) {
    slice *s = ctx;
    sc__jp *jp = &s->r.jp;
    bool done;
    switch (*state) {
    case SL_FIRST: /* slice 0, just after '[': the array may be empty */
    case SL_NEXT:
        SC__JTRY(sc__jp_element(jp, *state == SL_FIRST, &done));
        if (done) {
            s->after = sc__jp_offset(jp, jp->p);
            *state = SL_DONE;
            return SC__J_OK;
        }
        if (sc__jp_peek(jp) == '\0' && jp->p >= jp->end) return SC__J_MORE;
        uint64_t at = sc__jp_offset(jp, jp->p);
        /* Relaxed: a limit is set before the bytes at it can be read (the
         * gzip reader publishes it with the chunk it lies in). */
        if (at >= atomic_load_explicit(&s->limit, memory_order_relaxed)) {
            s->stop = at;
            *state = SL_DONE;
            return SC__J_OK;
        }
        *state = SL_EVENT;
        return SC__J_OK;
    case SL_EVENT:
        SC__JTRY(sc__kr_event(&s->r));
        *state = SL_NEXT;
        return SC__J_OK;
    }
    return SC__J_ERR;
}

void sc__slice_parse(slice *s) {
    int state = s->first ? SL_FIRST : SL_EVENT;
    s->first = false;
    s->stop = NO_OFFSET;
    s->rc = sc__jp_run(&s->r.jp, slice_step, s, &state, SL_DONE);
}

static void *read_slice(void *arg) {
    sc__slice_parse(arg);
    return NULL;
}

bool sc__slice_open(slice *s, const char *path, uint64_t offset, const sc_load_options *opts,
                    uint64_t budget) {
    if (sc__kr_open(&s->r, &s->w, &s->src, s->t, path, opts, budget, true, &s->err) != SC_OK) {
        sc__slice_close(s);
        return false;
    }
    s->w.base = offset; /* before the first refill: offsets are the file's */
    return (s->ready = true);
}

void sc__slice_close(slice *s) {
    if (s->ready) sc__kr_close(&s->r, &s->w);
    if (s->has_src) sc__source_close(&s->src);
    s->ready = s->has_src = false;
}

bool sc__slice_head(slice *s) {
    int st = ST_START;
    if (sc__jp_run(&s->r.jp, sc__kr_step, &s->r, &st, ST_EVENTS_FIRST) != SC__J_OK) return false;
    return (s->first = true);
}

/* Opens a window on the plain file at `offset` for slice s. */
static bool open_slice(slice *s, const char *path, uint64_t offset, const sc_load_options *opts,
                       uint64_t budget) {
    if (sc__source_open_at(&s->src, path, offset, &s->err) != SC_OK) return false;
    s->has_src = true;
    return sc__slice_open(s, path, offset, opts, budget);
}

/* Cuts the bytes from `from` to the file's end into at most n slices at
 * guessed element starts; returns how many. */
static unsigned cut_slices(slice *sl, unsigned n, uint64_t from, uint64_t size, int fd, char *buf) {
    unsigned k = 1;
    sl[0].start = from;
    for (unsigned i = 1; i < n; i++) {
        uint64_t g = guess_element(fd, from + (size - from) / n * i, buf);
        if (g == NO_OFFSET || g <= sl[k - 1].start) break;
        sl[k - 1].limit = g;
        sl[k++].start = g; /* its limit: NO_OFFSET until a next slice is cut */
    }
    return k;
}

/* Checks each slice ended exactly where the next began. Where a guess was
 * wrong, that slice is dropped and the one before reads on through its
 * bytes (in this thread): a decoy costs one slice's time, not the split.
 * Then appends the kept slices to the first; returns the last one, or -1
 * to give up. */
static int merge_slices(slice *sl, unsigned n) {
    unsigned k = 0;
    for (;;) {
        if (sl[k].rc != SC__J_OK) return -1;
        if (sl[k].after != NO_OFFSET) break;
        unsigned j = k + 1;
        while (j < n && sl[j].dropped) j++;
        if (j >= n) return -1;
        if (sl[k].stop == sl[j].start) {
            k = j;
            continue;
        }
        sl[j].dropped = true;
        sl[k].limit = sl[j].limit;
        /* Where it stopped may already be the first element past the new
         * limit; else it reads on to it. */
        if (sl[k].stop < sl[k].limit) sc__slice_parse(&sl[k]);
    }
    unsigned last = k;
    /* The merged sizes are known: reserving them exactly, instead of
     * doubling as appends do, keeps the result within the budget that the
     * slices' shares add up to. */
    size_t events = 0, exts = 0, shapes = 0;
    for (k = 0; k <= last; k++) {
        if (sl[k].dropped) continue;
        events += sl[k].t->events.len;
        exts += sl[k].t->exts.len;
        shapes += sl[k].t->shapes.len;
    }
    sc_trace *t0 = sl[0].t;
    if (!sc__vec_reserve_exact(&t0->events, events) || !sc__vec_reserve_exact(&t0->exts, exts) ||
        !sc__vec_reserve_exact(&t0->shapes, shapes))
        return -1;
    for (k = 1; k <= last; k++) {
        if (k < last) sc__slice_close(&sl[k]); /* the last one's window reads the tail */
        if (!sl[k].dropped && !sc__trace_append(t0, sl[k].t)) return -1;
        sc_trace_free(sl[k].t);
        sl[k].t = NULL;
    }
    return (int)last;
}

void sc__slice_release_input(slice *s) {
    sc__jwin_free(&s->w);
    if (s->has_src) sc__source_close(&s->src);
    s->has_src = false;
}

bool sc__slice_tail(slice *s0, slice *last) {
    if (last != s0) { /* s0 takes over last's window, just past the ']' */
        size_t at = (size_t)(last->r.jp.p - last->w.buf);
        sc__slice_release_input(s0);
        s0->src = last->src;
        s0->w = last->w;
        s0->w.src = &s0->src;
        s0->has_src = true;
        s0->r.jp.p = s0->w.buf + at;
        s0->r.jp.end = s0->w.buf + s0->w.len;
        last->has_src = false;
        memset(&last->w, 0, sizeof last->w); /* closing last leaves them alone */
    }
    int from = s0->r.bare_array ? ST_END : ST_MEMBER;
    return sc__jp_drive(&s0->r.jp, sc__kr_step, &s0->r, from, ST_END, "trace object") == SC__J_OK;
}

bool sc__kineto_load_split(const char *path, const sc_load_options *opts, unsigned threads,
                           size_t min_slice, sc_trace **out) {
    *out = NULL;
    if (threads < 2 || (opts && opts->window_bytes)) return false; /* a set window: stream */
    if (threads > SPLIT_MAX) threads = SPLIT_MAX;
    if (!min_slice) min_slice = SPLIT_MIN_SLICE;
    /* Most files are too small to split: say so before allocating anything
     * (a stat; the gzip check comes with the first open). */
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size < 2 * (uint64_t)min_slice)
        return false;
    uint64_t size = (uint64_t)sb.st_size;
    bool ok = false;
    uint64_t budget = sc__load_budget(opts);
    slice *sl = calloc(threads, sizeof *sl);
    char *buf = malloc(GUESS_BUF);
    sc_trace *t0 = sc__trace_new(path);
    pthread_t tids[SPLIT_MAX];
    unsigned n = 0, started = 0;
    if (!sl || !buf || !t0) goto out;
    for (unsigned k = 0; k < threads; k++) {
        sl[k].after = sl[k].stop = NO_OFFSET;
        sl[k].limit = NO_OFFSET;
    }

    /* The members before the events, as the sequential reader reads them. */
    sl[0].t = t0;
    if (!open_slice(&sl[0], path, 0, opts, budget)) goto out;
    if (!sc__slice_head(&sl[0])) goto out;
    uint64_t events = sc__jp_offset(&sl[0].r.jp, sl[0].r.jp.p);

    uint64_t most = (size - events) / min_slice;
    n = cut_slices(sl, most < threads ? (unsigned)(most ? most : 1) : threads, events, size, sl[0].src.fd,
                   buf);
    if (n < 2) goto out;
    sl[0].r.budget = budget / n; /* each slice holds its share, as files of a set do */
    for (unsigned k = 1; k < n; k++)
        if (!(sl[k].t = sc__trace_new(path)) || !open_slice(&sl[k], path, sl[k].start, opts, budget / n))
            goto out;
    started = 1; /* slices 1 .. started-1 run on threads of their own */
    while (started < n && pthread_create(&tids[started], NULL, read_slice, &sl[started]) == 0) started++;
    read_slice(&sl[0]);
    for (unsigned k = started; k < n; k++) read_slice(&sl[k]); /* no thread to be had */
    for (unsigned k = 1; k < started; k++) pthread_join(tids[k], NULL);

    int last = merge_slices(sl, n);
    if (last < 0 || !sc__slice_tail(&sl[0], &sl[last])) goto out;
    if (sc_trace_memory(t0) > budget) goto out;
    t0->input_bytes = size;
    sc_error e;
    if (sc__kr_finish(t0, path, &e) != SC_OK) goto out;
    ok = true;
out:
    for (unsigned k = 0; sl && k < threads; k++) {
        sc__slice_close(&sl[k]);
        if (k > 0) sc_trace_free(sl[k].t);
    }
    free(sl);
    free(buf);
    if (!ok) {
        sc_trace_free(t0);
        return false;
    }
    *out = t0;
    return true;
}
