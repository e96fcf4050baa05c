/*
 * fuzz_gzip.c - libFuzzer target: the gzip byte source (src/io/source.c).
 *
 * The first byte picks a mode:
 *   mode 0: the rest is fed to the source as-is (raw gzip framing, corrupt
 *           members, zero padding) and read out in odd-sized chunks;
 *   mode 1: the rest is compressed here as one or two gzip members, maybe
 *           zero-padded, maybe truncated; the source must give back exactly
 *           the original bytes when the stream is intact (an oracle, not just
 *           "no crash") and a clean error when it is truncated; the Kineto
 *           reader then runs over the same compressed bytes.
 */
#include "../src/io/source.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads everything from s in chunks of varying size; returns the status. */
static sc_status drain(sc__source *s, unsigned char *out, size_t cap, size_t *len, unsigned seed) {
    unsigned char chunk[4096];
    *len = 0;
    sc_error err;
    for (unsigned i = 0;; i++) {
        size_t want = 1 + ((seed * 131u + i * 977u) % sizeof chunk);
        size_t got;
        sc_status st = sc__source_read(s, chunk, want, &got, &err);
        if (st != SC_OK) return st;
        if (got > want) abort();
        if (got == 0) return SC_OK;
        if (out) {
            if (*len + got > cap) abort(); /* more bytes than went in */
            memcpy(out + *len, chunk, got);
        }
        *len += got;
        if (*len > (64u << 20)) return SC_E_LIMIT; /* a bomb: stop, not a bug */
    }
}

/* One gzip member of src into dst; returns its size (0 on failure). */
static size_t gz_member(const uint8_t *src, size_t n, unsigned char *dst, size_t cap, int level) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    zs.next_in = (unsigned char *)src;
    zs.avail_in = (uInt)n;
    zs.next_out = dst;
    zs.avail_out = (uInt)cap;
    int r = deflate(&zs, Z_FINISH);
    size_t out = cap - zs.avail_out;
    deflateEnd(&zs);
    return r == Z_STREAM_END ? out : 0;
}

static void mode_raw(const uint8_t *data, size_t size, unsigned seed) {
    sc__source s;
    sc_error err;
    if (sc__source_open_mem(&s, data, size, "fuzz.gz", &err) != SC_OK) return;
    size_t len;
    drain(&s, NULL, 0, &len, seed);
    sc__source_close(&s);
}

static void mode_compress(const uint8_t *data, size_t size, uint8_t ctl) {
    if (size > (1u << 20)) return;
    size_t cap = 2 * size + 1024;
    unsigned char *gz = malloc(cap), *back = malloc(size + 1);
    if (!gz || !back) abort();
    size_t split = (ctl & 1) ? size / 2 : size; /* two members when odd */
    int level = (ctl >> 1) & 1 ? 9 : 1;
    size_t n = gz_member(data, split, gz, cap, level);
    if (split < size) n += gz_member(data + split, size - split, gz + n, cap - n, level);
    size_t pad = (ctl >> 2) & 3; /* trailing zero padding, as some tools write */
    memset(gz + n, 0, pad);
    n += pad;
    size_t cut = (ctl >> 4) & 7; /* drop this many bytes from the end */
    bool truncated = cut > pad && n > cut;
    if (n > cut) n -= cut;
    sc__source s;
    sc_error err;
    if (sc__source_open_mem(&s, gz, n, "fuzz.gz", &err) != SC_OK) abort();
    size_t len;
    sc_status st = drain(&s, back, size, &len, ctl);
    sc__source_close(&s);
    if (!truncated) {
        if (st != SC_OK || len != size || memcmp(back, data, size) != 0) abort();
    } else if (st == SC_OK) {
        abort(); /* lost trailer bytes (CRC, size) yet reported success */
    }
    sc_load_options opts = {.max_string_bytes = 1u << 20, .max_depth = 64,
                            .max_event_bytes = 8u << 20, .window_bytes = 64u << (ctl & 7)};
    sc_trace *t = NULL;
    if (sc_trace_load_buffer(gz, n, "fuzz.json.gz", &opts, &t, &err) == SC_OK) sc_trace_free(t);
    free(gz);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    uint8_t mode = data[0], ctl = data[1];
    if (mode & 1) mode_compress(data + 2, size - 2, ctl);
    else mode_raw(data + 1, size - 1, ctl);
    return 0;
}
