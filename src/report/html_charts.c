/*
 * html_charts.c - the inline SVG charts of `stepcast report` (html.h):
 * per-rank column charts (grouped or stacked), the SM-busy heat strip and
 * horizontal bar lists. Each chart is one <svg> with a viewBox, so it
 * scales with the page; every mark carries a <title> (the browser's hover
 * text) with its exact figures, and the heat strip's rows carry their
 * values for the page's script to show under the pointer.
 */
#include "html.h"

#include <math.h>
#include <stdio.h>

/* ------------------------------------------------------------ text */

void sc__html_text(sc__buf *b, const char *s) {
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '&': sc__buf_puts(b, "&amp;"); break;
        case '<': sc__buf_puts(b, "&lt;"); break;
        case '>': sc__buf_puts(b, "&gt;"); break;
        case '"': sc__buf_puts(b, "&quot;"); break;
        case '\'': sc__buf_puts(b, "&#39;"); break;
        default: sc__buf_put(b, p, 1);
        }
    }
}

/* Cut at a character boundary of UTF-8: continuation bytes are 10xxxxxx. */
void sc__html_text_cut(sc__buf *b, const char *s, size_t max) {
    size_t n = strlen(s ? s : "");
    if (n <= max) {
        sc__html_text(b, s);
        return;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
    char cut[512];
    if (max >= sizeof cut) max = sizeof cut - 1;
    memcpy(cut, s, max);
    cut[max] = '\0';
    sc__html_text(b, cut);
    sc__buf_puts(b, "\xE2\x80\xA6"); /* ellipsis */
}

/* ------------------------------------------------------------ colours */

static const struct {
    const char *name, *colour;
} palette[] = {
    {"exposed compute", "#4e79a7"}, {"overlap", "#b07aa1"},   {"exposed communication", "#f28e2b"},
    {"idle", "#c9c3bd"},            {"cpu", "#76b7b2"},       {"launch", "#59a14f"},
    {"runtime", "#8cd17d"},         {"sync", "#e15759"},      {"gemm", "#4e79a7"},
    {"attention", "#a0cbe8"},       {"other_kernel", "#9c755f"}, {"memcpy", "#edc948"},
    {"memset", "#ffbe7d"},          {"communication", "#f28e2b"}, {"measured", "#6b6b6b"},
    {"simulated", "#4e79a7"},       {"predicted", "#59a14f"},
};

const char *sc__html_colour(const char *cls) {
    for (size_t i = 0; i < sizeof palette / sizeof *palette; i++)
        if (strcmp(palette[i].name, cls) == 0) return palette[i].colour;
    return "#8c8c8c";
}

/* ------------------------------------------------------------ rows of ranks */

sc__hrows sc__html_rows(size_t nranks, size_t max_rows, const int64_t *ids) {
    sc__hrows r = {.nranks = nranks, .per = 1, .ids = ids};
    if (!max_rows) max_rows = 64;
    if (nranks > max_rows) r.per = (nranks + max_rows - 1) / max_rows;
    r.nrows = r.per ? (nranks + r.per - 1) / r.per : 0;
    return r;
}

static size_t row_first(const sc__hrows *r, size_t row) { return row * r->per; }
static size_t row_end(const sc__hrows *r, size_t row) {
    size_t e = (row + 1) * r->per;
    return e < r->nranks ? e : r->nranks;
}

void sc__html_row_label(const sc__hrows *rows, size_t row, char *buf, size_t size) {
    size_t a = row_first(rows, row), e = row_end(rows, row);
    if (e - a == 1) snprintf(buf, size, "rank %lld", (long long)rows->ids[a]);
    else snprintf(buf, size, "ranks %lld-%lld", (long long)rows->ids[a], (long long)rows->ids[e - 1]);
}

/* Mean, minimum and maximum of v over a row, and the rank indices of the extremes. */
typedef struct stat {
    double mean, min, max;
    size_t at_min, at_max;
} stat;

static stat row_stat(const sc__hrows *r, size_t row, const double *v) {
    size_t a = row_first(r, row), e = row_end(r, row);
    stat s = {0, v[a], v[a], a, a};
    for (size_t i = a; i < e; i++) {
        s.mean += v[i];
        if (v[i] < s.min) s.min = v[i], s.at_min = i;
        if (v[i] > s.max) s.max = v[i], s.at_max = i;
    }
    s.mean /= (double)(e - a);
    return s;
}

double sc__html_series_max(const sc__hrows *rows, const sc__hseries *s, size_t ns, bool stacked) {
    double top = 0;
    for (size_t row = 0; row < rows->nrows; row++) {
        double sum = 0;
        for (size_t k = 0; k < ns; k++) {
            stat st = row_stat(rows, row, s[k].ms);
            sum += st.mean;
            if (!stacked && st.max > top) top = st.max;
        }
        if (stacked && sum > top) top = sum;
    }
    return top;
}

/* ------------------------------------------------------------ axes */

/* A round step of about span / 5: 1, 2, 2.5 or 5 times a power of ten. */
static double nice_step(double span) {
    if (!(span > 0)) return 1;
    double raw = span / 5, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
}

static void tick_text(sc__buf *b, double v, double step) {
    if (step >= 1) sc__buf_printf(b, "%.0f", v);
    else if (step >= 0.1) sc__buf_printf(b, "%.1f", v);
    else sc__buf_printf(b, "%.3g", v);
}

enum { ML = 64, MR = 14, MT = 12, MB = 44 };

/* The y axis of a plot of height h from y0 (top) with values 0..ymax. */
static void y_axis(sc__buf *b, double ymax, double step, int x0, int x1, int y0, int h, const char *label) {
    for (double v = 0; v <= ymax * 1.0000001; v += step) {
        double y = y0 + h - v / ymax * h;
        sc__buf_printf(b, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", x0, x1, y, y);
        sc__buf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", x0 - 5, y + 3.5);
        tick_text(b, v, step);
        sc__buf_puts(b, "</text>");
    }
    sc__buf_printf(b, "<text class=\"axis\" transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">",
                   y0 + h / 2);
    sc__html_text(b, label);
    sc__buf_puts(b, "</text>");
}

/* Labels under the columns, spaced at least 34 px apart. */
static void x_rank_labels(sc__buf *b, const sc__hrows *rows, int x0, double slot, int y) {
    size_t every = (size_t)ceil(34.0 / slot);
    if (every < 1) every = 1;
    for (size_t row = 0; row < rows->nrows; row += every)
        sc__buf_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%lld</text>",
                       x0 + slot * ((double)row + 0.5), y, (long long)rows->ids[row_first(rows, row)]);
    sc__buf_printf(b, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x0 + slot * (double)rows->nrows / 2,
                   y + 22);
    if (rows->per > 1) sc__buf_printf(b, "rank (columns of %zu consecutive ranks, labelled by their first)", rows->per);
    else sc__buf_puts(b, "rank");
    sc__buf_puts(b, "</text>");
}

/* ------------------------------------------------------------ column charts */

static void bar_title(sc__buf *b, const char *label, const sc__hseries *s, const stat *st, const sc__hrows *rows,
                      bool grouped) {
    sc__buf_puts(b, "<title>");
    sc__html_text(b, label);
    sc__buf_puts(b, ": ");
    sc__html_text(b, s->name);
    if (!grouped) {
        double ref = s->vs ? s->vs[st->at_min] : 0;
        sc__buf_printf(b, " %.3f ms", st->mean);
        if (ref > 0) sc__buf_printf(b, " (%+.2f%%)", 100 * (st->mean - ref) / ref);
        sc__buf_puts(b, "</title>");
        return;
    }
    sc__buf_printf(b, " mean %.3f ms, min %.3f ms (rank %lld), max %.3f ms (rank %lld)</title>", st->mean, st->min,
                   (long long)rows->ids[st->at_min], st->max, (long long)rows->ids[st->at_max]);
}

static void grouped_columns(sc__buf *b, const sc__hrows *rows, const sc__hseries *s, size_t ns, double ymax, int x0,
                            double slot, int y0, int h) {
    double bw = slot * 0.8 / (double)ns;
    char label[64];
    for (size_t row = 0; row < rows->nrows; row++) {
        sc__html_row_label(rows, row, label, sizeof label);
        for (size_t k = 0; k < ns; k++) {
            stat st = row_stat(rows, row, s[k].ms);
            double x = x0 + slot * (double)row + slot * 0.1 + bw * (double)k, bh = st.mean / ymax * h;
            sc__buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">", x,
                           y0 + h - bh, bw > 1.5 ? bw - 0.5 : bw, bh, s[k].colour);
            bar_title(b, label, &s[k], &st, rows, rows->per > 1);
            sc__buf_puts(b, "</rect>");
            if (rows->per > 1)
                sc__buf_printf(b, "<line class=\"whisker\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%.2f\" y2=\"%.2f\"/>",
                               x + bw / 2, x + bw / 2, y0 + h - st.min / ymax * h, y0 + h - st.max / ymax * h);
        }
    }
}

