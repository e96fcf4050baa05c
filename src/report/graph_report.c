/*
 * graph_report.c - `stepcast graph`: what the execution graph of a trace set
 * holds, so people can check it before trusting a replay.
 *
 * Per rank: the iteration and measured step, processors, task counts by
 * kind, edge counts by family (an edge is counted on the rank of its
 * source task), operators. For the job: cross-rank groups by type, how many
 * tasks they tie together, how many were left unmatched, how many have a
 * message size (sc__group.bytes) and its range per type, the self-check of
 * the cross-stream inference (when a trace carries cuda_sync events) and the
 * builder's warnings. Text for people, JSON for scripts; `--dot` writes the
 * graph itself for small inputs (Graphviz, one cluster per processor).
 * The graph comes built from the pipeline (src/pipeline/job.c); output is
 * built in memory and written at once; it is deterministic.
 */
#include "../pipeline/job.h"

#include <stdlib.h>

typedef struct rank_counts {
    uint64_t kinds[SC_T_COUNT];
    uint64_t families[SC_E_FAMILY_COUNT];
} rank_counts;

static void count_rank(const sc__graph *g, uint32_t r, rank_counts *rc) {
    memset(rc, 0, sizeof *rc);
    const sc__rank *rk = &SC__VEC_AT(&g->ranks, sc__rank, r);
    const sc__task *t = sc__graph_tasks(g);
    for (uint32_t i = rk->first_task; i < rk->first_task + rk->ntasks; i++) {
        rc->kinds[t[i].kind < SC_T_COUNT ? t[i].kind : 0]++;
        for (uint32_t k = g->succ_off[i]; k < g->succ_off[i + 1]; k++)
            rc->families[g->succ_family[k] < SC_E_FAMILY_COUNT ? g->succ_family[k] : 0]++;
    }
}

typedef struct group_counts {
    uint64_t by_type[SC_C_COUNT];
    uint64_t groups, members, multi_rank, unmatched;
    uint32_t largest;
    /* Groups with a message size: how many, and per type how many and
     * their smallest and largest size in bytes. */
    uint64_t with_bytes, sized[SC_C_COUNT];
    int64_t min_bytes[SC_C_COUNT], max_bytes[SC_C_COUNT];
} group_counts;

static void count_bytes(group_counts *gc, uint8_t type, int64_t bytes) {
    if (bytes < 0) return;
    gc->with_bytes++;
    if (!gc->sized[type]++ || bytes < gc->min_bytes[type]) gc->min_bytes[type] = bytes;
    if (bytes > gc->max_bytes[type]) gc->max_bytes[type] = bytes;
}

static void count_groups(const sc__graph *g, group_counts *gc) {
    memset(gc, 0, sizeof *gc);
    const sc__group *grp = g->groups.data;
    for (size_t i = 0; i < g->groups.len; i++) {
        uint8_t type = grp[i].type < SC_C_COUNT ? grp[i].type : SC_C_UNKNOWN;
        gc->groups++;
        gc->by_type[type]++;
        gc->members += grp[i].count;
        gc->multi_rank += grp[i].count > 1;
        if (grp[i].count > gc->largest) gc->largest = grp[i].count;
        count_bytes(gc, type, grp[i].bytes);
    }
    const sc__task *t = sc__graph_tasks(g);
    for (size_t i = 0; i < g->tasks.len; i++) gc->unmatched += (t[i].flags & SC__TF_UNMATCHED) != 0;
}

static void json_counts(sc__buf *b, const uint64_t *v, size_t n, const char *(*name)(uint8_t)) {
    sc__buf_puts(b, "{");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (!v[i]) continue;
        sc__buf_printf(b, "%s\"%s\": %llu", first ? "" : ", ", name((uint8_t)i), (unsigned long long)v[i]);
        first = false;
    }
    sc__buf_puts(b, "}");
}

static void text_counts(sc__buf *b, const char *label, const uint64_t *v, size_t n,
                        const char *(*name)(uint8_t)) {
    sc__buf_printf(b, "  %-16s", label);
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (!v[i]) continue;
        sc__buf_printf(b, "%s%s=%llu", first ? "" : ", ", name((uint8_t)i), (unsigned long long)v[i]);
        first = false;
    }
    sc__buf_puts(b, first ? "-\n" : "\n");
}

/* "with_bytes": N, "bytes_by_type": {"all_reduce": {"groups": 84, "min": 32768, ...}} */
static void json_bytes(sc__buf *b, const group_counts *gc) {
    sc__buf_printf(b, ", \"with_bytes\": %llu, \"bytes_by_type\": {", (unsigned long long)gc->with_bytes);
    bool first = true;
    for (uint8_t t = 0; t < SC_C_COUNT; t++) {
        if (!gc->sized[t]) continue;
        sc__buf_printf(b, "%s\"%s\": {\"groups\": %llu, \"min\": %lld, \"max\": %lld}", first ? "" : ", ",
                       sc__coll_type_name(t), (unsigned long long)gc->sized[t], (long long)gc->min_bytes[t],
                       (long long)gc->max_bytes[t]);
        first = false;
    }
    sc__buf_puts(b, "}");
}

