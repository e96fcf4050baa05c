/*
 * graph.c - the sc__graph container: adding ranks, processors, tasks, edges
 * and cross-rank groups, then freezing the edges into CSR and proving the
 * graph acyclic (Kahn's algorithm, no recursion).
 */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>

sc__graph *sc__graph_new(void) {
    sc__graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    if (!sc__intern_init(&g->strings)) {
        free(g);
        return NULL;
    }
    sc__vec_init(&g->tasks, sizeof(sc__task));
    sc__vec_init(&g->procs, sizeof(sc__proc));
    sc__vec_init(&g->ops, sizeof(sc__op));
    sc__vec_init(&g->groups, sizeof(sc__group));
    sc__vec_init(&g->group_members, sizeof(uint32_t));
    sc__vec_init(&g->ranks, sizeof(sc__rank));
    sc__vec_init(&g->edge_list, sizeof(sc__edge));
    sc__vec_init(&g->proc_backlog, sizeof(int64_t));
    sc__vec_init(&g->loose_bytes, sizeof(sc__task_bytes));
    return g;
}

void sc__graph_free(sc__graph *g) {
    if (!g) return;
    sc__intern_free(&g->strings);
    sc__vec_free(&g->tasks);
    sc__vec_free(&g->procs);
    sc__vec_free(&g->ops);
    sc__vec_free(&g->groups);
    sc__vec_free(&g->group_members);
    sc__vec_free(&g->ranks);
    sc__vec_free(&g->edge_list);
    sc__vec_free(&g->proc_backlog);
    sc__vec_free(&g->loose_bytes);
    sc__spare_free(&g->spare);
    free(g->succ_off);
    free(g->succ);
    free(g->succ_family);
    free(g->indeg);
    sc__warnings_free(&g->warnings);
    free(g);
}

const char *sc__task_kind_name(uint8_t kind) {
    static const char *names[SC_T_COUNT] = {"cpu",    "launch", "runtime", "sync", "kernel",
                                            "memcpy", "memset", "collective", "send", "recv"};
    return kind < SC_T_COUNT ? names[kind] : "unknown";
}

const char *sc__edge_family_name(uint8_t family) {
    static const char *names[SC_E_FAMILY_COUNT] = {
        "thread", "cross_thread", "launch", "stream", "cross_stream", "gpu_to_cpu", "data", "ctrl"};
    return family < SC_E_FAMILY_COUNT ? names[family] : "unknown";
}

const char *sc__coll_type_name(uint8_t type) {
    static const char *names[SC_C_COUNT] = {
        "all_reduce", "reduce",     "all_gather",     "gather",  "scatter",  "broadcast",
        "all_to_all", "reduce_scatter", "barrier", "send_recv", "unknown"};
    return type < SC_C_COUNT ? names[type] : "unknown";
}

/* Case-insensitive containment, ignoring '_' so "all_reduce", "AllReduce"
 * and "allreduce" all match "allreduce". */
static bool name_has(const char *name, const char *key) {
    char norm[256];
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof norm; p++) {
        if (*p == '_' || *p == ' ') continue;
        char c = *p;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        norm[n++] = c;
    }
    norm[n] = '\0';
    return strstr(norm, key) != NULL;
}

