/*
 * build_chakra.c - the execution graph of a set of Chakra ranks (loaded by
 * src/readers/chakra.c, which checked every frame and message). It maps
 * Chakra onto the sc__graph contract (graph.h):
 *
 *   - one rank per file; tasks of a rank in a topological order of its
 *     dependencies that keeps file order wherever the file allows it;
 *   - COMP_NODE -> SC_T_KERNEL, or SC_T_CPU when is_cpu_op; COMM_COLL_NODE ->
 *     SC_T_COLL (SC_T_CPU when is_cpu_op: the host-side record of the call);
 *     COMM_SEND/RECV -> SC_T_SEND/RECV; MEM_LOAD/STORE -> SC_T_MEMCPY;
 *     anything else -> a CPU task (a type past COMM_COLL_NODE with a
 *     warning);
 *   - processors: CPU nodes run on the thread named by their `tid` attr
 *     (0 when absent); GPU nodes on the stream named by `stream`, else
 *     `tid`, else a default per role: compute 0, collectives 1, sends 2,
 *     receives 3 (device from a `device` attr, else 0). Tasks of a processor
 *     run in the topological order, so order edges never contradict deps;
 *   - data_deps -> SC_E_DATA, ctrl_deps -> SC_E_CTRL. A dependency on an id
 *     the file lacks, or of a node on itself, is dropped with a warning
 *     (how many, and the first node). Converter output has ctrl
 *     deps that loop (parent <-> child): when data and ctrl
 *     deps together are cyclic, the order follows the data deps alone and
 *     the ctrl deps pointing backwards are dropped with a warning; cyclic
 *     data deps fail in sc__graph_finish (SC_E_GRAPH, naming the cycle);
 *   - durations: duration_micros x 1000 ns. Collectives and send/recv
 *     without a duration get an alpha-beta time: 10 us + moved bytes /
 *     100 GB/s, moving 2(n-1)/n of comm_size for all-reduce, (n-1)/n for
 *     all-gather, reduce-scatter and all-to-all, comm_size for the others and
 *     for point-to-point, nothing for a barrier (n = ranks in the group);
 *     a collective without comm_size (a warning names the first) moves
 *     nothing: it lasts 10 us;
 *   - cross-rank groups: the k-th collective of each rank with the same
 *     pg_name ("" when absent) form one group; the k-th send from s to d
 *     with tag t pairs with the k-th receive from s to d with tag t (a send's
 *     source and a receive's destination default to the file's rank). A pair
 *     becomes an edge send -> recv (the send does not wait for its receiver,
 *     as in ASTRA-sim; see eager_pair), except in files stepcast wrote, where
 *     it stays what it was exported from (a rendezvous group, or an edge for
 *     nodes marked sc_eager);
 *   - message sizes: comm_size (bytes) in ASTRA-sim's convention, the
 *     buffer each rank starts with, is sc__group.bytes' (nccl-tests') but
 *     for an all-gather, where it is one rank's piece: the group's size is
 *     then the pieces of its members. stepcast's exports write
 *     sc_bytes, the size in sc__group.bytes' convention, where that
 *     product would not give it back. A group's size is the largest of its
 *     members'; a send or receive outside any group keeps its own in
 *     g->loose_bytes, so that an export writes it again;
 *   - measured step window: from the start_time_micros present (none: 0).
 *
 * Files written by stepcast's exporter (GlobalMetadata generator
 * "stepcast ...") also carry sc_* attributes (exact ns times, gaps, task
 * kinds, syncs, edge families, operator names, the step window) that make
 * export -> import reproduce the graph the export started from
 * (src/report/chakra_export.c writes them).
 */
#include "../readers/chakra_wire.h"
#include "../trace/trace.h"
#include "graph.h"

#include <stdlib.h>

/* The communication model for collectives without a recorded duration. */
#define CK_ALPHA_NS 10000     /* 10 us per collective */
#define CK_BYTES_PER_NS 100.0 /* 100 GB/s bus bandwidth */

/* One decoded node, compact; deps live in the per-rank ctrl/data vectors. */
typedef struct ck_node {
    uint64_t id;
    int64_t dur, ts, gap, bytes, sync_arg, proc_id;
    uint32_t name, pg;
    uint32_t op_name; /* interned sc_op, SC__NONE when absent */
    uint32_t ctrl_first, ctrl_count, data_first, data_count;
    uint32_t fam_off;  /* into the rank's family bytes, SC__NONE when none */
    int32_t src, dst, tag, device;
    uint16_t flags;
    uint8_t ck_type, kind, sync, coll_type, on_stream, has_dur, has_start, eager;
    uint8_t piece; /* bytes is one rank's piece (an all-gather's comm_size) */
} ck_node;

static uint8_t coll_from_chakra(int64_t t) {
    switch (t) {
    case SC__CK_ALL_REDUCE: return SC_C_ALL_REDUCE;
    case SC__CK_REDUCE: return SC_C_REDUCE;
    case SC__CK_ALL_GATHER: return SC_C_ALL_GATHER;
    case SC__CK_GATHER: return SC_C_GATHER;
    case SC__CK_SCATTER: return SC_C_SCATTER;
    case SC__CK_BROADCAST: return SC_C_BROADCAST;
    case SC__CK_ALL_TO_ALL: return SC_C_ALL_TO_ALL;
    case SC__CK_REDUCE_SCATTER:
    case SC__CK_REDUCE_SCATTER_BLOCK: return SC_C_REDUCE_SCATTER;
    case SC__CK_BARRIER: return SC_C_BARRIER;
    default: return SC_C_UNKNOWN;
    }
}

