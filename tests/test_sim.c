/*
 * test_sim.c - the simulator on small graphs built by hand, one rule of
 * graph.h per test: gaps, launch latency, stream order, graph-launch gaps,
 * syncs that wait at simulated time, cross-rank groups (coupled and
 * traced), deadlock detection, and what bound each start (the critical
 * path's raw material).
 */
#include "testutil.h"

#include "models/calibrate.h"
#include "sim/sim.h"
#include "transforms/scale.h"

typedef struct tg {
    sc__graph *g;
    uint32_t seq[16];
} tg;

static void tg_init(tg *t, int nranks) {
    memset(t, 0, sizeof *t);
    t->g = sc__graph_new();
    assert_non_null(t->g);
    for (int r = 0; r < nranks; r++) assert_int_not_equal(sc__graph_add_rank(t->g, r, (uint32_t)r), SC__NONE);
}

static uint32_t tg_proc(tg *t, uint32_t rank, sc__proc_kind kind, int64_t id) {
    uint32_t p = sc__graph_add_proc(t->g, rank, kind, kind == SC_P_STREAM ? 0 : -1, id);
    assert_true(p < 16);
    return p;
}

static uint32_t tg_task(tg *t, uint32_t proc, sc__task_kind kind, int64_t dur, int64_t gap,
                        const char *name) {
    sc__task task;
    memset(&task, 0, sizeof task);
    task.dur = dur;
    task.gap = gap;
    task.proc = proc;
    task.seq = t->seq[proc]++;
    task.name = sc__intern_put(&t->g->strings, name, strlen(name));
    task.op = SC__NONE;
    task.group = SC__NONE;
    task.event = SC__NONE;
    task.sync_arg = SC__NONE;
    task.kind = (uint8_t)kind;
    uint32_t id = sc__graph_add_task(t->g, &task);
    assert_int_not_equal(id, SC__NONE);
    return id;
}

static void tg_edge(tg *t, uint32_t a, uint32_t b, sc__edge_family f) {
    assert_true(sc__graph_add_edge(t->g, a, b, f));
}

static void tg_finish(tg *t) {
    sc_error err;
    /* Ranks own contiguous tasks: in these tests rank r's tasks are added in order. */
    assert_int_equal(sc__graph_finish(t->g, true, &err), SC_OK);
}

static sc__sim run(tg *t, bool coupled, int64_t latency) {
    int64_t lat[4] = {latency, latency, latency, latency};
    sc__sim_params p = {.coupled = coupled, .launch_latency = lat, .sync_base = NULL};
    sc__sim s;
    sc_error err;
    assert_int_equal(sc__sim_run(t->g, &p, &s, &err), SC_OK);
    return s;
}

static void test_gaps_on_a_thread(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 1);
    uint32_t th = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t a = tg_task(&t, th, SC_T_CPU, 10, 5, "a");
    uint32_t b = tg_task(&t, th, SC_T_CPU, 20, 5, "b");
    uint32_t c = tg_task(&t, th, SC_T_CPU, 30, 5, "c");
    tg_finish(&t);
    sc__sim s = run(&t, true, 0);
    assert_int_equal(s.start[a], 5);
    assert_int_equal(s.end[a], 15);
    assert_int_equal(s.start[b], 20);
    assert_int_equal(s.start[c], 45);
    assert_int_equal(s.end[c], 75);
    assert_int_equal(s.makespan, 75);
    assert_int_equal(s.bound[c], b);
    assert_int_equal(s.bound_fam[c], SC_E_THREAD);
    assert_int_equal(s.bound_fam[a], SC_SIM_ROOT);
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

static void test_launch_latency_and_stream_order(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 1);
    uint32_t th = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t st = tg_proc(&t, 0, SC_P_STREAM, 7);
    uint32_t l1 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "cudaLaunchKernel");
    uint32_t l2 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "cudaLaunchKernel");
    uint32_t k1 = tg_task(&t, st, SC_T_KERNEL, 100, 999, "k1"); /* a GPU task's gap is ignored */
    uint32_t k2 = tg_task(&t, st, SC_T_KERNEL, 50, 0, "k2");
    tg_edge(&t, l1, k1, SC_E_LAUNCH);
    tg_edge(&t, l2, k2, SC_E_LAUNCH);
    tg_finish(&t);
    sc__sim s = run(&t, true, 7);
    assert_int_equal(s.start[k1], 12);
    assert_int_equal(s.end[k1], 112);
    assert_int_equal(s.start[k2], 112); /* ready at 17, but the stream is busy */
    assert_int_equal(s.bound[k2], k1);
    assert_int_equal(s.bound_fam[k2], SC_E_STREAM);
    assert_int_equal(s.bound[k1], l1);
    assert_int_equal(s.bound_fam[k1], SC_E_LAUNCH);
    sc__sim_free(&s);

    /* A negative calibrated latency never puts a kernel before its launch call. */
    s = run(&t, true, -100);
    assert_int_equal(s.start[k1], 0);
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

