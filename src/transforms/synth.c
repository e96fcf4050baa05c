/*
 * synth.c - `stepcast synth`: realistic Kineto traces for N ranks, modelled on
 * one real trace (the template).
 *
 * The template is read with our own reader. Its ProfilerStep on the main CPU
 * thread is cut into segments of top-level operators: a prologue, a repeated
 * body (the transformer layer, found as the longest periodic run of top-level
 * operator names: Megatron's 40 layers of 49 operators) and an epilogue. A
 * synthetic iteration is prologue + L bodies + epilogue; body l copies
 * template layer l mod K, so every layer keeps its own real durations.
 *
 * Time: each segment copy is stretched by a per-rank, per-copy factor (a
 * monotone map, so CPU nesting stays valid). GPU work is re-timed, not
 * copied: an op starts at max(its launch + launch latency, its stream free,
 * the cross-stream wait in force) and lasts its template duration, jittered;
 * the cross-stream wait follows the inference rule the graph builder uses
 * (cudaEventRecord marks the last op launched on the thread, a following
 * cudaStreamWaitEvent holds the next launched op until that one ends). NCCL
 * kernels are resolved across ranks: every rank runs its own timeline up to
 * the collective (lock-step over all ranks), the collective ends at the
 * latest arrival plus a transfer time (plus a 0-2 us per-rank skew, as real
 * NCCL does) and each rank's kernel lasts from its own arrival to that end.
 * All ranks form one communicator, so collectives match by order. An
 * iteration starts once the previous one's CPU and GPU work is done.
 *
 * Limits: only the main thread's events inside the step are kept (other
 * threads, the profiler span and instants are dropped); CPU sync calls keep
 * their (jittered) template duration instead of waiting for the GPU.
 *
 * Randomness is a counter-based hash of (seed, rank, copy, op), so the timing
 * pass and the writing pass see the same numbers and output is
 * byte-identical for a seed.
 */
#include "../trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <zlib.h>

#define SYNTH_MAX_STREAMS 32

enum { ACT_LAUNCH, ACT_RECORD, ACT_WAIT };

/* A runtime action on the main thread, in launch order. */
typedef struct act {
    uint32_t cpu;    /* index into tmpl.cpu (the launching/recording call) */
    uint32_t gpu;    /* template event index of the launched op (ACT_LAUNCH) */
    int64_t latency; /* launch to earliest start, ns */
    uint8_t kind, stream;
    bool nccl;
} act;

typedef struct seg {
    uint32_t c0, c1; /* range in tmpl.cpu */
    uint32_t a0, a1; /* range in tmpl.acts */
    int64_t t0, span;
} seg;

typedef struct tmpl {
    sc_trace *t;
    const sc__event *ev;
    uint32_t *cpu; /* template events on the main thread inside the step, by time */
    size_t ncpu;
    act *acts;
    size_t nacts;
    seg *segs; /* [0] prologue, [1..nbody] bodies, [nbody+1] epilogue */
    uint32_t nbody;
    uint32_t step_ev; /* SC__NONE when the template has no ProfilerStep */
    int64_t step_ts, step_dur, step_no;
    uint32_t cpu_track;
    uint32_t stream_track[SYNTH_MAX_STREAMS];
    uint32_t nstreams;
    int64_t corr_span, ext_span;
} tmpl;

/* ------------------------------------------------------------ randomness */

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A deterministic value in [-amp, amp] (parts per million) for a key. */
static int64_t noise_ppm(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, int64_t amp) {
    uint64_t h = mix(mix(mix(seed ^ 0x5c0fe1d) ^ a) ^ (b * 0x100000001b3ULL)) ^ c;
    h = mix(h);
    return (int64_t)(h % (uint64_t)(2 * amp + 1)) - amp;
}

static int64_t scale(int64_t x, int64_t ppm) { return x / 1000000 * ppm + x % 1000000 * ppm / 1000000; }

/* ------------------------------------------------------------ the template */

static bool is_step(const sc_trace *t, const sc__event *e) {
    return e->ph == 'X' && sc__starts_with(sc__trace_str(t, e->name), "ProfilerStep#");
}

static int cmp_by_time(const void *a, const void *b, void *ctx) {
    const sc__event *ev = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (ev[x].ts != ev[y].ts) return ev[x].ts < ev[y].ts ? -1 : 1;
    if (ev[x].dur != ev[y].dur) return ev[x].dur > ev[y].dur ? -1 : 1; /* parents first */
    return x < y ? -1 : x > y;
}

typedef struct corr_ent {
    int64_t corr;
    uint32_t ev;
} corr_ent;

static int cmp_corr(const void *a, const void *b) {
    const corr_ent *x = a, *y = b;
    if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static uint32_t find_gpu(const corr_ent *m, size_t n, int64_t corr) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m[mid].corr < corr) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && m[lo].corr == corr ? m[lo].ev : SC__NONE;
}

static uint32_t stream_slot(tmpl *m, uint32_t track) {
    for (uint32_t i = 0; i < m->nstreams; i++)
        if (m->stream_track[i] == track) return i;
    if (m->nstreams == SYNTH_MAX_STREAMS) return SC__NONE;
    m->stream_track[m->nstreams] = track;
    return m->nstreams++;
}

