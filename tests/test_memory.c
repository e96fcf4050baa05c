/*
 * test_memory.c - the allocation helpers of src/base/memory.c that the
 * rest of the suite only uses, never looks at: sc__vec_prefault's contract
 * (room just past the length made resident, never past the capacity, the
 * contents untouched, at once when enough is warm).
 *
 * Residency is read with mincore(2). Where the kernel has no
 * MADV_POPULATE_WRITE (before Linux 5.14) the hint does nothing, and only
 * the bounds and contents are checked.
 */
#include "testutil.h"

#include "base/base.h"

#include <sys/mman.h>

#define MB ((size_t)1 << 20)
#define PAGE ((size_t)4096)

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

/* Does this kernel populate on request? Tried on a fresh mapping. */
static bool kernel_populates(void) {
#ifdef MADV_POPULATE_WRITE
    void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    bool ok = madvise(p, PAGE, MADV_POPULATE_WRITE) == 0;
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
    memset(base, 0x5a, 64 * 1024); /* the first 64 KB are in use */
    v.len = 64 * 1024 / 8;
    size_t before = resident(base + 64 * 1024, base + 8 * MB);

    sc__vec_prefault(&v, &warm);
    assert_true(warm > (uintptr_t)base + 64 * 1024 && warm <= (uintptr_t)base + 64 * 1024 + MB);
    if (populates) /* the megabyte after the length is resident */
        assert_true(resident(base + 64 * 1024, (char *)warm) >= MB / PAGE - 1);
    for (size_t i = 0; i < 64 * 1024; i++)
        if ((unsigned char)base[i] != 0x5a) fail_msg("byte %zu changed", i);

    uintptr_t was = warm; /* enough is warm: nothing more */
    sc__vec_prefault(&v, &warm);
    assert_true(warm == was);

    v.len = (size_t)(warm - (uintptr_t)base) / 8 - 1000; /* close to the warm end: the next megabyte */
    sc__vec_prefault(&v, &warm);
    assert_true(warm > was && warm <= (uintptr_t)base + 8 * MB);
    /* far past the warm end nothing was touched */
    if (populates) assert_true(resident((char *)warm + MB, base + 8 * MB) <= before + 2);

    v.len = v.cap - 10; /* near the capacity: never past it */
    warm = 0;
    sc__vec_prefault(&v, &warm);
    assert_true(warm <= (uintptr_t)base + 8 * MB);
    sc__vec_free(&v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
