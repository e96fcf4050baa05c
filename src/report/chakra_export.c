/*
 * chakra_export.c - `stepcast export --chakra PREFIX`: an execution graph
 * out as Chakra execution traces, PREFIX.<rank>.et per rank, for ASTRA-sim
 * and the other tools of that ecosystem.
 *
 * Per rank: a GlobalMetadata (version "0.0.4" as in the ASTRA-sim examples,
 * plus generator, rank, world_size and the measured step window), then one
 * Node per kept task in a topological order, with ids 0..n-1 (so every
 * dependency names a smaller id):
 *   - CPU-side tasks -> COMP_NODE with is_cpu_op true and a `tid` attr;
 *     kernels, copies and memsets -> COMP_NODE with is_cpu_op false and a
 *     `stream` attr; collectives -> COMM_COLL_NODE (comm_type, pg_name: "0"
 *     when every rank takes part, else a number that PREFIX.comm_group.json
 *     maps to the ranks, as ASTRA-sim reads it; a collective nobody else
 *     joins becomes a GPU COMP_NODE, since ASTRA-sim would wait for its
 *     peers forever); sends/receives -> COMM_SEND_NODE /
 *     COMM_RECV_NODE (comm_src, comm_dst, comm_tag = the pair's group index,
 *     unique per pair); every one of them whose size is known also gets
 *     comm_size (int64_val, bytes), from its group, or for a send/recv
 *     outside any group (imported eager pairs) from the graph's
 *     loose_bytes. Its convention is ASTRA-sim's: the buffer each rank
 *     starts with. That is sc__group.bytes (graph.h: nccl-tests' "size")
 *     for every type but all-gather, where nccl-tests counts the gathered
 *     output and ASTRA-sim one rank's input (astra_comm_size);
 *   - duration_micros rounded to the nearest us, start_time_micros;
 *   - dependencies: program order on a CPU thread (and across threads) and
 *     imported control deps go to ctrl_deps (no data flows along them);
 *     launches, stream order, cross-stream waits, GPU->CPU syncs and data
 *     deps go to data_deps.
 * sc_* attributes (exact ns durations and starts, gaps, task kinds, syncs,
 * the family of each dependency, the enclosing operator's name) let stepcast
 * read its own export back into the same graph; other readers ignore them.
 * Not kept: the operator hierarchy (parent, module, layer) and event indices.
 *
 * SC_EXPORT_NO_CPU drops CPU operator tasks but keeps runtime calls. The
 * dropped time moves to the next kept task on that thread: into its
 * sc_gap_ns for stepcast, and the dropped durations also into its
 * duration_micros, which is all ASTRA-sim reads (it has one CPU slot per
 * NPU and no notion of gaps), so the CPU time it simulates stays that of
 * the full export. Dropped time after a thread's last kept task is lost.
 * SC_EXPORT_GPU_ONLY keeps GPU tasks only. Dependencies through dropped tasks are kept: a kept
 * task depends on the latest kept ancestor of each processor reached only
 * through dropped tasks (earlier ones on that processor follow from stream
 * or thread order).
 */
#include "chakra_export.h"

#include "../pipeline/job.h"
#include "../readers/chakra_wire.h"

#include <stdio.h>
#include <stdlib.h>

#define NODE_ID 1
#define NODE_NAME 2
#define NODE_TYPE 3
#define NODE_CTRL 4
#define NODE_DATA 5
#define NODE_START 6
#define NODE_DUR 7
#define NODE_ATTR 10
#define META_VERSION 1
#define META_ATTR 2

static bool keep_task(const sc__task *t, unsigned flags) {
    if (flags & SC_EXPORT_GPU_ONLY) return sc__task_on_gpu(t->kind);
    if (flags & SC_EXPORT_NO_CPU) return t->kind != SC_T_CPU;
    return true;
}

static bool is_ctrl_family(uint8_t f) {
    return f == SC_E_THREAD || f == SC_E_CROSS_THREAD || f == SC_E_CTRL;
}

static int64_t chakra_comm_type(uint8_t t) {
    switch (t) {
    case SC_C_ALL_REDUCE: return SC__CK_ALL_REDUCE;
    case SC_C_REDUCE: return SC__CK_REDUCE;
    case SC_C_ALL_GATHER: return SC__CK_ALL_GATHER;
    case SC_C_GATHER: return SC__CK_GATHER;
    case SC_C_SCATTER: return SC__CK_SCATTER;
    case SC_C_BROADCAST: return SC__CK_BROADCAST;
    case SC_C_ALL_TO_ALL: return SC__CK_ALL_TO_ALL;
    case SC_C_REDUCE_SCATTER: return SC__CK_REDUCE_SCATTER;
    case SC_C_BARRIER: return SC__CK_BARRIER;
    case SC_C_SEND_RECV: return SC__CK_ALL_TO_ALL; /* grouped send/recv: all-to-all */
    default: return SC__CK_ALL_REDUCE;
    }
}