/* The longest run of top-level names that repeats with a period: returns the
 * number of repetitions (0 when none) and the start and period. */
static uint32_t find_period(const uint32_t *names, size_t n, size_t *start, size_t *period) {
    size_t best = 0;
    uint32_t best_reps = 0;
    for (size_t p = 1; p <= n / 2; p++) {
        size_t i = 0;
        while (i + p < n) {
            if (names[i] != names[i + p]) {
                i++;
                continue;
            }
            size_t a = i;
            while (i + p < n && names[i] == names[i + p]) i++;
            size_t reps = (i - a + p) / p;
            if (reps >= 2 && reps * p > best) {
                best = reps * p;
                best_reps = (uint32_t)reps;
                *start = a;
                *period = p;
            }
        }
    }
    return best_reps;
}

static void tmpl_free(tmpl *m) {
    sc_trace_free(m->t);
    free(m->cpu);
    free(m->acts);
    free(m->segs);
    memset(m, 0, sizeof *m);
}

static bool main_window(tmpl *m) {
    const sc_trace *t = m->t;
    size_t n = t->events.len;
    m->step_ev = SC__NONE;
    for (size_t i = 0; i < n; i++)
        if (m->ev[i].kind == SC_K_USER_ANNOTATION && is_step(t, &m->ev[i])) {
            m->step_ev = (uint32_t)i;
            break;
        }
    if (m->step_ev != SC__NONE) {
        const sc__event *s = &m->ev[m->step_ev];
        m->cpu_track = s->track;
        m->step_ts = s->ts;
        m->step_dur = s->dur;
        const char *nm = sc__trace_str(t, s->name) + strlen("ProfilerStep#");
        m->step_no = 0;
        while (*nm >= '0' && *nm <= '9' && m->step_no < 100000000) m->step_no = m->step_no * 10 + (*nm++ - '0');
        return true;
    }
    /* No step: the busiest CPU track, over its whole span. */
    size_t ntracks = t->tracks.len;
    uint32_t *count = calloc(ntracks ? ntracks : 1, sizeof *count);
    if (!count) return false;
    for (size_t i = 0; i < n; i++)
        if (m->ev[i].ph == 'X' && !(m->ev[i].flags & SC_EF_GPU)) count[m->ev[i].track]++;
    uint32_t best = 0;
    for (uint32_t k = 1; k < ntracks; k++)
        if (count[k] > count[best]) best = k;
    free(count);
    m->cpu_track = best;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++)
        if (m->ev[i].ph == 'X' && m->ev[i].track == best) {
            if (m->ev[i].ts < lo) lo = m->ev[i].ts;
            if (m->ev[i].ts + m->ev[i].dur > hi) hi = m->ev[i].ts + m->ev[i].dur;
        }
    m->step_ts = lo;
    m->step_dur = hi > lo ? hi - lo : 0;
    return true;
}

/* tmpl_build reads the template trace and takes its step apart, as the
 * top of this file says; what it has allocated stays in the tmpl on
 * failure too, for tmpl_free. Its steps follow it, in the order it runs
 * them. */
static size_t gather_events(tmpl *m, corr_ent *gm);
static sc_status segment_step(tmpl *m, const corr_ent *gm, size_t ngm, const char *path,
                              sc_error *err);

static bool is_named(const sc_trace *t, const sc__event *e, const char *a, const char *b) {
    const char *s = sc__trace_str(t, e->name);
    return strcmp(s, a) == 0 || strcmp(s, b) == 0;
}

static sc_status tmpl_build(tmpl *m, const char *path, const sc_load_options *load, sc_error *err) {
    sc_status st = sc_trace_load(path, load, &m->t, err);
    if (st != SC_OK) return st;
    const sc_trace *t = m->t;
    m->ev = sc__trace_events(t);
    size_t n = t->events.len;
    if (!main_window(m)) return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    m->cpu = sc__alloc_array(n ? n : 1, sizeof *m->cpu);
    corr_ent *gm = sc__alloc_array(n ? n : 1, sizeof *gm);
    if (!m->cpu || !gm) {
        free(gm);
        return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    }
    size_t ngm = gather_events(m, gm);
    st = m->ncpu == 0 ? sc__fail(err, SC_E_FORMAT, path, SC_NO_OFFSET,
                                 "template has no CPU events to model a step on")
                      : segment_step(m, gm, ngm, path, err);
    free(gm);
    return st;
}

static sc_status no_memory(const char *path, sc_error *err) {
    return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
}

/* Sorts out the template's events for building it: the main thread's CPU
 * events inside the step window, by time (m->cpu), and the GPU ops by
 * correlation id (gm; returns how many). Notes the spans of correlation
 * and external ids on the way, which copies of the step are offset by. */
