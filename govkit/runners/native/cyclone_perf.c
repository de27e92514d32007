// cyclone_perf: govkit's latency program for Eclipse Cyclone DDS 0.10 with DDS Security,
// driven in short slots over its standard input (govkit.rotation).
//
// Built by govkit (govkit/cyclone_build.py) with the system C compiler against Debian's
// cyclonedds-dev; the type support comes from cyclone_perf.idl through Cyclone's own idlc.
// Why it exists: ddsperf can only be paused with signals and prints whole seconds, so a
// benchmark that rotates many long-lived process pairs through short slots needs a program
// that starts and stops its ping-pong between two round trips, by command, and hands back
// every sample. It speaks ddsperf's contract where it matters for what is measured and for
// the permissions govkit signs:
//   - type "KeyedSeq" { uint32 seq; @key uint32 keyval; sequence<octet> baggage; } (XCDR1),
//     size S = 12 + baggage length (ddsperf's `size S`);
//   - topics DDSPerfRPingKS / DDSPerfRPongKS, reliable (max blocking 10 s), volatile,
//     KEEP_LAST 1, ignore-local participant (ddsperf's ping/pong QoS);
//   - the pong is written from the ping reader's data-available listener and the next ping
//     from the pong reader's listener, each followed by dds_write_flush (ddsperf's default
//     listener mode); one-way latency = round trip / 2.
//   - throughput: topic DDSPerfRDataKS, reliable (max blocking 10 s), KEEP_ALL, at most
//     10000 samples, ignore-local participant; the writer writes as fast as it can with no
//     flush (ddsperf's `pub` at no rate, batched writes as ddsperf sets them for every
//     writer), the reader takes in its listener (ddsperf's `sub`). The slot's tag and phase ride in `seq` (TAG_SHIFT below), keyval stays 0.
// Unlike ddsperf it uses one fixed partition ("govkit") for both topics: every pair runs on
// a domain of its own, so there is nobody to keep apart.
//
//   cyclone_perf ping|pong DOMAIN [WAIT_S [READERS]]
//                                                 configuration from CYCLONEDDS_URI;
//                                                 GOVKIT_PERF_TOPICS=PING,PONG,DATA names
//                                                 the topics (topic_names below)
//   cyclone_perf discover DOMAIN WAIT_S PEERS     (govkit bench --mode discovery)
//   cyclone_perf pub|sub DOMAIN WAIT_S TOPIC      one named topic (topic_main below)
//
// Both print `ready T` (seconds from the participant's creation until this side's writer
// and reader each matched the peer: discovery plus the secure handshake) and then serve.
// pong serves until standard input closes or SIGINT/SIGTERM, and answers `cpu` with
// `cpu_us U` (the CPU time it has used, user + system, µs) and `count TAG` with what it
// received of throughput slot TAG, once that slot's end marker has arrived:
//   `count TAG n N later_n M span_us S lost L discarded_total D bin_us W bins C1,C2,…`
//   (N samples sent after the settle time, M of them arriving after the first of those,
//   S µs from that first arrival to the last; the receive rate is M / S: what ddsperf's
//   `sub` reports, per slot; D the reader's discarded bytes so far (ddsperf -X; read here,
//   never in the listener, where refreshing the reader's statistics would deadlock); Ck
//   the samples that arrived in the k-th W µs after the first, so govkit can see the rate
//   settle).
// ping reads commands:
//   slot SIZE SETTLE_US MEASURE_US   ping-pong for SETTLE_US + MEASURE_US microseconds;
//                                    the first round trips (those sent in the settle time)
//                                    are kept apart; then one `slot …` line (below)
//   tput SIZE SETTLE_US MEASURE_US TAG [RATE]   throughput: write SIZE-byte samples on
//                                    ddsperf's data topic for SETTLE_US + MEASURE_US, as
//                                    fast as the reliable writer lets it (RATE 0 or absent)
//                                    or paced at RATE samples/s (ddsperf's `pub R`), then
//                                    an end marker (pong's `count` waits for it); then
//                                    `tslot SIZE sent N settle_sent K
//                                    cpu_us U wall_us W peers P rexmit_bytes B
//                                    time_rexmit_ns T throttle_count C time_throttle_ns H`
//                                    (the writer's protocol counters during the slot, as
//                                    ddsperf -X prints them)
//   quit                             (or end of input) delete the participant and exit
// Both sides also take `sched fifo|normal`: every thread of the process to SCHED_FIFO
// priority 1 or to normal scheduling (govkit runs latency slots real-time and throughput
// slots as ddsperf runs, normally); the answer is `sched ok` or `sched failed ERRNO`.
// Slot line (one line, latencies in µs, percentiles exact: nearest rank over the samples
// sent after the settle time):
//   slot SIZE n N settle_n K mean M min A p50 B p90 C p99 D max E cpu_us U wall_us W
//        peers P tl X,Y,… hist B:C,…
// tl: the median of each 25 ms of the slot, settle time included (how long settling takes);
// hist: every measured sample in bins of 1 % (bin b holds latencies in [1.01^b, 1.01^(b+1))
// ns), so govkit can pool true sample percentiles over slots. peers: the most readers
// or writers matched on the two topics; more than 1 means a stranger joined the domain.
//
// discover: one of PEERS participants started together, each with a writer and a reader on
// ddsperf's ping topic. It prints `matched T` once its writer and its reader have each
// matched the other PEERS - 1 participants' (T: seconds from before the participant's
// creation: discovery plus every secure handshake), then serves until standard input
// closes, so that the others can still match it.
//
// Readers (READERS > 1, both sides given the same number; at most 64): pong forks READERS
// reader processes, each a participant with the pong's endpoints, and relays for them
// (readers.h says how); each reader's pongs carry its index in keyval. ping waits until
// its writers and its pong reader matched all READERS, sends the next ping once every
// reader's pong of the current one is back, and takes each reader's one-way latency as
// that reader's round trip / 2. The slot line's n, mean, percentiles, tl and hist are then
// per ping, the slowest reader's one-way latency (when the last reader had answered), and
// after hist come, in reader order, ` readers N reader_n … reader_mean … reader_min …
// reader_p50 … reader_p90 … reader_p99 … reader_max …` (comma lists over the readers,
// each over that reader's round trips sent after the settle time). peers is then N.
// With READERS 1 (or absent) every line is what it was.
//
// Exit codes: 0 done, 2 usage, 3 participant not created, 4 no match within WAIT_S,
// 5 another DDS call failed, 6 a slot's round trip did not come back within 10 s.

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"
#include "dds/ddsc/dds_statistics.h"
#include "cyclone_perf_types.h"
#include "readers.h"

