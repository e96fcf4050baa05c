/*
 * test_bad_input.c - the classes of bad input through the library API.
 *
 * Truncated files (.json and .json.gz, cut at many points), invalid JSON, a
 * number where a string belongs, a 2 GB string, nesting 10,000 deep, a
 * missing traceEvents, an empty directory and unreadable files. Each must
 * come back as an SC_E_* status (no crash, no hang) whose error names the
 * file and, where the bytes are at fault, the byte offset. Pipes, which can
 * be read only once, must read as the same file does. The CLI side of
 * the same inputs is in test_cli.c. Generated inputs go to $TMPDIR and are
 * removed afterwards; nothing large is committed.
 */
#include "testutil.h"
#include "trace/trace.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>

/* Loads path and expects failure with status st; returns the error. */
static sc_error expect_fail_file(const char *path, const sc_load_options *opts, sc_status st) {
    sc_trace *t = NULL;
    sc_error err;
    sc_status got = sc_trace_load(path, opts, &t, &err);
    if (got == SC_OK) fail_msg("%s: loaded, expected %s", path, sc_status_name(st));
    assert_null(t);
    if (got != st || err.status != st)
        fail_msg("%s: %s (%s), expected %s", path, sc_status_name(got), err.message,
                 sc_status_name(st));
    assert_string_equal(err.file, path);
    assert_true(err.message[0] != '\0');
    assert_null(strchr(err.message, '\n'));
    return err;
}

static sc_error expect_fail_text(const char *text, size_t n, sc_status st, uint64_t offset) {
    sc_trace *t = NULL;
    sc_error err;
    sc_status got = sc_trace_load_buffer(text, n, "bad.json", NULL, &t, &err);
    if (got != st)
        fail_msg("'%.60s': %s (%s), expected %s", text, sc_status_name(got),
                 got == SC_OK ? "loaded" : err.message, sc_status_name(st));
    assert_null(t);
    assert_string_equal(err.file, "bad.json");
    if (err.offset != offset)
        fail_msg("'%.60s': offset %llu, want %llu (%s)", text, (unsigned long long)err.offset,
                 (unsigned long long)offset, err.message);
    return err;
}
#define EXPECT_FAIL(lit, st, off) expect_fail_text((lit), sizeof(lit) - 1, (st), (off))

/* The formatted error names the file and the byte offset. */
static void expect_formatted(const sc_error *err, const char *file, uint64_t offset) {
    char buf[1024], want[64];
    sc_error_format(err, buf, sizeof buf);
    assert_non_null(strstr(buf, file));
    snprintf(want, sizeof want, "byte %llu", (unsigned long long)offset);
    if (!strstr(buf, want)) fail_msg("'%s' does not say '%s'", buf, want);
}

static unsigned char *read_all(const char *path, size_t *n) {
    unsigned char *buf = sc_test_read_file(path, n);
    assert_non_null(buf);
    return buf;
}

static unsigned char *gzip_bytes(const void *data, size_t n, size_t *out_n) {
    unsigned char *gz = sc_test_gzip(data, n, out_n);
    assert_non_null(gz);
    return gz;
}

static char *tmp_copy(const void *data, size_t n, const char *suffix) {
    const char *p = sc_test_tmpfile(data, n, suffix);
    assert_non_null(p);
    return strdup(p);
}

/* ---------------------------------------------------------------- truncated */

static const char small_trace[] = "hta-testdata/critical_path/cuda_event_sync/event_sync_trace.json.gz";

/* Where the JSON text ends: trailing whitespace is not part of it. */
static size_t json_end(const unsigned char *json, size_t n) {
    while (n > 0 && (json[n - 1] == ' ' || json[n - 1] == '\n' || json[n - 1] == '\r' ||
                     json[n - 1] == '\t'))
        n--;
    return n;
}

/* Every prefix of a real trace fails at its end: "truncated", at the byte
 * where the data stops (as plain JSON and as gzip of the prefix). */
