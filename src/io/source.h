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
    struct sc__ahead *ahead; /* decoding ahead on a thread (readahead.c), or NULL */
} sc__source;

sc_status sc__source_open_file(sc__source *s, const char *path, sc_error *err);
sc_status sc__source_open_mem(sc__source *s, const void *data, size_t size, const char *name,
                              sc_error *err);
/* Reads up to cap decompressed bytes; *got == 0 only at the end of input. */
sc_status sc__source_read(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err);
/* The same, always decoding in the calling thread (what a read-ahead
 * thread runs). */
sc_status sc__source_decode(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err);

/* Read-ahead (readahead.c): a gzip source decoded on a thread of its own,
 * a few MiB ahead of the reader, so that inflating and parsing overlap.
 * The bytes are the same; an error comes after the bytes before it, but
 * may surface at another point of a reader's window refills than without
 * read-ahead, so a caller that wants the exact error of a direct read
 * re-reads the input without it; so only a regular file is read ahead.
 * false: not a regular gzip file, or no thread could be started (the
 * source then stays as it was). sc__source_close stops the thread. */
bool sc__ahead_start(sc__source *s);
sc_status sc__ahead_read(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err);
void sc__ahead_stop(sc__source *s);
void sc__source_close(sc__source *s);

/* Reads the whole (decompressed) input into a malloc'ed buffer; for small
 * inputs such as Chakra files. */
sc_status sc__source_slurp(const char *path, unsigned char **data, size_t *size, sc_error *err);

/* Opens the plain file at path to read from byte `offset` on (for a
 * reader that takes one slice of a large file). Fails with SC_E_FORMAT on
 * gzip input, which cannot be entered in the middle. */
sc_status sc__source_open_at(sc__source *s, const char *path, uint64_t offset, sc_error *err);

#endif
