/*
 * test_memory.c - the allocation helpers of src/base/memory.c that the
 * rest of the suite only uses, never looks at: sc__vec_prefault's contract
 * (nothing below 2 MB; then room just past the length made resident, never
 * past the capacity, the contents untouched, at once when enough is warm),
 * sc__prefault's range, sc__prefaulter's thread, and the capacity
 * sc__vec_grown_cap gives an array filled in step with an input; and the
 * unit ladder of the size texts (sc__size_in_units, sc__budget_text).
 *
 * Residency is read with mincore(2). Where the kernel has no
 * MADV_POPULATE_WRITE (before Linux 5.14) the hint does nothing, and only
 * the bounds and contents are checked.
 */
#include "testutil.h"

#include "base/base.h"

#include <sys/mman.h>

#define MB ((size_t)1 << 20)
#define PAGE ((size_t)sysconf(_SC_PAGESIZE)) /* 4 KB on x86-64, more elsewhere */

/* Pages of [from, to) resident, both rounded to pages. */
static size_t resident(const char *from, const char *to) {
    uintptr_t a = (uintptr_t)from & ~(PAGE - 1), b = ((uintptr_t)to + PAGE - 1) & ~(PAGE - 1);
    size_t pages = (b - a) / PAGE, n = 0;
    unsigned char *vec = malloc(pages);
    assert_non_null(vec);
    assert_int_equal(mincore((void *)a, b - a, vec), 0);
    for (size_t i = 0; i < pages; i++) n += vec[i] & 1;
    free(vec);
    return n;
}

/* Residency is counted in 4 KB pages: where transparent huge pages are on
 * for every mapping, one fault would make 2 MB resident. */