static void stacked_columns(sc__buf *b, const sc__hrows *rows, const sc__hseries *s, size_t ns, double ymax, int x0,
                            double slot, int y0, int h) {
    double bw = slot * 0.7;
    char label[64];
    for (size_t row = 0; row < rows->nrows; row++) {
        sc__html_row_label(rows, row, label, sizeof label);
        double base = 0, x = x0 + slot * (double)row + slot * 0.15;
        for (size_t k = 0; k < ns; k++) {
            stat st = row_stat(rows, row, s[k].ms);
            double bh = st.mean / ymax * h;
            sc__buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">", x,
                           y0 + h - base - bh, bw, bh, s[k].colour);
            bar_title(b, label, &s[k], &st, rows, rows->per > 1);
            sc__buf_puts(b, "</rect>");
            base += bh;
        }
    }
}

void sc__html_rank_bars(sc__buf *b, const sc__hrows *rows, const sc__hseries *s, size_t ns, bool stacked,
                        double ymax, int width, const char *ylabel) {
    int height = 280, h = height - MT - MB, pw = width - ML - MR;
    double step = nice_step(ymax);
    ymax = ymax > 0 ? ceil(ymax / step - 1e-9) * step : 1;
    double slot = rows->nrows ? (double)pw / (double)rows->nrows : pw;
    sc__buf_printf(b, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\">", width, height);
    y_axis(b, ymax, step, ML, width - MR, MT, h, ylabel);
    if (stacked) stacked_columns(b, rows, s, ns, ymax, ML, slot, MT, h);
    else grouped_columns(b, rows, s, ns, ymax, ML, slot, MT, h);
    sc__buf_printf(b, "<line class=\"base\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>", ML, width - MR, MT + h, MT + h);
    x_rank_labels(b, rows, ML, slot, MT + h + 14);
    sc__buf_puts(b, "</svg>");
}

