/*
 * json.c - the streaming JSON scanner behind the Kineto and Execution Trace
 * readers (see json.h for the unit-and-retry protocol).
 *
 * Strict RFC 8259 syntax, UTF-8 validated, with guards on string length and
 * nesting depth. Strings without escapes are returned as slices of the
 * window (no copy); numbers are converted straight to int64 so timestamps
 * keep nanosecond resolution at epoch scale.
 */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* 256 KiB: small enough to stay in a core's L2 cache between the read()
 * that copies bytes in and the parse that reads them, large enough that a
 * read costs nothing per byte. Against 4 MiB it saved 4% of the CPU time of
 * a 513 MB load (15 alternated runs); a unit larger than half the window
 * grows it. */
#define SC__JWIN_INITIAL (256u << 10)
#define SC__JWIN_PAD 16

sc_status sc__jwin_init(sc__jwin *w, sc__source *src, size_t initial, size_t max_unit,
                        sc_error *err) {
    memset(w, 0, sizeof *w);
    w->src = src;
    w->cap = initial ? initial : SC__JWIN_INITIAL;
    if (w->cap < 16) w->cap = 16;
    w->max_cap = max_unit < w->cap ? w->cap : max_unit;
    w->buf = malloc(w->cap + SC__JWIN_PAD);
    if (!w->buf) return sc__fail(err, SC_E_NOMEM, src->name, 0, "out of memory");
    memset(w->buf, 0, SC__JWIN_PAD);
    return SC_OK;
}

void sc__jwin_free(sc__jwin *w) {
    free(w->buf);
    memset(w, 0, sizeof *w);
}

int sc__jwin_refill(sc__jp *jp, const char *keep_from) {
    sc__jwin *w = jp->w;
    if (w->eof)
        return sc__jp_error_at(jp, jp->end, SC_E_PARSE,
                               "unexpected end of input (truncated file?)");
    size_t keep = (size_t)(keep_from - w->buf);
    size_t rest = w->len - keep;
    if (keep > 0) {
        memmove(w->buf, w->buf + keep, rest);
        w->base += keep;
        w->len = rest;
    }
    if (w->len * 2 > w->cap) { /* a unit fills half the window: grow it */
        if (w->cap >= w->max_cap)
            return sc__jp_error_at(jp, w->buf, SC_E_LIMIT,
                                   "one JSON element is larger than %zu bytes", w->max_cap);
        size_t ncap = w->cap * 2 > w->max_cap ? w->max_cap : w->cap * 2;
        char *nb = realloc(w->buf, ncap + SC__JWIN_PAD);
        if (!nb)
            return sc__jp_error_at(jp, w->buf, SC_E_NOMEM,
                                   "out of memory growing the read window to %zu bytes", ncap);
        w->buf = nb;
        w->cap = ncap;
    }
    while (w->len < w->cap) {
        size_t got;
        sc_error e;
        if (sc__source_read(w->src, w->buf + w->len, w->cap - w->len, &got, &e) != SC_OK) {
            if (jp->err) *jp->err = e;
            w->failed = true;
            return SC__J_ERR;
        }
        if (got == 0) {
            w->eof = true;
            break;
        }
        w->len += got;
        sc__progress_bytes(jp->progress, got);
        if (!w->src->gzip) break; /* one read() per refill for plain files */
    }
    memset(w->buf + w->len, 0, SC__JWIN_PAD);
    jp->p = w->buf;
    jp->end = w->buf + w->len;
    return SC__J_OK;
}

/* Output inflated past a reader's error to look for damage in the stream
 * (sc__jwin_blame_source): more than a deflate block, which is where
 * igzip finds damage. */
#define SC__JWIN_BLAME ((uint64_t)16 << 20)

void sc__jwin_blame_source(sc__jwin *w, sc_error *err) {
    if (!err || !w->src || !w->src->gzip || w->eof || w->failed || !sc__source_cannot_block(w->src) ||
        (err->status != SC_E_PARSE && err->status != SC_E_FORMAT))
        return;
    /* The window's bytes are of no more use: it is the scratch. */
    for (uint64_t n = 0; n < SC__JWIN_BLAME;) {
        size_t got;
        sc_error e;
        if (sc__source_read(w->src, w->buf, w->cap, &got, &e) != SC_OK) {
            *err = e;
            break;
        }
        if (got == 0) break;
        n += got;
    }
}

