/*
 * html_report.c - `stepcast report -o FILE.html`: one self-contained HTML
 * page of a replay (or of a prediction beside the replay of the traced
 * configuration), for a person to look at rather than read.
 *
 * Sections, each from the pipeline's figures (the sc_replay accessors; the
 * top kernels, operators and collectives of src/pipeline/tops.c): the
 * step in numbers; measured vs simulated step per rank; the breakdown of
 * each rank's simulated step (exposed compute, overlap, exposed
 * communication, idle) as stacked columns; SM busy over time as a heat
 * strip; the critical path by class, operator and edge; top kernels and
 * operators; collectives by kind and size with their achieved bus
 * bandwidth; HTA's breakdown when asked for; warnings, repeated ones folded
 * into one line with a count; what the figures mean. With a prediction,
 * every section shows the traced and the new configuration side by side.
 *
 * The charts are inline SVG (html_charts.c); the style sheet and a short
 * script (sorting, the heat strip's tooltip, the marks the browser test
 * reads) are inlined from html_assets.c. Nothing is fetched, and nothing
 * varies between runs: no date, fixed number formats, fixed orders.
 */
#include "html.h"
#include "../pipeline/replay.h"
#include "../trace/trace.h"

#include <stdio.h>
#include <stdlib.h>

/* One configuration's figures, per rank index, in ms. */
typedef struct side {
    const sc_replay *r;
    const char *name; /* "replay", or "traced" / "new" side by side */
    size_t n;
    int64_t *ids;
    double *meas, *sim, *comp, *comm, *over, *idle;
    const double **busy;
    size_t *nwin;
    int64_t step_ns;
} side;

typedef struct page {
    sc__buf *b;
    const sc_html_options *o;
    side s[2];
    size_t nsides; /* 2: a prediction beside its traced replay */
    sc__hrows rows;
    int wide;      /* a chart's width: the page's, or half of it side by side */
} page;

static double ms(int64_t ns) { return (double)ns / 1e6; }

static void side_free(side *s) {
    free(s->ids);
    free(s->meas);
    free(s->sim);
    free(s->comp);
    free(s->comm);
    free(s->over);
    free(s->idle);
    free(s->busy);
    free(s->nwin);
}

static bool side_load(side *s, const sc_replay *r, const char *name) {
    *s = (side){.r = r, .name = name, .n = sc_replay_rank_count(r)};
    size_t n = s->n ? s->n : 1;
    s->ids = calloc(n, sizeof *s->ids);
    double **cols[] = {&s->meas, &s->sim, &s->comp, &s->comm, &s->over, &s->idle};
    bool ok = s->ids != NULL;
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) ok = (*cols[k] = calloc(n, sizeof(double))) && ok;
    s->busy = calloc(n, sizeof *s->busy);
    s->nwin = calloc(n, sizeof *s->nwin);
    if (!ok || !s->busy || !s->nwin) return false;
    for (size_t i = 0; i < s->n; i++) {
        sc_replay_rank rr;
        if (sc_replay_rank_at(r, i, &rr, NULL) != SC_OK) return false;
        s->ids[i] = rr.rank;
        s->meas[i] = ms(rr.measured_ns), s->sim[i] = ms(rr.simulated_ns);
        s->comp[i] = ms(rr.exposed_compute_ns), s->comm[i] = ms(rr.exposed_comm_ns);
        s->over[i] = ms(rr.overlapped_ns), s->idle[i] = ms(rr.idle_ns);
        s->busy[i] = rr.sm_busy, s->nwin[i] = rr.sm_windows;
    }
    s->step_ns = sc_replay_get_step(r).simulated_ns;
    return true;
}

/* ------------------------------------------------------------ layout */

/* Opens one side's chart box: data-chart names it for the browser test. */
static void open_chart(page *p, const char *chart, size_t k) {
    sc__buf_printf(p->b, "<div data-chart=\"%s\" data-side=\"%s\">", chart, p->s[k].name);
    if (p->nsides > 1)
        sc__buf_printf(p->b, "<h3>%s</h3>",
                       k ? "new configuration (predicted)" : "traced configuration (replayed)");
}

