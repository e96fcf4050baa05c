/*
 * test_json.c - unit tests of the streaming JSON scanner (src/readers/json.c).
 *
 * Every case runs through the same unit-and-retry loop the Kineto reader uses,
 * once with the default 4 MiB window and again with tiny windows (16, 23 and
 * 64 bytes), so each value also straddles window refills at every possible
 * cut. Results must not depend on the window.
 */
#include "testutil.h"

#include "readers/json.h"

/* What one scanner call produced, copied out of the window. */
typedef struct result {
    int rc;             /* SC__J_OK or SC__J_ERR (never MORE after the loop) */
    sc_error err;
    char str[512];      /* the decoded string */
    size_t n;
    int64_t i;          /* the number */
    double d;
    uint64_t end;       /* stream offset of the cursor after the call */
} result;

typedef enum { OP_STRING, OP_INT, OP_TIME, OP_DOUBLE, OP_SKIP, OP_RAW, OP_MEMBERS, OP_MEMBERS_RAW } op;

/* Walks an object with sc__jp_member (OP_MEMBERS) or with
 * sc__jp_member_start and a key read apart (OP_MEMBERS_RAW), skipping the
 * values: the keys, each followed by ';', go to r->str, their count to r->i. */
static int walk_members(sc__jp *jp, bool key_apart, result *r) {
    char keys[sizeof r->str];
    size_t n = 0;
    int64_t count = 0;
    SC__JTRY(sc__jp_expect(jp, '{'));
    for (bool first = true;; first = false) {
        sc__jstr key;
        bool done;
        if (key_apart) {
            SC__JTRY(sc__jp_member_start(jp, first, &done));
            if (!done) {
                SC__JTRY(sc__jp_string(jp, &key));
                SC__JTRY(sc__jp_expect(jp, ':'));
            }
        } else {
            SC__JTRY(sc__jp_member(jp, first, &key, &done));
        }
        if (done) break;
        assert_true(n + key.n + 1 < sizeof keys);
        memcpy(keys + n, key.s, key.n);
        n += key.n;
        keys[n++] = ';';
        count++;
        SC__JTRY(sc__jp_skip(jp));
    }
    memcpy(r->str, keys, n);
    r->str[n] = '\0';
    r->n = n;
    r->i = count;
    return SC__J_OK;
}

static int call(sc__jp *jp, op o, result *r) {
    sc__jstr s = {0};
    int rc;
    switch (o) {
    case OP_STRING:
    case OP_RAW:
        rc = o == OP_STRING ? sc__jp_string(jp, &s) : sc__jp_raw(jp, &s);
        if (rc == SC__J_OK) {
            assert_true(s.n < sizeof r->str);
            memcpy(r->str, s.s, s.n);
            r->str[s.n] = '\0';
            r->n = s.n;
        }
        return rc;
    case OP_INT: return sc__jp_int(jp, &r->i);
    case OP_TIME: return sc__jp_time_ns(jp, &r->i);
    case OP_DOUBLE: return sc__jp_double(jp, &r->d);
    case OP_SKIP: return sc__jp_skip(jp);
    case OP_MEMBERS:
    case OP_MEMBERS_RAW: return walk_members(jp, o == OP_MEMBERS_RAW, r);
    }
    return SC__J_ERR;
}

/* Runs one call over text with the given window (0 = default) and options. */
static result run_window(const char *text, size_t len, op o, uint32_t window,
                         const sc_load_options *opts) {
    result r;
    memset(&r, 0, sizeof r);
    sc__source src;
    assert_int_equal(sc__source_open_mem(&src, text, len, "unit.json", &r.err), SC_OK);
    sc__jwin w;
    size_t max_unit = opts && opts->max_event_bytes ? opts->max_event_bytes : (size_t)1 << 30;
    assert_int_equal(sc__jwin_init(&w, &src, window, max_unit, &r.err), SC_OK);
    sc__jp jp;
    assert_true(sc__jp_init(&jp, &w, "unit.json", opts, &r.err));
    for (;;) {
        const char *unit = jp.p;
        r.rc = call(&jp, o, &r);
        if (r.rc != SC__J_MORE) break;
        r.rc = sc__jwin_refill(&jp, unit);
        if (r.rc != SC__J_OK) break;
    }
    if (r.rc == SC__J_OK) r.end = sc__jp_offset(&jp, jp.p);
    sc__jp_free(&jp);
    sc__jwin_free(&w);
    sc__source_close(&src);
    return r;
}

