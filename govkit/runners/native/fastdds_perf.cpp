// fastdds_perf: govkit's latency/throughput program for eProsima Fast DDS 2.9 with DDS Security.
//
// Built by govkit (govkit/fastdds_build.py) with the system compiler against Debian's
// libfastrtps-dev. It speaks ddsperf's wire contract so that one signed permissions document
// serves both implementations and the two can be paired across vendors:
//   - type "KeyedSeq" { uint32 seq; @key uint32 keyval; sequence<octet> baggage; }, XCDR1,
//     size S = 12 + baggage length (as ddsperf's `size S`);
//   - topics DDSPerfRPingKS / DDSPerfRPongKS / DDSPerfRDataKS, reliable, volatile;
//   - participant user data "DDSPerf:<has data reader>:<pid>:<hostname>";
//   - pongs are written in partition "<GUID of the pinging participant>" (ddsperf's
//     make_guidstr format), the pong reader sits in its own participant's partition;
//   - a pong is written with the ping's source timestamp, lowest bit set (ddsperf's ping
//     computes its round trip from that timestamp).
// Unlike ddsperf, a process only creates the endpoints its mode needs: Fast DDS 2.9 cannot
// ignore its own participant's endpoints, and a ping reader beside the ping writer would
// have every ping delivered locally inside the measured path.
//
// Output (stdout, one line per event, flushed):
//   [PID] participant HOST:PID: new (self)
//   [PID] participant HOST:PID: new            a ddsperf-style peer was discovered
//   [PID] participant GUID: new (foreign)      a participant without ddsperf user data
//   [PID] authentication GUID: authorized|unauthorized
//   [PID] matched after S s
//   [PID] crypto property NAME=VALUE on the participant and its writers and readers
//   [PID] latency t T size S count N mean M min A p50 B p90 C p99 D max E us
//   [PID] throughput t T size S count N lost L rate R samples/s mbps M
// Latency rows (ping) and throughput rows (sub) cover one second each, from the match on:
// one-way latency = round trip / 2 for every pong of that second, percentiles exact
// (nearest rank over all samples of the second); throughput rows are printed also for
// seconds without samples.
//
// Slots (-S, govkit's rotating latency design, govkit.bench.rotation; the same protocol as
// cyclone_perf.c): `fastdds_perf -S ... pong` and `fastdds_perf -S ... ping` print
// `ready T` on stdout (seconds from the participant's creation until this side's endpoints
// matched the peer: discovery plus the secure handshake; the event lines above go to stderr
// in this mode) and then serve: pong until standard input closes (answering `cpu` with
// `cpu_us U`, the CPU time it has used, user + system, µs), ping reads commands
//   slot SIZE SETTLE_US MEASURE_US   ping-pong for SETTLE_US + MEASURE_US microseconds
//                                    and print one line
//   slot SIZE n N settle_n K mean M min A p50 B p90 C p99 D max E cpu_us U wall_us W
//        peers P tl X,Y,... hist B:C,...
//   tput SIZE SETTLE_US MEASURE_US TAG [RATE]   throughput: write SIZE-byte samples on the
//                                    data topic (reliable, keep-all) for SETTLE_US +
//                                    MEASURE_US, as fast as the writer takes them or paced at
//                                    RATE samples/s, then an end marker, then wait until pong
//                                    acknowledged all; then `tslot SIZE sent N settle_sent K
//                                    cpu_us U wall_us W peers P` (no protocol counters: Fast
//                                    DDS publishes its statistics on DDS topics of its own,
//                                    which this program does not read);
//                                    pong answers `count TAG` with `count TAG n N later_n M
//                                    span_us S lost L` (no arrival bins) once the slot's end
//                                    marker has arrived (cyclone_perf's protocol)
//   quit                             (or end of input) delete the participant and exit
// Both sides take `sched fifo|normal` (every thread to SCHED_FIFO 1 or normal scheduling;
// answer `sched ok` or `sched failed ERRNO`).
// Round trips sent in the settle time are kept apart; percentiles are exact (nearest rank,
// µs); tl: the median of each 25 ms, settle included; hist: the measured samples in 1 %
// bins (bin b: [1.01^b, 1.01^(b+1)) ns); peers: the most remote endpoints matched by the
// ping writer or the pong reader (above 1: a stranger joined the domain).
//
// Readers (-n N with -S, both sides given the same N, at most 64): pong forks N reader
// processes, each a participant with the pong's endpoints, and relays for them (readers.h
// says how); each reader's pongs carry its index in keyval. ping waits until its writers
// and its pong reader matched all N, sends the next ping once every reader's pong of the
// current one is back, and takes each reader's one-way latency as that reader's round
// trip / 2. The slot line's n, mean, percentiles, tl and hist are then per ping, the
// slowest reader's one-way latency, and after hist come, in reader order, ` readers N
// reader_n … reader_mean … reader_min … reader_p50 … reader_p90 … reader_p99 …
// reader_max …` (comma lists, each over that reader's round trips sent after the settle
// time), as cyclone_perf prints them. peers is then N. Without -n every line is what it
// was.
//
// -t NAME names the data topic (pub, sub) NAME instead of DDSPerfRDataKS: a ROS 2 name such
// as rt/chatter, so that a pair runs under an sros2 policy's grants (govkit generate
// --policy); pub and sub sit in the default partition, as rmw's endpoints do. A writer or
// reader that access control refuses (a topic the grant denies) ends the process at once
// (exit 5) after Fast DDS's own "[SECURITY ...]" log line.
//
// Crypto variants (govkit bench --cipher, --rekey; govkit.runners.crypto): -k 128|256 sets
// dds.sec.crypto.keysize and -r N dds.sec.crypto.maxblockspersession on the participant
// (RTPS-level key) and on every writer and reader (submessage and payload keys); without
// them Fast DDS 2.9's defaults hold (256 bits, a new session key every 32 messages). Both
// need -s (they mean nothing without the security plugins).
//
// Exit codes: 0 done (duration reached or SIGINT/SIGTERM), 2 usage (also a domain id above
// 232, which Fast DDS cannot open ports for), 3 the participant could
// not be created (Fast DDS 2.9 does not say why), 4 no peer matched within the wait,
// 5 another DDS call failed, 6 a slot's round trip did not come back within 10 s. The participant is always deleted before exit: a Fast DDS 2.9
// secured participant left alive at exit crashes inside OpenSSL's atexit handlers.

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/common/InstanceHandle.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>
#include <fastrtps/utils/md5.h>

#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "readers.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::rtps::GUID_t;
using eprosima::fastrtps::rtps::GuidPrefix_t;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;
using SteadyClock = std::chrono::steady_clock;

enum ExitCode { EXIT_DONE = 0, EXIT_USAGE = 2, EXIT_PARTICIPANT = 3, EXIT_NO_MATCH = 4,
                EXIT_DDS = 5, EXIT_STUCK = 6 };

static const uint32_t KS_FIXED = 12;
static const int64_t TIMELINE_NS = 25000000;    // -S: a slot's timeline has one median per 25 ms
static const double HIST_BASE = 1.01;           // -S: histogram bins of 1 %
static const int MAX_DOMAIN_ID = 232;          // seq + keyval + sequence length
// Keep-all histories hold at most this many samples. Not ddsperf's 10000: with that many
// unacknowledged samples Fast DDS 2.9.1's writer falls into gap processing over its whole
// history on every heartbeat (StatefulWriter::add_gaps_for_holes_in_history_), the rate
// drops to a few hundred samples/s and deleting the writer hangs.
static const int32_t KEEP_ALL_LIMIT = 100;
static const char* PING_TOPIC = "DDSPerfRPingKS";
static const char* PONG_TOPIC = "DDSPerfRPongKS";
static const char* DATA_TOPIC = "DDSPerfRDataKS";

static long g_pid;
static FILE* g_events = stdout;   // event lines; stderr with -S (stdout carries the protocol)

// ------------------------------------------------------------------------------ output

static void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char* fmt, ...)
{
    static std::mutex lock;     // listener threads and the main thread print
    std::lock_guard<std::mutex> guard(lock);
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(g_events, "[%ld] ", g_pid);
    std::vfprintf(g_events, fmt, ap);
    std::fprintf(g_events, "\n");
    std::fflush(g_events);
    va_end(ap);
}

static void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(stderr, "[%ld] error: ", g_pid);
    std::vfprintf(stderr, fmt, ap);
    std::fprintf(stderr, "\n");
    std::fflush(stderr);
    va_end(ap);
}

// Fast DDS's own log lines, uncoloured and on stderr, one line each (its default consumer
// writes ANSI colours to stdout, between the rows govkit parses).
class PlainLog : public LogConsumer
{
public:

