/*
 * diff_html.c - `stepcast diff --html FILE`: what src/pipeline/diff.c
 * computed as one self-contained HTML page, built from the report's pieces
 * (html_page.c's frame and tables, html_charts.c's bars): the two sides in
 * cards and a table, then per section (steps, kernel classes, collectives,
 * operators, kernels) the differences B - A as bars left (faster) or right
 * (slower) of a middle line, largest first, and a table of the same rows
 * that sorts by a click on a heading. Only formats; fixed number formats
 * and orders, so the same diff gives the same bytes.
 */
#include "html.h"
#include "../pipeline/diff.h"

#include <stdio.h>

static const char *const titles[SC_DIFF_SECTION_COUNT] = {
    "Steps", "Kernel classes", "Collectives", "Operators", "Kernels",
};
static const char *const notes[SC_DIFF_SECTION_COUNT] = {
    "The i-th ProfilerStep of each side, in order: its duration averaged over the ranks that have it.",
    "GPU work by class, as the critical path names them.",
    "NCCL kernels by collective kind.",
    "CPU operators and user annotations by name; inclusive time, as in HTA (nested operators count in "
    "their parent too).",
    "GPU kernels, copies and sets by normalised name (template arguments, parameter lists and Triton "
    "compile numbers dropped).",
};

static void sides(sc__buf *b, const sc_diff *d) {
    char v[64];
    sc__html_section_open(b, "sides", "The two sides",
                          "Every figure on this page is a mean per step per rank: a side's sums are divided by "
                          "its rank-steps, so sides of different lengths and rank counts compare.");
    sc__buf_puts(b, "<div class=\"cards\">");
    snprintf(v, sizeof v, "%.3f ms", d->side[0].step_us / 1e3);
    sc__html_card(b, v, "A: mean step");
    snprintf(v, sizeof v, "%.3f ms", d->side[1].step_us / 1e3);
    sc__html_card(b, v, "B: mean step");
    double delta = d->side[1].step_us - d->side[0].step_us;
    if (d->side[0].step_us > 0) {
        snprintf(v, sizeof v, "<span class=\"%s\">%+.1f%%</span>", delta > 0 ? "bad" : "good",
                 100 * delta / d->side[0].step_us);
        sc__html_card(b, v, "B against A");
    }
    sc__buf_puts(b, "</div><div data-chart=\"sides\">");
    static const char *const heads[] = {"side", "traces", "GPU", "#ranks", "#rank-steps", "#mean step ms"};
    sc__html_table_head(b, heads, 6);
    for (int s = 0; s < 2; s++) {
        const sc_diff_side *x = &d->side[s];
        sc__buf_printf(b, "<tr><td>%s</td>", s ? "B" : "A");
        sc__html_name_cell(b, x->label);
        sc__html_name_cell(b, *x->gpu ? x->gpu : "unknown");
        sc__html_num_cell(b, (double)x->ranks, "%.0f");
        sc__html_num_cell(b, (double)x->rank_steps, "%.0f");
        sc__html_num_cell(b, x->step_us / 1e3, "%.3f");
        sc__buf_puts(b, "</tr>");
    }
    sc__buf_puts(b, "</tbody></table></div></div>");
    sc__html_section_close(b);
}

static void rows_table(sc__buf *b, const sc_diff_row *rows, size_t n) {
    static const char *const heads[] = {"name",     "#A ms",      "#B ms",      "#B - A ms",
                                        "#B - A %", "#A runs", "#B runs", "change"};
    sc__html_table_head(b, heads, 8);
    for (size_t i = 0; i < n; i++) {
        const sc_diff_row *r = &rows[i];
        sc__buf_puts(b, "<tr>");
        sc__html_name_cell(b, r->name);
        sc__html_num_cell(b, r->a_us / 1e3, "%.3f");
        sc__html_num_cell(b, r->b_us / 1e3, "%.3f");
        sc__html_num_cell(b, r->delta_us / 1e3, "%+.3f");
        if (r->a_us > 0) sc__html_num_cell(b, r->delta_pct, "%+.1f");
        else sc__buf_puts(b, "<td class=\"num\" data-v=\"\">-</td>"); /* nothing in A to compare with */
        sc__html_num_cell(b, r->a_count, "%.2f");
        sc__html_num_cell(b, r->b_count, "%.2f");
        sc__buf_printf(b, "<td>%s</td></tr>", r->change);
    }
    sc__html_none_row(b, n, 8, "none on either side");
    sc__buf_puts(b, "</tbody></table></div>");
}

/* One section: rows [first, end) of the diff, at most top of them but for
 * the steps (top 0: all). */
static void section(sc__buf *b, sc_diff_section s, const sc_diff_row *rows, size_t n, size_t top) {
    const char *name = sc_diff_section_name(s);
    size_t shown = s == SC_DIFF_STEP || top == 0 || n <= top ? n : top;
    char note[512];
    snprintf(note, sizeof note, "%s%s", notes[s],
             s == SC_DIFF_STEP ? "" : " Sorted by impact, the largest |B - A| first.");
    sc__html_section_open(b, name, titles[s], note);
    if (shown < n) sc__buf_printf(b, "<p class=\"note\">The first %zu of %zu (--top 0 shows all).</p>", shown, n);
    sc__buf_printf(b, "<div data-chart=\"%s-delta\">", name);
    sc__html_delta_bars(b, rows, shown, 1000);
    sc__buf_printf(b, "</div><div data-chart=\"%s\">", name);
    rows_table(b, rows, shown);
    sc__buf_puts(b, "</div>");
    sc__html_section_close(b);
}

sc_status sc_diff_write_html(const sc_diff *d, const char *subtitle, size_t top, FILE *out, sc_error *err) {
    if (!d || !out) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no diff to write");
    sc__buf b;
    sc__buf_init(&b);
    sc__html_page_open(&b, "stepcast diff", subtitle,
                       "<a href=\"#sides\">sides</a><a href=\"#step\">steps</a><a href=\"#kernel_class\">kernel "
                       "classes</a><a href=\"#collective\">collectives</a><a href=\"#operator\">operators</a>"
                       "<a href=\"#kernel\">kernels</a>");
    sides(&b, d);
    size_t i = 0;
    for (int s = 0; s < SC_DIFF_SECTION_COUNT; s++) {
        size_t first = i;
        while (i < d->nrows && d->rows[i].section == (sc_diff_section)s) i++;
        section(&b, (sc_diff_section)s, d->rows + first, i - first, top);
    }
    sc__html_page_close(&b);
    return sc__buf_write(&b, out, err);
}
