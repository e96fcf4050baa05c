/*
 * transformer.c - the work of a decoder-only transformer training step on
 * one GPU (transformer.h): per-layer kernel programs for the forward, the
 * backward and the recomputation, the embedding, head and optimizer, the
 * parameter and model-FLOP counts and memory per GPU.
 *
 * Conventions: activations are 2-byte (bf16/fp16; fp8 runs only the GEMMs
 * in fp8), a layer's program follows Megatron-LM's (pre-norm, fused QKV,
 * bias-dropout-add fused, gelu or SwiGLU), tensor parallelism needs two
 * all-reduces per layer per pass, or with sequence parallelism an
 * all-gather before each column-parallel GEMM and a reduce-scatter after
 * each row-parallel one. Memory-bound kernels count the bytes they read
 * and write once each.
 */
#include "transformer.h"

#include "../graph/graph.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Transformer Engine's userbuffers (the "tensor-parallel linears" below):
 * the SMs its pipeline and bulk kernels hold, the pipeline's chunks, and
 * the largest tp modelled (a ring step's join count is an op's uint8
 * side, 255 meaning "at the optimizer"). */
enum { UB_SMS = 16, UB_PIPELINE_SPLITS = 4, UB_MAX_TP = 200 };
_Static_assert(UB_MAX_TP < 254, "a ring exchange's steps join at most tp ops later, in a uint8");

#define ACT 2.0 /* bytes per activation element */

void sc__tf_defaults(sc__tf_config *c) {
    memset(c, 0, sizeof *c);
    c->tp = c->pp = c->vp = c->cp = c->ep = 1;
    c->mbs = 1;
    c->dtype = SC__DT_BF16;
    c->attention = SC__ATTN_FLASH;
    c->dist_opt = 1;
    snprintf(c->gpu, sizeof c->gpu, "h100");
    c->host_us = 4.0;
    c->grad_fp32 = 1;
}

const char *sc__tf_recompute_name(uint8_t r) {
    return r == SC__RC_FULL ? "full" : r == SC__RC_SELECTIVE ? "selective" : "none";
}

const char *sc__tf_dispatcher_name(uint8_t d) {
    return d == SC__DISP_DEEPEP ? "deepep" : d == SC__DISP_HYBRIDEP ? "hybridep" : "alltoall";
}

static bool fail(char *why, size_t n, const char *fmt, uint64_t a, uint64_t b) {
    snprintf(why, n, fmt, (unsigned long long)a, (unsigned long long)b);
    return false;
}

/* An uneven split: vp 1, pp 2 or more, the first and last stages' layers
 * leaving a remainder the middle stages split evenly (with pp 2 nothing is
 * left for a middle stage). */
static bool uneven_ok(const sc__tf_config *c, char *why, size_t nwhy) {
    if (c->pp_embedding && (c->pp_first || c->pp_last))
        return fail(why, nwhy, "give --pp-first-layers/--pp-last-layers (%llu/%llu) or --pp-embedding, not both",
                    c->pp_first, c->pp_last);
    if (c->pp_embedding) {
        uint64_t units = (uint64_t)c->pp * c->vp, all = (uint64_t)c->layers + c->mtp_layers + 2;
        if (c->pp < 2) return fail(why, nwhy, "--pp-embedding needs pp > 1 (got pp %llu, layers %llu)", c->pp, c->layers);
        if (all % units || all / units < 2 || all / units < 1 + (uint64_t)c->mtp_layers)
            return fail(why, nwhy, "layers + MTP layers + 2 (embedding and loss) = %llu are not divisible by pp x vp = %llu into chunks of 2 or more",
                        all, units);
        return true;
    }
    if (c->vp > 1) return fail(why, nwhy, "an uneven split needs vp 1 (got vp %llu, pp %llu)", c->vp, c->pp);
    if (c->pp < 2) return fail(why, nwhy, "an uneven split needs pp > 1 (got pp %llu, layers %llu)", c->pp, c->layers);
    uint64_t mid = c->pp - 2, first = c->pp_first, last = c->pp_last;
    uint64_t fixed = (first ? first : 0) + (last ? last : 0);
    uint64_t open = mid + (first ? 0 : 1) + (last ? 0 : 1);
    if (fixed >= c->layers || (!open && fixed != c->layers))
        return fail(why, nwhy, "the first and last stages' layers (%llu) do not leave the others their share of %llu layers",
                    fixed, c->layers);
    if (open && (c->layers - fixed) % open)
        return fail(why, nwhy, "the %llu layers besides the first and last stages' are not divisible by the %llu other stages",
                    c->layers - fixed, open);
    if (open && (c->layers - fixed) / open == 0)
        return fail(why, nwhy, "%llu layers leave no layer for %llu stages", c->layers - fixed, open);
    return true;
}

/* Latent attention: Megatron's MLA defaults (qk 128, rope 64, v 128,
 * kv_lora 512: MLATransformerConfig) where not given; flash attention only
 * (Megatron runs MLA through Transformer Engine's fused attention). */
static bool mla_ok(sc__tf_config *c, char *why, size_t nwhy) {
    if (!c->qk_dim) c->qk_dim = 128;
    if (!c->qk_rope_dim) c->qk_rope_dim = 64;
    if (!c->v_dim) c->v_dim = 128;
    if (!c->kv_lora) c->kv_lora = 512;
    if (c->attention != SC__ATTN_FLASH)
        return fail(why, nwhy, "multi-latent attention runs fused attention only (got --attention unfused, heads %llu, tp %llu)", c->heads, c->tp);
    if (c->cp > 1) return fail(why, nwhy, "multi-latent attention with context parallelism (cp %llu) is not modelled (tp %llu)", c->cp, c->tp);
    return true;
}

uint32_t sc__tf_chunk_layers(const sc__tf_config *c, uint32_t stage, uint32_t chunk) {
    if (c->pp_embedding) {
        uint32_t n = (c->layers + c->mtp_layers + 2) / (c->pp * c->vp);
        if (stage == 0 && chunk == 0) n--;
        if (stage == c->pp - 1 && chunk == c->vp - 1) n -= 1 + c->mtp_layers;
        return n;
    }
    if (!c->pp_first && !c->pp_last) return c->layers / (c->pp * c->vp);
    if (stage == 0 && c->pp_first) return c->pp_first;
    if (stage == c->pp - 1 && c->pp_last) return c->pp_last;
    uint32_t fixed = c->pp_first + c->pp_last;
    uint32_t open = c->pp - 2 + (c->pp_first ? 0 : 1) + (c->pp_last ? 0 : 1);
    return open ? (c->layers - fixed) / open : 0;
}

uint32_t sc__tf_stage_layers(const sc__tf_config *c, uint32_t stage) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < c->vp; k++) n += sc__tf_chunk_layers(c, stage, k);
    return n;
}

/* The hybrid pattern and the Mamba-2 mixer: layers from the pattern,
 * Megatron's defaults (TransformerConfig: mamba_state_dim 128,
 * mamba_head_dim 64, mamba_num_groups 8, mamba_num_heads None: d_inner =
 * expand x hidden, MambaMixer's expand 2 and chunk_size 128) and
 * MambaMixer's asserts (heads and groups divisible by tp, heads by
 * groups). */
static bool hybrid_resolve(sc__tf_config *c, char *why, size_t nwhy) {
    size_t n = strlen(c->hybrid);
    if (c->layers && c->layers != n) return fail(why, nwhy, "layers %llu, but the hybrid pattern has %llu", c->layers, n);
    if (strchr(c->hybrid, 'E') && !c->experts) return fail(why, nwhy, "the hybrid pattern has MoE layers ('E') but no experts (%llu)", 0, 0);
    if (!strchr(c->hybrid, 'E') && c->experts)
        return fail(why, nwhy, "experts (%llu) but the hybrid pattern has no MoE layer ('E'; %llu layers)", c->experts, n);
    /* MambaStack splits its layers evenly over the stages, one chunk each */
    if (c->vp > 1 || c->pp_first || c->pp_last || c->pp_embedding)
        return fail(why, nwhy, "a hybrid pattern splits evenly over pp stages: vp (%llu), uneven or embedding-aware splits are not modelled (pp %llu)",
                    c->vp, c->pp);
    if (c->dense_layers) return fail(why, nwhy, "dense-layers %llu with a hybrid pattern (its '-' layers are the dense ones)", c->dense_layers, 0);
    /* LoRA's adapters, latent attention and MTP in a hybrid are not modelled */
    if (c->lora_rank || c->mla || c->mtp_layers)
        return fail(why, nwhy, "a hybrid pattern with lora-rank (%llu), multi-latent-attention or mtp-layers (%llu) is not modelled",
                    c->lora_rank, c->mtp_layers);
    if (!strchr(c->hybrid, 'M')) return true; /* no Mamba-2 sizes to fill */
    if (!c->mamba_head_dim) c->mamba_head_dim = 64;
    if (!c->mamba_state) c->mamba_state = 128;
    if (!c->mamba_groups) c->mamba_groups = 8;
    if (!c->mamba_chunk) c->mamba_chunk = 128;
    if (!c->mamba_heads && c->hidden) c->mamba_heads = 2 * c->hidden / c->mamba_head_dim;
    if (!c->mamba_heads) return fail(why, nwhy, "mamba-heads %llu (hidden %llu)", c->mamba_heads, c->hidden);
    if (c->mamba_heads % c->mamba_groups)
        return fail(why, nwhy, "mamba-heads %llu are not divisible by mamba-groups %llu", c->mamba_heads, c->mamba_groups);
    if (c->mamba_heads % c->tp) return fail(why, nwhy, "mamba-heads %llu are not divisible by tp %llu", c->mamba_heads, c->tp);
    if (c->mamba_groups % c->tp) return fail(why, nwhy, "mamba-groups %llu are not divisible by tp %llu", c->mamba_groups, c->tp);
    if (c->seq % c->mamba_chunk) return fail(why, nwhy, "seq %llu is not divisible by mamba-chunk %llu", c->seq, c->mamba_chunk);
    /* MambaContextParallel's all-to-alls (heads for sequence) are not in the model */
    if (c->cp > 1) return fail(why, nwhy, "cp %llu with Mamba layers is not modelled (Megatron splits their heads over cp by all-to-all)", c->cp, 0);
    return true;
}

/* Group-limited routing: Megatron's TopKRouter asserts experts divisible
 * by the groups and enough experts in the chosen groups for top-k. */
static bool routing_groups_ok(const sc__tf_config *c, char *why, size_t nwhy) {
    if (!c->experts) return fail(why, nwhy, "moe-router-num-groups %llu needs experts (got %llu)", c->router_groups, 0);
    if (!c->router_groups || !c->router_group_topk)
        return fail(why, nwhy, "moe-router-num-groups (%llu) and moe-router-group-topk (%llu) go together",
                    c->router_groups, c->router_group_topk);
    if (c->experts % c->router_groups)
        return fail(why, nwhy, "experts %llu are not divisible by moe-router-num-groups %llu", c->experts, c->router_groups);
    if (c->router_group_topk > c->router_groups)
        return fail(why, nwhy, "moe-router-group-topk %llu exceeds moe-router-num-groups %llu", c->router_group_topk,
                    c->router_groups);
    if ((uint64_t)c->router_group_topk * (c->experts / c->router_groups) < c->topk)
        return fail(why, nwhy, "topk %llu exceeds the %llu experts of the chosen groups", c->topk,
                    (uint64_t)c->router_group_topk * (c->experts / c->router_groups));
    return true;
}

