/*
 * hta_breakdown.c - `replay --breakdown hta`: HTA's temporal breakdown of
 * each measured trace, computed as HolisticTraceAnalysis computes it
 * (hta/analyzers/breakdown_analysis.py, get_temporal_breakdown), so that a
 * user comparing the two tools sees the same figures.
 *
 * stepcast's own breakdown (breakdown.c) is of the simulated step: its
 * window opens at the iteration's ProfilerStep and ends with the rank's last
 * task, memset and memcpy are compute, and collectives are re-timed by the
 * simulator. HTA's is of the measured trace, with other conventions, which
 * are followed here step by step:
 *   - events: those with a duration and a category other than "Trace";
 *     GPU ops are the events whose args carry a stream (kernels, memcpy,
 *     memset, and cuda_sync events where the trace has them);
 *   - timestamps: a file whose timestamps have sub-microsecond digits is
 *     read by HTA as floats and each event rounded inward to whole
 *     microseconds (start up, end = start + duration down), the arithmetic
 *     done in doubles as Python does it;
 *   - iterations: when the job's traces name more than one ProfilerStep,
 *     HTA keeps only the GPU ops whose correlation id is that of a CPU
 *     event starting before the rank's last ProfilerStep (that step is
 *     left out); with one step (or none) it keeps every op;
 *   - classes, by kernel name: communication ^nccl.*Kernel, memory
 *     ^Memcpy, ^Memset, ^dma; compute is every other name that contains
 *     neither Memcpy nor Sync (nor starts with Memset);
 *   - window: from the first op's start to the last one's end, over the
 *     rank's whole trace (HTA's kernel_time); idle: the window minus the
 *     union of all ops; compute: the union of compute ops; non-compute:
 *     the rest. HTA splits non-compute no further; this splits it into
 *     communication (NCCL ops under no compute op: TraceLens's exposed
 *     communication), memory (under neither) and other.
 * Unions are HTA's merge: ops sorted by start join the group before them
 * while they start no later than every earlier op's end.
 */
#include "replay.h"

#include "../trace/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { OP_COMPUTE = 1, OP_COMM = 2, OP_MEMORY = 4, OP_OTHER = 8 };

typedef struct hta_op {
    int64_t ts, end; /* ns (whole microseconds when the trace is rounded) */
    uint8_t cls;     /* OP_* */
} hta_op;

/* HTA's kernel type of a GPU op's name (hta/utils/utils.py). */
static uint8_t op_class(const char *name) {
    if (sc__starts_with(name, "nccl") && strstr(name + 4, "Kernel")) return OP_COMM;
    if (sc__starts_with(name, "Memcpy") || sc__starts_with(name, "Memset") || sc__starts_with(name, "dma"))
        return OP_MEMORY;
    if (strstr(name, "Memcpy") || strstr(name, "Sync")) return OP_OTHER;
    return OP_COMPUTE;
}

/* An event HTA keeps at all: a duration, a category, not the span. */
static bool kept(const sc_trace *t, const sc__event *e) {
    const char *cat = sc__trace_str(t, e->cat);
    return e->ph == 'X' && cat[0] && strcmp(cat, "Trace") != 0;
}

/* Does the file hold a timestamp with sub-microsecond digits? HTA then
 * reads its timestamps as floats and rounds them. */
static bool fractional(const sc_trace *t) {
    const sc__event *ev = sc__trace_events(t);
    for (size_t i = 0; i < t->events.len; i++)
        if ((ev[i].ts - t->base_time_ns) % 1000) return true;
    return false;
}

/* ns as the double Python reads from the file's microseconds ("%d.%03d",
 * correctly rounded by strtod as by float()). */
static double us_double(int64_t ns) {
    char buf[48];
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(buf, sizeof buf, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
             (unsigned long long)(a % 1000));
    return strtod(buf, NULL);
}

/* An event's interval as HTA holds it. */
static void interval(const sc_trace *t, const sc__event *e, bool round_us, int64_t *ts, int64_t *end) {
    if (!round_us) {
        *ts = e->ts;
        *end = e->ts + e->dur;
        return;
    }
    double a = us_double(e->ts - t->base_time_ns), d = us_double(e->dur);
    *ts = (int64_t)ceil(a) * 1000 + t->base_time_ns;
    *end = (int64_t)floor(a + d) * 1000 + t->base_time_ns;
}