/* A collective that nobody else takes part in (no group, or one member):
 * ASTRA-sim would wait forever for its peers, so it is written as a GPU
 * COMP_NODE that lasts its traced duration (sc_kind keeps it a collective
 * for stepcast). */
static bool solo_coll(const sc__graph *g, const sc__task *t) {
    return t->kind == SC_T_COLL &&
           (t->group == SC__NONE || SC__VEC_AT(&g->groups, sc__group, t->group).count < 2);
}

static uint32_t node_type(const sc__graph *g, const sc__task *t) {
    switch (t->kind) {
    case SC_T_COLL: return solo_coll(g, t) ? SC__CK_COMP : SC__CK_COLL;
    case SC_T_SEND: return SC__CK_SEND;
    case SC_T_RECV: return SC__CK_RECV;
    default: return SC__CK_COMP;
    }
}

/* The kind a reader infers from (node type, is_cpu_op). */
static uint8_t default_kind(uint32_t type, const sc__task *t) {
    switch (type) {
    case SC__CK_COLL: return SC_T_COLL;
    case SC__CK_SEND: return SC_T_SEND;
    case SC__CK_RECV: return SC_T_RECV;
    default: return sc__task_on_gpu(t->kind) ? SC_T_KERNEL : SC_T_CPU;
    }
}

/* Communicator groups as ASTRA-sim reads them: pg_name is an integer, ""
 * or "0" the world (every rank of the job), any other number a group that
 * PREFIX.comm_group.json lists ({"1": [0, 1, 2, 3], ...}, its
 * --comm-group-configuration). Per graph group: PG_WORLD, a number >= 1
 * (one per distinct set of ranks, in order of first appearance), or
 * PG_NONE for send/recv pairs, which name their peers instead. */
#define PG_WORLD 0u
#define PG_NONE UINT32_MAX

typedef struct pg_table {
    uint32_t *pg;      /* per group */
    uint32_t *first;   /* per number - 1: the group that introduced it */
    uint32_t count;    /* numbers handed out */
} pg_table;

static void pg_table_free(pg_table *t) {
    free(t->pg);
    free(t->first);
}

