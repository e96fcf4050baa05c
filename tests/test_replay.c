/*
 * test_replay.c - the replay against real traces: the accuracy bar (the
 * 8-rank Megatron and DLRM sets coupled; the table of every shared Kineto
 * trace: within 1% or a stated reason), a what-if that must move the step
 * (so a simulator echoing measured times fails), --comm traced, what the
 * measured step runs from, the reasons for no error figure, every
 * iteration, the critical path's labels, the JSON shape and byte-identical
 * output.
 */
#include "testutil.h"
#include "testgraph.h"

#include <dirent.h>
#include <math.h>
#include <sys/stat.h>

#include "pipeline/replay.h"
#include "sim/sim.h"
#include "trace/trace.h"

static sc_replay *replay(const sc_traceset *set, bool coupled, const char *scale) {
    sc__build_options bo = {.iteration = -1, .hide_cuda_sync = false};
    sc__graph *g;
    sc_error err;
    if (sc__graph_build_kineto(set, &bo, &g, &err) != SC_OK) fail_msg("build: %s", err.message);
    sc__scale_rule rule;
    if (scale) assert_int_equal(sc__scale_parse(scale, &rule, &err), SC_OK);
    sc_replay *r;
    if (sc__replay_graph(g, set, coupled, &rule, scale ? 1 : 0, &r, &err) != SC_OK)
        fail_msg("replay: %s", err.message);
    return r;
}

static double rank_error(const sc_replay *r, size_t k) {
    const sc__replay_rank *rr = &r->ranks[k];
    return sc__replay_error_pct(rr->measured_ns, rr->sim_end - rr->sim_start);
}

static void check_set(const char *dir, bool coupled, double mean_max, double max_max) {
    const char *path = sc_test_trace(dir);
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay *r = replay(set, coupled, NULL);
    assert_int_equal(r->nranks, 8);
    double sum = 0, worst = 0;
    for (size_t k = 0; k < r->nranks; k++) {
        double e = fabs(rank_error(r, k));
        sum += e;
        if (e > worst) worst = e;
    }
    printf("# %s (%s): mean |error| %.3f%%, max %.3f%%\n", dir, coupled ? "coupled" : "traced",
           sum / 8, worst);
    assert_true(sum / 8 <= mean_max);
    assert_true(worst <= max_max);
    sc_replay_free(r);
    sc_traceset_free(set);
}

static void test_megatron_8_ranks(void **state) {
    (void)state;
    check_set("megatron-tp8-a100", true, 1.0, 1.0);
}

static void test_dlrm_8_ranks(void **state) {
    (void)state;
    check_set("param-dlrm-8rank/kineto", true, 1.0, 1.0);
}

static void test_traced_mode(void **state) {
    (void)state;
    check_set("param-dlrm-8rank/kineto", false, 1.0, 1.0);
}

static const sc_cp_item *edge_item(const sc_replay *r, const char *name) {
    const sc_cp_item *items;
    size_t n = sc_replay_cp_items(r, SC_CP_BY_EDGE, &items);
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i].name, name) == 0) return &items[i];
    return NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list_traces(const char *dir, char ***out, size_t *n) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            list_traces(path, out, n);
        } else if (strstr(e->d_name, ".json")) {
            *out = realloc(*out, (*n + 1) * sizeof **out);
            (*out)[(*n)++] = strdup(path);
        }
    }
    closedir(d);
}

/* One replay's line of the fidelity table, iteration `it` (-1: the
 * default, the last complete one): its error, or why it has none. */
static void table_row(const char *name, const sc_traceset *set, int64_t it, size_t *checked, size_t *failed,
                      size_t *excused) {
    sc__build_options bo = {.iteration = it, .hide_cuda_sync = false};
    sc__graph *g;
    sc_error err;
    if (sc__graph_build_kineto(set, &bo, &g, &err) != SC_OK) fail_msg("build: %s", err.message);
    sc_replay *r;
    if (sc__replay_graph(g, set, true, NULL, 0, &r, &err) != SC_OK) fail_msg("replay: %s", err.message);
    char label[4096];
    if (it >= 0) snprintf(label, sizeof label, "%s #%lld", name, (long long)it);
    else snprintf(label, sizeof label, "%s", name);
    sc_replay_step step = sc_replay_get_step(r);
    if (step.no_error_because) {
        printf("# %s: no error figure: %s\n", label, step.no_error_because);
        (*excused)++;
    } else {
        double e = sc__replay_error_pct(step.measured_ns, step.simulated_ns);
        printf("# %s: %.3f%% (measured %.3f ms, simulated %.3f ms%s)\n", label, e, step.measured_ns / 1e6,
               step.simulated_ns / 1e6, sc_replay_get_critical_path(r).host_only ? ", host-bound" : "");
        *failed += fabs(e) > 1.0;
    }
    (*checked)++;
    sc_replay_free(r);
}

/* Every iteration of a trace or job, as `replay --all-iterations` replays
 * them (one row, the default, when it holds no ProfilerStep); returns how
 * many rows. */
static size_t iteration_rows(const char *name, const sc_traceset *set, size_t *checked, size_t *failed,
                             size_t *excused) {
    int64_t *numbers = NULL;
    size_t n = 0;
    sc_error err;
    assert_int_equal(sc_replay_iterations(set, &numbers, &n, &err), SC_OK);
    for (size_t k = 0; k < n; k++) table_row(name, set, numbers[k], checked, failed, excused);
    if (!n) table_row(name, set, -1, checked, failed, excused);
    free(numbers);
    return n ? n : 1;
}

/* Every Kineto trace of ../shared/traces, each file on its own (a rank of
 * its job) and each job folder whole, replays within 1% of its measured
 * step, or the report says why it has no error figure: first the default
 * iteration (the last complete one), then every iteration the trace holds
 * (`# file #N: error`). Among them the three that missed: vLLM's two
 * TraceLens graph executions (-33.4% and -47.7%: their stream sat 7.8 and
 * 149 ms on work the derived trace does not hold, now an untraced backlog)
 * and the MI210 "GPU only" trace (-33.4%: its simulated step opened on the
 * second launching thread, 2 ms after the measured one, and its lone
 * hipDeviceSynchronize cost its whole traced wait). And among the other
 * iterations: ResNet's (MI300X) #15 (-12.8%), negative_queue_length's #550
 * (-5.2%), the first steps profiled, whose GPU ran work launched before
 * profiling began that waited for NCCL through calls the trace lacks; and
 * trace_diff/test's #1009 to #1013 (up to -2.8%), whose compute stream
 * waited for an all_to_all queued ahead of an all-reduce. */