bool sc__tf_resolve(sc__tf_config *c, char *why, size_t nwhy) {
    if (c->hybrid[0] && !c->layers) c->layers = (uint32_t)strlen(c->hybrid);
    if (!c->layers || !c->hidden || !c->heads || !c->seq || !c->vocab) {
        snprintf(why, nwhy, "the model is not described: give --preset, or --layers, --hidden, --heads, --seq and --vocab");
        return false;
    }
    if (!c->mla && (c->q_lora || c->kv_lora || c->qk_dim || c->qk_rope_dim || c->v_dim))
        return fail(why, nwhy, "q-lora-rank, kv-lora-rank, qk-head-dim, qk-pos-emb-head-dim and v-head-dim need "
                               "--multi-latent-attention true (kv-lora-rank %llu, q-lora-rank %llu)", c->kv_lora, c->q_lora);
    bool mamba_set = c->mamba_heads || c->mamba_head_dim || c->mamba_state || c->mamba_groups || c->mamba_chunk;
    if (mamba_set && !strchr(c->hybrid, 'M'))
        return fail(why, nwhy, "the mamba-* sizes need a hybrid pattern with Mamba-2 layers ('M'; mamba-heads %llu, mamba-state %llu)",
                    c->mamba_heads, c->mamba_state);
    if (c->recompute_mods && c->recompute != SC__RC_SELECTIVE) {
        snprintf(why, nwhy, "recompute-modules need --recompute selective (got --recompute %s)", sc__tf_recompute_name(c->recompute));
        return false;
    }
    if (c->hybrid[0] && !hybrid_resolve(c, why, nwhy)) return false;
    if (!c->ffn) c->ffn = 4 * c->hidden;
    if (!c->kv_heads) c->kv_heads = c->heads;
    if (c->experts && !c->topk) c->topk = 1;
    if (!c->experts) c->topk = 0;
    if (!c->moe_ffn) c->moe_ffn = c->ffn;
    if (!c->etp) c->etp = c->tp;
    if (c->etp != 1 && c->etp != c->tp) return fail(why, nwhy, "etp %llu must be 1 or tp (%llu)", c->etp, c->tp);
    if (c->experts && c->etp < c->tp && !c->sp)
        return fail(why, nwhy, "experts with etp %llu below tp %llu need sequence parallelism (--sp true)", c->etp, c->tp);
    if (c->experts && c->moe_ffn % c->etp) return fail(why, nwhy, "moe-ffn %llu is not divisible by etp %llu", c->moe_ffn, c->etp);
    if (c->shared_ffn % c->tp) return fail(why, nwhy, "shared-ffn %llu is not divisible by tp %llu", c->shared_ffn, c->tp);
    if (c->mla && !mla_ok(c, why, nwhy)) return false;
    if (!c->head_dim && c->hidden % c->heads) return fail(why, nwhy, "hidden %llu is not divisible by heads %llu", c->hidden, c->heads);
    if (c->heads % c->kv_heads) return fail(why, nwhy, "heads %llu are not divisible by kv-heads %llu", c->heads, c->kv_heads);
    if (c->heads % c->tp) return fail(why, nwhy, "heads %llu are not divisible by tp %llu", c->heads, c->tp);
    if (c->ffn % c->tp) return fail(why, nwhy, "ffn %llu is not divisible by tp %llu", c->ffn, c->tp);
    if (c->vp > 1 && c->pp < 2) return fail(why, nwhy, "virtual stages (vp %llu) need pp > 1, got pp %llu", c->vp, c->pp);
    bool uneven = c->pp_first || c->pp_last || c->pp_embedding;
    if (uneven && !uneven_ok(c, why, nwhy)) return false;
    if (!uneven && c->layers % (c->pp * c->vp))
        return fail(why, nwhy,
                    "layers %llu are not divisible by pp x vp = %llu (an uneven split: --pp-first-layers/--pp-last-layers, or --pp-embedding)",
                    c->layers, (uint64_t)c->pp * c->vp);
    if (c->seq % (c->cp * (c->sp ? c->tp : 1)))
        return fail(why, nwhy, "seq %llu is not divisible by cp (x tp with sp) = %llu", c->seq,
                    (uint64_t)c->cp * (c->sp ? c->tp : 1));
    if (c->experts && c->experts % c->ep) return fail(why, nwhy, "experts %llu are not divisible by ep %llu", c->experts, c->ep);
    if (!c->experts && c->ep > 1) return fail(why, nwhy, "ep %llu needs experts (got %llu)", c->ep, c->experts);
    if (c->topk > c->experts) return fail(why, nwhy, "topk %llu exceeds experts %llu", c->topk, c->experts);
    /* Megatron's arguments.py: "Tensor parallel communication/GEMM overlap
     * can happen only when sequence parallelism is enabled" */
    if (c->tp_overlap && c->tp > 1 && !c->sp)
        return fail(why, nwhy, "tp-comm-overlap needs sequence parallelism (--sp true) with tp %llu, as Megatron requires",
                    c->tp, 0);
    if (c->dispatcher && c->ep < 2) {
        snprintf(why, nwhy, "moe-dispatcher %s needs expert parallelism (ep %u): there is nothing to dispatch between GPUs",
                 sc__tf_dispatcher_name(c->dispatcher), c->ep);
        return false;
    }
    if ((c->router_groups || c->router_group_topk) && !routing_groups_ok(c, why, nwhy)) return false;
    if (c->dense_layers && !c->experts) return fail(why, nwhy, "dense-layers %llu need experts (got %llu)", c->dense_layers, c->experts);
    if (c->dense_layers >= c->layers)
        return fail(why, nwhy, "dense-layers %llu must leave some of the %llu layers to the experts", c->dense_layers, c->layers);
    if (c->window_skip && !c->window) return fail(why, nwhy, "window-skip %llu needs a window (got %llu)", c->window_skip, c->window);
    if (c->lora_rank && c->fsdp) return fail(why, nwhy, "lora-rank %llu with fsdp is not modelled (got fsdp %llu)", c->lora_rank, c->fsdp);
    if (c->lora_rank && c->mla) return fail(why, nwhy, "lora-rank %llu with multi-latent-attention is not modelled (%llu)", c->lora_rank, c->mla);
    if (c->lora_rank && c->mtp_layers) return fail(why, nwhy, "lora-rank %llu with mtp-layers %llu is not modelled", c->lora_rank, c->mtp_layers);
    /* LoRA's adapters on experts would be reduced over the expert-data-parallel group */
    if (c->lora_rank && c->experts && (c->ep > 1 || c->etp < c->tp))
        return fail(why, nwhy, "lora-rank %llu on experts split by ep (%llu) or etp is not modelled", c->lora_rank, c->ep);
    /* Megatron-FSDP's expert shards (over the expert-data-parallel group) */
    if (c->fsdp && c->mtp_layers) return fail(why, nwhy, "fsdp with mtp-layers %llu is not modelled (fsdp %llu)", c->mtp_layers, c->fsdp);
    if (c->fsdp && c->experts && (c->ep > 1 || c->etp < c->tp))
        return fail(why, nwhy, "fsdp with experts split by ep (%llu) or etp (%llu) is not modelled", c->ep, c->etp);
    /* Megatron's DotProductAttention (unfused) asserts no window and no context parallelism */
    if (c->attention == SC__ATTN_UNFUSED && (c->window || c->cp > 1))
        return fail(why, nwhy, "unfused attention has no sliding window or context parallelism (window %llu, cp %llu): use flash",
                    c->window, c->cp);
    if (c->mla && c->window) return fail(why, nwhy, "a sliding window (%llu) with multi-latent attention is not modelled (window-skip %llu)", c->window, c->window_skip);
    if (!c->gpus_per_node) c->gpus_per_node = 8;
    /* userbuffers exchange over the node's NVLink (CUDA IPC) */
    if (c->tp_overlap && c->tp > 1 && c->tp > c->gpus_per_node)
        return fail(why, nwhy, "tp-comm-overlap (Transformer Engine's userbuffers) needs the tp group (%llu) within a node of %llu GPUs",
                    c->tp, c->gpus_per_node);
    if (c->tp_overlap && c->tp > UB_MAX_TP)
        return fail(why, nwhy, "tp-comm-overlap is modelled up to tp %llu (got tp %llu)", UB_MAX_TP, c->tp);
    uint64_t mp = (uint64_t)c->tp * c->pp * c->cp;
    if (c->nodes && !c->dp) {
        uint64_t gpus = (uint64_t)c->nodes * c->gpus_per_node;
        if (gpus % mp) return fail(why, nwhy, "%llu GPUs are not divisible by tp x pp x cp = %llu", gpus, mp);
        c->dp = (uint32_t)(gpus / mp);
    }
    if (!c->dp) c->dp = 1;
    if (c->nodes && (uint64_t)c->nodes * c->gpus_per_node != mp * c->dp)
        return fail(why, nwhy, "nodes x gpus-per-node = %llu GPUs, but tp x pp x cp x dp = %llu",
                    (uint64_t)c->nodes * c->gpus_per_node, mp * c->dp);
    if (c->ep > 1 && ((uint64_t)c->dp * c->cp * c->tp) % ((uint64_t)c->ep * c->etp))
        return fail(why, nwhy, "ep x etp = %llu must divide tp x dp x cp = %llu", (uint64_t)c->ep * c->etp,
                    (uint64_t)c->dp * c->cp * c->tp);
    if (!c->gbs) c->gbs = c->dp * c->mbs;
    if (c->gbs % ((uint64_t)c->dp * c->mbs))
        return fail(why, nwhy, "gbs %llu is not divisible by dp x mbs = %llu", c->gbs, (uint64_t)c->dp * c->mbs);
    uint32_t m = sc__tf_micro(c);
    if (c->vp > 1 && m % c->pp)
        return fail(why, nwhy, "the interleaved schedule needs micro-batches (%llu) divisible by pp %llu", m, c->pp);
    if (c->sp && c->tp < 2) c->sp = 0;
    if (sc__tf_gpus(c) > (1u << 24)) return fail(why, nwhy, "%llu GPUs: more than %llu", sc__tf_gpus(c), 1u << 24);
    return true;
}

/* ------------------------------------------------------------ layer kinds */

/* Megatron-core's is_layer_window_attention: layer numbers are 1-based and
 * those divisible by window_attn_skip_freq attend to all (GPT-OSS: 2, the
 * even ones); a window as long as the sequence is no window. */
uint8_t sc__tf_hybrid_kind(char sym, bool experts) {
    switch (sym) {
    case 'M': return SC__TFK_MAMBA | SC__TFK_NO_MLP;
    case '*': return SC__TFK_NO_MLP;
    case '-': return SC__TFK_NO_MIXER | (experts ? SC__TFK_DENSE : 0);
    case 'E': return SC__TFK_NO_MIXER;
    default: return 0xff;
    }
}

uint8_t sc__tf_layer_kind(const sc__tf_config *c, uint32_t layer) {
    uint8_t k = 0;
    if (c->hybrid[0]) k = sc__tf_hybrid_kind(c->hybrid[layer], c->experts != 0);
    if (c->experts && layer < c->dense_layers) k |= SC__TFK_DENSE;
    bool attends = !(k & (SC__TFK_MAMBA | SC__TFK_NO_MIXER));
    if (attends && c->window && c->window < c->seq && !(c->window_skip && (layer + 1) % c->window_skip == 0)) k |= SC__TFK_WINDOW;
    return k;
}

void sc__tf_kind_config(const sc__tf_config *c, uint8_t k, sc__tf_config *out) {
    *out = *c;
    if (k & SC__TFK_DENSE) out->experts = out->topk = out->shared_ffn = 0;
    out->window = (k & SC__TFK_WINDOW) ? c->window : 0;
    out->dense_layers = out->window_skip = 0;
    out->block = k & (SC__TFK_MAMBA | SC__TFK_NO_MLP | SC__TFK_NO_MIXER);
}

uint32_t sc__tf_chunk_first_layer(const sc__tf_config *c, uint32_t g) {
    uint32_t n = 0;
    for (uint32_t j = 0; j < g; j++) n += sc__tf_chunk_layers(c, j % c->pp, j / c->pp);
    return n;
}

/* Layers of each kind among [l0, l1), added to n. */
static void count_kinds(const sc__tf_config *c, uint32_t l0, uint32_t l1, uint32_t n[SC__TF_KINDS]) {
    for (uint32_t l = l0; l < l1; l++) n[sc__tf_layer_kind(c, l)]++;
}

/* Layers of each kind on a stage (all its chunks). */
static void stage_kinds(const sc__tf_config *c, uint32_t stage, uint32_t n[SC__TF_KINDS]) {
    memset(n, 0, SC__TF_KINDS * sizeof *n);
    for (uint32_t k = 0; k < c->vp; k++) {
        uint32_t l0 = sc__tf_chunk_first_layer(c, k * c->pp + stage);
        count_kinds(c, l0, l0 + sc__tf_chunk_layers(c, stage, k), n);
    }
}

/* sum over kinds of n[kind] x f(the kind's configuration) */
static double per_kind(const sc__tf_config *c, const uint32_t n[SC__TF_KINDS], double (*f)(const sc__tf_config *)) {
    double sum = 0;
    for (uint8_t k = 0; k < SC__TF_KINDS; k++) {
        if (!n[k]) continue;
        sc__tf_config kc;
        sc__tf_kind_config(c, k, &kc);
        sum += n[k] * f(&kc);
    }
    return sum;
}

/* The sum of f over layers [l0, l1), each read as its kind's configuration. */
static double over_layers(const sc__tf_config *c, uint32_t l0, uint32_t l1, double (*f)(const sc__tf_config *)) {
    uint32_t n[SC__TF_KINDS] = {0};
    count_kinds(c, l0, l1, n);
    return per_kind(c, n, f);
}

/* The same over a stage's layers (all its chunks). */
static double over_stage(const sc__tf_config *c, uint32_t stage, double (*f)(const sc__tf_config *)) {
    uint32_t n[SC__TF_KINDS];
    stage_kinds(c, stage, n);
    return per_kind(c, n, f);
}

/* ------------------------------------------------------------ op programs */

typedef struct dims {
    double T, Tn;   /* tokens of this GPU; tokens its norms and dropouts see */
    double h, q, kvd, f, g, t, s_kv, b, heads_t, hd;
} dims;

static dims dims_of(const sc__tf_config *c) {
    dims d;
    d.b = c->mbs;
    d.T = (double)c->mbs * c->seq / c->cp;
    d.t = c->tp;
    d.Tn = c->sp ? d.T / d.t : d.T;
    d.h = c->hidden;
    d.hd = c->head_dim ? (double)c->head_dim : (double)c->hidden / c->heads;
    d.q = d.hd * c->heads;
    d.kvd = d.hd * c->kv_heads;
    d.f = c->ffn;
    d.g = c->gated ? 2 : 1;
    d.s_kv = c->seq;
    d.heads_t = (double)c->heads / c->tp;
    return d;
}

static bool push(sc__vec *out, const sc__tf_op *op) { return SC__VEC_APPEND(out, op); }

static bool gemm_dt(sc__vec *out, uint8_t dtype, const char *name, double m, double n, double k, double batch) {
    sc__tf_op op = {.name = name, .coll = SC__TF_KERNEL};
    op.k = (sc__kernel_shape){.cls = SC__KC_GEMM, .dtype = dtype, .batch = (uint32_t)batch,
                              .m = (uint64_t)m, .n = (uint64_t)n, .k = (uint64_t)k,
                              .flops = 2.0 * batch * m * n * k,
                              .bytes = batch * (m * k + k * n + m * n) * (dtype == SC__DT_FP8 ? 1 : ACT)};
    return push(out, &op);
}

static bool gemm(sc__vec *out, const sc__tf_config *c, const char *name, double m, double n, double k, double batch) {
    return gemm_dt(out, c->dtype, name, m, n, k, batch);
}

/* A weight-gradient GEMM: none for a frozen weight (LoRA's base). */
static bool wgrad(sc__vec *out, const sc__tf_config *c, const char *name, double m, double n, double k, double batch) {
    return c->lora_rank || gemm(out, c, name, m, n, k, batch);
}

static bool mem(sc__vec *out, const char *name, double bytes) {
    sc__tf_op op = {.name = name, .coll = SC__TF_KERNEL};
    op.k = (sc__kernel_shape){.cls = SC__KC_ELEMENTWISE, .batch = 1, .bytes = bytes};
    return push(out, &op);
}

/* With fp8, the 16-bit input of each linear layer's GEMM (its activation
 * in the forward, the output gradient before the dgrad) is quantised by
 * Transformer Engine's fused cast-transpose kernel (cast_transpose.cu in
 * NVIDIA/TransformerEngine; the amax is taken in the same pass): 2 bytes
 * read, the fp8 tensor and its transpose (for the wgrad) written, 4 bytes
 * an element. The weights' casts are cached across micro-batches and not
 * counted. Nothing for 16-bit GEMMs. */
static bool fp8_cast(sc__vec *out, const sc__tf_config *c, double elems) {
    /* a frozen weight needs no wgrad, so no transpose: Transformer
     * Engine's Linear asks its quantizer for the columnwise copy only
     * when the weight requires a gradient (module/linear.py) */
    return c->dtype != SC__DT_FP8 || mem(out, "fp8_cast_transpose", elems * (c->lora_rank ? 3 : 4));
}

static bool attn(sc__vec *out, const char *name, double flops, double bytes) {
    sc__tf_op op = {.name = name, .coll = SC__TF_KERNEL};
    op.k = (sc__kernel_shape){.cls = SC__KC_ATTENTION, .dtype = SC__DT_BF16, .batch = 1, .flops = flops, .bytes = bytes};
    return push(out, &op);
}

