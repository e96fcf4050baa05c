/*
 * diff.c - `stepcast diff A B`: two trace sets compared name by name, the
 * way HTA's TraceDiff compares a control and a test group, and more
 * coarsely by kernel class, collective kind and step, so that a change is
 * seen both where it lands (one kernel) and what it adds up to (gemm time).
 *
 * Each side is summed over its ranks' steps: every event that starts in a
 * ProfilerStep (a GPU event where the runtime call that launched it does)
 * adds its duration and one occurrence to its name's row; the sums are
 * then divided by the side's rank-steps, so a side of 6 steps and one of 3,
 * or of 8 ranks and 2, compare as means per step per rank. Kernel names
 * are normalised first (normalise_kernel), or every instantiation of a
 * template would be a row of its own and a change of library version would
 * pair nothing. Rows are data for the report (src/report/diff_report.c)
 * and for a later HTML page: sorted by |delta|, nothing formatted here.
 */
#include "diff.h"

#include "../trace/trace.h"
#include "../transforms/scale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The running sums of one row. */
typedef struct agg {
    int64_t ns[2];
    uint64_t n[2];
} agg;

/* A step of one rank: its span and its name. */
typedef struct span {
    int64_t start, end;
    uint32_t name;
} span;

typedef struct builder {
    sc_diff *d;
    sc__vec sums;   /* agg, by key id */
    sc__vec steps[2]; /* per side: agg of step i (ns: durations, n: ranks) */
    uint32_t *step_name[2]; /* the first rank's name of step i, by side (interned in d->names) */
    size_t nstep_names[2];
} builder;

static const char *const section_names[SC_DIFF_SECTION_COUNT] = {"step", "kernel_class", "collective",
                                                                  "operator", "kernel"};

const char *sc_diff_section_name(sc_diff_section s) {
    return (unsigned)s < SC_DIFF_SECTION_COUNT ? section_names[s] : "unknown";
}

/* Copies s into out (cap bytes) without "(anonymous namespace)::", which
 * would end a name at its '(' otherwise. */
static void drop_anonymous(const char *s, char *out, size_t cap) {
    static const char anon[] = "(anonymous namespace)::";
    size_t n = 0;
    while (*s && n + 1 < cap) {
        if (*s == '(' && sc__starts_with(s, anon)) s += sizeof anon - 1;
        else out[n++] = *s++;
    }
    out[n] = '\0';
}

/* The text of s up to its first byte of stop ("<(": its template arguments
 * or parameters), into out; returns where it stopped. */
static const char *base_name(const char *s, const char *stop, char *out, size_t cap, size_t *len) {
    size_t n = 0;
    while (*s && !strchr(stop, *s) && n + 1 < cap) out[n++] = *s++;
    while (n > 0 && out[n - 1] == ' ') n--;
    out[n] = '\0';
    *len = n;
    return s;
}

/* The last "::" component of the first template argument of s (at its
 * '<') that is not a number: the functor of an elementwise kernel
 * ("CUDAFunctor_add", "sigmoid_kernel_cuda"), the operator of a
 * cutlass::Kernel. */
static size_t functor_of(const char *s, char *out, size_t cap) {
    out[0] = '\0';
    if (*s != '<') return 0;
    for (s++; *s;) {
        while (*s == ' ') s++;
        size_t n;
        const char *end = base_name(s, "<(,>", out, cap, &n);
        bool number = n > 0 && strspn(out, "0123456789") == n;
        if (!number && n > 0) {
            const char *last = out;
            for (const char *p = out; (p = strstr(p, "::")); p += 2) last = p + 2;
            n = strlen(last);
            memmove(out, last, n + 1);
            return n;
        }
        /* Past this argument: to the ',' or '>' at depth 0. */
        int depth = 0;
        for (s = end; *s && !(depth == 0 && (*s == ',' || *s == '>')); s++) {
            if (*s == '<' || *s == '(') depth++;
            else if ((*s == '>' || *s == ')') && depth > 0) depth--;
        }
        if (*s != ',') break;
        s++;
    }
    out[0] = '\0';
    return 0;
}

static bool is_triton_suffix(const char *s, size_t n) {
    size_t i = n;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
    return i < n && i > 0 && s[i - 1] == '_';
}

