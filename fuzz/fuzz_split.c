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

static void same_vec(const sc__vec *a, const sc__vec *b) {
    if (a->len != b->len || (a->len && memcmp(a->data, b->data, a->len * a->elem) != 0)) abort();
}

static void identical(const sc_trace *a, const sc_trace *b) {
    same_vec(&a->events, &b->events);
    same_vec(&a->exts, &b->exts);
    same_vec(&a->shapes, &b->shapes);
    same_vec(&a->tracks, &b->tracks);
    same_vec(&a->devices, &b->devices);
    if (a->strings.count != b->strings.count) abort();
    for (uint32_t i = 0; i < a->strings.count; i++)
        if (a->strings.lens[i] != b->strings.lens[i] ||
            memcmp(a->strings.strs[i], b->strings.strs[i], a->strings.lens[i]) != 0)
            abort();
    if (a->rank != b->rank || a->world_size != b->world_size || a->backend != b->backend ||
        a->base_time_ns != b->base_time_ns || a->input_bytes != b->input_bytes)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/stepcast-fuzz-split-%ld.json", (long)getpid());
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
        identical(seq, split);
    } else if (split) {
        abort(); /* a declined split must hand out nothing */
    }
    sc_trace_free(split);
    sc_trace_free(seq);
    return 0;
}
