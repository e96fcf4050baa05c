/*
 * cmd_replay.c - `stepcast replay [--json] [--chrome FILE] [--force]
 * [--iteration N | --all-iterations] [--comm coupled|traced] [--scale
 * CLASS=FACTOR]... [--timings] TRACE...`: runs the replay (sc_replay_run,
 * src/pipeline/replay.c), prints its report and writes the Chrome timeline;
 * --timings then says on stderr where the time went, stage by stage;
 * --all-iterations replays every ProfilerStep instead, one row each.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* One line on stderr: each stage's wall time, the simulator's rate and the
 * peak memory, for a user asking where a large job's replay time goes. The
 * simulation's set-up is told apart from its loop: on a large job it is
 * bound by paging in fresh memory (about half the stage for 1,024 ranks on
 * the bench machine), and the rate is the loop's, tasks over its time. */
static void print_timings(double load, double write, const sc_replay_timings *t) {
    struct rusage ru;
    double rss_mib = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0;
    double total = load + t->hta + t->build + t->calibrate + t->sensitivity + t->simulate + t->summarise + write;
    double loop = t->simulate - t->simulate_setup;
    sc_cli_progress_clear();
    fprintf(stderr,
            "stepcast: timings: load %.3f s, build %.3f s, calibrate %.3f s, simulate %.3f s "
            "(set-up %.3f s, then %.2f M tasks/s), summarise %.3f s, write %.3f s, sensitivity %.3f s, "
            "hta %.3f s; total %.3f s, peak RSS %.0f MiB\n",
            load, t->build, t->calibrate, t->simulate, t->simulate_setup,
            loop > 0 ? (double)t->tasks / loop / 1e6 : 0.0, t->summarise, write, t->sensitivity, t->hta, total,
            rss_mib);
}

static sc_status write_chrome(const void *replay, FILE *f, sc_error *err) {
    return sc_replay_write_chrome(replay, f, err);
}

void sc_cli_replay_opts(sc_cli_replay_args *a, sc_cli_opt *opts) {
    static const char *const comm_modes[] = {"coupled", "traced", "model", NULL};
    static const char *const breakdowns[] = {"stepcast", "hta", NULL};
    memset(a, 0, sizeof *a);
    a->iteration = UINT64_MAX;
    const sc_cli_opt shared[SC_CLI_REPLAY_NOPTS] = {
        {.name = "--json", .kind = SC_CLI_FLAG, .dest = &a->json},
        {.name = "--force", .kind = SC_CLI_FLAG, .dest = &a->force},
        {.name = "--chrome", .kind = SC_CLI_STRING, .dest = &a->chrome, .what = "a file name"},
        {.name = "--iteration", .kind = SC_CLI_UINT, .dest = &a->iteration, .max = INT64_MAX,
         .what = "a step number >= 0 (N of ProfilerStep#N)"},
        {.name = "--comm", .kind = SC_CLI_CHOICE, .dest = &a->comm, .choices = comm_modes,
         .what = "coupled, traced or model"},
        {.name = "--scale", .kind = SC_CLI_LIST, .dest = a->scales, .count = &a->nscales, .cap = SC_CLI_MAX_SCALES,
         .what = "CLASS=FACTOR"},
        {.name = "--sensitivity", .kind = SC_CLI_FLAG, .dest = &a->sensitivity},
        {.name = "--no-sensitivity", .kind = SC_CLI_FLAG, .dest = &a->no_sensitivity},
        {.name = "--breakdown", .kind = SC_CLI_CHOICE, .dest = &a->breakdown, .choices = breakdowns,
         .what = "stepcast or hta"},
    };
    memcpy(opts, shared, sizeof shared);
}

int sc_cli_replay_options(const char *cmd, const sc_cli_replay_args *a, sc_replay_options *o) {
    *o = (sc_replay_options)SC_REPLAY_OPTIONS_INIT;
    if (a->sensitivity && a->no_sensitivity)
        return sc_cli_usage(cmd, "--sensitivity and --no-sensitivity contradict each other");
    o->graph.iteration = a->iteration == UINT64_MAX ? -1 : (int64_t)a->iteration;
    o->graph.release_traces = 1; /* the set is only freed after the run */
    o->comm = a->comm == 2 ? SC_COMM_MODEL : a->comm == 1 ? SC_COMM_TRACED : SC_COMM_COUPLED;
    o->scales = a->scales;
    o->nscales = a->nscales;
    o->sensitivity = a->sensitivity ? SC_SENSITIVITY_ON : a->no_sensitivity ? SC_SENSITIVITY_OFF : SC_SENSITIVITY_AUTO;
    o->breakdown = a->breakdown == 1 ? SC_BREAKDOWN_HTA : SC_BREAKDOWN_STEPCAST;
    return SC_EXIT_OK;
}

