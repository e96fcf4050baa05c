/*
 * fuzz_cli.c - libFuzzer target: the command line (every subcommand's
 * option parsing) through the real main(), renamed sc__cli_main in the fuzz
 * build.
 *
 * The input is split into arguments at NUL or newline bytes. The target runs
 * in a private temporary directory holding one tiny trace ("t.json") and a
 * folder ("d"); arguments containing '/' and ".." are dropped so nothing
 * outside that directory is read or written. The exit code must be one of the documented
 * ones (0-3), and any file a command wrote is removed before the next run.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sc__cli_main(int argc, char **argv);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char tiny[] =
    "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
    "\"tid\": 1, \"ts\": 10, \"dur\": 2, \"args\": {\"correlation\": 7}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 13, "
    "\"dur\": 5, \"args\": {\"correlation\": 7, \"stream\": 7, \"device\": 0}}]}\n";

static void put_file(const char *name) {
    FILE *f = fopen(name, "wb");
    if (!f) abort();
    fputs(tiny, f);
    fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    char dir[] = "/tmp/stepcast-fuzz-cli-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) != 0) abort();
    put_file("t.json");
    mkdir("d", 0777);
    put_file("d/r.json");
    if (!freopen("/dev/null", "w", stdout)) abort(); /* reports are not the point */
    return 0;
}

/* Removes whatever a command wrote into the working directory. */
static void clean(void) {
    DIR *d = opendir(".");
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "t.json") &&
            strcmp(de->d_name, "d"))
            unlink(de->d_name);
    if (d) closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    char *argv[66];
    int argc = 0;
    argv[argc++] = "stepcast";
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *p = buf, *end = buf + size;
    while (p <= end && argc < 64) {
        char *q = p;
        while (q < end && *q != '\0' && *q != '\n') q++;
        *q = '\0';
        if (!strchr(p, '/') && strcmp(p, "..") != 0) argv[argc++] = p; /* stay inside */
        p = q + 1;
    }
    argv[argc] = NULL;
    optind = 0; /* reset getopt for commands that use it */
    unsetenv("STEPCAST_MAX_MEMORY"); /* --max-memory sets it: no state between runs */
    int rc = sc__cli_main(argc, argv);
    if (rc < 0 || rc > 3) abort(); /* only the documented exit codes */
    clearerr(stdout);
    clean();
    free(buf);
    return 0;
}