static void test_every_trace_table(void **state) {
    (void)state;
    char **files = NULL;
    size_t n = 0, checked = 0, failed = 0, excused = 0;
    size_t all_checked = 0, all_failed = 0, all_excused = 0, multi = 0;
    char root[4096];
    snprintf(root, sizeof root, "%s", sc_test_trace(""));
    list_traces(root, &files, &n);
    qsort(files, n, sizeof *files, cmp_str);
    const char *jobs[] = {"megatron-tp8-a100", "param-dlrm-8rank/kineto", "hta-testdata/trace_filter"};
    size_t njobs = sizeof jobs / sizeof *jobs;
    for (size_t i = 0; i < n + njobs; i++) {
        const char *p = i < n ? files[i] : sc_test_trace(jobs[i - n]);
        const char *name = i < n ? files[i] + strlen(root) : jobs[i - n];
        /* PyTorch Execution Traces (host graphs) are not Kineto traces. */
        if (i < n && (strstr(p, "/et/") || strstr(p, "_et_"))) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s", p);
        const char *pp = path;
        sc_traceset *set = sc_test_load(&pp, 1);
        table_row(name, set, -1, &checked, &failed, &excused);
        multi += iteration_rows(name, set, &all_checked, &all_failed, &all_excused) > 1;
        sc_traceset_free(set);
    }
    for (size_t i = 0; i < n; i++) free(files[i]);
    free(files);
    printf("# %zu replays: %zu beyond 1%%, %zu with no error figure and why\n", checked, failed, excused);
    printf("# every iteration: %zu replays (%zu traces or jobs with several): %zu beyond 1%%, %zu with no error "
           "figure and why\n",
           all_checked, multi, all_failed, all_excused);
    assert_true(checked >= 45);
    assert_int_equal(failed, 0);
    assert_int_equal(excused, 3); /* the three capture traces */
    assert_true(all_checked >= checked + 20);
    assert_int_equal(all_failed, 0);
    assert_int_equal(all_excused, 3);

    const char *misses[] = {"tracelens/inference__vllm_decode_full__graph_execution.json.gz",
                            "tracelens/inference__vllm_prefilldecode_piecewise__graph_execution.json.gz",
                            "tracelens/mi210__gpu_only_trace__gpu_only_trace.json.gz"};
    for (size_t i = 0; i < 3; i++) {
        const char *p = sc_test_trace(misses[i]);
        sc_traceset *set = sc_test_load(&p, 1);
        sc_replay *r = replay(set, true, NULL);
        assert_true(fabs(rank_error(r, 0)) <= 0.2);
        assert_null(sc_replay_get_step(r).no_error_because);
        if (i < 2) assert_non_null(edge_item(r, "stream_backlog")); /* the work the trace lacks */
        sc_replay_free(r);
        sc_traceset_free(set);
    }
}

/* ns_resolution_trace is GPU-bound (its stream is never idle): doubling every
 * GPU task must add about the GPU's busy time to the step. */