static const uint32_t windows[] = {0, 16, 23, 64};

/* Runs text under every window; asserts they all agree and returns the
 * default window's result. */
static result run_opts(const char *text, op o, const sc_load_options *opts) {
    size_t len = strlen(text);
    result first = run_window(text, len, o, windows[0], opts);
    for (size_t k = 1; k < sizeof windows / sizeof windows[0]; k++) {
        result r = run_window(text, len, o, windows[k], opts);
        if (r.rc != first.rc || r.err.status != first.err.status ||
            r.err.offset != first.err.offset || r.i != first.i || r.n != first.n ||
            memcmp(r.str, first.str, r.n) != 0 || r.end != first.end ||
            (r.d != first.d && !(r.d != r.d && first.d != first.d)))
            fail_msg("window %u differs from the default on %s: rc %d/%d, %s / %s", windows[k],
                     text, r.rc, first.rc, r.err.message, first.err.message);
    }
    return first;
}

static result run(const char *text, op o) { return run_opts(text, o, NULL); }

#define EXPECT_OK(r)                                                                        \
    do {                                                                                    \
        if ((r).rc != SC__J_OK) fail_msg("unexpected error: %s", (r).err.message);        \
    } while (0)

/* Expects an error of the given status at the given byte offset. */
#define expect_err(r, st, off) expect_err_at(__LINE__, (r), (st), (off))
static void expect_err_at(int line, result r, sc_status st, uint64_t offset) {
    if (r.rc != SC__J_ERR) fail_msg("line %d: expected an error, got rc %d", line, r.rc);
    if (r.err.status != st)
        fail_msg("line %d: status %s, want %s (%s)", line, sc_status_name(r.err.status),
                 sc_status_name(st), r.err.message);
    if (r.err.offset != offset)
        fail_msg("line %d: offset %llu, want %llu (%s)", line, (unsigned long long)r.err.offset,
                 (unsigned long long)offset, r.err.message);
    assert_string_equal(r.err.file, "unit.json");
    assert_true(r.err.message[0] != '\0');
}

static void expect_str(const char *json, const char *want, size_t want_n) {
    result r = run(json, OP_STRING);
    EXPECT_OK(r);
    assert_int_equal(r.n, want_n);
    assert_memory_equal(r.str, want, want_n);
}
#define EXPECT_STR(json, lit) expect_str((json), (lit), sizeof(lit) - 1)

/* ------------------------------------------------------------------ strings */

static void test_string_plain(void **state) {
    (void)state;
    EXPECT_STR("\"\" ", "");
    EXPECT_STR("\"abc\" ", "abc");
    EXPECT_STR("  \"ProfilerStep#3\",", "ProfilerStep#3");
    EXPECT_STR("\"a string long enough to need several window refills of sixteen bytes\"",
               "a string long enough to need several window refills of sixteen bytes");
    /* the cursor ends just after the closing quote */
    result r = run("\"abc\"   ", OP_STRING);
    assert_int_equal(r.end, 5);
}

static void test_string_escapes(void **state) {
    (void)state;
    EXPECT_STR("\"a\\\"b\"", "a\"b");
    EXPECT_STR("\"\\\\\"", "\\");
    EXPECT_STR("\"\\/\"", "/");
    EXPECT_STR("\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t");
    EXPECT_STR("\"void at::native::(anonymous namespace)::\\\"kernel\\\"<float>\"",
               "void at::native::(anonymous namespace)::\"kernel\"<float>");
    /* an escape at the very end of a long string */
    EXPECT_STR("\"0123456789abcdef0123456789\\n\"", "0123456789abcdef0123456789\n");
}

