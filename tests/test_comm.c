/*
 * test_comm.c - the hardware profiles (src/models/hardware.c) and the
 * communication model (src/models/comm.c).
 *
 * The model with a profile alone is checked against every row of three
 * measured nccl-tests tables (all-reduce, in place, 8 GPUs, 1 KB to 8 GB;
 * copied below from shared/data/hardware/azure_nd_*_results.md, the only
 * place they live in the project): every row is printed, and the median
 * |error| of the bus bandwidth from 1 MiB up must stay within 15% on each.
 * The fit is run on those tables again and must land where the profiles'
 * values are. Then the model's shape (monotonic in bytes and ranks, the
 * bus bandwidth conventions), the fit on synthetic samples, profile lookup
 * by name and by a trace's device name, and bad profile files.
 */
#include "testutil.h"

#include "models/comm.h"
#include "models/hardware.h"

#include <math.h>

/* ------------------------------------------------------- measured tables */

/* nccl-tests all_reduce_perf, in place, 8 GPUs, bus bandwidth in GB/s per
 * size 1 KiB x 2^i (the files label 2^17 "132K" and 2^26 "67M": the sizes
 * are powers of two). Azure/AI-benchmarking-guide at 8fd0c6e, MIT; see
 * shared/data/README.md. */
#define AZURE_ROWS 24
typedef struct azure_table {
    const char *file, *gpu;
    double busbw[AZURE_ROWS];
} azure_table;

static const azure_table azure[] = {
    {"azure_nd_a100_v4_results.md", "NVIDIA A100-SXM4-80GB",
     {0.04, 0.08, 0.17, 0.33, 0.67, 1.37, 2.70, 5.15, 10.11, 19.24, 36.22, 53.54, 71.43, 89.99, 109.22,
      132.77, 166.63, 174.18, 213.87, 221.58, 228.10, 230.22, 230.48, 231.58}},
    {"azure_nd_h100_v5_results.md", "NVIDIA H100 80GB HBM3",
     {0.07, 0.14, 0.27, 0.53, 0.95, 1.71, 2.72, 5.40, 10.86, 21.35, 43.70, 81.93, 128.73, 172.13, 234.45,
      295.53, 361.78, 400.61, 423.38, 438.46, 466.35, 472.36, 475.54, 478.87}},
    {"azure_nd_h200_v5_results.md", "NVIDIA H200 141GB",
     {0.06, 0.12, 0.23, 0.47, 0.93, 1.84, 3.72, 7.39, 14.75, 29.38, 52.96, 88.78, 138.44, 181.94, 240.41,
      300.91, 368.11, 412.45, 432.24, 442.72, 467.58, 472.57, 477.41, 479.98}},
};
#define NTABLES (sizeof azure / sizeof *azure)

static int64_t azure_bytes(size_t i) { return (int64_t)1024 << i; }

