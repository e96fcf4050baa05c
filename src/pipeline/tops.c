/*
 * tops.c - what took the simulated time, summed over every rank: GPU
 * kernels by name, operators by name, and collectives by kind, ranks and
 * size with the bus bandwidth they achieved. The HTML report (and any
 * script, through stepcast.h's accessors) reads these tables; they are
 * computed once, after the simulation, in one pass over the tasks.
 *
 *   - a kernel's time is its simulated span (start to end) on its stream;
 *     communication tasks are left to the collectives' table, where the
 *     time spent waiting for the last arrival is told apart;
 *   - an operator's GPU time is that of the GPU tasks its launches
 *     enqueued (the innermost operator around the launch, as the critical
 *     path attributes them), its CPU time that of the CPU tasks directly
 *     under it (self time, with the untraced gap before each); its count is
 *     its calls (operator instances of the graph);
 *   - a collective's transfer is its group's (the last arrival's kernel as
 *     calibrated, then --scale'd or re-timed by predict's model); its bus
 *     bandwidth is nccl-tests' (size over transfer, times the kind's bus
 *     factor, models/comm.c); a member's wait is its simulated span minus
 *     the transfer. Rows are one kind, communicator size and power-of-two
 *     size bucket, as `stepcast comm` groups them; medians are lower ones
 *     (a value that occurred).
 */
#include "replay.h"

#include "../models/comm.h"

#include <stdlib.h>

#define KEEP_KERNELS 50
#define KEEP_OPERATORS 50

static const char *kernel_class(const sc__task *t, uint8_t cls) {
    if (t->kind == SC_T_MEMCPY) return "memcpy";
    if (t->kind == SC_T_MEMSET) return "memset";
    if (cls == SC_SCALE_GEMM) return "gemm";
    if (cls == SC_SCALE_ATTENTION) return "attention";
    return "other_kernel";
}