/* One cudaGraphLaunch enqueues g1 and g2 (SC__TF_GRAPH_GAP): each starts its
 * gap after the later of its ready time and its stream's previous task. */
static void test_graph_launch_gaps(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 1);
    uint32_t th = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t st = tg_proc(&t, 0, SC_P_STREAM, 7);
    uint32_t l = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "cudaGraphLaunch");
    uint32_t g1 = tg_task(&t, st, SC_T_KERNEL, 100, 40, "g1");
    uint32_t g2 = tg_task(&t, st, SC_T_KERNEL, 50, 300, "g2");
    sc__graph_tasks(t.g)[g1].flags |= SC__TF_GRAPH_GAP;
    sc__graph_tasks(t.g)[g2].flags |= SC__TF_GRAPH_GAP;
    tg_edge(&t, l, g1, SC_E_LAUNCH);
    tg_edge(&t, l, g2, SC_E_LAUNCH);
    tg_finish(&t);
    sc__sim s = run(&t, true, 7);
    assert_int_equal(s.start[g1], 5 + 7 + 40);   /* ready (launch + latency) + gap */
    assert_int_equal(s.start[g2], 152 + 300);    /* stream free + gap */
    assert_int_equal(s.end[g2], 152 + 300 + 50);
    assert_int_equal(s.bound[g2], g1);
    assert_int_equal(s.bound_fam[g2], SC_E_STREAM);
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

/* The dispatch gap: k2, queued behind k1, starts the rank's gap (3) after
 * k1 ends; k1, first on its stream, and g, a graph launch's task (whose own
 * gap holds the dispatch), do not wait it. */
static void test_dispatch_gap(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 1);
    uint32_t th = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t st = tg_proc(&t, 0, SC_P_STREAM, 7);
    uint32_t l1 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "cudaLaunchKernel");
    uint32_t l2 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "cudaLaunchKernel");
    uint32_t lg = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "cudaGraphLaunch");
    uint32_t k1 = tg_task(&t, st, SC_T_KERNEL, 100, 0, "k1");
    uint32_t k2 = tg_task(&t, st, SC_T_KERNEL, 50, 0, "k2");
    uint32_t g = tg_task(&t, st, SC_T_KERNEL, 10, 0, "g");
    sc__graph_tasks(t.g)[g].flags |= SC__TF_GRAPH_GAP;
    tg_edge(&t, l1, k1, SC_E_LAUNCH);
    tg_edge(&t, l2, k2, SC_E_LAUNCH);
    tg_edge(&t, lg, g, SC_E_LAUNCH);
    tg_finish(&t);
    int64_t lat = 0, gap = 3;
    sc__sim_params p = {.coupled = true, .launch_latency = &lat, .dispatch_gap = &gap};
    sc__sim s;
    sc_error err;
    assert_int_equal(sc__sim_run(t.g, &p, &s, &err), SC_OK);
    assert_int_equal(s.start[k1], 5);
    assert_int_equal(s.start[k2], 105 + 3);
    assert_int_equal(s.bound[k2], k1);
    assert_int_equal(s.bound_fam[k2], SC_E_STREAM);
    assert_int_equal(s.start[g], 158);
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

