/*
 * traceset_load.c - loading a job's traces: finding the files, telling their
 * formats apart, reading them in parallel, and putting them in rank order.
 * The set itself, once loaded, is trace/traceset.c's.
 *
 * Paths may be files or directories (walked recursively, in sorted order so
 * results are deterministic). Files are sniffed by content: Kineto traces are
 * read by the Kineto reader, Chakra .et files (binary) by the Chakra reader
 * (src/readers/chakra.c: rank from <prefix>.<rank>.et); PyTorch Execution
 * Traces met while walking a directory are skipped with a warning, and an
 * export's <prefix>.comm_group.json silently. Ranks come
 * from distributedInfo.rank, then the file name, then argument order.
 */
#include "../io/source.h"
#include "readers.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct pathlist {
    char **items;
    size_t count, cap;
} pathlist;

static bool pathlist_add(pathlist *l, const char *p) {
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **n = sc__realloc_array(l->items, cap, sizeof *n);
        if (!n) return false;
        l->items = n;
        l->cap = cap;
    }
    size_t len = strlen(p);
    char *c = malloc(len + 1);
    if (!c) return false;
    memcpy(c, p, len + 1);
    l->items[l->count++] = c;
    return true;
}

static void pathlist_free(pathlist *l) {
    for (size_t i = 0; i < l->count; i++) free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Trace files by name; PREFIX.comm_group.json, which a Chakra export
 * writes beside its .et files (the ranks of each communicator, for
 * ASTRA-sim), is not a trace. */
static bool looks_like_trace_name(const char *name) {
    if (has_suffix(name, ".comm_group.json")) return false;
    return has_suffix(name, ".json") || has_suffix(name, ".json.gz") || has_suffix(name, ".et") ||
           has_suffix(name, ".et.gz");
}

/* Collects trace files under dir (recursively, sorted). */
static sc_status walk_dir(const char *dir, pathlist *out, int depth, sc_error *err) {
    if (depth > 32) return sc__fail(err, SC_E_LIMIT, dir, SC_NO_OFFSET, "directories nested too deep");
    DIR *d = opendir(dir);
    if (!d) return sc__fail(err, SC_E_IO, dir, SC_NO_OFFSET, "cannot open directory: %s", strerror(errno));
    pathlist names = {0};
    struct dirent *de;
    sc_status st = SC_OK;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (!pathlist_add(&names, de->d_name)) {
            st = sc__fail(err, SC_E_NOMEM, dir, SC_NO_OFFSET, "out of memory");
            break;
        }
    }
    closedir(d);
    if (names.count) qsort(names.items, names.count, sizeof *names.items, cmp_str);
    for (size_t i = 0; st == SC_OK && i < names.count; i++) {
        char path[4096];
        int n = snprintf(path, sizeof path, "%s/%s", dir, names.items[i]);
        if (n < 0 || (size_t)n >= sizeof path) continue;
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) st = walk_dir(path, out, depth + 1, err);
        else if (S_ISREG(sb.st_mode) && looks_like_trace_name(names.items[i]))
            if (!pathlist_add(out, path)) st = sc__fail(err, SC_E_NOMEM, dir, SC_NO_OFFSET, "out of memory");
    }
    pathlist_free(&names);
    return st;
}

typedef enum { SNIFF_KINETO, SNIFF_PYTORCH_ET, SNIFF_CHAKRA, SNIFF_UNKNOWN } sniff_kind;

/* Looks at the first decompressed bytes of a file to tell formats apart. */
static sniff_kind sniff(const char *path) {
    sc__source src;
    sc_error e;
    if (sc__source_open_file(&src, path, &e) != SC_OK) return SNIFF_UNKNOWN;
    char buf[65536];
    size_t len = 0, got = 0;
    do {
        if (sc__source_read(&src, buf + len, sizeof buf - 1 - len, &got, &e) != SC_OK) got = 0;
        len += got;
    } while (got && len < sizeof buf - 1);
    sc__source_close(&src);
    buf[len] = '\0';
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i])) i++;
    if (i == len) return SNIFF_UNKNOWN;
    if (buf[i] != '{' && buf[i] != '[') return SNIFF_CHAKRA;
    if (memmem(buf, len, "\"traceEvents\"", 13)) return SNIFF_KINETO;
    if (memmem(buf, len, "\"nodes\"", 7) && memmem(buf, len, "\"schema\"", 8)) return SNIFF_PYTORCH_ET;
    return SNIFF_KINETO; /* let the Kineto reader say what is wrong */
}

/* A Chakra file: binary content (the first decompressed byte that is not
 * whitespace opens no JSON value, opens_no_json) under a name that does
 * not claim JSON, so a corrupt .json still gets the JSON reader's diagnosis. */
static bool names_json(const char *path) { return has_suffix(path, ".json") || has_suffix(path, ".json.gz"); }

static bool opens_no_json(const unsigned char *head, size_t n) {
    size_t i = 0;
    while (i < n && isspace(head[i])) i++;
    return i < n && head[i] != '{' && head[i] != '[';
}

