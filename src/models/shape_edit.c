/*
 * shape_edit.c - reading a transformer's dimensions off its kernels'
 * shapes, and re-shaping kernels for new ones (shape_edit.h).
 *
 * Each value a dimension can take is looked up by the role the dimension
 * plays in its operator, which tells apart values that coincide: in the
 * Megatron set 2,048 is both the sequence and a rank's FFN share, but a
 * GEMM's inner and output dimensions are features and its rows tokens;
 * the batched GEMMs of attention and softmax have only batch x heads,
 * sequence and head-dim dimensions. A value no role knows (the
 * vocabulary, a constant) is kept.
 */
#include "shape_edit.h"

#include <stdio.h>

/* Products of dimensions a hostile file may make huge: saturated, never
 * overflowing. */
static int64_t mul(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) || r > INT64_MAX / 8 ? INT64_MAX / 8 : r;
}

/* ------------------------------------------------------------ inference */

typedef struct vote {
    int64_t v[16];
    uint32_t n[16];
    size_t len;
} vote;

static void add_vote(vote *t, int64_t v) {
    if (v <= 0) return;
    for (size_t i = 0; i < t->len; i++)
        if (t->v[i] == v) {
            t->n[i]++;
            return;
        }
    if (t->len < 16) t->v[t->len] = v, t->n[t->len++] = 1;
}

/* The most frequent value (the first seen among equals); 0 when none. */
static int64_t winner(const vote *t) {
    size_t best = 0;
    for (size_t i = 1; i < t->len; i++)
        if (t->n[i] > t->n[best]) best = i;
    return t->len ? t->v[best] : 0;
}

static bool is_gemm_form(uint8_t f) {
    return f == SC__KF_MM || f == SC__KF_ADDMM || f == SC__KF_MATMUL || f == SC__KF_LINEAR;
}

/* Attention's batched GEMMs: scores = Q K^T (baddbmm/bmm with a square
 * [B, s, s] output) and context = P V (bmm with a square [B, s, s] input). */
static void vote_attention(const sc__kshape *k, vote *seq, vote *hd, vote *batch, vote *heads_r, vote *mb) {
    const int64_t *d0 = k->dim[0], *d1 = k->dim[1];
    if (k->form == SC__KF_BADDBMM && k->ndim[0] == 3 && k->ndim[1] == 3 && d0[1] == d0[2]) {
        add_vote(seq, d0[1]), add_vote(batch, d0[0]), add_vote(hd, d1[2]);
    } else if (k->form == SC__KF_BMM && k->ndim[0] == 3 && k->ndim[1] == 3 && d0[1] == d0[2]) {
        add_vote(seq, d0[1]), add_vote(batch, d0[0]), add_vote(hd, d1[2]);
    } else if ((k->form == SC__KF_SDPA || k->form == SC__KF_FLASH) && k->ndim[0] == 4) {
        bool flash = k->form == SC__KF_FLASH;
        add_vote(mb, d0[0]), add_vote(heads_r, flash ? d0[2] : d0[1]);
        add_vote(seq, flash ? d0[1] : d0[2]), add_vote(hd, d0[3]);
    }
}

static uint32_t winner_count(const vote *t) {
    uint32_t best = 0;
    for (size_t i = 0; i < t->len; i++)
        if (t->n[i] > best) best = t->n[i];
    return best;
}