/* L1 launches k1, then a stream sync, then L2 launches k2, then CPU work. */
static void test_sync_waits_at_simulated_time(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 1);
    uint32_t th = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t st = tg_proc(&t, 0, SC_P_STREAM, 7);
    uint32_t l1 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "launch1");
    uint32_t sy = tg_task(&t, th, SC_T_SYNC, 999999, 0, "cudaStreamSynchronize");
    uint32_t l2 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "launch2");
    uint32_t c = tg_task(&t, th, SC_T_CPU, 10, 0, "cpu");
    uint32_t k1 = tg_task(&t, st, SC_T_KERNEL, 100, 0, "k1");
    uint32_t k2 = tg_task(&t, st, SC_T_KERNEL, 1000, 0, "k2");
    sc__graph_tasks(t.g)[sy].sync = SC_SYNC_STREAM;
    sc__graph_tasks(t.g)[sy].sync_arg = st;
    tg_edge(&t, l1, k1, SC_E_LAUNCH);
    tg_edge(&t, l2, k2, SC_E_LAUNCH);
    tg_finish(&t);
    sc__sim s = run(&t, true, 0);
    assert_int_equal(s.end[k1], 105);
    assert_int_equal(s.start[sy], 5);
    assert_int_equal(s.end[sy], 105); /* waited for k1, not its traced 999999 */
    assert_int_equal(s.waited[sy], k1);
    assert_int_equal(s.wait_kind[sy], SC_SIM_W_SYNC);
    assert_int_equal(s.start[l2], 105);
    assert_int_equal(s.end[c], 120);
    assert_int_equal(s.end[k2], 1110); /* launched after the sync: not waited for */
    sc__sim_free(&s);

    /* With a wake of 4, the waiting sync returns 4 after k1 ends. */
    int64_t zero = 0, wake = 4;
    sc__sim_params pw = {.coupled = true, .launch_latency = &zero, .sync_wake = &wake};
    sc_error werr;
    assert_int_equal(sc__sim_run(t.g, &pw, &s, &werr), SC_OK);
    assert_int_equal(s.end[sy], 109);
    assert_int_equal(s.waited[sy], k1);
    sc__sim_free(&s);

    /* A sync with nothing to wait for costs its base (capped by its traced length). */
    tg t2;
    tg_init(&t2, 1);
    th = tg_proc(&t2, 0, SC_P_THREAD, 1);
    st = tg_proc(&t2, 0, SC_P_STREAM, 7);
    sy = tg_task(&t2, th, SC_T_SYNC, 40, 0, "cudaDeviceSynchronize");
    sc__graph_tasks(t2.g)[sy].sync = SC_SYNC_DEVICE;
    sc__graph_tasks(t2.g)[sy].sync_arg = 0;
    tg_finish(&t2);
    int64_t base = 3;
    sc__sim_params p = {.coupled = true, .sync_base = &base};
    sc_error err;
    assert_int_equal(sc__sim_run(t2.g, &p, &s, &err), SC_OK);
    assert_int_equal(s.end[sy], 3);
    sc__sim_free(&s);
    sc__graph_free(t2.g);
    sc__graph_free(t.g);
}

/* "Already launched" is decided at simulated time, across threads: a sync
 * waits for a kernel another thread launched before the sync started, and
 * not for one launched after. */
static void test_sync_sees_launches_of_other_threads(void **state) {
    (void)state;
    for (int late = 0; late < 2; late++) {
        tg t;
        tg_init(&t, 1);
        uint32_t a = tg_proc(&t, 0, SC_P_THREAD, 1);
        uint32_t b = tg_proc(&t, 0, SC_P_THREAD, 2);
        uint32_t st = tg_proc(&t, 0, SC_P_STREAM, 7);
        uint32_t work = tg_task(&t, a, SC_T_CPU, late ? 1500 : 1000, 0, "work");
        uint32_t l = tg_task(&t, a, SC_T_LAUNCH, 10, 0, "launch");
        uint32_t k = tg_task(&t, st, SC_T_KERNEL, 500, 0, "k");
        uint32_t pre = tg_task(&t, b, SC_T_CPU, 1200, 0, "other");
        uint32_t sy = tg_task(&t, b, SC_T_SYNC, 77, 0, "cudaStreamSynchronize");
        sc__graph_tasks(t.g)[sy].sync = SC_SYNC_STREAM;
        sc__graph_tasks(t.g)[sy].sync_arg = st;
        tg_edge(&t, l, k, SC_E_LAUNCH);
        (void)work;
        (void)pre;
        tg_finish(&t);
        sc__sim s = run(&t, true, 0);
        assert_int_equal(s.start[sy], 1200);
        if (!late) {
            assert_int_equal(s.end[k], 1510); /* launched at 1010, before the sync */
            assert_int_equal(s.end[sy], 1510);
            assert_int_equal(s.waited[sy], k);
        } else {
            assert_int_equal(s.start[k], 1510); /* launched at 1510, after the sync began */
            assert_int_equal(s.end[sy], 1200);  /* sync_base is 0 here */
            assert_int_equal(s.waited[sy], SC__NONE);
        }
        sc__sim_free(&s);
        sc__graph_free(t.g);
    }
}

