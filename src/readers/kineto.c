/*
 * kineto.c - the reader for PyTorch profiler (Kineto) Chrome-trace JSON.
 *
 * One file per rank, every format vintage 2022-2026: integer or fractional
 * microseconds, timestamps relative to baseTimeNanoseconds, metadata before or
 * after traceEvents, string pids/tids, flows, instants, ROCm traces. The file
 * streams through a json.h window one unit at a time (a top-level member, or
 * one element of traceEvents), so memory grows with the events kept, not with
 * the JSON text. Each event becomes one compact sc__event; an operator's
 * shapes go to an sc__event_shapes and the few other arguments later stages
 * need to an sc__event_ext. Object keys are turned into ids once (read_key:
 * the common ones straight from their raw bytes) and dispatched by switch.
 * With threads to spare, a large file is read in slices on several threads
 * (kineto_parallel.c; a gzip file is inflated on one thread while others
 * parse it), built from this file's pieces (kineto.h).
 */
#include "kineto.h"

#include <stddef.h>
#include <stdlib.h>

static int oom(kreader *r) {
    return sc__jp_error_at(&r->jp, r->jp.p, SC_E_NOMEM, "out of memory");
}

/* A string arg, with the type checked. */
static int arg_string(kreader *r, uint32_t *out) {
    sc__jstr s;
    char c = sc__jp_peek(&r->jp);
    if (c != '"') {
        if (r->jp.p >= r->jp.end) return SC__J_MORE;
        /* Numbers and lists appear where newer versions write strings; keep
         * their raw text rather than failing. */
        SC__JTRY(sc__jp_raw(&r->jp, &s));
    } else {
        SC__JTRY(sc__jp_string(&r->jp, &s));
    }
    *out = sc__kr_intern(r, s);
    return *out == SC__NONE ? oom(r) : SC__J_OK;
}

/* An optional integer arg: a number, or a string of decimal or 0x-hex
 * digits (ROCm writes "stream": "0x0"); anything else counts as absent. */
