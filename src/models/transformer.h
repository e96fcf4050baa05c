/*
 * transformer.h - a decoder-only transformer training step as work: the
 * configuration (model, parallelism, options, hardware), the kernels and
 * collectives of one layer's forward, backward and recomputation on one
 * GPU, those of the embedding, output head and loss and of the optimizer,
 * the model FLOPs by the Megatron papers' convention, and memory per GPU
 * by Korthikanti et al.'s activation formulas.
 *
 * Shapes are per GPU: tensor parallelism (t) splits heads and the FFN,
 * sequence parallelism splits the norms and dropouts by t, context
 * parallelism (c) splits the sequence, expert parallelism (e) the experts.
 * The graph builder (src/pipeline/model.c) times each kernel through a
 * sc__kernel_timer and each collective through the communication model.
 */
#ifndef SC_TRANSFORMER_H
#define SC_TRANSFORMER_H

#include "roofline.h"

typedef enum sc__recompute { SC__RC_NONE = 0, SC__RC_SELECTIVE, SC__RC_FULL } sc__recompute;
typedef enum sc__attn_impl { SC__ATTN_FLASH = 0, SC__ATTN_UNFUSED } sc__attn_impl;
/* The loss over the vocab-parallel logits (Megatron-core's
 * cross_entropy_loss_fusion off, or on with cross_entropy_fusion_impl
 * "native" or "te"). */
typedef enum sc__ce_impl { SC__CE_NONE = 0, SC__CE_NATIVE, SC__CE_TE } sc__ce_impl;
/* How MoE tokens reach their experts' GPUs (Megatron-core's
 * moe_token_dispatcher_type alltoall, or flex with moe_flex_dispatcher_
 * backend deepep or hybridep): the all-to-all sends a copy per expert;
 * DeepEP and HybridEP send a token once to each destination node over the
 * network and once to each destination GPU over NVLink. */
typedef enum sc__moe_dispatcher { SC__DISP_ALLTOALL = 0, SC__DISP_DEEPEP, SC__DISP_HYBRIDEP } sc__moe_dispatcher;
/* Megatron's --recompute-modules (selective granularity): core_attn, the
 * MLA up projections with their rope (mla_up_proj), the MLP of dense
 * layers (mlp: Megatron-core leaves MoE layers out of it). */
enum { SC__RCM_CORE_ATTN = 1, SC__RCM_MLA_UP = 2, SC__RCM_MLP = 4 };

