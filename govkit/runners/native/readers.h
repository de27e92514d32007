// readers.h: N reader processes behind one pong, for govkit's two native programs
// (cyclone_perf.c and fastdds_perf.cpp include it; it is C that C++ also compiles).
//
// `pong` with READERS > 1 forks READERS children before any DDS call: each child is one
// reader, a participant of its own in a process of its own (as N ROS 2 nodes in N
// processes are), and runs the ordinary pong with its reader index (0 .. READERS-1) in the
// keyval of every pong it writes, so ping can tell the readers' pongs apart. The parent
// stays behind as a relay and creates no DDS entity: govkit keeps talking to one process
// (the pair's pong) in the same line protocol, and the parent
//   - prints `ready T` once every child did (T: the latest child's);
//   - answers `cpu` with the CPU time of all children and its own (`cpu_us U`, summed);
//   - forwards `sched fifo|normal` to every child and answers `sched ok` when all did
//     (else the first child's `sched failed ERRNO`);
//   - answers `count TAG` with the slowest reader's answer (the lowest receive rate
//     later_n / span_us: samples/s delivered to every reader), its discarded_total
//     replaced by the sum over readers, followed by ` readers N` and, per field F of the
//     children's answers (n, later_n, span_us, lost), ` reader_F v0,v1,…` in reader order;
//     `count TAG missing` when any reader is missing that slot's end.
// A child that exits ends the parent with the child's status after stopping the others;
// the children ask the kernel for SIGKILL when the parent dies (PR_SET_PDEATHSIG), and
// share the parent's process group, standard error, CPU affinity and scheduling policy;
// the parent itself then leaves real-time scheduling (readers_fork says why).
// With READERS 1 nothing is forked: the program is what it was, byte for byte.

#ifndef GOVKIT_READERS_H
#define GOVKIT_READERS_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define READERS_MAX 64
#define READERS_LINE 65536

typedef struct {
    int fd;
    size_t len;
    char buf[2 * READERS_LINE];
} readers_in_t;

static int readers_n;
static pid_t readers_pid[READERS_MAX];
static int readers_to[READERS_MAX];
static readers_in_t *readers_from[READERS_MAX];

// Every child stopped and reaped; the first non-zero status of `first` (a child index, or
// -1) is what the parent exits with.
static int readers_finish(int first)
{
    int code = 0;
    for (int k = 0; k < readers_n; k++)
        if (readers_to[k] >= 0) {
            close(readers_to[k]);
            readers_to[k] = -1;
        }
    for (int k = 0; k < readers_n; k++) {
        int status = 0;
        if (k != first && first >= 0)
            kill(readers_pid[k], SIGTERM);
        if (waitpid(readers_pid[k], &status, 0) < 0)
            continue;
        const int c = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (k == first || (first < 0 && code == 0))
            code = c ? c : code;
    }
    return code;
}

// One line from child k (without its newline) into `out`; a child that closed its output
// (exited) ends the parent with its status.
static void readers_line(int k, char *out)
{
    readers_in_t *in = readers_from[k];
    for (;;) {
        char *nl = (char *)memchr(in->buf, '\n', in->len);
        if (nl != NULL) {
            size_t n = (size_t)(nl - in->buf);
            if (n >= READERS_LINE)
                n = READERS_LINE - 1;
            memcpy(out, in->buf, n);
            out[n] = 0;
            in->len -= (size_t)(nl - in->buf) + 1;
            memmove(in->buf, nl + 1, in->len);
            return;
        }
        if (in->len >= sizeof in->buf - 1)
            in->len = 0;                    // a line longer than any answer: dropped
        ssize_t got = read(in->fd, in->buf + in->len, sizeof in->buf - 1 - in->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            fprintf(stderr, "[%ld] error: reader %d of %d exited\n", (long)getpid(), k,
                    readers_n);
            fflush(stderr);
            exit(readers_finish(k));
        }
        in->len += (size_t)got;
    }
}

