/*
 * bench_reader.c - the Kineto reader's figures for `make bench`: throughput
 * on plain and gzip JSON (one thread; one plain file split over every core;
 * one gzip file inflated on one thread while every core parses it, against
 * the decoder alone and against the most the cores allow given what the
 * 1-thread gzip load's work costs, and the first write of the trace's
 * memory against the decoding), memory per event, a real trace with
 * and without event templates, and parallel ingestion of many ranks with 1
 * and 2 threads.
 *
 *   bench_reader EXAMPLE_DIR SYNTH_DIR BIG_JSON BIG_GZ SMALL_JSON
 *
 * (the arguments every bench program gets from bench/run.sh). Prints
 * `figure<TAB>name<TAB>value<TAB>unit` lines. Throughput is MB (10^6 bytes)
 * of uncompressed JSON per second for one sc_trace_load, best of the
 * repeats, both per wall second and per CPU-second (user + system of
 * the thread; robust when other jobs share the cores). The files were just
 * written, so they are read from the page cache, not the disk.
 */
#include "stepcast.h"
#include "base/base.h"
#include "io/source.h"
#include "readers/kineto.h"
#include "trace/trace.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Current resident set in bytes (from /proc/self/statm). */
static double rss_now(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static double rss_peak(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0;
}

/* CPU seconds (user + system) of this thread: on a shared machine wall
 * time also counts waiting for a core; CPU time does not. *user gets the
 * user part alone. */
static double cpu_now_split(double *user) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
    return *user + (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double cpu_now(void) {
    double user;
    return cpu_now_split(&user);
}

/* CPU seconds (user + system) of every thread of the process, those that
 * ended included: what a load on several threads costs in all. */
static double process_cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double last_cpu;  /* CPU seconds of the last load() */
static double last_user; /* its user part: the parsing, without the kernel's
                            first-touch zeroing of the trace's pages and the
                            copies out of the page cache */
static double last_process; /* CPU seconds of all the process's threads in it */
static double best_process; /* the least last_process of throughput()'s loads */

static sc_trace *load(const char *path, unsigned threads, double *secs) {
    sc_error err;
    sc_trace *t = NULL;
    sc_load_options o = {.threads = threads};
    double u0, c0 = cpu_now_split(&u0), p0 = process_cpu();
    double t0 = now();
    if (sc_trace_load(path, &o, &t, &err) != SC_OK) {
        char buf[1024];
        fprintf(stderr, "bench_reader: %s\n", sc_error_format(&err, buf, sizeof buf));
        exit(1);
    }
    *secs = now() - t0;
    double u1;
    last_cpu = cpu_now_split(&u1) - c0;
    last_process = process_cpu() - p0;
    last_user = u1 - u0;
    return t;
}

/* Best-of-n throughput in MB/s of uncompressed JSON, by wall time, reading
 * with `threads` threads; *cpu_mbs the same per CPU-second of the calling
 * thread (meaningful for one thread only), and *user_mbs (when not NULL)
 * per user CPU-second. */
static double throughput(const char *path, unsigned threads, int n, double *best_secs, double *cpu_mbs,
                         double *user_mbs) {
    double best = 1e30, best_cpu = 1e30, best_user = 1e30, bytes = 0;
    best_process = 1e30;
    for (int i = 0; i < n; i++) {
        double s;
        sc_trace *t = load(path, threads, &s);
        bytes = (double)t->input_bytes;
        sc_trace_free(t);
        if (s < best) best = s;
        if (last_cpu < best_cpu) best_cpu = last_cpu;
        if (last_user < best_user) best_user = last_user;
        if (last_process < best_process) best_process = last_process;
    }
    *best_secs = best;
    *cpu_mbs = best_cpu > 0.05 ? bytes / best_cpu / 1e6 : 0; /* 0: too short to tell */
    if (user_mbs) *user_mbs = best_user > 0.05 ? bytes / best_user / 1e6 : 0;
    return bytes / best / 1e6;
}

/* MB/s of output of the gzip decoder alone (best of 2): the floor any
 * reading of a gzip file is measured against (0: it cannot be read). */
static double inflate_rate(const char *path) {
    static unsigned char buf[1 << 20];
    double best = 1e30, bytes = 0;
    for (int rep = 0; rep < 2; rep++) {
        sc__source s;
        sc_error err;
        if (sc__source_open_file(&s, path, &err) != SC_OK) return 0;
        double t0 = now();
        size_t got;
        bytes = 0;
        while (sc__source_read(&s, buf, sizeof buf, &got, &err) == SC_OK && got) bytes += (double)got;
        double s1 = now() - t0;
        sc__source_close(&s);
        if (s1 < best) best = s1;
    }
    return bytes / best / 1e6;
}

/* Best of 5 rounds of 10 reads of a JSON text in memory (no system calls
 * in the loop), with or without templates: MB/s by wall time, and per
 * CPU-second in *cpu_mbs. */
static double buffer_rate(const unsigned char *json, size_t len, const char *name, bool templates,
                          double *cpu_mbs) {
    double best = 1e30, best_cpu = 1e30;
    sc_load_options one = {.threads = 1};
    for (int rep = 0; rep < 5; rep++) {
        double c0 = cpu_now(), t0 = now();
        for (int i = 0; i < 10; i++) {
            sc_trace *t;
            sc_error err;
            if (sc__kineto_load_buffer(json, len, name, &one, templates, NULL, &t, &err) != SC_OK) {
                fprintf(stderr, "bench_reader: %s: %s\n", name, err.message);
                exit(1);
            }
            sc_trace_free(t);
        }
        double w = (now() - t0) / 10, c = (cpu_now() - c0) / 10;
        if (w < best) best = w;
        if (c < best_cpu) best_cpu = c;
    }
    *cpu_mbs = (double)len / best_cpu / 1e6;
    return (double)len / best / 1e6;
}

/* Seconds per GB (10^9 bytes) to write memory this process never touched,
 * front to back as the reader stores its events, a megabyte made resident
 * at a time (sc__prefault, as sc__vec_prefault does): the page faults, the
 * kernel's zeroing and, in a VM, the host's own faults. Best of 3 fresh
 * 64 MB mappings. A floor under every load whatever its parser: the trace
 * it builds is written to such memory once. */
static double fresh_write_cost(void) {
    const size_t bytes = (size_t)64 << 20, step = (size_t)1 << 20;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return 0;
        double t0 = now();
        for (size_t at = 0; at < bytes; at += step) {
            sc__prefault(p + at, step);
            for (size_t i = at; i < at + step; i += 64) memset(p + i, (int)(i >> 6) & 0xff, 64);
        }
        double s = now() - t0;
        munmap(p, bytes);
        if (s < best) best = s;
    }
    return best / ((double)bytes / 1e9);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first `max` trace files of dir, sorted. */
static size_t list_dir(const char *dir, char **out, size_t max) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *de;
    char *all[8192];
    while ((de = readdir(d)) && n < 8192) {
        if (!strstr(de->d_name, ".json")) continue;
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        all[n] = malloc(len);
        if (!all[n]) break;
        snprintf(all[n], len, "%s/%s", dir, de->d_name);
        n++;
    }
    closedir(d);
    qsort(all, n, sizeof *all, cmp_str);
    size_t k = n < max ? n : max;
    for (size_t i = 0; i < n; i++) {
        if (i < k) out[i] = all[i];
        else free(all[i]);
    }
    return k;
}

static double load_set(char **paths, size_t n, unsigned threads, double *bytes) {
    sc_load_options o = {.threads = threads};
    sc_traceset *set;
    sc_error err;
    double t0 = now();
    if (sc_traceset_load((const char *const *)paths, n, &o, &set, &err) != SC_OK) {
        char buf[1024];
        fprintf(stderr, "bench_reader: %s\n", sc_error_format(&err, buf, sizeof buf));
        exit(1);
    }
    double s = now() - t0;
    *bytes = 0;
    for (size_t i = 0; i < sc_traceset_count(set); i++)
        *bytes += (double)sc_traceset_trace(set, i)->input_bytes;
    sc_traceset_free(set);
    return s;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: bench_reader EXAMPLE_DIR SYNTH_DIR BIG_JSON BIG_GZ SMALL_JSON\n");
        return 2;
    }
    const char *synth_dir = argv[2], *big = argv[3], *big_gz = argv[4], *small = argv[5];

    /* Memory first, in a fresh process: RSS growth over one load. */
    double before = rss_now(), secs;
    sc_trace *t = load(big, 1, &secs);
    double grown = rss_peak() - before;
    double events = (double)sc_trace_event_count(t);
    double mb = (double)t->input_bytes / 1e6;
    double trace_gb = (double)sc_trace_memory(t) / 1e9;
    printf("reader\tinput (plain JSON, 1 rank)\t%.0f\tMB\n", mb);
    printf("reader\tinput events\t%.0f\tevents\n", events);
    printf("reader\tpeak RSS growth per event\t%.1f\tB/event\n", grown / events);
    printf("reader\tsc_trace_memory per event\t%.1f\tB/event\n",
           (double)sc_trace_memory(t) / events);
    sc_trace_free(t);

    double cpu;
    double user;
    /* Best of 4: the headline figure, and one load takes half a second. */
    double plain = throughput(big, 1, 4, &secs, &cpu, &user);
    printf("reader\tplain JSON, 1 thread, wall\t%.0f\tMB/s\n", plain);
    printf("reader\tplain JSON, per CPU-second\t%.0f\tMB/s\n", cpu);
    printf("reader\tplain JSON, per user CPU-second (system time left out)\t%.0f\tMB/s\n", user);
    unsigned cores = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 1) {
        char name[128];
        double split = throughput(big, cores, 2, &secs, &cpu, NULL);
        snprintf(name, sizeof name, "plain JSON, one file split over %u threads, wall", cores);
        printf("reader\t%s\t%.0f\tMB/s\n", name, split);
        printf("reader\tsplit speed-up vs 1 thread\t%.2f\tx\n", split / plain);
    }
    double gz = throughput(big_gz, 1, 3, &secs, &cpu, NULL);
    printf("reader\tgzip (MB of JSON), 1 thread, wall\t%.0f\tMB/s\n", gz);
    printf("reader\tgzip (MB of JSON), per CPU-second\t%.0f\tMB/s\n", cpu);
    double gz_cpu_secs = cpu > 0 ? mb / cpu : 0; /* 0: too short to tell */
    double stream = 0, stream_cpu_secs = 0;
    if (cores > 1) {
        char name[128];
        stream = throughput(big_gz, cores, 3, &secs, &cpu, NULL);
        stream_cpu_secs = best_process;
        snprintf(name, sizeof name, "gzip, inflated on 1 thread and parsed on %u, wall", cores);
        printf("reader\t%s\t%.0f\tMB/s\n", name, stream);
    }
    double inflate = inflate_rate(big_gz);
    printf("reader\tgzip decompression alone (isa-l), 1 thread\t%.0f\tMB/s\n", inflate);
    if (stream > 0 && inflate > 0)
        printf("reader\tgzip on every core, share of the decoder's speed\t%.0f\t%%\n", 100 * stream / inflate);
    if (stream > 0 && inflate > 0 && gz_cpu_secs > 0) {
        /* What the cores allow: the 1-thread gzip load does the work any
         * pipeline must (decode and parse, nothing else), so spread over
         * every core its CPU time bounds the wall time from below, as the
         * decoding alone does. The streamed load's CPU-seconds over it are
         * what the pipeline itself costs. */
        double floor_secs = mb / inflate;
        if (gz_cpu_secs / cores > floor_secs) floor_secs = gz_cpu_secs / cores;
        printf("reader\tgzip streamed, CPU-seconds of all threads\t%.3f\ts\n", stream_cpu_secs);
        printf("reader\tsame, over the 1-thread gzip load's\t%.2f\tx\n", stream_cpu_secs / gz_cpu_secs);
        printf("reader\tgzip on %u cores, the most that work allows\t%.0f\tMB/s\n", cores, mb / floor_secs);
        printf("reader\tsame, share of the decoder's speed\t%.0f\t%%\n", 100 * mb / floor_secs / inflate);
    }
    /* Why that share is what it is here: the trace the load builds goes
     * into fresh memory, whose first write this machine may charge for
     * heavily; against the decoding, which no parser can beat. */
    double fresh = fresh_write_cost();
    if (fresh > 0 && inflate > 0) {
        printf("reader\tfresh memory, first write\t%.2f\ts/GB\n", fresh);
        printf("reader\tthe big file's trace (%.0f MB) written to fresh memory, alone\t%.3f\ts\n",
               trace_gb * 1e3, trace_gb * fresh);
        printf("reader\tthe big file's gzip decoded, alone\t%.3f\ts\n", mb / inflate);
    }
    double small_secs;
    double small_mbs = throughput(small, 1, 3, &small_secs, &cpu, NULL);
    printf("reader\tsmall file (python ratio input)\t%.3f\ts\n", small_secs);
    printf("reader\tsmall file throughput\t%.0f\tMB/s\n", small_mbs);

    /* A real trace: rank 0 of the bundled Megatron example, decompressed into
     * memory once and read from there (no system calls in the loop). */
    char real[4096];
    snprintf(real, sizeof real, "%s/megatron_kineto_0.json.gz", argv[1]);
    unsigned char *json = NULL;
    size_t json_len = 0;
    sc_error err;
    if (sc__source_slurp(real, &json, &json_len, &err) == SC_OK) {
        double cpu_tmpl, cpu_keys;
        double tmpl = buffer_rate(json, json_len, real, true, &cpu_tmpl);
        buffer_rate(json, json_len, real, false, &cpu_keys);
        printf("reader\treal Megatron rank 0 (%.1f MB JSON), wall\t%.0f\tMB/s\n", json_len / 1e6, tmpl);
        printf("reader\treal Megatron rank 0, per CPU-second\t%.0f\tMB/s\n", cpu_tmpl);
        printf("reader\tsame, every event key by key (no templates), per CPU-second\t%.0f\tMB/s\n",
               cpu_keys);
        printf("reader\ttemplates speed-up\t%.2f\tx\n", cpu_tmpl / cpu_keys);
        free(json);
    }

    /* Parallel ingestion: one file per thread. */
    char *paths[128];
    size_t n = list_dir(synth_dir, paths, 128);
    if (n >= 2) {
        double bytes, s1, s2;
        s1 = load_set(paths, n, 1, &bytes);
        s2 = load_set(paths, n, 2, &bytes);
        printf("ingest\t%zu synthetic ranks, 1 thread\t%.0f\tMB/s\n", n, bytes / s1 / 1e6);
        printf("ingest\t%zu synthetic ranks, 2 threads\t%.0f\tMB/s\n", n, bytes / s2 / 1e6);
        printf("ingest\tspeed-up 2 vs 1 thread\t%.2f\tx\n", s1 / s2);
    }
    for (size_t i = 0; i < n; i++) free(paths[i]);
    return 0;
}