static int cmp_i64(const void *a, const void *b, void *ctx) {
    (void)ctx;
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct job ranks of group gi's members, ascending, into out
 * (room for grp->count); returns how many. */
static uint32_t group_ranks(const sc__graph *g, uint32_t gi, int64_t *out) {
    const sc__group *grp = &SC__VEC_AT(&g->groups, sc__group, gi);
    const uint32_t *m = &SC__VEC_AT(&g->group_members, uint32_t, grp->first);
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    for (uint32_t i = 0; i < grp->count; i++)
        out[i] = SC__VEC_AT(&g->ranks, sc__rank, procs[tasks[m[i]].proc].rank).rank;
    sc__sort(out, grp->count, sizeof *out, cmp_i64, NULL);
    uint32_t n = 0;
    for (uint32_t i = 0; i < grp->count; i++)
        if (!n || out[n - 1] != out[i]) out[n++] = out[i];
    return n;
}

static bool is_coll_group(const sc__graph *g, const sc__group *grp) {
    if (!grp->count) return false;
    uint32_t m = SC__VEC_AT(&g->group_members, uint32_t, grp->first);
    return sc__graph_tasks(g)[m].kind == SC_T_COLL;
}

static uint64_t ranks_hash(const int64_t *r, uint32_t n) {
    uint64_t h = sc__hash_u64(n + 0x9e3779b97f4a7c15ULL);
    for (uint32_t i = 0; i < n; i++) h = sc__hash_u64(h ^ (uint64_t)r[i]);
    return h;
}

/* Numbers the rank sets of the collective groups (open addressing on the
 * set's hash; equal hashes are compared member by member). */
static bool name_groups(const sc__graph *g, pg_table *t) {
    size_t ng = g->groups.len, nslots = 16, most = 1;
    while (nslots < ng * 2) nslots *= 2;
    const sc__group *groups = g->groups.data;
    for (size_t i = 0; i < ng; i++)
        if (groups[i].count > most) most = groups[i].count;
    t->pg = sc__alloc_array(ng ? ng : 1, sizeof *t->pg);
    t->first = sc__alloc_array(ng ? ng : 1, sizeof *t->first);
    t->count = 0;
    uint32_t *slots = calloc(nslots, sizeof *slots); /* number, 0 = empty */
    int64_t *a = sc__alloc_array(most, sizeof *a), *b = sc__alloc_array(most, sizeof *b);
    bool ok = t->pg && t->first && slots && a && b;
    for (size_t i = 0; ok && i < ng; i++) {
        uint32_t n = group_ranks(g, (uint32_t)i, a);
        if (!is_coll_group(g, &groups[i])) {
            t->pg[i] = PG_NONE;
            continue;
        }
        if (n == g->ranks.len) {
            t->pg[i] = PG_WORLD;
            continue;
        }
        size_t s = ranks_hash(a, n) & (nslots - 1);
        for (; slots[s]; s = (s + 1) & (nslots - 1)) {
            uint32_t other = t->first[slots[s] - 1];
            if (group_ranks(g, other, b) == n && !memcmp(a, b, n * sizeof *a)) break;
        }
        if (!slots[s]) {
            t->first[t->count] = (uint32_t)i;
            slots[s] = ++t->count;
        }
        t->pg[i] = slots[s];
    }
    free(slots);
    free(a);
    free(b);
    if (!ok) pg_table_free(t);
    return ok;
}

/* Send/recv pairs joined by a cross-rank edge instead of a group (imported
 * foreign Chakra): partner[t] is the other task, tag[t] a number unique per
 * pair (after the group indices, which tag grouped pairs). Cross-rank edges
 * of other kinds cannot be written and are left out. */
static bool eager_pairs(const sc__graph *g, uint32_t **partner_out, uint32_t **tag_out) {
    size_t nt = g->tasks.len;
    uint32_t *partner = sc__alloc_array(nt ? nt : 1, sizeof *partner);
    uint32_t *tag = sc__alloc_array(nt ? nt : 1, sizeof *tag);
    if (!partner || !tag) {
        free(partner);
        free(tag);
        return false;
    }
    const sc__task *t = sc__graph_tasks(g);
    const sc__proc *p = sc__graph_procs(g);
    for (size_t i = 0; i < nt; i++) partner[i] = tag[i] = SC__NONE;
    uint32_t next = (uint32_t)g->groups.len;
    for (uint32_t u = 0; u < nt; u++) {
        if (t[u].kind != SC_T_SEND || t[u].group != SC__NONE) continue;
        for (uint32_t k = g->succ_off[u]; k < g->succ_off[u + 1]; k++) {
            uint32_t v = g->succ[k];
            if (t[v].kind != SC_T_RECV || t[v].group != SC__NONE || partner[v] != SC__NONE ||
                p[t[v].proc].rank == p[t[u].proc].rank)
                continue;
            partner[u] = v;
            partner[v] = u;
            tag[u] = tag[v] = next++ & 0x7fffffff;
            break;
        }
    }
    *partner_out = partner;
    *tag_out = tag;
    return true;
}

/* CPU time of dropped tasks on a thread since its last kept task. */
typedef struct xdropped {
    int64_t time; /* their durations and gaps: the next kept task's sc_gap_ns */
    int64_t busy; /* their durations: added to its duration_micros */
} xdropped;

/* What one rank's export needs, reused across ranks. */
typedef struct xrank {
    uint32_t *order;    /* local task indices in export order */
    uint32_t *node_id;  /* local -> node id, SC__NONE when dropped */
    uint32_t *pred_off; /* local predecessor CSR (edges inside the rank) */
    uint32_t *pred;
    uint8_t *pred_fam;
    uint32_t *front_off, *front_len; /* dropped tasks: their kept frontier */
    sc__vec front;      /* uint32 task indices (global) */
    sc__vec deps;       /* uint64 ids for the current node (ctrl, then data) */
    sc__vec fam;        /* uint8 family per dep */
    sc__vec scratch;    /* uint32 candidate tasks */
    xdropped *dropped;  /* per processor: dropped CPU time to fold in */
} xrank;

/* Kahn over the rank's edges, FIFO from task order: deterministic, and it
 * keeps every processor's order because order edges are in the graph. */
static bool rank_order(const sc__graph *g, uint32_t first, uint32_t n, xrank *x) {
    uint32_t *deg = calloc(n ? n : 1, sizeof *deg);
    if (!deg) return false;
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t k = g->succ_off[first + v]; k < g->succ_off[first + v + 1]; k++) {
            uint32_t w = g->succ[k];
            if (w >= first && w < first + n) deg[w - first]++;
        }
    size_t head = 0, tail = 0;
    for (uint32_t v = 0; v < n; v++)
        if (!deg[v]) x->order[tail++] = v;
    while (head < tail) {
        uint32_t v = x->order[head++];
        for (uint32_t k = g->succ_off[first + v]; k < g->succ_off[first + v + 1]; k++) {
            uint32_t w = g->succ[k];
            if (w >= first && w < first + n && --deg[w - first] == 0) x->order[tail++] = w - first;
        }
    }
    free(deg);
    return tail == n; /* finished graphs are acyclic */
}

