/*
 * kernel_cost.c - the kernel cost model of kernel_cost.h: classes from
 * names, FLOPs and bytes from an operator's shapes, time from the GPU's
 * rates, and the per-class fit to a trace's own kernels.
 *
 * Classes are decided from the kernel's name where it is telling (cuBLAS
 * and CUTLASS GEMMs, flash kernels, layer norms, NCCL), else from the
 * enqueuing operator (aten::mm, aten::softmax, an optimizer step): a GEMM
 * operator's helper kernels (a bias add, a split-K reduction) keep their
 * own class. The fit is a pattern search on the parameters' logarithms,
 * deterministic and a few hundred evaluations per distinct shape.
 */
#include "kernel_cost.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>

#include "../graph/graph.h"

/* Case-insensitive substring test. */
static bool has(const char *s, const char *key) { return sc__contains_ci(s, key); }
/* The same on a name already folded to lower case (the keys are lower
 * case): strstr, much faster than a fold per byte and key on the long
 * template names of kernels. */
static bool has_folded(const char *s, const char *key) { return strstr(s, key) != NULL; }

typedef bool (*matcher)(const char *s, const char *key);

static bool has_any(const char *s, const char *const *keys, matcher match) {
    for (; *keys; keys++)
        if (match(s, *keys)) return true;
    return false;
}

/* nvjet_*: cuBLAS's GEMM kernels on Hopper and later (as in scale.c) */
static const char *const k_gemm[] = {"gemm", "xmma", "cutlass", "cublas", "nvjet", "s16816", "h16816", "s1688",
                                     "h1688", "s884", "h884", "triton_mm", "tem_fused_mm", "matmul", NULL};
static const char *const k_attn[] = {"flash", "fmha", "attention", "attn", "sdpa", NULL};
static const char *const k_norm[] = {"layernorm", "layer_norm", "rmsnorm", "rms_norm", "groupnorm", "group_norm",
                                     "batch_norm", "batchnorm", NULL};
static const char *const k_optim[] = {"multi_tensor_apply", "adam", NULL};
static const char *const k_reduce[] = {"reduce_kernel", "splitkreduce", "reduction", "triton_red_", "triton_per_",
                                       NULL};
static const char *const k_copy[] = {"copy", "memcpy", "gather", "scatter", "index", "cat_", "catarray", NULL};
static const char *const k_elem[] = {"elementwise", "triton", "fill", "pointwise", NULL};

static sc__kclass from_kernel(const char *k, matcher match) {
    if (has_any(k, k_attn, match)) return SC__KC_ATTENTION;
    if (has_any(k, k_gemm, match)) return SC__KC_GEMM;
    if (match(k, "softmax")) return SC__KC_SOFTMAX;
    if (has_any(k, k_norm, match)) return SC__KC_NORM;
    if (has_any(k, k_optim, match)) return SC__KC_OPTIMIZER;
    if (has_any(k, k_reduce, match)) return SC__KC_REDUCTION;
    if (has_any(k, k_copy, match)) return SC__KC_COPY;
    if (has_any(k, k_elem, match)) return SC__KC_ELEMENTWISE;
    return SC__KC_OTHER;
}

static bool op_is(const char *op, const char *const *names) {
    for (; *names; names++)
        if (strcmp(op, *names) == 0) return true;
    return false;
}

static const char *const o_gemm[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
                                     "aten::linear", "aten::addbmm", "aten::_scaled_mm", "aten::mv",
                                     "aten::addmv", NULL};
static const char *const o_reduce[] = {"aten::sum", "aten::mean", "aten::max", "aten::min", "aten::amax",
                                       "aten::amin", "aten::argmax", "aten::argmin", "aten::any", "aten::all",
                                       "aten::norm", "aten::linalg_vector_norm", "aten::prod", "aten::var",
                                       "aten::std", "aten::cumsum", NULL};
static const char *const o_copy[] = {"aten::copy_", "aten::clone", "aten::contiguous", "aten::to",
                                     "aten::_to_copy", "aten::cat", "aten::index_select", "aten::index",
                                     "aten::embedding", "aten::gather", "aten::scatter", "aten::stack",
                                     "aten::repeat", "aten::index_put_", NULL};

