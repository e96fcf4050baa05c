/*
 * model.c - `stepcast model`: the graph of a training step synthesised from
 * its configuration, simulated and summarised (model.h says the layout).
 *
 * Per stage s (graph rank s) the builder walks the stage's schedule units
 * (pipeline_schedule.c); a unit is the forward or backward of one model
 * chunk (layers (c P + s) L/(P V) ..) on one micro-batch: a recv from the
 * neighbour stage, the layers' ops (transformer.c), a send. Each op is a
 * CPU launch task (host_us) and a GPU task; a collective that overlaps
 * (op.side) runs on the side stream and is joined where transformer.c
 * says. Data-parallel gradients are reduced per bucket (Megatron-core's
 * default of max(40M, 1M x dp) parameters) on the DP stream as soon as the
 * last micro-batch's backward has produced the bucket
 * (--overlap-grad-reduce), or all at once after the last backward, and the
 * optimizer waits for them; the distributed optimizer's parameter
 * all-gather follows the optimizer, or, overlapped, runs bucket by bucket
 * in the next step's first forward: each bucket's first layer waits for its
 * gather, which then dispatches the next bucket's (Megatron's forward
 * pre-hook). FSDP's per-layer all-gathers run on their own stream (their
 * own process group in Megatron-FSDP), prefetched one layer ahead; its
 * reduce-scatters on the DP stream.
 * Nothing is placed by a formula: bubbles, exposed communication and the
 * step come out of the simulation.
 */
#include "model.h"

#include "../transforms/pipeline_schedule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PR_CPU, PR_COMP, PR_SIDE, PR_DP, PR_SNEXT, PR_RPREV, PR_SPREV, PR_RNEXT, PR_AG, PR_COUNT };

/* An op program with its durations (ns), timed once. */
typedef struct prog {
    sc__vec ops; /* sc__tf_op */
    int64_t *ns;
} prog;

typedef struct pending {
    uint32_t task;
    uint32_t left; /* ops until the join; UINT32_MAX: joined at the optimizer */
} pending;

typedef struct builder {
    const sc__tf_config *c;
    sc__graph *g;
    const sc__kernel_timer *timer;
    uint32_t sm_count; /* the GPU's SMs, for kernels that run beside a communication kernel */
    const sc__comm_model *cm[SC__COMM_COUNT]; /* one per communicator layout */
    uint32_t comm_ranks[SC__COMM_COUNT];
    uint32_t comm_label[SC__COMM_COUNT];
    uint32_t P, V, M;
    uint32_t *Lc; /* per global chunk (chunk x P + stage): its layers */
    uint32_t *L0; /* per global chunk: its first layer, model order */
    uint8_t *kind; /* per layer: its kind (transformer.h) */
    double layer_params; /* parameters of a layer on one GPU (the mean where kinds differ) */
    uint32_t proc[PR_COUNT];
    uint32_t seq[PR_COUNT];
    uint32_t last_comp; /* last task on the compute stream, SC__NONE */
    uint32_t gates[2];  /* tasks the next compute task waits for (a recv, a gather) */
    uint32_t first_task;
    sc__vec pend;       /* pending */
    sc__vec opt_join;   /* uint32 tasks the optimizer waits for */
    uint32_t *p2p;      /* (micro, global chunk, dir) -> first task of the pair */
    uint32_t *gather;   /* per chunk: the overlapped parameter all-gather of its next bucket, SC__NONE */
    uint32_t mark[2];   /* last compute task before the previous / the current layer began */
    double bucket;      /* parameters per data-parallel bucket */
    double grad_acc;    /* gradients (parameters) waiting for their bucket's reduce-scatter */
    double grad_acc_e;  /* the same of the experts' buffer (expert-data-parallel group) */
    uint32_t tied_first; /* the first stage's tied-embedding all-reduce, SC__NONE */
    prog fwd[SC__TF_KINDS], bwd[SC__TF_KINDS], rec[SC__TF_KINDS]; /* per layer kind present */
    prog efwd, ebwd, hfwd, hbwd, mfwd, mbwd;
    uint32_t names[64];
    bool oom;
} builder;

/* A kernel's time, on the SMs a communication kernel beside it leaves
 * (compute-bound work slows in proportion); a collective's, or its piece's
 * share. */
static int64_t op_ns(const builder *b, const sc__tf_op *op) {
    if (op->coll == SC__TF_KERNEL) {
        double us = b->timer->time_us(b->timer->ctx, &op->k);
        if (op->sm_taken && b->sm_count > op->sm_taken) us *= (double)b->sm_count / (b->sm_count - op->sm_taken);
        return (int64_t)llround(us * 1e3);
    }
    uint32_t n = b->comm_ranks[op->comm];
    int64_t t;
    if (op->dedup) {
        /* a token copy to each destination node over the network (not its
         * own), and over NVLink from the GPU it lands on (or starts from)
         * to each destination GPU of that node but itself: g of the
         * group's GPUs share a node */
        const sc__comm_model *cm = b->cm[op->comm];
        uint32_t M = sc__comm_nodes(cm, n), g = cm->gpus_per_node && cm->gpus_per_node < n ? cm->gpus_per_node : n;
        double nodes, gpus, token = (double)op->bytes / b->c->topk;
        sc__tf_dispatch_fanout(b->c, M, &nodes, &gpus);
        t = sc__comm_two_level_ns(cm, token * gpus * (g - 1) / g, token * nodes * (M - 1) / M, n);
    } else {
        t = sc__comm_time_ns(b->cm[op->comm], op->coll, op->bytes, n);
    }
    if (op->split > 1) t /= op->split;
    return t > 0 ? t : 0;
}

