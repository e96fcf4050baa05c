/*
 * replay_report.c - `stepcast replay`: measured vs simulated step time per
 * rank, where the simulated time goes, and the critical path.
 *
 * Pipeline (sc_report_replay): build the graph of one iteration for every
 * rank (src/graph), calibrate launch latency, sync cost and collective
 * transfer times from the same traces (src/models/calibrate.c), apply the
 * --scale rules (src/transforms/scale.c), simulate all ranks together
 * (src/sim), then derive:
 *   - per rank: measured step (the builder's step_start..step_end: the
 *     iteration annotation's start to the end of the last task it caused) and
 *     simulated step (simulated start of the same first task to the simulated
 *     end of the rank's last task); the job's step is the slowest rank;
 *   - a breakdown of the simulated step from the GPU's point of view: exposed
 *     compute (only non-communication GPU work running), exposed
 *     communication (only collectives / p2p), overlapped (both), idle (no GPU
 *     work: CPU-bound or waiting), and the SM-busy fraction (share of each
 *     1 ms window with at least one busy stream);
 *   - the critical path: from the slowest rank's last task back along what
 *     bound each start (sim.h), summarised by task class, operator and edge
 *     family, so a user sees what to make faster.
 * Output is built in memory, sorted by fixed keys and printed with fixed
 * formats, so identical inputs give byte-identical text and JSON.
 */
#include "replay.h"

#include "../models/calibrate.h"
#include "../trace/trace.h"

#include <stdlib.h>

/* ------------------------------------------------------------ per rank */

typedef struct mark {
    int64_t time;
    int8_t dcompute, dcomm;
} mark;

static int cmp_mark(const void *a, const void *b) {
    const mark *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    /* Same instant: order by deltas so the sweep is deterministic. */
    int kx = x->dcompute * 2 + x->dcomm, ky = y->dcompute * 2 + y->dcomm;
    return kx - ky;
}

/* Adds busy time [a, b) to the 1 ms windows counted from s0. */
static void add_busy(sc__replay_rank *rr, int64_t a, int64_t b) {
    int64_t s0 = rr->sim_start;
    while (a < b) {
        size_t w = (size_t)((a - s0) / SC__SM_WINDOW_NS);
        int64_t wend = s0 + (int64_t)(w + 1) * SC__SM_WINDOW_NS;
        int64_t e = b < wend ? b : wend;
        if (w < rr->nwindows) rr->sm_busy[w] += (double)(e - a);
        a = e;
    }
}

/* Breakdown and SM-busy windows of one rank; tasks = its tasks. */
static bool rank_breakdown(const sc__replay *r, sc__replay_rank *rr, const uint32_t *tasks, size_t n) {
    const sc__task *all = sc__graph_tasks(r->g);
    int64_t s0 = rr->sim_start, s1 = rr->sim_end;
    int64_t span = s1 > s0 ? s1 - s0 : 0;
    rr->nwindows = (size_t)((span + SC__SM_WINDOW_NS - 1) / SC__SM_WINDOW_NS);
    if (rr->nwindows > SC__SM_MAX_WINDOWS) rr->nwindows = SC__SM_MAX_WINDOWS; /* see sc__replay_graph */
    rr->sm_busy = calloc(rr->nwindows ? rr->nwindows : 1, sizeof *rr->sm_busy);
    mark *m = sc__alloc_array(2 * n + 1, sizeof *m);
    if (!rr->sm_busy || !m) {
        free(m);
        return false;
    }
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        const sc__task *t = &all[tasks[i]];
        if (!sc__task_on_gpu(t->kind)) continue;
        int64_t a = r->sim.start[tasks[i]], b = r->sim.end[tasks[i]];
        if (a < s0) a = s0;
        if (b > s1) b = s1;
        if (b <= a) continue;
        int8_t comm = r->cls[tasks[i]] == SC_SCALE_COMM;
        m[nm++] = (mark){a, (int8_t)!comm, comm};
        m[nm++] = (mark){b, (int8_t)-!comm, (int8_t)-comm};
    }
    qsort(m, nm, sizeof *m, cmp_mark);
    int compute = 0, comm = 0;
    int64_t prev = s0;
    for (size_t i = 0; i < nm; i++) {
        int64_t d = m[i].time - prev;
        if (d > 0) {
            if (compute && comm) rr->overlapped_ns += d;
            else if (compute) rr->exposed_compute_ns += d;
            else if (comm) rr->exposed_comm_ns += d;
            if (compute || comm) add_busy(rr, prev, m[i].time);
        }
        prev = m[i].time;
        compute += m[i].dcompute;
        comm += m[i].dcomm;
    }
    rr->idle_ns = span - rr->exposed_compute_ns - rr->exposed_comm_ns - rr->overlapped_ns;
    for (size_t w = 0; w < rr->nwindows; w++) {
        int64_t wlen = SC__SM_WINDOW_NS;
        if (w + 1 == rr->nwindows && span % SC__SM_WINDOW_NS) wlen = span % SC__SM_WINDOW_NS;
        rr->sm_busy[w] /= (double)wlen;
    }
    free(m);
    return true;
}