static sc__kclass from_op(const char *op) {
    if (!op || !*op) return SC__KC_OTHER;
    if (op_is(op, o_gemm)) return SC__KC_GEMM;
    if (has(op, "scaled_dot_product") || has(op, "flash_attn") || has(op, "flashattn") ||
        has(op, "flash_attention") || has(op, "efficient_attention") || has(op, "cudnn_attention"))
        return SC__KC_ATTENTION;
    if (has(op, "softmax")) return SC__KC_SOFTMAX;
    if (has_any(op, k_norm, has)) return SC__KC_NORM;
    if (has(op, "optimizer") || has(op, "_foreach_") || has(op, "adam") || has(op, "sgd")) return SC__KC_OPTIMIZER;
    if (op_is(op, o_reduce)) return SC__KC_REDUCTION;
    if (op_is(op, o_copy)) return SC__KC_COPY;
    if (sc__starts_with(op, "aten::")) return SC__KC_ELEMENTWISE;
    return SC__KC_OTHER;
}

/* sc__kcost_name_facts's bits above the class's four */
#define NAME_COLLECTIVE 0x10u  /* an NCCL or RCCL kernel */
#define NAME_ATTN_HELPER 0x20u /* fused attention's o . dO or dQ conversion */
_Static_assert(SC__KC_COUNT <= 16, "a class fits the name facts' low four bits");

uint8_t sc__kcost_name_facts(const char *kernel) {
    char folded[2048];
    size_t n = kernel ? strlen(kernel) : 0;
    const char *k = kernel;
    matcher match = has;
    if (kernel && n < sizeof folded) { /* a longer one folds per key */
        for (size_t i = 0; i <= n; i++) folded[i] = (char)tolower((unsigned char)kernel[i]);
        k = folded;
        match = has_folded;
    }
    unsigned f = (unsigned)from_kernel(k, match);
    if (sc__is_nccl_kernel_name(kernel ? kernel : "") || match(k, "rccl")) f |= NAME_COLLECTIVE;
    if (match(k, "dot_do_o") || match(k, "convert_dq")) f |= NAME_ATTN_HELPER;
    return (uint8_t)f;
}

sc__kclass sc__kcost_op_class(const char *op) { return from_op(op); }

sc__kclass sc__kcost_classify_facts(uint8_t name_facts, sc__kclass o, uint8_t task_kind) {
    if (sc__task_is_comm(task_kind) || (name_facts & NAME_COLLECTIVE)) return SC__KC_COLLECTIVE;
    if (task_kind == SC_T_MEMSET) return SC__KC_MEMSET;
    if (task_kind == SC_T_MEMCPY) return SC__KC_COPY;
    sc__kclass k = (sc__kclass)(name_facts & 0x0fu);
    /* fused attention's backward helpers (o . dO, dQ's conversion) only
     * stream a tensor: they are not its FLOPs */
    if ((k == SC__KC_ATTENTION || o == SC__KC_ATTENTION) && (name_facts & NAME_ATTN_HELPER))
        return SC__KC_ELEMENTWISE;
    if (k == SC__KC_GEMM || k == SC__KC_ATTENTION) return k == SC__KC_GEMM && o == SC__KC_ATTENTION ? o : k;
    if (o == SC__KC_GEMM || o == SC__KC_ATTENTION)
        return k == SC__KC_ELEMENTWISE || k == SC__KC_REDUCTION || k == SC__KC_COPY ? k : o;
    if (o != SC__KC_OTHER && (k == SC__KC_OTHER || k == SC__KC_ELEMENTWISE)) return o;
    return k != SC__KC_OTHER ? k : o;
}

sc__kclass sc__kcost_classify(const char *kernel, const char *op, uint8_t task_kind) {
    return sc__kcost_classify_facts(sc__kcost_name_facts(kernel), from_op(op), task_kind);
}

/* ------------------------------------------------------------ shapes */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* The end of the JSON value at p (one past it), or NULL when malformed. */
static const char *value_end(const char *p) {
    int depth = 0;
    bool str = false;
    for (; *p; p++) {
        if (str) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') str = false;
            continue;
        }
        if (*p == '"') str = true;
        else if (*p == '[' || *p == '{') depth++;
        else if (*p == ']' || *p == '}') {
            if (--depth < 0) return p;
            if (depth == 0) return p + 1;
        } else if (depth == 0 && (*p == ',')) return p;
    }
    return depth == 0 ? p : NULL;
}

/* A list of integers [a, b, ...] at p into d (up to max): the count, or -1
 * when p is not such a list (a nested list, a string). *more counts the
 * integers past max. */