void sc__model_dims_infer(const sc__krec *recs, size_t n, sc__model_dims *out) {
    memset(out, 0, sizeof *out);
    vote hidden = {0}, tokens = {0}, seq = {0}, hd = {0}, batch = {0}, heads_r = {0}, mb = {0}, ffn_r = {0};
    for (size_t i = 0; i < n; i++) {
        const sc__kshape *k = &recs[i].shape;
        if (k->cls == SC__KC_NORM && k->form == SC__KF_TENSORS && k->ndim[0] >= 2) {
            int64_t t = 1;
            for (size_t d = 0; d + 1 < k->ndim[0]; d++) t = mul(t, k->dim[0][d]);
            add_vote(&hidden, k->dim[0][k->ndim[0] - 1]);
            add_vote(&tokens, t);
        }
        vote_attention(k, &seq, &hd, &batch, &heads_r, &mb);
    }
    out->hidden = winner(&hidden);
    out->seq = winner(&seq);
    out->head_dim = winner(&hd);
    out->micro_batch = winner(&mb);
    if (!out->micro_batch && out->seq && winner(&tokens) % out->seq == 0) out->micro_batch = winner(&tokens) / out->seq;
    int64_t hr = winner(&heads_r);
    if (!hr && out->micro_batch && winner(&batch) % out->micro_batch == 0) hr = winner(&batch) / out->micro_batch;
    if (hr && out->head_dim && out->hidden && out->hidden % mul(hr, out->head_dim) == 0) {
        out->tp = out->hidden / mul(hr, out->head_dim);
        out->heads = mul(hr, out->tp);
    }
    /* FFN: the GEMMs back to hidden (the second MLP projection, the first
     * one's input gradient) whose inner dimension is neither hidden nor a
     * rank's share of it (attention's projection) nor a rank's QKV (its
     * input gradient). Weight gradients add the tokens, three a layer:
     * counted apart, and taken when nothing else has half their votes (FFN
     * may equal the tokens; the output layer's input gradient, once a step,
     * brings the vocabulary). */
    vote tok = {0};
    int64_t t = mul(out->seq, out->micro_batch), h = out->hidden, tp = out->tp;
    for (size_t i = 0; h && tp && i < n; i++) {
        const sc__kshape *k = &recs[i].shape;
        if (k->cls != SC__KC_GEMM || !is_gemm_form(k->form)) continue;
        size_t a = k->form == SC__KF_ADDMM ? 1 : 0;
        uint8_t na = k->ndim[a], nb = k->ndim[a + 1];
        if (!na || !nb) continue;
        int64_t kk = k->dim[a][na - 1];
        int64_t nn = k->form == SC__KF_LINEAR ? k->dim[a + 1][0] : k->dim[a + 1][nb - 1];
        if (nn != h || kk == h || kk == h / tp || kk == mul(3, h) / tp) continue;
        add_vote(kk == t ? &tok : &ffn_r, kk);
    }
    out->ffn = mul(winner_count(&ffn_r) * 2 >= winner_count(&tok) ? winner(&ffn_r) : winner(&tok), out->tp);
}

/* ------------------------------------------------------------ the edit */

static void put(sc__dim_map *m, size_t *n, int64_t from, int64_t to) {
    if (from <= 0 || to <= 0 || *n >= SC__MAP_MAX) return;
    for (size_t i = 0; i < *n; i++)
        if (m[i].from == from) return; /* the first role of a value wins */
    m[(*n)++] = (sc__dim_map){from, to};
}

static sc_status need(int64_t v, const char *opt, const char *what, sc_error *err) {
    if (v > 0) return SC_OK;
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "%s: the trace's %s could not be read from its shapes", opt,
                    what);
}

static sc_status check(const sc__model_dims *f, const sc__model_dims *t, const sc__model_dims *r, sc_error *err) {
    if (t->hidden % t->heads)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "%s: hidden %lld is not divisible by %lld heads",
                        r->heads ? "--heads" : "--hidden", (long long)t->hidden, (long long)t->heads);
    if (t->heads % f->tp)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--heads: %lld heads do not split over the trace's tensor-parallel degree %lld",
                        (long long)t->heads, (long long)f->tp);
    if (t->ffn % f->tp)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "--ffn: %lld does not split over the trace's tensor-parallel degree %lld", (long long)t->ffn,
                        (long long)f->tp);
    return SC_OK;
}

static sc_status target(const sc__model_dims *f, const sc__model_dims *r, sc__model_dims *t, sc_error *err) {
    sc_status st = need(f->hidden, "--hidden", "hidden size (no layer norm with shapes)", err);
    if (st == SC_OK) st = need(f->seq, r->seq ? "--seq" : "shape edits", "sequence length (no attention with shapes)", err);
    if (st == SC_OK) st = need(f->micro_batch, "shape edits", "micro-batch size", err);
    if (st == SC_OK) st = need(f->tp, "shape edits", "heads and tensor-parallel degree", err);
    if (st == SC_OK && (r->ffn || r->hidden)) st = need(f->ffn, "--ffn", "FFN size", err);
    if (st != SC_OK) return st;
    *t = *f;
    if (r->hidden) t->hidden = r->hidden;
    if (r->heads) t->heads = r->heads;
    if (r->seq) t->seq = r->seq;
    if (r->micro_batch) t->micro_batch = r->micro_batch;
    if (r->ffn) t->ffn = r->ffn;
    else if (r->hidden) {
        if (mul(f->ffn, r->hidden) % f->hidden)
            return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                            "--hidden %lld: FFN %lld x %lld / %lld is not whole: give --ffn", (long long)r->hidden,
                            (long long)f->ffn, (long long)r->hidden, (long long)f->hidden);
        t->ffn = mul(f->ffn, r->hidden) / f->hidden;
    }
    if ((st = check(f, t, r, err)) != SC_OK) return st;
    t->head_dim = t->hidden / t->heads;
    return SC_OK;
}

