/*
 * test_hardware.c - the GPU profiles (src/models/hardware.c): every row
 * passes its own checks, lookup by a name a user types and by the device
 * name a trace carries (those met in shared/traces among them), and user
 * profile files: a good one reads back, and a missing, negative, unknown
 * or mistyped field, or bytes that are not JSON, fail with one line
 * naming the file and the field.
 */
#include "testutil.h"

#include "models/hardware.h"

static void test_rows_are_valid(void **state) {
    (void)state;
    assert_true(sc__hw_count() >= 9);
    for (size_t i = 0; i < sc__hw_count(); i++) {
        const sc__hw_profile *p = sc__hw_at(i);
        sc_error err;
        if (sc__hw_check(p, p->name, &err) != SC_OK) fail_msg("%s: %s", p->name, err.message);
        /* each row is found by its short name and by its full name */
        assert_ptr_equal(sc__hw_find(sc__hw_alias(i)), p);
        assert_ptr_equal(sc__hw_find(p->name), p);
        assert_true(p->bf16_tflops >= 0 && p->fp16_tflops > 0 && p->hbm_GBps > 0 && p->memory_GB > 0);
        assert_true(p->gpus_per_node >= 1 && p->nics_per_node >= 1);
    }
    assert_null(sc__hw_at(sc__hw_count()));
}

static void expect_find(const char *name, const char *want) {
    const sc__hw_profile *p = sc__hw_find(name);
    if (!want) {
        if (p) fail_msg("'%s' found %s, want none", name, p->name);
        return;
    }
    if (!p) fail_msg("'%s' found nothing, want %s", name, want);
    if (strcmp(p->name, want) != 0) fail_msg("'%s' found %s, want %s", name, p->name, want);
}

static void test_lookup(void **state) {
    (void)state;
    /* names a user types */
    expect_find("h100", "H100-SXM5-80GB");
    expect_find("H100-SXM5", "H100-SXM5-80GB");
    expect_find("h100_sxm5", "H100-SXM5-80GB");
    expect_find("a100-80gb", "A100-SXM4-80GB");
    expect_find("A100", "A100-SXM4-40GB");
    expect_find("h200", "H200-SXM-141GB");
    expect_find("b200", "B200");
    expect_find("gh200", "GH200");
    expect_find("mi300x", "MI300X");
    expect_find("v100", "V100-SXM2-32GB");
    /* device names traces carry (deviceProperties) */
    expect_find("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB");
    expect_find("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB");
    expect_find("NVIDIA A100-PG509-200", "A100-SXM4-40GB");
    expect_find("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB");
    expect_find("NVIDIA H200", "H200-SXM-141GB");
    expect_find("NVIDIA GH200 480GB", "GH200");
    expect_find("NVIDIA B200", "B200");
    expect_find("Tesla V100-SXM2-32GB", "V100-SXM2-32GB");
    expect_find("Tesla V100-SXM2-16GB", "V100-SXM2-16GB");
    expect_find("AMD Instinct MI300X", "MI300X");
    expect_find("AMD Instinct MI300X VF", "MI300X");
    /* no row: PCIe cards, other GPUs, nothing */
    expect_find("NVIDIA A100-PCIE-40GB", NULL);
    expect_find("NVIDIA H100 PCIe", NULL);
    expect_find("NVIDIA H100 NVL", NULL);
    expect_find("NVIDIA GB200", NULL);
    expect_find("AMD Radeon Graphics", NULL);
    expect_find("AMD Instinct MI210", NULL);
    expect_find("", NULL);
    expect_find(" - ", NULL);
    assert_null(sc__hw_find(NULL));
}

/* A profile file of every field of p, with `drop` left out and `extra`
 * (raw JSON members) appended; the path of a temporary file. */