static void test_string_unicode_escapes(void **state) {
    (void)state;
    EXPECT_STR("\"\\u0041\"", "A");
    EXPECT_STR("\"\\u00e9\"", "\xc3\xa9");         /* e acute, 2 bytes */
    EXPECT_STR("\"\\u00E9\"", "\xc3\xa9");         /* hex digits in either case */
    EXPECT_STR("\"\\u20ac\"", "\xe2\x82\xac");     /* euro sign, 3 bytes */
    EXPECT_STR("\"\\u0000\"", "\0");               /* NUL is allowed when escaped */
    EXPECT_STR("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80"); /* surrogate pair: U+1F600 */
    EXPECT_STR("\"x\\uD834\\uDD1Ey\"", "x\xf0\x9d\x84\x9ey"); /* U+1D11E */
    /* lone surrogates decode to U+FFFD instead of failing the whole trace */
    EXPECT_STR("\"\\ud83d\"", "\xef\xbf\xbd");
    EXPECT_STR("\"\\ude00\"", "\xef\xbf\xbd");
    EXPECT_STR("\"\\ud83dA\"", "\xef\xbf\xbd" "A");
    EXPECT_STR("\"\\ud83d\\u0041\"", "\xef\xbf\xbd" "A");
}

static void test_string_utf8(void **state) {
    (void)state;
    EXPECT_STR("\"caf\xc3\xa9\"", "caf\xc3\xa9");
    EXPECT_STR("\"\xe2\x82\xac\xf0\x9f\x98\x80\"", "\xe2\x82\xac\xf0\x9f\x98\x80");
    EXPECT_STR("\"\xc3\xa9\\n\"", "\xc3\xa9\n"); /* UTF-8 next to an escape */
}

static void test_string_invalid_utf8(void **state) {
    (void)state;
    /* offsets point at the first bad byte */
    expect_err(run("\"ab\xff\"", OP_STRING), SC_E_PARSE, 3);
    expect_err(run("\"\xc0\x80\"", OP_STRING), SC_E_PARSE, 1);         /* overlong NUL */
    expect_err(run("\"\xe0\x80\xaf\"", OP_STRING), SC_E_PARSE, 1);     /* overlong '/' */
    expect_err(run("\"\xed\xa0\x80\"", OP_STRING), SC_E_PARSE, 1);     /* UTF-8 surrogate */
    expect_err(run("\"\xf4\x90\x80\x80\"", OP_STRING), SC_E_PARSE, 1); /* above U+10FFFF */
    expect_err(run("\"ab\xe2\x82\"", OP_STRING), SC_E_PARSE, 3);       /* cut sequence */
    expect_err(run("\"\x80\"", OP_STRING), SC_E_PARSE, 1);             /* lone continuation */
    /* the same bytes in a string that also has escapes (the decoding path) */
    expect_err(run("\"\\n\xff\"", OP_STRING), SC_E_PARSE, 3);
    expect_err(run("\"\\t\xc0\x80\"", OP_STRING), SC_E_PARSE, 3);
}

static void test_string_bad_escapes(void **state) {
    (void)state;
    expect_err(run("\"a\\x\"", OP_STRING), SC_E_PARSE, 2);
    expect_err(run("\"\\u12\"", OP_STRING), SC_E_PARSE, 1);
    expect_err(run("\"\\u12g4\"", OP_STRING), SC_E_PARSE, 1);
    expect_err(run("\"\\U0041\"", OP_STRING), SC_E_PARSE, 1);
}

static void test_string_control_chars(void **state) {
    (void)state;
    expect_err(run("\"a\x01z\"", OP_STRING), SC_E_PARSE, 2);
    expect_err(run("\"a\nz\"", OP_STRING), SC_E_PARSE, 2);
    expect_err(run("\"a\tz\"", OP_STRING), SC_E_PARSE, 2);
    expect_err(run("\"abc\x1f\"", OP_STRING), SC_E_PARSE, 4);
    /* a NUL byte inside the data is an error, not the end of the window */
    static const char nul[] = "\"ab\0cd\"";
    result r = run_window(nul, sizeof nul - 1, OP_STRING, 0, NULL);
    expect_err(r, SC_E_PARSE, 3);
    r = run_window(nul, sizeof nul - 1, OP_STRING, 16, NULL);
    expect_err(r, SC_E_PARSE, 3);
}

