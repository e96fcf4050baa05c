/*
 * et_report.c - `stepcast et`: what a PyTorch Execution Trace holds
 * (nodes, operators with shapes, tensor data dependencies) and how it links
 * with the rank's Kineto trace (src/pipeline/et_link.c), as text or JSON;
 * with --ops the linked operators themselves.
 */
#include "../pipeline/et_link.h"

#include <stdio.h>
#include <stdlib.h>

sc_status sc_et_write(const sc_et *et, const sc_trace *kineto, FILE *out, int json, sc_error *err) {
    sc_status whole = sc__trace_check_whole(kineto, err); /* the Kineto side needs its events */
    if (whole != SC_OK) return whole;
    sc__et_link ls;
    if (!sc__et_link_traces(et, kineto, &ls, NULL))
        return sc__fail(err, SC_E_NOMEM, et->path, SC_NO_OFFSET, "out of memory");
    const char *schema = et->schema == SC__NONE ? "" : sc__intern_str(&et->strings, et->schema);
    uint64_t with_tensors = 0;
    const sc__et_node *n = et->nodes.data;
    for (size_t i = 0; i < et->nodes.len; i++) with_tensors += n[i].in_count + n[i].out_count > 0;
    double cov_k = ls.cpu_ops ? 100.0 * (double)ls.linked / (double)ls.cpu_ops : 0;
    double cov_e = ls.et_ops ? 100.0 * (double)ls.et_linked / (double)ls.et_ops : 0;
    sc__buf b;
    sc__buf_init(&b);
    if (json) {
        sc__buf_puts(&b, "{\"file\": ");
        sc__buf_json_cstr(&b, et->path);
        sc__buf_puts(&b, ", \"schema\": ");
        sc__buf_json_cstr(&b, schema);
        sc__buf_printf(&b,
                       ", \"nodes\": %zu, \"ops\": %llu, \"ops_with_shapes\": %llu, "
                       "\"nodes_with_tensors\": %llu, \"tensor_data_deps\": %zu",
                       et->nodes.len, (unsigned long long)ls.et_ops,
                       (unsigned long long)et->with_shapes, (unsigned long long)with_tensors,
                       et->deps.len);
        if (kineto) {
            sc__buf_puts(&b, ", \"kineto\": ");
            sc__buf_json_cstr(&b, kineto->path);
            sc__buf_printf(&b,
                           ", \"link_method\": \"%s\", \"kineto_cpu_ops\": %llu, "
                           "\"kineto_with_rf_id\": %llu, \"linked\": %llu, "
                           "\"kineto_coverage_pct\": %.1f, \"et_ops_linked\": %llu, "
                           "\"et_coverage_pct\": %.1f, \"shapes_compared\": %llu, "
                           "\"shapes_agree\": %llu",
                           ls.by_order ? "order" : "rf_id", (unsigned long long)ls.cpu_ops,
                           (unsigned long long)ls.with_rf, (unsigned long long)ls.linked, cov_k,
                           (unsigned long long)ls.et_linked, cov_e,
                           (unsigned long long)ls.shapes_compared, (unsigned long long)ls.shapes_agree);
        }
        sc__buf_puts(&b, "}\n");
    } else {
        sc__buf_printf(&b, "%s (PyTorch Execution Trace, schema %s)\n", et->path, schema[0] ? schema : "?");
        sc__buf_printf(&b, "  %-22s%zu (%llu operators, %llu with input shapes)\n", "nodes",
                       et->nodes.len, (unsigned long long)ls.et_ops, (unsigned long long)et->with_shapes);
        sc__buf_printf(&b, "  %-22s%llu nodes with tensors, %zu data dependencies\n", "tensors",
                       (unsigned long long)with_tensors, et->deps.len);
        if (kineto) {
            sc__buf_printf(&b, "  %-22s%s\n", "kineto trace", kineto->path);
            sc__buf_printf(&b, "  %-22sby %s (%llu of %llu cpu_ops carry a Record function id)\n",
                           "link", ls.by_order ? "order of names" : "record-function id",
                           (unsigned long long)ls.with_rf, (unsigned long long)ls.cpu_ops);
            sc__buf_printf(&b, "  %-22s%llu of %llu Kineto cpu_ops (%.1f%%), %llu of %llu ET ops (%.1f%%)\n",
                           "linked", (unsigned long long)ls.linked, (unsigned long long)ls.cpu_ops,
                           cov_k, (unsigned long long)ls.et_linked, (unsigned long long)ls.et_ops, cov_e);
            sc__buf_printf(&b, "  %-22s%llu of %llu linked pairs with shapes on both sides\n",
                           "input shapes agree", (unsigned long long)ls.shapes_agree,
                           (unsigned long long)ls.shapes_compared);
        }
    }
    return sc__buf_write(&b, out, err);
}