static void test_scaling_gpu_moves_the_step(void **state) {
    (void)state;
    const char *path = sc_test_trace("hta-testdata/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay *base = replay(set, true, NULL);
    sc_replay *twice = replay(set, true, "gpu=2");
    const sc__replay_rank *a = &base->ranks[0], *b = &twice->ranks[0];
    int64_t s1 = a->sim_end - a->sim_start, s2 = b->sim_end - b->sim_start;
    int64_t busy = a->exposed_compute_ns + a->exposed_comm_ns + a->overlapped_ns;
    printf("# gpu=2: %.3f ms -> %.3f ms (GPU busy %.3f ms)\n", s1 / 1e6, s2 / 1e6, busy / 1e6);
    assert_true(busy > s1 / 3);
    assert_true(s2 - s1 >= busy * 9 / 10);
    assert_true(s2 - s1 <= busy * 11 / 10);
    /* The measured step did not move: only the simulation did. */
    assert_int_equal(a->measured_ns, b->measured_ns);
    sc_replay_free(base);
    sc_replay_free(twice);

    /* cpu=0.5 cannot make a GPU-bound step much shorter. */
    sc_replay *fast_cpu = replay(set, true, "cpu=0.5");
    int64_t s3 = fast_cpu->ranks[0].sim_end - fast_cpu->ranks[0].sim_start;
    assert_true(s3 <= s1);
    sc_replay_free(fast_cpu);
    sc_traceset_free(set);
}


/* A hand-built 2-rank job whose breakdown and critical path are known:
 * rank 0: cpu a (100) | launch L1 (10) -> gemm K1 (200) on stream 7 |
 *         launch L2 (10) -> all-reduce C0 (50) on stream 24;
 * rank 1: launch L3 (10) -> all-reduce C1 (160, waiting for rank 0) on stream 24.
 * The measured times are consistent (both all-reduces end at 170), so the
 * calibration finds no clock skew and no start offset, no launch-latency
 * sample (every GPU task is first on its stream) and a transfer time of
 * min(50, 160) = 50. Coupled: C0 and C1 end at max(120, 10) + 50 = 170. */
static void test_breakdown_and_critical_path(void **state) {
    (void)state;
    sc__graph *g = sc__graph_new();
    assert_non_null(g);
    uint32_t r0 = sc__graph_add_rank(g, 0, SC__NONE);
    uint32_t th0 = sc__graph_add_proc(g, r0, SC_P_THREAD, -1, 1);
    uint32_t s7 = sc__graph_add_proc(g, r0, SC_P_STREAM, 0, 7);
    uint32_t s24 = sc__graph_add_proc(g, r0, SC_P_STREAM, 0, 24);
    uint32_t a = sc_test_task(g, th0, 0, SC_T_CPU, 0, 100, "forward");
    uint32_t l1 = sc_test_task(g, th0, 1, SC_T_LAUNCH, 100, 10, "cudaLaunchKernel");
    uint32_t l2 = sc_test_task(g, th0, 2, SC_T_LAUNCH, 110, 10, "cudaLaunchKernelExC");
    uint32_t k1 = sc_test_task(g, s7, 0, SC_T_KERNEL, 110, 200, "ampere_sgemm_128x64_tn");
    uint32_t c0 = sc_test_task(g, s24, 0, SC_T_COLL, 120, 50, "ncclDevKernel_AllReduce");
    SC__VEC_AT(&g->ranks, sc__rank, r0).step_first_task = a;
    SC__VEC_AT(&g->ranks, sc__rank, r0).step_end = 300;
    uint32_t r1 = sc__graph_add_rank(g, 1, SC__NONE);
    uint32_t th1 = sc__graph_add_proc(g, r1, SC_P_THREAD, -1, 1);
    uint32_t s24b = sc__graph_add_proc(g, r1, SC_P_STREAM, 1, 24);
    uint32_t l3 = sc_test_task(g, th1, 0, SC_T_LAUNCH, 0, 10, "cudaLaunchKernelExC");
    uint32_t c1 = sc_test_task(g, s24b, 0, SC_T_COLL, 10, 160, "ncclDevKernel_AllReduce");
    SC__VEC_AT(&g->ranks, sc__rank, r1).step_first_task = l3;
    SC__VEC_AT(&g->ranks, sc__rank, r1).step_end = 170;
    assert_true(sc__graph_add_edge(g, l1, k1, SC_E_LAUNCH));
    assert_true(sc__graph_add_edge(g, l2, c0, SC_E_LAUNCH));
    assert_true(sc__graph_add_edge(g, l3, c1, SC_E_LAUNCH));
    uint32_t members[2] = {c0, c1};
    assert_int_not_equal(sc__graph_add_group(g, SC_C_ALL_REDUCE, 1024, members, 2), SC__NONE);
    sc_error err;
    assert_int_equal(sc__graph_finish(g, true, &err), SC_OK);

    sc_replay *r;
    assert_int_equal(sc__replay_graph(g, NULL, true, NULL, 0, &r, &err), SC_OK);
    assert_int_equal(r->sim.end[c0], 170);
    assert_int_equal(r->sim.end[c1], 170);
    const sc__replay_rank *a0 = &r->ranks[0], *a1 = &r->ranks[1];
    assert_int_equal(a0->sim_end - a0->sim_start, 310);
    assert_int_equal(a0->exposed_compute_ns, 150); /* [110,120) and [170,310) */
    assert_int_equal(a0->overlapped_ns, 50);       /* the all-reduce under the gemm */
    assert_int_equal(a0->exposed_comm_ns, 0);
    assert_int_equal(a0->idle_ns, 110);
    assert_int_equal(a0->nwindows, 1);
    assert_true(fabs(a0->sm_busy[0] - 200.0 / 310.0) < 1e-9);
    assert_int_equal(a1->exposed_comm_ns, 160);
    assert_int_equal(a1->idle_ns, 10);
    assert_int_equal(r->slowest, 0);
    assert_true(fabs(sc__replay_error_pct(a0->measured_ns, 310) - 100.0 * 10 / 300) < 1e-9);

    /* Critical path: gemm <- launch <- forward, 310 ns in all. */
    const sc__cp_summary *cp = &r->cp;
    assert_int_equal(cp->length_ns, 310);
    assert_int_equal(cp->ntasks, 3);
    int64_t sum = 0;
    for (size_t i = 0; i < cp->nclass; i++) sum += cp->by_class[i].ns;
    for (size_t i = 0; i < cp->nedge; i++) sum += cp->by_edge[i].ns;
    assert_int_equal(sum, cp->length_ns);
    assert_string_equal(cp->by_class[0].name, "gemm");
    assert_int_equal(cp->by_class[0].ns, 200);
    assert_string_equal(cp->by_class[1].name, "cpu");
    assert_string_equal(cp->by_class[2].name, "launch");

    /* The public view says the same. */
    assert_int_equal(sc_replay_rank_count(r), 2);
    sc_replay_rank pr;
    assert_int_equal(sc_replay_rank_at(r, 0, &pr, &err), SC_OK);
    assert_int_equal(pr.simulated_ns, 310);
    assert_int_equal(pr.measured_ns, a0->measured_ns);
    assert_int_equal(pr.exposed_compute_ns, 150);
    assert_int_equal(pr.overlapped_ns, 50);
    assert_int_equal(pr.idle_ns, 110);
    assert_int_equal(pr.sm_windows, 1);
    assert_int_equal(sc_replay_rank_at(r, 2, &pr, &err), SC_E_USAGE);
    sc_replay_step step = sc_replay_get_step(r);
    assert_int_equal(step.simulated_ns, 310);
    assert_int_equal(step.slowest_simulated, 0);
    sc_critical_path path = sc_replay_get_critical_path(r);
    assert_int_equal(path.length_ns, 310);
    assert_int_equal(path.tasks, 3);
    const sc_cp_item *items;
    assert_int_equal(sc_replay_cp_items(r, SC_CP_BY_CLASS, &items), cp->nclass);
    assert_string_equal(items[0].name, "gemm");
    assert_int_equal(sc_replay_cp_items(r, SC_CP_BY_EDGE, &items), cp->nedge);
    assert_true(sc_replay_coupled(r));
    sc_replay_free(r);
}

/* The replay's report (and with chrome, its timeline written there), as
 * the CLI produces them. */
static sc_status run_report(const sc_traceset *set, const sc_replay_options *o, FILE *f, int json,
                            const char *chrome, sc_error *err) {
    sc_replay *r;
    sc_status st = sc_replay_run(set, o, &r, err);
    if (st == SC_OK && chrome) {
        sc_output *out;
        st = sc_output_open(chrome, 0, &out, err);
        if (st == SC_OK && (st = sc_replay_write_chrome(r, sc_output_file(out), err)) != SC_OK)
            sc_output_abort(out);
        else if (st == SC_OK)
            st = sc_output_commit(out, err);
    }
    if (st == SC_OK) st = sc_replay_write(r, f, json, err);
    sc_replay_free(r);
    return st;
}

static char *report(const sc_traceset *set, const sc_replay_options *o, int json, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    sc_error err;
    if (run_report(set, o, f, json, NULL, &err) != SC_OK) fail_msg("%s", err.message);
    fclose(f);
    return buf;
}

static void test_output_is_deterministic(void **state) {
    (void)state;
    const char *path = sc_test_trace("param-dlrm-8rank/kineto");
    sc_traceset *set = sc_test_load(&path, 1);
    const char *scales[] = {"gemm=0.5", "comm=2"};
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.scales = scales;
    o.nscales = 2;
    size_t n1, n2, n3;
    char *a = report(set, &o, 1, &n1);
    char *b = report(set, &o, 1, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    assert_non_null(strstr(a, "\"ranks\":[{\"rank\":0,\"measured_us\":"));
    assert_non_null(strstr(a, "\"step\":{\"measured_us\":"));
    assert_non_null(strstr(a, "\"breakdown\":{\"exposed_compute_us\":"));
    assert_non_null(strstr(a, "\"sm_busy\":["));
    assert_non_null(strstr(a, "\"critical_path\":{\"length_us\":"));
    char *t = report(set, NULL, 0, &n3);
    assert_non_null(strstr(t, "step (slowest rank): measured 19.901 ms"));
    free(a);
    free(b);
    free(t);

    /* A bad --scale is a usage error, not a crash. */
    const char *bad[] = {"gemm=zero"};
    o.scales = bad;
    o.nscales = 1;
    sc_error err;
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(run_report(set, &o, f, 1, NULL, &err), SC_E_USAGE);
    fclose(f);
    sc_traceset_free(set);
}

/* Builds (and with `simulate` replays) set under a job memory budget of
 * `budget` bytes; the status, with the error in *err. */
static sc_status run_with_budget(sc_traceset *set, uint64_t budget, bool simulate, sc_error *err) {
    set->budget = budget;
    sc__build_options bo = {.iteration = -1};
    sc__graph *g;
    sc_status st = sc__graph_build_kineto(set, &bo, &g, err);
    if (st != SC_OK || !simulate) {
        sc__graph_free(g);
        return st;
    }
    sc_replay *r;
    st = sc__replay_graph(g, set, true, NULL, 0, &r, err); /* takes g */
    sc_replay_free(r);
    return st;
}

/* The smallest budget in (lo, hi] under which run_with_budget succeeds;
 * every budget from lo + 1 up fails with SC_E_LIMIT naming `stage`. */
static uint64_t least_budget(sc_traceset *set, bool simulate, uint64_t lo, uint64_t hi, const char *stage) {
    sc_error err;
    assert_int_equal(run_with_budget(set, hi, simulate, &err), SC_OK);
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        sc_status st = run_with_budget(set, mid, simulate, &err);
        if (st == SC_OK) {
            hi = mid;
            continue;
        }
        assert_int_equal(st, SC_E_LIMIT);
        assert_non_null(strstr(err.message, "more than the memory budget"));
        assert_non_null(strstr(err.message, "--max-memory"));
        lo = mid;
    }
    assert_int_equal(run_with_budget(set, hi - 1, simulate, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, stage));
    return hi;
}

/* Bounded memory: the load's budget holds for the whole job. The
 * graph and the simulation are checked against it before they grow past
 * it, a clear SC_E_LIMIT rather than swapping or the out-of-memory killer.
 * The least budget a build needs is more than the traces (they are held
 * while it runs) and the graph; a replay needs the simulation's arrays on
 * top, which is the last stage to say no. Within the budget nothing
 * changes. */
static void test_job_memory_budget(void **state) {
    (void)state;
    const char *path = sc_test_trace("megatron-tp8-a100");
    sc_traceset *set = sc_test_load(&path, 1);
    uint64_t traces = sc__traceset_memory(set);
    assert_true(set->budget > 0); /* the load's: 80% of RAM, or $STEPCAST_MAX_MEMORY */
    sc__build_options bo = {.iteration = -1};
    sc__graph *g;
    sc_error err;
    set->budget = 0; /* no cap */
    assert_int_equal(sc__graph_build_kineto(set, &bo, &g, &err), SC_OK);
    uint64_t graph = sc__graph_memory(g), sim = sc__sim_memory(g);
    size_t nt = g->tasks.len;
    sc__graph_free(g);
    assert_true(sim >= nt * 57); /* 32-byte node and 25 bytes of outputs a task */

    uint64_t hi = 4 * (traces + graph + sim);
    uint64_t build = least_budget(set, false, 0, hi, "graph");
    printf("# traces %llu B, graph %llu B, simulation %llu B: the build needs %llu B\n",
           (unsigned long long)traces, (unsigned long long)graph, (unsigned long long)sim,
           (unsigned long long)build);
    assert_true(build > traces + graph);
    assert_true(build < 2 * (traces + graph));
    uint64_t replay = least_budget(set, true, build - 1, hi, "simulating the graph");
    printf("# the replay needs %llu B\n", (unsigned long long)replay);
    assert_true(replay >= graph + sim);
    assert_true(replay > build);

    /* Within the budget, the same replay to the byte. */
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    size_t n1, n2;
    set->budget = 0;
    char *a = report(set, &o, 1, &n1);
    set->budget = replay;
    char *b = report(set, &o, 1, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a);
    free(b);
    sc_traceset_free(set);
}

/* Timings say where the time went: every stage is timed and the
 * simulated tasks are the report's; a replay that fails gives no result. */
static void test_timings(void **state) {
    (void)state;
    const char *path = sc_test_trace("param-dlrm-8rank/kineto");
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    sc_replay *r;
    sc_error err;
    assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_OK);
    sc_replay_timings tm = sc_replay_get_timings(r);
    assert_int_equal(tm.tasks, sc_replay_task_count(r));
    size_t n;
    char *text = report(set, &o, 1, &n);
    char want[64];
    snprintf(want, sizeof want, "\"tasks\":%llu,", (unsigned long long)tm.tasks);
    if (tm.tasks == 0 || !strstr(text, want)) fail_msg("%llu tasks timed, not the report's", (unsigned long long)tm.tasks);
    double stages[] = {tm.build, tm.calibrate, tm.simulate, tm.summarise};
    for (size_t i = 0; i < 4; i++)
        if (!(stages[i] >= 0 && stages[i] < 60)) fail_msg("stage %zu took %g s", i, stages[i]);
    assert_true(tm.build > 0 && tm.simulate > 0);
    assert_true(tm.simulate_setup >= 0 && tm.simulate_setup <= tm.simulate); /* a part of it */
    free(text);
    sc_replay_free(r);
    const char *bad[] = {"gemm=abc"}; /* fails before the build; a failure leaves no result */
    o.scales = bad;
    o.nscales = 1;
    assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_E_USAGE);
    assert_null(r);
    o.nscales = 0;
    o.graph.iteration = 999; /* no such step: the build fails */
    assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_E_USAGE);
    assert_null(r);
    sc_traceset_free(set);
}