static int cmp_op(const void *a, const void *b) {
    const hta_op *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* The union of the ops (sorted) whose class is in mask, merged as HTA
 * merges them; *first and *last get the first group's start and the last
 * group's end (unchanged when no op is in mask). */
static int64_t union_of(const hta_op *ops, size_t n, uint8_t mask, int64_t *first, int64_t *last) {
    int64_t total = 0, gts = 0, gend = 0, reach = 0; /* the group; the latest end so far */
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (!(ops[i].cls & mask)) continue;
        if (!any || ops[i].ts > reach) { /* a new group */
            if (any) total += gend - gts;
            else *first = ops[i].ts;
            gts = ops[i].ts;
            gend = ops[i].end;
        } else if (ops[i].end > gend) {
            gend = ops[i].end;
        }
        if (!any || ops[i].end > reach) reach = ops[i].end;
        any = true;
    }
    if (any) {
        total += gend - gts;
        *last = gend;
    }
    return total;
}

/* ------------------------------------------------------------ iterations */

/* Does name start a ProfilerStep, and is it new to names[0..n)? Appends
 * it; false on out-of-memory. */
static bool note_step(const char *name, const char ***names, size_t *n, size_t *cap) {
    if (!sc__starts_with(name, "ProfilerStep")) return true;
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*names)[i], name) == 0) return true;
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        const char **nn = realloc((void *)*names, nc * sizeof *nn);
        if (!nn) return false;
        *names = nn;
        *cap = nc;
    }
    (*names)[(*n)++] = name;
    return true;
}

/* How many distinct ProfilerStep names the job's traces hold (HTA counts
 * them over its one symbol table); SIZE_MAX on out-of-memory. */
static size_t job_steps(const sc_traceset *set) {
    const char **names = NULL;
    size_t n = 0, cap = 0;
    for (size_t k = 0; k < set->count; k++) {
        const sc_trace *t = set->traces[k];
        const sc__event *ev = sc__trace_events(t);
        for (size_t i = 0; t->format == SC__FMT_KINETO && i < t->events.len; i++)
            if (kept(t, &ev[i]) && !note_step(sc__trace_str(t, ev[i].name), &names, &n, &cap)) {
                free((void *)names);
                return SIZE_MAX;
            }
    }
    free((void *)names);
    return n;
}

/* Does the event carry a stream in HTA's eyes (args.stream other than
 * -1)? Kineto writes a Context Sync's stream as 4294967295 (CUPTI's
 * invalid id as unsigned), which HTA counts as a stream and the reader,
 * holding streams in 32 signed bits, as none. */
static bool has_stream(const sc_trace *t, const sc__event *e) {
    return e->stream != -1 ||
           (e->kind == SC_K_CUDA_SYNC && strcmp(sc__trace_str(t, e->name), "Context Sync") == 0);
}

/* HTA's split of events into GPU kernels and CPU events (trace_filter.py). */
static bool hta_gpu(const sc_trace *t, const sc__event *e) {
    if (e->stream >= 0 && e->correlation >= 0) return true;
    const char *name = sc__trace_str(t, e->name);
    return strcmp(name, "Event Sync") == 0 || strcmp(name, "Context Sync") == 0;
}

/* The start of the rank's last ProfilerStep among its CPU events (else of
 * its first CPU event); false when it has no CPU event (HTA then keeps
 * everything). */
static bool last_step_start(const sc_trace *t, bool round_us, int64_t *out) {
    const sc__event *ev = sc__trace_events(t);
    int64_t step = INT64_MIN, first = INT64_MAX, ts, end;
    for (size_t i = 0; i < t->events.len; i++) {
        if (!kept(t, &ev[i]) || hta_gpu(t, &ev[i])) continue;
        interval(t, &ev[i], round_us, &ts, &end);
        if (ts < first) first = ts;
        if (ts > step && sc__starts_with(sc__trace_str(t, ev[i].name), "ProfilerStep")) step = ts;
    }
    *out = step != INT64_MIN ? step : first;
    return first != INT64_MAX;
}

/* The correlation ids of the CPU events that start before `before`,
 * sorted; NULL on out-of-memory. */
static int64_t *early_correlations(const sc_trace *t, bool round_us, int64_t before, size_t *n) {
    const sc__event *ev = sc__trace_events(t);
    int64_t *c = sc__alloc_array(t->events.len ? t->events.len : 1, sizeof *c), ts, end;
    *n = 0;
    for (size_t i = 0; c && i < t->events.len; i++) {
        if (!kept(t, &ev[i]) || hta_gpu(t, &ev[i])) continue;
        interval(t, &ev[i], round_us, &ts, &end);
        if (ts < before) c[(*n)++] = ev[i].correlation;
    }
    if (c) qsort(c, *n, sizeof *c, sc__cmp_i64);
    return c;
}

