/*
 * chunks.c - one source decoded on a thread into numbered chunks that
 * several readers read at offsets of their own (gzip input parsed on every
 * core, kineto_parallel.c).
 *
 * A gzip stream cannot be entered in the middle, so readers that want to
 * parse its pieces in parallel share one decoder: a thread inflates the
 * source into chunks of a fixed size, hands each to a callback (which may
 * open cursors into it) and then publishes it. A cursor is an sc__source
 * (sc__source_open_chunks) that reads the decoded bytes from its own offset
 * on, waiting for the decoder where it runs ahead of it. Memory is bounded:
 * a chunk is recycled once every open cursor has read past it, and the
 * decoder waits while `held` chunks are still wanted. The caller's cursors
 * must keep moving for that wait to end (kineto_parallel.c says why they do).
 *
 * Locking: one mutex guards the chunk table, the cursors' offsets and the
 * decoder's state. Bytes are copied out of a chunk without it: a chunk is
 * recycled only when no cursor's offset lies in or before it, and a copying
 * cursor's offset does until the copy is done.
 */
#include "source.h"

#include <pthread.h>
#include <stdlib.h>

struct sc__cursor {
    uint64_t pos;
    struct sc__cursor *prev, *next;
};

struct sc__chunks {
    sc__source *src;
    size_t size;   /* bytes per chunk; the last may be short */
    unsigned held; /* chunks that may be wanted at once before the decoder waits */
    sc__chunk_fn on_chunk;
    void *ctx;
    pthread_t tid;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t filled; /* a chunk was published, or the decoder ended */
    pthread_cond_t moved;  /* a cursor moved or closed: chunks may be free */
    unsigned char **table; /* by chunk number; NULL once recycled */
    size_t ntable, table_cap;
    uint64_t first;   /* the lowest chunk number not yet recycled */
    uint64_t decoded; /* bytes published */
    unsigned char **spare; /* recycled buffers */
    unsigned nspare, live; /* ... and how many chunks are published and kept */
    struct sc__cursor *cursors;
    bool done;        /* the decoder met the end or an error ... */
    sc_status status; /* ... this one */
    sc_error err;
    bool stop; /* sc__chunks_free: the decoder and every cursor give up */
};

/* The lowest offset an open cursor may still read (UINT64_MAX: none). */
static uint64_t lowest_wanted(const struct sc__chunks *c) {
    uint64_t low = UINT64_MAX;
    for (const struct sc__cursor *k = c->cursors; k; k = k->next)
        if (k->pos < low) low = k->pos;
    return low;
}

/* Recycles the chunks every cursor has read past. Under the mutex. */
static void recycle(struct sc__chunks *c) {
    uint64_t low = lowest_wanted(c);
    while (c->first < c->ntable && (c->first + 1) * c->size <= low &&
           (c->first + 1) * c->size <= c->decoded) {
        c->spare[c->nspare++] = c->table[c->first];
        c->table[c->first++] = NULL;
        c->live--;
    }
}

/* Decodes up to one chunk into buf: *len bytes, *end at the end of the
 * input or on an error (*st). */
static void decode_chunk(struct sc__chunks *c, unsigned char *buf, size_t *len, bool *end,
                         sc_status *st, sc_error *err) {
    *len = 0;
    *end = false;
    *st = SC_OK;
    while (*len < c->size) {
        size_t got;
        *st = sc__source_decode(c->src, buf + *len, c->size - *len, &got, err);
        if (*st != SC_OK || got == 0) {
            *end = true;
            return;
        }
        *len += got;
    }
}

/* A buffer for the next chunk once fewer than `held` are kept, or NULL
 * when told to stop (or out of memory: then the end, with an error). */
static unsigned char *next_buffer(struct sc__chunks *c) {
    pthread_mutex_lock(&c->mu);
    for (;;) {
        recycle(c);
        if (c->stop || c->live < c->held) break;
        pthread_cond_wait(&c->moved, &c->mu);
    }
    unsigned char *buf = NULL;
    bool room = c->ntable < c->table_cap;
    if (!room) { /* the table grows by doubling; its entries are only pointers */
        size_t cap = c->table_cap ? c->table_cap * 2 : 64;
        unsigned char **t = realloc(c->table, cap * sizeof *t);
        if (t) {
            c->table = t;
            c->table_cap = cap;
            room = true;
        }
    }
    if (!c->stop && room) buf = c->nspare ? c->spare[--c->nspare] : malloc(c->size);
    pthread_mutex_unlock(&c->mu);
    return buf;
}

