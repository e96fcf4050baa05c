/*
 * test_ux.c - what a person at a terminal sees besides the report:
 * warnings grouped by kind (one line with a count, every one with
 * --verbose), the progress line (the library's callback, and the CLI's
 * line on a pseudo-terminal, with --progress, and never with --quiet, off
 * a terminal or on stdout), and `stepcast diff`, checked on the shared
 * HTA trace_diff pair against sums worked out from its JSON by a separate
 * script (a Python json walk over the same events: the figures below).
 *
 * The binary is $STEPCAST_BIN, else BUILD/stepcast (testcli.h).
 */
#include "testutil.h"
#include "testcli.h"

#include "base/base.h"

#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sys/wait.h>

static size_t count_of(const char *s, const char *needle) {
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* ------------------------------------------------------------ warnings */

static void test_warnings_group_by_kind(void **state) {
    (void)state;
    sc__warnings w = {0};
    for (int i = 0; i < 5; i++) assert_true(sc__warnings_add(&w, "%s: skipped (%s)", i % 2 ? "b.json" : "a.json", "x"));
    assert_true(sc__warnings_add(&w, "rank %d has no steps", 3));
    assert_true(sc__warnings_add(&w, "%s: skipped (%s)", "c.json", "y"));
    assert_int_equal(w.count, 7);
    assert_int_equal(w.ngroups, 2);
    sc_warning_group g;
    assert_int_equal(sc__warnings_group_at(&w, 0, &g, NULL), SC_OK);
    assert_int_equal(g.count, 6);
    assert_int_equal(g.first, 0);
    assert_string_equal(g.example, "a.json: skipped (x)");
    assert_int_equal(sc__warnings_group_at(&w, 1, &g, NULL), SC_OK);
    assert_int_equal(g.count, 1);
    assert_string_equal(g.example, "rank 3 has no steps");
    sc_error err;
    assert_int_equal(sc__warnings_group_at(&w, 2, &g, &err), SC_E_USAGE);
    /* A copy keeps the kinds; dropping a kind's only warning drops the kind. */
    sc__warnings c = {0};
    assert_true(sc__warnings_copy(&c, &w));
    assert_int_equal(c.ngroups, 2);
    assert_int_equal(c.groups[0].count, 6);
    sc__warnings_truncate(&c, 5);
    assert_int_equal(c.ngroups, 1);
    assert_int_equal(c.groups[0].count, 5);
    sc__warnings_free(&c);
    sc__warnings_free(&w);
}

static void test_megatron_skips_are_one_line(void **state) {
    (void)state;
    const char *dir = sc_test_trace("megatron-tp8-a100");
    const char *paths[] = {dir};
    sc_traceset *set;
    sc_error err;
    assert_int_equal(sc_traceset_load(paths, 1, NULL, &set, &err), SC_OK);
    assert_int_equal(sc_traceset_warning_count(set), 8);
    assert_int_equal(sc_traceset_warning_group_count(set), 1);
    sc_warning_group g;
    assert_int_equal(sc_traceset_warning_group_at(set, 0, &g, &err), SC_OK);
    assert_int_equal(g.count, 8);
    assert_non_null(strstr(g.example, "megatron_et_0.json.gz: skipped (PyTorch Execution Trace"));
    sc_traceset_free(set);

    const char *quiet[] = {"info", dir, NULL};
    sc_test_outcome o = sc_test_cli(quiet);
    assert_int_equal(o.code, 0);
    assert_int_equal(count_of(o.err, "stepcast: warning:"), 1);
    assert_non_null(strstr(o.err, "(and 7 more like it; --verbose lists them)"));
    sc_test_outcome_free(&o);
    const char *verbose[] = {"replay", "--verbose", dir, NULL};
    o = sc_test_cli(verbose);
    assert_int_equal(o.code, 0);
    assert_int_equal(count_of(o.err, "stepcast: warning:"), 8);
    assert_int_equal(count_of(o.err, "more like it"), 0);
    for (int r = 0; r < 8; r++) {
        char want[64];
        snprintf(want, sizeof want, "megatron_et_%d.json.gz: skipped", r);
        assert_non_null(strstr(o.err, want));
    }
    sc_test_outcome_free(&o);
}

/* ------------------------------------------------------------ progress */

typedef struct seen {
    unsigned calls, read, build, simulate;
    uint64_t files_done, files_total, bytes, ranks_done, ranks_total, tasks_done, tasks_total;
    bool shrank; /* a count went down within a stage */
} seen;

static void record(void *user, const sc_progress *p) {
    seen *s = user;
    s->calls++;
    if (strcmp(p->stage, "read") == 0) {
        s->read++;
        s->shrank |= p->files_done < s->files_done || p->bytes_read < s->bytes;
        s->files_done = p->files_done;
        s->files_total = p->files_total;
        s->bytes = p->bytes_read;
    } else if (strcmp(p->stage, "build") == 0) {
        s->build++;
        s->ranks_done = p->ranks_done;
        s->ranks_total = p->ranks_total;
    } else if (strcmp(p->stage, "simulate") == 0) {
        s->simulate++;
        s->tasks_done = p->tasks_done;
        s->tasks_total = p->tasks_total;
    }
}

static void test_progress_callback(void **state) {
    (void)state;
    const char *paths[] = {sc_test_trace("megatron-tp8-a100")};
    seen s = {0};
    sc_load_options lo = {.progress = record, .progress_user = &s, .threads = 4};
    sc_traceset *set;
    sc_error err;
    assert_int_equal(sc_traceset_load(paths, 1, &lo, &set, &err), SC_OK);
    assert_true(s.read >= 2); /* the start and the end at least */
    assert_false(s.shrank);
    assert_int_equal(s.files_total, 8);
    assert_int_equal(s.files_done, 8);
    assert_int_equal(sc_traceset_count(set), 8);
    assert_true(s.bytes > 8u * 1000000u); /* 31 MB of JSON in all */
    sc_replay_options ro = SC_REPLAY_OPTIONS_INIT;
    ro.sensitivity = SC_SENSITIVITY_OFF;
    sc_replay *r;
    assert_int_equal(sc_replay_run(set, &ro, &r, &err), SC_OK);
    assert_true(s.build >= 2);
    assert_int_equal(s.ranks_total, 8);
    assert_int_equal(s.ranks_done, 8);
    assert_true(s.simulate >= 2);
    assert_true(s.tasks_total > 100000);
    assert_int_equal(s.tasks_done, s.tasks_total);
    sc_replay_free(r);
    sc_traceset_free(set);

    /* One file on its own reports too. */
    seen one = {0};
    sc_trace *t;
    sc_load_options lo1 = {.progress = record, .progress_user = &one};
    assert_int_equal(sc_trace_load(sc_test_trace("megatron-tp8-a100/megatron_kineto_0.json.gz"), &lo1, &t, &err), SC_OK);
    assert_int_equal(one.files_total, 1);
    assert_int_equal(one.files_done, 1);
    assert_true(one.bytes > 1000000);
    sc_trace_free(t);
}

static void test_progress_line_off_a_terminal(void **state) {
    (void)state;
    const char *dir = sc_test_trace("megatron-tp8-a100");
    const char *plain[] = {"replay", "--json", dir, NULL};
    sc_test_outcome o = sc_test_cli(plain);
    assert_int_equal(o.code, 0);
    assert_null(strstr(o.err, "progress"));
    assert_null(strstr(o.out, "progress"));
    sc_test_outcome_free(&o);
    /* Forced: plain lines on stderr, none on stdout. */
    const char *forced[] = {"replay", "--json", "--progress", dir, NULL};
    o = sc_test_cli(forced);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.err, "stepcast: progress: read 8/8 files"));
    assert_non_null(strstr(o.err, "built 8/8 ranks"));
    assert_non_null(strstr(o.err, "simulated "));
    assert_null(strstr(o.out, "progress"));
    assert_true(o.out[0] == '{');
    sc_test_outcome_free(&o);
    const char *quiet[] = {"replay", "--progress", "--quiet", dir, NULL};
    o = sc_test_cli(quiet);
    assert_int_equal(o.code, 0);
    assert_null(strstr(o.err, "progress"));
    sc_test_outcome_free(&o);
}

