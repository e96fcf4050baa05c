/*
 * test_calibrate.c - the launch latency calibration (src/models/calibrate.c)
 * on a graph built by hand: which kernels give a sample, and the same
 * result whether its temporary arrays come from a spare block or not; the
 * cost of a sync that need not wait; a stream held by untraced work.
 */
#include "testutil.h"
#include "testgraph.h"

#include "models/calibrate.h"

#include <stdlib.h>

/* One rank: three launch calls on a thread, their kernels on one stream.
 *   L1 100..110 -> K1 at 115: the stream's first task, no sample (5);
 *   L2 200..210 -> K2 230..320: the stream was idle at L2, sample 20;
 *   L3 300..310 -> K3 at 325: K2, the previous task on the stream, ran
 *   until 320, after L3 was called: no sample (15).
 * Only 20 is a sample. Counting either of the others would make the
 * lower median 5 or 15. With k3_from_k2, K3's LAUNCH edge comes from K2
 * instead of L3 (only a crafted Chakra file has one: test_launch_from_a_
 * gpu_task). */
static sc__graph *launches(bool keep_spare, bool k3_from_k2) {
    uint32_t thread;
    sc__graph *g = sc_test_graph_one_thread(&thread);
    uint32_t stream = sc__graph_add_proc(g, 0, SC_P_STREAM, 0, 7);
    assert_int_not_equal(stream, SC__NONE);
    uint32_t l1 = sc_test_task(g, thread, 0, SC_T_LAUNCH, 100, 10, "cudaLaunchKernel");
    uint32_t l2 = sc_test_task(g, thread, 1, SC_T_LAUNCH, 200, 10, "cudaLaunchKernel");
    uint32_t l3 = sc_test_task(g, thread, 2, SC_T_LAUNCH, 300, 10, "cudaLaunchKernel");
    uint32_t k1 = sc_test_task(g, stream, 0, SC_T_KERNEL, 115, 50, "k1");
    uint32_t k2 = sc_test_task(g, stream, 1, SC_T_KERNEL, 230, 90, "k2");
    uint32_t k3 = sc_test_task(g, stream, 2, SC_T_KERNEL, 325, 10, "k3");
    assert_true(sc__graph_add_edge(g, l1, k1, SC_E_LAUNCH));
    assert_true(sc__graph_add_edge(g, l2, k2, SC_E_LAUNCH));
    assert_true(sc__graph_add_edge(g, k3_from_k2 ? k2 : l3, k3, SC_E_LAUNCH));
    g->keep_spare = keep_spare;
    sc_error err;
    assert_int_equal(sc__graph_finish(g, true, &err), SC_OK);
    return g;
}

static int64_t latency_with(const sc__graph *g, sc__spare *spare) {
    int64_t lat = -1;
    assert_true(sc__calibrate_launch(g, &lat, NULL, spare));
    return lat;
}

static void test_samples_follow_the_stream(void **state) {
    (void)state;
    sc__graph *g = launches(false, false);
    assert_null(g->spare.p);
    assert_int_equal(latency_with(g, NULL), 20);
    sc__graph_free(g);
}

/* The graph kept its edge list as a spare: calibration takes it, gives
 * it back, and says the same. */
static void test_spare_from_the_edge_list(void **state) {
    (void)state;
    sc__graph *g = launches(true, false);
    assert_non_null(g->spare.p);
    void *block = g->spare.p;
    size_t bytes = g->spare.bytes;
    assert_int_equal(latency_with(g, &g->spare), 20);
    assert_ptr_equal(g->spare.p, block);
    assert_int_equal(g->spare.bytes, bytes);
    sc__graph_free(g); /* frees the spare: valgrind and ASan see a leak else */
}

/* A LAUNCH edge out of a GPU task (a crafted Chakra file) is no launch
 * call: with K2 "launching" K3, its successor on the stream, K3 still waits
 * for K2 and gives no sample; taken as a launch it would give 5. */
static void test_launch_from_a_gpu_task(void **state) {
    (void)state;
    sc__graph *g = launches(false, true);
    assert_int_equal(latency_with(g, NULL), 20);
    sc__graph_free(g);
}

/* Spares of every size from none to room for everything: pred_end and
 * launch come from it once it holds them (12 bytes a task: its bytes then
 * change), else they are allocated; the result is the same, and the block
 * is given back, its size untouched. */
static void test_spare_of_any_size(void **state) {
    (void)state;
    sc__graph *g = launches(false, false);
    const size_t fixed = g->tasks.len * 12;
    for (size_t bytes = 8; bytes <= 512; bytes += 8) {
        sc__spare spare = {0};
        sc__spare_keep(&spare, malloc(bytes), bytes);
        assert_non_null(spare.p);
        unsigned char *block = spare.p, pattern[512];
        memset(block, 0xab, bytes);
        memset(pattern, 0xab, sizeof pattern);
        assert_int_equal(latency_with(g, &spare), 20);
        assert_ptr_equal(spare.p, block);
        assert_int_equal(spare.bytes, bytes);
        assert_int_equal(memcmp(block, pattern, bytes) != 0, bytes >= fixed);
        sc__spare_free(&spare);
        assert_null(spare.p);
    }
    sc__graph_free(g);
}

