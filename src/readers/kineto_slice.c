/*
 * kineto_slice.c - a stretch of a Kineto file's event array read on a
 * thread of its own, so that one large file is parsed on every core.
 *
 * kineto_parallel.c cuts a file's traceEvents into slices at guessed
 * element starts: the '{' of a `}` `,` `{` (with any whitespace between),
 * found here in a buffer (sc__slice_guess) or in a plain file
 * (sc__slice_guess_file). Such a '{' starts an element unless the pattern
 * sits inside a string or a nested array of objects, so guesses are
 * verified, not trusted: a slice reads its own bytes through its own window
 * with a reader and trace of its own, parses whole elements and stops at
 * the first element that starts at or after its limit (the next slice's
 * guess), noting where that is - which is the guess itself exactly when
 * the guess was right. Slice 0 first reads the members before the array as
 * the sequential reader does (sc__slice_head), and after the array it reads
 * the members after it with the window of the slice that ended the array
 * (sc__slice_tail), so the walk state of the whole object stays in one
 * reader.
 */
#include "../io/source.h"
#include "kineto.h"

#include <stdlib.h>
#include <unistd.h>

/* A guess is searched for at most GUESS_SPAN bytes past its cut. */
#define GUESS_SPAN ((uint64_t)16 << 20)
#define GUESS_BUF SC__SLICE_GUESS_BUF
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

/* A raw newline cannot stand inside a JSON string and Kineto writes one
 * event per line, so within the first buffer a boundary with a newline in
 * it is preferred; else the first boundary found (within GUESS_SPAN). */
uint64_t sc__slice_guess_file(int fd, uint64_t from, char *buf) {
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
    sc__jp *jp = &s->r->jp;
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
        SC__JTRY(sc__kr_event(s->r));
        *state = SL_NEXT;
        return SC__J_OK;
    }
    return SC__J_ERR;
}

void sc__slice_parse(slice *s) {
    int state = s->first ? SL_FIRST : SL_EVENT;
    s->first = false;
    s->stop = NO_OFFSET;
    s->rc = sc__jp_run(&s->r->jp, slice_step, s, &state, SL_DONE);
}


bool sc__slice_open(slice *s, const char *path, uint64_t offset, const sc_load_options *opts,
                    uint64_t budget) {
    s->r = malloc(sizeof *s->r);
    if (!s->r) sc__fail(&s->err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    if (!s->r || sc__kr_open(s->r, &s->w, &s->src, s->t, path, opts, budget, true, &s->err) != SC_OK) {
        free(s->r); /* sc__kr_open closed what it had opened */
        s->r = NULL;
        sc__slice_close(s);
        return false;
    }
    s->w.base = offset; /* before the first refill: offsets are the file's */
    return (s->ready = true);
}

void sc__slice_close(slice *s) {
    if (s->ready) sc__kr_close(s->r, &s->w);
    free(s->r);
    s->r = NULL;
    if (s->has_src) sc__source_close(&s->src);
    s->ready = s->has_src = false;
}

bool sc__slice_head(slice *s) {
    int st = ST_START;
    if (sc__jp_run(&s->r->jp, sc__kr_step, s->r, &st, ST_EVENTS_FIRST) != SC__J_OK) return false;
    return (s->first = true);
}

void sc__slice_release_input(slice *s) {
    sc__jwin_free(&s->w);
    if (s->has_src) sc__source_close(&s->src);
    s->has_src = false;
}

bool sc__slice_tail(slice *s0, slice *last) {
    if (last != s0) { /* s0 takes over last's window, just past the ']' */
        size_t at = (size_t)(last->r->jp.p - last->w.buf);
        sc__slice_release_input(s0);
        s0->src = last->src;
        s0->w = last->w;
        s0->w.src = &s0->src;
        s0->has_src = true;
        s0->r->jp.p = s0->w.buf + at;
        s0->r->jp.end = s0->w.buf + s0->w.len;
        last->has_src = false;
        memset(&last->w, 0, sizeof last->w); /* closing last leaves them alone */
    }
    int from = s0->r->bare_array ? ST_END : ST_MEMBER;
    return sc__jp_drive(&s0->r->jp, sc__kr_step, s0->r, from, ST_END, "trace object") == SC__J_OK;
}