/* The sides' charts or tables in a row of columns: each(p, k) writes side k's. */
static void side_columns(page *p, void (*each)(page *p, size_t k)) {
    sc__buf_puts(p->b, "<div class=\"cols\">");
    for (size_t k = 0; k < p->nsides; k++) each(p, k);
    sc__buf_puts(p->b, "</div>");
}

static const char *pct_class(double e) { return e > 5 || e < -5 ? "bad" : "good"; }

/* "512 B", "1.5 KiB", "64.0 MiB", "1.25 GiB" (GiB at most). */
static void bytes_text(char *buf, size_t size, int64_t bytes) {
    if (bytes < 0) {
        snprintf(buf, size, "unknown");
        return;
    }
    sc__size s = sc__size_in_units((uint64_t)bytes, 3);
    if (s.power == 0) snprintf(buf, size, "%llu B", (unsigned long long)s.whole);
    else snprintf(buf, size, "%.*f %s", s.power == 3 ? 2 : 1, s.value, s.unit);
}

/* ------------------------------------------------------------ summary */

static void shape_card(sc__buf *b, const sc_job_shape *s, const char *label) {
    char v[320];
    snprintf(v, sizeof v, "%u ranks", s->ranks);
    sc__buf_puts(b, "<div class=\"card\"><b>");
    sc__html_text(b, v);
    sc__buf_printf(b, "</b><span>%s: dp %u, %u node%s of %u &#215; ", label, s->dp, s->nodes, s->nodes == 1 ? "" : "s",
                   s->gpus_per_node);
    sc__html_text(b, s->gpu);
    sc__buf_printf(b, ", NVLink %.0f GB/s, network %.0f Gb/s per GPU</span></div>", s->nvlink_gbps, s->net_gbps);
}

static void step_cards(page *p) {
    sc__buf *b = p->b;
    const sc_replay *r = p->s[0].r;
    sc_replay_step st = sc_replay_get_step(r);
    char v[160];
    if (st.measured_ns > 0) {
        snprintf(v, sizeof v, "%.3f ms", ms(st.measured_ns));
        sc__html_card(b, v, "measured step (slowest rank)");
    }
    snprintf(v, sizeof v, "%.3f ms", ms(st.simulated_ns));
    sc__html_card(b, v, p->nsides > 1 ? "simulated step, traced configuration" : "simulated step (slowest rank)");
    if (st.measured_ns > 0 && !st.no_error_because) {
        double e = 100.0 * (double)(st.simulated_ns - st.measured_ns) / (double)st.measured_ns;
        snprintf(v, sizeof v, "<span class=\"%s\">%+.2f%%</span>", pct_class(e), e);
        sc__html_card(b, v, "replay error: simulated vs measured");
    }
    if (p->nsides > 1) {
        int64_t nw = p->s[1].step_ns;
        snprintf(v, sizeof v, "%.3f ms", ms(nw));
        sc__html_card(b, v, "predicted step, new configuration");
        double d = st.simulated_ns > 0 ? 100.0 * (double)(nw - st.simulated_ns) / (double)st.simulated_ns : 0;
        snprintf(v, sizeof v, "%+.2f%%", d);
        sc__html_card(b, v, "new vs traced (simulated)");
    }
}