/* --iteration picks the ProfilerStep: ns_resolution_trace has #101 to #105,
 * and #101 (no backlog yet from an earlier step) is much shorter. */
static void test_iteration_option(void **state) {
    (void)state;
    const char *path = sc_test_trace("hta-testdata/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.graph.iteration = 101;
    size_t n;
    char *t = report(set, &o, 0, &n);
    assert_non_null(strstr(t, "step (slowest rank): measured 101.151 ms"));
    free(t);
    o.graph.iteration = 999;
    sc_error err;
    FILE *null = fopen("/dev/null", "w");
    assert_int_equal(run_report(set, &o, null, 0, NULL, &err), SC_E_USAGE);
    fclose(null);
    sc_traceset_free(set);
}

static void test_chrome_timeline(void **state) {
    (void)state;
    const char *path = sc_test_trace("param-dlrm-8rank/kineto");
    sc_traceset *set = sc_test_load(&path, 1);
    char out[256];
    snprintf(out, sizeof out, "/tmp/stepcast-test-%ld-chrome.json", (long)getpid());
    remove(out);
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    sc_error err;
    FILE *null = fopen("/dev/null", "w");
    assert_int_equal(run_report(set, &o, null, 1, out, &err), SC_OK);
    FILE *f = fopen(out, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":["));
    assert_non_null(strstr(text, "\"rank 0 simulated\""));
    assert_non_null(strstr(text, "\"rank 7 measured\""));
    /* Without force an existing file is kept. */
    assert_int_not_equal(run_report(set, &o, null, 1, out, &err), SC_OK);
    fclose(null);
    remove(out);
    sc_traceset_free(set);
}

/* What the measured step is measured from, per rank: Megatron's opens at
 * ProfilerStep#3 on every rank and, on the ranks whose GPU runs past the
 * annotation, closes on that GPU work (rank 1: a kernel on stream 7, 34 ms
 * after the annotation ends); DLRM's GPU work ends inside ProfilerStep#10,
 * so its steps close with the annotation's own CPU time. */
