/*
 * fuzz_et.c - libFuzzer target: the PyTorch Execution Trace reader
 * (src/readers/pytorch_et.c) and its `stepcast et` report.
 *
 * The loader takes a path, so the input goes into a memfd opened as
 * /proc/self/fd/N. A trace that loads is reported (text or JSON, by the
 * input's parity) without a Kineto trace to link.
 */
#include "stepcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) devnull = fopen("/dev/null", "w");
    int fd = memfd_create("fuzz.et.json", 0);
    if (fd < 0) abort();
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
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