/* A kernel's name without what makes each instantiation or launch differ:
 * the template arguments and the parameter list go, and a leading "void "
 * ("void at::native::reduce_kernel<128, 4, ...>(...)" is
 * "at::native::reduce_kernel"); but a wrapper that only a template
 * argument tells apart keeps that argument's name: an elementwise
 * kernel's functor ("at::native::vectorized_elementwise_kernel<
 * CUDAFunctor_add>") and a cutlass::Kernel's operator. A Triton kernel's
 * trailing compile number goes ("triton_poi_fused_add_3" is
 * "triton_poi_fused_add"). Writes at most cap - 1 bytes and a NUL into
 * out; returns the length. */
size_t sc__diff_normalise_kernel(const char *name, char *out, size_t cap) {
    char clean[1024], arg[512];
    if (sc__starts_with(name, "void ")) name += 5;
    drop_anonymous(name, clean, sizeof clean);
    size_t n;
    const char *rest = base_name(clean, "<(", out, cap, &n);
    bool wrapper = (n >= 18 && strcmp(out + n - 18, "elementwise_kernel") == 0) ||
                   strcmp(out, "cutlass::Kernel") == 0 || strcmp(out, "cutlass::Kernel2") == 0;
    size_t a = wrapper ? functor_of(rest, arg, sizeof arg) : 0;
    if (a > 0 && n + a + 3 < cap) n += (size_t)snprintf(out + n, cap - n, "<%s>", arg);
    if (sc__starts_with(out, "triton_") && is_triton_suffix(out, n)) {
        while (out[n - 1] != '_') n--;
        out[--n] = '\0';
    }
    return n;
}

/* The row of (section, name); SC__NONE on OOM. Rows are keyed by the
 * section's letter in front of the name. */
static uint32_t key(builder *b, sc_diff_section s, const char *name, size_t n) {
    char buf[1024];
    if (n > sizeof buf - 2) n = sizeof buf - 2;
    buf[0] = (char)('a' + s);
    memcpy(buf + 1, name, n);
    uint32_t id = sc__intern_put(&b->d->names, buf, n + 1);
    if (id == SC__NONE) return SC__NONE;
    while (b->sums.len <= id)
        if (!sc__vec_push(&b->sums)) return SC__NONE;
    return id;
}

static void add(builder *b, uint32_t id, int side, int64_t dur) {
    agg *a = &SC__VEC_AT(&b->sums, agg, id);
    a->ns[side] += dur;
    a->n[side]++;
}

/* The class of a GPU event, as the critical path names them. */
static const char *gpu_class(const char *name, uint8_t kind) {
    if (kind == SC_K_MEMCPY) return "memcpy";
    if (kind == SC_K_MEMSET) return "memset";
    switch (sc__scale_class_of(name, SC_T_KERNEL)) {
    case SC_SCALE_COMM: return "communication";
    case SC_SCALE_GEMM: return "gemm";
    case SC_SCALE_ATTENTION: return "attention";
    default: return "other_kernel";
    }
}

/* The rows of one trace name: operator, or kernel, class and collective. */
typedef struct name_keys {
    uint32_t k[3];
} name_keys;

static bool keys_of(builder *b, const sc_trace *t, const sc__event *e, name_keys *out) {
    const char *name = sc__trace_str(t, e->name);
    out->k[0] = out->k[1] = out->k[2] = SC__NONE;
    if (e->kind == SC_K_CPU_OP || e->kind == SC_K_USER_ANNOTATION) {
        out->k[0] = key(b, SC_DIFF_OPERATOR, name, strlen(name));
        return out->k[0] != SC__NONE;
    }
    char norm[1024];
    size_t n = sc__diff_normalise_kernel(name, norm, sizeof norm);
    const char *cls = gpu_class(name, e->kind);
    out->k[0] = key(b, SC_DIFF_KERNEL, norm, n);
    out->k[1] = key(b, SC_DIFF_KERNEL_CLASS, cls, strlen(cls));
    if (out->k[0] == SC__NONE || out->k[1] == SC__NONE) return false;
    if (e->kind == SC_K_KERNEL && (e->flags & SC_EF_NCCL)) {
        char kind[64];
        size_t k = sc__nccl_kind(name, kind, sizeof kind);
        if (k == 0) k = (size_t)snprintf(kind, sizeof kind, "unknown");
        if ((out->k[2] = key(b, SC_DIFF_COLLECTIVE, kind, k)) == SC__NONE) return false;
    }
    return true;
}

