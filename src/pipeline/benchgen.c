/*
 * benchgen.c - the op list of a generated benchmark (`stepcast benchgen`):
 * which nodes of a rank's PyTorch Execution Trace the generated program
 * runs, and how, so that it replays the traced iteration's operators,
 * shapes, streams and collectives without the model's code.
 *
 * Replay units, chosen in id order (parents before children):
 *   - a collective wrapper (c10d::*, or a record_param_comms outside one)
 *     is one unit: a collective, or a wait on one ("wait"), read off its
 *     record_param_comms (name, sequence number, process group, split
 *     sizes, group size when recorded);
 *   - an operator with a schema none of whose descendants has one is a
 *     call: its children are the dispatcher's annotations ("detach_" under
 *     aten::detach_), not operators to run twice; an operator of another
 *     namespace than aten (fbgemm::...) is a call too, its aten children
 *     being its internals;
 *   - a leaf without a schema is an Inductor kernel (triton_*: emulated by
 *     one elementwise kernel over the buffer allocated just before it in
 *     the same compiled region, as the ET records no arguments for it), an
 *     annotation with no arguments (a marker: nothing to run), or skipped;
 *   - anything else is descended into.
 * Every leaf of the ET is covered by exactly one unit; coverage counts
 * leaves by what their unit does.
 *
 * With the rank's Kineto trace (linked by et_link.c) each unit gets the
 * GPU ops launched inside its cpu_op and the stream they ran on; a unit
 * that reads a tensor last written on another stream waits for its
 * writer's event (writers without GPU work, views, pass their input's
 * writer on). GPU ops launched inside no unit (custom CUDA extensions such
 * as fused layer norms) are counted by top-level op: what the benchmark
 * does not reproduce.
 */
#include "benchgen.h"

#include "../graph/graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *sc__bg_reason_text(sc__bg_reason r) {
    static const char *const text[SC__BGR_COUNT] = {
        [SC__BGR_NONE] = "",
        [SC__BGR_NO_SCHEMA] = "no operator schema",
        [SC__BGR_BAD_SCHEMA] = "operator schema does not parse",
        [SC__BGR_OPAQUE_ARG] = "argument of a type the trace does not record (Stream, Storage, Object)",
        [SC__BGR_COMM_LAYOUT] = "record_param_comms arguments not understood",
        [SC__BGR_COMM_KIND] = "collective kind not issued by the program",
        [SC__BGR_TRITON_NO_BUF] = "Triton kernel without a buffer allocated before it",
    };
    return r < SC__BGR_COUNT ? text[r] : "?";
}

const char *sc__bg_kind_name(sc__bg_kind k) {
    static const char *const name[SC__BG_KINDS] = {"call", "collective", "wait", "emulated", "marker", "skip"};
    return k < SC__BG_KINDS ? name[k] : "?";
}

/* ---- small text helpers ---- */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

static bool span_eq(sc__span s, const char *lit) { return s.n == strlen(lit) && memcmp(s.s, lit, s.n) == 0; }


/* The end of the JSON value at p (strings, nested arrays and objects). */
static const char *value_end(const char *p) {
    int depth = 0;
    for (; *p; p++) {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1]) p++;
            if (!*p) return p;
            if (depth == 0) return p + 1;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (depth == 0) return p;
            if (--depth == 0) return p + 1;
        } else if (depth == 0 && *p == ',') {
            return p;
        }
    }
    return p;
}

int sc__bg_json_items(const char *raw, sc__span *items, int max) {
    const char *p = skip_ws(raw);
    if (*p != '[') return -1;
    p = skip_ws(p + 1);
    int n = 0;
    while (*p && *p != ']') {
        const char *e = value_end(p);
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\n')) t--;
        if (n < max) items[n] = (sc__span){p, (uint32_t)(t - p)};
        n++;
        p = skip_ws(e);
        if (*p == ',') p = skip_ws(p + 1);
        else if (*p != ']') return -1;
    }
    return n;
}

/* ---- op schemas ---- */

/* One parameter "Type name=default" in [p, e): type and name spans. */
static bool parse_param(const char *p, const char *e, sc__span *type, sc__span *name) {
    while (p < e && *p == ' ') p++;
    const char *eq = p;
    int depth = 0;
    while (eq < e && !(depth == 0 && *eq == '=')) {
        if (*eq == '(' || *eq == '[') depth++;
        if (*eq == ')' || *eq == ']') depth--;
        eq++;
    }
    const char *ne = eq;
    while (ne > p && ne[-1] == ' ') ne--;
    const char *ns = ne;
    while (ns > p && ns[-1] != ' ') ns--;
    if (ns == p || ns == ne) return false;
    const char *te = ns;
    while (te > p && te[-1] == ' ') te--;
    *type = (sc__span){p, (uint32_t)(te - p)};
    *name = (sc__span){ns, (uint32_t)(ne - ns)};
    return true;
}

bool sc__bg_parse_schema(const char *s, sc__bg_schema *out) {
    memset(out, 0, sizeof *out);
    const char *colon = strstr(s, "::"), *lp = strchr(s, '(');
    if (!colon || !lp || colon > lp || colon == s) return false;
    out->ns = (sc__span){s, (uint32_t)(colon - s)};
    const char *name = colon + 2, *dot = memchr(name, '.', (size_t)(lp - name));
    out->op = (sc__span){name, (uint32_t)((dot ? dot : lp) - name)};
    if (dot) out->overload = (sc__span){dot + 1, (uint32_t)(lp - dot - 1)};
    if (out->op.n == 0) return false;
    out->kwonly = UINT32_MAX;
    const char *p = lp + 1;
    int depth = 0;
    const char *start = p;
    for (; *p; p++) {
        if (*p == '(' || *p == '[') depth++;
        else if ((*p == ')' || *p == ']') && depth > 0) depth--;
        else if ((*p == ',' || *p == ')') && depth == 0) {
            const char *a = start;
            while (a < p && *a == ' ') a++;
            if (a < p && *a == '*' && p - a == 1) {
                out->kwonly = out->nparams;
            } else if (a < p) {
                if (out->nparams == SC__BG_MAX_PARAMS) return false;
                if (!parse_param(a, p, &out->type[out->nparams], &out->name[out->nparams])) return false;
                out->nparams++;
            }
            if (*p == ')') break;
            start = p + 1;
        }
    }
    if (*p != ')') return false;
    if (out->kwonly == UINT32_MAX) out->kwonly = out->nparams;
    return true;
}

