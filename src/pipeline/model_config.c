/*
 * model_config.c - the configuration of `stepcast model`: one setter by
 * field name (the CLI's flags, a JSON file's members and the presets all go
 * through it, so the three agree byte for byte), the presets of the public
 * configurations in ../shared/data/published/, and the sweep.
 *
 * Presets hold the model (and, where the source gives one, the job it was
 * measured on); any flag given after overrides them.
 */
#include "model.h"

#include "../readers/json.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Presets: "key=value" lists (the same keys as the flags). */
static const struct preset {
    const char *name, *fields;
} presets[] = {
    {"gpt3-175b", "layers=96 hidden=12288 heads=96 vocab=51200 seq=2048"},
    {"megatron-22b", "layers=48 hidden=6144 heads=64 vocab=51200 seq=2048"},
    {"megatron-530b", "layers=105 hidden=20480 heads=128 vocab=51200 seq=2048"},
    {"megatron-1t", "layers=128 hidden=25600 heads=160 vocab=51200 seq=2048"},
    {"gpt3-5b", "layers=24 hidden=4096 heads=32 vocab=51200 seq=2048"},
    {"gpt3-20b", "layers=44 hidden=6144 heads=48 vocab=51200 seq=2048"},
    {"llama2-7b", "layers=32 hidden=4096 ffn=11008 heads=32 vocab=32000 seq=4096 gated=true rope=true"},
    {"llama2-13b", "layers=40 hidden=5120 ffn=13824 heads=40 vocab=32000 seq=4096 gated=true rope=true"},
    {"llama2-70b", "layers=80 hidden=8192 ffn=28672 heads=64 kv-heads=8 vocab=32000 seq=4096 gated=true rope=true"},
    {"llama3-8b", "layers=32 hidden=4096 ffn=14336 heads=32 kv-heads=8 vocab=128256 seq=8192 gated=true rope=true"},
    {"llama3-70b", "layers=80 hidden=8192 ffn=28672 heads=64 kv-heads=8 vocab=128256 seq=8192 gated=true rope=true"},
    {"llama3-405b", "layers=126 hidden=16384 ffn=53248 heads=128 kv-heads=8 vocab=128256 seq=8192 gated=true rope=true"},
    /* NeMo's Nemotron configs (squared-ReLU MLP, not gated; the 256k
     * SentencePiece vocabulary); 340B is Nemotron-4 340B. */
    {"nemotron-8b", "layers=32 hidden=4096 ffn=16384 heads=32 vocab=256000 seq=4096 rope=true"},
    {"nemotron-22b", "layers=40 hidden=6144 ffn=24576 heads=48 vocab=256000 seq=4096 rope=true"},
    {"nemotron-340b", "layers=96 hidden=18432 ffn=73728 heads=96 kv-heads=8 vocab=256000 seq=4096 rope=true"},
    /* Qwen3 mixture-of-experts (the Hugging Face config.json of Qwen/Qwen3-
     * 30B-A3B and -235B-A22B: every layer MoE, no shared expert, head_dim
     * 128, untied output head; ffn is the dense size no layer uses). seq
     * is the one the Megatron-Bridge table measured. */
    {"qwen3-30b-a3b", "layers=48 hidden=2048 ffn=6144 heads=32 kv-heads=4 head-dim=128 vocab=151936 seq=4096 "
                      "gated=true rope=true experts=128 topk=8 moe-ffn=768"},
    {"qwen3-235b-a22b", "layers=94 hidden=4096 ffn=12288 heads=64 kv-heads=4 head-dim=128 vocab=151936 seq=4096 "
                        "gated=true rope=true experts=128 topk=8 moe-ffn=1536"},
    /* GPT-OSS (the Hugging Face config.json of openai/gpt-oss-120b and -20b,
     * as Megatron-Bridge's GPTOSSProvider reads it): hidden 2880, 64 query
     * heads of 64 and 8 KV heads, experts of 2880 (gated: the clamped
     * quick-GELU GLU, timed as SwiGLU), top-4, no shared expert, vocab
     * 201088, untied; sliding window 128 on the odd (1-based) layers
     * (window_attn_skip_freq 2: layer_types alternates sliding and full).
     * Attention sinks (softmax_type "learnable": one logit a head added to
     * each softmax's denominator) cost heads x tokens operations inside
     * the attention kernel and 64 parameters a layer, not counted. seq is
     * the one the Megatron-Bridge table measured. */
    {"gpt-oss-120b", "layers=36 hidden=2880 ffn=2880 heads=64 kv-heads=8 head-dim=64 vocab=201088 seq=4096 "
                     "gated=true rope=true experts=128 topk=4 moe-ffn=2880 window=128 window-skip=2"},
    {"gpt-oss-20b", "layers=24 hidden=2880 ffn=2880 heads=64 kv-heads=8 head-dim=64 vocab=201088 seq=4096 "
                    "gated=true rope=true experts=32 topk=4 moe-ffn=2880 window=128 window-skip=2"},
    /* DeepSeek-V3 (the Hugging Face config.json of deepseek-ai/DeepSeek-V3:
     * 61 layers, hidden 7168, 128 heads, the first 3 dense with ffn 18432
     * (first_k_dense_replace), the others 256 routed experts of 2048, top 8,
     * one shared expert of 2048, latent attention q_lora_rank 1536,
     * kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64,
     * v_head_dim 128, vocab 129280, untied, num_nextn_predict_layers 1;
     * routing limited to topk_group 4 of n_group 8 expert groups).
     * seq is the one the Megatron-Bridge table measured. */
    {"deepseek-v3", "layers=61 hidden=7168 ffn=18432 heads=128 vocab=129280 seq=4096 gated=true rope=true "
                    "experts=256 topk=8 moe-ffn=2048 shared-ffn=2048 dense-layers=3 multi-latent-attention=true "
                    "q-lora-rank=1536 kv-lora-rank=512 qk-head-dim=128 qk-pos-emb-head-dim=64 v-head-dim=128 mtp-layers=1 "
                    "moe-router-num-groups=8 moe-router-group-topk=4"},
    /* Nemotron 3 Nano 30B-A3B, a Megatron-core hybrid (Megatron-Bridge's
     * Nemotron3NanoProvider and Megatron-LM's examples/post_training/
     * modelopt/conf/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.sh): 52
     * layers (23 Mamba-2, 23 MoE, 6 attention), hidden 2688, squared-ReLU
     * MLPs (not gated), no position embedding, untied output head;
     * attention 32 heads of 128 with 2 KV groups; Mamba-2 64 heads of 64,
     * state 128, 8 groups; 128 experts top-6 of 1856 beside a shared
     * expert of 3712. The vocabulary is the tokenizer's 131072 (the Hugging
     * Face config.json's vocab_size). seq: the recipe's 8192. */
    {"nemotron-3-nano", "hybrid-pattern=MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME hidden=2688 ffn=1856 "
                        "heads=32 kv-heads=2 head-dim=128 vocab=131072 seq=8192 experts=128 topk=6 moe-ffn=1856 "
                        "shared-ffn=3712 mamba-heads=64 mamba-head-dim=64 mamba-state=128 mamba-groups=8"},
};
#define NPRESETS (sizeof presets / sizeof *presets)