static void job_cards(page *p) {
    sc__buf *b = p->b;
    const sc_replay *r = p->s[0].r;
    char v[160];
    snprintf(v, sizeof v, "%zu", p->s[0].n);
    sc__html_card(b, v, "ranks simulated");
    snprintf(v, sizeof v, "%zu", sc_replay_task_count(r));
    sc__html_card(b, v, "tasks in the graph");
    sc_critical_path cp = sc_replay_get_critical_path(r);
    snprintf(v, sizeof v, "%.3f ms", ms(cp.length_ns));
    snprintf(v + 80, 80, "critical path, %llu tasks, ends on rank %lld", (unsigned long long)cp.tasks,
             (long long)cp.last_rank);
    sc__html_card(b, v, v + 80);
    sc_replay_sensitivity sens = sc_replay_get_sensitivity(r);
    if (sens.computed) {
        snprintf(v, sizeof v, "%s", sens.bound_by);
        snprintf(v + 80, 80, "bound by (2&#215; gpu %.2f, cpu %.2f, comm %.2f)", sens.gpu_x2, sens.cpu_x2,
                 sens.comm_x2);
        sc__html_card(b, v, v + 80);
    }
}

static void summary(page *p) {
    sc__html_section_open(p->b, "summary", "Step", NULL);
    sc__buf_puts(p->b, "<div class=\"cards\">");
    step_cards(p);
    job_cards(p);
    const sc_prediction *pd = p->nsides > 1 ? sc_replay_prediction(p->s[1].r) : NULL;
    if (pd) {
        shape_card(p->b, &pd->traced, "traced");
        shape_card(p->b, &pd->predicted, "new");
    }
    sc__buf_puts(p->b, "</div>");
    if (pd)
        sc__buf_printf(p->b,
                       "<p class=\"note\">Each simulated traced rank stands for %.4g predicted rank%s (%zu rank "
                       "shape%s traced); collectives re-timed by the %s model: %llu (%llu without a size keep "
                       "their traced time); GPU tasks re-timed: %llu.</p>",
                       pd->ranks_per_traced_rank, pd->ranks_per_traced_rank == 1 ? "" : "s", pd->shapes,
                       pd->shapes == 1 ? "" : "s", pd->comm_model, (unsigned long long)pd->collectives_retimed,
                       (unsigned long long)pd->collectives_unsized, (unsigned long long)pd->gpu_tasks_retimed);
    sc__html_section_close(p->b);
}

/* ------------------------------------------------------------ per-rank charts */

static void rows_note(page *p, char *buf, size_t size) {
    if (p->rows.per > 1)
        snprintf(buf, size,
                 "%zu ranks are drawn as %zu columns of %zu consecutive ranks (by rank): a bar is the group's "
                 "mean, its whisker runs from the group's minimum to its maximum; hover a bar for the ranks "
                 "that set them.",
                 p->rows.nranks, p->rows.nrows, p->rows.per);
    else
        snprintf(buf, size, "Every rank is drawn; hover a bar for its figures.");
}

/* The replay's error over the ranks whose step it can be compared with. */
static void error_note(page *p, char *buf, size_t size) {
    double sum = 0, max = 0;
    size_t n = 0;
    for (size_t i = 0; i < p->s[0].n; i++) {
        sc_replay_rank rr;
        if (sc_replay_rank_at(p->s[0].r, i, &rr, NULL) != SC_OK || rr.measured_ns <= 0 || rr.no_error_because) continue;
        double e = 100.0 * (double)(rr.simulated_ns - rr.measured_ns) / (double)rr.measured_ns;
        e = e < 0 ? -e : e;
        sum += e, n++;
        if (e > max) max = e;
    }
    if (n)
        snprintf(buf, size, " Replay error |simulated - measured| / measured: mean %.2f%%, max %.2f%% over %zu rank%s.",
                 sum / (double)n, max, n, n == 1 ? "" : "s");
    else
        snprintf(buf, size, " No rank has a measured step to compare with.");
}