static int cmp_pair_event(const void *a, const void *b) {
    const sc__et_pair *x = a, *y = b;
    return x->event < y->event ? -1 : x->event > y->event;
}

/* The linked operators themselves: per Kineto cpu_op (in file order, at most
 * max of them) its start and duration from Kineto and its ET node's id,
 * input shapes and input types. */
sc_status sc_et_write_ops(const sc_et *et, const sc_trace *kineto, size_t max, FILE *out, int json,
                           sc_error *err) {
    if (!kineto) return sc__fail(err, SC_E_USAGE, et->path, SC_NO_OFFSET, "listing ops needs a Kineto trace");
    sc_status whole = sc__trace_check_whole(kineto, err);
    if (whole != SC_OK) return whole;
    sc__vec pairs;
    sc__vec_init(&pairs, sizeof(sc__et_pair));
    sc__et_link ls;
    if (!sc__et_link_traces(et, kineto, &ls, &pairs)) {
        sc__vec_free(&pairs);
        return sc__fail(err, SC_E_NOMEM, et->path, SC_NO_OFFSET, "out of memory");
    }
    if (pairs.len) qsort(pairs.data, pairs.len, sizeof(sc__et_pair), cmp_pair_event);
    const sc__et_pair *pr = pairs.data;
    const sc__et_node *nodes = et->nodes.data;
    const sc__event *ev = sc__trace_events(kineto);
    sc__buf b;
    sc__buf_init(&b);
    if (json) sc__buf_puts(&b, "[\n");
    size_t n = pairs.len < max ? pairs.len : max;
    for (size_t i = 0; i < n; i++) {
        const sc__event *e = &ev[pr[i].event];
        const sc__et_node *nd = &nodes[pr[i].node];
        const char *name = sc__trace_str(kineto, e->name);
        const char *shapes = nd->in_shapes == SC__NONE ? "[]" : sc__intern_str(&et->strings, nd->in_shapes);
        const char *types = nd->in_types == SC__NONE ? "[]" : sc__intern_str(&et->strings, nd->in_types);
        if (json) {
            sc__buf_puts(&b, "  {\"name\": ");
            sc__buf_json_cstr(&b, name);
            sc__buf_printf(&b, ", \"ts_us\": %.3f, \"dur_us\": %.3f, \"et_id\": %lld, \"rf_id\": %lld, "
                               "\"input_shapes\": %s, \"input_types\": %s}%s\n",
                           (double)e->ts / 1e3, (double)e->dur / 1e3, (long long)nd->id,
                           (long long)nd->rf_id, shapes, types, i + 1 < n ? "," : "");
        } else {
            int64_t t0 = ev[pr[0].event].ts; /* text shows times from the first listed op */
            sc__buf_printf(&b, "+%10.3f ms %9.3f us  et %-6lld %s  %s  %s\n", (double)(e->ts - t0) / 1e6,
                           (double)e->dur / 1e3, (long long)nd->id, name, shapes, types);
        }
    }
    if (json) sc__buf_puts(&b, "]\n");
    sc__vec_free(&pairs);
    return sc__buf_write(&b, out, err);
}