static int int_list(const char *p, const char *end, int64_t *d, int max, double *numel) {
    p = skip_ws(p);
    if (*p != '[') return -1;
    p = skip_ws(p + 1);
    int n = 0;
    *numel = 1;
    while (p < end && *p != ']') {
        char *q;
        long long v = strtoll(p, &q, 10);
        if (q == p || v < 0 || v > (1LL << 40)) return -1; /* no tensor has a dimension of 2^40 */
        if (n < max) d[n] = v;
        *numel *= (double)v;
        n++;
        p = skip_ws(q);
        if (*p == ',') p = skip_ws(p + 1);
    }
    return *p == ']' ? n : -1;
}

/* Sum of the elements of every integer list nested in [p, end). */
static double nested_numel(const char *p, const char *end) {
    double total = 0;
    while (p < end) {
        const char *open = memchr(p, '[', (size_t)(end - p));
        if (!open) break;
        const char *q = skip_ws(open + 1);
        if (*q == '[') {
            p = q;
            continue;
        }
        int64_t d[1];
        double numel;
        const char *close = memchr(open, ']', (size_t)(end - open));
        if (!close) break;
        if (int_list(open, close + 1, d, 0, &numel) > 0) total += numel;
        p = close + 1;
    }
    return total;
}

static uint8_t dtype_of(const char *t, size_t n, uint8_t *esize) {
    static const struct {
        const char *name;
        uint8_t dt, size;
    } types[] = {{"c10::Half", SC__DT_FP16, 2},       {"c10::BFloat16", SC__DT_BF16, 2},
                 {"float", SC__DT_FP32, 4},           {"double", SC__DT_FP64, 8},
                 {"c10::Float8_e4m3fn", SC__DT_FP8, 1}, {"c10::Float8_e5m2", SC__DT_FP8, 1},
                 {"long int", SC__DT_INT, 8},         {"int", SC__DT_INT, 4},
                 {"bool", SC__DT_INT, 1},             {"unsigned char", SC__DT_INT, 1},
                 {"signed char", SC__DT_INT, 1},      {"short int", SC__DT_INT, 2}};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strlen(types[i].name) == n && memcmp(types[i].name, t, n) == 0) {
            *esize = types[i].size;
            return types[i].dt;
        }
    *esize = 2;
    return SC__DT_UNKNOWN;
}

/* The i-th string of a JSON list of strings, as [*s, *s + *n). */
static bool nth_string(const char *types, size_t i, const char **s, size_t *n) {
    if (!types) return false;
    const char *p = skip_ws(types);
    if (*p != '[') return false;
    p++;
    for (size_t k = 0;; k++) {
        p = skip_ws(p);
        if (*p != '"') return false;
        const char *q = strchr(p + 1, '"');
        if (!q) return false;
        if (k == i) {
            *s = p + 1;
            *n = (size_t)(q - p - 1);
            return true;
        }
        p = skip_ws(q + 1);
        if (*p != ',') return false;
        p++;
    }
}

static uint8_t form_of(const char *op, uint8_t cls) {
    static const struct {
        const char *op;
        uint8_t form;
    } forms[] = {{"aten::mm", SC__KF_MM},       {"aten::addmm", SC__KF_ADDMM},   {"aten::bmm", SC__KF_BMM},
                 {"aten::baddbmm", SC__KF_BADDBMM}, {"aten::matmul", SC__KF_MATMUL}, {"aten::linear", SC__KF_LINEAR}};
    if (cls == SC__KC_GEMM) {
        for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
            if (strcmp(op, forms[i].op) == 0) return forms[i].form;
        return SC__KF_NONE;
    }
    if (cls == SC__KC_ATTENTION) {
        if (has(op, "scaled_dot_product") || has(op, "efficient_attention") || has(op, "cudnn_attention") ||
            sc__starts_with(op, "aten::_flash_attention"))
            return SC__KF_SDPA;
        if (has(op, "flash")) return SC__KF_FLASH;
        return SC__KF_NONE;
    }
    return cls == SC__KC_MEMSET ? SC__KF_NONE : SC__KF_TENSORS;
}

/* Reads argument slot p..end into tensor slot i of k; lists of tensors go to
 * extra_bytes (a list of one tensor is that tensor: a collective's). */