static void check_measured_from(const char *dir, const char *step, size_t want_tail) {
    const char *path = sc_test_trace(dir);
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay *r = replay(set, true, NULL);
    size_t tails = 0;
    for (size_t k = 0; k < r->nranks; k++) {
        sc_replay_rank rk;
        sc_error err;
        assert_int_equal(sc_replay_rank_at(r, k, &rk, &err), SC_OK);
        assert_string_equal(rk.opens.event, step);
        assert_string_equal(rk.opens.kind, "step_annotation");
        assert_int_equal(rk.opens.on_stream, 0);
        const sc__rank *gr = &SC__VEC_AT(&r->g->ranks, sc__rank, k);
        const sc__task *last = &sc__graph_tasks(r->g)[gr->step_last_task];
        assert_int_equal(last->ts + last->dur, gr->step_end); /* the closing event ends the step */
        assert_int_equal(rk.measured_ns, gr->step_end - gr->step_start);
        assert_true(rk.after_annotation_ns >= 0);
        if (rk.after_annotation_ns > 0) {
            tails++;
            assert_int_equal(rk.closes.on_stream, 1); /* only GPU work outlives the annotation */
        } else {
            assert_string_equal(rk.closes.event, step);
            assert_string_equal(rk.closes.kind, "cpu");
        }
        printf("# %s rank %lld: %s .. %s (%s %s %lld), +%.3f ms\n", dir, (long long)rk.rank, rk.opens.event,
               rk.closes.event, rk.closes.kind, rk.closes.on_stream ? "stream" : "thread",
               (long long)rk.closes.on, rk.after_annotation_ns / 1e6);
    }
    assert_int_equal(tails, want_tail);
    sc_replay_free(r);
    sc_traceset_free(set);
}

static void test_measured_from(void **state) {
    (void)state;
    check_measured_from("megatron-tp8-a100", "ProfilerStep#3", 7);
    check_measured_from("param-dlrm-8rank/kineto", "ProfilerStep#10", 0);
    /* Megatron's rank 1 closes on a kernel of stream 7, 34.327 ms late. */
    const char *path = sc_test_trace("megatron-tp8-a100/megatron_kineto_1.json.gz");
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    size_t n;
    char *json = report(set, &o, 1, &n);
    assert_non_null(strstr(json, "\"measured_from\":{\"opens\":{\"event\":\"ProfilerStep#3\","
                                 "\"kind\":\"step_annotation\",\"thread\":"));
    assert_non_null(strstr(json, "\"kind\":\"kernel\",\"stream\":7,\"after_annotation_us\":34327.000}"));
    char *text = report(set, &o, 0, &n);
    assert_non_null(strstr(text, "from the start of ProfilerStep#3 (step_annotation, thread "));
    assert_non_null(strstr(text, "(kernel, stream 7), 34.327 ms after the annotation ends"));
    free(json);
    free(text);
    sc_traceset_free(set);
}

/* A trace with no ProfilerStep is one window: its measured step opens at
 * its earliest task, and so must the simulated one. The MI210 "GPU only"
 * trace launches from two threads, the one with more launches (44149)
 * starting 2.1 ms after the other (44077): the simulated step used to open
 * on 44149's first task, 2 ms in, and came out 33.4% short; and 44149,
 * whose first task had no gap, started 75 us early (-1.4%). */
static void test_whole_trace_opens_at_its_first_task(void **state) {
    (void)state;
    const char *path = sc_test_trace("tracelens/mi210__gpu_only_trace__gpu_only_trace.json.gz");
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay *r = replay(set, true, NULL);
    const sc__rank *gr = &SC__VEC_AT(&r->g->ranks, sc__rank, 0);
    const sc__task *first = &sc__graph_tasks(r->g)[gr->step_first_task];
    assert_int_equal(first->ts - first->gap, gr->step_start);
    assert_int_equal(gr->step_number, -1);
    sc_replay_rank rk;
    sc_error err;
    assert_int_equal(sc_replay_rank_at(r, 0, &rk, &err), SC_OK);
    assert_int_equal(rk.opens.on, 44077);
    assert_int_equal(rk.after_annotation_ns, -1);
    assert_int_equal(r->ranks[0].sim_start, r->sim.start[gr->step_first_task] - first->gap);
    /* Each thread's first task keeps the thread's idle time since the
     * window opened as its gap: thread 44149 does not start at 0 when
     * simulated, nor 75 us early on the cross-thread edge from 44077. */
    const sc__proc *procs = sc__graph_procs(r->g);
    const sc__task *t = sc__graph_tasks(r->g);
    for (size_t p = 0; p < r->g->procs.len; p++) {
        if (procs[p].kind != SC_P_THREAD) continue;
        const sc__task *f = &t[procs[p].first];
        assert_int_equal(f->ts - f->gap, gr->step_start);
        if (procs[p].id == 44149) assert_int_equal(r->sim.start[procs[p].first] - r->ranks[0].sim_start, f->gap);
    }
    sc_replay_free(r);
    sc_traceset_free(set);
}

/* The critical path tells a rank's late start from a stream still busy
 * with the previous step. negative_queue_length_values_check (one rank, no
 * offset) opens ProfilerStep#554 with stream 7 running 161.9 ms of
 * #553's kernels: that is stream_backlog, not rank_start_offset, as it
 * used to be labelled. Megatron's ranks enter ProfilerStep#3 up to 30 ms
 * apart: that stays rank_start_offset. */
static void test_backlog_is_not_a_late_start(void **state) {
    (void)state;
    const char *path = sc_test_trace("hta-testdata/negative_queue_length_values_check/rank0.json.gz");
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay *r = replay(set, true, NULL);
    const sc_cp_item *backlog = edge_item(r, "stream_backlog"), *late = edge_item(r, "rank_start_offset");
    assert_non_null(backlog);
    printf("# negative_queue_length: stream_backlog %.3f ms on the critical path\n", backlog->ns / 1e6);
    assert_int_equal(backlog->count, 1);
    assert_true(backlog->ns > 160000000 && backlog->ns < 163000000);
    assert_true(!late || late->ns == 0);
    sc_replay_free(r);
    sc_traceset_free(set);

    path = sc_test_trace("megatron-tp8-a100");
    set = sc_test_load(&path, 1);
    r = replay(set, true, NULL);
    late = edge_item(r, "rank_start_offset");
    assert_non_null(late);
    assert_true(late->ns > 20000000);
    assert_null(edge_item(r, "stream_backlog"));
    sc_replay_free(r);
    sc_traceset_free(set);
}

#define EV_STEP "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":900},"
#define EV_CALL(name, ts, corr) \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":10," \
    "\"args\":{\"correlation\":" #corr "}},"
#define EV_KERNEL(ts, corr) \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":" #ts ",\"dur\":50," \
    "\"args\":{\"correlation\":" #corr ",\"stream\":7,\"device\":0}},"
#define EV_TRACE(events) "{\"traceEvents\":[" events "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":0}]}"

/* The replay of set, its JSON; its job step's reason (NULL: it has an error). */
static const char *reason_of(const sc_traceset *set, char **json) {
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    size_t n;
    *json = report(set, &o, 1, &n);
    sc_replay *r = replay(set, true, NULL);
    sc_replay_step step = sc_replay_get_step(r);
    static char why[512];
    snprintf(why, sizeof why, "%s", step.no_error_because ? step.no_error_because : "");
    sc_replay_rank rk;
    sc_error err;
    assert_int_equal(sc_replay_rank_at(r, 0, &rk, &err), SC_OK);
    assert_true(!rk.no_error_because == !step.no_error_because);
    sc_replay_free(r);
    return why[0] ? why : NULL;
}

