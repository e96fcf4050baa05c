/*
 * model_report.c - `stepcast model`: the report of a modelled step (text or
 * JSON) and the table of a sweep. Formats only: the figures come from
 * src/pipeline/model.c and the replay behind it.
 */
#include "../pipeline/model.h"

#include <stdio.h>

static double gb(double bytes) { return bytes * 1e-9; }

/* s as a JSON string literal (a name or a path may hold quotes). */
static void json_str(FILE *out, const char *s) {
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_json_cstr(&b, s);
    if (!b.oom) fwrite(b.data, 1, b.len, out);
    sc__buf_free(&b);
}

/* Megatron's names of the selectively recomputed modules, comma-separated. */
static const char *recompute_mods(uint8_t bits, char *buf, size_t n) {
    static const char *const names[] = {"core_attn", "mla_up_proj", "mlp"};
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < 3; i++)
        if (bits & (1u << i)) len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? "," : "", names[i]);
    return buf;
}

/* The fields of latent attention, MTP and the recomputed modules, only
 * where set (the JSON of other models stays as it was). */
static void config_json_extra(const sc__tf_config *c, FILE *out) {
    if (c->mla)
        fprintf(out, ",\"multi_latent_attention\":true,\"q_lora_rank\":%u,\"kv_lora_rank\":%u,\"qk_head_dim\":%u,"
                     "\"qk_pos_emb_head_dim\":%u,\"v_head_dim\":%u",
                c->q_lora, c->kv_lora, c->qk_dim, c->qk_rope_dim, c->v_dim);
    if (c->mtp_layers) fprintf(out, ",\"mtp_layers\":%u", c->mtp_layers);
    if (c->recompute_mods) {
        char mods[64];
        fprintf(out, ",\"recompute_modules\":\"%s\"", recompute_mods(c->recompute_mods, mods, sizeof mods));
    }
}

static void config_json(const sc__tf_config *c, FILE *out) {
    fputs("\"config\":{\"name\":", out);
    json_str(out, c->name);
    fputc(',', out);
    fprintf(out,
            "\"layers\":%u,\"hidden\":%u,\"ffn\":%u,\"heads\":%u,\"kv_heads\":%u,\"vocab\":%u,"
            "\"seq\":%u,\"dtype\":\"%s\",\"experts\":%u,\"topk\":%u,\"head_dim\":%u,\"moe_ffn\":%u,\"shared_ffn\":%u,\"etp\":%u,\"tied\":%s,\"dense_layers\":%u,\"window\":%u,\"window_skip\":%u,\"gated\":%s,\"rope\":%s,\"attention\":\"%s\",\"tp\":%u,\"sp\":%s,"
            "\"pp\":%u,\"pp_first_layers\":%u,\"pp_last_layers\":%u,\"pp_embedding\":%s,\"vp\":%u,\"dp\":%u,\"cp\":%u,\"ep\":%u,\"fsdp\":%s,\"distributed_optimizer\":%s,\"mbs\":%u,\"gbs\":%u,"
            "\"micro_batches\":%u,\"recompute\":\"%s\",\"overlap_grad_reduce\":%s,\"overlap_param_gather\":%s,"
            "\"tp_comm_overlap\":%s,\"gpu\":\"%s\",\"gpus\":%u,\"gpus_per_node\":%u,\"net_gbps\":%.3f,\"host_us\":%.3f",
            c->layers, c->hidden, c->ffn, c->heads, c->kv_heads, c->vocab, c->seq, sc__dtype_name(c->dtype),
            c->experts, c->topk, c->head_dim ? c->head_dim : c->hidden / c->heads, c->moe_ffn, c->shared_ffn, c->etp, c->tied ? "true" : "false", c->dense_layers, c->window, c->window_skip, c->gated ? "true" : "false", c->rope ? "true" : "false", c->attention ? "unfused" : "flash", c->tp,
            c->sp ? "true" : "false", c->pp, sc__tf_stage_layers(c, 0), sc__tf_stage_layers(c, c->pp - 1), c->pp_embedding ? "true" : "false", c->vp, c->dp, c->cp, c->ep, c->fsdp ? "true" : "false",
            c->dist_opt ? "true" : "false", c->mbs, c->gbs, sc__tf_micro(c), sc__tf_recompute_name(c->recompute),
            c->overlap_grad ? "true" : "false", c->overlap_param ? "true" : "false", c->tp_overlap ? "true" : "false",
            c->gpu, sc__tf_gpus(c), c->gpus_per_node, c->net_gbps, c->host_us);
    /* only when set, so that the JSON of a model without adapters is unchanged */
    if (c->lora_rank) fprintf(out, ",\"lora_rank\":%u", c->lora_rank);
    if (!c->grad_fp32) fputs(",\"grad_reduce_in_fp32\":false", out);
    if (c->ce_fusion) fprintf(out, ",\"cross_entropy_fusion\":\"%s\"", c->ce_fusion == SC__CE_TE ? "te" : "native");
    if (c->dispatcher) fprintf(out, ",\"moe_dispatcher\":\"%s\"", sc__tf_dispatcher_name(c->dispatcher));
    if (c->router_groups)
        fprintf(out, ",\"moe_router_num_groups\":%u,\"moe_router_group_topk\":%u", c->router_groups, c->router_group_topk);
    config_json_extra(c, out);
    if (c->hybrid[0])
        fprintf(out, ",\"hybrid_pattern\":\"%s\",\"mamba_heads\":%u,\"mamba_head_dim\":%u,\"mamba_state\":%u,\"mamba_groups\":%u,\"mamba_chunk\":%u",
                c->hybrid, c->mamba_heads, c->mamba_head_dim, c->mamba_state, c->mamba_groups, c->mamba_chunk);
    fputc('}', out);
}

