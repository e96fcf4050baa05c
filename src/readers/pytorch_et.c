/*
 * pytorch_et.c - PyTorch Execution Traces (the host graph JSON written by
 * torch.profiler.ExecutionTraceObserver) and their link with the Kineto
 * trace of the same rank.
 *
 * The ET records every operator call with its id, parent, record-function id
 * and the values, shapes and types of its inputs and outputs; Kineto records
 * when things ran. Together they give ops their shapes, dtypes and data
 * dependencies (which tensor an op reads that another op wrote).
 *
 * Reading streams the file through json.h, one element of "nodes" at a time
 * (no DOM). Both schema families are read:
 *   - 1.0.x: "parent", "rf_id", "inputs": [values], "input_shapes",
 *     "input_types", "outputs", "output_shapes", "output_types";
 *   - 1.1.x: "ctrl_deps" (the parent), "inputs"/"outputs" as objects with
 *     "values", "shapes", "types", and "attrs": [{"name", "type", "value"}]
 *     carrying rf_id.
 * A tensor value is [tensor_id, storage_id, offset, numel, elem_size, device];
 * lists of tensors nest such arrays. The raw text of the input and output
 * values, the "op_schema" and the thread are kept for benchmark generation. Data dependencies: in id order (the
 * order ops started), an op that reads tensor T depends on the latest
 * earlier op that wrote T, unless that op encloses it.
 *
 * Linking the ET with the rank's Kineto trace is src/pipeline/et_link.c's.
 */
#include "pytorch_et.h"

#include "../io/source.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct etreader {
    sc__jp jp;
    sc_et *et;
    sc__vec scratch_in, scratch_out; /* int64 tensor ids of the node being read */
    sc__vec sin, sout;               /* their storage ids */
    bool saw_nodes, first_member;
} etreader;

static int et_oom(etreader *r) {
    return sc__jp_error_at(&r->jp, r->jp.p, SC_E_NOMEM, "out of memory");
}

static uint32_t intern_raw(etreader *r, sc__jstr s) {
    return sc__intern_put(&r->et->strings, s.s, s.n);
}

/* ---- tensor ids out of a raw JSON value (already validated by skip) ---- */

static const char *ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* Scans one value at p; appends the ids of tensor tuples found inside.
 * Returns the position after the value. depth bounds recursion. */
static const char *scan_value(const char *p, const char *end, sc__vec *out, sc__vec *sto, int depth,
                              bool *oom) {
    p = ws(p, end);
    if (p >= end) return end;
    if (*p == '"') {
        for (p++; p < end && *p != '"'; p++)
            if (*p == '\\') p++;
        return p < end ? p + 1 : end;
    }
    if (*p != '[' && *p != '{') {
        while (p < end && *p != ',' && *p != ']' && *p != '}') p++;
        return p;
    }
    char close = *p == '[' ? ']' : '}';
    bool array = close == ']';
    p++;
    /* Tensor tuple: 6 elements, five integers then a string. */
    int64_t first = 0, second = 0;
    int nelem = 0, nint = 0;
    bool last_str = false;
    while (p < end) {
        p = ws(p, end);
        if (p < end && *p == close) {
            p++;
            break;
        }
        const char *q = p;
        if (!array) { /* skip "key": */
            q = scan_value(q, end, out, sto, depth, oom);
            q = ws(q, end);
            if (q < end && *q == ':') q++;
        }
        q = ws(q, end);
        bool is_int = q < end && (*q == '-' || (*q >= '0' && *q <= '9'));
        if (is_int) {
            char *e;
            long long v = strtoll(q, &e, 10);
            if (e > q && (*e == ',' || *e == ']' || *e == ' ' || *e == '\n')) {
                if (nelem == 0) first = v;
                if (nelem == 1) second = v;
                nint++;
            } else {
                is_int = false;
            }
        }
        last_str = q < end && *q == '"';
        p = depth < 64 ? scan_value(q, end, out, sto, depth + 1, oom) : end;
        nelem++;
        p = ws(p, end);
        if (p < end && *p == ',') p++;
    }
    if (array && nelem == 6 && nint == 5 && last_str) {
        int64_t *slot = sc__vec_push(out), *sslot = sc__vec_push(sto);
        if (!slot || !sslot) *oom = true;
        else *slot = first, *sslot = second;
    }
    return p;
}

/* The tensor (and storage) ids of a value list; its raw text, interned,
 * into *values. */