static size_t gather_events(tmpl *m, corr_ent *gm) {
    const int64_t w0 = m->step_ts, w1 = m->step_ts + m->step_dur;
    size_t ngm = 0;
    m->corr_span = m->ext_span = 1;
    for (size_t i = 0; i < m->t->events.len; i++) {
        const sc__event *e = &m->ev[i];
        if (e->correlation >= m->corr_span) m->corr_span = e->correlation + 1;
        if (e->external_id >= m->ext_span) m->ext_span = e->external_id + 1;
        if (e->ph != 'X') continue;
        if (e->flags & SC_EF_GPU) {
            if (e->correlation >= 0) gm[ngm++] = (corr_ent){e->correlation, (uint32_t)i};
        } else if (e->track == m->cpu_track && (uint32_t)i != m->step_ev && e->ts >= w0 &&
                   e->ts + e->dur <= w1) {
            m->cpu[m->ncpu++] = (uint32_t)i;
        }
    }
    qsort_r(m->cpu, m->ncpu, sizeof *m->cpu, cmp_by_time, (void *)m->ev);
    qsort(gm, ngm, sizeof *gm, cmp_corr);
    return ngm;
}

/* The top-level operators, those that start once the one before has
 * ended: their indices in m->cpu (top) and their names; returns how many. */
static size_t top_level_ops(const tmpl *m, uint32_t *top, uint32_t *names) {
    size_t ntop = 0;
    int64_t end = INT64_MIN;
    for (size_t c = 0; c < m->ncpu; c++) {
        const sc__event *e = &m->ev[m->cpu[c]];
        if (e->ts >= end) {
            top[ntop] = (uint32_t)c;
            names[ntop++] = e->name;
            end = e->ts + e->dur;
        }
    }
    return ntop;
}

/* Appends the runtime action that CPU event c (an index in m->cpu) is, if
 * any: the launch of the GPU op with its correlation id, an event record
 * or a stream wait. A launch onto a stream beyond the ones kept is
 * dropped. */
static void add_action(tmpl *m, const corr_ent *gm, size_t ngm, uint32_t c) {
    const sc__event *e = &m->ev[m->cpu[c]];
    act a = {.cpu = c, .gpu = SC__NONE};
    if (e->correlation >= 0 && (e->kind == SC_K_RUNTIME || e->kind == SC_K_DRIVER)) {
        uint32_t g = find_gpu(gm, ngm, e->correlation);
        if (g != SC__NONE) {
            uint32_t slot = stream_slot(m, m->ev[g].track);
            if (slot == SC__NONE) return;
            a.kind = ACT_LAUNCH;
            a.gpu = g;
            a.stream = (uint8_t)slot;
            a.nccl = (m->ev[g].flags & SC_EF_NCCL) != 0;
            int64_t lat = m->ev[g].ts - e->ts;
            a.latency = lat < 1000 ? 1000 : lat > 10000 ? 10000 : lat;
            m->acts[m->nacts++] = a;
            return;
        }
    }
    if (is_named(m->t, e, "cudaEventRecord", "hipEventRecord")) {
        a.kind = ACT_RECORD;
        m->acts[m->nacts++] = a;
    } else if (is_named(m->t, e, "cudaStreamWaitEvent", "hipStreamWaitEvent")) {
        a.kind = ACT_WAIT;
        m->acts[m->nacts++] = a;
    }
}

/* The repeated body: the longest periodic run of top-level names, as its
 * start, period and repetitions; the whole step is one "layer" when
 * nothing repeats. */
static uint32_t find_body(const uint32_t *names, size_t ntop, size_t *start, size_t *period) {
    uint32_t reps = find_period(names, ntop, start, period);
    if (reps > 0) return reps;
    *start = 0;
    *period = ntop;
    return 1;
}

/* Cuts the step window into m->nbody + 2 segments of top-level operators
 * (their indices in m->cpu: top): the prologue, the bodies from `start`
 * on, `period` operators each, and the epilogue. Segment k covers
 * top-level ops [bound[k], bound[k+1]) and spans until the next one
 * starts. */
static void cut_segments(tmpl *m, const uint32_t *top, size_t ntop, size_t start, size_t period) {
    const int64_t w0 = m->step_ts, w1 = m->step_ts + m->step_dur;
    const uint32_t reps = m->nbody;
    for (uint32_t k = 0; k < reps + 2; k++) {
        size_t b0 = k == 0 ? 0 : start + (k - 1) * period;
        size_t b1 = k == reps + 1 ? ntop : start + k * period;
        seg *s = &m->segs[k];
        s->c0 = b0 < ntop ? top[b0] : (uint32_t)m->ncpu;
        s->c1 = b1 < ntop ? top[b1] : (uint32_t)m->ncpu;
        s->t0 = k == 0 ? w0 : b0 < ntop ? m->ev[m->cpu[s->c0]].ts : w1;
        int64_t t1 = b1 < ntop ? m->ev[m->cpu[s->c1]].ts : w1;
        s->span = t1 > s->t0 ? t1 - s->t0 : 0;
    }
}

/* Gives each segment the runtime actions its CPU events issue (both are
 * in CPU order). */