/* ------------------------------------------------------------ heat strip */

/* 11 shades from no busy stream (0) to always busy (10). */
static const char *const shades[11] = {"#f7fbff", "#e3eef9", "#cfe1f2", "#b5d4e9", "#93c3df", "#6daed5",
                                       "#4b97c9", "#2f7ebc", "#1864aa", "#0a4a90", "#08306b"};

/* The row's mean busy share over windows [w0, w1) of its ranks; -1 where
 * none of them has a window there (its step ended). */
static double heat_cell(const sc__hrows *rows, size_t row, const double *const *busy, const size_t *nwin, size_t w0,
                        size_t w1) {
    double sum = 0;
    size_t n = 0;
    for (size_t i = row_first(rows, row); i < row_end(rows, row); i++)
        for (size_t w = w0; w < w1 && w < nwin[i]; w++) sum += busy[i][w], n++;
    return n ? sum / (double)n : -1;
}

static void heat_row(sc__buf *b, const sc__hrows *rows, size_t row, const double *const *busy, const size_t *nwin,
                     size_t bin, size_t ncols, double x0, double cw, double y, double rh) {
    char label[64];
    sc__html_row_label(rows, row, label, sizeof label);
    double total = 0;
    size_t nw = 0;
    for (size_t i = row_first(rows, row); i < row_end(rows, row); i++)
        for (size_t w = 0; w < nwin[i]; w++) total += busy[i][w], nw++;
    sc__buf_printf(b, "<g class=\"hrow\" data-label=\"%s\" data-busy=\"", label);
    int level[4096];
    for (size_t c = 0; c < ncols && c < 4096; c++) {
        double v = heat_cell(rows, row, busy, nwin, c * bin, (c + 1) * bin);
        level[c] = v < 0 ? -1 : (int)lround(v * 10);
        if (v < 0) sc__buf_printf(b, "%s", c ? ",-" : "-");
        else sc__buf_printf(b, "%s%.0f", c ? "," : "", v * 100);
    }
    sc__buf_puts(b, "\"><title>");
    sc__buf_printf(b, "%s: a stream busy %.1f%% of the simulated step (%zu ms)</title>", label,
                   nw ? 100.0 * total / (double)nw : 0.0, nwin[row_first(rows, row)]);
    for (size_t c = 0; c < ncols;) { /* runs of one shade, one rect each */
        size_t e = c + 1;
        while (e < ncols && level[e] == level[c]) e++;
        if (level[c] >= 0)
            sc__buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>",
                           x0 + cw * (double)c, y, cw * (double)(e - c), rh, shades[level[c]]);
        c = e;
    }
    sc__buf_puts(b, "</g>");
}