static void step_section(page *p) {
    char note[600];
    rows_note(p, note, sizeof note);
    size_t len = strlen(note);
    error_note(p, note + len, sizeof note - len);
    sc__html_section_open(p->b, "step", "Step time per rank: measured vs simulated", note);
    side *s = &p->s[0];
    sc__hseries ser[3];
    size_t ns = 0;
    bool measured = false;
    for (size_t i = 0; i < s->n; i++) measured = measured || s->meas[i] > 0;
    if (measured) ser[ns++] = (sc__hseries){"measured", sc__html_colour("measured"), s->meas, NULL};
    ser[ns++] = (sc__hseries){p->nsides > 1 ? "simulated (traced configuration)" : "simulated",
                              sc__html_colour("simulated"), s->sim, measured ? s->meas : NULL};
    if (p->nsides > 1)
        ser[ns++] = (sc__hseries){"predicted (new configuration)", sc__html_colour("predicted"), p->s[1].sim, s->sim};
    const char *names[3], *colours[3];
    for (size_t k = 0; k < ns; k++) names[k] = ser[k].name, colours[k] = ser[k].colour;
    sc__buf_puts(p->b, "<div data-chart=\"step\" data-side=\"all\">");
    sc__html_legend(p->b, names, colours, ns);
    double top = sc__html_series_max(&p->rows, ser, ns, false);
    sc__html_rank_bars(p->b, &p->rows, ser, ns, false, top, 1000, "step (ms)");
    sc__buf_puts(p->b, "</div>");
    sc__html_section_close(p->b);
}

static void breakdown_section(page *p) {
    sc__html_section_open(p->b, "breakdown", "Where each rank's simulated step goes",
                 "The simulated step of each rank from the GPU's point of view: only compute running (exposed "
                 "compute), compute and communication at once (overlap), only communication (exposed "
                 "communication), no GPU task at all (idle: the host or a wait holds the GPU back).");
    static const char *const names[4] = {"exposed compute", "overlap", "exposed communication", "idle"};
    const char *colours[4];
    for (size_t k = 0; k < 4; k++) colours[k] = sc__html_colour(names[k]);
    sc__html_legend(p->b, names, colours, 4);
    sc__hseries ser[2][4];
    double top = 0;
    for (size_t k = 0; k < p->nsides; k++) {
        const side *s = &p->s[k];
        const double *v[4] = {s->comp, s->over, s->comm, s->idle};
        for (size_t c = 0; c < 4; c++) ser[k][c] = (sc__hseries){names[c], colours[c], v[c], NULL};
        double t = sc__html_series_max(&p->rows, ser[k], 4, true);
        if (t > top) top = t;
    }
    sc__buf_puts(p->b, "<div class=\"cols\">");
    for (size_t k = 0; k < p->nsides; k++) {
        open_chart(p, "breakdown", k);
        sc__html_rank_bars(p->b, &p->rows, ser[k], 4, true, top, p->wide, "simulated step (ms)");
        sc__buf_puts(p->b, "</div>");
    }
    sc__buf_puts(p->b, "</div>");
    sc__html_section_close(p->b);
}

static void heat_chart(page *p, size_t k) {
    open_chart(p, "sm-busy", k);
    sc__html_heat(p->b, &p->rows, p->s[k].busy, p->s[k].nwin, p->wide);
    sc__buf_puts(p->b, "</div>");
}

static void heat_section(page *p) {
    sc__html_section_open(p->b, "sm-busy", "SM busy over time",
                 "Per rank, the share of each 1 ms of its simulated step during which at least one of its GPU "
                 "streams runs a task: 0% (white) <span class=\"ramp\"></span> 100% (dark blue); grey: "
                 "the rank's step is over. Hover the strip for the figure under the pointer, a row's label for "
                 "its mean.");
    side_columns(p, heat_chart);
    sc__html_section_close(p->b);
}

