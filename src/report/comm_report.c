/*
 * comm_report.c - `stepcast comm`: the communication model and its rows,
 * as text for people or JSON for scripts.
 *
 * First the GPU and where the model's values come from (the profile, or
 * fitted to how many of the traces' collectives), and the model itself;
 * then one line per row: without traces an nccl-tests-like table (size,
 * modelled time, bus bandwidth, the algorithm chosen), with traces one
 * line per kind, group size and size bucket (count, median measured
 * transfer, the model's time). Fixed formats: the same input gives the
 * same bytes. The data comes from src/pipeline/comm.c.
 */
#include "../pipeline/comm.h"

static void json_num(sc__buf *b, const char *key, double v, const char *fmt) {
    sc__buf_printf(b, ", \"%s\": ", key);
    if (v < 0) sc__buf_puts(b, "null");
    else sc__buf_printf(b, fmt, v);
}

static void json_row(sc__buf *b, const sc_comm_row *r, bool traces) {
    sc__buf_printf(b, "    {\"op\": \"%s\", \"ranks\": %u, \"bytes\": ", r->op, r->ranks);
    if (r->bytes < 0) sc__buf_puts(b, "null");
    else sc__buf_printf(b, "%lld", (long long)r->bytes);
    json_num(b, "us", r->us, "%.3f");
    json_num(b, "busbw_gbps", r->busbw_gbps, "%.3f");
    if (*r->algorithm)
        sc__buf_printf(b, ", \"algorithm\": \"%s\", \"protocol\": \"%s\", \"links\": \"%s\"", r->algorithm, r->protocol,
                       r->links);
    else sc__buf_puts(b, ", \"algorithm\": null, \"protocol\": null, \"links\": null");
    if (traces) {
        json_num(b, "measured_us", r->measured_us, "%.3f");
        sc__buf_printf(b, ", \"count\": %llu", (unsigned long long)r->count);
    }
    sc__buf_puts(b, "}");
}

static void put_json(sc__buf *b, const sc_comm *c) {
    sc_comm_model m = sc_comm_get_model(c);
    sc__buf_puts(b, "{\n  \"gpu\": ");
    sc__buf_json_cstr(b, m.gpu);
    sc__buf_printf(b, ",\n  \"source\": \"%s\", \"samples\": %llu,\n", m.fitted ? "fitted" : "profile",
                   (unsigned long long)m.samples);
    sc__buf_printf(b,
                   "  \"model\": {\"gpus_per_node\": %u, \"base_us\": %.3f, \"nvlink_busbw_gbps\": %.3f, "
                   "\"net_busbw_gbps\": %.3f, \"ll_frac\": %.4f, \"nvlink_ll_step_us\": %.3f, "
                   "\"nvlink_simple_step_us\": %.3f, \"net_ll_step_us\": %.3f, \"net_simple_step_us\": %.3f, "
                   "\"nvls\": %s, \"nvls_us\": %.3f, \"nvls_gbps\": %.3f},\n",
                   m.gpus_per_node, m.base_us, m.nvlink_busbw_gbps, m.net_busbw_gbps, m.ll_frac, m.nvlink_ll_step_us,
                   m.nvlink_simple_step_us, m.net_ll_step_us, m.net_simple_step_us, m.nvls ? "true" : "false",
                   m.nvls_us, m.nvls_gbps);
    sc__buf_puts(b, "  \"rows\": [\n");
    for (size_t i = 0; i < c->nrows; i++) {
        json_row(b, &c->rows[i], c->traces);
        sc__buf_puts(b, i + 1 < c->nrows ? ",\n" : "\n");
    }
    sc__buf_puts(b, "  ],\n  \"warnings\": [");
    for (size_t i = 0; i < c->warnings.count; i++) {
        sc__buf_puts(b, i ? ", " : "");
        sc__buf_json_cstr(b, c->warnings.items[i]);
    }
    sc__buf_puts(b, "]\n}\n");
}