/* The unit-and-retry loop: steps from *state until it is `stop`, refilling
 * the window (keeping the unit) whenever a step runs out of it. A step that
 * runs out at the end of input while still in state `empty_at` finds
 * nothing but whitespace there: "empty input" (-1: no such state). */
static int run_units(sc__jp *jp, sc__jp_step_fn step, void *ctx, int *state, int stop, int empty_at) {
    while (*state != stop) {
        const char *unit = jp->p;
        int before = *state;
        int rc = step(ctx, state);
        if (rc == SC__J_MORE) {
            if (jp->w->eof && before == empty_at)
                return sc__jp_error_at(jp, jp->end, SC_E_PARSE, "empty input");
            *state = before;
            rc = sc__jwin_refill(jp, unit);
        }
        if (rc != SC__J_OK) return rc;
    }
    return SC__J_OK;
}

int sc__jp_drive(sc__jp *jp, sc__jp_step_fn step, void *ctx, int start, int end, const char *what) {
    int state = start;
    SC__JTRY(run_units(jp, step, ctx, &state, end, start));
    for (;;) { /* the root value is closed: only whitespace may follow */
        if (sc__jp_peek(jp) != '\0' || jp->p < jp->end)
            return sc__jp_error(jp, "unexpected data after the end of the %s", what);
        if (jp->w->eof) return SC__J_OK;
        SC__JTRY(sc__jwin_refill(jp, jp->p));
    }
}

int sc__jp_run(sc__jp *jp, sc__jp_step_fn step, void *ctx, int *state, int stop) {
    return run_units(jp, step, ctx, state, stop, -1);
}

/* ------------------------------------------------------- small objects */

typedef struct objfile {
    sc__jp jp;
    void (*begin)(void *ctx);
    sc__jp_member_fn member;
    void *ctx;
} objfile;

enum { OBJ_START, OBJ_MEMBERS, OBJ_END };

/* Two units: the '{', then every member at once (the file is small), so
 * that a retry after a refill reads the members afresh, and a file cut
 * after its '{' is "truncated", not "empty". */
static int objfile_step(void *ctx, int *state) {
    objfile *o = ctx;
    if (*state == OBJ_START) {
        SC__JTRY(sc__jp_expect(&o->jp, '{'));
        *state = OBJ_MEMBERS;
        return SC__J_OK;
    }
    if (o->begin) o->begin(o->ctx);
    for (bool first = true;; first = false) {
        sc__jstr key;
        bool done;
        SC__JTRY(sc__jp_member(&o->jp, first, &key, &done));
        if (done) break;
        SC__JTRY(o->member(o->ctx, &o->jp, key));
    }
    *state = OBJ_END;
    return SC__J_OK;
}

sc_status sc__json_read_object_file(const char *path, const char *what, void (*begin)(void *ctx),
                                    sc__jp_member_fn member, void *ctx, sc_error *err) {
    sc__source src;
    sc_status st = sc__source_open_file(&src, path, err);
    if (st != SC_OK) return st;
    sc__jwin w;
    objfile o = {.begin = begin, .member = member, .ctx = ctx};
    /* Such a file is a few hundred bytes; 1 MiB is room for any that is one. */
    if ((st = sc__jwin_init(&w, &src, 4096, (size_t)1 << 20, err)) != SC_OK) {
        sc__source_close(&src);
        return st;
    }
    if (!sc__jp_init(&o.jp, &w, path, NULL, err))
        st = sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    else if (sc__jp_drive(&o.jp, objfile_step, &o, OBJ_START, OBJ_END, what) != SC__J_OK)
        st = err && err->status != SC_OK ? err->status : SC_E_PARSE;
    sc__jp_free(&o.jp);
    sc__jwin_free(&w);
    sc__source_close(&src);
    return st;
}

bool sc__jp_init(sc__jp *jp, sc__jwin *w, const char *name, const sc_load_options *opts,
                 sc_error *err) {
    memset(jp, 0, sizeof *jp);
    jp->w = w;
    jp->err = err;
    jp->name = name;
    jp->p = w->buf;
    jp->end = w->buf + w->len;
    jp->max_string = opts && opts->max_string_bytes ? opts->max_string_bytes : (256u << 20);
    jp->max_depth = opts && opts->max_depth ? opts->max_depth : 512;
    jp->progress = sc__progress_of(opts);
    jp->stack = malloc(jp->max_depth);
    return jp->stack != NULL;
}

void sc__jp_free(sc__jp *jp) {
    free(jp->scratch);
    free(jp->stack);
    memset(jp, 0, sizeof *jp);
}