static int tensor_ids(etreader *r, sc__vec *out, sc__vec *sto, uint32_t *values) {
    sc__jstr raw;
    SC__JTRY(sc__jp_raw(&r->jp, &raw));
    bool oom = false;
    scan_value(raw.s, raw.s + raw.n, out, sto, 0, &oom);
    *values = intern_raw(r, raw);
    return oom || *values == SC__NONE ? et_oom(r) : SC__J_OK;
}

/* A value's raw JSON text, interned, into *id (how shapes and types are kept). */
static int raw_id(etreader *r, uint32_t *id) {
    sc__jstr raw;
    SC__JTRY(sc__jp_raw(&r->jp, &raw));
    *id = intern_raw(r, raw);
    return *id == SC__NONE ? et_oom(r) : SC__J_OK;
}

/* A string value, interned, into *id. */
static int string_id(etreader *r, uint32_t *id) {
    sc__jstr s;
    SC__JTRY(sc__jp_string(&r->jp, &s));
    *id = intern_raw(r, s);
    return *id == SC__NONE ? et_oom(r) : SC__J_OK;
}

/* Where a node's side of its arguments goes (inputs or outputs). */
typedef struct io_slots {
    sc__vec *ids, *sto;
    uint32_t *values, *shapes, *types, *strides; /* strides: NULL for outputs */
} io_slots;

/* 1.1.x "inputs"/"outputs": {"values": [...], "shapes": [...], "types": [...], "strides": [...]} */
static int io_object(etreader *r, const io_slots *io) {
    sc__jp *jp = &r->jp;
    SC__JTRY(sc__jp_expect(jp, '{'));
    for (bool first = true;; first = false) {
        sc__jstr key;
        bool done;
        SC__JTRY(sc__jp_member(jp, first, &key, &done));
        if (done) return SC__J_OK;
        if (SC__JSTR_EQ(key, "values")) SC__JTRY(tensor_ids(r, io->ids, io->sto, io->values));
        else if (SC__JSTR_EQ(key, "shapes")) SC__JTRY(raw_id(r, io->shapes));
        else if (SC__JSTR_EQ(key, "types")) SC__JTRY(raw_id(r, io->types));
        else if (SC__JSTR_EQ(key, "strides") && io->strides) SC__JTRY(raw_id(r, io->strides));
        else SC__JTRY(sc__jp_skip(jp));
    }
}

/* One 1.1.x attribute, {"name": "rf_id", "type": "uint64", "value": 7}:
 * an integer "rf_id" or "tid", or a string "op_schema", is kept in n. The
 * value may come before the name: a string value is interned either way. */
static int attr_object(etreader *r, sc__et_node *n) {
    sc__jp *jp = &r->jp;
    enum { A_OTHER, A_RF, A_TID, A_SCHEMA } which = A_OTHER;
    bool have_val = false;
    int64_t val = 0;
    uint32_t sval = SC__NONE;
    SC__JTRY(sc__jp_expect(jp, '{'));
    for (bool first = true;; first = false) {
        sc__jstr key, s;
        bool done;
        SC__JTRY(sc__jp_member(jp, first, &key, &done));
        if (done) break;
        char c = sc__jp_peek(jp);
        if (SC__JSTR_EQ(key, "name") && c == '"') {
            SC__JTRY(sc__jp_string(jp, &s));
            which = SC__JSTR_EQ(s, "rf_id") ? A_RF : SC__JSTR_EQ(s, "tid") ? A_TID
                  : SC__JSTR_EQ(s, "op_schema") ? A_SCHEMA : A_OTHER;
        } else if (SC__JSTR_EQ(key, "value") && (c == '-' || sc__is_digit(c))) {
            SC__JTRY(sc__jp_int(jp, &val));
            have_val = true;
        } else if (SC__JSTR_EQ(key, "value") && c == '"') {
            SC__JTRY(string_id(r, &sval));
        } else {
            SC__JTRY(sc__jp_skip(jp));
        }
    }
    if (which == A_RF && have_val) n->rf_id = val;
    if (which == A_TID && have_val) n->tid = val;
    if (which == A_SCHEMA && sval != SC__NONE) n->schema = sval;
    return SC__J_OK;
}

