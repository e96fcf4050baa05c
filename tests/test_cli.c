/*
 * test_cli.c - `stepcast info` end to end: the bundled example, every folder
 * of shared/traces, and bad inputs, which must exit 1 with exactly
 * one line on stderr naming the file (and the byte offset where the bytes
 * are at fault); command-line mistakes exit 2.
 *
 * The binary is $STEPCAST_BIN, else BUILD/stepcast (testcli.h).
 */
#include "testutil.h"
#include "testcli.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static size_t lines(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Expects exit 1, nothing on stdout and one stderr line naming path (and
 * "byte N" when offset is not SC_NO_OFFSET). */
static void expect_bad_input(const char *path, uint64_t offset) {
    const char *args[] = {"info", path, NULL};
    sc_test_outcome o = sc_test_cli(args);
    if (o.code != 1) fail_msg("stepcast info %s: exit %d, want 1; stderr: %s", path, o.code, o.err);
    assert_string_equal(o.out, "");
    if (lines(o.err) != 1 || o.err[strlen(o.err) - 1] != '\n')
        fail_msg("stepcast info %s: want one line on stderr, got: %s", path, o.err);
    assert_true(strncmp(o.err, "stepcast: ", 10) == 0);
    if (!strstr(o.err, path)) fail_msg("'%s' does not name %s", o.err, path);
    if (offset != SC_NO_OFFSET) {
        char want[64];
        snprintf(want, sizeof want, "byte %llu:", (unsigned long long)offset);
        if (!strstr(o.err, want)) fail_msg("'%s' does not say '%s'", o.err, want);
    }
    sc_test_outcome_free(&o);
}

static char *tmp_file(const void *data, size_t n, const char *suffix) {
    const char *p = sc_test_tmpfile(data, n, suffix);
    assert_non_null(p);
    return strdup(p);
}

/* ------------------------------------------------------------------- good */

static void test_bundled_example(void **state) {
    (void)state;
    const char *args[] = {"info", "--json", "examples/megatron-tp8", NULL};
    sc_test_outcome o = sc_test_cli(args);
    if (o.code != 0) fail_msg("exit %d: %s", o.code, o.err);
    assert_string_equal(o.err, ""); /* README and LICENSE are not traces: no warnings */
    assert_non_null(strstr(o.out, "\"ranks\""));
    static const char *steps[] = {"603240.000", "588992.000", "588760.000", "604842.000",
                                  "616090.000", "615864.000", "625731.000", "608635.000"};
    const char *p = o.out;
    for (int r = 0; r < 8; r++) {
        char want[64];
        snprintf(want, sizeof want, "\"rank\": %d, \"world_size\": 8", r);
        p = strstr(p, want);
        if (!p) fail_msg("rank %d missing or out of order", r);
        const char *next = strstr(p + 1, "\"rank\": ");
        const char *k = strstr(p, "\"kernels\": 690,");
        const char *c = strstr(p, "\"collectives\": 84,");
        const char *s = strstr(p, steps[r]);
        assert_true(k && (!next || k < next));
        assert_true(c && (!next || c < next));
        assert_true(s && (!next || s < next));
        assert_non_null(strstr(p, "\"ProfilerStep#3\""));
    }
    sc_test_outcome_free(&o);
    /* the text form too */
    const char *targs[] = {"info", "examples/megatron-tp8", NULL};
    o = sc_test_cli(targs);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "rank 7 of 8"));
    assert_non_null(strstr(o.out, "ProfilerStep#3 603.240 ms"));
    sc_test_outcome_free(&o);
}

static void test_every_shared_folder(void **state) {
    (void)state;
    static const char *folders[] = {"megatron-tp8-a100", "param-dlrm-8rank", "hta-testdata"};
    for (size_t i = 0; i < 3; i++) {
        if (i == 2 && !sc_test_big_ok()) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s", sc_test_trace(folders[i]));
        const char *args[] = {"info", "--json", path, NULL};
        sc_test_outcome o = sc_test_cli(args);
        if (o.code != 0) fail_msg("info %s: exit %d: %s", path, o.code, o.err);
        assert_non_null(strstr(o.out, "\"ranks\""));
        sc_test_outcome_free(&o);
    }
}

/* -------------------------------------------------------------- bad input */

