/*
 * build.c - the Kineto graph builder's driver: the job check, then one
 * common iteration for all ranks (see common_iteration), then one rank after
 * the other: window -> CPU tasks -> cross-thread edges -> GPU tasks ->
 * cross-stream edges -> syncs; then collectives matched across ranks and
 * the graph finished (processor-order edges, CSR, acyclicity), its spare
 * capacity given back.
 *
 * Also the per-rank context's helpers: adding a task with its scratch slots
 * and mapping trace strings to graph strings (a flat array, filled lazily).
 * Ranks are built one at a time so the scratch is reused; a rank's tasks are
 * contiguous, CPU threads first (main thread first), then GPU streams.
 *
 * With several cores and ranks, workers build whole ranks in parallel, each
 * into a graph of its own, and the caller appends them in rank order (see
 * build_parallel): the same graph as the one-thread loop, string ids
 * included.
 *
 * Each rank also gets its stream backlog measured (backlog.c) while its
 * events are at hand; with release_traces the events are then freed, so a
 * large job never holds every trace and the whole graph at once.
 */
#include "build.h"
#include "../trace/job_check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

uint32_t sc__bctx_add_task(sc__bctx *c, const sc__task *t, uint8_t call_class) {
    uint32_t id = sc__graph_add_task(c->g, t);
    if (id == SC__NONE) return SC__NONE;
    uint8_t *cls = sc__vec_push(&c->call_class);
    uint32_t *f = sc__vec_push(&c->gpu_first), *l = sc__vec_push(&c->gpu_last);
    uint32_t *lo = sc__vec_push(&c->launch_of);
    if (!cls || !f || !l || !lo) return SC__NONE;
    *cls = call_class;
    *f = *l = *lo = SC__NONE;
    return id;
}

uint32_t sc__bctx_name(sc__bctx *c, uint32_t trace_str) {
    if (trace_str >= c->name_map.len) {
        size_t want = c->t->strings.count > trace_str ? c->t->strings.count : (size_t)trace_str + 1;
        if (!sc__vec_reserve(&c->name_map, want)) return SC__NONE;
        memset((uint32_t *)sc__vec_end(&c->name_map), 0xff,
               (want - c->name_map.len) * sizeof(uint32_t));
        c->name_map.len = want;
    }
    uint32_t *slot = &SC__VEC_AT(&c->name_map, uint32_t, trace_str);
    if (*slot == SC__NONE)
        *slot = sc__intern_put(&c->g->strings, sc__trace_str(c->t, trace_str),
                               sc__intern_len(&c->t->strings, trace_str));
    return *slot;
}

/* class_map slot: bits 0-3 the class + 1, bit 4 "Launch" in the name. */
static uint8_t call_bits(sc__bctx *c, uint32_t trace_str) {
    if (trace_str >= c->class_map.len) {
        size_t want = c->t->strings.count > trace_str ? c->t->strings.count : (size_t)trace_str + 1;
        if (!sc__vec_reserve(&c->class_map, want)) return 1; /* OOM: "other", uncached */
        memset((uint8_t *)sc__vec_end(&c->class_map), 0, want - c->class_map.len);
        c->class_map.len = want;
    }
    uint8_t *slot = &SC__VEC_AT(&c->class_map, uint8_t, trace_str);
    if (!*slot) {
        const char *name = sc__trace_str(c->t, trace_str);
        *slot = (uint8_t)((sc__call_classify(name) + 1) | (strstr(name, "Launch") ? 16 : 0));
    }
    return *slot;
}

sc__call_class sc__bctx_call_class(sc__bctx *c, uint32_t trace_str) {
    return (sc__call_class)((call_bits(c, trace_str) & 15) - 1);
}

bool sc__bctx_kernel_launch(sc__bctx *c, uint32_t trace_str) {
    uint8_t b = call_bits(c, trace_str);
    return (b & 15) - 1 == SC_CALL_LAUNCH && (b & 16);
}

uint32_t sc__bctx_intern(sc__bctx *c, const char *s) {
    return sc__intern_put(&c->g->strings, s, strlen(s));
}