static bool prog_make_for(builder *b, const sc__tf_config *c, prog *p,
                          bool (*fill)(const sc__tf_config *, sc__tf_phase, sc__vec *), sc__tf_phase ph) {
    sc__vec_init(&p->ops, sizeof(sc__tf_op));
    if (!fill(c, ph, &p->ops)) return false;
    p->ns = calloc(p->ops.len ? p->ops.len : 1, sizeof *p->ns);
    if (!p->ns) return false;
    const sc__tf_op *ops = p->ops.data;
    for (size_t i = 0; i < p->ops.len; i++) p->ns[i] = op_ns(b, &ops[i]);
    return true;
}

static bool prog_make(builder *b, prog *p, bool (*fill)(const sc__tf_config *, sc__tf_phase, sc__vec *), sc__tf_phase ph) {
    return prog_make_for(b, b->c, p, fill, ph);
}

/* The forward, backward and recomputation of each kind of layer the model
 * has, and each layer's kind. */
static bool layer_progs(builder *b) {
    const sc__tf_config *c = b->c;
    bool present[SC__TF_KINDS] = {false};
    for (uint32_t l = 0; l < c->layers; l++) present[b->kind[l] = sc__tf_layer_kind(c, l)] = true;
    bool ok = true;
    for (uint8_t k = 0; k < SC__TF_KINDS && ok; k++) {
        if (!present[k]) continue;
        sc__tf_config kc;
        sc__tf_kind_config(c, k, &kc);
        ok = prog_make_for(b, &kc, &b->fwd[k], sc__tf_layer_ops, SC__PH_FWD) &&
             prog_make_for(b, &kc, &b->bwd[k], sc__tf_layer_ops, SC__PH_BWD) &&
             prog_make_for(b, &kc, &b->rec[k], sc__tf_layer_ops, SC__PH_RECOMPUTE);
    }
    return ok;
}

static void prog_free(prog *p) {
    sc__vec_free(&p->ops);
    free(p->ns);
}

static uint32_t add_task(builder *b, int pr, uint8_t kind, int64_t dur, const char *name) {
    sc__task t;
    memset(&t, 0, sizeof t);
    t.dur = dur;
    t.proc = b->proc[pr];
    t.seq = b->seq[pr]++;
    t.name = sc__intern_put(&b->g->strings, name, strlen(name));
    t.op = t.group = t.event = t.sync_arg = SC__NONE;
    t.kind = kind;
    uint32_t id = sc__graph_add_task(b->g, &t);
    if (id == SC__NONE || t.name == SC__NONE) b->oom = true;
    if (b->first_task == SC__NONE) b->first_task = id;
    return id;
}

static void edge(builder *b, uint32_t from, uint32_t to, sc__edge_family f) {
    if (from == SC__NONE || to == SC__NONE) return;
    if (!sc__graph_add_edge(b->g, from, to, f)) b->oom = true;
}

/* A group of one simulated member standing for its whole communicator. */
static void solo_group(builder *b, uint32_t task, uint8_t type, int64_t bytes, uint8_t comm, int64_t ns) {
    uint32_t grp = sc__graph_add_group(b->g, (sc__coll_type)type, bytes, &task, 1);
    if (grp == SC__NONE) {
        b->oom = true;
        return;
    }
    sc__group *gr = (sc__group *)b->g->groups.data + grp;
    gr->transfer_ns = ns;
    gr->comm = b->comm_label[comm];
    gr->comm_ranks = b->comm_ranks[comm];
    sc__graph_tasks(b->g)[task].group = grp;
}

/* Joins due at this op: edges from the side tasks whose countdown ends. */
static void joins_due(builder *b, uint32_t task) {
    pending *p = b->pend.data;
    size_t keep = 0;
    for (size_t i = 0; i < b->pend.len; i++) {
        if (p[i].left != UINT32_MAX && --p[i].left == 0) {
            edge(b, p[i].task, task, SC_E_CROSS_STREAM);
            continue;
        }
        p[keep++] = p[i];
    }
    b->pend.len = keep;
}

/* One op: its launch on the CPU thread and its GPU task. */
static void emit(builder *b, const sc__tf_op *op, int64_t ns) {
    uint32_t launch = add_task(b, PR_CPU, SC_T_LAUNCH, (int64_t)llround(b->c->host_us * 1e3), "cudaLaunchKernel");
    bool is_coll = op->coll != SC__TF_KERNEL;
    if (is_coll && b->comm_ranks[op->comm] < 2) return;
    bool side = is_coll && op->side;
    bool dpc = op->comm == SC__COMM_DP || op->comm == SC__COMM_EDP;
    int pr = !side ? PR_COMP : !dpc ? PR_SIDE : op->coll == SC_C_ALL_GATHER && b->c->fsdp ? PR_AG : PR_DP;
    uint32_t t = add_task(b, pr, is_coll ? SC_T_COLL : SC_T_KERNEL, ns, op->name);
    edge(b, launch, t, SC_E_LAUNCH);
    if (is_coll) solo_group(b, t, op->coll, op->split > 1 ? op->bytes / op->split : op->bytes, op->comm, ns);
    if (!side) {
        for (int k = 0; k < 2; k++) {
            edge(b, b->gates[k], t, SC_E_CROSS_STREAM);
            b->gates[k] = SC__NONE;
        }
        joins_due(b, t);
        b->last_comp = t;
        return;
    }
    /* a prefetch is free to start once the previous layer has begun */
    edge(b, op->prefetch ? b->mark[0] : b->last_comp, t, SC_E_CROSS_STREAM);
    if (op->side == 255) {
        if (!SC__VEC_APPEND(&b->opt_join, &t)) b->oom = true;
        return;
    }
    pending p = {.task = t, .left = op->side};
    if (!SC__VEC_APPEND(&b->pend, &p)) b->oom = true;
}

