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
 * comparing the literals 16 bytes at a time and reading each hole's value
 * either inline, when it has the common form (a plain number or string),
 * or with the value handler the key-by-key read uses (sc__kr_member). The
 * result is the one a key-by-key read gives, errors and requests for more
 * input included: the literal bytes are those of a prefix already read key
 * by key, so the reader is in the same state at each value; the inline
 * forms are ones the handlers read to the same result, and anything else
 * goes to the handlers. Any literal that differs is a miss. Layouts of one
 * kind of event often agree on their first members and differ in the last
 * (an operator with or without "Sequence number"), so a template that
 * agrees with the missed one up to the miss goes on from there. When none
 * fits, the event is read key by key and teaches its layout, replacing the
 * template used least recently.
 *
 * A hole also keeps its last value's bytes and meaning: operators repeat
 * names, shapes and threads, and the next literal must match right after
 * those bytes, so equal bytes are an equal value, with no scanning, number
 * conversion or interning.
 */
#include "kineto.h"

#include <stdlib.h>

#define KT_SLOTS 32   /* templates held */
#define KT_BYTES 1024 /* literal bytes of one template */
#define KT_KEEP 64    /* the longest value a hole or the shapes cache keeps */
#define KT_GIVE_UP 16 /* misses in a row after which a hole stops remembering */
#define KT_SHAPE_SETS 256 /* sets of the shapes cache (shape_set), a power of two */
#define KT_SHAPE_WAYS 4   /* arrays a set holds */
#define KT_SHAPE_KEEP 112 /* the longest array it keeps, a multiple of 16 */
#define KT_HEAD 32        /* bytes of a first literal kept in ktset.head, a multiple of 16 */

/* How a hole's value is read inline when it has the common form; any other
 * form goes to sc__kr_member. Kinds from KF_REMEMBER on keep their last
 * value (times change every event). */
enum {
    KF_NONE, KF_TS, KF_DUR, KF_ID,
    KF_REMEMBER, KF_NAME = KF_REMEMBER, KF_PID, KF_TID, KF_INT_ARG, KF_SHAPES, KF_DIM3
};

typedef struct kthole {
    uint16_t lit_off, lit_len; /* the literal before the value, in bytes[] */
    uint8_t level, key;        /* KL_*, kkey */
    uint8_t fast;              /* KF_* */
} kthole;

/* A value kept for the next time its bytes come: the bytes and what they
 * meant. Each hole keeps its last value (a hole whose value always
 * changes - ids, correlations - soon stops trying). */
typedef struct ktvalue {
    int64_t val;
    uint8_t len;    /* 0: nothing kept */
    uint8_t misses; /* in a row; KT_GIVE_UP: given up */
    char bytes[KT_KEEP + 16];
} ktvalue;

/* An array kept by the shapes cache (shapes_value) and its intern id.
 * Arrays run longer than other values: one "Input type" in thirty on the
 * bench file is over 64 bytes. */
typedef struct ktshape {
    uint32_t id;
    uint8_t len; /* 0: nothing kept */
    char bytes[KT_SHAPE_KEEP];
} ktshape;

typedef struct ktmpl {
    uint32_t nholes;
    uint16_t tail_off, tail_len; /* the literal after the last value */
    uint32_t cat;                /* what the literal members set */
    uint16_t flags;
    char ph;
    bool has_ph;
    kthole holes[SC__KT_MEMBERS];
    ktvalue memo[SC__KT_MEMBERS];
    char bytes[KT_BYTES + 16]; /* 16 bytes of slack for whole-vector loads */
} ktmpl;

struct ktset {
    uint32_t n;              /* templates held */
    uint8_t order[KT_SLOTS]; /* indexes into t[], most recently matched first */
    ktmpl t[KT_SLOTS];
    ktmpl fresh;             /* where a template is learned before it is kept */
    /* The first KT_HEAD bytes of each template's first literal, side by
     * side, and how many of them it has: every event is tried against
     * several templates, and comparing its start with these 1 KB, which
     * stay in the L1 cache, costs less than a miss into each template's
     * bytes[] (half of sc__kt_match's time, in perf). Only a filter: a
     * template that passes it compares its whole first literal in run,
     * so a longer literal that differs further on misses there. */
    char head[KT_SLOTS][KT_HEAD];
    uint8_t head_len[KT_SLOTS];
    /* Arrays ("Input Dims", "Input type") read lately, by set, and each
     * set's next way to replace. */
    ktshape shapes[KT_SHAPE_SETS][KT_SHAPE_WAYS];
    uint8_t shapes_next[KT_SHAPE_SETS];
};