size_t sc_model_preset_count(void) { return NPRESETS; }
const char *sc_model_preset_name(size_t i) { return i < NPRESETS ? presets[i].name : NULL; }

sc_status sc_model_config_new(sc_model_config **out, sc_error *err) {
    sc__error_clear(err);
    *out = calloc(1, sizeof **out);
    if (!*out) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    sc__tf_defaults(&(*out)->c);
    return SC_OK;
}

sc_model_config *sc_model_config_copy(const sc_model_config *c) {
    sc_model_config *n = malloc(sizeof *n);
    if (!n) return NULL;
    *n = *c;
    if (!sc__model_calib_copy(&n->calib, &c->calib)) {
        free(n);
        return NULL;
    }
    return n;
}

void sc_model_config_free(sc_model_config *c) {
    if (!c) return;
    sc__model_calib_free(&c->calib);
    free(c);
}

sc_status sc_model_config_calibrate(sc_model_config *c, const char *const *paths, size_t n, sc_error *err) {
    sc__error_clear(err);
    if (!n) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "--calibrate: no trace given");
    sc_status st = sc__model_calibrate(paths, n, &c->calib, err);
    c->calibrated = st == SC_OK;
    return st;
}

typedef enum { K_U32, K_BOOL, K_NUM, K_DTYPE, K_RECOMPUTE, K_ATTN, K_GPU, K_NAME, K_RECORD, K_RCMODS, K_PATTERN, K_CE, K_DISP } kkind;
#define U(f) offsetof(sc__tf_config, f)
static const struct key {
    const char *name;
    kkind kind;
    size_t off;
    uint32_t min;
} keys[] = {
    {"layers", K_U32, U(layers), 1}, {"hidden", K_U32, U(hidden), 1}, {"ffn", K_U32, U(ffn), 1},
    {"heads", K_U32, U(heads), 1}, {"kv-heads", K_U32, U(kv_heads), 1}, {"vocab", K_U32, U(vocab), 1},
    {"seq", K_U32, U(seq), 1}, {"dtype", K_DTYPE, U(dtype), 0}, {"experts", K_U32, U(experts), 0},
    {"topk", K_U32, U(topk), 1}, {"tp", K_U32, U(tp), 1}, {"sp", K_BOOL, U(sp), 0}, {"pp", K_U32, U(pp), 1},
    {"vp", K_U32, U(vp), 1}, {"dp", K_U32, U(dp), 1}, {"cp", K_U32, U(cp), 1}, {"ep", K_U32, U(ep), 1},
    {"fsdp", K_BOOL, U(fsdp), 0}, {"mbs", K_U32, U(mbs), 1}, {"gbs", K_U32, U(gbs), 1},
    {"recompute", K_RECOMPUTE, U(recompute), 0}, {"gpu", K_GPU, U(gpu), 0}, {"nodes", K_U32, U(nodes), 1},
    {"gpus-per-node", K_U32, U(gpus_per_node), 1}, {"net-gbps", K_NUM, U(net_gbps), 0},
    {"gated", K_BOOL, U(gated), 0}, {"tied", K_BOOL, U(tied), 0}, {"rope", K_BOOL, U(rope), 0}, {"attention", K_ATTN, U(attention), 0},
    {"distributed-optimizer", K_BOOL, U(dist_opt), 0}, {"overlap-grad-reduce", K_BOOL, U(overlap_grad), 0},
    {"overlap-param-gather", K_BOOL, U(overlap_param), 0}, {"tp-comm-overlap", K_BOOL, U(tp_overlap), 0},
    {"host-us", K_NUM, U(host_us), 0}, {"name", K_NAME, U(name), 0},
    {"pp-first-layers", K_U32, U(pp_first), 1}, {"pp-last-layers", K_U32, U(pp_last), 1},
    {"pp-embedding", K_BOOL, U(pp_embedding), 0},
    {"head-dim", K_U32, U(head_dim), 1}, {"moe-ffn", K_U32, U(moe_ffn), 1}, {"shared-ffn", K_U32, U(shared_ffn), 0},
    {"etp", K_U32, U(etp), 1}, {"dense-layers", K_U32, U(dense_layers), 0}, {"window", K_U32, U(window), 0},
    {"window-skip", K_U32, U(window_skip), 0},
    {"lora-rank", K_U32, U(lora_rank), 0},
    {"multi-latent-attention", K_BOOL, U(mla), 0}, {"q-lora-rank", K_U32, U(q_lora), 0},
    {"kv-lora-rank", K_U32, U(kv_lora), 1}, {"qk-head-dim", K_U32, U(qk_dim), 1},
    {"qk-pos-emb-head-dim", K_U32, U(qk_rope_dim), 1}, {"v-head-dim", K_U32, U(v_dim), 1},
    {"mtp-layers", K_U32, U(mtp_layers), 0}, {"recompute-modules", K_RCMODS, U(recompute_mods), 0},
    {"hybrid-pattern", K_PATTERN, U(hybrid), 0}, {"mamba-heads", K_U32, U(mamba_heads), 1},
    {"mamba-head-dim", K_U32, U(mamba_head_dim), 1}, {"mamba-state", K_U32, U(mamba_state), 1},
    {"mamba-groups", K_U32, U(mamba_groups), 1}, {"mamba-chunk", K_U32, U(mamba_chunk), 1},
    {"grad-reduce-in-fp32", K_BOOL, U(grad_fp32), 0}, {"cross-entropy-fusion", K_CE, U(ce_fusion), 0},
    {"moe-dispatcher", K_DISP, U(dispatcher), 0}, {"moe-router-num-groups", K_U32, U(router_groups), 0},
    {"moe-router-group-topk", K_U32, U(router_group_topk), 0},
    /* The names of the config.json recorded beside a trace
     * (scripts/record_gpu_traces.py): aliases, and what the recording
     * noted about itself (read, not used: the model derives them). */
    {"micro-batch", K_U32, U(mbs), 1}, {"model", K_NAME, U(name), 0}, {"params", K_RECORD, 0, 0},
    {"optimizer", K_RECORD, 0, 0}, {"ddp-world", K_RECORD, 0, 0}, {"torch", K_RECORD, 0, 0},
    {"step-ms-unprofiled-mean-of-20", K_RECORD, 0, 0}, {"profiler", K_RECORD, 0, 0},
};
#define NKEYS (sizeof keys / sizeof *keys)