static void small_pages(void *p, size_t bytes) {
#ifdef MADV_NOHUGEPAGE
    uintptr_t a = ((uintptr_t)p + PAGE - 1) & ~(PAGE - 1), b = ((uintptr_t)p + bytes) & ~(PAGE - 1);
    if (b > a) (void)madvise((void *)a, b - a, MADV_NOHUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Does this kernel populate on request, and does mincore tell? Tried on a
 * fresh mapping: not resident before, resident after. (Some sandboxes say
 * every page is resident; there only bounds and contents are checked.) */
static bool kernel_populates(void) {
#ifdef MADV_POPULATE_WRITE
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    bool ok = resident(p, p + PAGE) == 0 && madvise(p, PAGE, MADV_POPULATE_WRITE) == 0 &&
              resident(p, p + PAGE) == 1;
    munmap(p, PAGE);
    return ok;
#else
    return false;
#endif
}

static void test_prefault(void **state) {
    (void)state;
    bool populates = kernel_populates();
    sc__vec v;
    sc__vec_init(&v, 8);
    uintptr_t warm = 0;
    sc__vec_prefault(&v, &warm); /* no data yet: nothing to do, no crash */
    assert_true(sc__vec_reserve_exact(&v, 8 * MB / 8)); /* 8 MB: its own fresh mapping */
    char *base = v.data;
    small_pages(base, 8 * MB);
    memset(base, 0x5a, MB); /* the first megabyte is in use: too little to bother */
    v.len = MB / 8;
    sc__vec_prefault(&v, &warm);
    assert_true(warm == 0);
    memset(base + MB, 0x5a, 2 * MB); /* 3 MB */
    v.len = 3 * MB / 8;
    size_t before = resident(base + 3 * MB, base + 8 * MB);

    sc__vec_prefault(&v, &warm);
    assert_true(warm > (uintptr_t)base + 3 * MB && warm <= (uintptr_t)base + 4 * MB);
    if (populates) /* the megabyte after the length is resident */
        assert_true(resident(base + 3 * MB, (char *)warm) >= MB / PAGE - 1);
    for (size_t i = 0; i < 3 * MB; i++)
        if ((unsigned char)base[i] != 0x5a) fail_msg("byte %zu changed", i);

    uintptr_t was = warm; /* enough is warm: nothing more */
    sc__vec_prefault(&v, &warm);
    assert_true(warm == was);

    v.len = (size_t)(warm - (uintptr_t)base) / 8 - 1000; /* close to the warm end: the next megabyte */
    sc__vec_prefault(&v, &warm);
    assert_true(warm > was && warm <= (uintptr_t)base + 8 * MB);
    /* past the warm end nothing was touched */
    char *cold = (char *)((warm + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
    if (populates) assert_true(resident(cold, base + 8 * MB) <= before);

    v.len = v.cap - 10; /* near the capacity: never past it */
    warm = 0;
    sc__vec_prefault(&v, &warm);
    assert_true(warm <= (uintptr_t)base + 8 * MB);
    sc__vec_free(&v);
}

/* sc__prefault: the whole pages inside the range, and nothing else. */
static void test_prefault_range(void **state) {
    (void)state;
    bool populates = kernel_populates();
    char *p = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    small_pages(p, 4 * MB);
    sc__prefault(p + 100, MB); /* pages 1 .. 255 whole; page 0 and 256 partly */
    sc__prefault(NULL, MB);    /* nothing */
    if (populates) {
        assert_int_equal(resident(p + PAGE, p + MB), MB / PAGE - 1);
        assert_int_equal(resident(p, p + PAGE), 0);
        assert_int_equal(resident(p + MB, p + 4 * MB), 0);
    }
    for (size_t i = 0; i < 4 * MB; i += PAGE) assert_int_equal(p[i], 0);
    munmap(p, 4 * MB);
}

/* sc__prefaulter: ranges faulted in on a thread of its own while this one
 * writes to them; each byte keeps what this thread wrote, the untouched
 * rest stays zero, and after the join every range is resident. */
static void test_prefault_thread(void **state) {
    (void)state;
    bool populates = kernel_populates();
    enum { RANGES = 3 };
    char *p[RANGES];
    size_t bytes[RANGES];
    sc__prefaulter pf = {0};
    for (int k = 0; k < RANGES; k++) {
        p[k] = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(p[k] != MAP_FAILED);
        small_pages(p[k], 4 * MB);
        bytes[k] = 4 * MB;
    }
    sc__prefault_start(&pf, (void *const *)p, bytes, RANGES);
    assert_int_equal(pf.n, RANGES);
    for (int k = 0; k < RANGES; k++) /* scattered writes, racing the helper */
        for (size_t i = 0; i < 4 * MB; i += 3 * PAGE + 7) p[k][i] = (char)(1 + (i / PAGE + k) % 100);
    sc__prefault_join(&pf);
    assert_false(pf.started);
    sc__prefault_join(&pf); /* a second join does nothing */
    for (int k = 0; k < RANGES; k++) {
        if (populates) assert_int_equal(resident(p[k], p[k] + 4 * MB), 4 * MB / PAGE);
        for (size_t i = 0; i < 4 * MB; i++) {
            char want = i % (3 * PAGE + 7) == 0 ? (char)(1 + (i / PAGE + k) % 100) : 0;
            if (p[k][i] != want) fail_msg("range %d, byte %zu: %d, want %d", k, i, p[k][i], want);
        }
        munmap(p[k], 4 * MB);
    }
    /* nothing to fault in: the thread starts and ends */
    sc__prefaulter none = {0};
    sc__prefault_start(&none, NULL, NULL, 0);
    sc__prefault_join(&none);
    /* more ranges than it holds: not started, nothing copied */
    void *many[SC__PREFAULT_RANGES + 1] = {0};
    size_t sizes[SC__PREFAULT_RANGES + 1] = {0};
    sc__prefault_start(&none, many, sizes, SC__PREFAULT_RANGES + 1);
    assert_false(none.started);
    assert_int_equal(none.n, 0);
}

/* sc__vec_grown_cap: doubling below 2 MB and where the input's size is
 * unknown or reached; from 2 MB on, straight to the length the input is on
 * course for (3% and 1,024 items over), at least 1.25 times the capacity. */
static void test_grown_cap(void **state) {
    (void)state;
    sc__vec v;
    sc__vec_init(&v, 64);
    assert_int_equal(sc__vec_grown_cap(&v, 1, 100, 1000), 16); /* empty: the first 16 */
    v.cap = 1024;
    v.len = 1024;
    assert_int_equal(sc__vec_grown_cap(&v, 1000, 1, 2), 1024);  /* fits: unchanged */
    assert_int_equal(sc__vec_grown_cap(&v, 1025, 100, 10000), 2048); /* 64 KB: doubled */
    assert_int_equal(sc__vec_grown_cap(&v, 5000, 0, 0), 8192);  /* to the power of 2 above */
    size_t two_mb = 2 * MB / 64;
    v.cap = v.len = two_mb;
    assert_int_equal(sc__vec_grown_cap(&v, two_mb + 1, 10 * MB, 0), 2 * two_mb);       /* size unknown */
    assert_int_equal(sc__vec_grown_cap(&v, two_mb + 1, 10 * MB, 10 * MB), 2 * two_mb); /* all read */
    assert_int_equal(sc__vec_grown_cap(&v, two_mb + 1, 0, 10 * MB), 2 * two_mb);      /* nothing read */
    /* a tenth read: ten times the length, 3% over and 1,024 items */
    size_t want = (size_t)((double)(two_mb + 1) * 10.0 * 1.03 + 1024);
    assert_int_equal(sc__vec_grown_cap(&v, two_mb + 1, 10 * MB, 100 * MB), want);
    /* nearly all read: still 1.25 times the capacity, and never below the need */
    assert_int_equal(sc__vec_grown_cap(&v, two_mb + 1, 99 * MB, 100 * MB), two_mb + two_mb / 4);
    assert_int_equal(sc__vec_grown_cap(&v, 3 * two_mb, 99 * MB, 100 * MB),
                     (size_t)((double)(3 * two_mb) * (100.0 / 99.0) * 1.03 + 1024));
    /* a projection past what size_t holds falls back to doubling */
    assert_int_equal(sc__vec_grown_cap(&v, two_mb + 1, 1, UINT64_MAX), 2 * two_mb);
    /* and a need past every doubling is returned as it is */
    v.cap = v.len = SIZE_MAX / 2 + 2;
    assert_int_equal(sc__vec_grown_cap(&v, SIZE_MAX - 1, 0, 0), SIZE_MAX - 1);
}

/* The unit a size reads in, capped where the caller asks, and the budget
 * text built on it (a tenth of a MiB only below 100 MiB). */
static void test_size_units(void **state) {
    (void)state;
    sc__size s = sc__size_in_units(1023, 4);
    assert_string_equal(s.unit, "B");
    assert_int_equal(s.whole, 1023);
    s = sc__size_in_units(1536, 4);
    assert_string_equal(s.unit, "KiB");
    assert_int_equal(s.power, 1);
    assert_int_equal(s.whole, 1);
    assert_true(s.value == 1.5);
    s = sc__size_in_units((uint64_t)5 << 40, 4);
    assert_string_equal(s.unit, "TiB");
    assert_int_equal(s.whole, 5);
    s = sc__size_in_units((uint64_t)3 << 50, 4); /* no unit past TiB */
    assert_int_equal(s.whole, 3u << 10);
    s = sc__size_in_units((uint64_t)3 << 30, 2); /* capped at MiB */
    assert_string_equal(s.unit, "MiB");
    assert_int_equal(s.whole, 3072);
    char buf[32];
    assert_string_equal(sc__budget_text(100, buf), "100 bytes");
    assert_string_equal(sc__budget_text(1536, buf), "1 KiB");
    assert_string_equal(sc__budget_text(15 * MB + MB / 2, buf), "15.5 MiB");
    assert_string_equal(sc__budget_text(150 * MB + MB / 2, buf), "150 MiB");
    assert_string_equal(sc__budget_text((uint64_t)2 << 30, buf), "2048 MiB");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefault),
        cmocka_unit_test(test_prefault_range),
        cmocka_unit_test(test_prefault_thread),
        cmocka_unit_test(test_grown_cap),
        cmocka_unit_test(test_size_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