sc__coll_type sc__coll_type_from_name(const char *name) {
    /* Longest keys first: "reducescatter" contains "reduce". */
    static const struct {
        const char *key;
        sc__coll_type type;
    } table[] = {
        {"reducescatter", SC_C_REDUCE_SCATTER}, {"allreduce", SC_C_ALL_REDUCE},
        {"allgather", SC_C_ALL_GATHER},         {"alltoall", SC_C_ALL_TO_ALL},
        {"sendrecv", SC_C_SEND_RECV},           {"broadcast", SC_C_BROADCAST},
        {"barrier", SC_C_BARRIER},              {"gather", SC_C_GATHER},
        {"scatter", SC_C_SCATTER},              {"reduce", SC_C_REDUCE},
        {"send", SC_C_SEND_RECV},               {"recv", SC_C_SEND_RECV},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (name_has(name, table[i].key)) return table[i].type;
    return SC_C_UNKNOWN;
}

uint32_t sc__graph_add_rank(sc__graph *g, int64_t rank, uint32_t trace) {
    sc__rank *r = sc__vec_push(&g->ranks);
    if (!r) return SC__NONE;
    *r = (sc__rank){.rank = rank,
                    .trace = trace,
                    .first_task = (uint32_t)g->tasks.len,
                    .step_number = -1,
                    .step_first_task = SC__NONE,
                    .step_last_task = SC__NONE};
    return (uint32_t)g->ranks.len - 1;
}

uint32_t sc__graph_add_proc(sc__graph *g, uint32_t rank, sc__proc_kind kind, int16_t device,
                            int64_t id) {
    if (g->procs.len >= SC__NONE - 1) return SC__NONE;
    sc__proc *p = sc__vec_push(&g->procs);
    if (!p) return SC__NONE;
    p->rank = rank;
    p->kind = (uint8_t)kind;
    p->quiet = 0;
    p->device = device;
    p->id = id;
    p->first = SC__NONE;
    return (uint32_t)g->procs.len - 1;
}

uint32_t sc__graph_add_task(sc__graph *g, const sc__task *t) {
    if (g->tasks.len >= SC__NONE - 1) return SC__NONE;
    sc__task *slot = sc__vec_push(&g->tasks);
    if (!slot) return SC__NONE;
    *slot = *t;
    return (uint32_t)g->tasks.len - 1;
}

bool sc__graph_add_edge(sc__graph *g, uint32_t from, uint32_t to, sc__edge_family family) {
    if (from == to) return true;
    sc__edge *e = sc__vec_push(&g->edge_list);
    if (!e) return false;
    e->from = from;
    e->to = to;
    e->family = (uint8_t)family;
    return true;
}

uint32_t sc__graph_add_group(sc__graph *g, sc__coll_type type, int64_t bytes,
                             const uint32_t *members, uint32_t count) {
    if (g->groups.len >= SC__NONE - 1) return SC__NONE;
    if (!sc__vec_reserve(&g->group_members, g->group_members.len + count)) return SC__NONE;
    sc__group *grp = sc__vec_push(&g->groups);
    if (!grp) return SC__NONE;
    uint32_t id = (uint32_t)g->groups.len - 1;
    grp->first = (uint32_t)g->group_members.len;
    grp->count = count;
    grp->type = (uint8_t)type;
    grp->bytes = bytes;
    grp->transfer_ns = -1;
    grp->comm = SC__NONE;
    grp->comm_ranks = count;
    sc__task *tasks = sc__graph_tasks(g);
    for (uint32_t i = 0; i < count; i++) {
        SC__VEC_AT(&g->group_members, uint32_t, g->group_members.len++) = members[i];
        tasks[members[i]].group = id;
    }
    return id;
}

int64_t sc__graph_task_bytes(const sc__graph *g, uint32_t task) {
    uint32_t grp = sc__graph_tasks(g)[task].group;
    if (grp != SC__NONE) return SC__VEC_AT(&g->groups, sc__group, grp).bytes;
    const sc__task_bytes *lb = g->loose_bytes.data;
    size_t lo = 0, hi = g->loose_bytes.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (lb[mid].task < task) lo = mid + 1;
        else hi = mid;
    }
    return lo < g->loose_bytes.len && lb[lo].task == task ? lb[lo].bytes : -1;
}

bool sc__graph_warn(sc__graph *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bool ok = sc__warnings_vadd(&g->warnings, fmt, ap);
    va_end(ap);
    return ok;
}

/* (to << 8 | family) keys of one source's successors. */
static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts one source's successors by (to, family): insertion sort for the
 * usual handful, qsort of packed keys for a source with many. */
