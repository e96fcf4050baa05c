/*
 * output.c - safe output files: write to a temporary name beside the final
 * one, then rename (see output.h for the contract).
 *
 * The temporary name is ".<base>.<pid>.<n>.tmp" in the destination's
 * directory, created with O_EXCL and mode 0666 (the umask applies, as for any
 * new file). Commit flushes the stdio buffer, fsyncs, closes - any of which
 * can report a full disk - and only then moves the file into place.
 *
 * Statuses follow the CLI's exit codes: an existing file (without force), a
 * directory or a missing folder is SC_E_USAGE (exit 2, the command line
 * named it); failing to create, write or rename is SC_E_INTERNAL (exit 3,
 * "cannot write output"), never SC_E_IO, which means unreadable *input*.
 */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct sc_output {
    FILE *fp;
    char *final_path; /* NULL for stdout */
    char *tmp_path;
    unsigned flags;
};

static void output_free(sc_output *o) {
    free(o->final_path);
    free(o->tmp_path);
    free(o);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

/* Opens a fresh temporary file next to path; fills o->tmp_path. */
static sc_status open_temp(sc_output *o, const char *path, int *fd, sc_error *err) {
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    if (!*base)
        return sc__fail(err, SC_E_USAGE, path, SC_NO_OFFSET, "output path names a directory");
    size_t cap = strlen(path) + 64;
    o->tmp_path = malloc(cap);
    if (!o->tmp_path) return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    static unsigned counter; /* only to vary names; O_EXCL guarantees uniqueness */
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        snprintf(o->tmp_path, cap, "%.*s.%s.%ld.%u.tmp", (int)dirlen, path, base, (long)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        *fd = open(o->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (*fd >= 0) return SC_OK;
        if (errno == ENOENT || errno == ENOTDIR) /* the user named a bad folder */
            return sc__fail(err, SC_E_USAGE, path, SC_NO_OFFSET,
                            "cannot write there: %s", strerror(errno));
        if (errno != EEXIST)
            return sc__fail(err, SC_E_INTERNAL, path, SC_NO_OFFSET,
                            "cannot create a temporary file beside the output: %s",
                            strerror(errno));
    }
    return sc__fail(err, SC_E_INTERNAL, path, SC_NO_OFFSET, "cannot find a free temporary file name");
}

sc_status sc_output_open(const char *path, unsigned flags, sc_output **out, sc_error *err) {
    sc__error_clear(err);
    if (!out) return sc__fail(err, SC_E_USAGE, path, SC_NO_OFFSET, "bad arguments");
    *out = NULL;
    if (!path || !*path) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no output path given");
    sc_output *o = calloc(1, sizeof *o);
    if (!o) return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    o->flags = flags;
    if (strcmp(path, "-") == 0) {
        o->fp = stdout;
        *out = o;
        return SC_OK;
    }
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            output_free(o);
            return sc__fail(err, SC_E_USAGE, path, SC_NO_OFFSET, "output path is a directory");
        }
        if (!(flags & SC_OUTPUT_FORCE)) {
            output_free(o);
            return sc__fail(err, SC_E_USAGE, path, SC_NO_OFFSET,
                            "output file exists; use --force to overwrite it");
        }
    }
    o->final_path = dup_str(path);
    if (!o->final_path) {
        output_free(o);
        return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    }
    int fd = -1;
    sc_status st = open_temp(o, path, &fd, err);
    if (st != SC_OK) {
        output_free(o);
        return st;
    }
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        st = sc__fail(err, SC_E_INTERNAL, path, SC_NO_OFFSET, "cannot open output: %s", strerror(errno));
        close(fd);
        unlink(o->tmp_path);
        output_free(o);
        return st;
    }
    *out = o;
    return SC_OK;
}

FILE *sc_output_file(sc_output *o) { return o ? o->fp : NULL; }

void sc_output_abort(sc_output *o) {
    if (!o) return;
    if (o->final_path) {
        fclose(o->fp);
        unlink(o->tmp_path);
    } else {
        fflush(o->fp);
    }
    output_free(o);
}

/* Moves the finished temporary file to its final name. */
static sc_status place(sc_output *o, sc_error *err) {
    if (o->flags & SC_OUTPUT_FORCE) {
        if (rename(o->tmp_path, o->final_path) == 0) return SC_OK;
        return sc__fail(err, SC_E_INTERNAL, o->final_path, SC_NO_OFFSET,
                        "cannot rename output into place: %s", strerror(errno));
    }
    /* link(2) refuses an existing name, so a file created since open is kept. */
    if (link(o->tmp_path, o->final_path) == 0) {
        unlink(o->tmp_path);
        return SC_OK;
    }
    if (errno == EEXIST)
        return sc__fail(err, SC_E_USAGE, o->final_path, SC_NO_OFFSET,
                        "output file exists; use --force to overwrite it");
    /* File systems without hard links: check, then rename (a small race). */
    struct stat sb;
    if (stat(o->final_path, &sb) == 0)
        return sc__fail(err, SC_E_USAGE, o->final_path, SC_NO_OFFSET,
                        "output file exists; use --force to overwrite it");
    if (rename(o->tmp_path, o->final_path) == 0) return SC_OK;
    return sc__fail(err, SC_E_INTERNAL, o->final_path, SC_NO_OFFSET,
                    "cannot rename output into place: %s", strerror(errno));
}

sc_status sc_output_commit(sc_output *o, sc_error *err) {
    sc__error_clear(err);
    if (!o) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no output");
    if (!o->final_path) { /* stdout */
        bool bad = fflush(o->fp) != 0 || ferror(o->fp);
        output_free(o);
        return bad ? sc__fail(err, SC_E_INTERNAL, "<stdout>", SC_NO_OFFSET,
                              "cannot write to standard output")
                   : SC_OK;
    }
    int werr = 0;
    if (fflush(o->fp) != 0 || ferror(o->fp)) werr = errno ? errno : EIO;
    if (!werr && fsync(fileno(o->fp)) != 0 && errno != EINVAL && errno != EROFS) werr = errno;
    if (fclose(o->fp) != 0 && !werr) werr = errno ? errno : EIO;
    o->fp = NULL;
    sc_status st = SC_OK;
    if (werr)
        st = sc__fail(err, SC_E_INTERNAL, o->final_path, SC_NO_OFFSET, "cannot write output: %s",
                      strerror(werr));
    else
        st = place(o, err);
    if (st != SC_OK) unlink(o->tmp_path);
    output_free(o);
    return st;
}
