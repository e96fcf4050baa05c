/*
 * json.h - a streaming, validating JSON scanner for trace readers.
 *
 * Trace files are hundreds of MB to GB, so no reader builds a DOM. Input
 * arrives through a sliding window (sc__jwin) over an sc__source; a reader
 * parses one *unit* at a time (one element of traceEvents, one top-level
 * member) with the primitives below. When a primitive runs into the end of
 * the window it returns SC__J_MORE: the reader asks the window to refill,
 * keeping the bytes from the unit's start, and parses the unit again. Units
 * have no side effects until they complete, so a retry is always safe.
 * sc__jp_drive runs that loop over a whole document, sc__jp_run up to a
 * state (for a reader that stops part-way, e.g. one slice of a file).
 *
 * The window keeps a NUL sentinel after the last byte: hot loops test for the
 * sentinel instead of bounds, and a NUL inside the data (invalid JSON) is
 * told apart from the end by its position.
 */
#ifndef SC_JSON_H
#define SC_JSON_H

#include "../base/base.h"
#include "../io/source.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { SC__J_OK = 0, SC__J_MORE = 1, SC__J_ERR = 2 };

typedef struct sc__jwin {
    sc__source *src;
    char *buf;        /* cap + 1 bytes; buf[len] == '\0' */
    size_t len, cap;
    size_t max_cap;   /* the largest unit we accept */
    uint64_t base;    /* stream offset of buf[0] */
    bool eof;
    bool failed;      /* a read of src failed: its error is the load's */
} sc__jwin;

typedef struct sc__jp {
    const char *p, *end; /* cursor and sentinel position in the window */
    sc__jwin *w;
    sc_error *err;
    const char *name;      /* input name for errors */
    char *scratch;         /* unescaped string bytes */
    size_t scratch_cap;
    uint64_t max_string;
    uint32_t max_depth;
    uint8_t *stack;        /* skip_value's container stack, max_depth bytes */
    sc__progress *progress; /* the load's (sc__progress_of its options), NULL: none */
} sc__jp;

typedef struct sc__jstr {
    const char *s;
    size_t n;
} sc__jstr;

/* initial: first window size (0: 256 KiB); max_unit: the largest unit kept. */
sc_status sc__jwin_init(sc__jwin *w, sc__source *src, size_t initial, size_t max_unit,
                        sc_error *err);
void sc__jwin_free(sc__jwin *w);
/* Keeps bytes from keep_from on, reads more; moves jp->p along. Returns
 * SC__J_ERR at the end of input (truncated) or on read errors. */
int sc__jwin_refill(sc__jp *jp, const char *keep_from);
/* After a reader's parse or format error in gzip input: inflates on (up to
 * 16 MiB) and, where the stream turns out damaged, puts that error in *err
 * instead. A damaged stream can inflate to garbage that the parser reaches
 * before the decoder notices; the damage is the cause worth naming. Only a
 * regular file or memory is read on: a pipe may block for good. */
void sc__jwin_blame_source(sc__jwin *w, sc_error *err);

bool sc__jp_init(sc__jp *jp, sc__jwin *w, const char *name, const sc_load_options *opts,
                 sc_error *err);
void sc__jp_free(sc__jp *jp);

/* Sets a parse error at the cursor; returns SC__J_ERR. */
int sc__jp_error(sc__jp *jp, const char *fmt, ...) SC__PRINTF(2, 3);
int sc__jp_error_at(sc__jp *jp, const char *at, sc_status st, const char *fmt, ...)
    SC__PRINTF(4, 5);
uint64_t sc__jp_offset(const sc__jp *jp, const char *at);

/* Skips whitespace; returns the next byte, or 0 at the end of the window
 * (check jp->p == jp->end). */
static inline char sc__jp_peek(sc__jp *jp) {
    const char *p = jp->p;
    if ((unsigned char)*p > ' ') return *p; /* the common case: no whitespace */
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    jp->p = p;
    return *p;
}