/* The task kind of a node, and whether it runs on a GPU stream. */
static void classify(const sc__chakra_node *n, ck_node *k) {
    bool cpu = sc__ck_has(n, SC__CA_IS_CPU_OP) && n->attr[SC__CA_IS_CPU_OP];
    switch (n->type) {
    case SC__CK_COMP: k->kind = cpu ? SC_T_CPU : SC_T_KERNEL; break;
    case SC__CK_COLL: k->kind = cpu ? SC_T_CPU : SC_T_COLL; break;
    case SC__CK_SEND: k->kind = cpu ? SC_T_CPU : SC_T_SEND; break;
    case SC__CK_RECV: k->kind = cpu ? SC_T_CPU : SC_T_RECV; break;
    case SC__CK_MEM_LOAD:
    case SC__CK_MEM_STORE: k->kind = cpu ? SC_T_CPU : SC_T_MEMCPY; break;
    default: k->kind = SC_T_CPU; break;
    }
    /* A stepcast file names kinds the node type cannot (launch, sync...),
     * as long as it keeps the CPU/GPU side. */
    if (sc__ck_has(n, SC__CA_SC_KIND)) {
        int64_t sk = n->attr[SC__CA_SC_KIND];
        if (sk >= 0 && sk < SC_T_COUNT && sc__task_on_gpu((uint8_t)sk) == sc__task_on_gpu(k->kind))
            k->kind = (uint8_t)sk;
    }
    k->on_stream = sc__task_on_gpu(k->kind);
    if (!k->on_stream) {
        k->proc_id = sc__ck_has(n, SC__CA_TID) ? n->attr[SC__CA_TID] : 0;
    } else if (sc__ck_has(n, SC__CA_STREAM)) {
        k->proc_id = n->attr[SC__CA_STREAM];
    } else if (sc__ck_has(n, SC__CA_TID)) {
        k->proc_id = n->attr[SC__CA_TID];
    } else {
        k->proc_id = k->kind == SC_T_COLL ? 1 : k->kind == SC_T_SEND ? 2 : k->kind == SC_T_RECV ? 3 : 0;
    }
    k->device = sc__ck_has(n, SC__CA_DEVICE) ? (int32_t)n->attr[SC__CA_DEVICE] : 0;
}

typedef struct rank_nodes {
    ck_node *nodes;
    size_t count;
    sc__vec ctrl, data; /* uint64 ids */
    sc__vec fam;        /* uint8 families of stepcast files */
    sc__chakra_meta meta;
    bool stepcast;
} rank_nodes;

static void rank_nodes_free(rank_nodes *rn) {
    free(rn->nodes);
    sc__vec_free(&rn->ctrl);
    sc__vec_free(&rn->data);
    sc__vec_free(&rn->fam);
}

/* Nodes a reader must guess about, for the rank's warnings: how many, and
 * the first of each. */
typedef struct node_faults {
    uint64_t unknown, unknown_node, unknown_type; /* node type past COMM_COLL_NODE */
    uint64_t unsized, unsized_node;               /* collective without comm_size */
} node_faults;

static void note_faults(const sc__chakra_node *n, const ck_node *k, node_faults *f) {
    if (n->type >= SC__CK_NTYPES && !f->unknown++) {
        f->unknown_node = n->id;
        f->unknown_type = n->type;
    }
    if (k->kind == SC_T_COLL && k->bytes < 0 && !f->unsized++) f->unsized_node = n->id;
}

static void warn_faults(sc__graph *g, const char *path, const node_faults *f) {
    if (f->unknown)
        sc__graph_warn(g, "%s: %llu nodes of an unknown type (first: node %llu, type %llu); read as CPU tasks",
                       path, (unsigned long long)f->unknown, (unsigned long long)f->unknown_node,
                       (unsigned long long)f->unknown_type);
    if (f->unsized)
        sc__graph_warn(g, "%s: %llu collectives without comm_size (first: node %llu); their message size is "
                       "unknown", path, (unsigned long long)f->unsized, (unsigned long long)f->unsized_node);
}

