/*
 * fuzz_split.c - libFuzzer target, differential: one file read split over
 * threads (src/readers/kineto_split.c) against the sequential reader.
 *
 * The input is written to a temporary file and read both ways, split into
 * slices of 16 B .. 2 KiB with 2 .. 5 threads (from the input's length and
 * first byte). The splitter may decline; when it does not, the two traces
 * must be the same, array for array and string for string, and the
 * sequential read must have succeeded too. Anything else is a finding.
 */
#include "../src/readers/kineto.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char path[64]; /* one file per fuzzing process, rewritten each run */

static void remove_file(void) { unlink(path); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/stepcast-fuzz-split-%ld.json", (long)getpid());
        atexit(remove_file);
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    fclose(f);
    sc_load_options opts = {.max_string_bytes = 1u << 20, .max_depth = 64,
                            .max_event_bytes = 8u << 20, .threads = 1};
    unsigned threads = 2 + (size ? data[0] % 4 : 0);
    size_t slice = 16u << (size % 8);
    sc_trace *split = NULL, *seq = NULL;
    sc_error err;
    bool took = sc__kineto_load_split(path, &opts, threads, slice, &split);
    sc_status st = sc_trace_load(path, &opts, &seq, &err);
    if (took) {
        if (!split || st != SC_OK) abort(); /* split accepted what the reader refuses */
        if (!sc__trace_same(seq, split)) abort();
    } else if (split) {
        abort(); /* a declined split must hand out nothing */
    }
    sc_trace_free(split);
    sc_trace_free(seq);
    return 0;
}
