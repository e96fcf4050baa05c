/*
 * pipeline_schedule.c - per-stage execution order of a pipeline-parallel
 * iteration (gpipe, 1F1B, interleaved 1F1B), as pipeline_schedule.h says.
 *
 * The interleaved order follows Megatron-LM's
 * forward_backward_pipelining_with_interleaving: forward unit k of a stage
 * runs chunk (k mod P*V) / P on micro-batch (k / (P*V)) * P + k mod P;
 * backward unit k runs the chunks in reverse (V - 1 - that chunk) on the
 * same micro-batch; stage s warms up with (P - s - 1) * 2 + (V - 1) * P
 * forwards (capped at M * V), then alternates one forward and one
 * backward, then drains the backwards. With V = 1 this is plain 1F1B
 * (warm-up P - s - 1 forwards).
 */
#include "pipeline_schedule.h"

const char *sc__pp_kind_name(sc__pp_kind kind) {
    switch (kind) {
    case SC__PP_GPIPE: return "gpipe";
    case SC__PP_1F1B: return "1f1b";
    case SC__PP_INTERLEAVED: return "interleaved";
    }
    return "?";
}

const char *sc__pp_check(sc__pp_kind kind, uint32_t stages, uint32_t micro, uint32_t chunks) {
    if (stages < 1 || micro < 1 || chunks < 1) return "stages, micro-batches and chunks must be at least 1";
    if (chunks > 1 && kind != SC__PP_INTERLEAVED) return "virtual stages need the interleaved schedule";
    if (kind == SC__PP_INTERLEAVED && stages > 1 && micro % stages)
        return "the interleaved schedule needs micro-batches divisible by the pipeline stages";
    if ((uint64_t)micro * chunks * 2 > UINT32_MAX) return "too many micro-batches";
    return NULL;
}

/* Forward unit k of the interleaved order (V = 1: k itself, chunk 0). */
static sc__pp_unit unit_at(uint32_t stages, uint32_t chunks, uint32_t k, bool backward) {
    uint32_t group = stages * chunks;
    uint32_t in_group = k % group;
    uint32_t chunk = in_group / stages;
    sc__pp_unit u = {.micro = (k / group) * stages + in_group % stages,
                     .chunk = (uint16_t)(backward ? chunks - 1 - chunk : chunk),
                     .backward = backward};
    if (chunks == 1) u.micro = k, u.chunk = 0;
    return u;
}

size_t sc__pp_schedule(sc__pp_kind kind, uint32_t stages, uint32_t micro, uint32_t chunks, uint32_t stage,
                       sc__pp_unit *out) {
    uint32_t total = micro * chunks;
    size_t n = 0;
    if (kind == SC__PP_GPIPE) {
        for (uint32_t k = 0; k < total; k++) out[n++] = unit_at(stages, chunks, k, false);
        for (uint32_t k = 0; k < total; k++) out[n++] = unit_at(stages, chunks, k, true);
        return n;
    }
    uint64_t warm = (uint64_t)(stages - stage - 1) * (chunks > 1 ? 2 : 1) + (uint64_t)(chunks - 1) * stages;
    if (warm > total) warm = total;
    uint32_t f = 0, b = 0;
    for (; f < warm; f++) out[n++] = unit_at(stages, chunks, f, false);
    for (; f < total; f++, b++) {
        out[n++] = unit_at(stages, chunks, f, false);
        out[n++] = unit_at(stages, chunks, b, true);
    }
    for (; b < total; b++) out[n++] = unit_at(stages, chunks, b, true);
    return n;
}
