/*
 * test_corpus.c - the hostile-input corpus: every case runs the
 * real CLI and checks its exit code and message.
 *
 * Two kinds of cases:
 *   - tests/corpus/NAME.case: small committed inputs (made by tests/corpus/
 *     gen.py), one file per case:
 *         # why this case exists
 *         run: info @invalid_utf8.json      (@ = tests/corpus/, $TMP = scratch dir)
 *         exit: 1
 *         output: invalid UTF-8             (stdout+stderr must contain it; repeatable)
 *         absent: warning                   (must not contain it; repeatable)
 *   - generated here at test time (never committed): a real trace truncated
 *     at every structural point, plain and gzip; 10 million tiny events; a
 *     1 GB line; a file over the memory budget. STEPCAST_CORPUS_BIG=0 skips
 *     the big ones (for a run under valgrind).
 * The CLI is $STEPCAST_BIN, else the one beside this program (testcli.h), so
 * `make check` runs the corpus against the sanitizer build. A sanitizer
 * report in a child fails the case whatever its exit code.
 */
#include "testutil.h"
#include "testcli.h"

#include "../src/io/source.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <zlib.h>

static char tmpdir[256];

#define MAX_CHECKS 8

typedef struct corpus_case {
    char name[128];
    char run[1024];
    int exit_code;
    char output[MAX_CHECKS][256];
    int noutput;
    char absent[MAX_CHECKS][256];
    int nabsent;
} corpus_case;

/* ------------------------------------------------------------ running */

typedef struct result {
    int exit_code; /* -1 killed by a signal, -2 timed out */
    char *out;     /* stdout and stderr interleaved, NUL-terminated */
    double secs;
} result;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs the CLI with argv (argv[0] ignored), with a time limit. */
static result run_cli(char **argv, int timeout_s) {
    result r = {0, NULL, 0};
    char outpath[512];
    snprintf(outpath, sizeof outpath, "%s/out.txt", tmpdir);
    double t0 = now();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) _exit(120);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        /* A sanitizer report must not pass for the input error exit (1). */
        setenv("ASAN_OPTIONS", "exitcode=86:detect_leaks=1", 1);
        setenv("UBSAN_OPTIONS", "halt_on_error=1:exitcode=86:print_stacktrace=1", 1);
        argv[0] = sc_test_bin;
        execv(sc_test_bin, argv);
        _exit(121);
    }
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (now() - t0 > timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            r.exit_code = -2;
            break;
        }
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    r.secs = now() - t0;
    if (r.exit_code != -2) r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    FILE *f = fopen(outpath, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n > (1 << 20)) n = 1 << 20; /* the head says enough */
    r.out = calloc(1, (size_t)n + 1);
    if (n > 0 && fread(r.out, 1, (size_t)n, f) != (size_t)n) r.out[0] = '\0';
    fclose(f);
    return r;
}

static bool sanitizer_report(const char *out) {
    return strstr(out, "ERROR: AddressSanitizer") || strstr(out, "ERROR: LeakSanitizer") ||
           strstr(out, "runtime error:");
}

/* Splits a command line at spaces, expanding @ and $TMP; runs and checks. */
static void run_case(const corpus_case *c) {
    char line[1024], words[64][1100];
    char *argv[66];
    int argc = 1;
    snprintf(line, sizeof line, "%s", c->run);
    for (char *tok = line; tok && *tok && argc < 64;) {
        char *sp = strchr(tok, ' ');
        if (sp) *sp = '\0';
        if (*tok) {
            char *w = words[argc];
            if (tok[0] == '@') snprintf(w, 1100, "tests/corpus/%s", tok + 1);
            else if (strncmp(tok, "$TMP", 4) == 0) snprintf(w, 1100, "%s%s", tmpdir, tok + 4);
            else snprintf(w, 1100, "%s", tok);
            argv[argc++] = w;
        }
        tok = sp ? sp + 1 : NULL;
    }
    argv[argc] = NULL;
    result r = run_cli(argv, 120);
    if (sanitizer_report(r.out)) fail_msg("%s: sanitizer report:\n%.4000s", c->name, r.out);
    if (r.exit_code == -2) fail_msg("%s: hung (killed after 120 s)", c->name);
    if (r.exit_code != c->exit_code)
        fail_msg("%s: exit %d, want %d; output:\n%.2000s", c->name, r.exit_code, c->exit_code, r.out);
    for (int i = 0; i < c->noutput; i++)
        if (!strstr(r.out, c->output[i]))
            fail_msg("%s: output lacks \"%s\"; output:\n%.2000s", c->name, c->output[i], r.out);
    for (int i = 0; i < c->nabsent; i++)
        if (strstr(r.out, c->absent[i]))
            fail_msg("%s: output has \"%s\"; output:\n%.2000s", c->name, c->absent[i], r.out);
    free(r.out);
}