uint64_t sc__jp_offset(const sc__jp *jp, const char *at) {
    return jp->w->base + (uint64_t)(at - jp->w->buf);
}

int sc__jp_error_at(sc__jp *jp, const char *at, sc_status st, const char *fmt, ...) {
    if (!jp->err) return SC__J_ERR;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sc__fail(jp->err, st, jp->name, sc__jp_offset(jp, at), "%s", msg);
    return SC__J_ERR;
}

int sc__jp_error(sc__jp *jp, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sc__jp_error_at(jp, jp->p, SC_E_PARSE, "%s", msg);
}

/* At a byte that is not what we want: the end of the window asks for more,
 * anything else is an error. */
static int unexpected(sc__jp *jp, const char *what) {
    if (jp->p >= jp->end) return SC__J_MORE;
    unsigned char c = (unsigned char)*jp->p;
    if (c >= 0x20 && c < 0x7f)
        return sc__jp_error(jp, "expected %s, found '%c'", what, c);
    return sc__jp_error(jp, "expected %s, found byte 0x%02x", what, c);
}

int sc__jp_expect(sc__jp *jp, char c) {
    if (sc__jp_peek(jp) != c) {
        char what[8] = {'\'', c, '\'', 0};
        return unexpected(jp, what);
    }
    jp->p++;
    return SC__J_OK;
}

int sc__jp_next(sc__jp *jp, char closer, bool *done) {
    char c = sc__jp_peek(jp);
    if (c == ',') {
        jp->p++;
        *done = false;
        return SC__J_OK;
    }
    if (c == closer) {
        jp->p++;
        *done = true;
        return SC__J_OK;
    }
    return unexpected(jp, closer == '}' ? "',' or '}'" : "',' or ']'");
}

int sc__jp_element(sc__jp *jp, bool first, bool *done) {
    if (!first) return sc__jp_next(jp, ']', done);
    *done = sc__jp_peek(jp) == ']';
    if (*done) jp->p++;
    return SC__J_OK;
}

int sc__jp_member(sc__jp *jp, bool first, sc__jstr *key, bool *done) {
    SC__JTRY(sc__jp_member_start(jp, first, done));
    if (*done) return SC__J_OK;
    SC__JTRY(sc__jp_string(jp, key));
    if (*jp->p != ':') return sc__jp_expect(jp, ':'); /* mostly right after the key */
    jp->p++;
    return SC__J_OK;
}

/* ---------------------------------------------------------------- strings */

/* 0 plain, 1 quote, 2 backslash, 3 control (or the sentinel), 4 non-ASCII */
static const uint8_t str_class[256] = {
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};

/* Length of a valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07;
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

static int check_utf8(sc__jp *jp, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq(u + i, n - i);
        if (!k) return sc__jp_error_at(jp, s + i, SC_E_PARSE, "invalid UTF-8 in string");
        i += k;
    }
    return SC__J_OK;
}

static int hex4(const char *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *d, uint32_t cp) {
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xC0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The code point of the \u escape at s[*i] (with n bytes in all), a
 * surrogate pair taken whole; *i moves past it. A lone surrogate becomes
 * U+FFFD. False when the escape is not four hex digits. */
static bool unicode_escape(const char *s, size_t n, size_t *i, uint32_t *out) {
    uint32_t cp, lo;
    size_t k = *i;
    if (k + 6 > n || hex4(s + k + 2, &cp)) return false;
    k += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF && k + 6 <= n && s[k] == '\\' && s[k + 1] == 'u' &&
        !hex4(s + k + 2, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        k += 6;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
        cp = 0xFFFD; /* a lone surrogate: keep going with U+FFFD */
    }
    *i = k;
    *out = cp;
    return true;
}

