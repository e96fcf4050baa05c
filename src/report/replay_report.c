/*
 * replay_report.c - `stepcast replay`: the replay's figures (src/pipeline)
 * as text for people or JSON for scripts: measured vs simulated step time
 * per rank, where the simulated time goes, and the critical path. Output is
 * built in memory with fixed formats in the replay's fixed orders, so
 * identical inputs give byte-identical text and JSON.
 */
#include "../pipeline/replay.h"

#include <stdio.h>
#include <stdlib.h>

static double us(int64_t ns) { return (double)ns / 1000.0; }

/* The error as JSON: null, with why, when the measured step cannot be
 * compared with the replay (Chakra inputs carry no measured window; a
 * capture without replays, a step not closed in the trace...). */
static void error_json(sc__buf *b, int64_t measured, int64_t simulated, const char *no_error) {
    if (!no_error && measured > 0) {
        sc__buf_printf(b, ",\"error_pct\":%.3f", sc__replay_error_pct(measured, simulated));
        return;
    }
    sc__buf_puts(b, ",\"error_pct\":null,\"no_error_because\":");
    const char *why = no_error ? no_error : "the input has no measured step";
    sc__buf_json_cstr(b, why);
}

static void json_items(sc__buf *b, const char *key, const sc_cp_item *items, size_t n, bool last) {
    sc__buf_printf(b, "\"%s\":[", key);
    for (size_t i = 0; i < n; i++) {
        sc__buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        sc__buf_json_cstr(b, items[i].name);
        sc__buf_printf(b, ",\"us\":%.3f,\"count\":%llu}", us(items[i].ns),
                       (unsigned long long)items[i].count);
    }
    sc__buf_puts(b, last ? "]" : "],");
}

/* ------------------------------------------------------------ measured step */

static void mark_json(sc__buf *b, const char *key, const sc_step_mark *m) {
    sc__buf_printf(b, "\"%s\":{\"event\":", key);
    sc__buf_json_cstr(b, m->event);
    sc__buf_printf(b, ",\"kind\":\"%s\",\"%s\":%lld", m->kind, m->on_stream ? "stream" : "thread",
                   (long long)m->on);
}

/* "measured_from":{"opens":{...},"closes":{...,"after_annotation_us":x}},
 * or null when the rank has no measured step. */
static void measured_from_json(sc__buf *b, const sc_replay *r, size_t k) {
    sc_step_mark opens, closes;
    int64_t after;
    sc__replay_measured_from(r, k, &opens, &closes, &after);
    if (!opens.event) {
        sc__buf_puts(b, ",\"measured_from\":null");
        return;
    }
    sc__buf_puts(b, ",\"measured_from\":{");
    mark_json(b, "opens", &opens);
    sc__buf_puts(b, "},");
    mark_json(b, "closes", &closes);
    if (after >= 0) sc__buf_printf(b, ",\"after_annotation_us\":%.3f}}", us(after));
    else sc__buf_puts(b, ",\"after_annotation_us\":null}}");
}

/* One line per rank: what its measured step runs from and to. */
static void measured_from_text(sc__buf *b, const sc_replay *r) {
    bool any = false;
    for (size_t k = 0; k < r->nranks; k++) {
        sc_step_mark o, c;
        int64_t after;
        sc__replay_measured_from(r, k, &o, &c, &after);
        if (!o.event) continue;
        if (!any) sc__buf_puts(b, "\nmeasured step, per rank:\n");
        any = true;
        sc__buf_printf(b, "%4lld  from the start of %.40s (%s, %s %lld) to the end of %.50s (%s, %s %lld)",
                       (long long)r->ranks[k].rank, o.event, o.kind, o.on_stream ? "stream" : "thread",
                       (long long)o.on, c.event, c.kind, c.on_stream ? "stream" : "thread", (long long)c.on);
        if (after > 0) sc__buf_printf(b, ", %.3f ms after the annotation ends", us(after) / 1000.0);
        sc__buf_puts(b, "\n");
    }
}

/* ------------------------------------------------------------ prediction */

static void shape_json(sc__buf *b, const char *key, const sc_job_shape *s) {
    sc__buf_printf(b, "\"%s\":{\"ranks\":%u,\"dp\":%u,\"nodes\":%u,\"gpus_per_node\":%u,\"gpu\":", key, s->ranks,
                   s->dp, s->nodes, s->gpus_per_node);
    sc__buf_json_cstr(b, s->gpu);
    sc__buf_printf(b, ",\"nvlink_gbps\":%.1f,\"net_gbps\":%.1f}", s->nvlink_gbps, s->net_gbps);
}

static void dims_json(sc__buf *b, const char *key, const sc_model_dims *d) {
    sc__buf_printf(b, "\"%s\":{\"hidden\":%lld,\"ffn\":%lld,\"heads\":%lld,\"seq\":%lld,\"micro_batch\":%lld,"
                      "\"tp\":%lld,\"head_dim\":%lld}",
                   key, (long long)d->hidden, (long long)d->ffn, (long long)d->heads, (long long)d->seq,
                   (long long)d->micro_batch, (long long)d->tp, (long long)d->head_dim);
}

