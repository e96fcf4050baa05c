/*
 * fuzz_et.c - libFuzzer target: the PyTorch Execution Trace reader
 * (src/readers/pytorch_et.c) and its `stepcast et` report.
 *
 * The loader takes a path, so the input goes into a memfd opened as
 * /proc/self/fd/N. A trace that loads is reported (text or JSON, by the
 * input's parity) without a Kineto trace to link.
 */
#include "fuzzutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) devnull = fopen("/dev/null", "w");
    char path[64];
    int fd = fuzz_memfile("fuzz.et.json", data, size, path, sizeof path);
    sc_et *et = NULL;
    sc_error err;
    if (sc_et_load(path, &et, &err) == SC_OK) {
        sc_et_write(et, NULL, devnull, size & 1, &err);
        sc_et_free(et);
    } else if (et || !err.message[0]) {
        abort();
    }
    close(fd);
    return 0;
}