_Static_assert(KT_HEAD % 16 == 0 && KT_HEAD <= KT_BYTES + 16 && KT_HEAD <= UINT8_MAX,
               "sc__kt_learn copies KT_HEAD bytes of a template's first literal");

ktset *sc__kt_new(void) { return calloc(1, sizeof(ktset)); }

void sc__kt_free(ktset *ts) { free(ts); }

/* Are the n >= 1 bytes at p those at lit? p is at most the window's end.
 * Both are read in 16-byte steps: lit has the template's slack, and p needs
 * no bounds check: literals and remembered values come from valid JSON,
 * which holds no NUL byte, while the window's end is followed by 16 NUL
 * bytes (the sentinel is the first). So a match never reaches past the
 * end, and each step is read only after the previous one matched whole:
 * it starts at most at the end and reads at most to end + 15. */
static inline bool lit_at(const char *p, const char *lit, size_t n) {
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
    for (size_t i = 0; i < n; i++) /* stops at the first difference: the NUL */
        if (p[i] != lit[i]) return false;
    return true;
#endif
}

/* Does the value kept in kv come at p? Only its bytes are compared: the
 * caller checks that what follows them is what follows a whole value. */
static inline bool kept_at(const ktvalue *kv, const char *p) {
    return kv->len && lit_at(p, kv->bytes, kv->len);
}

/* Keeps the n <= KT_KEEP bytes at p, meaning val. Copied in whole 16-byte
 * steps, constant-size copies the compiler inlines: p + n is inside the
 * window, whose 16 padding bytes cover the rounding up. */
static inline void keep(ktvalue *kv, const char *p, size_t n, int64_t val) {
    if (n <= 16) memcpy(kv->bytes, p, 16);
    else if (n <= 32) memcpy(kv->bytes, p, 32);
    else if (n <= 48) memcpy(kv->bytes, p, 48);
    else memcpy(kv->bytes, p, 64);
    kv->len = (uint8_t)n;
    kv->val = val;
}

/* The shapes cache's set for an array at p, keyed by the 32 bytes there
 * (values and what follows them); false when the window ends within the
 * first 16 (no NUL in them: p + 15 is before the end, so the second load
 * reads at most to end + 15, the last padding byte).
 *
 * Validating and interning an operator's shapes arrays cost 10% of a load,
 * and they repeat across operators (each layer has the same ones), not
 * only from one event of a layout to the next as the holes' memory
 * assumes. A cached array is one the handler read before, whole and valid,
 * and an array ends at its own closing bracket, so input that begins with
 * its bytes holds the same value: the handler would read exactly those
 * bytes to the same id. The cache is set-associative because arrays share
 * long prefixes (["c10::Half", "c10::Half", ...): with one array per slot,
 * a quarter of the lookups on the 513 MB bench file missed, with four per
 * set one in twenty (counted). */
static inline bool shape_set(const char *p, uint32_t *set) {
    uint64_t w[4];
    memcpy(w, p, 16);
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    if (((w[0] - ones) & ~w[0] & highs) | ((w[1] - ones) & ~w[1] & highs)) return false;
    memcpy(w + 2, p + 16, 16);
    uint64_t h = (w[0] * 0x9e3779b97f4a7c15ULL) ^ w[1];
    h = (h * 0xff51afd7ed558ccdULL) ^ w[2];
    h = (h * 0xc4ceb9fe1a85ec53ULL) ^ w[3];
    *set = (uint32_t)(sc__hash_u64(h) & (KT_SHAPE_SETS - 1));
    return true;
}

/* A shapes value: from the cache, else by the handler's own reading
 * (without its dispatch), then cached in its set's ways in turn. */