static void cp_section(page *p) {
    sc__html_section_open(p->b, "critical-path", "Critical path",
                 "What the step waited for, walked back from the slowest rank's last task: each task's own time "
                 "by class and by operator, and the slack before it by the edge (or the simulator's own reason) "
                 "that bound its start. Hover a bar for its count.");
    static const struct {
        sc_cp_view view;
        const char *chart, *title, *colour;
    } views[3] = {{SC_CP_BY_CLASS, "cp-class", "by class", NULL},
                  {SC_CP_BY_OPERATOR, "cp-operator", "by operator (the 15 with the most time)", "#4e79a7"},
                  {SC_CP_BY_EDGE, "cp-edge", "by edge", "#9c755f"}};
    for (size_t v = 0; v < 3; v++) {
        sc__buf_printf(p->b, "<h3>%s</h3><div class=\"cols\">", views[v].title);
        for (size_t k = 0; k < p->nsides; k++) {
            const sc_cp_item *items;
            size_t n = sc_replay_cp_items(p->s[k].r, views[v].view, &items);
            sc_critical_path cp = sc_replay_get_critical_path(p->s[k].r);
            open_chart(p, views[v].chart, k);
            sc__html_hbars(p->b, items, n, cp.length_ns, views[v].colour, p->wide);
            sc__buf_puts(p->b, "</div>");
        }
        sc__buf_puts(p->b, "</div>");
    }
    sc__html_section_close(p->b);
}

/* ------------------------------------------------------------ tables */

/* A numeric cell: its sort value and its text. */
static void kernels_table(page *p, size_t k) {
    sc__buf *b = p->b;
    const side *s = &p->s[k];
    const sc_time_item *it;
    size_t n = sc_replay_top_kernels(s->r, &it);
    double nr = s->n ? (double)s->n : 1, step = ms(s->step_ns);
    static const char *const heads[] = {"kernel", "class", "#ms per rank", "#% of step", "#runs per rank",
                                        "#mean &#181;s", "#max &#181;s"};
    open_chart(p, "kernels", k);
    sc__html_table_head(b, heads, 7);
    for (size_t i = 0; i < n; i++) {
        double per = ms(it[i].ns) / nr;
        sc__buf_puts(b, "<tr>");
        sc__html_name_cell(b, it[i].name);
        sc__buf_printf(b, "<td><i class=\"dot\" style=\"background:%s\"></i>%s</td>", sc__html_colour(it[i].cls),
                       it[i].cls);
        sc__html_num_cell(b, per, "%.3f");
        sc__html_num_cell(b, step > 0 ? 100 * per / step : 0, "%.1f");
        sc__html_num_cell(b, (double)it[i].count / nr, "%.1f");
        sc__html_num_cell(b, it[i].count ? (double)it[i].ns / 1e3 / (double)it[i].count : 0, "%.1f");
        sc__html_num_cell(b, (double)it[i].max_ns / 1e3, "%.1f");
        sc__buf_puts(b, "</tr>");
    }
    sc__html_none_row(b, n, 7, "no GPU kernel in these traces");
    sc__buf_puts(b, "</tbody></table></div></div>");
}

static void operators_table(page *p, size_t k) {
    sc__buf *b = p->b;
    const side *s = &p->s[k];
    const sc_time_item *it;
    size_t n = sc_replay_top_operators(s->r, &it);
    double nr = s->n ? (double)s->n : 1, step = ms(s->step_ns);
    static const char *const heads[] = {"operator", "#GPU ms per rank", "#GPU % of step", "#host ms per rank",
                                        "#calls per rank"};
    open_chart(p, "operators", k);
    sc__html_table_head(b, heads, 5);
    for (size_t i = 0; i < n; i++) {
        double gpu = ms(it[i].ns) / nr;
        sc__buf_puts(b, "<tr>");
        sc__html_name_cell(b, it[i].name);
        sc__html_num_cell(b, gpu, "%.3f");
        sc__html_num_cell(b, step > 0 ? 100 * gpu / step : 0, "%.1f");
        sc__html_num_cell(b, ms(it[i].cpu_ns) / nr, "%.3f");
        sc__html_num_cell(b, (double)it[i].count / nr, "%.1f");
        sc__buf_puts(b, "</tr>");
    }
    sc__html_none_row(b, n, 5, "no operator in these traces (a Chakra file names none)");
    sc__buf_puts(b, "</tbody></table></div></div>");
}