static bool rank_preds(const sc__graph *g, uint32_t first, uint32_t n, xrank *x) {
    memset(x->pred_off, 0, (n + 1) * sizeof *x->pred_off);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t k = g->succ_off[first + v]; k < g->succ_off[first + v + 1]; k++) {
            uint32_t w = g->succ[k];
            if (w >= first && w < first + n) x->pred_off[w - first + 1]++;
        }
    for (uint32_t v = 0; v < n; v++) x->pred_off[v + 1] += x->pred_off[v];
    uint32_t total = x->pred_off[n];
    free(x->pred);
    free(x->pred_fam);
    x->pred = sc__alloc_array(total ? total : 1, sizeof *x->pred);
    x->pred_fam = sc__alloc_array(total ? total : 1, 1);
    uint32_t *fill = calloc(n ? n : 1, sizeof *fill);
    if (!x->pred || !x->pred_fam || !fill) {
        free(fill);
        return false;
    }
    /* Successor CSR is sorted by source, so each list comes out sorted. */
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t k = g->succ_off[first + v]; k < g->succ_off[first + v + 1]; k++) {
            uint32_t w = g->succ[k];
            if (w < first || w >= first + n) continue;
            uint32_t at = x->pred_off[w - first] + fill[w - first]++;
            x->pred[at] = first + v;
            x->pred_fam[at] = g->succ_family[k];
        }
    free(fill);
    return true;
}

static bool push_u32(sc__vec *v, uint32_t x) {
    uint32_t *s = sc__vec_push(v);
    if (!s) return false;
    *s = x;
    return true;
}

/* Reduces candidate tasks to the latest (highest seq) per processor. */
static void keep_latest_per_proc(const sc__graph *g, sc__vec *cand) {
    const sc__task *tasks = sc__graph_tasks(g);
    uint32_t *c = cand->data;
    size_t w = 0;
    for (size_t i = 0; i < cand->len; i++) {
        bool dominated = false;
        for (size_t j = 0; j < w; j++) {
            if (c[j] == c[i] || tasks[c[j]].proc == tasks[c[i]].proc) {
                if (c[j] != c[i] && tasks[c[i]].seq > tasks[c[j]].seq) c[j] = c[i];
                dominated = true;
                break;
            }
        }
        if (!dominated) c[w++] = c[i];
    }
    cand->len = w;
}

/* Dependencies of local task v: direct kept predecessors with their family,
 * then kept ancestors reached through dropped ones. Fills x->deps/x->fam
 * (ctrl first) for a kept v, or v's frontier for a dropped v. */
static bool collect_deps(const sc__graph *g, uint32_t first, uint32_t v, bool kept, xrank *x) {
    x->scratch.len = 0;
    x->deps.len = x->fam.len = 0;
    const uint32_t *front = x->front.data;
    uint64_t ndirect = 0;
    /* Two passes for kept tasks (ctrl families, then data) keep lists apart. */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t k = x->pred_off[v]; k < x->pred_off[v + 1]; k++) {
            uint32_t p = x->pred[k] - first;
            uint8_t f = x->pred_fam[k];
            if (x->node_id[p] == SC__NONE) {
                if (pass == 0)
                    for (uint32_t i = 0; i < x->front_len[p]; i++)
                        if (!push_u32(&x->scratch, front[x->front_off[p] + i])) return false;
                continue;
            }
            if (!kept) {
                if (pass == 0 && !push_u32(&x->scratch, first + p)) return false;
                continue;
            }
            if (is_ctrl_family(f) != (pass == 0)) continue;
            uint64_t *d = sc__vec_push(&x->deps);
            uint8_t *fa = sc__vec_push(&x->fam);
            if (!d || !fa) return false;
            *d = x->node_id[p];
            *fa = f;
            ndirect++;
        }
    }
    if (!kept) {
        keep_latest_per_proc(g, &x->scratch);
        x->front_off[v] = (uint32_t)x->front.len;
        x->front_len[v] = (uint32_t)x->scratch.len;
        for (size_t i = 0; i < x->scratch.len; i++)
            if (!push_u32(&x->front, ((uint32_t *)x->scratch.data)[i])) return false;
        return true;
    }
    if (!x->scratch.len) return true;
    keep_latest_per_proc(g, &x->scratch);
    /* Inherited ancestors become data deps unless already direct deps. */
    const uint32_t *c = x->scratch.data;
    for (size_t i = 0; i < x->scratch.len; i++) {
        uint64_t id = x->node_id[c[i] - first];
        bool dup = false;
        for (size_t j = 0; j < ndirect && !dup; j++) dup = ((uint64_t *)x->deps.data)[j] == id;
        if (dup) continue;
        uint64_t *d = sc__vec_push(&x->deps);
        uint8_t *fa = sc__vec_push(&x->fam);
        if (!d || !fa) return false;
        *d = id;
        *fa = SC_E_DATA;
    }
    return true;
}

/* What every node of the export needs about the whole graph. */
typedef struct xgraph {
    pg_table pgs;              /* pg_name per collective group */
    uint32_t *partner, *tag;   /* per task: eager send/recv pairs */
} xgraph;