static bool sort_succ(uint32_t *to, uint8_t *fam, uint32_t n) {
    if (n <= 32) {
        for (uint32_t i = 1; i < n; i++) {
            uint32_t v = to[i], j = i;
            uint8_t f = fam[i];
            while (j > 0 && (to[j - 1] > v || (to[j - 1] == v && fam[j - 1] > f))) {
                to[j] = to[j - 1];
                fam[j] = fam[j - 1];
                j--;
            }
            to[j] = v;
            fam[j] = f;
        }
        return true;
    }
    uint64_t *k = sc__alloc_array(n, sizeof *k);
    if (!k) return false;
    for (uint32_t i = 0; i < n; i++) k[i] = (uint64_t)to[i] << 8 | fam[i];
    qsort(k, n, sizeof *k, cmp_u64);
    for (uint32_t i = 0; i < n; i++) {
        to[i] = (uint32_t)(k[i] >> 8);
        fam[i] = (uint8_t)k[i];
    }
    free(k);
    return true;
}

void sc__sort_by_seq(const sc__task *tasks, uint32_t *s, uint32_t n) {
    /* Insertion sort: linear on the nearly sorted slices builders make. */
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = s[i], j = i;
        while (j > 0 && tasks[s[j - 1]].seq > tasks[v].seq) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = v;
    }
}

/* The i-th task of a processor in seq order: s[i] from its sorted slice,
 * or, when its tasks are one run in seq order (s NULL), at + i. */
static inline uint32_t nth_in_order(const uint32_t *s, uint32_t at, uint32_t i) {
    return s ? s[i] : at + i;
}

/* Orders each processor's tasks by seq and links them with order edges. */
static bool add_proc_order(sc__graph *g, bool add_edges) {
    size_t nt = g->tasks.len, np = g->procs.len;
    sc__task *tasks = sc__graph_tasks(g);
    sc__proc *procs = sc__graph_procs(g);
    uint32_t *count = calloc(np + 1, sizeof *count);
    uint32_t *first = calloc(np ? np : 1, sizeof *first); /* then each slice's fill */
    uint32_t *order = NULL;
    bool ok = count && first;
    sc__runs runs_seen = SC__RUNS_INIT;
    for (size_t i = 0; ok && i < nt; i++)
        sc__runs_add(&runs_seen, count + 1, first, (uint32_t)i, tasks[i].proc, tasks[i].seq);
    bool runs = ok && runs_seen.all;
    if (ok) {
        for (size_t p = 0; p < np; p++) count[p + 1] += count[p];
    }
    if (ok && !runs) { /* count[p] is the start of p's slice: fill, then sort by seq */
        ok = (order = sc__alloc_array(nt ? nt : 1, sizeof *order)) != NULL;
        if (ok) memset(first, 0, np * sizeof *first);
        for (size_t i = 0; ok && i < nt; i++) {
            uint32_t p = tasks[i].proc;
            order[count[p] + first[p]++] = (uint32_t)i;
        }
    }
    if (ok && add_edges) { /* n - 1 edges per processor of n tasks: room for them at once, faulted in */
        size_t extra = nt, len = g->edge_list.len;
        for (size_t p = 0; p < np; p++) extra -= count[p + 1] > count[p];
        ok = sc__vec_reserve_exact(&g->edge_list, len + extra);
        if (ok) sc__prefault(sc__vec_end(&g->edge_list), extra * g->edge_list.elem);
    }
    for (size_t p = 0; p < np && ok; p++) {
        uint32_t n = count[p + 1] - count[p], at = runs ? first[p] : 0;
        uint32_t *s = runs ? NULL : order + count[p];
        if (s) sc__sort_by_seq(tasks, s, n);
        procs[p].first = n ? nth_in_order(s, at, 0) : SC__NONE;
        procs[p].ntasks = n;
        if (!add_edges) continue;
        sc__edge_family fam = procs[p].kind == SC_P_THREAD ? SC_E_THREAD : SC_E_STREAM;
        for (uint32_t i = 1; i < n && ok; i++)
            ok = sc__graph_add_edge(g, nth_in_order(s, at, i - 1), nth_in_order(s, at, i), fam);
    }
    free(count);
    free(first);
    free(order);
    return ok;
}