static void test_string_unterminated(void **state) {
    (void)state;
    expect_err(run("\"abc", OP_STRING), SC_E_PARSE, 4);
    expect_err(run("\"abc\\", OP_STRING), SC_E_PARSE, 5);
    expect_err(run("", OP_STRING), SC_E_PARSE, 0);
    expect_err(run("abc", OP_STRING), SC_E_PARSE, 0);
}

static void test_string_limit(void **state) {
    (void)state;
    sc_load_options o = {.max_string_bytes = 10};
    result r = run_opts("\"0123456789\" ", OP_STRING, &o);
    EXPECT_OK(r);
    assert_int_equal(r.n, 10);
    r = run_opts("\"0123456789a\" ", OP_STRING, &o);
    expect_err(r, SC_E_LIMIT, 1);
    /* also when the string never ends within the window */
    char big[4096];
    big[0] = '"';
    memset(big + 1, 'x', sizeof big - 2);
    big[sizeof big - 1] = '\0';
    r = run_opts(big, OP_STRING, &o);
    expect_err(r, SC_E_LIMIT, 1);
}

/* ------------------------------------------------------------------ numbers */

static int64_t time_ns(const char *json) {
    result r = run(json, OP_TIME);
    EXPECT_OK(r);
    return r.i;
}

static void test_time_integer_us(void **state) {
    (void)state;
    assert_int_equal(time_ns("0,"), 0);
    assert_int_equal(time_ns("1,"), 1000);
    assert_int_equal(time_ns("603240,"), 603240000);
    assert_int_equal(time_ns("-7,"), -7000);
    /* epoch microseconds as Kineto writes them before 2024 */
    assert_int_equal(time_ns("1694128201545123 "), INT64_C(1694128201545123000));
}

static void test_time_fractional_us(void **state) {
    (void)state;
    assert_int_equal(time_ns("1.5,"), 1500);
    assert_int_equal(time_ns("1.05,"), 1050);
    assert_int_equal(time_ns("1.005,"), 1005);
    assert_int_equal(time_ns("0.001,"), 1);
    assert_int_equal(time_ns("2.000,"), 2000);
    assert_int_equal(time_ns("9288.291}"), 9288291);
    /* 4 to 6 decimals: rounded to the nearest ns, halves away from zero */
    assert_int_equal(time_ns("1.1234,"), 1123);
    assert_int_equal(time_ns("1.1235,"), 1124);
    assert_int_equal(time_ns("1.12349,"), 1123);
    assert_int_equal(time_ns("1.123456,"), 1123);
    assert_int_equal(time_ns("1.123999,"), 1124);
    assert_int_equal(time_ns("0.0005,"), 1);
    assert_int_equal(time_ns("0.0004999,"), 0);
    assert_int_equal(time_ns("-0.0005,"), -1);
    assert_int_equal(time_ns("-1.5,"), -1500);
    assert_int_equal(time_ns("-1.1235,"), -1124);
    /* nanosecond-resolution epoch time: exact where a double is not */
    assert_int_equal(time_ns("1712345678901234.567,"), INT64_C(1712345678901234567));
    assert_int_equal(time_ns("1712345678901234.5679,"), INT64_C(1712345678901234568));
}

static void test_time_exponent(void **state) {
    (void)state;
    assert_int_equal(time_ns("1e3,"), 1000000);
    assert_int_equal(time_ns("1E3,"), 1000000);
    assert_int_equal(time_ns("1.5e+2,"), 150000);
    assert_int_equal(time_ns("2.5e-1,"), 250);
    assert_int_equal(time_ns("1.5E-3,"), 2); /* 1.5 ns rounds away from zero */
    assert_int_equal(time_ns("-1e0,"), -1000);
    assert_int_equal(time_ns("0e0,"), 0);
}