uint32_t sc__bctx_main_before(const sc__bctx *c, int64_t at) {
    const sc__task *t = sc__graph_tasks(c->g);
    uint32_t lo = c->first_task, hi = c->main_end; /* first task whose end > at */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t[mid].ts + t[mid].dur <= at) lo = mid + 1;
        else hi = mid;
    }
    return lo > c->first_task ? lo - 1 : SC__NONE;
}

/* The main thread's tasks come first among the rank's (cpu_tasks.c). */
static void find_main_end(sc__bctx *c) {
    const sc__task *t = sc__graph_tasks(c->g);
    uint32_t end = (uint32_t)c->g->tasks.len, i = c->first_task;
    if (c->main_proc != SC__NONE)
        while (i < end && t[i].proc == c->main_proc) i++;
    c->main_end = i;
}

static void ctx_reset(sc__bctx *c) {
    c->corr.count = 0;
    sc__idmap_clear(&c->corr);
    sc__idmap_clear(&c->op_at);
    c->op_first.len = c->op_last.len = c->op_event.len = c->call_class.len = 0;
    c->gpu_first.len = c->gpu_last.len = c->launch_of.len = 0;
    c->name_map.len = 0;
    c->class_map.len = 0;
    c->main_proc = SC__NONE;
    c->device = -1;
}

static void ctx_free(sc__bctx *c) {
    sc__idmap_free(&c->corr);
    sc__idmap_free(&c->op_at);
    sc__vec_free(&c->op_first);
    sc__vec_free(&c->op_last);
    sc__vec_free(&c->op_event);
    sc__vec_free(&c->call_class);
    sc__vec_free(&c->gpu_first);
    sc__vec_free(&c->gpu_last);
    sc__vec_free(&c->launch_of);
    sc__vec_free(&c->name_map);
    sc__vec_free(&c->class_map);
    sc__vec_free(&c->streams);
    sc__vec_free(&c->gpu_lts);
}

/* Flags the rank's quiet threads (graph.h): besides the main thread, those
 * with no runtime call; none when every thread would be. */
static void mark_quiet(sc__bctx *c, uint32_t first_proc) {
    sc__proc *procs = sc__graph_procs(c->g);
    const sc__task *tasks = sc__graph_tasks(c->g);
    size_t np = c->g->procs.len;
    for (size_t q = first_proc; q < np; q++) procs[q].quiet = procs[q].kind == SC_P_THREAD && q != c->main_proc;
    for (size_t i = c->first_task; i < c->first_gpu_task; i++)
        if (tasks[i].kind != SC_T_CPU) procs[tasks[i].proc].quiet = 0;
    bool loud = false;
    for (size_t q = first_proc; q < np; q++) loud |= procs[q].kind == SC_P_THREAD && !procs[q].quiet;
    if (!loud)
        for (size_t q = first_proc; q < np; q++) procs[q].quiet = 0;
}

/* Measured step of the rank: from the annotation's start to the end of the
 * last task the iteration caused (CPU or GPU), that task recorded as the
 * one that closes it (graph.h). The simulated step opens with the task
 * that opens the measured one: the annotation's first task, the main
 * thread's first; with no annotation (the whole trace), the task that
 * starts first, on any thread, since the measured step opens there too.
 * Quiet threads open and close nothing: a thread's one Python event
 * spanning the whole trace closed the vLLM and xDiT capture traces, a CPU
 * task whose traced length covers everything, which any replay echoes. */
static void set_step(sc__bctx *c, uint32_t first_proc) {
    sc__rank *r = &SC__VEC_AT(&c->g->ranks, sc__rank, c->rank);
    const sc__task *tasks = sc__graph_tasks(c->g);
    const sc__proc *procs = sc__graph_procs(c->g);
    size_t end = c->g->tasks.len;
    r->ntasks = (uint32_t)(end - c->first_task);
    mark_quiet(c, first_proc);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint32_t earliest = SC__NONE;
    for (size_t i = c->first_task; i < end; i++) {
        if (procs[tasks[i].proc].quiet) continue;
        if (tasks[i].ts - tasks[i].gap < lo) lo = tasks[i].ts - tasks[i].gap;
        if (earliest == SC__NONE || tasks[i].ts < tasks[earliest].ts) earliest = (uint32_t)i;
        if (tasks[i].ts + tasks[i].dur > hi) {
            hi = tasks[i].ts + tasks[i].dur;
            r->step_last_task = (uint32_t)i;
        }
    }
    r->step_start = c->win.whole ? (lo == INT64_MAX ? 0 : lo) : c->win.start;
    r->step_end = hi == INT64_MIN ? r->step_start : hi;
    r->step_number = c->win.whole ? -1 : c->win.number;
    r->annotation_end = c->win.whole ? r->step_end : c->win.end;
    /* The main thread's tasks come first, in seq order. */
    bool main_first = !c->win.whole && c->main_proc != SC__NONE && r->ntasks;
    r->step_first_task = main_first ? c->first_task : earliest;
    sc__window_status(c, r);
}