/* Decodes the escapes of s[0..n) (already known to be well delimited). */
static int unescape(sc__jp *jp, const char *s, size_t n, sc__jstr *out) {
    if (n + 1 > jp->scratch_cap) {
        size_t cap = jp->scratch_cap ? jp->scratch_cap : 256;
        while (cap < n + 1) cap *= 2;
        char *nb = realloc(jp->scratch, cap);
        if (!nb) return sc__jp_error_at(jp, s, SC_E_NOMEM, "out of memory decoding a string");
        jp->scratch = nb;
        jp->scratch_cap = cap;
    }
    char *d = jp->scratch;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t k = utf8_seq((const unsigned char *)s + i, n - i);
            if (!k) return sc__jp_error_at(jp, s + i, SC_E_PARSE, "invalid UTF-8 in string");
            memcpy(d + o, s + i, k);
            o += k;
            i += k;
            continue;
        }
        if (c != '\\') {
            d[o++] = (char)c;
            i++;
            continue;
        }
        char e = s[i + 1];
        switch (e) {
        case '"': d[o++] = '"'; break;
        case '\\': d[o++] = '\\'; break;
        case '/': d[o++] = '/'; break;
        case 'b': d[o++] = '\b'; break;
        case 'f': d[o++] = '\f'; break;
        case 'n': d[o++] = '\n'; break;
        case 'r': d[o++] = '\r'; break;
        case 't': d[o++] = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!unicode_escape(s, n, &i, &cp))
                return sc__jp_error_at(jp, s + i, SC_E_PARSE, "invalid \\u escape");
            o += put_utf8(d + o, cp); /* never longer than the 6-byte escape */
            continue;
        }
        default:
            return sc__jp_error_at(jp, s + i, SC_E_PARSE, "invalid escape '\\%c'",
                                   e >= 0x20 && e < 0x7f ? e : '?');
        }
        i += 2;
    }
    d[o] = '\0';
    out->s = d;
    out->n = o;
    return SC__J_OK;
}

int sc__jp_string(sc__jp *jp, sc__jstr *out) {
    if (sc__jp_peek(jp) != '"') return unexpected(jp, "a string");
    const char *start = jp->p + 1, *p = sc__jp_scan_plain(start);
    bool esc = false, high = false;
    while (*p != '"') { /* an escape, a non-ASCII or control byte, or the end */
        uint8_t k = str_class[(unsigned char)*p];
        if (k == 0) {
            p++;
        } else if (k == 2) {
            esc = true;
            if (p + 1 >= jp->end) return SC__J_MORE;
            p += 2;
        } else if (k == 4) {
            high = true;
            p++;
        } else {
            if (p >= jp->end) {
                if ((uint64_t)(p - start) > jp->max_string)
                    return sc__jp_error_at(jp, start, SC_E_LIMIT,
                                           "string longer than %llu bytes",
                                           (unsigned long long)jp->max_string);
                return SC__J_MORE;
            }
            return sc__jp_error_at(jp, p, SC_E_PARSE, "control character 0x%02x in string",
                                   (unsigned char)*p);
        }
        p = sc__jp_scan_plain(p);
    }
    size_t n = (size_t)(p - start);
    if (n > jp->max_string)
        return sc__jp_error_at(jp, start, SC_E_LIMIT, "string longer than %llu bytes",
                               (unsigned long long)jp->max_string);
    jp->p = p + 1;
    if (!esc) {
        if (high) SC__JTRY(check_utf8(jp, start, n));
        out->s = start;
        out->n = n;
        return SC__J_OK;
    }
    return unescape(jp, start, n, out);
}

/* ---------------------------------------------------------------- numbers */

typedef struct numlex {
    const char *start, *int_start, *int_end, *frac_start, *frac_end, *end;
    bool neg, exp;
} numlex;

static int lex_number(sc__jp *jp, numlex *nl) {
    char c = sc__jp_peek(jp);
    const char *p = jp->p;
    memset(nl, 0, sizeof *nl);
    nl->start = p;
    if (c == '-') {
        nl->neg = true;
        p++;
    }
    if (!sc__is_digit(*p)) {
        if (p >= jp->end) return SC__J_MORE;
        jp->p = p;
        return unexpected(jp, "a number");
    }
    nl->int_start = p;
    if (*p == '0') p++;
    else
        while (sc__is_digit(*p)) p++;
    nl->int_end = p;
    nl->frac_start = nl->frac_end = p;
    if (*p == '.') {
        p++;
        if (!sc__is_digit(*p)) {
            if (p >= jp->end) return SC__J_MORE;
            return sc__jp_error_at(jp, p, SC_E_PARSE, "expected a digit after '.'");
        }
        nl->frac_start = p;
        while (sc__is_digit(*p)) p++;
        nl->frac_end = p;
    }
    if (*p == 'e' || *p == 'E') {
        nl->exp = true;
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!sc__is_digit(*p)) {
            if (p >= jp->end) return SC__J_MORE;
            return sc__jp_error_at(jp, p, SC_E_PARSE, "expected a digit in the exponent");
        }
        while (sc__is_digit(*p)) p++;
    }
    if (p >= jp->end) return SC__J_MORE; /* the number may go on */
    nl->end = p;
    jp->p = p;
    return SC__J_OK;
}

