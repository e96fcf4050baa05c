/*
 * html_page.c - the frame and the tables that every stepcast HTML page
 * shares (html.h): the document's head with the inlined style sheet, the
 * header and the navigation, sections, summary cards, sortable tables
 * (numeric cells carry their value for the page's script to sort by), and
 * the closing script. `stepcast report` (html_report.c) and `stepcast diff
 * --html` (diff_html.c) are built from these and the charts of
 * html_charts.c.
 */
#include "html.h"

void sc__html_page_open(sc__buf *b, const char *title, const char *subtitle, const char *nav) {
    sc__buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>");
    sc__html_text(b, title);
    sc__buf_printf(b, "</title><style>\n%s</style></head>\n<body><div id=\"tip\"></div><header><h1>", sc__html_css);
    sc__html_text(b, title);
    sc__buf_puts(b, "</h1>");
    if (subtitle) {
        sc__buf_puts(b, "<p>");
        sc__html_text(b, subtitle);
        sc__buf_puts(b, "</p>");
    }
    sc__buf_printf(b, "<p>stepcast %s</p></header>\n<nav>%s</nav>\n<main>\n", sc_version(), nav);
}

void sc__html_page_close(sc__buf *b) {
    sc__buf_printf(b, "</main>\n<script>\n%s</script>\n</body></html>\n", sc__html_js);
}

void sc__html_section_open(sc__buf *b, const char *id, const char *title, const char *note) {
    sc__buf_printf(b, "<section id=\"%s\"><h2>", id);
    sc__html_text(b, title);
    sc__buf_puts(b, "</h2>");
    if (note) {
        sc__buf_puts(b, "<p class=\"note\">");
        sc__buf_puts(b, note); /* static text of the caller: may hold markup */
        sc__buf_puts(b, "</p>");
    }
}

void sc__html_section_close(sc__buf *b) { sc__buf_puts(b, "</section>\n"); }

void sc__html_card(sc__buf *b, const char *value_html, const char *label) {
    sc__buf_printf(b, "<div class=\"card\"><b>%s</b><span>%s</span></div>", value_html, label);
}

void sc__html_num_cell(sc__buf *b, double v, const char *fmt) {
    sc__buf_printf(b, "<td class=\"num\" data-v=\"%.6g\">", v);
    sc__buf_printf(b, fmt, v);
    sc__buf_puts(b, "</td>");
}

void sc__html_name_cell(sc__buf *b, const char *name) {
    sc__buf_puts(b, "<td class=\"name\" title=\"");
    sc__html_text(b, name);
    sc__buf_puts(b, "\">");
    sc__html_text(b, name);
    sc__buf_puts(b, "</td>");
}

void sc__html_table_head(sc__buf *b, const char *const *heads, size_t n) {
    sc__buf_puts(b, "<div class=\"scroll\"><table class=\"sortable\"><thead><tr>");
    for (size_t i = 0; i < n; i++) /* a leading '#' marks a numeric column */
        sc__buf_printf(b, "<th%s>%s</th>", heads[i][0] == '#' ? " class=\"num\"" : "",
                       heads[i] + (heads[i][0] == '#'));
    sc__buf_puts(b, "</thead><tbody>");
}

void sc__html_none_row(sc__buf *b, size_t n, int cols, const char *what) {
    if (!n) sc__buf_printf(b, "<tr><td colspan=\"%d\" class=\"none\">%s</td></tr>", cols, what);
}