static sc_status decode_rank(sc__graph *g, const sc_trace *t, rank_nodes *rn, sc_error *err) {
    memset(rn, 0, sizeof *rn);
    sc__vec_init(&rn->ctrl, sizeof(uint64_t));
    sc__vec_init(&rn->data, sizeof(uint64_t));
    sc__vec_init(&rn->fam, 1);
    rn->nodes = sc__alloc_array(t->chakra_nodes ? t->chakra_nodes : 1, sizeof *rn->nodes);
    if (!rn->nodes) return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
    sc__chakra_cursor c = {t->chakra_data, t->chakra_size, 0};
    const uint8_t *msg;
    size_t len;
    bool bad, first = true;
    node_faults faults = {0};
    while (sc__chakra_next(&c, &msg, &len, &bad)) {
        if (first) {
            first = false;
            if (!sc__chakra_decode_meta(msg, len, &rn->meta))
                return sc__fail(err, SC_E_PARSE, t->path, 0, "malformed Chakra GlobalMetadata");
            rn->stepcast = rn->meta.stepcast;
            continue;
        }
        if (rn->count >= t->chakra_nodes) break; /* the file changed since loading */
        sc__chakra_node n;
        bool oom;
        if (!sc__chakra_decode_node(msg, len, &n, &rn->ctrl, &rn->data, &oom))
            return sc__fail(err, oom ? SC_E_NOMEM : SC_E_PARSE, t->path, SC_NO_OFFSET,
                            "malformed Chakra node");
        if (rn->ctrl.len > UINT32_MAX || rn->data.len > UINT32_MAX)
            return sc__fail(err, SC_E_LIMIT, t->path, SC_NO_OFFSET, "too many dependencies");
        ck_node *k = &rn->nodes[rn->count++];
        memset(k, 0, sizeof *k);
        k->id = n.id;
        k->ck_type = n.type < 256 ? (uint8_t)n.type : 0;
        k->name = sc__intern_put(&g->strings, n.name ? n.name : "", n.name_len);
        k->pg = sc__intern_put(&g->strings, n.pg_name ? n.pg_name : "", n.pg_name_len);
        k->op_name = SC__NONE;
        bool op_oom = n.op_name && (k->op_name = sc__intern_put(&g->strings, n.op_name, n.op_name_len)) == SC__NONE;
        if (k->name == SC__NONE || k->pg == SC__NONE || op_oom)
            return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
        k->ctrl_first = (uint32_t)n.ctrl_first;
        k->ctrl_count = (uint32_t)n.ctrl_count;
        k->data_first = (uint32_t)n.data_first;
        k->data_count = (uint32_t)n.data_count;
        k->fam_off = SC__NONE;
        if (rn->stepcast && n.fam && n.fam_len == n.ctrl_count + n.data_count) {
            k->fam_off = (uint32_t)rn->fam.len;
            if (!sc__vec_reserve(&rn->fam, rn->fam.len + n.fam_len))
                return sc__fail(err, SC_E_NOMEM, t->path, SC_NO_OFFSET, "out of memory");
            if (n.fam_len) memcpy(sc__vec_end(&rn->fam), n.fam, n.fam_len);
            rn->fam.len += n.fam_len;
        }
        classify(&n, k);
        k->has_dur = n.has_dur;
        k->has_start = n.has_start || sc__ck_has(&n, SC__CA_SC_TS_NS);
        k->dur = sc__ck_has(&n, SC__CA_SC_DUR_NS) ? n.attr[SC__CA_SC_DUR_NS]
                                                  : (int64_t)(n.dur_us > INT64_MAX / 1000 ? INT64_MAX / 1000 : n.dur_us) * 1000;
        if (sc__ck_has(&n, SC__CA_SC_DUR_NS)) k->has_dur = 1;
        k->ts = sc__ck_has(&n, SC__CA_SC_TS_NS) ? n.attr[SC__CA_SC_TS_NS]
                                                : (int64_t)(n.start_us > INT64_MAX / 1000 ? INT64_MAX / 1000 : n.start_us) * 1000;
        k->gap = sc__ck_has(&n, SC__CA_SC_GAP_NS) ? n.attr[SC__CA_SC_GAP_NS] : 0;
        k->flags = sc__ck_has(&n, SC__CA_SC_FLAGS) ? (uint16_t)n.attr[SC__CA_SC_FLAGS] : 0;
        k->eager = sc__ck_has(&n, SC__CA_SC_EAGER) && n.attr[SC__CA_SC_EAGER];
        if (k->dur < 0) k->dur = 0;
        if (k->gap < 0) k->gap = 0;
        k->bytes = sc__ck_has(&n, SC__CA_COMM_SIZE) ? n.attr[SC__CA_COMM_SIZE] : -1;
        k->coll_type = sc__ck_has(&n, SC__CA_COMM_TYPE) ? coll_from_chakra(n.attr[SC__CA_COMM_TYPE])
                                                        : SC_C_UNKNOWN;
        if (sc__ck_has(&n, SC__CA_SC_COLL_TYPE) && n.attr[SC__CA_SC_COLL_TYPE] >= 0 &&
            n.attr[SC__CA_SC_COLL_TYPE] < SC_C_COUNT)
            k->coll_type = (uint8_t)n.attr[SC__CA_SC_COLL_TYPE];
        if (k->coll_type == SC_C_UNKNOWN && k->kind == SC_T_COLL && n.name)
            k->coll_type = (uint8_t)sc__coll_type_from_name(sc__graph_str(g, k->name));
        if (sc__ck_has(&n, SC__CA_SC_BYTES)) k->bytes = n.attr[SC__CA_SC_BYTES];
        else k->piece = k->kind == SC_T_COLL && k->coll_type == SC_C_ALL_GATHER && k->bytes >= 0;
        k->src = sc__ck_has(&n, SC__CA_COMM_SRC) ? (int32_t)n.attr[SC__CA_COMM_SRC] : (int32_t)t->rank;
        k->dst = sc__ck_has(&n, SC__CA_COMM_DST) ? (int32_t)n.attr[SC__CA_COMM_DST] : (int32_t)t->rank;
        k->tag = sc__ck_has(&n, SC__CA_COMM_TAG) ? (int32_t)n.attr[SC__CA_COMM_TAG] : 0;
        if (sc__ck_has(&n, SC__CA_SC_SYNC) && n.attr[SC__CA_SC_SYNC] > 0 &&
            n.attr[SC__CA_SC_SYNC] <= SC_SYNC_TASK && k->kind == SC_T_SYNC) {
            k->sync = (uint8_t)n.attr[SC__CA_SC_SYNC];
            k->sync_arg = sc__ck_has(&n, SC__CA_SC_SYNC_ARG) ? n.attr[SC__CA_SC_SYNC_ARG] : -1;
        }
        note_faults(&n, k, &faults);
    }
    if (bad) return sc__fail(err, SC_E_PARSE, t->path, c.pos, "truncated or malformed Chakra frame");
    warn_faults(g, t->path, &faults);
    return SC_OK;
}

/* A binary min-heap of node indices (file positions). */
typedef struct heap {
    uint32_t *a;
    size_t n;
} heap;

static void heap_push(heap *h, uint32_t v) {
    size_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2] > v) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = v;
}

static uint32_t heap_pop(heap *h) {
    uint32_t top = h->a[0], v = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->a[c + 1] < h->a[c]) c++;
        if (h->a[c] >= v) break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n) h->a[i] = v;
    return top;
}

/* What resolving a rank's dependencies found wrong, for its warnings:
 * how many, and the first node each time. */
typedef struct dep_faults {
    uint64_t dangling, self;  /* dependencies on a missing id; nodes on themselves */
    uint64_t dangling_node, dangling_id, self_node;
} dep_faults;

/* Resolves node i's dependency ids d[first .. first + count) to node
 * indices in place (d may be NULL when count is 0): SC__NONE for an id the
 * file lacks, and for node i itself (a node cannot wait for its own end). Files whose ids are their positions (stepcast's,
 * the ASTRA-sim examples) skip the hash unless some id repeats (then the
 * map, which keeps the first, decides). */
static void resolve_deps(const sc__idmap *m, const ck_node *nodes, size_t n, bool unique, uint32_t i,
                         uint64_t *d, size_t first, size_t count, bool *self, dep_faults *f) {
    for (size_t j = first; j < first + count; j++) {
        uint64_t v = d[j];
        if (!(unique && v < n && nodes[v].id == v)) v = sc__idmap_get(m, (int64_t)d[j]);
        if (v == SC__NONE && !f->dangling++) {
            f->dangling_node = nodes[i].id;
            f->dangling_id = d[j];
        }
        if (v == i) {
            *self = true;
            v = SC__NONE;
        }
        d[j] = v;
    }
}

