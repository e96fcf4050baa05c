/*
 * test_layers.c - the folders of src/ are stages that only look down.
 *
 * Data flows base -> io -> trace -> readers -> graph -> models -> sim ->
 * transforms -> pipeline -> report, and cli/ sits on top. A file may use
 * its own folder and the folders below it, never one above: that is what
 * lets a newcomer read the tree bottom up and lets a stage be replaced
 * without touching the ones it feeds. Two checks hold the tree to it:
 *   - every #include "..." of src/ and cli/ names a file of the same folder,
 *     a folder below, or the public header (read from the sources);
 *   - every symbol an object file of the build uses that another object of
 *     the library defines comes from the same folder or one below (read with
 *     nm from the objects the build made), so a call upward cannot hide
 *     behind a declaration placed in a lower header.
 * The checker itself is tested on made-up cases, so an empty tree or a
 * broken parser cannot pass.
 */
#include "testutil.h"

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

static const char *const stages[] = {"base",       "io",       "trace",  "readers", "graph", "models",
                                     "sim",        "transforms", "pipeline", "report", "cli"};
#define NSTAGES (sizeof stages / sizeof *stages)

/* The place of a folder in the pipeline; -1 for one that is not a stage. */
static int stage_of(const char *folder) {
    for (size_t i = 0; i < NSTAGES; i++)
        if (strcmp(stages[i], folder) == 0) return (int)i;
    return -1;
}

/* The stage of a path such as "src/graph/build.c" or "cli/main.c"; -1 for
 * anything else (include/stepcast.h, a system header). */
static int stage_of_path(const char *path) {
    char folder[64];
    if (strncmp(path, "cli/", 4) == 0) return stage_of("cli");
    if (strncmp(path, "src/", 4) != 0) return -1;
    const char *slash = strchr(path + 4, '/');
    if (!slash || (size_t)(slash - path - 4) >= sizeof folder) return -1;
    memcpy(folder, path + 4, (size_t)(slash - path - 4));
    folder[slash - path - 4] = '\0';
    return stage_of(folder);
}

/* May a file of stage `from` use one of stage `to`? */
static bool looks_down(int from, int to) { return to < 0 || to <= from; }

/* "src/graph/../models/calibrate.h" -> "src/models/calibrate.h". */
static void normalise(char *path) {
    char *parts[64];
    size_t n = 0;
    for (char *tok = strtok(path, "/"); tok && n < 64; tok = strtok(NULL, "/")) {
        if (strcmp(tok, ".") == 0) continue;
        if (strcmp(tok, "..") == 0) {
            if (n) n--;
            continue;
        }
        parts[n++] = tok;
    }
    char out[PATH_MAX] = "";
    for (size_t i = 0; i < n; i++) {
        if (i) strncat(out, "/", sizeof out - strlen(out) - 1);
        strncat(out, parts[i], sizeof out - strlen(out) - 1);
    }
    strcpy(path, out);
}

typedef struct findings {
    size_t files, includes, symbols;
    char first[512]; /* the first violation, "" when none */
    size_t violations;
} findings;

/* Counts a violation; the first one's "a <verb> b" is kept for the message. */
static void violation(findings *f, const char *a, const char *verb, const char *b) {
    if (!f->violations++) snprintf(f->first, sizeof f->first, "%.200s %s %.200s, a stage above it", a, verb, b);
}

/* Checks the quoted includes of one file (path relative to the top). */
static void check_file(const char *path, findings *f) {
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    f->files++;
    char line[1024];
    int from = stage_of_path(path);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *d = dirname(dir);
    while (fgets(line, sizeof line, in)) {
        char target[512];
        if (sscanf(line, " #include \"%511[^\"]\"", target) != 1) continue;
        f->includes++;
        char resolved[1024];
        snprintf(resolved, sizeof resolved, "%.400s/%s", d, target);
        normalise(resolved);
        if (access(resolved, R_OK) != 0) continue; /* found through -Iinclude: the public header */
        if (!looks_down(from, stage_of_path(resolved))) violation(f, path, "includes", resolved);
    }
    fclose(in);
}

static bool is_source(const char *name) {
    size_t n = strlen(name);
    return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

/* Every .c and .h of dir (one level). */
static void check_dir(const char *dir, findings *f) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_source(e->d_name)) continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        check_file(path, f);
    }
    closedir(d);
}

/* Every folder of src/ is a stage, and every file obeys the order. */
static void test_includes_look_down(void **state) {
    (void)state;
    findings f = {0};
    DIR *d = opendir("src");
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (stage_of(e->d_name) < 0) fail_msg("src/%s is not a stage of the pipeline order", e->d_name);
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "src/%s", e->d_name);
        check_dir(dir, &f);
    }
    closedir(d);
    check_dir("cli", &f);
    printf("# %zu files, %zu includes checked\n", f.files, f.includes);
    assert_true(f.files > 40 && f.includes > 60); /* the tree was read */
    if (f.violations) fail_msg("%zu includes look up; first: %s", f.violations, f.first);
}

/* ------------------------------------------------------------ symbols */

typedef struct symdef {
    char name[128];
    char file[256];
} symdef;

typedef struct symtab {
    symdef *defs;
    size_t n, cap;
} symtab;