/* Reads one trace file, telling Chakra from Kineto by its first 64
 * decoded bytes (opens_no_json) unless its name claims JSON. A regular file
 * is then read again from its start by path, in parallel where that pays.
 * A pipe or a device (/dev/stdin, a shell's <(zcat rank0.json.gz)) can be
 * read only once: the reader of its format reads the peeked bytes again
 * and on, sequentially (the parallel readers need a regular file). Sniffing
 * it by a read of its own used to eat its first bytes, so a piped trace
 * failed at "byte 0". */
static sc_status load_one(const char *path, const sc_load_options *o, sc_trace **out, sc_error *err) {
    struct stat sb;
    bool once = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
    if (!once && names_json(path)) return sc_trace_load(path, o, out, err);
    sc__source src;
    sc_error e;
    const unsigned char *head = NULL;
    size_t n = 0;
    sc_status st = sc__source_open_file(&src, path, &e);
    bool opened = st == SC_OK;
    if (opened) st = sc__source_peek(&src, 64, &head, &n, &e);
    bool chakra = st == SC_OK && !names_json(path) && opens_no_json(head, n);
    if (once && st == SC_OK)
        st = chakra ? sc__chakra_load_source(&src, path, o, out, err)
                    : sc__kineto_load_source(&src, path, o, out, err);
    else if (once && err)
        *err = e;
    if (opened) sc__source_close(&src);
    if (once) return st;
    /* A file that failed to open or peek is the Kineto reader's to report. */
    return chakra ? sc__chakra_load(path, o, out, err) : sc_trace_load(path, o, out, err);
}

/* Rank from a file name: rank-N, rank_N, rankN, worker N, workerN, worker_N. */
static int64_t rank_from_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char *keys[] = {"rank", "worker"};
    for (size_t k = 0; k < 2; k++) {
        const char *p = base;
        while ((p = strstr(p, keys[k]))) {
            const char *q = p + strlen(keys[k]);
            if (*q == '-' || *q == '_' || *q == ' ') q++;
            if (isdigit((unsigned char)*q)) {
                int64_t v = 0;
                while (isdigit((unsigned char)*q) && v < 100000000) v = v * 10 + (*q++ - '0');
                return v;
            }
            p = q;
        }
    }
    return -1;
}

typedef struct load_job {
    char **paths;
    size_t count;
    const sc_load_options *opts;
    unsigned threads; /* the load's cap, shared out by sc__file_threads */
    sc_trace **traces;
    sc_error *errors;
    sc_status *status;
    atomic_size_t next;
    sc__trace_fn each; /* NULL, or run on each trace as it is read */
    void *ctx;
} load_job;

/* Threads left over when there are fewer files than threads split each
 * large file (sc_trace_load), the first files taking one more each where
 * they do not divide evenly, so that no core sits idle; otherwise a file is
 * one thread's work. */
unsigned sc__file_threads(unsigned threads, size_t files, size_t i) {
    if (files == 0 || threads <= files) return 1;
    unsigned n = (unsigned)files;
    return threads / n + (i < threads % n);
}

static void *load_worker(void *arg) {
    load_job *job = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->count) break;
        sc_load_options o = *job->opts;
        o.threads = sc__file_threads(job->threads, job->count, i);
        job->status[i] = load_one(job->paths[i], &o, &job->traces[i], &job->errors[i]);
        sc__progress_files(sc__progress_of(&o), 1);
        if (job->status[i] == SC_OK && job->each)
            job->status[i] = job->each(job->ctx, job->traces[i], &job->errors[i]);
    }
    return NULL;
}