static void check_cuts(const unsigned char *json, size_t n, size_t step, bool also_gz) {
    n = json_end(json, n);
    for (size_t k = 0; k < n; k += step) {
        sc_error err;
        char *path = tmp_copy(json, k, ".json");
        err = expect_fail_file(path, NULL, SC_E_PARSE);
        if (err.offset != k) fail_msg("cut at %zu: offset %llu (%s)", k, (unsigned long long)err.offset, err.message);
        expect_formatted(&err, path, k);
        unlink(path);
        free(path);
        if (!also_gz) continue;
        size_t gn = 0;
        unsigned char *gz = gzip_bytes(json, k, &gn);
        path = tmp_copy(gz, gn, ".json.gz");
        err = expect_fail_file(path, NULL, SC_E_PARSE);
        if (err.offset != k) fail_msg("gzip of cut at %zu: offset %llu", k, (unsigned long long)err.offset);
        unlink(path);
        free(path);
        free(gz);
    }
}

static void test_truncated_json(void **state) {
    (void)state;
    size_t n;
    unsigned char *json = read_all(sc_test_trace(small_trace), &n);
    assert_int_equal(n, 22635);
    check_cuts(json, n, 97, true);
    /* the last bytes one by one; the complete text (without the final
     * newline) loads */
    size_t end = json_end(json, n);
    assert_true(end < n);
    for (size_t k = end - 24; k < end; k++) {
        sc_error err = expect_fail_text((const char *)json, k, SC_E_PARSE, k);
        assert_non_null(strstr(err.message, "end of input"));
    }
    sc_trace *t = NULL;
    sc_error err;
    assert_int_equal(sc_trace_load_buffer(json, end, "whole.json", NULL, &t, &err), SC_OK);
    sc_trace_free(t);
    free(json);
}

/* The same cuts through a large real trace (skipped where large inputs are
 * left out: under valgrind). */
static void test_truncated_big_json(void **state) {
    (void)state;
    if (!sc_test_big_ok()) skip();
    size_t n;
    unsigned char *json = read_all(sc_test_trace("megatron-tp8-a100/megatron_kineto_0.json.gz"), &n);
    check_cuts(json, n, n / 7 + 1, false);
    free(json);
}

/* Regression: a file cut right after its last event used to say
 * "empty input". */
static void test_truncated_after_last_event(void **state) {
    (void)state;
    sc_error err = EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1}",
                               SC_E_PARSE, 50);
    assert_non_null(strstr(err.message, "unexpected end of input"));
    err = EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1}]", SC_E_PARSE, 51);
    assert_non_null(strstr(err.message, "unexpected end of input"));
    err = EXPECT_FAIL("", SC_E_PARSE, 0);
    assert_non_null(strstr(err.message, "empty input"));
    err = EXPECT_FAIL(" \n\t ", SC_E_PARSE, 4);
    assert_non_null(strstr(err.message, "empty input"));
}

/* A gzip stream cut anywhere (header, data, trailer) is an error that
 * names the file and a byte offset. */
static void test_truncated_gzip(void **state) {
    (void)state;
    size_t n;
    unsigned char *gz = sc_test_read_raw(sc_test_trace(small_trace), &n);
    for (size_t k = 1; k < n; k += (k < 16 || k > n - 16) ? 1 : 61) {
        char *path = tmp_copy(gz, k, ".json.gz");
        sc_error err = expect_fail_file(path, NULL, SC_E_PARSE);
        assert_true(err.offset != SC_NO_OFFSET);
        unlink(path);
        free(path);
    }
    /* a corrupt byte in the deflate data */
    gz[n / 2] ^= 0x55;
    char *path = tmp_copy(gz, n, ".json.gz");
    sc_error err = expect_fail_file(path, NULL, SC_E_PARSE);
    assert_true(err.offset != SC_NO_OFFSET);
    unlink(path);
    free(path);
    free(gz);
}