/* ---- the ET as a tree ---- */

typedef struct tree {
    const sc_et *et;
    const sc__et_node *n;
    uint32_t count;
    uint32_t *parent;      /* node index of the parent, SC__NONE */
    uint32_t *child_first; /* CSR children, by parent */
    uint32_t *child;
    uint8_t *desc_schema;  /* a descendant has an op schema */
} tree;

static const char *node_str(const sc_et *et, uint32_t id) {
    return id == SC__NONE ? "" : sc__intern_str(&et->strings, id);
}

static bool has_schema(const sc_et *et, const sc__et_node *n) { return node_str(et, n->schema)[0] != '\0'; }

static void tree_free(tree *t) {
    free(t->parent);
    free(t->child_first);
    free(t->child);
    free(t->desc_schema);
}

static bool tree_build(tree *t, const sc_et *et) {
    memset(t, 0, sizeof *t);
    t->et = et;
    t->n = et->nodes.data;
    t->count = (uint32_t)et->nodes.len;
    uint32_t c = t->count ? t->count : 1;
    t->parent = sc__alloc_array(c, sizeof *t->parent);
    t->child_first = calloc((size_t)c + 1, sizeof *t->child_first);
    t->child = sc__alloc_array(c, sizeof *t->child);
    t->desc_schema = calloc(c, 1);
    if (!t->parent || !t->child_first || !t->child || !t->desc_schema) return false;
    for (uint32_t v = 0; v < t->count; v++) {
        uint32_t p = sc__et_node_by_id(et, t->n[v].parent);
        t->parent[v] = p == v ? SC__NONE : p;
        if (t->parent[v] != SC__NONE) t->child_first[t->parent[v] + 1]++;
    }
    for (uint32_t v = 0; v < t->count; v++) t->child_first[v + 1] += t->child_first[v];
    uint32_t *fill = calloc(c, sizeof *fill);
    if (!fill) return false;
    for (uint32_t v = 0; v < t->count; v++) {
        uint32_t p = t->parent[v];
        if (p != SC__NONE) t->child[t->child_first[p] + fill[p]++] = v;
    }
    free(fill);
    /* Bottom-up: a child's id is above its parent's (it started later). */
    for (uint32_t v = t->count; v-- > 0;) {
        uint32_t p = t->parent[v];
        if (p != SC__NONE && p < v && (t->desc_schema[v] || has_schema(et, &t->n[v]))) t->desc_schema[p] = 1;
    }
    return true;
}

static uint32_t nchildren(const tree *t, uint32_t v) { return t->child_first[v + 1] - t->child_first[v]; }

/* ---- collectives ---- */

static bool is_comm_name(const char *nm) { return sc__starts_with(nm, "c10d::") || strcmp(nm, "record_param_comms") == 0; }

/* The record_param_comms node at or under v (depth-first), SC__NONE. */
static uint32_t find_info(const tree *t, uint32_t v, int depth) {
    if (strcmp(node_str(t->et, t->n[v].name), "record_param_comms") == 0) return v;
    if (depth > 8) return SC__NONE;
    for (uint32_t i = t->child_first[v]; i < t->child_first[v + 1]; i++) {
        uint32_t r = find_info(t, t->child[i], depth + 1);
        if (r != SC__NONE) return r;
    }
    return SC__NONE;
}

/* An integer value, or the first of a list ([88, false]: torch 2.x's
 * sequence number); dflt for anything else. */
static int64_t span_int(sc__span s, int64_t dflt) {
    if (s.n > 1 && s.s[0] == '[') s = (sc__span){s.s + 1, s.n - 1};
    if (s.n == 0 || !(s.s[0] == '-' || sc__is_digit(s.s[0]))) return dflt;
    return strtoll(s.s, NULL, 10);
}

/* numel and element size of the tensors of a raw value (a tensor tuple or a
 * list of them). */
static void tensor_elems(sc__span v, uint64_t *elems, uint32_t *elem_size) {
    char buf[4096];
    if (v.n >= sizeof buf) return;
    memcpy(buf, v.s, v.n);
    buf[v.n] = '\0';
    sc__span it[8];
    int n = sc__bg_json_items(buf, it, 8);
    if (n == 6 && it[5].s[0] == '"') {
        *elems += (uint64_t)span_int(it[3], 0);
        *elem_size = (uint32_t)span_int(it[4], 0);
        return;
    }
    for (int i = 0; i < n && i < 8; i++) {
        sc__span sub = {v.s + (it[i].s - buf), it[i].n};
        if (it[i].s[0] == '[') tensor_elems(sub, elems, elem_size);
    }
}

/* Reads the collective of its record_param_comms node: [tensors, seq, pg,
 * rank, name, in_split, out_split(, group_size)] (2023-24 PyTorch), or
 * [seq, pg, rank, "wait", ...]. The name is the first string. */
static bool read_comm(const sc_et *et, uint32_t info, sc__bg_comm *c) {
    const sc__et_node *n = &((const sc__et_node *)et->nodes.data)[info];
    memset(c, 0, sizeof *c);
    c->info_node = info;
    c->group_size = -1;
    const char *in = node_str(et, n->in_values);
    sc__span it[16];
    int k = -1, cnt = sc__bg_json_items(in, it, 16);
    for (int i = 0; i < cnt && i < 16 && k < 0; i++)
        if (it[i].s[0] == '"') k = i;
    if (k < 2 || k + 2 >= cnt) return false;
    c->kind = (sc__span){it[k].s + 1, it[k].n >= 2 ? it[k].n - 2 : 0};
    c->seq = span_int(it[k - 3 >= 0 ? k - 3 : 0], -1);
    c->pg = span_int(it[k - 2], -1);
    c->in_split = it[k + 1];
    c->out_split = it[k + 2];
    if (k + 3 < cnt) c->group_size = span_int(it[k + 3], -1);
    if (k == 4) {
        c->in_tensors = it[0];
        tensor_elems(it[0], &c->in_elems, &c->elem_size);
    }
    sc__span ot[4];
    if (sc__bg_json_items(node_str(et, n->out_values), ot, 4) >= 1) {
        c->out_tensors = ot[0];
        uint32_t es = 0;
        tensor_elems(ot[0], &c->out_elems, &es);
        if (!c->elem_size) c->elem_size = es;
    }
    return k == 3 || k == 4;
}

