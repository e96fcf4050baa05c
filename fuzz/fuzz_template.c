/*
 * fuzz_template.c - libFuzzer target, differential: events read by learned
 * layouts (src/readers/kineto_template.c) against the same input read key
 * by key.
 *
 * The input is read both ways from memory, with a read window of 16 B ..
 * 2 KiB chosen from its length (so that events straddle refills in the
 * middle of a template). Both must succeed with the same trace, array for
 * array and string for string, or fail with the same message at the same
 * byte. Anything else is a finding.
 */
#include "../src/readers/kineto.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sc_load_options opts = {.max_string_bytes = 1u << 20, .max_depth = 64,
                            .max_event_bytes = 8u << 20, .threads = 1,
                            .window_bytes = size % 3 ? 16u << (size % 8) : 0};
    sc_trace *a = NULL, *b = NULL;
    sc_error ea, eb;
    sc_status sa = sc__kineto_load_buffer(data, size, "f.json", &opts, false, NULL, &a, &ea);
    sc_status sb = sc__kineto_load_buffer(data, size, "f.json", &opts, true, NULL, &b, &eb);
    if (sa != sb) abort();
    if (sa == SC_OK && !sc__trace_same(a, b)) abort();
    if (sa != SC_OK && (strcmp(ea.message, eb.message) != 0 || ea.offset != eb.offset)) abort();
    sc_trace_free(a);
    sc_trace_free(b);
    return 0;
}
