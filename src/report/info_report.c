/*
 * info_report.c - `stepcast info`: the figures of each rank (worked out by
 * src/pipeline/info.c) as text for people or JSON for scripts. Both are
 * built in memory with fixed formats and written at once.
 */
#include "../pipeline/info.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const ck_type_names[SC__INFO_CK_TYPES] = {
    "invalid", "metadata", "mem_load", "mem_store", "comp", "send", "recv", "coll"};
static const char *const ck_comm_names[SC__INFO_CK_COMMS] = {
    "all_reduce", "reduce", "all_gather", "gather", "scatter", "broadcast", "all_to_all",
    "reduce_scatter", "reduce_scatter_block", "barrier"};

/* ------------------------------------------------------------ Kineto */

static void put_counts_json(sc__buf *b, const sc__counts *c) {
    sc__buf_puts(b, "{");
    for (size_t i = 0; i < c->count; i++) {
        if (i) sc__buf_puts(b, ", ");
        sc__buf_json_cstr(b, c->items[i].key);
        sc__buf_printf(b, ": %llu", (unsigned long long)c->items[i].count);
    }
    sc__buf_puts(b, "}");
}

static void put_kineto_json(sc__buf *b, const sc__rank_info *ri) {
    sc__buf_printf(b, "\"world_size\": %lld, ", (long long)ri->world_size);
    sc__buf_puts(b, "\"gpu\": ");
    sc__buf_json_cstr(b, ri->gpu);
    sc__buf_printf(b, ", \"bytes\": %llu, \"events\": %llu, \"categories\": ",
                   (unsigned long long)ri->input_bytes, (unsigned long long)ri->events);
    put_counts_json(b, &ri->cats);
    sc__buf_printf(b, ", \"kernels\": %llu, \"kernels_per_stream\": ", (unsigned long long)ri->kernels);
    put_counts_json(b, &ri->streams);
    sc__buf_printf(b, ", \"collectives\": %llu, \"collectives_by_kind\": ", (unsigned long long)ri->nccl);
    put_counts_json(b, &ri->colls);
    sc__buf_puts(b, ", \"iterations\": [");
    for (size_t i = 0; i < ri->niters; i++) {
        const char *name = ri->iters[i].name;
        sc__buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
        sc__buf_json_cstr(b, name);
        sc__buf_printf(b, ", \"dur_us\": %.3f}", (double)ri->iters[i].dur_ns / 1000.0);
    }
    sc__buf_printf(b, "], \"gpu_busy_us\": %.3f}", (double)ri->busy_ns / 1000.0);
}

static void put_counts_text(sc__buf *b, const char *label, const sc__counts *c) {
    sc__buf_printf(b, "  %-20s", label);
    for (size_t i = 0; i < c->count; i++)
        sc__buf_printf(b, "%s%s=%llu", i ? ", " : "", c->items[i].key, (unsigned long long)c->items[i].count);
    sc__buf_puts(b, c->count ? "\n" : "-\n");
}

static void put_kineto_text(sc__buf *b, const sc__rank_info *ri) {
    sc__buf_printf(b, "rank %lld of %lld  %s\n", (long long)ri->rank, (long long)ri->world_size, ri->file);
    sc__buf_printf(b, "  %-20s%s\n", "gpu", ri->gpu[0] ? ri->gpu : "(unknown)");
    sc__buf_printf(b, "  %-20s%llu (%.1f MB of JSON)\n", "events", (unsigned long long)ri->events,
                   (double)ri->input_bytes / 1e6);
    put_counts_text(b, "categories", &ri->cats);
    sc__buf_printf(b, "  %-20s%llu\n", "kernels", (unsigned long long)ri->kernels);
    put_counts_text(b, "kernels per stream", &ri->streams);
    sc__buf_printf(b, "  %-20s%llu\n", "nccl collectives", (unsigned long long)ri->nccl);
    put_counts_text(b, "collective kinds", &ri->colls);
    for (size_t i = 0; i < ri->niters; i++)
        sc__buf_printf(b, "  %-20s%s %.3f ms\n", i ? "" : "iterations", ri->iters[i].name,
                       (double)ri->iters[i].dur_ns / 1e6);
    if (!ri->niters) sc__buf_printf(b, "  %-20s(none annotated)\n", "iterations");
    sc__buf_printf(b, "  %-20s%.3f ms\n", "gpu busy", (double)ri->busy_ns / 1e6);
}

/* ------------------------------------------------------------ Chakra */

