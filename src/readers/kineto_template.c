/*
 * kineto_template.c - reading recurring events by their learned byte layout.
 *
 * A Kineto trace is millions of events written by a few lines of the
 * profiler: every operator event is {"ph":"X","cat":"cpu_op","name":...,
 * "pid":...,"tid":...,"ts":...,"dur":...,"args":{"External id":...,...}}
 * with the same keys, order and spacing. Reading each of them key by key
 * spends most of its time finding out what the last one already said.
 *
 * So an event read key by key (kineto.c) leaves its layout here as a
 * template: literal stretches of bytes - punctuation, whitespace, keys, and
 * the values of "ph", "cat" and "bp", which name the kind of event - between
 * holes, the other values, each with its key. A later event is matched by
 * comparing the literals 16 bytes at a time and handing each hole to the
 * value handler the key-by-key read uses (sc__kr_member). The result is the
 * one a key-by-key read gives, errors and requests for more input included:
 * the literal bytes are those of a prefix already read key by key, so the
 * reader is in the same state at each value, and each value is read by the
 * same code. Any literal that differs is a miss; the event is then read key
 * by key and teaches its layout, replacing the template used least
 * recently.
 *
 * A hole for operator shapes ("Input Dims", "Input type") also keeps its
 * last value's bytes and id: shapes repeat from one operator to the next,
 * and the next literal must match right after them, so equal bytes are an
 * equal value and need neither scanning nor interning.
 */
#include "kineto.h"

#include <stdlib.h>

#define KT_SLOTS 8      /* templates held */
#define KT_BYTES 1024   /* literal bytes of one template */
#define KT_MEMO 64      /* the longest shapes value remembered */
#define KT_MEMOS 2      /* shapes holes with a memory, per template */
#define KT_NO_MEMO 0xFF

/* Values read inline when they take the common form (a plain number or
 * string); any other form goes to sc__kr_member. */
enum { KF_NONE, KF_NAME, KF_PID, KF_TID, KF_TS, KF_DUR, KF_INT_ARG };

typedef struct kthole {
    uint16_t lit_off, lit_len; /* the literal before the value, in bytes[] */
    uint8_t level, key;        /* KL_*, kkey */
    uint8_t fast;              /* KF_* */
    uint8_t memo;              /* index into memo[], KT_NO_MEMO for none */
} kthole;

typedef struct ktmemo {
    uint32_t id, len; /* len 0: nothing remembered yet */
    char bytes[KT_MEMO + 16];
} ktmemo;

typedef struct ktmpl {
    uint32_t nholes;
    uint16_t tail_off, tail_len; /* the literal after the last value */
    uint32_t cat;                /* what the literal members set */
    uint16_t flags;
    char ph;
    bool has_ph;
    kthole holes[SC__KT_MEMBERS];
    ktmemo memo[KT_MEMOS];
    char bytes[KT_BYTES + 16]; /* 16 bytes of slack for whole-vector loads */
} ktmpl;

struct ktset {
    uint32_t n;              /* templates held */
    uint8_t order[KT_SLOTS]; /* indexes into t[], most recently matched first */
    ktmpl t[KT_SLOTS];
    ktmpl fresh;             /* where a template is learned before it is kept */
};

ktset *sc__kt_new(void) { return calloc(1, sizeof(ktset)); }

void sc__kt_free(ktset *ts) { free(ts); }

/* Do the n >= 1 bytes at p equal those at lit? Both may be read up to 15
 * bytes past their end: lit has the template's slack, p the window's 16
 * padding bytes (the caller checked that p + n is inside the window). */
static inline bool lit_eq(const char *p, const char *lit, size_t n) {
#if defined(__SSE2__)
    for (;;) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)lit);
        unsigned differ = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) & 0xFFFFu;
        if (n <= 16) return (differ & ((1u << n) - 1)) == 0;
        if (differ) return false;
        p += 16;
        lit += 16;
        n -= 16;
    }
#else
    return memcmp(p, lit, n) == 0;
#endif
}

/* The literal of n bytes at lit, at p in the window? */
static inline bool lit_at(const sc__jp *jp, const char *p, const char *lit, size_t n) {
    return (size_t)(jp->end - p) >= n && lit_eq(p, lit, n);
}

static inline uint32_t *shape_field(kevent *ev, unsigned key) {
    return key == K_INPUT_DIMS ? &ev->sh.dims : &ev->sh.types;
}

