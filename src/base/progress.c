/*
 * progress.c - a long job's progress for the caller to show: how many
 * files and bytes a load has read, ranks the graph builder has built and
 * tasks the simulator has finished. The library never prints: it calls the
 * caller's sc_progress_fn (sc_load_options.progress), throttled to one call
 * per 50 ms and serialised by a mutex, since readers add to the counters
 * from many threads at once. A thread that finds another one reporting
 * skips its turn rather than wait: progress never slows a reader down.
 */
#include "base.h"

#include <stdatomic.h>
#include <stdlib.h>

#define SC__PROGRESS_EVERY_NS 50000000

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

sc__progress *sc__progress_new(sc_progress_fn fn, void *user) {
    if (!fn) return NULL;
    sc__progress *p = calloc(1, sizeof *p);
    if (!p) return NULL; /* no progress is no failure */
    p->fn = fn;
    p->user = user;
    p->stage = "read";
    p->began_ns = now_ns();
    pthread_mutex_init(&p->mu, NULL);
    return p;
}

void sc__progress_free(sc__progress *p) {
    if (!p) return;
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void sc__progress_relay(void *user, const sc_progress *p) {
    (void)user;
    (void)p; /* a marker: never called, sc__progress_of looks for it */
}

sc__progress *sc__progress_of(const sc_load_options *opts) {
    return opts && opts->progress == sc__progress_relay ? opts->progress_user : NULL;
}

sc_load_options sc__progress_options(const sc_load_options *opts, sc__progress *p) {
    sc_load_options o = opts ? *opts : (sc_load_options){0};
    o.progress = p ? sc__progress_relay : NULL;
    o.progress_user = p;
    return o;
}

/* Calls fn with the counters; with force, waits for the mutex. */
static void report(sc__progress *p, bool force) {
    if (force) pthread_mutex_lock(&p->mu);
    else if (pthread_mutex_trylock(&p->mu) != 0) return;
    int64_t now = now_ns();
    atomic_store(&p->next_ns, now + SC__PROGRESS_EVERY_NS);
    sc_progress out = {.stage = p->stage,
                       .files_done = atomic_load(&p->files_done),
                       .files_total = p->files_total,
                       .bytes_read = atomic_load(&p->bytes),
                       .ranks_done = atomic_load(&p->ranks_done),
                       .ranks_total = p->ranks_total,
                       .tasks_done = atomic_load(&p->tasks_done),
                       .tasks_total = p->tasks_total,
                       .elapsed_s = (double)(now - p->began_ns) * 1e-9};
    p->fn(p->user, &out);
    pthread_mutex_unlock(&p->mu);
}

static void maybe_report(sc__progress *p) {
    if (now_ns() >= atomic_load(&p->next_ns)) report(p, false);
}

void sc__progress_stage(sc__progress *p, const char *stage, uint64_t total) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stage = stage;
    if (strcmp(stage, "read") == 0) p->files_total = total;
    else if (strcmp(stage, "build") == 0) {
        p->ranks_total = total;
        atomic_store(&p->ranks_done, 0);
    } else {
        p->tasks_total = total;
        atomic_store(&p->tasks_done, 0);
    }
    pthread_mutex_unlock(&p->mu);
    report(p, true);
}

void sc__progress_bytes(sc__progress *p, uint64_t n) {
    if (!p) return;
    atomic_fetch_add(&p->bytes, n);
    maybe_report(p);
}

void sc__progress_files(sc__progress *p, uint64_t n) {
    if (!p) return;
    atomic_fetch_add(&p->files_done, n);
    maybe_report(p);
}

void sc__progress_ranks(sc__progress *p, uint64_t n) {
    if (!p) return;
    atomic_fetch_add(&p->ranks_done, n);
    maybe_report(p);
}

void sc__progress_tasks(sc__progress *p, uint64_t n) {
    if (!p) return;
    atomic_fetch_add(&p->tasks_done, n);
    maybe_report(p);
}

void sc__progress_flush(sc__progress *p) {
    if (p) report(p, true);
}
