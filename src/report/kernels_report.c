/*
 * kernels_report.c - `stepcast kernels`: the kernel cost model against the
 * traces' kernels, one line per class, as text for people or JSON for
 * scripts.
 *
 * First the GPU, its measured GEMM ceiling (where it comes from) and the
 * model dimensions the shapes show; then per class the count, how many
 * have shapes, the traced time, the median |model - traced| error with
 * the profile's defaults and after the per-class fit, and the fitted
 * parameters. Fixed formats: the same input gives the same bytes. The
 * data comes from src/pipeline/kernels.c.
 */
#include "../pipeline/kernels.h"

static void json_pct(sc__buf *b, const char *key, double v) {
    if (v < 0) sc__buf_printf(b, ", \"%s\": null", key);
    else sc__buf_printf(b, ", \"%s\": %.2f", key, v);
}

static void json_dims(sc__buf *b, const sc__model_dims *d) {
    const struct {
        const char *key;
        int64_t v;
    } f[] = {{"hidden", d->hidden}, {"ffn", d->ffn}, {"heads", d->heads}, {"seq", d->seq},
             {"micro_batch", d->micro_batch}, {"tp", d->tp}, {"head_dim", d->head_dim}};
    sc__buf_puts(b, "{");
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        sc__buf_printf(b, "%s\"%s\": ", i ? ", " : "", f[i].key);
        if (f[i].v > 0) sc__buf_printf(b, "%lld", (long long)f[i].v);
        else sc__buf_puts(b, "\"unknown\"");
    }
    sc__buf_puts(b, "}");
}

static void put_json(sc__buf *b, const sc_kernels *k) {
    sc__buf_puts(b, "{\n  \"gpu\": ");
    sc__buf_json_cstr(b, k->before.gpu);
    sc__buf_printf(b, ",\n  \"gemm_ceiling\": %.4f, \"hbm_ceiling\": %.4f, \"ceiling_source\": ", k->before.gemm_ceiling,
                   k->before.hbm_ceiling);
    sc__buf_json_cstr(b, k->before.ceiling_source);
    sc__buf_puts(b, ",\n  \"model\": ");
    json_dims(b, &k->dims);
    sc__buf_puts(b, ",\n  \"classes\": [\n");
    for (size_t i = 0; i < SC__KC_COUNT; i++) {
        const sc_kernel_class *r = &k->rows[i];
        sc__buf_printf(b, "    {\"class\": \"%s\", \"count\": %llu, \"with_shapes\": %llu, \"traced_us\": %.3f", r->name,
                       (unsigned long long)r->count, (unsigned long long)r->with_shapes, r->traced_us);
        json_pct(b, "median_error_before_pct", r->error_before_pct);
        json_pct(b, "median_error_after_pct", r->error_after_pct);
        if (i == SC__KC_COLLECTIVE) sc__buf_puts(b, ", \"model\": \"communication (stepcast comm)\"");
        else
            sc__buf_printf(b, ", \"fitted\": %llu, \"eff\": %.4f, \"edge\": %.1f, \"mem_eff\": %.4f, \"floor_us\": %.3f",
                           (unsigned long long)r->fitted, r->eff, r->edge, r->mem_eff, r->floor_us);
        sc__buf_printf(b, "}%s\n", i + 1 < SC__KC_COUNT ? "," : "");
    }
    sc__buf_puts(b, "  ]\n}\n");
}

static void text_dims(sc__buf *b, const sc__model_dims *d) {
    const struct {
        const char *key;
        int64_t v;
    } f[] = {{"hidden", d->hidden}, {"ffn", d->ffn}, {"heads", d->heads}, {"seq", d->seq},
             {"micro-batch", d->micro_batch}, {"tp", d->tp}};
    sc__buf_puts(b, "shapes show:");
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        if (f[i].v > 0) sc__buf_printf(b, " %s %lld", f[i].key, (long long)f[i].v);
        else sc__buf_printf(b, " %s unknown", f[i].key);
        sc__buf_puts(b, i + 1 < sizeof f / sizeof *f ? "," : "\n");
    }
}

static void text_pct(sc__buf *b, double v) {
    if (v < 0) sc__buf_printf(b, " %9s", "-");
    else sc__buf_printf(b, " %8.1f%%", v);
}

static void put_text(sc__buf *b, const sc_kernels *k) {
    sc__buf_printf(b, "kernels: GPU %s, GEMM ceiling %.1f%% of the dense peak, HBM %.1f%% (%s)\n", k->before.gpu,
                   100 * k->before.gemm_ceiling, 100 * k->before.hbm_ceiling, k->before.ceiling_source);
    text_dims(b, &k->dims);
    sc__buf_printf(b, "\n%-12s %7s %7s %12s %9s %9s %7s %7s %7s %7s %8s\n", "class", "count", "shapes", "traced_ms",
                   "err_prof", "err_fit", "fitted", "eff", "edge", "mem_eff", "floor_us");
    for (size_t i = 0; i < SC__KC_COUNT; i++) {
        const sc_kernel_class *r = &k->rows[i];
        sc__buf_printf(b, "%-12s %7llu %7llu %12.3f", r->name, (unsigned long long)r->count,
                       (unsigned long long)r->with_shapes, r->traced_us / 1e3);
        text_pct(b, r->error_before_pct);
        text_pct(b, r->error_after_pct);
        if (i == SC__KC_COLLECTIVE) sc__buf_puts(b, "  timed by the communication model (stepcast comm)\n");
        else if (r->eff > 0)
            sc__buf_printf(b, " %7llu %7.3f %7.1f %7.3f %8.2f\n", (unsigned long long)r->fitted, r->eff, r->edge, r->mem_eff,
                           r->floor_us);
        else
            sc__buf_printf(b, " %7llu %7s %7s %7.3f %8.2f\n", (unsigned long long)r->fitted, "-", "-", r->mem_eff,
                           r->floor_us);
    }
    sc__buf_puts(b, "\nerrors: median |model - traced| / traced over the kernels with shapes; err_prof with the\n"
                    "profile's defaults, err_fit with the model fitted per class to these kernels\n");
}

sc_status sc_kernels_write(const sc_kernels *k, FILE *out, int json, sc_error *err) {
    if (!k) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no kernel model to write");
    sc__buf b;
    sc__buf_init(&b);
    if (json) put_json(&b, k);
    else put_text(&b, k);
    return sc__buf_write(&b, out, err);
}