static void expect_reason(const sc_traceset *set, const char *want) {
    char *json;
    const char *why = reason_of(set, &json);
    printf("# %s\n", why ? why : "(an error figure)");
    if (!want) {
        assert_null(why);
        assert_null(strstr(json, "no_error_because"));
    } else {
        assert_non_null(why);
        assert_non_null(strstr(why, want));
        assert_non_null(strstr(json, "\"error_pct\":null,\"no_error_because\":"));
    }
    free(json);
}

/* Where the replay cannot be compared with the trace, the report says why
 * and prints no error figure: a step whose last launch ran no GPU work
 * (profiling stopped first); a launch lost in the middle is CUPTI dropping
 * a record, and the step still closes; a trace with no CPU side; a stream
 * capture that no graph launch replays (vLLM's and SGLang's capture
 * traces); Chakra files, which carry no measured step. */
static void test_no_error_reasons(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_text(EV_TRACE(EV_STEP EV_CALL("cudaLaunchKernel", 110, 1) EV_KERNEL(130, 1)
                                              EV_CALL("cudaLaunchKernel", 200, 2)));
    expect_reason(set, "not closed in the trace: its last 1 kernel launch ran no GPU work");
    sc_traceset_free(set);
    set = sc_test_load_text(EV_TRACE(EV_STEP EV_CALL("cudaLaunchKernel", 110, 1) EV_CALL("cudaLaunchKernel", 200, 2)
                                 EV_KERNEL(230, 2)));
    expect_reason(set, NULL);
    sc_traceset_free(set);
    set = sc_test_load_text(EV_TRACE(EV_KERNEL(130, 1) EV_KERNEL(230, 2)));
    expect_reason(set, "no CPU side");
    sc_traceset_free(set);
    set = sc_test_load_text(EV_TRACE(EV_STEP EV_CALL("cudaStreamBeginCapture", 110, 1) EV_CALL("cudaLaunchKernel", 130, 2)
                                 EV_CALL("cudaStreamEndCapture", 150, 3)));
    expect_reason(set, "graph capture without replays: 1 kernel launch of the step was recorded");
    sc_traceset_free(set);
    /* Replayed: the capture is followed by a graph launch that runs it. */
    set = sc_test_load_text(EV_TRACE(EV_STEP EV_CALL("cudaStreamBeginCapture", 110, 1) EV_CALL("cudaLaunchKernel", 130, 2)
                                 EV_CALL("cudaStreamEndCapture", 150, 3) EV_CALL("cudaGraphLaunch", 170, 4)
                                     EV_KERNEL(190, 4)));
    expect_reason(set, NULL);
    sc_traceset_free(set);
    const char *captures[] = {"tracelens/inference__vllm_decode_full__capture__graph_capture_rank_0.json.gz",
                              "tracelens/inference__vllm_prefilldecode_piecewise__capture__graph_capture_rank_0.json.gz",
                              "tracelens/inference__sglang_decode__capture__bs_32_rank0.json.gz"};
    for (size_t i = 0; i < 3; i++) {
        const char *path = sc_test_trace(captures[i]);
        set = sc_test_load(&path, 1);
        expect_reason(set, "graph capture without replays");
        sc_traceset_free(set);
    }
    /* Chakra: no measured step (the report said null before, now why too). */
    const char *path = sc_test_trace("chakra-et/custom-ring-allreduce");
    set = sc_test_load(&path, 1);
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    size_t n;
    char *json = report(set, &o, 1, &n);
    assert_non_null(strstr(json, "\"step\":{\"measured_us\":0.000,\"simulated_us\":207.354,\"error_pct\":null,"
                                 "\"no_error_because\":\"rank 0: the input has no measured step"));
    assert_non_null(strstr(json, "\"measured_from\":null"));
    free(json);
    sc_traceset_free(set);
}

/* A thread that calls no GPU runtime (a monitor, a loader) is simulated
 * but neither opens nor closes the step. In the xDiT Flux capture trace,
 * thread 0's one Python event spans the whole trace: it used to close the
 * step, whose replay then echoed its traced length (0.00%, a critical path
 * of that one task). Now the main thread (425) opens and closes it, and
 * the replay is a real one. */
static void test_quiet_threads(void **state) {
    (void)state;
    const char *path = sc_test_trace("tracelens/inference__xdit_flux.1__capture__capture_trace_rank_0.json.gz");
    sc_traceset *set = sc_test_load(&path, 1);
    sc_replay *r = replay(set, true, NULL);
    const sc__graph *g = r->g;
    const sc__proc *procs = sc__graph_procs(g);
    const sc__rank *gr = &SC__VEC_AT(&g->ranks, sc__rank, 0);
    size_t quiet = 0;
    for (size_t p = 0; p < g->procs.len; p++) quiet += procs[p].quiet;
    assert_true(quiet >= 1);
    assert_false(procs[sc__graph_tasks(g)[gr->step_last_task].proc].quiet);
    assert_false(procs[sc__graph_tasks(g)[gr->step_first_task].proc].quiet);
    sc_replay_rank rk;
    sc_error err;
    assert_int_equal(sc_replay_rank_at(r, 0, &rk, &err), SC_OK);
    assert_int_equal(rk.closes.on, 425);
    double e = rank_error(r, 0);
    printf("# xDiT Flux capture: %llu tasks on the critical path, error %.3f%%\n",
           (unsigned long long)r->cp.ntasks, e);
    assert_true(r->cp.ntasks > 1000);
    assert_true(fabs(e) < 1.0 && e != 0.0);
    assert_false(sc_replay_get_critical_path(r).host_only); /* its GPU work is on the path */
    sc_replay_free(r);
    sc_traceset_free(set);
}

/* --all-iterations: the iterations every rank holds, one replay each, one
 * row each. ns_resolution_trace holds ProfilerStep#101 to #105, every one
 * within 1%; Megatron's ranks hold #3 only; a trace without annotations
 * none (one row, the whole trace, as the CLI does). The JSON keeps each
 * iteration's step, its ranks' errors and what their steps run from. */