/* A collective of `bytes` (nccl-tests size) in communicator comm; side: run
 * beside compute, joined that many ops later (0: on the compute stream). */
static sc__tf_op coll_op(const char *name, uint8_t type, uint8_t comm, double bytes, uint8_t side) {
    return (sc__tf_op){.name = name, .coll = type, .comm = comm, .side = side, .bytes = (int64_t)bytes};
}

static bool coll(sc__vec *out, const char *name, uint8_t type, uint8_t comm, double bytes, uint8_t side) {
    sc__tf_op op = coll_op(name, type, comm, bytes, side);
    return push(out, &op);
}

/* Rotary position embedding (Llama, Nemotron): Megatron-core applies it to
 * q and to k separately after the QKV GEMM, fused (Transformer Engine's
 * fused_rope.cu: one kernel reads the 16-bit tensor and writes the rotated
 * one, the cos/sin from a small fp32 table), and its backward the same
 * rotation of the gradients: 2 bytes read and 2 written an element of q
 * and of k, forward and backward alike. Nothing without --rope. */
static bool rope(sc__vec *out, const sc__tf_config *c, const dims *d, bool bwd) {
    if (!c->rope) return true;
    double per = d->T / d->t * ACT * 2;
    return mem(out, bwd ? "rope_q_bwd" : "rope_q", per * d->q) && mem(out, bwd ? "rope_k_bwd" : "rope_k", per * d->kvd);
}

/* The attention core, forward (bwd false) or backward. */
static bool attn_core(const sc__tf_config *c, const dims *d, bool bwd, sc__vec *out) {
    bool ok = true;
    if (c->attention == SC__ATTN_FLASH) {
        /* causal: half the s x s products are computed; backward 2.5 x forward
         * (five products against two). A sliding window bounds the keys
         * each query sees (Flash Attention and cuDNN skip the blocks
         * outside it). */
        double fwd = 4.0 * d->T * d->s_kv * d->q / d->t * 0.5;
        if (c->window) {
            /* query i sees min(i + 1, w) keys: w - w^2 / 2s on average */
            double w = c->window;
            fwd = 4.0 * d->T * (w - w * w / (2 * d->s_kv)) * d->q / d->t;
        }
        double io = d->T * (2 * d->q + 2 * d->kvd) / d->t * ACT;
        return bwd ? attn(out, "flash_attn_bwd", 2.5 * fwd, 2 * io) : attn(out, "flash_attn_fwd", fwd, io);
    }
    double batch = d->b * d->heads_t, s = (double)c->seq / c->cp, sk = d->s_kv;
    double elems = batch * s * sk;
    if (!bwd) {
        ok = ok && gemm(out, c, "attn_qk", s, sk, d->hd, batch);
        ok = ok && mem(out, "scale_mask_softmax", elems * ACT * 2);
        ok = ok && mem(out, "attn_dropout", elems * (ACT * 2 + 1));
        ok = ok && gemm(out, c, "attn_av", s, d->hd, sk, batch);
    } else {
        ok = ok && gemm(out, c, "attn_av_dgrad", s, sk, d->hd, batch);
        ok = ok && gemm(out, c, "attn_av_wgrad", sk, d->hd, s, batch);
        ok = ok && mem(out, "attn_dropout_bwd", elems * (ACT * 2 + 1));
        ok = ok && mem(out, "softmax_bwd", elems * ACT * 3);
        ok = ok && gemm(out, c, "attn_qk_dgrad", s, d->hd, sk, batch);
        ok = ok && gemm(out, c, "attn_qk_wgrad", sk, d->hd, s, batch);
    }
    return ok;
}

/* Tensor-parallel communication at the entry of a column-parallel GEMM
 * (forward: all-gather with sp; backward: all-reduce without, reduce-scatter
 * with) and at the exit of a row-parallel one, on the compute stream: the
 * places that do not go through the "tensor-parallel linears" below
 * (latent attention's projections, MTP's, the tokens gathered for
 * tensor-parallel experts) are not modelled under userbuffers or with
 * the backward's asynchronous pair, so their collectives stay exposed. */
static bool tp_in_bytes(const sc__tf_config *c, double bytes, bool bwd, sc__vec *out) {
    if (c->tp < 2) return true;
    if (!bwd) return !c->sp || coll(out, "tp_all_gather", SC_C_ALL_GATHER, SC__COMM_TP, bytes, 0);
    return c->sp ? coll(out, "tp_reduce_scatter", SC_C_REDUCE_SCATTER, SC__COMM_TP, bytes, 0)
                 : coll(out, "tp_all_reduce", SC_C_ALL_REDUCE, SC__COMM_TP, bytes, 0);
}

static bool tp_in(const sc__tf_config *c, const dims *d, bool bwd, sc__vec *out) {
    return tp_in_bytes(c, d->T * d->h * ACT, bwd, out);
}

static bool tp_out(const sc__tf_config *c, const dims *d, bool bwd, sc__vec *out) {
    if (c->tp < 2) return true;
    double bytes = d->T * d->h * ACT;
    if (bwd) return !c->sp || coll(out, "tp_all_gather", SC_C_ALL_GATHER, SC__COMM_TP, bytes, 0);
    return c->sp ? coll(out, "tp_reduce_scatter", SC_C_REDUCE_SCATTER, SC__COMM_TP, bytes, 0)
                 : coll(out, "tp_all_reduce", SC_C_ALL_REDUCE, SC__COMM_TP, bytes, 0);
}

/* ------------------------------------------------------------ tensor-parallel linears */

/* The transformer layer's four linears (qkv and fc1 column-parallel, proj
 * and fc2 row-parallel; Mamba-2's in_proj and out_proj and the shared
 * experts' fc1 and fc2 alike, Transformer Engine linears too) and the
 * output head, with their tensor-parallel communication where Megatron
 * and Transformer Engine put it:
 *
 * - column-parallel forward: with sequence parallelism the input's
 *   sequence shards are gathered before the GEMM;
 * - row-parallel forward: the output is reduce-scattered (all-reduced
 *   without sp);
 * - row-parallel backward: with sp the output's gradient is gathered
 *   before dgrad, and wgrad uses it;
 * - column-parallel backward: the input's gradient (dgrad's output) is
 *   reduce-scattered (all-reduced) beside the wgrad GEMM, and with sp
 *   wgrad needs the whole input again, whose gather starts before dgrad
 *   and is awaited by wgrad. Megatron and Transformer Engine keep only the
 *   shard (Megatron's LinearWithGradAccumulationAndAsyncCommunication,
 *   TE's Linear and LayerNormLinear backward both issue the two async).
 *   Without sp the all-reduce stays on the compute stream (an
 *   assumption: whether the 2021 code of the SC'21 rows issued it
 *   asynchronously is not known). --tp-comm-overlap needs sp, as in
 *   Megatron.
 *
 * With --tp-comm-overlap the four linears use TE's userbuffers, with the
 * defaults of initialize_ub (transformer_engine/pytorch/module/base.py):
 * - ring_exchange (qkv and fc1 forward, proj and fc2 dgrad): the gather in
 *   tp - 1 point-to-point steps over copy engines, the GEMM in tp chunks
 *   of the sequence, chunk i waiting for step i (chunk 0 is local); no SMs
 *   taken from the GEMM;
 * - pipeline (proj and fc2 forward): the GEMM in 4 chunks, each chunk's
 *   reduce-scatter beside the next chunk, on 16 SMs the GEMM gives up
 *   (set_sm_margin);
 * - bulk (qkv and fc1 dgrad and wgrad): the gather beside dgrad and the
 *   reduce-scatter beside wgrad, each on 16 SMs taken from the GEMM.
 * With fp8 a gathered GEMM input is quantised on its shard first and
 * travels one byte an element (TE's all-gather buffers are fp8). The head
 * is Megatron's own ColumnParallelLinear (GPTModel's output_layer, not a
 * Transformer Engine module): no userbuffers, and its GEMMs in 16 bits
 * whatever the run's type. */
static bool userbuffers(const sc__tf_config *c) { return c->tp > 1 && c->sp && c->tp_overlap; }

/* Bytes an element of a gathered GEMM input travels in. */
static double gathered_bytes(const sc__tf_config *c, bool te) { return te && c->dtype == SC__DT_FP8 ? 1.0 : ACT; }

static bool tp_piece(sc__vec *out, const char *name, uint8_t type, double bytes, uint32_t side, uint32_t split) {
    sc__tf_op op = coll_op(name, type, SC__COMM_TP, bytes, (uint8_t)side);
    op.split = (uint8_t)split;
    return push(out, &op);
}

static bool gemm_beside(sc__vec *out, uint8_t dtype, const char *name, double m, double n, double k, uint8_t sms) {
    size_t at = out->len;
    if (!gemm_dt(out, dtype, name, m, n, k, 1)) return false;
    ((sc__tf_op *)out->data)[at].sm_taken = sms;
    return true;
}

/* ring_exchange: the gather of `bytes` beside the GEMM (m x n x k) in tp
 * chunks; the steps are queued first, step j joined at chunk j. */
static bool ring_gemm(sc__vec *out, const sc__tf_config *c, const char *name, double m, double n, double k, double bytes) {
    uint32_t t = c->tp;
    bool ok = true;
    for (uint32_t j = 1; j < t && ok; j++) ok = tp_piece(out, "tp_all_gather", SC_C_ALL_GATHER, bytes, j + 1, t - 1);
    for (uint32_t i = 0; i < t && ok; i++) ok = gemm(out, c, name, m / t, n, k, 1);
    return ok;
}

/* pipeline: each chunk's reduce-scatter joined where the output is next
 * used, after the last chunk. */
static bool gemm_pipelined_rs(sc__vec *out, const sc__tf_config *c, const char *name, double m, double n, double k,
                              double bytes) {
    bool ok = true;
    for (uint32_t i = 0; i < UB_PIPELINE_SPLITS && ok; i++) {
        ok = gemm_beside(out, c->dtype, name, m / UB_PIPELINE_SPLITS, n, k, UB_SMS);
        ok = ok && tp_piece(out, "tp_reduce_scatter", SC_C_REDUCE_SCATTER, bytes, UB_PIPELINE_SPLITS - i, UB_PIPELINE_SPLITS);
    }
    return ok;
}

/* The GEMM's type: the run's for a TE linear; for the head, the run's
 * 16-bit type (fp8 autocast does not reach it). */
static uint8_t linear_dtype(const sc__tf_config *c, bool te) { return te || c->dtype != SC__DT_FP8 ? c->dtype : SC__DT_BF16; }

/* With sp: the sequence shards of a GEMM's T x h operand (a column-parallel
 * input, a row-parallel output's gradient), cast on the shard and
 * gathered, then the GEMM (T x n x k): by ring exchange under userbuffers,
 * else the gather on the compute stream first. */
static bool gathered_gemm(sc__vec *out, const sc__tf_config *c, const dims *d, const char *name, double n, double k,
                          bool te) {
    bool ok = !te || fp8_cast(out, c, d->T / d->t * d->h);
    double bytes = d->T * d->h * gathered_bytes(c, te);
    if (te && userbuffers(c)) return ok && ring_gemm(out, c, name, d->T, n, k, bytes);
    ok = ok && coll(out, "tp_all_gather", SC_C_ALL_GATHER, SC__COMM_TP, bytes, 0);
    return ok && gemm_dt(out, linear_dtype(c, te), name, d->T, n, k, 1);
}

/* A column-parallel linear's forward, n of its output columns on this GPU. */
static bool col_fwd(sc__vec *out, const sc__tf_config *c, const dims *d, const char *name, double n, bool te) {
    if (c->tp > 1 && c->sp) return gathered_gemm(out, c, d, name, n, d->h, te);
    return (!te || fp8_cast(out, c, d->T * d->h)) && gemm_dt(out, linear_dtype(c, te), name, d->T, n, d->h, 1);
}

/* A row-parallel linear's forward, k of its input columns on this GPU. */
static bool row_fwd(sc__vec *out, const sc__tf_config *c, const dims *d, const char *name, double k) {
    bool ok = fp8_cast(out, c, d->T * k);
    if (userbuffers(c)) return ok && gemm_pipelined_rs(out, c, name, d->T, d->h, k, d->T * d->h * ACT);
    return ok && gemm(out, c, name, d->T, d->h, k, 1) && tp_out(c, d, false, out);
}

/* A row-parallel linear's backward (dgrad, wgrad), k input columns here. */
static bool row_bwd(sc__vec *out, const sc__tf_config *c, const dims *d, const char *dname, const char *wname, double k) {
    bool ok = c->tp > 1 && c->sp ? gathered_gemm(out, c, d, dname, k, d->h, true)
                                 : fp8_cast(out, c, d->T * d->h) && gemm(out, c, dname, d->T, k, d->h, 1);
    return ok && wgrad(out, c, wname, k, d->h, d->T, 1);
}

/* A column-parallel linear's backward, n output columns here (the width of
 * the gradient it takes). te: one of the layer's TE linears (cast to fp8,
 * userbuffers), not the head. */
static bool col_bwd(sc__vec *out, const sc__tf_config *c, const dims *d, const char *dname, const char *wname, double n,
                    bool te) {
    bool w = !c->lora_rank, tp = c->tp > 1;
    uint8_t dt = linear_dtype(c, te), sms = te && userbuffers(c) && w ? UB_SMS : 0; /* no wgrad: no bulk overlap */
    bool ok = !te || fp8_cast(out, c, d->T * n);
    if (tp && c->sp && w)
        ok = ok && coll(out, "tp_all_gather", SC_C_ALL_GATHER, SC__COMM_TP, d->T * d->h * gathered_bytes(c, te), 2);
    ok = ok && gemm_beside(out, dt, dname, d->T, d->h, n, sms);
    uint8_t side = c->sp ? (w ? 2 : 1) : 0;
    if (tp)
        ok = ok && (c->sp ? coll(out, "tp_reduce_scatter", SC_C_REDUCE_SCATTER, SC__COMM_TP, d->T * d->h * ACT, side)
                          : coll(out, "tp_all_reduce", SC_C_ALL_REDUCE, SC__COMM_TP, d->T * d->h * ACT, side));
    return ok && (!w || gemm_beside(out, dt, wname, n, d->h, d->T, sms));
}

/* ------------------------------------------------------------ LoRA */