static bool comm_kind_known(sc__span k) {
    static const char *const known[] = {"allreduce", "all_reduce", "all_to_allv", "all_to_all", "alltoall",
                                        "alltoall_base", "allgather", "all_gather", "_allgather_base",
                                        "allgather_into_tensor_coalesced", "reduce_scatter",
                                        "_reduce_scatter_base", "broadcast", "reduce", "barrier"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (span_eq(k, known[i])) return true;
    return false;
}

/* ---- classification ---- */

static bool opaque_args(const sc_et *et, const sc__et_node *n) {
    sc__span it[SC__BG_MAX_PARAMS];
    int cnt = sc__bg_json_items(node_str(et, n->in_types), it, SC__BG_MAX_PARAMS);
    for (int i = 0; i < cnt && i < SC__BG_MAX_PARAMS; i++)
        if (span_eq(it[i], "\"Stream\"") || span_eq(it[i], "\"Storage\"") || span_eq(it[i], "\"Object\""))
            return true;
    return false;
}

static bool empty_list(const char *raw) {
    const char *p = skip_ws(raw);
    return !*p || (*p == '[' && *skip_ws(p + 1) == ']');
}

/* Makes node v a unit of kind k (reason r); false on out-of-memory. */
static bool add_unit(sc__bg_rank *r, uint32_t v, uint32_t top, sc__bg_kind k, sc__bg_reason why) {
    sc__bg_unit *u = sc__vec_push(&r->units);
    if (!u) return false;
    *u = (sc__bg_unit){.node = v, .top = top, .stream = -1, .emu_buf = SC__NONE, .comm = SC__NONE,
                       .kind = (uint8_t)k, .reason = (uint8_t)why};
    return true;
}

/* A collective unit at v. */
static bool comm_unit(sc__bg_rank *r, const tree *t, uint32_t v, uint32_t top) {
    uint32_t info = find_info(t, v, 0);
    sc__bg_comm c;
    if (info == SC__NONE || !read_comm(r->et, info, &c)) return add_unit(r, v, top, SC__BG_SKIP, SC__BGR_COMM_LAYOUT);
    bool wait = span_eq(c.kind, "wait");
    if (!wait && !comm_kind_known(c.kind)) return add_unit(r, v, top, SC__BG_SKIP, SC__BGR_COMM_KIND);
    sc__bg_comm *slot = sc__vec_push(&r->comms);
    if (!slot || !add_unit(r, v, top, wait ? SC__BG_WAIT : SC__BG_COLL, SC__BGR_NONE)) return false;
    *slot = c;
    ((sc__bg_unit *)r->units.data)[r->units.len - 1].comm = (uint32_t)(r->comms.len - 1);
    return true;
}

/* The latest earlier unit with the same parent that allocates (aten::empty*),
 * for an emulated Triton kernel to write. */
static uint32_t alloc_before(const sc__bg_rank *r, const tree *t, uint32_t v) {
    const sc__bg_unit *u = r->units.data;
    for (size_t i = r->units.len; i-- > 0;) {
        const sc__et_node *n = &t->n[u[i].node];
        if (t->parent[u[i].node] != t->parent[v]) return SC__NONE;
        if (u[i].kind == SC__BG_CALL && sc__starts_with(node_str(t->et, n->name), "aten::empty")) return (uint32_t)i;
    }
    return SC__NONE;
}

static bool leaf_unit(sc__bg_rank *r, const tree *t, uint32_t v, uint32_t top) {
    const sc__et_node *n = &t->n[v];
    const char *nm = node_str(r->et, n->name);
    if (sc__starts_with(nm, "triton_")) {
        uint32_t buf = alloc_before(r, t, v);
        if (buf == SC__NONE) return add_unit(r, v, top, SC__BG_SKIP, SC__BGR_TRITON_NO_BUF);
        if (!add_unit(r, v, top, SC__BG_EMULATED, SC__BGR_NONE)) return false;
        ((sc__bg_unit *)r->units.data)[r->units.len - 1].emu_buf = buf;
        return true;
    }
    if (empty_list(node_str(r->et, n->in_values)) && empty_list(node_str(r->et, n->out_values)))
        return add_unit(r, v, top, SC__BG_MARKER, SC__BGR_NONE);
    return add_unit(r, v, top, SC__BG_SKIP, SC__BGR_NO_SCHEMA);
}

static bool call_unit(sc__bg_rank *r, uint32_t v, uint32_t top) {
    const sc__et_node *n = &((const sc__et_node *)r->et->nodes.data)[v];
    sc__bg_schema s;
    if (!sc__bg_parse_schema(node_str(r->et, n->schema), &s)) return add_unit(r, v, top, SC__BG_SKIP, SC__BGR_BAD_SCHEMA);
    if (opaque_args(r->et, n)) return add_unit(r, v, top, SC__BG_SKIP, SC__BGR_OPAQUE_ARG);
    return add_unit(r, v, top, SC__BG_CALL, SC__BGR_NONE);
}

/* Counts leaf v, covered by unit u, under its name (slot: per interned
 * name, its index in r->names + 1). */
static bool count_leaf(sc__bg_rank *r, uint32_t *slot, uint32_t name, const sc__bg_unit *u) {
    if (!slot[name]) {
        sc__bg_name *s = sc__vec_push(&r->names);
        if (!s) return false;
        s->name = name;
        slot[name] = (uint32_t)r->names.len;
    }
    sc__bg_name *s = &((sc__bg_name *)r->names.data)[slot[name] - 1];
    s->leaves++;
    s->run += u->kind != SC__BG_SKIP && u->kind != SC__BG_MARKER;
    s->markers += u->kind == SC__BG_MARKER;
    return true;
}

/* What the Kineto trace says per ET node (when linked with it). */
typedef struct kineto_view {
    const sc_trace *k;
    const struct gpu_index *g;
    const uint32_t *event_of; /* ET node -> Kineto event, SC__NONE; NULL when unusable */
} kineto_view;

static uint32_t own_gpu_ops(const kineto_view *kv, const tree *t, uint32_t v);

/* Allocation and view ops: no GPU work of their own. */
static bool storage_only(const char *nm) {
    static const char *const ops[] = {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::view",
                                      "aten::as_strided", "aten::_reshape_alias", "aten::reshape", "aten::resize_",
                                      "aten::expand", "aten::t", "aten::transpose", "aten::permute",
                                      "aten::unsqueeze", "aten::squeeze", "aten::select", "aten::slice",
                                      "aten::detach", "aten::alias", "aten::_unsafe_view", "aten::lift_fresh"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(nm, ops[i]) == 0) return true;
    return false;
}

/* Every op with a schema below v only allocates or views. */
static bool storage_below(const tree *t, uint32_t v, int depth) {
    if (depth > 16) return false;
    for (uint32_t i = t->child_first[v]; i < t->child_first[v + 1]; i++) {
        uint32_t c = t->child[i];
        if (has_schema(t->et, &t->n[c]) && !storage_only(node_str(t->et, t->n[c].name))) return false;
        if (!storage_below(t, c, depth + 1)) return false;
    }
    return true;
}

/* An aten op with operator children that is run whole instead of
 * descended into: its own kernels (launched outside every child, as
 * aten::native_layer_norm_backward, aten::embedding_dense_backward do)
 * would otherwise be lost. Run whole when the Kineto trace shows GPU work
 * of its own, or (with or without Kineto) when its children only allocate
 * or view; and only when it can be called (its schema parses, no opaque
 * argument): else its children run as before. */
static bool runs_whole(const sc__bg_rank *r, const tree *t, const kineto_view *kv, uint32_t v) {
    const sc__et_node *n = &t->n[v];
    sc__bg_schema s;
    if (!sc__bg_parse_schema(node_str(r->et, n->schema), &s) || opaque_args(r->et, n)) return false;
    return storage_below(t, v, 0) || own_gpu_ops(kv, t, v) > 0;
}

/* Chooses the units (see the top comment) among the nodes of the step;
 * owner[v] is the unit covering v. */
static bool choose_units(sc__bg_rank *r, const tree *t, const kineto_view *kv, const uint8_t *in_step,
                         uint32_t *owner, uint32_t *top) {
    uint32_t *slot = calloc(r->et->strings.count + 1, sizeof *slot);
    if (!slot) return false;
    bool ok = true;
    for (uint32_t v = 0; v < t->count && ok; v++) {
        uint32_t p = t->parent[v];
        const sc__et_node *n = &t->n[v];
        const char *nm = node_str(r->et, n->name);
        owner[v] = p != SC__NONE && p < v ? owner[p] : SC__NONE;
        if (!in_step[v]) continue;
        bool leaf = nchildren(t, v) == 0;
        r->leaves += leaf;
        if (owner[v] == SC__NONE) {
            bool schema = has_schema(r->et, n), made = true, aten = sc__starts_with(nm, "aten::");
            if (is_comm_name(nm)) ok = comm_unit(r, t, v, top[v]);
            else if (schema && (!t->desc_schema[v] || !aten)) ok = call_unit(r, v, top[v]);
            else if (schema && runs_whole(r, t, kv, v)) ok = call_unit(r, v, top[v]), r->whole_ops++;
            else if (leaf) ok = leaf_unit(r, t, v, top[v]);
            else made = false;
            if (ok && made) owner[v] = (uint32_t)(r->units.len - 1);
        }
        if (ok && leaf && owner[v] != SC__NONE) {
            sc__bg_unit *u = &((sc__bg_unit *)r->units.data)[owner[v]];
            u->leaves++;
            ok = count_leaf(r, slot, n->name, u);
        }
    }
    free(slot);
    return ok;
}

/* ---- Kineto: GPU ops and streams per unit ---- */

typedef struct corr_stream {
    int64_t corr;
    int32_t stream;
} corr_stream;

typedef struct launch {
    uint32_t track;
    int64_t ts, corr;
} launch;

static int cmp_corr(const void *a, const void *b) {
    const corr_stream *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_launch(const void *a, const void *b) {
    const launch *x = a, *y = b;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

typedef struct gpu_index {
    corr_stream *gpu;
    size_t ngpu;
    launch *calls;
    size_t ncalls;
} gpu_index;

static bool is_gpu_op(uint8_t kind) { return kind == SC_K_KERNEL || kind == SC_K_MEMCPY || kind == SC_K_MEMSET; }

static bool gpu_index_build(gpu_index *g, const sc_trace *k) {
    const sc__event *ev = sc__trace_events(k);
    size_t n = k->events.len;
    g->gpu = sc__alloc_array(n ? n : 1, sizeof *g->gpu);
    g->calls = sc__alloc_array(n ? n : 1, sizeof *g->calls);
    if (!g->gpu || !g->calls) return false;
    for (size_t i = 0; i < n; i++) {
        const sc__event *e = &ev[i];
        if (e->ph != 'X' || e->correlation < 0) continue;
        if (is_gpu_op(e->kind)) g->gpu[g->ngpu++] = (corr_stream){e->correlation, (int32_t)sc__event_stream(k, e)};
        else if (e->kind == SC_K_RUNTIME) g->calls[g->ncalls++] = (launch){e->track, e->ts, e->correlation};
    }
    qsort(g->gpu, g->ngpu, sizeof *g->gpu, cmp_corr);
    qsort(g->calls, g->ncalls, sizeof *g->calls, cmp_launch);
    return true;
}

static int32_t stream_of(const gpu_index *g, int64_t corr) {
    size_t lo = 0, hi = g->ngpu;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g->gpu[mid].corr < corr) lo = mid + 1;
        else hi = mid;
    }
    return lo < g->ngpu && g->gpu[lo].corr == corr ? g->gpu[lo].stream : -1;
}

/* GPU ops launched by the runtime calls on track within [t0, t1]; the
 * stream of the first into *stream (when not NULL). */
static uint32_t gpu_ops_in(const gpu_index *g, uint32_t track, int64_t t0, int64_t t1, int32_t *stream) {
    size_t lo = 0, hi = g->ncalls;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const launch *c = &g->calls[mid];
        if (c->track < track || (c->track == track && c->ts < t0)) lo = mid + 1;
        else hi = mid;
    }
    uint32_t count = 0;
    for (size_t i = lo; i < g->ncalls && g->calls[i].track == track && g->calls[i].ts <= t1; i++) {
        int32_t s = stream_of(g, g->calls[i].corr);
        if (s < 0) continue;
        if (stream && count == 0) *stream = s;
        count++;
    }
    return count;
}