static void test_spare_take_and_keep(void **state) {
    (void)state;
    sc__spare s = {0};
    size_t got = 0;
    assert_null(sc__spare_take(NULL, 1, &got));
    assert_null(sc__spare_take(&s, 0, &got));
    sc__spare_keep(&s, malloc(64), 64);
    assert_null(sc__spare_take(&s, 65, &got)); /* too small: stays */
    assert_non_null(s.p);
    void *p = sc__spare_take(&s, 64, &got);
    assert_non_null(p);
    assert_int_equal(got, 64);
    assert_null(s.p);
    sc__spare_keep(&s, p, got);
    sc__spare_keep(&s, malloc(16), 16); /* frees the block it held */
    assert_int_equal(s.bytes, 16);
    sc__spare_free(&s);
    assert_null(s.p);
    assert_int_equal(s.bytes, 0);

    /* borrow: the spare's block when it has room, else a fresh one, which
     * return frees (valgrind and ASan see a leak or a double free) */
    void *fresh = sc__spare_borrow(NULL, 32, &got);
    assert_non_null(fresh);
    assert_int_equal(got, 0);
    sc__spare_return(NULL, fresh, got);
    sc__spare_keep(&s, malloc(64), 64);
    void *held = s.p;
    fresh = sc__spare_borrow(&s, 65, &got); /* too small: the spare stays */
    assert_true(fresh != held);
    assert_int_equal(got, 0);
    assert_ptr_equal(s.p, held);
    sc__spare_return(&s, fresh, got);
    assert_ptr_equal(s.p, held);
    p = sc__spare_borrow(&s, 64, &got);
    assert_ptr_equal(p, held);
    assert_int_equal(got, 64);
    assert_null(s.p);
    sc__spare_return(&s, p, got); /* back to the spare */
    assert_ptr_equal(s.p, held);
    assert_int_equal(s.bytes, 64);
    sc__spare_free(&s);
}

/* The dispatch gap: one stream, K1 at 100, then K2..K7 each launched long
 * before the previous one ended (queued), starting 1, 2, 2, 3, 90 and 7000
 * ns after it. The cut is 4 x the median (2) + 5 us = 5008: 7000 is a
 * stall, not dispatch; the gap is the mean of the rest, 98 / 5. K8 was
 * launched after K7 ended: its stream was idle, it is the latency's one
 * sample (5), not a dispatch gap. */
static void test_dispatch_gap(void **state) {
    (void)state;
    uint32_t thread;
    sc__graph *g = sc_test_graph_one_thread(&thread);
    uint32_t stream = sc__graph_add_proc(g, 0, SC_P_STREAM, 0, 7);
    const int64_t gaps[] = {0, 1, 2, 2, 3, 90, 7000};
    int64_t at = 100;
    for (uint32_t i = 0; i < 7; i++) {
        at += gaps[i];
        uint32_t l = sc_test_task(g, thread, i, SC_T_LAUNCH, 10 + i, 1, "cudaLaunchKernel");
        uint32_t k = sc_test_task(g, stream, i, SC_T_KERNEL, at, 100, "k");
        assert_true(sc__graph_add_edge(g, l, k, SC_E_LAUNCH));
        at += 100;
    }
    /* K8: launched 50 after K7 ended, starts 5 after its launch returned. */
    uint32_t l8 = sc_test_task(g, thread, 7, SC_T_LAUNCH, at + 50, 1, "cudaLaunchKernel");
    uint32_t k8 = sc_test_task(g, stream, 7, SC_T_KERNEL, at + 56, 100, "k");
    assert_true(sc__graph_add_edge(g, l8, k8, SC_E_LAUNCH));
    sc_error err;
    assert_int_equal(sc__graph_finish(g, true, &err), SC_OK);
    int64_t lat = -1, dispatch = -1;
    assert_true(sc__calibrate_launch(g, &lat, &dispatch, NULL));
    assert_int_equal(lat, 5);                /* K8, the only launch-bound task */
    assert_int_equal(dispatch, 98 / 5);      /* 1, 2, 2, 3, 90; not 7000 */
    sc__graph_free(g);
}