static void test_bad_inputs_exit_1(void **state) {
    (void)state;
    static const char trunc[] = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1}";
    static const char invalid[] = "{\"traceEvents\": [{\"ph\": \"X\" \"ts\": 1}]}";
    static const char number[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"name\": 5}]}";
    static const char missing[] = "{\"schemaVersion\": 1}";
    char *p;

    p = tmp_file(trunc, sizeof trunc - 1, ".json"); /* truncated .json */
    expect_bad_input(p, sizeof trunc - 1);
    unlink(p);
    free(p);

    size_t gn = 0; /* truncated .json.gz: the gzip stream cut short */
    unsigned char *gz = sc_test_gzip(trunc, sizeof trunc - 1, &gn);
    assert_non_null(gz);
    p = tmp_file(gz, gn - 6, ".json.gz");
    expect_bad_input(p, SC_NO_OFFSET);
    unlink(p);
    free(p);
    free(gz);

    p = tmp_file(invalid, sizeof invalid - 1, ".json");
    expect_bad_input(p, 28);
    unlink(p);
    free(p);

    p = tmp_file(number, sizeof number - 1, ".json");
    expect_bad_input(p, 46);
    unlink(p);
    free(p);

    p = tmp_file(missing, sizeof missing - 1, ".json");
    expect_bad_input(p, 20);
    unlink(p);
    free(p);

    /* nesting 10,000 deep */
    size_t depth = 10000;
    char *deep = malloc(2 * depth + 64);
    assert_non_null(deep);
    int n = sprintf(deep, "{\"traceEvents\": [], \"x\": ");
    memset(deep + n, '[', depth);
    memset(deep + n + depth, ']', depth);
    strcpy(deep + n + 2 * depth, "}");
    p = tmp_file(deep, strlen(deep), ".json");
    expect_bad_input(p, (uint64_t)n + 512);
    unlink(p);
    free(p);
    free(deep);

    /* an empty file */
    p = tmp_file("", 0, ".json");
    expect_bad_input(p, 0);
    unlink(p);
    free(p);
}

static void test_bad_dirs_and_unreadables_exit_1(void **state) {
    (void)state;
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/stepcast-cli-dir-%ld", sc_test_tmpdir(), (long)getpid());
    assert_int_equal(mkdir(dir, 0700), 0);
    expect_bad_input(dir, SC_NO_OFFSET); /* an empty directory */

    snprintf(path, sizeof path, "%s/missing.json", dir); /* a file that is not there */
    expect_bad_input(path, SC_NO_OFFSET);

    snprintf(path, sizeof path, "%s/fifo.json", dir); /* a FIFO without a writer */
    assert_int_equal(mkfifo(path, 0600), 0);
    expect_bad_input(path, 0);
    unlink(path);

    /* a directory holding one bad trace: the message names that file */
    static const char bad[] = "{\"traceEvents\": [{]}";
    snprintf(path, sizeof path, "%s/rank0.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(bad, 1, sizeof bad - 1, f);
    fclose(f);
    const char *args[] = {"info", dir, NULL};
    sc_test_outcome o = sc_test_cli(args);
    assert_int_equal(o.code, 1);
    assert_int_equal(lines(o.err), 1);
    assert_non_null(strstr(o.err, path));
    assert_non_null(strstr(o.err, "byte 18:"));
    sc_test_outcome_free(&o);
    unlink(path);
    rmdir(dir);
}

/* A 2 GB string in a ~2 MB gzip file: the reader gives up at its string
 * limit within seconds, with the usual one line. */
static void test_2gb_string_exit_1(void **state) {
    (void)state;
    if (!sc_test_big_ok()) skip();
    char *path = sc_test_2gb_string_trace();
    assert_non_null(path);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_bad_input(path, 41); /* at the default string limit, 256 MiB */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (secs > 30) fail_msg("2 GB string: %.1f s to give up", secs);
    unlink(path);
    free(path);
}

/* ------------------------------------------------------------------ usage */

static void expect_usage(const char *const *args) {
    sc_test_outcome o = sc_test_cli(args);
    if (o.code != 2) fail_msg("%s: exit %d, want 2", args[0] ? args[0] : "(none)", o.code);
    assert_true(lines(o.err) >= 1);
    sc_test_outcome_free(&o);
}

static void test_usage_errors_exit_2(void **state) {
    (void)state;
    const char *none[] = {NULL};
    expect_usage(none);
    const char *info[] = {"info", NULL};
    expect_usage(info);
    const char *opt[] = {"info", "--bogus", "examples/megatron-tp8", NULL};
    expect_usage(opt);
    const char *cmd[] = {"no-such-command", NULL};
    expect_usage(cmd);
    const char *help[] = {"help", "no-such-command", NULL};
    expect_usage(help);
    /* An output in a missing folder is a command-line mistake, as help says. */
    const char *nofolder[] = {"export", "--chakra", "/no/such/folder/x", "examples/megatron-tp8", NULL};
    sc_test_outcome o = sc_test_cli(nofolder);
    if (o.code != 2) fail_msg("export to a missing folder: exit %d, want 2: %s", o.code, o.err);
    assert_non_null(strstr(o.err, "cannot write there"));
    sc_test_outcome_free(&o);
    /* help and version succeed */
    const char *h[] = {"help", NULL};
    o = sc_test_cli(h);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "info"));
    assert_non_null(strstr(o.out, "2 bad command line (an output in\n            a missing folder"));
    sc_test_outcome_free(&o);
    const char *v[] = {"--version", NULL};
    o = sc_test_cli(v);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, SC_VERSION_STRING));
    sc_test_outcome_free(&o);
}

