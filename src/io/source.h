/*
 * source.h - a byte source: a plain file, a gzip file or a memory buffer.
 *
 * Readers pull decompressed bytes in chunks and never see whether the input
 * was compressed: gzip is detected by its magic bytes, not by the file name.
 */
#ifndef SC_SOURCE_H
#define SC_SOURCE_H

#include "../base/base.h"

#include <zlib.h>

typedef struct sc__source {
    const char *name; /* for error messages */
    int fd;           /* -1 for memory sources */
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    bool gzip, eof, zinit;
    z_stream zs;                /* zlib: only to name the error in corrupt input */
    struct inflate_state *isal; /* isa-l igzip: the fast decoder (source.c) */
    unsigned char *zin; /* compressed input chunk */
    size_t zin_cap;
    uint64_t raw_read; /* bytes read from the file (compressed size for gzip) */
    uint64_t size_hint; /* decoded bytes expected, 0 unknown (sc__source_expected_size) */
    bool size_wraps;    /* size_hint is a gzip trailer's: modulo 2^32 */
    struct sc__chunks *chunks; /* a cursor into decoded chunks (chunks.c) ... */
    struct sc__cursor *cursor; /* ... or NULL */
    unsigned char *peek;       /* decoded bytes read ahead (sc__source_peek), */
    size_t peek_len, peek_pos; /* served again before any further bytes */
} sc__source;

sc_status sc__source_open_file(sc__source *s, const char *path, sc_error *err);
sc_status sc__source_open_mem(sc__source *s, const void *data, size_t size, const char *name,
                              sc_error *err);
/* Reads up to cap decompressed bytes; *got == 0 only at the end of input. */
sc_status sc__source_read(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err);
/* The same, always decoding in the calling thread (what the chunks'
 * decoder thread runs). */
sc_status sc__source_decode(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err);
void sc__source_close(sc__source *s);
/* Decodes up to `want` bytes ahead and shows them (*bytes, *len; fewer at
 * the end of input) without consuming them: reads return them first. A
 * pipe can be read only once, so its format is told from bytes that the
 * reader then reads again. Once per source, before any read. */
sc_status sc__source_peek(sc__source *s, size_t want, const unsigned char **bytes, size_t *len,
                          sc_error *err);
/* About how many decoded bytes the whole input holds, once `done` of
 * them are read: a plain file's or buffer's size; for gzip, the size its
 * trailer gives modulo 4 GiB (so the least such size that is at least the
 * compressed size and `done`; wrong for concatenated members, whose
 * trailer gives the last one's only); 0 for a pipe. A hint
 * for sizing what is read into, never for reading. */
uint64_t sc__source_expected_size(const sc__source *s, uint64_t done);
/* Memory or a regular file: a read returns at once, where a pipe's may wait
 * for a writer for good. */
bool sc__source_cannot_block(const sc__source *s);

/* Chunks (chunks.c): a source decoded on a thread of its own into chunks
 * of `size` bytes, which any number of cursors read at offsets of their
 * own. on_chunk runs on the decoder thread for each chunk (bytes, len, and
 * its offset in the decoded stream) before any cursor can read it, and once
 * more at the end with bytes NULL, len 0 and the stream's length. The
 * decoder waits while `held` chunks are kept: a chunk is kept until every
 * open cursor has read past it. */
typedef struct sc__chunks sc__chunks;
typedef void (*sc__chunk_fn)(void *ctx, sc__chunks *c, const char *bytes, size_t len,
                             uint64_t offset);
/* NULL: no memory or no thread. src stays the caller's; it must outlive
 * the chunks and not be read while they decode. */
sc__chunks *sc__chunks_start(sc__source *src, size_t size, unsigned held, sc__chunk_fn on_chunk,
                             void *ctx);
/* Stops the decoder and waits for it: reads of cursors then fail, and
 * on_chunk runs no more. */
void sc__chunks_stop(sc__chunks *c);
/* Stops the decoder and frees everything; all cursors must be closed. */
void sc__chunks_free(sc__chunks *c);
/* Opens s as a cursor reading c's decoded bytes from `offset` on (an
 * offset not yet recycled). Its reads wait for the decoder; at the end of
 * the stream they return the end, or the decoder's error. Closed by
 * sc__source_close. */
sc_status sc__source_open_chunks(sc__source *s, sc__chunks *c, uint64_t offset, sc_error *err);
sc_status sc__chunks_read(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err);
void sc__chunks_close_cursor(sc__source *s);

/* Reads the whole (decompressed) input into a malloc'ed buffer; for small
 * inputs such as Chakra files. */
sc_status sc__source_slurp(const char *path, unsigned char **data, size_t *size, sc_error *err);

/* Opens the plain file at path to read from byte `offset` on (for a
 * reader that takes one slice of a large file). Fails with SC_E_FORMAT on
 * gzip input, which cannot be entered in the middle. */
sc_status sc__source_open_at(sc__source *s, const char *path, uint64_t offset, sc_error *err);

#endif