/* The first byte at or after s that ends a plain string run: '"', '\\', a
 * control byte (the window's NUL sentinel among them) or a non-ASCII byte.
 * Reads up to 15 bytes past that byte, which the window's 16 padding bytes
 * cover when s is at most the window's end. 16 bytes a step with SSE2 (every
 * x86-64), else 8 with SWAR; the result is the same. */
static inline const char *sc__jp_scan_plain(const char *s) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i ctl = _mm_set1_epi8(0x1f);
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash));
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl)); /* v <= 0x1f */
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(hit, v));     /* | high bit */
        if (m) return s + __builtin_ctz(m);
        s += 16;
    }
#else
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    for (;;) {
        uint64_t v;
        memcpy(&v, s, 8);
        uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
        uint64_t m = (((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v) | v) & highs;
        if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            return s + (__builtin_clzll(m) >> 3);
#else
            return s + (__builtin_ctzll(m) >> 3);
#endif
        }
        s += 8;
    }
#endif
}

/* Fast paths for the numbers traces are made of (plain integers, decimal
 * microseconds): one pass that lexes and converts, at p with the window's
 * end at end. Anything else - leading zeros, exponents, long or
 * out-of-range numbers, the end of the window - returns NULL, and the full
 * lexer (sc__jp_int, sc__jp_time_ns) decides, so results and errors are
 * exactly those of the slow path. Inline because the template reader
 * (kineto_template.c) calls them straight from its hot loop. */

static inline bool sc__is_digit(char c) { return c >= '0' && c <= '9'; }