static void run_prog(builder *b, const prog *p) {
    const sc__tf_op *ops = p->ops.data;
    for (size_t i = 0; i < p->ops.len && !b->oom; i++) emit(b, &ops[i], p->ns[i]);
}

/* A transformer layer's program: the marks move on a layer, so that a
 * prefetch in it (an FSDP all-gather) starts no earlier than the
 * previous layer's compute. */
static void run_layer(builder *b, const prog *p) {
    b->mark[0] = b->mark[1];
    b->mark[1] = b->last_comp;
    run_prog(b, p);
}

/* The send or recv of a pipeline transfer (dir 0: activations forward, 1:
 * gradients backward), paired with its other end. */
static uint32_t p2p(builder *b, uint32_t micro, uint32_t gchunk, int dir, bool send) {
    const sc__tf_config *c = b->c;
    double bytes = (double)c->mbs * c->seq / c->cp * c->hidden * 2 / (c->sp ? c->tp : 1);
    int pr = dir == 0 ? (send ? PR_SNEXT : PR_RPREV) : (send ? PR_SPREV : PR_RNEXT);
    int64_t ns = sc__comm_time_ns(b->cm[SC__COMM_PP], SC_C_SEND_RECV, (int64_t)bytes, 2);
    uint32_t t = add_task(b, pr, send ? SC_T_SEND : SC_T_RECV, ns, send ? "pp_send" : "pp_recv");
    size_t key = ((size_t)micro * (b->P * b->V) + gchunk) * 2 + (size_t)dir;
    uint32_t other = b->p2p[key];
    if (other == SC__NONE) {
        b->p2p[key] = t;
        return t;
    }
    uint32_t members[2] = {other, t};
    uint32_t grp = sc__graph_add_group(b->g, SC_C_SEND_RECV, (int64_t)bytes, members, 2);
    if (grp == SC__NONE || b->oom) {
        b->oom = true;
        return t;
    }
    sc__group *gr = (sc__group *)b->g->groups.data + grp;
    gr->transfer_ns = ns;
    gr->comm = b->comm_label[SC__COMM_PP];
    gr->comm_ranks = 2;
    sc__graph_tasks(b->g)[other].group = grp;
    sc__graph_tasks(b->g)[t].group = grp;
    return t;
}

static void comm_coll(builder *b, uint8_t comm, const char *name, uint8_t type, double bytes, bool side) {
    sc__tf_op op = {.name = name, .coll = type, .comm = comm, .side = side ? 255 : 0, .bytes = (int64_t)bytes};
    emit(b, &op, op_ns(b, &op));
}

/* Whether gradients are reduced by the data-parallel buffers (not FSDP's):
 * over dp x cp, or the experts' over their group, which may be larger
 * than one GPU where dp x cp is (tp 8, ep 2, etp 1, dp 1). */
static bool reduces(const builder *b) {
    return !b->c->fsdp && (b->comm_ranks[SC__COMM_DP] > 1 || b->comm_ranks[SC__COMM_EDP] > 1);
}

static void dp_coll(builder *b, const char *name, uint8_t type, double bytes, bool side) {
    if (b->comm_ranks[SC__COMM_DP] > 1) comm_coll(b, SC__COMM_DP, name, type, bytes, side);
}

/* A collective of the experts' buffer: over the expert-data-parallel
 * group (Megatron-core's DDP builds the expert parameters' buffers and
 * their buckets apart and reduces them over expert_data_parallel_group);
 * none where that group is one GPU. */
static void edp_coll(builder *b, const char *name, uint8_t type, double bytes, bool side) {
    if (bytes > 0 && b->comm_ranks[SC__COMM_EDP] > 1) comm_coll(b, SC__COMM_EDP, name, type, bytes, side);
}

/* Data-parallel buckets (Megatron-core's DistributedDataParallelConfig.
 * bucket_size, default max(40,000,000, 1,000,000 x dp) parameters of the
 * local buffer): a bucket's gradients are reduce-scattered as soon as its
 * last one is produced, and its parameters all-gathered before its first
 * module's forward. Whole layers fill a bucket here. */
static double bucket_params(const sc__tf_config *c) { return fmax(40e6, 1e6 * (double)c->dp * c->cp); }

/* A layer's parameters on one GPU; where kinds differ, their mean, so
 * that a bucket holds about its size in layers. */
static double mean_layer_params(const sc__tf_config *c) {
    if (c->lora_rank) return sc__tf_layers_trainable_gpu(c, 0, c->layers) / c->layers;
    uint8_t k0 = sc__tf_layer_kind(c, 0);
    for (uint32_t l = 1; l < c->layers; l++)
        if (sc__tf_layer_kind(c, l) != k0) return sc__tf_layers_params_gpu(c, 0, c->layers) / c->layers;
    sc__tf_config kc;
    sc__tf_kind_config(c, k0, &kc);
    return sc__tf_layer_params_gpu(&kc);
}

static uint32_t bucket_layers(const builder *b) {
    double n = ceil(b->bucket / b->layer_params);
    return n >= 1 ? (uint32_t)n : 1;
}

/* The embedding's (or the untied head's) trainable parameters on one GPU
 * (none when LoRA freezes them). */