/* 1.1.x "attrs": an array of attributes. */
static int attrs_array(etreader *r, sc__et_node *n) {
    sc__jp *jp = &r->jp;
    SC__JTRY(sc__jp_expect(jp, '['));
    for (bool first = true;; first = false) {
        bool done;
        SC__JTRY(sc__jp_element(jp, first, &done));
        if (done) return SC__J_OK;
        SC__JTRY(attr_object(r, n));
    }
}

static bool append_vec(sc__vec *dst, const sc__vec *src) {
    if (!sc__vec_reserve(dst, dst->len + src->len)) return false;
    if (src->len) memcpy((int64_t *)dst->data + dst->len, src->data, src->len * sizeof(int64_t));
    dst->len += src->len;
    return true;
}

/* Appends a node's tensor ids and their storage ids (src, ssrc). */
static bool append_ids(sc_et *et, const sc__vec *src, const sc__vec *ssrc, uint32_t *first, uint32_t *count) {
    if (et->tensors.len + src->len > UINT32_MAX) return false;
    *first = (uint32_t)et->tensors.len;
    *count = (uint32_t)src->len;
    return append_vec(&et->tensors, src) && append_vec(&et->storages, ssrc);
}

/* Where a 1.0.x shape or type list goes, by its key; NULL for another key.
 * Chosen before the value is read: reading it may overwrite an escaped
 * key's bytes (json.h's scratch buffer). */
static uint32_t *shapes_slot(sc__et_node *n, sc__jstr key) {
    if (SC__JSTR_EQ(key, "input_shapes")) return &n->in_shapes;
    if (SC__JSTR_EQ(key, "input_types")) return &n->in_types;
    if (SC__JSTR_EQ(key, "output_shapes")) return &n->out_shapes;
    if (SC__JSTR_EQ(key, "output_types")) return &n->out_types;
    if (SC__JSTR_EQ(key, "input_strides")) return &n->in_strides;
    return NULL;
}

/* "inputs" or "outputs" (whose first byte is c): a 1.1.x object, or the
 * 1.0.x list of values; anything else is skipped. */
static int io_member(etreader *r, char c, const io_slots *io) {
    if (c == '{') return io_object(r, io);
    if (c == '[') return tensor_ids(r, io->ids, io->sto, io->values);
    return sc__jp_skip(&r->jp);
}

/* One member of a node, at its value; a value of another type than the
 * key's is skipped. Tensor ids go to the reader's scratch vectors. */
static int node_member(etreader *r, sc__et_node *n, sc__jstr key) {
    sc__jp *jp = &r->jp;
    char c = sc__jp_peek(jp);
    bool num = c == '-' || sc__is_digit(c);
    uint32_t *slot;
    if (SC__JSTR_EQ(key, "name") && c == '"') return string_id(r, &n->name);
    if (SC__JSTR_EQ(key, "id") && num) return sc__jp_int(jp, &n->id);
    if ((SC__JSTR_EQ(key, "parent") || SC__JSTR_EQ(key, "ctrl_deps")) && num)
        return sc__jp_int(jp, &n->parent);
    if (SC__JSTR_EQ(key, "rf_id") && num) return sc__jp_int(jp, &n->rf_id);
    if (SC__JSTR_EQ(key, "tid") && num) return sc__jp_int(jp, &n->tid);
    if (SC__JSTR_EQ(key, "op_schema") && c == '"') return string_id(r, &n->schema);
    if (SC__JSTR_EQ(key, "attrs") && c == '[') return attrs_array(r, n);
    if (SC__JSTR_EQ(key, "inputs")) {
        io_slots io = {&r->scratch_in, &r->sin, &n->in_values, &n->in_shapes, &n->in_types, &n->in_strides};
        return io_member(r, c, &io);
    }
    if (SC__JSTR_EQ(key, "outputs")) {
        io_slots io = {&r->scratch_out, &r->sout, &n->out_values, &n->out_shapes, &n->out_types, NULL};
        return io_member(r, c, &io);
    }
    if ((slot = shapes_slot(n, key))) return raw_id(r, slot);
    return sc__jp_skip(jp);
}

/* Stores a node read whole, with its tensor ids. */
static int commit_node(etreader *r, sc__et_node *n) {
    sc_et *et = r->et;
    sc__et_node *slot = sc__vec_push(&et->nodes);
    if (!slot || !append_ids(et, &r->scratch_in, &r->sin, &n->in_first, &n->in_count) ||
        !append_ids(et, &r->scratch_out, &r->sout, &n->out_first, &n->out_count))
        return et_oom(r);
    *slot = *n;
    return SC__J_OK;
}

