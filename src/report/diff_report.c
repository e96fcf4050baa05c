/*
 * diff_report.c - `stepcast diff`: the two sides, then each section's rows
 * (steps in order, the rest by impact), as text for people or JSON for
 * scripts and pages. It only formats what src/pipeline/diff.c computed;
 * fixed formats, so the same input gives the same bytes.
 */
#include "../pipeline/diff.h"

static void json_side(sc__buf *b, const char *key, const sc_diff_side *s) {
    sc__buf_printf(b, "  \"%s\": {\"label\": ", key);
    sc__buf_json_cstr(b, s->label);
    sc__buf_puts(b, ", \"gpu\": ");
    sc__buf_json_cstr(b, s->gpu);
    sc__buf_printf(b, ", \"ranks\": %zu, \"rank_steps\": %llu, \"step_us\": %.3f},\n", s->ranks,
                   (unsigned long long)s->rank_steps, s->step_us);
}

static void put_json(sc__buf *b, const sc_diff *d) {
    sc__buf_puts(b, "{\n");
    json_side(b, "a", &d->side[0]);
    json_side(b, "b", &d->side[1]);
    sc__buf_puts(b, "  \"unit\": \"mean per step per rank\",\n  \"rows\": [\n");
    for (size_t i = 0; i < d->nrows; i++) {
        const sc_diff_row *r = &d->rows[i];
        sc__buf_printf(b, "    {\"section\": \"%s\", \"name\": ", sc_diff_section_name(r->section));
        sc__buf_json_cstr(b, r->name);
        sc__buf_printf(b,
                       ", \"a_us\": %.3f, \"b_us\": %.3f, \"delta_us\": %.3f, \"delta_pct\": ", r->a_us,
                       r->b_us, r->delta_us);
        if (r->a_us > 0) sc__buf_printf(b, "%.2f", r->delta_pct);
        else sc__buf_puts(b, "null"); /* nothing in A to compare with */
        sc__buf_printf(b, ", \"a_count\": %.3f, \"b_count\": %.3f, \"change\": \"%s\"}%s\n", r->a_count,
                       r->b_count, r->change, i + 1 < d->nrows ? "," : "");
    }
    sc__buf_puts(b, "  ]\n}\n");
}

static const char *const titles[SC_DIFF_SECTION_COUNT] = {
    "steps (mean over the ranks that have each; count: ranks)",
    "kernel classes",
    "collectives (NCCL kernels by kind)",
    "operators (CPU ops and annotations, inclusive time)",
    "kernels (normalised names)",
};

static void text_side(sc__buf *b, const char *which, const sc_diff_side *s) {
    sc__buf_printf(b, "%s: %s\n   %zu rank%s, %llu rank-step%s, mean step %.3f ms%s%s\n", which, s->label, s->ranks,
                   s->ranks == 1 ? "" : "s", (unsigned long long)s->rank_steps, s->rank_steps == 1 ? "" : "s",
                   s->step_us / 1e3, *s->gpu ? ", " : "", s->gpu);
}

static void put_text(sc__buf *b, const sc_diff *d, size_t top) {
    text_side(b, "A", &d->side[0]);
    text_side(b, "B", &d->side[1]);
    sc__buf_puts(b, "times and counts: mean per step per rank; delta = B - A; sorted by |delta|\n");
    size_t i = 0;
    for (int s = 0; s < SC_DIFF_SECTION_COUNT; s++) {
        size_t first = i;
        while (i < d->nrows && d->rows[i].section == (sc_diff_section)s) i++;
        if (i == first) continue;
        sc__buf_printf(b, "\n%s:\n  %11s %11s %11s %8s %9s %9s  %-7s %s\n", titles[s], "A ms", "B ms", "delta ms",
                       "delta%", "A count", "B count", "change", "name");
        size_t shown = s == SC_DIFF_STEP || top == 0 || i - first <= top ? i - first : top;
        for (size_t k = first; k < first + shown; k++) {
            const sc_diff_row *r = &d->rows[k];
            sc__buf_printf(b, "  %11.3f %11.3f %+11.3f ", r->a_us / 1e3, r->b_us / 1e3, r->delta_us / 1e3);
            if (r->a_us > 0) sc__buf_printf(b, "%+7.1f%%", r->delta_pct);
            else sc__buf_printf(b, "%8s", "-");
            sc__buf_printf(b, " %9.2f %9.2f  %-7s %s\n", r->a_count, r->b_count, r->change, r->name);
        }
        if (shown < i - first) sc__buf_printf(b, "  ... %zu more (--top 0 for all)\n", i - first - shown);
    }
}

sc_status sc_diff_write(const sc_diff *d, FILE *out, int json, size_t top, sc_error *err) {
    if (!d) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no diff to write");
    sc__buf b;
    sc__buf_init(&b);
    if (json) put_json(&b, d);
    else put_text(&b, d, top);
    return sc__buf_write(&b, out, err);
}