static double emb_params(const sc__tf_config *c) { return c->lora_rank ? 0 : sc__tf_vocab_params(c); }
static bool has_head(const builder *b, uint32_t s) { return s == b->P - 1 && sc__tf_own_head(b->c); }
/* The MTP block's parameters on a GPU of the last stage, with its copy of
 * the embedding where the first stage holds the model's; the experts'
 * share of them. */
static double mtp_params(const builder *b) {
    const sc__tf_config *c = b->c;
    if (!c->mtp_layers || c->lora_rank) return 0; /* LoRA: frozen */
    return sc__tf_mtp_params_gpu(c) + (b->P > 1 && !c->tied ? emb_params(c) : 0);
}
static double mtp_expert_params(const builder *b) { return sc__tf_mtp_expert_params_gpu(b->c); }

/* Bytes of the parameter all-gather of the bucket of chunk k on stage s
 * that starts at layer l0: its layers, the embedding in the stage's first
 * bucket, the head in its last, 2 bytes a parameter. */
static double bucket_gather_bytes(const builder *b, uint32_t s, uint32_t k, uint32_t l0, double *expert) {
    uint32_t L = b->Lc[(size_t)k * b->P + s], bl = bucket_layers(b);
    uint32_t n = L - l0 < bl ? L - l0 : bl;
    uint32_t first = b->L0[(size_t)k * b->P + s] + l0;
    double p = sc__tf_layers_trainable_gpu(b->c, first, first + n);
    double e = sc__tf_layers_expert_params_gpu(b->c, first, first + n);
    if (l0 == 0 && s == 0 && k == 0) p += emb_params(b->c);
    if (l0 + n >= L && k == b->V - 1 && has_head(b, s)) p += emb_params(b->c);
    if (l0 + n >= L && k == b->V - 1 && s == b->P - 1) {
        p += mtp_params(b);
        e += mtp_expert_params(b);
    }
    *expert = e * 2;
    return (p - e) * 2;
}

static uint32_t side_gather(builder *b, double bytes, double expert);

static void grad_flush_e(builder *b) {
    if (b->grad_acc_e <= 0) return;
    edp_coll(b, b->c->dist_opt ? "edp_grad_reduce_scatter" : "edp_grad_all_reduce",
             b->c->dist_opt ? SC_C_REDUCE_SCATTER : SC_C_ALL_REDUCE, b->grad_acc_e * sc__tf_grad_bytes(b->c), true);
    b->grad_acc_e = 0;
}

static void grad_flush_dense(builder *b) {
    if (b->grad_acc <= 0) return;
    dp_coll(b, b->c->dist_opt ? "dp_grad_reduce_scatter" : "dp_grad_all_reduce",
            b->c->dist_opt ? SC_C_REDUCE_SCATTER : SC_C_ALL_REDUCE, b->grad_acc * sc__tf_grad_bytes(b->c), true);
    b->grad_acc = 0;
}

static void grad_flush(builder *b) {
    grad_flush_e(b);
    grad_flush_dense(b);
}

/* Gradients of `params` parameters are ready, `expert` of them the
 * experts': each buffer's bucket is reduced once full, in the main grads'
 * dtype (sc__tf_grad_bytes: 4 bytes a parameter, 2 without
 * grad_reduce_in_fp32). */
static void grad_ready(builder *b, double params, double expert) {
    b->grad_acc += params - expert;
    b->grad_acc_e += expert;
    if (b->grad_acc_e >= b->bucket) grad_flush_e(b);
    if (b->grad_acc >= b->bucket) grad_flush_dense(b);
}

static void unit_fwd(builder *b, uint32_t s, const sc__pp_unit *u) {
    uint32_t g = (uint32_t)u->chunk * b->P + s, last = b->P * b->V - 1, bl = bucket_layers(b);
    bool pg = u->micro == 0 && b->gather[u->chunk] != SC__NONE;
    if (g > 0) b->gates[0] = p2p(b, u->micro, g, 0, false);
    if (u->micro == 0) b->gates[1] = b->gather[u->chunk];
    if (g == 0) run_prog(b, &b->efwd);
    for (uint32_t l = 0; l < b->Lc[g] && !b->oom; l++) {
        if (pg && l % bl == 0) {
            /* Megatron's forward pre-hook: wait for this bucket, then
             * dispatch the next one's all-gather. */
            if (l > 0) b->gates[1] = b->gather[u->chunk];
            if (l + bl < b->Lc[g]) {
                double e, p = bucket_gather_bytes(b, s, u->chunk, l + bl, &e);
                b->gather[u->chunk] = side_gather(b, p, e);
            }
        }
        run_layer(b, &b->fwd[b->kind[b->L0[g] + l]]);
    }
    if (g == last) run_prog(b, &b->mfwd);
    if (g == last) run_prog(b, &b->hfwd);
    if (g < last) edge(b, b->last_comp, p2p(b, u->micro, g + 1, 0, true), SC_E_CROSS_STREAM);
}

