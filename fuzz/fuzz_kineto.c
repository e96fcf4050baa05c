/*
 * fuzz_kineto.c - libFuzzer target: the Kineto reader on an in-memory trace
 * (sc_trace_load_buffer), then `stepcast info` over what it read.
 *
 * The input is the trace bytes as-is (plain JSON; gzip magic switches to the
 * gzip path, which fuzz_gzip.c covers in depth). A trace that loads must
 * also survive the reports: info walks every event, track and string (a
 * reader that accepts garbage and leaves inconsistent indices fails here);
 * graph and replay run the graph builder, calibration and the simulator on
 * whatever the reader accepted (hostile times, orphan launches, odd nesting).
 */
#include "../src/trace/trace.h"
#include "fuzzutil.h"

#include <stdio.h>
#include <stdlib.h>

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) devnull = fopen("/dev/null", "w");
    /* Small guards so one input cannot take the fuzzer's whole memory, and a
     * small read window (16 B .. 2 KiB, from the input's length) so units
     * cross refill boundaries as they do in GB-sized files. */
    sc_load_options opts = {.max_string_bytes = 1u << 20, .max_depth = 64,
                            .max_event_bytes = 8u << 20,
                            .window_bytes = 16u << (size % 8)};
    sc_trace *t = NULL;
    sc_error err;
    sc_status st = sc_trace_load_buffer(data, size, "fuzz.json", &opts, &t, &err);
    if (st != SC_OK) {
        if (t) abort(); /* a failed load must not hand out a trace */
        if (err.status != st || !err.message[0]) abort(); /* every error says why */
        return 0;
    }
    (void)sc_trace_event_count(t);
    (void)sc_trace_memory(t);
    sc_trace *one[1] = {t};
    sc_traceset set = {.traces = one, .count = 1};
    fuzz_info(&set, devnull, size & 1);
    fuzz_graph(&set, devnull, size & 2);
    fuzz_replay(&set, devnull, size & 4);
    sc_trace_free(t);
    return 0;
}