static int lex_to_double(sc__jp *jp, const numlex *nl, double *out) {
    char tmp[80];
    size_t n = (size_t)(nl->end - nl->start);
    if (n >= sizeof tmp) {
        /* Long mantissas only lose digits beyond double precision. */
        return sc__jp_error_at(jp, nl->start, SC_E_LIMIT, "number with more than %zu characters",
                               sizeof tmp - 1);
    }
    memcpy(tmp, nl->start, n);
    tmp[n] = '\0';
    *out = strtod(tmp, NULL);
    if (!isfinite(*out)) return sc__jp_error_at(jp, nl->start, SC_E_LIMIT, "number out of range");
    return SC__J_OK;
}

static int digits_to_i64(sc__jp *jp, const numlex *nl, int64_t *out) {
    uint64_t v = 0;
    for (const char *p = nl->int_start; p < nl->int_end; p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) goto range;
        v = v * 10 + d;
    }
    if (nl->neg) {
        if (v > (uint64_t)INT64_MAX + 1) goto range;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX) goto range;
        *out = (int64_t)v;
    }
    return SC__J_OK;
range:
    return sc__jp_error_at(jp, nl->start, SC_E_LIMIT, "integer out of range");
}

int sc__jp_int(sc__jp *jp, int64_t *out) {
    sc__jp_peek(jp);
    const char *q = sc__jp_fast_int(jp->p, jp->end, out);
    if (q) {
        jp->p = q;
        return SC__J_OK;
    }
    numlex nl;
    SC__JTRY(lex_number(jp, &nl));
    if (!nl.exp && nl.frac_start == nl.frac_end) return digits_to_i64(jp, &nl, out);
    double d;
    SC__JTRY(lex_to_double(jp, &nl, &d));
    if (d != floor(d) || d < -9.2e18 || d > 9.2e18)
        return sc__jp_error_at(jp, nl.start, SC_E_FORMAT, "expected an integer");
    *out = (int64_t)d;
    return SC__J_OK;
}

int sc__jp_double(sc__jp *jp, double *out) {
    numlex nl;
    SC__JTRY(lex_number(jp, &nl));
    return lex_to_double(jp, &nl, out);
}

int sc__jp_time_ns(sc__jp *jp, int64_t *out) {
    sc__jp_peek(jp);
    const char *q = sc__jp_fast_time_ns(jp->p, jp->end, out);
    if (q) {
        jp->p = q;
        return SC__J_OK;
    }
    numlex nl;
    SC__JTRY(lex_number(jp, &nl));
    if (nl.exp) {
        double d;
        SC__JTRY(lex_to_double(jp, &nl, &d));
        d *= 1000.0;
        if (!(d > -9.2e18 && d < 9.2e18))
            return sc__jp_error_at(jp, nl.start, SC_E_LIMIT, "time out of range");
        *out = (int64_t)llround(d);
        return SC__J_OK;
    }
    const int64_t lim = INT64_MAX / 1000 - 1;
    int64_t v = 0;
    for (const char *p = nl.int_start; p < nl.int_end; p++) {
        if (v > (lim - 9) / 10)
            return sc__jp_error_at(jp, nl.start, SC_E_LIMIT, "time out of range");
        v = v * 10 + (*p - '0');
    }
    v *= 1000;
    const char *f = nl.frac_start;
    int64_t scale = 100;
    for (int i = 0; i < 3 && f < nl.frac_end; i++, f++, scale /= 10) v += (*f - '0') * scale;
    if (f < nl.frac_end && *f >= '5') v += 1; /* round half up on the 4th decimal */
    *out = nl.neg ? -v : v;
    return SC__J_OK;
}

int sc__jp_int_lenient(sc__jp *jp, int64_t *out, bool *is_number) {
    char c = sc__jp_peek(jp);
    if (c != '"') {
        *is_number = true;
        return sc__jp_int(jp, out);
    }
    const char *at = jp->p;
    sc__jstr s;
    SC__JTRY(sc__jp_string(jp, &s));
    *is_number = false;
    if (!sc__parse_int_text(s.s, s.n, out))
        return sc__jp_error_at(jp, at, SC_E_FORMAT, "expected an integer");
    return SC__J_OK;
}

bool sc__parse_int_text(const char *s, size_t n, int64_t *out) {
    size_t i = 0;
    bool neg = n > 0 && s[0] == '-';
    if (neg) i = 1;
    unsigned base = 10;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        base = 16;
        i += 2;
    }
    if (i == n) return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        char c = s[i];
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return false;
        if (v > ((uint64_t)INT64_MAX - d) / base) return false;
        v = v * base + d;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* ---------------------------------------------------------------- skipping */