static char *profile_file(const sc__hw_profile *p, const char *drop, const char *extra) {
    char buf[32768];
    size_t n = 0;
#define ADD(...) n += (size_t)snprintf(buf + n, sizeof buf - n, __VA_ARGS__)
#define NUM(f)                                                       \
    if (!drop || strcmp(drop, #f) != 0) ADD("  \"%s\": %.17g,\n", #f, (double)p->f)
    ADD("{\n");
    if (!drop || strcmp(drop, "name") != 0) ADD("  \"name\": \"%s\",\n", p->name);
    NUM(fp64_tflops); NUM(fp32_tflops); NUM(tf32_tflops); NUM(fp16_tflops); NUM(bf16_tflops); NUM(fp8_tflops);
    NUM(hbm_GBps); NUM(memory_GB); NUM(sm_count); NUM(nvlink_GBps);
    if (!drop || strcmp(drop, "nvls") != 0) ADD("  \"nvls\": %s,\n", p->nvls ? "true" : "false");
    NUM(gpus_per_node); NUM(nics_per_node); NUM(nic_Gbps); NUM(comm_base_us); NUM(comm_ll_frac);
    NUM(nvlink_simple_us); NUM(nvlink_eff); NUM(nvls_us); NUM(nvls_eff);
    ADD("  %s\"net_eff\": %.17g\n}\n", extra ? extra : "", p->net_eff);
#undef NUM
#undef ADD
    assert_true(n < sizeof buf);
    if (drop && strcmp(drop, "net_eff") == 0) { /* the last member: cut it and its comma */
        char *last = strstr(buf, "\"net_eff\"");
        char *comma = last;
        while (comma > buf && *comma != ',') comma--;
        memcpy(comma, "\n}\n", 4);
        n = strlen(buf);
    }
    const char *path = sc_test_tmpfile(buf, n, ".json");
    assert_non_null(path);
    return strdup(path);
}

static void test_good_file(void **state) {
    (void)state;
    for (size_t i = 0; i < sc__hw_count(); i++) {
        char *path = profile_file(sc__hw_at(i), NULL, NULL);
        sc__hw_profile got;
        sc_error err;
        if (sc__hw_load(path, &got, &err) != SC_OK) fail_msg("%s: %s", path, err.message);
        assert_memory_equal(&got, sc__hw_at(i), sizeof got);
        unlink(path);
        free(path);
    }
    /* larger than the first read window: the members are read again after
     * a refill, from scratch */
    char *spaces = malloc(20001);
    assert_non_null(spaces);
    memset(spaces, ' ', 20000);
    spaces[20000] = '\0';
    char *path = profile_file(sc__hw_at(0), NULL, spaces);
    sc__hw_profile got;
    sc_error err;
    if (sc__hw_load(path, &got, &err) != SC_OK) fail_msg("%s: %s", path, err.message);
    assert_memory_equal(&got, sc__hw_at(0), sizeof got);
    unlink(path);
    free(path);
    free(spaces);
}

/* Loading the file at path fails with status st, on one line that names
 * the file and says `says`. */
static void expect_bad(const char *path, sc_status st, const char *says) {
    sc__hw_profile got;
    sc_error err;
    sc_status s = sc__hw_load(path, &got, &err);
    if (s != st) fail_msg("%s: status %d (%s), want %d", path, s, err.message, st);
    if (!strstr(err.message, says)) fail_msg("'%s' does not say '%s'", err.message, says);
    assert_string_equal(err.file, path);
    assert_null(strchr(err.message, '\n'));
}

static void test_bad_files(void **state) {
    (void)state;
    const sc__hw_profile *h100 = sc__hw_find("h100");
    static const char *const fields[] = {"name", "fp8_tflops", "nvls", "nvlink_GBps", "comm_ll_frac", "net_eff"};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) { /* each field missing */
        char *path = profile_file(h100, fields[i], NULL);
        char says[64];
        snprintf(says, sizeof says, "missing field '%s'", fields[i]);
        expect_bad(path, SC_E_FORMAT, says);
        unlink(path);
        free(path);
    }
    sc__hw_profile p = *h100;
    p.hbm_GBps = -3350; /* negative */
    char *path = profile_file(&p, NULL, NULL);
    expect_bad(path, SC_E_FORMAT, "field 'hbm_GBps' is negative (-3350)");
    unlink(path);
    free(path);
    p = *h100;
    p.comm_ll_frac = 2; /* out of range */
    path = profile_file(&p, NULL, NULL);
    expect_bad(path, SC_E_FORMAT, "field 'comm_ll_frac' must be at most 1");
    unlink(path);
    free(path);
    p = *h100;
    p.gpus_per_node = 0;
    path = profile_file(&p, NULL, NULL);
    expect_bad(path, SC_E_FORMAT, "field 'gpus_per_node' must be at least 1");
    unlink(path);
    free(path);
    static const struct {
        const char *extra, *says;
    } extras[] = {
        {"\"nvlink_gbps\": 450,", "unknown field 'nvlink_gbps'"},
        {"\"net_eff\": 0.5,", "field 'net_eff' given twice"},
    };
    for (size_t i = 0; i < sizeof extras / sizeof *extras; i++) {
        path = profile_file(h100, NULL, extras[i].extra);
        expect_bad(path, SC_E_FORMAT, extras[i].says);
        unlink(path);
        free(path);
    }
    static const struct {
        const char *text, *says;
        sc_status st;
    } texts[] = {
        {"", "empty input", SC_E_PARSE},
        {"not json", "expected '{'", SC_E_PARSE},
        {"{\"name\": \"x\",", "end of input", SC_E_PARSE},
        {"[1, 2]", "expected '{'", SC_E_PARSE},
        {"{\"name\": 3}", "field 'name' wants a string", SC_E_FORMAT},
        {"{\"nvls\": 1}", "field 'nvls' wants true or false", SC_E_FORMAT},
        {"{\"hbm_GBps\": \"fast\"}", "field 'hbm_GBps' wants a number", SC_E_FORMAT},
        {"{\"sm_count\": 1.5}", "field 'sm_count' must be a whole number", SC_E_FORMAT},
        {"{\"name\": \"\"}", "field 'name' wants 1 to 63 characters", SC_E_FORMAT},
        {"{} {}", "unexpected data after the end of the profile", SC_E_PARSE},
        {"{}", "missing field 'name'", SC_E_FORMAT},
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        const char *t = sc_test_tmpfile(texts[i].text, strlen(texts[i].text), ".json");
        assert_non_null(t);
        path = strdup(t);
        expect_bad(path, texts[i].st, texts[i].says);
        unlink(path);
        free(path);
    }
    sc__hw_profile got;
    sc_error err;
    assert_int_equal(sc__hw_load("/nonexistent/profile.json", &got, &err), SC_E_IO);
    assert_non_null(strstr(err.file, "/nonexistent/profile.json"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_are_valid),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