static int cmp_trace(const void *a, const void *b) {
    const sc_trace *x = *(sc_trace *const *)a, *y = *(sc_trace *const *)b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Reads every path with a pool of set->threads threads; the first error
 * (in path order) wins so that messages are deterministic. */
static sc_status load_all(sc_traceset *set, pathlist *files, const sc_load_options *opts,
                          sc__trace_fn each, void *ctx, sc_error *err) {
    unsigned threads = set->threads;
    /* Each file gets an equal share of the memory budget: the
     * guard then fails the same way whatever order the threads run in.
     * With `each`, only the files being read are held at once. */
    sc_load_options share = opts ? *opts : (sc_load_options){0};
    size_t held = each && threads < files->count ? threads : files->count;
    share.max_memory_bytes = sc__load_budget(opts) / (held ? held : 1);
    if (!share.max_memory_bytes) share.max_memory_bytes = 1; /* 0 would mean the default */
    load_job job = {.paths = files->items, .count = files->count, .opts = &share, .threads = threads,
                    .each = each, .ctx = ctx};
    atomic_init(&job.next, 0);
    job.traces = calloc(files->count, sizeof *job.traces);
    job.errors = calloc(files->count, sizeof *job.errors);
    job.status = calloc(files->count, sizeof *job.status);
    sc_status st = SC_OK;
    if (!job.traces || !job.errors || !job.status) {
        st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
        goto out;
    }
    if (threads > files->count) threads = (unsigned)files->count;
    pthread_t tids[64];
    unsigned started = 0;
    for (unsigned i = 1; i < threads && i < 64; i++)
        if (pthread_create(&tids[started], NULL, load_worker, &job) == 0) started++;
    load_worker(&job);
    for (unsigned i = 0; i < started; i++) pthread_join(tids[i], NULL);
    for (size_t i = 0; i < files->count; i++) {
        if (job.status[i] != SC_OK && st == SC_OK) {
            if (err) *err = job.errors[i];
            st = job.status[i];
        }
    }
    if (st != SC_OK) {
        for (size_t i = 0; i < files->count; i++) sc_trace_free(job.traces[i]);
        goto out;
    }
    set->traces = job.traces;
    set->count = files->count;
    job.traces = NULL;
out:
    free(job.traces);
    free(job.errors);
    free(job.status);
    return st;
}

sc_status sc_traceset_load(const char *const *paths, size_t npaths, const sc_load_options *opts,
                           sc_traceset **out, sc_error *err) {
    return sc__traceset_load_each(paths, npaths, opts, NULL, NULL, out, err);
}

sc_status sc__traceset_load_each(const char *const *paths, size_t npaths,
                                 const sc_load_options *opts, sc__trace_fn each, void *ctx,
                                 sc_traceset **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    if (npaths == 0) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no trace files given");
    sc_traceset *set = calloc(1, sizeof *set);
    if (!set) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    /* The caller's progress callback, or the progress of a load that
     * called this one; every file's reader finds it in its options. */
    sc__progress *given = sc__progress_of(opts);
    set->progress = given ? given : sc__progress_new(opts ? opts->progress : NULL, opts ? opts->progress_user : NULL);
    set->progress_owned = !given;
    sc_load_options with_progress = sc__progress_options(opts, set->progress);
    opts = &with_progress;
    pathlist files = {0};
    sc_status st = SC_OK;
    for (size_t i = 0; i < npaths && st == SC_OK; i++) {
        struct stat sb;
        if (stat(paths[i], &sb) != 0) {
            st = sc__fail(err, SC_E_IO, paths[i], SC_NO_OFFSET, "cannot open: %s", strerror(errno));
            break;
        }
        if (!S_ISDIR(sb.st_mode)) {
            if (!pathlist_add(&files, paths[i])) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
            continue;
        }
        pathlist found = {0};
        st = walk_dir(paths[i], &found, 0, err);
        size_t kept = 0;
        for (size_t k = 0; st == SC_OK && k < found.count; k++) {
            sniff_kind kind = sniff(found.items[k]);
            if (kind == SNIFF_KINETO || kind == SNIFF_CHAKRA) {
                if (!pathlist_add(&files, found.items[k])) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
                kept++;
            } else {
                sc__warnings_add(&set->warnings, "%s: skipped (%s, not a Kineto or Chakra trace)", found.items[k],
                              kind == SNIFF_PYTORCH_ET ? "PyTorch Execution Trace"
                                                       : "empty or unknown format");
            }
        }
        if (st == SC_OK && kept == 0)
            st = sc__fail(err, SC_E_FORMAT, paths[i], SC_NO_OFFSET, "no Kineto or Chakra trace files in this directory");
        pathlist_free(&found);
    }
    set->threads = sc__load_threads(opts);
    set->budget = sc__load_budget(opts);
    if (st == SC_OK) {
        sc__progress_stage(set->progress, "read", files.count);
        st = load_all(set, &files, opts, each, ctx, err);
        sc__progress_flush(set->progress);
    }
    if (st != SC_OK) {
        pathlist_free(&files);
        sc_traceset_free(set);
        return st;
    }
    /* Ranks: distributedInfo, else the file name, else argument order. */
    for (size_t i = 0; i < set->count; i++) {
        sc_trace *t = set->traces[i];
        if (t->rank >= 0) continue;
        int64_t r = rank_from_name(t->path);
        if (r >= 0) {
            t->rank = r;
            t->rank_source = 1;
            sc__warnings_add(&set->warnings, "%s: no distributedInfo.rank; rank %lld taken from the file name",
                          t->path, (long long)r);
        } else {
            t->rank = (int64_t)i;
            t->rank_source = 2;
            sc__warnings_add(&set->warnings, "%s: no rank in the trace or its name; rank %lld from argument order",
                          t->path, (long long)i);
        }
    }
    qsort(set->traces, set->count, sizeof *set->traces, cmp_trace);
    for (size_t i = 1; i < set->count; i++)
        if (set->traces[i]->rank == set->traces[i - 1]->rank)
            sc__warnings_add(&set->warnings, "%s and %s both claim rank %lld", set->traces[i - 1]->path,
                          set->traces[i]->path, (long long)set->traces[i]->rank);
    pathlist_free(&files);
    *out = set;
    return SC_OK;
}