void sc__html_heat(sc__buf *b, const sc__hrows *rows, const double *const *busy, const size_t *nwin, int width) {
    size_t maxw = 1;
    for (size_t i = 0; i < rows->nranks; i++)
        if (nwin[i] > maxw) maxw = nwin[i];
    int pw = width - ML - MR;
    size_t cap = (size_t)pw / 2 < 4096 ? (size_t)pw / 2 : 4096; /* at least 2 px a column */
    size_t bin = (maxw + cap - 1) / cap, ncols = (maxw + bin - 1) / bin;
    double cw = (double)pw / (double)ncols;
    double rh = rows->nrows ? 360.0 / (double)rows->nrows : 18;
    if (rh > 22) rh = 22;
    if (rh < 4) rh = 4;
    int h = (int)ceil(rh * (double)rows->nrows), height = MT + h + MB;
    sc__buf_printf(b,
                   "<svg class=\"chart heat\" viewBox=\"0 0 %d %d\" role=\"img\" data-x0=\"%d\" data-cw=\"%.4f\" "
                   "data-bin=\"%zu\" data-y0=\"%d\" data-rh=\"%.4f\">",
                   width, height, ML, cw, bin, MT, rh);
    sc__buf_printf(b, "<rect class=\"nodata\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", ML, MT, pw, h);
    size_t every = (size_t)ceil(12.0 / rh);
    for (size_t row = 0; row < rows->nrows; row++) {
        heat_row(b, rows, row, busy, nwin, bin, ncols, ML, cw, MT + rh * (double)row, rh);
        if (row % every == 0)
            sc__buf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%lld</text>", ML - 5,
                           MT + rh * ((double)row + 0.5) + 3.5, (long long)rows->ids[row_first(rows, row)]);
    }
    double step = nice_step((double)maxw);
    for (double t = 0; t <= (double)maxw; t += step) {
        double x = ML + t / (double)(ncols * bin) * pw;
        sc__buf_printf(b, "<line class=\"base\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>", x, x, MT + h, MT + h + 4);
        sc__buf_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x, MT + h + 15);
        tick_text(b, t, step);
        sc__buf_puts(b, "</text>");
    }
    sc__buf_printf(b, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">ms into the simulated step%s</text>",
                   ML + pw / 2, MT + h + 36, bin > 1 ? " (columns of several 1 ms windows, averaged)" : "");
    sc__buf_printf(b, "<text class=\"axis\" transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">rank</text>",
                   MT + h / 2);
    sc__buf_puts(b, "</svg>");
}

/* ------------------------------------------------------------ horizontal bars */