/* The shape edits, when some were asked for. */
static void model_json(sc__buf *b, const sc_prediction *p) {
    if (!p->predicted_model.hidden) return;
    sc__buf_puts(b, ",\"model\":{");
    dims_json(b, "traced", &p->traced_model);
    sc__buf_puts(b, ",");
    dims_json(b, "new", &p->predicted_model);
    sc__buf_printf(b, ",\"kernels_reshaped\":%llu,\"kernels_unshaped\":%llu,\"collectives_resized\":%llu}",
                   (unsigned long long)p->kernels_reshaped, (unsigned long long)p->kernels_unshaped,
                   (unsigned long long)p->collectives_resized);
}

static void model_text(sc__buf *b, const sc_prediction *p) {
    const sc_model_dims *f = &p->traced_model, *t = &p->predicted_model;
    if (!t->hidden) return;
    sc__buf_printf(b,
                   "  model: hidden %lld -> %lld, ffn %lld -> %lld, heads %lld -> %lld, seq %lld -> %lld, "
                   "micro-batch %lld -> %lld (tp %lld)\n",
                   (long long)f->hidden, (long long)t->hidden, (long long)f->ffn, (long long)t->ffn,
                   (long long)f->heads, (long long)t->heads, (long long)f->seq, (long long)t->seq,
                   (long long)f->micro_batch, (long long)t->micro_batch, (long long)f->tp);
    sc__buf_printf(b,
                   "  kernels re-timed by the cost model: %llu with shapes, %llu without (as one activation); "
                   "collectives re-sized: %llu\n",
                   (unsigned long long)p->kernels_reshaped, (unsigned long long)p->kernels_unshaped,
                   (unsigned long long)p->collectives_resized);
}

/* The configuration simulated, in one object: null where it is the
 * traced one and not known here. */
static void config_json(sc__buf *b, const sc_prediction *p) {
    const sc_job_shape *n = &p->predicted;
    sc__buf_puts(b, ",\"configuration\":{\"layers\":");
    if (p->predicted_layers) sc__buf_printf(b, "%u", p->predicted_layers);
    else sc__buf_puts(b, "null");
    sc__buf_puts(b, ",\"tp\":");
    if (p->predicted_tp) sc__buf_printf(b, "%u", p->predicted_tp);
    else sc__buf_puts(b, "null");
    sc__buf_printf(b, ",\"pp\":%u,\"schedule\":", p->pp ? p->pp : 1);
    if (p->pp) sc__buf_printf(b, "\"%s\"", p->schedule);
    else sc__buf_puts(b, "null");
    sc__buf_printf(b,
                   ",\"microbatches\":%u,\"virtual_stages\":%u,\"dp\":%u,\"ranks\":%u,\"nodes\":%u,"
                   "\"gpus_per_node\":%u,\"gpu\":\"%s\",\"backward\":\"%s\",\"recompute\":\"%s\"}",
                   p->pp ? p->microbatches : 1, p->pp ? p->virtual_stages : 1, n->dp, n->ranks, n->nodes,
                   n->gpus_per_node, n->gpu, p->backward_modelled ? "modelled" : "as traced",
                   p->recompute ? p->recompute : "none");
}

static void config_text(sc__buf *b, const sc_prediction *p) {
    const sc_job_shape *n = &p->predicted;
    sc__buf_puts(b, "  simulated: ");
    if (p->predicted_layers) sc__buf_printf(b, "%u layers", p->predicted_layers);
    else sc__buf_puts(b, "the traced layers");
    if (p->predicted_tp) sc__buf_printf(b, ", tp %u", p->predicted_tp);
    else sc__buf_puts(b, ", the traced tp");
    if (p->pp)
        sc__buf_printf(b, ", pp %u (%s, %u micro-batch%s, %u virtual stage%s)", p->pp, p->schedule, p->microbatches,
                       p->microbatches == 1 ? "" : "es", p->virtual_stages, p->virtual_stages == 1 ? "" : "s");
    else sc__buf_puts(b, ", pp 1");
    sc__buf_printf(b, ", dp %u: %u rank%s on %u node%s of %u %s; backward %s, recompute %s\n", n->dp, n->ranks,
                   n->ranks == 1 ? "" : "s", n->nodes, n->nodes == 1 ? "" : "s", n->gpus_per_node, n->gpu,
                   p->backward_modelled ? "modelled" : "as traced", p->recompute ? p->recompute : "none");
}