/* Topological order preferring file order (Kahn with a min-heap) over the
 * data deps, and the ctrl deps unless data_only; nodes on a cycle are
 * appended in file order. Returns false on OOM; *complete says whether every
 * node was ordered. */
static bool topo_order(const rank_nodes *rn, uint32_t *order, bool data_only, bool *complete) {
    size_t n = rn->count;
    /* Most files are written in a topological order already. */
    bool sorted = true;
    const uint64_t *c0 = rn->ctrl.data, *d0 = rn->data.data;
    for (size_t i = 0; i < n && sorted; i++) {
        const ck_node *k = &rn->nodes[i];
        for (uint32_t j = data_only ? k->ctrl_count : 0; j < k->ctrl_count + k->data_count && sorted; j++) {
            uint64_t p = j < k->ctrl_count ? c0[k->ctrl_first + j] : d0[k->data_first + j - k->ctrl_count];
            sorted = p == SC__NONE || p < i;
        }
    }
    if (sorted) {
        for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
        *complete = true;
        return true;
    }
    uint32_t *indeg = calloc(n ? n : 1, sizeof *indeg);
    uint32_t *off = calloc(n + 1, sizeof *off);
    const uint64_t *cd = rn->ctrl.data, *dd = rn->data.data;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += rn->nodes[i].ctrl_count + rn->nodes[i].data_count;
    uint32_t *succ = sc__alloc_array(total ? total : 1, sizeof *succ);
    uint32_t *fill = calloc(n ? n : 1, sizeof *fill);
    heap h = {sc__alloc_array(n ? n : 1, sizeof(uint32_t)), 0};
    uint8_t *done = calloc(n ? n : 1, 1);
    bool ok = indeg && off && succ && fill && h.a && done;
    if (ok) {
        for (size_t i = 0; i < n; i++) {
            const ck_node *k = &rn->nodes[i];
            for (uint32_t j = data_only ? k->ctrl_count : 0; j < k->ctrl_count + k->data_count; j++) {
                uint64_t p = j < k->ctrl_count ? cd[k->ctrl_first + j] : dd[k->data_first + j - k->ctrl_count];
                if (p == SC__NONE || p == i) continue;
                off[p + 1]++;
                indeg[i]++;
            }
        }
        for (size_t i = 0; i < n; i++) off[i + 1] += off[i];
        for (size_t i = 0; i < n; i++) {
            const ck_node *k = &rn->nodes[i];
            for (uint32_t j = data_only ? k->ctrl_count : 0; j < k->ctrl_count + k->data_count; j++) {
                uint64_t p = j < k->ctrl_count ? cd[k->ctrl_first + j] : dd[k->data_first + j - k->ctrl_count];
                if (p == SC__NONE || p == i) continue;
                succ[off[p] + fill[p]++] = (uint32_t)i;
            }
        }
        for (size_t i = 0; i < n; i++)
            if (!indeg[i]) heap_push(&h, (uint32_t)i);
        size_t w = 0;
        while (h.n) {
            uint32_t v = heap_pop(&h);
            done[v] = 1;
            order[w++] = v;
            for (uint32_t e = off[v]; e < off[v + 1]; e++)
                if (--indeg[succ[e]] == 0) heap_push(&h, succ[e]);
        }
        *complete = w == n;
        for (size_t i = 0; i < n; i++)
            if (!done[i]) order[w++] = (uint32_t)i;
    }
    free(indeg);
    free(off);
    free(succ);
    free(fill);
    free(h.a);
    free(done);
    return ok;
}

/* Processor lookup for one rank: (stream?, device, id) -> proc index. */
typedef struct procmap {
    struct {
        int64_t id;
        int32_t device;
        uint8_t stream;
        uint32_t proc;
    } *items;
    size_t count, cap;
    uint32_t *slots; /* item index + 1 */
    size_t nslots;
} procmap;

static uint64_t proc_hash(int64_t id, int32_t device, uint8_t stream) {
    return sc__hash_u64((uint64_t)id ^ ((uint64_t)(uint32_t)device << 40) ^ ((uint64_t)stream << 62));
}

static uint32_t proc_get(procmap *m, sc__graph *g, uint32_t rank, uint8_t stream, int32_t device,
                         int64_t id) {
    if ((m->count + 1) * 2 > m->nslots) {
        size_t ns = m->nslots ? m->nslots * 2 : 16;
        uint32_t *slots = calloc(ns, sizeof *slots);
        if (!slots) return SC__NONE;
        for (size_t i = 0; i < m->count; i++) {
            size_t s = proc_hash(m->items[i].id, m->items[i].device, m->items[i].stream) & (ns - 1);
            while (slots[s]) s = (s + 1) & (ns - 1);
            slots[s] = (uint32_t)i + 1;
        }
        free(m->slots);
        m->slots = slots;
        m->nslots = ns;
    }
    size_t s = proc_hash(id, device, stream) & (m->nslots - 1);
    while (m->slots[s]) {
        size_t i = m->slots[s] - 1;
        if (m->items[i].id == id && m->items[i].device == device && m->items[i].stream == stream)
            return m->items[i].proc;
        s = (s + 1) & (m->nslots - 1);
    }
    if (m->count == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 8;
        void *p = sc__realloc_array(m->items, cap, sizeof *m->items);
        if (!p) return SC__NONE;
        m->items = p;
        m->cap = cap;
    }
    uint32_t proc = sc__graph_add_proc(g, rank, stream ? SC_P_STREAM : SC_P_THREAD,
                                       (int16_t)(stream ? device : -1), id);
    if (proc == SC__NONE) return SC__NONE;
    m->items[m->count].id = id;
    m->items[m->count].device = device;
    m->items[m->count].stream = stream;
    m->items[m->count].proc = proc;
    m->slots[s] = (uint32_t)++m->count;
    return proc;
}

/* What matching needs about a communication task. */
typedef struct comm_ref {
    uint32_t task;
    uint32_t rank;    /* rank index in the graph */
    uint32_t ordinal; /* k-th of its key on its rank */
    int32_t src, dst, tag;
    uint32_t pg;
} comm_ref;