static void read_arg(sc__kshape *k, size_t i, const char *p, const char *end, const char *types) {
    const char *t = NULL;
    size_t tn = 0;
    uint8_t esize = 2, dt = SC__DT_UNKNOWN;
    if (nth_string(types, i, &t, &tn)) dt = dtype_of(t, tn, &esize);
    p = skip_ws(p);
    const char *inner = skip_ws(p + 1);
    if (*p == '[' && *inner == '[') { /* a list of tensors */
        const char *one_end = value_end(inner);
        if (one_end && *skip_ws(one_end) == ']' && i < SC__KS_TENSORS) {
            p = inner;
            end = one_end;
        } else {
            k->extra_bytes += nested_numel(p, end) * esize;
            return;
        }
    }
    int64_t d[SC__KS_DIMS];
    double numel;
    int n = int_list(p, end, d, SC__KS_DIMS, &numel);
    if (n <= 0) return; /* a scalar, None, or not a list */
    if (i >= SC__KS_TENSORS || n > SC__KS_DIMS) {
        k->extra_bytes += numel * esize;
        return;
    }
    k->ndim[i] = (uint8_t)n;
    k->esize[i] = esize;
    memcpy(k->dim[i], d, (size_t)n * sizeof *d);
    if (i == 0 || k->dtype == SC__DT_UNKNOWN) k->dtype = dt;
}

bool sc__kshape_parse(const char *op, const char *dims, const char *types, sc__kshape *k) {
    uint8_t cls = k->cls;
    memset(k, 0, sizeof *k);
    k->cls = cls;
    if (!op || !dims) return false;
    k->form = form_of(op, cls);
    k->backward = has(op, "backward") || has(op, "bwd");
    const char *p = skip_ws(dims);
    if (*p != '[' || k->form == SC__KF_NONE) {
        k->form = SC__KF_NONE;
        return false;
    }
    p = skip_ws(p + 1);
    for (size_t i = 0; *p && *p != ']'; i++) {
        const char *end = value_end(p);
        if (!end) break;
        read_arg(k, i, p, end, types);
        if (i < 255) k->ntensors = (uint8_t)(i + 1);
        p = skip_ws(end);
        if (*p == ',') p = skip_ws(p + 1);
    }
    double f, b;
    if (!sc__kshape_work(k, &f, &b)) {
        k->form = SC__KF_NONE;
        return false;
    }
    return true;
}

static double numel(const sc__kshape *k, size_t i) {
    if (i >= SC__KS_TENSORS || !k->ndim[i]) return 0;
    double n = 1;
    for (size_t d = 0; d < k->ndim[i]; d++) n *= (double)k->dim[i][d];
    return n;
}

static double tbytes(const sc__kshape *k, size_t i) { return numel(k, i) * (i < SC__KS_TENSORS ? k->esize[i] : 0); }

/* GEMM dimensions (batch, M, N, K) of the GEMM forms; false when the
 * tensors do not fit the form. */
static bool gemm_dims(const sc__kshape *k, double *b, double *m, double *n, double *kk) {
    size_t a = k->form == SC__KF_ADDMM || k->form == SC__KF_BADDBMM ? 1 : 0;
    const int64_t *A = k->dim[a], *B = k->dim[a + 1];
    uint8_t na = k->ndim[a], nb = k->ndim[a + 1];
    *b = 1;
    switch (k->form) {
    case SC__KF_MM:
    case SC__KF_ADDMM:
        if (na != 2 || nb != 2) return false;
        *m = (double)A[0], *kk = (double)A[1], *n = (double)B[1];
        return true;
    case SC__KF_BMM:
    case SC__KF_BADDBMM:
        if (na != 3 || nb != 3) return false;
        *b = (double)A[0], *m = (double)A[1], *kk = (double)A[2], *n = (double)B[2];
        return true;
    case SC__KF_MATMUL:
    case SC__KF_LINEAR:
        if (na < 1 || nb < 1) return false;
        *kk = (double)A[na - 1];
        *m = 1;
        for (size_t i = 0; i + 1 < na; i++) *m *= (double)A[i];
        if (k->form == SC__KF_LINEAR) {
            *n = nb == 2 ? (double)B[0] : 1;
            return nb <= 2;
        }
        if (nb == 1) *n = 1;
        else if (nb == 2) *n = (double)B[1];
        else { /* batched: the batch is B's leading dims, A's rows its last but one */
            *n = (double)B[nb - 1];
            *m = na >= 2 ? (double)A[na - 2] : 1;
            for (size_t i = 0; i + 2 < nb; i++) *b *= (double)B[i];
        }
        return true;
    default: return false;
    }
}