static void unit(builder *b, uint32_t s, const sc__pp_unit *u) {
    uint32_t g = (uint32_t)u->chunk * b->P + s, last = b->P * b->V - 1;
    if (!u->backward) {
        unit_fwd(b, s, u);
        return;
    }
    bool grads = b->c->overlap_grad && reduces(b) && u->micro == b->M - 1;
    if (g < last) b->gates[0] = p2p(b, u->micro, g + 1, 1, false);
    if (g == last) run_prog(b, &b->hbwd);
    if (g == last && grads && has_head(b, s)) grad_ready(b, emb_params(b->c), 0);
    if (g == last) run_prog(b, &b->mbwd);
    if (g == last && grads && b->c->mtp_layers) grad_ready(b, mtp_params(b), mtp_expert_params(b));
    for (uint32_t l = 0; l < b->Lc[g] && !b->oom; l++) {
        uint32_t layer = b->L0[g] + l;
        run_layer(b, &b->rec[b->kind[layer]]);
        run_prog(b, &b->bwd[b->kind[layer]]);
        if (grads)
            grad_ready(b, sc__tf_layers_trainable_gpu(b->c, layer, layer + 1), sc__tf_layers_expert_params_gpu(b->c, layer, layer + 1));
    }
    if (g == 0) run_prog(b, &b->ebwd);
    if (g == 0 && grads) grad_ready(b, emb_params(b->c), 0);
    if (grads) grad_flush(b); /* a chunk's buffer ends with its last bucket */
    if (g > 0) edge(b, b->last_comp, p2p(b, u->micro, g, 1, true), SC_E_CROSS_STREAM);
}

/* With tied embeddings over several stages, the first stage's embedding
 * and the last stage's output head are two copies of one weight (with
 * MTP, the first stage's embedding and the MTP block's copy on the last:
 * Megatron's _allreduce_word_embedding_grads takes both cases): their
 * gradients are all-reduced between the two stages (Megatron's
 * _allreduce_embedding_grads, on the main grads) before the optimizer, on
 * the compute stream. */
static void tied_allreduce(builder *b) {
    const sc__tf_config *c = b->c;
    double bytes = sc__tf_vocab_params(c) * sc__tf_grad_bytes(c);
    int64_t ns = sc__comm_time_ns(b->cm[SC__COMM_PP], SC_C_ALL_REDUCE, (int64_t)bytes, 2);
    if (ns < 0) ns = 0;
    uint32_t launch = add_task(b, PR_CPU, SC_T_LAUNCH, (int64_t)llround(c->host_us * 1e3), "cudaLaunchKernel");
    uint32_t t = add_task(b, PR_COMP, SC_T_COLL, ns, "tied_embedding_grad_all_reduce");
    edge(b, launch, t, SC_E_LAUNCH);
    b->last_comp = t;
    if (b->oom) return;
    if (b->tied_first == SC__NONE) {
        b->tied_first = t;
        return;
    }
    uint32_t members[2] = {b->tied_first, t};
    uint32_t grp = sc__graph_add_group(b->g, SC_C_ALL_REDUCE, (int64_t)bytes, members, 2);
    if (grp == SC__NONE) {
        b->oom = true;
        return;
    }
    sc__group *gr = (sc__group *)b->g->groups.data + grp;
    gr->transfer_ns = ns;
    gr->comm = b->comm_label[SC__COMM_PP];
    gr->comm_ranks = 2;
    sc__graph_tasks(b->g)[b->tied_first].group = grp;
    sc__graph_tasks(b->g)[t].group = grp;
}

/* A collective over the whole data-parallel communicator. */
static void dp_coll_now(builder *b, const char *name, uint8_t type, double bytes) { dp_coll(b, name, type, bytes, false); }

static uint32_t gather_on(builder *b, uint8_t comm, const char *name, double bytes) {
    uint32_t launch = add_task(b, PR_CPU, SC_T_LAUNCH, (int64_t)llround(b->c->host_us * 1e3), "cudaLaunchKernel");
    sc__tf_op op = {.name = name, .coll = SC_C_ALL_GATHER, .comm = comm, .bytes = (int64_t)bytes};
    int64_t ns = op_ns(b, &op);
    uint32_t t = add_task(b, PR_DP, SC_T_COLL, ns, op.name);
    edge(b, launch, t, SC_E_LAUNCH);
    solo_group(b, t, SC_C_ALL_GATHER, op.bytes, comm, ns);
    return t;
}

/* A bucket's parameter all-gather: the non-expert part over dp x cp,
 * then the experts' over their group, one after the other on the DP
 * stream (the later one's end is the bucket's). */
static uint32_t side_gather(builder *b, double bytes, double expert) {
    uint32_t t = b->comm_ranks[SC__COMM_DP] > 1 ? gather_on(b, SC__COMM_DP, "dp_param_all_gather", bytes) : SC__NONE;
    if (expert > 0 && b->comm_ranks[SC__COMM_EDP] > 1) t = gather_on(b, SC__COMM_EDP, "edp_param_all_gather", expert);
    return t;
}