/* A LoRA adapter beside a frozen linear layer (Megatron-Bridge's
 * peft/lora.py and ParallelLinearAdapter in peft/utils.py): x -> A (in x r)
 * -> B (r x out) -> x alpha / r, added to the base's output. A and B are
 * megatron-core Column/RowParallelLinear layers, not Transformer Engine
 * ones, so their GEMMs run in 16 bits whatever the base's type; dropout is
 * 0 by default (an identity) and costs nothing. Beside a column-parallel
 * base (linear_qkv, linear_fc1), A is column-parallel over r and gathers
 * its output (an all-gather of b s x r) and B is column-parallel over out;
 * with sequence parallelism and TP communication overlap the adapter
 * gathers the sequence itself (the base's gathered layernorm output is not
 * returned when ub_overlap_ag is on: get_adapter_attributes_from_linear),
 * and its backward reduce-scatters it. Beside a row-parallel base
 * (linear_proj, linear_fc2), A is row-parallel (an all-reduce of b s x r)
 * and B column-parallel with its output gathered (an all-gather of b s x
 * out), scattered back to the sequence shard with sequence parallelism.
 * Expert adapters talk over the expert-tensor-parallel group only. */
typedef struct lora_site {
    double M, batch; /* tokens of each of `batch` groups (the local experts, or 1) */
    double in, out;  /* the base's whole input and output features */
    double t;        /* the adapter's tensor-parallel group: tp, or etp for experts */
    bool row, expert;
} lora_site;

/* Elements of the adapter's output added to the base's on this GPU. */
static double lora_out_elems(const sc__tf_config *c, const lora_site *L) {
    if (!L->row) return L->M * L->batch * L->out / L->t;
    bool sp = c->sp && !L->expert && L->t > 1;
    return L->M * L->batch * L->out / (sp ? L->t : 1);
}

static bool lora_tp(sc__vec *out, const lora_site *L, const char *name, uint8_t type, double elems) {
    return L->t < 2 || coll(out, name, type, SC__COMM_TP, elems * ACT, 0);
}

static bool lora_fwd(const sc__tf_config *c, const lora_site *L, sc__vec *out) {
    if (!c->lora_rank) return true;
    double r = c->lora_rank, X = L->M * L->batch, t = L->t;
    bool ok = true, seq_gather = !L->row && !L->expert && c->sp && c->tp_overlap;
    if (seq_gather) ok = lora_tp(out, L, "lora_tp_all_gather", SC_C_ALL_GATHER, X * L->in);
    if (!L->row) {
        ok = ok && gemm_dt(out, SC__DT_BF16, "lora_a", L->M, r / t, L->in, L->batch);
        ok = ok && lora_tp(out, L, "lora_tp_all_gather", SC_C_ALL_GATHER, X * r);
        ok = ok && gemm_dt(out, SC__DT_BF16, "lora_b", L->M, L->out / t, r, L->batch);
    } else {
        ok = ok && gemm_dt(out, SC__DT_BF16, "lora_a", L->M, r, L->in / t, L->batch);
        ok = ok && lora_tp(out, L, "lora_tp_all_reduce", SC_C_ALL_REDUCE, X * r);
        ok = ok && gemm_dt(out, SC__DT_BF16, "lora_b", L->M, L->out / t, r, L->batch);
        ok = ok && lora_tp(out, L, "lora_tp_all_gather", SC_C_ALL_GATHER, X * L->out);
    }
    /* x alpha / r (read and write) and the sum with the base (two reads,
     * one write): two eager elementwise kernels */
    return ok && mem(out, "lora_scale_add", lora_out_elems(c, L) * ACT * 5);
}

static bool lora_bwd(const sc__tf_config *c, const lora_site *L, sc__vec *out) {
    if (!c->lora_rank) return true;
    double r = c->lora_rank, X = L->M * L->batch, t = L->t;
    bool ok = mem(out, "lora_scale_bwd", lora_out_elems(c, L) * ACT * 2);
    if (L->row && c->sp && !L->expert) ok = ok && lora_tp(out, L, "lora_tp_all_gather", SC_C_ALL_GATHER, X * L->out);
    double a_out = L->row ? r : r / t, a_in = L->row ? L->in / t : L->in;
    ok = ok && gemm_dt(out, SC__DT_BF16, "lora_b_dgrad", L->M, r, L->out / t, L->batch);
    ok = ok && gemm_dt(out, SC__DT_BF16, "lora_b_wgrad", L->out / t, r, L->M, L->batch);
    ok = ok && lora_tp(out, L, "lora_tp_all_reduce", SC_C_ALL_REDUCE, X * r);
    ok = ok && gemm_dt(out, SC__DT_BF16, "lora_a_dgrad", L->M, a_in, a_out, L->batch);
    ok = ok && gemm_dt(out, SC__DT_BF16, "lora_a_wgrad", a_out, a_in, L->M, L->batch);
    double in_elems = X * a_in;
    if (!L->row && !L->expert && c->sp && c->tp_overlap) {
        ok = ok && lora_tp(out, L, "lora_tp_reduce_scatter", SC_C_REDUCE_SCATTER, X * L->in);
        in_elems = X * L->in / t;
    } else if (!L->row && !L->expert && !c->sp) {
        ok = ok && lora_tp(out, L, "lora_tp_all_reduce", SC_C_ALL_REDUCE, X * L->in);
    }
    /* autograd sums the adapter's input gradient into the base's */
    return ok && mem(out, "lora_grad_add", in_elems * ACT * 3);
}

static lora_site lora_at(const sc__tf_config *c, double M, double batch, double in, double outf, bool row, bool expert) {
    return (lora_site){.M = M, .batch = batch, .in = in, .out = outf, .t = expert ? c->etp : c->tp, .row = row,
                       .expert = expert};
}

/* GEMM names of an FFN: fc1, fc2, then fc2 dgrad/wgrad, fc1 dgrad/wgrad. */
static const char *const dense_names[] = {"mlp_fc1", "mlp_fc2", "mlp_fc2_dgrad", "mlp_fc2_wgrad", "mlp_fc1_dgrad", "mlp_fc1_wgrad"};
static const char *const expert_names[] = {"expert_fc1",       "expert_fc2",       "expert_fc2_dgrad",
                                           "expert_fc2_wgrad", "expert_fc1_dgrad", "expert_fc1_wgrad"};
static const char *const shared_names[] = {"shared_fc1",       "shared_fc2",       "shared_fc2_dgrad",
                                           "shared_fc2_wgrad", "shared_fc1_dgrad", "shared_fc1_wgrad"};

/* An FFN's forward over M tokens in each of `batch` groups (the experts on
 * this GPU as one grouped GEMM, or 1), f of its columns on this GPU. The
 * grouped GEMM is timed as a batched one of the per-expert shape: the
 * kernel cost model's thin-operand term (kernel_cost.h) is what charges an
 * expert that sees few tokens. */
/* An FFN's two adapter sites: fc1 (column-parallel) and fc2 (row-parallel),
 * over the whole FFN (f of its columns on each of t GPUs). */
static void ffn_sites(const sc__tf_config *c, const dims *d, double M, double f, double batch, const char *const *nm,
                      lora_site *fc1, lora_site *fc2) {
    bool expert = nm == expert_names;
    double t = expert ? c->etp : c->tp;
    *fc1 = lora_at(c, M, batch, d->h, f * t * d->g, false, expert);
    *fc2 = lora_at(c, M, batch, f * t, d->h, true, expert);
}

/* tp: the dense MLP, whose fc1 and fc2 carry the layer's tensor-parallel
 * communication (col_fwd .. col_bwd; M is then every token, batch 1); the
 * experts and the shared experts have theirs around them (mlp_fwd). */
static bool ffn_fwd(const sc__tf_config *c, const dims *d, double M, double f, double batch,
                    const char *const *nm, bool tp, sc__vec *out) {
    double X = M * batch;
    lora_site fc1, fc2;
    ffn_sites(c, d, M, f, batch, nm, &fc1, &fc2);
    bool ok = tp ? col_fwd(out, c, d, nm[0], f * d->g, true)
                 : fp8_cast(out, c, X * d->h) && gemm(out, c, nm[0], M, f * d->g, d->h, batch);
    ok = ok && lora_fwd(c, &fc1, out);
    ok = ok && mem(out, c->gated ? "swiglu" : "bias_gelu", X * f * ACT * (d->g + 1));
    ok = ok && (tp ? row_fwd(out, c, d, nm[1], f) : fp8_cast(out, c, X * f) && gemm(out, c, nm[1], M, d->h, f, batch));
    return ok && lora_fwd(c, &fc2, out);
}

static bool ffn_bwd(const sc__tf_config *c, const dims *d, double M, double f, double batch,
                    const char *const *nm, bool tp, sc__vec *out) {
    double X = M * batch;
    lora_site fc1, fc2;
    ffn_sites(c, d, M, f, batch, nm, &fc1, &fc2);
    bool ok = lora_bwd(c, &fc2, out);
    ok = ok && (tp ? row_bwd(out, c, d, nm[2], nm[3], f)
                   : fp8_cast(out, c, X * d->h) && gemm(out, c, nm[2], M, f, d->h, batch) &&
                         wgrad(out, c, nm[3], f, d->h, M, batch));
    ok = ok && mem(out, c->gated ? "swiglu_bwd" : "bias_gelu_bwd", X * f * ACT * (d->g + 2));
    ok = ok && lora_bwd(c, &fc1, out);
    if (tp) return ok && col_bwd(out, c, d, nm[4], nm[5], f * d->g, true);
    ok = ok && fp8_cast(out, c, X * f * d->g);
    ok = ok && gemm(out, c, nm[4], M, d->h, f * d->g, batch);
    return ok && wgrad(out, c, nm[5], f * d->g, d->h, M, batch);
}

/* A mixture-of-experts layer on one GPU, token counts balanced (every
 * expert gets its share of the top-k assignments; no capacity factor, no
 * dropping). With etp = tp > 1 the tokens are gathered over the
 * tensor-parallel group first and each expert is split by tp like a dense
 * MLP; with etp 1 the sequence-parallel shard is routed as it is and each
 * expert is whole. R: tokens this GPU routes; local: experts on it; M:
 * tokens each of them computes; f: its FFN columns here. */
typedef struct moe_dims {
    double R, local, M, f, a2a;
} moe_dims;

static moe_dims moe_of(const sc__tf_config *c, const dims *d) {
    moe_dims m;
    double k = c->topk;
    m.R = c->etp > 1 ? d->T : d->Tn;
    m.local = (double)c->experts / c->ep;
    m.M = d->T / d->t * k * c->etp / m.local;
    m.f = (double)c->moe_ffn / c->etp;
    /* dispatch and combine each move this GPU's k x tokens x hidden */
    m.a2a = d->T / d->t * k * d->h * ACT;
    return m;
}

/* ------------------------------------------------------------ token dispatch */

/* The chance that none of k experts drawn without replacement from a pool
 * of `pool` falls among `bin` of them. */
static double miss_all(double pool, double bin, double k) {
    double q = 1;
    for (double i = 0; i < k; i++) {
        if (pool - bin - i <= 0) return 0;
        q *= (pool - bin - i) / (pool - i);
    }
    return q;
}

/* The chance that a bin of `bin` consecutive experts holds one of a
 * token's experts. Without groups the k are drawn from all E. With
 * groups (G of E/G experts, gk of them chosen at random, the k drawn from
 * the chosen), a bin inside one group is hit if its group is chosen and an
 * expert falls in it; a bin of j whole groups sums over how many of them
 * were chosen (hypergeometric). A bin that straddles groups (a GPU's or a
 * node's experts that neither hold whole groups nor lie within one) is
 * counted as if routing were not limited. */
static double bin_hit(const sc__tf_config *c, double bin) {
    double E = c->experts, k = c->topk;
    double G = c->router_groups, gk = c->router_group_topk, per = G > 0 ? E / G : 0, pool = gk * per;
    bool nested = G > 0 && (fmod(per, bin) == 0 || fmod(bin, per) == 0);
    if (!nested) return 1 - miss_all(E, bin, k);
    if (bin <= per) return gk / G * (1 - miss_all(pool, bin, k));
    double j0 = bin / per, hit = 0;
    for (double j = 1; j <= j0 && j <= gk; j++) {
        if (G - j0 < gk - j) continue; /* too few groups outside the bin */
        /* P(j of the bin's j0 groups among the gk chosen of G) */
        double p = exp(lgamma(j0 + 1) - lgamma(j + 1) - lgamma(j0 - j + 1) + lgamma(G - j0 + 1) - lgamma(gk - j + 1) -
                       lgamma(G - j0 - gk + j + 1) - (lgamma(G + 1) - lgamma(gk + 1) - lgamma(G - gk + 1)));
        hit += p * (1 - miss_all(pool, j * per, k));
    }
    return hit;
}

void sc__tf_dispatch_fanout(const sc__tf_config *c, uint32_t nodes, double *nodes_hit, double *gpus_hit) {
    double E = c->experts, M = nodes ? nodes : 1, k = c->topk;
    *nodes_hit = fmin(M * bin_hit(c, E / M), fmin(M, k));
    *gpus_hit = fmin(c->ep * bin_hit(c, E / c->ep), fmin(c->ep, k));
}

/* An all-to-all of the dispatch or combine: DeepEP and HybridEP mark it
 * deduplicating (timed in model.c from sc__tf_dispatch_fanout). */
static bool ep_a2a(sc__vec *out, const sc__tf_config *c, const char *name, double bytes) {
    if (c->ep < 2) return true;
    sc__tf_op op = coll_op(name, SC_C_ALL_TO_ALL, SC__COMM_EP, bytes, 0);
    op.dedup = c->dispatcher != SC__DISP_ALLTOALL;
    return push(out, &op);
}

/* Router (logits GEMM, softmax and top-k over fp32 logits), permutation
 * into expert order, the all-to-all dispatch, the experts, the all-to-all
 * combine and the weighted unpermutation. */
static bool moe_fwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    moe_dims m = moe_of(c, d);
    double k = c->topk, E = c->experts;
    bool ok = gemm(out, c, "moe_router", m.R, E, d->h, 1);
    ok = ok && mem(out, "moe_topk", m.R * E * 4 * 3);
    ok = ok && mem(out, "moe_permute", m.R * k * d->h * ACT * 2);
    ok = ok && ep_a2a(out, c, "ep_dispatch_all_to_all", m.a2a);
    ok = ok && ffn_fwd(c, d, m.M, m.f, m.local, expert_names, false, out);
    ok = ok && ep_a2a(out, c, "ep_combine_all_to_all", m.a2a);
    return ok && mem(out, "moe_unpermute", m.R * k * d->h * ACT * 2);
}