typedef struct build_state {
    sc__graph *g;
    sc__vec colls;  /* comm_ref of SC_T_COLL */
    sc__vec sends;  /* comm_ref of SC_T_SEND */
    sc__vec recvs;  /* comm_ref of SC_T_RECV */
    sc__vec bytes;  /* int64 comm_size per task (-1 unknown), indexed by task */
    sc__vec ctype;  /* uint8 coll type per task */
    sc__vec timed;  /* uint8: bit 0 the task had a duration, bit 1 sc_eager */
    uint64_t dangling;
    bool all_stepcast; /* every rank was written by stepcast's exporter */
    sc__vec op_of_name; /* uint32 per interned string: op index + 1, 0 = none yet */
} build_state;

/* The sc__op of an sc_op name: one per distinct name (reports attribute by
 * the name; the instance hierarchy is not exported). SC__NONE on OOM. */
static uint32_t op_for_name(build_state *bs, uint32_t name) {
    sc__vec *v = &bs->op_of_name;
    if (name >= v->len) {
        if (!sc__vec_reserve(v, (size_t)name + 1)) return SC__NONE;
        memset((uint32_t *)v->data + v->len, 0, ((size_t)name + 1 - v->len) * sizeof(uint32_t));
        v->len = (size_t)name + 1;
    }
    uint32_t *slot = &((uint32_t *)v->data)[name];
    if (!*slot) {
        sc__op *op = sc__vec_push(&bs->g->ops);
        if (!op) return SC__NONE;
        op->name = name;
        op->parent = op->module = op->layer = SC__NONE;
        *slot = (uint32_t)bs->g->ops.len;
    }
    return *slot - 1;
}

static int64_t model_ns(uint8_t type, int64_t bytes, uint32_t n);

/* A foreign send/recv pair: the receive may not end before the send has
 * delivered, but the send does not wait for the receive (ASTRA-sim's
 * semantics; rendezvous groups would deadlock the ring collectives that
 * custom-collective files spell out, where every rank sends before it
 * receives). So: an edge send -> recv, the send carries the transfer time
 * (traced, or the model's), an untimed receive lasts 0. */
static bool eager_pair(build_state *bs, uint32_t send, uint32_t recv) {
    sc__graph *g = bs->g;
    sc__task *tasks = sc__graph_tasks(g);
    const int64_t *bytes = bs->bytes.data;
    const uint8_t *timed = bs->timed.data;
    int64_t b = bytes[send] > bytes[recv] ? bytes[send] : bytes[recv];
    if (!(timed[send] & 1)) tasks[send].dur = model_ns(SC_C_SEND_RECV, b, 2);
    if (!(timed[recv] & 1)) tasks[recv].dur = 0;
    return sc__graph_add_edge(g, send, recv, SC_E_DATA);
}

static bool push_ref(sc__vec *v, comm_ref r) {
    comm_ref *slot = sc__vec_push(v);
    if (!slot) return false;
    *slot = r;
    return true;
}

/* Adds one rank's tasks and edges. */
/* One rank being added: its nodes, where each went, and its scratch. */
typedef struct rank_build {
    build_state *bs;
    const sc_trace *t;
    rank_nodes *rn;
    sc__idmap ids;       /* node id -> node index */
    uint32_t *order;     /* node indices in the order tasks are added */
    uint32_t *task_of;   /* node index -> task */
    procmap pm;
    uint32_t *pg_count;  /* collectives so far per pg_name id */
    uint32_t rank;       /* graph rank index */
    uint32_t first_task;
    int64_t lo, hi;      /* measured window of the nodes with a start */
    bool drop_back_ctrl; /* the ctrl deps close cycles: order by data deps */
} rank_build;

static sc_status rank_oom(const rank_build *rb, sc_error *err) {
    return sc__fail(err, SC_E_NOMEM, rb->t->path, SC_NO_OFFSET, "out of memory");
}

/* Node ids to indices, and every dependency resolved to an index (a
 * warning for reused ids and for dependencies on ids the file lacks). */
static sc_status index_ids(rank_build *rb, sc_error *err) {
    rank_nodes *rn = rb->rn;
    size_t n = rn->count;
    uint64_t dup = 0;
    for (size_t i = 0; i < n; i++) {
        bool added;
        if (!sc__idmap_insert(&rb->ids, (int64_t)rn->nodes[i].id, (uint32_t)i, &added)) return rank_oom(rb, err);
        dup += !added;
    }
    sc__graph *g = rb->bs->g;
    if (dup)
        sc__graph_warn(g, "%s: %llu nodes reuse an id; dependencies go to the first", rb->t->path,
                       (unsigned long long)dup);
    dep_faults f = {0};
    uint64_t *cd = rn->ctrl.data, *dd = rn->data.data;
    for (uint32_t i = 0; i < n; i++) {
        const ck_node *k = &rn->nodes[i];
        bool self = false;
        resolve_deps(&rb->ids, rn->nodes, n, dup == 0, i, cd, k->ctrl_first, k->ctrl_count, &self, &f);
        resolve_deps(&rb->ids, rn->nodes, n, dup == 0, i, dd, k->data_first, k->data_count, &self, &f);
        if (self && !f.self++) f.self_node = k->id;
    }
    if (f.dangling)
        sc__graph_warn(g, "%s: %llu dependencies name nodes the file does not have (first: node %llu on %llu); "
                       "dropped", rb->t->path, (unsigned long long)f.dangling,
                       (unsigned long long)f.dangling_node, (unsigned long long)f.dangling_id);
    if (f.self)
        sc__graph_warn(g, "%s: %llu nodes depend on themselves (first: node %llu); those dependencies are dropped",
                       rb->t->path, (unsigned long long)f.self, (unsigned long long)f.self_node);
    rb->bs->dangling += f.dangling;
    return SC_OK;
}

