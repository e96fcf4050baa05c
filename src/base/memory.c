/*
 * memory.c - overflow-checked allocation, arenas and growable arrays.
 *
 * Per-trace data lives in arenas and flat arrays indexed by uint32, so a trace
 * of millions of events costs a handful of allocations, not millions, and is
 * freed in one go. Large arrays also get hints to the kernel: huge pages,
 * and page faults taken ahead of use (sc__prefault), on a helper thread where
 * another core is idle (sc__prefaulter); a block one stage is done with can
 * be kept for the next one's temporaries (sc__spare).
 */
#include "base.h"

#include <stdlib.h>
#ifdef __linux__
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

/* Large arrays (a job's tasks, edges, simulation state: hundreds of MB) are
 * walked by the simulator at many places at once, one frontier per rank and
 * processor; with 4 KB pages nearly every step is a TLB miss and first use
 * costs one page fault per 4 KB. Asking for transparent huge pages (where the
 * system leaves that to madvise) on arrays of 8 MB and more cuts both; it is
 * only a hint and changes no result. Growing arrays (sc__realloc_array: the
 * readers' events, the graph while it is built) do not get it: there it made
 * the reader slower (455 -> 379 MB/s on the 513 MB file) and fatter (140 ->
 * 184 B/event of RSS growth). */
#define SC__HUGE_MIN ((size_t)8 << 20)
static void huge_hint(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!p || bytes < SC__HUGE_MIN) return;
    const uintptr_t h = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + h - 1) & ~(h - 1), b = ((uintptr_t)p + bytes) & ~(h - 1);
    if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Appending to a fresh array costs a page fault per page: on the 513 MB
 * trace, 48k faults, a quarter of the load's system time. Asking the kernel
 * to fault a megabyte in at once (MADV_POPULATE_WRITE, Linux 5.14) saves
 * the trap and the walk per page; the zeroing stays. Only room within the
 * array's capacity is touched, at most 1.25 MB past its length (warmed a
 * megabyte at a time once less than a quarter of one is left), and only in
 * arrays of 2 MB or more, so the resident size grows by at most that. */
#define SC__PREFAULT ((size_t)1 << 20)

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
static uintptr_t page_size(void) {
    static uintptr_t page; /* races only write the same value */
    if (!page) {
        long n = sysconf(_SC_PAGESIZE);
        page = n > 0 ? (uintptr_t)n : 4096;
    }
    return page;
}
#endif