/* comm_size as ASTRA-sim reads it (its Ring.cc and the other algorithms
 * take it as the buffer each rank starts with): sc__group.bytes (nccl-tests'
 * size) but for an all-gather, whose nccl-tests size is the gathered output
 * and ASTRA-sim's one rank's input, i.e. divided by the communicator's ranks
 * (the traced communicator's when known, else the group's). Where the
 * group's members times that piece is not the graph's size, *keep_bytes is
 * set: the size in stepcast's convention goes out too (sc_bytes). */
static int64_t astra_comm_size(const sc__group *grp, int64_t bytes, bool *keep_bytes) {
    *keep_bytes = false;
    if (!grp || bytes < 0 || grp->type != SC_C_ALL_GATHER) return bytes;
    uint32_t n = grp->comm_ranks ? grp->comm_ranks : grp->count;
    if (!n) return bytes;
    int64_t piece = bytes / n;
    *keep_bytes = (uint64_t)piece * grp->count != (uint64_t)bytes;
    return piece;
}

/* comm_type, comm_size and pg_name of a collective (a number, or
 * "ungrouped.<rank>" on a collective in no group, written as a COMP node). */
static void encode_coll(const sc__graph *g, uint32_t ti, const xgraph *xg, int64_t rank, sc__pbuf *body) {
    const sc__task *t = &sc__graph_tasks(g)[ti];
    const sc__group *grp = t->group != SC__NONE ? &SC__VEC_AT(&g->groups, sc__group, t->group) : NULL;
    uint8_t ct = grp ? grp->type : SC_C_UNKNOWN;
    sc__pb_attr_int64(body, NODE_ATTR, "comm_type", chakra_comm_type(ct));
    int64_t bytes = sc__graph_task_bytes(g, ti);
    bool keep_bytes;
    int64_t size = astra_comm_size(grp, bytes, &keep_bytes);
    if (size >= 0) sc__pb_attr_int64(body, NODE_ATTR, "comm_size", size);
    if (keep_bytes) sc__pb_attr_int64(body, NODE_ATTR, "sc_bytes", bytes);
    char pgname[48];
    int n = grp ? snprintf(pgname, sizeof pgname, "%u", xg->pgs.pg[t->group])
                : snprintf(pgname, sizeof pgname, "ungrouped.%lld", (long long)rank);
    sc__pb_attr_str(body, NODE_ATTR, "pg_name", pgname, (size_t)n);
    if (ct >= SC_C_SEND_RECV) sc__pb_attr_int64(body, NODE_ATTR, "sc_coll_type", ct);
}

/* comm_src, comm_dst, comm_tag (and comm_size) of a send or receive. */
static void encode_p2p(const sc__graph *g, uint32_t ti, const xgraph *xg, int64_t rank, sc__pbuf *body) {
    const sc__task *t = &sc__graph_tasks(g)[ti];
    const sc__group *grp = t->group != SC__NONE ? &SC__VEC_AT(&g->groups, sc__group, t->group) : NULL;
    int64_t src = rank, dst = rank;
    if (grp) {
        const uint32_t *m = &SC__VEC_AT(&g->group_members, uint32_t, grp->first);
        for (uint32_t i = 0; i < grp->count; i++) {
            const sc__task *o = &sc__graph_tasks(g)[m[i]];
            int64_t r = SC__VEC_AT(&g->ranks, sc__rank, sc__graph_procs(g)[o->proc].rank).rank;
            if (o->kind == SC_T_SEND) src = r;
            else if (o->kind == SC_T_RECV) dst = r;
        }
    }
    int64_t bytes = sc__graph_task_bytes(g, ti);
    if (bytes >= 0) sc__pb_attr_int64(body, NODE_ATTR, "comm_size", bytes);
    int32_t tag = grp ? (int32_t)(t->group & 0x7fffffff) : -1;
    uint32_t other = xg->partner[ti];
    if (!grp && other != SC__NONE) {
        int64_t r = SC__VEC_AT(&g->ranks, sc__rank, sc__graph_procs(g)[sc__graph_tasks(g)[other].proc].rank).rank;
        if (t->kind == SC_T_SEND) dst = r;
        else src = r;
        tag = (int32_t)xg->tag[ti];
    }
    sc__pb_attr_int32(body, NODE_ATTR, "comm_src", (int32_t)src);
    sc__pb_attr_int32(body, NODE_ATTR, "comm_dst", (int32_t)dst);
    sc__pb_attr_int32(body, NODE_ATTR, "comm_tag", tag);
    if (!grp && other != SC__NONE) sc__pb_attr_int64(body, NODE_ATTR, "sc_eager", 1);
}

/* sc_sync / sc_sync_arg of a sync task: the stream id, the device or the
 * node id it waits for. */