enum { EXIT_DONE = 0, EXIT_USAGE = 2, EXIT_PARTICIPANT = 3, EXIT_NO_MATCH = 4, EXIT_DDS = 5,
       EXIT_STUCK = 6 };

#define KS_FIXED 12u
#define TIMELINE_NS 25000000LL
#define HIST_BASE 1.01

static dds_entity_t g_pp, g_wr, g_rd;
static dds_entity_t g_data;      // ping: the throughput writer; pong: its reader
static long g_pid;
static volatile sig_atomic_t g_stop;
static int g_readers = 1;        // ping: how many readers answer each ping
static int g_reader_index;       // pong: this reader's index, in its pongs' keyval

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[%ld] error: ", g_pid);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    if (g_pp > 0)
        dds_delete(g_pp);
    exit(code);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL
        + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

// The protocol counters ddsperf -X prints (Cyclone's entity statistics), read per slot.
static struct dds_statistics *g_stats;    // ping: the data writer's; pong: the reader's

static uint64_t stat_value(const char *name)
{
    if (g_stats == NULL)
        return 0;
    const struct dds_stat_keyvalue *kv = dds_lookup_statistic(g_stats, name);
    if (kv == NULL)
        return 0;
    return kv->kind == DDS_STAT_KIND_UINT32 ? kv->u.u32
        : kv->kind == DDS_STAT_KIND_UINT64 ? kv->u.u64 : kv->u.lengthtime;
}

// Whether thread `tid` of this process is Cyclone's security handshake thread ("fsm").
static int is_handshake_thread(const char *tid)
{
    char path[64], name[32] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    const int read = fgets(name, sizeof name, f) != NULL;
    fclose(f);
    return read && strcmp(name, "fsm\n") == 0;
}

// Every thread of this process to SCHED_FIFO 1 (`fifo`) or SCHED_OTHER (chrt set only the
// first thread's policy; the others inherited it when Cyclone created them), except
// Cyclone's security handshake thread, which always runs under SCHED_OTHER: it does no
// per-sample work, and under SCHED_FIFO a spin of it never yields to the equal-priority
// threads pinned to its CPU (2026-12-07, Cyclone 0.10.2, a machine loaded by other runs:
// one pair's fsm thread spun at 100 % of CPU 0 under SCHED_FIFO for 12 minutes, its pair
// stalled and the machine's load average reached 300). 0 or the last errno.
static int apply_policy(int fifo)
{
    int err = 0;
    DIR *dir = opendir("/proc/self/task");
    if (dir == NULL)
        return errno;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        const int thread_fifo = fifo && !is_handshake_thread(e->d_name);
        struct sched_param param = {.sched_priority = thread_fifo ? 1 : 0};
        if (sched_setscheduler((pid_t)atol(e->d_name), thread_fifo ? SCHED_FIFO : SCHED_OTHER,
                               &param) != 0 && errno != ESRCH)
            err = errno;
    }
    closedir(dir);
    return err;
}

// Once the handshake thread exists: the process's threads keep the policy chrt gave it,
// but the handshake thread is taken off SCHED_FIFO (apply_policy says why).
static void handshake_thread_normal(void)
{
    if (sched_getscheduler(0) == SCHED_FIFO)
        apply_policy(1);
}

static void set_policy(const char *which)
{
    const int err = apply_policy(strncmp(which, "fifo", 4) == 0);
    if (err)
        printf("sched failed %d\n", err);
    else
        printf("sched ok\n");
    fflush(stdout);
}

// ------------------------------------------------------------------------- a slot's state

typedef struct { int64_t sent; int64_t oneway; } sample_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;
static KeyedSeq g_ping;          // the sample ping sends (baggage sized per slot)
static int64_t g_sent_at;        // when the outstanding ping was written
static int64_t g_slot_end;       // no new ping is sent after this
static int g_running;            // 1 while a slot runs; 0 once its last pong came back
static sample_t *g_samples;
static size_t g_nsamples, g_capacity;
// READERS > 1: each reader's samples, and which readers answered the outstanding ping
typedef struct { sample_t *v; size_t n, cap; } samples_t;
static samples_t g_reader_samples[READERS_MAX];
static uint64_t g_answered;
static int64_t g_round_oneway;   // the slowest answer so far of the outstanding ping

static void push_sample(sample_t **v, size_t *n, size_t *cap, int64_t sent, int64_t oneway)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 65536;
        *v = realloc(*v, *cap * sizeof **v);
        if (!*v)
            die(EXIT_DDS, "out of memory for samples");
    }
    (*v)[*n].sent = sent;
    (*v)[*n].oneway = oneway;
    (*n)++;
}

// Throughput samples' seq: the slot's tag (8 bits), its phase (2 bits), a counter (22 bits;
// a gap in the counter is a lost sample).
#define TAG_SHIFT 24
#define PHASE_SHIFT 22
#define CTR_MASK 0x3fffffu
enum { PH_SETTLE = 0, PH_MEASURE = 1, PH_END = 2 };