/* A device sync waits for the last launched task on every stream of the device. */
static void test_device_sync(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 1);
    uint32_t th = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t s1 = tg_proc(&t, 0, SC_P_STREAM, 7);
    uint32_t s2 = tg_proc(&t, 0, SC_P_STREAM, 8);
    uint32_t l1 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "l1");
    uint32_t l2 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "l2");
    uint32_t sy = tg_task(&t, th, SC_T_SYNC, 1, 0, "cudaDeviceSynchronize");
    uint32_t k1 = tg_task(&t, s1, SC_T_KERNEL, 100, 0, "k1");
    uint32_t k2 = tg_task(&t, s2, SC_T_KERNEL, 300, 0, "k2");
    sc__graph_tasks(t.g)[sy].sync = SC_SYNC_DEVICE;
    sc__graph_tasks(t.g)[sy].sync_arg = 0;
    tg_edge(&t, l1, k1, SC_E_LAUNCH);
    tg_edge(&t, l2, k2, SC_E_LAUNCH);
    tg_finish(&t);
    sc__sim s = run(&t, true, 0);
    assert_int_equal(s.end[k2], 310);
    assert_int_equal(s.end[sy], 310);
    assert_int_equal(s.waited[sy], k2);
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

/* Two ranks reach an all-reduce at different times. */
static void test_group_coupling(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 2);
    uint32_t th0 = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t st0 = tg_proc(&t, 0, SC_P_STREAM, 24);
    uint32_t cpu0 = tg_task(&t, th0, SC_T_CPU, 100, 0, "slow_cpu");
    uint32_t l0 = tg_task(&t, th0, SC_T_LAUNCH, 5, 0, "launch");
    uint32_t c0 = tg_task(&t, st0, SC_T_COLL, 60, 0, "ncclAllReduce");
    uint32_t th1 = tg_proc(&t, 1, SC_P_THREAD, 1);
    uint32_t st1 = tg_proc(&t, 1, SC_P_STREAM, 24);
    uint32_t l1 = tg_task(&t, th1, SC_T_LAUNCH, 5, 0, "launch");
    uint32_t c1 = tg_task(&t, st1, SC_T_COLL, 160, 0, "ncclAllReduce");
    uint32_t k1 = tg_task(&t, st1, SC_T_KERNEL, 10, 0, "after");
    tg_edge(&t, cpu0, l0, SC_E_THREAD);
    tg_edge(&t, l0, c0, SC_E_LAUNCH);
    tg_edge(&t, l1, c1, SC_E_LAUNCH);
    uint32_t members[2] = {c0, c1};
    uint32_t gi = sc__graph_add_group(t.g, SC_C_ALL_REDUCE, 1024, members, 2);
    assert_int_not_equal(gi, SC__NONE);
    tg_finish(&t);

    /* The calibration takes the last arrival's (shortest) traced duration. */
    assert_true(sc__calibrate_transfers(t.g));
    assert_int_equal(SC__VEC_AT(&t.g->groups, sc__group, gi).transfer_ns, 60);

    sc__sim s = run(&t, true, 0);
    assert_int_equal(s.start[c0], 105);
    assert_int_equal(s.start[c1], 5);
    assert_int_equal(s.end[c0], 165);
    assert_int_equal(s.end[c1], 165);
    assert_int_equal(s.waited[c1], c0);
    assert_int_equal(s.wait_kind[c1], SC_SIM_W_GROUP);
    assert_int_equal(s.start[k1], 165);
    sc__sim_free(&s);

    /* Traced mode: no coupling, each rank keeps its own traced duration. */
    s = run(&t, false, 0);
    assert_int_equal(s.end[c0], 165);
    assert_int_equal(s.end[c1], 165);
    assert_int_equal(s.waited[c1], SC__NONE);
    sc__sim_free(&s);

    /* Making rank 0's CPU twice as slow delays rank 1 only in coupled mode. */
    sc__scale_rule rule;
    sc_error err;
    assert_int_equal(sc__scale_parse("cpu=2", &rule, &err), SC_OK);
    assert_true(sc__scale_apply(t.g, &rule, 1));
    s = run(&t, true, 0);
    assert_int_equal(s.end[c1], 270); /* rank 0: cpu 200 + launch 10, then transfer 60 */
    sc__sim_free(&s);
    s = run(&t, false, 0);
    assert_int_equal(s.end[c1], 170); /* only its own launch got slower */
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

