/*
 * test_kineto.c - the Kineto reader against facts checked independently.
 *
 * The expected figures come from the READMEs of the folders of ../shared/traces and were
 * re-derived with a python3 script (json.load with Decimal timestamps) over
 * the same files: event and kernel counts, streams, NCCL kernels, ranks and
 * world sizes, ProfilerStep durations, and exact nanosecond timestamps of
 * the ns-resolution and baseTimeNanoseconds vintages. Then: every Kineto
 * trace parses, gives the same result through a 64-byte read window as
 * through the default one, and a gzip file reads the same as its
 * decompressed text whatever the file is called.
 */
#include "testutil.h"

#include "io/source.h"
#include "trace/trace.h"

#include <pthread.h>
#include <sys/stat.h>

static sc_trace *load_opts(const char *rel, const sc_load_options *opts) {
    sc_trace *t = NULL;
    sc_error err;
    sc_status st = sc_trace_load(sc_test_trace(rel), opts, &t, &err);
    if (st != SC_OK) {
        char buf[1024];
        fail_msg("%s", sc_error_format(&err, buf, sizeof buf));
    }
    return t;
}

static sc_trace *load(const char *rel) { return load_opts(rel, NULL); }

typedef struct counts {
    size_t events, kernels, nccl, memcpy, memset, cpu_op, user_annotation, runtime, flows,
        cuda_sync, x, s, f, m, i;
} counts;

static counts count(const sc_trace *t) {
    counts c;
    memset(&c, 0, sizeof c);
    const sc__event *ev = sc__trace_events(t);
    c.events = t->events.len;
    for (size_t k = 0; k < t->events.len; k++) {
        const sc__event *e = &ev[k];
        switch (e->ph) {
        case 'X': c.x++; break;
        case 's': c.s++; break;
        case 'f': c.f++; break;
        case 'M': c.m++; break;
        case 'i': c.i++; break;
        default: break;
        }
        switch (e->kind) {
        case SC_K_KERNEL:
            c.kernels++;
            if (e->flags & SC_EF_NCCL) c.nccl++;
            break;
        case SC_K_MEMCPY: c.memcpy++; break;
        case SC_K_MEMSET: c.memset++; break;
        case SC_K_CPU_OP: c.cpu_op++; break;
        case SC_K_USER_ANNOTATION: c.user_annotation++; break;
        case SC_K_RUNTIME: c.runtime++; break;
        case SC_K_FLOW_LAUNCH: c.flows++; break;
        case SC_K_CUDA_SYNC: c.cuda_sync++; break;
        default: break;
        }
    }
    return c;
}

static size_t kernels_on_stream(const sc_trace *t, int32_t stream) {
    size_t n = 0;
    const sc__event *ev = sc__trace_events(t);
    for (size_t k = 0; k < t->events.len; k++)
        n += ev[k].kind == SC_K_KERNEL && ev[k].stream == stream;
    return n;
}

static size_t named(const sc_trace *t, const char *name) {
    size_t n = 0;
    const sc__event *ev = sc__trace_events(t);
    for (size_t k = 0; k < t->events.len; k++)
        n += strcmp(sc__trace_str(t, ev[k].name), name) == 0;
    return n;
}

static size_t named_prefix(const sc_trace *t, const char *prefix) {
    size_t n = 0;
    const sc__event *ev = sc__trace_events(t);
    for (size_t k = 0; k < t->events.len; k++)
        n += sc__starts_with(sc__trace_str(t, ev[k].name), prefix);
    return n;
}

/* Duration in ns of the first X event with this name; -1 when none. */
static int64_t dur_of(const sc_trace *t, const char *name) {
    const sc__event *ev = sc__trace_events(t);
    for (size_t k = 0; k < t->events.len; k++)
        if (ev[k].ph == 'X' && strcmp(sc__trace_str(t, ev[k].name), name) == 0) return ev[k].dur;
    return -1;
}

static const sc__event *nth_of_kind(const sc_trace *t, int kind, char ph, bool last) {
    const sc__event *ev = sc__trace_events(t), *found = NULL;
    for (size_t k = 0; k < t->events.len; k++)
        if ((kind < 0 || ev[k].kind == kind) && ev[k].ph == ph) {
            found = &ev[k];
            if (!last) break;
        }
    return found;
}

/* --------------------------------------------------------- Megatron TP8 */

static const size_t megatron_events[8] = {14245, 15457, 15273, 15527, 15587, 15067, 14989, 15611};
static const int64_t megatron_step3_us[8] = {603240, 588992, 588760, 604842,
                                             616090, 615864, 625731, 608635};