static void size_baggage(KeyedSeq *s, uint32_t size)
{
    if (size < KS_FIXED)
        die(EXIT_USAGE, "slot size %" PRIu32 " is below %u bytes", size, KS_FIXED);
    uint32_t len = size - KS_FIXED;
    if (s->baggage._length == len && s->baggage._buffer)
        return;
    free(s->baggage._buffer);
    s->baggage._buffer = malloc(len ? len : 1);
    if (!s->baggage._buffer)
        die(EXIT_DDS, "out of memory for a %" PRIu32 "-byte sample", size);
    memset(s->baggage._buffer, 0xee, len);   // ddsperf's filler
    s->baggage._length = s->baggage._maximum = len;
    s->baggage._release = false;
}

static void send_ping_locked(void)
{
    g_ping.seq++;
    g_answered = 0;
    g_round_oneway = 0;
    g_sent_at = now_ns();
    dds_return_t rc = dds_write(g_wr, &g_ping);
    if (rc < 0 && rc != DDS_RETCODE_TIMEOUT)
        die(EXIT_DDS, "dds_write (ping): %s", dds_strretcode(rc));
    dds_write_flush(g_wr);
}

static void on_pong(dds_entity_t rd, void *arg)
{
    (void)arg;
    void *buf[1] = {NULL};
    dds_sample_info_t info[1];
    int32_t n;
    // one at a time, until none is left: with several readers their pongs may be waiting
    while ((n = dds_take(rd, buf, info, 1, 1)) > 0) {
        const int64_t t = now_ns();
        const uint32_t seq = ((KeyedSeq *)buf[0])->seq;
        const uint32_t reader = ((KeyedSeq *)buf[0])->keyval;
        const bool valid = info[0].valid_data;
        dds_return_loan(rd, buf, n);
        buf[0] = NULL;
        pthread_mutex_lock(&g_lock);
        const uint64_t bit = (uint64_t)1 << (reader % READERS_MAX);
        if (valid && g_running && seq == g_ping.seq && reader < (uint32_t)g_readers
                && !(g_answered & bit)) {
            const int64_t oneway = (t - g_sent_at) / 2;
            g_answered |= bit;
            if (oneway > g_round_oneway)
                g_round_oneway = oneway;
            if (g_readers > 1) {
                samples_t *r = &g_reader_samples[reader];
                push_sample(&r->v, &r->n, &r->cap, g_sent_at, oneway);
            }
            if (g_answered == (g_readers == READERS_MAX ? ~(uint64_t)0
                               : ((uint64_t)1 << g_readers) - 1)) {
                // every reader has it: one sample, the slowest reader's one-way latency
                push_sample(&g_samples, &g_nsamples, &g_capacity, g_sent_at, g_round_oneway);
                if (t < g_slot_end)
                    send_ping_locked();
                else {
                    g_running = 0;
                    pthread_cond_signal(&g_done);
                }
            }
        }
        pthread_mutex_unlock(&g_lock);
    }
}

static void on_ping(dds_entity_t rd, void *arg)
{
    (void)arg;
    void *buf[1] = {NULL};
    dds_sample_info_t info[1];
    int32_t n = dds_take(rd, buf, info, 1, 1);
    if (n <= 0)
        return;
    if (info[0].valid_data) {
        ((KeyedSeq *)buf[0])->keyval = (uint32_t)g_reader_index;   // which reader answers
        dds_return_t rc = dds_write(g_wr, buf[0]);
        if (rc < 0 && rc != DDS_RETCODE_TIMEOUT)
            die(EXIT_DDS, "dds_write (pong): %s", dds_strretcode(rc));
        dds_write_flush(g_wr);
    }
    dds_return_loan(rd, buf, n);
}

// ---------------------------------------------------------------------- slot statistics

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double nearest_rank(const int64_t *sorted, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    if (k < 1)
        k = 1;
    return (double)sorted[k - 1] / 1e3;
}

// Readers matched by the writer and writers matched by the reader: the fewer of the two
// (ready: both matched the peer) or the more (a stranger on the domain makes it above 1).
static int peers(int most)
{
    dds_publication_matched_status_t pm;
    dds_subscription_matched_status_t sm;
    if (dds_get_publication_matched_status(g_wr, &pm) < 0
            || dds_get_subscription_matched_status(g_rd, &sm) < 0)
        return -1;
    uint32_t a = pm.current_count, b = sm.current_count;
    if (g_data > 0) {       // the throughput endpoint counts like the other two
        uint32_t c;
        if (dds_get_publication_matched_status(g_data, &pm) >= 0)
            c = pm.current_count;
        else if (dds_get_subscription_matched_status(g_data, &sm) >= 0)
            c = sm.current_count;
        else
            return -1;
        a = most ? (a > c ? a : c) : (a < c ? a : c);
    }
    return (int)(most ? (a > b ? a : b) : (a < b ? a : b));
}

// READERS > 1: each reader's statistics over its samples sent after the settle time, as
// comma lists in reader order (the module comment).
static void report_readers(int64_t start, int64_t settle_ns)
{
    static const char *const names[] = {"n", "mean", "min", "p50", "p90", "p99", "max"};
    double stat[READERS_MAX][7];
    for (int k = 0; k < g_readers; k++) {
        const samples_t *r = &g_reader_samples[k];
        int64_t *v = malloc((r->n + 1) * sizeof *v);
        if (!v)
            die(EXIT_DDS, "out of memory for statistics");
        size_t m = 0;
        double sum = 0;
        for (size_t i = 0; i < r->n; i++)
            if (r->v[i].sent - start >= settle_ns) {
                v[m++] = r->v[i].oneway;
                sum += (double)r->v[i].oneway;
            }
        memset(stat[k], 0, sizeof stat[k]);
        stat[k][0] = (double)m;
        if (m > 0) {
            qsort(v, m, sizeof *v, cmp_i64);
            stat[k][1] = sum / m / 1e3;
            stat[k][2] = v[0] / 1e3;
            stat[k][3] = nearest_rank(v, m, 0.5);
            stat[k][4] = nearest_rank(v, m, 0.9);
            stat[k][5] = nearest_rank(v, m, 0.99);
            stat[k][6] = v[m - 1] / 1e3;
        }
        free(v);
    }
    printf(" readers %d", g_readers);
    for (int f = 0; f < 7; f++) {
        printf(" reader_%s", names[f]);
        for (int k = 0; k < g_readers; k++) {
            if (f == 0)
                printf("%s%.0f", k ? "," : " ", stat[k][f]);
            else
                printf("%s%.3f", k ? "," : " ", stat[k][f]);
        }
    }
}