static void stage(builder *b, uint32_t s, sc__pp_kind kind, sc__pp_unit *units) {
    const sc__tf_config *c = b->c;
    uint64_t job_rank = (uint64_t)s * c->tp * c->cp * c->dp;
    uint32_t rank = sc__graph_add_rank(b->g, (int64_t)job_rank, SC__NONE);
    if (rank == SC__NONE) {
        b->oom = true;
        return;
    }
    static const int64_t ids[PR_COUNT] = {1, 7, 20, 21, 30, 31, 32, 33, 22};
    for (int k = 0; k < PR_COUNT; k++) {
        b->proc[k] = sc__graph_add_proc(b->g, rank, k == PR_CPU ? SC_P_THREAD : SC_P_STREAM, k == PR_CPU ? -1 : 0, ids[k]);
        if (b->proc[k] == SC__NONE) b->oom = true;
        b->seq[k] = 0;
    }
    b->last_comp = b->first_task = b->gates[0] = b->gates[1] = b->mark[0] = b->mark[1] = SC__NONE;
    b->pend.len = b->opt_join.len = 0;
    b->grad_acc = b->grad_acc_e = 0;
    bool dp = reduces(b);
    double params = sc__tf_stage_trainable(c, s), expert = sc__tf_stage_expert_params(c, s);
    for (uint32_t k = 0; k < b->V; k++) {
        double e, bytes = dp && c->dist_opt && c->overlap_param ? bucket_gather_bytes(b, s, k, 0, &e) : 0;
        b->gather[k] = dp && c->dist_opt && c->overlap_param ? side_gather(b, bytes, e) : SC__NONE;
    }
    size_t n = sc__pp_schedule(kind, b->P, b->M, b->V, s, units);
    for (size_t i = 0; i < n && !b->oom; i++) unit(b, s, &units[i]);
    if (dp && !c->overlap_grad) {
        dp_coll_now(b, c->dist_opt ? "dp_grad_reduce_scatter" : "dp_grad_all_reduce",
                    c->dist_opt ? SC_C_REDUCE_SCATTER : SC_C_ALL_REDUCE, (params - expert) * sc__tf_grad_bytes(c));
        edp_coll(b, c->dist_opt ? "edp_grad_reduce_scatter" : "edp_grad_all_reduce",
                 c->dist_opt ? SC_C_REDUCE_SCATTER : SC_C_ALL_REDUCE, expert * sc__tf_grad_bytes(c), false);
    }
    /* LoRA: the embedding and its copies are frozen */
    if ((c->tied || c->mtp_layers) && !c->lora_rank && b->P > 1 && (s == 0 || s == b->P - 1)) tied_allreduce(b);
    const pending *p = b->pend.data;
    for (size_t i = 0; i < b->pend.len; i++)
        if (!SC__VEC_APPEND(&b->opt_join, &p[i].task)) b->oom = true;
    sc__vec optv;
    sc__vec_init(&optv, sizeof(sc__tf_op));
    if (!sc__tf_optimizer_ops(c, params, expert, &optv)) b->oom = true;
    const sc__tf_op *oo = optv.data;
    for (size_t i = 0; i < optv.len && !b->oom; i++) {
        uint32_t before = (uint32_t)b->g->tasks.len;
        emit(b, &oo[i], op_ns(b, &oo[i]));
        const uint32_t *j = b->opt_join.data;
        for (size_t k = 0; i == 0 && k < b->opt_join.len; k++) edge(b, j[k], before + 1, SC_E_CROSS_STREAM);
    }
    sc__vec_free(&optv);
    if (dp && c->dist_opt && !c->overlap_param) {
        dp_coll_now(b, "dp_param_all_gather", SC_C_ALL_GATHER, (params - expert) * 2);
        edp_coll(b, "edp_param_all_gather", SC_C_ALL_GATHER, expert * 2, false);
    }
    sc__rank *r = (sc__rank *)b->g->ranks.data + rank;
    r->ntasks = (uint32_t)(b->g->tasks.len - r->first_task);
    r->step_first_task = b->first_task;
    r->step_status = SC__STEP_NONE;
}

/* The communication model of a communicator whose consecutive members are
 * `stride` GPUs apart: ceil(gpn / stride) of them share a node. */
static sc_status comm_for(const sc__hw_profile *hw, const sc__tf_config *c, uint64_t stride, sc__comm_model *out,
                          sc_error *err) {
    uint64_t gpn = c->gpus_per_node;
    uint64_t per_node = stride >= gpn ? 1 : gpn / stride;
    return sc__comm_model_from_profile(hw, (uint32_t)per_node, c->net_gbps, 0, out, err);
}

typedef struct models {
    sc__comm_model m[SC__COMM_COUNT];
} models;