/* Per top-level op, GPU ops in it and in its units: the gaps. */
static bool count_gaps(sc__bg_rank *r, const gpu_index *g, const uint32_t *event_of, const uint32_t *top_of,
                       const uint8_t *in_step) {
    const sc__et_node *n = r->et->nodes.data;
    const sc__event *ev = sc__trace_events(r->kineto);
    size_t nn = r->et->nodes.len;
    uint32_t *covered = calloc(nn ? nn : 1, sizeof *covered);
    if (!covered) return false;
    const sc__bg_unit *u = r->units.data;
    for (size_t i = 0; i < r->units.len; i++)
        if (u[i].kind != SC__BG_SKIP && u[i].kind != SC__BG_MARKER && u[i].top != SC__NONE)
            covered[u[i].top] += u[i].kernels;
    bool ok = true;
    for (size_t v = 0; v < nn && ok; v++) {
        if (!in_step[v] || top_of[v] != v || event_of[v] == SC__NONE) continue;
        const sc__event *e = &ev[event_of[v]];
        uint32_t all = gpu_ops_in(g, e->track, e->ts, e->ts + e->dur, NULL);
        r->kernels_total += all;
        r->kernels_covered += covered[v] < all ? covered[v] : all;
        if (covered[v] >= all) continue;
        sc__bg_gap *gp = r->gaps.data;
        size_t j = 0;
        while (j < r->gaps.len && gp[j].name != n[v].name) j++;
        if (j == r->gaps.len) {
            sc__bg_gap *s = sc__vec_push(&r->gaps);
            if (!s) ok = false;
            else s->name = n[v].name;
            gp = r->gaps.data;
        }
        if (ok) gp[j].ops++, gp[j].kernels += all - covered[v];
    }
    free(covered);
    return ok;
}