static void report_slot(uint32_t size, int64_t start, int64_t settle_ns, int64_t cpu,
                        int64_t wall)
{
    size_t n = 0, nsettle = 0;
    int64_t *v = malloc((g_nsamples + 1) * sizeof *v);
    double sum = 0;
    if (!v)
        die(EXIT_DDS, "out of memory for statistics");
    for (size_t i = 0; i < g_nsamples; i++) {
        if (g_samples[i].sent - start < settle_ns)
            nsettle++;
        else {
            v[n++] = g_samples[i].oneway;
            sum += (double)g_samples[i].oneway;
        }
    }
    printf("slot %" PRIu32 " n %zu settle_n %zu", size, n, nsettle);
    if (n > 0) {
        qsort(v, n, sizeof *v, cmp_i64);
        printf(" mean %.3f min %.3f p50 %.3f p90 %.3f p99 %.3f max %.3f", sum / n / 1e3,
               v[0] / 1e3, nearest_rank(v, n, 0.5), nearest_rank(v, n, 0.9),
               nearest_rank(v, n, 0.99), v[n - 1] / 1e3);
    }
    printf(" cpu_us %" PRId64 " wall_us %" PRId64 " peers %d", cpu, wall / 1000, peers(1));
    // timeline: median of each 25 ms, settle included (samples are in send order)
    printf(" tl ");
    size_t i = 0;
    int first = 1;
    while (i < g_nsamples) {
        int64_t bucket = (g_samples[i].sent - start) / TIMELINE_NS;
        size_t j = i, m = 0;
        while (j < g_nsamples && (g_samples[j].sent - start) / TIMELINE_NS == bucket)
            v[m++] = g_samples[j++].oneway;
        qsort(v, m, sizeof *v, cmp_i64);
        printf("%s%.2f", first ? "" : ",", nearest_rank(v, m, 0.5));
        first = 0;
        i = j;
    }
    // histogram of the measured samples (1 % bins), sparse, in increasing bin order
    printf(" hist ");
    n = 0;
    for (size_t k = 0; k < g_nsamples; k++)
        if (g_samples[k].sent - start >= settle_ns)
            v[n++] = g_samples[k].oneway;
    qsort(v, n, sizeof *v, cmp_i64);
    first = 1;
    const double lb = log(HIST_BASE);
    for (size_t k = 0; k < n;) {
        long bin = v[k] > 0 ? (long)floor(log((double)v[k]) / lb) : 0;
        size_t c = 0;
        while (k < n && (v[k] > 0 ? (long)floor(log((double)v[k]) / lb) : 0) == bin) {
            c++;
            k++;
        }
        printf("%s%ld:%zu", first ? "" : ",", bin, c);
        first = 0;
    }
    free(v);
    if (g_readers > 1)
        report_readers(start, settle_ns);
    printf("\n");
    fflush(stdout);
}

static void run_slot(uint32_t size, int64_t settle_us, int64_t measure_us)
{
    size_baggage(&g_ping, size);
    const int64_t cpu0 = cpu_us();
    pthread_mutex_lock(&g_lock);
    g_nsamples = 0;
    for (int k = 0; k < g_readers; k++)
        g_reader_samples[k].n = 0;
    const int64_t start = now_ns();
    g_slot_end = start + (settle_us + measure_us) * 1000;
    g_running = 1;
    send_ping_locked();
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)((settle_us + measure_us) / 1000000 + 10);
    while (g_running) {
        if (pthread_cond_timedwait(&g_done, &g_lock, &deadline) == ETIMEDOUT && g_running) {
            pthread_mutex_unlock(&g_lock);
            die(EXIT_STUCK, "ping %" PRIu32 " of a %" PRIu32 "-byte slot was not answered "
                "within 10 s (the pong process stopped?)", g_ping.seq, size);
        }
    }
    const int64_t wall = now_ns() - start;
    pthread_mutex_unlock(&g_lock);
    report_slot(size, start, settle_us * 1000, cpu_us() - cpu0, wall);
}

// ------------------------------------------------------------------------ throughput

static KeyedSeq g_tput;          // the sample ping writes in throughput slots