/* The order tasks are added in. Converter output has ctrl_deps that loop
 * (parent <-> child; self-references are gone already, index_ids): when
 * all deps together are cyclic, order by data deps alone and drop the ctrl
 * deps that point backwards (a warning says how many). Cyclic data deps stay an error, reported by
 * finish(). */
static sc_status order_nodes(rank_build *rb, sc_error *err) {
    bool complete = false;
    if (!topo_order(rb->rn, rb->order, false, &complete)) return rank_oom(rb, err);
    if (complete) return SC_OK;
    rb->drop_back_ctrl = true;
    if (!topo_order(rb->rn, rb->order, true, &complete)) return rank_oom(rb, err);
    return SC_OK;
}

/* The task of node k on its processor, with its per-task side data. */
static uint32_t add_node_task(rank_build *rb, const ck_node *k) {
    build_state *bs = rb->bs;
    sc__graph *g = bs->g;
    uint32_t proc = proc_get(&rb->pm, g, rb->rank, k->on_stream, k->device, k->proc_id);
    if (proc == SC__NONE) return SC__NONE;
    sc__task task = {.dur = k->dur,
                     .gap = k->gap,
                     .ts = k->ts,
                     .proc = proc,
                     .seq = sc__graph_procs(g)[proc].ntasks++, /* reset by finish() */
                     .name = k->name,
                     .op = SC__NONE,
                     .group = SC__NONE,
                     .event = SC__NONE,
                     .sync_arg = SC__NONE,
                     .kind = k->kind,
                     .sync = k->sync,
                     .flags = k->flags};
    if (k->op_name != SC__NONE && (task.op = op_for_name(bs, k->op_name)) == SC__NONE) return SC__NONE;
    uint32_t ti = sc__graph_add_task(g, &task);
    int64_t *b = sc__vec_push(&bs->bytes);
    uint8_t *ct = sc__vec_push(&bs->ctype);
    uint8_t *tm = sc__vec_push(&bs->timed);
    if (ti == SC__NONE || !b || !ct || !tm) return SC__NONE;
    *b = k->bytes;
    *ct = k->coll_type;
    /* bit 1: an eager send/recv; bit 2: bytes is one rank's piece */
    *tm = (uint8_t)(k->has_dur | (k->eager << 1) | (k->piece << 2));
    return ti;
}

/* Queues task ti of node k for matching across ranks when it communicates. */
static bool queue_comm(rank_build *rb, const ck_node *k, uint32_t ti) {
    comm_ref r = {ti, rb->rank, 0, k->src, k->dst, k->tag, k->pg};
    switch (k->kind) {
    case SC_T_COLL:
        r.ordinal = rb->pg_count[k->pg]++;
        return push_ref(&rb->bs->colls, r);
    case SC_T_SEND: return push_ref(&rb->bs->sends, r);
    case SC_T_RECV: return push_ref(&rb->bs->recvs, r);
    default: return true;
    }
}

static sc_status add_tasks(rank_build *rb, sc_error *err) {
    rank_nodes *rn = rb->rn;
    for (size_t w = 0; w < rn->count; w++) {
        const ck_node *k = &rn->nodes[rb->order[w]];
        uint32_t ti = add_node_task(rb, k);
        if (ti == SC__NONE || !queue_comm(rb, k, ti)) return rank_oom(rb, err);
        rb->task_of[rb->order[w]] = ti;
        if (k->has_start) {
            if (k->ts < rb->lo) rb->lo = k->ts;
            if (k->ts + k->dur > rb->hi) rb->hi = k->ts + k->dur;
        }
    }
    return SC_OK;
}

/* Syncs: a stepcast file names the stream by id and the task by node id. */
static void resolve_syncs(rank_build *rb) {
    sc__task *tasks = sc__graph_tasks(rb->bs->g);
    for (size_t i = 0; i < rb->rn->count; i++) {
        const ck_node *k = &rb->rn->nodes[i];
        sc__task *tk = &tasks[rb->task_of[i]];
        if (k->sync == SC_SYNC_STREAM) {
            for (size_t p = 0; p < rb->pm.count; p++)
                if (rb->pm.items[p].stream && rb->pm.items[p].id == k->sync_arg) tk->sync_arg = rb->pm.items[p].proc;
        } else if (k->sync == SC_SYNC_DEVICE) {
            tk->sync_arg = k->sync_arg >= 0 ? (uint32_t)k->sync_arg : 0;
        } else if (k->sync == SC_SYNC_TASK) {
            uint32_t v = k->sync_arg >= 0 ? sc__idmap_get(&rb->ids, k->sync_arg) : SC__NONE;
            tk->sync_arg = v == SC__NONE ? SC__NONE : rb->task_of[v];
        }
        if (k->sync && tk->sync_arg == SC__NONE) tk->sync = SC_SYNC_NONE;
    }
}

/* Edges (task_of follows the order, so "backwards" is task_of[p] >= task_of[i]). */
static sc_status add_edges(rank_build *rb, sc_error *err) {
    const rank_nodes *rn = rb->rn;
    const uint64_t *cd = rn->ctrl.data, *dd = rn->data.data;
    const uint8_t *fam = rn->fam.data;
    uint64_t dropped = 0;
    for (size_t i = 0; i < rn->count; i++) {
        const ck_node *k = &rn->nodes[i];
        for (uint32_t j = 0; j < k->ctrl_count + k->data_count; j++) {
            bool is_ctrl = j < k->ctrl_count;
            uint64_t p = is_ctrl ? cd[k->ctrl_first + j] : dd[k->data_first + j - k->ctrl_count];
            if (p == SC__NONE) continue;
            if (is_ctrl && rb->drop_back_ctrl && rb->task_of[p] >= rb->task_of[i]) {
                dropped++;
                continue;
            }
            uint8_t f = is_ctrl ? SC_E_CTRL : SC_E_DATA;
            if (k->fam_off != SC__NONE && fam[k->fam_off + j] < SC_E_FAMILY_COUNT) f = fam[k->fam_off + j];
            if (!sc__graph_add_edge(rb->bs->g, rb->task_of[p], rb->task_of[i], (sc__edge_family)f))
                return rank_oom(rb, err);
        }
    }
    if (dropped)
        sc__graph_warn(rb->bs->g, "%s: %llu ctrl_deps close cycles (loops between nodes); dropped",
                       rb->t->path, (unsigned long long)dropped);
    return SC_OK;
}