static inline const char *shapes_value(kreader *r, const char *p, int64_t *val) {
    sc__jp *jp = &r->jp;
    ktset *ts = r->tmpl;
    uint32_t set = 0, id;
    bool cacheable = *p == '[' && shape_set(p, &set);
    if (cacheable) {
        for (uint32_t w = 0; w < KT_SHAPE_WAYS; w++) {
            const ktshape *c = &ts->shapes[set][w];
            if (c->len && lit_at(p, c->bytes, c->len)) {
                *val = c->id;
                return p + c->len;
            }
        }
    }
    jp->p = p;
    if (sc__kr_raw_id(r, &id) != SC__J_OK) return NULL;
    size_t n = (size_t)(jp->p - p);
    if (cacheable && n <= KT_SHAPE_KEEP) {
        uint8_t w = ts->shapes_next[set];
        ktshape *c = &ts->shapes[set][w];
        for (size_t k = 0; k < n; k += 16) /* the window's padding covers the rounding up */
            memcpy(c->bytes + k, p + k, 16);
        c->len = (uint8_t)n;
        c->id = id;
        ts->shapes_next[set] = (uint8_t)((w + 1) % KT_SHAPE_WAYS);
    }
    *val = id;
    return jp->p;
}

/* A kernel's "grid" or "block" in its common form, three small numbers
 * ([128, 1, 1]), packed into *val DIM3_BITS bits each (so that a hole can
 * keep it: kernels repeat their launch shapes); NULL for anything else,
 * which the handler reads (arg_dim3 in kineto.c). Out of line: it is
 * needed only when a hole's memory misses, and inlining it here made the
 * compiler call sc__jp_fast_int out of line everywhere (7% of a load). */
#define DIM3_BITS 21
#define DIM3_MAX ((1 << DIM3_BITS) - 1)
static __attribute__((noinline)) const char *dim3_value(const char *p, const char *end,
                                                        int64_t *val) {
    if (*p++ != '[') return NULL;
    uint64_t packed = 0;
    for (int i = 0; i < 3; i++) {
        int64_t v;
        if (!(p = sc__jp_fast_int(p, end, &v)) || v < 0 || v > DIM3_MAX) return NULL;
        packed |= (uint64_t)v << (DIM3_BITS * i);
        if (*p++ != (i < 2 ? ',' : ']')) return NULL;
        if (i < 2 && *p == ' ') p++;
    }
    *val = (int64_t)packed;
    return p;
}

/* Reads the value at p inline when it has the common form for hole h: the
 * position after it with its meaning in *val, or NULL for sc__kr_member to
 * read it (and to say what is wrong with it). */
static inline const char *fast_value(kreader *r, const kthole *h, const char *p, int64_t *val) {
    sc__jp *jp = &r->jp;
    const char *q;
    uint32_t id;
    switch (h->fast) {
    case KF_NAME:
        if (*p != '"') return NULL;
        q = sc__jp_scan_plain(p + 1);
        if (*q != '"' || (uint64_t)(q - p - 1) > jp->max_string) return NULL;
        if ((id = sc__kr_intern(r, (sc__jstr){p + 1, (size_t)(q - p - 1)})) == SC__NONE) return NULL;
        *val = id;
        return q + 1;
    case KF_TS:
    case KF_DUR: return sc__jp_fast_time_ns(p, jp->end, val);
    case KF_ID:
    case KF_PID:
    case KF_TID:
    case KF_INT_ARG: return *p == '"' ? NULL : sc__jp_fast_int(p, jp->end, val);
    case KF_SHAPES: return shapes_value(r, p, val);
    case KF_DIM3: return dim3_value(p, jp->end, val);
    default: return NULL;
    }
}

/* Does to ev what hole h's handler does with a value meaning val; false,
 * with nothing done, where the handler does more (a negative duration is
 * an error). */