/* One element of "nodes": a retryable unit (nothing is stored until it has
 * parsed whole). */
static int parse_node(etreader *r) {
    sc__jp *jp = &r->jp;
    sc__et_node n = {.id = -1, .parent = -1, .rf_id = -1, .tid = -1};
    n.in_shapes = n.in_types = n.out_shapes = n.out_types = SC__NONE;
    n.schema = n.in_values = n.out_values = n.in_strides = SC__NONE;
    r->scratch_in.len = r->scratch_out.len = r->sin.len = r->sout.len = 0;
    SC__JTRY(sc__jp_expect(jp, '{'));
    for (bool first = true;; first = false) {
        sc__jstr key;
        bool done;
        SC__JTRY(sc__jp_member(jp, first, &key, &done));
        if (done) return commit_node(r, &n);
        SC__JTRY(node_member(r, &n, key));
    }
}

typedef enum { ET_START, ET_MEMBER, ET_NODES_FIRST, ET_NODES, ET_END } etstate; /* ET_END: handled by sc__jp_drive */

/* One top-level member (a unit of its own): "nodes" moves the walk into
 * the array, "schema" is kept, anything else skipped. */
static int et_member(etreader *r, int *st) {
    sc__jp *jp = &r->jp;
    sc__jstr key;
    bool done;
    SC__JTRY(sc__jp_member(jp, r->first_member, &key, &done));
    if (done) {
        *st = ET_END;
        return SC__J_OK;
    }
    if (SC__JSTR_EQ(key, "nodes")) {
        SC__JTRY(sc__jp_expect(jp, '['));
        r->saw_nodes = true;
        *st = ET_NODES_FIRST;
    } else if (SC__JSTR_EQ(key, "traceEvents")) { /* say so now, not after reading it all */
        return sc__jp_error_at(jp, key.s, SC_E_FORMAT,
                               "a Kineto trace (\"traceEvents\"), not a PyTorch Execution Trace");
    } else if (SC__JSTR_EQ(key, "schema") && sc__jp_peek(jp) == '"') {
        SC__JTRY(string_id(r, &r->et->schema));
    } else {
        SC__JTRY(sc__jp_skip(jp));
    }
    r->first_member = false;
    return SC__J_OK;
}

static int node_of(void *ctx) { return parse_node(ctx); }

static int et_step(void *ctx, int *st) {
    etreader *r = ctx;
    sc__jp *jp = &r->jp;
    switch (*st) {
    case ET_START:
        SC__JTRY(sc__jp_expect(jp, '{'));
        *st = ET_MEMBER;
        r->first_member = true;
        return SC__J_OK;
    case ET_MEMBER: return et_member(r, st);
    case ET_NODES_FIRST:
    case ET_NODES: return sc__jp_record_step(jp, st, ET_NODES_FIRST, ET_NODES, ET_MEMBER, node_of, r);
    }
    return SC__J_ERR;
}

