/*
 * msg_size.c - the message size of one communication task (sc__comm_rec:
 * bytes, or a per-rank piece), in the convention of sc__group.bytes
 * (graph.h), from what the rank's trace says, in order of trust:
 *
 *   1. the NCCL kernel's own args (PyTorch 2.2+): "In msg nelems" (the
 *      collective's input per rank), "Out msg nelems" (its output), "dtype",
 *      "Group size";
 *   2. else the CPU operators that enqueued it: from the launch call's
 *      operator up its parents, each operator that names a collective
 *      (`nccl:*` annotations, `record_param_comms`, `c10d::*`,
 *      `_c10d_functional::*`) is asked in turn, nearest first. An operator
 *      with the kernel's args of its own (a newer `record_param_comms`)
 *      answers as in 1; else its "Input Dims" / "Input type": one argument
 *      holds the collective's input or output tensors (table `op_args`),
 *      whose elements times the element size give a size. A TensorList (or
 *      an argument without a type) takes its element size from the NCCL
 *      kernel's name (`_f16`, `_bf16`, `_f32`, `_float`...; only reduction
 *      kernels name the data type: NCCL runs all-gather, broadcast and
 *      send/recv on bytes, so theirs say int8 whatever the tensors hold),
 *      else from the nearest operator below it with a concrete type;
 *   3. else nothing here: a Chakra node's comm_size is build_chakra.c's.
 *
 * A size measured on the collective's input for an all-gather (or on the
 * output of a reduce-scatter) is one rank's piece: it needs the group's size.
 * The walk then goes on up, since an outer operator may hold the whole
 * (c10d::_allgather_base_'s first argument is the gathered output, where
 * the `nccl:_all_gather_base` annotation inside it holds the input); only if
 * none does is the piece kept, with the "Group size" when an arg gave one,
 * and collectives.c multiplies it by the group's size once matched.
 *
 * The trace's "Input Dims" and "Input type" are raw JSON text (trace.h);
 * they are read in place here, nothing is allocated.
 */
#include "build.h"

#include <stdlib.h>

/* Element size of a data type as traces spell it: Kineto's "dtype" args
 * (c10 ScalarType names), "Input type" (C++ type names) and NCCL kernel
 * names (ncclDataType suffixes, old and new); 0 when unknown. */
int64_t sc__dtype_bytes(const char *name) {
    static const struct {
        const char *name;
        int64_t size;
    } table[] = {
        /* "dtype" args */
        {"Float", 4}, {"float", 4}, {"Float32", 4}, {"Half", 2}, {"BFloat16", 2}, {"Float16", 2},
        {"Double", 8}, {"Long", 8}, {"Int", 4}, {"Short", 2}, {"Byte", 1}, {"Char", 1}, {"Bool", 1},
        {"Int8", 1}, {"UInt8", 1}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"Int64", 8},
        {"Int32", 4}, {"ComplexFloat", 8}, {"ComplexDouble", 16},
        /* "Input type" */
        {"double", 8}, {"c10::Half", 2}, {"c10::BFloat16", 2}, {"long int", 8}, {"long", 8},
        {"int", 4}, {"short int", 2}, {"short", 2}, {"signed char", 1}, {"unsigned char", 1},
        {"bool", 1}, {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1},
        {"c10::Float8_e4m3fnuz", 1}, {"c10::Float8_e5m2fnuz", 1}, {"c10::complex<float>", 8},
        {"c10::complex<double>", 16}, {"c10::complex<c10::Half>", 4},
        /* NCCL kernel names */
        {"f16", 2}, {"half", 2}, {"bf16", 2}, {"bfloat16", 2}, {"f32", 4}, {"f64", 8},
        {"i8", 1}, {"u8", 1}, {"int8_t", 1}, {"uint8_t", 1}, {"i32", 4}, {"u32", 4},
        {"int32_t", 4}, {"uint32_t", 4}, {"i64", 8}, {"u64", 8}, {"int64_t", 8}, {"uint64_t", 8},
        {"f8e4m3", 1}, {"f8e5m2", 1},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0) return table[i].size;
    return 0;
}

/* The element size an NCCL reduction kernel's name gives ("..._Sum_f16_RING_LL(",
 * "..._RING_LL_Sum_float("); 0 for other kernels (see the top comment). */