static sc_status report_cycle(sc__graph *g, const uint32_t *blocked, sc_error *err) {
    /* Every task Kahn's algorithm left blocked has a blocked predecessor, so
     * walking predecessors from any of them for ntasks steps ends on a cycle. */
    size_t nt = g->tasks.len;
    uint32_t *pred = sc__alloc_array(nt ? nt : 1, sizeof *pred);
    if (!pred) return sc__fail(err, SC_E_GRAPH, NULL, SC_NO_OFFSET, "dependency cycle");
    uint32_t start = SC__NONE;
    for (size_t u = 0; u < nt; u++) {
        pred[u] = SC__NONE;
        if (blocked[u] && start == SC__NONE) start = (uint32_t)u;
    }
    for (size_t u = 0; u < nt; u++)
        if (blocked[u])
            for (uint32_t k = g->succ_off[u]; k < g->succ_off[u + 1]; k++)
                if (blocked[g->succ[k]] && pred[g->succ[k]] == SC__NONE) pred[g->succ[k]] = (uint32_t)u;
    uint32_t cur = start;
    for (size_t step = 0; step < nt && pred[cur] != SC__NONE; step++) cur = pred[cur];
    /* cur is on a cycle: list it forwards (reverse of the pred walk). */
    uint32_t ring[6];
    int n = 0;
    uint32_t t = cur;
    do {
        if (n < 6) ring[n++] = t;
        t = pred[t];
    } while (t != SC__NONE && t != cur && n < 6);
    char msg[400];
    size_t len = 0;
    const sc__task *tasks = sc__graph_tasks(g);
    for (int i = n - 1; i >= 0; i--) {
        int w = snprintf(msg + len, sizeof msg - len, "%s%s (task %u)", i == n - 1 ? "" : " -> ",
                         sc__graph_str(g, tasks[ring[i]].name), ring[i]);
        if (w < 0 || (size_t)w >= sizeof msg - len) break;
        len += (size_t)w;
    }
    free(pred);
    return sc__fail(err, SC_E_GRAPH, NULL, SC_NO_OFFSET, "dependency cycle: %s%s", msg,
                    t == cur ? "" : " -> ...");
}

/* Kahn's algorithm over the CSR graph, deg holding each task's in-degree:
 * returns how many tasks become ready, and leaves deg[t] nonzero exactly
 * for the others (report_cycle's "blocked"). Ready tasks are taken in index
 * order, not first in first out: builders number each processor's tasks in
 * a row and most edges point forward, so the scan walks the arrays nearly
 * in order, and a task that becomes ready behind the scan (an edge pointing
 * back) is taken at once from the stack. A FIFO queue advanced every
 * processor of every rank at once instead, a cache miss per edge: on a
 * 1,024-rank job (25M tasks) its decrement was half of this function. Which
 * tasks become ready does not depend on the order. Each is taken once: by
 * the scan if it is ready when the scan reaches it, else when its last
 * predecessor is taken (ahead of the scan: the scan takes it; behind: the
 * stack), and a taken task has no edge left to lose, so no mark is needed. */
static size_t ready_in_scan_order(const sc__graph *g, uint32_t *deg, uint32_t *stack) {
    size_t nt = g->tasks.len, ready = 0;
    const uint32_t *off = g->succ_off, *succ = g->succ;
    for (size_t i = 0; i < nt; i++) {
        if (deg[i]) continue;
        size_t top = 0;
        stack[top++] = (uint32_t)i;
        while (top) {
            uint32_t t = stack[--top];
            ready++;
            for (uint32_t k = off[t]; k < off[t + 1]; k++) {
                uint32_t v = succ[k];
                if (--deg[v] == 0 && v < i) stack[top++] = v;
            }
        }
    }
    return ready;
}

/* A graph without CSR arrays is not finished (sc__sim_run checks). */
static void free_csr(sc__graph *g) {
    free(g->succ_off);
    free(g->succ);
    free(g->succ_family);
    free(g->indeg);
    g->succ_off = g->succ = g->indeg = NULL;
    g->succ_family = NULL;
}

/* The CSR arrays for nt tasks and at most max_edges edges, fresh (none
 * when out of memory). */
