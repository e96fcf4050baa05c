/*
 * structure_dims.c - the model's dimensions read off the shapes its
 * operators record ("Input Dims", "Input type"; Kineto keeps them when the
 * profile records shapes), for `stepcast structure` (structure_run.c).
 *
 * Inside one rank's forward layers (their traced time window):
 *   hidden       the normalized dimension of the layers' norms (LayerNorm,
 *                RMSNorm: the 1-D weight);
 *   dtype        the first input type of the layers' GEMMs (mm / addmm /
 *                matmul before aten::linear, whose input is the one
 *                before autocast);
 *   ffn          the widest inner dimension K of a GEMM whose output is
 *                the hidden size (the MLP's second projection), times TP;
 *   head dim, S  the attention's scores (baddbmm / bmm [b*h, S, S] x
 *                [b*h, S, d]) or a fused attention op's [B, H, S, d];
 * over the whole step:
 *   micro-batch, seq   an embedding's index input [B, S].
 * Heads are hidden / head dim (multi-head attention; cross-checked with the
 * per-rank heads times TP when both are known). Anything not found stays
 * unknown with the reason; nothing is filled from a default.
 */
#include "structure_run.h"

#include "../trace/trace.h"

#include <stdio.h>
#include <stdlib.h>

#define MAX_ARGS 6
#define MAX_RANK 6

typedef struct tensor_dims {
    int nargs;
    int rank[MAX_ARGS]; /* -1: not a plain tensor (a list, a scalar...) */
    int64_t d[MAX_ARGS][MAX_RANK];
} tensor_dims;

/* "[[2048, 4, 4096], [4096], []]" into dims; nested lists are marked -1. */
static void parse_dims(const char *s, tensor_dims *td) {
    memset(td, 0, sizeof *td);
    int depth = 0, arg = -1;
    for (; *s; s++) {
        if (*s == '[') {
            depth++;
            if (depth == 2 && ++arg < MAX_ARGS) td->nargs = arg + 1;
            if (depth == 3 && arg >= 0 && arg < MAX_ARGS) td->rank[arg] = -1;
        } else if (*s == ']') {
            depth--;
        } else if (*s >= '0' && *s <= '9' && depth == 2 && arg >= 0 && arg < MAX_ARGS && td->rank[arg] >= 0) {
            int64_t v = 0;
            while (*s >= '0' && *s <= '9' && v < INT64_MAX / 10) v = v * 10 + (*s++ - '0');
            s--;
            if (td->rank[arg] < MAX_RANK) td->d[arg][td->rank[arg]] = v;
            td->rank[arg]++;
        }
    }
}

/* The first quoted type of "Input type" ("c10::Half") as a short dtype. */
static const char *dtype_of(const char *types) {
    const char *q = strchr(types, '"');
    if (!q) return NULL;
    q++;
    if (sc__starts_with(q, "c10::Half")) return "fp16";
    if (sc__starts_with(q, "c10::BFloat16")) return "bf16";
    if (sc__starts_with(q, "float\"")) return "fp32";
    if (sc__starts_with(q, "double\"")) return "fp64";
    if (sc__starts_with(q, "c10::Float8")) return "fp8";
    return NULL;
}

static bool has_ci(const char *s, const char *w) {
    size_t n = strlen(w);
    for (; *s; s++) {
        size_t k = 0;
        while (k < n && s[k] && (s[k] | 32) == (w[k] | 32)) k++;
        if (k == n) return true;
    }
    return false;
}

typedef struct seen {
    int64_t hidden_votes[4], hidden_vals[4];
    int64_t gemm_k_for_hidden;     /* widest K of a GEMM with N == hidden (needs hidden: pass 2) */
    int64_t head_dim, attn_seq, attn_bh, sdpa_b, sdpa_h, sdpa_s, sdpa_d;
    int64_t emb_b, emb_s;
    const char *dtype, *dtype_low; /* of aten::linear; of the GEMMs below it */
} seen;

static void vote(seen *w, int64_t h) {
    for (int k = 0; k < 4; k++) {
        if (w->hidden_vals[k] == h || !w->hidden_votes[k]) {
            w->hidden_vals[k] = h;
            w->hidden_votes[k]++;
            return;
        }
    }
}

/* The widest normalized dimension with at least half the votes of the
 * commonest: a layer's per-head norms (q/k norms over the head dimension)
 * are as many as its hidden-size norms, and narrower. */
static int64_t hidden_of(const seen *w) {
    int64_t most = 0, best = 0;
    for (int k = 0; k < 4; k++)
        if (w->hidden_votes[k] > most) most = w->hidden_votes[k];
    for (int k = 0; k < 4; k++)
        if (w->hidden_votes[k] && 2 * w->hidden_votes[k] >= most && w->hidden_vals[k] > best) best = w->hidden_vals[k];
    return best;
}