/* --------------------------------------------------------- .case files */

static bool parse_case(const char *dir, const char *file, corpus_case *c) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    memset(c, 0, sizeof *c);
    c->exit_code = -100;
    snprintf(c->name, sizeof c->name, "%.*s", (int)(strlen(file) - 5), file);
    char line[1000];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "run: ", 5) == 0) snprintf(c->run, sizeof c->run, "%.1000s", line + 5);
        else if (strncmp(line, "exit: ", 6) == 0) c->exit_code = (int)strtol(line + 6, NULL, 10);
        else if (strncmp(line, "output: ", 8) == 0 && c->noutput < MAX_CHECKS)
            snprintf(c->output[c->noutput++], 256, "%.255s", line + 8);
        else if (strncmp(line, "absent: ", 8) == 0 && c->nabsent < MAX_CHECKS)
            snprintf(c->absent[c->nabsent++], 256, "%.255s", line + 8);
    }
    fclose(f);
    return c->run[0] && c->exit_code != -100;
}

static void test_case_file(void **state) { run_case((const corpus_case *)*state); }

/* ------------------------------------------------------ generated cases */

static bool big_enabled(void) {
    const char *v = getenv("STEPCAST_CORPUS_BIG");
    return !(v && strcmp(v, "0") == 0);
}

/* The real trace we cut up: small (22 KB), with every structural feature. */
static unsigned char *load_small_trace(size_t *n) {
    unsigned char *data;
    sc_error err;
    const char *p = sc_test_trace("hta-testdata/critical_path/cuda_event_sync/event_sync_trace.json.gz");
    if (sc__source_slurp(p, &data, n, &err) != SC_OK) fail_msg("%s: %s", p, err.message);
    return data;
}

static bool structural(unsigned char c) {
    return c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' || c == '"' ||
           c == '.' || c == 'e' || c == '\\' || c == '\n';
}

/* Every prefix that ends at (or just after) a structural byte must fail to
 * load with a truncation error - never succeed, crash or hang. */
static void test_truncated_everywhere(void **state) {
    (void)state;
    size_t n;
    unsigned char *data = load_small_trace(&n);
    size_t end = n; /* the last '}' closes the document */
    while (end > 0 && data[end - 1] != '}') end--;
    assert_true(end > 1000);
    size_t cuts = 0;
    for (size_t cut = 0; cut < end; cut++) {
        if (!(cut < 64 || structural(data[cut]) || structural(data[cut - 1]))) continue;
        sc_trace *t = NULL;
        sc_error err;
        sc_status st = sc_trace_load_buffer(data, cut, "cut.json", NULL, &t, &err);
        if (st == SC_OK) fail_msg("a trace cut at byte %zu of %zu loaded", cut, end);
        if (st != SC_E_PARSE || (!strstr(err.message, "end of input") && !strstr(err.message, "empty input")))
            fail_msg("cut at %zu: status %d, message \"%s\"", cut, st, err.message);
        cuts++;
    }
    assert_true(cuts > 2000); /* the sweep really swept */
    free(data);
}

/* The same through gzip: the compressed stream cut short. */
static void test_truncated_gzip(void **state) {
    (void)state;
    size_t n;
    unsigned char *data = load_small_trace(&n);
    uLongf zcap = compressBound(n) + 64;
    unsigned char *gz = malloc(zcap);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = data;
    zs.avail_in = (uInt)n;
    zs.next_out = gz;
    zs.avail_out = (uInt)zcap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t gzn = zcap - zs.avail_out;
    deflateEnd(&zs);
    sc_trace *t = NULL;
    sc_error err;
    assert_int_equal(sc_trace_load_buffer(gz, gzn, "whole.json.gz", NULL, &t, &err), SC_OK);
    sc_trace_free(t);
    for (size_t cut = 2; cut < gzn; cut += (cut < 64 || gzn - cut < 64) ? 1 : 37) {
        t = NULL;
        sc_status st = sc_trace_load_buffer(gz, cut, "cut.json.gz", NULL, &t, &err);
        if (st == SC_OK) fail_msg("a gzip stream cut at byte %zu of %zu loaded", cut, gzn);
        if (st != SC_E_PARSE) fail_msg("gzip cut at %zu: status %d, \"%s\"", cut, st, err.message);
    }
    free(gz);
    free(data);
}