static bool alloc_csr(sc__graph *g, size_t nt, size_t max_edges) {
    free_csr(g);
    g->succ_off = calloc(nt + 1, sizeof *g->succ_off);
    g->succ = sc__alloc_array(max_edges ? max_edges : 1, sizeof *g->succ);
    g->succ_family = sc__alloc_array(max_edges ? max_edges : 1, 1);
    g->indeg = calloc(nt ? nt : 1, sizeof *g->indeg);
    bool ok = g->succ_off && g->succ && g->succ_family && g->indeg;
    if (!ok) free_csr(g);
    return ok;
}

/* On a large graph the CSR arrays' first touch (a page fault and zeroing
 * each page) was 16% of a 1,024-rank replay's clear_page samples, all on
 * the thread that finishes the graph while the other cores were idle
 * (perf). Given a second thread, a helper faults them in while this one
 * adds the order edges and checks the list. Processor order adds one edge
 * per task at most (n - 1 per processor of n tasks), so the edges' room is
 * known before. */
#define FINISH_PREFAULT_MIN_TASKS ((size_t)1 << 20)
static void prefault_csr(const sc__graph *g, size_t nt, size_t max_edges, sc__prefaulter *pf) {
    if (g->finish_threads < 2 || nt < FINISH_PREFAULT_MIN_TASKS) return;
    void *arrays[] = {g->succ_off, g->indeg, g->succ, g->succ_family};
    size_t bytes[] = {(nt + 1) * sizeof *g->succ_off, nt * sizeof *g->indeg, max_edges * sizeof *g->succ,
                      max_edges};
    sc__prefault_start(pf, arrays, bytes, sizeof arrays / sizeof *arrays);
}

/* Bytes of g's CSR arrays (alloc_csr) for nt tasks and `edges` edges. */
static size_t csr_bytes(const sc__graph *g, size_t nt, size_t edges) {
    return (nt + 1) * sizeof *g->succ_off + nt * sizeof *g->indeg +
           edges * (sizeof *g->succ + sizeof *g->succ_family);
}

/* Bytes finish adds to g at its peak: the CSR arrays for max_edges, the
 * order edges' room in the edge list, add_proc_order's order (one index per
 * task when it adds order edges). */
static size_t finish_memory(const sc__graph *g, size_t max_edges, bool add_order_edges) {
    size_t nt = g->tasks.len;
    size_t grow = max_edges > g->edge_list.cap ? (max_edges - g->edge_list.cap) * g->edge_list.elem : 0;
    return csr_bytes(g, nt, max_edges) + grow + (add_order_edges ? nt * sizeof(uint32_t) : 0);
}

