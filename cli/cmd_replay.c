/*
 * cmd_replay.c - `stepcast replay [--json] [--chrome FILE] [--force]
 * [--iteration N] [--comm coupled|traced] [--scale CLASS=FACTOR]... [--timings]
 * TRACE...`: parses the options and hands everything to sc_report_replay();
 * --timings then says on stderr where the time went, stage by stage.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MAX_PATHS 4096
#define MAX_SCALES 64

/* The value of an option given as "--opt VALUE" or "--opt=VALUE"; NULL if absent. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt) {
    size_t n = strlen(opt);
    if (strncmp(argv[*i], opt, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) return "";
    return argv[++*i];
}

/* One line on stderr: each stage's wall time, the simulator's rate and the
 * peak memory, for a user asking where a large job's replay time goes. The
 * simulation's set-up is told apart from its loop: on a large job it is
 * bound by paging in fresh memory (about half the stage for 1,024 ranks on
 * the bench machine), and the rate is the loop's, tasks over its time. */
static void print_timings(double load, const sc_replay_timings *t) {
    struct rusage ru;
    double rss_mib = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0;
    double total = load + t->build + t->calibrate + t->simulate + t->summarise + t->write;
    double loop = t->simulate - t->simulate_setup;
    fprintf(stderr,
            "stepcast: timings: load %.3f s, build %.3f s, calibrate %.3f s, simulate %.3f s "
            "(set-up %.3f s, then %.2f M tasks/s), summarise %.3f s, write %.3f s; total %.3f s, "
            "peak RSS %.0f MiB\n",
            load, t->build, t->calibrate, t->simulate, t->simulate_setup,
            loop > 0 ? (double)t->tasks / loop / 1e6 : 0.0, t->summarise, t->write, total, rss_mib);
}

int sc_cmd_replay(int argc, char **argv) {
    static const char *paths[MAX_PATHS];
    static const char *scales[MAX_SCALES];
    size_t n = 0;
    int json = 0;
    bool timings = false;
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    sc_replay_timings tm;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--force") == 0) o.force = 1;
        else if (strcmp(argv[i], "--timings") == 0) timings = true;
        else if ((v = opt_value(argc, argv, &i, "--chrome"))) {
            if (!*v) return sc_cli_usage("replay", "--chrome needs a file name");
            o.chrome_path = v;
        } else if ((v = opt_value(argc, argv, &i, "--iteration"))) {
            char *end;
            errno = 0;
            long long it = strtoll(v, &end, 10);
            if (!*v || *end || errno || it < 0)
                return sc_cli_usage("replay", "--iteration wants a step number >= 0, got '%s'", v);
            o.iteration = it;
        } else if ((v = opt_value(argc, argv, &i, "--comm"))) {
            if (strcmp(v, "coupled") == 0) o.comm_traced = 0;
            else if (strcmp(v, "traced") == 0) o.comm_traced = 1;
            else return sc_cli_usage("replay", "--comm is coupled or traced, got '%s'", v);
        } else if ((v = opt_value(argc, argv, &i, "--scale"))) {
            if (o.nscales == MAX_SCALES) return sc_cli_usage("replay", "too many --scale rules");
            scales[o.nscales++] = v;
        } else if (strcmp(argv[i], "--") == 0) {
            for (i++; i < argc; i++) {
                if (n == MAX_PATHS) return sc_cli_usage("replay", "too many paths");
                paths[n++] = argv[i];
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return sc_cli_usage("replay", "unknown option '%s'", argv[i]);
        } else {
            if (n == MAX_PATHS) return sc_cli_usage("replay", "too many paths");
            paths[n++] = argv[i];
        }
    }
    if (n == 0) return sc_cli_usage("replay", "no trace files given");
    o.scales = scales;
    o.release_traces = 1; /* the set is only freed after the replay */
    if (timings) o.timings = &tm;
    sc_error err;
    sc_traceset *set;
    double t0 = sc_cli_now();
    if (sc_traceset_load(paths, n, NULL, &set, &err) != SC_OK) return sc_cli_fail(&err);
    double load = sc_cli_now() - t0;
    sc_cli_print_warnings(set);
    int rc = SC_EXIT_OK;
    if (sc_report_replay(set, &o, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    else if (timings && fflush(stdout) == 0) print_timings(load, &tm);
    sc_traceset_free(set);
    return rc;
}