typedef struct sc__tf_config {
    char name[48];
    /* the model */
    uint32_t layers, hidden, ffn, heads, kv_heads, vocab, seq;
    uint32_t experts, topk;   /* 0 experts: dense MLP */
    uint32_t head_dim;        /* 0: hidden / heads (Qwen3: 128 apart from it) */
    uint32_t moe_ffn;         /* one expert's FFN size; 0: ffn */
    uint32_t shared_ffn;      /* FFN size of the shared experts together; 0: none */
    uint32_t etp;             /* expert tensor parallelism: 1 or tp; 0: tp */
    uint8_t dispatcher;       /* sc__moe_dispatcher */
    uint32_t router_groups, router_group_topk; /* group-limited routing (Megatron's
                                 moe_router_num_groups, moe_router_group_topk; DeepSeek's
                                 n_group, topk_group): a token's experts come from
                                 router_group_topk of the router_groups groups; 0: none */
    uint32_t dense_layers;    /* with experts, the first dense_layers layers have a dense
                                 MLP of ffn instead (DeepSeek's first_k_dense_replace) */
    uint32_t window;          /* sliding-window attention: keys a query sees (0: all) */
    uint32_t window_skip;     /* with a window, every window_skip-th layer attends to all
                                 (Megatron's window_attn_skip_freq; 0: none does) */
    uint32_t lora_rank;       /* LoRA: adapters of this rank on every linear_qkv, linear_proj,
                                 linear_fc1 and linear_fc2 (Megatron-Bridge's default target
                                 modules), the base weights frozen; 0: all weights train */
    uint8_t dtype;            /* sc__kdtype of the GEMMs: bf16, fp16, fp8 */
    uint8_t gated;            /* gated MLP (SwiGLU: two up projections) */
    uint8_t tied;             /* the output head shares the embedding */
    uint8_t attention;        /* sc__attn_impl */
    uint8_t rope;             /* rotary position embedding applied to q and k */
    /* multi-head latent attention (Megatron-core's MLASelfAttention, DeepSeek-V2/V3):
       q and kv each through a low-rank down projection, its norm and an up
       projection; heads of qk_dim + qk_rope_dim for q and k, v_dim for v */
    uint8_t mla;
    uint32_t q_lora, kv_lora;  /* ranks of the down projections (q_lora 0: q projected
                                  directly from the hidden state) */
    uint32_t qk_dim, qk_rope_dim, v_dim; /* per head: q/k without and with rope, v */
    uint32_t mtp_layers;      /* multi-token prediction layers on the last stage
                                 (Megatron's --mtp-num-layers) */
    uint8_t recompute_mods;   /* with selective recompute, sc__tf_rcm bits; 0: core_attn */
    /* Megatron-core's hybrid model (MambaModel): one character a layer, its
     * hybrid_override_pattern ('M' Mamba-2, '*' attention, '-' MLP, 'E'
     * MoE; ssm/mamba_hybrid_layer_allocation.py); "": every layer is
     * attention + MLP. Layers = its length. */
    char hybrid[256];
    /* The Mamba-2 mixer (TransformerConfig's mamba_*; 0: Megatron's
     * defaults, filled by sc__tf_resolve): heads (of head_dim each: d_inner
     * = heads x head_dim), state size, groups of B and C, and the SSD
     * chunk (MambaMixer's chunk_size). */
    uint32_t mamba_heads, mamba_head_dim, mamba_state, mamba_groups, mamba_chunk;
    uint8_t block;            /* a kind's blocks (SC__TFK_MAMBA | NO_MLP | NO_MIXER),
                                 set by sc__tf_kind_config; 0 in the model's config */
    /* parallelism */
    uint32_t tp, pp, vp, dp, cp, ep;
    uint32_t pp_first, pp_last; /* layers of the first / last stage (Megatron's
                                   --decoder-first/last-pipeline-num-layers); 0: even */
    uint8_t pp_embedding;       /* the embedding and the loss each count as a layer in
                                   the split (Megatron's account_for_embedding/loss_in_
                                   pipeline_split): layers + 2 split evenly */
    uint8_t sp, fsdp, dist_opt;
    uint32_t mbs, gbs;
    uint8_t recompute;        /* sc__recompute */
    uint8_t overlap_grad, overlap_param, tp_overlap;
    uint8_t grad_fp32;        /* gradients buffered and reduced in fp32 (Megatron-core's
                                 DistributedDataParallelConfig.grad_reduce_in_fp32); 0: in
                                 the 16-bit parameter dtype. Default 1 */
    uint8_t ce_fusion;        /* sc__ce_impl */
    /* hardware */
    char gpu[48];
    uint32_t nodes, gpus_per_node;
    double net_gbps;
    double host_us;           /* CPU time per kernel launch */
} sc__tf_config;

/* The documented defaults (README): 1-way everything, bf16, flash
 * attention, no recompute, h100, host 4 us per launch; the model's sizes 0
 * (unset). */
void sc__tf_defaults(sc__tf_config *c);

/* Fills what follows from others (ffn = 4 h, kv_heads = heads, topk = 1 for
 * MoE, moe_ffn = ffn, etp = tp, dp from nodes x gpus-per-node / (tp pp cp), gbs = dp x mbs) and
 * checks that the job is possible: NULL, or a one-line reason written to
 * why (heads % tp, layers % (pp vp), gbs % (dp mbs), ...). */
bool sc__tf_resolve(sc__tf_config *c, char *why, size_t nwhy);

/* Transformer layers of model chunk `chunk` (0 .. vp-1) on pipeline stage
 * `stage`: pp_first on the first stage, pp_last on the last, the rest
 * split evenly over the others; with pp_embedding, (layers + 2) / (pp vp)
 * each, one fewer in the first chunk of the first stage and in the last
 * chunk of the last stage. The MTP layers count as layers of the last
 * chunk there (Megatron-Bridge's layouts end "...|mL"): (layers + mtp + 2)
 * / (pp vp) each, the last chunk 1 + mtp fewer. sc__tf_stage_layers sums a
 * stage's chunks. */
uint32_t sc__tf_chunk_layers(const sc__tf_config *c, uint32_t stage, uint32_t chunk);
uint32_t sc__tf_stage_layers(const sc__tf_config *c, uint32_t stage);

/* The embedding's (or an untied head's) parameters on one GPU, and
 * whether the head has its own weights (untied, or tied across stages:
 * the last stage keeps a copy). */
static inline double sc__tf_vocab_params(const sc__tf_config *c) { return (double)c->vocab * c->hidden / c->tp; }
static inline bool sc__tf_own_head(const sc__tf_config *c) { return !c->tied || c->pp > 1; }

/* Micro-batches per step per data-parallel replica: gbs / (dp mbs). */
static inline uint32_t sc__tf_micro(const sc__tf_config *c) { return c->gbs / (c->dp * c->mbs); }
static inline uint32_t sc__tf_gpus(const sc__tf_config *c) { return c->tp * c->pp * c->cp * c->dp; }

/* Layers that differ from the model's common one: a kind is a set of
 * these bits, and a layer's ops and counts are those of the configuration
 * sc__tf_kind_config gives for its kind. Kind 0 is the layer the flags
 * describe. */