static void readers_send(const char *line)
{
    const size_t n = strlen(line);
    for (int k = 0; k < readers_n; k++) {
        if (write(readers_to[k], line, n) != (ssize_t)n) {
            // its output closes too: readers_line reports it
        }
    }
}

static long long readers_own_cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL
        + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

// The value of `key` in a `count` answer's "key value" pairs (NULL if absent); `line` is
// left as it was.
static const char *readers_field(const char *line, const char *key, char *value, size_t cap)
{
    char copy[READERS_LINE];
    snprintf(copy, sizeof copy, "%s", line);
    char *save = NULL;
    char *w = strtok_r(copy, " ", &save);
    int i = 0;
    while (w != NULL) {
        char *v = strtok_r(NULL, " ", &save);
        if (v == NULL)
            break;
        if (i >= 1 && strcmp(w, key) == 0) {    // pairs start after "count TAG"
            snprintf(value, cap, "%s", v);
            return value;
        }
        w = strtok_r(NULL, " ", &save);
        i++;
    }
    return NULL;
}

static double readers_number(const char *line, const char *key)
{
    char v[64];
    return readers_field(line, key, v, sizeof v) ? strtod(v, NULL) : 0.0;
}

static void readers_count(const char *command)
{
    static char answers[READERS_MAX][READERS_LINE];
    static char out[READERS_LINE * 2];
    readers_send(command);
    int missing = 0, slowest = 0;
    double slowest_rate = 0;
    for (int k = 0; k < readers_n; k++) {
        readers_line(k, answers[k]);
        if (strstr(answers[k], " missing") != NULL || strncmp(answers[k], "count ", 6) != 0)
            missing = 1;
        const double span = readers_number(answers[k], "span_us");
        const double rate = span > 0 ? readers_number(answers[k], "later_n") / span : 0;
        if (k == 0 || rate < slowest_rate) {
            slowest = k;
            slowest_rate = rate;
        }
    }
    if (missing) {
        unsigned tag = 0;
        sscanf(command, "count %u", &tag);
        printf("count %u missing\n", tag);
        fflush(stdout);
        return;
    }
    // the slowest reader's answer, its running discarded total the readers' sum
    char discarded[64];
    const int has_discarded = readers_field(answers[slowest], "discarded_total", discarded,
                                            sizeof discarded) != NULL;
    unsigned long long total = 0;
    for (int k = 0; k < readers_n && has_discarded; k++)
        total += (unsigned long long)readers_number(answers[k], "discarded_total");
    size_t at = 0;
    char copy[READERS_LINE];
    snprintf(copy, sizeof copy, "%s", answers[slowest]);
    char *save = NULL, *prev = NULL;
    for (char *w = strtok_r(copy, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
        if (prev != NULL && strcmp(prev, "discarded_total") == 0)
            at += (size_t)snprintf(out + at, sizeof out - at, " %llu", total);
        else
            at += (size_t)snprintf(out + at, sizeof out - at, "%s%s", at ? " " : "", w);
        prev = w;
        if (at >= sizeof out)
            at = sizeof out - 1;
    }
    at += (size_t)snprintf(out + at, sizeof out - at, " readers %d", readers_n);
    static const char *const fields[] = {"n", "later_n", "span_us", "lost"};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0] && at < sizeof out; f++) {
        at += (size_t)snprintf(out + at, sizeof out - at, " reader_%s", fields[f]);
        for (int k = 0; k < readers_n && at < sizeof out; k++) {
            char v[64];
            if (readers_field(answers[k], fields[f], v, sizeof v) == NULL)
                snprintf(v, sizeof v, "0");
            at += (size_t)snprintf(out + at, sizeof out - at, "%s%s", k ? "," : " ", v);
        }
    }
    printf("%s\n", out);
    fflush(stdout);
}

