/*
 * measure.c - bench helper: runs a command and prints its wall time and the
 * peak resident memory of its process tree, so bench/run.sh needs neither
 * GNU time nor Python for end-to-end rows.
 *
 *   measure FIGURE NAME -- COMMAND [ARGS...]
 *
 * prints three bench lines (see bench/run.sh):
 *   FIGURE<TAB>NAME wall<TAB>seconds<TAB>s
 *   FIGURE<TAB>NAME CPU (user + sys)<TAB>seconds<TAB>s
 *   FIGURE<TAB>NAME peak RSS<TAB>MiB<TAB>MiB
 * (CPU time says what the command cost when the shared machine's other
 * users make the wall time swing.)
 * The command's stdout goes to /dev/null, its stderr passes through; a
 * command that fails makes measure exit with its status and print nothing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: measure FIGURE NAME -- COMMAND [ARGS...]\n");
        return 2;
    }
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("measure: fork");
        return 3;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1);
        execvp(argv[4], argv + 4);
        perror("measure: exec");
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("measure: wait");
        return 3;
    }
    double wall = now() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "measure: %s failed (status %d)\n", argv[4],
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    printf("%s\t%s wall\t%.2f\ts\n", argv[1], argv[2], wall);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec * 1e-6;
    printf("%s\t%s CPU (user + sys)\t%.2f\ts\n", argv[1], argv[2], cpu);
    printf("%s\t%s peak RSS\t%.0f\tMiB\n", argv[1], argv[2], (double)ru.ru_maxrss / 1024.0);
    return 0;
}