/* A size for people: "64 MiB", "13.2 KiB", "4 B". */
static void text_size(sc__buf *b, int64_t bytes) {
    sc__size s = sc__size_in_units((uint64_t)bytes, 4); /* bytes >= 0: count_bytes */
    if (s.value == (double)s.whole) sc__buf_printf(b, "%llu %s", (unsigned long long)s.whole, s.unit);
    else sc__buf_printf(b, "%.1f %s", s.value, s.unit);
}

/* "84 of 84 groups with a message size", then the range per type. */
static void text_bytes(sc__buf *b, const group_counts *gc) {
    sc__buf_printf(b, "  %-16s%llu of %llu groups with a message size\n", "message sizes",
                   (unsigned long long)gc->with_bytes, (unsigned long long)gc->groups);
    for (uint8_t t = 0; t < SC_C_COUNT; t++) {
        if (!gc->sized[t]) continue;
        sc__buf_printf(b, "  %-16s%s: %llu, ", "", sc__coll_type_name(t), (unsigned long long)gc->sized[t]);
        text_size(b, gc->min_bytes[t]);
        if (gc->max_bytes[t] != gc->min_bytes[t]) {
            sc__buf_puts(b, " to ");
            text_size(b, gc->max_bytes[t]);
        }
        sc__buf_puts(b, "\n");
    }
}

static void put_json(sc__buf *b, const sc_graph *jg) {
    const sc__graph *g = jg->g;
    const sc__build_stats *st = &jg->stats;
    sc__buf_puts(b, "{\n  \"ranks\": [\n");
    for (uint32_t r = 0; r < g->ranks.len; r++) {
        sc_graph_rank gr;
        sc_graph_rank_at(jg, r, &gr, NULL);
        rank_counts rc;
        count_rank(g, r, &rc);
        sc__buf_printf(b, "    {\"rank\": %lld, \"file\": ", (long long)gr.rank);
        sc__buf_json_cstr(b, gr.file);
        sc__buf_puts(b, ", \"iteration\": ");
        if (*gr.iteration) sc__buf_json_cstr(b, gr.iteration);
        else sc__buf_puts(b, "null");
        sc__buf_printf(b, ", \"measured_step_us\": %.3f, \"threads\": %u, \"streams\": %u, \"ops\": %u, "
                          "\"tasks\": %u, \"tasks_by_kind\": ",
                       (double)gr.measured_step_ns / 1e3, gr.threads, gr.streams, gr.operators, gr.tasks);
        json_counts(b, rc.kinds, SC_T_COUNT, sc__task_kind_name);
        sc__buf_puts(b, ", \"edges_by_family\": ");
        json_counts(b, rc.families, SC_E_FAMILY_COUNT, sc__edge_family_name);
        sc__buf_puts(b, r + 1 < g->ranks.len ? "},\n" : "}\n");
    }
    group_counts gc;
    count_groups(g, &gc);
    sc__buf_printf(b, "  ],\n  \"tasks\": %zu, \"edges\": %llu,\n", g->tasks.len, (unsigned long long)g->nedges);
    sc__buf_printf(b, "  \"cross_rank\": {\"groups\": %llu, \"multi_rank_groups\": %llu, \"members\": %llu, "
                      "\"largest\": %u, \"unmatched_tasks\": %llu, \"by_type\": ",
                   (unsigned long long)gc.groups, (unsigned long long)gc.multi_rank,
                   (unsigned long long)gc.members, gc.largest, (unsigned long long)gc.unmatched);
    json_counts(b, gc.by_type, SC_C_COUNT, sc__coll_type_name);
    json_bytes(b, &gc);
    sc__buf_puts(b, "},\n");
    if (st->sync_checked)
        sc__buf_printf(b, "  \"sync_inference\": {\"recorded\": %llu, \"matched\": %llu, \"missed\": %llu, "
                          "\"extra\": %llu},\n",
                       (unsigned long long)st->recorded, (unsigned long long)st->matched,
                       (unsigned long long)st->missed, (unsigned long long)st->extra);
    /* The load's warnings, then the builder's. */
    sc__buf_puts(b, "  \"warnings\": [");
    for (size_t i = 0; i < sc_graph_warning_count(jg); i++) {
        const char *w = sc_graph_warning(jg, i);
        sc__buf_puts(b, i ? ", " : "");
        sc__buf_json_cstr(b, w);
    }
    sc__buf_puts(b, "]\n}\n");
}