static void test_all_iterations(void **state) {
    (void)state;
    const char *path = sc_test_trace("hta-testdata/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    sc_traceset *set = sc_test_load(&path, 1);
    int64_t *numbers;
    size_t n;
    sc_error err;
    assert_int_equal(sc_replay_iterations(set, &numbers, &n, &err), SC_OK);
    assert_int_equal(n, 5);
    assert_int_equal(numbers[0], 101);
    assert_int_equal(numbers[4], 105);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sc_iterations_table table = {0};
    for (size_t i = 0; i < n; i++) {
        sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
        o.graph.iteration = numbers[i];
        sc_replay *r;
        assert_int_equal(sc_replay_run(set, &o, &r, &err), SC_OK);
        sc_replay_step step = sc_replay_get_step(r);
        double e = sc__replay_error_pct(step.measured_ns, step.simulated_ns);
        printf("# ns_resolution_trace ProfilerStep#%lld: error %.3f%%\n", (long long)numbers[i], e);
        assert_true(fabs(e) <= 1.0);
        assert_int_equal(sc_replay_write_iteration(r, numbers[i], &table, f, 1, &err), SC_OK);
        sc_replay_free(r);
    }
    assert_int_equal(sc_replay_write_iterations_end(&table, f, 1, &err), SC_OK);
    fclose(f);
    assert_int_equal(table.rows, 5);
    assert_int_equal(table.with_error, 5);
    assert_true(table.max_abs_error_pct <= 1.0);
    assert_non_null(strstr(buf, "{\"iterations\":[{\"iteration\":101,\"step\":{\"measured_us\":"));
    assert_non_null(strstr(buf, ",{\"iteration\":105,"));
    assert_non_null(strstr(buf, "\"measured_from\":{\"opens\":{\"event\":\"ProfilerStep#104\""));
    assert_non_null(strstr(buf, "],\"summary\":{\"iterations\":5,\"with_error\":5,\"mean_abs_error_pct\":"));
    free(buf);
    free(numbers);
    sc_traceset_free(set);

    path = sc_test_trace("megatron-tp8-a100");
    set = sc_test_load(&path, 1);
    assert_int_equal(sc_replay_iterations(set, &numbers, &n, &err), SC_OK);
    assert_int_equal(n, 1);
    assert_int_equal(numbers[0], 3);
    free(numbers);
    sc_traceset_free(set);
    path = sc_test_trace("tracelens/mi210__gpu_only_trace__gpu_only_trace.json.gz");
    set = sc_test_load(&path, 1);
    assert_int_equal(sc_replay_iterations(set, &numbers, &n, &err), SC_OK);
    assert_int_equal(n, 0);
    free(numbers);
    sc_traceset_free(set);
}

/* A GPU event with no traced launch belongs to the window its place in
 * stream order says. ResNet on MI300X: 11 orphan copies ran 13 ms after
 * ProfilerStep#15's annotation closed, before #15's last kernels; taken by
 * their time into #16, #16 replayed 43% short (and #15 27%). #15, the
 * first step profiled, then replayed 12.8% short until the waits of the
 * work launched before profiling became edges (test_untraced_waits). */
static void test_orphans_by_stream_order(void **state) {
    (void)state;
    const char *path = sc_test_trace("tracelens/mi300__resnet_act_checkpoint.json.gz");
    sc_traceset *set = sc_test_load(&path, 1);
    double e[2];
    for (int k = 0; k < 2; k++) {
        sc__build_options bo = {.iteration = 15 + k};
        sc__graph *g;
        sc_error err;
        if (sc__graph_build_kineto(set, &bo, &g, &err) != SC_OK) fail_msg("build: %s", err.message);
        sc_replay *r;
        if (sc__replay_graph(g, set, true, NULL, 0, &r, &err) != SC_OK) fail_msg("replay: %s", err.message);
        e[k] = rank_error(r, 0);
        sc_replay_free(r);
    }
    printf("# ResNet ProfilerStep#15 %.2f%%, #16 %.2f%%\n", e[0], e[1]);
    assert_true(fabs(e[1]) <= 1.0);
    assert_true(fabs(e[0]) <= 1.0);
    sc_traceset_free(set);
}

/* A stream held long, the device idle, by something the trace does not
 * hold gets that wait as an untraced gap (src/graph/stalls.c): k2, ready
 * at 40 us (its launch and k1 done), started at 2,040 us with nothing
 * traced running. The critical path names the wait untraced_gap, and the
 * gap is relative to what precedes k2: k1 twice as long moves k2 by k1's
 * 10 us, not by nothing. */
static void test_untraced_stalls(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_text(
        "{\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":10,\"dur\":5,\"args\":{\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":20,\"dur\":5,\"args\":{\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":10,"
        "\"args\":{\"correlation\":1,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":2040,\"dur\":10,"
        "\"args\":{\"correlation\":2,\"stream\":7,\"device\":0}}]}");
    sc_replay *base = replay(set, true, NULL), *slow = replay(set, true, "k1=2");
    uint32_t k2 = sc_test_task_named(base->g, "k2");
    assert_int_not_equal(k2, SC__NONE);
    const sc__task *t = sc__graph_tasks(base->g);
    assert_true(t[k2].flags & SC__TF_UNTRACED_GAP);
    assert_int_equal(t[k2].gap, 2000000);
    const sc_cp_item *stall = edge_item(base, "untraced_gap");
    assert_non_null(stall);
    assert_int_equal(stall->ns, 2000000);
    assert_int_equal(slow->sim.start[k2] - base->sim.start[k2], 10000);
    sc_replay_free(base);
    sc_replay_free(slow);
    sc_traceset_free(set);
}

/* Whether r's graph has an edge of `family` into task v. */
static bool has_edge_into(const sc_replay *r, uint32_t v, uint8_t family) {
    const sc__graph *g = r->g;
    for (uint32_t i = 0; i < g->tasks.len; i++)
        for (uint32_t k = g->succ_off[i]; k < g->succ_off[i + 1]; k++)
            if (g->succ[k] == v && g->succ_family[k] == family) return true;
    return false;
}

/* GPU work launched before profiling began (no traced launch) waited for
 * other streams through calls the trace does not hold (cross_stream.c, rule
 * 7). Stream 7's k2, ready at 70 us, started at 410 us, 10 us after
 * `producer` (stream 9, launched before it: a lower correlation) ended:
 * producer -> k2. k3 waited too, but only `late`, launched after it, ended
 * just before it: no edge. `first`, stream 11's first task, free since
 * the trace opened, waited for producer too. The edges are dependencies,
 * not start times: producer twice as long moves k2 and first by as much.
 * ResNet's (MI300X)
 * ProfilerStep#15 and negative_queue_length's #550, the first steps
 * profiled, ran such work for 30 and 155 ms, its compute stream waiting
 * for NCCL, and replayed 12.8% and 5.1% short without these edges. */
static void test_untraced_waits(void **state) {
    (void)state;
    static const char json[] =
        "{\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaEventQuery\",\"pid\":1,\"tid\":1,"
        "\"ts\":900,\"dur\":1,\"args\":{\"correlation\":1000}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":50,\"dur\":20,"
        "\"args\":{\"correlation\":5,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"producer\",\"pid\":0,\"tid\":9,\"ts\":100,\"dur\":300,"
        "\"args\":{\"correlation\":10,\"stream\":9,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":410,\"dur\":10,"
        "\"args\":{\"correlation\":12,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"late\",\"pid\":0,\"tid\":9,\"ts\":405,\"dur\":180,"
        "\"args\":{\"correlation\":20,\"stream\":9,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k3\",\"pid\":0,\"tid\":7,\"ts\":600,\"dur\":10,"
        "\"args\":{\"correlation\":13,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"first\",\"pid\":0,\"tid\":11,\"ts\":404,\"dur\":5,"
        "\"args\":{\"correlation\":14,\"stream\":11,\"device\":0}}]}";
    sc_traceset *set = sc_test_load_text(json);
    sc_replay *base = replay(set, true, NULL), *slow = replay(set, true, "producer=2");
    const sc__graph *g = base->g;
    uint32_t prod = sc_test_task_named(base->g, "producer"), k2 = sc_test_task_named(base->g, "k2");
    uint32_t k3 = sc_test_task_named(base->g, "k3"), first = sc_test_task_named(base->g, "first");
    assert_true(prod != SC__NONE && k2 != SC__NONE && k3 != SC__NONE && first != SC__NONE);
    int into_k2 = 0, into_first = 0;
    for (uint32_t k = g->succ_off[prod]; k < g->succ_off[prod + 1]; k++) {
        into_k2 += g->succ[k] == k2 && g->succ_family[k] == SC_E_CROSS_STREAM;
        into_first += g->succ[k] == first && g->succ_family[k] == SC_E_CROSS_STREAM;
    }
    assert_int_equal(into_k2, 1);
    assert_int_equal(into_first, 1);
    assert_false(has_edge_into(base, k3, SC_E_CROSS_STREAM));
    assert_true(base->sim.start[k2] >= base->sim.end[prod]);
    int64_t moved = slow->sim.start[k2] - base->sim.start[k2];
    int64_t moved_first = slow->sim.start[first] - base->sim.start[first];
    printf("# untraced wait: producer x2 moves k2 by %.3f us, first by %.3f us\n", moved / 1e3, moved_first / 1e3);
    assert_true(moved >= 290000);
    assert_true(moved_first >= 290000);
    sc_replay_free(base);
    sc_replay_free(slow);
    sc_traceset_free(set);
}

/* GPU work whose correlation is below every traced call's was launched
 * before profiling began: it is queued (SC__TF_QUEUED), not anchored on the
 * host's measured progress as work whose launch CUPTI lost is (k4, id 150,
 * after the first traced call's 100). So k2 moves with k1: k1 half as long
 * starts k2 about 100 us earlier, where the anchor on B (ends at 205 us)
 * held it at its measured start, 210 us. */
static void test_queued_before_profiling(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_text(
        "{\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"B\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":105},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"C\",\"pid\":1,\"tid\":1,\"ts\":205,\"dur\":85},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":300,\"dur\":5,\"args\":{\"correlation\":100}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"D\",\"pid\":1,\"tid\":1,\"ts\":310,\"dur\":80},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":200,"
        "\"args\":{\"correlation\":50,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":210,\"dur\":80,"
        "\"args\":{\"correlation\":51,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k3\",\"pid\":0,\"tid\":7,\"ts\":310,\"dur\":10,"
        "\"args\":{\"correlation\":100,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k4\",\"pid\":0,\"tid\":7,\"ts\":400,\"dur\":10,"
        "\"args\":{\"correlation\":150,\"stream\":7,\"device\":0}}]}");
    sc_replay *base = replay(set, true, NULL), *fast = replay(set, true, "k1=0.5");
    const sc__task *t = sc__graph_tasks(base->g);
    uint32_t k1 = sc_test_task_named(base->g, "k1"), k2 = sc_test_task_named(base->g, "k2");
    uint32_t k4 = sc_test_task_named(base->g, "k4");
    assert_true(k1 != SC__NONE && k2 != SC__NONE && k4 != SC__NONE);
    assert_true(t[k1].flags & SC__TF_QUEUED);
    assert_true(t[k2].flags & SC__TF_QUEUED);
    assert_false(t[k4].flags & SC__TF_QUEUED);
    assert_false(has_edge_into(base, k2, SC_E_LAUNCH));
    assert_true(has_edge_into(base, k4, SC_E_LAUNCH)); /* lost by CUPTI: anchored */
    int64_t moved = base->sim.start[k2] - fast->sim.start[k2];
    printf("# queued before profiling: k1 x0.5 starts k2 %.3f us earlier\n", moved / 1e3);
    assert_true(moved >= 90000);
    sc_replay_free(base);
    sc_replay_free(fast);
    sc_traceset_free(set);
}

/* Queued tasks of one correlation are the nodes of one graph launch made
 * before profiling: the GPU time between them, which no traced event
 * covers, is the captured graph's (gb: 300 us after ga), kept as a graph
 * launch's tasks keep it, after what precedes the node: ga twice as long
 * moves gb by ga's 50 us. negative_queue_length's #550 opens with such a
 * graph, 7 nodes over 4.3 ms. */
static void test_queued_graph_nodes(void **state) {
    (void)state;
    sc_traceset *set = sc_test_load_text(
        "{\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":500,\"dur\":5,\"args\":{\"correlation\":100}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ga\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":50,"
        "\"args\":{\"correlation\":40,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gb\",\"pid\":0,\"tid\":7,\"ts\":360,\"dur\":20,"
        "\"args\":{\"correlation\":40,\"stream\":7,\"device\":0}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":510,\"dur\":10,"
        "\"args\":{\"correlation\":100,\"stream\":7,\"device\":0}}]}");
    sc_replay *base = replay(set, true, NULL), *slow = replay(set, true, "ga=2");
    const sc__task *t = sc__graph_tasks(base->g);
    uint32_t ga = sc_test_task_named(base->g, "ga"), gb = sc_test_task_named(base->g, "gb");
    assert_true(ga != SC__NONE && gb != SC__NONE);
    assert_true(t[gb].flags & SC__TF_GRAPH_GAP);
    assert_int_equal(t[gb].gap, 300000);
    assert_int_equal(base->sim.start[gb] - base->sim.end[ga], 300000);
    assert_int_equal(slow->sim.start[gb] - base->sim.start[gb], 50000);
    sc_replay_free(base);
    sc_replay_free(slow);
    sc_traceset_free(set);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_megatron_8_ranks),
        cmocka_unit_test(test_dlrm_8_ranks),
        cmocka_unit_test(test_traced_mode),
        cmocka_unit_test(test_every_trace_table),
        cmocka_unit_test(test_scaling_gpu_moves_the_step),
        cmocka_unit_test(test_output_is_deterministic),
        cmocka_unit_test(test_chrome_timeline),
        cmocka_unit_test(test_iteration_option),
        cmocka_unit_test(test_timings),
        cmocka_unit_test(test_breakdown_and_critical_path),
        cmocka_unit_test(test_job_memory_budget),
        cmocka_unit_test(test_measured_from),
        cmocka_unit_test(test_whole_trace_opens_at_its_first_task),
        cmocka_unit_test(test_backlog_is_not_a_late_start),
        cmocka_unit_test(test_no_error_reasons),
        cmocka_unit_test(test_quiet_threads),
        cmocka_unit_test(test_all_iterations),
        cmocka_unit_test(test_orphans_by_stream_order),
        cmocka_unit_test(test_untraced_stalls),
        cmocka_unit_test(test_untraced_waits),
        cmocka_unit_test(test_queued_before_profiling),
        cmocka_unit_test(test_queued_graph_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