    void Consume(const Log::Entry& e) override
    {
        // Expected by design: pong writers are made for the peers' partitions only, and a
        // keep-all writer waits while its history is full (that is the flow control).
        if (e.message.find("Different Partitions") != std::string::npos ||
                e.message.find("Full WriterCache") != std::string::npos)
        {
            return;
        }
        const char* kind = e.kind == Log::Kind::Error ? "Error"
            : e.kind == Log::Kind::Warning ? "Warning" : "Info";
        std::fprintf(stderr, "[%ld] fastdds %s [%s] %s\n", g_pid, kind,
                     e.context.category ? e.context.category : "", e.message.c_str());
        std::fflush(stderr);
    }
};

// ddsperf's make_guidstr: 16 GUID bytes as 4 groups of 8 hex digits joined by '_'.
static std::string guid_string(const GUID_t& guid)
{
    char buf[40];
    const auto& p = guid.guidPrefix.value;
    const auto& e = guid.entityId.value;
    std::snprintf(buf, sizeof(buf),
            "%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x",
            p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11],
            e[0], e[1], e[2], e[3]);
    return buf;
}

// ------------------------------------------------------------------------ the data type

struct KeyedSeq
{
    uint32_t seq = 0;
    uint32_t keyval = 0;
    std::vector<uint8_t> baggage;
};

// Hand-written type support (no fastddsgen): plain XCDR1 little-endian on write; on read
// XCDR1 or XCDR2 plain encodings of either byte order, which are laid out identically for
// this type. Samples of any size: endpoints use dynamic payload memory.
class KeyedSeqType : public TopicDataType
{
public:

    KeyedSeqType()
    {
        setName("KeyedSeq");
        m_typeSize = 4 + KS_FIXED + 1024;   // a first guess only: payloads grow as needed
        m_isGetKeyDefined = true;
        // A type object would make Fast DDS match on type structure, which ddsperf's
        // Cyclone-generated type information would then have to equal; name matching
        // is what ddsperf pairs on.
        auto_fill_type_object(false);
        auto_fill_type_information(false);
    }

    bool serialize(void* data, SerializedPayload_t* payload) override
    {
        const KeyedSeq* s = static_cast<const KeyedSeq*>(data);
        const uint32_t n = static_cast<uint32_t>(s->baggage.size());
        const uint32_t size = 4 + KS_FIXED + n;
        if (payload->max_size < size)
        {
            return false;
        }
        uint8_t* p = payload->data;
        p[0] = 0x00; p[1] = 0x01; p[2] = 0x00; p[3] = 0x00;   // CDR_LE, no options
        put_le(p + 4, s->seq);
        put_le(p + 8, s->keyval);
        put_le(p + 12, n);
        if (n)
        {
            std::memcpy(p + 16, s->baggage.data(), n);
        }
        payload->length = size;
        payload->encapsulation = CDR_LE;
        return true;
    }

    bool deserialize(SerializedPayload_t* payload, void* data) override
    {
        KeyedSeq* s = static_cast<KeyedSeq*>(data);
        const uint8_t* p = payload->data;
        if (payload->length < 4 + KS_FIXED || p[0] != 0x00)
        {
            return false;
        }
        bool little;
        switch (p[1])
        {
            case 0x00: case 0x06: little = false; break;   // CDR_BE, CDR2_BE (plain)
            case 0x01: case 0x07: little = true; break;    // CDR_LE, CDR2_LE (plain)
            default: return false;
        }
        s->seq = get(p + 4, little);
        s->keyval = get(p + 8, little);
        const uint32_t n = get(p + 12, little);
        if (n > payload->length - (4 + KS_FIXED))
        {
            return false;
        }
        s->baggage.assign(p + 16, p + 16 + n);
        return true;
    }

    std::function<uint32_t()> getSerializedSizeProvider(void* data) override
    {
        return [data]() -> uint32_t
               {
                   return 4 + KS_FIXED +
                          static_cast<uint32_t>(static_cast<KeyedSeq*>(data)->baggage.size());
               };
    }

    void* createData() override
    {
        return new KeyedSeq();
    }

    void deleteData(void* data) override
    {
        delete static_cast<KeyedSeq*>(data);
    }

    // The key hash of a 4-byte key: its big-endian CDR, zero-padded to 16 bytes, or the MD5
    // of that CDR when asked (Fast DDS asks when the governance protects the key).
    bool getKey(void* data, InstanceHandle_t* handle, bool force_md5) override
    {
        const uint32_t k = static_cast<KeyedSeq*>(data)->keyval;
        unsigned char be[4] = {static_cast<unsigned char>(k >> 24),
                               static_cast<unsigned char>(k >> 16),
                               static_cast<unsigned char>(k >> 8),
                               static_cast<unsigned char>(k)};
        std::memset(handle->value, 0, 16);
        if (force_md5)
        {
            ::MD5 md5;    // Fast DDS ships this class in the global namespace
            md5.init();
            md5.update(be, 4);
            md5.finalize();
            std::memcpy(handle->value, md5.digest, 16);
        }
        else
        {
            std::memcpy(handle->value, be, 4);
        }
        return true;
    }

private:

    static void put_le(uint8_t* p, uint32_t v)
    {
        p[0] = static_cast<uint8_t>(v); p[1] = static_cast<uint8_t>(v >> 8);
        p[2] = static_cast<uint8_t>(v >> 16); p[3] = static_cast<uint8_t>(v >> 24);
    }

    static uint32_t get(const uint8_t* p, bool little)
    {
        return little
            ? (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24)
            : (uint32_t(p[3]) | uint32_t(p[2]) << 8 | uint32_t(p[1]) << 16 | uint32_t(p[0]) << 24);
    }
};

// ------------------------------------------------------------------------ shared state

struct Options
{
    std::string mode;           // ping | pong | pub | sub
    uint32_t size = 0;          // ping/pub: sample size in bytes (>= 12)
    int domain = 0;
    double wait_s = 10;         // how long to wait for the peer to match
    double duration_s = -1;     // stop this long after the match (< 0: until signalled)
    std::string security;       // file of Fast DDS property lines name=value
    bool ddsperf_endpoints = false;   // -E: every endpoint ddsperf expects of a peer
    bool slots = false;               // -S: serve govkit's slot commands (ping/pong only)
    int keysize = 0;            // -k 128|256: dds.sec.crypto.keysize (0: Fast DDS's default)
    long rekey = 0;             // -r N: dds.sec.crypto.maxblockspersession (0: default)
    std::string topic;          // -t NAME: the data topic's name (default DDSPerfRDataKS)
    int readers = 1;            // -n N (-S only): pong forks N readers, ping awaits N
};

static int g_readers = 1;        // ping: how many readers answer each ping (-n)
static int g_reader_index = 0;   // pong: this reader's index, in its pongs' keyval

// -k / -r: DDS Security properties set on the participant and on every writer and reader
// this program makes (Fast DDS 2.9 reads both in AESGCMGMAC_KeyFactory's
// register_local_participant, register_local_datawriter and register_local_datareader).
static std::vector<std::pair<std::string, std::string>> g_crypto_properties;

static std::mutex g_lock;                 // guards what listeners and main share
static std::condition_variable g_wake;    // a match, a signal, a discovered peer
static std::atomic<bool> g_stop{false};

struct Peer { std::string label; bool ddsperf; };
static std::map<GuidPrefix_t, Peer> g_pending_peers;     // discovered, pong writer not yet made
static std::map<GuidPrefix_t, DataWriter*> g_pong_writers;
static GuidPrefix_t g_self;

// Remote endpoints each local endpoint currently matches (local ones never count).
static std::map<const void*, std::set<InstanceHandle_t>> g_matches;

static void matched(const void* endpoint, const InstanceHandle_t& remote, int change)
{
    GUID_t guid = eprosima::fastrtps::rtps::iHandle2GUID(remote);
    if (guid.guidPrefix == g_self)
    {
        return;
    }
    {
        std::lock_guard<std::mutex> guard(g_lock);
        if (change > 0)
        {
            g_matches[endpoint].insert(remote);
        }
        else
        {
            g_matches[endpoint].erase(remote);
        }
    }
    g_wake.notify_all();
}

// ping with -n N: every endpoint needs all N readers' matches
static bool has_match(const void* endpoint)
{
    auto it = g_matches.find(endpoint);
    return it != g_matches.end() && it->second.size() >= static_cast<size_t>(g_readers);
}

static int64_t wall_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch()).count();
}

static eprosima::fastrtps::Time_t to_time(int64_t ns)
{
    return eprosima::fastrtps::Time_t(static_cast<int32_t>(ns / 1000000000),
                                      static_cast<uint32_t>(ns % 1000000000));
}