static void text_model(sc__buf *b, const sc_comm *c) {
    sc_comm_model m = sc_comm_get_model(c);
    sc__buf_printf(b, "gpu       %s, ", m.gpu);
    if (m.fitted)
        sc__buf_printf(b, "fitted to %llu collective%s of the traces\n", (unsigned long long)m.samples,
                       m.samples == 1 ? "" : "s");
    else
        sc__buf_printf(b, "from the profile%s\n",
                       c->traces ? " (no collective of known size with every rank traced to fit it to)" : "");
    sc__buf_printf(b, "model     %u GPUs a node; bus bandwidth %.1f GB/s over nvlink, %.1f GB/s a GPU over the network; "
                      "fixed %.2f us\n",
                   m.gpus_per_node, m.nvlink_busbw_gbps, m.net_busbw_gbps, m.base_us);
    sc__buf_printf(b, "          steps LL/Simple: nvlink %.2f/%.2f us, network %.2f/%.2f us; LL at %.0f%% of the bandwidth",
                   m.nvlink_ll_step_us, m.nvlink_simple_step_us, m.net_ll_step_us, m.net_simple_step_us,
                   m.ll_frac * 100);
    if (m.nvls) sc__buf_printf(b, "; NVLS %.1f GB/s + %.2f us", m.nvls_gbps, m.nvls_us);
    sc__buf_puts(b, "\n\n");
}

/* "ring/LL (nvlink)", or "-" when the row is not modelled. */
static void text_choice(sc__buf *b, const sc_comm_row *r) {
    if (*r->algorithm) sc__buf_printf(b, "  %s/%s (%s)\n", r->algorithm, r->protocol, r->links);
    else sc__buf_puts(b, r->us < 0 ? "  not modelled\n" : "  -\n");
}

static void text_table(sc__buf *b, const sc_comm *c) {
    const sc_comm_row *r0 = &c->rows[0];
    uint32_t per = c->model.gpus_per_node;
    sc__buf_printf(b, "%s on %u ranks (%u node%s of %u GPUs)\n", r0->op, r0->ranks, (r0->ranks + per - 1) / per,
                   r0->ranks > per ? "s" : "", per);
    sc__buf_printf(b, "%14s %12s %11s  %s\n", "bytes", "time_us", "busbw_GB/s", "algorithm");
    for (size_t i = 0; i < c->nrows; i++) {
        const sc_comm_row *r = &c->rows[i];
        sc__buf_printf(b, "%14lld %12.3f %11.2f", (long long)r->bytes, r->us, r->busbw_gbps);
        text_choice(b, r);
    }
}

static void text_traces(sc__buf *b, const sc_comm *c) {
    if (!c->nrows) {
        sc__buf_puts(b, "no collectives in the traces\n");
        return;
    }
    sc__buf_printf(b, "%-15s %5s %14s %6s %12s %12s %11s  %s\n", "op", "ranks", "bytes", "count", "measured_us",
                   "model_us", "busbw_GB/s", "algorithm");
    for (size_t i = 0; i < c->nrows; i++) {
        const sc_comm_row *r = &c->rows[i];
        sc__buf_printf(b, "%-15s %5u ", r->op, r->ranks);
        if (r->bytes < 0) sc__buf_printf(b, "%14s", "unknown");
        else sc__buf_printf(b, "%14lld", (long long)r->bytes);
        sc__buf_printf(b, " %6llu %12.3f", (unsigned long long)r->count, r->measured_us);
        if (r->us < 0) sc__buf_printf(b, " %12s %11s", "-", "-");
        else sc__buf_printf(b, " %12.3f %11.2f", r->us, r->busbw_gbps);
        text_choice(b, r);
    }
}

static void put_text(sc__buf *b, const sc_comm *c) {
    text_model(b, c);
    if (c->traces) text_traces(b, c);
    else if (c->nrows) text_table(b, c);
    /* The trace set's own warnings (skipped files...) are the caller's to
     * print, as it loaded the set; JSON carries them all. */
    for (size_t i = c->load_warnings; i < c->warnings.count; i++) sc__buf_printf(b, "warning: %s\n", c->warnings.items[i]);
}

sc_status sc_comm_write(const sc_comm *c, FILE *out, int json, sc_error *err) {
    if (!c) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no communication model to write");
    sc__buf b;
    sc__buf_init(&b);
    if (json) put_json(&b, c);
    else put_text(&b, c);
    return sc__buf_write(&b, out, err);
}