/* rank 0 runs A then B on one stream, rank 1 runs B then A: a real deadlock. */
static void test_deadlock_is_reported(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 2);
    uint32_t s0 = tg_proc(&t, 0, SC_P_STREAM, 24);
    uint32_t a0 = tg_task(&t, s0, SC_T_COLL, 10, 0, "A");
    uint32_t b0 = tg_task(&t, s0, SC_T_COLL, 10, 0, "B");
    uint32_t s1 = tg_proc(&t, 1, SC_P_STREAM, 24);
    uint32_t b1 = tg_task(&t, s1, SC_T_COLL, 10, 0, "B");
    uint32_t a1 = tg_task(&t, s1, SC_T_COLL, 10, 0, "A");
    uint32_t ga[2] = {a0, a1}, gb[2] = {b0, b1};
    sc__graph_add_group(t.g, SC_C_ALL_REDUCE, -1, ga, 2);
    sc__graph_add_group(t.g, SC_C_ALL_REDUCE, -1, gb, 2);
    tg_finish(&t);
    sc__sim_params p = {.coupled = true};
    sc__sim s;
    sc_error err;
    assert_int_equal(sc__sim_run(t.g, &p, &s, &err), SC_E_GRAPH);
    assert_non_null(strstr(err.message, "deadlock"));
    p.coupled = false;
    assert_int_equal(sc__sim_run(t.g, &p, &s, &err), SC_OK);
    assert_int_equal(s.makespan, 20);
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

/* Two ranks of launches and kernels, over a million tasks: large enough
 * that, given a second thread, a helper faults the outputs in while the
 * run writes them (sim.c, prefault_outputs). */
static void big_graph(tg *t, bool crossed_groups) {
    const uint32_t per_rank = 300000;
    tg_init(t, 2);
    uint32_t last[2][2];
    for (uint32_t r = 0; r < 2; r++) {
        uint32_t cpu = tg_proc(t, r, SC_P_THREAD, 1 + r), gpu = tg_proc(t, r, SC_P_STREAM, 7);
        for (uint32_t i = 0; i < per_rank; i++) {
            uint32_t l = tg_task(t, cpu, SC_T_LAUNCH, 2 + (i + r) % 5, 1, "launch");
            uint32_t k = tg_task(t, gpu, SC_T_KERNEL, 1 + (i * 7 + r) % 13, 0, "kernel");
            tg_edge(t, l, k, SC_E_LAUNCH);
        }
        last[r][0] = tg_task(t, gpu, SC_T_COLL, 10, 0, "A");
        last[r][1] = tg_task(t, gpu, SC_T_COLL, 10, 0, "B");
    }
    uint32_t ga[2] = {last[0][0], last[1][crossed_groups]}, gb[2] = {last[0][1], last[1][!crossed_groups]};
    sc__graph_add_group(t->g, SC_C_ALL_REDUCE, -1, ga, 2);
    sc__graph_add_group(t->g, SC_C_ALL_REDUCE, -1, gb, 2);
    tg_finish(t);
    assert_true(t->g->tasks.len >= (size_t)1 << 20);
}

/* The helper changes no output: the same run on one thread and on two
 * gives the same bytes, and a run that fails (a deadlock) joins it before
 * its outputs are freed. */
static void test_helper_thread(void **state) {
    (void)state;
    tg t;
    big_graph(&t, false);
    int64_t lat[2] = {3, 5};
    sc__sim_params p = {.coupled = true, .launch_latency = lat, .threads = 1};
    sc__sim one, two;
    sc_error err;
    assert_int_equal(sc__sim_run(t.g, &p, &one, &err), SC_OK);
    p.threads = 2;
    assert_int_equal(sc__sim_run(t.g, &p, &two, &err), SC_OK);
    size_t n = t.g->tasks.len;
    assert_int_equal(one.makespan, two.makespan);
    assert_memory_equal(one.start, two.start, n * sizeof *one.start);
    assert_memory_equal(one.end, two.end, n * sizeof *one.end);
    assert_memory_equal(one.bound, two.bound, n * sizeof *one.bound);
    assert_memory_equal(one.bound_fam, two.bound_fam, n);
    assert_memory_equal(one.waited, two.waited, n * sizeof *one.waited);
    assert_memory_equal(one.wait_kind, two.wait_kind, n);
    sc__sim_free(&one);
    sc__sim_free(&two);
    sc__graph_free(t.g);
    big_graph(&t, true);
    assert_int_equal(sc__sim_run(t.g, &p, &two, &err), SC_E_GRAPH);
    assert_non_null(strstr(err.message, "deadlock"));
    sc__graph_free(t.g);
}