/* "kv_heads" and "kv-heads" name the same field. */
static const struct key *find_key(const char *name, size_t n) {
    for (size_t i = 0; i < NKEYS; i++) {
        const char *k = keys[i].name;
        if (strlen(k) != n) continue;
        size_t j = 0;
        while (j < n && (k[j] == name[j] || (k[j] == '-' && name[j] == '_'))) j++;
        if (j == n) return &keys[i];
    }
    return NULL;
}

static int choice(const char *v, const char *const *names) {
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) return i;
    return -1;
}

/* Megatron's --recompute-modules as a comma list of the modules modelled
 * (transformer.h): core_attn, mla_up_proj, mlp. */
static bool rc_modules(const char *v, uint8_t *out) {
    static const char *const names[] = {"core_attn", "mla_up_proj", "mlp"};
    uint8_t bits = 0;
    while (*v) {
        size_t n = strcspn(v, ",");
        size_t i = 0;
        while (i < 3 && (strlen(names[i]) != n || strncmp(v, names[i], n) != 0)) i++;
        if (i == 3) return false;
        bits |= (uint8_t)(1u << i);
        v += n + (v[n] == ',');
    }
    if (!bits) return false;
    *out = bits;
    return true;
}

/* A hybrid pattern: Megatron's symbols only (mamba_hybrid_layer_allocation.py),
 * one a layer, at most 255. */