/* The cost of a sync that need not wait. One rank, a kernel K 100..1000 on
 * stream 7 and device syncs on the thread:
 *   S1 500..1006: waited for K (ended at 1000), ran 6 past it;
 *   S2 1100..1112: nothing left to wait for, its own cost 12.
 * With both, the base is 12 (S2's traced length); with S1 alone it is 6,
 * not S1's 506 us, which are mostly the wait: a lone waiting sync used to
 * cost its whole traced length (the MI210 trace's hipDeviceSynchronize).
 * Either way a waiting sync wakes 6 after its work ends. */
static int64_t sync_base(bool with_s2) {
    uint32_t thread;
    sc__graph *g = sc_test_graph_one_thread(&thread);
    uint32_t stream = sc__graph_add_proc(g, 0, SC_P_STREAM, 0, 7);
    uint32_t l = sc_test_task(g, thread, 0, SC_T_LAUNCH, 90, 5, "cudaLaunchKernel");
    uint32_t s1 = sc_test_task(g, thread, 1, SC_T_SYNC, 500, 506, "cudaDeviceSynchronize");
    uint32_t k = sc_test_task(g, stream, 0, SC_T_KERNEL, 100, 900, "k");
    assert_true(sc__graph_add_edge(g, l, k, SC_E_LAUNCH));
    sc__task *t = sc__graph_tasks(g);
    t[s1].sync = SC_SYNC_DEVICE;
    t[s1].sync_arg = 0;
    if (with_s2) {
        uint32_t s2 = sc_test_task(g, thread, 2, SC_T_SYNC, 1100, 12, "cudaDeviceSynchronize");
        t = sc__graph_tasks(g);
        t[s2].sync = SC_SYNC_DEVICE;
        t[s2].sync_arg = 0;
    }
    sc_error err;
    assert_int_equal(sc__graph_finish(g, true, &err), SC_OK);
    int64_t base = -1, wake = -1;
    assert_true(sc__calibrate_sync_base(g, &base, &wake));
    assert_int_equal(wake, 6); /* S1 returned 6 after K ended */
    sc__graph_free(g);
    return base;
}

static void test_sync_base_is_not_a_wait(void **state) {
    (void)state;
    assert_int_equal(sync_base(true), 12);
    assert_int_equal(sync_base(false), 6);
}

/* Work the trace does not hold. One rank, step from 0; L 100..110 launches
 * K on stream 7, which starts at 2.5 ms: 2.5 ms after its launch with
 * nothing traced before it. With the device idle all that time, stream 7
 * was held by untraced work: its backlog is K's start. With a kernel of
 * another stream running 0.2 to 2.4 ms, the device was busy with traced
 * work: contention, no backlog. */
static int64_t untraced_backlog(bool other_stream_busy) {
    uint32_t thread;
    sc__graph *g = sc_test_graph_one_thread(&thread);
    uint32_t s7 = sc__graph_add_proc(g, 0, SC_P_STREAM, 0, 7);
    uint32_t s9 = sc__graph_add_proc(g, 0, SC_P_STREAM, 0, 9);
    uint32_t l = sc_test_task(g, thread, 0, SC_T_LAUNCH, 100, 10, "cudaLaunchKernel");
    uint32_t k = sc_test_task(g, s7, 0, SC_T_KERNEL, 2500000, 1000, "k");
    assert_true(sc__graph_add_edge(g, l, k, SC_E_LAUNCH));
    if (other_stream_busy) {
        uint32_t l9 = sc_test_task(g, thread, 1, SC_T_LAUNCH, 120, 10, "cudaLaunchKernel");
        uint32_t k9 = sc_test_task(g, s9, 0, SC_T_KERNEL, 200000, 2200000, "busy");
        assert_true(sc__graph_add_edge(g, l9, k9, SC_E_LAUNCH));
    }
    SC__VEC_AT(&g->ranks, sc__rank, 0).ntasks = (uint32_t)g->tasks.len;
    sc_error err;
    assert_int_equal(sc__graph_finish(g, true, &err), SC_OK);
    int64_t lat = 0, backlog[4] = {-1, -1, -1, -1};
    assert_true(sc__calibrate_launch(g, &lat, NULL, NULL));
    assert_true(sc__calibrate_backlog(g, &lat, backlog));
    assert_int_equal(backlog[thread], 0);
    assert_int_equal(backlog[s9], 0);
    sc__graph_free(g);
    return backlog[s7];
}

static void test_untraced_backlog(void **state) {
    (void)state;
    assert_int_equal(untraced_backlog(false), 2500000);
    assert_int_equal(untraced_backlog(true), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_follow_the_stream),
        cmocka_unit_test(test_spare_from_the_edge_list),
        cmocka_unit_test(test_launch_from_a_gpu_task),
        cmocka_unit_test(test_spare_of_any_size),
        cmocka_unit_test(test_spare_take_and_keep),
        cmocka_unit_test(test_sync_base_is_not_a_wait),
        cmocka_unit_test(test_dispatch_gap),
        cmocka_unit_test(test_untraced_backlog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