/* Cross-stream edges and cross-thread edges bind like any other. */
static void test_cross_edges(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 1);
    uint32_t th = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t bw = tg_proc(&t, 0, SC_P_THREAD, 2);
    uint32_t s1 = tg_proc(&t, 0, SC_P_STREAM, 7);
    uint32_t s2 = tg_proc(&t, 0, SC_P_STREAM, 8);
    uint32_t f = tg_task(&t, th, SC_T_CPU, 50, 0, "forward");
    uint32_t b = tg_task(&t, bw, SC_T_CPU, 20, 4, "backward");
    uint32_t k1 = tg_task(&t, s1, SC_T_KERNEL, 100, 0, "k1");
    uint32_t k2 = tg_task(&t, s2, SC_T_KERNEL, 10, 0, "k2");
    tg_edge(&t, f, b, SC_E_CROSS_THREAD);
    tg_edge(&t, k1, k2, SC_E_CROSS_STREAM);
    tg_finish(&t);
    sc__sim s = run(&t, true, 0);
    assert_int_equal(s.start[b], 50); /* the gap counts from the thread's own previous task */
    assert_int_equal(s.bound_fam[b], SC_E_CROSS_THREAD);
    assert_int_equal(s.start[k2], 100);
    assert_int_equal(s.bound[k2], k1);
    assert_int_equal(s.bound_fam[k2], SC_E_CROSS_STREAM);
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

static void test_scale_rules(void **state) {
    (void)state;
    sc__scale_rule r;
    sc_error err;
    assert_int_equal(sc__scale_parse("gemm=0.5", &r, &err), SC_OK);
    assert_int_equal(r.cls, SC_SCALE_GEMM);
    assert_true(r.factor == 0.5);
    assert_int_equal(sc__scale_parse("ampere_fp16=3", &r, &err), SC_OK);
    assert_int_equal(r.cls, SC_SCALE_NAME);
    assert_string_equal(r.name, "ampere_fp16");
    assert_int_equal(sc__scale_parse("gemm", &r, &err), SC_E_USAGE);
    assert_int_equal(sc__scale_parse("gemm=-1", &r, &err), SC_E_USAGE);
    assert_int_equal(sc__scale_parse("cpu=0", &r, &err), SC_OK); /* costs nothing */
    assert_true(r.factor == 0);
    assert_int_equal(sc__scale_parse("gemm=abc", &r, &err), SC_E_USAGE);
    assert_int_equal(sc__scale_parse("=2", &r, &err), SC_E_USAGE);
    assert_int_equal(sc__scale_class_of("sm80_xmma_gemm_f16f16_f16f32", SC_T_KERNEL), SC_SCALE_GEMM);
    assert_int_equal(sc__scale_class_of("fmha_cutlassF_f16_aligned_64x64", SC_T_KERNEL),
                     SC_SCALE_ATTENTION);
    assert_int_equal(sc__scale_class_of("vectorized_elementwise_kernel", SC_T_KERNEL), SC_SCALE_COMPUTE);
    assert_int_equal(sc__scale_class_of("ncclDevKernel_AllReduce", SC_T_COLL), SC_SCALE_COMM);

    /* Scaling the GPU doubles a GPU-bound chain; the CPU part stays. */
    tg t;
    tg_init(&t, 1);
    uint32_t th = tg_proc(&t, 0, SC_P_THREAD, 1);
    uint32_t st = tg_proc(&t, 0, SC_P_STREAM, 7);
    uint32_t l1 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "launch");
    uint32_t l2 = tg_task(&t, th, SC_T_LAUNCH, 5, 0, "launch");
    uint32_t k1 = tg_task(&t, st, SC_T_KERNEL, 1000, 0, "volta_sgemm_128x64_nn");
    uint32_t k2 = tg_task(&t, st, SC_T_KERNEL, 500, 0, "elementwise");
    tg_edge(&t, l1, k1, SC_E_LAUNCH);
    tg_edge(&t, l2, k2, SC_E_LAUNCH);
    tg_finish(&t);
    assert_int_equal(sc__scale_parse("gemm=2", &r, &err), SC_OK);
    assert_true(sc__scale_apply(t.g, &r, 1));
    sc__sim s = run(&t, true, 0);
    assert_int_equal(s.end[k2], 5 + 2000 + 500);
    sc__sim_free(&s);
    assert_int_equal(sc__scale_parse("compute=2", &r, &err), SC_OK);
    assert_true(sc__scale_apply(t.g, &r, 1));
    s = run(&t, true, 0);
    assert_int_equal(s.end[k2], 5 + 4000 + 1000);
    sc__sim_free(&s);

    /* A rule that selects nothing (a typo) re-times nothing and says so. */
    size_t before = t.g->warnings.count;
    assert_int_equal(sc__scale_parse("no_such_kernel=2", &r, &err), SC_OK);
    assert_true(sc__scale_apply(t.g, &r, 1));
    assert_int_equal(t.g->warnings.count, before + 1);
    assert_non_null(strstr(t.g->warnings.items[before], "no_such_kernel"));
    s = run(&t, true, 0);
    assert_int_equal(s.end[k2], 5 + 4000 + 1000);
    sc__sim_free(&s);
    sc__graph_free(t.g);
}