/* stderr on a pseudo-terminal: everything the CLI wrote to it. */
static sc_test_outcome run_on_pty(const char *const *args) {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    /* The child writes little (a few hundred bytes): the pty's buffer holds
     * it until the child is done and it is read. */
    sc_test_outcome o = sc_test_cli_with(args, slave);
    close(slave);
    size_t cap = 1 << 16, len = 0;
    o.err = malloc(cap + 1);
    assert_non_null(o.err);
    struct pollfd pf = {.fd = master, .events = POLLIN};
    while (len < cap && poll(&pf, 1, 200) > 0) {
        ssize_t got = read(master, o.err + len, cap - len);
        if (got <= 0) break;
        len += (size_t)got;
    }
    o.err[len] = '\0';
    close(master);
    return o;
}

static void test_progress_line_on_a_terminal(void **state) {
    (void)state;
    const char *dir = sc_test_trace("megatron-tp8-a100");
    /* A run under a second shows no line, even on a terminal. */
    const char *plain[] = {"info", "--quiet", dir, NULL};
    sc_test_outcome o = run_on_pty(plain);
    assert_int_equal(o.code, 0);
    assert_null(strstr(o.err, "read "));
    sc_test_outcome_free(&o);
    /* --progress draws from the start: one line redrawn in place (\r,
     * clear to the end of the line), cleared at the end. */
    const char *forced[] = {"replay", "--progress", dir, NULL};
    o = run_on_pty(forced);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.err, "\rstepcast: read 8/8 files"));
    assert_non_null(strstr(o.err, "\033[K"));
    assert_null(strstr(o.err, "stepcast: progress:"));
    /* Cleared before the warning and at the end. */
    assert_non_null(strstr(o.err, "\r\033[Kstepcast: warning:"));
    size_t n = strlen(o.err);
    assert_true(n >= 4 && strcmp(o.err + n - 4, "\r\033[K") == 0);
    assert_null(strstr(o.out, "stepcast: read"));
    sc_test_outcome_free(&o);
    const char *quiet[] = {"replay", "--progress", "-q", dir, NULL};
    o = run_on_pty(quiet);
    assert_int_equal(o.code, 0);
    assert_null(strstr(o.err, "read 8/8"));
    sc_test_outcome_free(&o);
}

