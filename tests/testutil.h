/*
 * testutil.h - shared helpers for the cmocka test programs.
 *
 * Tests run from the repository root (tests/run.sh sees to it). Real traces
 * come from ../shared/traces (override with STEPCAST_SHARED=/path/to/shared);
 * CI has ../shared beside the checkout, so a missing folder is a failure, not
 * a skip.
 */
#ifndef SC_TESTUTIL_H
#define SC_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "stepcast.h"

/* The reports the CLI prints, from the stages it runs: a graph of set, or
 * the summary of a set already loaded, written to f. */
static inline sc_status sc_test_graph_report(const sc_traceset *set, const sc_graph_options *o, FILE *f,
                                             int json, sc_error *err) {
    sc_graph *g;
    sc_status st = sc_graph_build(set, o, &g, err);
    if (st == SC_OK) st = sc_graph_write(g, f, json, err);
    sc_graph_free(g);
    return st;
}

static inline sc_status sc_test_info_report(const sc_traceset *set, FILE *f, int json, sc_error *err) {
    sc_info *info;
    sc_status st = sc_info_of_set(set, &info, err);
    if (st == SC_OK) st = sc_info_write(info, f, json, err);
    sc_info_free(info);
    return st;
}

/* Full path of a file under shared/traces; static buffer, one call at a time. */
static inline const char *sc_test_trace(const char *rel) {
    static char buf[4096];
    const char *root = getenv("STEPCAST_SHARED");
    snprintf(buf, sizeof buf, "%s/traces/%s", root && *root ? root : "../shared", rel);
    return buf;
}

/* The trace set of paths, which must load (else the test fails, saying why). */
static inline sc_traceset *sc_test_load(const char *const *paths, size_t n) {
    sc_traceset *set = NULL;
    sc_error err;
    if (sc_traceset_load(paths, n, NULL, &set, &err) != SC_OK) fail_msg("%s", err.message);
    return set;
}

static inline sc_traceset *sc_test_load_path(const char *path) { return sc_test_load(&path, 1); }

/* The same for a file or folder under shared/traces. */
static inline sc_traceset *sc_test_load_shared(const char *rel) { return sc_test_load_path(sc_test_trace(rel)); }

/* Where tests put what they generate: $TMPDIR, else /tmp. */
static inline const char *sc_test_tmpdir(void) {
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

/* Writes data to a fresh temporary file and returns its path (static buffer). */
static inline const char *sc_test_tmpfile(const void *data, size_t n, const char *suffix) {
    static char path[256];
    static unsigned counter;
    snprintf(path, sizeof path, "%s/stepcast-test-%ld-%u%s", sc_test_tmpdir(), (long)getpid(),
             counter++, suffix ? suffix : "");
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    if (n && fwrite(data, 1, n, f) != n) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return path;
}

/* The trace set of one trace given as JSON text, loaded from a temporary
 * file (removed again) as a trace on disk is. */
static inline sc_traceset *sc_test_load_text(const char *json) {
    const char *path = sc_test_tmpfile(json, strlen(json), ".json");
    assert_non_null(path);
    char copy[256];
    snprintf(copy, sizeof copy, "%s", path);
    sc_traceset *set = sc_test_load_path(copy);
    remove(copy);
    return set;
}

/* SC_TEST_TSAN: 1 in a ThreadSanitizer build (make tsan), where a test runs
 * 25 to 40 times slower than in a plain one. */
#if defined(__SANITIZE_THREAD__)
#define SC_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SC_TEST_TSAN 1
#endif
#endif
#ifndef SC_TEST_TSAN
#define SC_TEST_TSAN 0
#endif

/* False where STEPCAST_CORPUS_BIG=0 (set it to run a test under valgrind)
 * and under ThreadSanitizer: large inputs are about time and memory, not memory
 * errors or races (the small traces start the same threads, slices and
 * chunks), and are left out there. */
static inline int sc_test_big_ok(void) {
    if (SC_TEST_TSAN) return 0;
    const char *v = getenv("STEPCAST_CORPUS_BIG");
    return !(v && strcmp(v, "0") == 0);
}

/* Reads a whole file, gunzipped when it is gzip; malloc'ed, NULL on error.
 * A NUL follows the n bytes, so that text can be searched as a string. */
static inline unsigned char *sc_test_read_file(const char *path, size_t *n) {
    *n = 0;
    gzFile g = gzopen(path, "rb");
    if (!g) return NULL;
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (buf && len + 1 >= cap) { /* room for the NUL after the bytes */
            unsigned char *nb = realloc(buf, cap * 2);
            if (!nb) free(buf);
            buf = nb;
            cap *= 2;
        }
        if (!buf) break;
        int got = gzread(g, buf + len, (unsigned)(cap - len - 1));
        if (got < 0) {
            free(buf);
            buf = NULL;
        }
        if (got <= 0) break;
        len += (size_t)got;
    }
    gzclose(g);
    if (buf) buf[len] = 0;
    *n = len;
    return buf;
}

/* A whole file's bytes as they are on disk (no gunzip); malloc'ed, with a
 * NUL after them. The file must be readable. */
static inline unsigned char *sc_test_read_raw(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(len >= 0);
    unsigned char *buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    buf[len] = 0;
    *n = (size_t)len;
    return buf;
}

/* One gzip member holding data[0..n); malloc'ed, NULL on error. */
static inline unsigned char *sc_test_gzip(const void *data, size_t n, size_t *out_n) {
    *out_n = 0;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
    size_t cap = deflateBound(&zs, (uLong)n) + 64;
    unsigned char *out = malloc(cap);
    zs.next_in = (unsigned char *)data;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    if (!out || deflate(&zs, Z_FINISH) != Z_STREAM_END) {
        free(out);
        out = NULL;
    }
    *out_n = cap - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

/* Writes {"traceEvents":[{"ph":"X","ts":1,"name":"aaa..."}]} whose name is a
 * 2 GiB string, as concatenated gzip members (2048 copies of one compressed
 * MiB): ~2 MB on disk, written in milliseconds. The string starts at byte
 * 41. Returns the malloc'ed path of the temporary file, NULL on error. */
static inline char *sc_test_2gb_string_trace(void) {
    static const char head[] = "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"name\":\"";
    static const char tail[] = "\"}]}";
    size_t mib = (size_t)1 << 20, hn = 0, bn = 0, tn = 0;
    char *block = malloc(mib), *path = NULL;
    if (block) memset(block, 'a', mib);
    unsigned char *h = sc_test_gzip(head, sizeof head - 1, &hn);
    unsigned char *b = block ? sc_test_gzip(block, mib, &bn) : NULL;
    unsigned char *t = sc_test_gzip(tail, sizeof tail - 1, &tn);
    const char *p = h && b && t ? sc_test_tmpfile(h, hn, ".json.gz") : NULL;
    FILE *f = p ? fopen(p, "ab") : NULL;
    if (f) {
        int ok = 1;
        for (int i = 0; i < 2048 && ok; i++) ok = fwrite(b, 1, bn, f) == bn;
        ok = ok && fwrite(t, 1, tn, f) == tn;
        if (fclose(f) == 0 && ok) path = strdup(p);
    }
    free(block);
    free(h);
    free(b);
    free(t);
    return path;
}

#endif