static void size_label(int64_t b, char *buf, size_t n) {
    if (b >= (int64_t)1 << 30) snprintf(buf, n, "%lldG", (long long)(b >> 30));
    else if (b >= 1 << 20) snprintf(buf, n, "%lldM", (long long)(b >> 20));
    else snprintf(buf, n, "%lldK", (long long)(b >> 10));
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static sc__comm_model model_of(const char *gpu) {
    const sc__hw_profile *p = sc__hw_find(gpu);
    if (!p) fail_msg("no profile for '%s'", gpu);
    sc__comm_model m;
    sc_error err;
    assert_int_equal(sc__comm_model_from_profile(p, 0, 0, 0, &m, &err), SC_OK);
    return m;
}

/* The model's bus bandwidth (GB/s) of an 8-GPU all-reduce of b bytes. */
static double model_busbw(const sc__comm_model *m, int64_t b, sc__comm_choice *c) {
    int64_t ns = sc__comm_explain(m, SC_C_ALL_REDUCE, b, 8, c);
    assert_true(ns > 0);
    return (double)b / (double)ns * sc__comm_bus_factor(SC_C_ALL_REDUCE, 8);
}

/* Median |error| (%) of the model's bus bandwidth against table t, from
 * min_bytes up; with `print`, every row on the test output. */
static double table_error(const sc__comm_model *m, const azure_table *t, int64_t min_bytes, bool print) {
    double err[AZURE_ROWS];
    size_t n = 0;
    for (size_t i = 0; i < AZURE_ROWS; i++) {
        sc__comm_choice c;
        double bw = model_busbw(m, azure_bytes(i), &c);
        double e = (bw / t->busbw[i] - 1) * 100;
        if (print) {
            char label[16];
            size_label(azure_bytes(i), label, sizeof label);
            printf("#   %-5s %8.2f %8.2f %+7.1f%%  %s/%s\n", label, t->busbw[i], bw, e,
                   sc__comm_algo_name(c.algo), sc__comm_proto_name(c.proto));
        }
        if (azure_bytes(i) >= min_bytes) err[n++] = fabs(e);
    }
    return median(err, n);
}

/* The bar: with the profile alone, the median |error| of the bus
 * bandwidth from 1 MiB up is at most 15% on each table. */
static void test_azure_tables(void **state) {
    (void)state;
    for (size_t k = 0; k < NTABLES; k++) {
        sc__comm_model m = model_of(azure[k].gpu);
        printf("# %s vs the %s profile (8 GPUs): size, measured and modelled busbw GB/s, error, choice\n",
               azure[k].file, m.gpu);
        double all = table_error(&m, &azure[k], 0, true);
        double big = table_error(&m, &azure[k], (int64_t)1 << 20, false);
        printf("# %s: median |error| %.1f%% from 1 MiB up, %.1f%% over all sizes\n", azure[k].file, big, all);
        if (big > 15) fail_msg("%s: median |error| %.1f%% from 1 MiB up, over 15%%", azure[k].file, big);
    }
}

/* The profiles' fitted values are what sc__comm_model_fit finds on the
 * tables: fitting again from them must not do better by more than a
 * point of median error. The fitted values are printed, to be copied into
 * hardware.c when the model changes. */
static void refit(const char *gpu, const size_t *tables, size_t ntables) {
    sc__comm_model m = model_of(gpu), fit = m;
    sc__comm_sample s[AZURE_ROWS * NTABLES];
    size_t n = 0;
    for (size_t k = 0; k < ntables; k++)
        for (size_t i = 0; i < AZURE_ROWS; i++) {
            double bw = azure[tables[k]].busbw[i] / sc__comm_bus_factor(SC_C_ALL_REDUCE, 8); /* algbw */
            s[n++] = (sc__comm_sample){.type = SC_C_ALL_REDUCE, .bytes = azure_bytes(i), .ranks = 8,
                                       .ns = (int64_t)llround((double)azure_bytes(i) / bw)};
        }
    assert_true(sc__comm_model_fit(&fit, s, n));
    assert_int_equal(fit.fitted, n);
    const sc__comm_link_params *l = &fit.link[SC__LINK_INTRA];
    const sc__hw_profile *p = sc__hw_find(gpu);
    printf("# refit of %s: comm_base_us %.2f, comm_ll_frac %.4f, nvlink LL step %.3f us, nvlink_simple_us %.2f, "
           "nvlink_eff %.4f (ring busbw %.1f GB/s), nvls_us %.2f, nvls_eff %.4f (%.1f GB/s)\n",
           m.gpu, fit.base_ns / 1e3, fit.ll_frac, l->lat_ns[SC__PROTO_LL] / 1e3, l->lat_ns[SC__PROTO_SIMPLE] / 1e3,
           l->bw_gbps / p->nvlink_GBps, l->bw_gbps, fit.nvls_ns / 1e3, fit.nvls_gbps / p->nvlink_GBps, fit.nvls_gbps);
    for (size_t k = 0; k < ntables; k++) {
        double had = table_error(&m, &azure[tables[k]], 0, false);
        double got = table_error(&fit, &azure[tables[k]], 0, false);
        printf("# %s: median |error| %.1f%% with the profile, %.1f%% refitted\n", azure[tables[k]].file, had, got);
        if (had > got + 1) fail_msg("%s: the profile's values are not the fit's (%.1f%% vs %.1f%%)", gpu, had, got);
    }
}

static void test_profiles_are_the_fit(void **state) {
    (void)state;
    const size_t nvlink3[] = {0}, nvlink4[] = {1, 2};
    refit("a100-80gb", nvlink3, 1);
    refit("h100", nvlink4, 2);
}

/* ------------------------------------------------------------- the shape */

static const uint8_t modelled[] = {SC_C_ALL_REDUCE, SC_C_ALL_GATHER, SC_C_REDUCE_SCATTER, SC_C_ALL_TO_ALL,
                                   SC_C_BROADCAST,  SC_C_REDUCE,     SC_C_SEND_RECV,      SC_C_GATHER,
                                   SC_C_SCATTER,    SC_C_BARRIER};
#define NMODELLED (sizeof modelled / sizeof *modelled)

/* More bytes or more ranks never take less time, on every profile, for
 * every collective, in one node and across nodes (a network override
 * that is fast or slow moves which links bind). */
static void test_monotonic(void **state) {
    (void)state;
    static const double nets[] = {0, 25, 3200};
    for (size_t i = 0; i < sc__hw_count(); i++)
        for (size_t k = 0; k < sizeof nets / sizeof *nets; k++) {
            sc__comm_model m;
            sc_error err;
            assert_int_equal(sc__comm_model_from_profile(sc__hw_at(i), 8, nets[k], 0, &m, &err), SC_OK);
            for (size_t t = 0; t < NMODELLED; t++)
                for (uint32_t n = 1; n <= 72; n++) {
                    int64_t prev_b = -1;
                    for (int64_t b = 0; b <= ((int64_t)16 << 30); b = b ? b * 2 : 1) {
                        int64_t ns = sc__comm_time_ns(&m, modelled[t], b, n);
                        int64_t fewer = sc__comm_time_ns(&m, modelled[t], b, n - 1);
                        assert_true(ns >= 0);
                        if (ns < prev_b)
                            fail_msg("%s %s: %lld bytes on %u ranks take %lld ns, less than half of it",
                                     m.gpu, sc__coll_type_name(modelled[t]), (long long)b, n, (long long)ns);
                        if (n > 1 && ns < fewer)
                            fail_msg("%s %s: %lld bytes on %u ranks take %lld ns, %lld on one rank fewer",
                                     m.gpu, sc__coll_type_name(modelled[t]), (long long)b, n, (long long)ns,
                                     (long long)fewer);
                        prev_b = ns;
                    }
                }
        }
}

/* A model without latency, one protocol at full bandwidth and no NVLS:
 * what is left is nccl-tests' bus bandwidth convention. */
static sc__comm_model bare(double intra, double net) {
    sc__comm_model m;
    memset(&m, 0, sizeof m);
    m.link[SC__LINK_INTRA].bw_gbps = intra;
    m.link[SC__LINK_NET].bw_gbps = net;
    m.ll_frac = 1;
    m.gpus_per_node = 8;
    return m;
}

static void test_busbw_conventions(void **state) {
    (void)state;
    sc__comm_model m = bare(100, 10); /* 100 bytes/ns in a node */
    const int64_t b = (int64_t)1 << 30;
    for (uint32_t n = 2; n <= 8; n++) {
        /* all-gather of n ranks: each moves (n-1)/n of the output */
        assert_int_equal(sc__comm_time_ns(&m, SC_C_ALL_GATHER, b, n), llround((double)b * (n - 1) / n / 100));
        assert_int_equal(sc__comm_time_ns(&m, SC_C_REDUCE_SCATTER, b, n), llround((double)b * (n - 1) / n / 100));
        assert_int_equal(sc__comm_time_ns(&m, SC_C_ALL_TO_ALL, b, n), llround((double)b * (n - 1) / n / 100));
        assert_int_equal(sc__comm_time_ns(&m, SC_C_ALL_REDUCE, b, n), llround((double)b * 2 * (n - 1) / n / 100));
        assert_int_equal(sc__comm_time_ns(&m, SC_C_BROADCAST, b, n), llround((double)b / 100));
        assert_int_equal(sc__comm_time_ns(&m, SC_C_REDUCE, b, n), llround((double)b / 100));
        assert_int_equal(sc__comm_time_ns(&m, SC_C_SEND_RECV, b, n), llround((double)b / 100));
        /* so the bus bandwidth of each is the link's */
        for (size_t t = 0; t < NMODELLED; t++) {
            if (modelled[t] == SC_C_GATHER || modelled[t] == SC_C_SCATTER || modelled[t] == SC_C_BARRIER) continue;
            int64_t ns = sc__comm_time_ns(&m, modelled[t], b, n);
            assert_true(fabs((double)b / (double)ns * sc__comm_bus_factor(modelled[t], n) - 100) < 1e-3);
        }
    }
    assert_true(fabs(sc__comm_bus_factor(SC_C_ALL_REDUCE, 8) - 1.75) < 1e-12);
    assert_true(fabs(sc__comm_bus_factor(SC_C_ALL_GATHER, 8) - 0.875) < 1e-12);
    assert_true(sc__comm_bus_factor(SC_C_UNKNOWN, 8) == 0);
    /* over two nodes the ring runs at the node's NICs: 8 GPUs x 10 */
    assert_int_equal(sc__comm_time_ns(&m, SC_C_ALL_GATHER, b, 16), llround((double)b * 15 / 16 / 80));
    /* what is not modelled, and what costs nothing */
    assert_int_equal(sc__comm_time_ns(&m, SC_C_UNKNOWN, b, 8), -1);
    assert_int_equal(sc__comm_time_ns(&m, SC_C_ALL_REDUCE, -1, 8), -1);
    assert_int_equal(sc__comm_time_ns(&m, SC_C_ALL_REDUCE, b, 1), 0);
    assert_int_equal(sc__comm_time_ns(&m, SC_C_ALL_REDUCE, 0, 8), 0);
    assert_true(sc__comm_time_ns(&m, SC_C_ALL_REDUCE, b, UINT32_MAX) > 0); /* no overflow of the node count */
}

/* The choice says what NCCL would run: NVLS for a large all-reduce in an
 * H100 node, the low-latency ring for a small one, the network once the
 * group leaves the node, and no NVLS on A100. */
static void test_choice(void **state) {
    (void)state;
    sc__comm_model h100 = model_of("h100"), a100 = model_of("a100");
    sc__comm_choice c;
    sc__comm_explain(&h100, SC_C_ALL_REDUCE, (int64_t)1 << 30, 8, &c);
    assert_int_equal(c.algo, SC__ALGO_NVLS);
    assert_string_equal(sc__comm_links_name(c.links), "nvlink");
    assert_int_equal(c.nodes, 1);
    sc__comm_explain(&h100, SC_C_ALL_REDUCE, 1024, 8, &c);
    assert_int_equal(c.algo, SC__ALGO_RING);
    assert_int_equal(c.proto, SC__PROTO_LL);
    sc__comm_explain(&h100, SC_C_ALL_REDUCE, 1024, 64, &c);
    assert_int_equal(c.nodes, 8);
    assert_string_equal(sc__comm_links_name(c.links), "nvlink+net");
    assert_true(c.algo == SC__ALGO_TREE); /* log2(8) steps over the network beat 16 */
    sc__comm_explain(&h100, SC_C_ALL_REDUCE, (int64_t)1 << 30, 16, &c);
    assert_true(c.algo == SC__ALGO_RING || c.algo == SC__ALGO_NVLS_TREE);
    sc__comm_explain(&a100, SC_C_ALL_REDUCE, (int64_t)1 << 30, 8, &c);
    assert_int_equal(c.algo, SC__ALGO_RING);
    assert_int_equal(c.proto, SC__PROTO_SIMPLE);
    sc__comm_explain(&a100, SC_C_SEND_RECV, 4096, 2, &c);
    assert_int_equal(c.algo, SC__ALGO_P2P);
    assert_string_equal(sc__comm_links_name(c.links), "nvlink");
    sc__comm_explain(&a100, SC_C_SEND_RECV, 4096, 9, &c);
    assert_string_equal(sc__comm_links_name(c.links), "net");
    assert_true(c.latency_ns > 0 && c.transfer_ns > 0);
}

/* Overrides replace the link's bandwidth; the profile's efficiency stays. */
static void test_overrides(void **state) {
    (void)state;
    const sc__hw_profile *p = sc__hw_find("h100");
    sc__comm_model m;
    sc_error err;
    assert_int_equal(sc__comm_model_from_profile(p, 4, 200, 900, &m, &err), SC_OK);
    assert_int_equal(m.gpus_per_node, 4);
    assert_true(fabs(m.link[SC__LINK_INTRA].bw_gbps - 900 * p->nvlink_eff) < 1e-9);
    assert_true(fabs(m.link[SC__LINK_NET].bw_gbps - 200.0 / 8 * p->net_eff) < 1e-9);
    assert_true(fabs(m.nvls_gbps - 900 * p->nvls_eff) < 1e-9);
    assert_int_equal(sc__comm_model_from_profile(p, 0, -1, 0, &m, &err), SC_E_USAGE);
    assert_int_equal(sc__comm_model_from_profile(p, 0, 0, NAN, &m, &err), SC_E_USAGE);
    sc__hw_profile bad = *p;
    bad.nvlink_eff = -1;
    assert_int_equal(sc__comm_model_from_profile(&bad, 0, 0, 0, &m, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "nvlink_eff"));
}

/* ------------------------------------------------------------------- fit */

/* Samples of model m: every collective it models, sizes 1 KiB to 4 GiB by
 * 4, on `ranks`. */
static size_t synth(const sc__comm_model *m, const uint32_t *ranks, size_t nranks, sc__comm_sample *s, size_t cap) {
    size_t n = 0;
    for (size_t r = 0; r < nranks; r++)
        for (size_t t = 0; t < NMODELLED; t++)
            for (int64_t b = 1024; b <= ((int64_t)4 << 30) && n < cap; b *= 4)
                s[n++] = (sc__comm_sample){.type = modelled[t], .bytes = b, .ranks = ranks[r],
                                           .ns = sc__comm_time_ns(m, modelled[t], b, ranks[r])};
    return n;
}

static void expect_near(const char *what, double got, double want, double tol) {
    if (!(fabs(got / want - 1) <= tol)) fail_msg("%s: fitted %g, want %g (within %g%%)", what, got, want, tol * 100);
}

/* From an A100's start, samples of a made-up NVLS system on 2 to 16 GPUs
 * (two nodes) give back its parameters. */
static void test_fit_recovers(void **state) {
    (void)state;
    sc__comm_model truth = model_of("h100");
    truth.base_ns = 15000;
    truth.ll_frac = 0.5;
    truth.link[SC__LINK_INTRA].bw_gbps = 300;
    truth.link[SC__LINK_INTRA].lat_ns[SC__PROTO_SIMPLE] = 5000;
    truth.nvls_ns = 30000;
    truth.nvls_gbps = 200;
    truth.link[SC__LINK_NET].bw_gbps = 30;
    sc__comm_model m = model_of("a100-80gb");
    m.nvls = true; /* the start must allow what the samples show */
    m.nvls_ns = 10000;
    m.nvls_gbps = 100;
    static sc__comm_sample s[4096];
    const uint32_t ranks[] = {2, 4, 8, 16};
    size_t n = synth(&truth, ranks, 4, s, 4096);
    assert_true(sc__comm_model_fit(&m, s, n));
    assert_int_equal(m.fitted, n);
    printf("# fit from the A100 profile: base %.0f ns, ll_frac %.3f, intra %.1f GB/s, simple step %.0f ns, "
           "nvls %.0f ns %.1f GB/s, net %.2f GB/s\n",
           m.base_ns, m.ll_frac, m.link[SC__LINK_INTRA].bw_gbps, m.link[SC__LINK_INTRA].lat_ns[SC__PROTO_SIMPLE],
           m.nvls_ns, m.nvls_gbps, m.link[SC__LINK_NET].bw_gbps);
    expect_near("base_ns", m.base_ns, truth.base_ns, 0.03);
    expect_near("ll_frac", m.ll_frac, truth.ll_frac, 0.03);
    expect_near("intra bw", m.link[SC__LINK_INTRA].bw_gbps, truth.link[SC__LINK_INTRA].bw_gbps, 0.03);
    expect_near("intra simple step", m.link[SC__LINK_INTRA].lat_ns[SC__PROTO_SIMPLE],
                truth.link[SC__LINK_INTRA].lat_ns[SC__PROTO_SIMPLE], 0.05);
    expect_near("nvls_ns", m.nvls_ns, truth.nvls_ns, 0.05);
    expect_near("nvls_gbps", m.nvls_gbps, truth.nvls_gbps, 0.03);
    expect_near("net bw", m.link[SC__LINK_NET].bw_gbps, truth.link[SC__LINK_NET].bw_gbps, 0.03);
    /* and the fitted model gives the samples' times back */
    for (size_t i = 0; i < n; i++) {
        int64_t ns = sc__comm_time_ns(&m, s[i].type, s[i].bytes, s[i].ranks);
        if (fabs((double)ns / (double)s[i].ns - 1) > 0.03)
            fail_msg("%s of %lld bytes on %u: %lld ns, the sample %lld", sc__coll_type_name(s[i].type),
                     (long long)s[i].bytes, s[i].ranks, (long long)ns, (long long)s[i].ns);
    }
}

/* Samples inside one node say nothing of the network: its parameters keep
 * the profile's values. Nothing usable leaves the model as it was. */
static void test_fit_keeps_what_samples_do_not_see(void **state) {
    (void)state;
    sc__comm_model truth = model_of("h100"), m = truth;
    truth.base_ns *= 2;
    truth.nvls_gbps *= 1.25;
    static sc__comm_sample s[4096];
    const uint32_t ranks[] = {2, 8};
    size_t n = synth(&truth, ranks, 2, s, 4096);
    assert_true(sc__comm_model_fit(&m, s, n));
    expect_near("base_ns", m.base_ns, truth.base_ns, 0.03);
    expect_near("nvls_gbps", m.nvls_gbps, truth.nvls_gbps, 0.03);
    sc__comm_model h100 = model_of("h100");
    assert_memory_equal(&m.link[SC__LINK_NET], &h100.link[SC__LINK_NET], sizeof h100.link[SC__LINK_NET]);
    /* unusable samples: unknown size or type, one rank, no time */
    sc__comm_sample junk[] = {{SC_C_ALL_REDUCE, -1, 8, 1000}, {SC_C_UNKNOWN, 1024, 8, 1000},
                              {SC_C_ALL_REDUCE, 1024, 1, 1000}, {SC_C_ALL_REDUCE, 1024, 8, 0}};
    sc__comm_model before = model_of("h100"), after = before;
    assert_true(sc__comm_model_fit(&after, junk, 4));
    assert_int_equal(after.fitted, 0);
    assert_memory_equal(&after, &before, sizeof after);
    assert_true(sc__comm_model_fit(&after, NULL, 0));
    assert_memory_equal(&after, &before, sizeof after);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_azure_tables),
        cmocka_unit_test(test_profiles_are_the_fit),
        cmocka_unit_test(test_monotonic),
        cmocka_unit_test(test_busbw_conventions),
        cmocka_unit_test(test_choice),
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_fit_recovers),
        cmocka_unit_test(test_fit_keeps_what_samples_do_not_see),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
