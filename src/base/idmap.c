/*
 * idmap.c - an int64 -> uint32 hash map on two flat arrays (open addressing,
 * linear probing): the graph builder's correlation and flow lookups, the
 * Chakra builder's node ids. One allocation per map, no per-entry malloc;
 * sized for a load factor <= 1/2.
 */
#include "base.h"

#include <stdlib.h>

static bool idmap_alloc(sc__idmap *m, size_t nslots) {
    m->keys = sc__alloc_array(nslots, sizeof *m->keys);
    m->vals = sc__alloc_array(nslots, sizeof *m->vals);
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        m->keys = NULL;
        m->vals = NULL;
        return false;
    }
    memset(m->vals, 0xff, nslots * sizeof *m->vals);
    m->nslots = nslots;
    m->count = 0;
    return true;
}

bool sc__idmap_init(sc__idmap *m, size_t expected) {
    size_t n = 64;
    while (n < expected * 2) n *= 2;
    return idmap_alloc(m, n);
}

void sc__idmap_free(sc__idmap *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

void sc__idmap_clear(sc__idmap *m) {
    if (m->vals) memset(m->vals, 0xff, m->nslots * sizeof *m->vals);
    m->count = 0;
}

static size_t slot_of(const sc__idmap *m, int64_t key) {
    size_t mask = m->nslots - 1, i = (size_t)sc__hash_u64((uint64_t)key) & mask;
    while (m->vals[i] != SC__NONE && m->keys[i] != key) i = (i + 1) & mask;
    return i;
}

static bool grow(sc__idmap *m) {
    sc__idmap old = *m;
    if (!idmap_alloc(m, old.nslots * 2)) {
        *m = old;
        return false;
    }
    for (size_t i = 0; i < old.nslots; i++)
        if (old.vals[i] != SC__NONE) {
            size_t s = slot_of(m, old.keys[i]);
            m->keys[s] = old.keys[i];
            m->vals[s] = old.vals[i];
            m->count++;
        }
    free(old.keys);
    free(old.vals);
    return true;
}

/* *added: whether key was new (else its value is overwritten or kept). */
static bool put(sc__idmap *m, int64_t key, uint32_t val, bool overwrite, bool *added) {
    *added = false;
    if (!m->vals && !sc__idmap_init(m, 16)) return false;
    if ((m->count + 1) * 2 > m->nslots && !grow(m)) return false;
    size_t s = slot_of(m, key);
    if (m->vals[s] == SC__NONE) {
        m->keys[s] = key;
        m->vals[s] = val;
        m->count++;
        *added = true;
    } else if (overwrite) {
        m->vals[s] = val;
    }
    return true;
}

bool sc__idmap_put(sc__idmap *m, int64_t key, uint32_t val) {
    bool added;
    return put(m, key, val, true, &added);
}

bool sc__idmap_put_new(sc__idmap *m, int64_t key, uint32_t val) {
    bool added;
    return put(m, key, val, false, &added);
}

bool sc__idmap_insert(sc__idmap *m, int64_t key, uint32_t val, bool *added) {
    return put(m, key, val, false, added);
}

uint32_t sc__idmap_get(const sc__idmap *m, int64_t key) {
    if (!m->vals) return SC__NONE;
    return m->vals[slot_of(m, key)];
}