static const char *defining_file(const symtab *t, const char *name) {
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->defs[i].name, name) == 0) return t->defs[i].file;
    return NULL;
}

/* The build folder: argv[0] is BUILD/tests/test_layers. */
static char g_build[512] = "build";

/* Runs nm over the objects of the build; calls each(file, type, name) for
 * every symbol line, file relative to the top ("src/graph/build.c"). */
static void each_symbol(void (*each)(void *, const char *, char, const char *), void *ctx) {
    char cmd[1280];
    snprintf(cmd, sizeof cmd, "nm -A %s/obj/src/*/*.o %s/obj/cli/*.o 2>/dev/null", g_build, g_build);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[1024];
    size_t prefix = strlen(g_build) + strlen("/obj/");
    while (fgets(line, sizeof line, p)) {
        char *colon = strchr(line, ':');
        if (!colon || (size_t)(colon - line) <= prefix) continue;
        *colon = '\0';
        char file[256];
        snprintf(file, sizeof file, "%s", line + prefix);
        size_t n = strlen(file);
        if (n > 2 && strcmp(file + n - 2, ".o") == 0) file[n - 1] = 'c';
        /* "ADDRESS TYPE NAME" for a definition, "TYPE NAME" for a use. */
        char tok[3][256];
        int k = sscanf(colon + 1, "%255s %255s %255s", tok[0], tok[1], tok[2]);
        if (k == 3) each(ctx, file, tok[1][0], tok[2]);
        else if (k == 2) each(ctx, file, tok[0][0], tok[1]);
    }
    pclose(p);
}

static void collect_def(void *ctx, const char *file, char type, const char *name) {
    symtab *t = ctx;
    if (type != 'T' && type != 'D' && type != 'B' && type != 'R') return;
    if (strncmp(name, "sc_", 3) != 0 && strncmp(name, "LLVMFuzzer", 10) != 0) return;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 1024;
        t->defs = realloc(t->defs, t->cap * sizeof *t->defs);
        assert_non_null(t->defs);
    }
    snprintf(t->defs[t->n].name, sizeof t->defs[t->n].name, "%s", name);
    snprintf(t->defs[t->n].file, sizeof t->defs[t->n].file, "%s", file);
    t->n++;
}

typedef struct use_ctx {
    const symtab *defs;
    findings *f;
} use_ctx;

static void check_use(void *ctx, const char *file, char type, const char *name) {
    use_ctx *u = ctx;
    if (type != 'U') return;
    const char *def = defining_file(u->defs, name);
    if (!def) return; /* libc, isa-l, zlib */
    u->f->symbols++;
    if (!looks_down(stage_of_path(file), stage_of_path(def))) {
        char what[512];
        snprintf(what, sizeof what, "%.200s uses %.200s,", file, name);
        violation(u->f, what, "defined in", def);
    }
}

static void test_calls_look_down(void **state) {
    (void)state;
    symtab defs = {0};
    each_symbol(collect_def, &defs);
    printf("# %zu library symbols defined\n", defs.n);
    assert_true(defs.n > 200); /* the objects were read */
    findings f = {0};
    use_ctx u = {&defs, &f};
    each_symbol(check_use, &u);
    printf("# %zu uses of library symbols checked\n", f.symbols);
    assert_true(f.symbols > 300); /* and their uses */
    free(defs.defs);
    if (f.violations) fail_msg("%zu uses look up; first: %s", f.violations, f.first);
}

/* ------------------------------------------------------------ the checker */

/* The checker tells up from down: a made-up tree with a file of graph/
 * including one of models/ (above it) is caught, one including trace/ is
 * not, and so is the public header. */
static void test_checker_catches_an_upward_include(void **state) {
    (void)state;
    assert_true(looks_down(stage_of("graph"), stage_of("trace")));
    assert_false(looks_down(stage_of("graph"), stage_of("models")));
    assert_false(looks_down(stage_of("report"), stage_of("cli")));
    assert_int_equal(stage_of_path("src/pipeline/replay.c"), stage_of("pipeline"));
    assert_int_equal(stage_of_path("include/stepcast.h"), -1);

    char root[512];
    snprintf(root, sizeof root, "%.400s/stepcast-layers-%ld", sc_test_tmpdir(), (long)getpid());
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/src/graph %s/src/models %s/src/trace && "
             "printf '#include \"../models/m.h\"\\n#include \"../trace/t.h\"\\n' > %s/src/graph/g.c && "
             ": > %s/src/models/m.h && : > %s/src/trace/t.h",
             root, root, root, root, root, root);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(chdir(root), 0);
    findings f = {0};
    check_file("src/graph/g.c", &f);
    assert_int_equal(chdir(cwd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(f.includes, 2);
    assert_int_equal(f.violations, 1);
    assert_non_null(strstr(f.first, "src/models/m.h"));
}

int main(int argc, char **argv) {
    (void)argc;
    /* BUILD/tests/test_layers -> BUILD */
    char self[512];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(g_build, sizeof g_build, "%s", dirname(dirname(self)));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker_catches_an_upward_include),
        cmocka_unit_test(test_includes_look_down),
        cmocka_unit_test(test_calls_look_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