static void assign_actions(tmpl *m) {
    size_t a = 0;
    for (uint32_t k = 0; k < m->nbody + 2; k++) {
        seg *s = &m->segs[k];
        while (a < m->nacts && m->acts[a].cpu < s->c0) a++;
        s->a0 = (uint32_t)a;
        while (a < m->nacts && m->acts[a].cpu < s->c1) a++;
        s->a1 = (uint32_t)a;
    }
}

/* From the sorted events on: the runtime actions, the repeated body and
 * the segments with their actions. */
static sc_status segment_step(tmpl *m, const corr_ent *gm, size_t ngm, const char *path,
                              sc_error *err) {
    uint32_t *top = sc__alloc_array(m->ncpu, sizeof *top);
    uint32_t *names = sc__alloc_array(m->ncpu, sizeof *names);
    m->acts = sc__alloc_array(m->ncpu, sizeof *m->acts);
    if (!top || !names || !m->acts) {
        free(top);
        free(names);
        return no_memory(path, err);
    }
    size_t ntop = top_level_ops(m, top, names);
    for (size_t c = 0; c < m->ncpu; c++) add_action(m, gm, ngm, (uint32_t)c);
    size_t start = 0, period = 0;
    m->nbody = find_body(names, ntop, &start, &period);
    free(names);
    m->segs = calloc(m->nbody + 2, sizeof *m->segs);
    if (!m->segs) {
        free(top);
        return no_memory(path, err);
    }
    cut_segments(m, top, ntop, start, period);
    free(top);
    assign_actions(m);
    return SC_OK;
}

/* ------------------------------------------------------------ timelines */

typedef struct synth {
    const tmpl *m;
    const sc_synth_options *o;
    uint32_t ranks, iters, layers, copies; /* copies = layers + 2 per iteration */
    int64_t *coll_end; /* per collective (iteration-major): latest arrival + transfer */
    uint64_t ncoll_total;
} synth;

/* One rank's GPU timeline, walked copy by copy in launch order. */
typedef struct walker {
    uint32_t rank;
    uint32_t it, j; /* iteration and copy within it */
    uint32_t a;     /* next action (absolute index into tmpl.acts) */
    bool in_copy, done;
    int64_t iter_start, base, ppm; /* the current copy's time map */
    int64_t cpu_end;               /* end of the current iteration's CPU work */
    int64_t sfree[SYNTH_MAX_STREAMS];
    int64_t last_end, record_end, wait, gpu_end;
    uint64_t coll;     /* collectives passed */
    int64_t arrival;   /* while paused at a collective */
    bool paused;
    int64_t *op_start, *op_dur; /* per action of the current copy (writer) */
} walker;

static const seg *copy_seg(const synth *s, uint32_t j) {
    const tmpl *m = s->m;
    if (j == 0) return &m->segs[0];
    if (j == s->copies - 1) return &m->segs[m->nbody + 1];
    return &m->segs[1 + (j - 1) % m->nbody];
}

static uint64_t copy_id(const synth *s, const walker *w) { return (uint64_t)w->it * s->copies + w->j; }

static int64_t rank_ppm(const synth *s, uint32_t rank) {
    return 1000000 + noise_ppm(s->o->seed, rank, 0xC0FFEE, 1, 30000); /* +-3% CPU speed */
}

static int64_t map_time(const walker *w, const seg *g, int64_t t) {
    return w->base + scale(t - g->t0, w->ppm);
}

static void copy_begin(const synth *s, walker *w) {
    const seg *g = copy_seg(s, w->j);
    if (w->j == 0) w->base = w->iter_start;
    w->ppm = scale(rank_ppm(s, w->rank), 1000000 + noise_ppm(s->o->seed, w->rank, copy_id(s, w), 2, 10000));
    w->a = g->a0;
    w->in_copy = true;
}

static void copy_end(const synth *s, walker *w) {
    const seg *g = copy_seg(s, w->j);
    w->base += scale(g->span, w->ppm);
    w->in_copy = false;
    if (++w->j < s->copies) return;
    /* Next iteration once CPU and GPU work are both done. */
    int64_t gap = 20000 + noise_ppm(s->o->seed, w->rank, w->it, 3, 10000) / 1000;
    w->iter_start = (w->base > w->gpu_end ? w->base : w->gpu_end) + gap;
    w->cpu_end = w->base;
    w->j = 0;
    if (++w->it == s->iters) w->done = true;
}

static int64_t gpu_dur(const synth *s, const walker *w, uint32_t a, int64_t dur) {
    int64_t ppm = 1000000 + noise_ppm(s->o->seed, w->rank, copy_id(s, w), 0x6000u + a, 20000);
    int64_t d = scale(dur, ppm);
    return d < 1000 ? (dur < 1000 ? dur : 1000) : d;
}

/* The transfer time of collective c: its template duration, jittered, the
 * same for every rank. */
static int64_t coll_transfer(const synth *s, uint64_t c, int64_t dur) {
    return scale(dur, 1000000 + noise_ppm(s->o->seed, c, 0xACC, 4, 20000));
}

static int64_t coll_skew(const synth *s, uint32_t rank, uint64_t c) {
    return 1000 + noise_ppm(s->o->seed, rank, c, 5, 1000000) / 1000; /* 0-2 us */
}

