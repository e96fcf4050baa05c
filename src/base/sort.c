/*
 * sort.c - sorting with a context for the comparator.
 *
 * Comparators that order indices by what they point at (events by start,
 * collectives by rank and sequence) need the table they index. Handing it
 * over through a global (or a thread-local, once builders ran on threads)
 * hid a dependency and tied every sort to its caller's thread; glibc's
 * qsort_r passes it explicitly and sorts exactly as qsort does, so outputs
 * do not move.
 */
#include "base.h"

#include <stdlib.h>

void sc__sort(void *base, size_t n, size_t size, sc__cmp_fn cmp, void *ctx) {
    if (n > 1) qsort_r(base, n, size, cmp, ctx);
}

int sc__cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