/* GPU ops launched by v itself, outside its children's cpu_ops; 0 when
 * the Kineto trace is not usable or v is not linked. */
static uint32_t own_gpu_ops(const kineto_view *kv, const tree *t, uint32_t v) {
    if (!kv->event_of || kv->event_of[v] == SC__NONE) return 0;
    const sc__event *ev = sc__trace_events(kv->k), *e = &ev[kv->event_of[v]];
    uint32_t all = gpu_ops_in(kv->g, e->track, e->ts, e->ts + e->dur, NULL), below = 0;
    for (uint32_t i = t->child_first[v]; i < t->child_first[v + 1]; i++) {
        uint32_t c = kv->event_of[t->child[i]];
        if (c != SC__NONE) below += gpu_ops_in(kv->g, ev[c].track, ev[c].ts, ev[c].ts + ev[c].dur, NULL);
    }
    return all > below ? all - below : 0;
}

/* The GPU ops of each unit and the stream of its first. */
static void unit_kernels(sc__bg_rank *r, const kineto_view *kv) {
    const sc__event *ev = sc__trace_events(kv->k);
    sc__bg_unit *u = r->units.data;
    for (size_t i = 0; i < r->units.len; i++) {
        uint32_t e = kv->event_of[u[i].node];
        if (e != SC__NONE) u[i].kernels = gpu_ops_in(kv->g, ev[e].track, ev[e].ts, ev[e].ts + ev[e].dur, &u[i].stream);
    }
}

/* ---- the iteration ---- */

/* N of "ProfilerStep#N", -1 for any other name. */
static int64_t step_number(const char *nm) {
    if (!sc__starts_with(nm, "ProfilerStep#") || !sc__is_digit(nm[13])) return -1;
    int64_t n = 0;
    for (const char *p = nm + 13; sc__is_digit(*p) && n < INT64_MAX / 10 - 10; p++) n = n * 10 + (*p - '0');
    return n;
}

/* The Kineto trace's ProfilerStep#n annotation (the longest), SC__NONE. */
static uint32_t kineto_step(const sc_trace *k, int64_t n) {
    const sc__event *ev = sc__trace_events(k);
    uint32_t best = SC__NONE;
    for (size_t i = 0; i < k->events.len; i++) {
        const sc__event *e = &ev[i];
        if (e->ph != 'X' || (e->kind != SC_K_USER_ANNOTATION && e->kind != SC_K_CPU_OP)) continue;
        if (step_number(sc__trace_str(k, e->name)) != n) continue;
        if (best == SC__NONE || e->dur > ev[best].dur) best = (uint32_t)i;
    }
    return best;
}

/* A Kineto step is complete when it launched kernels and every kernel
 * launch in its span (any thread: the autograd engine's too) found its GPU
 * op (as the replay's window choice, src/graph/iteration.c). */
static bool kineto_complete(const sc_trace *k, const gpu_index *g, int64_t n) {
    uint32_t s = kineto_step(k, n);
    if (s == SC__NONE) return false;
    const sc__event *ev = sc__trace_events(k);
    int64_t t0 = ev[s].ts, t1 = ev[s].ts + ev[s].dur;
    size_t launches = 0;
    for (size_t i = 0; i < k->events.len; i++) {
        const sc__event *e = &ev[i];
        if (e->ph != 'X' || e->kind != SC_K_RUNTIME || e->correlation < 0 || e->ts < t0 || e->ts >= t1) continue;
        if (!strstr(sc__trace_str(k, e->name), "Launch")) continue;
        if (stream_of(g, e->correlation) < 0) return false;
        launches++;
    }
    return launches > 0;
}