/* Finishes an op at index a of the current copy. */
static void op_done(walker *w, const seg *g, uint32_t a, uint8_t stream, int64_t start, int64_t end) {
    w->sfree[stream] = end;
    w->last_end = end;
    if (end > w->gpu_end) w->gpu_end = end;
    if (w->op_start) {
        w->op_start[a - g->a0] = start;
        w->op_dur[a - g->a0] = end - start;
    }
}

/* Walks actions of the current copy. With ends == NULL it stops at each
 * collective (returns true with w->paused set); with the table it runs on. */
static bool walk_acts(const synth *s, walker *w, const int64_t *ends) {
    const tmpl *m = s->m;
    const seg *g = copy_seg(s, w->j);
    for (; w->a < g->a1; w->a++) {
        const act *x = &m->acts[w->a];
        if (x->kind == ACT_RECORD) {
            w->record_end = w->last_end;
            continue;
        }
        if (x->kind == ACT_WAIT) {
            if (w->record_end > w->wait) w->wait = w->record_end;
            continue;
        }
        const sc__event *ge = &m->ev[x->gpu];
        int64_t launch = map_time(w, g, m->ev[m->cpu[x->cpu]].ts);
        int64_t start = launch + x->latency;
        if (w->sfree[x->stream] > start) start = w->sfree[x->stream];
        if (w->wait > start) start = w->wait;
        w->wait = 0;
        if (x->nccl) {
            int64_t end;
            if (ends) {
                end = ends[w->coll] + coll_skew(s, w->rank, w->coll);
            } else {
                w->arrival = start;
                w->paused = true;
                return true;
            }
            if (end < start) end = start;
            w->coll++;
            op_done(w, g, w->a, x->stream, start, end);
            continue;
        }
        op_done(w, g, w->a, x->stream, start, start + gpu_dur(s, w, w->a, ge->dur));
    }
    return false;
}

/* The lock-step pass: every rank's timeline up to each collective, whose end
 * becomes the latest arrival plus the transfer time. */
static sc_status resolve_collectives(synth *s, int64_t t0, sc_error *err) {
    const tmpl *m = s->m;
    /* Count collectives per iteration precisely (bodies repeat unevenly). */
    uint64_t per_iter = 0;
    for (uint32_t j = 0; j < s->copies; j++) {
        const seg *g = copy_seg(s, j);
        for (uint32_t a = g->a0; a < g->a1; a++) per_iter += m->acts[a].kind == ACT_LAUNCH && m->acts[a].nccl;
    }
    s->ncoll_total = per_iter * s->iters;
    s->coll_end = sc__alloc_array(s->ncoll_total ? s->ncoll_total : 1, sizeof *s->coll_end);
    walker *w = calloc(s->ranks, sizeof *w);
    if (!s->coll_end || !w) {
        free(w);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    for (uint32_t r = 0; r < s->ranks; r++) {
        w[r].rank = r;
        w[r].iter_start = t0;
    }
    for (uint64_t c = 0;; c++) {
        int64_t latest = INT64_MIN;
        uint32_t paused = 0;
        int64_t tdur = 0;
        for (uint32_t r = 0; r < s->ranks; r++) {
            walker *x = &w[r];
            while (!x->done) {
                if (!x->in_copy) copy_begin(s, x);
                if (walk_acts(s, x, NULL)) break;
                copy_end(s, x);
            }
            if (!x->paused) continue;
            paused++;
            if (x->arrival > latest) latest = x->arrival;
            tdur = m->ev[m->acts[x->a].gpu].dur;
        }
        if (paused == 0) break;
        if (paused != s->ranks || c >= s->ncoll_total) {
            free(w);
            return sc__fail(err, SC_E_INTERNAL, NULL, SC_NO_OFFSET,
                            "synth: ranks disagree on the collective count");
        }
        int64_t end = latest + coll_transfer(s, c, tdur);
        s->coll_end[c] = end;
        for (uint32_t r = 0; r < s->ranks; r++) {
            walker *x = &w[r];
            const seg *g = copy_seg(s, x->j);
            const act *a = &m->acts[x->a];
            int64_t e = end + coll_skew(s, r, c);
            if (e < x->arrival) e = x->arrival;
            x->coll++;
            op_done(x, g, x->a, a->stream, x->arrival, e);
            x->paused = false;
            x->a++;
        }
    }
    free(w);
    return SC_OK;
}

/* ------------------------------------------------------------ writing */

typedef struct sink {
    FILE *fp;
    z_stream zs;
    bool gzip, zinit, failed;
    char *buf;
    size_t len, cap;
    unsigned char *zout;
} sink;

#define SINK_CAP (1u << 20)

static void sink_flush(sink *k, bool finish) {
    if (k->failed) return;
    if (!k->gzip) {
        if (k->len && fwrite(k->buf, 1, k->len, k->fp) != k->len) k->failed = true;
        k->len = 0;
        return;
    }
    k->zs.next_in = (unsigned char *)k->buf;
    k->zs.avail_in = (uInt)k->len;
    int zr;
    do {
        k->zs.next_out = k->zout;
        k->zs.avail_out = SINK_CAP;
        zr = deflate(&k->zs, finish ? Z_FINISH : Z_NO_FLUSH);
        size_t have = SINK_CAP - k->zs.avail_out;
        if (zr == Z_STREAM_ERROR || (have && fwrite(k->zout, 1, have, k->fp) != have)) {
            k->failed = true;
            return;
        }
    } while (k->zs.avail_out == 0 || (finish && zr != Z_STREAM_END));
    k->len = 0;
}

static inline void put(sink *k, const char *s, size_t n) {
    if (k->len + n > k->cap) sink_flush(k, false);
    if (n > k->cap) return; /* never: tokens are small, names capped below */
    memcpy(k->buf + k->len, s, n);
    k->len += n;
}
#define PUT(k, lit) put((k), (lit), sizeof(lit) - 1)

static void put_u64(sink *k, uint64_t v) {
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(k, tmp + i, sizeof tmp - i);
}

static void put_i64(sink *k, int64_t v) {
    if (v < 0) {
        PUT(k, "-");
        put_u64(k, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(k, (uint64_t)v);
    }
}

/* ns as microseconds with three decimals. */
static void put_time(sink *k, int64_t ns) {
    if (ns < 0) {
        PUT(k, "-");
        ns = -ns;
    }
    put_u64(k, (uint64_t)ns / 1000);
    char f[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10)};
    put(k, f, 4);
}

static void put_jstr(sink *k, const char *s, size_t n) {
    PUT(k, "\"");
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        put(k, s + run, i - run);
        run = i + 1;
        if (c == '"') PUT(k, "\\\"");
        else if (c == '\\') PUT(k, "\\\\");
        else {
            char e[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]};
            put(k, e, 6);
        }
        if (k->len + 64 > k->cap) sink_flush(k, false);
    }
    /* Long names go through in slices small enough for the buffer. */
    while (n - run > SINK_CAP / 2) {
        put(k, s + run, SINK_CAP / 2);
        run += SINK_CAP / 2;
    }
    put(k, s + run, n - run);
    PUT(k, "\"");
}

