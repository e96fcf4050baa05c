/*
 * test_html.c - `stepcast report`: the HTML page of a replay (and of a
 * prediction beside it) and the tables behind it (src/pipeline/tops.c).
 *
 *   - the page of the 8-rank Megatron set holds every chart, needs nothing
 *     from the network, escapes names, folds repeated warnings, and is the
 *     same bytes twice; with a prediction, every chart has a traced and a
 *     new side; past the row limit, ranks are grouped and the page says so;
 *   - the collectives' table agrees with `stepcast comm` on the same traces
 *     (kind, ranks, size, count, median transfer), and --scale comm=2
 *     doubles its transfers, so its figures come from the simulation;
 *   - the CLI writes the page, predicts with an edit, refuses what it
 *     should;
 *   - Debian's chromium renders the page headless: every chart must carry
 *     the mark the page's script sets once it ran, no console message may
 *     appear, and the screenshot is kept as BUILD/report-megatron.png. The
 *     same check is run on a broken page, which it must reject;
 *   - `stepcast diff --html`'s page of HTA's control/test pair: every
 *     section's bars and table, the operators led by the one that grew
 *     most, --top, the CLI, and the same render in chromium
 *     (BUILD/diff-hta.png).
 *
 * The CLI is BUILD/stepcast and the browser `chromium` on the PATH (or
 * $STEPCAST_CHROMIUM); a missing browser fails the test (scripts/install-deps.sh
 * installs it).
 */
#include "testutil.h"

#include "report/html.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char build_dir[4096];
static sc_traceset *set;
static sc_replay *replay, *predicted;

static const char *const charts[] = {"step",        "breakdown",   "sm-busy", "cp-class",    "cp-operator",
                                     "cp-edge",     "kernels",     "operators", "collectives", "warnings"};
#define NCHARTS (sizeof charts / sizeof *charts)

static char *page(const sc_replay *r, const sc_html_options *o) {
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    sc_error err;
    if (sc_replay_write_html(r, o, f, &err) != SC_OK) fail_msg("report: %s", err.message);
    fclose(f);
    return text;
}

static size_t occurrences(const char *s, const char *what) {
    size_t n = 0, len = strlen(what);
    for (const char *p = strstr(s, what); p; p = strstr(p + len, what)) n++;
    return n;
}