static void tops_section(page *p) {
    sc__html_section_open(p->b, "kernels", "Top kernels",
                 "GPU kernels, memory copies and sets (communication is in the collectives' table) by their "
                 "simulated time, averaged over the ranks; the 50 with the most time. Click a heading to sort.");
    side_columns(p, kernels_table);
    sc__html_section_close(p->b);
    sc__html_section_open(p->b, "operators", "Top operators",
                 "Operators by the GPU time of the kernels they launched, and the host time of the tasks "
                 "directly under them (self time, with the untraced gaps before them and a sync's wait), "
                 "averaged over the ranks; the 50 with the most time. Click a heading to sort.");
    side_columns(p, operators_table);
    sc__html_section_close(p->b);
}

static void collectives_table(page *p, size_t k) {
    sc__buf *b = p->b;
    const sc_replay *r = p->s[k].r;
    size_t n = sc_replay_collective_count(r);
    double top = 1;
    for (size_t i = 0; i < n; i++) {
        sc_replay_collective c;
        if (sc_replay_collective_at(r, i, &c, NULL) == SC_OK && c.busbw_gbps > top) top = c.busbw_gbps;
    }
    static const char *const heads[] = {"kind", "#ranks", "#size (median)", "#count", "#transfer &#181;s (median)",
                                        "#bus bandwidth GB/s", "#wait &#181;s (mean)", "#transfers ms (sum)"};
    open_chart(p, "collectives", k);
    sc__html_table_head(b, heads, 8);
    for (size_t i = 0; i < n; i++) {
        sc_replay_collective c;
        if (sc_replay_collective_at(r, i, &c, NULL) != SC_OK) continue;
        char size[32];
        bytes_text(size, sizeof size, c.bytes);
        sc__buf_printf(b, "<tr><td>%s</td>", c.op);
        sc__html_num_cell(b, c.ranks, "%.0f");
        sc__buf_printf(b, "<td class=\"num\" data-v=\"%lld\">%s</td>", (long long)c.bytes, size);
        sc__html_num_cell(b, (double)c.count, "%.0f");
        sc__html_num_cell(b, (double)c.transfer_ns / 1e3, "%.1f");
        if (c.busbw_gbps >= 0)
            sc__buf_printf(b, "<td class=\"num\" data-v=\"%.6g\"><i class=\"bar\" style=\"width:%.0fpx\"></i>%.1f</td>",
                           c.busbw_gbps, 60 * c.busbw_gbps / top, c.busbw_gbps);
        else
            sc__buf_puts(b, "<td class=\"num\" data-v=\"-1\">-</td>");
        sc__html_num_cell(b, (double)c.wait_ns / 1e3, "%.1f");
        sc__html_num_cell(b, ms(c.total_ns), "%.3f");
        sc__buf_puts(b, "</tr>");
    }
    sc__html_none_row(b, n, 8, "no collective in these traces");
    sc__buf_puts(b, "</tbody></table></div></div>");
}

static void collectives_section(page *p) {
    sc__html_section_open(p->b, "collectives", "Collectives",
                 "By kind, communicator size and size bucket (powers of two). Sizes as nccl-tests reports them; "
                 "the transfer is what the simulator gave each collective once its last member arrived (the last "
                 "arrival's kernel as traced, or as re-timed); bus bandwidth is nccl-tests' busbw of that transfer "
                 "(median over the row); the wait is a member's time before the last arrival.");
    side_columns(p, collectives_table);
    sc__html_section_close(p->b);
}