sc_status sc__graph_finish(sc__graph *g, bool add_order_edges, sc_error *err) {
    size_t nt = g->tasks.len, max_edges = g->edge_list.len + (add_order_edges ? nt : 0);
    sc_status fits = sc__graph_check_budget(g, g->budget,
                                            g->budget_held + finish_memory(g, max_edges, add_order_edges),
                                            "finishing the graph", "its edge arrays and the traces held", err);
    if (fits != SC_OK) return fits;
    if (!alloc_csr(g, nt, max_edges))
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory building the graph");
    sc__prefaulter pf = {0}; /* not started */
    prefault_csr(g, nt, max_edges, &pf);
    bool ok = add_proc_order(g, add_order_edges);
    sc__edge *edges = g->edge_list.data;
    size_t ne = g->edge_list.len, bad = ne;
    for (size_t i = 0; ok && i < ne && bad == ne; i++)
        if (edges[i].from >= nt || edges[i].to >= nt) bad = i;
    sc__prefault_join(&pf); /* here rather than before each return below */
    if (!ok || bad < ne) free_csr(g); /* not finished */
    if (!ok) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory building the graph");
    if (bad < ne) return sc__fail(err, SC_E_INTERNAL, NULL, SC_NO_OFFSET, "edge to a task that does not exist");
    /* CSR straight from the edge list: a counting sort by source (linear,
     * no copy of the list), then each source's few successors sorted by
     * (to, family) and deduplicated on (to), keeping the lowest family - the
     * order a sort of the whole list by (from, to, family) gives. */
    uint32_t *off = g->succ_off;
    for (size_t i = 0; i < ne; i++) off[edges[i].from + 1]++;
    for (size_t i = 0; i < nt; i++) off[i + 1] += off[i];
    uint32_t *fill = g->indeg; /* borrowed as the insertion cursor, zero again below */
    for (size_t i = 0; i < ne; i++) {
        uint32_t at = off[edges[i].from] + fill[edges[i].from]++;
        g->succ[at] = edges[i].to;
        g->succ_family[at] = edges[i].family;
    }
    size_t w = 0;
    for (size_t u = 0; u < nt; u++) {
        uint32_t a = off[u], b = off[u + 1];
        fill[u] = 0;
        if (b - a > 1 && !sort_succ(g->succ + a, g->succ_family + a, b - a))
            return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory building the graph");
        off[u] = (uint32_t)w;
        for (uint32_t k = a; k < b; k++) {
            if (k > a && g->succ[k] == g->succ[k - 1]) continue;
            g->succ[w] = g->succ[k];
            g->succ_family[w++] = g->succ_family[k];
        }
    }
    off[nt] = (uint32_t)w;
    ne = w;
    for (size_t i = 0; i < ne; i++) g->indeg[g->succ[i]]++;
    g->nedges = ne;

    /* The edge list is dead now. Its memory (12 bytes an edge, and most
     * tasks have an edge) goes to the spare, already faulted in, where
     * fresh pages are a cost of their own on a large job (200 MB for 25M
     * tasks): Kahn's two arrays take it when it has room, and a replay's
     * calibration after them (keep_spare). */
    sc__spare_keep(&g->spare, g->edge_list.data, sc__vec_bytes(&g->edge_list));
    sc__vec_init(&g->edge_list, sizeof(sc__edge));
    /* Kahn's algorithm: every task must become ready. */
    size_t n = nt ? nt : 1, got;
    uint32_t *deg = sc__spare_borrow(&g->spare, 2 * n * sizeof(uint32_t), &got);
    uint32_t *stack = deg ? deg + n : NULL;
    sc_status st = SC_OK;
    if (deg) {
        memcpy(deg, g->indeg, nt * sizeof *deg);
        if (ready_in_scan_order(g, deg, stack) != nt) st = report_cycle(g, deg, err);
    } else {
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory checking the graph");
    }
    sc__spare_return(&g->spare, deg, got);
    if (!g->keep_spare || st != SC_OK) sc__spare_free(&g->spare);
    return st;
}

/* A vector's bytes: its capacity, or only the part written so far (used),
 * which is what is resident while it grows by doubling. */
static size_t vec_bytes(const sc__vec *v, bool used) { return used ? v->len * v->elem : sc__vec_bytes(v); }

static size_t graph_bytes(const sc__graph *g, bool used) {
    size_t csr = g->succ_off ? csr_bytes(g, g->tasks.len, g->nedges) : 0;
    return sizeof *g + sc__intern_memory(&g->strings) + vec_bytes(&g->tasks, used) +
           vec_bytes(&g->procs, used) + vec_bytes(&g->ops, used) + vec_bytes(&g->groups, used) +
           vec_bytes(&g->group_members, used) + vec_bytes(&g->ranks, used) +
           vec_bytes(&g->edge_list, used) + vec_bytes(&g->proc_backlog, used) +
           vec_bytes(&g->loose_bytes, used) + csr + g->spare.bytes;
}

size_t sc__graph_memory(const sc__graph *g) { return graph_bytes(g, false); }

sc_status sc__graph_check_budget(const sc__graph *g, uint64_t budget, uint64_t besides,
                                 const char *doing, const char *besides_what, sc_error *err) {
    uint64_t graph = graph_bytes(g, true);
    if (!budget || graph + besides <= budget) return SC_OK;
    char b[32], gb[32], ob[32], nb[32];
    return sc__fail(err, SC_E_LIMIT, NULL, SC_NO_OFFSET,
                    "%s needs about %s with %zu tasks (the graph %s, %s %s), more than the memory "
                    "budget of %s (raise it with --max-memory or STEPCAST_MAX_MEMORY)",
                    doing, sc__budget_text(graph + besides, nb), g->tasks.len, sc__budget_text(graph, gb),
                    besides_what, sc__budget_text(besides, ob), sc__budget_text(budget, b));
}