static void encode_sync(const sc__graph *g, const sc__task *t, const xrank *x, sc__pbuf *body) {
    const sc__proc *pr = &sc__graph_procs(g)[t->proc];
    int64_t arg = -1;
    if (t->sync == SC_SYNC_STREAM && t->sync_arg < g->procs.len)
        arg = sc__graph_procs(g)[t->sync_arg].id;
    else if (t->sync == SC_SYNC_DEVICE)
        arg = t->sync_arg;
    else if (t->sync == SC_SYNC_TASK && t->sync_arg < g->tasks.len) {
        const sc__rank *rk = &SC__VEC_AT(&g->ranks, sc__rank, pr->rank);
        uint32_t local = t->sync_arg - rk->first_task;
        if (t->sync_arg >= rk->first_task && local < rk->ntasks && x->node_id[local] != SC__NONE)
            arg = x->node_id[local];
    }
    if (arg >= 0) {
        sc__pb_attr_int64(body, NODE_ATTR, "sc_sync", t->sync);
        sc__pb_attr_int64(body, NODE_ATTR, "sc_sync_arg", arg);
    }
}

/* Writes one node for kept task ti into out. fold.time is the CPU time
 * before it on its thread that no kept node covers (its own gap and the
 * dropped tasks' time, stepcast's sc_gap_ns); fold.busy the dropped tasks'
 * durations alone, added to its duration_micros so that ASTRA-sim, which
 * reads no gaps, still spends the operators' CPU time (where an export
 * keeps every task it would have spent it on them). */
static void encode_node(const sc__graph *g, uint32_t ti, uint64_t id, const xrank *x,
                        const xgraph *xg, xdropped fold, sc__pbuf *body, sc__pbuf *out) {
    const sc__task *t = &sc__graph_tasks(g)[ti];
    const sc__proc *pr = &sc__graph_procs(g)[t->proc];
    body->len = 0;
    sc__pb_put_uint(body, NODE_ID, id);
    const char *name = sc__graph_str(g, t->name);
    sc__pb_put_str(body, NODE_NAME, name, sc__intern_len(&g->strings, t->name));
    uint32_t type = node_type(g, t);
    sc__pb_put_uint(body, NODE_TYPE, type);
    /* Dependencies: ctrl ones come first in x->deps. */
    const uint64_t *deps = x->deps.data;
    const uint8_t *fam = x->fam.data;
    size_t nctrl = 0;
    while (nctrl < x->deps.len && is_ctrl_family(fam[nctrl])) nctrl++;
    sc__pb_put_packed(body, NODE_CTRL, deps, nctrl);
    sc__pb_put_packed(body, NODE_DATA, nctrl < x->deps.len ? deps + nctrl : NULL, x->deps.len - nctrl);
    if (t->ts > 0) sc__pb_put_uint(body, NODE_START, (uint64_t)t->ts / 1000);
    int64_t dur = t->dur > 0 ? t->dur : 0;
    uint64_t dur_us = (uint64_t)(dur + fold.busy + 500) / 1000;
    sc__pb_put_uint(body, NODE_DUR, dur_us);
    bool gpu = sc__task_on_gpu(t->kind);
    sc__pb_attr_bool(body, NODE_ATTR, "is_cpu_op", !gpu);
    if (gpu) {
        sc__pb_attr_int64(body, NODE_ATTR, "stream", pr->id);
        if (pr->device != 0) sc__pb_attr_int64(body, NODE_ATTR, "device", pr->device);
    } else {
        sc__pb_attr_int64(body, NODE_ATTR, "tid", pr->id);
    }
    int64_t rank = SC__VEC_AT(&g->ranks, sc__rank, pr->rank).rank;
    if (t->kind == SC_T_COLL) encode_coll(g, ti, xg, rank, body);
    else if (t->kind == SC_T_SEND || t->kind == SC_T_RECV) encode_p2p(g, ti, xg, rank, body);
    /* stepcast's own attributes, for an exact round trip. */
    if (t->kind != default_kind(type, t)) sc__pb_attr_int64(body, NODE_ATTR, "sc_kind", t->kind);
    if (dur_us * 1000 != (uint64_t)dur) sc__pb_attr_int64(body, NODE_ATTR, "sc_dur_ns", dur);
    if (t->ts < 0 || t->ts % 1000) sc__pb_attr_int64(body, NODE_ATTR, "sc_ts_ns", t->ts);
    if (fold.time) sc__pb_attr_int64(body, NODE_ATTR, "sc_gap_ns", fold.time);
    if (t->flags) sc__pb_attr_int64(body, NODE_ATTR, "sc_flags", t->flags);
    if (t->op != SC__NONE && t->op < g->ops.len) {
        uint32_t on = SC__VEC_AT(&g->ops, sc__op, t->op).name;
        sc__pb_attr_str(body, NODE_ATTR, "sc_op", sc__graph_str(g, on), sc__intern_len(&g->strings, on));
    }
    if (t->kind == SC_T_SYNC && t->sync != SC_SYNC_NONE) encode_sync(g, t, x, body);
    if (x->deps.len) sc__pb_attr_bytes(body, NODE_ATTR, "sc_fam", fam, x->deps.len);
    sc__pb_frame(out, body);
}

