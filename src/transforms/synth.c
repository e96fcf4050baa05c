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
 * Output is written as the profiler writes it (kineto_writer.c): Kineto's
 * layout and key order, the template's header and deviceProperties text,
 * `"rank": N` spelt as Kineto spells it, metadata events with their args
 * after the events, the profiler's span and instants at the end, and
 * timestamps in whole microseconds when the template's are; tools that
 * read profiler output as text (HTA's rank scan) or trip on what Kineto
 * never writes (TraceLens on empty metadata args) read it as a real trace.
 *
 * Limits: only the main thread's events inside the step are kept (other
 * threads, and the template's own span and instants, are dropped); CPU sync
 * calls keep their (jittered) template duration instead of waiting for the
 * GPU; args the reader does not keep (an op's Concrete Inputs, a kernel's
 * registers and occupancy) are not written.
 *
 * Randomness is a counter-based hash of (seed, rank, copy, op), so the timing
 * pass and the writing pass see the same numbers and output is
 * byte-identical for a seed.
 */
#include "kineto_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define SYNTH_MAX_STREAMS 32
#define SYNTH_MAX_SPAN_META 16 /* metadata events of string pids (Kineto writes one) */

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
    /* How the template was written, for writing like it (kineto_writer.h). */
    bool int_us;       /* its timestamps are whole microseconds */
    bool shapes;       /* it was recorded with shapes */
    char *devices_raw; /* its deviceProperties as written there, NULL when not found */
    size_t devices_len;
    int64_t span_ts;   /* its profiler span's start, INT64_MAX when it has none */
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
    free(m->devices_raw);
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

/* What the template's file says of how it was written: whole-microsecond
 * timestamps, shapes, its profiler span, its deviceProperties' text. */
static void note_layout(tmpl *m, const char *path) {
    const sc_trace *t = m->t;
    m->int_us = true;
    m->shapes = t->shapes.len > 0;
    m->span_ts = INT64_MAX;
    for (size_t i = 0; i < t->events.len; i++) {
        const sc__event *e = &m->ev[i];
        if ((e->ts - t->base_time_ns) % 1000 || e->dur % 1000) m->int_us = false;
        if (e->kind == SC_K_TRACE_SPAN && e->ts < m->span_ts) m->span_ts = e->ts;
    }
    sc__kw_devices_raw(path, &m->devices_raw, &m->devices_len);
}

static sc_status tmpl_build(tmpl *m, const char *path, const sc_load_options *load, sc_error *err) {
    sc_status st = sc_trace_load(path, load, &m->t, err);
    if (st != SC_OK) return st;
    const sc_trace *t = m->t;
    m->ev = sc__trace_events(t);
    size_t n = t->events.len;
    note_layout(m, path);
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

/* The SM count of device `device` of the template (0: unknown). */
static int32_t num_sms(const sc_trace *t, int64_t device) {
    const sc__device_prop *d = t->devices.data;
    for (size_t i = 0; i < t->devices.len; i++)
        if (d[i].id == device) return d[i].num_sms;
    return 0;
}

/* Is pid a GPU's in the template: a device it lists, or the pid of a
 * track with GPU ops? */
static bool gpu_pid(const tmpl *m, int64_t pid) {
    if (num_sms(m->t, pid) || (pid >= 0 && (size_t)pid < m->t->devices.len)) return true;
    for (uint32_t i = 0; i < m->nstreams; i++)
        if (sc__trace_track_at(m->t, m->stream_track[i])->pid == pid) return true;
    return false;
}

/* One copy of a segment: its CPU events (and launch flows), then its GPU ops. */
static void write_copy(sc__kw *k, const synth *s, const walker *w, const seg *g) {
    const tmpl *m = s->m;
    const sc_trace *t = m->t;
    uint64_t cid = copy_id(s, w);
    sc__kw_ids ids = {(int64_t)cid * m->corr_span, (int64_t)cid * m->ext_span};
    uint32_t a = g->a0;
    for (uint32_t c = g->c0; c < g->c1; c++) {
        const sc__event *e = &m->ev[m->cpu[c]];
        int64_t ts = map_time(w, g, e->ts), te = map_time(w, g, e->ts + e->dur);
        sc__kw_x(k, t, e, m->cpu_track, ts, te, &ids, 0);
        while (a < g->a1 && m->acts[a].cpu < c) a++;
        if (a < g->a1 && m->acts[a].cpu == c && m->acts[a].kind == ACT_LAUNCH)
            sc__kw_flow(k, t, 's', e->correlation + ids.corr_off, m->cpu_track, ts);
    }
    for (a = g->a0; a < g->a1; a++) {
        const act *x = &m->acts[a];
        if (x->kind != ACT_LAUNCH) continue;
        const sc__event *e = &m->ev[x->gpu];
        int64_t ts = w->op_start[a - g->a0];
        sc__kw_x(k, t, e, e->track, ts, ts + w->op_dur[a - g->a0], &ids, num_sms(t, sc__event_device(t, e)));
        sc__kw_flow(k, t, 'f', e->correlation + ids.corr_off, e->track, ts);
    }
}

/* The ProfilerStep annotation of the walker's iteration: over the sum of
 * its copies' stretched spans (its CPU extent). */
static void write_step(sc__kw *k, const synth *s, const walker *w) {
    const tmpl *m = s->m;
    int64_t len = 0;
    walker probe = *w;
    for (uint32_t j = 0; j < s->copies; j++) {
        probe.j = j;
        probe.ppm = scale(rank_ppm(s, w->rank), 1000000 + noise_ppm(s->o->seed, w->rank, copy_id(s, &probe), 2, 10000));
        len += scale(copy_seg(s, j)->span, probe.ppm);
    }
    int64_t ext = m->step_ev != SC__NONE && m->ev[m->step_ev].external_id >= 0 ? m->ev[m->step_ev].external_id : 1;
    sc__kw_step(k, m->t, m->cpu_track, m->step_no + w->it, w->iter_start, w->iter_start + len,
                ext + (int64_t)w->it * s->copies * m->ext_span);
}

/* What follows the events, as Kineto writes it: the template's process and
 * thread metadata with their args, the profiler's span over [start, end),
 * the metadata of string pids (the span's), its instants, the tail. */
static void write_tail(sc__kw *k, const synth *s, int64_t start, int64_t end, const char *name) {
    const tmpl *m = s->m;
    const sc_trace *t = m->t;
    const sc__event *spans[SYNTH_MAX_SPAN_META];
    size_t nspans = 0;
    for (size_t i = 0; i < t->events.len; i++) {
        if (m->ev[i].ph != 'M') continue;
        const sc__track *tr = sc__trace_track_at(t, m->ev[i].track);
        if (tr->pid_str != SC__NONE) {
            if (nspans < SYNTH_MAX_SPAN_META) spans[nspans++] = &m->ev[i];
            continue;
        }
        sc__kw_metadata(k, t, &m->ev[i], gpu_pid(m, tr->pid));
    }
    sc__kw_finish(k, t, spans, nspans, start, end, name);
}

static sc_status write_rank(const synth *s, uint32_t rank, int64_t t0, const char *dir, sc_error *err) {
    const tmpl *m = s->m;
    char path[4096];
    const char *suffix = s->o->gzip ? ".gz" : "";
    int pn = snprintf(path, sizeof path, "%s/rank-%05u.json%s", dir, rank, suffix);
    if (pn < 0 || (size_t)pn >= sizeof path)
        return sc__fail(err, SC_E_USAGE, dir, SC_NO_OFFSET, "output path too long");
    sc_output *out;
    sc_status st = sc_output_open(path, s->o->force ? SC_OUTPUT_FORCE : 0, &out, err);
    if (st != SC_OK) return st;
    size_t maxacts = 0;
    for (uint32_t i = 0; i < m->nbody + 2; i++)
        if (m->segs[i].a1 - m->segs[i].a0 > maxacts) maxacts = m->segs[i].a1 - m->segs[i].a0;
    walker w = {.rank = rank, .iter_start = t0};
    w.op_start = sc__alloc_array(maxacts + 1, sizeof *w.op_start);
    w.op_dur = sc__alloc_array(maxacts + 1, sizeof *w.op_dur);
    int level = !s->o->gzip ? 0 : s->o->gzip_level > 0 && s->o->gzip_level <= 9 ? s->o->gzip_level : 1;
    sc__kw k;
    if (!w.op_start || !w.op_dur || !sc__kw_open(&k, sc_output_file(out), level, m->int_us)) {
        free(w.op_start);
        free(w.op_dur);
        sc_output_abort(out);
        return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    }
    sc__kw_header hd = {.t = m->t, .devices_raw = m->devices_raw, .devices_len = m->devices_len,
                        .rank = rank, .world_size = s->ranks, .record_shapes = m->shapes};
    sc__kw_header_write(&k, &hd);
    while (!w.done && !k.failed) {
        if (w.j == 0) write_step(&k, s, &w);
        copy_begin(s, &w);
        walk_acts(s, &w, s->coll_end);
        write_copy(&k, s, &w, copy_seg(s, w.j));
        copy_end(s, &w);
    }
    char name[48]; /* the JSON's name, gzip or not, so both hold the same text */
    snprintf(name, sizeof name, "rank-%05u.json", rank);
    write_tail(&k, s, m->span_ts < t0 ? m->span_ts : t0, w.base > w.gpu_end ? w.base : w.gpu_end, name);
    if (!sc__kw_close(&k)) st = sc__fail(err, SC_E_IO, path, SC_NO_OFFSET, "cannot write: %s", strerror(errno));
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