static void test_time_overflow(void **state) {
    (void)state;
    /* the largest whole-us values that fit int64 ns are accepted */
    assert_int_equal(time_ns("9223372036854769,"), INT64_C(9223372036854769000));
    assert_int_equal(time_ns("-9223372036854769,"), -INT64_C(9223372036854769000));
    expect_err(run("9223372036854776,", OP_TIME), SC_E_LIMIT, 0);
    expect_err(run("99999999999999999999,", OP_TIME), SC_E_LIMIT, 0);
    expect_err(run("-99999999999999999999,", OP_TIME), SC_E_LIMIT, 0);
    expect_err(run("1e300,", OP_TIME), SC_E_LIMIT, 0);
    expect_err(run("-1e300,", OP_TIME), SC_E_LIMIT, 0);
    expect_err(run("1e400,", OP_TIME), SC_E_LIMIT, 0);
    expect_err(run("  9e16,", OP_TIME), SC_E_LIMIT, 2);
}

static void test_int(void **state) {
    (void)state;
    result r = run("42,", OP_INT);
    EXPECT_OK(r);
    assert_int_equal(r.i, 42);
    r = run("-7]", OP_INT);
    assert_int_equal(r.i, -7);
    r = run("1e2,", OP_INT);
    assert_int_equal(r.i, 100);
    r = run("2.0,", OP_INT);
    assert_int_equal(r.i, 2);
    r = run("9223372036854775807,", OP_INT);
    EXPECT_OK(r);
    assert_true(r.i == INT64_MAX);
    r = run("-9223372036854775808,", OP_INT);
    EXPECT_OK(r);
    assert_true(r.i == INT64_MIN);
    expect_err(run("9223372036854775808,", OP_INT), SC_E_LIMIT, 0);
    expect_err(run("-9223372036854775809,", OP_INT), SC_E_LIMIT, 0);
    expect_err(run("1.5,", OP_INT), SC_E_FORMAT, 0);
    expect_err(run("\"7\",", OP_INT), SC_E_PARSE, 0);
}

static void test_double(void **state) {
    (void)state;
    result r = run("0.25,", OP_DOUBLE);
    EXPECT_OK(r);
    assert_true(r.d == 0.25);
    r = run("-1.5e3,", OP_DOUBLE);
    assert_true(r.d == -1500.0);
    expect_err(run("1e999,", OP_DOUBLE), SC_E_LIMIT, 0);
}

static void test_number_syntax(void **state) {
    (void)state;
    expect_err(run("-,", OP_TIME), SC_E_PARSE, 1);
    expect_err(run("1.,", OP_TIME), SC_E_PARSE, 2);
    expect_err(run("1.e5,", OP_TIME), SC_E_PARSE, 2);
    expect_err(run("1e,", OP_TIME), SC_E_PARSE, 2);
    expect_err(run("1e+,", OP_TIME), SC_E_PARSE, 3);
    expect_err(run(".5,", OP_TIME), SC_E_PARSE, 0);
    expect_err(run("+1,", OP_TIME), SC_E_PARSE, 0);
    expect_err(run("NaN,", OP_TIME), SC_E_PARSE, 0);
    expect_err(run("Infinity,", OP_TIME), SC_E_PARSE, 0);
    expect_err(run("[0x10]", OP_SKIP), SC_E_PARSE, 2);
    /* a leading zero ends the number: the next token is then wrong */
    expect_err(run("[01]", OP_SKIP), SC_E_PARSE, 2);
    expect_err(run("[-01]", OP_SKIP), SC_E_PARSE, 3);
    /* a number at the very end of the input is cut, it may have gone on */
    expect_err(run("12", OP_TIME), SC_E_PARSE, 2);
}

/* ------------------------------------------------------------- skip / raw */