int sc_cli_replay_output(const sc_replay *r, const sc_cli_replay_args *a) {
    int rc = SC_EXIT_OK;
    sc_error err;
    if (a->chrome) rc = sc_cli_write_file(a->chrome, a->force, write_chrome, r);
    if (rc == SC_EXIT_OK && sc_replay_write(r, stdout, a->json, &err) != SC_OK) rc = sc_cli_fail(&err);
    return rc;
}

/* --all-iterations: every ProfilerStep the ranks share, replayed one after
 * the other, one row each as it finishes (a trace without annotations: one
 * row, the whole trace). The traces are kept for every build. */
static int replay_each(sc_traceset *set, sc_replay_options *o, int json) {
    sc_error err;
    int64_t *numbers;
    size_t n;
    if (sc_replay_iterations(set, &numbers, &n, &err) != SC_OK) return sc_cli_fail(&err);
    o->graph.release_traces = 0;
    sc_iterations_table table = {0};
    int rc = SC_EXIT_OK;
    for (size_t i = 0; i < (n ? n : 1) && rc == SC_EXIT_OK; i++) {
        o->graph.iteration = n ? numbers[i] : -1;
        sc_replay *r;
        if (sc_replay_run(set, o, &r, &err) != SC_OK ||
            sc_replay_write_iteration(r, n ? numbers[i] : -1, &table, stdout, json, &err) != SC_OK)
            rc = sc_cli_fail(&err);
        sc_replay_free(r);
    }
    free(numbers);
    if (rc == SC_EXIT_OK && sc_replay_write_iterations_end(&table, stdout, json, &err) != SC_OK)
        rc = sc_cli_fail(&err);
    return rc;
}

/* The default replays one iteration: say so when the traces hold more. */
static void note_iterations(const sc_traceset *set, const sc_replay_options *o) {
    int64_t *numbers;
    size_t n;
    sc_error err;
    if (o->graph.iteration >= 0 || sc_replay_iterations(set, &numbers, &n, &err) != SC_OK) return;
    sc_cli_progress_clear();
    if (n > 1)
        fprintf(stderr,
                "stepcast: note: the traces hold %zu iterations (ProfilerStep#%lld to #%lld); this replays the "
                "last complete one (--iteration N for another, --all-iterations for each)\n",
                n, (long long)numbers[0], (long long)numbers[n - 1]);
    free(numbers);
}

int sc_cmd_replay(int argc, char **argv) {
    static sc_cli_replay_args ra;
    int timings = 0, all = 0;
    sc_cli_opt opts[SC_CLI_REPLAY_NOPTS + 2];
    sc_cli_replay_opts(&ra, opts);
    opts[SC_CLI_REPLAY_NOPTS] = (sc_cli_opt){.name = "--timings", .kind = SC_CLI_FLAG, .dest = &timings};
    opts[SC_CLI_REPLAY_NOPTS + 1] = (sc_cli_opt){.name = "--all-iterations", .kind = SC_CLI_FLAG, .dest = &all};
    sc_cli_args a;
    int rc = sc_cli_parse("replay", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    if (all && (ra.iteration != UINT64_MAX || ra.chrome || timings)) {
        fprintf(stderr, "stepcast: replay: --all-iterations replays every iteration: it takes no --iteration, "
                        "--chrome or --timings (give --iteration N for those)\n");
        sc_cli_args_free(&a);
        return SC_EXIT_USAGE;
    }
    sc_replay_options o;
    if ((rc = sc_cli_replay_options("replay", &ra, &o)) != SC_EXIT_OK) {
        sc_cli_args_free(&a);
        return rc;
    }
    sc_traceset *set;
    double t0 = sc_cli_now();
    if ((rc = sc_cli_load("replay", &a, &set)) != SC_EXIT_OK) return rc;
    double load = sc_cli_now() - t0;
    if (all) {
        rc = replay_each(set, &o, ra.json);
        sc_traceset_free(set);
        return rc;
    }
    note_iterations(set, &o);
    sc_error err;
    sc_replay *r;
    sc_status st = sc_replay_run(set, &o, &r, &err);
    sc_traceset_free(set);
    if (st != SC_OK) return sc_cli_fail(&err);
    double t1 = sc_cli_now();
    rc = sc_cli_replay_output(r, &ra);
    double write = sc_cli_now() - t1;
    if (rc == SC_EXIT_OK && timings && fflush(stdout) == 0) {
        sc_replay_timings tm = sc_replay_get_timings(r);
        print_timings(load, write, &tm);
    }
    sc_replay_free(r);
    return rc;
}
