/*
 * benchgen_report.c - `stepcast benchgen`'s outputs, from the op lists of
 * src/pipeline/benchgen.c:
 *   - the data file (bench_ops.json): per rank, the units the program runs,
 *     each with its target (namespace, op, overload), the schema's
 *     parameter names and types, the traced argument values, types, shapes
 *     (and strides when recorded) as the ET spells them, its outputs, its
 *     stream and the units on other streams it waits for; collectives with
 *     their kind, sequence number, process group, group size and splits;
 *   - the program (bench.py): the template src/report/benchgen_template.py,
 *     built into the library as a string (the Makefile generates it);
 *   - the report: ranks, leaf ops by what the program does with them,
 *     coverage by op name, collectives by kind and size (with --shrink as
 *     the program will issue them), GPU work launched outside every
 *     replayed op, streams and waits.
 */
#include "../pipeline/benchgen.h"

#include <stdio.h>
#include <stdlib.h>

extern const char sc__benchgen_template[];

static const char *str(const sc_et *et, uint32_t id) { return id == SC__NONE ? "" : sc__intern_str(&et->strings, id); }

static const sc__et_node *node_at(const sc_et *et, uint32_t i) { return &((const sc__et_node *)et->nodes.data)[i]; }

/* A raw JSON value as recorded, "[]" when absent. */
static void put_raw(sc__buf *b, const sc_et *et, uint32_t id) {
    const char *s = str(et, id);
    sc__buf_puts(b, s[0] ? s : "[]");
}

static void put_span_str(sc__buf *b, sc__span s) { sc__buf_json_str(b, s.s, s.n); }

/* "target": [ns, op, overload], "pnames": [...], "ptypes": [...], "kwonly": k */
static void put_schema(sc__buf *b, const char *schema) {
    sc__bg_schema s;
    if (!sc__bg_parse_schema(schema, &s)) return;
    sc__buf_puts(b, ", \"target\": [");
    put_span_str(b, s.ns);
    sc__buf_puts(b, ", ");
    put_span_str(b, s.op);
    sc__buf_puts(b, ", ");
    if (s.overload.n) put_span_str(b, s.overload);
    else sc__buf_puts(b, "\"default\"");
    sc__buf_puts(b, "], \"pnames\": [");
    for (uint32_t i = 0; i < s.nparams; i++) {
        if (i) sc__buf_puts(b, ", ");
        put_span_str(b, s.name[i]);
    }
    sc__buf_puts(b, "], \"ptypes\": [");
    for (uint32_t i = 0; i < s.nparams; i++) {
        if (i) sc__buf_puts(b, ", ");
        put_span_str(b, s.type[i]);
    }
    sc__buf_printf(b, "], \"kwonly\": %u", s.kwonly);
}

/* A node's arguments and outputs, raw as the ET has them. */
static void put_io(sc__buf *b, const sc_et *et, const sc__et_node *n) {
    sc__buf_puts(b, ", \"args\": ");
    put_raw(b, et, n->in_values);
    sc__buf_puts(b, ", \"types\": ");
    put_raw(b, et, n->in_types);
    sc__buf_puts(b, ", \"shapes\": ");
    put_raw(b, et, n->in_shapes);
    if (n->in_strides != SC__NONE) {
        sc__buf_puts(b, ", \"strides\": ");
        put_raw(b, et, n->in_strides);
    }
    sc__buf_puts(b, ", \"outs\": ");
    put_raw(b, et, n->out_values);
    sc__buf_puts(b, ", \"otypes\": ");
    put_raw(b, et, n->out_types);
    sc__buf_puts(b, ", \"oshapes\": ");
    put_raw(b, et, n->out_shapes);
}

static void put_comm(sc__buf *b, const sc_et *et, const sc__bg_comm *c) {
    sc__buf_puts(b, ", \"coll\": ");
    put_span_str(b, c->kind);
    sc__buf_printf(b, ", \"seq\": %lld, \"pg\": %lld, \"group\": %lld", (long long)c->seq, (long long)c->pg,
                   (long long)c->group_size);
    if (c->in_split.n) {
        sc__buf_puts(b, ", \"in_split\": ");
        sc__buf_put(b, c->in_split.s, c->in_split.n);
        sc__buf_puts(b, ", \"out_split\": ");
        sc__buf_put(b, c->out_split.s, c->out_split.n);
    }
    put_io(b, et, node_at(et, c->info_node));
}