/* The rank's tasks and measured step: the file's own window (stepcast's),
 * else the span of the node starts. */
static void set_step(rank_build *rb) {
    sc__graph *g = rb->bs->g;
    const rank_nodes *rn = rb->rn;
    sc__rank *r = &SC__VEC_AT(&g->ranks, sc__rank, rb->rank);
    r->ntasks = (uint32_t)(g->tasks.len - rb->first_task);
    if (rn->meta.has_step) {
        r->step_start = rn->meta.step_start;
        r->step_end = rn->meta.step_end;
    } else if (rb->lo <= rb->hi) {
        r->step_start = rb->lo;
        r->step_end = rb->hi;
    }
    if (rn->meta.step_first >= 0) {
        uint32_t v = sc__idmap_get(&rb->ids, rn->meta.step_first);
        r->step_first_task = v == SC__NONE ? SC__NONE : rb->task_of[v];
    }
    r->annotation_end = r->step_end;
    r->step_status = r->step_end > r->step_start ? SC__STEP_MEASURED : SC__STEP_NONE;
    /* The task that closes the step: the latest measured end, if any has one. */
    const sc__task *tasks = sc__graph_tasks(g);
    for (size_t i = rb->first_task; r->step_end > r->step_start && i < g->tasks.len; i++)
        if (r->step_last_task == SC__NONE ||
            tasks[i].ts + tasks[i].dur > tasks[r->step_last_task].ts + tasks[r->step_last_task].dur)
            r->step_last_task = (uint32_t)i;
}

static sc_status add_rank(build_state *bs, const sc_trace *t, rank_nodes *rn, sc_error *err) {
    sc__graph *g = bs->g;
    size_t n = rn->count;
    rank_build rb = {.bs = bs, .t = t, .rn = rn, .lo = INT64_MAX, .hi = INT64_MIN};
    rb.order = sc__alloc_array(n ? n : 1, sizeof *rb.order);
    rb.task_of = sc__alloc_array(n ? n : 1, sizeof *rb.task_of);
    rb.rank = sc__graph_add_rank(g, t->rank, SC__NONE);
    rb.first_task = (uint32_t)g->tasks.len;
    sc_status st = SC_OK;
    if (!rb.order || !rb.task_of || rb.rank == SC__NONE || !sc__idmap_init(&rb.ids, n)) st = rank_oom(&rb, err);
    if (st == SC_OK) st = index_ids(&rb, err);
    if (st == SC_OK) st = order_nodes(&rb, err);
    if (st == SC_OK && !(rb.pg_count = calloc(g->strings.count + n + 1, sizeof *rb.pg_count)))
        st = rank_oom(&rb, err);
    if (st == SC_OK) st = add_tasks(&rb, err);
    if (st == SC_OK) {
        resolve_syncs(&rb);
        st = add_edges(&rb, err);
    }
    if (st == SC_OK) set_step(&rb);
    free(rb.pg_count);
    free(rb.pm.items);
    free(rb.pm.slots);
    sc__idmap_free(&rb.ids);
    free(rb.order);
    free(rb.task_of);
    return st;
}