/* Attention: batch x heads, query and key lengths, head dim. */
static bool attn_dims(const sc__kshape *k, double *bh, double *sq, double *sk, double *d) {
    if (k->ndim[0] != 4 || k->ndim[1] != 4) return false;
    const int64_t *q = k->dim[0], *kv = k->dim[1];
    bool flash = k->form == SC__KF_FLASH; /* [b, s, a, d] */
    *bh = (double)q[0] * (double)(flash ? q[2] : q[1]);
    *sq = (double)(flash ? q[1] : q[2]);
    *sk = (double)(flash ? kv[1] : kv[2]);
    *d = (double)q[3];
    return true;
}

bool sc__kshape_work(const sc__kshape *k, double *flops, double *bytes) {
    *flops = 0;
    *bytes = k->extra_bytes;
    double b, m, n, kk, bh, sq, sk, d;
    switch (k->form) {
    case SC__KF_MM: case SC__KF_ADDMM: case SC__KF_BMM: case SC__KF_BADDBMM: case SC__KF_MATMUL:
    case SC__KF_LINEAR: {
        if (!gemm_dims(k, &b, &m, &n, &kk)) return false;
        size_t a = k->form == SC__KF_ADDMM || k->form == SC__KF_BADDBMM ? 1 : 0;
        double es = k->esize[a] ? k->esize[a] : 2;
        *flops = 2 * b * m * n * kk;
        /* A and B read, the output written; addmm and baddbmm read C too */
        *bytes += es * b * (m * kk + kk * n + m * n) + (a ? tbytes(k, 0) : 0);
        return *flops > 0;
    }
    case SC__KF_SDPA:
    case SC__KF_FLASH:
        if (!attn_dims(k, &bh, &sq, &sk, &d)) return false;
        *flops = 4 * bh * sq * sk * d * (k->backward ? 2.5 : 1);
        *bytes += (tbytes(k, 0) * 2 + tbytes(k, 1) + tbytes(k, 2)) * (k->backward ? 2 : 1);
        return *flops > 0;
    case SC__KF_TENSORS: {
        double sum = 0, max = 0;
        for (size_t i = 0; i < SC__KS_TENSORS; i++) {
            double t = tbytes(k, i);
            sum += t;
            if (t > max) max = t;
        }
        /* the inputs read, an output the size of the largest written (a
         * reduction's is small) */
        *bytes += sum + (k->cls == SC__KC_REDUCTION ? 0 : max);
        return *bytes > 0;
    }
    case SC__KF_BYTES: return *bytes > 0;
    default: return false;
    }
}

static uint8_t esize_of(uint8_t dtype) {
    return dtype == SC__DT_FP32 ? 4 : dtype == SC__DT_FP64 ? 8 : dtype == SC__DT_FP8 ? 1 : 2;
}

sc__kshape sc__kshape_gemm(int64_t b, int64_t m, int64_t n, int64_t k, uint8_t dtype) {
    sc__kshape s;
    memset(&s, 0, sizeof s);
    s.cls = SC__KC_GEMM;
    s.form = SC__KF_BMM;
    s.dtype = dtype;
    s.ntensors = 2;
    s.ndim[0] = s.ndim[1] = 3;
    s.esize[0] = s.esize[1] = esize_of(dtype);
    s.dim[0][0] = s.dim[1][0] = b;
    s.dim[0][1] = m, s.dim[0][2] = k;
    s.dim[1][1] = k, s.dim[1][2] = n;
    return s;
}

sc__kshape sc__kshape_attention(int64_t b, int64_t heads, int64_t sq, int64_t sk, int64_t d, bool backward,
                                uint8_t dtype) {
    sc__kshape s;
    memset(&s, 0, sizeof s);
    s.cls = SC__KC_ATTENTION;
    s.form = SC__KF_SDPA;
    s.dtype = dtype;
    s.backward = backward;
    s.ntensors = 3;
    int64_t len[3] = {sq, sk, sk};
    for (size_t i = 0; i < 3; i++) {
        s.ndim[i] = 4;
        s.esize[i] = esize_of(dtype);
        s.dim[i][0] = b, s.dim[i][1] = heads, s.dim[i][2] = len[i], s.dim[i][3] = d;
    }
    return s;
}