static void run_tput(uint32_t size, int64_t settle_us, int64_t measure_us, uint32_t tag,
                     double rate)
{
    size_baggage(&g_tput, size);
    g_tput.keyval = 0;
    if (g_stats)
        dds_refresh_statistics(g_stats);
    const uint64_t rexmit0 = stat_value("rexmit_bytes"), trexmit0 = stat_value("time_rexmit");
    const uint64_t nthrottle0 = stat_value("throttle_count");
    const uint64_t tthrottle0 = stat_value("time_throttle");
    const int64_t cpu0 = cpu_us();
    const int64_t start = now_ns();
    const int64_t measure_from = start + settle_us * 1000;
    const int64_t end = measure_from + measure_us * 1000;
    // paced: sample k is due at start + k / rate; ahead of that, flush what is batched and
    // sleep (ddsperf's `pub R` does the same in bursts)
    const double ns_per_sample = rate > 0 ? 1e9 / rate : 0;
    uint64_t sent = 0, settle_sent = 0;
    uint32_t ctr = 0;
    for (int64_t t = start; t < end && !g_stop; t = now_ns()) {
        if (rate > 0) {
            const int64_t due = start + (int64_t)((double)(sent + settle_sent) * ns_per_sample);
            if (t < due) {
                dds_write_flush(g_data);
                struct timespec ts = {.tv_sec = (due - t) / 1000000000LL,
                                      .tv_nsec = (due - t) % 1000000000LL};
                nanosleep(&ts, NULL);
                continue;
            }
        }
        const uint32_t phase = t < measure_from ? PH_SETTLE : PH_MEASURE;
        g_tput.seq = (tag << TAG_SHIFT) | (phase << PHASE_SHIFT) | (ctr++ & CTR_MASK);
        dds_return_t rc = dds_write(g_data, &g_tput);
        if (rc == DDS_RETCODE_TIMEOUT)
            die(EXIT_STUCK, "a %" PRIu32 "-byte throughput sample blocked for 10 s (the pong "
                "process stopped?)", size);
        if (rc < 0)
            die(EXIT_DDS, "dds_write (data): %s", dds_strretcode(rc));
        if (phase == PH_SETTLE)
            settle_sent++;
        else
            sent++;
    }
    // the end marker, sent at once. No wait for the acknowledgements: the reader
    // acknowledges on the writer's next heartbeat (100 ms by default), so waiting made a
    // 100 ms slot last 230 ms, half of a round's time (2026-12-04). pong's `count` waits for
    // the end marker, which arrives after every sample of the slot (reliable, in order), so
    // no slot's data runs into the next; what follows is the protocol's bookkeeping alone
    // (a retransmission would be counted in rexmit_bytes, and none was seen on loopback).
    g_tput.seq = (tag << TAG_SHIFT) | ((uint32_t)PH_END << PHASE_SHIFT) | (ctr & CTR_MASK);
    dds_return_t rc = dds_write(g_data, &g_tput);
    if (rc >= 0)
        dds_write_flush(g_data);
    if (rc == DDS_RETCODE_TIMEOUT)
        die(EXIT_STUCK, "the throughput slot's end marker blocked for 10 s (the pong process "
            "stopped?)");
    if (rc < 0)
        die(EXIT_DDS, "throughput slot end: %s", dds_strretcode(rc));
    const int64_t wall = now_ns() - start;
    const int64_t cpu = cpu_us() - cpu0;
    if (g_stats)
        dds_refresh_statistics(g_stats);
    printf("tslot %" PRIu32 " sent %" PRIu64 " settle_sent %" PRIu64 " cpu_us %" PRId64
           " wall_us %" PRId64 " peers %d rexmit_bytes %" PRIu64 " time_rexmit_ns %" PRIu64
           " throttle_count %" PRIu64 " time_throttle_ns %" PRIu64 "\n", size, sent,
           settle_sent, cpu, wall / 1000, peers(1), stat_value("rexmit_bytes") - rexmit0,
           stat_value("time_rexmit") - trexmit0, stat_value("throttle_count") - nthrottle0,
           stat_value("time_throttle") - tthrottle0);
    fflush(stdout);
}

// pong's count of the current throughput slot (one slot at a time: a new tag resets it)
static pthread_mutex_t g_count_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_count_done = PTHREAD_COND_INITIALIZER;
#define BIN_NS 5000000LL           // arrivals counted per 5 ms from the first
#define MAX_BINS 4096
static struct {
    uint32_t tag, next;
    int any, ended;
    uint64_t n, first_n, lost;
    int64_t first, last;
    uint32_t nbins;
    uint32_t bins[MAX_BINS];
} g_count = {.tag = UINT32_MAX};

// The samples on_data takes into: a loan kept from one take to the next, never returned
// until exit, as ddsperf's `sub` keeps its own (returning it each time freed and
// reallocated every sample's baggage: 430-540k samples/s at 32 B where ddsperf's sub
// took 610-820k, the pong at 85 % of a core).
static void *g_rx[256];

static void on_data(dds_entity_t rd, void *arg)
{
    (void)arg;
    void **buf = g_rx;
    dds_sample_info_t info[256];
    int32_t n = dds_take(rd, buf, info, 256, 256);
    if (n <= 0)
        return;
    const int64_t t = now_ns();
    pthread_mutex_lock(&g_count_lock);
    for (int32_t i = 0; i < n; i++) {
        if (!info[i].valid_data)
            continue;
        const uint32_t seq = ((KeyedSeq *)buf[i])->seq;
        const uint32_t tag = seq >> TAG_SHIFT, phase = (seq >> PHASE_SHIFT) & 3u;
        const uint32_t ctr = seq & CTR_MASK;
        if (tag != g_count.tag) {
            memset(&g_count, 0, sizeof g_count);
            g_count.tag = tag;
        }
        if (g_count.any && ctr != g_count.next)
            g_count.lost += (ctr - g_count.next) & CTR_MASK;
        g_count.any = 1;
        g_count.next = (ctr + 1) & CTR_MASK;
        if (phase == PH_MEASURE) {
            if (g_count.n == 0)
                g_count.first = t;
            g_count.n++;
            if (t == g_count.first)
                g_count.first_n++;      // arrived with the first: not inside the span
            g_count.last = t;
            const int64_t bin = (t - g_count.first) / BIN_NS;
            if (bin < MAX_BINS) {
                g_count.bins[bin]++;
                if ((uint32_t)bin + 1 > g_count.nbins)
                    g_count.nbins = (uint32_t)bin + 1;
            }
        } else if (phase == PH_END) {
            g_count.ended = 1;
            pthread_cond_broadcast(&g_count_done);
        }
    }
    pthread_mutex_unlock(&g_count_lock);
}

