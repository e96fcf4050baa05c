/*
 * fuzz_profile.c - libFuzzer target: hardware profile files
 * (src/models/hardware.c) and the `stepcast comm` table of the model one
 * makes (src/models/comm.c, src/report/comm_report.c).
 *
 * The loader takes a path, so the input goes into a memfd opened as
 * /proc/self/fd/N. A profile that loads is turned into a model and its
 * table over a few sizes and group sizes is written (text or JSON, by the
 * input's parity); one that does not must say why.
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
    int fd = fuzz_memfile("fuzz.profile.json", data, size, path, sizeof path);
    static const uint64_t sizes[] = {0, 1, 4096, 1u << 20, 1ull << 33};
    static const uint32_t ranks[] = {1, 2, 8, 9, 1024};
    for (size_t r = 0; r < sizeof ranks / sizeof *ranks; r++) {
        sc_comm_options o = SC_COMM_OPTIONS_INIT;
        o.profile_path = path;
        o.ranks = ranks[r];
        o.sizes = sizes;
        o.nsizes = sizeof sizes / sizeof *sizes;
        o.op = r & 1 ? "all_to_all" : "all_reduce";
        sc_comm *c = NULL;
        sc_error err;
        if (sc_comm_run(NULL, &o, &c, &err) == SC_OK) {
            sc_comm_write(c, devnull, size & 1, &err);
            sc_comm_free(c);
        } else if (c || !err.message[0]) {
            abort();
        } else {
            break; /* the same file fails the same way at any group size */
        }
    }
    close(fd);
    return 0;
}