static int cmp_coll(const void *a, const void *b) {
    const comm_ref *x = a, *y = b;
    if (x->pg != y->pg) return x->pg < y->pg ? -1 : 1;
    if (x->ordinal != y->ordinal) return x->ordinal < y->ordinal ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Send/recv order: (src, dst, tag), then the order on the sending (or
 * receiving) rank, which is task order. */
static int cmp_p2p(const void *a, const void *b) {
    const comm_ref *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
    return x->task < y->task ? -1 : x->task > y->task;
}

/* Bytes a collective moves per rank under the ring model. */
static double moved_bytes(uint8_t type, int64_t bytes, uint32_t n) {
    if (bytes <= 0 || n == 0) return 0;
    double s = (double)bytes, f = (double)(n - 1) / (double)n;
    switch (type) {
    case SC_C_ALL_REDUCE: return 2 * f * s;
    case SC_C_ALL_GATHER:
    case SC_C_REDUCE_SCATTER:
    case SC_C_ALL_TO_ALL: return f * s;
    case SC_C_BARRIER: return 0;
    default: return s;
    }
}

static int64_t model_ns(uint8_t type, int64_t bytes, uint32_t n) {
    return CK_ALPHA_NS + (int64_t)(moved_bytes(type, bytes, n) / CK_BYTES_PER_NS + 0.5);
}

/* A member's message size in sc__group.bytes' convention: an all-gather's
 * comm_size is one rank's piece (ASTRA-sim's convention), the group's size
 * is count pieces. */
static int64_t member_bytes(const build_state *bs, uint32_t task, uint32_t count) {
    int64_t b = ((const int64_t *)bs->bytes.data)[task];
    if (!(((const uint8_t *)bs->timed.data)[task] & 4) || b <= 0) return b;
    return b > INT64_MAX / count ? INT64_MAX : b * count;
}

/* Makes one group; times untimed members by the model. */
static bool make_group(build_state *bs, uint8_t type, const uint32_t *members, uint32_t count) {
    sc__graph *g = bs->g;
    const uint8_t *timed = bs->timed.data;
    int64_t b = -1;
    bool all_timed = true;
    for (uint32_t i = 0; i < count; i++) {
        int64_t mb = member_bytes(bs, members[i], count);
        if (mb > b) b = mb;
        if (!(timed[members[i]] & 1)) all_timed = false;
    }
    uint32_t grp = sc__graph_add_group(g, (sc__coll_type)type, b, members, count);
    if (grp == SC__NONE) return false;
    if (!all_timed) {
        int64_t ns = model_ns(type, b, type == SC_C_SEND_RECV ? 2 : count);
        sc__task *tasks = sc__graph_tasks(g);
        for (uint32_t i = 0; i < count; i++)
            if (!(timed[members[i]] & 1)) tasks[members[i]].dur = ns;
        SC__VEC_AT(&g->groups, sc__group, grp).transfer_ns = ns;
    }
    return true;
}

static sc_status match_groups(build_state *bs, sc_error *err) {
    sc__graph *g = bs->g;
    const uint8_t *ctype = bs->ctype.data;
    comm_ref *c = bs->colls.data;
    size_t nc = bs->colls.len;
    if (nc) qsort(c, nc, sizeof *c, cmp_coll);
    uint32_t *members = sc__alloc_array(g->ranks.len + 2, sizeof *members);
    if (!members) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    uint64_t short_groups = 0, mixed = 0;
    for (size_t i = 0; i < nc;) {
        size_t j = i;
        uint32_t cnt = 0;
        uint8_t type = ctype[c[i].task];
        while (j < nc && c[j].pg == c[i].pg && c[j].ordinal == c[i].ordinal) {
            if (ctype[c[j].task] != type) mixed++;
            members[cnt++] = c[j++].task;
        }
        if (cnt != g->ranks.len) short_groups++;
        if (!make_group(bs, type, members, cnt)) {
            free(members);
            return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        }
        i = j;
    }
    free(members);
    if (mixed)
        sc__graph_warn(g, "%llu collective group members disagree with the first rank's comm_type",
                       (unsigned long long)mixed);
    if (short_groups && g->ranks.len > 1)
        sc__graph_warn(g, "%llu collectives are missing on some ranks (matched by order per pg_name)",
                       (unsigned long long)short_groups);
    comm_ref *s = bs->sends.data, *r = bs->recvs.data;
    size_t ns = bs->sends.len, nr = bs->recvs.len;
    if (ns) qsort(s, ns, sizeof *s, cmp_p2p);
    if (nr) qsort(r, nr, sizeof *r, cmp_p2p);
    size_t a = 0, b = 0;
    uint64_t unmatched = 0;
    while (a < ns || b < nr) {
        int cmp = a == ns ? 1 : b == nr ? -1 : 0;
        if (!cmp) {
            comm_ref x = s[a], y = r[b];
            x.task = y.task = 0;
            cmp = cmp_p2p(&x, &y);
        }
        if (cmp < 0) {
            unmatched++;
            a++;
        } else if (cmp > 0) {
            unmatched++;
            b++;
        } else {
            uint32_t pair[2] = {s[a++].task, r[b++].task};
            const uint8_t *tm = bs->timed.data;
            bool eager = !bs->all_stepcast || ((tm[pair[0]] | tm[pair[1]]) & 2);
            bool ok = eager ? eager_pair(bs, pair[0], pair[1]) : make_group(bs, SC_C_SEND_RECV, pair, 2);
            if (!ok) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        }
    }
    if (unmatched)
        sc__graph_warn(g, "%llu sends/receives have no partner (matched by source, destination, tag)",
                       (unsigned long long)unmatched);
    return SC_OK;
}

/* The comm_size of communication tasks left outside groups (eager and
 * unpaired send/recv) into g->loose_bytes, so an export keeps it. */
static sc_status keep_loose_bytes(build_state *bs, sc_error *err) {
    sc__graph *g = bs->g;
    const sc__task *t = sc__graph_tasks(g);
    const int64_t *bytes = bs->bytes.data;
    for (uint32_t i = 0; i < g->tasks.len; i++) {
        if (!sc__task_is_comm(t[i].kind) || t[i].group != SC__NONE || bytes[i] < 0) continue;
        sc__task_bytes *lb = sc__vec_push(&g->loose_bytes);
        if (!lb) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        lb->bytes = bytes[i];
        lb->task = i;
    }
    return SC_OK;
}

sc_status sc__graph_build_chakra(const sc_traceset *set, sc__graph **out, sc_error *err) {
    *out = NULL;
    sc__graph *g = sc__graph_new();
    if (!g) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    build_state bs = {.g = g, .all_stepcast = true};
    sc__vec_init(&bs.colls, sizeof(comm_ref));
    sc__vec_init(&bs.sends, sizeof(comm_ref));
    sc__vec_init(&bs.recvs, sizeof(comm_ref));
    sc__vec_init(&bs.bytes, sizeof(int64_t));
    sc__vec_init(&bs.ctype, 1);
    sc__vec_init(&bs.timed, 1);
    sc__vec_init(&bs.op_of_name, sizeof(uint32_t));
    sc_status st = SC_OK;
    uint64_t held = sc__traceset_memory(set); /* the files stay in memory while the graph is built */
    for (size_t i = 0; i < set->count && st == SC_OK; i++) {
        const sc_trace *t = set->traces[i];
        if (t->format != SC__FMT_CHAKRA) {
            st = sc__fail(err, SC_E_USAGE, t->path, SC_NO_OFFSET,
                          "a set mixes Chakra files with Kineto traces");
            break;
        }
        rank_nodes rn;
        st = decode_rank(g, t, &rn, err);
        bs.all_stepcast = bs.all_stepcast && rn.stepcast;
        if (st == SC_OK) st = add_rank(&bs, t, &rn, err);
        rank_nodes_free(&rn);
        if (st == SC_OK)
            st = sc__graph_check_budget(g, set->budget, held, "building the graph", "the Chakra files", err);
    }
    if (st == SC_OK) st = match_groups(&bs, err);
    if (st == SC_OK) st = keep_loose_bytes(&bs, err);
    if (st == SC_OK) {
        /* add_rank counted tasks per processor for seq; finish recounts. */
        sc__proc *procs = sc__graph_procs(g);
        for (size_t p = 0; p < g->procs.len; p++) procs[p].ntasks = 0;
        g->budget = set->budget;
        g->budget_held = held;
        st = sc__graph_finish(g, true, err);
    }
    sc__vec_free(&bs.colls);
    sc__vec_free(&bs.sends);
    sc__vec_free(&bs.recvs);
    sc__vec_free(&bs.bytes);
    sc__vec_free(&bs.ctype);
    sc__vec_free(&bs.timed);
    sc__vec_free(&bs.op_of_name);
    if (st != SC_OK) {
        sc__graph_free(g);
        return st;
    }
    *out = g;
    return SC_OK;
}