sc_status sc__shape_edit_init(const sc__model_dims *from, const sc__model_dims *request, sc__shape_edit *e,
                              sc_error *err) {
    memset(e, 0, sizeof *e);
    e->from = *from;
    sc_status st = target(from, request, &e->to, err);
    if (st != SC_OK) return st;
    const sc__model_dims *f = from, *t = &e->to;
    int64_t p = f->tp;
    put(e->token, &e->ntoken, mul(f->seq, f->micro_batch), mul(t->seq, t->micro_batch));
    put(e->token, &e->ntoken, f->seq, t->seq);
    put(e->token, &e->ntoken, f->micro_batch, t->micro_batch);
    put(e->feature, &e->nfeature, f->hidden, t->hidden);
    put(e->feature, &e->nfeature, f->hidden / p, t->hidden / p);
    put(e->feature, &e->nfeature, mul(3, f->hidden) / p, mul(3, t->hidden) / p);
    put(e->feature, &e->nfeature, f->ffn / p, t->ffn / p);
    put(e->feature, &e->nfeature, mul(2, f->ffn) / p, mul(2, t->ffn) / p);
    put(e->feature, &e->nfeature, f->ffn, t->ffn);
    put(e->feature, &e->nfeature, mul(3, f->hidden), mul(3, t->hidden));
    put(e->attn, &e->nattn, mul(f->micro_batch, f->heads) / p, mul(t->micro_batch, t->heads) / p);
    put(e->attn, &e->nattn, f->heads / p, t->heads / p);
    put(e->attn, &e->nattn, f->seq, t->seq);
    put(e->attn, &e->nattn, f->head_dim, t->head_dim);
    put(e->attn, &e->nattn, f->micro_batch, t->micro_batch);
    double pf = 4.0 * (double)f->hidden * (double)f->hidden + 2.0 * (double)f->hidden * (double)f->ffn;
    double pt = 4.0 * (double)t->hidden * (double)t->hidden + 2.0 * (double)t->hidden * (double)t->ffn;
    e->param_ratio = pf > 0 ? pt / pf : 1;
    e->changes = memcmp(f, t, sizeof *f) != 0;
    return SC_OK;
}

bool sc__shape_edit_tp(const sc__model_dims *from, int64_t tp, sc__shape_edit *e) {
    memset(e, 0, sizeof *e);
    e->from = e->to = *from;
    int64_t p = from->tp;
    if (p <= 0 || tp <= 0 || p == tp) return false;
    /* edit_attention reads a rank's heads as to.heads / from.tp */
    if (from->heads > 0) {
        if (from->heads % tp) return false;
        e->to.heads = from->heads / tp * p;
    }
    if (from->ffn > 0) e->to.ffn = from->ffn % tp ? 0 : from->ffn / tp * p;
    e->to.tp = tp;
    /* what every rank holds whole first: a sharded value equal to one of
     * these (2 x FFN / T = hidden) is the whole dimension, not a shard */
    put(e->feature, &e->nfeature, from->hidden, from->hidden);
    put(e->feature, &e->nfeature, from->ffn, from->ffn);
    put(e->feature, &e->nfeature, mul(3, from->hidden), mul(3, from->hidden));
    put(e->feature, &e->nfeature, mul(from->seq, from->micro_batch), mul(from->seq, from->micro_batch));
    if (from->hidden % tp == 0) {
        put(e->feature, &e->nfeature, from->hidden / p, from->hidden / tp);
        put(e->feature, &e->nfeature, mul(3, from->hidden) / p, mul(3, from->hidden) / tp);
    }
    if (from->ffn > 0 && from->ffn % tp == 0) {
        put(e->feature, &e->nfeature, from->ffn / p, from->ffn / tp);
        put(e->feature, &e->nfeature, mul(2, from->ffn) / p, mul(2, from->ffn) / tp);
    }
    put(e->attn, &e->nattn, from->seq, from->seq);
    put(e->attn, &e->nattn, from->head_dim, from->head_dim);
    if (from->heads > 0 && from->heads % tp == 0) {
        put(e->attn, &e->nattn, mul(from->micro_batch, from->heads) / p, mul(from->micro_batch, from->heads) / tp);
        put(e->attn, &e->nattn, from->heads / p, from->heads / tp);
    }
    put(e->attn, &e->nattn, from->micro_batch, from->micro_batch);
    e->param_ratio = 1;
    e->changes = e->nfeature || e->nattn;
    return e->changes;
}

/* ------------------------------------------------------------ re-shaping */

enum { R_TOKEN, R_FEATURE, R_ATTN };