static sc_status build(const sc__tf_config *c, const sc__kernel_timer *timer, const sc__hw_profile *hw,
                       const sc__model_calib *calib, models *cms, sc__graph **out, sc_error *err) {
    *out = NULL;
    builder b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.timer = timer;
    b.sm_count = hw->sm_count;
    /* the expert-data-parallel group: Megatron's expert rank generator
     * orders tp-ep-dp, so its members are etp x ep GPUs apart */
    uint64_t strides[SC__COMM_COUNT] = {1, c->tp, (uint64_t)c->tp * c->cp, (uint64_t)c->tp * c->cp,
                                        (uint64_t)c->tp * c->cp * c->dp, (uint64_t)c->etp * c->ep};
    uint32_t ranks[SC__COMM_COUNT] = {c->tp, c->cp, c->ep, c->dp * c->cp, 2, sc__tf_edp(c)};
    static const char *const labels[SC__COMM_COUNT] = {"tensor parallel", "context parallel", "expert parallel",
                                                       "data parallel", "pipeline", "expert data parallel"};
    sc_status st = SC_OK;
    for (int k = 0; k < SC__COMM_COUNT && st == SC_OK; k++) {
        if (k == SC__COMM_DP) strides[k] = (uint64_t)c->tp; /* dp x cp: cp is inside dp's stride */
        if (k == SC__COMM_EP && c->etp < c->tp) strides[k] = c->etp; /* experts fold tp into ep */
        st = comm_for(hw, c, strides[k], &cms->m[k], err);
        if (st == SC_OK && calib && calib->nsamples && !sc__comm_model_fit(&cms->m[k], calib->samples, calib->nsamples))
            st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        b.cm[k] = &cms->m[k];
        b.comm_ranks[k] = ranks[k];
    }
    if (st != SC_OK) return st;
    b.P = c->pp;
    b.V = c->vp;
    b.tied_first = SC__NONE;
    b.bucket = bucket_params(c);
    b.M = sc__tf_micro(c);
    b.Lc = sc__alloc_array((size_t)c->pp * c->vp, sizeof *b.Lc);
    b.L0 = sc__alloc_array((size_t)c->pp * c->vp, sizeof *b.L0);
    b.kind = sc__alloc_array(c->layers, sizeof *b.kind);
    if (!b.Lc || !b.L0 || !b.kind) {
        free(b.Lc);
        free(b.L0);
        free(b.kind);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    for (uint32_t k = 0, first = 0; k < c->vp; k++)
        for (uint32_t s = 0; s < c->pp; s++) {
            b.L0[(size_t)k * c->pp + s] = first;
            first += b.Lc[(size_t)k * c->pp + s] = sc__tf_chunk_layers(c, s, k);
        }
    b.layer_params = mean_layer_params(c);
    sc__pp_kind kind = c->pp < 2 ? SC__PP_1F1B : c->vp > 1 ? SC__PP_INTERLEAVED : SC__PP_1F1B;
    const char *why = sc__pp_check(kind, b.P, b.M, b.V);
    if (why) {
        free(b.Lc);
        free(b.L0);
        free(b.kind);
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "pipeline schedule: %s", why);
    }
    b.g = sc__graph_new();
    sc__vec_init(&b.pend, sizeof(pending));
    sc__vec_init(&b.opt_join, sizeof(uint32_t));
    size_t nunits = (size_t)b.M * b.V * 2;
    sc__pp_unit *units = sc__alloc_array(nunits, sizeof *units);
    size_t np2p = (size_t)b.M * b.P * b.V * 2;
    b.p2p = sc__alloc_array(np2p, sizeof *b.p2p);
    b.gather = sc__alloc_array(b.V, sizeof *b.gather);
    bool ok = b.g && units && b.p2p && b.gather;
    for (int k = 0; ok && k < SC__COMM_COUNT; k++)
        ok = (b.comm_label[k] = sc__intern_put(&b.g->strings, labels[k], strlen(labels[k]))) != SC__NONE;
    if (ok) memset(b.p2p, 0xff, np2p * sizeof *b.p2p);
    ok = ok && layer_progs(&b) && prog_make(&b, &b.efwd, sc__tf_embed_ops, SC__PH_FWD) && prog_make(&b, &b.ebwd, sc__tf_embed_ops, SC__PH_BWD) &&
         prog_make(&b, &b.hfwd, sc__tf_head_ops, SC__PH_FWD) && prog_make(&b, &b.hbwd, sc__tf_head_ops, SC__PH_BWD) &&
         prog_make(&b, &b.mfwd, sc__tf_mtp_ops, SC__PH_FWD) && prog_make(&b, &b.mbwd, sc__tf_mtp_ops, SC__PH_BWD);
    for (uint32_t s = 0; ok && s < b.P && !b.oom; s++) stage(&b, s, kind, units);
    ok = ok && !b.oom;
    prog *progs[] = {&b.efwd, &b.ebwd, &b.hfwd, &b.hbwd, &b.mfwd, &b.mbwd};
    for (size_t k = 0; k < sizeof progs / sizeof *progs; k++) prog_free(progs[k]);
    for (size_t k = 0; k < SC__TF_KINDS; k++) {
        prog_free(&b.fwd[k]);
        prog_free(&b.bwd[k]);
        prog_free(&b.rec[k]);
    }
    free(units);
    free(b.p2p);
    free(b.gather);
    free(b.Lc);
    free(b.L0);
    free(b.kind);
    sc__vec_free(&b.pend);
    sc__vec_free(&b.opt_join);
    if (!ok) {
        sc__graph_free(b.g);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory building the model's graph");
    }
    if ((st = sc__graph_finish(b.g, true, err)) != SC_OK) {
        sc__graph_free(b.g);
        return st;
    }
    *out = b.g;
    return SC_OK;
}

/* A replay of the synthesised graph: its calibration is the model's (no
 * trace to measure it from), so it is set here instead of calibrated. */