static void prediction_json(sc__buf *b, const sc_prediction *p) {
    sc__buf_puts(b, ",\"prediction\":{");
    shape_json(b, "traced", &p->traced);
    sc__buf_puts(b, ",");
    shape_json(b, "new", &p->predicted);
    sc__buf_printf(b,
                   ",\"comm_model\":\"%s\",\"collectives_retimed\":%llu,\"collectives_unsized\":%llu,"
                   "\"gpu_tasks_retimed\":%llu,\"ranks_per_traced_rank\":%.4f,\"rank_shapes\":%zu",
                   p->comm_model, (unsigned long long)p->collectives_retimed,
                   (unsigned long long)p->collectives_unsized, (unsigned long long)p->gpu_tasks_retimed,
                   p->ranks_per_traced_rank, p->shapes);
    if (p->predicted_layers)
        sc__buf_printf(b, ",\"layers\":{\"traced\":%u,\"new\":%u}", p->traced_layers, p->predicted_layers);
    model_json(b, p);
    if (p->predicted_tp)
        sc__buf_printf(b,
                       ",\"tp\":{\"traced\":%u,\"new\":%u,\"kernels_sharded\":%llu,\"kernels_modelled\":%llu,"
                       "\"kernels_replicated\":%llu}",
                       p->traced_tp, p->predicted_tp, (unsigned long long)p->tp_sharded,
                       (unsigned long long)p->tp_modelled, (unsigned long long)p->tp_replicated);
    if (p->pp)
        sc__buf_printf(b,
                       ",\"pp\":{\"stages\":%u,\"schedule\":\"%s\",\"virtual_stages\":%u,\"microbatches\":%u,"
                       "\"p2p_bytes\":%lld,\"tasks_traced\":%llu,\"tasks_modelled\":%llu}",
                       p->pp, p->schedule, p->virtual_stages, p->microbatches, (long long)p->p2p_bytes,
                       (unsigned long long)p->tasks_traced, (unsigned long long)p->tasks_modelled);
    if (p->backward_modelled)
        sc__buf_printf(b,
                       ",\"backward\":{\"modelled\":true,\"automatic\":%s,\"tasks_traced\":%llu,\"tasks_modelled\":%llu,"
                       "\"traced_backward_dropped\":%llu,\"kernels_shaped\":%llu,\"kernels_unshaped\":%llu,"
                       "\"recompute\":\"%s\",\"tasks_recomputed\":%llu}",
                       p->backward_modelled >= 2 ? "true" : "false", (unsigned long long)p->backward_tasks_traced,
                       (unsigned long long)p->backward_tasks_modelled, (unsigned long long)p->backward_tasks_dropped,
                       (unsigned long long)p->backward_kernels_shaped, (unsigned long long)p->backward_kernels_unshaped,
                       p->recompute ? p->recompute : "none", (unsigned long long)p->backward_tasks_recomputed);
    config_json(b, p);
    sc__buf_puts(b, "}");
}

/* One layer's simulated time, when the graph's layers were found. */
static void layers_json(sc__buf *b, const sc_replay_layers *l) {
    if (!l->count && l->why_none) {
        sc__buf_puts(b, ",\"layers\":{\"count\":null,\"per_layer_us\":null,\"why_none\":");
        sc__buf_json_cstr(b, l->why_none);
        sc__buf_puts(b, "}");
    }
    if (!l->count) return;
    sc__buf_printf(b, ",\"layers\":{\"count\":%u,\"per_layer_us\":{\"forward\":%.3f,\"backward\":", l->count,
                   l->forward_us);
    if (l->backward_count) sc__buf_printf(b, "%.3f}}", l->backward_us);
    else sc__buf_puts(b, "null}}");
}

static void shape_text(sc__buf *b, const sc_job_shape *s) {
    sc__buf_printf(b, "%u rank%s (dp %u), %u node%s of %u %s", s->ranks, s->ranks == 1 ? "" : "s", s->dp, s->nodes,
                   s->nodes == 1 ? "" : "s", s->gpus_per_node, s->gpu);
}