/* The ET's ProfilerStep nodes: children of a thread root, in id order. */
static bool et_steps(const tree *t, sc__vec *out) {
    for (uint32_t v = 0; v < t->count; v++) {
        uint32_t p = t->parent[v];
        if (p == SC__NONE || sc__et_is_op(t->et, &t->n[p]) || step_number(node_str(t->et, t->n[v].name)) < 0) continue;
        uint32_t *slot = sc__vec_push(out);
        if (!slot) return false;
        *slot = v;
    }
    return true;
}

static bool has_number(const sc__vec *v, int64_t n) {
    const int64_t *x = v->data;
    for (size_t i = 0; i < v->len; i++)
        if (x[i] == n) return true;
    return false;
}

/* Which ET step to replay (index into steps, or SC__NONE for the whole ET):
 * the one asked for, else the last one complete in the Kineto trace, else
 * the ET's last. */
static sc_status pick_step(sc__bg_rank *r, const tree *t, const sc__vec *steps, const sc__vec *knum,
                           const gpu_index *g, int64_t want, uint32_t *pick, sc_error *err) {
    const uint32_t *sv = steps->data;
    *pick = SC__NONE;
    if (!steps->len) {
        if (want < 0) return SC_OK;
        return sc__fail(err, SC_E_USAGE, r->et->path, SC_NO_OFFSET,
                        "no ProfilerStep#%lld in this execution trace (it has no ProfilerStep node: it is one iteration)",
                        (long long)want);
    }
    for (size_t i = steps->len; i-- > 0 && *pick == SC__NONE;) {
        int64_t n = step_number(node_str(t->et, t->n[sv[i]].name));
        if (want >= 0 ? n == want : knum->len && has_number(knum, n) && kineto_complete(r->kineto, g, n))
            *pick = (uint32_t)i;
    }
    if (want >= 0 && *pick == SC__NONE)
        return sc__fail(err, SC_E_USAGE, r->et->path, SC_NO_OFFSET,
                        "no ProfilerStep#%lld in this execution trace (it has #%lld to #%lld)", (long long)want,
                        (long long)r->et_steps[0], (long long)r->et_steps[1]);
    if (*pick == SC__NONE) *pick = (uint32_t)(steps->len - 1);
    return SC_OK;
}

/* top[v]: v's top-level op (a child of a thread root), SC__NONE for
 * non-ops; in_step[v]: v is an op of the replayed step: under its
 * ProfilerStep node, or (other threads: the autograd engine's) a top-level
 * op that started after it and before the next step (ids are in start
 * order). */
static void mark_step(const tree *t, const sc__vec *steps, uint32_t pick, uint32_t *top, uint8_t *in_step) {
    const uint32_t *sv = steps->data;
    int64_t lo = pick == SC__NONE ? INT64_MIN : t->n[sv[pick]].id;
    int64_t hi = pick == SC__NONE || pick + 1 >= steps->len ? INT64_MAX : t->n[sv[pick + 1]].id;
    for (uint32_t v = 0; v < t->count; v++) {
        uint32_t p = t->parent[v];
        bool op = sc__et_is_op(t->et, &t->n[v]);
        top[v] = !op ? SC__NONE : p == SC__NONE || p > v || !sc__et_is_op(t->et, &t->n[p]) ? v : top[p];
        if (top[v] == SC__NONE) {
            in_step[v] = 0;
            continue;
        }
        uint32_t tv = top[v];
        bool is_step = step_number(node_str(t->et, t->n[tv].name)) >= 0;
        in_step[v] = pick == SC__NONE || (is_step ? tv == sv[pick] : t->n[tv].id > lo && t->n[tv].id < hi);
    }
}

/* The iteration's nodes, and whether the Kineto trace is of it: it has
 * the step, and at least half of the step's ops link. */
static sc_status select_step(sc__bg_rank *r, const tree *t, const gpu_index *g, const uint32_t *event_of,
                             int64_t want, uint32_t *top, uint8_t *in_step, sc_error *err) {
    sc__vec steps, knum;
    sc__vec_init(&steps, sizeof(uint32_t));
    sc__vec_init(&knum, sizeof(int64_t));
    bool ok = et_steps(t, &steps) && (!r->kineto || sc__trace_step_numbers(r->kineto, &knum));
    sc_status st = ok ? SC_OK : sc__fail(err, SC_E_NOMEM, r->et->path, SC_NO_OFFSET, "out of memory");
    const uint32_t *sv = steps.data;
    if (steps.len) {
        r->et_steps[0] = step_number(node_str(t->et, t->n[sv[0]].name));
        r->et_steps[1] = step_number(node_str(t->et, t->n[sv[steps.len - 1]].name));
    }
    if (knum.len) {
        r->kineto_steps[0] = ((const int64_t *)knum.data)[0];
        r->kineto_steps[1] = ((const int64_t *)knum.data)[knum.len - 1];
    }
    uint32_t pick = SC__NONE;
    if (st == SC_OK) st = pick_step(r, t, &steps, &knum, g, want, &pick, err);
    if (st == SC_OK) {
        mark_step(t, &steps, pick, top, in_step);
        r->step = pick == SC__NONE ? -1 : step_number(node_str(t->et, t->n[sv[pick]].name));
        r->kineto_lacks_step = r->step >= 0 && knum.len && !has_number(&knum, r->step);
        uint64_t ops = 0, linked = 0;
        for (uint32_t v = 0; event_of && v < t->count; v++) {
            ops += in_step[v];
            linked += in_step[v] && event_of[v] != SC__NONE;
        }
        const sc__et_link *l = &r->link;
        if (r->kineto)
            r->kineto_mismatch = r->kineto_lacks_step || linked * 2 < ops ||
                                 (l->shapes_compared && l->shapes_agree * 10 < l->shapes_compared * 8);
    }
    sc__vec_free(&steps);
    sc__vec_free(&knum);
    return st;
}

/* Links the ET with its Kineto trace: the event of each node (SC__NONE
 * when unlinked) and the GPU-op index. */
static bool link_kineto(sc__bg_rank *r, uint32_t *event_of, gpu_index *g) {
    sc__vec pairs;
    sc__vec_init(&pairs, sizeof(sc__et_pair));
    bool ok = sc__et_link_traces(r->et, r->kineto, &r->link, &pairs) && gpu_index_build(g, r->kineto);
    for (size_t i = 0; ok && i < r->et->nodes.len; i++) event_of[i] = SC__NONE;
    const sc__et_pair *p = pairs.data;
    for (size_t i = 0; ok && i < pairs.len; i++) event_of[p[i].node] = p[i].event;
    sc__vec_free(&pairs);
    return ok;
}