sc__kshape sc__kshape_bytes(uint8_t cls, double bytes) {
    sc__kshape s;
    memset(&s, 0, sizeof s);
    s.cls = cls;
    s.form = SC__KF_BYTES;
    s.extra_bytes = bytes;
    return s;
}

bool sc__kshape_gemm_dims(const sc__kshape *k, int64_t *b, int64_t *m, int64_t *n, int64_t *kk) {
    double x[4];
    if (!gemm_dims(k, &x[0], &x[1], &x[2], &x[3])) return false;
    for (int i = 0; i < 4; i++)
        if (!(x[i] >= 1 && x[i] < 1e15)) return false;
    *b = (int64_t)x[0], *m = (int64_t)x[1], *n = (int64_t)x[2], *kk = (int64_t)x[3];
    return true;
}

int64_t sc__kshape_min_dim(const sc__kshape *k) {
    double b, m, n, kk;
    if (gemm_dims(k, &b, &m, &n, &kk)) return (int64_t)fmin(m, fmin(n, kk));
    /* fused attention's tiles span the head dim whole: only short
     * sequences leave them part-empty */
    if ((k->form == SC__KF_SDPA || k->form == SC__KF_FLASH) && attn_dims(k, &b, &m, &n, &kk))
        return (int64_t)fmin(m, n);
    return 0;
}

/* ------------------------------------------------------------ the model */

void sc__kcost_defaults(const sc__hw_profile *p, sc__kcost_model *m) {
    memset(m, 0, sizeof *m);
    snprintf(m->gpu, sizeof m->gpu, "%s", p->name);
    sc__gpu_ceilings g;
    sc__gpu_ceilings_of(p, &g);
    memcpy(m->peak_tflops, g.peak_tflops, sizeof m->peak_tflops);
    m->hbm_GBps = g.hbm_GBps;
    m->gemm_ceiling = g.gemm_share;
    m->hbm_ceiling = g.hbm_share;
    m->ceiling_source = g.source;
    for (int c = 0; c < SC__KC_COUNT; c++) {
        bool compute = c == SC__KC_GEMM || c == SC__KC_ATTENTION;
        /* a GEMM tile is 128 wide: a thin operand of 128 runs at half rate */
        m->cls[c] = (sc__kclass_params){.eff = compute ? m->gemm_ceiling : 0,
                                        .edge = compute ? 128 : 0,
                                        .mem_eff = m->hbm_ceiling,
                                        .floor_ns = 2000};
    }
}

static double model_ns(const sc__kcost_model *m, const sc__kclass_params *p, uint8_t cls, uint8_t dtype,
                       double flops, double bytes, double dmin) {
    double mem = m->hbm_GBps > 0 && p->mem_eff > 0 ? bytes / (m->hbm_GBps * p->mem_eff) : 0; /* ns */
    if (cls != SC__KC_GEMM && cls != SC__KC_ATTENTION) return p->floor_ns + mem;
    double peak = dtype < SC__DT_COUNT ? m->peak_tflops[dtype] : 0;
    if (peak <= 0) peak = m->peak_tflops[SC__DT_UNKNOWN];
    double thin = dmin > 0 ? 1 + p->edge / dmin : 1;
    double comp = peak > 0 && p->eff > 0 ? flops / (peak * 1e3 * p->eff) * thin : 0; /* ns */
    return p->floor_ns + (comp > mem ? comp : mem);
}

double sc__kcost_time_ns(const sc__kcost_model *m, const sc__kshape *k) {
    double flops, bytes;
    if (k->cls >= SC__KC_COLLECTIVE || !sc__kshape_work(k, &flops, &bytes)) return -1;
    return model_ns(m, &m->cls[k->cls], k->cls, k->dtype, flops, bytes, (double)sc__kshape_min_dim(k));
}

/* ------------------------------------------------------------ the fit */

typedef struct sample {
    double flops, bytes, dmin, ns, weight;
    uint8_t dtype;
} sample;