static sc_status build_rank(sc__bctx *c, uint32_t trace_index, sc_error *err) {
    ctx_reset(c);
    uint32_t first_proc = (uint32_t)c->g->procs.len;
    c->first_task = (uint32_t)c->g->tasks.len;
    c->first_op = (uint32_t)c->g->ops.len;
    c->rank = sc__graph_add_rank(c->g, c->t->rank, trace_index);
    if (c->rank == SC__NONE) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    sc_status st;
    if ((st = sc__build_window(c, err)) != SC_OK) return st;
    if ((st = sc__build_cpu(c, err)) != SC_OK) return st;
    find_main_end(c);
    if ((st = sc__build_cross_thread(c, err)) != SC_OK) return st;
    if ((st = sc__build_gpu(c, err)) != SC_OK) return st;
    if (!sc__streams_index(c)) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    if ((st = sc__build_cross_stream(c, err)) != SC_OK) return st;
    if ((st = sc__build_stalls(c, err)) != SC_OK) return st;
    if ((st = sc__build_syncs(c, err)) != SC_OK) return st;
    set_step(c, first_proc);
    if (!sc__build_backlog(c, first_proc)) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    return SC_OK;
}

static bool job_warn(void *g, const char *msg) { return sc__graph_warn(g, "%s", msg); }

/* Ranks must replay the same step or their collectives do not pair up.
 * When each rank's last complete step is not the same N, take the
 * smallest (every rank has completed it, step numbers being global) and
 * say so; -1 (each rank its own window) when a rank has no steps at all. */
static sc_status common_iteration(sc__bctx *c, const sc_traceset *set, int64_t *out, sc_error *err) {
    int64_t lo = INT64_MAX, hi = -1;
    *out = -1;
    size_t nwarn = c->g->warnings.count; /* the real pass repeats any window warning */
    sc_status st = SC_OK;
    for (size_t i = 0; i < set->count && st == SC_OK && lo >= 0; i++) {
        c->t = set->traces[i];
        c->class_map.len = 0; /* string ids are per trace */
        st = sc__build_window(c, err);
        if (c->win.number < lo) lo = c->win.number;
        if (c->win.number > hi) hi = c->win.number;
    }
    sc__warnings_truncate(&c->g->warnings, nwarn);
    if (st != SC_OK || lo < 0 || lo == hi) return st;
    *out = lo;
    if (!sc__graph_warn(c->g, "ranks' last complete iterations differ (ProfilerStep#%lld to #%lld); "
                        "using ProfilerStep#%lld on every rank", (long long)lo, (long long)hi, (long long)lo))
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    return SC_OK;
}

/* Traces were read on several threads, so their freed events sit in the
 * readers' malloc arenas, where the graph (growing on this thread) cannot
 * reuse them: hand those pages back to the system so that RSS really falls
 * as traces are released (glibc only; elsewhere a no-op). */