static void prediction_text(sc__buf *b, const sc_prediction *p) {
    sc__buf_puts(b, "prediction: traced ");
    shape_text(b, &p->traced);
    sc__buf_puts(b, "\n         -> new    ");
    shape_text(b, &p->predicted);
    sc__buf_puts(b, "\n");
    config_text(b, p);
    sc__buf_printf(b, "  each simulated traced rank stands for %.4g predicted rank%s (%zu rank shape%s traced)\n",
                   p->ranks_per_traced_rank, p->ranks_per_traced_rank == 1 ? "" : "s", p->shapes,
                   p->shapes == 1 ? "" : "s");
    if (p->collectives_retimed || p->collectives_unsized)
        sc__buf_printf(b, "  collectives re-timed by the %s model: %llu (%llu without a size keep their traced time)\n",
                       p->comm_model, (unsigned long long)p->collectives_retimed,
                       (unsigned long long)p->collectives_unsized);
    if (p->gpu_tasks_retimed)
        sc__buf_printf(b, "  GPU tasks re-timed for %s: %llu\n", p->predicted.gpu,
                       (unsigned long long)p->gpu_tasks_retimed);
    if (p->predicted_layers)
        sc__buf_printf(b, "  layers: %u traced -> %u simulated (copies of the traced layers in turn, or the last removed)\n",
                       p->traced_layers, p->predicted_layers);
    model_text(b, p);
    if (p->predicted_tp)
        sc__buf_printf(b,
                       "  tensor parallel: %u traced -> %u (%llu layer kernels re-sharded, %llu of them by the "
                       "kernel cost model on their shapes; %llu replicated kept)\n",
                       p->traced_tp, p->predicted_tp, (unsigned long long)p->tp_sharded,
                       (unsigned long long)p->tp_modelled, (unsigned long long)p->tp_replicated);
    if (p->pp)
        sc__buf_printf(b,
                       "  pipeline: %u stages, %s schedule, %u virtual stage%s, %u micro-batch%s, %lld bytes per "
                       "send; %llu tasks traced, %llu modelled (copies and sends)\n",
                       p->pp, p->schedule, p->virtual_stages, p->virtual_stages == 1 ? "" : "s", p->microbatches,
                       p->microbatches == 1 ? "" : "es", (long long)p->p2p_bytes, (unsigned long long)p->tasks_traced,
                       (unsigned long long)p->tasks_modelled);
    if (p->backward_modelled)
        sc__buf_printf(b,
                       "  backward: modelled from the forward%s: %llu tasks traced, %llu modelled (%llu kernels timed "
                       "from shapes, %llu by class)%s",
                       p->backward_modelled == 2   ? " (turned on by --pp: the trace has no backward, a pipeline needs one)"
                       : p->backward_modelled == 3 ? " (turned on by --recompute: the re-run goes into a modelled backward)"
                                                   : "",
                       (unsigned long long)p->backward_tasks_traced, (unsigned long long)p->backward_tasks_modelled,
                       (unsigned long long)p->backward_kernels_shaped, (unsigned long long)p->backward_kernels_unshaped,
                       p->backward_tasks_dropped ? "; the traced backward's " : "\n");
    if (p->backward_modelled && p->backward_tasks_dropped)
        sc__buf_printf(b, "%llu tasks replaced\n", (unsigned long long)p->backward_tasks_dropped);
    if (p->recompute)
        sc__buf_printf(b, "  recompute: %s, %llu of the modelled tasks re-run the forward before each layer's backward\n",
                       p->recompute, (unsigned long long)p->backward_tasks_recomputed);
    sc__buf_puts(b, "\n");
}

/* ------------------------------------------------------- sensitivity */

static void sensitivity_json(sc__buf *b, const sc_replay_sensitivity *s) {
    if (!s->computed) {
        sc__buf_puts(b, ",\"sensitivity\":{\"computed\":false,\"why_not\":");
        sc__buf_json_cstr(b, s->why_not);
        sc__buf_puts(b, "},\"bound_by\":null");
        return;
    }
    sc__buf_printf(b,
                   ",\"sensitivity\":{\"computed\":true,\"step_us\":%.3f,"
                   "\"gpu_x2\":{\"step_us\":%.3f,\"ratio\":%.4f},"
                   "\"cpu_x2\":{\"step_us\":%.3f,\"ratio\":%.4f},"
                   "\"comm_x2\":{\"step_us\":%.3f,\"ratio\":%.4f}},\"bound_by\":\"%s\"",
                   us(s->step_ns), us(s->gpu_x2_ns), s->gpu_x2, us(s->cpu_x2_ns), s->cpu_x2, us(s->comm_x2_ns),
                   s->comm_x2, s->bound_by);
}

static void sensitivity_text(sc__buf *b, const sc_replay_sensitivity *s) {
    if (!s->computed) {
        sc__buf_printf(b, "\nsensitivity: not checked (%s)\n", s->why_not);
        return;
    }
    sc__buf_printf(b,
                   "\nsensitivity (step with one class twice as long): gpu x%.3f, cpu x%.3f, comm x%.3f; "
                   "bound by %s\n",
                   s->gpu_x2, s->cpu_x2, s->comm_x2, s->bound_by);
}

/* ------------------------------------------------- breakdown conventions */

/* What stepcast's per-rank breakdown counts, for a reader comparing it
 * with another tool's (HTA's, TraceLens's): its window and its classes. */
static void conventions_json(const sc_replay *r, sc__buf *b) {
    sc__buf_printf(b,
                   ",\"breakdown_conventions\":{\"window\":\"the simulated step: from the simulated start of the "
                   "task that opens the iteration (its ProfilerStep#N annotation) to the end of the rank's last "
                   "task\",\"compute\":\"GPU tasks that are not communication: kernels, memcpy and memset\","
                   "\"communication\":\"NCCL collectives and p2p transfers, %s\",\"exposed_compute\":\"compute "
                   "running, no communication\",\"exposed_comm\":\"communication running, no compute\","
                   "\"overlapped\":\"both running\",\"idle\":\"no GPU task running\"}",
                   r->modelled  ? "re-timed by the communication model fitted to the trace (ending at the last "
                                  "arrival plus the modelled transfer)"
                   : r->coupled ? "re-timed by the simulator: every member ends at the last arrival plus the "
                                  "transfer time the trace measured"
                                : "each rank's traced durations");
}

/* ------------------------------------------------------ HTA's breakdown */