static bool per_rank(sc__replay *r) {
    const sc__graph *g = r->g;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t nr = g->ranks.len, nt = g->tasks.len;
    uint32_t *off = calloc(nr + 2, sizeof *off);
    uint32_t *by_rank = sc__alloc_array(nt ? nt : 1, sizeof *by_rank);
    r->ranks = calloc(nr ? nr : 1, sizeof *r->ranks);
    r->nranks = nr;
    bool ok = off && by_rank && r->ranks;
    if (ok) {
        for (size_t i = 0; i < nt; i++) off[procs[tasks[i].proc].rank + 2]++;
        for (size_t k = 0; k < nr; k++) off[k + 2] += off[k + 1];
        for (size_t i = 0; i < nt; i++) by_rank[off[procs[tasks[i].proc].rank + 1]++] = (uint32_t)i;
    }
    for (size_t k = 0; ok && k < nr; k++) {
        const sc__rank *gr = &SC__VEC_AT(&g->ranks, sc__rank, k);
        sc__replay_rank *rr = &r->ranks[k];
        const uint32_t *mine = by_rank + off[k];
        size_t n = off[k + 1] - off[k];
        rr->rank = gr->rank;
        rr->measured_ns = gr->step_end - gr->step_start;
        int64_t lo = INT64_MAX, hi = 0;
        for (size_t i = 0; i < n; i++) {
            if (r->sim.start[mine[i]] < lo) lo = r->sim.start[mine[i]];
            if (r->sim.end[mine[i]] > hi) hi = r->sim.end[mine[i]];
        }
        rr->sim_start = gr->step_first_task < nt ? r->sim.start[gr->step_first_task] : (n ? lo : 0);
        rr->sim_end = n ? hi : rr->sim_start;
        if (rr->sim_end < rr->sim_start) rr->sim_end = rr->sim_start;
        ok = rank_breakdown(r, rr, mine, n);
    }
    for (size_t k = 1; ok && k < nr; k++) {
        const sc__replay_rank *a = &r->ranks[k], *b = &r->ranks[r->slowest];
        if (a->sim_end - a->sim_start > b->sim_end - b->sim_start) r->slowest = k;
        if (a->measured_ns > r->ranks[r->slowest_measured].measured_ns) r->slowest_measured = k;
    }
    free(off);
    free(by_rank);
    return ok;
}

/* ------------------------------------------------------- critical path */

enum { CLS_CPU, CLS_LAUNCH, CLS_RUNTIME, CLS_SYNC, CLS_GEMM, CLS_ATTENTION, CLS_KERNEL,
       CLS_MEMCPY, CLS_MEMSET, CLS_COMM, CLS_COUNT };
static const char *const class_names[CLS_COUNT] = {
    "cpu", "launch", "runtime", "sync", "gemm", "attention", "other_kernel", "memcpy", "memset",
    "communication"};