static void put_str_id(sink *k, const sc_trace *t, uint32_t id) {
    put_jstr(k, sc__trace_str(t, id), sc__intern_len(&t->strings, id));
}

static void put_track(sink *k, const sc_trace *t, uint32_t track) {
    const sc__track *tr = sc__trace_track_at(t, track);
    PUT(k, "\"pid\":");
    if (tr->pid_str != SC__NONE) put_str_id(k, t, tr->pid_str);
    else put_i64(k, tr->pid);
    PUT(k, ",\"tid\":");
    if (tr->tid_str != SC__NONE) put_str_id(k, t, tr->tid_str);
    else put_i64(k, tr->tid);
}

static void put_dim3(sink *k, const int32_t d[3]) {
    PUT(k, "[");
    for (int i = 0; i < 3; i++) {
        if (i) PUT(k, ",");
        put_i64(k, d[i]);
    }
    PUT(k, "]");
}

/* The args the reader keeps, with ids moved into this copy's range. */
static void put_args(sink *k, const tmpl *m, const sc__event *e, int64_t corr_off, int64_t ext_off) {
    const sc_trace *t = m->t;
    bool first = true;
#define SEP() (first ? (void)(first = false) : PUT(k, ","))
    PUT(k, ",\"args\":{");
    if (e->external_id >= 0) {
        SEP();
        PUT(k, "\"External id\":");
        put_i64(k, e->external_id + ext_off);
    }
    if (e->device >= 0) {
        SEP();
        PUT(k, "\"device\":");
        put_i64(k, e->device);
    }
    if (e->stream >= 0) {
        SEP();
        PUT(k, "\"stream\":");
        put_i64(k, e->stream);
    }
    if (e->correlation >= 0) {
        SEP();
        PUT(k, "\"correlation\":");
        put_i64(k, e->correlation + corr_off);
    }
    if (e->cbid) {
        SEP();
        PUT(k, "\"cbid\":");
        put_i64(k, e->cbid);
    }
    const sc__event_ext *x = sc__trace_ext(t, e);
    if (x) {
        if (x->grid[0] || x->grid[1] || x->grid[2]) {
            SEP();
            PUT(k, "\"grid\":");
            put_dim3(k, x->grid);
            PUT(k, ",\"block\":");
            put_dim3(k, x->block);
        }
        if (x->bytes >= 0) {
            SEP();
            PUT(k, "\"bytes\":");
            put_i64(k, x->bytes);
        }
        if (x->seq_number >= 0) {
            SEP();
            PUT(k, "\"Sequence number\":");
            put_i64(k, x->seq_number);
        }
        if (x->fwd_tid >= 0) {
            SEP();
            PUT(k, "\"Fwd thread id\":");
            put_i64(k, x->fwd_tid);
        }
    }
    const sc__event_shapes *sh = sc__trace_shapes(t, e);
    if (sh) {
        if (sh->dims != SC__NONE) {
            SEP();
            PUT(k, "\"Input Dims\":");
            put(k, sc__trace_str(t, sh->dims), sc__intern_len(&t->strings, sh->dims));
        }
        if (sh->types != SC__NONE) {
            SEP();
            PUT(k, "\"Input type\":");
            put(k, sc__trace_str(t, sh->types), sc__intern_len(&t->strings, sh->types));
        }
    }
    PUT(k, "}");
#undef SEP
}