static double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0; }

static void hta_json(const sc_replay *r, sc__buf *b) {
    sc__buf_puts(b, ",\"breakdown_hta\":{\"source\":\"HolisticTraceAnalysis get_temporal_breakdown, from each "
                    "measured trace\",\"window\":\"the rank's whole trace, from the first GPU op's start to the "
                    "last one's end (HTA's kernel_time)\",\"compute\":\"union of GPU ops not named ^nccl.*Kernel, "
                    "Memcpy, ^Memset or *Sync\",\"non_compute\":\"window - compute - idle: communication + "
                    "memory + other\",\"communication\":\"NCCL ops under no compute op\",\"memory\":\"Memcpy, "
                    "Memset, dma ops under neither\",\"idle\":\"window - union of all GPU ops\",\"ranks\":[");
    for (size_t i = 0; i < r->nhta; i++) {
        const sc_hta_breakdown *h = &r->hta[i];
        int64_t w = h->window_end_ns - h->window_start_ns;
        sc__buf_printf(b,
                       "%s{\"rank\":%lld,\"gpu_ops\":%llu,\"window_us\":%.3f,\"compute_us\":%.3f,"
                       "\"non_compute_us\":%.3f,\"communication_us\":%.3f,\"memory_us\":%.3f,\"other_us\":%.3f,"
                       "\"idle_us\":%.3f,\"compute_pct\":%.2f,\"non_compute_pct\":%.2f,\"idle_pct\":%.2f,"
                       "\"last_step_dropped\":%s,\"rounded_to_us\":%s}",
                       i ? "," : "", (long long)h->rank, (unsigned long long)h->gpu_ops, us(w), us(h->compute_ns),
                       us(h->non_compute_ns), us(h->comm_ns), us(h->memory_ns), us(h->other_ns), us(h->idle_ns),
                       pct(h->compute_ns, w), pct(h->non_compute_ns, w), pct(h->idle_ns, w),
                       h->last_step_dropped ? "true" : "false", h->rounded_to_us ? "true" : "false");
    }
    sc__buf_puts(b, "]}");
}

static void hta_text(const sc_replay *r, sc__buf *b) {
    sc__buf_puts(b, "\nHTA temporal breakdown of the measured traces (as HolisticTraceAnalysis computes it):\n"
                    "  window: the rank's whole trace, first GPU op's start to the last one's end;\n"
                    "  compute: GPU ops other than NCCL, Memcpy/Memset and *Sync; non-compute = window - compute "
                    "- idle\n  (of it: communication, memory, other); idle: window - union of all GPU ops\n");
    sc__buf_puts(b, "rank     window ms   compute ms  non-compute ms     comm ms   memory ms    other ms     "
                    "idle ms  compute %  idle %\n");
    for (size_t i = 0; i < r->nhta; i++) {
        const sc_hta_breakdown *h = &r->hta[i];
        int64_t w = h->window_end_ns - h->window_start_ns;
        sc__buf_printf(b, "%4lld  %12.3f  %11.3f  %14.3f  %10.3f  %10.3f  %10.3f  %10.3f  %9.2f  %6.2f%s\n",
                       (long long)h->rank, us(w) / 1000.0, us(h->compute_ns) / 1000.0,
                       us(h->non_compute_ns) / 1000.0, us(h->comm_ns) / 1000.0, us(h->memory_ns) / 1000.0,
                       us(h->other_ns) / 1000.0, us(h->idle_ns) / 1000.0, pct(h->compute_ns, w), pct(h->idle_ns, w),
                       !h->gpu_ops            ? "  (no GPU op counted)"
                       : h->last_step_dropped ? "  (last ProfilerStep left out)"
                                              : "");
    }
    if (!r->nhta) sc__buf_puts(b, "  (no Kineto trace)\n");
}

/* ------------------------------------------------------------ the report */