static int setup(void **state) {
    (void)state;
    const char *p = sc_test_trace("megatron-tp8-a100");
    sc_error err;
    if (sc_traceset_load(&p, 1, NULL, &set, &err) != SC_OK) {
        fprintf(stderr, "test_html: %s\n", err.message);
        return -1;
    }
    sc_predict_options o = SC_PREDICT_OPTIONS_INIT;
    o.gpu = "h100";
    if (sc_replay_run(set, &o.replay, &replay, &err) != SC_OK || sc_predict_run(set, &o, &predicted, &err) != SC_OK) {
        fprintf(stderr, "test_html: %s\n", err.message);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    sc_replay_free(replay);
    sc_replay_free(predicted);
    sc_traceset_free(set);
    return 0;
}

/* ------------------------------------------------------------ the page */

static void test_every_chart_self_contained(void **state) {
    (void)state;
    sc_html_options o = {.set = set};
    char *html = page(replay, &o);
    assert_true(strncmp(html, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(html, "</html>\n"));
    for (size_t i = 0; i < NCHARTS; i++) {
        char want[96];
        snprintf(want, sizeof want, "data-chart=\"%s\"", charts[i]);
        if (occurrences(html, want) != 1) fail_msg("%s: %zu times, want 1", want, occurrences(html, want));
    }
    /* nothing fetched: no external script, style sheet, font or image */
    static const char *const outside[] = {"src=", "<link", "@import", "url(", "href=\"http", "@font-face"};
    for (size_t i = 0; i < sizeof outside / sizeof *outside; i++)
        if (strstr(html, outside[i])) fail_msg("the page refers outside itself: %s", outside[i]);
    /* the 8 ranks are drawn one by one, the step's figures are the replay's */
    assert_non_null(strstr(html, "Every rank is drawn"));
    assert_null(strstr(html, "class=\"none\"")); /* every table has rows */
    sc_replay_step st = sc_replay_get_step(replay);
    char step[64];
    snprintf(step, sizeof step, "<b>%.3f ms</b>", (double)st.simulated_ns / 1e6);
    assert_non_null(strstr(html, step));
    free(html);
}

static void test_same_bytes_twice(void **state) {
    (void)state;
    sc_html_options o = {.set = set, .predicted = predicted};
    char *a = page(replay, &o), *b = page(replay, &o);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

/* Kernel names hold '<', '>' and '&': they are text, never markup. */
static void test_names_escaped(void **state) {
    (void)state;
    char *html = page(replay, NULL);
    assert_null(strstr(html, "elementwise_kernel<"));
    assert_non_null(strstr(html, "elementwise_kernel&lt;"));
    free(html);
}

/* The set's eight "skipped (PyTorch Execution Trace...)" warnings are one
 * line with a count of 8. */
static void test_warnings_folded(void **state) {
    (void)state;
    sc_html_options o = {.set = set};
    char *html = page(replay, &o);
    assert_int_equal(sc_traceset_warning_count(set), 8);
    assert_int_equal(occurrences(html, "skipped (PyTorch Execution Trace"), 1);
    assert_non_null(strstr(html, "<span class=\"count\">8</span>"));
    free(html);
}

static void test_predict_side_by_side(void **state) {
    (void)state;
    sc_html_options o = {.set = set, .predicted = predicted};
    char *html = page(replay, &o);
    assert_non_null(strstr(html, "stepcast predict report"));
    for (size_t i = 1; i + 1 < NCHARTS; i++) { /* all but the step and the warnings have two sides */
        char want[128];
        snprintf(want, sizeof want, "data-chart=\"%s\" data-side=\"traced\"", charts[i]);
        assert_non_null(strstr(html, want));
        snprintf(want, sizeof want, "data-chart=\"%s\" data-side=\"new\"", charts[i]);
        assert_non_null(strstr(html, want));
    }
    assert_non_null(strstr(html, "predicted (new configuration)"));
    assert_non_null(strstr(html, "H100"));
    free(html);
    /* a replay is not a prediction */
    sc_html_options bad = {.predicted = replay};
    sc_error err;
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(sc_replay_write_html(replay, &bad, f, &err), SC_E_USAGE);
    fclose(f);
}

static void test_rank_rows(void **state) {
    (void)state;
    int64_t ids[1024];
    for (int i = 0; i < 1024; i++) ids[i] = i;
    sc__hrows r = sc__html_rows(1024, 64, ids);
    assert_int_equal(r.per, 16);
    assert_int_equal(r.nrows, 64);
    r = sc__html_rows(1000, 64, ids);
    assert_int_equal(r.per, 16);
    assert_int_equal(r.nrows, 63);
    char label[64];
    sc__html_row_label(&r, 62, label, sizeof label);
    assert_string_equal(label, "ranks 992-999");
    r = sc__html_rows(8, 0, ids);
    assert_int_equal(r.per, 1);
    assert_int_equal(r.nrows, 8);
    /* grouped on the page: the note says how, the bars have whiskers */
    sc_html_options o = {.max_rank_rows = 3};
    char *html = page(replay, &o);
    assert_non_null(strstr(html, "8 ranks are drawn as 3 columns of 3 consecutive ranks"));
    assert_non_null(strstr(html, "class=\"whisker\""));
    assert_non_null(strstr(html, "ranks 6-7"));
    free(html);
}

/* ------------------------------------------------------------ the tables */

static void test_top_kernels_and_operators(void **state) {
    (void)state;
    const sc_time_item *k, *op;
    size_t nk = sc_replay_top_kernels(replay, &k), nop = sc_replay_top_operators(replay, &op);
    assert_true(nk > 10 && nk <= 50);
    assert_true(nop > 10 && nop <= 50);
    for (size_t i = 0; i < nk; i++) {
        assert_true(k[i].ns > 0 && k[i].count > 0 && k[i].max_ns * (int64_t)k[i].count >= k[i].ns);
        assert_true(strstr("gemm attention other_kernel memcpy memset", k[i].cls) != NULL && *k[i].cls);
        if (i) assert_true(k[i - 1].ns >= k[i].ns);
        assert_null(strstr(k[i].name, "nccl")); /* communication is the collectives' */
    }
    for (size_t i = 1; i < nop; i++) assert_true(op[i - 1].ns + op[i - 1].cpu_ns >= op[i].ns + op[i].cpu_ns);
    /* aten::mm launches the GEMMs: the operator with the most GPU time */
    int64_t best = 0;
    const char *name = "";
    for (size_t i = 0; i < nop; i++)
        if (op[i].ns > best) best = op[i].ns, name = op[i].name;
    assert_string_equal(name, "aten::mm");
}

/* The same collectives as `stepcast comm` finds in the traces: rows, sizes,
 * counts and median transfers agree. */
static void test_collectives_agree_with_comm(void **state) {
    (void)state;
    sc_comm *c;
    sc_error err;
    sc_comm_options co = SC_COMM_OPTIONS_INIT;
    if (sc_comm_run(set, &co, &c, &err) != SC_OK) fail_msg("comm: %s", err.message);
    size_t n = sc_replay_collective_count(replay);
    assert_true(n >= 1);
    assert_int_equal(n, sc_comm_row_count(c));
    for (size_t i = 0; i < n; i++) {
        sc_replay_collective rc;
        sc_comm_row row;
        assert_int_equal(sc_replay_collective_at(replay, i, &rc, &err), SC_OK);
        assert_int_equal(sc_comm_row_at(c, i, &row, &err), SC_OK);
        assert_string_equal(rc.op, row.op);
        assert_int_equal(rc.ranks, row.ranks);
        assert_int_equal(rc.bytes, row.bytes);
        assert_int_equal(rc.count, row.count);
        if (fabs((double)rc.transfer_ns / 1e3 - row.measured_us) > 0.001)
            fail_msg("row %zu: transfer %.3f us, comm %.3f us", i, (double)rc.transfer_ns / 1e3, row.measured_us);
        /* an all-reduce of 64 MiB over A100 NVLink: a bus bandwidth of 50 - 300 GB/s */
        if (rc.bytes >= (1 << 26)) assert_true(rc.busbw_gbps > 50 && rc.busbw_gbps < 300);
    }
    sc_replay_collective rc;
    assert_int_equal(sc_replay_collective_at(replay, n, &rc, &err), SC_E_USAGE);
    sc_comm_free(c);
}

/* --scale comm=2 doubles every transfer: the table reads the simulation. */
static void test_collectives_follow_scale(void **state) {
    (void)state;
    const char *scales[] = {"comm=2"};
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.scales = scales;
    o.nscales = 1;
    o.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r;
    sc_error err;
    if (sc_replay_run(set, &o, &r, &err) != SC_OK) fail_msg("%s", err.message);
    size_t n = sc_replay_collective_count(r);
    assert_int_equal(n, sc_replay_collective_count(replay));
    for (size_t i = 0; i < n; i++) {
        sc_replay_collective a, b;
        assert_int_equal(sc_replay_collective_at(replay, i, &a, &err), SC_OK);
        assert_int_equal(sc_replay_collective_at(r, i, &b, &err), SC_OK);
        assert_true(llabs(b.transfer_ns - 2 * a.transfer_ns) <= 1);
        if (a.busbw_gbps > 0) assert_true(fabs(b.busbw_gbps * 2 - a.busbw_gbps) < 0.01 * a.busbw_gbps);
    }
    sc_replay_free(r);
}

/* ------------------------------------------------------------ the CLI */

static int run_cli(const char *args) {
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "%s/stepcast %s >/dev/null 2>&1", build_dir, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The file out that `stepcast ARGS` wrote, exiting 0 (free it). */
static char *written_by(const char *args, const char *out) {
    assert_int_equal(run_cli(args), 0);
    size_t n;
    char *text = (char *)sc_test_read_file(out, &n);
    assert_non_null(text);
    return text;
}

static void test_cli(void **state) {
    (void)state;
    char out[512], args[8192], traces[4096];
    snprintf(traces, sizeof traces, "%s", sc_test_trace("megatron-tp8-a100"));
    snprintf(out, sizeof out, "%s/stepcast-report-%ld.html", sc_test_tmpdir(), (long)getpid());
    unlink(out);
    snprintf(args, sizeof args, "report -o %s --no-sensitivity %s", out, traces);
    char *html = written_by(args, out);
    assert_non_null(strstr(html, "stepcast replay report"));
    assert_null(strstr(html, "data-side=\"new\""));
    free(html);
    assert_int_equal(run_cli(args), 2); /* exists, no --force */
    snprintf(args, sizeof args, "report --output=%s --force --dp 16 --no-sensitivity %s", out, traces);
    html = written_by(args, out);
    assert_non_null(strstr(html, "data-chart=\"breakdown\" data-side=\"new\""));
    assert_non_null(strstr(html, "16 ranks"));
    free(html);
    unlink(out);
    snprintf(args, sizeof args, "report %s", traces); /* no -o */
    assert_int_equal(run_cli(args), 2);
    snprintf(args, sizeof args, "report -o %s --json %s", out, traces);
    assert_int_equal(run_cli(args), 2);
    snprintf(args, sizeof args, "report -o %s --dp 0 %s", out, traces);
    assert_int_equal(run_cli(args), 2);
    assert_int_equal(access(out, F_OK), -1); /* nothing written by a refused command */
}

/* ------------------------------------------------------------ in a browser */

/* The browser: $STEPCAST_CHROMIUM, else chromium on the PATH. */
static bool find_chromium(char *path, size_t size) {
    const char *env = getenv("STEPCAST_CHROMIUM");
    if (env && *env) {
        snprintf(path, size, "%s", env);
        return access(path, X_OK) == 0;
    }
    const char *dirs = getenv("PATH");
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", dirs ? dirs : "/usr/bin:/bin");
    for (char *d = strtok(copy, ":"); d; d = strtok(NULL, ":")) {
        snprintf(path, size, "%s/chromium", d);
        if (access(path, X_OK) == 0) return true;
    }
    return false;
}

/* Renders html_path headless into png_path and checks it: no console
 * message, the body's and every expected chart's ready mark. False with
 * why on the first failure. */
static bool render_ok(const char *html_path, const char *png_path, const char *const *want, size_t nwant, char *why,
                      size_t size) {
    char browser[4096], abs[PATH_MAX], cmd[16384], dom[512], err[512], profile[512];
    if (!find_chromium(browser, sizeof browser)) {
        snprintf(why, size, "no chromium on the PATH: install Debian's chromium (scripts/install-deps.sh)");
        return false;
    }
    if (!realpath(html_path, abs)) {
        snprintf(why, size, "%s: missing", html_path);
        return false;
    }
    snprintf(dom, sizeof dom, "%s/stepcast-dom-%ld.html", sc_test_tmpdir(), (long)getpid());
    snprintf(err, sizeof err, "%s/stepcast-chromium-%ld.log", sc_test_tmpdir(), (long)getpid());
    snprintf(profile, sizeof profile, "%s/stepcast-chromium-%ld", sc_test_tmpdir(), (long)getpid());
    unlink(png_path);
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' --headless --disable-gpu --no-sandbox --hide-scrollbars --user-data-dir='%s' "
             "--enable-logging=stderr --v=0 --window-size=1400,2400 --screenshot='%s' --dump-dom 'file://%s' "
             ">'%s' 2>'%s'; rm -rf '%s'",
             browser, profile, png_path, abs, dom, err, profile);
    int st = system(cmd);
    size_t n;
    char *log = (char *)sc_test_read_file(err, &n), *page_dom = (char *)sc_test_read_file(dom, &n);
    bool ok = false;
    struct stat png;
    const char *console = log ? strstr(log, ":CONSOLE") : NULL;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !log || !page_dom) {
        snprintf(why, size, "chromium failed (status %d): %.300s", st, log ? log : "");
    } else if (console) {
        const char *eol = strchr(console, '\n');
        snprintf(why, size, "console message%.*s", (int)(eol ? eol - console : 200), console + 8);
    } else if (stat(png_path, &png) != 0 || png.st_size < 10000) {
        snprintf(why, size, "no screenshot at %s", png_path);
    } else if (!strstr(page_dom, "<body data-ready=\"done\"")) {
        snprintf(why, size, "the page's script did not run to its end");
    } else {
        ok = true;
        for (size_t i = 0; ok && i < nwant; i++) {
            char tag[128];
            snprintf(tag, sizeof tag, "data-chart=\"%s\"", want[i]);
            const char *at = strstr(page_dom, tag), *end = at ? strchr(at, '>') : NULL;
            const char *ready = at ? strstr(at, "data-ready=\"ok\"") : NULL;
            if (!at || !end || !ready || ready > end) {
                snprintf(why, size, "chart %s %s", want[i], at ? "drawn empty" : "missing");
                ok = false;
            }
        }
    }
    free(log);
    free(page_dom);
    unlink(dom);
    unlink(err);
    return ok;
}

static void test_megatron_in_chromium(void **state) {
    (void)state;
    char html_path[4600], png_path[4600], why[600];
    snprintf(html_path, sizeof html_path, "%s/report-megatron.html", build_dir);
    snprintf(png_path, sizeof png_path, "%s/report-megatron.png", build_dir);
    sc_html_options o = {.subtitle = "the 8-rank Megatron set of shared/traces", .set = set};
    char *html = page(replay, &o);
    FILE *f = fopen(html_path, "w");
    assert_non_null(f);
    fputs(html, f);
    fclose(f);
    free(html);
    if (!render_ok(html_path, png_path, charts, NCHARTS, why, sizeof why)) fail_msg("%s: %s", html_path, why);
}

/* The check fails a page whose script throws and whose chart is missing. */
static void test_browser_check_can_fail(void **state) {
    (void)state;
    char html_path[4600], png_path[4600], why[600] = "";
    snprintf(html_path, sizeof html_path, "%s/report-broken.html", build_dir);
    snprintf(png_path, sizeof png_path, "%s/report-broken.png", build_dir);
    FILE *f = fopen(html_path, "w");
    assert_non_null(f);
    fputs("<!DOCTYPE html><html><body><div data-chart=\"step\"><svg><rect width=\"9\" height=\"9\"/></svg></div>"
          "<script>noSuchFunction();document.body.setAttribute('data-ready','done');</script></body></html>\n",
          f);
    fclose(f);
    static const char *const want[] = {"step", "kernels"};
    assert_false(render_ok(html_path, png_path, want, 2, why, sizeof why));
    if (!strstr(why, "console") && !strstr(why, "screenshot")) fail_msg("rejected for another reason: %s", why);
    unlink(html_path);
    unlink(png_path);
}

/* ------------------------------------------------------------ the diff page */

static const char *const diff_charts[] = {"sides",    "step-delta",  "step",     "kernel_class-delta", "kernel_class",
                                          "collective-delta", "collective", "operator-delta", "operator",
                                          "kernel-delta", "kernel"};
#define NDIFF_CHARTS (sizeof diff_charts / sizeof *diff_charts)

/* The page of `stepcast diff` on HTA's control/test pair. */
static char pair[2][4096]; /* control, test (sc_test_trace's buffer is reused) */

static void diff_pair(void) {
    snprintf(pair[0], sizeof pair[0], "%s", sc_test_trace("hta-testdata/trace_diff/control"));
    snprintf(pair[1], sizeof pair[1], "%s", sc_test_trace("hta-testdata/trace_diff/test"));
}

static char *diff_page(size_t top) {
    diff_pair();
    const char *a = pair[0], *b = pair[1];
    sc_traceset *sa = NULL, *sb = NULL;
    sc_diff *d = NULL;
    sc_error err;
    if (sc_traceset_load(&a, 1, NULL, &sa, &err) != SC_OK || sc_traceset_load(&b, 1, NULL, &sb, &err) != SC_OK ||
        sc_diff_run(sa, sb, &d, &err) != SC_OK)
        fail_msg("diff: %s", err.message);
    sc_traceset_free(sa);
    sc_traceset_free(sb);
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    if (sc_diff_write_html(d, "control against test", top, f, &err) != SC_OK) fail_msg("diff page: %s", err.message);
    fclose(f);
    sc_diff_free(d);
    return text;
}

/* Every section's bars and table, nothing fetched, the same bytes twice,
 * and the operators led by the one whose time grew most. */
static void test_diff_page(void **state) {
    (void)state;
    char *html = diff_page(20), *again = diff_page(20);
    assert_string_equal(html, again);
    free(again);
    for (size_t i = 0; i < NDIFF_CHARTS; i++) {
        char tag[128];
        snprintf(tag, sizeof tag, "data-chart=\"%s\"", diff_charts[i]);
        if (occurrences(html, tag) != 1) fail_msg("chart %s: %zu times", diff_charts[i], occurrences(html, tag));
    }
    assert_null(strstr(html, "http://"));
    assert_null(strstr(html, "https://"));
    assert_null(strstr(html, " src="));
    const char *ops = strstr(html, "data-chart=\"operator\"");
    assert_non_null(ops);
    const char *first = strstr(ops, "<td class=\"name\" title=\"");
    assert_non_null(first);
    assert_int_equal(strncmp(first + 24, "## sparse_data_dist ##\"", 23), 0);
    /* 20 of 214 operators: the page says so, and its table holds 20 rows. */
    assert_non_null(strstr(ops, "The first 20 of"));
    const char *end = strstr(ops, "</table>");
    size_t rows = 0;
    for (const char *r = strstr(ops, "<tr><td class=\"name\""); r && r < end; r = strstr(r + 1, "<tr><td class=\"name\""))
        rows++;
    assert_int_equal(rows, 20);
    free(html);
    html = diff_page(0);
    assert_null(strstr(html, "The first "));
    free(html);
}

static void test_diff_cli(void **state) {
    (void)state;
    char out[512], args[9000];
    diff_pair();
    snprintf(out, sizeof out, "%s/stepcast-diff-%ld.html", sc_test_tmpdir(), (long)getpid());
    unlink(out);
    snprintf(args, sizeof args, "diff --top 5 --html %s %s %s", out, pair[0], pair[1]);
    char *html = written_by(args, out);
    assert_non_null(strstr(html, "<p>stepcast diff --top 5 --html "));
    assert_non_null(strstr(html, "The first 5 of"));
    free(html);
    assert_int_equal(run_cli(args), 2); /* exists, no --force */
    snprintf(args, sizeof args, "diff --force --html=%s %s %s", out, pair[0], pair[1]);
    assert_int_equal(run_cli(args), 0);
    unlink(out);
}

static void test_diff_in_chromium(void **state) {
    (void)state;
    char html_path[4600], png_path[4600], why[600];
    snprintf(html_path, sizeof html_path, "%s/diff-hta.html", build_dir);
    snprintf(png_path, sizeof png_path, "%s/diff-hta.png", build_dir);
    char *html = diff_page(20);
    FILE *f = fopen(html_path, "w");
    assert_non_null(f);
    fputs(html, f);
    fclose(f);
    free(html);
    if (!render_ok(html_path, png_path, diff_charts, NDIFF_CHARTS, why, sizeof why))
        fail_msg("%s: %s", html_path, why);
}

int main(int argc, char **argv) {
    (void)argc;
    /* BUILD/tests/test_html -> BUILD */
    snprintf(build_dir, sizeof build_dir, "%s", argv[0]);
    for (int k = 0; k < 2; k++) {
        char *slash = strrchr(build_dir, '/');
        if (slash) *slash = '\0';
        else snprintf(build_dir, sizeof build_dir, ".");
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_chart_self_contained),
        cmocka_unit_test(test_same_bytes_twice),
        cmocka_unit_test(test_names_escaped),
        cmocka_unit_test(test_warnings_folded),
        cmocka_unit_test(test_predict_side_by_side),
        cmocka_unit_test(test_rank_rows),
        cmocka_unit_test(test_top_kernels_and_operators),
        cmocka_unit_test(test_collectives_agree_with_comm),
        cmocka_unit_test(test_collectives_follow_scale),
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_megatron_in_chromium),
        cmocka_unit_test(test_browser_check_can_fail),
        cmocka_unit_test(test_diff_page),
        cmocka_unit_test(test_diff_cli),
        cmocka_unit_test(test_diff_in_chromium),
    };
    return cmocka_run_group_tests_name("stepcast report (HTML)", tests, setup, teardown);
}