void sc__html_hbars(sc__buf *b, const sc_cp_item *items, size_t n, int64_t total, const char *colour, int width) {
    int label_w = width / 3, rh = 20, height = (int)n * rh + 8, x0 = label_w + 8, pw = width - x0 - 130;
    int64_t top = 1;
    for (size_t i = 0; i < n; i++)
        if (items[i].ns > top) top = items[i].ns;
    size_t cut = (size_t)label_w / 7;
    sc__buf_printf(b, "<svg class=\"chart bars\" viewBox=\"0 0 %d %d\" role=\"img\">", width, height ? height : 8);
    for (size_t i = 0; i < n; i++) {
        const sc_cp_item *it = &items[i];
        double y = 4 + (double)i * rh, w = (double)it->ns / (double)top * pw;
        double share = total > 0 ? 100.0 * (double)it->ns / (double)total : 0;
        sc__buf_printf(b, "<g><title>");
        sc__html_text(b, it->name);
        sc__buf_printf(b, ": %.3f ms, %.1f%% of the path, %llu</title>", (double)it->ns / 1e6, share,
                       (unsigned long long)it->count);
        sc__buf_printf(b, "<text class=\"label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", label_w, y + 14);
        sc__html_text_cut(b, it->name, cut);
        sc__buf_printf(b, "</text><rect x=\"%d\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", x0, y + 3,
                       w > 0.5 ? w : 0.5, rh - 6, colour ? colour : sc__html_colour(it->name));
        sc__buf_printf(b, "<text class=\"value\" x=\"%.1f\" y=\"%.1f\">%.3f ms &#183; %.1f%%</text></g>", x0 + w + 5,
                       y + 14, (double)it->ns / 1e6, share);
    }
    sc__buf_puts(b, "</svg>");
}

void sc__html_legend(sc__buf *b, const char *const *names, const char *const *colours, size_t n) {
    sc__buf_puts(b, "<div class=\"legend\">");
    for (size_t i = 0; i < n; i++) {
        sc__buf_printf(b, "<span><i style=\"background:%s\"></i>", colours[i]);
        sc__html_text(b, names[i]);
        sc__buf_puts(b, "</span>");
    }
    sc__buf_puts(b, "</div>");
}

/* ------------------------------------------------------------ differences */

void sc__html_delta_bars(sc__buf *b, const sc_diff_row *rows, size_t n, int width) {
    int label_w = width / 3, rh = 20, height = (int)n * rh + 8, x0 = label_w + 8, pw = width - x0 - 8;
    double top = 1e-9, mid = x0 + pw / 2.0, half = pw / 2.0 - 70; /* room for the value beside a bar */
    for (size_t i = 0; i < n; i++) top = fmax(top, fabs(rows[i].delta_us));
    size_t cut = (size_t)label_w / 7;
    sc__buf_printf(b, "<svg class=\"chart bars\" viewBox=\"0 0 %d %d\" role=\"img\">", width, height ? height : 8);
    sc__buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%d\" stroke=\"#9aa3b2\"/>", mid, mid, height);
    for (size_t i = 0; i < n; i++) {
        const sc_diff_row *r = &rows[i];
        double y = 4 + (double)i * rh, w = fmax(fabs(r->delta_us) / top * half, 0.5);
        bool slower = r->delta_us > 0;
        sc__buf_puts(b, "<g><title>");
        sc__html_text(b, r->name);
        sc__buf_printf(b, ": A %.3f ms, B %.3f ms, B - A %+.3f ms", r->a_us / 1e3, r->b_us / 1e3, r->delta_us / 1e3);
        if (r->a_us > 0) sc__buf_printf(b, " (%+.1f%%)", r->delta_pct);
        sc__buf_printf(b, "; runs %.2f and %.2f (%s)</title>", r->a_count, r->b_count, r->change);
        sc__buf_printf(b, "<text class=\"label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", label_w, y + 14);
        sc__html_text_cut(b, r->name, cut);
        sc__buf_printf(b, "</text><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
                       slower ? mid : mid - w, y + 3, w, rh - 6, slower ? "#e15759" : "#59a14f");
        sc__buf_printf(b, "<text class=\"value\" x=\"%.1f\" y=\"%.1f\"%s>%+.3f ms</text></g>",
                       slower ? mid + w + 4 : mid - w - 4, y + 14, slower ? "" : " text-anchor=\"end\"",
                       r->delta_us / 1e3);
    }
    sc__buf_puts(b, "</svg>");
}