/* The FLOP convention the MFU follows: the Megatron papers' for a
 * transformer (LoRA: the frozen base's forward and input gradients, the
 * adapters' three passes), training.py's hybrid branch for a hybrid. */
static const char *mfu_convention(const sc__tf_config *c) {
    if (c->hybrid[0]) return "Megatron's hybrid_flops: 3 x forward FLOPs, causal attention, no recomputation";
    if (c->lora_rank) return "Megatron: 2 x forward FLOPs of the frozen base + 3 x the adapters', full s x s attention, no recomputation";
    return "Megatron: 3 x forward FLOPs, full s x s attention, no recomputation";
}

/* "23 Mamba-2, 6 attention, 23 MoE" */
static void hybrid_text(const sc__tf_config *c, FILE *out) {
    static const char syms[] = "M*-E";
    static const char *const names[] = {"Mamba-2", "attention", "MLP", "MoE"};
    fprintf(out, ", hybrid %s (", c->hybrid);
    const char *sep = "";
    for (int i = 0; i < 4; i++) {
        unsigned n = 0;
        for (const char *p = c->hybrid; *p; p++) n += *p == syms[i];
        if (!n) continue;
        fprintf(out, "%s%u %s", sep, n, names[i]);
        sep = ", ";
    }
    fprintf(out, "; Mamba-2 %u heads x %u, state %u, %u groups, chunk %u)", c->mamba_heads, c->mamba_head_dim, c->mamba_state,
            c->mamba_groups, c->mamba_chunk);
}