static bool moe_bwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    moe_dims m = moe_of(c, d);
    double k = c->topk, E = c->experts;
    bool ok = mem(out, "moe_unpermute_bwd", m.R * k * d->h * ACT * 2);
    ok = ok && ep_a2a(out, c, "ep_combine_all_to_all_bwd", m.a2a);
    ok = ok && ffn_bwd(c, d, m.M, m.f, m.local, expert_names, false, out);
    ok = ok && ep_a2a(out, c, "ep_dispatch_all_to_all_bwd", m.a2a);
    ok = ok && mem(out, "moe_permute_bwd", m.R * k * d->h * ACT * 2);
    ok = ok && mem(out, "moe_topk_bwd", m.R * E * 4 * 3);
    return ok && gemm(out, c, "moe_router_bwd", m.R, d->h, E, c->lora_rank ? 1 : 2); /* dgrad (+ wgrad) */
}

/* The MLP block: a dense MLP, or the experts beside the shared experts
 * (tensor-parallel like a dense MLP). */
static bool mlp_fwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    if (!c->experts)
        return ffn_fwd(c, d, d->T, d->f / d->t, 1, dense_names, true, out);
    /* with etp = tp the tokens are gathered once for the shared and the
     * routed experts; else the shared experts are a dense MLP's linears */
    bool gathered = c->etp > 1, ok = true;
    if (gathered) ok = tp_in(c, d, false, out);
    if (c->shared_ffn) ok = ok && ffn_fwd(c, d, d->T, c->shared_ffn / d->t, 1, shared_names, !gathered, out);
    ok = ok && moe_fwd(c, d, out);
    return ok && (!gathered || tp_out(c, d, false, out));
}

static bool mlp_bwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    if (!c->experts)
        return ffn_bwd(c, d, d->T, d->f / d->t, 1, dense_names, true, out);
    bool gathered = c->etp > 1, ok = true;
    if (gathered) ok = tp_out(c, d, true, out);
    ok = ok && moe_bwd(c, d, out);
    if (c->shared_ffn) ok = ok && ffn_bwd(c, d, d->T, c->shared_ffn / d->t, 1, shared_names, !gathered, out);
    return ok && (!gathered || tp_in(c, d, true, out));
}

/* ------------------------------------------------------------ latent attention */

/* Multi-head latent attention as Megatron-core's MLASelfAttention runs it
 * (megatron/core/transformer/multi_latent_attention.py, the TE layer spec
 * of gpt_layer_specs.py): the q and kv down projections are TELinear
 * "duplicated" (every tensor-parallel rank holds them whole and runs them
 * on its sequence-parallel shard, no communication before them); the
 * rope part of k (qk_rope_dim) is all-gathered over the sequence; each
 * compressed tensor goes through its norm fused into a column-parallel up
 * projection (TELayerNormColumnParallelLinear: the sequence all-gather of
 * the q_lora / kv_lora wide input, then heads / t of the output); rope is
 * applied to q's and k's positional part by the fused MLA rope kernels
 * (fused_mla_yarn_rope_apply.py), which also assemble q = [q_nope, q_pe]
 * and k = [k_nope, k_pe] and split v out of the kv up projection; the
 * attention core runs with qk heads of qk_dim + qk_rope_dim and v heads of
 * v_dim; the output projection is row-parallel like any other. */
typedef struct mla_dims {
    double nt;        /* heads on this GPU */
    double qkt, qk_v; /* per head: q/k width, kv up projection's (qk + v) */
    double Td;        /* tokens the down projections see */
} mla_dims;

static mla_dims mla_of(const sc__tf_config *c, const dims *d) {
    mla_dims m;
    m.nt = (double)c->heads / c->tp;
    m.qkt = (double)c->qk_dim + c->qk_rope_dim;
    m.qk_v = (double)c->qk_dim + c->v_dim;
    m.Td = d->Tn;
    return m;
}

/* The up projections and rope (what mla_up_proj recomputation runs
 * again): the sequence all-gather, the norm, the GEMM, for q then kv. */
static bool mla_up_fwd(const sc__tf_config *c, const dims *d, const mla_dims *m, sc__vec *out) {
    double ql = c->q_lora, kl = c->kv_lora;
    bool ok = true;
    if (c->q_lora) {
        ok = ok && mem(out, "mla_q_layernorm", m->Td * ql * ACT * 2);
        ok = ok && tp_in_bytes(c, d->T * ql * ACT, false, out);
        ok = ok && fp8_cast(out, c, d->T * ql);
        ok = ok && gemm(out, c, "mla_q_up_proj", d->T, m->nt * m->qkt, ql, 1);
    } else {
        ok = ok && tp_in(c, d, false, out);
        ok = ok && fp8_cast(out, c, d->T * d->h);
        ok = ok && gemm(out, c, "mla_q_proj", d->T, m->nt * m->qkt, d->h, 1);
    }
    ok = ok && mem(out, "mla_kv_layernorm", m->Td * kl * ACT * 2);
    ok = ok && tp_in_bytes(c, d->T * kl * ACT, false, out);
    ok = ok && fp8_cast(out, c, d->T * kl);
    ok = ok && gemm(out, c, "mla_kv_up_proj", d->T, m->nt * m->qk_v, kl, 1);
    /* q read and written; kv and k_pe read, k and v written */
    ok = ok && mem(out, "mla_rope_q", d->T * m->nt * m->qkt * ACT * 2);
    return ok && mem(out, "mla_rope_kv", d->T * (m->nt * (m->qk_v + m->qkt + c->v_dim) + c->qk_rope_dim) * ACT);
}

/* Fused causal attention with qk heads of qkt and v heads of v_dim: the
 * s x s products are qkt wide (QK^T) and v_dim wide (PV), half computed;
 * backward 2.5 x forward as for other heads. */
static bool mla_core(const sc__tf_config *c, const dims *d, const mla_dims *m, bool bwd, sc__vec *out) {
    double qk = m->nt * m->qkt, v = m->nt * c->v_dim;
    double fwd = 2.0 * d->T * d->s_kv * (qk + v) * 0.5;
    double io = d->T * (2 * qk + 2 * v) * ACT;
    return bwd ? attn(out, "flash_attn_bwd", 2.5 * fwd, 2 * io) : attn(out, "flash_attn_fwd", fwd, io);
}

static bool mla_fwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    mla_dims m = mla_of(c, d);
    double v = m.nt * c->v_dim, kd = (double)c->kv_lora + c->qk_rope_dim;
    bool ok = fp8_cast(out, c, m.Td * d->h);
    if (c->q_lora) ok = ok && gemm(out, c, "mla_q_down_proj", m.Td, c->q_lora, d->h, 1);
    ok = ok && gemm(out, c, "mla_kv_down_proj", m.Td, kd, d->h, 1);
    if (c->sp && c->tp > 1)
        ok = ok && coll(out, "mla_k_pos_all_gather", SC_C_ALL_GATHER, SC__COMM_TP, d->T * c->qk_rope_dim * ACT, 0);
    ok = ok && mla_up_fwd(c, d, &m, out);
    ok = ok && mla_core(c, d, &m, false, out);
    ok = ok && fp8_cast(out, c, d->T * v);
    ok = ok && gemm(out, c, "attn_proj", d->T, d->h, v, 1);
    return ok && tp_out(c, d, false, out);
}

static bool mla_bwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    mla_dims m = mla_of(c, d);
    double v = m.nt * c->v_dim, kd = (double)c->kv_lora + c->qk_rope_dim, ql = c->q_lora, kl = c->kv_lora;
    bool ok = tp_out(c, d, true, out);
    ok = ok && fp8_cast(out, c, d->T * d->h);
    ok = ok && gemm(out, c, "attn_proj_dgrad", d->T, v, d->h, 1);
    ok = ok && gemm(out, c, "attn_proj_wgrad", v, d->h, d->T, 1);
    ok = ok && mla_core(c, d, &m, true, out);
    ok = ok && mem(out, "mla_rope_kv_bwd", d->T * (m.nt * (m.qk_v + m.qkt + c->v_dim) + c->qk_rope_dim) * ACT);
    ok = ok && mem(out, "mla_rope_q_bwd", d->T * m.nt * m.qkt * ACT * 2);
    ok = ok && fp8_cast(out, c, d->T * m.nt * m.qk_v);
    ok = ok && gemm(out, c, "mla_kv_up_proj_dgrad", d->T, kl, m.nt * m.qk_v, 1);
    ok = ok && gemm(out, c, "mla_kv_up_proj_wgrad", m.nt * m.qk_v, kl, d->T, 1);
    ok = ok && tp_in_bytes(c, d->T * kl * ACT, true, out);
    ok = ok && mem(out, "mla_kv_layernorm_bwd", m.Td * kl * ACT * 3);
    ok = ok && fp8_cast(out, c, d->T * m.nt * m.qkt);
    if (c->q_lora) {
        ok = ok && gemm(out, c, "mla_q_up_proj_dgrad", d->T, ql, m.nt * m.qkt, 1);
        ok = ok && gemm(out, c, "mla_q_up_proj_wgrad", m.nt * m.qkt, ql, d->T, 1);
        ok = ok && tp_in_bytes(c, d->T * ql * ACT, true, out);
        ok = ok && mem(out, "mla_q_layernorm_bwd", m.Td * ql * ACT * 3);
    } else {
        ok = ok && gemm(out, c, "mla_q_proj_dgrad", d->T, d->h, m.nt * m.qkt, 1);
        ok = ok && gemm(out, c, "mla_q_proj_wgrad", m.nt * m.qkt, d->h, d->T, 1);
        ok = ok && tp_in(c, d, true, out);
    }
    if (c->sp && c->tp > 1)
        ok = ok && coll(out, "mla_k_pos_reduce_scatter", SC_C_REDUCE_SCATTER, SC__COMM_TP, d->T * c->qk_rope_dim * ACT, 0);
    ok = ok && fp8_cast(out, c, m.Td * (kd + ql));
    ok = ok && gemm(out, c, "mla_kv_down_proj_dgrad", m.Td, d->h, kd, 1);
    ok = ok && gemm(out, c, "mla_kv_down_proj_wgrad", kd, d->h, m.Td, 1);
    if (c->q_lora) {
        ok = ok && gemm(out, c, "mla_q_down_proj_dgrad", m.Td, d->h, ql, 1);
        ok = ok && gemm(out, c, "mla_q_down_proj_wgrad", ql, d->h, m.Td, 1);
    }
    return ok;
}

/* Parameters of latent attention (no biases: Megatron builds every MLA
 * linear with bias=False): down projections with their norms, up
 * projections, output projection; per GPU the down projections and norms
 * are whole, the rest split by t. */
static double mla_params_split(const sc__tf_config *c, double t) {
    double h = c->hidden, n = c->heads, ql = c->q_lora, kl = c->kv_lora;
    double qkt = (double)c->qk_dim + c->qk_rope_dim;
    double whole = h * (kl + c->qk_rope_dim) + kl + (ql ? h * ql + ql : 0);
    double split = (ql ? ql : h) * n * qkt + kl * n * ((double)c->qk_dim + c->v_dim) + n * c->v_dim * h;
    return whole + split / t;
}

/* FSDP: a module's parameters (`params` on this GPU after TP) gathered
 * before each use, its gradients reduce-scattered after its backward. */
static bool fsdp_scatter_of(const sc__tf_config *c, double params, sc__vec *out) {
    if (!c->fsdp || c->dp * c->cp < 2) return true;
    return coll(out, "fsdp_reduce_scatter", SC_C_REDUCE_SCATTER, SC__COMM_DP, params * sc__tf_grad_bytes(c), 255);
}

static bool fsdp_gather_of(const sc__tf_config *c, double params, sc__vec *out) {
    if (!c->fsdp || c->dp * c->cp < 2) return true;
    sc__tf_op op = coll_op("fsdp_all_gather", SC_C_ALL_GATHER, SC__COMM_DP, params * ACT, 1);
    op.prefetch = 1;
    return push(out, &op);
}

static bool fsdp_scatter(const sc__tf_config *c, sc__vec *out) { return fsdp_scatter_of(c, sc__tf_layer_params(c) / c->tp, out); }
static bool fsdp_gather(const sc__tf_config *c, sc__vec *out) { return fsdp_gather_of(c, sc__tf_layer_params(c) / c->tp, out); }


/* ------------------------------------------------------------ Mamba-2 */

/* The Mamba-2 mixer on one GPU as Megatron-core's MambaMixer trains it
 * (ssm/mamba_mixer.py, use_mamba_mem_eff_path: mamba_ssm's
 * mamba_split_conv1d_scan_combined). Tensor parallelism splits heads and
 * groups by t (in_proj column-, out_proj row-parallel). Per token on this
 * GPU: X = d_inner / t elements of x (and of z, y, dy), BC = groups x
 * state / t of B (and of C), Hd = heads / t of dt (and dA), S = (heads /
 * t) x head_dim x state / chunk of chunk states, CB = groups / t x chunk
 * of the chunks' C^T B; n_in = 2 d_inner + 2 groups state + heads
 * outputs of in_proj (z, x, B, C, dt), conv = d_inner + 2 groups state
 * channels of the causal conv1d. */
typedef struct mamba_dims {
    double X, BC, Hd, S, CB, n_in, conv;
    double hp, P, N, Q, G; /* heads and groups on this GPU, head dim, state, chunk */
} mamba_dims;

static mamba_dims mamba_of(const sc__tf_config *c) {
    mamba_dims m;
    double t = c->tp;
    m.P = c->mamba_head_dim;
    m.N = c->mamba_state;
    m.Q = c->mamba_chunk;
    m.hp = c->mamba_heads / t;
    m.G = c->mamba_groups / t;
    m.X = m.hp * m.P;
    m.BC = m.G * m.N;
    m.Hd = m.hp;
    m.S = m.hp * m.P * m.N / m.Q;
    m.CB = m.G * m.Q;
    m.n_in = 2 * m.X + 2 * m.BC + m.Hd;
    m.conv = m.X + 2 * m.BC;
    return m;
}

/* One kernel of the chunked SSD scan (mamba_ssm ops/triton/ssd_*.py):
 * its tensor-core FLOPs and the bytes it reads and writes, per token of
 * this GPU. The Triton kernels tile their products through shared memory
 * (tl.dot), like flash attention: timed as attention-class work, at the
 * flash-attention efficiency measured on H100 (roofline.c) or by its
 * bytes, whichever is longer. With Nemotron-H's sizes the bytes decide
 * (the chunk states, written in fp32 and passed on in bf16, weigh most):
 * the scan is memory-bound. A kernel without products is memory work. */