/* A few truncations through the CLI: exit 1, the file named, no crash. */
static void test_truncated_cli(void **state) {
    (void)state;
    size_t n;
    unsigned char *data = load_small_trace(&n);
    char path[512];
    snprintf(path, sizeof path, "%s/cut.json", tmpdir);
    for (size_t cut = 1; cut < n; cut += n / 7) {
        FILE *f = fopen(path, "wb");
        fwrite(data, 1, cut, f);
        fclose(f);
        char *argv[] = {NULL, "info", path, NULL};
        result r = run_cli(argv, 60);
        if (r.exit_code != 1 || !strstr(r.out, "cut.json") || sanitizer_report(r.out))
            fail_msg("cut at %zu: exit %d, output:\n%.2000s", cut, r.exit_code, r.out);
        free(r.out);
    }
    free(data);
}

/* Writes one gzip member holding data to f. */
static void gz_member(FILE *f, const void *data, size_t n) {
    uLongf cap = compressBound(n) + 64;
    unsigned char *buf = malloc(cap);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (unsigned char *)data;
    zs.avail_in = (uInt)n;
    zs.next_out = buf;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    fwrite(buf, 1, cap - zs.avail_out, f);
    deflateEnd(&zs);
    free(buf);
}

/* One line of 1 GiB: a single event whose name is 1 GiB long, written as
 * 1026 concatenated gzip members (one 1 MiB block compressed once and
 * repeated), so the file is ~1 MB. The reader must stop at its string
 * guard with a clear error, not try to hold the line. */