static void answer_count(uint32_t tag)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&g_count_lock);
    while (!(g_count.tag == tag && g_count.ended)) {
        if (pthread_cond_timedwait(&g_count_done, &g_count_lock, &deadline) == ETIMEDOUT)
            break;
    }
    if (g_count.tag == tag && g_count.ended) {
        if (g_stats)
            dds_refresh_statistics(g_stats);
        printf("count %" PRIu32 " n %" PRIu64 " later_n %" PRIu64 " span_us %" PRId64
               " lost %" PRIu64 " discarded_total %" PRIu64 " bin_us %lld bins ", tag,
               g_count.n, g_count.n - g_count.first_n, (g_count.last - g_count.first) / 1000,
               g_count.lost, stat_value("discarded_bytes"), BIN_NS / 1000);
        for (uint32_t k = 0; k < g_count.nbins; k++)
            printf("%s%" PRIu32, k ? "," : "", g_count.bins[k]);
        if (g_count.nbins == 0)
            printf("-");
        printf("\n");
    } else
        printf("count %" PRIu32 " missing\n", tag);
    pthread_mutex_unlock(&g_count_lock);
    fflush(stdout);
}

// ---------------------------------------------------------------------------- set-up

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void check(dds_entity_t e, const char *what)
{
    if (e < 0)
        die(EXIT_DDS, "%s: %s", what, dds_strretcode(e));
}

// ------------------------------------------------------------------------- topic names

// GOVKIT_PERF_TOPICS=PING,PONG,DATA names the ping, pong and data topics of `ping`/`pong`
// (govkit bench --policy: each protection class's point runs on names its rule covers);
// unset, they are ddsperf's. Names may repeat: ping and pong on one topic work because
// both sides' endpoints are ignore-local (a side never reads its own samples, so pong's
// reader sees only pings and ping's only pongs; measured with a one-name class, issue 33);
// the data endpoints then sit in a partition of their own. Returns 1 renamed, 0 not,
// -1 malformed.
#define TOPICS_ENV "GOVKIT_PERF_TOPICS"
static int topic_names(char names[3][256])
{
    static const char *ddsperf[3] = { "DDSPerfRPingKS", "DDSPerfRPongKS", "DDSPerfRDataKS" };
    const char *given = getenv(TOPICS_ENV);
    if (given == NULL) {
        for (int i = 0; i < 3; i++)
            snprintf(names[i], 256, "%s", ddsperf[i]);
        return 0;
    }
    const char *at = given;
    for (int i = 0; i < 3; i++) {
        const char *end = i < 2 ? strchr(at, ',') : at + strlen(at);
        if (end == NULL || end == at || end - at >= 256 || (i == 2 && strchr(at, ',')))
            return -1;
        memcpy(names[i], at, (size_t)(end - at));
        names[i][end - at] = 0;
        at = end + 1;
    }
    return 1;
}

// ------------------------------------------------------------------------- one named topic

// `cyclone_perf pub|sub DOMAIN WAIT_S TOPIC`: one writer (pub) or one reader (sub) on TOPIC
// (ddsperf's type) in the default partition, nothing else: what a ROS 2 node's endpoint is
// under an sros2 policy's grants (govkit generate --policy; rt/chatter and the like). Prints
// `ready T` once it matched a peer (discovery and the secure handshake), then pub writes
// one sample every 10 ms and sub prints `received N` after every 10 samples, until stdin
// closes or a signal. An endpoint that access control refuses (a topic the grant denies)
// ends the process at once with "writer on TOPIC: ..." (exit 5), after Cyclone's own log
// line saying why.
static int topic_main(char **argv)
{
    const int pub = strcmp(argv[1], "pub") == 0;
    char *end;
    long domain = strtol(argv[2], &end, 10);
    if (*end || domain < 0 || domain > 230) {
        fprintf(stderr, "cyclone_perf: domain %s: use 0 .. 230\n", argv[2]);
        return EXIT_USAGE;
    }
    double wait_s = strtod(argv[3], &end);
    if (*end || wait_s <= 0) {
        fprintf(stderr, "cyclone_perf: wait %s: use a positive number of seconds\n", argv[3]);
        return EXIT_USAGE;
    }
    const char *name = argv[4];
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    const int64_t t0 = now_ns();
    g_pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (g_pp < 0) {
        fprintf(stderr, "[%ld] error: participant on domain %ld not created: %s (see Cyclone's "
                "log lines above)\n", g_pid, domain, dds_strretcode(g_pp));
        return EXIT_PARTICIPANT;
    }
    dds_entity_t tp = dds_create_topic(g_pp, &KeyedSeq_desc, name, NULL, NULL);
    if (tp < 0)
        die(EXIT_DDS, "topic %s: %s", name, dds_strretcode(tp));
    dds_qos_t *qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 10);
    dds_entity_t ep = pub ? dds_create_writer(g_pp, tp, qos, NULL)
                          : dds_create_reader(g_pp, tp, qos, NULL);
    dds_delete_qos(qos);
    if (ep < 0)
        die(EXIT_DDS, "%s on %s: %s", pub ? "writer" : "reader", name, dds_strretcode(ep));
    for (;;) {
        int32_t matched = 0;
        if (pub) {
            dds_publication_matched_status_t st;
            if (dds_get_publication_matched_status(ep, &st) == 0)
                matched = st.current_count;
        } else {
            dds_subscription_matched_status_t st;
            if (dds_get_subscription_matched_status(ep, &st) == 0)
                matched = st.current_count;
        }
        if (matched > 0)
            break;
        if (g_stop)
            die(EXIT_DONE, "stopped before a peer matched");
        if (now_ns() - t0 > (int64_t)(wait_s * 1e9))
            die(EXIT_NO_MATCH, "no peer matched on %s within %g s (refused by the peer's "
                "security, or no peer on domain %ld)", name, wait_s, domain);
        dds_sleepfor(DDS_MSECS(1));
    }
    handshake_thread_normal();      // Cyclone starts it with the first handshake
    printf("ready %.6f\n", (double)(now_ns() - t0) / 1e9);
    fflush(stdout);
    KeyedSeq sample;
    memset(&sample, 0, sizeof sample);
    long received = 0;
    while (!g_stop) {
        fd_set in;
        FD_ZERO(&in);
        FD_SET(0, &in);
        struct timeval tv = { 0, 10000 };
        if (select(1, &in, NULL, NULL, &tv) > 0) {
            char buf[256];
            if (read(0, buf, sizeof buf) <= 0)
                break;   // stdin closed: govkit is done
        }
        if (pub) {
            sample.seq++;
            dds_return_t rc = dds_write(ep, &sample);
            if (rc < 0)
                die(EXIT_DDS, "dds_write on %s: %s", name, dds_strretcode(rc));
            continue;
        }
        void *samples[1] = { NULL };
        dds_sample_info_t info[1];
        int n;
        while ((n = dds_take(ep, samples, info, 1, 1)) > 0) {
            if (info[0].valid_data && ++received % 10 == 0) {
                printf("received %ld\n", received);
                fflush(stdout);
            }
            dds_return_loan(ep, samples, n);
        }
    }
    dds_delete(g_pp);
    return EXIT_DONE;
}