static int cmp_node_id(const void *a, const void *b) {
    const sc__et_node *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

uint32_t sc__et_node_by_id(const sc_et *et, int64_t id) {
    const sc__et_node *n = et->nodes.data;
    size_t lo = 0, hi = et->nodes.len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (n[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < et->nodes.len && n[lo].id == id ? (uint32_t)lo : SC__NONE;
}

static bool encloses(const sc_et *et, uint32_t anc, uint32_t v) {
    const sc__et_node *n = et->nodes.data;
    for (int depth = 0; depth < 256; depth++) {
        uint32_t p = sc__et_node_by_id(et, n[v].parent);
        if (p == SC__NONE) return false;
        if (p == anc) return true;
        v = p;
    }
    return false;
}

/* tensor id -> latest writer, as sorted (tensor, node) pairs updated in
 * id order: a small open-addressing map. */
static bool data_deps(sc_et *et) {
    size_t nt = et->tensors.len, nslots = 16;
    while (nslots < nt * 2 + 2) nslots *= 2;
    int64_t *keys = sc__alloc_array(nslots, sizeof *keys);
    uint32_t *vals = calloc(nslots, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    const sc__et_node *n = et->nodes.data;
    const int64_t *t = et->tensors.data;
    bool ok = true;
    for (uint32_t v = 0; v < et->nodes.len && ok; v++) {
        for (uint32_t i = 0; i < n[v].in_count && ok; i++) {
            int64_t tid = t[n[v].in_first + i];
            size_t s = sc__hash_u64((uint64_t)tid) & (nslots - 1);
            while (vals[s] && keys[s] != tid) s = (s + 1) & (nslots - 1);
            if (!vals[s]) continue;
            uint32_t w = vals[s] - 1;
            if (w == v || encloses(et, w, v)) continue;
            sc__et_dep *d = sc__vec_push(&et->deps);
            if (!d) ok = false;
            else *d = (sc__et_dep){w, v};
        }
        for (uint32_t i = 0; i < n[v].out_count; i++) {
            int64_t tid = t[n[v].out_first + i];
            size_t s = sc__hash_u64((uint64_t)tid) & (nslots - 1);
            while (vals[s] && keys[s] != tid) s = (s + 1) & (nslots - 1);
            keys[s] = tid;
            vals[s] = v + 1;
        }
    }
    free(keys);
    free(vals);
    return ok;
}

void sc_et_free(sc_et *et) {
    if (!et) return;
    sc__intern_free(&et->strings);
    sc__vec_free(&et->nodes);
    sc__vec_free(&et->tensors);
    sc__vec_free(&et->storages);
    sc__vec_free(&et->deps);
    free(et->path);
    free(et);
}

sc_status sc_et_load(const char *path, sc_et **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    sc_et *et = calloc(1, sizeof *et);
    if (!et) return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    size_t pl = strlen(path);
    et->path = malloc(pl + 1);
    if (!et->path || !sc__intern_init(&et->strings)) {
        free(et->path);
        free(et);
        return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    }
    memcpy(et->path, path, pl + 1);
    sc__vec_init(&et->nodes, sizeof(sc__et_node));
    sc__vec_init(&et->tensors, sizeof(int64_t));
    sc__vec_init(&et->storages, sizeof(int64_t));
    sc__vec_init(&et->deps, sizeof(sc__et_dep));
    et->schema = SC__NONE;
    sc__source src;
    sc_status st = sc__source_open_file(&src, path, err);
    if (st != SC_OK) {
        sc_et_free(et);
        return st;
    }
    sc__jwin w;
    st = sc__jwin_init(&w, &src, 0, (size_t)1 << 30, err);
    etreader r;
    memset(&r, 0, sizeof r);
    r.et = et;
    sc__vec_init(&r.scratch_in, sizeof(int64_t));
    sc__vec_init(&r.scratch_out, sizeof(int64_t));
    sc__vec_init(&r.sin, sizeof(int64_t));
    sc__vec_init(&r.sout, sizeof(int64_t));
    if (st == SC_OK && !sc__jp_init(&r.jp, &w, path, NULL, err)) {
        sc__jwin_free(&w);
        st = sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    }
    if (st != SC_OK) {
        sc__source_close(&src);
        sc_et_free(et);
        return st;
    }
    int rc = sc__jp_drive(&r.jp, et_step, &r, ET_START, ET_END, "execution trace");
    if (rc == SC__J_OK && !r.saw_nodes)
        rc = sc__jp_error_at(&r.jp, r.jp.p, SC_E_FORMAT,
                             "no \"nodes\" array: not a PyTorch Execution Trace");
    et->bytes = w.base + w.len;
    if (rc != SC__J_OK) sc__jwin_blame_source(&w, err);
    sc__jp_free(&r.jp);
    sc__jwin_free(&w);
    sc__source_close(&src);
    sc__vec_free(&r.scratch_in);
    sc__vec_free(&r.scratch_out);
    sc__vec_free(&r.sin);
    sc__vec_free(&r.sout);
    if (rc != SC__J_OK) {
        sc_et_free(et);
        if (err && err->status == SC_OK) sc__fail(err, SC_E_INTERNAL, path, SC_NO_OFFSET, "reader stopped");
        return err ? err->status : SC_E_PARSE;
    }
    if (et->nodes.len) qsort(et->nodes.data, et->nodes.len, sizeof(sc__et_node), cmp_node_id);
    sc__et_node *n = et->nodes.data;
    for (size_t i = 0; i < et->nodes.len; i++) {
        uint32_t s = n[i].in_shapes;
        if (s != SC__NONE && sc__intern_len(&et->strings, s) > 2) et->with_shapes++;
    }
    if (!data_deps(et)) {
        sc_et_free(et);
        return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    }
    *out = et;
    return SC_OK;
}