// The parent's life: relay govkit's commands to the children until its input closes.
static int readers_relay(void)
{
    static char line[READERS_LINE];
    double latest = 0;
    for (int k = 0; k < readers_n; k++) {
        readers_line(k, line);
        double t = 0;
        if (sscanf(line, "ready %lf", &t) != 1) {
            fprintf(stderr, "[%ld] error: reader %d said %.80s before it was ready\n",
                    (long)getpid(), k, line);
            const int code = readers_finish(-1);
            return code ? code : 5;
        }
        if (t > latest)
            latest = t;
    }
    printf("ready %.6f\n", latest);
    fflush(stdout);
    static char command[4096];
    while (fgets(command, sizeof command, stdin) != NULL) {
        unsigned tag;
        if (strncmp(command, "cpu", 3) == 0) {
            readers_send(command);
            long long total = readers_own_cpu_us();
            for (int k = 0; k < readers_n; k++) {
                readers_line(k, line);
                long long u = 0;
                if (sscanf(line, "cpu_us %lld", &u) == 1)
                    total += u;
            }
            printf("cpu_us %lld\n", total);
        } else if (strncmp(command, "sched ", 6) == 0) {
            readers_send(command);
            static char failed[READERS_LINE];
            failed[0] = 0;
            for (int k = 0; k < readers_n; k++) {
                readers_line(k, line);
                if (strcmp(line, "sched ok") != 0 && failed[0] == 0)
                    snprintf(failed, sizeof failed, "%s", line);
            }
            printf("%s\n", failed[0] ? failed : "sched ok");
        } else if (sscanf(command, "count %u", &tag) == 1) {
            readers_count(command);
        } else {
            readers_send(command);          // anything else: theirs to ignore, as pong does
        }
        fflush(stdout);
    }
    return readers_finish(-1);
}

// READERS > 1: fork the readers; returns the reader index (0 .. READERS-1) in each child,
// never in the parent, which relays (above) and exits. READERS 1: returns 0 at once.
static int readers_fork(int n)
{
    if (n <= 1)
        return 0;
    fflush(stdout);
    fflush(stderr);
    const pid_t parent = getpid();
    readers_n = n;
    for (int k = 0; k < n; k++) {
        int in[2], out[2];
        if (pipe(in) != 0 || pipe(out) != 0) {
            perror("pipe");
            exit(5);
        }
        const pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            exit(5);
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(5);
            dup2(in[0], 0);
            dup2(out[1], 1);
            close(in[0]);
            close(in[1]);
            close(out[0]);
            close(out[1]);
            for (int j = 0; j < k; j++) {
                close(readers_to[j]);
                close(readers_from[j]->fd);
            }
            readers_n = 0;
            return k;
        }
        close(in[0]);
        close(out[1]);
        readers_pid[k] = pid;
        readers_to[k] = in[1];
        readers_from[k] = (readers_in_t *)calloc(1, sizeof(readers_in_t));
        if (readers_from[k] == NULL)
            exit(5);
        readers_from[k]->fd = out[0];
    }
    signal(SIGPIPE, SIG_IGN);
    // The relay is never real-time. It forwards lines, off the measured path, yet chrt gave
    // it SCHED_FIFO with the readers; a Fast DDS relay ending while its 4 readers exited
    // once spun in the kernel under SCHED_FIFO for 77 minutes, deaf to SIGKILL, and starved
    // the machine (load average 1400). Under SCHED_OTHER a spin costs a share, not a CPU.
    // The readers keep the policy they inherited, and `sched` still reaches them.
    struct sched_param normal;
    memset(&normal, 0, sizeof normal);
    if (sched_setscheduler(0, SCHED_OTHER, &normal) != 0) {
        fprintf(stderr, "[%ld] warning: the relay could not leave real-time scheduling "
                "(errno %d)\n", (long)getpid(), errno);
        fflush(stderr);
    }
    exit(readers_relay());
}

#endif