/* GEMM (K, N) of an op: mm [M,K]x[K,N], addmm [N][M,K]x[K,N], matmul
 * [..,K]x[K,N], linear [..,K]x[N,K]. */
static bool gemm_kn(const char *name, const tensor_dims *td, int64_t *k, int64_t *n) {
    int a = -1, b = -1;
    bool wt = false;
    if (!strcmp(name, "aten::mm") || !strcmp(name, "aten::matmul")) a = 0, b = 1;
    else if (!strcmp(name, "aten::addmm")) a = 1, b = 2;
    else if (!strcmp(name, "aten::linear")) a = 0, b = 1, wt = true;
    if (a < 0 || td->nargs <= b || td->rank[a] < 2 || td->rank[b] != 2) return false;
    int64_t ka = td->d[a][td->rank[a] - 1];
    *k = wt ? td->d[b][1] : td->d[b][0];
    *n = wt ? td->d[b][0] : td->d[b][1];
    return ka == *k;
}

static void look(seen *w, const char *name, const tensor_dims *td, const char *types, bool in_layers, int64_t hidden) {
    if (!in_layers) {
        if (!strcmp(name, "aten::embedding") && td->nargs >= 2 && td->rank[1] == 2 && !w->emb_b)
            w->emb_b = td->d[1][0], w->emb_s = td->d[1][1];
        return;
    }
    if ((has_ci(name, "layernorm") || has_ci(name, "layer_norm") || has_ci(name, "rmsnorm") ||
         has_ci(name, "rms_norm")) &&
        td->nargs >= 2 && td->rank[0] >= 2) {
        /* the weight: the first 1-d input as wide as the input's last
         * dimension (second in fused norms, third after aten::layer_norm's
         * normalized_shape, fifth in SGLang's fused add + RMSNorm) */
        int64_t last = td->d[0][td->rank[0] - 1];
        for (int a = 1; a < td->nargs; a++)
            if (td->rank[a] == 1 && td->d[a][0] == last) {
                vote(w, last);
                break;
            }
    }
    int64_t k, n;
    if (gemm_kn(name, td, &k, &n)) {
        /* aten::linear records its input before autocast casts it: the GEMM under it says the type */
        bool low = strcmp(name, "aten::linear") != 0;
        if (types && (low ? !w->dtype_low : !w->dtype)) *(low ? &w->dtype_low : &w->dtype) = dtype_of(types);
        if (hidden && n == hidden && k > w->gemm_k_for_hidden) w->gemm_k_for_hidden = k;
    }
    if ((!strcmp(name, "aten::baddbmm") && td->nargs >= 3 && td->rank[1] == 3 && td->rank[2] == 3) ||
        (!strcmp(name, "aten::bmm") && td->nargs >= 2 && td->rank[0] == 3 && td->rank[1] == 3)) {
        int q = !strcmp(name, "aten::baddbmm") ? 1 : 0; /* [bh, S, d] x [bh, d, S] */
        if (!w->head_dim && td->d[q][1] == td->d[q + 1][2] && td->d[q][2] == td->d[q + 1][1] &&
            td->d[q][2] < td->d[q][1])
            w->attn_bh = td->d[q][0], w->attn_seq = td->d[q][1], w->head_dim = td->d[q][2];
    }
    if ((has_ci(name, "scaled_dot_product") || has_ci(name, "flash_attention")) && td->nargs >= 1 &&
        td->rank[0] == 4 && !w->sdpa_d)
        w->sdpa_b = td->d[0][0], w->sdpa_h = td->d[0][1], w->sdpa_s = td->d[0][2], w->sdpa_d = td->d[0][3];
}

/* The traced window of rank r's forward layers (CPU and GPU tasks). */
static bool layer_window(const sc__graph *g, const sc__structure *s, size_t r, int64_t *lo, int64_t *hi) {
    const sc__task *t = sc__graph_tasks(g);
    const sc__rank *rk = &((const sc__rank *)g->ranks.data)[r];
    *lo = INT64_MAX, *hi = INT64_MIN;
    for (uint32_t i = rk->first_task; i < rk->first_task + rk->ntasks; i++)
        if (s->task_layer[i] != SC__NONE && s->task_phase[i] == SC__PHASE_FORWARD && !sc__task_on_gpu(t[i].kind)) {
            if (t[i].ts < *lo) *lo = t[i].ts;
            if (t[i].ts + t[i].dur > *hi) *hi = t[i].ts + t[i].dur;
        }
    return *hi > *lo;
}