static void hta_section(page *p) {
    const sc_replay *r = p->s[0].r;
    size_t n = sc_replay_hta_count(r);
    if (!n) return;
    sc__html_section_open(p->b, "hta", "HTA temporal breakdown of the measured traces",
                 "As HolisticTraceAnalysis computes it: the window is the rank's whole trace, from its first GPU "
                 "op to its last; compute is GPU ops other than NCCL, Memcpy/Memset and *Sync.");
    static const char *const heads[] = {"#rank", "#window ms", "#compute ms", "#communication ms", "#memory ms",
                                        "#other ms", "#idle ms", "#compute %"};
    sc__buf_puts(p->b, "<div data-chart=\"hta\" data-side=\"traced\">");
    sc__html_table_head(p->b, heads, 8);
    for (size_t i = 0; i < n; i++) {
        sc_hta_breakdown h;
        if (sc_replay_hta_at(r, i, &h, NULL) != SC_OK) continue;
        int64_t w = h.window_end_ns - h.window_start_ns;
        sc__buf_puts(p->b, "<tr>");
        sc__html_num_cell(p->b, (double)h.rank, "%.0f");
        sc__html_num_cell(p->b, ms(w), "%.3f");
        sc__html_num_cell(p->b, ms(h.compute_ns), "%.3f");
        sc__html_num_cell(p->b, ms(h.comm_ns), "%.3f");
        sc__html_num_cell(p->b, ms(h.memory_ns), "%.3f");
        sc__html_num_cell(p->b, ms(h.other_ns), "%.3f");
        sc__html_num_cell(p->b, ms(h.idle_ns), "%.3f");
        sc__html_num_cell(p->b, w > 0 ? 100.0 * (double)h.compute_ns / (double)w : 0, "%.1f");
        sc__buf_puts(p->b, "</tr>");
    }
    sc__buf_puts(p->b, "</tbody></table></div></div>");
    sc__html_section_close(p->b);
}

/* ------------------------------------------------------------ warnings */

/* Every warning the page shows, grouped by kind as the CLI groups them
 * (src/base/warnings.c): the load's, each side's graph's, and the replay's
 * notes (a sensitivity not run, a step error not defined), each note its
 * own kind. */
static void gather_warnings(page *p, sc__warnings *all) {
    const sc_traceset *set = p->o ? p->o->set : NULL;
    bool ok = !set || sc__warnings_copy(all, &set->warnings);
    for (size_t k = 0; ok && k < p->nsides; k++) {
        const sc_replay *r = p->s[k].r;
        ok = sc__warnings_copy(all, &r->g->warnings);
        sc_replay_sensitivity sens = sc_replay_get_sensitivity(r);
        if (ok && !sens.computed && sens.why_not && *sens.why_not)
            ok = sc__warnings_add_text(all, sens.why_not, sens.why_not); /* static text */
        for (size_t i = 0; ok && i < p->s[k].n; i++) {
            sc_replay_rank rr;
            if (sc_replay_rank_at(r, i, &rr, NULL) == SC_OK && rr.no_error_because && rr.measured_ns > 0)
                ok = sc__warnings_add_text(all, rr.no_error_because, rr.no_error_because);
        }
    }
    if (!ok) p->b->oom = true; /* sc__buf_write reports it */
}

static void dropped_edges(page *p) {
    for (uint8_t f = 0; f < SC_E_FAMILY_COUNT; f++) {
        uint64_t n = p->s[0].r->pruned[f];
        if (n)
            sc__buf_printf(p->b,
                           "<li><span class=\"count\">%llu</span>%s edge%s dropped: the trace contradicts them "
                           "(the destination started before the source ended)</li>",
                           (unsigned long long)n, sc__edge_family_name(f), n == 1 ? "" : "s");
    }
}

static void warnings_section(page *p) {
    sc__html_section_open(p->b, "warnings", "Warnings",
                 "What the load, the graph build and the replay noticed; warnings of one kind (those that differ "
                 "only in the file, rank or number they name) are folded into one line, with how many there were "
                 "and the first as example.");
    sc__warnings all = {0};
    gather_warnings(p, &all);
    sc__buf_puts(p->b, "<div data-chart=\"warnings\" data-side=\"all\"><ul class=\"warn\">");
    for (size_t g = 0; g < all.ngroups; g++) {
        sc_warning_group wg;
        if (sc__warnings_group_at(&all, g, &wg, NULL) != SC_OK) continue;
        sc__buf_printf(p->b, "<li><span class=\"count\">%zu</span>", wg.count);
        sc__html_text(p->b, wg.example);
        sc__buf_puts(p->b, wg.count > 1 ? " <i>(first of these)</i></li>" : "</li>");
    }
    dropped_edges(p);
    if (!all.ngroups) sc__buf_puts(p->b, "<li>none</li>");
    sc__buf_puts(p->b, "</ul></div>");
    sc__warnings_free(&all);
    sc__html_section_close(p->b);
}