static int task_class(const sc__task *t, uint8_t cls) {
    switch (t->kind) {
    case SC_T_LAUNCH: return CLS_LAUNCH;
    case SC_T_RUNTIME: return CLS_RUNTIME;
    case SC_T_SYNC: return CLS_SYNC;
    case SC_T_MEMCPY: return CLS_MEMCPY;
    case SC_T_MEMSET: return CLS_MEMSET;
    case SC_T_CPU: return CLS_CPU;
    default: break;
    }
    switch (cls) {
    case SC_SCALE_COMM: return CLS_COMM;
    case SC_SCALE_GEMM: return CLS_GEMM;
    case SC_SCALE_ATTENTION: return CLS_ATTENTION;
    default: return CLS_KERNEL;
    }
}

/* Edge buckets: the graph's families, then the simulator's own reasons. */
enum { EDGE_ROOT = SC_E_FAMILY_COUNT, EDGE_GROUP_WAIT, EDGE_SYNC_WAIT, EDGE_GRAPH_GAP, EDGE_COUNT };

static const char *edge_name(int e) {
    switch (e) {
    case EDGE_ROOT: return "rank_start_offset"; /* the rank entered the step late */
    case EDGE_GROUP_WAIT: return "collective_wait";
    case EDGE_SYNC_WAIT: return "sync_wait";
    case EDGE_GRAPH_GAP: return "graph_gap"; /* untraced GPU time in a CUDA graph (graph.h) */
    default: return sc__edge_family_name((uint8_t)e);
    }
}