static sc_status set_pattern(sc__tf_config *c, const char *v, sc_error *err) {
    size_t n = strlen(v);
    if (!n || n >= sizeof c->hybrid)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model: hybrid-pattern of %zu layers: give 1 to %zu", n,
                        sizeof c->hybrid - 1);
    for (size_t i = 0; i < n; i++)
        if (sc__tf_hybrid_kind(v[i], false) == 0xff)
            return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                            "model: hybrid-pattern: '%c' (layer %zu) is not one of Megatron's symbols M (Mamba-2), * (attention), - (MLP), E (MoE)",
                            isprint((unsigned char)v[i]) ? v[i] : '?', i + 1);
    memcpy(c->hybrid, v, n + 1);
    return SC_OK;
}

static sc_status set_one(sc__tf_config *c, const struct key *k, const char *v, sc_error *err) {
    char *p = (char *)c + k->off;
    static const char *const bools[] = {"false", "true", "0", "1", "no", "yes", NULL};
    static const char *const dtypes[] = {"bf16", "fp16", "fp8", NULL};
    static const uint8_t dtype_ids[] = {SC__DT_BF16, SC__DT_FP16, SC__DT_FP8};
    static const char *const rcs[] = {"none", "selective", "full", NULL};
    static const char *const attns[] = {"flash", "unfused", NULL};
    static const char *const ces[] = {"none", "native", "te", NULL}; /* sc__ce_impl */
    static const char *const disps[] = {"alltoall", "deepep", "hybridep", NULL}; /* sc__moe_dispatcher */
    int i;
    switch (k->kind) {
    case K_U32: {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (!isdigit((unsigned char)*v) || *end || errno || x < k->min || x > (1ull << 31))
            break;
        *(uint32_t *)p = (uint32_t)x;
        return SC_OK;
    }
    case K_NUM: {
        char *end;
        double x = strtod(v, &end);
        if (!*v || *end || !(x >= 0 && x < 1e9)) break;
        *(double *)p = x;
        return SC_OK;
    }
    case K_BOOL:
        if ((i = choice(v, bools)) < 0) break;
        *(uint8_t *)p = (uint8_t)(i & 1);
        return SC_OK;
    case K_DTYPE: {
        /* "bf16 autocast": the GEMMs' type is the first word */
        char w[16];
        snprintf(w, sizeof w, "%.*s", (int)strcspn(v, " "), v);
        if ((i = choice(strcmp(v + strlen(w), " autocast") == 0 ? w : v, dtypes)) < 0) break;
        *(uint8_t *)p = dtype_ids[i];
        return SC_OK;
    }
    case K_RECORD:
        return SC_OK;
    case K_PATTERN:
        return set_pattern(c, v, err);
    case K_RECOMPUTE:
        if ((i = choice(v, rcs)) < 0) break;
        *(uint8_t *)p = (uint8_t)i;
        return SC_OK;
    case K_ATTN:
        if ((i = choice(v, attns)) < 0) break;
        *(uint8_t *)p = (uint8_t)i;
        return SC_OK;
    case K_CE:
        if ((i = choice(v, ces)) < 0) break;
        *(uint8_t *)p = (uint8_t)i;
        return SC_OK;
    case K_DISP:
        if ((i = choice(v, disps)) < 0) break;
        *(uint8_t *)p = (uint8_t)i;
        return SC_OK;
    case K_RCMODS:
        if (!rc_modules(v, (uint8_t *)p)) break;
        return SC_OK;
    case K_GPU:
    case K_NAME:
        if (!*v || strlen(v) >= sizeof c->gpu) break;
        snprintf(p, sizeof c->gpu, "%s", v);
        return SC_OK;
    }
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model: bad value '%.60s' for %s", v, k->name);
}