static void test_megatron_ranks(void **state) {
    (void)state;
    const char *dir = sc_test_trace("megatron-tp8-a100");
    sc_traceset *set = NULL;
    sc_error err;
    assert_int_equal(sc_traceset_load(&dir, 1, NULL, &set, &err), SC_OK);
    assert_int_equal(sc_traceset_count(set), 8); /* the 8 ET files are skipped */
    for (size_t r = 0; r < 8; r++) {
        const sc_trace *t = sc_traceset_trace(set, r);
        char want[64];
        snprintf(want, sizeof want, "megatron_kineto_%zu.json.gz", r);
        const char *path = sc_trace_path(t);
        assert_string_equal(path + strlen(path) - strlen(want), want);
        assert_int_equal(sc_trace_rank(t), (int64_t)r);
        assert_int_equal(t->rank_source, 0); /* from distributedInfo */
        assert_int_equal(sc_trace_world_size(t), 8);
        assert_string_equal(sc__trace_str(t, t->backend), "nccl");
        assert_string_equal(sc__trace_gpu_name(t), "NVIDIA A100-SXM4-80GB");
        counts c = count(t);
        assert_int_equal(c.events, megatron_events[r]);
        assert_int_equal(sc_trace_event_count(t), megatron_events[r]);
        assert_int_equal(c.kernels, 690);
        assert_int_equal(c.nccl, 84);
        assert_int_equal(kernels_on_stream(t, 7), 606);
        assert_int_equal(kernels_on_stream(t, 24), 84);
        /* 81 f16 and 3 f32 all-reduces (the README rounds them all to f16) */
        assert_int_equal(named_prefix(t, "ncclDevKernel_AllReduce_Sum_f16_RING_LL("), 81);
        assert_int_equal(named_prefix(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL("), 3);
        assert_int_equal(c.memset, 81);
        assert_int_equal(c.memcpy, 6);
        assert_int_equal(named(t, "ProfilerStep#3"), 1);
        assert_int_equal(dur_of(t, "ProfilerStep#3"), megatron_step3_us[r] * 1000);
        assert_int_equal(t->base_time_ns, 0);
    }
    sc_traceset_free(set);
}

static void test_megatron_rank0_details(void **state) {
    (void)state;
    sc_trace *t = load("megatron-tp8-a100/megatron_kineto_0.json.gz");
    counts c = count(t);
    assert_int_equal(c.x, 9816);
    assert_int_equal(c.s, 1119);
    assert_int_equal(c.f, 3272);
    assert_int_equal(c.m, 36);
    assert_int_equal(c.i, 2);
    assert_int_equal(named(t, "cudaEventRecord"), 508);
    assert_int_equal(named(t, "cudaStreamWaitEvent"), 338);
    assert_int_equal(named(t, "cudaEventQuery"), 375);
    assert_int_equal(named(t, "cudaLaunchKernel"), 486);
    assert_int_equal(named(t, "cudaLaunchKernelExC"), 84);
    assert_int_equal(named(t, "cudaStreamSynchronize"), 3);
    /* flows: every "f" of ac2g binds to the enclosing slice */
    size_t bp = 0;
    const sc__event *ev = sc__trace_events(t);
    for (size_t k = 0; k < t->events.len; k++) bp += (ev[k].flags & SC_EF_BP_ENCLOSING) != 0;
    assert_int_equal(bp, 3272);
    /* "Input Dims" is kept on 5,062 events */
    size_t dims = 0;
    for (size_t k = 0; k < t->events.len; k++) {
        const sc__event_shapes *sh = sc__trace_shapes(t, &ev[k]);
        dims += sh && sh->dims != SC__NONE;
    }
    assert_int_equal(dims, 5062);
    /* the first event and the first and last kernels, field by field */
    const sc__event *e = nth_of_kind(t, -1, 'X', false);
    assert_string_equal(sc__trace_str(t, e->name), "ProfilerStep#3");
    assert_int_equal(e->ts, INT64_C(1706850122846038000));
    assert_int_equal(e->dur, INT64_C(603240000));
    assert_int_equal(sc__trace_track_at(t, e->track)->pid, 2590092);
    assert_int_equal(sc__trace_track_at(t, e->track)->tid, 2590092);
    e = nth_of_kind(t, SC_K_KERNEL, 'X', false);
    assert_int_equal(e->ts, INT64_C(1706850122854101000));
    assert_int_equal(e->dur, 3000);
    assert_int_equal(e->stream, 7);
    assert_int_equal(e->device, 0);
    assert_int_equal(e->correlation, 54499);
    assert_int_equal(sc__trace_track_at(t, e->track)->pid, 0);
    assert_int_equal(sc__trace_track_at(t, e->track)->tid, 7);
    const sc__event_ext *x = sc__trace_ext(t, e);
    assert_non_null(x);
    assert_int_equal(x->grid[0], 16);
    assert_int_equal(x->grid[1], 1);
    assert_int_equal(x->grid[2], 1);
    assert_int_equal(x->block[0], 128);
    e = nth_of_kind(t, SC_K_KERNEL, 'X', true);
    assert_int_equal(e->ts, INT64_C(1706850123449233000));
    assert_int_equal(e->correlation, 71421);
    /* the first memcpy carries its byte count */
    e = nth_of_kind(t, SC_K_MEMCPY, 'X', false);
    assert_string_equal(sc__trace_str(t, e->name), "Memcpy HtoD (Pinned -> Device)");
    x = sc__trace_ext(t, e);
    assert_non_null(x);
    assert_int_equal(x->bytes, 65536);
    /* string pids/tids ("Spans", "Traces", even "") are their own tracks */
    size_t str_tracks = 0;
    for (uint32_t k = 0; k < t->tracks.len; k++)
        str_tracks += sc__trace_track_at(t, k)->pid_str != SC__NONE;
    assert_int_equal(str_tracks, 4);
    sc_trace_free(t);
}

/* ------------------------------------------------------------- DLRM 8-rank */

static const struct {
    const char *file;
    size_t events, cpu_op, user_annotation, runtime, kernels, nccl, memcpy, memset, flows;
    int64_t step10_us;
} dlrm[8] = {
    {"worker0_step_12.1694128201545.pt.trace.json", 3290, 1633, 40, 525, 245, 8, 16, 0, 786, 14455},
    {"worker1_step_12.1694128201556.pt.trace.json", 3424, 1633, 40, 527, 310, 8, 16, 0, 853, 19901},
    {"worker2_step_12.1694128201554.pt.trace.json", 3268, 1633, 40, 513, 246, 8, 16, 0, 775, 13017},
    {"worker3_step_12.1694128201557.pt.trace.json", 3474, 1633, 40, 541, 315, 8, 16, 6, 878, 19313},
    {"worker4_step_12.1694128201547.pt.trace.json", 3310, 1633, 40, 523, 251, 8, 16, 6, 796, 17979},
    {"worker5_step_12.1694128201549.pt.trace.json", 3250, 1633, 40, 505, 245, 8, 16, 0, 766, 17797},
    {"worker6_step_12.1694128201553.pt.trace.json", 3272, 1633, 40, 515, 246, 8, 16, 0, 777, 13091},
    {"worker7_step_12.1694128201553.pt.trace.json", 3250, 1633, 40, 504, 246, 8, 16, 0, 766, 12509},
};

static void test_dlrm_ranks(void **state) {
    (void)state;
    const char *dir = sc_test_trace("param-dlrm-8rank");
    sc_traceset *set = NULL;
    sc_error err;
    assert_int_equal(sc_traceset_load(&dir, 1, NULL, &set, &err), SC_OK);
    assert_int_equal(sc_traceset_count(set), 8); /* et/ is skipped */
    for (size_t r = 0; r < 8; r++) {
        const sc_trace *t = sc_traceset_trace(set, r);
        const char *path = sc_trace_path(t);
        assert_string_equal(path + strlen(path) - strlen(dlrm[r].file), dlrm[r].file);
        assert_int_equal(sc_trace_rank(t), (int64_t)r);
        assert_int_equal(sc_trace_world_size(t), 8);
        assert_string_equal(sc__trace_gpu_name(t), "Tesla V100-SXM2-32GB");
        counts c = count(t);
        assert_int_equal(c.events, dlrm[r].events);
        assert_int_equal(c.cpu_op, dlrm[r].cpu_op);
        assert_int_equal(c.user_annotation, dlrm[r].user_annotation);
        assert_int_equal(c.runtime, dlrm[r].runtime);
        assert_int_equal(c.kernels, dlrm[r].kernels);
        assert_int_equal(c.nccl, dlrm[r].nccl);
        assert_int_equal(kernels_on_stream(t, 84), 8);
        assert_int_equal(kernels_on_stream(t, 24), 17);
        assert_int_equal(c.memcpy, dlrm[r].memcpy);
        assert_int_equal(c.memset, dlrm[r].memset);
        assert_int_equal(c.flows, dlrm[r].flows);
        assert_int_equal(c.m, 42);
        assert_int_equal(c.i, 2);
        assert_int_equal(dur_of(t, "ProfilerStep#10"), dlrm[r].step10_us * 1000);
    }
    sc_traceset_free(set);
}

/* ------------------------------------------------------------ HTA test data */

static const struct {
    const char *rel;
    size_t events, kernels, nccl, cuda_sync;
    int64_t rank, world_size, base_ns;
    bool big;
} hta[] = {
    {"amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 220, 14, 0, 0, -1, -1,
     INT64_C(1735632360000000000), false},
    {"critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 1408, 79, 0, 41, 0,
     -1, 0, false},
    {"critical_path/cuda_event_sync/event_sync_trace.json.gz", 92, 4, 0, 4, 0, -1, 0, false},
    {"critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", 149, 3, 0, 5, 0, -1, 0,
     false},
    {"critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz", 1348, 79, 0, 41,
     0, -1, 0, false},
    {"df_index_resolver/df_index_resolver.json.gz", 216092, 19370, 2020, 0, 1, 2, 0, true},
    {"nccl_parser_config/nccl_data.json.gz", 40573, 2700, 21, 0, 0, 2, INT64_C(1711964646000000000),
     true},
    {"negative_queue_length_values_check/rank0.json.gz", 108936, 6080, 80, 0, 0, 16, 0, true},
    {"ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 68692, 4350, 0, 0, 0, 1, 0,
     true},
    {"trace_diff/control/control.json.gz", 109123, 8568, 60, 0, 3, 8, 0, true},
    {"trace_diff/test/test.json.gz", 105167, 9876, 64, 0, 1, 2, 0, true},
    {"trace_filter/sampled_rank-0.json.gz", 4855, 1154, 10, 0, 0, 128, 0, false},
    {"trace_filter/sampled_rank-1.json.gz", 4720, 1104, 10, 0, 1, 128, 0, false},
};

static void test_hta_files(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof hta / sizeof hta[0]; k++) {
        if (hta[k].big && !sc_test_big_ok()) continue;
        char rel[256];
        snprintf(rel, sizeof rel, "hta-testdata/%s", hta[k].rel);
        sc_trace *t = load(rel);
        counts c = count(t);
        if (c.events != hta[k].events || c.kernels != hta[k].kernels || c.nccl != hta[k].nccl ||
            c.cuda_sync != hta[k].cuda_sync || t->rank != hta[k].rank ||
            t->world_size != hta[k].world_size || t->base_time_ns != hta[k].base_ns)
            fail_msg("%s: events %zu kernels %zu nccl %zu cuda_sync %zu rank %lld world %lld "
                     "base %lld",
                     rel, c.events, c.kernels, c.nccl, c.cuda_sync, (long long)t->rank,
                     (long long)t->world_size, (long long)t->base_time_ns);
        sc_trace_free(t);
    }
}

/* 2022 traces name the launch flows async_cpu_to_gpu instead of ac2g. */
static void test_old_flow_category(void **state) {
    (void)state;
    if (!sc_test_big_ok()) skip();
    sc_trace *t = load("hta-testdata/trace_diff/control/control.json.gz");
    counts c = count(t);
    assert_int_equal(c.flows, 34142);
    assert_int_equal(c.cpu_op, 40506);
    assert_int_equal(c.runtime, 24692);
    sc_trace_free(t);
}

/* Fractional-microsecond absolute timestamps keep every nanosecond. */
static void test_ns_resolution(void **state) {
    (void)state;
    if (!sc_test_big_ok()) skip();
    sc_trace *t = load("hta-testdata/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    const sc__event *e = nth_of_kind(t, -1, 'X', false);
    assert_string_equal(sc__trace_str(t, e->name), "autograd::engine::evaluate_function: DivBackward1");
    assert_int_equal(e->ts, INT64_C(1712195495519689047));
    assert_int_equal(e->dur, 63813);
    e = nth_of_kind(t, SC_K_KERNEL, 'X', false);
    assert_int_equal(e->ts, INT64_C(1712195495505582988));
    assert_int_equal(e->dur, 4928);
    assert_int_equal(e->correlation, 135071);
    e = nth_of_kind(t, SC_K_KERNEL, 'X', true);
    assert_int_equal(e->ts, INT64_C(1712195495985358440));
    assert_int_equal(e->dur, 253727);
    /* collective metadata on record_param_comms */
    size_t coll = 0;
    const sc__event *ev = sc__trace_events(t);
    for (size_t k = 0; k < t->events.len; k++) {
        const sc__event_ext *x = sc__trace_ext(t, &ev[k]);
        coll += x && x->coll_name != SC__NONE;
    }
    assert_int_equal(coll, 45);
    sc_trace_free(t);
}

/* Relative fractional timestamps plus baseTimeNanoseconds (written after
 * traceEvents) give absolute ns. */
static void test_base_time_ns(void **state) {
    (void)state;
    if (sc_test_big_ok()) {
        sc_trace *t = load("hta-testdata/nccl_parser_config/nccl_data.json.gz");
        const sc__event *e = nth_of_kind(t, -1, 'X', false);
        assert_int_equal(e->ts, INT64_C(1716423322522690655));
        assert_int_equal(e->dur, 156777);
        e = nth_of_kind(t, SC_K_KERNEL, 'X', false);
        assert_int_equal(e->ts, INT64_C(1716423322983543183));
        assert_int_equal(e->dur, 41407);
        e = nth_of_kind(t, SC_K_KERNEL, 'X', true);
        assert_int_equal(e->ts, INT64_C(1716423322980765972));
        size_t coll = 0, kcoll = 0;
        const sc__event *ev = sc__trace_events(t);
        for (size_t k = 0; k < t->events.len; k++) {
            const sc__event_ext *x = sc__trace_ext(t, &ev[k]);
            if (!x || x->coll_name == SC__NONE) continue;
            coll++;
            kcoll += ev[k].kind == SC_K_KERNEL;
        }
        assert_int_equal(coll, 48);
        assert_int_equal(kcoll, 21);
        sc_trace_free(t);
    }
    /* ROCm: device pid 2, stream tid 0 */
    sc_trace *t = load("hta-testdata/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    const sc__event *e = nth_of_kind(t, -1, 'X', false);
    assert_int_equal(e->ts, INT64_C(1739836029604595407));
    assert_int_equal(e->dur, 340024);
    e = nth_of_kind(t, SC_K_KERNEL, 'X', false);
    assert_int_equal(e->ts, INT64_C(1739836029603771648));
    assert_int_equal(e->dur, 6880);
    assert_int_equal(e->stream, 0);
    assert_int_equal(e->device, 2);
    assert_int_equal(sc__trace_track_at(t, e->track)->pid, 2);
    e = nth_of_kind(t, SC_K_KERNEL, 'X', true);
    assert_int_equal(e->ts, INT64_C(1739836029612357612));
    assert_int_equal(dur_of(t, "ProfilerStep#1"), 9288291);
    assert_int_equal(dur_of(t, "ProfilerStep#2"), 49073);
    /* metadata events without a time stay at 0, not at the base time */
    const sc__event *m = nth_of_kind(t, -1, 'M', false);
    assert_non_null(m);
    assert_true(m->ts == 0 || m->ts > INT64_C(1735632360000000000));
    sc_trace_free(t);
}

/* cuda_sync events keep the fields the graph needs for cross-stream edges. */
static void test_cuda_sync_fields(void **state) {
    (void)state;
    sc_trace *t = load("hta-testdata/critical_path/cuda_event_sync/event_sync_trace.json.gz");
    const sc__event *ev = sc__trace_events(t);
    size_t syncs = 0, with_corr = 0;
    for (size_t k = 0; k < t->events.len; k++) {
        if (ev[k].kind != SC_K_CUDA_SYNC) continue;
        syncs++;
        const sc__event_ext *x = sc__trace_ext(t, &ev[k]);
        with_corr += x && x->wait_corr >= 0;
    }
    assert_int_equal(syncs, 4);
    assert_true(with_corr >= 1);
    sc_trace_free(t);
}

/* ---------------------------------------------------- every trace, any window */

static const char *kineto_files[] = {
    "megatron-tp8-a100/megatron_kineto_0.json.gz",
    "megatron-tp8-a100/megatron_kineto_1.json.gz",
    "megatron-tp8-a100/megatron_kineto_2.json.gz",
    "megatron-tp8-a100/megatron_kineto_3.json.gz",
    "megatron-tp8-a100/megatron_kineto_4.json.gz",
    "megatron-tp8-a100/megatron_kineto_5.json.gz",
    "megatron-tp8-a100/megatron_kineto_6.json.gz",
    "megatron-tp8-a100/megatron_kineto_7.json.gz",
    "param-dlrm-8rank/kineto/worker0_step_12.1694128201545.pt.trace.json",
    "param-dlrm-8rank/kineto/worker1_step_12.1694128201556.pt.trace.json",
    "param-dlrm-8rank/kineto/worker2_step_12.1694128201554.pt.trace.json",
    "param-dlrm-8rank/kineto/worker3_step_12.1694128201557.pt.trace.json",
    "param-dlrm-8rank/kineto/worker4_step_12.1694128201547.pt.trace.json",
    "param-dlrm-8rank/kineto/worker5_step_12.1694128201549.pt.trace.json",
    "param-dlrm-8rank/kineto/worker6_step_12.1694128201553.pt.trace.json",
    "param-dlrm-8rank/kineto/worker7_step_12.1694128201553.pt.trace.json",
};

static void same_str(const sc_trace *a, uint32_t ia, const sc_trace *b, uint32_t ib, const char *what,
                     size_t k) {
    if (ia == SC__NONE || ib == SC__NONE) {
        if (ia != ib) fail_msg("%s: event %zu: %s present in one read only", a->path, k, what);
        return;
    }
    if (strcmp(sc__trace_str(a, ia), sc__trace_str(b, ib)) != 0)
        fail_msg("%s: event %zu: %s '%s' vs '%s'", a->path, k, what, sc__trace_str(a, ia),
                 sc__trace_str(b, ib));
}

/* Asserts two reads of one file hold the same events, field by field. */
static void same_trace(const sc_trace *a, const sc_trace *b) {
    assert_int_equal(a->events.len, b->events.len);
    assert_int_equal(a->tracks.len, b->tracks.len);
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->world_size, b->world_size);
    assert_int_equal(a->base_time_ns, b->base_time_ns);
    assert_int_equal(a->devices.len, b->devices.len);
    assert_int_equal(a->input_bytes, b->input_bytes);
    const sc__event *ea = sc__trace_events(a), *eb = sc__trace_events(b);
    for (size_t k = 0; k < a->events.len; k++) {
        const sc__event *x = &ea[k], *y = &eb[k];
        if (x->ts != y->ts || x->dur != y->dur || x->correlation != y->correlation ||
            x->external_id != y->external_id || x->stream != y->stream || x->device != y->device ||
            x->kind != y->kind || x->ph != y->ph || x->flags != y->flags || x->cbid != y->cbid)
            fail_msg("%s: event %zu differs", a->path, k);
        same_str(a, x->name, b, y->name, "name", k);
        same_str(a, x->cat, b, y->cat, "cat", k);
        const sc__track *ta = sc__trace_track_at(a, x->track), *tb = sc__trace_track_at(b, y->track);
        if (ta->pid != tb->pid || ta->tid != tb->tid)
            fail_msg("%s: event %zu: track differs", a->path, k);
        same_str(a, ta->pid_str, b, tb->pid_str, "pid", k);
        same_str(a, ta->tid_str, b, tb->tid_str, "tid", k);
        const sc__event_shapes *sa = sc__trace_shapes(a, x), *sb = sc__trace_shapes(b, y);
        if (!sa != !sb) fail_msg("%s: event %zu: shapes in one read only", a->path, k);
        if (sa) {
            same_str(a, sa->dims, b, sb->dims, "Input Dims", k);
            same_str(a, sa->types, b, sb->types, "Input type", k);
        }
        const sc__event_ext *xa = sc__trace_ext(a, x), *xb = sc__trace_ext(b, y);
        if (!xa || !xb) {
            if (xa != xb) fail_msg("%s: event %zu: extras in one read only", a->path, k);
            continue;
        }
        if (xa->bytes != xb->bytes || xa->in_nelems != xb->in_nelems ||
            xa->out_nelems != xb->out_nelems || xa->seq != xb->seq ||
            xa->group_size != xb->group_size || xa->wait_corr != xb->wait_corr ||
            xa->wait_stream != xb->wait_stream || memcmp(xa->grid, xb->grid, sizeof xa->grid) ||
            memcmp(xa->block, xb->block, sizeof xa->block))
            fail_msg("%s: event %zu: extras differ", a->path, k);
        same_str(a, xa->coll_name, b, xb->coll_name, "Collective name", k);
        same_str(a, xa->pg_ranks, b, xb->pg_ranks, "Process Group Ranks", k);
        same_str(a, xa->label, b, xb->label, "label", k);
    }
}

static void window_equal(const char *rel) {
    sc_trace *a = load(rel);
    sc_load_options tiny = {.window_bytes = 64};
    sc_trace *b = load_opts(rel, &tiny);
    same_trace(a, b);
    sc_trace_free(a);
    sc_trace_free(b);
}

static void test_tiny_window_same_result(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof kineto_files / sizeof kineto_files[0]; k++)
        window_equal(kineto_files[k]);
    for (size_t k = 0; k < sizeof hta / sizeof hta[0]; k++) {
        if (hta[k].big && !sc_test_big_ok()) continue;
        char rel[256];
        snprintf(rel, sizeof rel, "hta-testdata/%s", hta[k].rel);
        window_equal(rel);
    }
}

/* Every trace under shared/traces loads as one set: Kineto files parse,
 * execution traces are told apart and skipped or read, nothing fails. */
static void test_every_shared_trace_parses(void **state) {
    (void)state;
    if (!sc_test_big_ok()) skip();
    const char *root = sc_test_trace("");
    sc_traceset *set = NULL;
    sc_error err;
    sc_status st = sc_traceset_load(&root, 1, NULL, &set, &err);
    if (st != SC_OK) {
        char buf[1024];
        fail_msg("%s", sc_error_format(&err, buf, sizeof buf));
    }
    size_t kineto = 0;
    for (size_t i = 0; i < sc_traceset_count(set); i++)
        kineto += strstr(sc_trace_path(sc_traceset_trace(set, i)), ".json") != NULL;
    /* megatron-tp8-a100, param-dlrm-8rank, hta-testdata, tracelens */
    assert_int_equal(kineto, 8 + 8 + 13 + 20);
    sc_traceset_free(set);
}

/* gzip is detected by content: plain JSON named .json.gz and gzip named
 * .json read the same as the original, and so does a memory buffer. */
static void test_gzip_by_content(void **state) {
    (void)state;
    const char *rel = "megatron-tp8-a100/megatron_kineto_0.json.gz";
    sc_trace *ref = load(rel);
    size_t n;
    unsigned char *json = sc_test_read_file(sc_test_trace(rel), &n);
    assert_non_null(json);
    assert_int_equal(n, ref->input_bytes);

    char plain_gz[256];
    snprintf(plain_gz, sizeof plain_gz, "%s", sc_test_tmpfile(json, n, ".json.gz"));
    sc_trace *t = NULL;
    sc_error err;
    assert_int_equal(sc_trace_load(plain_gz, NULL, &t, &err), SC_OK);
    same_trace(ref, t);
    sc_trace_free(t);
    unlink(plain_gz);

    FILE *f = fopen(sc_test_trace(rel), "rb");
    assert_non_null(f);
    static unsigned char gz[1 << 20];
    size_t gn = fread(gz, 1, sizeof gz, f);
    fclose(f);
    assert_true(gn > 0 && gn < sizeof gz);
    char gz_json[256];
    snprintf(gz_json, sizeof gz_json, "%s", sc_test_tmpfile(gz, gn, ".json"));
    assert_int_equal(sc_trace_load(gz_json, NULL, &t, &err), SC_OK);
    same_trace(ref, t);
    sc_trace_free(t);
    unlink(gz_json);

    assert_int_equal(sc_trace_load_buffer(json, n, "mem.json", NULL, &t, &err), SC_OK);
    same_trace(ref, t);
    sc_trace_free(t);
    assert_int_equal(sc_trace_load_buffer(gz, gn, "mem.json.gz", NULL, &t, &err), SC_OK);
    same_trace(ref, t);
    sc_trace_free(t);
    free(json);
    sc_trace_free(ref);
}

/* ------------------------------------------------------ format variations */

static sc_trace *load_text(const char *json) {
    sc_trace *t = NULL;
    sc_error err;
    sc_status st = sc_trace_load_buffer(json, strlen(json), "text.json", NULL, &t, &err);
    if (st != SC_OK) fail_msg("%s", err.message);
    return t;
}

static void test_metadata_after_events(void **state) {
    (void)state;
    sc_trace *t = load_text(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1.5, "
        "\"dur\": 2, \"pid\": 0, \"tid\": 7, \"args\": {\"stream\": 7}}],"
        " \"distributedInfo\": {\"rank\": 3, \"world_size\": 4, \"backend\": \"nccl\"},"
        " \"baseTimeNanoseconds\": 1000000000}");
    assert_int_equal(t->rank, 3);
    assert_int_equal(t->world_size, 4);
    assert_int_equal(t->events.len, 1);
    assert_int_equal(sc__trace_events(t)[0].ts, 1000001500);
    sc_trace_free(t);
    /* the same with the metadata first, and the rank as a string */
    t = load_text("{\"distributedInfo\": {\"rank\": \"3\", \"world_size\": 4},"
                  " \"baseTimeNanoseconds\": 1000000000, \"traceEvents\": [{\"ph\": \"X\","
                  " \"name\": \"k\", \"ts\": 1.5, \"pid\": \"Spans\", \"tid\": \"x\"}]}");
    assert_int_equal(t->rank, 3);
    assert_int_equal(sc__trace_events(t)[0].ts, 1000001500);
    const sc__track *k = sc__trace_track_at(t, sc__trace_events(t)[0].track);
    assert_string_equal(sc__trace_str(t, k->pid_str), "Spans");
    assert_string_equal(sc__trace_str(t, k->tid_str), "x");
    sc_trace_free(t);
}

/* Loads `count` events, the i-th named name_of(i), and checks that each
 * keeps its name. name_of writes the name as JSON text (json) and as the
 * bytes it stands for (want, *want_n of them). */
#define NAME_MAX_BYTES 1200
typedef void name_fn(unsigned i, char *json, char *want, size_t *want_n);
static void names_survive(unsigned count, name_fn *name_of) {
    char json[NAME_MAX_BYTES], want[NAME_MAX_BYTES];
    size_t n;
    sc__buf b;
    sc__buf_init(&b);
    sc__buf_puts(&b, "{\"traceEvents\":[");
    for (unsigned i = 0; i < count; i++) {
        name_of(i, json, want, &n);
        sc__buf_printf(&b, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,"
                           "\"ts\":%u,\"dur\":1}",
                       i ? "," : "", json, i);
    }
    sc__buf_puts(&b, "]}");
    assert_false(b.oom);
    sc_trace *t = load_text(b.data);
    sc__buf_free(&b);
    assert_int_equal(t->events.len, count);
    const sc__event *ev = sc__trace_events(t);
    for (unsigned i = 0; i < count; i++) {
        name_of(i, json, want, &n);
        const char *got = sc__trace_str(t, ev[i].name);
        if (memcmp(got, want, n + 1) != 0) fail_msg("event %u: name '%s', want '%s'", i, got, json);
    }
    sc_trace_free(t);
}

/* Names the interning cache keys alike (same length, same first and last
 * 8 bytes, so the same slot and key), names of 8 to 16 bytes that the key
 * covers whole, and one with a NUL byte, cycling. */
static void alike_name(unsigned i, char *json, char *want, size_t *want_n) {
    static const char *names[] = {"aaaaaaaaXbbbbbbbb", "aaaaaaaaYbbbbbbbb", "aaaaaaaabbbbbbbb",
                                  "aaaaaaaXbbbbbbbb", "aaaaaaa", "aaaaaaa\\u0000", "aaaaaaaa",
                                  "aaaaaaaaXYbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                                  "aaaaaaaaXZbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"};
    const unsigned n = sizeof names / sizeof *names;
    const char *name = names[(i * 5 + i / n) % n];
    strcpy(json, name);
    strcpy(want, name);
    *want_n = strlen(name);
    if (strstr(name, "\\u0000")) {
        memcpy(want, "aaaaaaa\0", 9);
        *want_n = 8;
    }
}

/* 1,500 names of 16 bytes, each twice: "aaaaaaaa" and 8 digits. */
static void digits_name(unsigned i, char *json, char *want, size_t *want_n) {
    *want_n = (size_t)snprintf(json, NAME_MAX_BYTES, "aaaaaaaa%08u", i * 7 % 1500);
    strcpy(want, json);
}

/* 1,100 names of 8 to 1,107 letters 'a', each twice. */
static void letters_name(unsigned i, char *json, char *want, size_t *want_n) {
    size_t n = 8 + i * 13 % 1100;
    memset(json, 'a', n);
    json[n] = 0;
    strcpy(want, json);
    *want_n = n;
}

/* Each event keeps its own name, read key by key (first events) and by
 * template, however alike the names are to the interning cache. */
static void test_intern_cache_alike(void **state) {
    (void)state;
    names_survive(90, alike_name);
    /* More 16-byte names alike in their first 8 bytes than the cache has
     * slots: some share a slot and differ only in their last 8 bytes. */
    names_survive(3000, digits_name);
    /* Names of one letter, of more lengths than the cache has slots: their
     * first and last 8 bytes agree, so only the length tells two apart
     * that share a slot. */
    names_survive(2200, letters_name);
}

static void test_args_before_ph(void **state) {
    (void)state;
    /* args parsed once ph is known, even when ph comes last */
    sc_trace *t = load_text("{\"traceEvents\": [{\"args\": {\"name\": \"python\"}, \"name\": "
                            "\"process_name\", \"pid\": 5, \"ph\": \"M\"},"
                            "{\"args\": {\"correlation\": 9, \"stream\": 7, \"grid\": [2, 3, 4]},"
                            " \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1, \"ph\": "
                            "\"X\"}, {}]}");
    assert_int_equal(t->events.len, 2); /* {} holds nothing and is dropped */
    const sc__event *ev = sc__trace_events(t);
    const sc__event_ext *x = sc__trace_ext(t, &ev[0]);
    assert_non_null(x);
    assert_string_equal(sc__trace_str(t, x->label), "python");
    assert_int_equal(ev[1].correlation, 9);
    assert_int_equal(ev[1].stream, 7);
    x = sc__trace_ext(t, &ev[1]);
    assert_int_equal(x->grid[2], 4);
    sc_trace_free(t);
}

static void test_bare_array(void **state) {
    (void)state;
    sc_trace *t = load_text("[{\"ph\": \"i\", \"name\": \"a\", \"ts\": 5, \"s\": \"t\"}, "
                            "{\"ph\": \"X\", \"name\": \"b\", \"ts\": 6, \"dur\": 1}]\n");
    assert_int_equal(t->events.len, 2);
    assert_int_equal(sc__trace_events(t)[0].ts, 5000);
    sc_trace_free(t);
}

/* Chunks (src/io/chunks.c): cursors opened at odd offsets of chunks as
 * they are decoded, each read to the end on a thread of its own, in odd
 * read sizes, while the decoder keeps only a few chunks: every cursor gets
 * exactly the bytes a direct read has from its offset on. */
#define CURSORS 6
typedef struct cursor_test {
    pthread_mutex_t mu;
    pthread_cond_t opened;
    sc__source cur[CURSORS];
    uint64_t from[CURSORS];
    bool open[CURSORS];
    unsigned char *got[CURSORS];
    size_t len[CURSORS];
    unsigned next; /* the next cursor a reader thread takes */
    size_t chunk;
} cursor_test;

static void open_cursor(void *ctx, sc__chunks *c, const char *bytes, size_t len, uint64_t offset) {
    cursor_test *ct = ctx;
    if (!bytes || offset / ct->chunk >= CURSORS) return; /* cursor k in chunk k */
    unsigned k = (unsigned)(offset / ct->chunk);
    ct->from[k] = offset + (k * 7919) % len;
    sc_error err;
    assert_int_equal(sc__source_open_chunks(&ct->cur[k], c, ct->from[k], &err), SC_OK);
    pthread_mutex_lock(&ct->mu);
    ct->open[k] = true;
    pthread_cond_broadcast(&ct->opened);
    pthread_mutex_unlock(&ct->mu);
}

static void *read_cursor(void *arg) {
    cursor_test *ct = arg;
    pthread_mutex_lock(&ct->mu);
    unsigned k = ct->next++;
    while (!ct->open[k]) pthread_cond_wait(&ct->opened, &ct->mu);
    pthread_mutex_unlock(&ct->mu);
    size_t cap = 1 << 20, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (len == cap) buf = realloc(buf, cap *= 2);
        assert_non_null(buf);
        size_t got, want = 1 + (len * 7919) % 30000;
        if (want > cap - len) want = cap - len;
        sc_error err;
        assert_int_equal(sc__source_read(&ct->cur[k], buf + len, want, &got, &err), SC_OK);
        if (!got) break;
        len += got;
    }
    ct->got[k] = buf;
    ct->len[k] = len;
    return NULL;
}

static void test_gzip_chunk_cursors(void **state) {
    (void)state;
    const char *path = sc_test_trace("megatron-tp8-a100/megatron_kineto_2.json.gz");
    size_t n;
    unsigned char *direct = sc_test_read_file(path, &n); /* gunzipped */
    assert_non_null(direct);
    sc__source src;
    sc_error err;
    assert_int_equal(sc__source_open_file(&src, path, &err), SC_OK);
    cursor_test ct = {.chunk = n / 40}; /* 40 chunks, 3 kept at a time */
    pthread_mutex_init(&ct.mu, NULL);
    pthread_cond_init(&ct.opened, NULL);
    sc__chunks *c = sc__chunks_start(&src, ct.chunk, 3, open_cursor, &ct);
    assert_non_null(c);
    pthread_t tid[CURSORS];
    for (unsigned k = 0; k < CURSORS; k++) assert_int_equal(pthread_create(&tid[k], NULL, read_cursor, &ct), 0);
    for (unsigned k = 0; k < CURSORS; k++) pthread_join(tid[k], NULL);
    for (unsigned k = 0; k < CURSORS; k++) {
        assert_int_equal(ct.len[k], n - ct.from[k]);
        assert_memory_equal(ct.got[k], direct + ct.from[k], ct.len[k]);
        free(ct.got[k]);
        sc__source_close(&ct.cur[k]);
    }
    sc__chunks_free(c);
    sc__source_close(&src);
    pthread_mutex_destroy(&ct.mu);
    pthread_cond_destroy(&ct.opened);
    free(direct);
}

/* A gzip file read with threads to spare (kineto_parallel.c) gives the same
 * trace, and a damaged one fails with the same message and offset
 * (sc_trace_load reads it again sequentially). */
static void test_gzip_threads_same_result(void **state) {
    (void)state;
    const char *gz[] = {"megatron-tp8-a100/megatron_kineto_2.json.gz",
                        "hta-testdata/trace_filter/sampled_rank-0.json.gz"};
    for (size_t k = 0; k < 2; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", sc_test_trace(gz[k]));
        sc_load_options one = {.threads = 1}, two = {.threads = 2};
        sc_trace *t1 = load_opts(gz[k], &one), *t2 = load_opts(gz[k], &two);
        same_trace(t1, t2);
        sc_trace_free(t1);
        sc_trace_free(t2);
        /* damaged copies: a flipped byte, and the file cut short */
        for (int damage = 0; damage < 2; damage++) {
            size_t raw_n;
            unsigned char *raw = sc_test_read_file(path, &raw_n); /* gunzipped */
            size_t zn;
            unsigned char *z = sc_test_gzip(raw, raw_n, &zn);
            free(raw);
            if (damage == 0) z[zn / 2] ^= 0xff;
            else zn = zn * 2 / 3;
            const char *bad = sc_test_tmpfile(z, zn, ".json.gz");
            free(z);
            sc_trace *t = NULL;
            sc_error e1, e2;
            sc_status s1 = sc_trace_load(bad, &one, &t, &e1);
            sc_status s2 = sc_trace_load(bad, &two, &t, &e2);
            assert_int_not_equal(s1, SC_OK);
            assert_int_equal(s1, s2);
            assert_string_equal(e1.message, e2.message);
            assert_int_equal(e1.offset, e2.offset);
            unlink(bad);
        }
    }
}

/* sc__source_expected_size: a plain file's size; a gzip file's trailer,
 * read modulo 4 GiB above the compressed size and what was read; nothing
 * for a pipe, or past a plain file's end. */
static void test_expected_size(void **state) {
    (void)state;
    const char *rel = "megatron-tp8-a100/megatron_kineto_2.json.gz";
    size_t n;
    unsigned char *json = sc_test_read_file(sc_test_trace(rel), &n);
    assert_non_null(json);
    sc__source src;
    sc_error err;
    assert_int_equal(sc__source_open_file(&src, sc_test_trace(rel), &err), SC_OK);
    assert_int_equal(sc__source_expected_size(&src, 0), n);
    assert_int_equal(sc__source_expected_size(&src, n), n);
    sc__source_close(&src);
    char path[256];
    snprintf(path, sizeof path, "%s", sc_test_tmpfile(json, n, ".json"));
    assert_int_equal(sc__source_open_file(&src, path, &err), SC_OK);
    assert_int_equal(sc__source_expected_size(&src, 7), n);
    assert_int_equal(sc__source_expected_size(&src, n + 1), 0); /* grown since: unknown */
    sc__source_close(&src);
    unlink(path);
    free(json);

    /* a trailer that says 16 bytes, below the 100 compressed: 4 GiB more */
    unsigned char gz[100] = {0x1f, 0x8b, 8};
    gz[96] = 16;
    const uint64_t wrap = (uint64_t)1 << 32;
    assert_int_equal(sc__source_open_mem(&src, gz, sizeof gz, "wrapped.json.gz", &err), SC_OK);
    assert_int_equal(sc__source_expected_size(&src, 0), 16 + wrap);
    assert_int_equal(sc__source_expected_size(&src, 16 + wrap), 16 + wrap);
    assert_int_equal(sc__source_expected_size(&src, 17 + wrap), 16 + 2 * wrap);
    sc__source_close(&src);
    assert_int_equal(sc__source_open_mem(&src, gz, 17, "short.json.gz", &err), SC_OK);
    assert_int_equal(sc__source_expected_size(&src, 0), 0); /* no room for a trailer */
    sc__source_close(&src);

    snprintf(path, sizeof path, "%s/stepcast-fifo-%ld", sc_test_tmpdir(), (long)getpid());
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(sc__source_open_file(&src, path, &err), SC_OK); /* no writer: empty */
    assert_int_equal(sc__source_expected_size(&src, 0), 0);
    sc__source_close(&src);
    unlink(path);
}

/* The reader grows its arrays to the size the input is on course for
 * (kineto.c, grown_cap). Where that would pass the memory budget it
 * doubles them instead, as before: 40,000 small events followed by 8 MB of
 * blanks project to ~10 MB of events, over a budget of 6 MB that the
 * events themselves fit with room for a doubling; the load succeeds and
 * reads what an unbounded one does. */
static void test_sized_growth_within_budget(void **state) {
    (void)state;
    enum { EVENTS = 40000 };
    const size_t blanks = (size_t)8 << 20;
    size_t cap = EVENTS * 96 + blanks + 64, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    n += (size_t)snprintf(text, cap, "{\"traceEvents\":[");
    for (int i = 0; i < EVENTS; i++)
        n += (size_t)snprintf(text + n, cap - n,
                              "%s{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1}",
                              i ? "," : "", i);
    memset(text + n, ' ', blanks);
    n += blanks;
    n += (size_t)snprintf(text + n, cap - n, "]}");
    const char *path = sc_test_tmpfile(text, n, ".json");
    assert_non_null(path);
    sc_load_options one = {.threads = 1}, tight = {.threads = 1, .max_memory_bytes = (uint64_t)6 << 20};
    sc_trace *ref = NULL, *t = NULL;
    sc_error err;
    assert_int_equal(sc_trace_load(path, &one, &ref, &err), SC_OK);
    assert_int_equal(sc_trace_event_count(ref), EVENTS);
    if (sc_trace_load(path, &tight, &t, &err) != SC_OK) fail_msg("%s", err.message);
    same_trace(ref, t);
    sc_trace_free(t);
    sc_trace_free(ref);
    unlink(path);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_megatron_ranks),
        cmocka_unit_test(test_megatron_rank0_details),
        cmocka_unit_test(test_dlrm_ranks),
        cmocka_unit_test(test_hta_files),
        cmocka_unit_test(test_old_flow_category),
        cmocka_unit_test(test_ns_resolution),
        cmocka_unit_test(test_base_time_ns),
        cmocka_unit_test(test_cuda_sync_fields),
        cmocka_unit_test(test_tiny_window_same_result),
        cmocka_unit_test(test_every_shared_trace_parses),
        cmocka_unit_test(test_gzip_by_content),
        cmocka_unit_test(test_metadata_after_events),
        cmocka_unit_test(test_intern_cache_alike),
        cmocka_unit_test(test_args_before_ph),
        cmocka_unit_test(test_bare_array),
        cmocka_unit_test(test_gzip_chunk_cursors),
        cmocka_unit_test(test_gzip_threads_same_result),
        cmocka_unit_test(test_expected_size),
        cmocka_unit_test(test_sized_growth_within_budget),
    };
    return cmocka_run_group_tests_name("kineto reader", tests, NULL, NULL);
}