static int cmp_span(const void *x, const void *y) {
    const span *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* Index of the step holding ts, or SC__NONE. */
static uint32_t step_at(const span *s, size_t n, int64_t ts) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].start <= ts) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && ts < s[lo - 1].end ? (uint32_t)(lo - 1) : SC__NONE;
}

/* The trace's ProfilerStep spans, sorted; *n 0 when it has none. */
static span *steps_of(const sc_trace *t, size_t *n) {
    const sc__event *ev = sc__trace_events(t);
    size_t count = 0;
    for (size_t i = 0; i < t->events.len; i++)
        count += ev[i].kind == SC_K_USER_ANNOTATION && ev[i].ph == 'X' &&
                 sc__starts_with(sc__trace_str(t, ev[i].name), "ProfilerStep#");
    span *s = sc__alloc_array(count ? count : 1, sizeof *s);
    *n = 0;
    for (size_t i = 0; s && i < t->events.len; i++)
        if (ev[i].kind == SC_K_USER_ANNOTATION && ev[i].ph == 'X' &&
            sc__starts_with(sc__trace_str(t, ev[i].name), "ProfilerStep#"))
            s[(*n)++] = (span){ev[i].ts, ev[i].ts + ev[i].dur, ev[i].name};
    if (s) qsort(s, *n, sizeof *s, cmp_span);
    return s;
}

static bool is_gpu(uint8_t kind) { return kind == SC_K_KERNEL || kind == SC_K_MEMCPY || kind == SC_K_MEMSET; }

/* Where a GPU event's launch started: its runtime call's start. */
static bool launch_times(const sc_trace *t, sc__idmap *launch) {
    const sc__event *ev = sc__trace_events(t);
    if (!sc__idmap_init(launch, 1024)) return false;
    for (size_t i = 0; i < t->events.len; i++)
        if ((ev[i].kind == SC_K_RUNTIME || ev[i].kind == SC_K_DRIVER) && ev[i].correlation >= 0 &&
            !sc__idmap_put_new(launch, ev[i].correlation, (uint32_t)i))
            return false;
    return true;
}

/* Adds one rank's trace to its side; false on OOM. */
static bool add_trace(builder *b, int side, const sc_trace *t, uint64_t *rank_steps) {
    size_t nsteps;
    span *steps = steps_of(t, &nsteps);
    /* The rows of each name, worked out once: by name and whether on the
     * GPU (a CPU op and a kernel may share a name, not their rows). */
    size_t nkeys = 2 * (size_t)t->strings.count;
    name_keys *keys = sc__alloc_array(nkeys ? nkeys : 1, sizeof *keys);
    sc__idmap launch = {0};
    bool ok = steps && keys && launch_times(t, &launch);
    for (size_t i = 0; ok && i < nkeys; i++) keys[i].k[0] = keys[i].k[1] = keys[i].k[2] = SC__NONE - 1;
    const sc__event *ev = sc__trace_events(t);
    for (size_t i = 0; ok && i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        bool cpu = e->kind == SC_K_CPU_OP || (e->kind == SC_K_USER_ANNOTATION &&
                                              !sc__starts_with(sc__trace_str(t, e->name), "ProfilerStep#"));
        if (e->ph != 'X' || (!cpu && !is_gpu(e->kind))) continue;
        int64_t at = e->ts;
        if (!cpu && e->correlation >= 0) {
            uint32_t l = sc__idmap_get(&launch, e->correlation);
            if (l != SC__NONE) at = ev[l].ts;
        }
        if (nsteps && step_at(steps, nsteps, at) == SC__NONE) continue;
        name_keys *k = &keys[2 * (size_t)e->name + !cpu];
        if (k->k[0] == SC__NONE - 1 && !keys_of(b, t, e, k)) ok = false;
        for (int j = 0; ok && j < 3; j++)
            if (k->k[j] != SC__NONE) add(b, k->k[j], side, e->dur);
    }
    *rank_steps += nsteps ? nsteps : 1;
    for (size_t i = 0; ok && i < nsteps; i++) {
        while (ok && b->steps[side].len <= i) ok = sc__vec_push(&b->steps[side]) != NULL;
        if (!ok) break;
        agg *a = &SC__VEC_AT(&b->steps[side], agg, i);
        a->ns[side] += steps[i].end - steps[i].start;
        a->n[side]++;
        if (i >= b->nstep_names[side]) { /* the first rank with that many steps names it */
            uint32_t *names = sc__realloc_array(b->step_name[side], i + 1, sizeof *names);
            if (!(ok = names != NULL)) break;
            b->step_name[side] = names;
            const char *s = sc__trace_str(t, steps[i].name);
            names[i] = sc__intern_put(&b->d->names, s, strlen(s));
            b->nstep_names[side] = i + 1;
            ok = names[i] != SC__NONE;
        }
    }
    sc__idmap_free(&launch);
    free(keys);
    free(steps);
    return ok;
}