sc_status sc_model_config_set(sc_model_config *c, const char *key, const char *value, sc_error *err) {
    sc__error_clear(err);
    const struct key *k = find_key(key, strlen(key));
    if (!k) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model: unknown field '%.60s'", key);
    return set_one(&c->c, k, value, err);
}

sc_status sc_model_config_preset(sc_model_config *c, const char *name, sc_error *err) {
    sc__error_clear(err);
    for (size_t i = 0; i < NPRESETS; i++) {
        if (strcmp(presets[i].name, name) != 0) continue;
        const char *f = presets[i].fields;
        while (*f) {
            char kv[320], *eq; /* a hybrid pattern: up to 255 */
            size_t n = strcspn(f, " ");
            snprintf(kv, sizeof kv, "%.*s", (int)n, f);
            f += n + (f[n] == ' ');
            if (!(eq = strchr(kv, '='))) continue;
            *eq = '\0';
            sc_status st = sc_model_config_set(c, kv, eq + 1, err);
            if (st != SC_OK) return st;
        }
        snprintf(c->c.name, sizeof c->c.name, "%s", name);
        return SC_OK;
    }
    char known[400] = "";
    for (size_t i = 0, n = 0; i < NPRESETS && n < sizeof known; i++)
        n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", presets[i].name);
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model: unknown preset '%.60s' (presets: %s)", name, known);
}

/* ------------------------------------------------------------ JSON files */

static int load_member(void *ctx, sc__jp *jp, sc__jstr key) {
    sc_model_config *c = ctx;
    const char *at = key.s;
    const struct key *k = find_key(key.s, key.n);
    if (!k) return sc__jp_error_at(jp, at, SC_E_FORMAT, "unknown field '%.*s'", (int)(key.n < 64 ? key.n : 64), key.s);
    char val[320]; /* a hybrid pattern: up to 255 */
    sc__jstr v;
    SC__JTRY(sc__jp_peek(jp) == '"' ? sc__jp_string(jp, &v) : sc__jp_raw(jp, &v));
    if (v.n >= sizeof val) /* cut short, "000...12" would read as another number */
        return sc__jp_error_at(jp, at, SC_E_FORMAT, "value of field '%s' is too long (%zu characters)", k->name, v.n);
    memcpy(val, v.s, v.n);
    val[v.n] = '\0';
    sc_error e;
    if (set_one(&c->c, k, val, &e) != SC_OK)
        return sc__jp_error_at(jp, at, SC_E_FORMAT, "bad value '%s' for field '%s'", val, k->name);
    return SC__J_OK;
}