int main(int argc, char **argv)
{
    g_pid = (long)getpid();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 5 && (strcmp(argv[1], "pub") == 0 || strcmp(argv[1], "sub") == 0))
        return topic_main(argv);
    const int discover = argc == 5 && strcmp(argv[1], "discover") == 0;
    if (!discover && (argc < 3 || argc > 5 || (strcmp(argv[1], "ping") && strcmp(argv[1], "pong")))) {
        fprintf(stderr, "usage: cyclone_perf ping|pong DOMAIN [WAIT_S [READERS]]\n"
                        "       cyclone_perf discover DOMAIN WAIT_S PEERS\n"
                        "       cyclone_perf pub|sub DOMAIN WAIT_S TOPIC\n");
        return EXIT_USAGE;
    }
    const int ping = strcmp(argv[1], "ping") == 0;
    char *end;
    long domain = strtol(argv[2], &end, 10);
    if (*end || domain < 0 || domain > 230) {
        fprintf(stderr, "cyclone_perf: domain %s: use 0 .. 230\n", argv[2]);
        return EXIT_USAGE;
    }
    double wait_s = argc >= 4 ? strtod(argv[3], &end) : 20.0;
    if (argc >= 4 && (*end || wait_s <= 0)) {
        fprintf(stderr, "cyclone_perf: wait %s: use a positive number of seconds\n", argv[3]);
        return EXIT_USAGE;
    }
    long readers = !discover && argc == 5 ? strtol(argv[4], &end, 10) : 1;
    if (!discover && argc == 5 && (*end || readers < 1 || readers > READERS_MAX)) {
        fprintf(stderr, "cyclone_perf: readers %s: use 1 .. %d\n", argv[4], READERS_MAX);
        return EXIT_USAGE;
    }
    long npeers = discover ? strtol(argv[4], &end, 10) : 2;
    if (discover && (*end || npeers < 2 || npeers > 1000)) {
        fprintf(stderr, "cyclone_perf: peers %s: use 2 .. 1000\n", argv[4]);
        return EXIT_USAGE;
    }
    if (ping)
        g_readers = (int)readers;
    else
        g_reader_index = readers_fork((int)readers);   // the parent relays and never returns
    g_pid = (long)getpid();
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);

    const int64_t t0 = now_ns();
    g_pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (g_pp < 0) {
        fprintf(stderr, "[%ld] error: participant on domain %ld not created: %s (see Cyclone's "
                "log lines above)\n", g_pid, domain, dds_strretcode(g_pp));
        return EXIT_PARTICIPANT;
    }
    // ddsperf's write mode: batched, so a write only queues its message and a flush (after
    // every ping and pong) or a full packet sends it; throughput samples then share
    // packets as ddsperf's do (without it each went out alone: 4-8x fewer samples/s).
    dds_write_set_batch(true);
    char names[3][256];
    const int renamed = topic_names(names);
    if (renamed < 0)
        die(EXIT_USAGE, "%s: give PING,PONG,DATA (three topic names, none empty)", TOPICS_ENV);
    dds_qos_t *qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_entity_t tp_ping = dds_create_topic(g_pp, &KeyedSeq_desc, names[0], qos, NULL);
    char what[300];
    snprintf(what, sizeof what, "topic %s", names[0]);
    check(tp_ping, what);
    // One name for both (a protection rule naming one exact topic): the same topic entity;
    // ignore-local keeps each side's own samples from its reader (module comment).
    dds_entity_t tp_pong = strcmp(names[0], names[1]) == 0 ? tp_ping
        : dds_create_topic(g_pp, &KeyedSeq_desc, names[1], qos, NULL);
    snprintf(what, sizeof what, "topic %s", names[1]);
    check(tp_pong, what);
    dds_delete_qos(qos);
    qos = dds_create_qos();
    dds_qset_partition1(qos, "govkit");
    dds_entity_t pub = dds_create_publisher(g_pp, qos, NULL);
    check(pub, "publisher");
    dds_entity_t sub = dds_create_subscriber(g_pp, qos, NULL);
    check(sub, "subscriber");
    dds_delete_qos(qos);

    qos = dds_create_qos();
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 1);
    dds_qset_ignorelocal(qos, DDS_IGNORELOCAL_PARTICIPANT);
    if (discover) {
        // both endpoints on one topic: every participant's writer matches every other's reader
        g_wr = dds_create_writer(pub, tp_ping, qos, NULL);
        check(g_wr, "writer");
        g_rd = dds_create_reader(sub, tp_ping, qos, NULL);
        check(g_rd, "reader");
        dds_delete_qos(qos);
        while (peers(0) < npeers - 1) {
            if (g_stop)
                die(EXIT_DONE, "stopped before every peer matched");
            if (now_ns() - t0 > (int64_t)(wait_s * 1e9))
                die(EXIT_NO_MATCH, "%d of %ld peers matched within %g s", peers(0), npeers - 1,
                    wait_s);
            dds_sleepfor(DDS_MSECS(1));
        }
        printf("matched %.6f\n", (double)(now_ns() - t0) / 1e9);
        fflush(stdout);
        char buf[256];
        while (!g_stop && fgets(buf, sizeof buf, stdin) != NULL)
            ;
        dds_delete(g_pp);
        return EXIT_DONE;
    }
    dds_listener_t *listener = dds_create_listener(NULL);
    dds_lset_data_available(listener, ping ? on_pong : on_ping);
    g_wr = dds_create_writer(pub, ping ? tp_ping : tp_pong, qos, NULL);
    check(g_wr, "writer");
    g_rd = dds_create_reader(sub, ping ? tp_pong : tp_ping, qos, listener);
    check(g_rd, "reader");
    dds_delete_listener(listener);
    dds_delete_qos(qos);
    // throughput: ddsperf's data topic and QoS (keep-all, at most 10000 samples)
    dds_entity_t tp_data = strcmp(names[2], names[0]) == 0 ? tp_ping
        : strcmp(names[2], names[1]) == 0 ? tp_pong
        : dds_create_topic(g_pp, &KeyedSeq_desc, names[2], NULL, NULL);
    snprintf(what, sizeof what, "topic %s", names[2]);
    check(tp_data, what);
    if (renamed) {
        // Renamed topics may share one name: the data endpoints get a partition of their
        // own, so a ping reader never matches the data writer (nor the data reader a ping
        // writer) on a shared topic.
        qos = dds_create_qos();
        dds_qset_partition1(qos, "govkit-data");
        pub = dds_create_publisher(g_pp, qos, NULL);
        check(pub, "data publisher");
        sub = dds_create_subscriber(g_pp, qos, NULL);
        check(sub, "data subscriber");
        dds_delete_qos(qos);
    }
    qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_history(qos, DDS_HISTORY_KEEP_ALL, 1);
    dds_qset_resource_limits(qos, 10000, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
    dds_qset_ignorelocal(qos, DDS_IGNORELOCAL_PARTICIPANT);
    if (ping) {
        g_data = dds_create_writer(pub, tp_data, qos, NULL);
    } else {
        listener = dds_create_listener(NULL);
        dds_lset_data_available(listener, on_data);
        g_data = dds_create_reader(sub, tp_data, qos, listener);
        dds_delete_listener(listener);
    }
    check(g_data, ping ? "throughput writer" : "throughput reader");
    dds_delete_qos(qos);
    g_stats = dds_create_statistics(g_data);     // NULL: the counters read as 0

    // ready: this side's writer and reader both matched (the secure handshake is done);
    // ping: with every reader
    while (peers(0) < g_readers) {
        if (g_stop)
            die(EXIT_DONE, "stopped before a peer matched");
        if (now_ns() - t0 > (int64_t)(wait_s * 1e9) && g_readers > 1)
            die(EXIT_NO_MATCH, "no peer matched within %g s: %d of %d readers (pong given "
                "fewer readers, refused by the peer's security, or no peer on domain %ld)",
                wait_s, peers(0), g_readers, domain);
        if (now_ns() - t0 > (int64_t)(wait_s * 1e9))
            die(EXIT_NO_MATCH, "no peer matched within %g s (refused by the peer's "
                "security, or no peer on domain %ld)", wait_s, domain);
        dds_sleepfor(DDS_MSECS(1));
    }
    handshake_thread_normal();      // Cyclone starts it with the first handshake
    printf("ready %.6f\n", (double)(now_ns() - t0) / 1e9);

    if (!ping) {
        // serve from the listener until stdin closes (govkit is done or gone) or a signal
        char buf[256];
        while (!g_stop && fgets(buf, sizeof buf, stdin) != NULL) {
            unsigned tag;
            if (strncmp(buf, "cpu", 3) == 0) {
                printf("cpu_us %" PRId64 "\n", cpu_us());
                fflush(stdout);
            } else if (sscanf(buf, "count %u", &tag) == 1) {
                answer_count(tag);
            } else if (strncmp(buf, "sched ", 6) == 0) {
                set_policy(buf + 6);
            }
        }
        dds_delete(g_pp);
        return EXIT_DONE;
    }
    g_ping.keyval = 0;
    char line[256];
    while (!g_stop && fgets(line, sizeof line, stdin) != NULL) {
        unsigned long size;
        long long settle, measure;
        unsigned tag;
        double rate;
        int fields;
        if (sscanf(line, "slot %lu %lld %lld", &size, &settle, &measure) == 3) {
            if (size > 64ul * 1024 * 1024 || settle < 0 || measure <= 0
                    || settle + measure > 3600LL * 1000000)
                die(EXIT_USAGE, "bad slot command: %s", line);
            run_slot((uint32_t)size, settle, measure);
        } else if ((fields = sscanf(line, "tput %lu %lld %lld %u %lf", &size, &settle, &measure,
                                    &tag, &rate)) >= 4) {
            if (fields == 4)
                rate = 0;
            if (size > 64ul * 1024 * 1024 || settle < 0 || measure <= 0
                    || settle + measure > 3600LL * 1000000 || tag > 255 || !(rate >= 0)
                    || rate > 1e9)
                die(EXIT_USAGE, "bad tput command: %s", line);
            run_tput((uint32_t)size, settle, measure, tag, rate);
        } else if (strncmp(line, "sched ", 6) == 0) {
            set_policy(line + 6);
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        } else {
            die(EXIT_USAGE, "unknown command: %.60s", line);
        }
    }
    dds_delete(g_pp);
    free(g_samples);
    free(g_tput.baggage._buffer);
    if (g_stats)
        dds_delete_statistics(g_stats);
    return EXIT_DONE;
}
