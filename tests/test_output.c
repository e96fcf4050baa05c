/*
 * test_output.c - the safe output helper (src/io/output.c): nothing appears
 * under the final name until commit, abort leaves nothing behind, existing
 * files are kept unless forced, and a full disk is reported, not ignored.
 */
#include "testutil.h"

#include <dirent.h>
#include <sys/stat.h>

static char dir[256];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "%s/stepcast-output-XXXXXX", sc_test_tmpdir());
    return mkdtemp(dir) ? 0 : -1;
}

/* Number of entries in dir (besides . and ..): catches stray temp files. */
static int entries(void) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

static int teardown(void **state) {
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[600];
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
    return 0;
}

static const char *file_in_dir(const char *name) {
    static char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void read_back(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void test_commit_renames(void **state) {
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s", file_in_dir("out.json"));
    sc_output *o;
    sc_error err;
    assert_int_equal(sc_output_open(path, 0, &o, &err), SC_OK);
    fputs("{\"a\": 1}\n", sc_output_file(o));
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0); /* not there before commit */
    assert_int_equal(entries(), 1);           /* only the temporary file */
    assert_int_equal(sc_output_commit(o, &err), SC_OK);
    char buf[64];
    read_back(path, buf, sizeof buf);
    assert_string_equal(buf, "{\"a\": 1}\n");
    assert_int_equal(entries(), 1); /* temp file gone */
}

static void test_abort_leaves_nothing(void **state) {
    (void)state;
    sc_output *o;
    sc_error err;
    assert_int_equal(sc_output_open(file_in_dir("aborted.json"), 0, &o, &err), SC_OK);
    fputs("partial", sc_output_file(o));
    sc_output_abort(o);
    assert_int_equal(entries(), 0);
}

static void test_refuses_existing_unless_forced(void **state) {
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s", file_in_dir("keep.txt"));
    FILE *f = fopen(path, "wb");
    fputs("old", f);
    fclose(f);
    sc_output *o;
    sc_error err;
    assert_int_equal(sc_output_open(path, 0, &o, &err), SC_E_USAGE);
    assert_non_null(strstr(err.message, "--force"));
    assert_int_equal(sc_output_open(path, SC_OUTPUT_FORCE, &o, &err), SC_OK);
    fputs("new", sc_output_file(o));
    char buf[16];
    read_back(path, buf, sizeof buf);
    assert_string_equal(buf, "old"); /* untouched until commit */
    assert_int_equal(sc_output_commit(o, &err), SC_OK);
    read_back(path, buf, sizeof buf);
    assert_string_equal(buf, "new");
    assert_int_equal(entries(), 1);
}

static void test_file_appearing_after_open_is_kept(void **state) {
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s", file_in_dir("race.txt"));
    sc_output *o;
    sc_error err;
    assert_int_equal(sc_output_open(path, 0, &o, &err), SC_OK);
    fputs("ours", sc_output_file(o));
    FILE *f = fopen(path, "wb"); /* someone else writes it meanwhile */
    fputs("theirs", f);
    fclose(f);
    assert_int_equal(sc_output_commit(o, &err), SC_E_USAGE);
    char buf[16];
    read_back(path, buf, sizeof buf);
    assert_string_equal(buf, "theirs");
    assert_int_equal(entries(), 1); /* our temp file removed */
}

static void test_bad_paths(void **state) {
    (void)state;
    sc_output *o;
    sc_error err;
    assert_int_equal(sc_output_open(dir, SC_OUTPUT_FORCE, &o, &err), SC_E_USAGE); /* a directory */
    assert_int_equal(sc_output_open(file_in_dir("no/such/dir/x.json"), 0, &o, &err), SC_E_USAGE);
    assert_int_equal(sc_output_open("", 0, &o, &err), SC_E_USAGE);
    assert_int_equal(entries(), 0);
}

static void test_full_disk_is_an_error(void **state) {
    (void)state;
    struct stat sb;
    if (stat("/dev/full", &sb) != 0) skip();
    /* Writes to /dev/full fail with ENOSPC; a temporary file cannot be put
     * there, so point the "-" (stdout) path at it: commit must report it. */
    FILE *saved = stdout;
    FILE *full = fopen("/dev/full", "wb");
    assert_non_null(full);
    stdout = full;
    sc_output *o;
    sc_error err;
    assert_int_equal(sc_output_open("-", 0, &o, &err), SC_OK);
    for (int i = 0; i < 10000; i++) fputs("0123456789", sc_output_file(o));
    assert_int_equal(sc_output_commit(o, &err), SC_E_INTERNAL); /* exit 3 */
    stdout = saved;
    fclose(full);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_renames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_existing_unless_forced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_appearing_after_open_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_is_an_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