static void encode_meta(const sc__graph *g, const sc__rank *rk, int64_t step_first,
                        sc__pbuf *body, sc__pbuf *out) {
    body->len = 0;
    sc__pb_put_str(body, META_VERSION, "0.0.4", 5);
    const char *gen = "stepcast " SC_VERSION_STRING;
    sc__pb_attr_str(body, META_ATTR, "generator", gen, strlen(gen));
    sc__pb_attr_int64(body, META_ATTR, "rank", rk->rank);
    sc__pb_attr_int64(body, META_ATTR, "world_size", (int64_t)g->ranks.len);
    sc__pb_attr_int64(body, META_ATTR, "sc_step_start_ns", rk->step_start);
    sc__pb_attr_int64(body, META_ATTR, "sc_step_end_ns", rk->step_end);
    if (step_first >= 0) sc__pb_attr_int64(body, META_ATTR, "sc_step_first_node", step_first);
    sc__pb_frame(out, body);
}

static void xrank_free(xrank *x) {
    free(x->order);
    free(x->node_id);
    free(x->pred_off);
    free(x->pred);
    free(x->pred_fam);
    free(x->front_off);
    free(x->front_len);
    free(x->dropped);
    sc__vec_free(&x->front);
    sc__vec_free(&x->deps);
    sc__vec_free(&x->fam);
    sc__vec_free(&x->scratch);
}

/* Encodes rank r into out (cleared first). */
static sc_status encode_rank(const sc__graph *g, uint32_t r, unsigned flags, const xgraph *xg,
                             xrank *x, sc__pbuf *body, sc__pbuf *out, sc__chakra_export_stats *st,
                             sc_error *err) {
    const sc__rank *rk = &SC__VEC_AT(&g->ranks, sc__rank, r);
    uint32_t first = rk->first_task, n = rk->ntasks;
    const sc__task *tasks = sc__graph_tasks(g);
    out->len = 0;
    free(x->order);
    free(x->node_id);
    free(x->pred_off);
    free(x->front_off);
    free(x->front_len);
    x->order = sc__alloc_array(n ? n : 1, sizeof *x->order);
    x->node_id = sc__alloc_array(n ? n : 1, sizeof *x->node_id);
    x->pred_off = sc__alloc_array((size_t)n + 1, sizeof *x->pred_off);
    x->front_off = sc__alloc_array(n ? n : 1, sizeof *x->front_off);
    x->front_len = calloc(n ? n : 1, sizeof *x->front_len);
    x->front.len = 0;
    if (!x->order || !x->node_id || !x->pred_off || !x->front_off || !x->front_len ||
        !rank_preds(g, first, n, x))
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory exporting");
    if (!rank_order(g, first, n, x))
        return sc__fail(err, SC_E_INTERNAL, NULL, SC_NO_OFFSET, "rank %lld: graph has a cycle",
                        (long long)rk->rank);
    uint64_t next = 0;
    for (uint32_t w = 0; w < n; w++) {
        uint32_t v = x->order[w];
        x->node_id[v] = keep_task(&tasks[first + v], flags) ? (uint32_t)next++ : SC__NONE;
    }
    int64_t step_first = -1;
    if (rk->step_first_task >= first && rk->step_first_task - first < n &&
        x->node_id[rk->step_first_task - first] != SC__NONE)
        step_first = x->node_id[rk->step_first_task - first];
    encode_meta(g, rk, step_first, body, out);
    memset(x->dropped, 0, g->procs.len * sizeof *x->dropped);
    for (uint32_t w = 0; w < n; w++) {
        uint32_t v = x->order[w];
        const sc__task *t = &tasks[first + v];
        bool kept = x->node_id[v] != SC__NONE;
        if (!collect_deps(g, first, v, kept, x))
            return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory exporting");
        bool thread = sc__graph_procs(g)[t->proc].kind == SC_P_THREAD;
        if (!kept) {
            if (thread) {
                x->dropped[t->proc].time += t->gap + (t->dur > 0 ? t->dur : 0);
                x->dropped[t->proc].busy += t->dur > 0 ? t->dur : 0;
            }
            continue;
        }
        xdropped fold = {t->gap, 0};
        if (thread) {
            fold.time += x->dropped[t->proc].time;
            fold.busy = x->dropped[t->proc].busy;
            x->dropped[t->proc] = (xdropped){0, 0};
        }
        encode_node(g, first + v, x->node_id[v], x, xg, fold, body, out);
        st->deps += x->deps.len;
    }
    st->nodes += next;
    if (out->oom || body->oom)
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory exporting");
    return SC_OK;
}