static void scan(const sc_trace *tr, int64_t lo, int64_t hi, int64_t s0, int64_t s1, seen *w, int64_t hidden) {
    const sc__event *ev = sc__trace_events(tr);
    for (size_t i = 0; i < tr->events.len; i++) {
        const sc__event *e = &ev[i];
        if (e->kind != SC_K_CPU_OP && e->kind != SC_K_USER_ANNOTATION) continue;
        const sc__event_shapes *sh = sc__trace_shapes(tr, e);
        if (!sh || sh->dims == SC__NONE || e->ts < s0 || e->ts > s1) continue;
        tensor_dims td;
        parse_dims(sc__trace_str(tr, sh->dims), &td);
        bool in = e->ts >= lo && e->ts <= hi;
        look(w, sc__trace_str(tr, e->name), &td, sh->types != SC__NONE ? sc__trace_str(tr, sh->types) : NULL, in,
             hidden);
    }
}

static void set_dim(sc_model_dim *d, int64_t v, const char *from, const char *why) {
    d->value = v > 0 ? v : -1;
    d->from = v > 0 ? from : NULL;
    d->why_unknown = v > 0 ? NULL : why;
}

void sc__structure_dims(const sc_traceset *set, const sc__graph *g, const sc__structure *s, sc__model *m) {
    memset(m, 0, sizeof *m);
    set_dim(&m->tp, s->tp, s->tp > 1 ? "the ranks of the collectives inside the forward layers"
                                     : "no collective inside the forward layers",
            s->why_no_tp ? s->why_no_tp : "unknown");
    size_t r = 0;
    int64_t lo = 0, hi = 0;
    bool win = s->nlayers && s->task_layer;
    while (win && r < g->ranks.len && !layer_window(g, s, r, &lo, &hi)) r++;
    const sc__rank *rk = r < g->ranks.len ? &((const sc__rank *)g->ranks.data)[r] : NULL;
    const sc_trace *tr = rk && rk->trace < set->count ? set->traces[rk->trace] : NULL;
    const char *why = !s->nlayers ? "no layers found, so no layer to read shapes from"
                      : !rk ? "no host operator launches the layers' kernels (a replayed CUDA graph?), so none "
                              "gives their shapes"
                      : !tr || tr->format != SC__FMT_KINETO || !tr->events.len
                          ? "the trace's events are not at hand (a Chakra file, or released)"
                          : "no operator in the layers records shapes (profile with record_shapes=True)";
    seen w = {0};
    if (win && tr && tr->format == SC__FMT_KINETO) {
        int64_t s0 = rk->step_start, s1 = rk->step_end > s0 ? rk->step_end : INT64_MAX;
        scan(tr, lo, hi, s0, s1, &w, 0);
        int64_t h = hidden_of(&w);
        if (h) scan(tr, lo, hi, s0, s1, &w, h); /* again, for the GEMMs into the hidden size */
    }
    int64_t hidden = hidden_of(&w);
    set_dim(&m->hidden, hidden, "the normalized dimension of the layers' norms", why);
    int64_t tp = s->tp;
    int64_t ffn = w.gemm_k_for_hidden && tp ? w.gemm_k_for_hidden * tp : 0;
    if (ffn && hidden && ffn <= hidden / (tp ? tp : 1)) ffn = 0;
    set_dim(&m->ffn, ffn, "the widest GEMM into the hidden size in the layers, times TP",
            !hidden ? why : !tp ? "TP is unknown" : "no GEMM in the layers maps a wider input to the hidden size");
    int64_t b = w.emb_b ? w.emb_b : w.sdpa_b, seq = w.emb_s ? w.emb_s : w.sdpa_s ? w.sdpa_s : w.attn_seq;
    const char *bfrom = w.emb_b ? "the embedding's index input [B, S]" : "the fused attention's input [B, H, S, d]";
    set_dim(&m->micro_batch, b, bfrom, !tr ? why : "no embedding or fused attention op with shapes");
    set_dim(&m->seq, seq,
            w.emb_s ? "the embedding's index input [B, S]" : w.sdpa_s ? "the fused attention's input"
                                                                    : "the attention scores [b*h, S, S]",
            !tr ? why : "no embedding or attention op with shapes");
    int64_t d = w.sdpa_d ? w.sdpa_d : w.head_dim, heads = hidden && d && hidden % d == 0 ? hidden / d : 0;
    int64_t per_rank = w.sdpa_h ? w.sdpa_h : b && w.attn_bh && w.attn_bh % b == 0 ? w.attn_bh / b : 0;
    const char *hwhy = !hidden ? why : !d ? "no attention op with shapes gives the head dimension" : NULL;
    if (heads && per_rank && tp && per_rank * tp != heads) {
        heads = 0;
        hwhy = "hidden / head dim disagrees with the per-rank heads times TP (not multi-head attention?)";
    }
    set_dim(&m->heads, heads, "hidden / the attention's head dimension", hwhy ? hwhy : "unknown");
    m->head_dim = d;
    if (w.dtype_low) w.dtype = w.dtype_low;
    m->dtype = w.dtype;
    m->why_no_dtype = w.dtype ? NULL : !tr ? why : "no GEMM in the layers records its input type";
}
