/*
 * html.h - the pieces of `stepcast report`'s HTML page (html_report.c):
 * inline SVG charts drawn from the replay's figures (html_charts.c), and
 * the page's style sheet and script (html_assets.c). Charts only format
 * numbers the pipeline computed; every one is drawn at a fixed size in
 * fixed number formats, so identical inputs give a byte-identical page.
 *
 * Ranks are drawn in rows: one rank a row up to a limit, beyond it rows of
 * `per` consecutive ranks (by rank index), whose bars show the row's mean
 * with whiskers from its minimum to its maximum.
 */
#ifndef SC_REPORT_HTML_H
#define SC_REPORT_HTML_H

#include "../base/base.h"

/* How ranks map to rows: row i holds rank indices [i * per, min(n, (i+1) * per)). */
typedef struct sc__hrows {
    size_t nranks, nrows, per;
    const int64_t *ids; /* job rank of each rank index */
} sc__hrows;
sc__hrows sc__html_rows(size_t nranks, size_t max_rows, const int64_t *ids);
/* "rank 3" or "ranks 16-31" */
void sc__html_row_label(const sc__hrows *rows, size_t row, char *buf, size_t size);

/* One series of a per-rank bar chart: a value in ms for every rank index. */
typedef struct sc__hseries {
    const char *name, *colour;
    const double *ms;
    const double *vs; /* NULL, or values the hover text compares ms with (in %) */
} sc__hseries;

/* Column chart over rank rows, grouped (one bar a series) or stacked. */
void sc__html_rank_bars(sc__buf *b, const sc__hrows *rows, const sc__hseries *s, size_t ns, bool stacked,
                        double ymax, int width, const char *ylabel);
/* The largest value a chart of these series must hold (stacked: the sums). */
double sc__html_series_max(const sc__hrows *rows, const sc__hseries *s, size_t ns, bool stacked);
/* SM busy (share of each 1 ms window) as a heat strip, one row per rank row. */
void sc__html_heat(sc__buf *b, const sc__hrows *rows, const double *const *busy, const size_t *nwin, int width);
/* Horizontal bars of named amounts (the critical path's views); colour NULL:
 * by class name (sc__html_colour). */
void sc__html_hbars(sc__buf *b, const sc_cp_item *items, size_t n, int64_t total, const char *colour, int width);
/* The differences B - A of diff rows as bars left (B faster, green) or
 * right (B slower, red) of a middle line, scaled to the largest |delta|. */
void sc__html_delta_bars(sc__buf *b, const sc_diff_row *rows, size_t n, int width);
/* A legend of coloured swatches. */
void sc__html_legend(sc__buf *b, const char *const *names, const char *const *colours, size_t n);

/* The colour of a class (critical path, kernels, breakdown), fixed per
 * name so a class looks the same in every chart. */
const char *sc__html_colour(const char *cls);
/* s with & < > " ' escaped. */
void sc__html_text(sc__buf *b, const char *s);
/* s escaped, cut to max characters with an ellipsis. */
void sc__html_text_cut(sc__buf *b, const char *s, size_t max);

/* The page's frame (html_page.c): <head> with the style sheet, the header
 * (title, subtitle or NULL, the version) and nav (links, markup); then,
 * after the sections, the script and the end of the document. */
void sc__html_page_open(sc__buf *b, const char *title, const char *subtitle, const char *nav);
void sc__html_page_close(sc__buf *b);
/* A <section> with its heading and a note (markup of the caller, or NULL). */
void sc__html_section_open(sc__buf *b, const char *id, const char *title, const char *note);
void sc__html_section_close(sc__buf *b);
/* A summary card: a figure (markup) over its label. */
void sc__html_card(sc__buf *b, const char *value_html, const char *label);
/* A sortable table's head (a leading '#' marks a numeric column), a numeric
 * cell (its value kept for sorting), a name cell (escaped, its full text on
 * hover), and the row of a table with nothing to show (when n is 0). */
void sc__html_table_head(sc__buf *b, const char *const *heads, size_t n);
void sc__html_num_cell(sc__buf *b, double v, const char *fmt);
void sc__html_name_cell(sc__buf *b, const char *name);
void sc__html_none_row(sc__buf *b, size_t n, int cols, const char *what);

extern const char sc__html_css[];
extern const char sc__html_js[];

#endif /* SC_REPORT_HTML_H */