// ------------------------------------------------------------------------ listeners

class ParticipantEvents : public DomainParticipantListener
{
public:

    void on_participant_discovery(DomainParticipant*,
            eprosima::fastrtps::rtps::ParticipantDiscoveryInfo&& info) override
    {
        using Status = eprosima::fastrtps::rtps::ParticipantDiscoveryInfo;
        const GUID_t& guid = info.info.m_guid;
        if (guid.guidPrefix == g_self)
        {
            return;
        }
        if (info.status == Status::DISCOVERED_PARTICIPANT)
        {
            Peer peer = describe(info.info.m_userData);
            if (peer.ddsperf)
            {
                say("participant %s: new", peer.label.c_str());
            }
            else
            {
                say("participant %s: new (foreign)", guid_string(guid).c_str());
            }
            {
                std::lock_guard<std::mutex> guard(g_lock);
                g_pending_peers[guid.guidPrefix] = peer;
            }
            g_wake.notify_all();
        }
        else if (info.status == Status::REMOVED_PARTICIPANT ||
                info.status == Status::DROPPED_PARTICIPANT)
        {
            say("participant %s: gone", guid_string(guid).c_str());
        }
    }

    void onParticipantAuthentication(DomainParticipant*,
            eprosima::fastrtps::rtps::ParticipantAuthenticationInfo&& info) override
    {
        using Auth = eprosima::fastrtps::rtps::ParticipantAuthenticationInfo;
        say("authentication %s: %s", guid_string(info.guid).c_str(),
                info.status == Auth::AUTHORIZED_PARTICIPANT ? "authorized" : "unauthorized");
    }

private:

    // ddsperf's user data: "DDSPerf:<0|1>:<pid>:<hostname>" (no terminating NUL).
    static Peer describe(const UserDataQosPolicy& udata)
    {
        std::string text(udata.begin(), udata.end());
        int has_reader = 0, pos = 0;
        long pid = 0;
        if (std::sscanf(text.c_str(), "DDSPerf:%d:%ld%n", &has_reader, &pid, &pos) == 2 &&
                pos < static_cast<int>(text.size()) && text[pos] == ':')
        {
            return {text.substr(pos + 1) + ":" + std::to_string(pid), true};
        }
        return {"", false};
    }
};

class WriterEvents : public DataWriterListener
{
public:

    void on_publication_matched(DataWriter* writer, const PublicationMatchedStatus& s) override
    {
        matched(writer, s.last_subscription_handle, s.current_count_change);
    }
};

struct SlotSample
{
    int64_t sent_ns;      // since the slot's start
    int64_t oneway_ns;
};

static int64_t ns_between(SteadyClock::time_point a, SteadyClock::time_point b)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// Every reader here records its matches the same way (has_match, most_matches).
class MatchedReader : public DataReaderListener
{
public:

    void on_subscription_matched(DataReader* reader, const SubscriptionMatchedStatus& s) override
    {
        matched(reader, s.last_publication_handle, s.current_count_change);
    }
};

// Ping: measures the round trip of each ping and sends the next one at once (as ddsperf).
class Pinger : public MatchedReader
{
public:

    DataWriter* writer = nullptr;
    KeyedSeq sample;                  // the ping in flight; a pong echoes it

    void start()
    {
        std::lock_guard<std::mutex> guard(lock_);
        active_ = true;
        send_locked();
    }

    // Called once a second by the main thread: re-send a ping whose pong did not come back
    // within a second (a lost sample must not stall the measurement).
    void resend_if_stalled()
    {
        std::lock_guard<std::mutex> guard(lock_);
        if (active_ && SteadyClock::now() - sent_ > std::chrono::seconds(1))
        {
            ++timeouts_;
            say("ping timed out (total %u times) ... sending new ping", timeouts_);
            send_locked();
        }
    }

    void on_data_available(DataReader* reader) override
    {
        KeyedSeq pong;
        SampleInfo info;
        while (reader->take_next_sample(&pong, &info) == ReturnCode_t::RETCODE_OK)
        {
            if (!info.valid_data)
            {
                continue;
            }
            const auto now = SteadyClock::now();
            std::lock_guard<std::mutex> guard(lock_);
            if (!active_ || pong.seq != sample.seq)
            {
                continue;                 // a late pong of a ping that timed out
            }
            if (slot_mode_)
            {
                const uint32_t k = pong.keyval;
                const uint64_t bit = uint64_t(1) << (k % READERS_MAX);
                if (k >= static_cast<uint32_t>(g_readers) || (answered_ & bit))
                {
                    continue;             // not a reader of ours, or its second pong
                }
                answered_ |= bit;
                const int64_t oneway = ns_between(sent_, now) / 2;
                round_oneway_ = std::max(round_oneway_, oneway);
                if (g_readers > 1)
                {
                    reader_slot_[k].push_back({ns_between(slot_start_, sent_), oneway});
                }
                if (answered_ != (g_readers == READERS_MAX ? ~uint64_t(0)
                                  : (uint64_t(1) << g_readers) - 1))
                {
                    continue;             // every reader's pong, then the next ping
                }
                // one sample: the slowest reader's one-way latency
                slot_.push_back({ns_between(slot_start_, sent_), round_oneway_});
                if (now < slot_end_)
                {
                    send_locked();
                }
                else
                {
                    active_ = false;
                    slot_done_.notify_all();
                }
                continue;
            }
            const double one_way_us =
                std::chrono::duration<double, std::micro>(now - sent_).count() / 2;
            {
                std::lock_guard<std::mutex> g(samples_lock_);
                samples_.push_back(one_way_us);
            }
            send_locked();
        }
    }

    // One slot (-S): ping-pong with SIZE-byte samples until settle + measure have passed
    // and the last pong is back; false if a pong did not come back within 10 s.
    bool run_slot(uint32_t size, int64_t settle_us, int64_t measure_us,
                  std::vector<SlotSample>& out,
                  std::vector<std::vector<SlotSample>>* per_reader = nullptr)
    {
        std::unique_lock<std::mutex> guard(lock_);
        sample.baggage.assign(size - KS_FIXED, 0xee);       // ddsperf's filler
        slot_.clear();
        reader_slot_.assign(static_cast<size_t>(g_readers), {});
        slot_mode_ = true;
        active_ = true;
        slot_start_ = SteadyClock::now();
        slot_end_ = slot_start_ + std::chrono::microseconds(settle_us + measure_us);
        send_locked();
        while (active_)
        {
            const auto last = sent_;
            if (slot_done_.wait_until(guard, last + std::chrono::seconds(10)) ==
                    std::cv_status::timeout && active_ && sent_ == last)
            {
                active_ = false;
                return false;
            }
        }
        out.swap(slot_);
        if (per_reader != nullptr)
        {
            per_reader->swap(reader_slot_);
        }
        return true;
    }

    uint32_t outstanding_seq()
    {
        std::lock_guard<std::mutex> guard(lock_);
        return sample.seq;
    }

    std::vector<double> take_samples()
    {
        std::vector<double> out;
        out.reserve(1 << 16);
        std::lock_guard<std::mutex> g(samples_lock_);
        out.swap(samples_);
        return out;
    }

private:

    void send_locked()
    {
        ++sample.seq;
        answered_ = 0;
        round_oneway_ = 0;
        sent_ = SteadyClock::now();
        // ddsperf marks a ping by an odd source timestamp; its pong keeps that bit.
        writer->write_w_timestamp(&sample, HANDLE_NIL, to_time(wall_ns() | 1));
    }

    std::mutex lock_;
    bool active_ = false;             // pinging (only in ping mode, after the match)
    bool slot_mode_ = false;          // -S: samples go to slot_, the slot ends the pinging
    SteadyClock::time_point slot_start_, slot_end_;
    std::vector<SlotSample> slot_;
    std::vector<std::vector<SlotSample>> reader_slot_;   // -n N: each reader's samples
    uint64_t answered_ = 0;           // readers whose pong of the outstanding ping is back
    int64_t round_oneway_ = 0;        // the slowest of them so far
    std::condition_variable slot_done_;
    SteadyClock::time_point sent_;
    unsigned timeouts_ = 0;
    std::mutex samples_lock_;
    std::vector<double> samples_;
};

// Pong: answers every ping with the same sample, on the pinging participant's pong writer.
class Ponger : public MatchedReader
{
public:

    void on_data_available(DataReader* reader) override
    {
        SampleInfo info;
        while (reader->take_next_sample(&ping_, &info) == ReturnCode_t::RETCODE_OK)
        {
            if (!info.valid_data)
            {
                continue;
            }
            GUID_t from = eprosima::fastrtps::rtps::iHandle2GUID(info.publication_handle);
            DataWriter* writer = nullptr;
            {
                std::lock_guard<std::mutex> guard(g_lock);
                auto it = g_pong_writers.find(from.guidPrefix);
                if (it != g_pong_writers.end())
                {
                    writer = it->second;
                }
            }
            if (writer != nullptr)
            {
                ping_.keyval = static_cast<uint32_t>(g_reader_index);   // which reader
                int64_t ts = info.source_timestamp.to_ns() | 1;
                writer->write_w_timestamp(&ping_, HANDLE_NIL, to_time(ts));
            }
        }
    }

private:

    KeyedSeq ping_;
};

// Sub: counts samples and sequence gaps per writer.
class Counter : public MatchedReader
{
public:

    void on_data_available(DataReader* reader) override
    {
        SampleInfo info;
        while (reader->take_next_sample(&sample_, &info) == ReturnCode_t::RETCODE_OK)
        {
            if (!info.valid_data)
            {
                continue;
            }
            std::lock_guard<std::mutex> guard(lock_);
            uint32_t& next = next_seq_[info.publication_handle];
            if (next != 0 && sample_.seq > next)
            {
                lost_ += sample_.seq - next;
            }
            next = sample_.seq + 1;
            ++count_;
            size_ = KS_FIXED + static_cast<uint32_t>(sample_.baggage.size());
        }
    }

    void take(uint64_t& count, uint64_t& lost, uint32_t& size)
    {
        std::lock_guard<std::mutex> guard(lock_);
        count = count_;
        lost = lost_;
        size = size_;
        count_ = lost_ = 0;
    }

private:

    KeyedSeq sample_;
    std::mutex lock_;
    std::map<InstanceHandle_t, uint32_t> next_seq_;
    uint64_t count_ = 0, lost_ = 0;
    uint32_t size_ = 0;
};

// -S pong: counts the current throughput slot (one at a time: a new tag resets it). A
// sample's seq carries the slot's tag (8 bits), its phase (2) and a counter (22), as
// cyclone_perf's do.
static const uint32_t TAG_SHIFT = 24, PHASE_SHIFT = 22, CTR_MASK = 0x3fffff;
enum { PH_SETTLE = 0, PH_MEASURE = 1, PH_END = 2 };

class SlotCounter : public MatchedReader
{
public:

    void on_data_available(DataReader* reader) override
    {
        SampleInfo info;
        while (reader->take_next_sample(&sample_, &info) == ReturnCode_t::RETCODE_OK)
        {
            if (!info.valid_data)
            {
                continue;
            }
            const auto t = SteadyClock::now();
            const uint32_t seq = sample_.seq, tag = seq >> TAG_SHIFT;
            const uint32_t phase = (seq >> PHASE_SHIFT) & 3u, ctr = seq & CTR_MASK;
            std::lock_guard<std::mutex> guard(lock_);
            if (tag != tag_)
            {
                tag_ = tag;
                any_ = ended_ = false;
                n_ = first_n_ = lost_ = 0;
            }
            if (any_ && ctr != next_)
            {
                lost_ += (ctr - next_) & CTR_MASK;
            }
            any_ = true;
            next_ = (ctr + 1) & CTR_MASK;
            if (phase == PH_MEASURE)
            {
                if (n_ == 0)
                {
                    first_ = t;
                }
                ++n_;
                if (t == first_)
                {
                    ++first_n_;
                }
                last_ = t;
            }
            else if (phase == PH_END)
            {
                ended_ = true;
                done_.notify_all();
            }
        }
    }

    // `count TAG`: what arrived of that slot, once its end marker has (up to 10 s)
    std::string answer(uint32_t tag)
    {
        std::unique_lock<std::mutex> guard(lock_);
        done_.wait_for(guard, std::chrono::seconds(10), [&]() { return tag_ == tag && ended_; });
        if (!(tag_ == tag && ended_))
        {
            return "count " + std::to_string(tag) + " missing";
        }
        return "count " + std::to_string(tag) + " n " + std::to_string(n_) + " later_n " +
               std::to_string(n_ - first_n_) + " span_us " +
               std::to_string(ns_between(first_, last_) / 1000) + " lost " +
               std::to_string(lost_);
    }

private:

    KeyedSeq sample_;
    std::mutex lock_;
    std::condition_variable done_;
    uint32_t tag_ = UINT32_MAX, next_ = 0;
    bool any_ = false, ended_ = false;
    uint64_t n_ = 0, first_n_ = 0, lost_ = 0;
    SteadyClock::time_point first_, last_;
};

// ------------------------------------------------------------------------ setup

static bool read_properties(const std::string& path, DomainParticipantQos& qos)
{
    std::ifstream in(path);
    if (!in)
    {
        fail("cannot read security properties file %s", path.c_str());
        return false;
    }
    std::string line;
    while (std::getline(in, line))
    {
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        auto eq = line.find('=');
        if (eq == std::string::npos)
        {
            fail("%s: not a name=value line: %s", path.c_str(), line.c_str());
            return false;
        }
        qos.properties().properties().emplace_back(line.substr(0, eq), line.substr(eq + 1));
    }
    return true;
}

// Loopback only, UDP only (no shared memory, no data sharing), no multicast: the peer is
// found through the well-known unicast discovery ports on 127.0.0.1, as govkit's Cyclone
// configuration does, so both implementations measure the same path.
static void loopback_only(DomainParticipantQos& qos)
{
    using eprosima::fastrtps::rtps::IPLocator;
    using eprosima::fastrtps::rtps::Locator_t;
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.emplace_back("127.0.0.1");
    qos.transport().use_builtin_transports = false;
    qos.transport().user_transports.push_back(udp);
    Locator_t lo;
    IPLocator::setIPv4(lo, 127, 0, 0, 1);
    qos.wire_protocol().builtin.initialPeersList.push_back(lo);
    qos.wire_protocol().builtin.metatrafficUnicastLocatorList.push_back(lo);
    qos.wire_protocol().default_unicast_locator_list.push_back(lo);
}

static DataWriterQos writer_qos(Publisher* pub, bool keep_all)
{
    DataWriterQos q = pub->get_default_datawriter_qos();
    q.reliability().kind = RELIABLE_RELIABILITY_QOS;
    q.durability().kind = VOLATILE_DURABILITY_QOS;
    q.history().kind = keep_all ? KEEP_ALL_HISTORY_QOS : KEEP_LAST_HISTORY_QOS;
    q.history().depth = 1;
    if (keep_all)
    {
        q.resource_limits().max_samples = KEEP_ALL_LIMIT;
        q.resource_limits().max_instances = 1;
        q.resource_limits().max_samples_per_instance = KEEP_ALL_LIMIT;
    }
    q.publish_mode().kind = SYNCHRONOUS_PUBLISH_MODE;
    for (const auto& p : g_crypto_properties)
    {
        q.properties().properties().emplace_back(p.first, p.second);
    }
    // Acknowledge often, as eProsima's own throughput test does (there: 100 ms, no NACK
    // delays): with the default 3 s heartbeat a keep-all writer stalls on a full history.
    q.reliable_writer_qos().times.heartbeatPeriod = eprosima::fastrtps::Duration_t(0, 10000000);
    q.reliable_writer_qos().times.nackSupressionDuration = eprosima::fastrtps::Duration_t(0, 0);
    q.reliable_writer_qos().times.nackResponseDelay = eprosima::fastrtps::Duration_t(0, 0);
    q.endpoint().history_memory_policy =
        eprosima::fastrtps::rtps::DYNAMIC_REUSABLE_MEMORY_MODE;
    q.data_sharing().off();
    return q;
}

static DataReaderQos reader_qos(Subscriber* sub, bool keep_all)
{
    DataReaderQos q = sub->get_default_datareader_qos();
    q.reliability().kind = RELIABLE_RELIABILITY_QOS;
    q.durability().kind = VOLATILE_DURABILITY_QOS;
    q.history().kind = keep_all ? KEEP_ALL_HISTORY_QOS : KEEP_LAST_HISTORY_QOS;
    q.history().depth = 1;
    if (keep_all)
    {
        q.resource_limits().max_samples = KEEP_ALL_LIMIT;
        q.resource_limits().max_instances = 1;
        q.resource_limits().max_samples_per_instance = KEEP_ALL_LIMIT;
    }
    q.endpoint().history_memory_policy =
        eprosima::fastrtps::rtps::DYNAMIC_REUSABLE_MEMORY_MODE;
    q.data_sharing().off();
    for (const auto& p : g_crypto_properties)
    {
        q.properties().properties().emplace_back(p.first, p.second);
    }
    return q;
}