static inline __attribute__((always_inline)) bool apply_value(const kreader *r, const kthole *h,
                                                               kevent *ev, int64_t val) {
    switch (h->fast) {
    case KF_NAME: ev->e.name = (uint32_t)val; return true;
    case KF_TS:
        ev->e.ts = val;
        ev->has_ts = true;
        return true;
    case KF_DUR:
        if (val < 0) return false;
        ev->e.dur = val;
        return true;
    case KF_ID: ev->e.correlation = val; return true;
    case KF_PID:
        ev->pid = val;
        ev->pid_str = SC__NONE;
        return true;
    case KF_TID:
        ev->tid = val;
        ev->tid_str = SC__NONE;
        return true;
    case KF_INT_ARG: sc__kr_int_arg(r, ev, (kkey)h->key, val); return true;
    case KF_SHAPES: sc__kr_shape_arg(ev, (kkey)h->key, (uint32_t)val); return true;
    case KF_DIM3: {
        sc__kr_ext_begin(r, ev);
        int32_t *out = h->key == K_GRID ? ev->x.grid : ev->x.block;
        for (int i = 0; i < 3; i++) out[i] = (int32_t)((uint64_t)val >> (DIM3_BITS * i) & DIM3_MAX);
        return true;
    }
    default: return false;
    }
}

/* Reads the value of hole h at p into ev, remembering it in m; *next is
 * set to the position after it. */
static inline int read_value(kreader *r, const kthole *h, ktvalue *m, const char *p, kevent *ev,
                             const char **next) {
    bool remember = h->fast >= KF_REMEMBER && m->misses < KT_GIVE_UP;
    if (remember && m->len) {
        if (kept_at(m, p)) {
            apply_value(r, h, ev, m->val);
            m->misses = 0;
            *next = p + m->len;
            return SC__J_OK;
        }
        m->misses++;
    }
    int64_t val;
    const char *q = fast_value(r, h, p, &val);
    if (q && apply_value(r, h, ev, val)) {
        size_t n = (size_t)(q - p);
        if (remember && n <= KT_KEEP) keep(m, p, n, val);
        *next = q;
        return SC__J_OK;
    }
    r->jp.p = p;
    SC__JTRY(sc__kr_member(r, h->level, (kkey)h->key, ev));
    *next = r->jp.p;
    return SC__J_OK;
}

/* Reads an event by template t from hole `from` on, p being where that
 * hole's literal should start: the event's '{' (which t's first literal
 * matched) for hole 0, else where a template that agrees with t up to hole
 * `from` missed. On a miss, *at is the hole whose literal differed
 * (nholes: the tail) and *p_at where. */