static sc_status write_file(const char *path, const sc__pbuf *data, unsigned flags, sc_error *err) {
    sc_output *o;
    sc_status st = sc_output_open(path, (flags & SC_EXPORT_FORCE) ? SC_OUTPUT_FORCE : 0, &o, err);
    if (st != SC_OK) return st;
    if (data->len && fwrite(data->data, 1, data->len, sc_output_file(o)) != data->len) {
        sc_output_abort(o);
        return sc__fail(err, SC_E_INTERNAL, path, SC_NO_OFFSET, "cannot write output");
    }
    return sc_output_commit(o, err);
}

/* PREFIX.comm_group.json: each numbered pg_name and its ranks, ascending
 * ({} when every collective spans the world), for ASTRA-sim's
 * --comm-group-configuration. */
static sc_status write_comm_groups(const sc__graph *g, const pg_table *t, const char *path, unsigned flags,
                                   sc_error *err) {
    size_t most = 1;
    for (uint32_t k = 0; k < t->count; k++) {
        uint32_t c = SC__VEC_AT(&g->groups, sc__group, t->first[k]).count;
        if (c > most) most = c;
    }
    int64_t *r = sc__alloc_array(most, sizeof *r);
    if (!r) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    sc_output *o;
    sc_status st = sc_output_open(path, (flags & SC_EXPORT_FORCE) ? SC_OUTPUT_FORCE : 0, &o, err);
    if (st != SC_OK) {
        free(r);
        return st;
    }
    FILE *f = sc_output_file(o);
    fputs("{", f);
    for (uint32_t k = 0; k < t->count; k++) {
        uint32_t n = group_ranks(g, t->first[k], r);
        fprintf(f, "%s\n  \"%u\": [", k ? "," : "", k + 1);
        for (uint32_t i = 0; i < n; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)r[i]);
        fputs("]", f);
    }
    fputs(t->count ? "\n}\n" : "}\n", f);
    free(r);
    if (ferror(f)) {
        sc_output_abort(o);
        return sc__fail(err, SC_E_INTERNAL, path, SC_NO_OFFSET, "cannot write output");
    }
    return sc_output_commit(o, err);
}

sc_status sc__chakra_export(const sc__graph *g, const char *prefix, unsigned flags,
                            sc__chakra_export_stats *stats, sc_error *err) {
    sc__chakra_export_stats st = {0};
    if (!g->succ_off) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "graph is not finished");
    xgraph xg = {0};
    if (!name_groups(g, &xg.pgs)) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    if (!eager_pairs(g, &xg.partner, &xg.tag)) {
        pg_table_free(&xg.pgs);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    xrank x;
    memset(&x, 0, sizeof x);
    sc__vec_init(&x.front, sizeof(uint32_t));
    sc__vec_init(&x.deps, sizeof(uint64_t));
    sc__vec_init(&x.fam, 1);
    sc__vec_init(&x.scratch, sizeof(uint32_t));
    x.dropped = calloc(g->procs.len ? g->procs.len : 1, sizeof *x.dropped);
    sc__pbuf body, out;
    sc__pbuf_init(&body);
    sc__pbuf_init(&out);
    sc_status s = x.dropped ? SC_OK : sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    size_t plen = strlen(prefix);
    char *path = malloc(plen + 32);
    if (!path && s == SC_OK) s = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    /* The groups first: a bad folder fails before any rank is encoded. */
    if (s == SC_OK) {
        snprintf(path, plen + 32, "%s.comm_group.json", prefix);
        s = write_comm_groups(g, &xg.pgs, path, flags, err);
        st.comm_groups = xg.pgs.count;
    }
    for (uint32_t r = 0; r < g->ranks.len && s == SC_OK; r++) {
        s = encode_rank(g, r, flags, &xg, &x, &body, &out, &st, err);
        if (s != SC_OK) break;
        snprintf(path, plen + 32, "%s.%lld.et", prefix, (long long)SC__VEC_AT(&g->ranks, sc__rank, r).rank);
        s = write_file(path, &out, flags, err);
        st.bytes += out.len;
        st.files++;
    }
    free(path);
    pg_table_free(&xg.pgs);
    free(xg.partner);
    free(xg.tag);
    xrank_free(&x);
    sc__pbuf_free(&body);
    sc__pbuf_free(&out);
    if (stats) *stats = st;
    return s;
}

sc_status sc_graph_export_chakra(const sc_graph *jg, const char *prefix, unsigned flags,
                                 sc_export_stats *stats, sc_error *err) {
    sc__error_clear(err);
    if (!jg) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no graph to export");
    if (!prefix || !*prefix) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no output prefix");
    sc__chakra_export_stats st;
    sc_status s = sc__chakra_export(jg->g, prefix, flags, &st, err);
    if (stats)
        *stats = (sc_export_stats){.files = st.files,
                                   .nodes = st.nodes,
                                   .dependencies = st.deps,
                                   .bytes = st.bytes,
                                   .graph_tasks = jg->g->tasks.len,
                                   .comm_groups = st.comm_groups};
    return s;
}