static void usage()
{
    std::fprintf(stderr,
            "usage: fastdds_perf [-i DOMAIN] [-w WAIT_S] [-D DURATION_S] [-s PROPERTIES_FILE] [-E] "
            "[-k 128|256] [-r BLOCKS] [-t TOPIC] (ping SIZE | pong | pub SIZE | sub)\n"
            "       fastdds_perf -S [-i DOMAIN] [-w WAIT_S] [-s PROPERTIES_FILE] [-k 128|256] "
            "[-r BLOCKS] [-n READERS] (ping | pong)\n");
}

static bool parse_number(const char* text, double& out)
{
    char* end = nullptr;
    out = std::strtod(text, &end);
    return end != text && *end == '\0';
}

static bool parse_args(int argc, char** argv, Options& o)
{
    int i = 1;
    while (i < argc && argv[i][0] == '-')
    {
        const std::string flag = argv[i++];
        if (flag == "-E")
        {
            o.ddsperf_endpoints = true;
            continue;
        }
        if (flag == "-S")
        {
            o.slots = true;
            continue;
        }
        if (i >= argc)
        {
            return false;
        }
        const char* value = argv[i++];
        double number = 0;
        if (flag == "-s")
        {
            o.security = value;
        }
        else if (flag == "-t" && value[0] != '\0')
        {
            o.topic = value;
        }
        else if (flag == "-i" && parse_number(value, number) && number == std::floor(number))
        {
            o.domain = static_cast<int>(number);
        }
        else if (flag == "-w" && parse_number(value, number))
        {
            o.wait_s = number;
        }
        else if (flag == "-D" && parse_number(value, number))
        {
            o.duration_s = number;
        }
        else if (flag == "-k" && parse_number(value, number) && (number == 128 || number == 256))
        {
            o.keysize = static_cast<int>(number);
        }
        else if (flag == "-r" && parse_number(value, number) && number == std::floor(number) &&
                number >= 1 && number <= 2147483647.0)
        {
            o.rekey = static_cast<long>(number);
        }
        else if (flag == "-n" && parse_number(value, number) && number == std::floor(number) &&
                number >= 1 && number <= READERS_MAX)
        {
            o.readers = static_cast<int>(number);
        }
        else
        {
            return false;
        }
    }
    if (i >= argc)
    {
        return false;
    }
    o.mode = argv[i++];
    if (o.mode == "ping" && o.slots && i == argc)
    {
        o.size = KS_FIXED;            // each slot command gives its own size
    }
    else if (o.mode == "ping" || o.mode == "pub")
    {
        double size = 0;
        if (i >= argc || !parse_number(argv[i++], size) || size != std::floor(size) ||
                size < KS_FIXED || size > (1 << 26))
        {
            std::fprintf(stderr, "size must be %u .. %d bytes\n", KS_FIXED, 1 << 26);
            return false;
        }
        o.size = static_cast<uint32_t>(size);
    }
    else if (o.mode != "pong" && o.mode != "sub")
    {
        return false;
    }
    if ((o.slots || o.readers > 1) && o.mode != "ping" && o.mode != "pong")
    {
        return false;
    }
    if (o.readers > 1 && !o.slots)
    {
        return false;                 // -n is for -S pairs only
    }
    // -k and -r only mean something to the security plugins
    return i == argc && o.domain >= 0 && o.domain <= 65535 && o.wait_s > 0 &&
           (o.security.size() > 0 || (o.keysize == 0 && o.rekey == 0));
}

static void signal_thread(sigset_t set)
{
    int sig = 0;
    sigwait(&set, &sig);
    g_stop = true;
    g_wake.notify_all();
}

// Pong writers for discovered ddsperf-style peers, made here rather than in the discovery
// callback (creating entities inside a Fast DDS callback can deadlock on its locks).
static bool make_pong_writers(DomainParticipant* dp, Topic* pong_topic, WriterEvents* events,
                              bool pong)
{
    std::map<GuidPrefix_t, Peer> todo;
    {
        std::lock_guard<std::mutex> guard(g_lock);
        todo.swap(g_pending_peers);
    }
    for (auto& kv : todo)
    {
        if (!pong || !kv.second.ddsperf)
        {
            continue;
        }
        GUID_t guid(kv.first, eprosima::fastrtps::rtps::c_EntityId_RTPSParticipant);
        PublisherQos pq = dp->get_default_publisher_qos();
        pq.partition().push_back(guid_string(guid).c_str());
        Publisher* pub = dp->create_publisher(pq);
        DataWriter* w = pub ? pub->create_datawriter(pong_topic, writer_qos(pub, false), events)
                            : nullptr;
        if (w == nullptr)
        {
            fail("cannot create the pong writer for %s", kv.second.label.c_str());
            return false;
        }
        std::lock_guard<std::mutex> guard(g_lock);
        g_pong_writers[kv.first] = w;
    }
    return true;
}

struct Endpoints
{
    const void* need_a = nullptr;     // the endpoints that must match before we start
    const void* need_b = nullptr;
    const void* need_c = nullptr;     // -S: the throughput writer (ping) or reader (pong)
    DataWriter* data_writer = nullptr;
    Topic* pong_topic = nullptr;
    bool answers_pings = false;       // has a ping reader, so makes pong writers for peers
};

// GOVKIT_PERF_TOPICS=PING,PONG,DATA names the topics of -S ping/pong (govkit bench
// --policy: each protection class's point runs on names its rule covers); unset, they are
// ddsperf's. Names may repeat: ping and pong on one topic keep apart by partition as they
// always do here (ping writes in the default partition, which pong's ping reader sits in;
// pongs go to the pinging participant's own partition, which only its pong reader sits
// in), and the data endpoints then get a partition of their own ("govkit-data"), so no
// ping reader matches the data writer. Returns 1 renamed, 0 not, -1 malformed.
static int perf_topics(std::string names[3])
{
    const char* given = std::getenv("GOVKIT_PERF_TOPICS");
    if (given == nullptr)
    {
        return 0;
    }
    std::string text(given);
    for (int i = 0; i < 3; i++)
    {
        size_t end = i < 2 ? text.find(',') : text.size();
        if (end == std::string::npos || end == 0 || (i == 2 && text.find(',') != std::string::npos))
        {
            return -1;
        }
        names[i] = text.substr(0, end);
        text = i < 2 ? text.substr(end + 1) : std::string();
    }
    return 1;
}

