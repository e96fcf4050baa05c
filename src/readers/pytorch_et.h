/*
 * pytorch_et.h - a PyTorch Execution Trace in memory (read by pytorch_et.c):
 * its operator nodes with their ids, parents, record-function ids, shapes
 * and types, the tensors they read and write, and the data dependencies
 * those imply; for benchmark generation (pipeline/benchgen.c) also each
 * node's operator schema, thread and raw argument values. The public sc_et
 * is this struct.
 */
#ifndef SC_PYTORCH_ET_H
#define SC_PYTORCH_ET_H

#include "../trace/trace.h"

typedef struct sc__et_node {
    int64_t id, parent, rf_id, tid;
    uint32_t name;
    uint32_t schema;                                     /* "op_schema", interned; SC__NONE when absent */
    uint32_t in_shapes, in_types, out_shapes, out_types; /* raw JSON text, interned */
    uint32_t in_values, out_values, in_strides;          /* raw JSON text, interned; SC__NONE when absent */
    uint32_t in_first, in_count, out_first, out_count;   /* tensor ids in et->tensors */
} sc__et_node;

typedef struct sc__et_dep {
    uint32_t from, to; /* node indices in id order */
} sc__et_dep;

struct sc_et {
    char *path;
    sc__intern strings;
    sc__vec nodes;   /* sc__et_node, sorted by id after loading */
    sc__vec tensors; /* int64 tensor ids */
    sc__vec storages; /* int64 storage id of each of tensors, same order */
    sc__vec deps;    /* sc__et_dep */
    uint32_t schema; /* interned */
    uint64_t bytes;
    uint64_t with_shapes; /* nodes with a non-empty input shape list */
};

/* Is n an operator? The root and thread nodes ("[pytorch|profiler|execution_...]")
 * are not. */
/* Index of the node with this id in the ET's id-sorted nodes, SC__NONE. */
uint32_t sc__et_node_by_id(const sc_et *et, int64_t id);

static inline bool sc__et_is_op(const sc_et *et, const sc__et_node *n) {
    return sc__intern_str(&et->strings, n->name)[0] != '[';
}

#endif /* SC_PYTORCH_ET_H */
