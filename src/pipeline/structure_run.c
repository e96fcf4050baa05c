/*
 * structure_run.c - sc_structure_run: the graph of one iteration built with
 * the traces kept (their shapes are read after), its phases, layers and
 * collective roles (structure.c), the model's dimensions
 * (structure_dims.c). Prints nothing: src/report/structure_report.c does.
 */
#include "structure_run.h"

#include <stdlib.h>

sc_status sc_structure_run(const sc_traceset *set, const sc_structure_options *opts, sc_structure **out,
                           sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    sc_structure_options defaults = SC_STRUCTURE_OPTIONS_INIT;
    if (!opts) opts = &defaults;
    if (!set) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "structure: no traces");
    sc_structure *st = calloc(1, sizeof *st);
    if (!st) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    double t0 = sc__now();
    sc__build_options bo = {.iteration = opts->iteration};
    sc_status rc = sc__graph_build(set, &bo, &st->g, NULL, err);
    if (rc == SC_OK) rc = sc__structure_find(st->g, &st->s, err);
    if (rc != SC_OK) {
        sc_structure_free(st);
        return rc;
    }
    sc__structure_dims(set, st->g, &st->s, &st->model);
    st->seconds = sc__now() - t0;
    *out = st;
    return SC_OK;
}

void sc_structure_free(sc_structure *st) {
    if (!st) return;
    sc__structure_free(&st->s);
    sc__graph_free(st->g);
    free(st);
}

sc_structure_summary sc_structure_get(const sc_structure *st) {
    sc_structure_summary o = {0};
    if (!st) return o;
    const sc__structure *s = &st->s;
    o.ranks = s->nranks;
    o.layers = s->nlayers;
    o.backward_layers = s->nbackward;
    o.layers_from = s->nlayers ? s->source : NULL;
    o.why_no_layers = s->nlayers ? NULL : s->why_no_layers;
    o.first_task = s->nranks ? s->ranks[0].run[SC__PHASE_FORWARD].first_task : SC__NONE;
    o.layer_gpu_tasks = s->nranks ? s->ranks[0].run[SC__PHASE_FORWARD].period : 0;
    o.per_layer_forward_us = sc__structure_layer_us(st->g, s, SC__PHASE_FORWARD, NULL, NULL);
    o.per_layer_backward_us = sc__structure_layer_us(st->g, s, SC__PHASE_BACKWARD, NULL, NULL);
    const sc__model *m = &st->model;
    o.hidden = m->hidden;
    o.ffn = m->ffn;
    o.heads = m->heads;
    o.seq = m->seq;
    o.micro_batch = m->micro_batch;
    o.tp = m->tp;
    o.head_dim = m->head_dim;
    o.dtype = m->dtype;
    o.why_no_dtype = m->why_no_dtype;
    o.seconds = st->seconds;
    return o;
}