// The endpoints of a mode: ping = ping writer + pong reader; pong = ping reader (+ a pong
// writer per peer); pub = data writer; sub = data reader. With -E also every other endpoint
// ddsperf has (it refuses a peer that lacks one, 5 s after discovery), at the price of the
// local matches Fast DDS 2.9 cannot ignore: only for pairing with ddsperf, not for measuring.
static bool create_endpoints(DomainParticipant* dp, const Options& o, Endpoints& ep,
                             WriterEvents& writer_events, Pinger& pinger, Ponger& ponger,
                             Counter& counter, SlotCounter& slot_counter)
{
    TypeSupport type(new KeyedSeqType());
    if (type.register_type(dp) != ReturnCode_t::RETCODE_OK)
    {
        return false;
    }
    std::string names[3] = {PING_TOPIC, PONG_TOPIC, o.topic.empty() ? DATA_TOPIC : o.topic};
    const int renamed = o.slots ? perf_topics(names) : 0;
    if (renamed < 0)
    {
        fail("GOVKIT_PERF_TOPICS: give PING,PONG,DATA (three topic names, none empty)");
        return false;
    }
    // Fast DDS 2.9 refuses a second topic of one name in a participant: a repeated name is
    // the same Topic (see perf_topics for why the endpoints still keep apart).
    Topic* ping_topic = dp->create_topic(names[0], "KeyedSeq", TOPIC_QOS_DEFAULT);
    ep.pong_topic = names[1] == names[0] ? ping_topic
        : dp->create_topic(names[1], "KeyedSeq", TOPIC_QOS_DEFAULT);
    Topic* data_topic = names[2] == names[0] ? ping_topic
        : names[2] == names[1] ? ep.pong_topic
        : dp->create_topic(names[2], "KeyedSeq", TOPIC_QOS_DEFAULT);
    Publisher* pub = dp->create_publisher(PUBLISHER_QOS_DEFAULT);
    Subscriber* sub = dp->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    Publisher* data_pub = pub;
    Subscriber* data_sub = sub;
    if (renamed)
    {
        PublisherQos dq = dp->get_default_publisher_qos();
        dq.partition().push_back("govkit-data");
        data_pub = dp->create_publisher(dq);
        SubscriberQos ds = dp->get_default_subscriber_qos();
        ds.partition().push_back("govkit-data");
        data_sub = dp->create_subscriber(ds);
        if (!data_pub || !data_sub)
        {
            return false;
        }
    }
    SubscriberQos sq = dp->get_default_subscriber_qos();
    sq.partition().push_back(guid_string(dp->guid()).c_str());
    Subscriber* pong_sub = dp->create_subscriber(sq);
    if (!ping_topic || !ep.pong_topic || !data_topic || !pub || !sub || !pong_sub)
    {
        return false;
    }
    const bool all = o.ddsperf_endpoints;
    bool ok = true;
    DataReader* pong_reader = nullptr;
    DataReader* ping_reader = nullptr;
    DataReader* data_reader = nullptr;
    if (o.mode == "ping" || all)
    {
        pinger.writer = pub->create_datawriter(ping_topic, writer_qos(pub, false),
                                               &writer_events);
        DataReaderQos pong_qos = reader_qos(pong_sub, true);
        if (g_readers > 1)        // -n: one instance per reader (its index is the key)
        {
            pong_qos.resource_limits().max_instances = g_readers;
            pong_qos.resource_limits().max_samples = KEEP_ALL_LIMIT * g_readers;
        }
        pong_reader = pong_sub->create_datareader(ep.pong_topic, pong_qos, &pinger);
        ok = ok && pinger.writer && pong_reader;
    }
    if (o.mode == "pong" || all)
    {
        ping_reader = sub->create_datareader(ping_topic, reader_qos(sub, false), &ponger);
        ep.answers_pings = true;
        ok = ok && ping_reader;
    }
    if (o.mode == "pub" || all)
    {
        ep.data_writer = pub->create_datawriter(data_topic, writer_qos(pub, true),
                                                &writer_events);
        ok = ok && ep.data_writer;
    }
    if (o.mode == "sub")
    {
        data_reader = sub->create_datareader(data_topic, reader_qos(sub, true), &counter);
        ok = ok && data_reader;
    }
    if (o.slots && o.mode == "ping")      // throughput slots: the writer beside the pings
    {
        ep.data_writer = data_pub->create_datawriter(data_topic, writer_qos(data_pub, true),
                                                     &writer_events);
        ep.need_c = ep.data_writer;
        ok = ok && ep.data_writer;
    }
    if (o.slots && o.mode == "pong")
    {
        data_reader = data_sub->create_datareader(data_topic, reader_qos(data_sub, true),
                                                  &slot_counter);
        ep.need_c = data_reader;
        ok = ok && data_reader;
    }
    if (o.mode == "ping")
    {
        pinger.sample.baggage.assign(o.size - KS_FIXED, 0xee);
        ep.need_a = pinger.writer;
        ep.need_b = pong_reader;
    }
    else if (o.mode == "pong")
    {
        ep.need_a = ping_reader;
    }
    else
    {
        ep.need_a = o.mode == "pub" ? static_cast<const void*>(ep.data_writer) : data_reader;
    }
    return ok;
}

static void print_latency(double t, uint32_t size, std::vector<double>& v)
{
    if (v.empty())
    {
        return;       // as ddsperf: no line for a second without pongs
    }
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v)
    {
        sum += x;
    }
    auto rank = [&v](double q) {
                    size_t k = static_cast<size_t>(std::ceil(q * v.size()));
                    return v[k == 0 ? 0 : k - 1];
                };
    say("latency t %.3f size %u count %zu mean %.3f min %.3f p50 %.3f p90 %.3f p99 %.3f "
        "max %.3f us", t, size, v.size(), sum / v.size(), v.front(), rank(0.5), rank(0.9),
        rank(0.99), v.back());
}

// ------------------------------------------------------------------------------ slots (-S)