static void put_text(sc__buf *b, const sc_graph *jg) {
    const sc__graph *g = jg->g;
    const sc__build_stats *st = &jg->stats;
    for (uint32_t r = 0; r < g->ranks.len; r++) {
        sc_graph_rank gr;
        sc_graph_rank_at(jg, r, &gr, NULL);
        rank_counts rc;
        count_rank(g, r, &rc);
        sc__buf_printf(b, "rank %lld  %s\n", (long long)gr.rank, gr.file);
        sc__buf_printf(b, "  %-16s%s\n", "iteration", *gr.iteration ? gr.iteration : "(whole trace)");
        sc__buf_printf(b, "  %-16s%.3f ms (annotation start to the end of the last task it caused)\n",
                       "measured step", (double)gr.measured_step_ns / 1e6);
        sc__buf_printf(b, "  %-16s%u threads, %u streams, %u operators\n", "processors", gr.threads,
                       gr.streams, gr.operators);
        sc__buf_printf(b, "  %-16s%u\n", "tasks", gr.tasks);
        text_counts(b, "by kind", rc.kinds, SC_T_COUNT, sc__task_kind_name);
        text_counts(b, "edges by family", rc.families, SC_E_FAMILY_COUNT, sc__edge_family_name);
    }
    group_counts gc;
    count_groups(g, &gc);
    sc__buf_printf(b, "job: %zu tasks, %llu edges\n", g->tasks.len, (unsigned long long)g->nedges);
    sc__buf_printf(b, "  %-16s%llu groups (%llu across ranks, largest %u), %llu tasks, %llu unmatched\n",
                   "cross-rank", (unsigned long long)gc.groups, (unsigned long long)gc.multi_rank,
                   gc.largest, (unsigned long long)gc.members, (unsigned long long)gc.unmatched);
    text_counts(b, "group types", gc.by_type, SC_C_COUNT, sc__coll_type_name);
    if (gc.groups) text_bytes(b, &gc);
    if (st->sync_checked)
        sc__buf_printf(b, "  %-16srecorded %llu, matched %llu, missed %llu, extra %llu\n", "sync inference",
                       (unsigned long long)st->recorded, (unsigned long long)st->matched,
                       (unsigned long long)st->missed, (unsigned long long)st->extra);
    /* The trace set's own warnings (skipped files...) are the caller's to
     * show (the CLI prints them on stderr); JSON carries both kinds. */
    for (size_t i = 0; i < g->warnings.count; i++) sc__buf_printf(b, "warning: %s\n", g->warnings.items[i]);
}

sc_status sc_graph_write(const sc_graph *jg, FILE *out, int json, sc_error *err) {
    sc__buf b;
    sc__buf_init(&b);
    if (json) put_json(&b, jg);
    else put_text(&b, jg);
    return sc__buf_write(&b, out, err);
}

/* ------------------------------------------------------------------ dot */

static void dot_task_label(sc__buf *b, const sc__graph *g, uint32_t i) {
    const sc__task *t = &sc__graph_tasks(g)[i];
    const char *name = sc__graph_str(g, t->name);
    char shortname[48];
    size_t n = strlen(name);
    if (n > 40) n = 40;
    memcpy(shortname, name, n);
    shortname[n] = '\0';
    char label[96];
    snprintf(label, sizeof label, "%s\n%s %.1fus", shortname, sc__task_kind_name(t->kind),
             (double)t->dur / 1e3);
    sc__buf_json_cstr(b, label); /* JSON escaping is valid DOT quoting */
}

sc_status sc_graph_write_dot(const sc_graph *jg, FILE *out, sc_error *err) {
    const sc__graph *g = jg->g;
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_puts(&b, "digraph stepcast {\n  rankdir=LR;\n  node [shape=box, fontsize=9];\n");
    const sc__proc *p = sc__graph_procs(g);
    const sc__task *t = sc__graph_tasks(g);
    for (size_t pi = 0; pi < g->procs.len; pi++) {
        int64_t rank = SC__VEC_AT(&g->ranks, sc__rank, p[pi].rank).rank;
        sc__buf_printf(&b, "  subgraph cluster_%zu {\n    label=\"rank %lld %s %lld\";\n", pi,
                       (long long)rank, p[pi].kind == SC_P_THREAD ? "thread" : "stream",
                       (long long)p[pi].id);
        for (size_t i = 0; i < g->tasks.len; i++) {
            if (t[i].proc != pi) continue;
            sc__buf_printf(&b, "    t%zu [label=", i);
            dot_task_label(&b, g, (uint32_t)i);
            sc__buf_puts(&b, "];\n");
        }
        sc__buf_puts(&b, "  }\n");
    }
    static const char *colors[SC_E_FAMILY_COUNT] = {"black", "purple", "blue", "gray",
                                                    "red",   "orange", "green", "brown"};
    for (size_t i = 0; i < g->tasks.len; i++)
        for (uint32_t k = g->succ_off[i]; k < g->succ_off[i + 1]; k++) {
            uint8_t f = g->succ_family[k];
            sc__buf_printf(&b, "  t%zu -> t%u [color=%s];\n", i, g->succ[k],
                           f < SC_E_FAMILY_COUNT ? colors[f] : "black");
        }
    const sc__group *grp = g->groups.data;
    const uint32_t *mem = g->group_members.data;
    for (size_t i = 0; i < g->groups.len; i++)
        for (uint32_t m = 1; m < grp[i].count; m++)
            sc__buf_printf(&b, "  t%u -> t%u [style=dashed, dir=none, color=darkgreen];\n",
                           mem[grp[i].first], mem[grp[i].first + m]);
    sc__buf_puts(&b, "}\n");
    return sc__buf_write(&b, out, err);
}