enum {
    SC__TFK_DENSE = 1,  /* a dense MLP of ffn where the model has experts */
    SC__TFK_WINDOW = 2, /* attention over the sliding window */
    SC__TFK_MAMBA = 4,  /* the mixer is a Mamba-2 layer, not attention */
    SC__TFK_NO_MLP = 8, /* no MLP block (a hybrid's 'M' and '*' layers) */
    SC__TFK_NO_MIXER = 16, /* no attention/mixer block (a hybrid's '-' and 'E' layers) */
    SC__TF_KINDS = 32
};
/* The kind bits of a hybrid pattern's character (0xff: not one of
 * Megatron's symbols); experts: the model has experts (a '-' layer is
 * then a dense MLP among them). */
uint8_t sc__tf_hybrid_kind(char sym, bool experts);
/* The kind of transformer layer `layer` (0 .. layers-1, model order). */
uint8_t sc__tf_layer_kind(const sc__tf_config *c, uint32_t layer);
/* c as a homogeneous model of layers of kind k (the layer ops, parameter,
 * activation and FLOP counts of one layer read it). */
void sc__tf_kind_config(const sc__tf_config *c, uint8_t k, sc__tf_config *out);
/* The first layer of global chunk g (chunk x pp + stage), model order. */
uint32_t sc__tf_chunk_first_layer(const sc__tf_config *c, uint32_t g);

/* The communicators a collective runs in. */
typedef enum sc__tf_comm { SC__COMM_TP = 0, SC__COMM_CP, SC__COMM_EP, SC__COMM_DP, SC__COMM_PP, SC__COMM_EDP, SC__COMM_COUNT } sc__tf_comm;
/* The expert-data-parallel group that reduces the experts' gradients
 * (Megatron's expert_data_parallel group): tp x dp x cp / (ep x etp). */
static inline uint32_t sc__tf_edp(const sc__tf_config *c) {
    return (uint32_t)((uint64_t)c->tp * c->dp * c->cp / ((uint64_t)c->ep * c->etp));
}

/* Bytes of one gradient in the main-grad buffer, its reduction and its
 * zeroing: 4 with grad_reduce_in_fp32, else 2 (the parameters' bf16). */
static inline double sc__tf_grad_bytes(const sc__tf_config *c) { return c->grad_fp32 ? 4.0 : 2.0; }

/* One step of a layer's program: a kernel, or a collective (coll is an
 * sc__coll_type, 0xff for a kernel). side: the collective runs on a side
 * stream beside the compute that follows (overlap), joined `side` ops
 * later; it starts once the op before it has ended, or, a prefetch (FSDP's
 * next-layer gather), once the previous layer has begun. split: the collective is one of that many equal pieces of the
 * transfer of `bytes` (a pipelined overlap), each taking 1/split of its
 * time. sm_taken: a kernel runs beside a communication kernel that holds
 * that many SMs, on the rest (Transformer Engine's set_sm_margin). */
#define SC__TF_KERNEL 0xff
typedef struct sc__tf_op {
    const char *name;     /* static */
    sc__kernel_shape k;
    uint8_t coll, comm, side;
    uint8_t split, sm_taken;
    uint8_t prefetch;     /* a side collective that may start before the op ahead of it ends */
    uint8_t dedup;        /* an all-to-all of a deduplicating dispatcher (DeepEP, HybridEP):
                             bytes / topk a token copy, sent once a destination node over
                             the network and once a destination GPU over NVLink */
    int64_t bytes;        /* nccl-tests size of a collective (the whole transfer) */
} sc__tf_op;

/* A token's destinations under balanced routing (experts drawn uniformly,
 * within router_group_topk random groups where routing is group-limited),
 * the expert-parallel group spread over `nodes` nodes: the expected
 * number of distinct nodes and of distinct GPUs its top-k experts are on. */
void sc__tf_dispatch_fanout(const sc__tf_config *c, uint32_t nodes, double *nodes_hit, double *gpus_hit);

typedef enum sc__tf_phase { SC__PH_FWD = 0, SC__PH_BWD, SC__PH_RECOMPUTE } sc__tf_phase;

/* Appends one layer's ops for a phase to out (sc__tf_op); false on
 * out-of-memory. RECOMPUTE is what runs again before the backward: the
 * whole forward (full), the attention core (selective, unfused attention
 * only), nothing otherwise. */
bool sc__tf_layer_ops(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out);
/* The embedding (forward or backward), on the first stage. */
bool sc__tf_embed_ops(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out);
/* The output head and loss, on the last stage. */
bool sc__tf_head_ops(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out);
/* Bytes the loss moves an element of the logits (forward or backward) by
 * c->ce_fusion: each implementation's passes over b s x V/t, counted from
 * its source (transformer.c). */
