/*
 * structure_report.c - `stepcast structure`'s report (sc_structure_write):
 * the layers, the phases, the collectives by role and the model's
 * dimensions, text or JSON, unknowns as null with the reason. Formats only;
 * src/pipeline/structure*.c computes.
 */
#include "../pipeline/structure_run.h"

static double us(int64_t ns) { return (double)ns / 1e3; }

static void json_str_or_null(sc__buf *b, const char *s) {
    if (s) sc__buf_json_cstr(b, s);
    else sc__buf_puts(b, "null");
}

static void dim_json(sc__buf *b, const char *key, const sc_model_dim *d, bool comma) {
    sc__buf_printf(b, "%s\"%s\":", comma ? "," : "", key);
    if (d->value > 0) sc__buf_printf(b, "%lld", (long long)d->value);
    else sc__buf_puts(b, "null");
}

static void dims_why_json(sc__buf *b, const sc_structure_summary *o) {
    const struct {
        const char *key;
        const sc_model_dim *d;
    } dims[] = {{"hidden", &o->hidden}, {"ffn", &o->ffn}, {"heads", &o->heads}, {"seq", &o->seq},
                {"micro_batch", &o->micro_batch}, {"tp", &o->tp}};
    sc__buf_puts(b, ",\"from\":{");
    bool any = false;
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        if (!dims[i].d->from) continue;
        sc__buf_printf(b, "%s\"%s\":", any ? "," : "", dims[i].key);
        json_str_or_null(b, dims[i].d->from);
        any = true;
    }
    sc__buf_puts(b, "},\"unknown\":{");
    any = false;
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        if (!dims[i].d->why_unknown) continue;
        sc__buf_printf(b, "%s\"%s\":", any ? "," : "", dims[i].key);
        json_str_or_null(b, dims[i].d->why_unknown);
        any = true;
    }
    if (!o->dtype) {
        sc__buf_printf(b, "%s\"dtype\":", any ? "," : "");
        json_str_or_null(b, o->why_no_dtype);
    }
    sc__buf_puts(b, "}");
}

static void write_json(const sc_structure *st, const sc_structure_summary *o, sc__buf *b) {
    const sc__structure *s = &st->s;
    sc__buf_printf(b, "{\"ranks\":%zu,\"layers\":{\"count\":%u,\"backward_count\":%u,\"source\":", o->ranks,
                   o->layers, o->backward_layers);
    json_str_or_null(b, o->layers_from);
    sc__buf_puts(b, ",\"why_none\":");
    json_str_or_null(b, o->why_no_layers);
    if (o->layers)
        sc__buf_printf(b, ",\"first_task\":%u,\"gpu_tasks_per_layer\":%u", o->first_task, o->layer_gpu_tasks);
    else
        sc__buf_puts(b, ",\"first_task\":null,\"gpu_tasks_per_layer\":null");
    sc__buf_puts(b, ",\"per_layer_us\":{\"forward\":");
    if (o->layers) sc__buf_printf(b, "%.3f", o->per_layer_forward_us);
    else sc__buf_puts(b, "null");
    sc__buf_puts(b, ",\"backward\":");
    if (o->backward_layers) sc__buf_printf(b, "%.3f", o->per_layer_backward_us);
    else sc__buf_puts(b, "null");
    sc__buf_puts(b, "}},\"phases\":{");
    const sc__structure_rank *r0 = s->nranks ? &s->ranks[0] : NULL;
    for (int ph = SC__PHASE_FORWARD; ph < SC__PHASE_COUNT; ph++) {
        sc__buf_printf(b, "%s\"%s\":", ph > SC__PHASE_FORWARD ? "," : "", sc__phase_name(ph));
        if (!r0 || !r0->phase_tasks[ph]) {
            sc__buf_puts(b, "null");
            continue;
        }
        sc__buf_printf(b, "{\"tasks\":%u,\"span_us\":%.3f}", r0->phase_tasks[ph],
                       us(r0->phase_end[ph] - r0->phase_start[ph]));
    }
    sc__buf_puts(b, "},\"collectives\":{\"per_layer\":{");
    for (int k = 0; k < SC__ROLE_COUNT; k++)
        sc__buf_printf(b, "%s\"%s\":%u", k ? "," : "", sc__role_name(k), s->per_layer[k]);
    uint64_t total[SC__ROLE_COUNT] = {0};
    for (size_t i = 0; i < st->g->groups.len; i++) total[s->group_role[i]]++;
    sc__buf_puts(b, "},\"total\":{");
    for (int k = 0; k < SC__ROLE_COUNT; k++)
        sc__buf_printf(b, "%s\"%s\":%llu", k ? "," : "", sc__role_name(k), (unsigned long long)total[k]);
    sc__buf_puts(b, "}},\"model\":{");
    dim_json(b, "hidden", &o->hidden, false);
    dim_json(b, "ffn", &o->ffn, true);
    dim_json(b, "heads", &o->heads, true);
    dim_json(b, "seq", &o->seq, true);
    dim_json(b, "micro_batch", &o->micro_batch, true);
    dim_json(b, "tp", &o->tp, true);
    sc__buf_puts(b, ",\"dtype\":");
    json_str_or_null(b, o->dtype);
    if (o->head_dim > 0) sc__buf_printf(b, ",\"head_dim\":%lld", (long long)o->head_dim);
    else sc__buf_puts(b, ",\"head_dim\":null");
    dims_why_json(b, o);
    sc__buf_puts(b, "}}\n");
}