sc_status sc_model_config_load(sc_model_config *c, const char *path, sc_error *err) {
    sc__error_clear(err);
    /* A file that fails leaves c as it was; members are set again on a
     * retry after a refill, to the same values. */
    sc_model_config saved = *c;
    sc_status st = sc__json_read_object_file(path, "model configuration", NULL, load_member, c, err);
    if (st != SC_OK) *c = saved;
    return st;
}

sc_status sc_model_run(const sc_model_config *c, sc_model **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    return sc__model_run(&c->c, c->calibrated ? &c->calib : NULL, out, err);
}

/* ------------------------------------------------------------ sweep */

/* The i-th value of a comma list (into buf); false past the end. */
static bool list_at(const char *list, size_t i, char *buf, size_t n) {
    const char *p = list;
    for (size_t k = 0; k < i; k++) {
        p = strchr(p, ',');
        if (!p) return false;
        p++;
    }
    size_t len = strcspn(p, ",");
    if (!len || len >= n) return false;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return true;
}

static size_t list_len(const char *list) {
    size_t n = 1;
    for (const char *p = list; *p; p++) n += *p == ',';
    return n;
}

static int cmp_rows(const void *a, const void *b) {
    const sweep_row *x = a, *y = b;
    if (x->sum.step_ns != y->sum.step_ns) return x->sum.step_ns < y->sum.step_ns ? -1 : 1;
    return strcmp(x->desc, y->desc);
}

sc_status sc_model_sweep_run(const sc_model_config *base, const char *const *fields, const char *const *lists, size_t n,
                             sc_model_sweep **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    size_t total = 1, len[32];
    if (n > 32) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model --sweep: at most 32 swept fields");
    for (size_t k = 0; k < n; k++) {
        len[k] = list_len(lists[k]);
        total *= len[k];
        if (total > 100000) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model --sweep: more than 100000 configurations");
    }
    sc_model_sweep *s = calloc(1, sizeof *s);
    if (s) s->rows = calloc(total, sizeof *s->rows);
    if (!s || !s->rows) {
        free(s);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    double t0 = sc__now();
    for (size_t i = 0; i < total; i++) {
        sc_model_config c = *base;
        char desc[160] = "", val[256];
        size_t rest = i, used = 0;
        sc_status st = SC_OK;
        for (size_t k = 0; k < n && st == SC_OK; k++) {
            if (!list_at(lists[k], rest % len[k], val, sizeof val)) {
                free(s->rows);
                free(s);
                return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model --sweep: bad list '%.60s' for %s", lists[k], fields[k]);
            }
            rest /= len[k];
            if ((st = sc_model_config_set(&c, fields[k], val, err)) != SC_OK) {
                free(s->rows);
                free(s);
                return st;
            }
            int w = snprintf(desc + used, sizeof desc - used, "%s%s=%s", k ? " " : "", fields[k], val);
            if (w > 0 && (size_t)w < sizeof desc - used) used += (size_t)w;
        }
        s->tried++;
        sc_model *m;
        sc_error e;
        if (sc__model_run(&c.c, base->calibrated ? &base->calib : NULL, &m, &e) != SC_OK) {
            if (e.status == SC_E_NOMEM) {
                free(s->rows);
                free(s);
                *err = e;
                return e.status;
            }
            s->invalid++;
            continue;
        }
        sweep_row *r = &s->rows[s->nrows];
        r->sum = m->sum;
        sc_model_free(m);
        if (!r->sum.fits) {
            s->not_fitting++;
            continue;
        }
        snprintf(r->desc, sizeof r->desc, "%s", desc);
        s->nrows++;
    }
    qsort(s->rows, s->nrows, sizeof *s->rows, cmp_rows);
    s->seconds = sc__now() - t0;
    *out = s;
    return SC_OK;
}

void sc_model_sweep_free(sc_model_sweep *s) {
    if (!s) return;
    free(s->rows);
    free(s);
}