static void put_unit(sc__buf *b, const sc__bg_rank *r, size_t i) {
    const sc__bg_unit *u = &((const sc__bg_unit *)r->units.data)[i];
    const sc_et *et = r->et;
    const sc__et_node *n = node_at(et, u->node);
    sc__buf_printf(b, "    {\"i\": %zu, \"id\": %lld, \"k\": \"%s\", \"name\": ", i, (long long)n->id,
                   sc__bg_kind_name((sc__bg_kind)u->kind));
    sc__buf_json_cstr(b, str(et, n->name));
    sc__buf_printf(b, ", \"stream\": %d, \"record\": %d, \"waits\": [", u->stream, u->record);
    const uint32_t *w = r->waits.data;
    for (uint32_t j = 0; j < u->wait_count; j++) sc__buf_printf(b, "%s%u", j ? ", " : "", w[u->wait_first + j]);
    sc__buf_puts(b, "]");
    if (u->kind == SC__BG_CALL) {
        put_schema(b, str(et, n->schema));
        put_io(b, et, n);
    } else if (u->kind == SC__BG_COLL || u->kind == SC__BG_WAIT) {
        put_comm(b, et, &((const sc__bg_comm *)r->comms.data)[u->comm]);
    } else if (u->kind == SC__BG_EMULATED) {
        sc__buf_printf(b, ", \"buf\": %u", u->emu_buf);
    }
    sc__buf_puts(b, "}");
}

static void put_rank_data(sc__buf *b, const sc__bg_rank *r) {
    sc__buf_printf(b, "  {\"rank\": %lld, \"et\": ", (long long)r->rank);
    sc__buf_json_cstr(b, r->et->path);
    sc__buf_puts(b, ", \"kineto\": ");
    if (r->kineto && !r->kineto_mismatch) sc__buf_json_cstr(b, r->kineto->path);
    else sc__buf_puts(b, "null");
    sc__buf_printf(b, ", \"step\": %lld, \"main_stream\": %d, \"leaves\": %llu, \"skipped_leaves\": %llu, \"ops\": [\n",
                   (long long)r->step, r->main_stream, (unsigned long long)r->leaves,
                   (unsigned long long)r->leaves_by_kind[SC__BG_SKIP]);
    const sc__bg_unit *u = r->units.data;
    bool first = true;
    for (size_t i = 0; i < r->units.len; i++) {
        if (u[i].kind == SC__BG_SKIP || u[i].kind == SC__BG_MARKER) continue;
        if (!first) sc__buf_puts(b, ",\n");
        first = false;
        put_unit(b, r, i);
    }
    sc__buf_puts(b, "\n  ]}");
}

sc_status sc_benchgen_write_data(const sc_benchgen *bg, FILE *out, sc_error *err) {
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_printf(&b, "{\"format\": \"stepcast-benchgen 1\", \"device\": \"%s\", \"shrink\": %u, \"iterations\": %u,\n"
                       "\"ranks\": [\n",
                   bg->opts.device_cpu ? "cpu" : "cuda", bg->opts.shrink, bg->opts.iterations);
    for (size_t i = 0; i < bg->nranks; i++) {
        if (i) sc__buf_puts(&b, ",\n");
        put_rank_data(&b, &bg->ranks[i]);
    }
    sc__buf_puts(&b, "\n]}\n");
    return sc__buf_write(&b, out, err);
}

sc_status sc_benchgen_write_program(const sc_benchgen *bg, FILE *out, sc_error *err) {
    (void)bg;
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_puts(&b, sc__benchgen_template);
    return sc__buf_write(&b, out, err);
}

/* ---- the report ---- */

/* Elements of a shape list (one tensor's, or a list of tensors'), each
 * dimension shrunk by k. */
static uint64_t shape_elems(const char *raw, int64_t k, int depth) {
    sc__span it[32];
    int n = sc__bg_json_items(raw, it, 32);
    if (n <= 0 || depth > 4) return n == 0 ? 1 : 0;
    if (it[0].s[0] == '[') {
        uint64_t sum = 0;
        char buf[1024];
        for (int i = 0; i < n && i < 32; i++) {
            if (it[i].n >= sizeof buf) return 0;
            memcpy(buf, it[i].s, it[i].n);
            buf[it[i].n] = '\0';
            sum += shape_elems(buf, k, depth + 1);
        }
        return sum;
    }
    uint64_t p = 1;
    for (int i = 0; i < n && i < 32; i++) p *= (uint64_t)sc__bg_shrink_dim(strtoll(it[i].s, NULL, 10), k);
    return p;
}

