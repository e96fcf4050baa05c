/*
 * bench_graph.c - the Kineto graph builder's figures for `make bench`:
 * build throughput (tasks per second of wall time, best of 5, traces already
 * in memory; also per CPU second, which contention on a shared machine
 * distorts less) and memory per task (sc__graph_memory: tasks, edges in CSR,
 * ops, groups, strings; divided by the task count).
 *
 *   bench_graph EXAMPLE_DIR SYNTH_DIR [BIG_JSON BIG_GZ SMALL_JSON]
 *
 * (the arguments every bench program gets from bench/run.sh; the single-file
 * ones are the reader's business and are ignored). EXAMPLE_DIR is the 8-rank
 * Megatron set; of SYNTH_DIR the first 64 ranks are built, to keep the
 * figure minutes-free on a shared 2-core machine. With no arguments the
 * shared Megatron traces are used. Prints `figure<TAB>name<TAB>value<TAB>unit`.
 */
#include "stepcast.h"
#include "graph/build.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process (user + system): steadier than wall time on
 * a shared machine. */
static double cpu_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first `max` Kineto-looking files of dir (sorted); returns the count. */
static size_t list_dir(const char *dir, char **out, size_t max) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0, cap = 0;
    char **all = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strstr(e->d_name, ".json")) continue;
        if (strstr(e->d_name, "_et_") || strstr(e->d_name, ".et")) continue; /* execution traces */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **p = realloc(all, cap * sizeof *p);
            if (!p) break;
            all = p;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        all[n] = malloc(len);
        if (!all[n]) break;
        snprintf(all[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (n) qsort(all, n, sizeof *all, cmp_str);
    size_t k = n < max ? n : max;
    for (size_t i = 0; i < n; i++) {
        if (i < k) out[i] = all[i];
        else free(all[i]);
    }
    free(all);
    return k;
}

static int bench_set(const char *label, const char *dir, size_t max_ranks) {
    char *files[1024];
    size_t n = list_dir(dir, files, max_ranks < 1024 ? max_ranks : 1024);
    if (!n) {
        fprintf(stderr, "bench_graph: no traces in %s\n", dir);
        return 0; /* an absent optional input is not a failure */
    }
    sc_traceset *set;
    sc_error err;
    char buf[1024];
    sc_status st = sc_traceset_load((const char *const *)files, n, NULL, &set, &err);
    for (size_t i = 0; i < n; i++) free(files[i]);
    if (st != SC_OK) {
        fprintf(stderr, "bench_graph: %s\n", sc_error_format(&err, buf, sizeof buf));
        return 1;
    }
    double best = 1e30, best_cpu = 1e30;
    size_t tasks = 0, bytes = 0;
    uint64_t edges = 0;
    for (int rep = 0; rep < 5; rep++) {
        sc__graph *g;
        double t0 = now(), c0 = cpu_now();
        if (sc__graph_build_kineto(set, NULL, &g, &err) != SC_OK) {
            fprintf(stderr, "bench_graph: %s\n", sc_error_format(&err, buf, sizeof buf));
            sc_traceset_free(set);
            return 1;
        }
        double s = now() - t0, cs = cpu_now() - c0;
        if (s < best) best = s;
        if (cs < best_cpu) best_cpu = cs;
        tasks = sc__graph_ntasks(g);
        edges = g->nedges;
        bytes = sc__graph_memory(g);
        sc__graph_free(g);
    }
    size_t ranks = set->count;
    sc_traceset_free(set);
    printf("graph\t%s: ranks\t%zu\tranks\n", label, ranks);
    printf("graph\t%s: tasks\t%zu\ttasks\n", label, tasks);
    printf("graph\t%s: edges\t%llu\tedges\n", label, (unsigned long long)edges);
    printf("graph\t%s: build time (best of 5)\t%.1f\tms\n", label, best * 1e3);
    printf("graph\t%s: build throughput\t%.2f\tM tasks/s\n", label, (double)tasks / best / 1e6);
    printf("graph\t%s: build throughput per CPU second\t%.2f\tM tasks/s\n", label,
           best_cpu > 0 ? (double)tasks / best_cpu / 1e6 : 0.0);
    printf("graph\t%s: memory per task (edges included)\t%.1f\tbytes/task\n", label,
           tasks ? (double)bytes / (double)tasks : 0.0);
    return 0;
}

int main(int argc, char **argv) {
    const char *example = argc > 1 ? argv[1] : "../shared/traces/megatron-tp8-a100";
    int rc = 0;
    if (is_dir(example)) rc |= bench_set("megatron 8 ranks", example, 8);
    else fprintf(stderr, "bench_graph: %s is not a directory\n", example);
    if (argc > 2 && is_dir(argv[2])) rc |= bench_set("synthetic, first 64 ranks", argv[2], 64);
    return rc;
}
