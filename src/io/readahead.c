/*
 * readahead.c - a gzip source decoded ahead of its reader on a second
 * thread (issue 5: gzip input limited only by decompression).
 *
 * Inflating (isa-l, ~0.2 s for 513 MB here) and parsing take turns on one
 * thread; when a file has a spare core, a producer thread runs the ordinary
 * decoder (sc__source_decode) into a ring of AHEAD_SLOTS buffers and the
 * reader's sc__source_read copies out of them, so the two overlap and a
 * gzip file reads about as fast as the same file plain. The producer owns
 * every field of the source but `ahead` from sc__ahead_start until
 * sc__ahead_stop; the ring's slots change hands under one mutex. Memory:
 * AHEAD_SLOTS x AHEAD_SLOT bytes.
 */
#include "source.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#define AHEAD_SLOTS 4
#define AHEAD_SLOT ((size_t)1 << 20)

struct sc__ahead {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t filled, emptied;
    unsigned char *buf[AHEAD_SLOTS];
    size_t len[AHEAD_SLOTS];
    unsigned head, count; /* the next slot to read, and how many are full */
    size_t pos;           /* bytes of buf[head] already read */
    bool done;            /* the producer met the end or an error ... */
    sc_status status;     /* ... this one, delivered after the bytes before it */
    sc_error err;
    bool stop; /* the reader is closing */
};

/* Decodes one slot's worth, or less at the end or on an error. */
static void fill_slot(sc__source *s, unsigned char *dst, size_t *len, bool *end, sc_status *st,
                      sc_error *err) {
    *len = 0;
    *end = false;
    *st = SC_OK;
    while (*len < AHEAD_SLOT) {
        size_t got;
        *st = sc__source_decode(s, dst + *len, AHEAD_SLOT - *len, &got, err);
        if (*st != SC_OK || got == 0) {
            *end = true;
            return;
        }
        *len += got;
    }
}

static void *producer(void *arg) {
    sc__source *s = arg;
    struct sc__ahead *a = s->ahead;
    for (;;) {
        pthread_mutex_lock(&a->mu);
        while (a->count == AHEAD_SLOTS && !a->stop) pthread_cond_wait(&a->emptied, &a->mu);
        unsigned slot = (a->head + a->count) % AHEAD_SLOTS;
        bool stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop) return NULL;
        size_t len;
        bool end;
        sc_status st;
        sc_error e;
        fill_slot(s, a->buf[slot], &len, &end, &st, &e); /* a free slot is ours alone */
        pthread_mutex_lock(&a->mu);
        if (len) {
            a->len[slot] = len;
            a->count++;
        }
        if (end) {
            a->done = true;
            a->status = st;
            if (st != SC_OK) a->err = e;
        }
        pthread_cond_signal(&a->filled);
        pthread_mutex_unlock(&a->mu);
        if (end) return NULL;
    }
}

static void ahead_free(struct sc__ahead *a) {
    for (unsigned i = 0; i < AHEAD_SLOTS; i++) free(a->buf[i]);
    free(a);
}

/* Only a regular file can be read again from its start, which is what a
 * caller does for the exact error of a direct read; a pipe or terminal
 * read ahead would leave it nothing to re-read. */
static bool rereadable(const sc__source *s) {
    struct stat sb;
    return s->fd >= 0 && fstat(s->fd, &sb) == 0 && S_ISREG(sb.st_mode);
}

bool sc__ahead_start(sc__source *s) {
    if (s->ahead || !s->gzip || !rereadable(s)) return false;
    struct sc__ahead *a = calloc(1, sizeof *a);
    if (!a) return false;
    for (unsigned i = 0; i < AHEAD_SLOTS; i++)
        if (!(a->buf[i] = malloc(AHEAD_SLOT))) {
            ahead_free(a);
            return false;
        }
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->filled, NULL);
    pthread_cond_init(&a->emptied, NULL);
    s->ahead = a;
    if (pthread_create(&a->tid, NULL, producer, s) != 0) {
        s->ahead = NULL;
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->filled);
        pthread_cond_destroy(&a->emptied);
        ahead_free(a);
        return false;
    }
    return true;
}

sc_status sc__ahead_read(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err) {
    struct sc__ahead *a = s->ahead;
    *got = 0;
    pthread_mutex_lock(&a->mu);
    while (a->count == 0 && !a->done) pthread_cond_wait(&a->filled, &a->mu);
    if (a->count == 0) { /* everything decoded was read: the end, or the error */
        sc_status st = a->status;
        if (st != SC_OK && err) *err = a->err;
        pthread_mutex_unlock(&a->mu);
        return st;
    }
    unsigned slot = a->head;
    size_t n = a->len[slot] - a->pos;
    pthread_mutex_unlock(&a->mu);
    if (n > cap) n = cap;
    memcpy(dst, a->buf[slot] + a->pos, n); /* a full slot is the reader's alone */
    pthread_mutex_lock(&a->mu);
    a->pos += n;
    if (a->pos == a->len[slot]) {
        a->head = (a->head + 1) % AHEAD_SLOTS;
        a->count--;
        a->pos = 0;
        pthread_cond_signal(&a->emptied);
    }
    pthread_mutex_unlock(&a->mu);
    *got = n;
    return SC_OK;
}

void sc__ahead_stop(sc__source *s) {
    struct sc__ahead *a = s->ahead;
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_signal(&a->emptied);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->tid, NULL);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->filled);
    pthread_cond_destroy(&a->emptied);
    ahead_free(a);
    s->ahead = NULL;
}