/* The 8 bytes at p as one word, the first byte lowest. */
static inline uint64_t sc__load8(const char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* The number of ASCII digits leading the 8 bytes v (0-8). A byte is not a
 * digit if its high nibble is set or it is above 9 once '0' is subtracted;
 * a carry out of a non-digit byte only disturbs later bytes, so the lowest
 * flag is exact. */
static inline unsigned sc__digits_in(uint64_t v) {
    uint64_t x = v ^ 0x3030303030303030ULL;
    uint64_t nd = (x | (x + 0x0606060606060606ULL)) & 0xF0F0F0F0F0F0F0F0ULL;
    return nd ? (unsigned)__builtin_ctzll(nd) >> 3 : 8;
}

/* The number of ASCII digits at p, up to 8. Reads 8 bytes: p is at most
 * the window's end. */
static inline unsigned sc__digit_count(const char *p) { return sc__digits_in(sc__load8(p)); }

/* The run of ASCII digits at p, up to 8: its length (0-8) and its value in
 * *out. Reads 8 bytes; the caller guarantees a digit at p, so p is before
 * the window's end and its 16 padding bytes cover the read. */
static inline unsigned sc__digit_run(const char *p, uint64_t *out) {
    uint64_t x = sc__load8(p);
    unsigned n = sc__digits_in(x);
    if (n == 0) {
        *out = 0;
        return 0;
    }
    x ^= 0x3030303030303030ULL; /* digit bytes become 0-9 */
    x <<= 8 * (8 - n);          /* right-align: the missing leading digits are zeros */
    x = (x * 10) + (x >> 8);
    x = (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    *out = x;
    return n;
}

static const uint64_t sc__pow10_u64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                          100000000};

/* An integer without fraction or exponent, of at most 18 digits. Always
 * inlined: the template reader calls it for most holes, and where gcc chose
 * a call instead it cost 6% of a load. */
static inline __attribute__((always_inline)) const char *sc__jp_fast_int(const char *p,
                                                                        const char *end,
                                                                        int64_t *out) {
    bool neg = *p == '-';
    p += neg;
    const char *s = p;
    uint64_t v, run;
    unsigned n = sc__digit_run(p, &v);
    if (n == 0 || (n > 1 && *p == '0')) return NULL; /* no digit, or a leading zero */
    p += n;
    if (n == 8) { /* runs of up to 8 digits; at most 16 here, 18 with the loop below */
        n = sc__digit_run(p, &run);
        v = v * sc__pow10_u64[n] + run;
        p += n;
        while (sc__is_digit(*p) && p - s < 18) v = v * 10 + (uint64_t)(*p++ - '0');
    }
    if (sc__is_digit(*p) || *p == '.' || *p == 'e' || *p == 'E' || p >= end) return NULL;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return p;
}

/* Microseconds with an optional fraction, as nanoseconds rounded half up
 * on the fourth decimal. */
static inline const char *sc__jp_fast_time_ns(const char *p, const char *end, int64_t *out) {
    bool neg = *p == '-';
    p += neg;
    if (!sc__is_digit(*p) || (*p == '0' && sc__is_digit(p[1]))) return NULL;
    const int64_t lim = INT64_MAX / 1000 - 1;
    int64_t v = 0;
    uint64_t run;
    /* Below 9e7 no digit of the next eight can reach the range check. */
    while (v < 90000000 && sc__is_digit(*p)) {
        unsigned n = sc__digit_run(p, &run);
        v = v * (int64_t)sc__pow10_u64[n] + (int64_t)run;
        p += n;
        if (n < 8) break;
    }
    while (sc__is_digit(*p)) {
        if (v > (lim - 9) / 10) return NULL;
        v = v * 10 + (*p++ - '0');
    }
    v *= 1000;
    if (*p == '.') { /* nanoseconds: three decimals, rounded half up on the 4th */
        p++;
        unsigned n = sc__digit_run(p, &run);
        if (n == 0) return NULL;
        if (n <= 3) {
            v += (int64_t)(run * sc__pow10_u64[3 - n]);
        } else {
            uint64_t rest = sc__pow10_u64[n - 3];
            v += (int64_t)(run / rest) + (run / (rest / 10) % 10 >= 5);
        }
        p += n;
        while (sc__is_digit(*p)) p++;
    }
    if (*p == 'e' || *p == 'E' || p >= end) return NULL;
    *out = neg ? -v : v;
    return p;
}

/* Consumes the byte c after whitespace or fails. */
int sc__jp_expect(sc__jp *jp, char c);
/* Expects ',' or the closer; *done is set at the closer (consumed). */
int sc__jp_next(sc__jp *jp, char closer, bool *done);
/* Moves to the next element of an array whose '[' is consumed: for the first
 * element only a ']' may come first, for later ones a ',' or the ']'. *done is
 * set when the ']' was consumed. */
int sc__jp_element(sc__jp *jp, bool first, bool *done);
/* A unit of a reader's walk over an array of records (Kineto's events, an
 * ET's nodes) whose states are `first` before the first element and `next`
 * before each later one: reads the next element with record(ctx), or
 * consumes the ']' and moves *state to `after`. */
static inline int sc__jp_record_step(sc__jp *jp, int *state, int first, int next, int after,
                                     int (*record)(void *ctx), void *ctx) {
    bool done;
    int rc = sc__jp_element(jp, *state == first, &done);
    if (rc != SC__J_OK) return rc;
    if (done) {
        *state = after;
        return SC__J_OK;
    }
    if ((rc = record(ctx)) != SC__J_OK) return rc;
    *state = next;
    return SC__J_OK;
}
/* The member walk every reader of a JSON object shares, the counterpart of
 * sc__jp_element: in an object whose '{' is consumed, moves to the next
 * member and reads its key and the ':' after it, leaving the cursor at the
 * value. For the first member only a '}' may come first, for later ones a
 * ',' or the '}'; *done is set when the '}' was consumed (key then unset).
 *
 *     SC__JTRY(sc__jp_expect(jp, '{'));
 *     for (bool first = true;; first = false) {
 *         sc__jstr key;
 *         bool done;
 *         SC__JTRY(sc__jp_member(jp, first, &key, &done));
 *         if (done) break;
 *         ... read or skip the value ...
 *     }
 *
 * The key may sit in the scratch buffer (when it has escapes), which the
 * next string read overwrites: compare it before reading the value. */
int sc__jp_member(sc__jp *jp, bool first, sc__jstr *key, bool *done);
/* The same walk without reading the key: the cursor is left at the key's
 * opening quote. For a reader that reads keys its own way (the Kineto
 * event loop recognises its common keys from their raw bytes). Inline, as
 * that loop runs it for every member of every event read key by key: the
 * usual ',' or '}' costs a compare, anything else (an error, the end of
 * the window) goes to sc__jp_next to be told apart. */
static inline int sc__jp_member_start(sc__jp *jp, bool first, bool *done) {
    char c = sc__jp_peek(jp);
    if (c == '}') {
        jp->p++;
        *done = true;
        return SC__J_OK;
    }
    if (!first) {
        if (c != ',') return sc__jp_next(jp, '}', done);
        jp->p++;
    }
    *done = false;
    return SC__J_OK;
}

int sc__jp_string(sc__jp *jp, sc__jstr *out);
/* A JSON number as int64 (fraction or exponent allowed when integral). */
int sc__jp_int(sc__jp *jp, int64_t *out);
/* A JSON number of microseconds as int64 nanoseconds, rounded. */
int sc__jp_time_ns(sc__jp *jp, int64_t *out);
int sc__jp_double(sc__jp *jp, double *out);
/* Skips one value of any type, validating it. */
int sc__jp_skip(sc__jp *jp);
/* Skips one value and returns its raw text. */
int sc__jp_raw(sc__jp *jp, sc__jstr *out);
/* Accepts an integer given as a number or as a string of digits. */
int sc__jp_int_lenient(sc__jp *jp, int64_t *out, bool *is_number);

/* The unit-and-retry loop every streaming reader runs: calls step(ctx, &state)
 * from `start` until the state reaches `end` (the root value is closed), then
 * checks that only whitespace follows. A step that runs out of window
 * (SC__J_MORE) is retried from the same state after a refill that keeps its
 * unit. `what` names the document in the trailing-data error. */
typedef int (*sc__jp_step_fn)(void *ctx, int *state);
int sc__jp_drive(sc__jp *jp, sc__jp_step_fn step, void *ctx, int start, int end, const char *what);

/* The same loop for a reader that stops part-way: runs step from *state
 * until the state is `stop`, with no check of what follows. */
int sc__jp_run(sc__jp *jp, sc__jp_step_fn step, void *ctx, int *state, int stop);

/* Reads a small file (1 MiB at most) that is one JSON object, such as a GPU
 * profile or a model configuration: begin(ctx) (may be NULL) before the
 * members, then member(ctx, jp, key) for each, which reads the member's
 * value from jp. The members are one unit, read afresh after a refill:
 * begin undoes what an earlier try set. `what` names the document in
 * errors ("profile"). SC_OK, or the error in *err. */
typedef int (*sc__jp_member_fn)(void *ctx, sc__jp *jp, sc__jstr key);
sc_status sc__json_read_object_file(const char *path, const char *what, void (*begin)(void *ctx),
                                    sc__jp_member_fn member, void *ctx, sc_error *err);

/* Parses decimal or 0x-hex integer text; false when it is not one. */
bool sc__parse_int_text(const char *s, size_t n, int64_t *out);

static inline bool sc__jstr_eq(sc__jstr s, const char *lit, size_t n) {
    return s.n == n && memcmp(s.s, lit, n) == 0;
}
#define SC__JSTR_EQ(s, lit) sc__jstr_eq((s), (lit), sizeof(lit) - 1)

#define SC__JTRY(x)                       \
    do {                                  \
        int sc__r_ = (x);                 \
        if (sc__r_ != SC__J_OK) return sc__r_; \
    } while (0)

#endif /* SC_JSON_H */
