/*
 * fuzz_split.c - libFuzzer target, differential: one file read split over
 * threads (src/readers/kineto_parallel.c, plain and gzip) against the
 * sequential reader.
 *
 * The input is written to a temporary file, plain and gzip'ed, and read
 * every way, in slices or chunks of 16 B .. 2 KiB with 2 .. 5 threads (from
 * the input's length and first byte). A splitter may decline; when it does
 * not, its trace must be the sequential one, array for array and string for
 * string, and the sequential read must have succeeded too. Anything else
 * is a finding.
 */
#include "../src/readers/kineto.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

/* one pair of files per fuzzing process, rewritten each run */
static char path[64], gz_path[64];

static void remove_files(void) {
    unlink(path);
    unlink(gz_path);
}

static bool write_gzip(const uint8_t *data, size_t size) {
    gzFile g = gzopen(gz_path, "wb1");
    if (!g) return false;
    bool ok = !size || gzwrite(g, data, (unsigned)size) == (int)size;
    return gzclose(g) == Z_OK && ok;
}

/* A splitter's verdict against the sequential read's. */
static void check(bool took, sc_trace *split, sc_status st, const sc_trace *seq) {
    if (took) {
        if (!split || st != SC_OK) abort(); /* split accepted what the reader refuses */
        if (!sc__trace_same(seq, split)) abort();
    } else if (split) {
        abort(); /* a declined split must hand out nothing */
    }
    sc_trace_free(split);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/stepcast-fuzz-split-%ld.json", (long)getpid());
        snprintf(gz_path, sizeof gz_path, "%s.gz", path);
        atexit(remove_files);
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    fclose(f);
    if (!write_gzip(data, size)) return 0;
    sc_load_options opts = {.max_string_bytes = 1u << 20, .max_depth = 64,
                            .max_event_bytes = 8u << 20, .threads = 1};
    unsigned threads = 2 + (size ? data[0] % 4 : 0);
    size_t slice = 16u << (size % 8);
    sc_trace *split = NULL, *stream = NULL, *seq = NULL;
    sc_error err;
    bool took = sc__kineto_load_parallel(path, &opts, threads, slice, &split);
    bool streamed = sc__kineto_load_parallel(gz_path, &opts, threads, slice, &stream);
    sc_status st = sc_trace_load(path, &opts, &seq, &err);
    check(took, split, st, seq);
    check(streamed, stream, st, seq);
    sc_trace_free(seq);
    return 0;
}