/* ---- cross-stream waits ---- */

typedef struct writer_map {
    uint64_t *keys;
    uint32_t *vals; /* unit + 1; 0 = empty */
    size_t mask;
} writer_map;

static uint64_t tensor_key(const sc_et *et, uint32_t i) {
    const int64_t *t = et->tensors.data, *s = et->storages.data;
    return (uint64_t)t[i] * 0x9E3779B97F4A7C15ull ^ (uint64_t)s[i];
}

static uint32_t *writer_slot(writer_map *m, uint64_t key) {
    size_t s = sc__hash_u64(key) & m->mask;
    while (m->vals[s] && m->keys[s] != key) s = (s + 1) & m->mask;
    m->keys[s] = key;
    return &m->vals[s];
}

/* The stream a unit's outputs count as written on: its own, or for a unit
 * without GPU work its first input's writer's. */
static bool add_waits(sc__bg_rank *r, writer_map *m, int32_t *eff) {
    sc__bg_unit *u = r->units.data;
    const sc__et_node *n = r->et->nodes.data;
    for (size_t i = 0; i < r->units.len; i++) {
        const sc__et_node *nd = &n[u[i].node];
        eff[i] = u[i].stream;
        u[i].wait_first = (uint32_t)r->waits.len;
        for (uint32_t j = 0; j < nd->in_count; j++) {
            uint32_t w = *writer_slot(m, tensor_key(r->et, nd->in_first + j));
            if (!w) continue;
            w--;
            if (eff[i] < 0 && u[i].stream < 0 && j == 0) eff[i] = eff[w];
            if (u[i].stream < 0 || eff[w] < 0 || eff[w] == u[i].stream || u[i].kind != SC__BG_CALL) continue;
            const uint32_t *wv = r->waits.data;
            bool dup = false;
            for (size_t q = u[i].wait_first; q < r->waits.len; q++) dup |= wv[q] == w;
            if (dup) continue;
            uint32_t *slot = sc__vec_push(&r->waits);
            if (!slot) return false;
            *slot = w;
            u[w].record = 1;
        }
        u[i].wait_count = (uint32_t)(r->waits.len - u[i].wait_first);
        if (u[i].kind == SC__BG_SKIP || u[i].kind == SC__BG_MARKER) continue;
        for (uint32_t j = 0; j < nd->out_count; j++) *writer_slot(m, tensor_key(r->et, nd->out_first + j)) = (uint32_t)i + 1;
    }
    return true;
}

static bool cross_stream(sc__bg_rank *r) {
    size_t nt = r->et->tensors.len, slots = 16;
    while (slots < nt * 2 + 2) slots *= 2;
    writer_map m = {sc__alloc_array(slots, sizeof(uint64_t)), calloc(slots, sizeof(uint32_t)), slots - 1};
    int32_t *eff = sc__alloc_array(r->units.len ? r->units.len : 1, sizeof *eff);
    bool ok = m.keys && m.vals && eff && add_waits(r, &m, eff);
    free(m.keys);
    free(m.vals);
    free(eff);
    return ok;
}

/* The stream most calls run on. */
static void main_stream(sc__bg_rank *r) {
    const sc__bg_unit *u = r->units.data;
    int32_t best = -1;
    size_t best_n = 0;
    for (size_t i = 0; i < r->units.len; i++) {
        if (u[i].stream < 0 || u[i].stream == best) continue;
        size_t c = 0;
        for (size_t j = 0; j < r->units.len; j++) c += u[j].stream == u[i].stream && u[j].kind == SC__BG_CALL;
        if (c > best_n || (c == best_n && u[i].stream < best)) best = u[i].stream, best_n = c;
    }
    r->main_stream = best;
}

void sc__bg_rank_free(sc__bg_rank *r) {
    sc__vec_free(&r->units);
    sc__vec_free(&r->waits);
    sc__vec_free(&r->comms);
    sc__vec_free(&r->gaps);
    sc__vec_free(&r->names);
}

/* Per-rank scratch of sc__bg_rank_build. */
typedef struct rank_work {
    tree t;
    gpu_index g;
    uint32_t *owner, *top, *event_of;
    uint8_t *in_step;
} rank_work;

static void rank_work_free(rank_work *w) {
    tree_free(&w->t);
    free(w->g.gpu);
    free(w->g.calls);
    free(w->owner);
    free(w->top);
    free(w->event_of);
    free(w->in_step);
}

static void rank_totals(sc__bg_rank *r) {
    main_stream(r);
    const sc__bg_unit *u = r->units.data;
    for (size_t i = 0; i < r->units.len; i++) {
        r->leaves_by_kind[u[i].kind] += u[i].leaves;
        r->skipped_by_reason[u[i].reason] += u[i].kind == SC__BG_SKIP ? u[i].leaves : 0;
    }
}