static void write_json(const sc_replay *r, sc__buf *b) {
    sc__buf_printf(b, "{\"mode\":\"%s\",\"tasks\":%zu,\"warnings\":[", sc__replay_mode(r),
                   r->g->tasks.len);
    for (size_t i = 0; i < r->g->warnings.count; i++) { /* the graph builder's */
        if (i) sc__buf_puts(b, ",");
        sc__buf_json_cstr(b, r->g->warnings.items[i]);
    }
    sc__buf_puts(b, "],\"edges_dropped\":{");
    for (int f = 0, first = 1; f < SC_E_FAMILY_COUNT; f++)
        if (r->pruned[f]) {
            sc__buf_printf(b, "%s\"%s\":%llu", first ? "" : ",", sc__edge_family_name((uint8_t)f),
                           (unsigned long long)r->pruned[f]);
            first = 0;
        }
    sc__buf_puts(b, "},\"ranks\":[");
    for (size_t k = 0; k < r->nranks; k++) {
        const sc__replay_rank *rr = &r->ranks[k];
        int64_t sim = rr->sim_end - rr->sim_start;
        sc__buf_printf(b,
                       "%s{\"rank\":%lld,\"measured_us\":%.3f,\"simulated_us\":%.3f",
                       k ? "," : "", (long long)rr->rank, us(rr->measured_ns), us(sim));
        error_json(b, rr->measured_ns, sim, rr->no_error);
        measured_from_json(b, r, k);
        sc__buf_printf(b,
                       ",\"launch_latency_us\":%.3f,\"dispatch_gap_us\":%.3f,\"start_offset_us\":%.3f,"
                       "\"breakdown\":{\"exposed_compute_us\":%.3f,"
                       "\"exposed_comm_us\":%.3f,\"overlapped_us\":%.3f,\"idle_us\":%.3f,\"sm_busy\":[",
                       us(r->launch_latency[k]), us(r->dispatch_gap[k]), us(r->rank_offset[k]), us(rr->exposed_compute_ns),
                       us(rr->exposed_comm_ns), us(rr->overlapped_ns), us(rr->idle_ns));
        for (size_t w = 0; w < rr->nwindows; w++) sc__buf_printf(b, "%s%.4f", w ? "," : "", rr->sm_busy[w]);
        sc__buf_puts(b, "]}}");
    }
    int64_t meas = r->nranks ? r->ranks[r->slowest_measured].measured_ns : 0;
    int64_t sim = r->nranks ? r->ranks[r->slowest].sim_end - r->ranks[r->slowest].sim_start : 0;
    sc__buf_printf(b, "],\"step\":{\"measured_us\":%.3f,\"simulated_us\":%.3f", us(meas), us(sim));
    error_json(b, meas, sim, sc__replay_no_error(r, SIZE_MAX));
    sc__buf_puts(b, "},");
    const sc__cp_summary *cp = &r->cp;
    sc__buf_printf(b, "\"critical_path\":{\"length_us\":%.3f,\"tasks\":%llu,\"last_rank\":%lld,\"host_only\":%s,",
                   us(cp->length_ns), (unsigned long long)cp->ntasks,
                   r->nranks ? (long long)r->ranks[cp->last_rank].rank : -1LL, cp->host_only ? "true" : "false");
    json_items(b, "by_class", cp->by_class, cp->nclass, false);
    json_items(b, "by_operator", cp->by_op, cp->nop, false);
    json_items(b, "by_edge", cp->by_edge, cp->nedge, true);
    sc__buf_puts(b, "}");
    if (sc_replay_prediction(r)) prediction_json(b, sc_replay_prediction(r));
    sc_replay_layers layers = sc_replay_get_layers(r);
    layers_json(b, &layers);
    sc_replay_sensitivity sens = sc_replay_get_sensitivity(r);
    sensitivity_json(b, &sens);
    conventions_json(r, b);
    if (r->hta_asked) hta_json(r, b);
    sc__buf_puts(b, "}\n");
}

static void text_items(sc__buf *b, const char *title, const sc_cp_item *items, size_t n, int64_t total) {
    sc__buf_printf(b, "  %s:\n", title);
    for (size_t i = 0; i < n; i++)
        sc__buf_printf(b, "    %10.3f ms  %5.1f%%  %7llu  %.60s\n", us(items[i].ns) / 1000.0,
                       total > 0 ? 100.0 * (double)items[i].ns / (double)total : 0.0,
                       (unsigned long long)items[i].count, items[i].name);
}

