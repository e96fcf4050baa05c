/*
 * fuzz_json.c - libFuzzer target: the streaming JSON scanner primitives
 * (src/readers/json.h) under the unit-and-retry protocol.
 *
 * Byte 0 picks the sequence of primitives, byte 1 the window size (as small
 * as 16 bytes, so nearly every unit crosses a refill boundary - the place a
 * streaming scanner goes wrong) and the guards; the rest is the text. Each
 * primitive call is one unit: on SC__J_MORE the window is refilled keeping
 * the unit's bytes and the call is repeated, exactly as the readers do.
 * Oracles beyond "no crash": strings come back as valid UTF-8 within the
 * length guard, and an error always carries a message.
 */
#include "../src/readers/json.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_utf8(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        size_t k = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                              : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!k || i + k > n) abort();
        for (size_t j = 1; j < k; j++)
            if ((u[i + j] & 0xC0) != 0x80) abort();
        i += k;
    }
}

static int one_op(sc__jp *jp, unsigned op, const sc_load_options *opts) {
    sc__jstr s;
    int64_t v;
    double d;
    bool b;
    int rc;
    switch (op % 10) {
    case 0:
        rc = sc__jp_string(jp, &s);
        if (rc == SC__J_OK) {
            if (s.n > opts->max_string_bytes) abort();
            check_utf8(s.s, s.n);
        }
        return rc;
    case 1: return sc__jp_int(jp, &v);
    case 2: return sc__jp_time_ns(jp, &v);
    case 3: return sc__jp_double(jp, &d);
    case 4: return sc__jp_skip(jp);
    case 5:
        rc = sc__jp_raw(jp, &s);
        if (rc == SC__J_OK && s.n == 0) abort(); /* a value is never empty */
        return rc;
    case 6: return sc__jp_int_lenient(jp, &v, &b);
    case 7: return sc__jp_expect(jp, "{[:,]}"[(op / 10) % 6]);
    case 8: return sc__jp_next(jp, (op / 10) & 1 ? '}' : ']', &b);
    default: sc__jp_peek(jp); return SC__J_OK;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    uint8_t ops = data[0], ctl = data[1];
    data += 2;
    size -= 2;
    int64_t iv;
    sc__parse_int_text((const char *)data, size < 40 ? size : 40, &iv);

    sc_load_options opts = {.max_string_bytes = (ctl & 1) ? 40 : 1u << 20,
                            .max_depth = (ctl & 2) ? 4 : 64,
                            .max_event_bytes = 1u << 20};
    sc__source src;
    sc_error err;
    sc__error_clear(&err);
    if (sc__source_open_mem(&src, data, size, "fuzz.json", &err) != SC_OK) return 0;
    sc__jwin w;
    size_t initial = (size_t)16 << ((ctl >> 2) & 7); /* 16 bytes .. 2 KiB */
    if (sc__jwin_init(&w, &src, initial, opts.max_event_bytes, &err) != SC_OK) abort();
    sc__jp jp;
    if (!sc__jp_init(&jp, &w, "fuzz.json", &opts, &err)) abort();
    unsigned seq = ops * 2654435761u;
    for (int i = 0; i < 256; i++) {
        const char *unit = jp.p;
        unsigned op = (seq >> (i % 24)) + (unsigned)i * ops;
        int rc = one_op(&jp, op, &opts);
        while (rc == SC__J_MORE) {
            rc = sc__jwin_refill(&jp, unit);
            if (rc != SC__J_OK) break;
            unit = jp.p;
            rc = one_op(&jp, op, &opts);
        }
        if (rc == SC__J_ERR) {
            if (!err.message[0]) abort(); /* errors always say what went wrong */
            break;
        }
        if (jp.p > jp.end) abort(); /* the cursor never passes the sentinel */
        if (w.eof && jp.p == jp.end) break;
    }
    sc__jp_free(&jp);
    sc__jwin_free(&w);
    sc__source_close(&src);
    return 0;
}