/* ------------------------------------------------------------ the page */

static void conventions(page *p) {
    sc__html_section_open(p->b, "reading", "How to read these figures", NULL);
    sc__buf_puts(p->b,
                 "<dl class=\"conv\"><dt>measured step</dt><dd>from the start of the iteration's ProfilerStep#N "
                 "annotation to the end of the last task it caused, CPU or GPU</dd>"
                 "<dt>simulated step</dt><dd>the simulator places every task from its duration, its "
                 "dependencies and the modelled gaps, never from its measured start; the job's step is its "
                 "slowest rank's</dd><dt>collectives</dt><dd>");
    sc__buf_puts(p->b, sc_replay_coupled(p->s[0].r)
                           ? "coupled: every member ends at the last arrival plus the transfer time"
                           : "traced: each rank keeps its traced NCCL durations");
    sc__buf_puts(p->b, "</dd><dt>per rank</dt><dd>tables sum the job's ranks and divide by their count</dd></dl>");
    sc__html_section_close(p->b);
}

static void head(page *p) {
    const char *title = p->o && p->o->title ? p->o->title
                        : p->nsides > 1    ? "stepcast predict report"
                                           : "stepcast replay report";
    sc__html_page_open(p->b, title, p->o ? p->o->subtitle : NULL,
                       "<a href=\"#summary\">step</a><a href=\"#step\">per rank</a><a href=\"#breakdown\">"
                       "breakdown</a><a href=\"#sm-busy\">SM busy</a><a href=\"#critical-path\">critical path</a>"
                       "<a href=\"#kernels\">kernels</a><a href=\"#operators\">operators</a><a href=\"#collectives\">"
                       "collectives</a><a href=\"#warnings\">warnings</a>");
}

static void body(page *p) {
    summary(p);
    step_section(p);
    breakdown_section(p);
    heat_section(p);
    cp_section(p);
    tops_section(p);
    collectives_section(p);
    hta_section(p);
    warnings_section(p);
    conventions(p);
    sc__html_page_close(p->b);
}

sc_status sc_replay_write_html(const sc_replay *replay, const sc_html_options *opts, FILE *out, sc_error *err) {
    if (!replay || !out) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "report: no replay to write");
    const sc_replay *pred = opts ? opts->predicted : NULL;
    if (pred && !sc_replay_prediction(pred))
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "report: the predicted replay is not a prediction");
    page p = {.o = opts, .nsides = pred ? 2 : 1, .wide = pred ? 620 : 1000};
    bool ok = side_load(&p.s[0], replay, pred ? "traced" : "replay");
    if (pred) ok = side_load(&p.s[1], pred, "new") && ok;
    sc_status st = SC_OK;
    if (ok && pred && p.s[1].n != p.s[0].n) {
        st = sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                      "report: the prediction simulates %zu ranks, the replay %zu: not of the same traces", p.s[1].n,
                      p.s[0].n);
    } else if (!ok) {
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory writing the report");
    } else {
        sc__buf b;
        sc__buf_init(&b);
        p.b = &b;
        p.rows = sc__html_rows(p.s[0].n, opts ? opts->max_rank_rows : 0, p.s[0].ids);
        head(&p);
        body(&p);
        st = sc__buf_write(&b, out, err);
    }
    for (size_t k = 0; k < p.nsides; k++) side_free(&p.s[k]);
    return st;
}