static int cmp_time(const void *a, const void *b) {
    const sc_time_item *x = a, *y = b;
    int64_t tx = x->ns + x->cpu_ns, ty = y->ns + y->cpu_ns;
    if (tx != ty) return tx > ty ? -1 : 1;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The named entries of a per-string table with any time or count, sorted,
 * the first keep of them kept. */
static sc_time_item *collect(sc_time_item *per_name, size_t nstr, size_t keep, size_t *out_n) {
    size_t k = 0;
    for (size_t i = 0; i < nstr; i++)
        if (per_name[i].ns || per_name[i].cpu_ns || per_name[i].count) per_name[k++] = per_name[i];
    qsort(per_name, k, sizeof *per_name, cmp_time);
    *out_n = k < keep ? k : keep;
    sc_time_item *items = sc__alloc_array(*out_n ? *out_n : 1, sizeof *items);
    if (items && *out_n) memcpy(items, per_name, *out_n * sizeof *items);
    return items;
}

static bool kernels_and_operators(sc_replay *r) {
    const sc__graph *g = r->g;
    const sc__task *tasks = sc__graph_tasks(g);
    size_t nstr = g->strings.count ? g->strings.count : 1;
    sc_time_item *kern = calloc(nstr, sizeof *kern), *ops = calloc(nstr, sizeof *ops);
    bool ok = kern && ops;
    for (size_t i = 0; ok && i < g->tasks.len; i++) {
        const sc__task *t = &tasks[i];
        int64_t span = r->sim.end[i] - r->sim.start[i];
        uint32_t op = t->op != SC__NONE && t->op < g->ops.len ? SC__VEC_AT(&g->ops, sc__op, t->op).name : SC__NONE;
        if (!sc__task_on_gpu(t->kind)) {
            if (op != SC__NONE) ops[op].cpu_ns += span + (t->kind == SC_T_CPU ? t->gap : 0);
            continue;
        }
        if (sc__task_is_comm(t->kind)) continue;
        sc_time_item *k = &kern[t->name];
        k->ns += span;
        k->count++;
        if (span > k->max_ns) k->max_ns = span;
        k->cls = kernel_class(t, r->cls[i]);
        if (op != SC__NONE) ops[op].ns += span;
    }
    for (size_t i = 0; ok && i < g->ops.len; i++) ops[SC__VEC_AT(&g->ops, sc__op, i).name].count++;
    for (size_t s = 0; ok && s < g->strings.count; s++) {
        kern[s].name = ops[s].name = sc__graph_str(g, (uint32_t)s);
        ops[s].cls = "";
        if (!kern[s].cls) kern[s].cls = "";
    }
    if (ok) {
        r->tops.kernels = collect(kern, g->strings.count, KEEP_KERNELS, &r->tops.nkernels);
        r->tops.ops = collect(ops, g->strings.count, KEEP_OPERATORS, &r->tops.nops);
        ok = r->tops.kernels && r->tops.ops;
    }
    free(kern);
    free(ops);
    return ok;
}

/* ------------------------------------------------------------ collectives */

typedef struct coll {
    uint8_t type;
    uint32_t ranks;
    int bucket;     /* bit length of bytes; 127 when unknown */
    int64_t bytes;  /* -1: unknown */
    int64_t transfer_ns, wait_ns; /* wait: summed over the members */
    uint32_t members;
    double busbw;   /* -1: unknown */
} coll;

static int bit_length(int64_t b) {
    int k = 0;
    while (k < 63 && ((int64_t)1 << k) <= b) k++;
    return k;
}

static int cmp_coll(const void *a, const void *b) {
    const coll *x = a, *y = b;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    if (x->ranks != y->ranks) return x->ranks < y->ranks ? -1 : 1;
    if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return x->transfer_ns < y->transfer_ns ? -1 : x->transfer_ns > y->transfer_ns;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static coll coll_of(const sc_replay *r, const sc__group *grp) {
    const uint32_t *members = r->g->group_members.data;
    coll c = {.type = grp->type < SC_C_COUNT ? grp->type : SC_C_UNKNOWN,
              .ranks = sc__replay_group_ranks(r, grp),
              .bytes = grp->bytes,
              .transfer_ns = grp->transfer_ns,
              .members = grp->count,
              .busbw = -1};
    c.bucket = c.bytes < 0 ? 127 : bit_length(c.bytes);
    for (uint32_t m = 0; m < grp->count; m++) {
        uint32_t t = members[grp->first + m];
        int64_t wait = r->sim.end[t] - r->sim.start[t] - grp->transfer_ns;
        if (wait > 0) c.wait_ns += wait;
    }
    if (c.bytes >= 0 && c.transfer_ns > 0) /* bytes per ns are GB/s */
        c.busbw = (double)c.bytes / (double)c.transfer_ns * sc__comm_bus_factor(c.type, c.ranks);
    return c;
}

/* One row per run of c[0 .. n) of one kind, ranks and bucket (sorted);
 * ns and bw are scratch of n entries. */
static void coll_rows(sc_replay *r, const coll *c, size_t n, int64_t *ns, double *bw) {
    for (size_t i = 0; i < n;) {
        size_t j = i, nbw = 0;
        int64_t total = 0, wait = 0;
        uint64_t members = 0;
        for (; j < n && c[j].type == c[i].type && c[j].ranks == c[i].ranks && c[j].bucket == c[i].bucket; j++) {
            ns[j - i] = c[j].transfer_ns;
            if (c[j].busbw >= 0) bw[nbw++] = c[j].busbw;
            total += c[j].transfer_ns;
            wait += c[j].wait_ns;
            members += c[j].members;
        }
        size_t cnt = j - i;
        qsort(ns, cnt, sizeof *ns, sc__cmp_i64);
        qsort(bw, nbw, sizeof *bw, cmp_double);
        r->tops.colls[r->tops.ncolls++] = (sc_replay_collective){
            .op = sc__coll_type_name(c[i].type), .ranks = c[i].ranks, .bytes = c[i + (cnt - 1) / 2].bytes,
            .count = cnt, .transfer_ns = ns[(cnt - 1) / 2], .total_ns = total,
            .wait_ns = members ? wait / (int64_t)members : 0, .busbw_gbps = nbw ? bw[(nbw - 1) / 2] : -1};
        i = j;
    }
}

static bool collectives(sc_replay *r) {
    const sc__graph *g = r->g;
    size_t n = g->groups.len, n1 = n ? n : 1;
    coll *c = sc__alloc_array(n1, sizeof *c);
    int64_t *ns = sc__alloc_array(n1, sizeof *ns);
    double *bw = sc__alloc_array(n1, sizeof *bw);
    r->tops.colls = sc__alloc_array(n1, sizeof *r->tops.colls);
    bool ok = c && ns && bw && r->tops.colls;
    if (ok) {
        for (size_t i = 0; i < n; i++) c[i] = coll_of(r, &SC__VEC_AT(&g->groups, sc__group, i));
        qsort(c, n, sizeof *c, cmp_coll);
        coll_rows(r, c, n, ns, bw);
    }
    free(c);
    free(ns);
    free(bw);
    return ok;
}

bool sc__replay_tops(sc_replay *r) {
    if (r->tops.computed) return true;
    bool ok = kernels_and_operators(r) && collectives(r);
    if (!ok) sc__replay_tops_free(&r->tops);
    r->tops.computed = ok;
    return ok;
}

/* The tables, computed the first time one is asked for (a replay that no
 * one asks costs nothing more): the accessors take a const replay, whose
 * tables are a cache. Out of memory: empty tables. */
static const sc__tops *tops_of(const sc_replay *r) {
    sc__replay_tops((sc_replay *)r);
    return &r->tops;
}

void sc__replay_tops_free(sc__tops *t) {
    free(t->kernels);
    free(t->ops);
    free(t->colls);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ accessors */

size_t sc_replay_top_kernels(const sc_replay *r, const sc_time_item **items) {
    *items = r ? tops_of(r)->kernels : NULL;
    return r ? r->tops.nkernels : 0;
}

size_t sc_replay_top_operators(const sc_replay *r, const sc_time_item **items) {
    *items = r ? tops_of(r)->ops : NULL;
    return r ? r->tops.nops : 0;
}

size_t sc_replay_collective_count(const sc_replay *r) { return r ? tops_of(r)->ncolls : 0; }

sc_status sc_replay_collective_at(const sc_replay *r, size_t i, sc_replay_collective *out, sc_error *err) {
    if (!r || !out || i >= tops_of(r)->ncolls)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "replay collective row %zu out of range", i);
    *out = r->tops.colls[i];
    return SC_OK;
}