/* sc__proc_order: one run per processor in seq order (the fast path), tasks
 * of processors interleaved, and a run whose seq goes backwards must all
 * give each processor's tasks in seq order, ties in index order. The
 * graph's own order (sc__graph_finish: each processor's first task and
 * count, an order edge between neighbours, no other edge) must agree. */
static void expect_order(tg *t, const uint32_t *want_off, const uint32_t *want, size_t np, size_t nt) {
    uint32_t *off, *order;
    assert_true(sc__proc_order(t->g, &off, &order));
    for (size_t p = 0; p <= np; p++) assert_int_equal(off[p], want_off[p]);
    for (size_t i = 0; i < nt; i++) assert_int_equal(order[i], want[i]);
    free(off);
    free(order);
    tg_finish(t);
    const sc__graph *g = t->g;
    const sc__proc *procs = sc__graph_procs(g);
    for (size_t p = 0; p < np; p++) {
        uint32_t n = want_off[p + 1] - want_off[p];
        assert_int_equal(procs[p].ntasks, n);
        assert_int_equal(procs[p].first, n ? want[want_off[p]] : SC__NONE);
        for (uint32_t i = want_off[p]; i < want_off[p + 1]; i++) {
            uint32_t u = want[i], k = g->succ_off[u];
            if (i + 1 == want_off[p + 1]) {
                assert_int_equal(g->succ_off[u + 1], k); /* the last: no successor */
                continue;
            }
            assert_int_equal(g->succ_off[u + 1], k + 1);
            assert_int_equal(g->succ[k], want[i + 1]);
        }
    }
}

static void add_seq(tg *t, uint32_t proc, uint32_t seq) {
    uint32_t id = tg_task(t, proc, SC_T_CPU, 1, 0, "x");
    sc__graph_tasks(t->g)[id].seq = seq;
}

static void test_proc_order(void **state) {
    (void)state;
    tg t;
    tg_init(&t, 1);
    uint32_t a = tg_proc(&t, 0, SC_P_THREAD, 1), b = tg_proc(&t, 0, SC_P_THREAD, 2);
    (void)tg_proc(&t, 0, SC_P_STREAM, 7); /* no tasks: first is SC__NONE */
    add_seq(&t, b, 0); /* 0 */
    add_seq(&t, b, 1); /* 1 */
    add_seq(&t, b, 1); /* 2: a tie keeps index order */
    add_seq(&t, a, 0); /* 3 */
    add_seq(&t, a, 5); /* 4 */
    expect_order(&t, (const uint32_t[]){0, 2, 5, 5}, (const uint32_t[]){3, 4, 0, 1, 2}, 3, 5);
    sc__graph_free(t.g);

    tg_init(&t, 1);
    a = tg_proc(&t, 0, SC_P_THREAD, 1);
    b = tg_proc(&t, 0, SC_P_THREAD, 2);
    add_seq(&t, a, 0); /* 0 */
    add_seq(&t, b, 0); /* 1 */
    add_seq(&t, a, 1); /* 2: a's second run */
    expect_order(&t, (const uint32_t[]){0, 2, 3}, (const uint32_t[]){0, 2, 1}, 2, 3);
    sc__graph_free(t.g);

    tg_init(&t, 1);
    a = tg_proc(&t, 0, SC_P_THREAD, 1);
    b = tg_proc(&t, 0, SC_P_THREAD, 2);
    add_seq(&t, a, 0); /* 0 */
    add_seq(&t, b, 3); /* 1 */
    add_seq(&t, b, 1); /* 2: seq goes backwards */
    add_seq(&t, b, 2); /* 3 */
    expect_order(&t, (const uint32_t[]){0, 1, 4}, (const uint32_t[]){0, 2, 3, 1}, 2, 4);
    sc__graph_free(t.g);
}

/* Graphs imported from Chakra add tasks in dependency order, processors
 * interleaved, so the simulator walks them through order[] rather than
 * per-processor runs of indices. The same graph added both ways must
 * simulate to the same times, bounds and makespan. */