static void test_skip_values(void **state) {
    (void)state;
    static const char *ok[] = {
        "true,", "false,", "null,", "0,", "-0.5e-3,", "\"s\\\"\",", "[],", "{},", "[1,2,3],",
        "{\"a\":{\"b\":[true,false,null,{\"c\":\"d\"}]},\"e\":-1.5} ,",
        " [ 1 , [ 2 , { \"x\" : [ ] } ] ] ,",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        result r = run(ok[i], OP_SKIP);
        if (r.rc != SC__J_OK) fail_msg("%s: %s", ok[i], r.err.message);
        /* the cursor stops after the value (before trailing blanks and ',') */
        const char *comma = strrchr(ok[i], ',');
        const char *e = comma;
        while (e > ok[i] && e[-1] == ' ') e--;
        assert_int_equal(r.end, (uint64_t)(e - ok[i]));
    }
    result r = run("{\"Input Dims\": [[1, 2], []], \"x\": 1}, ", OP_RAW);
    EXPECT_OK(r);
    assert_string_equal(r.str, "{\"Input Dims\": [[1, 2], []], \"x\": 1}");
}

static void test_skip_invalid(void **state) {
    (void)state;
    expect_err(run("tru,", OP_SKIP), SC_E_PARSE, 0);
    expect_err(run("nul ", OP_SKIP), SC_E_PARSE, 0);
    expect_err(run("True,", OP_SKIP), SC_E_PARSE, 0);
    expect_err(run("[1,]", OP_SKIP), SC_E_PARSE, 3);
    expect_err(run("[1 2]", OP_SKIP), SC_E_PARSE, 3);
    expect_err(run("{\"a\" 1}", OP_SKIP), SC_E_PARSE, 5);
    expect_err(run("{\"a\":1,}", OP_SKIP), SC_E_PARSE, 7);
    expect_err(run("{a:1}", OP_SKIP), SC_E_PARSE, 1);
    expect_err(run("{'a':1}", OP_SKIP), SC_E_PARSE, 1);
    expect_err(run("[1}", OP_SKIP), SC_E_PARSE, 2);
    expect_err(run("]", OP_SKIP), SC_E_PARSE, 0);
    expect_err(run("[1, /* c */ 2]", OP_SKIP), SC_E_PARSE, 4);
    /* cut in the middle of a container */
    expect_err(run("[1, {\"a\": [", OP_SKIP), SC_E_PARSE, 11);
}

/* ------------------------------------------------------------- objects */

/* The member walk, both ways (key read by sc__jp_member or apart), under
 * every window: the same keys, or the same error at the same offset. */
static result members(const char *text) {
    result a = run(text, OP_MEMBERS), b = run(text, OP_MEMBERS_RAW);
    if (a.rc != b.rc || a.err.status != b.err.status || a.err.offset != b.err.offset ||
        a.i != b.i || strcmp(a.str, b.str) != 0 || a.end != b.end)
        fail_msg("the two member walks differ on %s: %s / %s", text, a.err.message, b.err.message);
    return a;
}

static void test_object_members(void **state) {
    (void)state;
    result r = members("{},");
    EXPECT_OK(r);
    assert_int_equal(r.i, 0);
    assert_int_equal(r.end, 2);
    r = members(" { } ,");
    EXPECT_OK(r);
    assert_int_equal(r.i, 0);
    r = members("{\"a\":1},");
    EXPECT_OK(r);
    assert_string_equal(r.str, "a;");
    static const char spaced[] = " { \"a\" : 1 , \"b\\u0063\" : [1, {\"x\": 2}] ,\n\"c\":{} } ,";
    r = members(spaced);
    EXPECT_OK(r);
    assert_string_equal(r.str, "a;bc;c;");
    assert_int_equal(r.i, 3);
    assert_int_equal(r.end, sizeof spaced - 3); /* just after the '}' */
}