typedef struct coll_row {
    sc__span kind;
    int64_t group;
    uint64_t elems, bytes;
    uint32_t count;
} coll_row;

static int cmp_row(const void *a, const void *b) {
    const coll_row *x = a, *y = b;
    uint32_t n = x->kind.n < y->kind.n ? x->kind.n : y->kind.n;
    int c = memcmp(x->kind.s, y->kind.s, n);
    if (c || x->kind.n != y->kind.n) return c ? c : (x->kind.n < y->kind.n ? -1 : 1);
    if (x->elems != y->elems) return x->elems < y->elems ? -1 : 1;
    return x->group < y->group ? -1 : x->group > y->group;
}

/* Collectives by kind, group and size (the input's elements after shrink). */
static size_t coll_rows(const sc__bg_rank *r, int64_t k, coll_row *rows, size_t cap) {
    size_t n = 0;
    const sc__bg_comm *c = r->comms.data;
    for (size_t i = 0; i < r->comms.len; i++) {
        if (c[i].kind.n == 4 && memcmp(c[i].kind.s, "wait", 4) == 0) continue;
        const sc__et_node *nd = node_at(r->et, c[i].info_node);
        sc__span it[2];
        uint64_t e = 0;
        if (sc__bg_json_items(str(r->et, nd->in_shapes), it, 2) >= 1) {
            char buf[2048];
            if (it[0].n < sizeof buf) {
                memcpy(buf, it[0].s, it[0].n);
                buf[it[0].n] = '\0';
                e = buf[0] == '[' ? shape_elems(buf, k, 0) : 0;
            }
        }
        size_t j = 0;
        while (j < n && !(rows[j].elems == e && rows[j].group == c[i].group_size && rows[j].kind.n == c[i].kind.n &&
                          memcmp(rows[j].kind.s, c[i].kind.s, c[i].kind.n) == 0))
            j++;
        if (j == n) {
            if (n == cap) continue;
            rows[n++] = (coll_row){c[i].kind, c[i].group_size, e, e * c[i].elem_size, 0};
        }
        rows[j].count++;
    }
    qsort(rows, n, sizeof *rows, cmp_row);
    return n;
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

/* Which iteration the program replays, and the ops run whole. */
static void text_step(sc__buf *b, const sc__bg_rank *r) {
    if (r->step < 0) {
        sc__buf_printf(b, "  %-14sthe whole ET (it has no ProfilerStep node)\n", "iteration");
    } else {
        sc__buf_printf(b, "  %-14sProfilerStep#%lld (the ET has #%lld to #%lld", "iteration", (long long)r->step,
                       (long long)r->et_steps[0], (long long)r->et_steps[1]);
        if (r->kineto_steps[0] >= 0)
            sc__buf_printf(b, ", the Kineto trace #%lld to #%lld", (long long)r->kineto_steps[0],
                           (long long)r->kineto_steps[1]);
        sc__buf_printf(b, ")%s\n", r->kineto_lacks_step ? ": not in the Kineto trace" : "");
    }
    if (r->whole_ops)
        sc__buf_printf(b, "  %-14s%u aten ops with operator children run whole (GPU work of their own, or "
                          "children that only allocate or view)\n",
                       "run whole", r->whole_ops);
}

static void text_rank(sc__buf *b, const sc__bg_rank *r, int64_t k) {
    const uint64_t *lk = r->leaves_by_kind;
    uint64_t run = lk[SC__BG_CALL] + lk[SC__BG_COLL] + lk[SC__BG_WAIT] + lk[SC__BG_EMULATED];
    sc__buf_printf(b, "rank %lld  %s", (long long)r->rank, r->et->path);
    if (r->kineto) sc__buf_printf(b, " + %s%s", r->kineto->path, r->kineto_mismatch ? " (not linked: another iteration?)" : "");
    sc__buf_puts(b, "\n");
    text_step(b, r);
    sc__buf_printf(b, "  %-14s%llu: %llu calls, %llu in collectives, %llu waits, %llu emulated Triton kernels, "
                      "%llu markers (no tensor work), %llu skipped\n",
                   "leaf ops", (unsigned long long)r->leaves, (unsigned long long)lk[SC__BG_CALL],
                   (unsigned long long)lk[SC__BG_COLL], (unsigned long long)lk[SC__BG_WAIT],
                   (unsigned long long)lk[SC__BG_EMULATED], (unsigned long long)lk[SC__BG_MARKER],
                   (unsigned long long)lk[SC__BG_SKIP]);
    sc__buf_printf(b, "  %-14s%.1f%% of leaf ops (run exactly %.1f%%, emulated %.1f%%, markers %.1f%%)\n", "replayable",
                   pct(run + lk[SC__BG_MARKER], r->leaves), pct(run - lk[SC__BG_EMULATED], r->leaves),
                   pct(lk[SC__BG_EMULATED], r->leaves), pct(lk[SC__BG_MARKER], r->leaves));
    for (int i = 1; i < SC__BGR_COUNT; i++)
        if (r->skipped_by_reason[i])
            sc__buf_printf(b, "  %-14s%llu leaf ops: %s\n", "skipped", (unsigned long long)r->skipped_by_reason[i],
                           sc__bg_reason_text((sc__bg_reason)i));
    size_t nunits = 0, waits = r->waits.len;
    const sc__bg_unit *u = r->units.data;
    for (size_t i = 0; i < r->units.len; i++) nunits += u[i].kind != SC__BG_SKIP && u[i].kind != SC__BG_MARKER;
    sc__buf_printf(b, "  %-14s%zu (main stream %d, %zu cross-stream waits)\n", "program ops", nunits, r->main_stream, waits);
    if (r->kineto && !r->kineto_mismatch) {
        sc__buf_printf(b, "  %-14s%llu launched inside the ET's ops, %llu inside replayed ops (%.1f%%)\n", "GPU ops",
                       (unsigned long long)r->kernels_total, (unsigned long long)r->kernels_covered,
                       pct(r->kernels_covered, r->kernels_total));
        const sc__bg_gap *g = r->gaps.data;
        for (size_t i = 0; i < r->gaps.len; i++)
            sc__buf_printf(b, "  %-14s%u GPU ops in %u x %s (kernels of no replayed op)\n", i ? "" : "left out",
                           g[i].kernels, g[i].ops, str(r->et, g[i].name));
    }
    coll_row rows[64];
    size_t nr = coll_rows(r, k, rows, 64);
    for (size_t i = 0; i < nr; i++)
        sc__buf_printf(b, "  %-14s%.*s x%u: %llu elements (%llu bytes), group %lld%s\n", i ? "" : "collectives",
                       (int)rows[i].kind.n, rows[i].kind.s, rows[i].count, (unsigned long long)rows[i].elems,
                       (unsigned long long)rows[i].bytes, (long long)rows[i].group, rows[i].group < 0 ? " (world)" : "");
    sc__buf_printf(b, "  %-14s", "by op name");
    const sc__bg_name *nm = r->names.data;
    for (size_t i = 0; i < r->names.len; i++)
        sc__buf_printf(b, "%s%s %u/%u%s", i ? ", " : "", str(r->et, nm[i].name), nm[i].run + nm[i].markers,
                       nm[i].leaves, nm[i].markers ? " (markers)" : "");
    sc__buf_puts(b, "\n");
}

static void json_rank(sc__buf *b, const sc__bg_rank *r, int64_t k) {
    const uint64_t *lk = r->leaves_by_kind;
    uint64_t run = lk[SC__BG_CALL] + lk[SC__BG_COLL] + lk[SC__BG_WAIT] + lk[SC__BG_EMULATED];
    sc__buf_printf(b, "{\"rank\": %lld, \"et\": ", (long long)r->rank);
    sc__buf_json_cstr(b, r->et->path);
    sc__buf_puts(b, ", \"kineto\": ");
    if (r->kineto) sc__buf_json_cstr(b, r->kineto->path);
    else sc__buf_puts(b, "null");
    sc__buf_printf(b, ", \"kineto_mismatch\": %s, \"step\": %lld, \"et_steps\": [%lld, %lld], \"kineto_steps\": [%lld, %lld]"
                      ", \"whole_ops\": %u, \"leaves\": %llu, \"leaves_by_kind\": {",
                   r->kineto_mismatch ? "true" : "false", (long long)r->step, (long long)r->et_steps[0],
                   (long long)r->et_steps[1], (long long)r->kineto_steps[0], (long long)r->kineto_steps[1], r->whole_ops,
                   (unsigned long long)r->leaves);
    for (int i = 0; i < SC__BG_KINDS; i++)
        sc__buf_printf(b, "%s\"%s\": %llu", i ? ", " : "", sc__bg_kind_name((sc__bg_kind)i), (unsigned long long)lk[i]);
    sc__buf_printf(b, "}, \"replayable_pct\": %.2f, \"exact_pct\": %.2f, \"skipped\": {",
                   pct(run + lk[SC__BG_MARKER], r->leaves), pct(run - lk[SC__BG_EMULATED], r->leaves));
    bool first = true;
    for (int i = 1; i < SC__BGR_COUNT; i++) {
        if (!r->skipped_by_reason[i]) continue;
        sc__buf_printf(b, "%s", first ? "" : ", ");
        sc__buf_json_cstr(b, sc__bg_reason_text((sc__bg_reason)i));
        sc__buf_printf(b, ": %llu", (unsigned long long)r->skipped_by_reason[i]);
        first = false;
    }
    sc__buf_printf(b, "}, \"main_stream\": %d, \"cross_stream_waits\": %zu, \"gpu_ops\": %llu, \"gpu_ops_replayed\": %llu, "
                      "\"left_out\": [",
                   r->main_stream, r->waits.len, (unsigned long long)r->kernels_total,
                   (unsigned long long)r->kernels_covered);
    const sc__bg_gap *g = r->gaps.data;
    for (size_t i = 0; i < r->gaps.len; i++) {
        sc__buf_puts(b, i ? ", {\"op\": " : "{\"op\": ");
        sc__buf_json_cstr(b, str(r->et, g[i].name));
        sc__buf_printf(b, ", \"ops\": %u, \"gpu_ops\": %u}", g[i].ops, g[i].kernels);
    }
    sc__buf_puts(b, "], \"collectives\": [");
    coll_row rows[64];
    size_t nr = coll_rows(r, k, rows, 64);
    for (size_t i = 0; i < nr; i++) {
        sc__buf_puts(b, i ? ", {\"kind\": " : "{\"kind\": ");
        put_span_str(b, rows[i].kind);
        sc__buf_printf(b, ", \"count\": %u, \"elements\": %llu, \"bytes\": %llu, \"group\": %lld}", rows[i].count,
                       (unsigned long long)rows[i].elems, (unsigned long long)rows[i].bytes, (long long)rows[i].group);
    }
    sc__buf_puts(b, "], \"by_op\": [");
    const sc__bg_name *nm = r->names.data;
    for (size_t i = 0; i < r->names.len; i++) {
        sc__buf_puts(b, i ? ", {\"op\": " : "{\"op\": ");
        sc__buf_json_cstr(b, str(r->et, nm[i].name));
        sc__buf_printf(b, ", \"leaves\": %u, \"run\": %u, \"markers\": %u}", nm[i].leaves, nm[i].run, nm[i].markers);
    }
    sc__buf_puts(b, "]}");
}

sc_status sc_benchgen_write(const sc_benchgen *bg, FILE *out, int json, sc_error *err) {
    sc__buf b;
    sc__buf_init(&b);
    int64_t k = bg->opts.shrink;
    if (json) {
        sc__buf_printf(&b, "{\"device\": \"%s\", \"shrink\": %u, \"iterations\": %u, \"ranks\": [\n",
                       bg->opts.device_cpu ? "cpu" : "cuda", bg->opts.shrink, bg->opts.iterations);
        for (size_t i = 0; i < bg->nranks; i++) {
            if (i) sc__buf_puts(&b, ",\n");
            json_rank(&b, &bg->ranks[i], k);
        }
        sc__buf_puts(&b, "\n]}\n");
    } else {
        sc__buf_printf(&b, "benchmark of %zu rank%s for %s, %u timed iterations%s\n", bg->nranks,
                       bg->nranks == 1 ? "" : "s", bg->opts.device_cpu ? "the CPU (half types widened to float)" : "CUDA",
                       bg->opts.iterations, k > 1 ? ", large dimensions shrunk" : "");
        if (k > 1) sc__buf_printf(&b, "shrink        dimensions >= 64 that %lld divides are divided by it\n", (long long)k);
        for (size_t i = 0; i < bg->nranks; i++) text_rank(&b, &bg->ranks[i], k);
    }
    return sc__buf_write(&b, out, err);
}