static int literal(sc__jp *jp, const char *lit, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (jp->p[i] != lit[i]) {
            if (jp->p + i >= jp->end) return SC__J_MORE;
            return sc__jp_error(jp, "invalid literal (expected %s)", lit);
        }
    }
    jp->p += n;
    return SC__J_OK;
}

static int skip_scalar(sc__jp *jp, char c) {
    sc__jstr s;
    numlex nl;
    switch (c) {
    case '"': return sc__jp_string(jp, &s);
    case 't': return literal(jp, "true", 4);
    case 'f': return literal(jp, "false", 5);
    case 'n': return literal(jp, "null", 4);
    default:
        if (c == '-' || sc__is_digit(c)) return lex_number(jp, &nl);
        return unexpected(jp, "a value");
    }
}

static inline const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}

/* Fast path of sc__jp_skip for the arrays traces are full of (shapes such
 * as [[4,2048],[],[]], type lists such as ["float","Scalar"]): nested arrays
 * of integers and escape-free ASCII strings. It accepts only valid JSON and
 * moves the cursor only on success; anything else (objects, literals,
 * fractions, escapes, non-ASCII, long strings, deep nesting, the end of the
 * window) returns false and the general skipper starts over from the same
 * place, so results and errors are those of the general path. */
static bool fast_skip_array(sc__jp *jp) {
    const char *p = jp->p;
    uint32_t depth = 0;
    for (;;) { /* at a value */
        char c = *p;
        if (c == '[') {
            if (++depth >= jp->max_depth) return false;
            p = skip_ws(p + 1);
            if (*p != ']') continue;
            p++;
            depth--;
        } else if (c == '"') {
            const char *s = ++p;
            p = sc__jp_scan_plain(p);
            if (*p != '"' || (uint64_t)(p - s) > jp->max_string) return false;
            p++;
        } else if (c == '-' || sc__is_digit(c)) {
            p += c == '-';
            if (!sc__is_digit(*p)) return false;
            if (*p == '0') {
                p++;
            } else { /* eight digits a step */
                unsigned n;
                while ((n = sc__digit_count(p)) == 8) p += 8;
                p += n;
            }
            if (*p == '.' || *p == 'e' || *p == 'E' || sc__is_digit(*p)) return false;
        } else {
            return false;
        }
        for (;;) { /* after a value */
            if (depth == 0) {
                jp->p = p;
                return true;
            }
            p = skip_ws(p);
            if (*p == ',') {
                p = skip_ws(p + 1);
                break;
            }
            if (*p != ']') return false;
            p++;
            depth--;
        }
    }
}

int sc__jp_skip(sc__jp *jp) {
    if (sc__jp_peek(jp) == '[' && fast_skip_array(jp)) return SC__J_OK;
    uint32_t depth = 0;
    for (;;) {
        char c = sc__jp_peek(jp);
        if (c == '{' || c == '[') {
            if (depth >= jp->max_depth)
                return sc__jp_error_at(jp, jp->p, SC_E_LIMIT, "nesting deeper than %u levels",
                                       jp->max_depth);
            jp->stack[depth++] = (uint8_t)c;
            jp->p++;
            char d = sc__jp_peek(jp);
            if (d == (c == '{' ? '}' : ']')) {
                jp->p++;
                depth--;
            } else {
                if (c == '{') {
                    sc__jstr key;
                    SC__JTRY(sc__jp_string(jp, &key));
                    SC__JTRY(sc__jp_expect(jp, ':'));
                }
                continue;
            }
        } else {
            SC__JTRY(skip_scalar(jp, c));
        }
        /* After a value: close containers or move to the next member. */
        for (;;) {
            if (depth == 0) return SC__J_OK;
            char open = (char)jp->stack[depth - 1];
            bool done;
            SC__JTRY(sc__jp_next(jp, open == '{' ? '}' : ']', &done));
            if (done) {
                depth--;
                continue;
            }
            if (open == '{') {
                sc__jstr key;
                SC__JTRY(sc__jp_string(jp, &key));
                SC__JTRY(sc__jp_expect(jp, ':'));
            }
            break;
        }
    }
}

int sc__jp_raw(sc__jp *jp, sc__jstr *out) {
    sc__jp_peek(jp);
    const char *start = jp->p;
    SC__JTRY(sc__jp_skip(jp));
    out->s = start;
    out->n = (size_t)(jp->p - start);
    return SC__J_OK;
}