static bool ssd(sc__vec *out, const char *name, double T, double flops, double bytes) {
    return flops > 0 ? attn(out, name, T * flops, T * bytes) : mem(out, name, T * bytes);
}

/* FLOPs per token of the SSD's products (Dao & Gu 2024, sec. 6; the
 * kernels of ssd_combined.py): the chunks' states B^T x and the output
 * from them C h, 2 heads head_dim state each; the intra-chunk scores C^T B
 * per group, 2 chunk state; the scores times x, causal within the chunk
 * (the kernel stops at the diagonal block): chunk head_dim per head. */
#define SSD_STATE(m) (2 * (m)->hp * (m)->P * (m)->N)
#define SSD_CB(m) (2 * (m)->G * (m)->Q * (m)->N)
#define SSD_SCORES_X(m) ((m)->hp * (m)->P * (m)->Q)

/* The forward of _mamba_chunk_scan_combined_fwd: dt's softplus and the
 * decays' cumulative sums (fp32), the chunk states (fp32), their passing
 * from chunk to chunk (written in bf16) and C^T B (fp32); the backward
 * runs these again. */
static bool ssd_states(sc__vec *out, const mamba_dims *m, double T) {
    bool ok = ssd(out, "ssd_chunk_cumsum", T, 0, m->Hd * (2 + 4 + 4));
    ok = ok && ssd(out, "ssd_chunk_state", T, SSD_STATE(m), 2 * m->BC + 2 * m->X + 8 * m->Hd + 4 * m->S);
    ok = ok && ssd(out, "ssd_state_passing", T, 0, m->S * (4 + 2));
    return ok && ssd(out, "ssd_bmm_chunk", T, SSD_CB(m), 4 * m->BC + 4 * m->CB);
}

/* Then the output (y and its gating by silu(z), both kept): reads C^T B,
 * x, C, the states, dt and the decays, z. */
static bool ssd_fwd(sc__vec *out, const mamba_dims *m, double T) {
    return ssd_states(out, m, T) && ssd(out, "ssd_chunk_scan", T, SSD_SCORES_X(m) + SSD_STATE(m),
                                        4 * m->CB + 2 * m->X + 2 * m->BC + 2 * m->S + 8 * m->Hd + 3 * 2 * m->X);
}

/* _mamba_chunk_scan_combined_bwd: the forward's cumsum, C^T B, states and
 * their passing again, then the gate's gradient, the states' gradients
 * and their passing back, dx (with ddt), dB, dC, d(C^T B) and its two
 * products back to B and C, the decays' gradients from the scores and
 * from the states, and the cumsum's backward. */
static bool ssd_bwd(sc__vec *out, const mamba_dims *m, double T) {
    bool ok = ssd_states(out, m, T);
    ok = ok && ssd(out, "ssd_chunk_scan_bwd_dz", T, 0, 6 * 2 * m->X);
    ok = ok && ssd(out, "ssd_chunk_scan_bwd_dstates", T, SSD_STATE(m), 2 * m->BC + 4 * m->Hd + 2 * m->X + 4 * m->S);
    ok = ok && ssd(out, "ssd_state_passing_bwd", T, 0, m->S * (4 + 2 + 4));
    ok = ok && ssd(out, "ssd_chunk_scan_chunk_state_bwd_dx", T, SSD_SCORES_X(m) + SSD_STATE(m),
                   2 * m->X + 2 * m->BC + 4 * m->CB + 2 * m->X + 4 * m->S + 8 * m->Hd + 2 * m->X + 4 * m->Hd);
    ok = ok && ssd(out, "ssd_chunk_state_bwd_db", T, SSD_STATE(m), 2 * m->X + 4 * m->S + 8 * m->Hd + 2 * m->BC + 4 * m->Hd);
    ok = ok && ssd(out, "ssd_chunk_scan_bwd_dc", T, SSD_STATE(m), 2 * m->S + 2 * m->X + 4 * m->Hd + 4 * m->BC + 4 * m->Hd);
    ok = ok && ssd(out, "ssd_chunk_scan_bwd_dcb", T, SSD_SCORES_X(m), 4 * m->X + 8 * m->Hd + 4 * m->CB);
    ok = ok && ssd(out, "ssd_bmm_chunk_bwd_db", T, SSD_CB(m), 6 * m->BC + 4 * m->CB);
    ok = ok && ssd(out, "ssd_bmm_chunk_bwd_dc", T, SSD_CB(m), 6 * m->BC + 4 * m->CB);
    ok = ok && ssd(out, "ssd_chunk_scan_bwd_ddacs", T, SSD_SCORES_X(m), 4 * m->X + 8 * m->Hd + 4 * m->CB + 4 * m->Hd);
    ok = ok && ssd(out, "ssd_chunk_state_bwd_ddacs", T, SSD_STATE(m), 2 * m->BC + 2 * m->X + 8 * m->Hd + 4 * m->S + 4 * m->Hd);
    return ok && ssd(out, "ssd_chunk_cumsum_bwd", T, 0, 16 * m->Hd);
}

/* The mixer between its norm and its residual add, forward: in_proj (one
 * GEMM to z, x, B, C, dt), the causal depthwise conv1d with SiLU over x, B,
 * C (causal_conv1d_fwd: read and written once, d_conv 4 taps from
 * registers), the SSD scan, the gated RMSNorm over y (Triton, per group;
 * read and written once), out_proj. With mbs > 1 the "l b d -> b l d"
 * rearranges before and after the scan copy zxBCdt and y (with one
 * sequence a micro-batch they are views). */
static bool mamba_fwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    mamba_dims m = mamba_of(c);
    double T = d->T;
    bool ok = col_fwd(out, c, d, "mamba_in_proj", m.n_in, true);
    if (c->mbs > 1) ok = ok && mem(out, "mamba_transpose", T * m.n_in * ACT * 2);
    ok = ok && mem(out, "mamba_conv1d", T * m.conv * ACT * 2);
    ok = ok && ssd_fwd(out, &m, T);
    if (c->mbs > 1) ok = ok && mem(out, "mamba_transpose", T * m.X * ACT * 2);
    ok = ok && mem(out, "mamba_gated_rmsnorm", T * m.X * ACT * 2);
    return ok && row_fwd(out, c, d, "mamba_out_proj", m.X);
}

/* Backward (MambaSplitConv1dScanCombinedFn.backward): out_proj's
 * gradients, the norm's, the conv1d again (its output is not kept), the
 * SSD's backward, the conv1d's (input and output gradient read, input
 * gradient written), in_proj's gradients. */
static bool mamba_bwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    mamba_dims m = mamba_of(c);
    double T = d->T;
    bool ok = row_bwd(out, c, d, "mamba_out_proj_dgrad", "mamba_out_proj_wgrad", m.X);
    ok = ok && mem(out, "mamba_gated_rmsnorm_bwd", T * m.X * ACT * 3);
    if (c->mbs > 1) ok = ok && mem(out, "mamba_transpose_bwd", T * m.X * ACT * 2);
    ok = ok && mem(out, "mamba_conv1d", T * m.conv * ACT * 2);
    ok = ok && ssd_bwd(out, &m, T);
    ok = ok && mem(out, "mamba_conv1d_bwd", T * m.conv * ACT * 3);
    if (c->mbs > 1) ok = ok && mem(out, "mamba_transpose_bwd", T * m.n_in * ACT * 2);
    return ok && col_bwd(out, c, d, "mamba_in_proj_dgrad", "mamba_in_proj_wgrad", m.n_in, true);
}

/* The attention block between its norm and its residual add: tensor-
 * parallel entry, QKV, the core, the projection, tensor-parallel exit, with
 * their LoRA adapters; or latent attention. */
static bool attn_fwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    if (c->mla) return mla_fwd(c, d, out);
    bool ok = col_fwd(out, c, d, "qkv", (d->q + 2 * d->kvd) / d->t, true);
    lora_site qkv = lora_at(c, d->T, 1, d->h, d->q + 2 * d->kvd, false, false);
    ok = ok && lora_fwd(c, &qkv, out);
    if (c->cp > 1)
        ok = ok && coll(out, "cp_kv_all_gather", SC_C_ALL_GATHER, SC__COMM_CP, (double)c->mbs * c->seq * 2 * d->kvd / d->t * ACT, 2);
    ok = ok && rope(out, c, d, false);
    ok = ok && attn_core(c, d, false, out);
    ok = ok && row_fwd(out, c, d, "attn_proj", d->q / d->t);
    lora_site proj = lora_at(c, d->T, 1, d->q, d->h, true, false);
    return ok && lora_fwd(c, &proj, out);
}

static bool attn_bwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    if (c->mla) return mla_bwd(c, d, out);
    lora_site proj = lora_at(c, d->T, 1, d->q, d->h, true, false);
    bool ok = lora_bwd(c, &proj, out);
    ok = ok && row_bwd(out, c, d, "attn_proj_dgrad", "attn_proj_wgrad", d->q / d->t);
    if (c->cp > 1)
        ok = ok && coll(out, "cp_dkv_reduce_scatter", SC_C_REDUCE_SCATTER, SC__COMM_CP,
                        (double)c->mbs * c->seq * 2 * d->kvd / d->t * ACT, 2);
    ok = ok && attn_core(c, d, true, out);
    ok = ok && rope(out, c, d, true);
    lora_site qkv = lora_at(c, d->T, 1, d->h, d->q + 2 * d->kvd, false, false);
    ok = ok && lora_bwd(c, &qkv, out);
    return ok && col_bwd(out, c, d, "qkv_dgrad", "qkv_wgrad", (d->q + 2 * d->kvd) / d->t, true);
}

/* Selective recomputation of the modules chosen (Megatron's
 * --recompute-modules; its default core_attn): the unfused attention core
 * (flash attention keeps no s x s tensor to drop), the MLA up projections
 * with their rope (mla_up_proj), the MLP of a dense layer (mlp). */
static bool selective(const sc__tf_config *c, const dims *d, sc__vec *out) {
    uint8_t mods = c->recompute_mods ? c->recompute_mods : SC__RCM_CORE_ATTN;
    bool attention = !(c->block & (SC__TFK_MAMBA | SC__TFK_NO_MIXER)), ok = true; /* a hybrid's layer may lack it */
    if ((mods & SC__RCM_CORE_ATTN) && c->attention == SC__ATTN_UNFUSED && attention) ok = attn_core(c, d, false, out);
    if ((mods & SC__RCM_MLA_UP) && c->mla && attention) {
        mla_dims m = mla_of(c, d);
        ok = ok && mla_up_fwd(c, d, &m, out);
    }
    if ((mods & SC__RCM_MLP) && !c->experts && !(c->block & SC__TFK_NO_MLP))
        ok = ok && ffn_fwd(c, d, d->T, d->f / d->t, 1, dense_names, true, out);
    return ok;
}

/* A layer: its mixer block (norm, attention or Mamba-2, residual add) and
 * its MLP block (norm, MLP or experts, residual add), either absent in a
 * hybrid's layers (c->block). */
static bool layer_fwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    double norm = d->Tn * d->h * ACT * 2;
    bool ok = fsdp_gather(c, out);
    if (!(c->block & SC__TFK_NO_MIXER)) {
        ok = ok && mem(out, "layernorm", norm);
        ok = ok && ((c->block & SC__TFK_MAMBA) ? mamba_fwd(c, d, out) : attn_fwd(c, d, out));
        ok = ok && mem(out, "bias_dropout_add", d->Tn * d->h * (ACT * 3 + 1));
    }
    if (!(c->block & SC__TFK_NO_MLP)) {
        ok = ok && mem(out, "layernorm", norm);
        ok = ok && mlp_fwd(c, d, out);
        ok = ok && mem(out, "bias_dropout_add", d->Tn * d->h * (ACT * 3 + 1));
    }
    return ok;
}

static bool layer_bwd(const sc__tf_config *c, const dims *d, sc__vec *out) {
    double norm = d->Tn * d->h * ACT * 3;
    bool ok = fsdp_gather(c, out);
    if (!(c->block & SC__TFK_NO_MLP)) {
        ok = ok && mem(out, "bias_dropout_add_bwd", d->Tn * d->h * (ACT * 3 + 1));
        ok = ok && mlp_bwd(c, d, out);
        ok = ok && mem(out, "layernorm_bwd", norm);
    }
    if (!(c->block & SC__TFK_NO_MIXER)) {
        ok = ok && mem(out, "bias_dropout_add_bwd", d->Tn * d->h * (ACT * 3 + 1));
        ok = ok && ((c->block & SC__TFK_MAMBA) ? mamba_bwd(c, d, out) : attn_bwd(c, d, out));
        ok = ok && mem(out, "layernorm_bwd", norm);
    }
    ok = ok && fsdp_scatter(c, out);
    return ok;
}

bool sc__tf_layer_ops(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out) {
    dims d = dims_of(c);
    switch (ph) {
    case SC__PH_FWD: return layer_fwd(c, &d, out);
    case SC__PH_BWD: return layer_bwd(c, &d, out);
    case SC__PH_RECOMPUTE:
        if (c->recompute == SC__RC_FULL) return layer_fwd(c, &d, out);
        if (c->recompute == SC__RC_SELECTIVE) return selective(c, &d, out);
        return true;
    }
    return true;
}

bool sc__tf_embed_ops(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out) {
    dims d = dims_of(c);
    if (ph == SC__PH_FWD) return fsdp_gather_of(c, sc__tf_vocab_params(c), out) && mem(out, "embedding", d.Tn * d.h * ACT * 2);
    if (ph == SC__PH_BWD && c->lora_rank) return true; /* frozen: none */
    if (ph == SC__PH_BWD)
        return fsdp_gather_of(c, sc__tf_vocab_params(c), out) && mem(out, "embedding_bwd", d.Tn * d.h * (ACT + 4) * 2) &&
               fsdp_scatter_of(c, sc__tf_vocab_params(c), out);
    return true;
}