static void write_json(const sc_model *m, FILE *out) {
    const sc_model_summary *s = &m->sum;
    fputc('{', out);
    config_json(&m->c, out);
    fprintf(out,
            ",\"step_s\":%.6f,\"tokens_per_s_per_gpu\":%.2f,\"model_tflops_per_gpu\":%.2f,\"mfu\":%.4f,"
            "\"mfu_convention\":\"%s, over the dense bf16 peak\","
            "\"bubble\":%.4f,\"memory_gb\":%.3f,\"gpu_memory_gb\":%.1f,\"fits\":%s,\"tasks\":%llu,",
            (double)s->step_ns * 1e-9, s->tokens_per_s_per_gpu, s->model_tflops_per_gpu, s->mfu, mfu_convention(&m->c), s->bubble, s->memory_gb,
            s->gpu_memory_gb, s->fits ? "true" : "false", (unsigned long long)s->tasks);
    fprintf(out, "\"parameters\":{\"gemm_efficiency\":\"%s\",\"attention_efficiency\":\"%s\",\"hbm\":\"%s\",\"host_per_launch\":\"%s\","
                 "\"dispatch_gap\":\"%s\",\"communication\":\"%s\"},",
            m->roof.gemm_from, m->roof.attn_from, m->roof.hbm_from, m->calib.host ? "calibrated" : "default",
            m->calib.gap ? "calibrated" : "default", m->calib.nsamples ? "calibrated" : "profile");
    const sc__model_calib *cal = &m->calib;
    if (cal->host) {
        fputs("\"calibration\":{\"traces\":", out);
        json_str(out, cal->trace);
        fprintf(out,
                ",\"ranks\":%zu,\"traced_step_s\":%.6f,\"traced_gpu_busy_s\":%.6f,"
                "\"traced_host_s\":%.6f,\"traced_launches\":%llu,\"traced_layers\":%u,\"modelled_launches\":%llu,"
                "\"launches_per_kernel\":%.4f,\"host_per_traced_launch_us\":%.3f,\"launch_call_us\":%.3f,"
                "\"host_per_launch_us\":%.3f,\"gemm_efficiency\":%.4f,\"gemm_ops\":%llu,\"hbm_efficiency\":%.4f,"
                "\"memory_ops\":%llu,\"dispatch_gap_us\":%.3f,\"launch_latency_us\":%.3f,\"collectives_fitted\":%zu},",
                cal->ranks, cal->traced_step_ms * 1e-3, cal->traced_gpu_ms * 1e-3, cal->traced_host_ms * 1e-3,
                (unsigned long long)cal->traced_launches, cal->traced_layers, (unsigned long long)cal->modelled_launches,
                cal->launches_per_kernel, cal->host_per_traced_us, cal->launch_api_us, cal->host_us,
                m->roof.gemm_eff[SC__DT_BF16], (unsigned long long)cal->gemm_ops, m->roof.hbm_eff,
                (unsigned long long)cal->mem_ops, (double)cal->dispatch_gap_ns * 1e-3, (double)cal->launch_latency_ns * 1e-3,
                cal->nsamples);
    }
    fprintf(out, "\"gpu_busy_s\":%.6f,", s->gpu_busy_s);
    fputs("\"stages\":[", out);
    const sc_replay *r = m->r;
    for (uint32_t k = 0; k < m->c.pp; k++) {
        const sc__tf_memory *mm = &m->mem[k];
        const sc__replay_rank *rr = &r->ranks[k];
        fprintf(out,
                "%s{\"stage\":%u,\"end_s\":%.6f,\"exposed_compute_s\":%.6f,\"exposed_comm_s\":%.6f,\"overlapped_s\":%.6f,"
                "\"idle_s\":%.6f,\"bubble\":%.4f,\"memory_gb\":{\"weights\":%.3f,\"grads\":%.3f,\"optimizer\":%.3f,"
                "\"activations\":%.3f,\"total\":%.3f}}",
                k ? "," : "", k, (double)rr->sim_end * 1e-9, (double)rr->exposed_compute_ns * 1e-9,
                (double)rr->exposed_comm_ns * 1e-9, (double)rr->overlapped_ns * 1e-9, (double)rr->idle_ns * 1e-9,
                m->bubble[k], gb(mm->weights), gb(mm->grads), gb(mm->optimizer), gb(mm->activations), gb(mm->total));
    }
    fputs("],\"critical_path\":{", out);
    static const char *const views[] = {"by_class", "by_operator"};
    for (int v = 0; v < 2; v++) {
        const sc_cp_item *items;
        size_t n = sc_replay_cp_items(r, (sc_cp_view)v, &items);
        fprintf(out, "%s\"%s\":[", v ? "," : "", views[v]);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s{\"name\":\"%s\",\"s\":%.6f,\"count\":%llu}", i ? "," : "", items[i].name,
                    (double)items[i].ns * 1e-9, (unsigned long long)items[i].count);
        fputc(']', out);
    }
    fputs("}}\n", out);
}