typedef struct spec_task {
    uint8_t proc, kind;
    int64_t dur, gap;
} spec_task;

static const spec_task spec[] = {
    {0, SC_T_LAUNCH, 5, 0},  {1, SC_T_KERNEL, 100, 0}, {0, SC_T_LAUNCH, 4, 3},
    {2, SC_T_KERNEL, 30, 0}, {0, SC_T_CPU, 50, 2},     {1, SC_T_KERNEL, 20, 0},
    {0, SC_T_LAUNCH, 6, 1},  {2, SC_T_KERNEL, 70, 0},  {0, SC_T_CPU, 10, 0},
};
static const uint32_t spec_edges[][2] = {{0, 1}, {2, 3}, {3, 5}, {6, 7}, {5, 7}};
enum { NSPEC = sizeof spec / sizeof spec[0], NSPEC_EDGES = sizeof spec_edges / sizeof spec_edges[0] };

/* Adds spec's tasks in spec order (interleaved) or processor by processor
 * (runs); ids[i] is spec task i's id. */
static void build_spec(tg *t, bool interleaved, uint32_t ids[NSPEC]) {
    tg_init(t, 1);
    uint32_t procs[3] = {tg_proc(t, 0, SC_P_THREAD, 1), tg_proc(t, 0, SC_P_STREAM, 7),
                         tg_proc(t, 0, SC_P_STREAM, 8)};
    for (uint32_t pass = 0; pass < (interleaved ? 1u : 3u); pass++)
        for (uint32_t i = 0; i < NSPEC; i++)
            if (interleaved || spec[i].proc == pass)
                ids[i] = tg_task(t, procs[spec[i].proc], (sc__task_kind)spec[i].kind, spec[i].dur,
                                 spec[i].gap, "t");
    for (uint32_t e = 0; e < NSPEC_EDGES; e++) {
        uint32_t a = spec_edges[e][0], b = spec_edges[e][1];
        tg_edge(t, ids[a], ids[b], spec[a].proc == 0 ? SC_E_LAUNCH : SC_E_CROSS_STREAM);
    }
    tg_finish(t);
}

static void test_interleaved_tasks(void **state) {
    (void)state;
    tg a, b;
    uint32_t ia[NSPEC], ib[NSPEC];
    build_spec(&a, true, ia);
    build_spec(&b, false, ib);
    assert_int_not_equal(ia[1], ib[1]); /* the layouts differ */
    sc__sim sa = run(&a, true, 7), sb = run(&b, true, 7);
    assert_int_equal(sa.makespan, sb.makespan);
    /* stream 7: k1 12..112, then spec 5 112..132 (after spec 3 on stream 8,
     * 19..49); spec 7 waits for spec 5 (cross-stream): 132..202 */
    assert_int_equal(sa.makespan, 202);
    for (uint32_t i = 0; i < NSPEC; i++) {
        assert_int_equal(sa.start[ia[i]], sb.start[ib[i]]);
        assert_int_equal(sa.end[ia[i]], sb.end[ib[i]]);
        uint32_t ba = sa.bound[ia[i]], bb = sb.bound[ib[i]];
        if (ba == SC__NONE || bb == SC__NONE) {
            assert_int_equal(ba, bb);
            continue;
        }
        uint32_t ja = 0, jb = 0; /* the spec index of each bound */
        while (ja < NSPEC && ia[ja] != ba) ja++;
        while (jb < NSPEC && ib[jb] != bb) jb++;
        assert_int_equal(ja, jb);
        assert_int_equal(sa.bound_fam[ia[i]], sb.bound_fam[ib[i]]);
    }
    sc__sim_free(&sa);
    sc__sim_free(&sb);
    sc__graph_free(a.g);
    sc__graph_free(b.g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaps_on_a_thread),
        cmocka_unit_test(test_launch_latency_and_stream_order),
        cmocka_unit_test(test_graph_launch_gaps),
        cmocka_unit_test(test_dispatch_gap),
        cmocka_unit_test(test_sync_waits_at_simulated_time),
        cmocka_unit_test(test_device_sync),
        cmocka_unit_test(test_sync_sees_launches_of_other_threads),
        cmocka_unit_test(test_group_coupling),
        cmocka_unit_test(test_deadlock_is_reported),
        cmocka_unit_test(test_helper_thread),
        cmocka_unit_test(test_cross_edges),
        cmocka_unit_test(test_scale_rules),
        cmocka_unit_test(test_proc_order),
        cmocka_unit_test(test_interleaved_tasks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