static void test_object_members_invalid(void **state) {
    (void)state;
    expect_err(members("{,\"a\":1}"), SC_E_PARSE, 1);
    expect_err(members("{\"a\":1,}"), SC_E_PARSE, 7);
    expect_err(members("{\"a\":1 \"b\":2}"), SC_E_PARSE, 7);
    expect_err(members("{\"a\" 1}"), SC_E_PARSE, 5);
    expect_err(members("{a:1}"), SC_E_PARSE, 1);
    expect_err(members("{\"a\":1]"), SC_E_PARSE, 6);
    expect_err(members("{\"a\":1,,\"b\":2}"), SC_E_PARSE, 7);
    /* cut after a member: the end of input, not a syntax error, is named */
    result r = members("{\"a\":1");
    expect_err(r, SC_E_PARSE, 6);
    assert_non_null(strstr(r.err.message, "end of input"));
}

static void test_depth_limit(void **state) {
    (void)state;
    sc_load_options o = {.max_depth = 4};
    result r = run_opts("[[[[]]]] ", OP_SKIP, &o);
    EXPECT_OK(r);
    r = run_opts("[{\"a\":[{}]}] ", OP_SKIP, &o);
    EXPECT_OK(r);
    expect_err(run_opts("[[[[[]]]]] ", OP_SKIP, &o), SC_E_LIMIT, 4);
    expect_err(run_opts("{\"a\":[{\"b\":[[1]]}]} ", OP_SKIP, &o), SC_E_LIMIT, 12);
    /* 10,000 levels against the default limit (512) */
    size_t n = 10000;
    char *deep = malloc(2 * n + 2);
    assert_non_null(deep);
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = ' ';
    deep[2 * n + 1] = '\0';
    r = run(deep, OP_SKIP);
    expect_err(r, SC_E_LIMIT, 512);
    /* 512 levels are fine */
    memset(deep, ']', 2 * n);
    memset(deep, '[', 512);
    deep[1024] = ' ';
    deep[1025] = '\0';
    r = run(deep, OP_SKIP);
    EXPECT_OK(r);
    free(deep);
}

/* ------------------------------------------------------------- refill path */

/* A sequence of units (an array's elements, one call per element) read
 * through windows of every size from 16 to 96 bytes gives the same values:
 * each element starts at a different offset of the window, so every token
 * kind is cut at every position by some window. */
static void test_refill_every_cut(void **state) {
    (void)state;
    static const char text[] =
        "[\"ncclDevKernel_AllReduce_Sum_f16_RING_LL\", 1694128201545123.456, "
        "\"caf\\u00e9 \\ud83d\\ude00 \xe2\x82\xac\", -0.0005, 12345678901234, "
        "{\"Input Dims\": [[4096, 512], [], [1]], \"dtype\": \"c10::Half\"}, true, null, "
        "\"\\\"quoted\\\"\", 1.5e3]";
    char want[10][256];
    int64_t want_i[10];
    for (uint32_t window = 16; window <= 96; window++) {
        sc_error err;
        sc__source src;
        assert_int_equal(sc__source_open_mem(&src, text, sizeof text - 1, "unit.json", &err), SC_OK);
        sc__jwin w;
        assert_int_equal(sc__jwin_init(&w, &src, window == 96 ? 0 : window, (size_t)1 << 30, &err),
                         SC_OK);
        sc__jp jp;
        assert_true(sc__jp_init(&jp, &w, "unit.json", NULL, &err));
        int idx = -1; /* -1: the opening '[' */
        bool done = false;
        while (!done) {
            const char *unit = jp.p;
            int rc;
            sc__jstr s = {0};
            int64_t v = 0;
            if (idx < 0) {
                rc = sc__jp_expect(&jp, '[');
            } else {
                if (idx > 0) {
                    bool end;
                    rc = sc__jp_next(&jp, ']', &end);
                    if (rc == SC__J_OK && end) {
                        done = true;
                        continue;
                    }
                } else {
                    rc = SC__J_OK;
                }
                if (rc == SC__J_OK) {
                    switch (idx) {
                    case 0: case 2: case 8: rc = sc__jp_string(&jp, &s); break;
                    case 1: case 3: case 9: rc = sc__jp_time_ns(&jp, &v); break;
                    case 4: rc = sc__jp_int(&jp, &v); break;
                    default: rc = sc__jp_raw(&jp, &s); break;
                    }
                }
            }
            if (rc == SC__J_MORE) {
                rc = sc__jwin_refill(&jp, unit);
                if (rc != SC__J_OK) fail_msg("window %u: %s", window, err.message);
                continue;
            }
            if (rc != SC__J_OK) fail_msg("window %u, element %d: %s", window, idx, err.message);
            if (idx >= 0) {
                char got[256];
                assert_true(s.n < sizeof got);
                memcpy(got, s.s ? s.s : "", s.n);
                got[s.n] = '\0';
                if (window == 16) {
                    memcpy(want[idx], got, s.n + 1);
                    want_i[idx] = v;
                } else {
                    assert_string_equal(got, want[idx]);
                    assert_int_equal(v, want_i[idx]);
                }
            }
            idx++;
        }
        assert_int_equal(idx, 10);
        sc__jp_free(&jp);
        sc__jwin_free(&w);
        sc__source_close(&src);
    }
    assert_string_equal(want[0], "ncclDevKernel_AllReduce_Sum_f16_RING_LL");
    assert_int_equal(want_i[1], INT64_C(1694128201545123456));
    assert_string_equal(want[2], "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac");
    assert_int_equal(want_i[3], -1);
    assert_int_equal(want_i[4], INT64_C(12345678901234));
    assert_string_equal(want[5], "{\"Input Dims\": [[4096, 512], [], [1]], \"dtype\": \"c10::Half\"}");
    assert_string_equal(want[6], "true");
    assert_string_equal(want[7], "null");
    assert_string_equal(want[8], "\"quoted\"");
    assert_int_equal(want_i[9], 1500000);
}