static void write_text(const sc_model *m, FILE *out) {
    const sc__tf_config *c = &m->c;
    const sc_model_summary *s = &m->sum;
    fprintf(out, "model %s: %u layers, hidden %u, ffn %u%s, %u heads (%u kv), vocab %u, seq %u, %s, %s attention%s",
            c->name[0] ? c->name : "(flags)", c->layers, c->hidden, c->ffn, c->gated ? " gated" : "", c->heads,
            c->kv_heads, c->vocab, c->seq, sc__dtype_name(c->dtype), c->attention ? "unfused" : "flash",
            c->rope ? ", rotary embedding" : "");
    if (c->head_dim) fprintf(out, ", head dim %u", c->head_dim);
    if (c->experts) fprintf(out, ", %u experts top-%u (expert ffn %u, shared ffn %u, etp %u)", c->experts, c->topk, c->moe_ffn,
                            c->shared_ffn, c->etp);
    if (c->router_groups) fprintf(out, ", routed within %u of %u expert groups", c->router_group_topk, c->router_groups);
    if (c->dense_layers) fprintf(out, ", the first %u layers dense", c->dense_layers);
    if (c->lora_rank) fprintf(out, ", LoRA rank %u on qkv, proj, fc1, fc2 (base frozen)", c->lora_rank);
    if (c->window && c->window_skip) fprintf(out, ", window %u (every %u%s layer full)", c->window, c->window_skip,
                                             c->window_skip == 2 ? "nd" : c->window_skip == 3 ? "rd" : "th");
    else if (c->window) fprintf(out, ", window %u", c->window);
    if (c->mla)
        fprintf(out, ", latent attention (q rank %u, kv rank %u, qk %u+%u, v %u)", c->q_lora, c->kv_lora, c->qk_dim,
                c->qk_rope_dim, c->v_dim);
    if (c->mtp_layers) fprintf(out, ", %u MTP layer%s", c->mtp_layers, c->mtp_layers > 1 ? "s" : "");
    if (c->hybrid[0]) hybrid_text(c, out);
    fprintf(out, "\njob: %u x %s, tp %u%s pp %u vp %u cp %u dp %u ep %u%s%s, mbs %u gbs %u (%u micro-batches), recompute %s\n",
            sc__tf_gpus(c), c->gpu, c->tp, c->sp ? "+sp" : "", c->pp, c->vp, c->cp, c->dp, c->ep,
            c->fsdp ? ", fsdp" : c->dist_opt ? ", distributed optimizer" : "",
            c->overlap_grad || c->overlap_param || c->tp_overlap ? ", overlap" : "", c->mbs, c->gbs, sc__tf_micro(c),
            sc__tf_recompute_name(c->recompute));
    if (c->recompute == SC__RC_SELECTIVE && c->recompute_mods) {
        char mods[64];
        fprintf(out, "  (recompute modules: %s)\n", recompute_mods(c->recompute_mods, mods, sizeof mods));
    }
    if (!c->grad_fp32 || c->ce_fusion)
        fprintf(out, "  (gradients reduced in %s, cross-entropy %s)\n", c->grad_fp32 ? "fp32" : "bf16",
                c->ce_fusion == SC__CE_TE ? "fused (TransformerEngine)" : c->ce_fusion ? "fused (native)" : "unfused");
    if (c->dispatcher)
        fprintf(out, "  (tokens dispatched by %s: once a destination node over the network, once a GPU over NVLink)\n",
                c->dispatcher == SC__DISP_DEEPEP ? "DeepEP" : "HybridEP");
    fprintf(out, "step: %.3f s   %.0f tokens/s/GPU   %.1f model TFLOP/s/GPU   MFU %.1f%%   bubble %.1f%%\n",
            (double)s->step_ns * 1e-9, s->tokens_per_s_per_gpu, s->model_tflops_per_gpu, 100 * s->mfu, 100 * s->bubble);
    fprintf(out, "  (MFU: Megatron's model FLOPs, %s and no recomputation, over %.1f TFLOP/s dense bf16)\n",
            c->hybrid[0]    ? "3 x forward with its hybrid branch (causal attention)"
            : c->lora_rank ? "2 x forward of the frozen base + 3 x the adapters' with full s x s attention"
                           : "3 x forward with full s x s attention",
            m->roof.peak_tflops[SC__DT_BF16]);
    fprintf(out, "memory: %.1f GB of %.0f GB on the fullest GPU%s\n", s->memory_gb, s->gpu_memory_gb,
            s->fits ? "" : "   WARNING: does not fit in the GPU's memory");
    fprintf(out, "parameters: GEMM efficiency %s, attention %s, HBM %s, host %.2f us per launch (%s)\n", m->roof.gemm_from,
            m->roof.attn_from, m->roof.hbm_from, c->host_us, m->calib.host ? "calibrated" : "default");
    const sc__model_calib *cal = &m->calib;
    if (cal->host) {
        fprintf(out, "calibrated from %s (%zu rank%s; traced step %.3f ms, GPU busy %.3f ms, launching threads busy %.3f ms):\n",
                cal->trace, cal->ranks, cal->ranks == 1 ? "" : "s", cal->traced_step_ms, cal->traced_gpu_ms, cal->traced_host_ms);
        fprintf(out, "  host      %.2f us CPU per traced launch (the launch call itself %.2f us), %llu launches per step\n",
                cal->host_per_traced_us, cal->launch_api_us, (unsigned long long)cal->traced_launches);
        if (cal->modelled_launches)
            fprintf(out, "            = %.3f launches per modelled kernel (%llu modelled for its %u layers): %.2f us per modelled launch\n",
                    cal->launches_per_kernel, (unsigned long long)cal->modelled_launches, cal->traced_layers, cal->host_us);
        else
            fprintf(out, "            no layers found: 1 launch per modelled kernel assumed\n");
        fprintf(out, "  GEMM      %s: %.3f of peak over %llu bf16/fp16 GEMM ops (fp8 keeps the profile's)\n",
                cal->gemm ? "calibrated" : "profile (no shaped GEMM in the trace)", m->roof.gemm_eff[SC__DT_BF16],
                (unsigned long long)cal->gemm_ops);
        fprintf(out, "  HBM       %s: %.3f of %.0f GB/s over %llu elementwise/norm ops\n",
                cal->mem ? "calibrated" : "profile (no shaped memory-bound op of 20 us or more)", m->roof.hbm_eff,
                m->roof.hbm_GBps, (unsigned long long)cal->mem_ops);
        fprintf(out, "  dispatch  gap %.2f us, launch latency %.2f us (%s)\n", (double)cal->dispatch_gap_ns * 1e-3,
                (double)cal->launch_latency_ns * 1e-3, cal->gap ? "the replay's calibration" : "default 0");
        fprintf(out, "  comm      %s\n", cal->nsamples ? "fitted to the trace's collectives" : "profile (no sized collective in the trace)");
        fprintf(out, "  attention profile (flash attention kernels are not shaped in the trace)\n");
    }
    fprintf(out, "GPU busy: %.3f ms on the busiest stage's compute stream\n", s->gpu_busy_s * 1e3);
    fprintf(out, "\n%-6s %10s %10s %10s %10s %10s %8s %9s %9s %9s %9s\n", "stage", "end s", "compute", "comm", "overlap",
            "idle", "bubble", "weights", "grads", "optim", "activ GB");
    for (uint32_t k = 0; k < c->pp; k++) {
        const sc__replay_rank *rr = &m->r->ranks[k];
        const sc__tf_memory *mm = &m->mem[k];
        fprintf(out, "%-6u %10.3f %10.3f %10.3f %10.3f %10.3f %7.1f%% %9.2f %9.2f %9.2f %9.2f\n", k,
                (double)rr->sim_end * 1e-9, (double)rr->exposed_compute_ns * 1e-9, (double)rr->exposed_comm_ns * 1e-9,
                (double)rr->overlapped_ns * 1e-9, (double)rr->idle_ns * 1e-9, 100 * m->bubble[k], gb(mm->weights),
                gb(mm->grads), gb(mm->optimizer), gb(mm->activations));
    }
    const sc_cp_item *items;
    size_t n = sc_replay_cp_items(m->r, SC_CP_BY_OPERATOR, &items);
    fprintf(out, "\ncritical path (%.3f s), by task name:\n", (double)m->r->cp.length_ns * 1e-9);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-28s %10.3f s %8llu\n", items[i].name, (double)items[i].ns * 1e-9, (unsigned long long)items[i].count);
}