static int arg_int(kreader *r, int64_t *out) {
    char c = sc__jp_peek(&r->jp);
    if (c == '"') {
        sc__jstr s;
        SC__JTRY(sc__jp_string(&r->jp, &s));
        if (!sc__parse_int_text(s.s, s.n, out)) *out = -1;
        return SC__J_OK;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return sc__jp_int(&r->jp, out);
    SC__JTRY(sc__jp_skip(&r->jp)); /* null, lists, objects */
    *out = -1;
    return SC__J_OK;
}

/* A kernel's "grid" or "block": up to three integers kept, the rest read. */
static int arg_dim3(kreader *r, int32_t out[3]) {
    SC__JTRY(sc__jp_expect(&r->jp, '['));
    for (int i = 0;; i++) {
        bool done;
        SC__JTRY(sc__jp_element(&r->jp, i == 0, &done));
        if (done) return SC__J_OK;
        int64_t v;
        SC__JTRY(sc__jp_int(&r->jp, &v));
        if (i < 3) out[i] = v < INT32_MIN || v > INT32_MAX ? -1 : (int32_t)v;
    }
}

#define KEY(lit) SC__JSTR_EQ(key, lit)

/* Every key the reader acts on; read_key matches the common ones from their
 * raw bytes first, so this table serves the rarer ones and escaped keys. */
static const struct {
    const char *s;
    uint8_t n, id;
} key_names[] = {
#define K(lit, id) {lit, sizeof(lit) - 1, id}
    K("ph", K_PH), K("name", K_NAME), K("cat", K_CAT), K("ts", K_TS), K("dur", K_DUR),
    K("pid", K_PID), K("tid", K_TID), K("id", K_ID), K("bp", K_BP), K("args", K_ARGS),
    K("correlation", K_CORRELATION), K("External id", K_EXTERNAL_ID), K("stream", K_STREAM),
    K("device", K_DEVICE), K("cbid", K_CBID), K("bytes", K_BYTES), K("grid", K_GRID),
    K("block", K_BLOCK), K("Collective name", K_COLL_NAME), K("In msg nelems", K_IN_NELEMS),
    K("Out msg nelems", K_OUT_NELEMS), K("Group size", K_GROUP_SIZE), K("dtype", K_DTYPE),
    K("Process Group Name", K_PG_NAME), K("Process Group Description", K_PG_DESC),
    K("Process Group Ranks", K_PG_RANKS), K("Seq", K_SEQ), K("seq", K_SEQ),
    K("Sequence number", K_SEQ_NUMBER), K("Fwd thread id", K_FWD_TID),
    K("Record function id", K_RF_ID), K("wait_on_stream", K_WAIT_STREAM),
    K("wait_on_cuda_event_record_corr_id", K_WAIT_CORR),
    K("wait_on_cuda_event_id", K_WAIT_EVENT), K("Input Dims", K_INPUT_DIMS),
    K("Input type", K_INPUT_TYPE),
#undef K
};

/* The id of the key s[0..n) (unescaped). */
static kkey key_lookup(const char *s, size_t n) {
    for (size_t i = 0; i < sizeof key_names / sizeof *key_names; i++)
        if (key_names[i].n == n && memcmp(key_names[i].s, s, n) == 0) return (kkey)key_names[i].id;
    return K_OTHER;
}

/* The 16 bytes after p as two little-endian words. */
static inline void load16(const char *p, uint64_t w[2]) {
    memcpy(w, p, 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w[0] = __builtin_bswap64(w[0]);
    w[1] = __builtin_bswap64(w[1]);
#endif
}

/* Do the words w start with lit (at most 16 bytes)? Inlined with a literal,
 * the constants and masks fold away: one or two compares. */
static inline bool raw_is(const uint64_t w[2], const char *lit, size_t n) {
    uint64_t c[2] = {0, 0};
    memcpy(c, lit, n);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    c[0] = __builtin_bswap64(c[0]);
    c[1] = __builtin_bswap64(c[1]);
#endif
    uint64_t m0 = n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
    uint64_t m1 = n >= 16 ? ~0ULL : n <= 8 ? 0 : (1ULL << (8 * (n - 8))) - 1;
    return ((w[0] ^ c[0]) & m0) == 0 && ((w[1] ^ c[1]) & m1) == 0;
}

/* Reads an object key of an event or its args, and the ':' after it, and
 * returns its id. The keys traces repeat millions of times are recognised
 * from their raw bytes, both quotes included, so a match is exactly the
 * escape-free slice sc__jp_string would return - only without the general
 * scan (the reader's largest cost). The window keeps 16 NUL bytes after its
 * end and p is before the end, so the 16 bytes after the opening quote are
 * inside the buffer. Other keys (escaped ones too) take the general path. */
#define FAST_KEY(lit, id)                                                          \
    do {                                                                           \
        _Static_assert(sizeof(lit) <= 16, "fast key longer than the padding");     \
        if (raw_is(w, lit "\"", sizeof(lit))) {                                    \
            jp->p = p + sizeof(lit) + 1;                                           \
            *out = id;                                                             \
            goto colon;                                                            \
        }                                                                          \
    } while (0)

static int read_key(sc__jp *jp, kkey *out) {
    if (sc__jp_peek(jp) == '"') {
        const char *p = jp->p;
        uint64_t w[2];
        load16(p + 1, w);
        switch (p[1]) {
        case 'p': FAST_KEY("ph", K_PH); FAST_KEY("pid", K_PID); break;
        case 't': FAST_KEY("ts", K_TS); FAST_KEY("tid", K_TID); break;
        case 'd': FAST_KEY("dur", K_DUR); FAST_KEY("device", K_DEVICE); break;
        case 'n': FAST_KEY("name", K_NAME); break;
        case 'c': FAST_KEY("cat", K_CAT); FAST_KEY("correlation", K_CORRELATION);
                  FAST_KEY("cbid", K_CBID); break;
        case 'a': FAST_KEY("args", K_ARGS); break;
        case 'i': FAST_KEY("id", K_ID); break;
        case 'b': FAST_KEY("bp", K_BP); FAST_KEY("bytes", K_BYTES); FAST_KEY("block", K_BLOCK); break;
        case 's': FAST_KEY("s", K_OTHER); FAST_KEY("stream", K_STREAM); break;
        case 'g': FAST_KEY("grid", K_GRID); break;
        case 'E': FAST_KEY("External id", K_EXTERNAL_ID); FAST_KEY("Ev Idx", K_OTHER); break;
        case 'I': FAST_KEY("Input Dims", K_INPUT_DIMS); FAST_KEY("Input type", K_INPUT_TYPE); break;
        default: break;
        }
    }
    sc__jstr key;
    SC__JTRY(sc__jp_string(jp, &key));
    *out = key_lookup(key.s, key.n);
colon:
    if (*jp->p != ':') return sc__jp_expect(jp, ':');
    jp->p++;
    return SC__J_OK;
}

int sc__kr_raw_id(kreader *r, uint32_t *id) {
    sc__jstr raw;
    SC__JTRY(sc__jp_raw(&r->jp, &raw));
    return (*id = sc__kr_intern(r, raw)) == SC__NONE ? oom(r) : SC__J_OK;
}

/* An arg that goes to the extras. */
#define EXT(call)                   \
    do {                            \
        sc__kr_ext_begin(r, ev);    \
        SC__JTRY(call);             \
    } while (0)

/* One member of an event's "args", at its value. */
static int args_member(kreader *r, kkey key, kevent *ev) {
    sc__jp *jp = &r->jp;
    sc__event *e = &ev->e;
    sc__event_ext *x = &ev->x;
    int64_t v;
    if (sc__kr_is_int_arg(key)) {
        SC__JTRY(arg_int(r, &v));
        sc__kr_int_arg(r, ev, key, v);
        return SC__J_OK;
    }
    switch (key) {
    case K_GRID: EXT(arg_dim3(r, x->grid)); break;
    case K_BLOCK: EXT(arg_dim3(r, x->block)); break;
    case K_COLL_NAME: EXT(arg_string(r, &x->coll_name)); break;
    case K_DTYPE: EXT(arg_string(r, &x->dtype)); break;
    case K_PG_NAME: EXT(arg_string(r, &x->pg_name)); break;
    case K_PG_DESC: EXT(arg_string(r, &x->pg_desc)); break;
    case K_PG_RANKS: EXT(arg_string(r, &x->pg_ranks)); break;
    case K_INPUT_DIMS:
    case K_INPUT_TYPE: {
        uint32_t id;
        SC__JTRY(sc__kr_raw_id(r, &id));
        sc__kr_shape_arg(ev, key, id);
        break;
    }
    case K_NAME: /* used only as the label of metadata events */
        if (e->ph == 'M') EXT(arg_string(r, &x->label));
        else return sc__jp_skip(jp);
        break;
    default: return sc__jp_skip(jp);
    }
    return SC__J_OK;
}

/* Notes a member read key by key for the template learner. */
static void record(krecord *rec, int level, kkey key, const char *start, const char *at,
                   const char *end) {
    if (!rec) return;
    if (rec->n == SC__KT_MEMBERS) {
        rec->unusable = true;
        return;
    }
    rec->m[rec->n++] = (kmember){(uint8_t)level, (uint8_t)key, (uint32_t)(at - start),
                                 (uint32_t)(end - start)};
}

/* Parses the "args" object of an event, key by key. */
static int parse_args(kreader *r, kevent *ev, krecord *rec, const char *start) {
    sc__jp *jp = &r->jp;
    SC__JTRY(sc__jp_expect(jp, '{'));
    for (bool first = true;; first = false) {
        bool done;
        SC__JTRY(sc__jp_member_start(jp, first, &done));
        if (done) return SC__J_OK;
        kkey key;
        SC__JTRY(read_key(jp, &key));
        sc__jp_peek(jp);
        const char *at = jp->p;
        SC__JTRY(args_member(r, key, ev));
        record(rec, KL_ARGS, key, start, at, jp->p);
    }
}

/* pid and tid are numbers or strings. */
static int parse_id(kreader *r, int64_t *num, uint32_t *str) {
    char c = sc__jp_peek(&r->jp);
    if (c == '"') {
        sc__jstr s;
        SC__JTRY(sc__jp_string(&r->jp, &s));
        *num = 0;
        if ((*str = sc__kr_intern(r, s)) == SC__NONE) return oom(r);
        return SC__J_OK;
    }
    *str = SC__NONE;
    return sc__jp_int(&r->jp, num);
}

static void classify(kreader *r, sc__event *e) {
    const sc_trace *t = r->t;
    if (e->ph == 'M') {
        e->kind = SC_K_METADATA;
        return;
    }
    /* Both answers depend only on an interned id, so they are remembered in
     * direct-mapped caches keyed by the id (categories can be interned late,
     * after thousands of names, so their ids are not small). */
    uint8_t kind;
    uint32_t slot = e->cat & (SC__KIND_MEMO - 1);
    if (r->cat_memo[slot] == e->cat + 1) {
        kind = r->cat_kind[slot];
    } else {
        kind = (uint8_t)sc__kind_from_category(sc__trace_str(t, e->cat),
                                               sc__intern_len(&t->strings, e->cat));
        r->cat_memo[slot] = e->cat + 1;
        r->cat_kind[slot] = kind;
    }
    e->kind = kind;
    if (kind == SC_K_KERNEL || kind == SC_K_MEMCPY || kind == SC_K_MEMSET) {
        e->flags |= SC_EF_GPU;
        if (kind == SC_K_KERNEL) {
            uint32_t *m = &r->nccl_memo[e->name & (SC__KIND_MEMO - 1)];
            bool nccl;
            if ((*m >> 1) == e->name + 1) {
                nccl = *m & 1;
            } else {
                nccl = sc__is_nccl_kernel_name(sc__trace_str(t, e->name));
                if (e->name < (UINT32_MAX >> 1) - 1) *m = ((e->name + 1) << 1) | (nccl ? 1u : 0u);
            }
            if (nccl) e->flags |= SC_EF_NCCL;
        }
    }
}

/* The event's track; consecutive events mostly share one, so the last
 * lookup is remembered. */
static uint32_t event_track(kreader *r, int64_t pid, uint32_t pid_str, int64_t tid, uint32_t tid_str) {
    if (r->last_track != SC__NONE && pid == r->last_pid && tid == r->last_tid &&
        pid_str == r->last_pid_str && tid_str == r->last_tid_str)
        return r->last_track;
    uint32_t k = sc__trace_track(r->t, pid, pid_str, tid, tid_str);
    r->last_track = k;
    r->last_pid = pid;
    r->last_tid = tid;
    r->last_pid_str = pid_str;
    r->last_tid_str = tid_str;
    return k;
}

/* The capacity array v of the trace grows to for one more item: sized by
 * the input where the reader knows how large that is (sc__vec_grown_cap),
 * else doubled. */
static size_t grown_cap(const kreader *r, const sc__vec *v) {
    uint64_t done = sc__jp_offset(&r->jp, r->jp.p);
    uint64_t total = r->sized_by ? sc__source_expected_size(r->sized_by, done) : 0;
    return sc__vec_grown_cap(v, v->len + 1, done, total);
}

/* Bytes array v asks for when it grows next; 0 while it has room. */
static uint64_t growth(const kreader *r, const sc__vec *v) {
    return v->len < v->cap ? 0 : (uint64_t)(grown_cap(r, v) - v->cap) * v->elem;
}

/* Room for one more item in array v, grown as check_budget allowed. */
static bool room_for_one(const kreader *r, sc__vec *v) {
    return v->len < v->cap || sc__vec_reserve_exact(v, grown_cap(r, v));
}

/* The memory guard: before the event, extras or shapes array
 * grows for the event, and every 64K events (strings grow without
 * doubling), what the trace holds plus the read window and the growth must
 * fit the budget - a clear error instead of swapping. Checked before
 * anything of the event is stored. Only the arrays the event adds to
 * count: an array a trace never uses (no extras, say) has no room and
 * would otherwise send every event through the whole sum. Where growing to
 * the input's projected size would not fit, the arrays double from then
 * on, as without it, and only that must fit. */
static int check_budget(kreader *r, const kevent *ev) {
    const sc_trace *t = r->t;
    uint64_t grow = growth(r, &t->events) + (ev->has_ext ? growth(r, &t->exts) : 0) +
                    (ev->has_shapes ? growth(r, &t->shapes) : 0);
    if (!grow && (t->events.len & 0xFFFF) != 0) return SC__J_OK;
    uint64_t need = (uint64_t)sc_trace_memory(t) + r->jp.w->cap + grow;
    if (need <= r->budget) return SC__J_OK;
    if (r->sized_by) {
        r->sized_by = NULL;
        return check_budget(r, ev);
    }
    char text[32];
    sc__jp_error_at(&r->jp, r->jp.p, SC_E_LIMIT,
                    "the trace needs more than its memory budget of %s after %zu events "
                    "(raise it with --max-memory or STEPCAST_MAX_MEMORY)",
                    sc__budget_text(r->budget, text), t->events.len);
    return SC__J_ERR;
}

/* An event with every field absent, copied to start each event: one
 * block copy instead of clearing and setting field by field. */
static kevent blank_event(void) {
    kevent ev;
    memset(&ev, 0, sizeof ev);
    sc__event *e = &ev.e;
    e->correlation = e->external_id = -1;
    e->stream = -1;
    e->device = -1;
    e->ext = e->shapes = SC__NONE;
    sc__event_ext *x = &ev.x;
    x->bytes = x->in_nelems = x->out_nelems = x->seq = x->seq_number = x->fwd_tid = -1;
    x->rf_id = x->wait_corr = x->wait_event = x->group_size = -1;
    x->wait_stream = -1;
    x->coll_name = x->dtype = x->pg_name = x->pg_desc = x->pg_ranks = SC__NONE;
    x->label = SC__NONE;
    ev.sh.dims = ev.sh.types = SC__NONE;
    ev.pid_str = ev.tid_str = SC__NONE;
    return ev;
}

/* Everything but the extras, which sc__kr_ext_begin sets up on first use. */
void sc__kr_event_begin(kreader *r, kevent *ev) {
    ev->e = r->blank.e;
    memcpy(&ev->sh, &r->blank.sh, sizeof *ev - offsetof(kevent, sh));
}

/* One member of the event object, at its value. "args" seen before "ph" is
 * skipped here and read once ph is known (its meaning depends on ph). */
static int top_member(kreader *r, kkey key, kevent *ev, krecord *rec, const char *start) {
    sc__jp *jp = &r->jp;
    sc__event *e = &ev->e;
    const char *vat = jp->p; /* the value, for error offsets */
    sc__jstr s;
    switch (key) {
    case K_PH:
        SC__JTRY(sc__jp_string(jp, &s));
        if (s.n != 1) return sc__jp_error_at(jp, vat, SC_E_FORMAT, "\"ph\" must be one character");
        e->ph = s.s[0];
        ev->has_ph = true;
        return SC__J_OK;
    case K_NAME:
    case K_CAT: {
        if (sc__jp_peek(jp) != '"') {
            if (jp->p >= jp->end) return SC__J_MORE;
            return sc__jp_error_at(jp, jp->p, SC_E_FORMAT, "event \"%s\" must be a string",
                                   key == K_NAME ? "name" : "cat");
        }
        SC__JTRY(sc__jp_string(jp, &s));
        uint32_t id = sc__kr_intern(r, s);
        if (id == SC__NONE) return oom(r);
        *(key == K_NAME ? &e->name : &e->cat) = id;
        return SC__J_OK;
    }
    case K_TS:
        SC__JTRY(sc__jp_time_ns(jp, &e->ts));
        ev->has_ts = true;
        return SC__J_OK;
    case K_DUR:
        SC__JTRY(sc__jp_time_ns(jp, &e->dur));
        if (e->dur < 0) return sc__jp_error_at(jp, vat, SC_E_FORMAT, "negative event duration");
        return SC__J_OK;
    case K_PID: return parse_id(r, &ev->pid, &ev->pid_str);
    case K_TID: return parse_id(r, &ev->tid, &ev->tid_str);
    case K_ID: {
        bool num;
        return sc__jp_int_lenient(jp, &e->correlation, &num);
    }
    case K_BP:
        SC__JTRY(sc__jp_string(jp, &s));
        if (s.n == 1 && s.s[0] == 'e') e->flags |= SC_EF_BP_ENCLOSING;
        return SC__J_OK;
    case K_ARGS:
        if (ev->has_ph) return parse_args(r, ev, rec, start);
        ev->args_at = jp->p; /* ph comes later */
        if (rec) rec->unusable = true;
        return sc__jp_skip(jp);
    default: return sc__jp_skip(jp);
    }
}

int sc__kr_member(kreader *r, int level, kkey key, kevent *ev) {
    return level == KL_TOP ? top_member(r, key, ev, NULL, NULL) : args_member(r, key, ev);
}

/* Reads the event at the cursor key by key, noting its members in rec. */
static int parse_members(kreader *r, kevent *ev, krecord *rec, const char **open) {
    sc__jp *jp = &r->jp;
    SC__JTRY(sc__jp_expect(jp, '{'));
    const char *start = *open = jp->p - 1;
    for (bool first = true;; first = false) {
        bool done;
        SC__JTRY(sc__jp_member_start(jp, first, &done));
        if (done) {
            if (first) ev->empty = true; /* {} : nothing to keep */
            return SC__J_OK;
        }
        kkey key;
        SC__JTRY(read_key(jp, &key));
        sc__jp_peek(jp);
        const char *at = jp->p;
        SC__JTRY(top_member(r, key, ev, rec, start));
        if (key != K_ARGS || !ev->has_ph) record(rec, KL_TOP, key, start, at, jp->p);
    }
}

/* The checks once every member is read, the deferred args, and the store. */
static int event_end(kreader *r, kevent *ev, const char *start) {
    sc__jp *jp = &r->jp;
    sc__event *e = &ev->e;
    if (ev->empty) return SC__J_OK;
    if (!ev->has_ph) return sc__jp_error_at(jp, start, SC_E_FORMAT, "event without \"ph\"");
    if (!ev->has_ts && e->ph != 'M')
        return sc__jp_error_at(jp, start, SC_E_FORMAT, "event without \"ts\"");
    if (e->ts > INT64_MAX / 2 - e->dur || e->ts < INT64_MIN / 2)
        return sc__jp_error_at(jp, start, SC_E_LIMIT, "event time out of range (ts + dur overflows)");
    if (ev->args_at) { /* second, targeted pass over args now that ph is known */
        const char *after = jp->p;
        jp->p = ev->args_at;
        SC__JTRY(parse_args(r, ev, NULL, NULL));
        jp->p = after;
    }
    classify(r, e);
    sc_trace *t = r->t;
    e->track = event_track(r, ev->pid, ev->pid_str, ev->tid, ev->tid_str);
    if (e->track == SC__NONE) return oom(r);
    if (check_budget(r, ev) != SC__J_OK) return SC__J_ERR;
    if (ev->has_ext) {
        if (!room_for_one(r, &t->exts) || !SC__VEC_APPEND(&t->exts, &ev->x) || t->exts.len >= SC__NONE)
            return oom(r);
        e->ext = (uint32_t)(t->exts.len - 1);
    }
    if (ev->has_shapes) {
        if (!room_for_one(r, &t->shapes) || !SC__VEC_APPEND(&t->shapes, &ev->sh) ||
            t->shapes.len >= SC__NONE)
            return oom(r);
        e->shapes = (uint32_t)(t->shapes.len - 1);
    }
    if (!room_for_one(r, &t->events) || !SC__VEC_APPEND(&t->events, e) || t->events.len >= SC__NONE)
        return oom(r);
    if ((t->events.len & 1023) == 0) { /* fault the arrays in ahead, a megabyte at a time */
        sc__vec_prefault(&t->events, &r->warm[0]);
        sc__vec_prefault(&t->exts, &r->warm[1]);
        sc__vec_prefault(&t->shapes, &r->warm[2]);
    }
    return SC__J_OK;
}

/* One element of traceEvents. Nothing is stored until it has parsed whole.
 * A layout learned from earlier events is tried first; an event read key
 * by key teaches its layout for the next ones. */
int sc__kr_event(kreader *r) {
    sc__jp *jp = &r->jp;
    kevent ev;
    const char *start = jp->p, *open;
    if (r->tmpl && sc__jp_peek(jp) == '{') {
        int rc = sc__kt_match(r, &ev);
        if (rc == SC__J_OK) r->matched++;
        if (rc != SC__KT_MISS) return rc == SC__J_OK ? event_end(r, &ev, start) : rc;
    }
    krecord rec, *learn = r->tmpl ? &rec : NULL;
    rec.n = 0;
    rec.unusable = false;
    sc__kr_event_begin(r, &ev);
    SC__JTRY(parse_members(r, &ev, learn, &open));
    if (learn && !rec.unusable && !ev.empty)
        sc__kt_learn(r->tmpl, &rec, &ev, open, (size_t)(jp->p - open));
    return event_end(r, &ev, start);
}

/* "distributedInfo": the rank, the world size and the backend; null is
 * taken for absent. */
static int parse_distributed_info(kreader *r) {
    sc__jp *jp = &r->jp;
    if (sc__jp_peek(jp) == 'n') return sc__jp_skip(jp);
    SC__JTRY(sc__jp_expect(jp, '{'));
    for (bool first = true;; first = false) {
        sc__jstr key;
        bool done, num;
        SC__JTRY(sc__jp_member(jp, first, &key, &done));
        if (done) return SC__J_OK;
        if (KEY("rank")) {
            SC__JTRY(sc__jp_int_lenient(jp, &r->t->rank, &num));
        } else if (KEY("world_size")) {
            SC__JTRY(sc__jp_int_lenient(jp, &r->t->world_size, &num));
        } else if (KEY("backend")) {
            SC__JTRY(arg_string(r, &r->t->backend));
        } else {
            SC__JTRY(sc__jp_skip(jp));
        }
    }
}

/* One element of "deviceProperties", appended to the trace's devices. */
static int parse_device(kreader *r) {
    sc__jp *jp = &r->jp;
    sc__device_prop d = {.id = -1, .name = 0, .num_sms = 0};
    SC__JTRY(sc__jp_expect(jp, '{'));
    for (bool first = true;; first = false) {
        sc__jstr key;
        bool done;
        SC__JTRY(sc__jp_member(jp, first, &key, &done));
        if (done) break;
        int64_t v;
        if (KEY("id")) {
            SC__JTRY(sc__jp_int(jp, &d.id));
        } else if (KEY("name")) {
            SC__JTRY(arg_string(r, &d.name));
        } else if (KEY("numSms")) {
            SC__JTRY(sc__jp_int(jp, &v));
            d.num_sms = v < 0 || v > INT32_MAX ? 0 : (int32_t)v;
        } else {
            SC__JTRY(sc__jp_skip(jp));
        }
    }
    sc__device_prop *slot = sc__vec_push(&r->t->devices);
    if (!slot) return oom(r);
    *slot = d;
    return SC__J_OK;
}

static int parse_devices(kreader *r) {
    sc__jp *jp = &r->jp;
    r->t->devices.len = 0; /* a retried unit starts over */
    SC__JTRY(sc__jp_expect(jp, '['));
    for (bool first = true;; first = false) {
        bool done;
        SC__JTRY(sc__jp_element(jp, first, &done));
        if (done) return SC__J_OK;
        SC__JTRY(parse_device(r));
    }
}

/* Top-level members we read may appear only once: a second
 * "traceEvents" or "distributedInfo" - two traces pasted into one object -
 * would otherwise be merged or silently replace the first. Within an event,
 * a repeated key keeps the last value, as most JSON parsers do. */
enum { TOP_EVENTS = 1, TOP_DIST = 2, TOP_DEVICES = 4, TOP_BASE = 8, TOP_SCHEMA = 16 };

static unsigned top_bit(sc__jstr key) {
    if (KEY("traceEvents")) return TOP_EVENTS;
    if (KEY("distributedInfo")) return TOP_DIST;
    if (KEY("deviceProperties")) return TOP_DEVICES;
    if (KEY("baseTimeNanoseconds")) return TOP_BASE;
    if (KEY("schemaVersion")) return TOP_SCHEMA;
    return 0;
}

/* The value of a top-level member other than traceEvents, at the cursor:
 * the trace's metadata, whichever order the members come in. */
static int metadata_member(kreader *r, sc__jstr key) {
    sc__jp *jp = &r->jp;
    bool num;
    if (KEY("distributedInfo")) return parse_distributed_info(r);
    if (KEY("deviceProperties")) return parse_devices(r);
    if (KEY("baseTimeNanoseconds")) return sc__jp_int_lenient(jp, &r->t->base_time_ns, &num);
    if (KEY("schemaVersion")) {
        char c = sc__jp_peek(jp);
        if (c == '"' || c == '-' || (c >= '0' && c <= '9'))
            return sc__jp_int_lenient(jp, &r->t->schema_version, &num);
    }
    return sc__jp_skip(jp);
}

/* One top-level member (a unit of its own): traceEvents moves the walk
 * into the array, any other member is read whole. Out of line: a trace has
 * a handful of these, while sc__kr_step runs once per event, and with this
 * inlined it saved six registers per call instead of two (0.1% of a
 * load's instructions). */
static __attribute__((noinline)) int top_level_member(kreader *r, int *st) {
    sc__jp *jp = &r->jp;
    sc__jstr key;
    bool done;
    SC__JTRY(sc__jp_member(jp, r->first_member, &key, &done));
    if (done) {
        *st = ST_END;
        return SC__J_OK;
    }
    unsigned bit = top_bit(key);
    if (bit & r->top_seen)
        return sc__jp_error_at(jp, jp->p, SC_E_FORMAT,
                               "duplicate top-level key \"%.*s\" (two traces in one file?)",
                               (int)key.n, key.s);
    if (bit == TOP_EVENTS) {
        SC__JTRY(sc__jp_expect(jp, '['));
        r->saw_events = true;
        *st = ST_EVENTS_FIRST;
    } else {
        SC__JTRY(metadata_member(r, key));
    }
    r->top_seen |= bit;
    r->first_member = false;
    return SC__J_OK;
}

static int event_of(void *ctx) { return sc__kr_event(ctx); }

int sc__kr_step(void *ctx, int *st) {
    kreader *r = ctx;
    sc__jp *jp = &r->jp;
    switch (*st) {
    case ST_START:
        if (sc__jp_peek(jp) == '[') { /* a bare event array is valid Chrome JSON too */
            jp->p++;
            r->saw_events = r->bare_array = true;
            *st = ST_EVENTS_FIRST;
            return SC__J_OK;
        }
        SC__JTRY(sc__jp_expect(jp, '{'));
        *st = ST_MEMBER;
        r->first_member = true;
        return SC__J_OK;
    case ST_MEMBER: return top_level_member(r, st);
    case ST_EVENTS_FIRST:
    case ST_EVENTS:
        return sc__jp_record_step(jp, st, ST_EVENTS_FIRST, ST_EVENTS, r->bare_array ? ST_END : ST_MEMBER, event_of,
                                  r);
    }
    return SC__J_ERR;
}

/* Gives back the slack of a doubled array once the trace is read: up to
 * half of the event memory otherwise stays reserved for nothing. */
static void shrink(sc__vec *v) {
    if (v->len == 0 || v->len == v->cap) return;
    void *p = sc__realloc_array(v->data, v->len, v->elem);
    if (!p) return; /* keeping the larger block is fine */
    v->data = p;
    v->cap = v->len;
}

/* Makes times absolute. baseTimeNanoseconds comes from the input, so the sum
 * is checked (a huge base once overflowed int64, undefined behaviour):
 * every start and end must stay inside +-2^62 ns, the range the reader
 * promises, so that any two times can be subtracted without overflow. */
static bool add_base_time(sc_trace *t, const char *name, sc_error *err) {
    const int64_t lim = INT64_C(1) << 62;
    sc__event *ev = sc__trace_events(t);
    for (size_t i = 0; i < t->events.len; i++) {
        if (ev[i].ph == 'M' && !ev[i].ts) continue;
        int64_t ts, end;
        if (__builtin_add_overflow(ev[i].ts, t->base_time_ns, &ts) ||
            __builtin_add_overflow(ts, ev[i].dur, &end) || ts <= -lim || end >= lim) {
            sc__fail(err, SC_E_LIMIT, name, SC_NO_OFFSET,
                     "event %zu: time out of range once baseTimeNanoseconds (%lld) is added", i,
                     (long long)t->base_time_ns);
            return false;
        }
        ev[i].ts = ts;
    }
    return true;
}

sc_status sc__kr_open(kreader *r, sc__jwin *w, sc__source *src, sc_trace *t, const char *name,
                      const sc_load_options *opts, uint64_t budget, bool templates, sc_error *err) {
    size_t max_unit = opts && opts->max_event_bytes ? opts->max_event_bytes : (1u << 30);
    sc_status st = sc__jwin_init(w, src, opts ? opts->window_bytes : 0, max_unit, err);
    if (st != SC_OK) return st;
    memset(r, 0, sizeof *r);
    r->t = t;
    r->budget = budget;
    r->last_track = SC__NONE;
    r->blank = blank_event();
    if ((templates && !(r->tmpl = sc__kt_new())) || !sc__jp_init(&r->jp, w, name, opts, err)) {
        sc__kr_close(r, w);
        return sc__fail(err, SC_E_NOMEM, name, SC_NO_OFFSET, "out of memory");
    }
    return SC_OK;
}

void sc__kr_close(kreader *r, sc__jwin *w) {
    sc__kt_free(r->tmpl);
    r->tmpl = NULL;
    sc__jp_free(&r->jp);
    sc__jwin_free(w);
}

sc_status sc__kr_finish(sc_trace *t, const char *name, sc_error *err) {
    shrink(&t->events);
    shrink(&t->exts);
    shrink(&t->shapes);
    if (t->base_time_ns && !add_base_time(t, name, err)) return SC_E_LIMIT;
    return SC_OK;
}

static sc_status read_trace(sc__source *src, const char *name, const sc_load_options *opts,
                            bool templates, uint64_t *matched, sc_trace **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    sc_trace *t = sc__trace_new(name);
    if (!t) return sc__fail(err, SC_E_NOMEM, name, SC_NO_OFFSET, "out of memory");
    sc__jwin w;
    kreader r;
    sc_status status = sc__kr_open(&r, &w, src, t, name, opts, sc__load_budget(opts), templates, err);
    if (status != SC_OK) {
        sc_trace_free(t);
        return status;
    }
    r.sized_by = src;
    int rc = sc__jp_drive(&r.jp, sc__kr_step, &r, ST_START, ST_END, "trace object");
    if (rc == SC__J_OK && !r.saw_events)
        rc = sc__jp_error_at(&r.jp, r.jp.p, SC_E_FORMAT,
                             "no \"traceEvents\" array: not a Kineto / Chrome trace");
    t->input_bytes = w.base + w.len;
    if (matched) *matched = r.matched;
    if (rc != SC__J_OK) sc__jwin_blame_source(&w, err);
    sc__kr_close(&r, &w);
    if (rc != SC__J_OK) {
        sc_trace_free(t);
        if (err && err->status == SC_OK)
            sc__fail(err, SC_E_INTERNAL, name, SC_NO_OFFSET, "reader stopped without a reason");
        return err ? err->status : SC_E_PARSE;
    }
    status = sc__kr_finish(t, name, err);
    if (status != SC_OK) {
        sc_trace_free(t);
        return status;
    }
    *out = t;
    return SC_OK;
}

sc_status sc_trace_load(const char *path, const sc_load_options *opts, sc_trace **out,
                        sc_error *err) {
    if (!path || !out) return sc__fail(err, SC_E_USAGE, path, SC_NO_OFFSET, "no path given");
    if (opts && opts->progress && !sc__progress_of(opts)) { /* a caller's callback: one file's progress */
        sc__progress *p = sc__progress_new(opts->progress, opts->progress_user);
        sc_load_options o = sc__progress_options(opts, p);
        sc__progress_stage(p, "read", 1);
        sc_status st = sc_trace_load(path, &o, out, err);
        if (st == SC_OK) sc__progress_files(p, 1);
        sc__progress_flush(p);
        sc__progress_free(p);
        return st;
    }
    unsigned threads = sc__load_threads(opts);
    if (threads > 1 && sc__kineto_load_parallel(path, opts, threads, 0, out)) {
        sc__error_clear(err);
        return SC_OK;
    }
    sc__source src;
    sc_status st = sc__source_open_file(&src, path, err);
    if (st != SC_OK) return st;
    st = read_trace(&src, path, opts, true, NULL, out, err);
    sc__source_close(&src);
    return st;
}

sc_status sc__kineto_load_source(sc__source *src, const char *path, const sc_load_options *opts,
                                 sc_trace **out, sc_error *err) {
    return read_trace(src, path, opts, true, NULL, out, err);
}

sc_status sc__kineto_load_buffer(const void *data, size_t size, const char *name,
                                 const sc_load_options *opts, bool templates, uint64_t *matched,
                                 sc_trace **out, sc_error *err) {
    if (!out || (!data && size)) return sc__fail(err, SC_E_USAGE, name, SC_NO_OFFSET, "bad arguments");
    sc__source src;
    const char *n = name ? name : "<memory>";
    sc_status st = sc__source_open_mem(&src, data ? data : "", size, n, err);
    if (st != SC_OK) return st;
    st = read_trace(&src, n, opts, templates, matched, out, err);
    sc__source_close(&src);
    return st;
}

sc_status sc_trace_load_buffer(const void *data, size_t size, const char *name,
                               const sc_load_options *opts, sc_trace **out, sc_error *err) {
    return sc__kineto_load_buffer(data, size, name, opts, true, NULL, out, err);
}