static void put_event_head(sink *k, const sc_trace *t, const sc__event *e, uint32_t track) {
    PUT(k, ",\n{\"ph\":\"X\",\"cat\":");
    put_str_id(k, t, e->cat);
    PUT(k, ",\"name\":");
    put_str_id(k, t, e->name);
    PUT(k, ",");
    put_track(k, t, track);
}

static void put_flow(sink *k, const sc_trace *t, char ph, int64_t id, uint32_t track, int64_t ts) {
    PUT(k, ",\n{\"ph\":\"");
    put(k, &ph, 1);
    PUT(k, "\",\"id\":");
    put_i64(k, id);
    PUT(k, ",");
    put_track(k, t, track);
    PUT(k, ",\"ts\":");
    put_time(k, ts);
    PUT(k, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
    if (ph == 'f') PUT(k, ",\"bp\":\"e\"");
    PUT(k, "}");
}

/* One copy of a segment: its CPU events (and launch flows), then its GPU ops. */
static void write_copy(sink *k, const synth *s, const walker *w, const seg *g) {
    const tmpl *m = s->m;
    const sc_trace *t = m->t;
    uint64_t cid = copy_id(s, w);
    int64_t corr_off = (int64_t)cid * m->corr_span, ext_off = (int64_t)cid * m->ext_span;
    uint32_t a = g->a0;
    for (uint32_t c = g->c0; c < g->c1; c++) {
        const sc__event *e = &m->ev[m->cpu[c]];
        int64_t ts = map_time(w, g, e->ts), te = map_time(w, g, e->ts + e->dur);
        put_event_head(k, t, e, m->cpu_track);
        PUT(k, ",\"ts\":");
        put_time(k, ts);
        PUT(k, ",\"dur\":");
        put_time(k, te - ts);
        put_args(k, m, e, corr_off, ext_off);
        PUT(k, "}");
        while (a < g->a1 && m->acts[a].cpu < c) a++;
        if (a < g->a1 && m->acts[a].cpu == c && m->acts[a].kind == ACT_LAUNCH)
            put_flow(k, t, 's', e->correlation + corr_off, m->cpu_track, ts);
    }
    for (a = g->a0; a < g->a1; a++) {
        const act *x = &m->acts[a];
        if (x->kind != ACT_LAUNCH) continue;
        const sc__event *e = &m->ev[x->gpu];
        int64_t ts = w->op_start[a - g->a0];
        put_event_head(k, t, e, e->track);
        PUT(k, ",\"ts\":");
        put_time(k, ts);
        PUT(k, ",\"dur\":");
        put_time(k, w->op_dur[a - g->a0]);
        put_args(k, m, e, corr_off, ext_off);
        PUT(k, "}");
        put_flow(k, t, 'f', e->correlation + corr_off, e->track, ts);
    }
}

static void write_header(sink *k, const synth *s, uint32_t rank) {
    const sc_trace *t = s->m->t;
    PUT(k, "{\n\"schemaVersion\":1,\n\"deviceProperties\":[");
    const sc__device_prop *d = t->devices.data;
    for (size_t i = 0; i < t->devices.len; i++) {
        if (i) PUT(k, ",");
        PUT(k, "\n{\"id\":");
        put_i64(k, d[i].id);
        PUT(k, ",\"name\":");
        put_str_id(k, t, d[i].name);
        PUT(k, ",\"numSms\":");
        put_i64(k, d[i].num_sms);
        PUT(k, "}");
    }
    PUT(k, "],\n\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":");
    put_u64(k, rank);
    PUT(k, ",\"world_size\":");
    put_u64(k, s->ranks);
    PUT(k, "},\n\"traceEvents\":[\n");
    /* Metadata first (process and thread names), as Kineto writes them. */
    const sc__event *ev = s->m->ev;
    bool first = true;
    for (size_t i = 0; i < t->events.len; i++) {
        if (ev[i].ph != 'M') continue;
        if (!first) PUT(k, ",\n");
        first = false;
        PUT(k, "{\"name\":");
        put_str_id(k, t, ev[i].name);
        PUT(k, ",\"ph\":\"M\",\"ts\":");
        put_time(k, ev[i].ts);
        PUT(k, ",");
        put_track(k, t, ev[i].track);
        PUT(k, ",\"args\":{");
        const sc__event_ext *x = sc__trace_ext(t, &ev[i]);
        if (x && x->label != SC__NONE) {
            PUT(k, "\"name\":");
            put_str_id(k, t, x->label);
        }
        PUT(k, "}}");
    }
    if (first) /* keep the comma logic of write_copy valid */
        PUT(k, "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":0,\"args\":{\"name\":\"synth\"}}");
}

static sc_status write_rank(const synth *s, uint32_t rank, int64_t t0, const char *dir, sc_error *err) {
    const tmpl *m = s->m;
    char path[4096];
    int pn = snprintf(path, sizeof path, "%s/rank-%05u.json%s", dir, rank, s->o->gzip ? ".gz" : "");
    if (pn < 0 || (size_t)pn >= sizeof path)
        return sc__fail(err, SC_E_USAGE, dir, SC_NO_OFFSET, "output path too long");
    sc_output *out;
    sc_status st = sc_output_open(path, s->o->force ? SC_OUTPUT_FORCE : 0, &out, err);
    if (st != SC_OK) return st;
    size_t maxacts = 0;
    for (uint32_t i = 0; i < m->nbody + 2; i++)
        if (m->segs[i].a1 - m->segs[i].a0 > maxacts) maxacts = m->segs[i].a1 - m->segs[i].a0;
    sink k = {.fp = sc_output_file(out), .gzip = s->o->gzip != 0, .cap = SINK_CAP};
    walker w = {.rank = rank, .iter_start = t0};
    k.buf = malloc(SINK_CAP);
    k.zout = k.gzip ? malloc(SINK_CAP) : NULL;
    w.op_start = sc__alloc_array(maxacts + 1, sizeof *w.op_start);
    w.op_dur = sc__alloc_array(maxacts + 1, sizeof *w.op_dur);
    bool ok = k.buf && (!k.gzip || k.zout) && w.op_start && w.op_dur;
    if (ok && k.gzip) {
        int level = s->o->gzip_level > 0 && s->o->gzip_level <= 9 ? s->o->gzip_level : 1;
        ok = deflateInit2(&k.zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK;
        k.zinit = ok;
    }
    if (!ok) {
        st = sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
        goto done;
    }
    write_header(&k, s, rank);
    const sc_trace *t = m->t;
    while (!w.done && !k.failed) {
        if (w.j == 0) { /* the ProfilerStep annotation of this iteration */
            int64_t len = 0;
            walker probe = w; /* CPU extent: sum of the copies' stretched spans */
            probe.op_start = probe.op_dur = NULL;
            for (uint32_t j = 0; j < s->copies; j++) {
                probe.j = j;
                probe.ppm = scale(rank_ppm(s, rank),
                                  1000000 + noise_ppm(s->o->seed, rank, copy_id(s, &probe), 2, 10000));
                len += scale(copy_seg(s, j)->span, probe.ppm);
            }
            PUT(&k, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#");
            put_i64(&k, m->step_no + w.it);
            PUT(&k, "\",");
            put_track(&k, t, m->cpu_track);
            PUT(&k, ",\"ts\":");
            put_time(&k, w.iter_start);
            PUT(&k, ",\"dur\":");
            put_time(&k, len);
            PUT(&k, ",\"args\":{\"External id\":");
            put_i64(&k, (int64_t)w.it * s->copies * m->ext_span);
            PUT(&k, "}}");
        }
        copy_begin(s, &w);
        walk_acts(s, &w, s->coll_end);
        write_copy(&k, s, &w, copy_seg(s, w.j));
        copy_end(s, &w);
    }
    PUT(&k, "\n],\n\"traceName\":\"");
    char nm[32];
    int nn = snprintf(nm, sizeof nm, "rank-%05u", rank);
    put(&k, nm, (size_t)(nn > 0 ? nn : 0));
    PUT(&k, "\"\n}\n");
    sink_flush(&k, true);
    if (k.failed) st = sc__fail(err, SC_E_IO, path, SC_NO_OFFSET, "cannot write: %s", strerror(errno));
done:
    if (k.zinit) deflateEnd(&k.zs);
    free(k.buf);
    free(k.zout);
    free(w.op_start);
    free(w.op_dur);
    if (st != SC_OK) {
        sc_output_abort(out);
        return st;
    }
    return sc_output_commit(out, err);
}

sc_status sc_synth(const sc_synth_options *opts, const char *out_dir, sc_error *err) {
    sc__error_clear(err);
    if (!opts || !opts->template_path || !out_dir || opts->ranks == 0)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "synth needs a template trace, an output directory and ranks >= 1");
    if (opts->ranks > 1000000 || opts->iterations > 100000 || opts->layers > 10000000)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "synth: sizes out of range");
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST)
        return sc__fail(err, SC_E_IO, out_dir, SC_NO_OFFSET, "cannot create directory: %s",
                        strerror(errno));
    tmpl m;
    memset(&m, 0, sizeof m);
    sc_status st = tmpl_build(&m, opts->template_path, opts->load, err);
    if (st != SC_OK) {
        tmpl_free(&m);
        return st;
    }
    synth s = {.m = &m, .o = opts, .ranks = opts->ranks};
    s.iters = opts->iterations ? opts->iterations : 1;
    s.layers = opts->layers ? opts->layers : m.nbody;
    s.copies = s.layers + 2;
    int64_t t0 = m.step_ts;
    st = resolve_collectives(&s, t0, err);
    for (uint32_t r = 0; st == SC_OK && r < s.ranks; r++) st = write_rank(&s, r, t0, out_dir, err);
    free(s.coll_end);
    tmpl_free(&m);
    return st;
}