/* Appends the nonzero counts v[0..n] (v[n]: "unknown") as "a=1, b=2" or
 * as JSON members; false when all are zero. */
static bool put_ck_counts(sc__buf *b, const uint64_t *v, int n, const char *const *names, bool json) {
    bool any = false;
    for (int i = 0; i <= n; i++) {
        if (!v[i]) continue;
        sc__buf_printf(b, json ? "%s\"%s\": %llu" : "%s%s=%llu", any ? ", " : "", i < n ? names[i] : "unknown",
                       (unsigned long long)v[i]);
        any = true;
    }
    return any;
}

static void put_chakra_json(sc__buf *b, const sc__rank_info *ri) {
    sc__buf_puts(b, "\"version\": ");
    sc__buf_json_cstr(b, ri->version);
    sc__buf_printf(b, ", \"bytes\": %llu, \"nodes\": %llu, \"nodes_by_type\": {",
                   (unsigned long long)ri->input_bytes, (unsigned long long)ri->nodes);
    put_ck_counts(b, ri->by_type, SC__INFO_CK_TYPES, ck_type_names, true);
    sc__buf_printf(b, "}, \"cpu_nodes\": %llu, \"dependencies\": %llu, \"collectives_by_kind\": {",
                   (unsigned long long)ri->cpu, (unsigned long long)ri->deps);
    put_ck_counts(b, ri->gpu_coll, SC__INFO_CK_COMMS, ck_comm_names, true);
    sc__buf_printf(b, "}, \"duration_us_sum\": %llu}", (unsigned long long)ri->dur_us);
}

static void put_chakra_text(sc__buf *b, const sc__rank_info *ri) {
    sc__buf_printf(b, "rank %lld  %s (Chakra ET, version %s)\n", (long long)ri->rank, ri->file,
                   ri->version[0] ? ri->version : "(none)");
    sc__buf_printf(b, "  %-20s%llu (%llu bytes)\n", "nodes", (unsigned long long)ri->nodes,
                   (unsigned long long)ri->input_bytes);
    sc__buf_printf(b, "  %-20s", "nodes by type");
    bool any = put_ck_counts(b, ri->by_type, SC__INFO_CK_TYPES, ck_type_names, false);
    sc__buf_printf(b, "%s\n  %-20s%llu\n  %-20s%llu\n", any ? "" : "-", "cpu nodes",
                   (unsigned long long)ri->cpu, "dependencies", (unsigned long long)ri->deps);
    sc__buf_printf(b, "  %-20s", "collectives");
    any = put_ck_counts(b, ri->gpu_coll, SC__INFO_CK_COMMS, ck_comm_names, false);
    sc__buf_printf(b, "%s\n  %-20s%.3f ms\n", any ? "" : "-", "sum of durations", (double)ri->dur_us / 1e3);
}

/* ------------------------------------------------------------ the report */

static void put_rank_json(sc__buf *b, const sc__rank_info *ri) {
    bool chakra = ri->format == SC__FMT_CHAKRA;
    sc__buf_puts(b, "    {\"file\": ");
    sc__buf_json_cstr(b, ri->file);
    if (chakra) sc__buf_puts(b, ", \"format\": \"chakra\"");
    sc__buf_printf(b, ", \"rank\": %lld, ", (long long)ri->rank);
    if (chakra) put_chakra_json(b, ri);
    else put_kineto_json(b, ri);
}

sc_status sc_info_write(const sc_info *info, FILE *out, int json, sc_error *err) {
    if (!info || !out) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "info: no summary or no output");
    sc__buf b;
    sc__buf_init(&b);
    if (json) sc__buf_puts(&b, "{\n  \"ranks\": [\n");
    for (size_t i = 0; i < info->nranks; i++) {
        const sc__rank_info *ri = &info->ranks[i];
        if (json) {
            put_rank_json(&b, ri);
            sc__buf_puts(&b, i + 1 < info->nranks ? ",\n" : "\n");
        } else if (ri->format == SC__FMT_CHAKRA) {
            put_chakra_text(&b, ri);
        } else {
            put_kineto_text(&b, ri);
        }
    }
    if (json) {
        sc__buf_puts(&b, "  ],\n  \"warnings\": [");
        for (size_t i = 0; i < info->warnings.count; i++) {
            sc__buf_puts(&b, i ? ", " : "");
            sc__buf_json_cstr(&b, info->warnings.items[i]);
        }
        sc__buf_puts(&b, "]\n}\n");
    }
    return sc__buf_write(&b, out, err);
}