/* -j N caps the threads of every command (read and build); the answer is
 * the same whatever the count, and a bad count is a usage error. */
static void test_jobs_any_command(void **state) {
    (void)state;
    const char *dflt[] = {"replay", "--json", "examples/megatron-tp8", NULL};
    sc_test_outcome a = sc_test_cli(dflt);
    assert_int_equal(a.code, 0);
    const char *one[] = {"replay", "-j", "1", "--json", "examples/megatron-tp8", NULL};
    const char *two[] = {"replay", "--json", "--jobs=2", "examples/megatron-tp8", NULL};
    const char *const *runs[] = {one, two};
    for (size_t i = 0; i < 2; i++) {
        sc_test_outcome b = sc_test_cli(runs[i]);
        assert_int_equal(b.code, 0);
        assert_string_equal(a.out, b.out);
        sc_test_outcome_free(&b);
    }
    sc_test_outcome_free(&a);
    const char *bad[] = {"graph", "-j", "many", "examples/megatron-tp8", NULL};
    expect_usage(bad);
    const char *neg[] = {"export", "--jobs=-1", "examples/megatron-tp8", NULL};
    expect_usage(neg);
}

/* One option parser for every command: "--opt V" and "--opt=V" give the
 * same output wherever an option takes a value, and a bad value is a usage
 * error (exit 2) naming the option, the same in every command. */
static void same_output(const char *const *a, const char *const *b) {
    sc_test_outcome x = sc_test_cli(a), y = sc_test_cli(b);
    if (x.code != 0 || y.code != 0) fail_msg("%s: exit %d and %d: %s%s", a[0], x.code, y.code, x.err, y.err);
    if (strcmp(x.out, y.out) != 0) fail_msg("%s: the two spellings differ", a[0]);
    sc_test_outcome_free(&x);
    sc_test_outcome_free(&y);
}

/* `model --sweep` sweeps comma lists, but --recompute-modules is itself
 * one (it used to be split into one row a module, the combination never
 * run). */
static void test_model_sweep_modules(void **state) {
    (void)state;
    const char *args[] = {"model", "--preset", "llama3-8b", "--nodes", "1", "--gbs", "16", "--recompute", "selective",
                          "--recompute-modules", "core_attn,mlp", "--sweep", "--tp", "1,2", "--json", NULL};
    sc_test_outcome o = sc_test_cli(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "\"tried\":2,"));
    assert_null(strstr(o.out, "recompute-modules="));
    sc_test_outcome_free(&o);
}