/* The loss's bytes an element of the b s x V/t logits, forward and
 * backward, by implementation (models/common/language_module/
 * language_module.py, compute_language_model_loss, picks one); the
 * one-hot work touches b s elements and is not counted.
 * - none: Megatron-core's vocab-parallel cross-entropy (tensor_parallel/
 *   cross_entropy.py; --cross-entropy-loss-fusion is off by default) runs
 *   in fp32, one pass each: forward .float() (read 2, write 4), max (read
 *   4), the max subtracted in place (8), exp (8), its sum (read 4), exp
 *   divided by the sum in place for the backward (8): 38; backward the
 *   saved softmax times the loss gradient in place (8), then autograd's
 *   cast to the 16-bit gradient of the output GEMM (read 4, write 2): 14.
 * - native: fusions/fused_cross_entropy.py, the same steps in three
 *   jit_fuser (torch.compile, core/jit.py) graphs: the cast fused with the
 *   max (read 2, write 4: 6); the max subtracted, exp and its sum in place
 *   (read 4, write 4) plus, because that graph also reduces over the
 *   tensor it mutates, Inductor's fresh copy written back to the input
 *   (read 4, write 4: the file's own note on in-place semantics, added
 *   when the later version split the graphs): 16; the division in place
 *   (8): 30. Backward one graph: the softmax read (4), scaled in place (4)
 *   and returned as a bf16 gradient (2), plus the copy-back of the
 *   scattered one-hot update (8): 18.
 * - te: TransformerEngine's parallel_cross_entropy (pytorch/triton/
 *   cross_entropy.py): online_softmax_kernel reads the 16-bit logits once
 *   (2), cross_entropy_kernel reads them again and writes the gradient in
 *   their place and dtype (4): 6; backward element_mul_kernel scales it in
 *   place by the per-token loss gradient (read 2, write 2): 4 (Megatron
 *   passes the unreduced loss, so the skip for a gradient of 1.0 does not
 *   apply). */
static const double ce_bytes[3][2] = {{38.0, 14.0}, {30.0, 18.0}, {6.0, 4.0}};

double sc__tf_ce_bytes(const sc__tf_config *c, bool backward) { return ce_bytes[c->ce_fusion < 3 ? c->ce_fusion : 0][backward]; }

bool sc__tf_head_ops(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out) {
    dims d = dims_of(c);
    double V = c->vocab;
    bool ok = true;
    double own = sc__tf_own_head(c) ? sc__tf_vocab_params(c) : 0;
    if (ph == SC__PH_FWD) {
        ok = ok && (!own || fsdp_gather_of(c, own, out));
        ok = ok && mem(out, "final_layernorm", d.Tn * d.h * ACT * 2);
        ok = ok && col_fwd(out, c, &d, "output_head", V / d.t, false);
        ok = ok && mem(out, "cross_entropy", d.T * V / d.t * sc__tf_ce_bytes(c, false));
        if (c->tp > 1) ok = ok && coll(out, "tp_loss_all_reduce", SC_C_ALL_REDUCE, SC__COMM_TP, d.T * 4 * 3, 0);
    } else if (ph == SC__PH_BWD) {
        ok = ok && (!own || fsdp_gather_of(c, own, out));
        ok = ok && mem(out, "cross_entropy_bwd", d.T * V / d.t * sc__tf_ce_bytes(c, true));
        ok = ok && col_bwd(out, c, &d, "output_head_dgrad", "output_head_wgrad", V / d.t, false);
        ok = ok && mem(out, "final_layernorm_bwd", d.Tn * d.h * ACT * 3);
        ok = ok && (!own || fsdp_scatter_of(c, own, out));
    }
    return ok;
}

/* Megatron-core's MultiTokenPredictionLayer (multi_token_prediction.py)
 * on the last stage, after the main model's last layer: the embedding of
 * the inputs shifted by one (the last stage holds a copy of the embedding
 * for it), RMSNorm of that (enorm) and of the hidden states (hnorm), their
 * concatenation, eh_proj (column-parallel 2h -> h: the sequence all-gather
 * of its 2h input, then the all-gather of its h / t output back to h),
 * one transformer layer of the last layer's kind, and the output head and
 * loss again (the main model's final norm and output weights). */
static bool mtp_fwd(const sc__tf_config *c, const sc__tf_config *kc, const dims *d, sc__vec *out) {
    dims kd = dims_of(kc);
    bool ok = mem(out, "mtp_embedding", d->Tn * d->h * ACT * 2);
    ok = ok && mem(out, "mtp_enorm", d->Tn * d->h * ACT * 2) && mem(out, "mtp_hnorm", d->Tn * d->h * ACT * 2);
    ok = ok && mem(out, "mtp_concat", d->Tn * 2 * d->h * ACT * 2);
    ok = ok && tp_in_bytes(c, d->T * 2 * d->h * ACT, false, out);
    ok = ok && fp8_cast(out, c, d->T * 2 * d->h);
    ok = ok && gemm(out, c, "mtp_eh_proj", d->T, d->h / d->t, 2 * d->h, 1);
    if (c->tp > 1) ok = ok && coll(out, "mtp_eh_proj_all_gather", SC_C_ALL_GATHER, SC__COMM_TP, d->T * d->h * ACT, 0);
    ok = ok && layer_fwd(kc, &kd, out);
    return ok && sc__tf_head_ops(c, SC__PH_FWD, out);
}

static bool mtp_bwd(const sc__tf_config *c, const sc__tf_config *kc, const dims *d, sc__vec *out) {
    dims kd = dims_of(kc);
    bool ok = sc__tf_head_ops(c, SC__PH_BWD, out);
    ok = ok && sc__tf_layer_ops(kc, SC__PH_RECOMPUTE, out);
    ok = ok && layer_bwd(kc, &kd, out);
    /* the backward of the sequence scatter that followed the gather */
    if (c->tp > 1 && c->sp) ok = ok && coll(out, "mtp_eh_proj_all_gather_bwd", SC_C_ALL_GATHER, SC__COMM_TP, d->Tn * d->h * ACT, 0);
    ok = ok && fp8_cast(out, c, d->T * d->h / d->t);
    ok = ok && gemm(out, c, "mtp_eh_proj_dgrad", d->T, 2 * d->h, d->h / d->t, 1);
    ok = ok && gemm(out, c, "mtp_eh_proj_wgrad", d->h / d->t, 2 * d->h, d->T, 1);
    ok = ok && tp_in_bytes(c, d->T * 2 * d->h * ACT, true, out);
    ok = ok && mem(out, "mtp_norms_bwd", d->Tn * d->h * ACT * 3 * 2);
    return ok && mem(out, "mtp_embedding_bwd", d->Tn * d->h * (ACT + 4) * 2);
}

bool sc__tf_mtp_ops(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out) {
    if (!c->mtp_layers || ph == SC__PH_RECOMPUTE) return true;
    dims d = dims_of(c);
    sc__tf_config kc;
    sc__tf_kind_config(c, sc__tf_layer_kind(c, c->layers - 1), &kc);
    bool ok = true;
    for (uint32_t i = 0; i < c->mtp_layers && ok; i++) ok = ph == SC__PH_FWD ? mtp_fwd(c, &kc, &d, out) : mtp_bwd(c, &kc, &d, out);
    return ok;
}

/* The step's end on this GPU, in Megatron-core's order:
 * - with 16-bit main grads (grad_reduce_in_fp32 off: distributed/
 *   distributed_data_parallel.py builds the buffer in the parameters'
 *   dtype), the optimizer's fp32 copy of its shard's gradients
 *   (optimizer/distrib_optimizer.py _copy_model_grads_to_main_grads:
 *   shard_main_param.grad = shard_model_grad.float(), a no-op on an fp32
 *   buffer; optimizer.py's Float16Optimizer does the same with
 *   main_grad.float()): read 2, write 4 a parameter;
 * - the gradient norm for clipping (optimizer/clip_grads.py,
 *   clip_grad_norm_fp32: apex's multi_tensor_l2norm reads each fp32 main
 *   gradient of the optimizer's shard once, 4 bytes a parameter; the
 *   rescale that follows only runs when the norm exceeds the clip, and is
 *   not counted);
 * - Adam on fp32 master weights: read master, grad, m, v (16 bytes), write
 *   master, m, v (12) and the 2-byte model copy: 30 bytes a parameter;
 *   the distributed optimizer's shard is 1 / (dp x cp) of the non-expert
 *   parameters and 1 / edp of the experts' (distributed/
 *   distributed_data_parallel.py builds the expert buffers over the
 *   expert-data-parallel group, and the optimizer shards each buffer over
 *   its own group);
 * - the zeroing of the gradient buffer before the next step's first
 *   micro-batch (distributed/param_and_grad_buffer.py: reset() runs
 *   grad_data.zero_() over the whole local buffer, not the shard; with
 *   FSDP the buffer is the shard): 4 bytes written a parameter, 2 with
 *   16-bit main grads. On the one compute stream its place at the step's
 *   start or end is the same. */
bool sc__tf_optimizer_ops(const sc__tf_config *c, double params, double expert, sc__vec *out) {
    double shard = (c->dist_opt || c->fsdp) ? (double)c->dp * c->cp : 1;
    double buffer = c->fsdp ? params / ((double)c->dp * c->cp) : params;
    double local = params / shard;
    if (expert > 0 && c->dist_opt && !c->fsdp) local = (params - expert) / shard + expert / sc__tf_edp(c);
    bool ok = c->grad_fp32 || mem(out, "main_grad_cast", local * (2 + 4));
    return ok && mem(out, "grad_norm", local * 4) && mem(out, "adam", local * 30) &&
           mem(out, "zero_grad_buffer", buffer * sc__tf_grad_bytes(c));
}

/* ------------------------------------------------------------ counts */

/* Parameters of a layer: attention (QKV, projection, biases), MLP (dense,
 * or experts + router), two norms. */
static double attn_params(const sc__tf_config *c) {
    if (c->mla) return mla_params_split(c, 1);
    dims d = dims_of(c);
    double h = d.h, q = d.q, kvd = d.kvd;
    return h * (q + 2 * kvd) + (q + 2 * kvd) + q * h + h;
}

static double mlp_params_one(const sc__tf_config *c, double f) {
    double h = c->hidden, g = c->gated ? 2 : 1;
    return f ? h * f * g + f * g + f * h + h : 0;
}

/* The experts of a layer with their router. */
static double moe_params(const sc__tf_config *c) {
    return mlp_params_one(c, c->moe_ffn) * c->experts + (double)c->hidden * c->experts;
}

/* MambaMixer's parameters: in_proj (hidden x n_in, no bias), the
 * depthwise conv1d's weight (d_conv = 4 taps, MambaMixer's default) and
 * bias over x, B and C, dt_bias, A_log and D (one a head), the gated
 * norm's weight (d_inner), out_proj (d_inner x hidden, no bias). */
#define MAMBA_CONV 4.0
double sc__tf_mamba_params(const sc__tf_config *c) {
    double h = c->hidden, di = (double)c->mamba_heads * c->mamba_head_dim, gn = (double)c->mamba_groups * c->mamba_state;
    double H = c->mamba_heads, conv = di + 2 * gn;
    return h * (2 * di + 2 * gn + H) + conv * (MAMBA_CONV + 1) + 3 * H + di + di * h;
}

/* training.py's mamba_layer_flops for one token: in_proj, the scan
 * ("7 d_in state", its own estimate) and out_proj, with d_in = 2 hidden
 * as Megatron writes it (whatever heads x head_dim is). */
double sc__tf_mamba_flops(const sc__tf_config *c) {
    double h = c->hidden, d_in = 2 * h, N = c->mamba_state;
    return 2 * h * (2 * d_in + 2.0 * c->mamba_groups * N + c->mamba_heads) + 7 * d_in * N + 2 * d_in * h;
}

static double mixer_params(const sc__tf_config *c) {
    return (c->block & SC__TFK_MAMBA) ? sc__tf_mamba_params(c) : attn_params(c);
}

/* Norms of a layer: one a block (weight and bias). */
static double norm_params(const sc__tf_config *c) {
    double blocks = 2 - !!(c->block & SC__TFK_NO_MIXER) - !!(c->block & SC__TFK_NO_MLP);
    return 2.0 * c->hidden * blocks;
}

double sc__tf_layer_params(const sc__tf_config *c) {
    double mlp = c->experts ? moe_params(c) + mlp_params_one(c, c->shared_ffn) : mlp_params_one(c, c->ffn);
    if (c->block & SC__TFK_NO_MLP) mlp = 0;
    double mixer = (c->block & SC__TFK_NO_MIXER) ? 0 : mixer_params(c);
    return mixer + mlp + norm_params(c);
}

double sc__tf_model_params(const sc__tf_config *c) {
    double emb = (double)c->vocab * c->hidden;
    double p = over_layers(c, 0, c->layers, sc__tf_layer_params) + emb * (c->tied ? 1 : 2) + 2.0 * c->hidden;
    return c->mtp_layers ? p + sc__tf_mtp_params(c) : p;
}

/* The MTP block: its layer (of the last layer's kind), eh_proj (2h x h)
 * and three norms (enorm, hnorm, its final norm), each layer of it. */
static double mtp_one(const sc__tf_config *c, double (*layer)(const sc__tf_config *), double t) {
    sc__tf_config kc;
    sc__tf_kind_config(c, sc__tf_layer_kind(c, c->layers - 1), &kc);
    double h = c->hidden;
    return layer(&kc) + 2 * h * h / t + 3 * 2 * h;
}

double sc__tf_mtp_params(const sc__tf_config *c) { return c->mtp_layers * mtp_one(c, sc__tf_layer_params, 1); }
double sc__tf_mtp_params_gpu(const sc__tf_config *c) { return c->mtp_layers * mtp_one(c, sc__tf_layer_params_gpu, c->tp); }

/* The routed experts' trainable parameters of a layer on one GPU. With
 * LoRA the experts are frozen and their adapters are reduced with the
 * rest over the data-parallel group (not the expert-data-parallel one: an
 * over-count for adapted experts, which no published row has). */
static double expert_params_gpu(const sc__tf_config *c) {
    return c->experts && !c->lora_rank ? mlp_params_one(c, c->moe_ffn) * c->experts / c->ep / c->etp : 0;
}

double sc__tf_layers_expert_params_gpu(const sc__tf_config *c, uint32_t l0, uint32_t l1) {
    return over_layers(c, l0, l1, expert_params_gpu);
}

double sc__tf_mtp_expert_params_gpu(const sc__tf_config *c) {
    if (!c->mtp_layers) return 0;
    sc__tf_config kc;
    sc__tf_kind_config(c, sc__tf_layer_kind(c, c->layers - 1), &kc);
    return c->mtp_layers * expert_params_gpu(&kc);
}

double sc__tf_stage_expert_params(const sc__tf_config *c, uint32_t stage) {
    double p = over_stage(c, stage, expert_params_gpu);
    return stage == c->pp - 1 ? p + sc__tf_mtp_expert_params_gpu(c) : p;
}