static int cmp_item(const void *a, const void *b) {
    const sc__cp_item *x = a, *y = b;
    if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static sc__cp_item *collect(const int64_t *ns, const uint64_t *count, size_t n,
                            const char *(*name)(const void *, size_t), const void *ctx,
                            size_t keep, size_t *out_n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += ns[i] != 0 || count[i] != 0;
    sc__cp_item *items = sc__alloc_array(k ? k : 1, sizeof *items);
    if (!items) return NULL;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (ns[i] != 0 || count[i] != 0) items[k++] = (sc__cp_item){name(ctx, i), ns[i], count[i]};
    qsort(items, k, sizeof *items, cmp_item);
    *out_n = k < keep ? k : keep;
    return items;
}

static const char *class_name_at(const void *ctx, size_t i) {
    (void)ctx;
    return class_names[i];
}
static const char *edge_name_at(const void *ctx, size_t i) {
    (void)ctx;
    return edge_name((int)i);
}
static const char *string_at(const void *ctx, size_t i) {
    return sc__graph_str((const sc__graph *)ctx, (uint32_t)i);
}

static bool critical_path(sc__replay *r) {
    const sc__graph *g = r->g;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__sim *s = &r->sim;
    sc__cp_summary *cp = &r->cp;
    size_t nstr = g->strings.count;
    int64_t cls_ns[CLS_COUNT] = {0}, edge_ns[EDGE_COUNT] = {0};
    uint64_t cls_n[CLS_COUNT] = {0}, edge_n[EDGE_COUNT] = {0};
    int64_t *op_ns = calloc(nstr ? nstr : 1, sizeof *op_ns);
    uint64_t *op_n = calloc(nstr ? nstr : 1, sizeof *op_n);
    if (!op_ns || !op_n) {
        free(op_ns);
        free(op_n);
        return false;
    }
    /* The last task to end on the slowest rank (lowest index on ties). */
    uint32_t cur = SC__NONE;
    if (r->nranks) {
        const sc__proc *procs = sc__graph_procs(g);
        uint32_t want = (uint32_t)r->slowest;
        for (size_t i = 0; i < g->tasks.len; i++)
            if (procs[tasks[i].proc].rank == want && (cur == SC__NONE || s->end[i] > s->end[cur]))
                cur = (uint32_t)i;
        cp->last_rank = want;
    }
    cp->length_ns = cur == SC__NONE ? 0 : s->end[cur];
    /* Each step moves to a task that ended no later than this one started
     * (or to the task it waited for), so the walk is bounded by ntasks. */
    for (size_t steps = 0; cur != SC__NONE && steps <= 2 * g->tasks.len; steps++) {
        const sc__task *t = &tasks[cur];
        uint32_t key = t->op != SC__NONE && t->op < g->ops.len
                           ? SC__VEC_AT(&g->ops, sc__op, t->op).name
                           : t->name;
        int cls = task_class(t, r->cls[cur]);
        cp->ntasks++;
        if (s->wait_kind[cur] == SC_SIM_W_SYNC && s->waited[cur] != SC__NONE) {
            int64_t own = s->end[cur] - s->end[s->waited[cur]];
            cls_ns[cls] += own, cls_n[cls]++;
            op_ns[key] += own, op_n[key]++;
            edge_n[EDGE_SYNC_WAIT]++;
            cur = s->waited[cur];
            continue;
        }
        uint32_t from = cur;
        if (s->wait_kind[cur] == SC_SIM_W_GROUP && s->waited[cur] != SC__NONE) {
            from = s->waited[cur];
            if (from != cur) edge_n[EDGE_GROUP_WAIT]++;
        }
        int64_t own = s->end[cur] - s->start[from];
        cls_ns[cls] += own, cls_n[cls]++;
        op_ns[key] += own, op_n[key]++;
        uint32_t pred = s->bound[from];
        int fam = s->bound_fam[from] == SC_SIM_ROOT ? EDGE_ROOT : s->bound_fam[from];
        int64_t slack = s->start[from] - (pred == SC__NONE ? 0 : s->end[pred]);
        const sc__task *f = &tasks[from];
        if ((f->flags & SC__TF_GRAPH_GAP) && f->gap > 0 && slack >= f->gap) {
            edge_ns[EDGE_GRAPH_GAP] += f->gap, edge_n[EDGE_GRAPH_GAP]++;
            slack -= f->gap;
        }
        edge_ns[fam] += slack, edge_n[fam]++;
        cur = pred;
    }
    cp->by_class = collect(cls_ns, cls_n, CLS_COUNT, class_name_at, NULL, CLS_COUNT, &cp->nclass);
    cp->by_edge = collect(edge_ns, edge_n, EDGE_COUNT, edge_name_at, NULL, EDGE_COUNT, &cp->nedge);
    cp->by_op = collect(op_ns, op_n, nstr, string_at, g, 15, &cp->nop);
    free(op_ns);
    free(op_n);
    return cp->by_class && cp->by_edge && cp->by_op;
}

/* ---------------------------------------------------------------- replay */

/* Bytes r holds besides its graph before the simulation: per-task classes
 * and traced durations, per-rank and per-processor calibration. */
static size_t replay_memory(const sc__replay *r) {
    const sc__graph *g = r->g;
    size_t nt = g->tasks.len;
    return nt + (r->traced_dur ? nt * sizeof *r->traced_dur : 0) +
           g->ranks.len * (sizeof *r->launch_latency + sizeof *r->sync_base + sizeof *r->rank_offset) +
           g->procs.len * sizeof *r->backlog;
}

sc_status sc__replay_graph(sc__graph *g, const sc_traceset *set, bool coupled, const sc__scale_rule *rules, size_t nrules,
                           sc__replay **out, sc_error *err) {
    *out = NULL;
    sc__replay *r = calloc(1, sizeof *r);
    if (!r) {
        sc__graph_free(g);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory replaying");
    }
    r->g = g;
    r->coupled = coupled;
    double t0 = sc__now();
    sc__prune_contradicted(g, r->pruned);
    size_t nr = g->ranks.len ? g->ranks.len : 1;
    r->launch_latency = calloc(nr, sizeof *r->launch_latency);
    r->sync_base = calloc(nr, sizeof *r->sync_base);
    r->rank_offset = calloc(nr, sizeof *r->rank_offset);
    r->backlog = calloc(g->procs.len ? g->procs.len : 1, sizeof *r->backlog);
    if (!r->launch_latency || !r->sync_base || !r->rank_offset || !r->backlog ||
        !sc__calibrate_backlog(g, set, r->backlog) ||
        !sc__calibrate_launch(g, r->launch_latency, &g->spare) || !sc__calibrate_rank_offsets(g, r->rank_offset) ||
        !sc__calibrate_transfers(g)) {
        sc__replay_free(r);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory calibrating");
    }
    sc__spare_free(&g->spare); /* before the simulator takes its memory */
    sc__calibrate_sync_base(g, r->sync_base);
    if (nrules) {
        const sc__task *tasks = sc__graph_tasks(g);
        r->traced_dur = sc__alloc_array(g->tasks.len ? g->tasks.len : 1, sizeof *r->traced_dur);
        if (!r->traced_dur) {
            sc__replay_free(r);
            return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory scaling");
        }
        for (size_t i = 0; i < g->tasks.len; i++) r->traced_dur[i] = tasks[i].dur;
    }
    r->cls = sc__alloc_array(g->tasks.len ? g->tasks.len : 1, 1);
    if (!r->cls || !sc__scale_classify(g, r->cls) || !sc__scale_apply(g, rules, nrules)) {
        sc__replay_free(r);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory scaling");
    }
    sc__sim_params p = {.coupled = coupled,
                        .launch_latency = r->launch_latency,
                        .sync_base = r->sync_base,
                        .rank_offset = r->rank_offset,
                        .proc_backlog = r->backlog,
                        .threads = set ? set->threads : 1};
    double t1 = sc__now();
    r->calibrate_s = t1 - t0;
    /* The simulation's arrays are the job's last large ones: over the
     * budget, say so now rather than swap (traces still held count too). */
    uint64_t besides = sc__sim_memory(g) + sc__traceset_memory(set) + replay_memory(r);
    sc_status st = sc__graph_check_budget(g, set ? set->budget : 0, besides, "simulating the graph",
                                          "the simulation's arrays and any traces held", err);
    if (st != SC_OK) {
        sc__replay_free(r);
        return st;
    }
    st = sc__sim_run(g, &p, &r->sim, err);
    double t2 = sc__now();
    r->simulate_s = t2 - t1;
    if (st != SC_OK) {
        sc__replay_free(r);
        return st;
    }
    /* The SM-busy table holds one double per simulated millisecond of each
     * rank. A step beyond 2^24 ms (4.7 h) comes from a corrupt timestamp (the
     * fuzzer moved one event 17 years back: a 4 TB table); refuse it as bad
     * input rather than fail to allocate, or worse, succeed and swap. */
    if (r->sim.makespan > (int64_t)SC__SM_MAX_WINDOWS * SC__SM_WINDOW_NS) {
        sc_status lim = sc__fail(err, SC_E_LIMIT, NULL, SC_NO_OFFSET,
                                 "the simulated step lasts %.1f hours, more than the %.1f hours "
                                 "stepcast summarises: a corrupt or mis-scaled timestamp?",
                                 (double)r->sim.makespan / 3.6e12,
                                 (double)SC__SM_MAX_WINDOWS * SC__SM_WINDOW_NS / 3.6e12);
        sc__replay_free(r);
        return lim;
    }
    if (!per_rank(r) || !critical_path(r)) {
        sc__replay_free(r);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory summarising the replay");
    }
    r->summarise_s = sc__now() - t2;
    *out = r;
    return SC_OK;
}

void sc__replay_free(sc__replay *r) {
    if (!r) return;
    for (size_t k = 0; r->ranks && k < r->nranks; k++) free(r->ranks[k].sm_busy);
    free(r->ranks);
    free(r->launch_latency);
    free(r->sync_base);
    free(r->rank_offset);
    free(r->backlog);
    free(r->traced_dur);
    free(r->cls);
    free(r->cp.by_class);
    free(r->cp.by_op);
    free(r->cp.by_edge);
    sc__sim_free(&r->sim);
    sc__graph_free(r->g);
    free(r);
}

/* ---------------------------------------------------------------- output */

static double us(int64_t ns) { return (double)ns / 1000.0; }

/* The error as JSON: null when there is no measured step (e.g. Chakra
 * inputs carry no measured window). */
static const char *error_json(int64_t measured, int64_t simulated, char *buf, size_t size) {
    if (measured <= 0) return "null";
    snprintf(buf, size, "%.3f", sc__replay_error_pct(measured, simulated));
    return buf;
}

static void json_items(sc__buf *b, const char *key, const sc__cp_item *items, size_t n, bool last) {
    sc__buf_printf(b, "\"%s\":[", key);
    for (size_t i = 0; i < n; i++) {
        sc__buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        sc__buf_json_str(b, items[i].name, strlen(items[i].name));
        sc__buf_printf(b, ",\"us\":%.3f,\"count\":%llu}", us(items[i].ns),
                       (unsigned long long)items[i].count);
    }
    sc__buf_puts(b, last ? "]" : "],");
}

static void write_json(const sc__replay *r, sc__buf *b) {
    sc__buf_printf(b, "{\"mode\":\"%s\",\"tasks\":%zu,\"warnings\":[", r->coupled ? "coupled" : "traced",
                   r->g->tasks.len);
    for (size_t i = 0; i < r->g->nwarnings; i++) { /* the graph builder's (issue 6) */
        if (i) sc__buf_puts(b, ",");
        sc__buf_json_str(b, r->g->warnings[i], strlen(r->g->warnings[i]));
    }
    sc__buf_puts(b, "],\"edges_dropped\":{");
    for (int f = 0, first = 1; f < SC_E_FAMILY_COUNT; f++)
        if (r->pruned[f]) {
            sc__buf_printf(b, "%s\"%s\":%llu", first ? "" : ",", sc__edge_family_name((uint8_t)f),
                           (unsigned long long)r->pruned[f]);
            first = 0;
        }
    sc__buf_puts(b, "},\"ranks\":[");
    char ebuf[32];
    for (size_t k = 0; k < r->nranks; k++) {
        const sc__replay_rank *rr = &r->ranks[k];
        int64_t sim = rr->sim_end - rr->sim_start;
        sc__buf_printf(b,
                       "%s{\"rank\":%lld,\"measured_us\":%.3f,\"simulated_us\":%.3f,\"error_pct\":%s,"
                       "\"launch_latency_us\":%.3f,\"start_offset_us\":%.3f,\"breakdown\":{\"exposed_compute_us\":%.3f,"
                       "\"exposed_comm_us\":%.3f,\"overlapped_us\":%.3f,\"idle_us\":%.3f,\"sm_busy\":[",
                       k ? "," : "", (long long)rr->rank, us(rr->measured_ns), us(sim),
                       error_json(rr->measured_ns, sim, ebuf, sizeof ebuf), us(r->launch_latency[k]),
                       us(r->rank_offset[k]),
                       us(rr->exposed_compute_ns), us(rr->exposed_comm_ns), us(rr->overlapped_ns),
                       us(rr->idle_ns));
        for (size_t w = 0; w < rr->nwindows; w++) sc__buf_printf(b, "%s%.4f", w ? "," : "", rr->sm_busy[w]);
        sc__buf_puts(b, "]}}");
    }
    int64_t meas = r->nranks ? r->ranks[r->slowest_measured].measured_ns : 0;
    int64_t sim = r->nranks ? r->ranks[r->slowest].sim_end - r->ranks[r->slowest].sim_start : 0;
    sc__buf_printf(b, "],\"step\":{\"measured_us\":%.3f,\"simulated_us\":%.3f,\"error_pct\":%s},",
                   us(meas), us(sim), error_json(meas, sim, ebuf, sizeof ebuf));
    const sc__cp_summary *cp = &r->cp;
    sc__buf_printf(b, "\"critical_path\":{\"length_us\":%.3f,\"tasks\":%llu,\"last_rank\":%lld,",
                   us(cp->length_ns), (unsigned long long)cp->ntasks,
                   r->nranks ? (long long)r->ranks[cp->last_rank].rank : -1LL);
    json_items(b, "by_class", cp->by_class, cp->nclass, false);
    json_items(b, "by_operator", cp->by_op, cp->nop, false);
    json_items(b, "by_edge", cp->by_edge, cp->nedge, true);
    sc__buf_puts(b, "}}\n");
}

static void text_items(sc__buf *b, const char *title, const sc__cp_item *items, size_t n, int64_t total) {
    sc__buf_printf(b, "  %s:\n", title);
    for (size_t i = 0; i < n; i++)
        sc__buf_printf(b, "    %10.3f ms  %5.1f%%  %7llu  %.60s\n", us(items[i].ns) / 1000.0,
                       total > 0 ? 100.0 * (double)items[i].ns / (double)total : 0.0,
                       (unsigned long long)items[i].count, items[i].name);
}

static void write_text(const sc__replay *r, sc__buf *b) {
    sc__buf_printf(b, "replay: %zu rank%s, %zu tasks, %s collectives\n\n", r->nranks,
                   r->nranks == 1 ? "" : "s", r->g->tasks.len, r->coupled ? "coupled" : "traced");
    /* The graph builder's warnings (clock skew, partial job, unmatched
     * collectives...): the answer is defined, but the user must see why it
     * may be off (issue 6). */
    for (size_t i = 0; i < r->g->nwarnings; i++) sc__buf_printf(b, "warning: %s\n", r->g->warnings[i]);
    for (int f = 0; f < SC_E_FAMILY_COUNT; f++)
        if (r->pruned[f])
            sc__buf_printf(b, "note: dropped %llu %s edge%s that the trace contradicts (destination started "
                              "before the source ended)\n",
                           (unsigned long long)r->pruned[f], sc__edge_family_name((uint8_t)f),
                           r->pruned[f] == 1 ? "" : "s");
    sc__buf_puts(b, "rank   measured ms  simulated ms   error %   exp.compute ms  exp.comm ms  "
                    "overlap ms   idle ms  sm busy\n");
    double sum_abs = 0, max_abs = 0;
    size_t nmeasured = 0;
    for (size_t k = 0; k < r->nranks; k++) {
        const sc__replay_rank *rr = &r->ranks[k];
        int64_t sim = rr->sim_end - rr->sim_start;
        double e = sc__replay_error_pct(rr->measured_ns, sim);
        double busy = 0;
        for (size_t w = 0; w < rr->nwindows; w++) busy += rr->sm_busy[w];
        char etext[32] = "       -";
        if (rr->measured_ns > 0) {
            snprintf(etext, sizeof etext, "%8.2f", e);
            sum_abs += e < 0 ? -e : e;
            if ((e < 0 ? -e : e) > max_abs) max_abs = e < 0 ? -e : e;
            nmeasured++;
        }
        sc__buf_printf(b, "%4lld  %12.3f  %12.3f  %s  %14.3f  %11.3f  %10.3f  %8.3f  %6.1f%%\n",
                       (long long)rr->rank, us(rr->measured_ns) / 1000.0, us(sim) / 1000.0, etext,
                       us(rr->exposed_compute_ns) / 1000.0, us(rr->exposed_comm_ns) / 1000.0,
                       us(rr->overlapped_ns) / 1000.0, us(rr->idle_ns) / 1000.0,
                       rr->nwindows ? 100.0 * busy / (double)rr->nwindows : 0.0);
    }
    if (r->nranks) {
        int64_t meas = r->ranks[r->slowest_measured].measured_ns;
        int64_t sim = r->ranks[r->slowest].sim_end - r->ranks[r->slowest].sim_start;
        if (nmeasured) {
            sc__buf_printf(b, "\nstep (slowest rank): measured %.3f ms, simulated %.3f ms, error %.2f%%\n",
                           us(meas) / 1000.0, us(sim) / 1000.0, sc__replay_error_pct(meas, sim));
            sc__buf_printf(b, "per-rank |error|: mean %.2f%%, max %.2f%% (%zu rank%s with a measured step)\n",
                           sum_abs / (double)nmeasured, max_abs, nmeasured, nmeasured == 1 ? "" : "s");
        } else {
            sc__buf_printf(b, "\nstep (slowest rank): simulated %.3f ms (the inputs carry no measured step)\n",
                           us(sim) / 1000.0);
        }
    }
    const sc__cp_summary *cp = &r->cp;
    sc__buf_printf(b, "\ncritical path: %.3f ms over %llu tasks, ending on rank %lld\n",
                   us(cp->length_ns) / 1000.0, (unsigned long long)cp->ntasks,
                   r->nranks ? (long long)r->ranks[cp->last_rank].rank : -1LL);
    text_items(b, "by class (time, share, tasks)", cp->by_class, cp->nclass, cp->length_ns);
    text_items(b, "top operators", cp->by_op, cp->nop, cp->length_ns);
    text_items(b, "by edge (latency or gap on the edge, share, edges)", cp->by_edge, cp->nedge,
               cp->length_ns);
}

sc_status sc__replay_write(const sc__replay *r, FILE *out, int json, sc_error *err) {
    sc__buf b;
    sc__buf_init(&b);
    if (json) write_json(r, &b);
    else write_text(r, &b);
    if (b.oom) {
        sc__buf_free(&b);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory writing the report");
    }
    size_t len = b.len, n = len ? fwrite(b.data, 1, len, out) : 0;
    sc__buf_free(&b);
    if (n != len)
        return sc__fail(err, SC_E_IO, NULL, SC_NO_OFFSET, "cannot write the replay report");
    return SC_OK;
}

/* ------------------------------------------------------------ public API */

sc_status sc_report_replay(const sc_traceset *set, const sc_replay_options *opts, FILE *out, int json,
                           sc_error *err) {
    sc_replay_options defaults = SC_REPLAY_OPTIONS_INIT;
    if (!opts) opts = &defaults;
    sc_replay_timings spare, *tm = opts->timings ? opts->timings : &spare;
    memset(tm, 0, sizeof *tm);
    if (!set || !out) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "replay: no traces or no output");
    sc__scale_rule *rules = sc__alloc_array(opts->nscales ? opts->nscales : 1, sizeof *rules);
    if (!rules) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < opts->nscales; i++) {
        sc_status st = sc__scale_parse(opts->scales[i], &rules[i], err);
        if (st != SC_OK) {
            free(rules);
            return st;
        }
    }
    sc__build_options bo = {.iteration = opts->iteration, .hide_cuda_sync = false,
                            .release_traces = opts->release_traces != 0, .keep_spare = true};
    double t0 = sc__now();
    sc__graph *g;
    sc_status st = sc__graph_build(set, &bo, &g, err); /* Kineto or Chakra */
    tm->build = sc__now() - t0;
    sc__replay *r = NULL;
    if (st == SC_OK) st = sc__replay_graph(g, set, !opts->comm_traced, rules, opts->nscales, &r, err);
    free(rules);
    if (st != SC_OK) return st;
    tm->calibrate = r->calibrate_s;
    tm->simulate = r->simulate_s;
    tm->simulate_setup = r->sim.setup_s;
    tm->summarise = r->summarise_s;
    tm->tasks = r->g->tasks.len;
    double t1 = sc__now();
    if (opts->chrome_path) {
        sc_output *o;
        st = sc_output_open(opts->chrome_path, opts->force ? SC_OUTPUT_FORCE : 0, &o, err);
        if (st == SC_OK) {
            st = sc__chrome_write(r, sc_output_file(o), err);
            if (st == SC_OK) st = sc_output_commit(o, err);
            else sc_output_abort(o);
        }
    }
    if (st == SC_OK) st = sc__replay_write(r, out, json, err);
    tm->write = sc__now() - t1;
    sc__replay_free(r);
    return st;
}