/* ------------------------------------------------------------ invalid JSON */

static void test_invalid_json(void **state) {
    (void)state;
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1},]}", SC_E_PARSE, 38);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\" \"X\"}]}", SC_E_PARSE, 23);
    EXPECT_FAIL("{'traceEvents': []}", SC_E_PARSE, 1);
    EXPECT_FAIL("{\"traceEvents\": []} x", SC_E_PARSE, 20);
    EXPECT_FAIL("{\"traceEvents\": []}{}", SC_E_PARSE, 19);
    EXPECT_FAIL("traceEvents", SC_E_PARSE, 0);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 01}]}", SC_E_PARSE, 36);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": NaN}]}", SC_E_PARSE, 35);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"name\": \"a\tb\"}]}", SC_E_PARSE, 48);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"name\": \"\xc3\x28\"}]}", SC_E_PARSE, 47);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1} {\"ph\": \"X\"}]}", SC_E_PARSE, 38);
    EXPECT_FAIL("\xef\xbb\xbf{\"traceEvents\": []}", SC_E_PARSE, 0); /* a BOM is not JSON */
    /* an error deep into a real trace is reported at its byte */
    size_t n;
    unsigned char *json = read_all(sc_test_trace(small_trace), &n);
    size_t at = n / 2;
    while (json[at] != ',') at++;
    json[at] = ';';
    expect_fail_text((const char *)json, n, SC_E_PARSE, at);
    free(json);
}

/* ------------------------------------------------ wrong types in an event */

static void test_number_where_string_belongs(void **state) {
    (void)state;
    sc_error err = EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"name\": 5}]}",
                               SC_E_FORMAT, 46);
    assert_non_null(strstr(err.message, "name"));
    err = EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"cat\": 5}]}", SC_E_FORMAT, 45);
    assert_non_null(strstr(err.message, "cat"));
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": 5, \"ts\": 1}]}", SC_E_PARSE, 24);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": \"1\"}]}", SC_E_PARSE, 35);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": -5}]}", SC_E_FORMAT, 45);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"XY\", \"ts\": 1}]}", SC_E_FORMAT, 24);
    EXPECT_FAIL("{\"traceEvents\": [{\"name\": \"a\", \"ts\": 1}]}", SC_E_FORMAT, 17);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\"}]}", SC_E_FORMAT, 17);
    EXPECT_FAIL("{\"traceEvents\": [5]}", SC_E_PARSE, 17);
    EXPECT_FAIL("{\"traceEvents\": {}}", SC_E_PARSE, 16);
    EXPECT_FAIL("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1e30}]}", SC_E_LIMIT, 35);
}

/* ------------------------------------------------------------ 2 GB string */

static void test_2gb_string(void **state) {
    (void)state;
    char *path = sc_test_2gb_string_trace();
    assert_non_null(path);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size < 4 * 1000 * 1000);
    /* a small limit stops early */
    sc_load_options o = {.max_string_bytes = 1 << 20};
    sc_error err = expect_fail_file(path, &o, SC_E_LIMIT);
    assert_int_equal(err.offset, 41);
    expect_formatted(&err, path, 41);
    /* the default limit (256 MiB) is tested through the CLI (test_cli.c) */
    unlink(path);
    free(path);
}

/* ------------------------------------------------------------------ nesting */

static char *nested(size_t depth, const char *before, const char *after, size_t *n) {
    size_t bn = strlen(before), an = strlen(after);
    char *s = malloc(bn + 2 * depth + an + 1);
    assert_non_null(s);
    memcpy(s, before, bn);
    memset(s + bn, '[', depth);
    memset(s + bn + depth, ']', depth);
    memcpy(s + bn + 2 * depth, after, an + 1);
    *n = bn + 2 * depth + an;
    return s;
}