/* ------------------------------------------------------------ one rank */

/* The ops HTA's breakdown counts (GPU kernels kept by the iteration
 * filter when the job has several steps, and kept events with a stream),
 * into ops; returns how many, or SIZE_MAX on out-of-memory. */
static size_t gather_ops(const sc_trace *t, bool filter, bool round_us, hta_op *ops, bool *dropped) {
    const sc__event *ev = sc__trace_events(t);
    int64_t before = 0, *corr = NULL;
    size_t ncorr = 0;
    *dropped = filter && last_step_start(t, round_us, &before);
    if (*dropped && !(corr = early_correlations(t, round_us, before, &ncorr))) return SIZE_MAX;
    uint8_t *by_name = calloc(t->strings.count ? t->strings.count : 1, 1); /* 1 + class, 0: not yet */
    if (!by_name) {
        free(corr);
        return SIZE_MAX;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->events.len; i++) {
        const sc__event *e = &ev[i];
        if (!kept(t, e) || !has_stream(t, e)) continue;
        int64_t ts, end;
        interval(t, e, round_us, &ts, &end);
        if (*dropped) {
            bool keep = hta_gpu(t, e) ? bsearch(&e->correlation, corr, ncorr, sizeof *corr, sc__cmp_i64) != NULL
                                      : ts < before;
            if (!keep) continue;
        }
        if (e->name < t->strings.count && !by_name[e->name])
            by_name[e->name] = (uint8_t)(1 + op_class(sc__trace_str(t, e->name)));
        uint8_t cls = e->name < t->strings.count ? (uint8_t)(by_name[e->name] - 1) : OP_COMPUTE;
        ops[n++] = (hta_op){ts, end, cls};
    }
    free(by_name);
    free(corr);
    return n;
}

/* The breakdown of one trace; false on out-of-memory. */
static bool rank_breakdown(const sc_trace *t, bool filter, sc_hta_breakdown *b) {
    *b = (sc_hta_breakdown){.rank = t->rank};
    bool round_us = fractional(t), dropped;
    hta_op *ops = sc__alloc_array(t->events.len ? t->events.len : 1, sizeof *ops);
    if (!ops) return false;
    size_t n = gather_ops(t, filter, round_us, ops, &dropped);
    if (n == SIZE_MAX) {
        free(ops);
        return false;
    }
    b->last_step_dropped = dropped;
    b->rounded_to_us = round_us;
    b->gpu_ops = n;
    if (n) {
        qsort(ops, n, sizeof *ops, cmp_op);
        int64_t busy = union_of(ops, n, 0xff, &b->window_start_ns, &b->window_end_ns), unused;
        int64_t window = b->window_end_ns - b->window_start_ns;
        int64_t compute = union_of(ops, n, OP_COMPUTE, &unused, &unused);
        int64_t with_comm = union_of(ops, n, OP_COMPUTE | OP_COMM, &unused, &unused);
        int64_t with_mem = union_of(ops, n, OP_COMPUTE | OP_COMM | OP_MEMORY, &unused, &unused);
        b->idle_ns = window - busy;
        b->compute_ns = compute;
        b->non_compute_ns = window - compute - b->idle_ns;
        b->comm_ns = with_comm - compute;
        b->memory_ns = with_mem - with_comm;
        b->other_ns = b->non_compute_ns - b->comm_ns - b->memory_ns;
    }
    free(ops);
    return true;
}

sc_status sc__hta_breakdown(const sc_traceset *set, sc_hta_breakdown **out, size_t *n, sc_error *err) {
    *out = NULL;
    *n = 0;
    size_t steps = job_steps(set);
    sc_hta_breakdown *b = calloc(set->count ? set->count : 1, sizeof *b);
    if (!b || steps == SIZE_MAX) {
        free(b);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory in HTA's breakdown");
    }
    size_t k = 0;
    for (size_t i = 0; i < set->count; i++) {
        const sc_trace *t = set->traces[i];
        if (t->format != SC__FMT_KINETO) continue;
        sc_status st = sc__trace_check_whole(t, err);
        if (st == SC_OK && !rank_breakdown(t, steps > 1, &b[k]))
            st = sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory in HTA's breakdown");
        if (st != SC_OK) {
            free(b);
            return st;
        }
        k++;
    }
    *out = b;
    *n = k;
    return SC_OK;
}