/* The new value of v in the maps of roles r1 then r2 (-1: none); v when no
 * map has it. */
static int64_t lookup(const sc__shape_edit *e, int64_t v, int r1, int r2) {
    int roles[2] = {r1, r2};
    for (int i = 0; i < 2; i++) {
        if (roles[i] < 0) continue;
        const sc__dim_map *m = roles[i] == R_TOKEN ? e->token : roles[i] == R_FEATURE ? e->feature : e->attn;
        size_t n = roles[i] == R_TOKEN ? e->ntoken : roles[i] == R_FEATURE ? e->nfeature : e->nattn;
        for (size_t k = 0; k < n; k++)
            if (m[k].from == v) return m[k].to;
    }
    return v;
}

/* Tensor i: every dimension by the attention roles. */
static void all_attn(const sc__shape_edit *e, sc__kshape *k, size_t i) {
    for (size_t d = 0; d < k->ndim[i]; d++) k->dim[i][d] = lookup(e, k->dim[i][d], R_ATTN, -1);
}

/* Tensor i as an activation: leading dims tokens, the last a feature; a
 * tensor of exactly the tokens ([b, s] ids, a loss per token) has no
 * feature dimension. */
static void activation(const sc__shape_edit *e, sc__kshape *k, size_t i) {
    uint8_t n = k->ndim[i];
    int64_t numel = 1;
    for (size_t d = 0; d < n; d++) numel = mul(numel, k->dim[i][d]);
    bool tokens = numel == mul(e->from.seq, e->from.micro_batch);
    for (size_t d = 0; d < n; d++)
        k->dim[i][d] = d + 1 == n && !tokens ? lookup(e, k->dim[i][d], R_FEATURE, R_TOKEN)
                                             : lookup(e, k->dim[i][d], R_TOKEN, R_ATTN);
}

/* Scores-like: the last two dimensions both the sequence, and before
 * them a rank's batch x heads ([b a, s, s], [b, a, s, s]) or nothing (a
 * mask: [1, s, s], [b, 1, s, s]). An activation whose hidden equals the
 * sequence ([b, s, h]) is not. */
static bool square_seq(const sc__shape_edit *e, const sc__kshape *k, size_t i) {
    uint8_t n = k->ndim[i];
    if (n < 2 || k->dim[i][n - 1] != k->dim[i][n - 2] || k->dim[i][n - 1] != e->from.seq) return false;
    int64_t lead = 1, bh = mul(e->from.micro_batch, e->from.heads) / e->from.tp;
    for (size_t d = 0; d + 2 < n; d++) lead = mul(lead, k->dim[i][d]);
    bool mask4 = n == 4 && k->dim[i][1] == 1 && (k->dim[i][0] == 1 || k->dim[i][0] == e->from.micro_batch);
    return lead == 1 || lead == bh || mask4;
}

static void edit_tensors(const sc__shape_edit *e, sc__kshape *k) {
    for (size_t i = 0; i < SC__KS_TENSORS; i++) {
        if (!k->ndim[i]) continue;
        /* a norm's input is an activation even when hidden equals the sequence */
        if (k->cls == SC__KC_SOFTMAX || (k->cls != SC__KC_NORM && square_seq(e, k, i))) all_attn(e, k, i);
        else activation(e, k, i);
    }
}

/* Fused attention's q, k, v and output by position: [b, heads, s, d]
 * (SDPA) or [b, s, heads, d] (flash), so that a batch equal to a rank's
 * heads is not taken for them. */
static void edit_attention(const sc__shape_edit *e, sc__kshape *k) {
    int64_t p = e->from.tp;
    bool flash = k->form == SC__KF_FLASH;
    for (size_t i = 0; i < SC__KS_TENSORS; i++) {
        if (k->ndim[i] != 4) continue;
        int64_t *d = k->dim[i];
        int64_t *heads = flash ? &d[2] : &d[1], *seq = flash ? &d[1] : &d[2];
        if (d[0] == e->from.micro_batch) d[0] = e->to.micro_batch;
        if (*heads == e->from.heads / p) *heads = e->to.heads / p;
        if (*seq == e->from.seq) *seq = e->to.seq;
        if (d[3] == e->from.head_dim) d[3] = e->to.head_dim;
    }
}

/* A GEMM's M, K and N. Forward, input-gradient and weight-gradient GEMMs
 * put the flattened tokens in any of the three ([T, in] x [in, out],
 * [T, out] x [out, in], [in, T] x [T, out]); the first that is the tokens
 * is taken for them, the others are features. Where a feature equals the
 * tokens (FFN = s x b) the two readings are one permutation: the same
 * FLOPs. */
