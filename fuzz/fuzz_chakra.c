/*
 * fuzz_chakra.c - libFuzzer target: the Chakra execution-trace reader
 * (src/readers/chakra.c, chakra_wire.c) and the graph built from it.
 *
 * The loader takes a path, so the input goes into a memfd and is opened as
 * /proc/self/fd/N (no disk traffic). A file that loads is then built into a
 * graph (dependency resolution, cycle check, collective matching),
 * summarised by `stepcast info`'s Chakra view and replayed (calibration and
 * the simulator on whatever edges and families the file names): the framing
 * check at load time must have rejected anything the later decoding cannot
 * handle.
 */
#include "../src/readers/readers.h"
#include "fuzzutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) devnull = fopen("/dev/null", "w");
    char path[64];
    int fd = fuzz_memfile("fuzz.0.et", data, size, path, sizeof path);
    sc_trace *t = NULL;
    sc_error err;
    sc_status st = sc__chakra_load(path, NULL, &t, &err);
    if (st == SC_OK) {
        sc_trace *one[1] = {t};
        sc_traceset set = {.traces = one, .count = 1};
        /* The replay builds the graph (and stops where that fails). */
        fuzz_replay(&set, devnull, size & 2);
        fuzz_info(&set, devnull, size & 1);
        sc_trace_free(t);
    } else if (t || !err.message[0]) {
        abort(); /* a failed load hands out nothing and says why */
    }
    close(fd);
    return 0;
}