static void test_option_spellings(void **state) {
    (void)state;
    static const char *const cmds[] = {"graph", "replay"};
    for (size_t i = 0; i < 2; i++) {
        const char *apart[] = {cmds[i], "--json", "--iteration", "3", "examples/megatron-tp8", NULL};
        const char *joined[] = {cmds[i], "--json", "--iteration=3", "examples/megatron-tp8", NULL};
        same_output(apart, joined);
        const char *bad[] = {cmds[i], "--iteration=x", "examples/megatron-tp8", NULL};
        sc_test_outcome o = sc_test_cli(bad);
        assert_int_equal(o.code, 2);
        assert_non_null(strstr(o.err, "--iteration wants a step number"));
        sc_test_outcome_free(&o);
    }
    const char *short_apart[] = {"replay", "-j", "2", "--max-memory", "8G", "--comm", "traced",
                                 "examples/megatron-tp8", NULL};
    const char *short_joined[] = {"replay", "-j2", "--max-memory=8G", "--comm=traced", "examples/megatron-tp8", NULL};
    same_output(short_apart, short_joined);
    /* --iteration on Chakra files: an error saying why, not a silent no-op */
    char chakra[4096];
    snprintf(chakra, sizeof chakra, "%s", sc_test_trace("chakra-et/microbenchmarks/all_reduce"));
    const char *graph[] = {"graph", "--iteration=2", chakra, NULL};
    const char *replay[] = {"replay", "--iteration", "2", chakra, NULL};
    const char *export[] = {"export", "--iteration=2", "--chakra", "/tmp/never-written", chakra, NULL};
    const char *const *on_chakra[] = {graph, replay, export};
    for (size_t i = 0; i < 3; i++) {
        const char *const *args = on_chakra[i];
        sc_test_outcome o = sc_test_cli(args);
        if (o.code != 2 || !strstr(o.err, "one window")) fail_msg("%s on Chakra: exit %d: %s", args[0], o.code, o.err);
        sc_test_outcome_free(&o);
    }
}

/* replay --timings: the same report on stdout, and one line on stderr
 * naming every stage with a time, the simulator's set-up within its stage
 * and the loop's rate, and the peak RSS. */
static void test_replay_timings(void **state) {
    (void)state;
    const char *plain[] = {"replay", "examples/megatron-tp8", NULL};
    const char *timed[] = {"replay", "--timings", "examples/megatron-tp8", NULL};
    sc_test_outcome a = sc_test_cli(plain), b = sc_test_cli(timed);
    assert_int_equal(a.code, 0);
    assert_int_equal(b.code, 0);
    assert_string_equal(a.out, b.out);
    assert_string_equal(a.err, "");
    double load = 0, build = 0, cal = 0, sim = 0, setup = -1, rate = 0, sum = 0, wr = 0, sens = 0, hta = -1,
           total = 0, rss = 0;
    if (lines(b.err) != 1 ||
        sscanf(b.err,
               "stepcast: timings: load %lf s, build %lf s, calibrate %lf s, simulate %lf s (set-up "
               "%lf s, then %lf M tasks/s), summarise %lf s, write %lf s, sensitivity %lf s, hta %lf s; "
               "total %lf s, peak RSS %lf MiB\n",
               &load, &build, &cal, &sim, &setup, &rate, &sum, &wr, &sens, &hta, &total, &rss) != 12)
        fail_msg("not the timings line: %s", b.err);
    assert_true(load > 0 && build > 0 && sim > 0 && rate > 0 && rss > 0);
    assert_true(setup >= 0 && setup <= sim);
    assert_true(sens > 0 && hta == 0); /* the check runs by default on the example; HTA's breakdown does not */
    assert_true(total + 0.005 >= load + build + cal + sim + sum + wr + sens);
    sc_test_outcome_free(&a);
    sc_test_outcome_free(&b);
}

/* --max-memory holds for the whole job, not only the load: from
 * the smallest budget up, `graph` and `replay` are refused with exit 1 and
 * one line saying which stage needs how much, until the budget suffices;
 * then they succeed and stay successful. Some budget must be refused by a
 * job stage (the graph or the simulation), past the load. A replay frees
 * each trace once its part of the graph is built, so it needs no more than
 * `graph` (which keeps them) plus the simulation. */
static void test_max_memory_covers_the_job(void **state) {
    (void)state;
    const char *const cmds[] = {"graph", "replay"};
    for (size_t c = 0; c < 2; c++) {
        bool passed = false, job_stage = false;
        for (unsigned mib = 8; mib <= 64; mib += 4) {
            char budget[32];
            snprintf(budget, sizeof budget, "%uM", mib);
            const char *args[] = {cmds[c], "--max-memory", budget, "examples/megatron-tp8", NULL};
            sc_test_outcome o = sc_test_cli(args);
            if (passed || o.code == 0) {
                assert_int_equal(o.code, 0);
                passed = true;
            } else {
                assert_int_equal(o.code, 1);
                assert_int_equal(lines(o.err), 1);
                assert_non_null(strstr(o.err, "more than"));
                assert_non_null(strstr(o.err, "memory budget of"));
                assert_non_null(strstr(o.err, "--max-memory"));
                assert_string_equal(o.out, "");
                job_stage |= strstr(o.err, "the graph") != NULL;
            }
            sc_test_outcome_free(&o);
        }
        assert_true(passed);
        assert_true(job_stage);
    }
}