static void test_nesting_10000(void **state) {
    (void)state;
    size_t n;
    /* in a top-level member */
    char *s = nested(10000, "{\"traceEvents\": [], \"x\": ", "}", &n);
    sc_error err = expect_fail_text(s, n, SC_E_LIMIT, 25 + 512);
    assert_non_null(strstr(err.message, "nesting"));
    free(s);
    /* in an event's args */
    s = nested(10000, "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"args\": {\"a\": ", "}}]}", &n);
    expect_fail_text(s, n, SC_E_LIMIT, 52 + 512);
    free(s);
    /* as the elements of traceEvents, and as the whole file */
    s = nested(10000, "{\"traceEvents\": ", "}", &n);
    expect_fail_text(s, n, SC_E_PARSE, 17);
    free(s);
    s = nested(10000, "", "", &n);
    expect_fail_text(s, n, SC_E_PARSE, 1);
    free(s);
    /* the same through a file and a tiny window */
    s = nested(10000, "{\"traceEvents\": [], \"x\": ", "}", &n);
    char *path = tmp_copy(s, n, ".json");
    sc_load_options o = {.window_bytes = 64};
    err = expect_fail_file(path, &o, SC_E_LIMIT);
    assert_int_equal(err.offset, 25 + 512);
    unlink(path);
    free(path);
    free(s);
}

/* ---------------------------------------------------- missing traceEvents */

static void test_missing_trace_events(void **state) {
    (void)state;
    sc_error err = EXPECT_FAIL("{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 0}}",
                               SC_E_FORMAT, 52);
    assert_non_null(strstr(err.message, "traceEvents"));
    EXPECT_FAIL("{}", SC_E_FORMAT, 2);
    EXPECT_FAIL("{\"traceevents\": []}", SC_E_FORMAT, 19);
    /* a PyTorch Execution Trace named explicitly */
    EXPECT_FAIL("{\"schema\": \"1.0.1\", \"nodes\": []}\n", SC_E_FORMAT, 33);
}

/* ---------------------------------------------- directories and unreadables */

static void test_empty_directory(void **state) {
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/stepcast-empty-%ld", sc_test_tmpdir(), (long)getpid());
    assert_int_equal(mkdir(dir, 0700), 0);
    const char *paths[] = {dir};
    sc_traceset *set = NULL;
    sc_error err;
    sc_status st = sc_traceset_load(paths, 1, NULL, &set, &err);
    assert_int_equal(st, SC_E_FORMAT); /* bad input (exit 1), not a usage error */
    assert_null(set);
    assert_string_equal(err.file, dir);
    /* a directory holding only files that are not traces */
    char other[300];
    snprintf(other, sizeof other, "%s/notes.txt", dir);
    FILE *f = fopen(other, "w");
    assert_non_null(f);
    fputs("not a trace\n", f);
    fclose(f);
    assert_int_equal(sc_traceset_load(paths, 1, NULL, &set, &err), SC_E_FORMAT);
    unlink(other);
    rmdir(dir);
}

static void test_unreadable(void **state) {
    (void)state;
    /* a file that does not exist */
    char missing[256];
    snprintf(missing, sizeof missing, "%s/stepcast-missing-%ld.json", sc_test_tmpdir(),
             (long)getpid());
    sc_error err = expect_fail_file(missing, NULL, SC_E_IO);
    assert_non_null(strstr(err.message, "cannot open"));
    const char *paths[] = {missing};
    sc_traceset *set = NULL;
    assert_int_equal(sc_traceset_load(paths, 1, NULL, &set, &err), SC_E_IO);
    assert_string_equal(err.file, missing);

    /* a directory where a file belongs (root can read anything, so chmod
     * cannot make a file unreadable in CI) */
    char dir[256];
    snprintf(dir, sizeof dir, "%s/stepcast-dir-%ld.json", sc_test_tmpdir(), (long)getpid());
    assert_int_equal(mkdir(dir, 0700), 0);
    err = expect_fail_file(dir, NULL, SC_E_IO);
    assert_int_equal(err.offset, 0);
    expect_formatted(&err, dir, 0);
    rmdir(dir);

    /* a FIFO nobody writes to: an error at once, not a hang */
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/stepcast-fifo-%ld.json", sc_test_tmpdir(), (long)getpid());
    assert_int_equal(mkfifo(fifo, 0600), 0);
    err = expect_fail_file(fifo, NULL, SC_E_PARSE);
    assert_int_equal(err.offset, 0);
    assert_non_null(strstr(err.message, "empty"));
    const char *fp[] = {fifo};
    assert_int_equal(sc_traceset_load(fp, 1, NULL, &set, &err), SC_E_PARSE);
    assert_string_equal(err.file, fifo);
    unlink(fifo);
}