/* Reads the value at p inline when it has the common form of hole h:
 * the position after it, or NULL (nothing changed) for sc__kr_member to
 * read it. Each case does what the handler does with such a value. */
static inline const char *fast_value(kreader *r, const kthole *h, const char *p, kevent *ev) {
    const char *end = r->jp.end, *q;
    int64_t v;
    switch (h->fast) {
    case KF_NAME: {
        if (*p != '"') return NULL;
        q = sc__jp_scan_plain(p + 1);
        if (*q != '"' || (uint64_t)(q - p - 1) > r->jp.max_string) return NULL;
        uint32_t id = sc__kr_intern(r, (sc__jstr){p + 1, (size_t)(q - p - 1)});
        if (id == SC__NONE) return NULL;
        ev->e.name = id;
        return q + 1;
    }
    case KF_PID:
    case KF_TID:
        if (*p == '"' || !(q = sc__jp_fast_int(p, end, &v))) return NULL;
        if (h->fast == KF_PID) {
            ev->pid = v;
            ev->pid_str = SC__NONE;
        } else {
            ev->tid = v;
            ev->tid_str = SC__NONE;
        }
        return q;
    case KF_TS:
        if (!(q = sc__jp_fast_time_ns(p, end, &ev->e.ts))) return NULL;
        ev->has_ts = true;
        return q;
    case KF_DUR:
        if (!(q = sc__jp_fast_time_ns(p, end, &v)) || v < 0) return NULL;
        ev->e.dur = v;
        return q;
    case KF_INT_ARG:
        if (*p == '"' || !(q = sc__jp_fast_int(p, end, &v))) return NULL;
        sc__kr_int_arg(ev, (kkey)h->key, v);
        return q;
    default: return NULL;
    }
}

/* Reads the event at jp->p (its '{', which the template's first literal
 * matched) by template t. */
static int run(kreader *r, ktmpl *t, kevent *ev) {
    sc__jp *jp = &r->jp;
    const char *p = jp->p;
    sc__kr_event_begin(ev);
    ev->e.ph = t->ph;
    ev->e.cat = t->cat;
    ev->e.flags = t->flags;
    ev->has_ph = t->has_ph;
    for (uint32_t i = 0; i < t->nholes; i++) {
        const kthole *h = &t->holes[i];
        if (!lit_at(jp, p, t->bytes + h->lit_off, h->lit_len)) return SC__KT_MISS;
        p += h->lit_len;
        if (h->memo != KT_NO_MEMO) {
            ktmemo *m = &t->memo[h->memo];
            if (m->len && lit_at(jp, p, m->bytes, m->len)) {
                *shape_field(ev, h->key) = m->id;
                ev->has_shapes = true;
                p += m->len;
                continue;
            }
            jp->p = p;
            SC__JTRY(sc__kr_member(r, h->level, (kkey)h->key, ev));
            size_t n = (size_t)(jp->p - p);
            if (n <= KT_MEMO) {
                memcpy(m->bytes, p, n);
                m->len = (uint32_t)n;
                m->id = *shape_field(ev, h->key);
            }
            p = jp->p;
            continue;
        }
        const char *q = fast_value(r, h, p, ev);
        if (q) {
            p = q;
            continue;
        }
        jp->p = p;
        SC__JTRY(sc__kr_member(r, h->level, (kkey)h->key, ev));
        p = jp->p;
    }
    if (!lit_at(jp, p, t->bytes + t->tail_off, t->tail_len)) return SC__KT_MISS;
    jp->p = p + t->tail_len;
    return SC__J_OK;
}

/* The first literal of t: the one before its first value, or its tail. */
static inline const char *first_literal(const ktmpl *t, size_t *n) {
    if (t->nholes) {
        *n = t->holes[0].lit_len;
        return t->bytes + t->holes[0].lit_off;
    }
    *n = t->tail_len;
    return t->bytes + t->tail_off;
}

int sc__kt_match(kreader *r, kevent *ev) {
    ktset *ts = r->tmpl;
    sc__jp *jp = &r->jp;
    const char *open = jp->p;
    for (uint32_t k = 0; k < ts->n; k++) {
        uint8_t slot = ts->order[k];
        ktmpl *t = &ts->t[slot];
        size_t n;
        const char *lit = first_literal(t, &n);
        if (!lit_at(jp, open, lit, n)) continue;
        int rc = run(r, t, ev);
        if (rc == SC__KT_MISS) { /* a later literal differs: the next template */
            jp->p = open;
            continue;
        }
        if (rc == SC__J_OK && k > 0) { /* most recently matched first */
            memmove(ts->order + 1, ts->order, k);
            ts->order[0] = slot;
        }
        return rc;
    }
    return SC__KT_MISS;
}