sc_status sc__bg_rank_build(sc__bg_rank *r, const sc_et *et, const sc_trace *kineto, int64_t rank, int64_t iteration,
                            sc_error *err) {
    memset(r, 0, sizeof *r);
    r->et = et;
    r->kineto = kineto;
    r->rank = rank;
    r->main_stream = -1;
    r->step = r->et_steps[0] = r->et_steps[1] = r->kineto_steps[0] = r->kineto_steps[1] = -1;
    sc__vec_init(&r->units, sizeof(sc__bg_unit));
    sc__vec_init(&r->waits, sizeof(uint32_t));
    sc__vec_init(&r->comms, sizeof(sc__bg_comm));
    sc__vec_init(&r->gaps, sizeof(sc__bg_gap));
    sc__vec_init(&r->names, sizeof(sc__bg_name));
    rank_work w = {0};
    size_t nn = et->nodes.len ? et->nodes.len : 1;
    w.owner = sc__alloc_array(nn, sizeof *w.owner);
    w.top = sc__alloc_array(nn, sizeof *w.top);
    w.in_step = calloc(nn, 1);
    if (kineto) w.event_of = sc__alloc_array(nn, sizeof *w.event_of);
    bool ok = w.owner && w.top && w.in_step && (!kineto || w.event_of) && tree_build(&w.t, et);
    if (ok) ok = kineto ? link_kineto(r, w.event_of, &w.g) : sc__et_link_traces(et, NULL, &r->link, NULL);
    sc_status st = ok ? select_step(r, &w.t, &w.g, w.event_of, iteration, w.top, w.in_step, err)
                      : sc__fail(err, SC_E_NOMEM, et->path, SC_NO_OFFSET, "out of memory");
    kineto_view kv = {kineto, &w.g, kineto && !r->kineto_mismatch ? w.event_of : NULL};
    ok = st == SC_OK && choose_units(r, &w.t, &kv, w.in_step, w.owner, w.top);
    if (ok && kv.event_of) {
        unit_kernels(r, &kv);
        ok = count_gaps(r, &w.g, w.event_of, w.top, w.in_step);
    }
    if (ok) ok = cross_stream(r);
    if (ok) rank_totals(r);
    rank_work_free(&w);
    if (st == SC_OK && !ok) st = sc__fail(err, SC_E_NOMEM, et->path, SC_NO_OFFSET, "out of memory");
    if (st != SC_OK) sc__bg_rank_free(r);
    return st;
}

/* ---- the public handle ---- */

static bool warn(sc_benchgen *bg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool warn(sc_benchgen *bg, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **w = realloc(bg->warnings, (bg->nwarnings + 1) * sizeof *w);
    if (!w) return false;
    bg->warnings = w;
    size_t n = strlen(buf) + 1;
    if (!(w[bg->nwarnings] = malloc(n))) return false;
    memcpy(w[bg->nwarnings++], buf, n);
    return true;
}

/* What a rank's input says about the benchmark's faithfulness. */
static bool rank_warnings(sc_benchgen *bg, const sc__bg_rank *r) {
    const char *path = r->et->path;
    bool ok = true;
    if (!r->kineto)
        ok = warn(bg, "%s: no Kineto trace of rank %lld: streams and GPU coverage unknown, every op runs on one stream",
                  path, (long long)r->rank);
    else if (r->kineto_lacks_step)
        ok = warn(bg, "%s: %s has no ProfilerStep#%lld (it has #%lld to #%lld): the ET is from another iteration; "
                  "its streams and GPU coverage are not used",
                  path, r->kineto->path, (long long)r->step, (long long)r->kineto_steps[0], (long long)r->kineto_steps[1]);
    else if (r->kineto_mismatch)
        ok = warn(bg, "%s: %s is not of this ET's iteration (%llu of %llu ET ops link, %llu of %llu shapes agree): its streams are not used",
                  path, r->kineto->path, (unsigned long long)r->link.et_linked, (unsigned long long)r->link.et_ops,
                  (unsigned long long)r->link.shapes_agree, (unsigned long long)r->link.shapes_compared);
    static const sc__bg_reason loud[] = {SC__BGR_NO_SCHEMA, SC__BGR_BAD_SCHEMA, SC__BGR_COMM_LAYOUT, SC__BGR_COMM_KIND};
    for (size_t i = 0; ok && i < sizeof loud / sizeof loud[0]; i++) {
        if (!r->skipped_by_reason[loud[i]]) continue;
        const sc__bg_unit *u = r->units.data;
        const char *example = "";
        for (size_t j = 0; j < r->units.len && !example[0]; j++)
            if (u[j].kind == SC__BG_SKIP && u[j].reason == loud[i])
                example = sc__intern_str(&r->et->strings, ((const sc__et_node *)r->et->nodes.data)[u[j].node].name);
        ok = warn(bg, "%s: %llu leaf ops skipped: %s (e.g. %s); the program runs the rest", path,
                  (unsigned long long)r->skipped_by_reason[loud[i]], sc__bg_reason_text(loud[i]), example);
    }
    return ok;
}

void sc_benchgen_free(sc_benchgen *bg) {
    if (!bg) return;
    for (size_t i = 0; i < bg->nranks; i++) sc__bg_rank_free(&bg->ranks[i]);
    for (size_t i = 0; i < bg->nwarnings; i++) free(bg->warnings[i]);
    free(bg->warnings);
    free(bg->ranks);
    free(bg);
}

sc_status sc_benchgen_build(const sc_et *const *ets, const sc_trace *const *kinetos, const int64_t *ranks, size_t n,
                            const sc_benchgen_options *opts, sc_benchgen **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    if (n == 0) return sc__fail(err, SC_E_USAGE, "benchgen", SC_NO_OFFSET, "no execution trace given");
    for (size_t i = 0; i < n; i++) {
        sc_status whole = kinetos[i] ? sc__trace_check_whole(kinetos[i], err) : SC_OK;
        if (whole != SC_OK) return whole;
    }
    sc_benchgen *bg = calloc(1, sizeof *bg);
    if (bg) bg->ranks = calloc(n, sizeof *bg->ranks);
    if (!bg || !bg->ranks) {
        free(bg);
        return sc__fail(err, SC_E_NOMEM, ets[0]->path, SC_NO_OFFSET, "out of memory");
    }
    if (opts) bg->opts = *opts;
    if (bg->opts.iterations == 0) bg->opts.iterations = 5;
    if (bg->opts.shrink == 0) bg->opts.shrink = 1;
    if (!opts) bg->opts.iteration = -1;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        sc_status st = sc__bg_rank_build(&bg->ranks[i], ets[i], kinetos[i], ranks[i], bg->opts.iteration, err);
        if (st != SC_OK) {
            sc_benchgen_free(bg);
            return st;
        }
        bg->nranks++;
        ok = rank_warnings(bg, &bg->ranks[i]);
    }
    if (!ok) {
        sc_benchgen_free(bg);
        return sc__fail(err, SC_E_NOMEM, ets[0]->path, SC_NO_OFFSET, "out of memory");
    }
    *out = bg;
    return SC_OK;
}

size_t sc_benchgen_warning_count(const sc_benchgen *bg) { return bg->nwarnings; }

const char *sc_benchgen_warning(const sc_benchgen *bg, size_t i) { return i < bg->nwarnings ? bg->warnings[i] : NULL; }