static int run(kreader *r, ktmpl *t, kevent *ev, uint32_t from, const char *p, uint32_t *at,
               const char **p_at) {
    sc__jp *jp = &r->jp;
    if (from == 0) {
        sc__kr_event_begin(r, ev);
        ev->e.ph = t->ph;
        ev->e.cat = t->cat;
        ev->e.flags = t->flags;
        ev->has_ph = t->has_ph;
    }
    for (uint32_t i = from; i < t->nholes; i++) {
        const kthole *h = &t->holes[i];
        if (!lit_at(p, t->bytes + h->lit_off, h->lit_len)) {
            *at = i;
            *p_at = p;
            return SC__KT_MISS;
        }
        SC__JTRY(read_value(r, h, &t->memo[i], p + h->lit_len, ev, &p));
    }
    if (!lit_at(p, t->bytes + t->tail_off, t->tail_len)) {
        *at = t->nholes;
        *p_at = p;
        return SC__KT_MISS;
    }
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

/* Where the literal before hole i of t starts in t->bytes (i == nholes:
 * the tail's): the length of everything before it, as literals are laid
 * out in order from 0. */
static inline uint32_t prefix_len(const ktmpl *t, uint32_t i) {
    return i < t->nholes ? t->holes[i].lit_off : t->tail_off;
}

/* Do a and b agree up to hole i (its literal excluded): the same kind of
 * event, the same literals and the same holes before it? Then an event
 * read by a up to there is in the state b would have left it in, and b
 * can go on from hole i. The literals, keys included, already fix the
 * holes; the kind is compared apart, as a template sets it at the start
 * from "ph" and "cat" that may come after hole i. */
static bool same_prefix(const ktmpl *a, const ktmpl *b, uint32_t i) {
    if (b->nholes < i || a->ph != b->ph || a->cat != b->cat || a->flags != b->flags ||
        a->has_ph != b->has_ph || prefix_len(a, i) != prefix_len(b, i))
        return false;
    for (uint32_t k = 0; k < i; k++) {
        const kthole *x = &a->holes[k], *y = &b->holes[k];
        if (x->lit_len != y->lit_len || x->level != y->level || x->key != y->key ||
            x->fast != y->fast)
            return false;
    }
    return memcmp(a->bytes, b->bytes, prefix_len(a, i)) == 0;
}

_Static_assert(KT_SLOTS <= 32, "sc__kt_match keeps the templates tried in 32 bits");

int sc__kt_match(kreader *r, kevent *ev) {
    ktset *ts = r->tmpl;
    sc__jp *jp = &r->jp;
    const char *open = jp->p;
    uint32_t tried = 0; /* bit per slot */
    for (uint32_t k = 0; k < ts->n; k++) {
        uint32_t slot = ts->order[k];
        /* Only a filter: run compares the whole first literal again. */
        if ((tried >> slot & 1) || !lit_at(open, ts->head[slot], ts->head_len[slot])) continue;
        ktmpl *t = &ts->t[slot];
        tried |= 1u << slot;
        uint32_t at;
        const char *p_at;
        int rc = run(r, t, ev, 0, open, &at, &p_at);
        /* A later literal differs: operators of one kind share their first
         * members and differ in their last args, so a template that agrees
         * up to the miss goes on from there instead of reading the event
         * again from its start. */
        while (rc == SC__KT_MISS) {
            uint32_t j = 0;
            for (; j < ts->n; j++) {
                uint32_t s = ts->order[j];
                if (!(tried >> s & 1) && same_prefix(t, &ts->t[s], at)) break;
            }
            if (j == ts->n) break;
            slot = ts->order[j];
            t = &ts->t[slot];
            tried |= 1u << slot;
            rc = run(r, t, ev, at, p_at, &at, &p_at);
        }
        if (rc == SC__KT_MISS) { /* no template fits beyond the miss: the next one */
            jp->p = open;
            continue;
        }
        if (rc == SC__J_OK) { /* most recently matched first */
            uint32_t pos = 0;
            while (ts->order[pos] != slot) pos++;
            if (pos > 0) {
                memmove(ts->order + 1, ts->order, pos);
                ts->order[0] = (uint8_t)slot;
            }
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
    if (m->level == KL_ARGS) {
        if (m->key == K_INPUT_DIMS || m->key == K_INPUT_TYPE) return KF_SHAPES;
        if (m->key == K_GRID || m->key == K_BLOCK) return KF_DIM3;
        return sc__kr_is_int_arg((kkey)m->key) ? KF_INT_ARG : KF_NONE;
    }
    switch (m->key) {
    case K_NAME: return KF_NAME;
    case K_PID: return KF_PID;
    case K_TID: return KF_TID;
    case K_TS: return KF_TS;
    case K_DUR: return KF_DUR;
    case K_ID: return KF_ID;
    default: return KF_NONE;
    }
}

void sc__kt_learn(ktset *ts, const krecord *rec, const kevent *ev, const char *open, size_t len) {
    ktmpl *t = &ts->fresh;
    uint32_t used = 0, prev = 0;
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
        kthole *h = &t->holes[t->nholes];
        if (!add_literal(t, &used, open, prev, m->at, &h->lit_off, &h->lit_len)) return;
        h->level = m->level;
        h->key = m->key;
        h->fast = fast_kind(m);
        t->memo[t->nholes].len = t->memo[t->nholes].misses = 0;
        t->nholes++;
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
    size_t n;
    const char *lit = first_literal(t, &n); /* t->bytes holds KT_HEAD bytes whatever n */
    memcpy(ts->head[slot], lit, KT_HEAD);
    ts->head_len[slot] = (uint8_t)(n < KT_HEAD ? n : KT_HEAD);
    memmove(ts->order + 1, ts->order, ts->n - 1);
    ts->order[0] = slot;
}