static void write_text(const sc_replay *r, sc__buf *b) {
    sc__buf_printf(b, "%s: %zu rank%s, %zu tasks, %s collectives\n\n", sc_replay_prediction(r) ? "predict" : "replay",
                   r->nranks, r->nranks == 1 ? "" : "s", r->g->tasks.len, sc__replay_mode(r));
    if (sc_replay_prediction(r)) prediction_text(b, sc_replay_prediction(r));
    /* The graph builder's warnings (clock skew, partial job, unmatched
     * collectives...): the answer is defined, but the user must see why it
     * may be off. */
    for (size_t i = 0; i < r->g->warnings.count; i++)
        sc__buf_printf(b, "warning: %s\n", r->g->warnings.items[i]);
    for (int f = 0; f < SC_E_FAMILY_COUNT; f++)
        if (r->pruned[f])
            sc__buf_printf(b, "note: dropped %llu %s edge%s that the trace contradicts (destination started "
                              "before the source ended)\n",
                           (unsigned long long)r->pruned[f], sc__edge_family_name((uint8_t)f),
                           r->pruned[f] == 1 ? "" : "s");
    sc__buf_puts(b, "rank   measured ms  simulated ms   error %   exp.compute ms  exp.comm ms  "
                    "overlap ms   idle ms  sm busy\n");
    double sum_abs = 0, max_abs = 0;
    size_t nmeasured = 0;
    for (size_t k = 0; k < r->nranks; k++) {
        const sc__replay_rank *rr = &r->ranks[k];
        int64_t sim = rr->sim_end - rr->sim_start;
        double e = sc__replay_error_pct(rr->measured_ns, sim);
        double busy = 0;
        for (size_t w = 0; w < rr->nwindows; w++) busy += rr->sm_busy[w];
        char etext[32] = "       -";
        if (rr->measured_ns > 0 && !rr->no_error) {
            snprintf(etext, sizeof etext, "%8.2f", e);
            sum_abs += e < 0 ? -e : e;
            if ((e < 0 ? -e : e) > max_abs) max_abs = e < 0 ? -e : e;
            nmeasured++;
        }
        sc__buf_printf(b, "%4lld  %12.3f  %12.3f  %s  %14.3f  %11.3f  %10.3f  %8.3f  %6.1f%%\n",
                       (long long)rr->rank, us(rr->measured_ns) / 1000.0, us(sim) / 1000.0, etext,
                       us(rr->exposed_compute_ns) / 1000.0, us(rr->exposed_comm_ns) / 1000.0,
                       us(rr->overlapped_ns) / 1000.0, us(rr->idle_ns) / 1000.0,
                       rr->nwindows ? 100.0 * busy / (double)rr->nwindows : 0.0);
    }
    if (r->nranks) {
        int64_t meas = r->ranks[r->slowest_measured].measured_ns;
        int64_t sim = r->ranks[r->slowest].sim_end - r->ranks[r->slowest].sim_start;
        /* A rank whose traced step cannot be compared says why, and the
         * job's step then has no error figure either. */
        bool said = false;
        for (size_t k = 0; k < r->nranks; k++)
            if (r->ranks[k].no_error && r->ranks[k].measured_ns > 0) {
                sc__buf_printf(b, "rank %lld: no error figure: %s\n", (long long)r->ranks[k].rank, r->ranks[k].no_error);
                said = true;
            }
        if (said) {
            sc__buf_printf(b, "\nstep (slowest rank): measured %.3f ms, simulated %.3f ms, no error figure (see above)\n",
                           us(meas) / 1000.0, us(sim) / 1000.0);
        } else if (nmeasured) {
            sc__buf_printf(b, "\nstep (slowest rank): measured %.3f ms, simulated %.3f ms, error %.2f%%\n",
                           us(meas) / 1000.0, us(sim) / 1000.0, sc__replay_error_pct(meas, sim));
        } else {
            sc__buf_printf(b, "\nstep (slowest rank): simulated %.3f ms (the inputs carry no measured step)\n",
                           us(sim) / 1000.0);
        }
        if (nmeasured)
            sc__buf_printf(b, "per-rank |error|: mean %.2f%%, max %.2f%% (%zu rank%s with a measured step)\n",
                           sum_abs / (double)nmeasured, max_abs, nmeasured, nmeasured == 1 ? "" : "s");
    }
    measured_from_text(b, r);
    sc_replay_sensitivity sens = sc_replay_get_sensitivity(r);
    sensitivity_text(b, &sens);
    if (r->hta_asked) hta_text(r, b);
    sc_replay_layers layers = sc_replay_get_layers(r);
    if (!layers.count && layers.why_none) sc__buf_printf(b, "\nlayers: not timed (%s)\n", layers.why_none);
    if (layers.count) {
        sc__buf_printf(b, "\nlayers: %u, one layer simulated: forward %.3f ms", layers.count, layers.forward_us / 1e3);
        if (layers.backward_count) sc__buf_printf(b, ", backward %.3f ms", layers.backward_us / 1e3);
        sc__buf_puts(b, "\n");
    }
    const sc__cp_summary *cp = &r->cp;
    sc__buf_printf(b, "\ncritical path: %.3f ms over %llu tasks, ending on rank %lld\n",
                   us(cp->length_ns) / 1000.0, (unsigned long long)cp->ntasks,
                   r->nranks ? (long long)r->ranks[cp->last_rank].rank : -1LL);
    if (cp->host_only)
        sc__buf_puts(b, "  host work only, no GPU task on it: the simulated step follows the host's traced "
                        "time, and its error says nothing of the GPU model\n");
    text_items(b, "by class (time, share, tasks)", cp->by_class, cp->nclass, cp->length_ns);
    text_items(b, "top operators", cp->by_op, cp->nop, cp->length_ns);
    text_items(b, "by edge (latency or gap on the edge, share, edges)", cp->by_edge, cp->nedge,
               cp->length_ns);
}

sc_status sc_replay_write(const sc_replay *r, FILE *out, int json, sc_error *err) {
    sc__buf b;
    sc__buf_init(&b);
    if (json) write_json(r, &b);
    else write_text(r, &b);
    return sc__buf_write(&b, out, err);
}

/* ------------------------------------------------------------ --all-iterations */

/* The slowest rank's error figure, or NULL with why not. */
static const char *step_error(const sc_replay *r, int64_t *meas, int64_t *sim, double *e) {
    *meas = r->nranks ? r->ranks[r->slowest_measured].measured_ns : 0;
    *sim = r->nranks ? r->ranks[r->slowest].sim_end - r->ranks[r->slowest].sim_start : 0;
    *e = sc__replay_error_pct(*meas, *sim);
    const char *why = sc__replay_no_error(r, SIZE_MAX);
    if (!why && *meas <= 0) why = "the input has no measured step";
    return why;
}

