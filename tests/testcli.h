/*
 * testcli.h - running the stepcast binary from a test program, for the
 * tests of what a person sees (test_cli.c, test_ux.c): which binary, and
 * one run of it with its exit status, stdout and stderr. Include after
 * testutil.h (cmocka).
 *
 * The binary is $STEPCAST_BIN, else BUILD/stepcast found from the test
 * program's own path (BUILD/tests/test_x), so every build folder tests its
 * own CLI.
 */
#ifndef SC_TESTCLI_H
#define SC_TESTCLI_H

#include <fcntl.h>
#include <sys/wait.h>

static char sc_test_bin[4096];

/* Sets sc_test_bin from $STEPCAST_BIN or argv0; whether it can be run. */
static inline int sc_test_find_bin(const char *argv0) {
    const char *env = getenv("STEPCAST_BIN");
    if (env && *env) {
        snprintf(sc_test_bin, sizeof sc_test_bin, "%s", env);
    } else { /* BUILD/tests/test_x -> BUILD/stepcast */
        snprintf(sc_test_bin, sizeof sc_test_bin, "%s", argv0);
        char *slash = strrchr(sc_test_bin, '/');
        if (slash) *slash = '\0';
        slash = strrchr(sc_test_bin, '/');
        if (slash) slash[1] = '\0';
        else snprintf(sc_test_bin, sizeof sc_test_bin, "../");
        strncat(sc_test_bin, "stepcast", sizeof sc_test_bin - strlen(sc_test_bin) - 1);
    }
    return access(sc_test_bin, X_OK) == 0;
}

/* A cmocka group setup that fails where there is no binary to run. */
static inline int sc_test_bin_setup(void **state) {
    (void)state;
    return access(sc_test_bin, X_OK) == 0 ? 0 : -1;
}

typedef struct sc_test_outcome {
    int code;  /* exit status; -1 when killed by a signal */
    char *out; /* stdout */
    char *err; /* stderr; NULL where it went to a terminal */
} sc_test_outcome;

/* All of a file from its start, NUL-terminated; malloc'ed. */
static inline char *sc_test_slurp_fd(int fd) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
        ssize_t got = read(fd, buf + len, cap - len);
        assert_true(got >= 0);
        if (got == 0) break;
        len += (size_t)got;
    }
    buf[len] = '\0';
    return buf;
}

/* A temporary file, already unlinked: gone when closed. */
static inline int sc_test_tmp_fd(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/stepcast-cli-XXXXXX", sc_test_tmpdir());
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    return fd;
}

/* Runs the CLI with args (NULL-terminated, at most 30) and stdin from
 * /dev/null; stderr goes to err_fd when it is >= 0 (a pseudo-terminal),
 * else to a file read back into the outcome. */
static inline sc_test_outcome sc_test_cli_with(const char *const *args, int err_fd) {
    int out = sc_test_tmp_fd(), err = err_fd >= 0 ? -1 : sc_test_tmp_fd();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *argv[32];
        size_t n = 0;
        argv[n++] = sc_test_bin;
        for (; args[n - 1] && n < 31; n++) argv[n] = args[n - 1];
        argv[n] = NULL;
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err_fd >= 0 ? err_fd : err, 2);
        execv(sc_test_bin, (char *const *)argv);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    sc_test_outcome o = {.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1};
    o.out = sc_test_slurp_fd(out);
    o.err = err >= 0 ? sc_test_slurp_fd(err) : NULL;
    close(out);
    if (err >= 0) close(err);
    return o;
}

static inline sc_test_outcome sc_test_cli(const char *const *args) { return sc_test_cli_with(args, -1); }

static inline void sc_test_outcome_free(sc_test_outcome *o) {
    free(o->out);
    free(o->err);
}

#endif