/* Error offsets are stream offsets, also after the window has slid on. */
static void test_offsets_after_slide(void **state) {
    (void)state;
    char text[300];
    memset(text, ' ', sizeof text);
    memcpy(text + 250, "\"bad\x01\"", 6);
    text[256] = '\0';
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
        result r = run_window(text, 256, OP_STRING, windows[k], NULL);
        expect_err(r, SC_E_PARSE, 254);
    }
}

static void test_parse_int_text(void **state) {
    (void)state;
    int64_t v;
    assert_true(sc__parse_int_text("123", 3, &v));
    assert_int_equal(v, 123);
    assert_true(sc__parse_int_text("-5", 2, &v));
    assert_int_equal(v, -5);
    assert_true(sc__parse_int_text("0x1f", 4, &v));
    assert_int_equal(v, 31);
    assert_true(sc__parse_int_text("0X0", 3, &v));
    assert_int_equal(v, 0);
    assert_false(sc__parse_int_text("", 0, &v));
    assert_false(sc__parse_int_text("-", 1, &v));
    assert_false(sc__parse_int_text("12a", 3, &v));
    assert_false(sc__parse_int_text("0x", 2, &v));
    assert_false(sc__parse_int_text("99999999999999999999", 20, &v));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_plain),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_string_unicode_escapes),
        cmocka_unit_test(test_string_utf8),
        cmocka_unit_test(test_string_invalid_utf8),
        cmocka_unit_test(test_string_bad_escapes),
        cmocka_unit_test(test_string_control_chars),
        cmocka_unit_test(test_string_unterminated),
        cmocka_unit_test(test_string_limit),
        cmocka_unit_test(test_time_integer_us),
        cmocka_unit_test(test_time_fractional_us),
        cmocka_unit_test(test_time_exponent),
        cmocka_unit_test(test_time_overflow),
        cmocka_unit_test(test_int),
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_number_syntax),
        cmocka_unit_test(test_skip_values),
        cmocka_unit_test(test_skip_invalid),
        cmocka_unit_test(test_object_members),
        cmocka_unit_test(test_object_members_invalid),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_refill_every_cut),
        cmocka_unit_test(test_offsets_after_slide),
        cmocka_unit_test(test_parse_int_text),
    };
    return cmocka_run_group_tests_name("json scanner", tests, NULL, NULL);
}
