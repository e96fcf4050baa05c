/*
 * buffer.c - an in-memory output: what a *_write function writes, handed
 * back as one NUL-terminated string.
 *
 * For callers that cannot give the library a FILE of their own, such as the
 * Python module (python/stepcast/), which formats every report this way and
 * parses the JSON itself. The stream is open_memstream(3)'s; sc_buffer_take
 * closes it, checks that every write went through, and hands the bytes over
 * (freed with sc_free, so that a caller linked against another C runtime
 * frees them with the allocator that made them).
 */
#include "../base/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct sc_buffer {
    FILE *fp;
    char *data; /* open_memstream's, valid once the stream is flushed or closed */
    size_t size;
};

sc_status sc_buffer_open(sc_buffer **out, sc_error *err) {
    sc__error_clear(err);
    if (!out) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "bad arguments");
    *out = NULL;
    sc_buffer *b = calloc(1, sizeof *b);
    if (!b) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    b->fp = open_memstream(&b->data, &b->size);
    if (!b->fp) {
        free(b);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "cannot open a memory stream: %s", strerror(errno));
    }
    *out = b;
    return SC_OK;
}

FILE *sc_buffer_file(sc_buffer *b) { return b ? b->fp : NULL; }

sc_status sc_buffer_take(sc_buffer *b, char **data, size_t *size, sc_error *err) {
    sc__error_clear(err);
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!b) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no buffer");
    bool bad = fflush(b->fp) != 0 || ferror(b->fp);
    bad = fclose(b->fp) != 0 || bad;
    sc_status st = SC_OK;
    if (bad || !b->data)
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "cannot write to a memory buffer (out of memory)");
    else if (!data)
        st = sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "bad arguments");
    if (st != SC_OK) {
        free(b->data);
        free(b);
        return st;
    }
    *data = b->data;
    if (size) *size = b->size;
    free(b);
    return SC_OK;
}

void sc_buffer_abort(sc_buffer *b) {
    if (!b) return;
    fclose(b->fp);
    free(b->data);
    free(b);
}

void sc_free(void *p) { free(p); }