/* Appends the literal text[from, to) to t; false when it does not fit. */
static bool add_literal(ktmpl *t, uint32_t *used, const char *text, uint32_t from, uint32_t to,
                        uint16_t *off, uint16_t *len) {
    uint32_t n = to - from;
    if (to < from || n == 0 || *used + n > KT_BYTES) return false;
    memcpy(t->bytes + *used, text + from, n);
    *off = (uint16_t)*used;
    *len = (uint16_t)n;
    *used += n;
    return true;
}

static bool same_template(const ktmpl *a, const ktmpl *b) {
    if (a->nholes != b->nholes || a->tail_len != b->tail_len || a->ph != b->ph ||
        a->cat != b->cat || a->flags != b->flags || a->has_ph != b->has_ph)
        return false;
    for (uint32_t i = 0; i < a->nholes; i++) {
        const kthole *x = &a->holes[i], *y = &b->holes[i];
        if (x->lit_len != y->lit_len || x->level != y->level || x->key != y->key ||
            x->fast != y->fast ||
            memcmp(a->bytes + x->lit_off, b->bytes + y->lit_off, x->lit_len) != 0)
            return false;
    }
    return memcmp(a->bytes + a->tail_off, b->bytes + b->tail_off, a->tail_len) == 0;
}

/* Is the member one whose value belongs to the literal? "ph", "cat" and
 * "bp" name the kind of event; matching them as bytes lets an event of
 * another kind miss instead of needing its own checks. */
static bool literal_member(const kmember *m) {
    return m->level == KL_TOP && (m->key == K_PH || m->key == K_CAT || m->key == K_BP);
}

static uint8_t fast_kind(const kmember *m) {
    if (m->level == KL_ARGS) return sc__kr_is_int_arg((kkey)m->key) ? KF_INT_ARG : KF_NONE;
    switch (m->key) {
    case K_NAME: return KF_NAME;
    case K_PID: return KF_PID;
    case K_TID: return KF_TID;
    case K_TS: return KF_TS;
    case K_DUR: return KF_DUR;
    default: return KF_NONE;
    }
}

void sc__kt_learn(ktset *ts, const krecord *rec, const kevent *ev, const char *open, size_t len) {
    ktmpl *t = &ts->fresh;
    uint32_t used = 0, prev = 0, memos = 0;
    uint64_t literal_keys = 0;
    if (len > UINT32_MAX) return;
    t->nholes = 0;
    for (uint32_t i = 0; i < rec->n; i++) {
        const kmember *m = &rec->m[i];
        if (literal_member(m)) {
            /* Their effect is applied before the first value; with a key
             * twice, an args "name" could have seen the other "ph". */
            if (literal_keys & (1ull << m->key)) return;
            literal_keys |= 1ull << m->key;
            continue;
        }
        kthole *h = &t->holes[t->nholes++];
        if (!add_literal(t, &used, open, prev, m->at, &h->lit_off, &h->lit_len)) return;
        h->level = m->level;
        h->key = m->key;
        h->memo = KT_NO_MEMO;
        h->fast = fast_kind(m);
        if (m->level == KL_ARGS && (m->key == K_INPUT_DIMS || m->key == K_INPUT_TYPE) &&
            memos < KT_MEMOS) {
            t->memo[memos].len = 0;
            h->memo = (uint8_t)memos++;
        }
        prev = m->end;
    }
    if (!add_literal(t, &used, open, prev, (uint32_t)len, &t->tail_off, &t->tail_len)) return;
    t->ph = ev->e.ph;
    t->cat = ev->e.cat;
    t->flags = ev->e.flags;
    t->has_ph = ev->has_ph;
    for (uint32_t k = 0; k < ts->n; k++)
        if (same_template(&ts->t[ts->order[k]], t)) return;
    uint8_t slot = ts->n < KT_SLOTS ? (uint8_t)ts->n++ : ts->order[KT_SLOTS - 1];
    ts->t[slot] = *t;
    memmove(ts->order + 1, ts->order, ts->n - 1);
    ts->order[0] = slot;
}