typedef struct fifo_feed {
    int fd; /* the FIFO's write end, open before the reader comes */
    const unsigned char *data;
    size_t n;
    int hold; /* -1, or a pipe to wait on before closing: a live writer */
} fifo_feed;

static void *feed_fifo(void *arg) {
    const fifo_feed *f = arg;
    for (size_t done = 0; done < f->n;) {
        ssize_t k = write(f->fd, f->data + done, f->n - done);
        if (k <= 0) break;
        done += (size_t)k;
    }
    char c;
    if (f->hold >= 0 && read(f->hold, &c, 1) < 0) c = 0;
    close(f->fd);
    return NULL;
}

/* Reads what a reader that stopped early left in the FIFO, or its writer
 * waits on a full pipe for good; returns once the writer has closed. */
static void drain_fifo(const char *fifo) {
    int drain = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(drain >= 0);
    for (char buf[4096];;) {
        ssize_t k = read(drain, buf, sizeof buf);
        if (k == 0) break; /* the writer has closed its end */
        if (k < 0) usleep(1000);
    }
    close(drain);
}

/* Loads data written into a FIFO by another thread; it must fail. With
 * `hold`, the writer keeps its end open until the load has returned. */
static sc_error fail_through_fifo_held(const unsigned char *data, size_t n, unsigned threads, bool hold) {
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/stepcast-gzfifo-%ld.json.gz", sc_test_tmpdir(), (long)getpid());
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* O_RDWR opens a FIFO without waiting for a reader (Linux), so the
     * data is there however the threads run */
    int release[2] = {-1, -1};
    if (hold) assert_int_equal(pipe(release), 0);
    fifo_feed feed = {open(fifo, O_RDWR), data, n, release[0]};
    assert_true(feed.fd >= 0);
    pthread_t writer;
    assert_int_equal(pthread_create(&writer, NULL, feed_fifo, &feed), 0);
    sc_load_options o = {.threads = threads};
    sc_error err = expect_fail_file(fifo, &o, SC_E_PARSE);
    if (hold) {
        assert_int_equal(write(release[1], "x", 1), 1);
        close(release[1]);
    }
    /* The reader stops at the damage and leaves the rest */
    drain_fifo(fifo);
    pthread_join(writer, NULL);
    if (hold) close(release[0]);
    unlink(fifo);
    return err;
}

static sc_error fail_through_fifo(const unsigned char *data, size_t n, unsigned threads) {
    return fail_through_fifo_held(data, n, threads, false);
}

/* Regression: a corrupt gzip trace read from a pipe with threads to spare
 * was inflated ahead, failed, and was re-read for the exact error - from a
 * pipe already drained ("empty input" at byte 0, or a wait for a writer
 * that had gone). Only a regular file is read on several threads (now by
 * kineto_parallel.c), so threads change nothing about what a pipe reports. */
