/*
 * intern.c - string interning: equal byte strings share one uint32 id.
 *
 * Kernel and operator names repeat thousands of times in a trace; interning
 * stores each once and lets every later stage compare names as integers.
 * Open addressing with linear probing over a power-of-two table.
 */
#include "base.h"

#include <ctype.h>
#include <stdlib.h>

uint32_t sc__hash_bytes(const void *p, size_t n) {
    /* Eight bytes per multiply, then a final mix: shapes strings of 50-100
     * bytes miss the reader's cache often, and byte-at-a-time FNV-1a cost
     * 2% of a trace load there. */
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL ^ (n * 0x9e3779b97f4a7c15ULL);
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, s, n);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    }
    return (uint32_t)sc__hash_u64(h);
}

static bool intern_grow_slots(sc__intern *in) {
    uint32_t n = in->nslots ? in->nslots * 2 : 1024;
    if (n == 0) return false;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots) return false;
    for (uint32_t id = 0; id < in->count; id++) {
        uint32_t i = in->hashes[id] & (n - 1);
        while (slots[i]) i = (i + 1) & (n - 1);
        slots[i] = id + 1;
    }
    free(in->slots);
    in->slots = slots;
    in->nslots = n;
    return true;
}

bool sc__intern_init(sc__intern *in) {
    memset(in, 0, sizeof *in);
    sc__arena_init(&in->arena);
    if (sc__intern_put(in, "", 0) == 0) return true;
    sc__intern_free(in); /* what the failed put had allocated: callers free nothing */
    return false;
}

void sc__intern_free(sc__intern *in) {
    sc__arena_free(&in->arena);
    free(in->strs);
    free(in->lens);
    free(in->slots);
    free(in->hashes);
    memset(in, 0, sizeof *in);
}

static uint32_t intern_lookup(const sc__intern *in, const char *s, size_t n, uint32_t h,
                              uint32_t *slot) {
    uint32_t mask = in->nslots - 1, i = h & mask;
    for (;;) {
        uint32_t v = in->slots[i];
        if (!v) {
            *slot = i;
            return SC__NONE;
        }
        uint32_t id = v - 1;
        if (in->hashes[id] == h && in->lens[id] == n && memcmp(in->strs[id], s, n) == 0)
            return id;
        i = (i + 1) & mask;
    }
}

uint32_t sc__intern_find(const sc__intern *in, const char *s, size_t n) {
    if (!in->nslots || n > UINT32_MAX) return SC__NONE;
    uint32_t slot;
    return intern_lookup(in, s, n, sc__hash_bytes(s, n), &slot);
}

uint32_t sc__intern_put(sc__intern *in, const char *s, size_t n) {
    if (n > UINT32_MAX - 1) return SC__NONE;
    if ((uint64_t)(in->count + 1) * 2 > in->nslots && !intern_grow_slots(in)) return SC__NONE;
    uint32_t h = sc__hash_bytes(s, n), slot;
    uint32_t id = intern_lookup(in, s, n, h, &slot);
    if (id != SC__NONE) return id;
    if (in->count == UINT32_MAX - 1) return SC__NONE;
    if (in->count == in->cap) {
        uint32_t cap = in->cap ? in->cap * 2 : 256;
        const char **strs = sc__realloc_array((void *)in->strs, cap, sizeof *strs);
        if (!strs) return SC__NONE;
        in->strs = strs;
        uint32_t *lens = sc__realloc_array(in->lens, cap, sizeof *lens);
        if (!lens) return SC__NONE;
        in->lens = lens;
        uint32_t *hashes = sc__realloc_array(in->hashes, cap, sizeof *hashes);
        if (!hashes) return SC__NONE;
        in->hashes = hashes;
        in->cap = cap;
    }
    char *copy = sc__arena_strndup(&in->arena, s, n);
    if (!copy) return SC__NONE;
    id = in->count++;
    in->strs[id] = copy;
    in->lens[id] = (uint32_t)n;
    in->hashes[id] = h;
    in->slots[slot] = id + 1;
    return id;
}

size_t sc__intern_memory(const sc__intern *in) {
    return in->arena.used_total + (size_t)in->cap * (sizeof(char *) + 8) +
           (size_t)in->nslots * 4;
}

bool sc__starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool sc__contains(const char *s, const char *needle) { return strstr(s, needle) != NULL; }

bool sc__contains_ci(const char *s, const char *key) {
    if (!s) return false;
    size_t k = strlen(key);
    for (; *s; s++) {
        size_t i = 0;
        while (i < k && s[i] && tolower((unsigned char)s[i]) == key[i]) i++;
        if (i == k) return true;
    }
    return false;
}

char *sc__strdup(const char *s) {
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (c) memcpy(c, s, n + 1);
    return c;
}
