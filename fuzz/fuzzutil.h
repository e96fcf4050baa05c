/*
 * fuzzutil.h - what the fuzz targets share: the input as a file for the
 * readers that take a path, and what they run on a trace they could load:
 * each stage the CLI runs (info, graph, replay) and its report, to
 * /dev/null. Errors are fine (hostile input); crashes, leaks and hangs are
 * not.
 */
#ifndef SC_FUZZ_UTIL_H
#define SC_FUZZ_UTIL_H

#include "stepcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The input in a memory file named name; its path (/proc/self/fd/N) into
 * path. Returns the descriptor for the caller to close. */
static inline int fuzz_memfile(const char *name, const uint8_t *data, size_t size, char *path, size_t cap) {
    int fd = memfd_create(name, 0);
    if (fd < 0) abort();
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

static inline void fuzz_info(const sc_traceset *set, FILE *out, int json) {
    sc_error err;
    sc_info *info;
    if (sc_info_of_set(set, &info, &err) == SC_OK) sc_info_write(info, out, json, &err);
    sc_info_free(info);
}

static inline void fuzz_graph(const sc_traceset *set, FILE *out, int json) {
    sc_error err;
    sc_graph *g;
    if (sc_graph_build(set, NULL, &g, &err) == SC_OK) sc_graph_write(g, out, json, &err);
    sc_graph_free(g);
}

static inline void fuzz_replay(const sc_traceset *set, FILE *out, int json) {
    sc_error err;
    sc_replay *r;
    if (sc_replay_run(set, NULL, &r, &err) == SC_OK) sc_replay_write(r, out, json, &err);
    sc_replay_free(r);
}

#endif /* SC_FUZZ_UTIL_H */