static void test_corrupt_gzip_from_pipe(void **state) {
    (void)state;
    size_t cap = 4u << 20, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)sprintf(text, "{\"traceEvents\":[");
    for (int i = 0; len + 200 < cap; i++)
        len += (size_t)sprintf(text + len, "%s{\"ph\":\"X\",\"name\":\"op%d\",\"ts\":%d,\"dur\":1,\"pid\":1,\"tid\":1}",
                               i ? "," : "", i % 97, i);
    len += (size_t)sprintf(text + len, "]}");
    size_t gz_n;
    unsigned char *gz = sc_test_gzip(text, len, &gz_n);
    free(text);
    assert_non_null(gz);
    for (size_t i = gz_n / 2; i < gz_n / 2 + 64; i++) gz[i] ^= 0x5a; /* corrupt the middle */
    sc_error one = fail_through_fifo(gz, gz_n, 1), four = fail_through_fifo(gz, gz_n, 4);
    assert_true(one.offset > 0);
    assert_string_equal(four.message, one.message);
    assert_int_equal(four.offset, one.offset);
    /* From a regular file the reader inflates on past the garbage the
     * damage inflates to, and names the damage (sc__jwin_blame_source) */
    char *path = tmp_copy(gz, gz_n, ".json.gz");
    sc_load_options o = {.threads = 1};
    sc_error file = expect_fail_file(path, &o, SC_E_PARSE);
    if (!strstr(file.message, "corrupt gzip data")) fail_msg("%s at %llu", file.message, (unsigned long long)file.offset);
    unlink(path);
    free(path);
    free(gz);
}

/* Regression: after a parse error in gzip from a pipe, the reader read on
 * to look for damage - and waited for good on a writer that stays. The
 * parse error is reported at once instead. */
static void test_parse_error_from_live_pipe(void **state) {
    (void)state;
    size_t len = 1u << 20;
    char *text = malloc(len);
    assert_non_null(text);
    memset(text, ' ', len);
    memcpy(text, "{\"traceEvents\": [ x", 19);
    size_t gz_n;
    unsigned char *gz = sc_test_gzip(text, len, &gz_n);
    free(text);
    assert_non_null(gz);
    alarm(120); /* a hang fails instead of stalling the suite */
    sc_error err = fail_through_fifo_held(gz, gz_n, 1, true);
    alarm(0);
    assert_int_equal(err.offset, 18);
    assert_non_null(strstr(err.message, "expected '{'"));
    free(gz);
}

/* Loads the bytes of the file at `from` (as stored: gzip stays gzip) as a
 * one-file set through a FIFO named with `suffix`. */
static sc_traceset *load_through_fifo(const char *from, const char *suffix, char *fifo, size_t size) {
    FILE *f = fopen(from, "rb");
    assert_non_null(f);
    size_t cap = 1u << 16, n = 0;
    unsigned char *data = malloc(cap);
    for (size_t k; data && (k = fread(data + n, 1, cap - n, f)) > 0;) {
        n += k;
        unsigned char *more = n == cap ? realloc(data, cap *= 2) : data;
        if (!more) free(data);
        data = more;
    }
    fclose(f);
    assert_non_null(data);
    snprintf(fifo, size, "%s/stepcast-pipe-%ld%s", sc_test_tmpdir(), (long)getpid(), suffix);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    fifo_feed feed = {open(fifo, O_RDWR), data, n, -1};
    assert_true(feed.fd >= 0);
    /* More than the pipe holds, so the writer is still there when the
     * loader opens: a FIFO that both ends have left drops its bytes. */
    assert_true((long)n > fcntl(feed.fd, F_GETPIPE_SZ));
    pthread_t writer;
    assert_int_equal(pthread_create(&writer, NULL, feed_fifo, &feed), 0);
    const char *paths[] = {fifo};
    sc_traceset *set = NULL;
    sc_error err;
    sc_status st = sc_traceset_load(paths, 1, NULL, &set, &err);
    drain_fifo(fifo); /* empty already, unless the load failed */
    pthread_join(writer, NULL);
    unlink(fifo);
    free(data);
    if (st != SC_OK) fail_msg("%s through a pipe: %s", from, err.message);
    return set;
}