static sc_status replay_of(sc__graph *g, const sc__model_calib *calib, sc_replay **out, sc_error *err) {
    sc_replay *r = calloc(1, sizeof *r);
    if (!r) {
        sc__graph_free(g);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    r->g = g;
    r->coupled = true;
    r->modelled = true;
    size_t nr = g->ranks.len ? g->ranks.len : 1, np = g->procs.len ? g->procs.len : 1;
    r->launch_latency = calloc(nr, sizeof *r->launch_latency);
    r->sync_base = calloc(nr, sizeof *r->sync_base);
    r->sync_wake = calloc(nr, sizeof *r->sync_wake);
    r->rank_offset = calloc(nr, sizeof *r->rank_offset);
    r->dispatch_gap = calloc(nr, sizeof *r->dispatch_gap);
    r->backlog = calloc(np, sizeof *r->backlog);
    r->cls = sc__alloc_array(g->tasks.len ? g->tasks.len : 1, 1);
    if (!r->launch_latency || !r->sync_base || !r->sync_wake || !r->rank_offset || !r->dispatch_gap || !r->backlog ||
        !r->cls || !sc__scale_classify(g, r->cls)) {
        sc_replay_free(r);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    for (size_t k = 0; calib && calib->gap && k < g->ranks.len; k++) {
        r->dispatch_gap[k] = calib->dispatch_gap_ns;
        r->launch_latency[k] = calib->launch_latency_ns;
    }
    r->sens.why_not = "not run for a modelled step";
    sc_status st = sc__replay_finish(r, NULL, err);
    if (st != SC_OK) {
        sc_replay_free(r);
        return st;
    }
    *out = r;
    return SC_OK;
}

/* Per stage: the idle share of its compute stream over the step. */
static void bubbles(sc_model *m) {
    const sc__graph *g = m->r->g;
    const sc__proc *procs = sc__graph_procs(g);
    const sc__task *tasks = sc__graph_tasks(g);
    int64_t step = m->r->sim.makespan;
    int64_t *busy = calloc(g->ranks.len ? g->ranks.len : 1, sizeof *busy);
    if (!busy || step <= 0) {
        free(busy);
        return;
    }
    for (size_t i = 0; i < g->tasks.len; i++) {
        const sc__proc *p = &procs[tasks[i].proc];
        if (p->kind == SC_P_STREAM && p->id == 7)
            busy[p->rank] += m->r->sim.end[i] - m->r->sim.start[i];
    }
    for (size_t k = 0; k < g->ranks.len; k++) {
        m->bubble[k] = 1.0 - (double)busy[k] / (double)step;
        if ((double)busy[k] * 1e-9 > m->sum.gpu_busy_s) m->sum.gpu_busy_s = (double)busy[k] * 1e-9;
    }
    free(busy);
}

/* The calibrated parameters replace the profile's (model_calibrate.c says
 * how each was measured). The GEMM efficiency is the trace's 16-bit one;
 * fp8 keeps the profile's. */
static void apply_calib(sc_model *m, const sc__model_calib *k) {
    m->calib = *k;
    m->calib.samples = NULL; /* the configuration owns them */
    if (k->host) m->c.host_us = k->host_us;
    double peak = m->roof.peak_tflops[SC__DT_BF16];
    if (k->gemm && k->gemm_ns > 0 && peak > 0) {
        m->roof.gemm_eff[SC__DT_BF16] = m->roof.gemm_eff[SC__DT_FP16] = k->gemm_work / (double)k->gemm_ns / 1e3 / peak;
        m->roof.gemm_from = "calibrated";
    }
    if (k->mem && k->mem_ns > 0 && m->roof.hbm_GBps > 0) {
        m->roof.hbm_eff = k->mem_bytes / (double)k->mem_ns / m->roof.hbm_GBps;
        m->roof.hbm_from = "calibrated";
    }
}

sc_status sc__model_run(const sc__tf_config *cfg, const sc__model_calib *calib, sc_model **out, sc_error *err) {
    *out = NULL;
    double t0 = sc__now();
    sc_model *m = calloc(1, sizeof *m);
    if (!m) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    m->c = *cfg;
    char why[256];
    if (!sc__tf_resolve(&m->c, why, sizeof why)) {
        free(m);
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model: %s", why);
    }
    const sc__hw_profile *hw = sc__hw_find(m->c.gpu);
    if (!hw) {
        free(m);
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model: unknown GPU '%s' (stepcast comm --gpu takes the same names)", m->c.gpu);
    }
    if (m->c.dtype == SC__DT_FP8 && !(hw->fp8_tflops > 0)) {
        free(m);
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "model: %s has no fp8 tensor cores", hw->name);
    }
    sc__roofline_init(&m->roof, hw);
    if (calib) apply_calib(m, calib);
    uint32_t P = m->c.pp;
    m->mem = calloc(P, sizeof *m->mem);
    m->bubble = calloc(P, sizeof *m->bubble);
    if (!m->mem || !m->bubble) {
        sc_model_free(m);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    }
    double worst = 0;
    for (uint32_t s = 0; s < P; s++) {
        sc__tf_stage_memory(&m->c, s, &m->mem[s]);
        if (m->mem[s].total > worst) worst = m->mem[s].total;
    }
    sc__kernel_timer timer = sc__roofline_timer(&m->roof);
    models *cms = malloc(sizeof *cms);
    sc__graph *g = NULL;
    sc_status st = cms ? build(&m->c, &timer, hw, calib, cms, &g, err) : sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    if (cms) m->cm = cms->m[SC__COMM_DP];
    free(cms);
    if (st == SC_OK) st = replay_of(g, calib, &m->r, err);
    if (st != SC_OK) {
        sc_model_free(m);
        return st;
    }
    bubbles(m);
    sc_model_summary *s = &m->sum;
    s->step_ns = m->r->sim.makespan;
    s->gpus = sc__tf_gpus(&m->c);
    s->micro_batches = sc__tf_micro(&m->c);
    s->tasks = m->r->g->tasks.len;
    double step_s = (double)s->step_ns * 1e-9;
    if (step_s > 0) {
        s->tokens_per_s_per_gpu = (double)m->c.gbs * m->c.seq / step_s / (double)s->gpus;
        s->model_tflops_per_gpu = sc__tf_model_flops(&m->c) / step_s / (double)s->gpus * 1e-12;
        s->mfu = s->model_tflops_per_gpu / m->roof.peak_tflops[SC__DT_BF16];
    }
    for (uint32_t k = 0; k < P; k++)
        if (m->bubble[k] > s->bubble) s->bubble = m->bubble[k];
    s->memory_gb = worst * 1e-9;
    s->gpu_memory_gb = hw->memory_GB;
    s->fits = s->memory_gb <= s->gpu_memory_gb;
    s->simulate_s = sc__now() - t0;
    *out = m;
    return SC_OK;
}

void sc_model_free(sc_model *m) {
    if (!m) return;
    sc_replay_free(m->r);
    free(m->mem);
    free(m->bubble);
    free(m);
}

sc_model_summary sc_model_get_summary(const sc_model *m) { return m->sum; }
const sc_replay *sc_model_replay(const sc_model *m) { return m->r; }