int64_t sc__nccl_kernel_dtype_bytes(const char *kernel) {
    char kind[32];
    sc__nccl_kind(kernel, kind, sizeof kind);
    sc__coll_type type = sc__coll_type_from_name(kind);
    if (type != SC_C_ALL_REDUCE && type != SC_C_REDUCE && type != SC_C_REDUCE_SCATTER) return 0;
    for (const char *p = strchr(kernel, '_'); p && *p && *p != '('; p = strchr(p + 1, '_')) {
        char tok[16];
        size_t n = 0;
        /* "int8_t" holds a '_': take the token up to the next '_' and also
         * up to the one after it. */
        for (const char *q = p + 1; *q && *q != '(' && *q != '<' && n + 1 < sizeof tok; q++) {
            if (*q == '_') {
                tok[n] = '\0';
                int64_t s = sc__dtype_bytes(tok);
                if (s) return s;
            }
            tok[n++] = *q;
        }
        tok[n] = '\0';
        int64_t s = sc__dtype_bytes(tok);
        if (s) return s;
    }
    return 0;
}

/* ------------------------------------------------- Input Dims / Input type */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

/* Skips one JSON value: an array (nested), a string or a scalar. NULL on
 * text that is not one. */
static const char *skip_value(const char *p) {
    p = skip_ws(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        return *p ? p + 1 : NULL;
    }
    if (*p != '[') {
        while (*p && *p != ',' && *p != ']') p++;
        return *p ? p : NULL;
    }
    int depth = 0;
    for (; *p; p++) {
        if (*p == '"') {
            p = skip_value(p);
            if (!p) return NULL;
            p--;
        } else if (*p == '[') {
            depth++;
        } else if (*p == ']' && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

/* The k-th element of the top-level array `text`; NULL when absent. */
static const char *element(const char *text, unsigned k) {
    const char *p = skip_ws(text);
    if (*p != '[') return NULL;
    p = skip_ws(p + 1);
    if (*p == ']') return NULL;
    for (unsigned i = 0; i < k; i++) {
        p = skip_value(p);
        if (!p) return NULL;
        p = skip_ws(p);
        if (*p != ',') return NULL;
        p = skip_ws(p + 1);
    }
    return p;
}

static bool mul_ok(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0 || (b && a > INT64_MAX / b)) return false;
    *out = a * b;
    return true;
}

enum { MAX_NEST = 4 };

/* Elements of the dims array at *p: a shape [d0, d1...] gives their
 * product (1 for [], a 0-dim tensor), an array of arrays the sum of its
 * members (a TensorList's shapes). *nest: 0 for a shape, else how deep the
 * arrays go; *empty: the array is []. -1 on anything else or overflow. */
static int64_t numel_at(const char **pp, int depth, int *nest, bool *empty) {
    const char *p = skip_ws(*pp);
    if (*p != '[' || depth > MAX_NEST) return -1;
    p = skip_ws(p + 1);
    *nest = 0;
    *empty = *p == ']';
    int64_t total = *p == '[' ? 0 : 1;
    bool lists = *p == '[';
    while (*p != ']') {
        int64_t v;
        if (lists) {
            int sub;
            bool sub_empty;
            v = numel_at(&p, depth + 1, &sub, &sub_empty);
            if (v < 0 || v > INT64_MAX - total) return -1;
            total += v;
            if (sub + 1 > *nest) *nest = sub + 1;
        } else {
            char *end;
            long long d = strtoll(p, &end, 10);
            if (end == p || !mul_ok(total, d, &total)) return -1;
            p = end;
        }
        p = skip_ws(p);
        if (*p == ',') p = skip_ws(p + 1);
        else if (*p != ']') return -1;
        if (lists != (*p == '[') && *p != ']') return -1; /* a shape mixed with lists */
    }
    *pp = p + 1;
    return total;
}

/* The k-th string of an "Input type" array into buf ("" when absent). */
static void type_at(const char *types, unsigned k, char *buf, size_t size) {
    buf[0] = '\0';
    const char *p = types ? element(types, k) : NULL;
    if (!p || *p != '"') return;
    size_t n = 0;
    for (p++; *p && *p != '"' && n + 1 < size; p++) buf[n++] = *p;
    buf[n] = '\0';
}

/* ----------------------------------------------------- the convention */

enum { ROLE_IN, ROLE_OUT };

/* Records what a size of the collective's input or output (bytes, per
 * rank) says, by the convention of graph.h: the whole message, or a piece
 * that the group's size multiplies. True once the whole is known. */
static bool take(sc__comm_rec *r, int role, int64_t size, int64_t group_size) {
    sc__coll_type t = (sc__coll_type)r->type;
    bool gathers = t == SC_C_ALL_GATHER || t == SC_C_GATHER;
    bool scatters = t == SC_C_REDUCE_SCATTER || t == SC_C_SCATTER;
    bool piece = (gathers && role == ROLE_IN) || (scatters && role == ROLE_OUT);
    if (!piece) {
        r->bytes = size;
        return true;
    }
    if (group_size > 0 && mul_ok(size, group_size, &r->bytes)) return true;
    if (r->piece < 0) {
        r->piece = size;
        r->group_size = group_size;
    }
    return false;
}

/* Source 1 (and an operator's own args): In/Out msg nelems x dtype. */
static bool from_args(const sc_trace *t, const sc__event_ext *x, sc__comm_rec *r) {
    if (!x || x->dtype == SC__NONE || (x->in_nelems < 0 && x->out_nelems < 0)) return false;
    int64_t elem = sc__dtype_bytes(sc__trace_str(t, x->dtype)), size;
    if (!elem) return false;
    bool gathers = r->type == SC_C_ALL_GATHER || r->type == SC_C_GATHER;
    /* The side that is the whole message first (the output of a gather). */
    if (gathers && x->out_nelems >= 0 && mul_ok(x->out_nelems, elem, &size))
        return take(r, ROLE_OUT, size, x->group_size);
    if (x->in_nelems >= 0 && mul_ok(x->in_nelems, elem, &size)) return take(r, ROLE_IN, size, x->group_size);
    if (x->out_nelems >= 0 && mul_ok(x->out_nelems, elem, &size))
        return take(r, ROLE_OUT, size, x->group_size);
    return false;
}

/* Which argument of an operator holds the collective's tensors, and as
 * what: the first that gives a size wins. From the operators' schemas:
 * ProcessGroupNCCL's `nccl:*` annotation and record_param_comms record the
 * collective's input tensors first; c10d::allgather_ and _allgather_base_
 * take the (gathered) output first, reduce_scatter_ and _reduce_scatter_base_
 * and alltoall_ / alltoall_base_ the output first and the input second. */
typedef struct op_args {
    const char *name;
    bool prefix;
    uint8_t arg[2], role[2]; /* role[1] == 0xff: one choice only */
} op_args;

static const op_args OP_ARGS[] = {
    {"nccl:", true, {0, 0}, {ROLE_IN, 0xff}},
    {"record_param_comms", false, {0, 0}, {ROLE_IN, 0xff}},
    {"_c10d_functional::", true, {0, 0}, {ROLE_IN, 0xff}},
    {"c10d_functional::", true, {0, 0}, {ROLE_IN, 0xff}},
    {"c10d::allreduce_", false, {0, 0}, {ROLE_IN, 0xff}},
    {"c10d::allreduce_coalesced_", false, {0, 0}, {ROLE_IN, 0xff}},
    {"c10d::broadcast_", false, {0, 0}, {ROLE_IN, 0xff}},
    {"c10d::reduce_", false, {0, 0}, {ROLE_IN, 0xff}},
    {"c10d::allgather_", false, {0, 1}, {ROLE_OUT, ROLE_IN}},
    {"c10d::_allgather_base_", false, {0, 1}, {ROLE_OUT, ROLE_IN}},
    {"c10d::allgather_coalesced_", false, {0, 1}, {ROLE_OUT, ROLE_IN}},
    {"c10d::allgather_into_tensor_coalesced_", false, {0, 1}, {ROLE_OUT, ROLE_IN}},
    {"c10d::gather_", false, {0, 1}, {ROLE_OUT, ROLE_IN}},
    {"c10d::reduce_scatter_", false, {1, 0}, {ROLE_IN, ROLE_OUT}},
    {"c10d::_reduce_scatter_base_", false, {1, 0}, {ROLE_IN, ROLE_OUT}},
    {"c10d::reduce_scatter_tensor_coalesced_", false, {1, 0}, {ROLE_IN, ROLE_OUT}},
    {"c10d::scatter_", false, {1, 0}, {ROLE_IN, ROLE_OUT}},
    {"c10d::alltoall_", false, {1, 0}, {ROLE_IN, 0xff}},
    {"c10d::alltoall_base_", false, {1, 0}, {ROLE_IN, 0xff}},
    {"c10d::send", false, {0, 0}, {ROLE_IN, 0xff}},
    {"c10d::recv_", false, {0, 0}, {ROLE_IN, 0xff}},
    {"c10d::recv_any_source_", false, {0, 0}, {ROLE_IN, 0xff}},
};

/* The table row of a collective-naming operator; NULL for other ops. */
static const op_args *op_args_of(const char *name) {
    for (size_t i = 0; i < sizeof OP_ARGS / sizeof OP_ARGS[0]; i++) {
        const op_args *a = &OP_ARGS[i];
        if (a->prefix ? sc__starts_with(name, a->name) : strcmp(name, a->name) == 0) return a;
    }
    return NULL;
}

/* What the walk carries from one operator to the next. */
typedef struct walk {
    const sc_trace *t;
    int64_t kernel_elem; /* element size from the kernel's name, 0 if none */
    int64_t seen_elem;   /* from the nearest operator with a concrete type, 0 if none */
    int64_t group_size;  /* the first "Group size" arg met, -1 if none */
} walk;

/* The size in bytes of argument k of an operator; -1 when unknown. */
static int64_t arg_bytes(walk *w, const sc__event_shapes *sh, unsigned k) {
    char type[48];
    type_at(sh->types != SC__NONE ? sc__trace_str(w->t, sh->types) : NULL, k, type, sizeof type);
    int64_t elem = sc__dtype_bytes(type);
    const char *p = element(sc__trace_str(w->t, sh->dims), k);
    int nest;
    bool empty;
    int64_t n = p ? numel_at(&p, 0, &nest, &empty) : -1;
    if (n < 0) return -1;
    if (elem) {
        w->seen_elem = elem;
        if (nest > 0) return -1; /* a list where a tensor's type stands: not a shape */
    } else {
        /* A TensorList, or no type: its shapes need a list and a dtype from
         * elsewhere (an empty list is shapes not recorded). */
        if (nest == 0 && (empty || type[0])) return -1;
        elem = w->kernel_elem ? w->kernel_elem : w->seen_elem;
        if (!elem) return -1;
    }
    int64_t size;
    return mul_ok(n, elem, &size) ? size : -1;
}

/* Source 2 for one operator: its own args, else its shapes. */
static bool from_op(walk *w, const sc__event *e, const op_args *a, sc__comm_rec *r) {
    const sc__event_ext *x = sc__trace_ext(w->t, e);
    if (x && x->group_size > 0 && w->group_size < 0) w->group_size = x->group_size;
    if (from_args(w->t, x, r)) return true;
    const sc__event_shapes *sh = sc__trace_shapes(w->t, e);
    if (!sh || sh->dims == SC__NONE) return false;
    for (int i = 0; i < 2 && a->role[i] != 0xff; i++) {
        int64_t size = arg_bytes(w, sh, a->arg[i]);
        if (size >= 0) return take(r, a->role[i], size, -1);
    }
    return false;
}

enum { MAX_WALK = 64 };

void sc__msg_size(sc__bctx *c, const sc__event *kernel, uint32_t op, sc__comm_rec *r) {
    const sc_trace *t = c->t;
    r->bytes = r->piece = r->group_size = -1;
    const sc__event_ext *x = sc__trace_ext(t, kernel);
    if (from_args(t, x, r)) return;
    walk w = {t, sc__nccl_kernel_dtype_bytes(sc__trace_str(t, kernel->name)), 0,
              x && x->group_size > 0 ? x->group_size : -1};
    const sc__event *ev = sc__trace_events(t);
    for (int depth = 0; op != SC__NONE && op >= c->first_op && depth < MAX_WALK; depth++) {
        const sc__op *o = &SC__VEC_AT(&c->g->ops, sc__op, op);
        const op_args *a = op_args_of(sc__graph_str(c->g, o->name));
        uint32_t local = op - c->first_op;
        if (a && local < c->op_event.len &&
            from_op(&w, &ev[SC__VEC_AT(&c->op_event, uint32_t, local)], a, r))
            return;
        op = o->parent;
    }
    /* Only a piece: an operator's "Group size" makes it whole. */
    if (r->piece >= 0 && r->group_size < 0) r->group_size = w.group_size;
}