/* ---------------------------------------------------------------- diff */

size_t sc__diff_normalise_kernel(const char *name, char *out, size_t cap);

static void expect_norm(const char *name, const char *want) {
    char out[512];
    sc__diff_normalise_kernel(name, out, sizeof out);
    if (strcmp(out, want) != 0) fail_msg("'%s' normalised to '%s', want '%s'", name, out, want);
}

static void test_kernel_names_normalised(void **state) {
    (void)state;
    expect_norm("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
                "at::native::vectorized_elementwise_kernel<CUDAFunctor_add>");
    expect_norm("void at::native::vectorized_elementwise_kernel<2, at::native::CUDAFunctor_add<float>, "
                "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
                "at::native::vectorized_elementwise_kernel<CUDAFunctor_add>");
    expect_norm("void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)"
                "::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int)",
                "at::native::vectorized_elementwise_kernel<sigmoid_kernel_cuda>");
    expect_norm("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>"
                "(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)",
                "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>");
    expect_norm("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float)",
                "at::native::vectorized_layer_norm_kernel");
    expect_norm("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, unsigned int, float, 4> >"
                "(at::native::ReduceOp<float, unsigned int, float, 4>)",
                "at::native::reduce_kernel");
    expect_norm("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "ncclKernel_AllReduce_RING_LL_Sum_float");
    expect_norm("triton_poi_fused_add_mul_17", "triton_poi_fused_add_mul");
    expect_norm("triton_red_fused_0", "triton_red_fused");
    expect_norm("ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn");
    expect_norm("Memcpy DtoD (Device -> Device)", "Memcpy DtoD");
    expect_norm("volta_sgemm_32x32_sliced1x4_tn", "volta_sgemm_32x32_sliced1x4_tn");
}

static sc_traceset *load_one(const char *rel) {
    const char *paths[] = {sc_test_trace(rel)};
    sc_traceset *set;
    sc_error err;
    if (sc_traceset_load(paths, 1, NULL, &set, &err) != SC_OK) fail_msg("%s: %s", rel, err.message);
    return set;
}

static const sc_diff_row *row_named(const sc_diff *d, sc_diff_section s, const char *name, sc_diff_row *out) {
    for (size_t i = 0; i < sc_diff_row_count(d); i++) {
        assert_int_equal(sc_diff_row_at(d, i, out, NULL), SC_OK);
        if (out->section == s && strcmp(out->name, name) == 0) return out;
    }
    fail_msg("no %s row '%s'", sc_diff_section_name(s), name);
    return NULL;
}

static void expect_row(const sc_diff *d, sc_diff_section s, const char *name, double a_ms, double b_ms,
                       double a_n, double b_n, const char *change) {
    sc_diff_row r;
    row_named(d, s, name, &r);
    if (fabs(r.a_us / 1e3 - a_ms) > 0.0015 || fabs(r.b_us / 1e3 - b_ms) > 0.0015)
        fail_msg("%s: %.3f -> %.3f ms, want %.3f -> %.3f", name, r.a_us / 1e3, r.b_us / 1e3, a_ms, b_ms);
    if (fabs(r.a_count - a_n) > 0.01 || fabs(r.b_count - b_n) > 0.01)
        fail_msg("%s: %.2f -> %.2f per step, want %.2f -> %.2f", name, r.a_count, r.b_count, a_n, b_n);
    assert_string_equal(r.change, change);
    assert_true(fabs(r.delta_us - (r.b_us - r.a_us)) < 1e-6);
}

/* The HTA pair: control is rank 3 of 8 on an A100, test rank 1 of 2 on a
 * V100, 6 ProfilerSteps each (#1009 to #1014). HTA's documentation says
 * only that it is a control and a test group; what changed is read off the
 * traces. The figures were summed from the JSON by a separate Python
 * script (cpu_op and user_annotation events starting inside a step, over 6
 * steps). */
static void test_diff_hta_pair(void **state) {
    (void)state;
    sc_traceset *a = load_one("hta-testdata/trace_diff/control");
    sc_traceset *b = load_one("hta-testdata/trace_diff/test");
    sc_diff *d;
    sc_error err;
    assert_int_equal(sc_diff_run(a, b, &d, &err), SC_OK);
    sc_diff_side sa = sc_diff_get_side(d, 0), sb = sc_diff_get_side(d, 1);
    assert_int_equal(sa.ranks, 1);
    assert_int_equal(sa.rank_steps, 6);
    assert_int_equal(sb.rank_steps, 6);
    assert_string_equal(sa.gpu, "NVIDIA A100-PG509-200");
    assert_string_equal(sb.gpu, "Tesla V100-SXM2-16GB");
    assert_true(fabs(sa.step_us - 77491) < 1 && fabs(sb.step_us - 124067) < 1);
    /* The operators whose time changed most, in order. */
    static const char *const top[] = {"## sparse_data_dist ##", "aten::item", "aten::_local_scalar_dense",
                                      "aten::copy_", "## all2all_tw_data:init ##"};
    size_t first_op = SIZE_MAX;
    sc_diff_row r;
    for (size_t i = 0; i < sc_diff_row_count(d); i++) {
        assert_int_equal(sc_diff_row_at(d, i, &r, NULL), SC_OK);
        if (r.section == SC_DIFF_OPERATOR) {
            first_op = i;
            break;
        }
    }
    assert_true(first_op != SIZE_MAX);
    for (size_t k = 0; k < 5; k++) {
        assert_int_equal(sc_diff_row_at(d, first_op + k, &r, NULL), SC_OK);
        assert_int_equal(r.section, SC_DIFF_OPERATOR);
        assert_string_equal(r.name, top[k]);
    }
    expect_row(d, SC_DIFF_OPERATOR, "## sparse_data_dist ##", 10.561, 40.397, 1, 1, "same");
    expect_row(d, SC_DIFF_OPERATOR, "aten::item", 6.163, 34.577, 5, 5, "same");
    expect_row(d, SC_DIFF_OPERATOR, "aten::copy_", 7.398, 32.004, 74, 872, "more");
    expect_row(d, SC_DIFF_OPERATOR, "CompiledFunction", 0, 13.065, 0, 1, "added");
    /* Kernels: the A100's cutlass GEMMs are gone, the V100's sgemms new,
     * and device-to-device copies many more. */
    expect_row(d, SC_DIFF_KERNEL, "Memcpy DtoD", 0.456, 15.489, 3, 774.17, "more");
    expect_row(d, SC_DIFF_KERNEL, "volta_sgemm_128x32_nt", 0, 4.639, 0, 36.33, "added");
    expect_row(d, SC_DIFF_KERNEL, "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>", 0.850, 0,
               49, 0, "removed");
    expect_row(d, SC_DIFF_KERNEL_CLASS, "gemm", 14.657, 36.267, 405, 483.17, "more");
    expect_row(d, SC_DIFF_COLLECTIVE, "AllReduce", 5.480, 15.347, 3, 3.5, "more");
    expect_row(d, SC_DIFF_STEP, "ProfilerStep#1011", 76.212, 166.403, 1, 1, "same");
    /* Sections in order; within one, |delta| never grows. */
    sc_diff_row prev = {0};
    for (size_t i = 0; i < sc_diff_row_count(d); i++) {
        assert_int_equal(sc_diff_row_at(d, i, &r, NULL), SC_OK);
        if (i) assert_true(r.section >= prev.section);
        if (i && r.section == prev.section && r.section != SC_DIFF_STEP)
            assert_true(fabs(r.delta_us) <= fabs(prev.delta_us));
        prev = r;
    }
    assert_int_equal(sc_diff_row_at(d, sc_diff_row_count(d), &r, &err), SC_E_USAGE);
    sc_diff_free(d);

    /* A set against itself: nothing changed. */
    assert_int_equal(sc_diff_run(a, a, &d, &err), SC_OK);
    for (size_t i = 0; i < sc_diff_row_count(d); i++) {
        assert_int_equal(sc_diff_row_at(d, i, &r, NULL), SC_OK);
        assert_true(r.delta_us == 0);
        assert_string_equal(r.change, "same");
    }
    sc_diff_free(d);
    sc_traceset_free(a);
    sc_traceset_free(b);
}

static void test_diff_cli(void **state) {
    (void)state;
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s", sc_test_trace("hta-testdata/trace_diff/control"));
    snprintf(b, sizeof b, "%s", sc_test_trace("hta-testdata/trace_diff/test/test.json.gz"));
    const char *text[] = {"diff", "--top", "3", a, b, NULL};
    sc_test_outcome o = sc_test_cli(text);
    if (o.code != 0) fail_msg("exit %d: %s", o.code, o.err);
    assert_non_null(strstr(o.out, "operators (CPU ops and annotations, inclusive time):"));
    assert_non_null(strstr(o.out, "      10.561      40.397     +29.836  +282.5%      1.00      1.00  same    ## sparse_data_dist ##\n"));
    assert_non_null(strstr(o.out, "... 211 more (--top 0 for all)"));
    sc_test_outcome_free(&o);
    const char *json[] = {"diff", "--json", a, b, NULL};
    o = sc_test_cli(json);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "\"a\": {\"label\": "));
    assert_non_null(strstr(o.out, "{\"section\": \"operator\", \"name\": \"## sparse_data_dist ##\", \"a_us\": 10560.833, \"b_us\": 40397.167"));
    assert_string_equal(o.err, "");
    sc_test_outcome_free(&o);
    /* The same bytes twice. */
    sc_test_outcome o2 = sc_test_cli(json);
    o = sc_test_cli(json);
    assert_string_equal(o.out, o2.out);
    sc_test_outcome_free(&o);
    sc_test_outcome_free(&o2);
    const char *one[] = {"diff", a, NULL};
    o = sc_test_cli(one);
    assert_int_equal(o.code, 2);
    assert_non_null(strstr(o.err, "wants two traces or folders"));
    sc_test_outcome_free(&o);
    const char *missing[] = {"diff", a, "/nonexistent/trace.json", NULL};
    o = sc_test_cli(missing);
    assert_int_equal(o.code, 1);
    assert_non_null(strstr(o.err, "/nonexistent/trace.json"));
    sc_test_outcome_free(&o);
    const char *help[] = {"help", "diff", NULL};
    o = sc_test_cli(help);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "stepcast diff [--json]"));
    sc_test_outcome_free(&o);
}

int main(int argc, char **argv) {
    (void)argc;
    sc_test_find_bin(argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warnings_group_by_kind),
        cmocka_unit_test(test_megatron_skips_are_one_line),
        cmocka_unit_test(test_progress_callback),
        cmocka_unit_test(test_progress_line_off_a_terminal),
        cmocka_unit_test(test_progress_line_on_a_terminal),
        cmocka_unit_test(test_kernel_names_normalised),
        cmocka_unit_test(test_diff_hta_pair),
        cmocka_unit_test(test_diff_cli),
    };
    return cmocka_run_group_tests_name("warnings, progress and diff", tests, sc_test_bin_setup, NULL);
}