static int cmp_sample(const void *a, const void *b) {
    const sample *x = a, *y = b;
    if (x->flops != y->flops) return x->flops < y->flops ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    if (x->dmin != y->dmin) return x->dmin < y->dmin ? -1 : 1;
    if (x->dtype != y->dtype) return x->dtype < y->dtype ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* Samples of one shape become one: their median time, weighted by their
 * number. Returns the distinct count. */
static size_t merge_shapes(sample *s, size_t n) {
    qsort(s, n, sizeof *s, cmp_sample);
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && s[j].flops == s[i].flops && s[j].bytes == s[i].bytes && s[j].dmin == s[i].dmin &&
               s[j].dtype == s[i].dtype)
            j++;
        size_t c = j - i;
        sample med = s[i + c / 2];
        if (c % 2 == 0) med.ns = (s[i + c / 2 - 1].ns + s[i + c / 2].ns) / 2;
        med.weight = (double)c;
        s[out++] = med;
        i = j;
    }
    return out;
}

enum { P_EFF, P_EDGE, P_MEM, P_FLOOR, P_COUNT };

static void params_of(const double *x, sc__kclass_params *p) {
    p->eff = exp(x[P_EFF]);
    p->edge = exp(x[P_EDGE]);
    p->mem_eff = exp(x[P_MEM]);
    p->floor_ns = exp(x[P_FLOOR]);
}

static double loss(const sc__kcost_model *m, uint8_t cls, const sample *s, size_t n, const double *x) {
    sc__kclass_params p;
    params_of(x, &p);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double t = model_ns(m, &p, cls, s[i].dtype, s[i].flops, s[i].bytes, s[i].dmin);
        sum += s[i].weight * fabs(log(t / s[i].ns));
    }
    return sum;
}

/* Coordinate pattern search over log-parameters within [lo, hi]. */
static void search(const sc__kcost_model *m, uint8_t cls, const sample *s, size_t n, double *x, const double *lo,
                   const double *hi, const bool *free_) {
    double step[P_COUNT] = {0.5, 1.0, 0.5, 1.0};
    double best = loss(m, cls, s, n, x);
    for (int round = 0; round < 400; round++) {
        bool moved = false;
        for (int i = 0; i < P_COUNT; i++) {
            if (!free_[i]) continue;
            for (int dir = -1; dir <= 1; dir += 2) {
                double keep = x[i];
                x[i] = fmin(hi[i], fmax(lo[i], keep + dir * step[i]));
                double l = loss(m, cls, s, n, x);
                if (l < best - 1e-15) {
                    best = l;
                    moved = true;
                    break;
                }
                x[i] = keep;
            }
        }
        if (!moved) {
            bool small = true;
            for (int i = 0; i < P_COUNT; i++) {
                step[i] *= 0.5;
                if (step[i] > 1e-5) small = false;
            }
            if (small) break;
        }
    }
}

uint64_t sc__kcost_fit(sc__kcost_model *m, uint8_t cls, const sc__kshape *k, const int64_t *ns, size_t n,
                       bool *ok) {
    *ok = true;
    if (cls >= SC__KC_COLLECTIVE || !n) return 0;
    sample *s = sc__alloc_array(n, sizeof *s);
    if (!s) {
        *ok = false;
        return 0;
    }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        double f, b;
        if (k[i].cls != cls || ns[i] <= 0 || !sc__kshape_work(&k[i], &f, &b)) continue;
        s[used++] = (sample){f, b, (double)sc__kshape_min_dim(&k[i]), (double)ns[i], 1, k[i].dtype};
    }
    if (!used) {
        free(s);
        return 0;
    }
    size_t distinct = merge_shapes(s, used);
    bool compute = cls == SC__KC_GEMM || cls == SC__KC_ATTENTION;
    sc__kclass_params *p = &m->cls[cls];
    double x[P_COUNT] = {log(p->eff > 0 ? p->eff : 0.5), log(p->edge > 0 ? p->edge : 128), log(p->mem_eff),
                         log(p->floor_ns > 0 ? p->floor_ns : 2000)};
    double lo[P_COUNT] = {log(0.02), log(1), log(0.02), log(100)};
    double hi[P_COUNT] = {log(m->gemm_ceiling), log(4096), log(1.0), log(20000)};
    /* a single shape fixes one rate, not how it varies: keep the rest */
    bool free_[P_COUNT] = {compute, compute && distinct > 2, true, distinct > 1};
    for (int i = 0; i < P_COUNT; i++) x[i] = fmin(hi[i], fmax(lo[i], x[i]));
    search(m, cls, s, distinct, x, lo, hi, free_);
    params_of(x, p);
    if (!compute) p->eff = p->edge = 0;
    p->fitted = used;
    free(s);
    return used;
}