static void give_back_freed(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Gives back a vector's spare capacity (doubling leaves up to half unused);
 * a graph is read many times after one build. Failure to shrink is harmless. */
static void shrink(sc__vec *v) {
    if (v->cap <= v->len || v->len == 0) return;
    void *p = realloc(v->data, v->len * v->elem);
    if (!p) return;
    v->data = p;
    v->cap = v->len;
}

static bool ctx_init(sc__bctx *c, sc__graph *g, const sc__build_options *opts, sc__vec *comms) {
    memset(c, 0, sizeof *c);
    c->g = g;
    c->opts = opts;
    c->comms = comms;
    sc__vec_init(&c->op_first, sizeof(uint32_t));
    sc__vec_init(&c->op_last, sizeof(uint32_t));
    sc__vec_init(&c->op_event, sizeof(uint32_t));
    sc__vec_init(&c->call_class, sizeof(uint8_t));
    sc__vec_init(&c->gpu_first, sizeof(uint32_t));
    sc__vec_init(&c->gpu_last, sizeof(uint32_t));
    sc__vec_init(&c->launch_of, sizeof(uint32_t));
    sc__vec_init(&c->name_map, sizeof(uint32_t));
    sc__vec_init(&c->class_map, sizeof(uint8_t));
    sc__vec_init(&c->streams, sizeof(sc__stream_span));
    sc__vec_init(&c->gpu_lts, sizeof(int64_t));
    return sc__idmap_init(&c->corr, 4096) && sc__idmap_init(&c->op_at, 4096);
}

/* ---- ranks built in parallel ----
 * Each worker builds whole ranks, each into a graph of its own (one rank,
 * local indices), and the calling thread appends them to the job's graph in
 * rank order, renumbering: the result is the graph the one-thread loop
 * builds, string ids included (a part's strings are interned in their own
 * first-use order, which is the order the serial build meets them). Workers
 * stay at most PAR_AHEAD ranks ahead of the appending, so the parts in
 * memory stay few. */
#define PAR_AHEAD 16

/* Frees t's events (release_traces), returning the bytes given back. */
static uint64_t release_trace(sc_trace *t) {
    uint64_t before = sc_trace_memory(t);
    sc__trace_release_events(t);
    return before - sc_trace_memory(t);
}

/* The job's memory budget (set->budget) after rank i is in g: the graph so
 * far, the traces still held and the collective records must fit, checked
 * as each rank is added, long before the machine would swap. */
static sc_status check_rank_budget(const sc__graph *g, const sc_traceset *set, size_t i,
                                   uint64_t traces_held, const sc__vec *comms, sc_error *err) {
    char doing[96];
    snprintf(doing, sizeof doing, "building the graph of %zu ranks, up to rank %zu,", set->count, i);
    return sc__graph_check_budget(g, set->budget, traces_held + sc__vec_bytes(comms), doing,
                                  "traces not yet released", err);
}

typedef struct rank_part {
    sc__graph *g;
    sc__vec comms; /* sc__comm_rec, local task ids and rank 0 */
    sc_status st;
    sc_error err;
    uint64_t recorded, matched, missed, extra;
    uint64_t released; /* bytes the trace gave back once built (release_traces) */
    bool checked, done;
} rank_part;

typedef struct par_job {
    const sc_traceset *set;
    const sc__build_options *opts;
    rank_part *parts;
    size_t count, next, merged;
    bool stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} par_job;

static void build_part(par_job *j, sc__bctx *c, size_t i) {
    rank_part *p = &j->parts[i];
    sc__vec_init(&p->comms, sizeof(sc__comm_rec));
    p->g = sc__graph_new();
    if (!p->g) {
        p->st = sc__fail(&p->err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        return;
    }
    c->g = p->g;
    c->comms = &p->comms;
    c->sync_recorded = c->sync_matched = c->sync_missed = c->sync_extra = 0;
    c->sync_checked = false;
    c->t = j->set->traces[i];
    p->st = build_rank(c, (uint32_t)i, &p->err);
    p->recorded = c->sync_recorded;
    p->matched = c->sync_matched;
    p->missed = c->sync_missed;
    p->extra = c->sync_extra;
    p->checked = c->sync_checked;
    if (p->st == SC_OK && j->opts->release_traces) p->released = release_trace(j->set->traces[i]);
}

static void *par_worker(void *arg) {
    par_job *j = arg;
    sc__bctx c;
    bool ok = ctx_init(&c, NULL, j->opts, NULL);
    for (;;) {
        pthread_mutex_lock(&j->mu);
        while (!j->stop && j->next < j->count && j->next >= j->merged + PAR_AHEAD)
            pthread_cond_wait(&j->cv, &j->mu);
        if (j->stop || j->next >= j->count) {
            pthread_mutex_unlock(&j->mu);
            break;
        }
        size_t i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (ok) build_part(j, &c, i);
        else j->parts[i].st = sc__fail(&j->parts[i].err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        pthread_mutex_lock(&j->mu);
        j->parts[i].done = true;
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&j->mu);
    }
    ctx_free(&c);
    return NULL;
}

/* Appends one rank's graph p (and its comm records) to g, renumbering. */
static bool append_part(sc__graph *g, sc__vec *comms, rank_part *part) {
    sc__graph *p = part->g;
    uint32_t toff = (uint32_t)g->tasks.len, poff = (uint32_t)g->procs.len;
    uint32_t ooff = (uint32_t)g->ops.len, roff = (uint32_t)g->ranks.len;
    uint32_t ns = p->strings.count;
    uint32_t *smap = sc__alloc_array(ns ? ns : 1, sizeof *smap);
    if (!smap) return false;
    bool ok = true;
    for (uint32_t k = 0; k < ns && ok; k++) {
        smap[k] = sc__intern_put(&g->strings, sc__intern_str(&p->strings, k), sc__intern_len(&p->strings, k));
        ok = smap[k] != SC__NONE;
    }
#define MAPS(id) ((id) < ns ? smap[id] : (id))
    size_t nt = p->tasks.len, np = p->procs.len, no = p->ops.len, nr = p->ranks.len, ne = p->edge_list.len;
    ok = ok && p->groups.len == 0 && sc__vec_reserve(&g->tasks, g->tasks.len + nt) &&
         sc__vec_reserve(&g->procs, g->procs.len + np) && sc__vec_reserve(&g->ops, g->ops.len + no) &&
         sc__vec_reserve(&g->ranks, g->ranks.len + nr) && sc__vec_reserve(&g->edge_list, g->edge_list.len + ne) &&
         sc__vec_reserve(&g->proc_backlog, g->proc_backlog.len + p->proc_backlog.len) &&
         sc__vec_reserve(comms, comms->len + part->comms.len);
    if (ok) {
        /* The job's arrays are fresh memory, written front to back here:
         * fault each stretch in at once rather than a page at a time. */
        sc__prefault(sc__vec_end(&g->tasks), nt * g->tasks.elem);
        sc__prefault(sc__vec_end(&g->edge_list), ne * g->edge_list.elem);
        sc__prefault(sc__vec_end(&g->ops), no * g->ops.elem);
        const sc__rank *pr = (const sc__rank *)p->ranks.data;
        sc__rank *gr = (sc__rank *)sc__vec_end(&g->ranks);
        for (size_t k = 0; k < nr; k++) {
            gr[k] = pr[k];
            gr[k].first_task += toff;
            if (gr[k].step_first_task != SC__NONE) gr[k].step_first_task += toff;
            if (gr[k].step_last_task != SC__NONE) gr[k].step_last_task += toff;
        }
        g->ranks.len += nr;
        const sc__proc *pp = (const sc__proc *)p->procs.data;
        sc__proc *gp = (sc__proc *)sc__vec_end(&g->procs);
        for (size_t k = 0; k < np; k++) {
            gp[k] = pp[k];
            gp[k].rank += roff;
        }
        g->procs.len += np;
        const sc__op *po = (const sc__op *)p->ops.data;
        sc__op *go = (sc__op *)sc__vec_end(&g->ops);
        for (size_t k = 0; k < no; k++) {
            go[k] = po[k];
            go[k].name = MAPS(po[k].name);
            if (po[k].parent != SC__NONE) go[k].parent += ooff;
            if (po[k].module != SC__NONE) go[k].module = MAPS(po[k].module);
        }
        g->ops.len += no;
        const sc__task *pt = (const sc__task *)p->tasks.data;
        sc__task *gt = (sc__task *)sc__vec_end(&g->tasks);
        for (size_t k = 0; k < nt; k++) {
            gt[k] = pt[k];
            gt[k].proc += poff;
            gt[k].name = MAPS(pt[k].name);
            if (pt[k].op != SC__NONE) gt[k].op += ooff;
            if (pt[k].sync_arg != SC__NONE) {
                if (pt[k].sync == SC_SYNC_STREAM) gt[k].sync_arg += poff;
                else if (pt[k].sync == SC_SYNC_TASK) gt[k].sync_arg += toff;
            }
        }
        g->tasks.len += nt;
        const sc__edge *pe = (const sc__edge *)p->edge_list.data;
        sc__edge *ge = (sc__edge *)sc__vec_end(&g->edge_list);
        for (size_t k = 0; k < ne; k++) ge[k] = (sc__edge){pe[k].from + toff, pe[k].to + toff, pe[k].family};
        g->edge_list.len += ne;
        if (p->proc_backlog.len)
            memcpy((int64_t *)sc__vec_end(&g->proc_backlog), p->proc_backlog.data,
                   p->proc_backlog.len * sizeof(int64_t));
        g->proc_backlog.len += p->proc_backlog.len;
        const sc__comm_rec *pc = (const sc__comm_rec *)part->comms.data;
        sc__comm_rec *gc = (sc__comm_rec *)sc__vec_end(comms);
        for (size_t k = 0; k < part->comms.len; k++) {
            gc[k] = pc[k];
            gc[k].task += toff;
            gc[k].rank += roff;
            if (pc[k].pg != SC__NONE) gc[k].pg = MAPS(pc[k].pg);
            if (pc[k].pg_ranks != SC__NONE) gc[k].pg_ranks = MAPS(pc[k].pg_ranks);
        }
        comms->len += part->comms.len;
        for (size_t k = 0; k < p->warnings.count && ok; k++) ok = sc__graph_warn(g, "%s", p->warnings.items[k]);
    }
#undef MAPS
    free(smap);
    return ok;
}

static void part_free(rank_part *p) {
    sc__graph_free(p->g);
    p->g = NULL;
    sc__vec_free(&p->comms);
}

/* Builds every rank with `threads` workers, appending in rank order. */
static sc_status build_parallel(sc__bctx *c, const sc_traceset *set, const sc__build_options *opts,
                                unsigned threads, sc__vec *comms, uint64_t *traces_held,
                                sc_error *err) {
    par_job j;
    memset(&j, 0, sizeof j);
    j.set = set;
    j.opts = opts;
    j.count = set->count;
    j.parts = calloc(set->count, sizeof *j.parts);
    if (!j.parts) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    pthread_t tids[16];
    unsigned started = 0;
    for (unsigned k = 0; k < threads && k < 16; k++)
        if (pthread_create(&tids[started], NULL, par_worker, &j) == 0) started++;
    sc_status st = started ? SC_OK : sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "cannot start threads");
    for (size_t i = 0; i < j.count && st == SC_OK; i++) {
        pthread_mutex_lock(&j.mu);
        while (!j.parts[i].done) pthread_cond_wait(&j.cv, &j.mu);
        pthread_mutex_unlock(&j.mu);
        rank_part *p = &j.parts[i];
        if (p->st != SC_OK) {
            *err = p->err;
            st = p->st;
        } else if (!append_part(c->g, comms, p)) {
            st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        } else {
            *traces_held -= p->released;
            st = check_rank_budget(c->g, set, i, *traces_held, comms, err);
            c->sync_recorded += p->recorded;
            c->sync_matched += p->matched;
            c->sync_missed += p->missed;
            c->sync_extra += p->extra;
            c->sync_checked |= p->checked;
        }
        part_free(p);
        sc__progress_ranks(set->progress, 1);
        if (opts->release_traces && i % 32 == 31) give_back_freed();
        pthread_mutex_lock(&j.mu);
        j.merged = i + 1;
        if (st != SC_OK) j.stop = true;
        pthread_cond_broadcast(&j.cv);
        pthread_mutex_unlock(&j.mu);
    }
    for (unsigned k = 0; k < started; k++) pthread_join(tids[k], NULL);
    for (size_t i = 0; i < j.count; i++) part_free(&j.parts[i]);
    free(j.parts);
    pthread_mutex_destroy(&j.mu);
    pthread_cond_destroy(&j.cv);
    return st;
}

/* Ranks are built in parallel with the thread cap the set was loaded with
 * (sc_load_options.threads, -j), at most 16. */
static unsigned build_threads(const sc_traceset *set) {
    unsigned n = set->threads;
    if (n > 16) n = 16;
    return set->count < 2 ? 1 : n;
}

sc_status sc__graph_build_kineto_stats(const sc_traceset *set, const sc__build_options *opts,
                                       sc__graph **out, sc__build_stats *stats, sc_error *err) {
    *out = NULL;
    if (stats) memset(stats, 0, sizeof *stats);
    sc__build_options defaults = {.iteration = -1};
    if (!opts) opts = &defaults;
    sc__graph *g = sc__graph_new();
    if (!g) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    /* One consistent job? Duplicate ranks, world-size mismatches are errors;
     * partial jobs, clock skew, uneven collectives are warnings. */
    sc_status jst = sc__traceset_check_job(set, job_warn, g, err);
    if (jst != SC_OK) {
        sc__graph_free(g);
        return jst;
    }
    /* Uneven collective counts: measured here (the events may be released
     * while building), said once after matching (below). */
    char coll_msg[256] = "";
    bool coll_differ = sc__traceset_collective_counts_differ(set, coll_msg, sizeof coll_msg);
    sc__vec comms;
    sc__vec_init(&comms, sizeof(sc__comm_rec));
    sc__bctx c;
    sc_status st = SC_OK;
    if (!ctx_init(&c, g, opts, &comms)) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    sc__build_options common = *opts;
    if (st == SC_OK && opts->iteration < 0 && set->count > 1) {
        st = common_iteration(&c, set, &common.iteration, err);
        c.opts = &common;
    }
    unsigned threads = build_threads(set);
    uint64_t traces_held = sc__traceset_memory(set);
    sc__progress_stage(set->progress, "build", set->count);
    if (st == SC_OK && threads > 1) st = build_parallel(&c, set, c.opts, threads, &comms, &traces_held, err);
    for (size_t i = 0; st == SC_OK && threads <= 1 && i < set->count; i++) {
        c.t = set->traces[i];
        st = build_rank(&c, (uint32_t)i, err);
        if (st == SC_OK && opts->release_traces) {
            traces_held -= release_trace(set->traces[i]);
            if (i % 32 == 31) give_back_freed();
        }
        if (st == SC_OK) st = check_rank_budget(g, set, i, traces_held, &comms, err);
        sc__progress_ranks(set->progress, 1);
    }
    if (opts->release_traces) give_back_freed();
    sc__progress_flush(set->progress);
    bool uneven = false;
    if (st == SC_OK) st = sc__build_collectives(g, &comms, &uneven, err);
    /* The matching named the uneven communicators of the replayed iteration
     * already; else the whole traces differ outside it, or by ranks that do
     * not use a communicator at all. */
    if (st == SC_OK && coll_differ && !uneven &&
        !sc__graph_warn(g, "%s; in the replayed iteration the ranks that use each communicator "
                           "agree, and ranks that use none are left out of its collectives",
                        coll_msg))
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    g->keep_spare = opts->keep_spare;
    g->finish_threads = set->threads; /* also for one rank: finishing is not per rank */
    g->budget = set->budget;
    g->budget_held = traces_held + sc__vec_bytes(&comms);
    if (st == SC_OK) st = sc__graph_finish(g, true, err);
    if (st == SC_OK) {
        shrink(&g->tasks);
        shrink(&g->procs);
        shrink(&g->ops);
        shrink(&g->groups);
        shrink(&g->group_members);
        shrink(&g->ranks);
        shrink(&g->proc_backlog);
    }
    if (stats) {
        stats->sync_checked = c.sync_checked;
        stats->recorded = c.sync_recorded;
        stats->matched = c.sync_matched;
        stats->missed = c.sync_missed;
        stats->extra = c.sync_extra;
        stats->threads = threads;
    }
    ctx_free(&c);
    sc__vec_free(&comms);
    if (st != SC_OK) {
        sc__graph_free(g);
        return st;
    }
    *out = g;
    return SC_OK;
}

sc_status sc__graph_build_kineto(const sc_traceset *set, const sc__build_options *opts,
                                 sc__graph **out, sc_error *err) {
    return sc__graph_build_kineto_stats(set, opts, out, NULL, err);
}
