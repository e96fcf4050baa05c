/*
 * shape_edit.h - a transformer's dimensions as its kernels' shapes show
 * them, and the re-shaping of those kernels for other dimensions (hidden
 * size, FFN size, heads, sequence length, micro-batch size), for
 * `predict`'s shape edits (transforms/reshape.c times them by the kernel
 * cost model).
 *
 * The dimensions are read off the shapes (shape_edit.c says how): hidden
 * from the layer norms' inputs, sequence length, head dim and the heads of
 * a rank from the attention's batched GEMMs or fused attention, the
 * micro-batch from the tokens of a norm's input over the sequence, the
 * tensor-parallel degree from hidden over a rank's heads x head dim, FFN
 * from the row-parallel GEMMs that project back to hidden. What cannot be
 * read stays 0 (unknown), and an edit that needs it fails saying so.
 */
#ifndef SC_SHAPE_EDIT_H
#define SC_SHAPE_EDIT_H

#include "kernel_cost.h"

/* hidden, ffn, heads, seq, micro_batch, tp, head_dim; 0: unknown */
typedef sc_model_dims sc__model_dims;

/* The dimensions one rank's records show. */
void sc__model_dims_infer(const sc__krec *recs, size_t n, sc__model_dims *out);

typedef struct sc__dim_map {
    int64_t from, to;
} sc__dim_map;

#define SC__MAP_MAX 8
/* From the traced dimensions to the edited ones, per role a dimension
 * plays: tokens (sequence x micro-batch, either), features (hidden, FFN,
 * QKV, each as a rank holds it), attention (a rank's batch x heads,
 * heads, sequence, head dim). */
typedef struct sc__shape_edit {
    sc__model_dims from, to;
    sc__dim_map token[SC__MAP_MAX], feature[SC__MAP_MAX], attn[SC__MAP_MAX];
    size_t ntoken, nfeature, nattn;
    double param_ratio; /* a layer's parameters, edited over traced */
    bool changes;       /* some dimension differs */
} sc__shape_edit;

/* The edit from traced dimensions `from` to the request (0 fields keep the
 * traced value; FFN follows hidden when only hidden is given). SC_E_USAGE
 * with one line naming the option when the trace does not show what the
 * edit needs or the new dimensions do not fit (heads not dividing hidden,
 * not splitting over the tensor-parallel degree). */
sc_status sc__shape_edit_init(const sc__model_dims *from, const sc__model_dims *request, sc__shape_edit *out,
                              sc_error *err);

/* The edit that re-shards a layer's kernels from the traced tensor-parallel
 * degree from->tp to tp: a rank's share of the column- and row-parallel
 * features (3h / T, h / T, f / T, 2f / T) and of the heads (a / T, b a / T)
 * re-sized; hidden, FFN, tokens, sequence and head dim as they are (they
 * win where a share equals one of them). False when it changes nothing
 * or the dimensions do not split over tp. */
bool sc__shape_edit_tp(const sc__model_dims *from, int64_t tp, sc__shape_edit *e);

/* k re-shaped into out; true when a dimension changed. */
bool sc__kshape_edit(const sc__shape_edit *e, const sc__kshape *k, sc__kshape *out);

/* How a collective's message grows: its tensor re-shaped (a flat bucket
 * of parameters, which no role fits, by the parameters' ratio). 1 when
 * nothing changes. */
double sc__shape_edit_message_ratio(const sc__shape_edit *e, const sc__kshape *k);

/* An activation of one rank ([tokens, hidden], 2 bytes an element) in
 * the traced and in the edited model: what an unshaped kernel of class
 * cls is taken to move. */
void sc__shape_edit_activation(const sc__shape_edit *e, uint8_t cls, sc__kshape *traced, sc__kshape *edited);

#endif /* SC_SHAPE_EDIT_H */