sc_status sc_model_write(const sc_model *m, FILE *out, int json, sc_error *err) {
    sc__error_clear(err);
    if (json)
        write_json(m, out);
    else
        write_text(m, out);
    if (ferror(out)) return sc__fail(err, SC_E_IO, NULL, SC_NO_OFFSET, "write failed");
    return SC_OK;
}

sc_status sc_model_sweep_write(const sc_model_sweep *s, FILE *out, int json, sc_error *err) {
    sc__error_clear(err);
    if (json) {
        fprintf(out, "{\"tried\":%zu,\"invalid\":%zu,\"not_fitting\":%zu,\"rows\":[", s->tried, s->invalid, s->not_fitting);
        for (size_t i = 0; i < s->nrows; i++) {
            const sweep_row *r = &s->rows[i];
            fprintf(out, "%s{\"config\":", i ? "," : "");
            json_str(out, r->desc);
            fprintf(out, ",\"step_s\":%.6f,\"tokens_per_s_per_gpu\":%.1f,\"mfu\":%.4f,\"bubble\":%.4f,\"memory_gb\":%.2f}",
                    (double)r->sum.step_ns * 1e-9, r->sum.tokens_per_s_per_gpu, r->sum.mfu,
                    r->sum.bubble, r->sum.memory_gb);
        }
        fprintf(out, "]}\n");
    } else {
        fprintf(out, "%zu configurations: %zu fit, %zu do not fit in memory, %zu invalid\n", s->tried, s->nrows,
                s->not_fitting, s->invalid);
        fprintf(out, "%-48s %10s %12s %6s %7s %9s\n", "config", "step s", "tok/s/GPU", "MFU", "bubble", "mem GB");
        for (size_t i = 0; i < s->nrows; i++) {
            const sweep_row *r = &s->rows[i];
            fprintf(out, "%-48s %10.3f %12.1f %5.1f%% %6.1f%% %9.1f\n", r->desc, (double)r->sum.step_ns * 1e-9,
                    r->sum.tokens_per_s_per_gpu, 100 * r->sum.mfu, 100 * r->sum.bubble, r->sum.memory_gb);
        }
    }
    if (ferror(out)) return sc__fail(err, SC_E_IO, NULL, SC_NO_OFFSET, "write failed");
    return SC_OK;
}