/* The label of a side: its first file, and how many there are. */
static char *label_of(const sc_traceset *set) {
    const char *first = set->count ? set->traces[0]->path : "";
    char buf[600];
    if (set->count > 1) snprintf(buf, sizeof buf, "%s (and %zu more files)", first, set->count - 1);
    else snprintf(buf, sizeof buf, "%s", first);
    return sc__strdup(buf);
}

static sc_status add_side(builder *b, int side, const sc_traceset *set, sc_error *err) {
    sc_diff_side *s = &b->d->side[side];
    for (size_t r = 0; r < set->count; r++) {
        const sc_trace *t = set->traces[r];
        sc_status st = sc__trace_check_whole(t, err);
        if (st != SC_OK) return st;
        if (t->format != SC__FMT_KINETO)
            return sc__fail(err, SC_E_USAGE, t->path, SC_NO_OFFSET,
                            "diff compares Kineto traces; a Chakra trace has no events to sum");
        if (!add_trace(b, side, t, &s->rank_steps)) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    b->d->label[side] = label_of(set);
    b->d->gpu[side] = sc__strdup(set->count ? sc__trace_gpu_name(set->traces[0]) : "");
    if (!b->d->label[side] || !b->d->gpu[side]) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    s->label = b->d->label[side];
    s->gpu = b->d->gpu[side];
    s->ranks = set->count;
    int64_t total = 0;
    uint64_t n = 0;
    for (size_t i = 0; i < b->steps[side].len; i++) {
        total += SC__VEC_AT(&b->steps[side], agg, i).ns[side];
        n += SC__VEC_AT(&b->steps[side], agg, i).n[side];
    }
    s->step_us = n ? (double)total / (double)n / 1e3 : 0;
    return SC_OK;
}

static const char *change_of(double a, double b) {
    if (a == 0 && b > 0) return "added";
    if (b == 0 && a > 0) return "removed";
    if (fabs(a - b) <= 1e-9 * (a > b ? a : b)) return "same";
    return b > a ? "more" : "fewer";
}

static sc_diff_row row_of(sc_diff_section sec, const char *name, const agg *a, const double div[2]) {
    sc_diff_row r = {.section = sec, .name = name};
    r.a_us = (double)a->ns[0] / div[0] / 1e3;
    r.b_us = (double)a->ns[1] / div[1] / 1e3;
    r.a_count = (double)a->n[0] / div[0];
    r.b_count = (double)a->n[1] / div[1];
    r.delta_us = r.b_us - r.a_us;
    r.delta_pct = r.a_us > 0 ? r.delta_us / r.a_us * 100.0 : 0;
    r.change = change_of(r.a_count, r.b_count);
    return r;
}

static int cmp_row(const void *x, const void *y) {
    const sc_diff_row *a = x, *b = y;
    if (a->section != b->section) return a->section < b->section ? -1 : 1;
    double da = fabs(a->delta_us), db = fabs(b->delta_us);
    if (da != db) return da > db ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The step rows: step i of each side, its duration averaged over the ranks
 * that have it. */
static bool step_rows(builder *b, sc_diff_row *rows, size_t *n) {
    sc_diff *d = b->d;
    size_t steps = b->steps[0].len > b->steps[1].len ? b->steps[0].len : b->steps[1].len;
    for (size_t i = 0; i < steps; i++) {
        agg a = {{0, 0}, {0, 0}};
        uint64_t ranks[2] = {0, 0};
        for (int s = 0; s < 2; s++)
            if (i < b->steps[s].len) {
                a.ns[s] = SC__VEC_AT(&b->steps[s], agg, i).ns[s];
                ranks[s] = SC__VEC_AT(&b->steps[s], agg, i).n[s];
            }
        const char *na = i < b->nstep_names[0] ? sc__intern_str(&d->names, b->step_name[0][i]) : "-";
        const char *nb = i < b->nstep_names[1] ? sc__intern_str(&d->names, b->step_name[1][i]) : "-";
        char buf[300];
        if (strcmp(na, nb) == 0) snprintf(buf, sizeof buf, "%s", na);
        else snprintf(buf, sizeof buf, "%s | %s", na, nb);
        uint32_t id = sc__intern_put(&d->names, buf, strlen(buf));
        if (id == SC__NONE) return false;
        double div[2] = {ranks[0] ? (double)ranks[0] : 1, ranks[1] ? (double)ranks[1] : 1};
        sc_diff_row r = row_of(SC_DIFF_STEP, sc__intern_str(&d->names, id), &a, div);
        r.a_count = (double)ranks[0];
        r.b_count = (double)ranks[1];
        r.change = change_of(r.a_count, r.b_count);
        rows[(*n)++] = r;
    }
    return true;
}

static sc_status finish(builder *b, sc_error *err) {
    sc_diff *d = b->d;
    size_t steps = b->steps[0].len > b->steps[1].len ? b->steps[0].len : b->steps[1].len;
    d->rows = sc__alloc_array(b->sums.len + steps + 1, sizeof *d->rows);
    if (!d->rows) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    double div[2] = {(double)(d->side[0].rank_steps ? d->side[0].rank_steps : 1),
                     (double)(d->side[1].rank_steps ? d->side[1].rank_steps : 1)};
    size_t n = 0;
    if (!step_rows(b, d->rows, &n)) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    size_t nsteps = n;
    for (uint32_t id = 0; id < b->sums.len; id++) {
        const char *k = sc__intern_str(&d->names, id);
        const agg *a = &SC__VEC_AT(&b->sums, agg, id);
        if (!a->n[0] && !a->n[1]) continue; /* a step name, interned here too */
        d->rows[n++] = row_of((sc_diff_section)(k[0] - 'a'), k + 1, a, div);
    }
    qsort(d->rows + nsteps, n - nsteps, sizeof *d->rows, cmp_row);
    d->nrows = n;
    return SC_OK;
}

sc_status sc_diff_run(const sc_traceset *a, const sc_traceset *b, sc_diff **out, sc_error *err) {
    sc__error_clear(err);
    if (!out) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no place for the diff");
    *out = NULL;
    if (!a || !b) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "diff wants two trace sets");
    sc_diff *d = calloc(1, sizeof *d);
    if (!d || !sc__intern_init(&d->names)) {
        free(d);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    builder bl = {.d = d};
    sc__vec_init(&bl.sums, sizeof(agg));
    sc__vec_init(&bl.steps[0], sizeof(agg));
    sc__vec_init(&bl.steps[1], sizeof(agg));
    sc_status st = add_side(&bl, 0, a, err);
    if (st == SC_OK) st = add_side(&bl, 1, b, err);
    if (st == SC_OK) st = finish(&bl, err);
    sc__vec_free(&bl.sums);
    for (int s = 0; s < 2; s++) {
        sc__vec_free(&bl.steps[s]);
        free(bl.step_name[s]);
    }
    if (st != SC_OK) {
        sc_diff_free(d);
        return st;
    }
    *out = d;
    return SC_OK;
}

void sc_diff_free(sc_diff *d) {
    if (!d) return;
    sc__intern_free(&d->names);
    for (int s = 0; s < 2; s++) {
        free(d->label[s]);
        free(d->gpu[s]);
    }
    free(d->rows);
    free(d);
}

sc_diff_side sc_diff_get_side(const sc_diff *d, int which) {
    sc_diff_side none = {.label = "", .gpu = ""};
    return d && (which == 0 || which == 1) ? d->side[which] : none;
}

size_t sc_diff_row_count(const sc_diff *d) { return d ? d->nrows : 0; }

sc_status sc_diff_row_at(const sc_diff *d, size_t i, sc_diff_row *out, sc_error *err) {
    if (!d || !out || i >= d->nrows)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no diff row %zu (there are %zu)", i, d ? d->nrows : 0);
    *out = d->rows[i];
    return SC_OK;
}