/* Regression: a trace given as a pipe (/dev/stdin, or a shell's
 * <(zcat rank0.json.gz), named /dev/fd/63) was sniffed for its format by a
 * read of its own, which ate its first bytes: "byte 0: expected '{'". Its
 * first bytes are now peeked by the read that goes on to load it. Kineto
 * (plain and gzip) and Chakra, under names that claim no format. */
static void test_traces_from_pipes(void **state) {
    (void)state;
    const char *files[] = {"megatron-tp8-a100/megatron_kineto_0.json.gz", "hta-testdata/negative_queue_length_values_check/rank0.json.gz",
                           "chakra-et/chakra.0.et.gz"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char from[4096], fifo[256];
        snprintf(from, sizeof from, "%s", sc_test_trace(files[i]));
        const char *paths[] = {from};
        sc_traceset *file_set, *pipe_set = load_through_fifo(from, "", fifo, sizeof fifo);
        sc_error err;
        assert_int_equal(sc_traceset_load(paths, 1, NULL, &file_set, &err), SC_OK);
        const sc_trace *a = sc_traceset_trace(file_set, 0), *b = sc_traceset_trace(pipe_set, 0);
        if (!sc__trace_same(a, b) || a->format != b->format || a->chakra_size != b->chakra_size ||
            (a->chakra_size && memcmp(a->chakra_data, b->chakra_data, a->chakra_size) != 0))
            fail_msg("%s: the pipe's trace differs from the file's", files[i]);
        sc_traceset_free(pipe_set);
        sc_traceset_free(file_set);
    }
    /* plain JSON too: the file inflated to a temporary one first */
    size_t n;
    unsigned char *text = sc_test_read_file(sc_test_trace(files[0]), &n);
    assert_non_null(text);
    char *plain = tmp_copy(text, n, ".json");
    free(text);
    char fifo[256];
    sc_traceset *pipe_set = load_through_fifo(plain, "", fifo, sizeof fifo), *file_set;
    const char *paths[] = {plain};
    sc_error err;
    assert_int_equal(sc_traceset_load(paths, 1, NULL, &file_set, &err), SC_OK);
    assert_true(sc__trace_same(sc_traceset_trace(file_set, 0), sc_traceset_trace(pipe_set, 0)));
    sc_traceset_free(pipe_set);
    sc_traceset_free(file_set);
    unlink(plain);
    free(plain);
}

/* One bad file among good ones: the set fails and names that file. */
static void test_bad_file_in_set(void **state) {
    (void)state;
    static const char good[] = "{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": []}";
    static const char bad[] = "{\"distributedInfo\": {\"rank\": 1}, \"traceEvents\": [{]}";
    char *a = tmp_copy(good, sizeof good - 1, ".json");
    char *b = tmp_copy(bad, sizeof bad - 1, ".json");
    const char *paths[] = {a, b};
    sc_traceset *set = NULL;
    sc_error err;
    assert_int_equal(sc_traceset_load(paths, 2, NULL, &set, &err), SC_E_PARSE);
    assert_null(set);
    assert_string_equal(err.file, b);
    assert_int_equal(err.offset, 50);
    unlink(a);
    unlink(b);
    free(a);
    free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_json),
        cmocka_unit_test(test_truncated_big_json),
        cmocka_unit_test(test_truncated_after_last_event),
        cmocka_unit_test(test_truncated_gzip),
        cmocka_unit_test(test_invalid_json),
        cmocka_unit_test(test_number_where_string_belongs),
        cmocka_unit_test(test_2gb_string),
        cmocka_unit_test(test_nesting_10000),
        cmocka_unit_test(test_missing_trace_events),
        cmocka_unit_test(test_empty_directory),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_bad_file_in_set),
        cmocka_unit_test(test_corrupt_gzip_from_pipe),
        cmocka_unit_test(test_parse_error_from_live_pipe),
        cmocka_unit_test(test_traces_from_pipes),
    };
    return cmocka_run_group_tests_name("bad input", tests, NULL, NULL);
}