static void dim_text(sc__buf *b, const char *key, const sc_model_dim *d) {
    if (d->value > 0) sc__buf_printf(b, "  %-12s %lld  (%s)\n", key, (long long)d->value, d->from);
    else sc__buf_printf(b, "  %-12s unknown: %s\n", key, d->why_unknown ? d->why_unknown : "");
}

static void write_text(const sc_structure *st, const sc_structure_summary *o, sc__buf *b) {
    const sc__structure *s = &st->s;
    sc__buf_printf(b, "structure: %zu rank%s\n\n", o->ranks, o->ranks == 1 ? "" : "s");
    if (o->layers) {
        sc__buf_printf(b, "layers: %u (from the %s of the GPU work: %u GPU tasks each; first task %u)\n", o->layers,
                       o->layers_from, o->layer_gpu_tasks, o->first_task);
        sc__buf_printf(b, "  per layer: forward %.3f ms", o->per_layer_forward_us / 1e3);
        if (o->backward_layers) sc__buf_printf(b, ", backward %.3f ms\n", o->per_layer_backward_us / 1e3);
        else sc__buf_puts(b, ", no backward layers\n");
    } else {
        sc__buf_printf(b, "layers: none found: %s\n", o->why_no_layers ? o->why_no_layers : "");
    }
    const sc__structure_rank *r0 = s->nranks ? &s->ranks[0] : NULL;
    sc__buf_puts(b, "phases (first rank):");
    for (int ph = SC__PHASE_FORWARD; ph < SC__PHASE_COUNT; ph++) {
        if (r0 && r0->phase_tasks[ph])
            sc__buf_printf(b, "  %s %u tasks over %.3f ms", sc__phase_name(ph), r0->phase_tasks[ph],
                           us(r0->phase_end[ph] - r0->phase_start[ph]) / 1e3);
        else sc__buf_printf(b, "  %s none", sc__phase_name(ph));
    }
    sc__buf_puts(b, "\ncollectives per layer:");
    for (int k = 0; k < SC__ROLE_COUNT; k++)
        if (s->per_layer[k]) sc__buf_printf(b, "  %s %u", sc__role_name(k), s->per_layer[k]);
    sc__buf_puts(b, "\n\nmodel:\n");
    dim_text(b, "hidden", &o->hidden);
    dim_text(b, "ffn", &o->ffn);
    dim_text(b, "heads", &o->heads);
    dim_text(b, "seq", &o->seq);
    dim_text(b, "micro_batch", &o->micro_batch);
    dim_text(b, "tp", &o->tp);
    if (o->dtype) sc__buf_printf(b, "  %-12s %s\n", "dtype", o->dtype);
    else sc__buf_printf(b, "  %-12s unknown: %s\n", "dtype", o->why_no_dtype ? o->why_no_dtype : "");
}

sc_status sc_structure_write(const sc_structure *st, FILE *out, int json, sc_error *err) {
    sc__error_clear(err);
    if (!st || !out) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "structure: nothing to write");
    sc_structure_summary o = sc_structure_get(st);
    sc__buf b;
    sc__buf_init(&b);
    if (json) write_json(st, &o, &b);
    else write_text(st, &o, &b);
    return sc__buf_write(&b, out, err);
}
