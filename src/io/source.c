/*
 * source.c - reading plain and gzip inputs in chunks.
 *
 * gzip is decoded with isa-l's igzip (2-3x faster than zlib here: 806 vs
 * 321 MB/s of output on the 513 MB bench file). When igzip finds the data
 * corrupt, the stream is decoded once more with zlib up to the error, so the
 * message and offset are zlib's, exactly as before the switch. Concatenated
 * gzip members (as written by `cat a.gz b.gz` or pigz) are read as one
 * stream. Errors name the file and the compressed byte offset.
 */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define SC__ZIN_CHUNK (1u << 20)

/* Least x >= at least that is congruent to size modulo 2^32. */
static uint64_t unwrap(uint64_t size, uint64_t least) {
    const uint64_t wrap = (uint64_t)1 << 32;
    return size >= least ? size : size + (least - size + wrap - 1) / wrap * wrap;
}

/* The input's own word on its decoded size (sc__source_expected_size):
 * a regular file's size, or the last four bytes of a gzip file or buffer
 * (ISIZE, little-endian; JSON does not shrink under gzip, so at least the
 * compressed size). Left 0 for a pipe or a gzip input too short to have a
 * trailer. */
static void size_hint(sc__source *s) {
    unsigned char t[4];
    uint64_t size = s->mem_len;
    struct stat sb;
    if (s->fd >= 0) {
        if (fstat(s->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return;
        size = (uint64_t)sb.st_size;
    }
    if (!s->gzip) {
        s->size_hint = size;
        return;
    }
    if (size < 18) return; /* a 10-byte header and an 8-byte trailer at least */
    if (s->fd < 0) memcpy(t, s->mem + size - 4, 4);
    else if (pread(s->fd, t, 4, (off_t)(size - 4)) != 4) return;
    uint64_t isize = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
    s->size_hint = unwrap(isize, size);
    s->size_wraps = true;
}

uint64_t sc__source_expected_size(const sc__source *s, uint64_t done) {
    if (s->size_wraps) return unwrap(s->size_hint, done);
    return s->size_hint >= done ? s->size_hint : 0;
}

static sc_status source_start(sc__source *s, sc_error *err) {
    /* Peek at the first two bytes to detect gzip. */
    unsigned char magic[2];
    size_t have = 0;
    if (s->fd >= 0) {
        s->zin = malloc(SC__ZIN_CHUNK);
        if (!s->zin) return sc__fail(err, SC_E_NOMEM, s->name, SC_NO_OFFSET, "out of memory");
        s->zin_cap = SC__ZIN_CHUNK;
        while (have < 2) {
            ssize_t r = read(s->fd, s->zin + have, s->zin_cap - have);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) /* e.g. EISDIR: a directory where a file belongs */
                return sc__fail(err, SC_E_IO, s->name, have, "cannot read: %s", strerror(errno));
            if (r == 0) break;
            have += (size_t)r;
        }
        s->raw_read = have;
        memcpy(magic, s->zin, have < 2 ? have : 2);
    } else {
        have = s->mem_len < 2 ? s->mem_len : 2;
        memcpy(magic, s->mem, have);
    }
    s->gzip = have >= 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    size_hint(s);
    if (s->gzip) {
        s->isal = malloc(sizeof *s->isal);
        if (!s->isal) return sc__fail(err, SC_E_NOMEM, s->name, SC_NO_OFFSET, "cannot start gzip decoder");
        isal_inflate_init(s->isal);
        s->isal->crc_flag = ISAL_GZIP;
        if (s->fd >= 0) {
            s->isal->next_in = s->zin;
            s->isal->avail_in = (uint32_t)have;
        } else {
            s->isal->next_in = (uint8_t *)s->mem;
            s->isal->avail_in = 0; /* fed in chunks below to stay under 32 bits */
        }
    } else if (s->fd >= 0) {
        s->mem_pos = 0; /* bytes already in zin that belong to the output */
        s->mem_len = have;
    }
    return SC_OK;
}

/* Opens path for reading into a fresh s. O_NONBLOCK only for the open: a
 * FIFO nobody writes to must not hang us (it then reads as empty); reads
 * block as usual, so pipes still work. */
static sc_status open_fd(sc__source *s, const char *path, sc_error *err) {
    memset(s, 0, sizeof *s);
    s->name = path;
    s->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (s->fd < 0)
        return sc__fail(err, SC_E_IO, path, SC_NO_OFFSET, "cannot open: %s", strerror(errno));
    int flags = fcntl(s->fd, F_GETFL);
    if (flags >= 0) fcntl(s->fd, F_SETFL, flags & ~O_NONBLOCK);
    return SC_OK;
}

sc_status sc__source_open_file(sc__source *s, const char *path, sc_error *err) {
    sc_status st = open_fd(s, path, err);
    if (st == SC_OK && (st = source_start(s, err)) != SC_OK) sc__source_close(s);
    return st;
}

sc_status sc__source_open_at(sc__source *s, const char *path, uint64_t offset, sc_error *err) {
    sc_status st = open_fd(s, path, err);
    if (st != SC_OK) return st;
    struct stat sb;
    unsigned char magic[2];
    if (fstat(s->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) { /* only a file has offsets */
        st = sc__fail(err, SC_E_IO, path, SC_NO_OFFSET, "not a regular file");
    } else if (pread(s->fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        st = sc__fail(err, SC_E_FORMAT, path, SC_NO_OFFSET, "gzip input cannot be read from an offset");
    } else if (offset > (uint64_t)INT64_MAX || lseek(s->fd, (off_t)offset, SEEK_SET) < 0) {
        st = sc__fail(err, SC_E_IO, path, offset, "cannot seek: %s", strerror(errno));
    }
    if (st != SC_OK) sc__source_close(s);
    else s->raw_read = offset;
    return st;
}

sc_status sc__source_open_mem(sc__source *s, const void *data, size_t size, const char *name,
                              sc_error *err) {
    memset(s, 0, sizeof *s);
    s->name = name;
    s->fd = -1;
    s->mem = data;
    s->mem_len = size;
    return source_start(s, err);
}

bool sc__source_cannot_block(const sc__source *s) {
    struct stat sb;
    if (s->cursor) return false; /* a cursor waits for its decoder */
    return s->fd < 0 || (fstat(s->fd, &sb) == 0 && S_ISREG(sb.st_mode));
}

void sc__source_close(sc__source *s) {
    if (s->cursor) sc__chunks_close_cursor(s);
    if (s->zinit) inflateEnd(&s->zs);
    free(s->isal);
    if (s->fd >= 0) close(s->fd);
    free(s->zin);
    free(s->peek);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* Plain files are read(), not mapped: parsing a mapping in place saved the
 * copy (7% of a load) but paid as much in page-table work (measured). */
static sc_status read_raw(sc__source *s, unsigned char *dst, size_t cap, size_t *got,
                          sc_error *err) {
    for (;;) {
        ssize_t r = read(s->fd, dst, cap);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0)
            return sc__fail(err, SC_E_IO, s->name, s->raw_read, "cannot read: %s",
                            strerror(errno));
        *got = (size_t)r;
        s->raw_read += (size_t)r;
        return SC_OK;
    }
}

/* The next chunk of compressed bytes; *end at the end of input. */
static sc_status feed(sc__source *s, unsigned char **next, size_t *avail, bool *end,
                      sc_error *err) {
    *end = false;
    if (s->fd >= 0) {
        size_t got;
        sc_status st = read_raw(s, s->zin, s->zin_cap, &got, err);
        if (st != SC_OK) return st;
        *next = s->zin;
        *avail = got;
        *end = got == 0;
    } else {
        size_t left = s->mem_len - s->mem_pos;
        size_t take = left < (1u << 30) ? left : (1u << 30);
        *next = (unsigned char *)s->mem + s->mem_pos;
        *avail = take;
        s->mem_pos += take;
        s->raw_read = s->mem_pos;
        *end = take == 0;
    }
    return SC_OK;
}

/* Refills zs.next_in with compressed bytes; sets *end at the end of input. */
static sc_status gz_feed(sc__source *s, bool *end, sc_error *err) {
    unsigned char *next;
    size_t avail;
    sc_status st = feed(s, &next, &avail, end, err);
    s->zs.next_in = next;
    s->zs.avail_in = (uInt)avail;
    return st;
}

static sc_status isal_feed(sc__source *s, bool *end, sc_error *err) {
    unsigned char *next;
    size_t avail;
    sc_status st = feed(s, &next, &avail, end, err);
    s->isal->next_in = next;
    s->isal->avail_in = (uint32_t)avail;
    return st;
}

static sc_status gz_read(sc__source *s, unsigned char *dst, size_t cap, size_t *got,
                         sc_error *err) {
    size_t out = 0;
    if (cap > (1u << 30)) cap = 1u << 30;
    while (out < cap && !s->eof) {
        if (s->zs.avail_in == 0) {
            bool end;
            sc_status st = gz_feed(s, &end, err);
            if (st != SC_OK) return st;
            if (end)
                return sc__fail(err, SC_E_PARSE, s->name, s->raw_read,
                                "truncated gzip stream (ends inside compressed data)");
        }
        s->zs.next_out = dst + out;
        s->zs.avail_out = (uInt)(cap - out);
        int zr = inflate(&s->zs, Z_NO_FLUSH);
        out = cap - s->zs.avail_out;
        if (zr == Z_STREAM_END) {
            /* Another member may follow; skip trailing zero padding. */
            while (s->zs.avail_in && *s->zs.next_in == 0) {
                s->zs.next_in++;
                s->zs.avail_in--;
            }
            if (s->zs.avail_in == 0) {
                bool end;
                sc_status st = gz_feed(s, &end, err);
                if (st != SC_OK) return st;
                if (end) {
                    s->eof = true;
                    break;
                }
            }
            inflateReset(&s->zs);
            continue;
        }
        if (zr == Z_BUF_ERROR && s->zs.avail_in == 0) continue;
        if (zr != Z_OK)
            return sc__fail(err, SC_E_PARSE, s->name, s->raw_read - s->zs.avail_in,
                            "corrupt gzip data: %s", s->zs.msg ? s->zs.msg : "inflate failed");
    }
    *got = out;
    return SC_OK;
}

/* igzip found the data corrupt (code < 0) or truncated (code 0): decode the
 * stream again with zlib (the decoder stepcast used before igzip) from its
 * start, discarding the output, so the error carries zlib's message and
 * offset. If the input cannot be re-read (a pipe) or zlib accepts it,
 * igzip's verdict stands. */
static sc_status corrupt(sc__source *s, int code, sc_error *err) {
    uint64_t at = code ? s->raw_read - s->isal->avail_in : s->raw_read;
    bool again = false;
    if (s->fd >= 0) {
        again = lseek(s->fd, 0, SEEK_SET) == 0;
    } else {
        s->mem_pos = 0;
        again = true;
    }
    if (again) {
        memset(&s->zs, 0, sizeof s->zs);
        again = inflateInit2(&s->zs, 16 + MAX_WBITS) == Z_OK;
    }
    if (again) {
        s->zinit = true;
        s->raw_read = 0;
        s->eof = false;
        unsigned char *scratch = malloc(1u << 16);
        sc_status st = SC_OK;
        size_t n = 1;
        while (scratch && st == SC_OK && n > 0 && !s->eof)
            st = gz_read(s, scratch, 1u << 16, &n, err);
        free(scratch);
        if (st != SC_OK) return st;
    }
    if (code == 0)
        return sc__fail(err, SC_E_PARSE, s->name, at,
                        "truncated gzip stream (ends inside compressed data)");
    return sc__fail(err, SC_E_PARSE, s->name, at, "corrupt gzip data: igzip error %d", code);
}

static sc_status isal_read(sc__source *s, unsigned char *dst, size_t cap, size_t *got,
                           sc_error *err) {
    struct inflate_state *z = s->isal;
    size_t out = 0;
    if (cap > (1u << 30)) cap = 1u << 30;
    while (out < cap && !s->eof) {
        /* Decode first: output igzip holds back from a full buffer last
         * time comes out before we ask for more input. */
        z->next_out = dst + out;
        z->avail_out = (uint32_t)(cap - out);
        int zr = isal_inflate(z);
        out = cap - z->avail_out;
        if (zr < 0) return corrupt(s, zr, err);
        bool end;
        if (z->block_state == ISAL_BLOCK_FINISH) {
            /* Another member may follow; skip trailing zero padding. */
            while (z->avail_in && *z->next_in == 0) {
                z->next_in++;
                z->avail_in--;
            }
            if (z->avail_in == 0) {
                sc_status st = isal_feed(s, &end, err);
                if (st != SC_OK) return st;
                if (end) {
                    s->eof = true;
                    break;
                }
            }
            uint8_t *next = z->next_in;
            uint32_t avail = z->avail_in;
            isal_inflate_reset(z);
            z->crc_flag = ISAL_GZIP;
            z->next_in = next;
            z->avail_in = avail;
            continue;
        }
        if (out < cap && z->avail_in == 0) { /* starved: more input */
            sc_status st = isal_feed(s, &end, err);
            if (st != SC_OK) return st;
            if (end) return corrupt(s, 0, err);
        }
    }
    *got = out;
    return SC_OK;
}

sc_status sc__source_read(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err) {
    if (s->cursor) return sc__chunks_read(s, dst, cap, got, err);
    return sc__source_decode(s, dst, cap, got, err);
}

sc_status sc__source_peek(sc__source *s, size_t want, const unsigned char **bytes, size_t *len,
                          sc_error *err) {
    *bytes = NULL;
    *len = 0;
    if (s->peek || s->cursor)
        return sc__fail(err, SC_E_INTERNAL, s->name, SC_NO_OFFSET, "peeking at a source twice");
    unsigned char *buf = malloc(want ? want : 1);
    if (!buf) return sc__fail(err, SC_E_NOMEM, s->name, SC_NO_OFFSET, "out of memory");
    size_t have = 0, got = 1;
    while (have < want && got) {
        sc_status st = sc__source_decode(s, buf + have, want - have, &got, err);
        if (st != SC_OK) {
            free(buf);
            return st;
        }
        have += got;
    }
    s->peek = buf;
    s->peek_len = have;
    s->peek_pos = 0;
    *bytes = buf;
    *len = have;
    return SC_OK;
}

sc_status sc__source_decode(sc__source *s, void *dst, size_t cap, size_t *got, sc_error *err) {
    *got = 0;
    if (s->peek_pos < s->peek_len && cap) { /* bytes sc__source_peek read ahead */
        size_t n = s->peek_len - s->peek_pos;
        if (n > cap) n = cap;
        memcpy(dst, s->peek + s->peek_pos, n);
        s->peek_pos += n;
        *got = n;
        return SC_OK;
    }
    if (s->eof || cap == 0) return SC_OK;
    if (s->gzip) return s->zinit ? gz_read(s, dst, cap, got, err) : isal_read(s, dst, cap, got, err);
    if (s->fd >= 0) {
        if (s->mem_pos < s->mem_len) { /* bytes peeked at open */
            size_t n = s->mem_len - s->mem_pos;
            if (n > cap) n = cap;
            memcpy(dst, s->zin + s->mem_pos, n);
            s->mem_pos += n;
            *got = n;
            return SC_OK;
        }
        sc_status st = read_raw(s, dst, cap, got, err);
        if (st == SC_OK && *got == 0) s->eof = true;
        return st;
    }
    size_t n = s->mem_len - s->mem_pos;
    if (n > cap) n = cap;
    memcpy(dst, s->mem + s->mem_pos, n);
    s->mem_pos += n;
    *got = n;
    if (n == 0) s->eof = true;
    return SC_OK;
}

sc_status sc__source_slurp(const char *path, unsigned char **data, size_t *size, sc_error *err) {
    sc__source s;
    *data = NULL;
    *size = 0;
    sc_status st = sc__source_open_file(&s, path, err);
    if (st != SC_OK) return st;
    size_t cap = 1u << 16, len = 0;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        sc__source_close(&s);
        return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    }
    for (;;) {
        if (len == cap) {
            unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                sc__source_close(&s);
                return sc__fail(err, SC_E_NOMEM, path, len, "out of memory reading input");
            }
            buf = nb;
            cap *= 2;
        }
        size_t got;
        st = sc__source_read(&s, buf + len, cap - len, &got, err);
        if (st != SC_OK) {
            free(buf);
            sc__source_close(&s);
            return st;
        }
        if (got == 0) break;
        len += got;
    }
    sc__source_close(&s);
    *data = buf;
    *size = len;
    return SC_OK;
}