/* `stepcast comm`: the table of a GPU (the same bytes twice, the same for
 * either spelling of an option), the collectives of traces, and its
 * mistakes: a bad command line exits 2 with the usage, a bad profile file
 * exits 1 with one line naming the file and the field. */
static void test_comm_command(void **state) {
    (void)state;
    const char *table[] = {"comm", "--gpu", "h100", NULL};
    sc_test_outcome o = sc_test_cli(table);
    if (o.code != 0) fail_msg("comm --gpu h100: exit %d: %s", o.code, o.err);
    assert_string_equal(o.err, "");
    assert_non_null(strstr(o.out, "all_reduce on 8 ranks"));
    assert_non_null(strstr(o.out, "8589934592"));
    sc_test_outcome_free(&o);
    const char *apart[] = {"comm", "--json", "--gpu", "a100", "--op", "all_gather", "--ranks", "16",
                           "--sizes", "1K,1G", NULL};
    const char *joined[] = {"comm", "--json", "--gpu=a100", "--op=all_gather", "--ranks=16", "--sizes=1K,1G", NULL};
    same_output(apart, joined);
    same_output(joined, joined);
    o = sc_test_cli(joined);
    assert_non_null(strstr(o.out, "\"op\": \"all_gather\", \"ranks\": 16, \"bytes\": 1073741824"));
    sc_test_outcome_free(&o);
    const char *traces[] = {"comm", "examples/megatron-tp8", NULL};
    o = sc_test_cli(traces);
    if (o.code != 0) fail_msg("comm on the example: exit %d: %s", o.code, o.err);
    assert_non_null(strstr(o.out, "A100-SXM4-80GB, fitted to 84 collectives"));
    assert_non_null(strstr(o.out, "67108864"));
    sc_test_outcome_free(&o);
    static const char *const bad[][8] = {
        {"comm", NULL},
        {"comm", "--gpu", "tpu-v5", NULL},
        {"comm", "--gpu", "h100", "--op", "all_sum", NULL},
        {"comm", "--gpu", "h100", "--sizes", "0", NULL},
        {"comm", "--gpu", "h100", "--sizes", "1K,,2K", NULL},
        {"comm", "--gpu", "h100", "--net-gbps", "-1", NULL},
        {"comm", "--gpu", "h100", "--nvlink-gbps", "fast", NULL},
        {"comm", "--gpu", "h100", "--ranks", "0", NULL},
        {"comm", "--gpu", "h100", "--gpus-per-node=0", NULL},
        {"comm", "--gpu", "h100", "--op", "all_reduce", "examples/megatron-tp8", NULL},
        {"comm", "--gpu", "h100", "--iteration", "3", NULL},
        {"comm", "--gpu", "h100", "--profile", "p.json", NULL},
        {"comm", "--gpu", "h100", "--bogus", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        o = sc_test_cli(bad[i]);
        if (o.code != 2) fail_msg("comm case %zu: exit %d, want 2: %s", i, o.code, o.err);
        assert_string_equal(o.out, "");
        assert_true(strncmp(o.err, "stepcast", 8) == 0);
        sc_test_outcome_free(&o);
    }
    const char *text = "{\"name\": \"mine\", \"fp64_tflops\": -1}";
    char *path = tmp_file(text, strlen(text), ".json");
    const char *profile[] = {"comm", "--profile", path, NULL};
    o = sc_test_cli(profile);
    if (o.code != 1 || lines(o.err) != 1) fail_msg("comm --profile: exit %d: %s", o.code, o.err);
    assert_non_null(strstr(o.err, path));
    assert_non_null(strstr(o.err, "field 'fp64_tflops' is negative"));
    assert_string_equal(o.out, "");
    sc_test_outcome_free(&o);
    unlink(path);
    free(path);
}

/* The sensitivity check and HTA's breakdown from the command line: the
 * check's line in the text report (on by default on the example), its
 * fields in the JSON, the options that turn it on or off, and
 * `--breakdown hta` with its table; contradicting or unknown values are
 * usage errors, in replay and predict alike. */
static void test_sensitivity_and_breakdown_options(void **state) {
    (void)state;
    const char *text[] = {"replay", "examples/megatron-tp8", NULL};
    sc_test_outcome o = sc_test_cli(text);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "\nsensitivity (step with one class twice as long): gpu x"));
    assert_non_null(strstr(o.out, "; bound by cpu\n"));
    sc_test_outcome_free(&o);
    const char *off[] = {"replay", "--json", "--no-sensitivity", "examples/megatron-tp8", NULL};
    o = sc_test_cli(off);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "\"sensitivity\":{\"computed\":false,\"why_not\":\"not asked for\"},\"bound_by\":null"));
    sc_test_outcome_free(&o);
    const char *on[] = {"predict", "--json", "--sensitivity", "examples/megatron-tp8", NULL};
    o = sc_test_cli(on);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "\"sensitivity\":{\"computed\":true,"));
    assert_non_null(strstr(o.out, "\"bound_by\":\"cpu\""));
    sc_test_outcome_free(&o);
    const char *hta[] = {"replay", "--breakdown=hta", "--no-sensitivity", "examples/megatron-tp8", NULL};
    o = sc_test_cli(hta);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.out, "HTA temporal breakdown of the measured traces"));
    assert_non_null(strstr(o.out, "sensitivity: not checked (not asked for)"));
    sc_test_outcome_free(&o);
    const char *both[] = {"replay", "--sensitivity", "--no-sensitivity", "examples/megatron-tp8", NULL};
    expect_usage(both);
    const char *both2[] = {"predict", "--no-sensitivity", "--sensitivity", "examples/megatron-tp8", NULL};
    expect_usage(both2);
    const char *bad[] = {"replay", "--breakdown", "tracelens", "examples/megatron-tp8", NULL};
    expect_usage(bad);
}