static void iteration_json(const sc_replay *r, int64_t iteration, size_t row, sc__buf *b) {
    int64_t meas, sim;
    double e;
    step_error(r, &meas, &sim, &e);
    sc__buf_printf(b, "%s{\"iteration\":", row ? "," : "{\"iterations\":[");
    if (iteration >= 0) sc__buf_printf(b, "%lld", (long long)iteration);
    else sc__buf_puts(b, "null");
    sc__buf_printf(b, ",\"step\":{\"measured_us\":%.3f,\"simulated_us\":%.3f", us(meas), us(sim));
    error_json(b, meas, sim, sc__replay_no_error(r, SIZE_MAX));
    sc__buf_puts(b, "},\"ranks\":[");
    for (size_t k = 0; k < r->nranks; k++) {
        const sc__replay_rank *rr = &r->ranks[k];
        int64_t s = rr->sim_end - rr->sim_start;
        sc__buf_printf(b, "%s{\"rank\":%lld,\"measured_us\":%.3f,\"simulated_us\":%.3f", k ? "," : "",
                       (long long)rr->rank, us(rr->measured_ns), us(s));
        error_json(b, rr->measured_ns, s, rr->no_error);
        measured_from_json(b, r, k);
        sc__buf_puts(b, "}");
    }
    sc__buf_puts(b, "]}");
}

static void iteration_text(const sc_replay *r, int64_t iteration, size_t row, sc__buf *b) {
    int64_t meas, sim;
    double e;
    const char *why = step_error(r, &meas, &sim, &e);
    if (!row)
        sc__buf_printf(b, "replay of each iteration: %zu rank%s, %s collectives\n\n"
                          "iteration   measured ms  simulated ms   error %%  the slowest rank's step closes at the end of\n",
                       r->nranks, r->nranks == 1 ? "" : "s", sc__replay_mode(r));
    char it[32] = "    whole", etext[32] = "       -";
    if (iteration >= 0) snprintf(it, sizeof it, "%9lld", (long long)iteration);
    if (!why) snprintf(etext, sizeof etext, "%8.2f", e);
    sc__buf_printf(b, "%s  %12.3f  %12.3f  %s  ", it, us(meas) / 1000.0, us(sim) / 1000.0, etext);
    if (why) {
        sc__buf_printf(b, "no error figure: %s\n", why);
        return;
    }
    sc_step_mark o, c;
    int64_t after;
    sc__replay_measured_from(r, r->slowest_measured, &o, &c, &after);
    if (!c.event) {
        sc__buf_puts(b, "-\n");
        return;
    }
    sc__buf_printf(b, "%.50s (%s, %s %lld)", c.event, c.kind, c.on_stream ? "stream" : "thread", (long long)c.on);
    if (after > 0) sc__buf_printf(b, ", %.3f ms after the annotation ends", us(after) / 1000.0);
    sc__buf_puts(b, "\n");
}

sc_status sc_replay_write_iteration(const sc_replay *r, int64_t iteration, sc_iterations_table *table, FILE *out,
                                    int json, sc_error *err) {
    int64_t meas, sim;
    double e;
    if (!step_error(r, &meas, &sim, &e)) {
        double a = e < 0 ? -e : e;
        table->with_error++;
        table->sum_abs_error_pct += a;
        if (a > table->max_abs_error_pct) table->max_abs_error_pct = a;
    }
    sc__buf b;
    sc__buf_init(&b);
    if (json) iteration_json(r, iteration, table->rows, &b);
    else iteration_text(r, iteration, table->rows, &b);
    table->rows++;
    return sc__buf_write(&b, out, err);
}

sc_status sc_replay_write_iterations_end(const sc_iterations_table *t, FILE *out, int json, sc_error *err) {
    sc__buf b;
    sc__buf_init(&b);
    double mean = t->with_error ? t->sum_abs_error_pct / (double)t->with_error : 0;
    if (json) {
        sc__buf_printf(&b, "%s],\"summary\":{\"iterations\":%zu,\"with_error\":%zu", t->rows ? "" : "{\"iterations\":[",
                       t->rows, t->with_error);
        if (t->with_error)
            sc__buf_printf(&b, ",\"mean_abs_error_pct\":%.3f,\"max_abs_error_pct\":%.3f}}\n", mean,
                           t->max_abs_error_pct);
        else
            sc__buf_puts(&b, ",\"mean_abs_error_pct\":null,\"max_abs_error_pct\":null}}\n");
    } else {
        sc__buf_printf(&b, "\n%zu iteration%s", t->rows, t->rows == 1 ? "" : "s");
        if (t->with_error)
            sc__buf_printf(&b, ", %zu with an error figure: |error| mean %.2f%%, max %.2f%%\n", t->with_error, mean,
                           t->max_abs_error_pct);
        else
            sc__buf_puts(&b, ", none with an error figure\n");
    }
    return sc__buf_write(&b, out, err);
}