static void gemm_roles(const sc__shape_edit *e, int64_t *m, int64_t *kk, int64_t *n) {
    int64_t t = mul(e->from.seq, e->from.micro_batch), t2 = mul(e->to.seq, e->to.micro_batch);
    int64_t *d[3] = {m, kk, n};
    int tok = *m == t ? 0 : *kk == t ? 1 : *n == t ? 2 : -1;
    for (int i = 0; i < 3; i++) *d[i] = i == tok ? t2 : lookup(e, *d[i], R_FEATURE, -1);
}

/* mm, addmm, and linear or matmul of 2-D operands. */
static void edit_gemm_2d(const sc__shape_edit *e, sc__kshape *k) {
    size_t a = k->form == SC__KF_ADDMM ? 1 : 0;
    bool linear = k->form == SC__KF_LINEAR;
    int64_t *A = k->dim[a], *B = k->dim[a + 1];
    int64_t m = A[0], kk = A[1], n = linear ? B[0] : B[1];
    gemm_roles(e, &m, &kk, &n);
    A[0] = m, A[1] = kk;
    if (linear) B[0] = n, B[1] = kk;
    else B[0] = kk, B[1] = n;
    size_t c = a ? 0 : linear ? 2 : SC__KS_TENSORS; /* addmm's C, linear's bias */
    if (c < SC__KS_TENSORS && k->ndim[c] == 2) k->dim[c][0] = m, k->dim[c][1] = n;
    else if (c < SC__KS_TENSORS && k->ndim[c] == 1) k->dim[c][0] = n;
}

static void edit_gemm(const sc__shape_edit *e, sc__kshape *k) {
    size_t a = k->form == SC__KF_ADDMM ? 1 : 0;
    uint8_t na = k->ndim[a], nb = k->ndim[a + 1];
    if (k->form == SC__KF_MATMUL && na >= 3 && nb >= 3) { /* batched: attention's */
        for (size_t i = 0; i < SC__KS_TENSORS; i++) all_attn(e, k, i);
    } else if (na == 2 && nb == 2) {
        edit_gemm_2d(e, k);
    } else { /* [s, b, in] into a linear or matmul: tokens apart, then features */
        activation(e, k, a);
        for (size_t i = 0; i < SC__KS_TENSORS; i++)
            if (i != a)
                for (size_t d = 0; d < k->ndim[i]; d++) k->dim[i][d] = lookup(e, k->dim[i][d], R_FEATURE, -1);
    }
}

bool sc__kshape_edit(const sc__shape_edit *e, const sc__kshape *k, sc__kshape *out) {
    *out = *k;
    if (!e->changes) return false;
    switch (k->form) {
    case SC__KF_MM: case SC__KF_ADDMM: case SC__KF_MATMUL: case SC__KF_LINEAR: edit_gemm(e, out); break;
    case SC__KF_BMM: case SC__KF_BADDBMM:
        for (size_t i = 0; i < SC__KS_TENSORS; i++) all_attn(e, out, i);
        break;
    case SC__KF_SDPA: case SC__KF_FLASH: edit_attention(e, out); break;
    case SC__KF_TENSORS: edit_tensors(e, out); break;
    default: return false;
    }
    return memcmp(out->dim, k->dim, sizeof k->dim) != 0;
}

double sc__shape_edit_message_ratio(const sc__shape_edit *e, const sc__kshape *k) {
    if (!e->changes || k->form != SC__KF_TENSORS || !k->ndim[0]) return 1;
    sc__kshape out;
    double before = 1, after = 1;
    sc__kshape_edit(e, k, &out);
    for (size_t d = 0; d < k->ndim[0]; d++) before *= (double)k->dim[0][d], after *= (double)out.dim[0][d];
    if (before == after && k->ndim[0] == 1) return e->param_ratio; /* a flat bucket of parameters */
    return before > 0 ? after / before : 1;
}

void sc__shape_edit_activation(const sc__shape_edit *e, uint8_t cls, sc__kshape *traced, sc__kshape *edited) {
    const sc__model_dims *m[2] = {&e->from, &e->to};
    sc__kshape *k[2] = {traced, edited};
    for (int i = 0; i < 2; i++) {
        memset(k[i], 0, sizeof *k[i]);
        k[i]->cls = cls;
        k[i]->form = SC__KF_TENSORS;
        k[i]->dtype = SC__DT_FP16;
        k[i]->ndim[0] = 2;
        k[i]->esize[0] = 2;
        k[i]->dim[0][0] = mul(m[i]->seq, m[i]->micro_batch);
        k[i]->dim[0][1] = m[i]->hidden;
    }
}