static void *decoder(void *arg) {
    struct sc__chunks *c = arg;
    for (uint64_t index = 0;; index++) {
        unsigned char *buf = next_buffer(c);
        size_t len = 0;
        bool end = true;
        sc_status st = SC_E_NOMEM;
        sc_error e;
        if (!buf) sc__fail(&e, st, c->src->name, SC_NO_OFFSET, "out of memory");
        else decode_chunk(c, buf, &len, &end, &st, &e);
        if (len) c->on_chunk(c->ctx, c, (const char *)buf, len, index * c->size);
        pthread_mutex_lock(&c->mu);
        if (len) {
            c->table[c->ntable++] = buf;
            c->decoded += len;
            c->live++;
        } else if (buf) {
            c->spare[c->nspare++] = buf;
        }
        if (end) {
            c->done = true;
            c->status = st;
            if (st != SC_OK) c->err = e;
        }
        pthread_cond_broadcast(&c->filled);
        pthread_mutex_unlock(&c->mu);
        if (end) {
            c->on_chunk(c->ctx, c, NULL, 0, index * c->size + len);
            return NULL;
        }
    }
}

sc__chunks *sc__chunks_start(sc__source *src, size_t size, unsigned held, sc__chunk_fn on_chunk,
                             void *ctx) {
    struct sc__chunks *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->src = src;
    c->size = size;
    c->held = held < 2 ? 2 : held;
    c->on_chunk = on_chunk;
    c->ctx = ctx;
    c->spare = calloc(c->held + 1, sizeof *c->spare);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->filled, NULL);
    pthread_cond_init(&c->moved, NULL);
    if (!c->spare || pthread_create(&c->tid, NULL, decoder, c) != 0) {
        sc__chunks_free(c);
        return NULL;
    }
    c->started = true;
    return c;
}

void sc__chunks_stop(sc__chunks *c) {
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_broadcast(&c->moved);
    pthread_cond_broadcast(&c->filled);
    pthread_mutex_unlock(&c->mu);
    if (c->started) pthread_join(c->tid, NULL);
    c->started = false;
}

void sc__chunks_free(sc__chunks *c) {
    if (!c) return;
    sc__chunks_stop(c);
    for (size_t i = c->first; i < c->ntable; i++) free(c->table[i]);
    for (unsigned i = 0; i < c->nspare; i++) free(c->spare[i]);
    free(c->table);
    free(c->spare);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->filled);
    pthread_cond_destroy(&c->moved);
    free(c);
}

sc_status sc__source_open_chunks(sc__source *s, sc__chunks *c, uint64_t offset, sc_error *err) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->name = c->src->name;
    struct sc__cursor *k = calloc(1, sizeof *k);
    if (!k) return sc__fail(err, SC_E_NOMEM, s->name, offset, "out of memory");
    k->pos = offset;
    pthread_mutex_lock(&c->mu);
    if (offset < c->first * c->size) { /* recycled already: a caller's bug */
        pthread_mutex_unlock(&c->mu);
        free(k);
        return sc__fail(err, SC_E_INTERNAL, s->name, offset, "chunk already recycled");
    }
    k->next = c->cursors;
    if (k->next) k->next->prev = k;
    c->cursors = k;
    pthread_mutex_unlock(&c->mu);
    s->chunks = c;
    s->cursor = k;
    s->raw_read = offset;
    return SC_OK;
}

void sc__chunks_close_cursor(sc__source *s) {
    struct sc__chunks *c = s->chunks;
    struct sc__cursor *k = s->cursor;
    pthread_mutex_lock(&c->mu);
    if (k->prev) k->prev->next = k->next;
    else c->cursors = k->next;
    if (k->next) k->next->prev = k->prev;
    pthread_cond_signal(&c->moved);
    pthread_mutex_unlock(&c->mu);
    free(k);
    s->cursor = NULL;
    s->chunks = NULL;
}

sc_status sc__chunks_read(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err) {
    struct sc__chunks *c = s->chunks;
    struct sc__cursor *k = s->cursor;
    *got = 0;
    pthread_mutex_lock(&c->mu);
    while (k->pos >= c->decoded && !c->done && !c->stop) pthread_cond_wait(&c->filled, &c->mu);
    if (c->stop) {
        pthread_mutex_unlock(&c->mu);
        return sc__fail(err, SC_E_INTERNAL, s->name, k->pos, "reading stopped");
    }
    if (k->pos >= c->decoded) { /* everything decoded was read: the end, or the error */
        sc_status st = c->status;
        if (st != SC_OK && err) *err = c->err;
        pthread_mutex_unlock(&c->mu);
        return st;
    }
    uint64_t index = k->pos / c->size;
    size_t at = (size_t)(k->pos % c->size);
    uint64_t chunk_end = (index + 1) * c->size < c->decoded ? (index + 1) * c->size : c->decoded;
    size_t n = (size_t)(chunk_end - k->pos);
    const unsigned char *from = c->table[index] + at;
    pthread_mutex_unlock(&c->mu);
    if (n > cap) n = cap;
    memcpy(dst, from, n); /* the chunk stays while our offset lies in it */
    pthread_mutex_lock(&c->mu);
    k->pos += n;
    if (k->pos % c->size == 0) pthread_cond_signal(&c->moved); /* past a chunk */
    pthread_mutex_unlock(&c->mu);
    s->raw_read = k->pos;
    *got = n;
    return SC_OK;
}