static int64_t cpu_us()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (static_cast<int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1000000 +
           ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static double rank_us(const std::vector<int64_t>& sorted, double q)
{
    size_t k = static_cast<size_t>(std::ceil(q * sorted.size()));
    return sorted[k < 1 ? 0 : k - 1] / 1e3;
}

// The most remote endpoints matched by either local endpoint (1: just the peer).
static int most_matches(const void* a, const void* b)
{
    std::lock_guard<std::mutex> guard(g_lock);
    size_t x = g_matches[a].size(), y = b ? g_matches[b].size() : 0;
    return static_cast<int>(std::max(x, y));
}

// -n N: each reader's statistics over its samples sent after the settle time, as comma
// lists in reader order (the header comment).
static std::string report_readers(const std::vector<std::vector<SlotSample>>& per_reader,
                                  int64_t settle_ns)
{
    static const char* const names[] = {"n", "mean", "min", "p50", "p90", "p99", "max"};
    std::vector<std::vector<double>> stat;
    for (const auto& r : per_reader)
    {
        std::vector<int64_t> v;
        double sum = 0;
        for (const auto& x : r)
        {
            if (x.sent_ns >= settle_ns)
            {
                v.push_back(x.oneway_ns);
                sum += static_cast<double>(x.oneway_ns);
            }
        }
        std::sort(v.begin(), v.end());
        std::vector<double> f(7, 0.0);
        f[0] = static_cast<double>(v.size());
        if (!v.empty())
        {
            f[1] = sum / v.size() / 1e3;
            f[2] = v.front() / 1e3;
            f[3] = rank_us(v, 0.5);
            f[4] = rank_us(v, 0.9);
            f[5] = rank_us(v, 0.99);
            f[6] = v.back() / 1e3;
        }
        stat.push_back(f);
    }
    std::string out = " readers " + std::to_string(per_reader.size());
    char buf[64];
    for (size_t f = 0; f < 7; ++f)
    {
        out += std::string(" reader_") + names[f];
        for (size_t k = 0; k < stat.size(); ++k)
        {
            std::snprintf(buf, sizeof buf, f == 0 ? "%s%.0f" : "%s%.3f", k ? "," : " ",
                          stat[k][f]);
            out += buf;
        }
    }
    return out;
}

static void report_slot(uint32_t size, const std::vector<SlotSample>& s, int64_t settle_ns,
                        int64_t cpu, int64_t wall_ns, int peers,
                        const std::vector<std::vector<SlotSample>>& per_reader = {})
{
    std::vector<int64_t> v;
    v.reserve(s.size());
    double sum = 0;
    size_t nsettle = 0;
    for (const auto& x : s)
    {
        if (x.sent_ns < settle_ns)
        {
            ++nsettle;
        }
        else
        {
            v.push_back(x.oneway_ns);
            sum += static_cast<double>(x.oneway_ns);
        }
    }
    std::sort(v.begin(), v.end());
    char buf[256];
    std::string line = "slot " + std::to_string(size) + " n " + std::to_string(v.size()) +
        " settle_n " + std::to_string(nsettle);
    if (!v.empty())
    {
        std::snprintf(buf, sizeof buf, " mean %.3f min %.3f p50 %.3f p90 %.3f p99 %.3f max %.3f",
                      sum / v.size() / 1e3, v.front() / 1e3, rank_us(v, 0.5), rank_us(v, 0.9),
                      rank_us(v, 0.99), v.back() / 1e3);
        line += buf;
    }
    std::snprintf(buf, sizeof buf, " cpu_us %lld wall_us %lld peers %d tl ",
                  static_cast<long long>(cpu), static_cast<long long>(wall_ns / 1000), peers);
    line += buf;
    for (size_t i = 0; i < s.size();)        // samples are in send order
    {
        const int64_t bucket = s[i].sent_ns / TIMELINE_NS;
        std::vector<int64_t> m;
        size_t j = i;
        while (j < s.size() && s[j].sent_ns / TIMELINE_NS == bucket)
        {
            m.push_back(s[j++].oneway_ns);
        }
        std::sort(m.begin(), m.end());
        std::snprintf(buf, sizeof buf, "%s%.2f", i ? "," : "", rank_us(m, 0.5));
        line += buf;
        i = j;
    }
    line += " hist ";
    const double lb = std::log(HIST_BASE);
    auto bin_of = [lb](int64_t x) {
                      return x > 0 ? static_cast<long>(std::floor(std::log(double(x)) / lb)) : 0L;
                  };
    for (size_t k = 0; k < v.size();)
    {
        const long bin = bin_of(v[k]);
        size_t c = 0;
        while (k < v.size() && bin_of(v[k]) == bin)
        {
            ++c;
            ++k;
        }
        std::snprintf(buf, sizeof buf, "%s%ld:%zu", c == k ? "" : ",", bin, c);
        line += buf;
    }
    if (per_reader.size() > 1)
    {
        line += report_readers(per_reader, settle_ns);
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

// One command line from standard input: false at its end, on a stop signal (polled, so a
// signal is seen while waiting), for a line too long to be a command, or when `idle`
// (called every 200 ms without input) returns false.
static bool read_command(std::string& line, const std::function<bool()>& idle = nullptr)
{
    line.clear();
    while (!g_stop)
    {
        struct pollfd p = {STDIN_FILENO, POLLIN, 0};
        const int r = poll(&p, 1, 200);
        if (r < 0 && errno != EINTR)
        {
            return false;
        }
        if (r <= 0)
        {
            if (idle && !idle())
            {
                return false;
            }
            continue;
        }
        char c;
        if (read(STDIN_FILENO, &c, 1) != 1)   // commands are short and come once a slot
        {
            return false;
        }
        if (c == '\n')
        {
            return true;
        }
        line += c;
        if (line.size() > 200)
        {
            return false;
        }
    }
    return false;
}

// `sched fifo|normal`: every thread of this process to SCHED_FIFO 1 or normal scheduling
// (govkit runs latency slots real-time, throughput slots as ddsperf runs: normally); the
// answer is `sched ok` or `sched failed ERRNO`. As cyclone_perf's.
static void set_policy(const std::string& which)
{
    const bool fifo = which.rfind("fifo", 0) == 0;
    sched_param param{};
    param.sched_priority = fifo ? 1 : 0;
    int err = 0;
    DIR* dir = opendir("/proc/self/task");
    if (dir == nullptr)
    {
        err = errno;
    }
    for (dirent* e; dir != nullptr && (e = readdir(dir)) != nullptr;)
    {
        if (e->d_name[0] == '.')
        {
            continue;
        }
        if (sched_setscheduler(static_cast<pid_t>(std::atol(e->d_name)),
                               fifo ? SCHED_FIFO : SCHED_OTHER, &param) != 0 && errno != ESRCH)
        {
            err = errno;
        }
    }
    if (dir != nullptr)
    {
        closedir(dir);
    }
    if (err)
    {
        std::printf("sched failed %d\n", err);
    }
    else
    {
        std::printf("sched ok\n");
    }
    std::fflush(stdout);
}

// One throughput slot (-S ping, `tput SIZE SETTLE MEASURE TAG [RATE]`): write for settle +
// measure, as fast as the writer takes samples or paced at RATE samples/s, then the end
// marker, then wait for every acknowledgement, so no slot's traffic runs into the next one.
static int run_tput(DataWriter* writer, uint32_t size, long long settle_us,
                    long long measure_us, uint32_t tag, int peers_of_pings, double rate)
{
    KeyedSeq s;
    s.keyval = 0;
    s.baggage.assign(size - KS_FIXED, 0xee);
    const int64_t cpu0 = cpu_us();
    const auto start = SteadyClock::now();
    const auto measure_from = start + std::chrono::microseconds(settle_us);
    const auto end = measure_from + std::chrono::microseconds(measure_us);
    uint64_t sent = 0, settle_sent = 0;
    uint32_t ctr = 0;
    auto write = [&](uint32_t phase) {
        s.seq = (tag << TAG_SHIFT) | (phase << PHASE_SHIFT) | (ctr++ & CTR_MASK);
        // reliable, keep-all: write times out while the history is full; 10 s without
        // room is a stopped pong
        const auto give_up = SteadyClock::now() + std::chrono::seconds(10);
        while (writer->write(&s, HANDLE_NIL) != ReturnCode_t::RETCODE_OK)
        {
            if (g_stop || SteadyClock::now() > give_up)
            {
                return false;
            }
        }
        return true;
    };
    for (auto t = start; t < end && !g_stop; t = SteadyClock::now())
    {
        if (rate > 0)       // sample k is due at start + k / rate
        {
            const auto due = start + std::chrono::nanoseconds(
                static_cast<int64_t>(static_cast<double>(sent) * 1e9 / rate));
            if (t < due)
            {
                std::this_thread::sleep_until(due);
                continue;
            }
        }
        const uint32_t phase = t < measure_from ? PH_SETTLE : PH_MEASURE;
        if (!write(phase))
        {
            fail("a %u-byte throughput sample found no room for 10 s (the pong process "
                 "stopped?)", size);
            return EXIT_STUCK;
        }
        ++sent;
        settle_sent += phase == PH_SETTLE;
    }
    if (!write(PH_END) || writer->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(10, 0))
            != ReturnCode_t::RETCODE_OK)
    {
        fail("the throughput slot's samples were not acknowledged within 10 s (the pong "
             "process stopped?)");
        return EXIT_STUCK;
    }
    std::printf("tslot %u sent %llu settle_sent %llu cpu_us %lld wall_us %lld peers %d\n",
                size, static_cast<unsigned long long>(sent - settle_sent),
                static_cast<unsigned long long>(settle_sent),
                static_cast<long long>(cpu_us() - cpu0),
                static_cast<long long>(ns_between(start, SteadyClock::now()) / 1000),
                std::max(peers_of_pings, most_matches(writer, nullptr)));
    std::fflush(stdout);
    return EXIT_DONE;
}

static int serve_slots(Pinger& pinger, const void* writer, const void* reader,
                       DataWriter* data_writer)
{
    std::string line;
    while (read_command(line))
    {
        unsigned long size = 0;
        long long settle = 0, measure = 0;
        unsigned tag = 0;
        double rate = 0;
        const int fields = std::sscanf(line.c_str(), "tput %lu %lld %lld %u %lf", &size,
                                       &settle, &measure, &tag, &rate);
        if (fields >= 4)
        {
            if (fields == 4)
            {
                rate = 0;
            }
            if (size < KS_FIXED || size > (1ul << 26) || settle < 0 || measure <= 0 ||
                    settle + measure > 3600LL * 1000000 || tag > 255 || data_writer == nullptr
                    || !(rate >= 0) || rate > 1e9)
            {
                fail("bad tput command: %s", line.c_str());
                return EXIT_USAGE;
            }
            const int rc = run_tput(data_writer, static_cast<uint32_t>(size), settle, measure,
                                    tag, most_matches(writer, reader), rate);
            if (rc != EXIT_DONE)
            {
                return rc;
            }
        }
        else if (std::sscanf(line.c_str(), "slot %lu %lld %lld", &size, &settle, &measure) == 3)
        {
            if (size < KS_FIXED || size > (1ul << 26) || settle < 0 || measure <= 0 ||
                    settle + measure > 3600LL * 1000000)
            {
                fail("bad slot command: %s", line.c_str());
                return EXIT_USAGE;
            }
            std::vector<SlotSample> samples;
            std::vector<std::vector<SlotSample>> per_reader;
            const int64_t cpu0 = cpu_us();
            const auto start = SteadyClock::now();
            if (!pinger.run_slot(static_cast<uint32_t>(size), settle, measure, samples,
                                 &per_reader))
            {
                fail("ping %u of a %lu-byte slot was not answered within 10 s (the pong "
                     "process stopped?)", pinger.outstanding_seq(), size);
                return EXIT_STUCK;
            }
            report_slot(static_cast<uint32_t>(size), samples, settle * 1000, cpu_us() - cpu0,
                        ns_between(start, SteadyClock::now()), most_matches(writer, reader),
                        per_reader);
        }
        else if (line.rfind("sched ", 0) == 0)
        {
            set_policy(line.substr(6));
        }
        else if (line.rfind("quit", 0) == 0)
        {
            break;
        }
        else
        {
            fail("unknown command: %.60s", line.c_str());
            return EXIT_USAGE;
        }
    }
    return EXIT_DONE;
}

static int serve_pongs(DomainParticipant* dp, Topic* pong_topic, WriterEvents& events,
                       bool answers, SlotCounter& slot_counter)
{
    bool dds_ok = true;
    std::string line;
    while (read_command(line, [&]() {
                               dds_ok = make_pong_writers(dp, pong_topic, &events, answers);
                               return dds_ok;
                           }))              // until govkit closes our input
    {
        unsigned tag = 0;
        if (line == "cpu")
        {
            std::printf("cpu_us %lld\n", static_cast<long long>(cpu_us()));
            std::fflush(stdout);
        }
        else if (std::sscanf(line.c_str(), "count %u", &tag) == 1)
        {
            std::printf("%s\n", slot_counter.answer(tag).c_str());
            std::fflush(stdout);
        }
        else if (line.rfind("sched ", 0) == 0)
        {
            set_policy(line.substr(6));
        }
    }
    return dds_ok ? EXIT_DONE : EXIT_DDS;
}

int run(const Options& o)
{
    const auto t_created = SteadyClock::now();
    char host[256] = "?";
    gethostname(host, sizeof(host) - 1);
    const bool has_reader = o.mode == "sub";
    std::string udata = "DDSPerf:" + std::to_string(has_reader ? 1 : 0) + ":" +
        std::to_string(g_pid) + ":" + host;

    DomainParticipantFactory* factory = DomainParticipantFactory::get_instance();
    DomainParticipantQos pqos = factory->get_default_participant_qos();
    pqos.user_data().assign(udata.begin(), udata.end());
    pqos.user_data().length = static_cast<uint16_t>((udata.size() + 7u) & ~3u);
    loopback_only(pqos);
    if (!o.security.empty() && !read_properties(o.security, pqos))
    {
        return EXIT_USAGE;
    }
    if (o.keysize)
    {
        g_crypto_properties.emplace_back("dds.sec.crypto.keysize", std::to_string(o.keysize));
    }
    if (o.rekey)
    {
        g_crypto_properties.emplace_back("dds.sec.crypto.maxblockspersession",
                                         std::to_string(o.rekey));
    }
    for (const auto& p : g_crypto_properties)
    {
        pqos.properties().properties().emplace_back(p.first, p.second);
        say("crypto property %s=%s on the participant and its writers and readers",
            p.first.c_str(), p.second.c_str());
    }
    ParticipantEvents participant_events;
    // Mask none: discovery callbacks still come, but a participant listener that takes
    // DATA_ON_READERS would swallow every reader's on_data_available.
    DomainParticipant* dp = factory->create_participant(o.domain, pqos, &participant_events,
                                                        StatusMask::none());
    if (dp == nullptr)
    {
        fail("cannot create the participant on domain %d (Fast DDS gives no reason: a "
             "security file refused, or the domain id too large for its ports)", o.domain);
        Log::Flush();
        return EXIT_PARTICIPANT;
    }
    g_self = dp->guid().guidPrefix;
    say("participant %s:%ld: new (self)", host, g_pid);

    int rc = EXIT_DONE;
    WriterEvents writer_events;
    Pinger pinger;
    Ponger ponger;
    Counter counter;
    SlotCounter slot_counter;
    Endpoints ep;
    if (!create_endpoints(dp, o, ep, writer_events, pinger, ponger, counter, slot_counter))
    {
        fail("cannot create the %s endpoints on domain %d", o.mode.c_str(), o.domain);
        rc = EXIT_DDS;
    }
    const void* need_a = ep.need_a;
    const void* need_b = ep.need_b;
    DataWriter* data_writer = ep.data_writer;
    Topic* pong_topic = ep.pong_topic;

    // Wait for the peer: every endpoint this mode needs matched a remote one (a pong also
    // needs its pong writer for the pinging participant to have matched).
    const auto t0 = SteadyClock::now();
    const auto wait_end = t0 + std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(o.wait_s));
    bool is_matched = false;
    while (rc == EXIT_DONE && !g_stop)
    {
        if (!make_pong_writers(dp, pong_topic, &writer_events, ep.answers_pings))
        {
            rc = EXIT_DDS;
            break;
        }
        std::unique_lock<std::mutex> guard(g_lock);
        bool pong_ready = o.mode != "pong";
        for (auto& kv : g_pong_writers)
        {
            pong_ready = pong_ready || has_match(kv.second);
        }
        if (has_match(need_a) && (need_b == nullptr || has_match(need_b)) &&
                (ep.need_c == nullptr || has_match(ep.need_c)) && pong_ready)
        {
            is_matched = true;
            break;
        }
        if (SteadyClock::now() >= wait_end)
        {
            break;
        }
        g_wake.wait_for(guard, std::chrono::milliseconds(50));
    }
    if (rc == EXIT_DONE && !is_matched && !g_stop)
    {
        if (g_readers > 1)
        {
            size_t fewest = SIZE_MAX;
            std::lock_guard<std::mutex> guard(g_lock);
            for (const void* e : {need_a, need_b, static_cast<const void*>(ep.need_c)})
            {
                if (e != nullptr)
                {
                    fewest = std::min(fewest, g_matches[e].size());
                }
            }
            fail("no peer matched within %g s on domain %d: %zu of %d readers (pong given "
                 "fewer readers, or refused)", o.wait_s, o.domain, fewest, g_readers);
        }
        else
        {
            fail("no peer matched within %g s on domain %d", o.wait_s, o.domain);
        }
        rc = EXIT_NO_MATCH;
    }

    if (rc == EXIT_DONE && is_matched && o.slots)
    {
        std::printf("ready %.6f\n",
                    std::chrono::duration<double>(SteadyClock::now() - t_created).count());
        std::fflush(stdout);
        rc = o.mode == "ping" ? serve_slots(pinger, need_a, need_b, data_writer)
                              : serve_pongs(dp, pong_topic, writer_events, ep.answers_pings,
                                            slot_counter);
        g_stop = true;
    }
    if (rc == EXIT_DONE && is_matched && !o.slots)
    {
        const auto tm = SteadyClock::now();
        say("matched after %.3f s", std::chrono::duration<double>(tm - t0).count());
        const auto end = o.duration_s < 0 ? SteadyClock::time_point::max()
            : tm + std::chrono::duration_cast<SteadyClock::duration>(
                std::chrono::duration<double>(o.duration_s));
        std::thread publisher;
        if (o.mode == "ping")
        {
            pinger.start();
        }
        else if (o.mode == "pub")
        {
            publisher = std::thread([&]() {
                KeyedSeq s;
                s.baggage.assign(o.size - KS_FIXED, 0xee);
                while (!g_stop)
                {
                    ++s.seq;
                    // reliable, keep-all: write blocks while the history is full
                    while (!g_stop && data_writer->write(&s, HANDLE_NIL) !=
                            ReturnCode_t::RETCODE_OK)
                    {
                    }
                }
            });
        }
        auto tick = tm;
        for (int second = 1; !g_stop; ++second)
        {
            tick += std::chrono::seconds(1);
            {
                std::unique_lock<std::mutex> guard(g_lock);
                while (!g_stop && SteadyClock::now() < tick)
                {
                    g_wake.wait_until(guard, std::min(tick, end));
                    if (SteadyClock::now() >= end)
                    {
                        break;
                    }
                }
            }
            if (g_stop || SteadyClock::now() >= end)
            {
                break;
            }
            const double t = std::chrono::duration<double>(SteadyClock::now() - tm).count();
            if (o.mode == "ping")
            {
                std::vector<double> v = pinger.take_samples();
                print_latency(t, o.size, v);
                pinger.resend_if_stalled();
            }
            else if (o.mode == "sub")
            {
                uint64_t count, lost;
                uint32_t size;
                counter.take(count, lost, size);
                const double dt = 1.0;
                say("throughput t %.3f size %u count %llu lost %llu rate %.2f samples/s "
                    "mbps %.2f", t, size, static_cast<unsigned long long>(count),
                    static_cast<unsigned long long>(lost), count / dt,
                    count * size * 8.0 / dt / 1e6);
            }
            if (!make_pong_writers(dp, pong_topic, &writer_events, ep.answers_pings))
            {
                rc = EXIT_DDS;
                break;
            }
        }
        g_stop = true;
        if (publisher.joinable())
        {
            publisher.join();
        }
    }

    // Listeners first (no callback may run into deleted entities), then everything.
    dp->set_listener(nullptr);
    dp->delete_contained_entities();
    factory->delete_participant(dp);
    Log::Flush();
    return rc;
}

int main(int argc, char** argv)
{
    g_pid = static_cast<long>(getpid());
    Options o;
    if (!parse_args(argc, argv, o))
    {
        usage();
        return EXIT_USAGE;
    }
    if (o.slots)
    {
        g_events = stderr;
    }
    // -n: before any thread exists (fork keeps only the calling thread)
    if (o.mode == "ping")
    {
        g_readers = o.readers;
    }
    else
    {
        g_reader_index = readers_fork(o.readers);   // the parent relays and never returns
        g_pid = static_cast<long>(getpid());
    }
    if (o.domain > MAX_DOMAIN_ID)
    {
        // Fast DDS itself would print a line to stdout and exit(EXIT_FAILURE) mid-creation.
        fail("domain id %d: Fast DDS supports 0 .. %d (its UDP ports, 7400 + 250 x domain + "
             "..., would pass 65535)", o.domain, MAX_DOMAIN_ID);
        return EXIT_USAGE;
    }
    // Block the stop signals in every thread (Fast DDS's inherit the mask) and take them in
    // one thread of our own, so that a signal ends the run through the normal clean-up.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(signal_thread, set).detach();
    Log::ClearConsumers();
    Log::RegisterConsumer(std::unique_ptr<LogConsumer>(new PlainLog()));
    Log::SetVerbosity(Log::Warning);
    return run(o);
}
