/*
 * chrome.c - `replay --chrome FILE`: the simulated timeline and the measured
 * one beside it, as Chrome-trace JSON (ui.perfetto.dev, chrome://tracing).
 *
 * Each rank becomes two processes: "rank N simulated" (pid 2k) and
 * "rank N measured" (pid 2k+1), with one track per processor (thread or
 * stream) named like the trace's. Both timelines start at 0 at the rank's
 * step start (simulated: the start of the step's first task; measured: the
 * builder's step_start), so a task can be compared by eye across the pair.
 * A rank with no traced task (a step synthesised by `stepcast model`, a
 * graph without times) has no measured process rather than an empty one.
 * Each simulated task says in its args what started it (the edge family
 * whose predecessor ended last, or the processor's own order) and, for syncs
 * and collectives, which task it waited for (a task of a CUDA graph also
 * its graph_gap_us, graph.h): the critical path's raw
 * material, readable in the UI. Tasks appear in graph order with fixed
 * number formats, so the file is
 * byte-identical across runs. The CLI writes it through sc_output_*, i.e.
 * to a temporary name renamed into place.
 */
#include "../pipeline/replay.h"

#include <stdlib.h>

/* Chunked writing: keep the buffer small for 100k+ events. */
static bool flush_if_big(sc__buf *b, FILE *out, bool force) {
    if (b->oom) return false;
    if (!force && b->len < (1u << 20)) return true;
    if (b->len && fwrite(b->data, 1, b->len, out) != b->len) return false;
    b->len = 0;
    if (b->data) b->data[0] = '\0';
    return true;
}

static void meta(sc__buf *b, const char *what, uint32_t pid, uint32_t tid, const char *name, bool thread) {
    sc__buf_printf(b, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,", what, pid);
    if (thread) sc__buf_printf(b, "\"tid\":%u,", tid);
    sc__buf_puts(b, "\"args\":{\"name\":");
    sc__buf_json_cstr(b, name);
    sc__buf_puts(b, "}}");
}

/* why: for a simulated task, what set its start (an edge family, or
 * "rank_start") and, for a sync or collective, what it waited for; NULL for
 * a measured one. */
static void task_event(sc__buf *b, const sc__graph *g, const sc__task *t, uint32_t pid, int64_t start,
                       int64_t dur, const char *why, const char *waited) {
    const char *name = sc__graph_str(g, t->name);
    sc__buf_printf(b, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\",\"name\":",
                   pid, t->proc, (double)start / 1000.0, (double)(dur > 0 ? dur : 0) / 1000.0,
                   sc__task_kind_name(t->kind));
    sc__buf_json_cstr(b, name);
    if (why) {
        sc__buf_printf(b, ",\"args\":{\"started_by\":\"%s\"", why);
        if ((t->flags & SC__TF_GRAPH_GAP) && t->gap > 0) /* after the untraced part of its CUDA graph */
            sc__buf_printf(b, ",\"graph_gap_us\":%.3f", (double)t->gap / 1000.0);
        if ((t->flags & SC__TF_UNTRACED_GAP) && t->gap > 0) /* after a stall nothing traced explains */
            sc__buf_printf(b, ",\"untraced_gap_us\":%.3f", (double)t->gap / 1000.0);
        if (waited) {
            sc__buf_puts(b, ",\"waited_for\":");
            sc__buf_json_cstr(b, waited);
        }
        sc__buf_puts(b, "}");
    }
    sc__buf_puts(b, "}");
}

sc_status sc_replay_write_chrome(const sc_replay *r, FILE *out, sc_error *err) {
    const sc__graph *g = r->g;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_puts(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
                     "{\"ph\":\"M\",\"name\":\"stepcast\",\"pid\":0,\"args\":{\"name\":\"stepcast replay\"}}");
    char name[96];
    bool *traced = calloc(r->nranks ? r->nranks : 1, sizeof *traced);
    if (!traced) {
        sc__buf_free(&b);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    for (size_t i = 0; i < g->tasks.len; i++)
        if (tasks[i].event != SC__NONE && procs[tasks[i].proc].rank < r->nranks) traced[procs[tasks[i].proc].rank] = true;
    for (size_t k = 0; k < r->nranks; k++) {
        for (int measured = 0; measured < 1 + traced[k]; measured++) {
            uint32_t pid = (uint32_t)(2 * k + (size_t)measured);
            snprintf(name, sizeof name, "rank %lld %s", (long long)r->ranks[k].rank,
                     measured ? "measured" : "simulated");
            meta(&b, "process_name", pid, 0, name, false);
            sc__buf_printf(&b, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,"
                               "\"args\":{\"sort_index\":%u}}", pid, pid);
        }
    }
    for (size_t p = 0; p < g->procs.len; p++) {
        snprintf(name, sizeof name, "%s %lld", procs[p].kind == SC_P_THREAD ? "thread" : "stream",
                 (long long)procs[p].id);
        uint32_t lanes = procs[p].rank < r->nranks && traced[procs[p].rank] ? 2 : 1;
        for (uint32_t measured = 0; measured < lanes; measured++)
            meta(&b, "thread_name", 2 * procs[p].rank + measured, (uint32_t)p, name, true);
    }
    bool ok = flush_if_big(&b, out, false);
    for (size_t i = 0; ok && i < g->tasks.len; i++) {
        const sc__task *t = &tasks[i];
        uint32_t k = procs[t->proc].rank;
        if (k >= r->nranks) continue;
        const sc__replay_rank *rr = &r->ranks[k];
        uint8_t fam = r->sim.bound_fam[i];
        uint32_t w = r->sim.waited[i];
        task_event(&b, g, t, 2 * k, r->sim.start[i] - rr->sim_start, r->sim.end[i] - r->sim.start[i],
                   fam == SC_SIM_ROOT ? "rank_start" : sc__edge_family_name(fam),
                   w != SC__NONE && w != i ? sc__graph_str(g, tasks[w].name) : NULL);
        if (t->event != SC__NONE) {
            const sc__rank *gr = &SC__VEC_AT(&g->ranks, sc__rank, k);
            task_event(&b, g, t, 2 * k + 1, t->ts - gr->step_start,
                       r->traced_dur ? r->traced_dur[i] : t->dur, NULL, NULL);
        }
        ok = flush_if_big(&b, out, false);
    }
    sc__buf_puts(&b, "\n]}\n");
    ok = ok && flush_if_big(&b, out, true);
    sc__buf_free(&b);
    free(traced);
    if (!ok) return sc__fail(err, SC_E_IO, NULL, SC_NO_OFFSET, "cannot write the Chrome trace");
    return SC_OK;
}