double sc__tf_ce_bytes(const sc__tf_config *c, bool backward);
/* The optimizer step of a stage holding `params` parameters on this GPU,
 * `expert` of them in the experts (sharded over the expert-data-parallel
 * group by the distributed optimizer, the others over dp x cp). */
bool sc__tf_optimizer_ops(const sc__tf_config *c, double params, double expert, sc__vec *out);
/* The multi-token prediction block on the last stage (embedding, the two
 * norms, the 2h -> h projection, one transformer layer of the last
 * layer's kind, the output head and loss again), c->mtp_layers times. */
bool sc__tf_mtp_ops(const sc__tf_config *c, sc__tf_phase ph, sc__vec *out);

/* Parameters: one layer's (all of them, before any split), the embedding's,
 * the whole model's, and those one GPU of stage s holds (after TP, EP and
 * the stage's layers, embedding on the first stage, head on the last). */
double sc__tf_layer_params(const sc__tf_config *c);
double sc__tf_model_params(const sc__tf_config *c);
double sc__tf_stage_params(const sc__tf_config *c, uint32_t stage);
/* One layer's parameters on one GPU (after TP and EP). */
double sc__tf_layer_params_gpu(const sc__tf_config *c);
/* Parameters on one GPU of layers [l0, l1) (model order), by their kinds. */
double sc__tf_layers_params_gpu(const sc__tf_config *c, uint32_t l0, uint32_t l1);
/* The routed experts' share of those (their own gradient buffer, reduced
 * over the expert-data-parallel group), and of a stage's. */
double sc__tf_layers_expert_params_gpu(const sc__tf_config *c, uint32_t l0, uint32_t l1);
double sc__tf_stage_expert_params(const sc__tf_config *c, uint32_t stage);
/* One layer's attention parameters (all, before any split). */
double sc__tf_attn_params(const sc__tf_config *c);
/* The MTP block's parameters: all of them, and on one GPU of the last
 * stage (its layer after TP and EP; the embedding copy not counted). */
double sc__tf_mtp_params(const sc__tf_config *c);
double sc__tf_mtp_params_gpu(const sc__tf_config *c);
double sc__tf_mtp_expert_params_gpu(const sc__tf_config *c);

/* Trainable parameters: with LoRA only the adapters' (rank r: r x (in + out)
 * a linear layer, split by TP like their base), else every parameter. Of
 * layers [l0, l1) on one GPU, of stage s on one GPU (with the embedding
 * and head when they train), and of one layer before any split. */
double sc__tf_layers_trainable_gpu(const sc__tf_config *c, uint32_t l0, uint32_t l1);
double sc__tf_stage_trainable(const sc__tf_config *c, uint32_t stage);
double sc__tf_layer_adapter_params(const sc__tf_config *c);

/* Model FLOPs of one step (the Megatron papers' convention: forward +
 * backward = 3 x forward, attention over the full s x s, no
 * recomputation; with LoRA the frozen base counts forward + input
 * gradients, 2 x forward, and the adapters 3 x theirs): 3 x tokens x [L x (2 h (q + 2 kv) + 2 h^2 + 4 s h +
 * 2 h f (g + 1) x topk) + 2 h V], q = h, kv = kv_heads x h / heads,
 * g = 2 for a gated MLP else 1; for MHA with f = 4 h this is
 * 72 B s L h^2 (1 + s / (6 h) + V / (12 h L)) (Korthikanti eq. 7).
 * A hybrid model follows Megatron's hybrid branch instead (training.py's
 * hybrid_flops): per layer type, attention causal (s / 2), no router. */
double sc__tf_model_flops(const sc__tf_config *c);

/* One Mamba-2 layer (the mixer, its norm) as Megatron-core counts it:
 * parameters (in_proj, conv1d weight and bias, dt_bias, A_log, D, the
 * gated norm's weight, out_proj) and the forward FLOPs per token of
 * training/training.py's mamba_layer_flops (hybrid branch of
 * num_floating_point_operations). */
double sc__tf_mamba_params(const sc__tf_config *c);
double sc__tf_mamba_flops(const sc__tf_config *c);

/* Memory of one GPU of stage s, bytes. */
typedef struct sc__tf_memory {
    double weights, grads, optimizer, activations, total; /* grads and optimizer: trainable only */
    double inflight; /* micro-batches whose activations the stage holds */
} sc__tf_memory;
void sc__tf_stage_memory(const sc__tf_config *c, uint32_t stage, sc__tf_memory *m);

const char *sc__tf_recompute_name(uint8_t r);
/* "alltoall", "deepep" or "hybridep" (the names --moe-dispatcher takes). */
const char *sc__tf_dispatcher_name(uint8_t d);

#endif /* SC_TRANSFORMER_H */