void sc__prefault(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    uintptr_t page = page_size();
    uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t to = ((uintptr_t)p + bytes) & ~(page - 1);
    if (p && to > from) (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

static void *prefault_ranges(void *arg) {
    const sc__prefaulter *pf = arg;
    for (unsigned i = 0; i < pf->n; i++) sc__prefault(pf->p[i], pf->bytes[i]);
    return NULL;
}

void sc__prefault_start(sc__prefaulter *pf, void *const *p, const size_t *bytes, unsigned n) {
    pf->n = n <= SC__PREFAULT_RANGES ? n : 0;
    for (unsigned i = 0; i < pf->n; i++) {
        pf->p[i] = p[i];
        pf->bytes[i] = bytes[i];
    }
    pf->started = n <= SC__PREFAULT_RANGES && pthread_create(&pf->thread, NULL, prefault_ranges, pf) == 0;
}

void sc__prefault_join(sc__prefaulter *pf) {
    if (pf->started) pthread_join(pf->thread, NULL);
    pf->started = false;
}

void sc__vec_prefault(const sc__vec *v, uintptr_t *warm) {
    uintptr_t base = (uintptr_t)v->data;
    uintptr_t used = base + v->len * v->elem, room = base + v->cap * v->elem;
    /* Below 2 MB the faults are few, and warming past the length could
     * cost more than it saves: a job of a thousand small traces held 3%
     * more memory, no faster. (An array without data has no length.) */
    if (used - base < 2 * SC__PREFAULT) return;
    if (*warm < used || *warm > room) *warm = used; /* moved, shrunk or new */
    if (*warm - used >= SC__PREFAULT / 4 || *warm == room) return;
    uintptr_t to = room - *warm > SC__PREFAULT ? *warm + SC__PREFAULT : room;
    sc__prefault((void *)*warm, to - *warm);
    *warm = to;
}

void *sc__alloc_array(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = malloc(n * size > 0 ? n * size : 1);
    huge_hint(p, n * size);
    return p;
}

void sc__spare_keep(sc__spare *s, void *p, size_t bytes) {
    free(s->p);
    s->p = p;
    s->bytes = p ? bytes : 0;
}

void *sc__spare_take(sc__spare *s, size_t bytes, size_t *got) {
    if (!s || !s->p || s->bytes < bytes) return NULL;
    void *p = s->p;
    *got = s->bytes;
    s->p = NULL;
    s->bytes = 0;
    return p;
}

void *sc__spare_borrow(sc__spare *s, size_t bytes, size_t *got) {
    void *p = sc__spare_take(s, bytes, got);
    if (p) return p;
    *got = 0; /* fresh */
    return sc__alloc_array(bytes ? bytes : 1, 1);
}

void sc__spare_return(sc__spare *s, void *p, size_t got) {
    if (got) sc__spare_keep(s, p, got);
    else free(p);
}

void sc__spare_free(sc__spare *s) { sc__spare_keep(s, NULL, 0); }

void *sc__realloc_array(void *p, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    return realloc(p, n * size > 0 ? n * size : 1);
}

struct sc__arena_block {
    sc__arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

#define SC__ARENA_BLOCK (256u * 1024u)

void sc__arena_init(sc__arena *a) { memset(a, 0, sizeof *a); }

void sc__arena_free(sc__arena *a) {
    sc__arena_block *b = a->head;
    while (b) {
        sc__arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->used_total = 0;
}

void *sc__arena_alloc(sc__arena *a, size_t size) {
    size = (size + 7u) & ~(size_t)7u;
    if (size == 0) size = 8;
    sc__arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > SC__ARENA_BLOCK / 4 ? size : SC__ARENA_BLOCK;
        if (cap > SIZE_MAX - sizeof *b) return NULL;
        sc__arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->used = 0;
        nb->cap = cap;
        a->used_total += sizeof *nb + cap;
        if (b && cap != SC__ARENA_BLOCK) {
            /* An oversized block goes behind the current one so the current
             * block's free space is not wasted. */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            a->head = nb;
        }
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += size;
    return p;
}

char *sc__arena_strndup(sc__arena *a, const char *s, size_t n) {
    if (n == SIZE_MAX) return NULL;
    char *d = sc__arena_alloc(a, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void sc__vec_init(sc__vec *v, size_t elem) {
    memset(v, 0, sizeof *v);
    v->elem = elem;
}

void sc__vec_free(sc__vec *v) {
    free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

bool sc__vec_reserve(sc__vec *v, size_t cap) {
    if (cap <= v->cap) return true;
    size_t ncap = v->cap ? v->cap : 16;
    while (ncap < cap) {
        if (ncap > SIZE_MAX / 2) return false;
        ncap *= 2;
    }
    void *p = sc__realloc_array(v->data, ncap, v->elem);
    if (!p) return false;
    v->data = p;
    v->cap = ncap;
    return true;
}

/* Large arrays grew by doubling, each step a realloc that moves the block
 * (mremap) and faults its new room in page by page, which this kind of VM
 * makes dear. A trace's arrays now grow straight to the size their input
 * is on course for instead (a second, small step if the events thin out).
 * On the 513 MB bench file, means of 5 alternated pairs of best-of-3/4
 * loads on 2 cores: gzip streamed 0.596 s against 0.657 (faster in 5 of
 * 5), plain split over 2 threads 0.458 against 0.527 (5 of 5), plain on
 * one thread 0.715 against 0.726 (4 of 5), with a third less system time.
 * The projection waits for 2 MB of the array, so that a head unlike the
 * rest (metadata, a sparse warm-up) cannot mislead it much; the 3% over
 * and the 1,024 items spare the last steps, and the reader shrinks its
 * arrays to their length at the end. */
#define SC__PROJECT_FROM ((size_t)2 << 20)

size_t sc__vec_grown_cap(const sc__vec *v, size_t need, uint64_t done, uint64_t total) {
    if (need <= v->cap) return v->cap;
    size_t doubled = v->cap ? v->cap : 16;
    while (doubled < need && doubled <= SIZE_MAX / 2) doubled *= 2;
    if (doubled < need) return need;
    if (!total || !done || done >= total || need < SC__PROJECT_FROM / v->elem) return doubled;
    double on_course = (double)need * ((double)total / (double)done) * 1.03 + 1024;
    if (on_course >= (double)(SIZE_MAX / v->elem)) return doubled;
    size_t cap = (size_t)on_course, least = v->cap + v->cap / 4;
    if (cap < least) cap = least;
    return cap < need ? need : cap;
}

bool sc__vec_reserve_exact(sc__vec *v, size_t cap) {
    if (cap <= v->cap) return true;
    void *p = sc__realloc_array(v->data, cap, v->elem);
    if (!p) return false;
    v->data = p;
    v->cap = cap;
    return true;
}

void *sc__vec_push(sc__vec *v) {
    if (v->len == v->cap && !sc__vec_reserve(v, v->len + 1)) return NULL;
    void *slot = (char *)v->data + v->len * v->elem;
    memset(slot, 0, v->elem);
    v->len++;
    return slot;
}