static void test_one_gigabyte_line(void **state) {
    (void)state;
    if (!big_enabled()) skip();
    char path[512];
    snprintf(path, sizeof path, "%s/one-line.json.gz", tmpdir);
    FILE *f = fopen(path, "wb");
    const char head[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"name\": \"";
    gz_member(f, head, sizeof head - 1);
    size_t block = 1u << 20;
    char *a = malloc(block);
    memset(a, 'a', block);
    uLongf cap = compressBound(block) + 64;
    unsigned char *z = malloc(cap);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (unsigned char *)a;
    zs.avail_in = (uInt)block;
    zs.next_out = z;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t zn = cap - zs.avail_out;
    deflateEnd(&zs);
    for (int i = 0; i < 1024; i++) fwrite(z, 1, zn, f);
    const char tail[] = "\", \"pid\": 1, \"tid\": 1}]}\n";
    gz_member(f, tail, sizeof tail - 1);
    fclose(f);
    free(a);
    free(z);
    char *argv[] = {NULL, "info", path, NULL};
    result r = run_cli(argv, 300);
    print_message("    1 GiB line: exit %d in %.2f s\n", r.exit_code, r.secs);
    if (r.exit_code != 1 || !strstr(r.out, "string longer than") || sanitizer_report(r.out))
        fail_msg("exit %d, output:\n%.2000s", r.exit_code, r.out);
    free(r.out);
    unlink(path);
}

/* Ten million tiny events (gzip, one per line): they must load, be counted
 * exactly, and - with a small --max-memory - fail with a clear budget error
 * instead of growing. The time is printed (not asserted: shared machines). */
static void test_ten_million_events(void **state) {
    (void)state;
    if (!big_enabled()) skip();
    char path[512];
    snprintf(path, sizeof path, "%s/ten-million.json.gz", tmpdir);
    double t0 = now();
    gzFile gz = gzopen(path, "wb1");
    assert_non_null(gz);
    gzputs(gz, "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n");
    char line[160];
    for (long i = 0; i < 10000000; i++) {
        int k = snprintf(line, sizeof line,
                         "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%ld\",\"pid\":1,\"tid\":%ld,"
                         "\"ts\":%ld,\"dur\":1}\n",
                         i ? "," : "", i % 64, i % 4, i * 2);
        gzwrite(gz, line, (unsigned)k);
    }
    gzputs(gz, "]}\n");
    assert_int_equal(gzclose(gz), Z_OK);
    double gen = now() - t0;
    char *argv[] = {NULL, "info", "--json", path, NULL};
    result r = run_cli(argv, 600);
    print_message("    10M events: generated in %.1f s, `stepcast info` exit %d in %.2f s\n", gen,
                  r.exit_code, r.secs);
    if (r.exit_code != 0 || !strstr(r.out, "\"events\": 10000000") || sanitizer_report(r.out))
        fail_msg("exit %d, output:\n%.2000s", r.exit_code, r.out);
    free(r.out);
    unlink(path);
}

/* Every command listed by `stepcast help` exits 2 on an unknown option,
 * and so do a missing command and an unknown one: usage errors are 2
 * everywhere (exit codes: 0 ok, 1 bad input, 2 usage, 3 internal). */
static void test_usage_errors_exit_2(void **state) {
    (void)state;
    char *help[] = {NULL, "help", NULL};
    result h = run_cli(help, 30);
    assert_int_equal(h.exit_code, 0);
    assert_non_null(strstr(h.out, "exit codes: 0 ok, 1 bad or unreadable input, 2 bad command line"));
    char *p = strstr(h.out, "commands:\n");
    assert_non_null(p);
    int ncommands = 0;
    for (p = strchr(p, '\n') + 1; p[0] == ' ' && p[1] == ' '; p = strchr(p, '\n') + 1) {
        char name[64];
        if (sscanf(p, " %63s", name) != 1) break;
        char *argv[] = {NULL, name, "--no-such-option-xyz", NULL};
        result r = run_cli(argv, 30);
        if (r.exit_code != 2 || sanitizer_report(r.out))
            fail_msg("`stepcast %s --no-such-option-xyz`: exit %d, want 2:\n%.1000s", name,
                     r.exit_code, r.out);
        free(r.out);
        ncommands++;
        if (!strchr(p, '\n')) break;
    }
    assert_true(ncommands >= 3);
    free(h.out);
    char *none[] = {NULL, NULL};
    char *unknown[] = {NULL, "no-such-command", NULL};
    char *bare[][3] = {{NULL, "info", NULL}, {NULL, "graph", NULL}, {NULL, "replay", NULL}};
    result r = run_cli(none, 30);
    assert_int_equal(r.exit_code, 2);
    free(r.out);
    r = run_cli(unknown, 30);
    assert_int_equal(r.exit_code, 2);
    free(r.out);
    for (size_t i = 0; i < 3; i++) { /* no trace given */
        r = run_cli(bare[i], 30);
        if (r.exit_code != 2) fail_msg("`stepcast %s`: exit %d, want 2", bare[i][1], r.exit_code);
        free(r.out);
    }
}

/* ------------------------------------------------------------- driver */

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    (void)argc;
    sc_test_find_bin(argv[0]);
    snprintf(tmpdir, sizeof tmpdir, "%s/stepcast-corpus-XXXXXX", sc_test_tmpdir());
    if (!mkdtemp(tmpdir)) return 1;

    /* One cmocka test per .case file, in name order. */
    DIR *d = opendir("tests/corpus");
    if (!d) {
        fprintf(stderr, "test_corpus: run from the repository root (tests/run.sh does)\n");
        return 1;
    }
    char *names[1024];
    size_t nnames = 0;
    struct dirent *de;
    while ((de = readdir(d)) && nnames < 1024) {
        size_t n = strlen(de->d_name);
        if (n > 5 && strcmp(de->d_name + n - 5, ".case") == 0) names[nnames++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, nnames, sizeof *names, cmp_name);
    static const struct CMUnitTest generated[] = {
        cmocka_unit_test(test_truncated_everywhere), cmocka_unit_test(test_truncated_gzip),
        cmocka_unit_test(test_truncated_cli),        cmocka_unit_test(test_one_gigabyte_line),
        cmocka_unit_test(test_ten_million_events),   cmocka_unit_test(test_usage_errors_exit_2),
    };
    size_t ngen = sizeof generated / sizeof generated[0];
    struct CMUnitTest *tests = calloc(nnames + ngen, sizeof *tests);
    corpus_case *cases = calloc(nnames ? nnames : 1, sizeof *cases);
    size_t ntests = 0;
    for (size_t i = 0; i < nnames; i++) {
        if (!parse_case("tests/corpus", names[i], &cases[i])) {
            fprintf(stderr, "test_corpus: tests/corpus/%s lacks run: or exit:\n", names[i]);
            return 1;
        }
        tests[ntests].name = cases[i].name;
        tests[ntests].test_func = test_case_file;
        tests[ntests].initial_state = &cases[i];
        ntests++;
    }
    for (size_t i = 0; i < ngen; i++) tests[ntests++] = generated[i];
    int rc = _cmocka_run_group_tests("corpus", tests, ntests, NULL, NULL);
    char out[600];
    snprintf(out, sizeof out, "%s/out.txt", tmpdir);
    unlink(out);
    snprintf(out, sizeof out, "%s/cut.json", tmpdir);
    unlink(out);
    rmdir(tmpdir);
    for (size_t i = 0; i < nnames; i++) free(names[i]);
    free(tests);
    free(cases);
    return rc;
}