double sc__tf_attn_params(const sc__tf_config *c) { return attn_params(c); }

double sc__tf_layer_params_gpu(const sc__tf_config *c) {
    double mixer = c->mla ? mla_params_split(c, c->tp) : mixer_params(c) / c->tp;
    double per_layer = ((c->block & SC__TFK_NO_MIXER) ? 0 : mixer) + norm_params(c);
    if (c->block & SC__TFK_NO_MLP) return per_layer;
    if (c->experts)
        per_layer += mlp_params_one(c, c->moe_ffn) * c->experts / c->ep / c->etp + (double)c->hidden * c->experts +
                     mlp_params_one(c, c->shared_ffn) / c->tp;
    else
        per_layer += mlp_params_one(c, c->ffn) / c->tp;
    return per_layer;
}

double sc__tf_layers_params_gpu(const sc__tf_config *c, uint32_t l0, uint32_t l1) {
    return over_layers(c, l0, l1, sc__tf_layer_params_gpu);
}

/* LoRA adapters: r x (in + out) a linear layer, split by TP (A and B each
 * over one of their dimensions) like the base. */
static double adapter_mlp(const sc__tf_config *c, double f) {
    double h = c->hidden, g = c->gated ? 2 : 1;
    return f ? (double)c->lora_rank * ((h + g * f) + (f + h)) : 0;
}

static double adapter_attn(const sc__tf_config *c) {
    dims d = dims_of(c);
    return (double)c->lora_rank * ((d.h + d.q + 2 * d.kvd) + (d.q + d.h));
}

double sc__tf_layer_adapter_params(const sc__tf_config *c) {
    double mlp = c->experts ? adapter_mlp(c, c->moe_ffn) * c->experts + adapter_mlp(c, c->shared_ffn) : adapter_mlp(c, c->ffn);
    return adapter_attn(c) + mlp;
}

static double adapter_params_gpu(const sc__tf_config *c) {
    double p = adapter_attn(c) / c->tp;
    if (c->experts) return p + adapter_mlp(c, c->moe_ffn) * c->experts / c->ep / c->etp + adapter_mlp(c, c->shared_ffn) / c->tp;
    return p + adapter_mlp(c, c->ffn) / c->tp;
}

double sc__tf_layers_trainable_gpu(const sc__tf_config *c, uint32_t l0, uint32_t l1) {
    if (!c->lora_rank) return sc__tf_layers_params_gpu(c, l0, l1);
    return over_layers(c, l0, l1, adapter_params_gpu);
}

double sc__tf_stage_trainable(const sc__tf_config *c, uint32_t stage) {
    if (!c->lora_rank) return sc__tf_stage_params(c, stage);
    return over_stage(c, stage, adapter_params_gpu);
}

double sc__tf_stage_params(const sc__tf_config *c, uint32_t stage) {
    double p = over_stage(c, stage, sc__tf_layer_params_gpu);
    double emb = sc__tf_vocab_params(c);
    if (stage == 0) p += emb;
    if (stage == c->pp - 1 && sc__tf_own_head(c)) p += emb;
    if (stage == c->pp - 1 && c->mtp_layers) {
        p += sc__tf_mtp_params_gpu(c);
        if (c->pp > 1 && !c->tied) p += emb; /* the MTP block's copy of the embedding */
    }
    return p;
}

/* Adapter parameters one token passes through in a layer (experts: its
 * top-k and the shared ones). */
static double adapter_flops_params(const sc__tf_config *c) {
    double mlp = c->experts ? adapter_mlp(c, c->moe_ffn) * c->topk + adapter_mlp(c, c->shared_ffn) : adapter_mlp(c, c->ffn);
    return adapter_attn(c) + mlp;
}

/* Latent attention's forward FLOPs per token, as Megatron-LM's
 * num_floating_point_operations counts them (training.py, its
 * multi_latent_attention branch): the q and kv low-rank projections with
 * their norms, k's rope projection, the output projection, and the core
 * over the causal half of s x s (q.k over qk + rope, p.v over v). */
static double mla_flops(const sc__tf_config *c) {
    double h = c->hidden, n = c->heads, s = c->seq, qkt = (double)c->qk_dim + c->qk_rope_dim;
    double q = c->q_lora ? (double)c->q_lora * (h + n * qkt + 1) : h * n * qkt;
    double kv = (double)c->kv_lora * (h + n * ((double)c->qk_dim + c->v_dim) + 1) + h * c->qk_rope_dim;
    double o = n * c->v_dim * h;
    double core = s * n * qkt / 2 + s * n * c->v_dim / 2;
    return 2 * (q + kv + o + core);
}

/* One layer's forward FLOPs per token (attention over the full s x s,
 * whatever its window: the convention's). */
static double layer_flops(const sc__tf_config *c) {
    dims d = dims_of(c);
    double h = c->hidden, s = c->seq, g = c->gated ? 2 : 1, q = d.q, kvd = d.kvd;
    /* experts: top-k of the expert FFN, the shared experts' FFN, the router */
    double mlp = c->experts ? 2 * h * (g + 1) * ((double)c->moe_ffn * c->topk + c->shared_ffn) + 2 * h * c->experts
                            : 2 * h * (double)c->ffn * (g + 1);
    if (c->mla) return mla_flops(c) + mlp;
    return 2 * h * (q + 2 * kvd) + 2 * q * h + 4 * s * q + mlp;
}

/* A hybrid's layer as training.py's hybrid_flops counts it, per token:
 * attention 4 h p (h + h g / a + s / 2) (p = q / h, g the KV groups: the
 * projections and the causal core), an MLP 4 f h (x 3/2 gated), MoE the
 * top-k experts' and the shared experts' FFNs (no router), Mamba
 * mamba_layer_flops. */
static double hybrid_layer_flops(const sc__tf_config *c) {
    dims d = dims_of(c);
    double h = c->hidden, s = c->seq, g = c->gated ? 2 : 1, f = 0;
    double mixer = (c->block & SC__TFK_MAMBA) ? sc__tf_mamba_flops(c) : 4 * d.q * (h + h * c->kv_heads / c->heads + s / 2);
    if (c->block & SC__TFK_NO_MIXER) mixer = 0;
    if (!(c->block & SC__TFK_NO_MLP)) f = c->experts ? (double)c->moe_ffn * c->topk + c->shared_ffn : c->ffn;
    return mixer + 2 * h * f * (g + 1);
}

double sc__tf_model_flops(const sc__tf_config *c) {
    uint32_t n[SC__TF_KINDS] = {0};
    count_kinds(c, 0, c->layers, n);
    double tokens = (double)c->gbs * c->seq;
    double f = per_kind(c, n, c->hybrid[0] ? hybrid_layer_flops : layer_flops) + 2.0 * c->hidden * c->vocab;
    if (c->mtp_layers) {
        /* Megatron counts each MTP layer as one more layer of the last
         * one's kind, its norms and eh_proj (3h + 2h^2), and its logits */
        sc__tf_config kc;
        sc__tf_kind_config(c, sc__tf_layer_kind(c, c->layers - 1), &kc);
        double h = c->hidden;
        f += c->mtp_layers * (layer_flops(&kc) + 2 * (3 * h + 2 * h * h) + 2.0 * h * c->vocab);
    }
    if (!c->lora_rank) return 3.0 * tokens * f;
    /* an adapter's forward: 2 FLOPs a parameter a token (experts: top-k of them) */
    return tokens * (2.0 * f + 3.0 * 2.0 * per_kind(c, n, adapter_flops_params));
}

/* What latent attention keeps: the compressed q and kv before and after
 * their norms (the sequence shard), q, k and v after the up projections
 * and rope (dropped by mla_up_proj recomputation: Megatron's
 * CheckpointWithoutOutput frees them until the backward), and the core's
 * output (the output projection's input). */
static double mla_activations(const sc__tf_config *c, const dims *d) {
    mla_dims m = mla_of(c, d);
    double comp = m.Td * ((double)c->q_lora + c->kv_lora + c->qk_rope_dim) * ACT * 2;
    double qkv = d->T * m.nt * (2 * m.qkt + c->v_dim) * ACT;
    if (c->recompute == SC__RC_SELECTIVE && (c->recompute_mods & SC__RCM_MLA_UP)) qkv = 0;
    return comp + qkv + d->T * m.nt * c->v_dim * ACT;
}

/* Activation bytes one layer keeps for one micro-batch (Korthikanti et al.
 * sec. 4, generalised to GQA, any FFN and gated MLPs): 34 s b h + 5 a s^2 b
 * for MHA with f = 4 h, divided by t where tensor (and sequence)
 * parallelism splits it. */
/* A hybrid's layer, by its blocks: each keeps its norm's and its GEMM's
 * inputs and its residual dropout mask (5 s b h, split by t with sp), the
 * attention block its QKV and core output as above, the MLP block its
 * FFN's; a Mamba-2 mixer what mamba_split_conv1d_scan_combined saves
 * (in_proj's output zxBCdt; the conv output is recomputed) and the gated
 * output y and the norm's output (out_proj's input), d_inner each. */
/* The s x s scores unfused attention keeps without recomputation (the
 * 5 a s^2 b term), none with flash attention. */
static double unfused_scores(const sc__tf_config *c, const dims *d) {
    if (c->attention != SC__ATTN_UNFUSED || c->recompute != SC__RC_NONE) return 0;
    return 5.0 * c->heads * d->b * (double)c->seq / c->cp * d->s_kv / d->t;
}

/* Selective recomputation of a dense MLP drops its activations. */
static bool mlp_recomputed(const sc__tf_config *c) {
    return c->recompute == SC__RC_SELECTIVE && (c->recompute_mods & SC__RCM_MLP) && !c->experts;
}

static double hybrid_activations(const sc__tf_config *c) {
    dims d = dims_of(c);
    double sbh = d.T * d.h, split = c->sp ? d.t : 1, sum = 0;
    if (!(c->block & SC__TFK_NO_MIXER)) {
        sum += 5 * sbh / split;
        if (c->block & SC__TFK_MAMBA) {
            mamba_dims m = mamba_of(c);
            sum += d.T * (m.n_in + 2 * m.X) * ACT;
        } else {
            sum += d.T * (d.q + 2 * d.kvd) * ACT / d.t + 2 * sbh / d.t + unfused_scores(c, &d);
        }
    }
    if (!(c->block & SC__TFK_NO_MLP)) {
        double k = c->experts ? (double)c->topk * c->etp / c->tp : 1;
        double f = c->experts ? (double)c->moe_ffn * d.t / c->etp : d.f;
        double mlp = d.T * k * f * (d.g + 1) * ACT / d.t;
        if (c->experts) mlp += d.T * c->shared_ffn * (d.g + 1) * ACT / d.t;
        if (mlp_recomputed(c)) mlp = 0;
        sum += 5 * sbh / split + mlp;
    }
    return sum;
}

static double layer_activations(const sc__tf_config *c) {
    dims d = dims_of(c);
    double sbh = d.T * d.h, split = c->sp ? d.t : 1;
    if (c->recompute == SC__RC_FULL) return sbh * ACT / split;
    if (c->block) return hybrid_activations(c);
    double k = c->experts ? (double)c->topk * c->etp / c->tp : 1;
    double replicated = (4 + 2 + 1 + 2 + 1) * sbh / split; /* norm inputs, QKV and FC1 inputs, dropout masks */
    double attn = c->mla ? mla_activations(c, &d) : d.T * (d.q + 2 * d.kvd) * ACT / d.t + 2 * sbh / d.t;
    double f = c->experts ? (double)c->moe_ffn * d.t / c->etp : d.f;
    double mlp = d.T * k * f * (d.g + 1) * ACT / d.t;
    if (c->experts) mlp += d.T * c->shared_ffn * (d.g + 1) * ACT / d.t;
    if (mlp_recomputed(c)) mlp = 0;
    return replicated + attn + mlp + unfused_scores(c, &d);
}

void sc__tf_stage_memory(const sc__tf_config *c, uint32_t stage, sc__tf_memory *m) {
    memset(m, 0, sizeof *m);
    double p = sc__tf_stage_params(c, stage);
    double shard = (double)c->dp * c->cp;
    if (c->lora_rank) {
        /* the frozen base in 16 bits, beside the adapters; gradients (main
         * grads) and Adam's state for the adapters only */
        double a = sc__tf_stage_trainable(c, stage);
        m->weights = (p + a) * 2;
        m->grads = a * sc__tf_grad_bytes(c);
        m->optimizer = a * 12 / (c->dist_opt ? shard : 1);
    } else if (c->fsdp) {
        double layer = 0; /* the largest layer: two of them gathered */
        for (uint32_t l = 0; l < c->layers; l++) {
            sc__tf_config kc;
            sc__tf_kind_config(c, sc__tf_layer_kind(c, l), &kc);
            layer = fmax(layer, sc__tf_layer_params(&kc));
        }
        m->weights = p * 2 / shard + layer / c->tp * 2 * 2;
        m->grads = p * sc__tf_grad_bytes(c) / shard;
        m->optimizer = p * 12 / shard;
    } else {
        /* with 16-bit main grads the optimizer's fp32 copy of its shard
         * lives only through the step, when no activations are held: not
         * counted beside them */
        m->weights = p * 2;
        m->grads = p * sc__tf_grad_bytes(c);
        m->optimizer = p * 12 / (c->dist_opt ? shard : 1);
        double e = c->dist_opt ? sc__tf_stage_expert_params(c, stage) : 0;
        if (e > 0) m->optimizer = (p - e) * 12 / shard + e * 12 / sc__tf_edp(c);
    }
    uint32_t M = sc__tf_micro(c), P = c->pp;
    double inflight = P - stage < M ? P - stage : M;
    if (c->vp > 1) inflight *= 1.0 + (double)(P - 1) / ((double)P * c->vp);
    m->inflight = inflight;
    m->activations = over_stage(c, stage, layer_activations) * inflight;
    dims d = dims_of(c);
    if (stage == c->pp - 1) m->activations += d.T * c->vocab / d.t * 4; /* fp32 logits */
    if (stage == c->pp - 1 && c->mtp_layers) {
        sc__tf_config kc;
        sc__tf_kind_config(c, sc__tf_layer_kind(c, c->layers - 1), &kc);
        /* its layer and its logits, for each micro-batch in flight */
        m->activations += c->mtp_layers * (layer_activations(&kc) * inflight + d.T * c->vocab / d.t * 4);
    }
    m->total = m->weights + m->grads + m->optimizer + m->activations;
}