/* An export's folder reads back as a job: PREFIX.comm_group.json, written
 * beside the .et files for ASTRA-sim, is not taken for a trace. */
static void test_export_folder_reads_back(void **state) {
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/stepcast-export-XXXXXX", sc_test_tmpdir());
    assert_non_null(mkdtemp(dir));
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s/mega", dir);
    const char *export[] = {"export", "--chakra", prefix, "examples/megatron-tp8", NULL};
    sc_test_outcome o = sc_test_cli(export);
    if (o.code != 0) fail_msg("export: exit %d: %s", o.code, o.err);
    assert_non_null(strstr(o.err, "mega.comm_group.json: 0 communicator groups besides the world"));
    sc_test_outcome_free(&o);
    const char *graph[] = {"graph", dir, NULL};
    o = sc_test_cli(graph);
    if (o.code != 0) fail_msg("graph of the export: exit %d: %s", o.code, o.err);
    assert_null(strstr(o.err, "comm_group"));
    assert_non_null(strstr(o.out, "84 groups"));
    sc_test_outcome_free(&o);
    char f[400];
    for (int r = 0; r < 8; r++) {
        snprintf(f, sizeof f, "%s.%d.et", prefix, r);
        unlink(f);
    }
    snprintf(f, sizeof f, "%s.comm_group.json", prefix);
    unlink(f);
    rmdir(dir);
}

int main(int argc, char **argv) {
    (void)argc;
    if (!sc_test_find_bin(argv[0])) {
        fprintf(stderr, "test_cli: no stepcast binary at %s (set STEPCAST_BIN)\n", sc_test_bin);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundled_example),
        cmocka_unit_test(test_every_shared_folder),
        cmocka_unit_test(test_bad_inputs_exit_1),
        cmocka_unit_test(test_bad_dirs_and_unreadables_exit_1),
        cmocka_unit_test(test_2gb_string_exit_1),
        cmocka_unit_test(test_usage_errors_exit_2),
        cmocka_unit_test(test_jobs_any_command),
        cmocka_unit_test(test_option_spellings), cmocka_unit_test(test_model_sweep_modules),
        cmocka_unit_test(test_max_memory_covers_the_job),
        cmocka_unit_test(test_replay_timings),
        cmocka_unit_test(test_comm_command),
        cmocka_unit_test(test_sensitivity_and_breakdown_options),
        cmocka_unit_test(test_export_folder_reads_back),
    };
    return cmocka_run_group_tests_name("stepcast info CLI", tests, sc_test_bin_setup, NULL);
}
