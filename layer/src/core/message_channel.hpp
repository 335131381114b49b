#pragma once
// The layer's one connection to the capture server: a bounded queue of encoded frames and a
// sender thread.
//
// Messages are written in batches: the end of a frame, a device's description and the end of the
// process at once, with everything queued before them; the rest at most 20 ms after they were
// posted, or as soon as 64 KiB are queued.
//
// The application must never wait for the server. post() only ever takes a short lock around the
// queue: when the queue is full, or the server is unreachable, the frame is dropped and counted,
// and the server is told the running count (a DROPPED frame) before the next frame that does get
// through. The sender reconnects with backoff when the server goes away, so a server started after
// the application still receives the rest of the run.
//
// A posting thread may also hand over a record (OutgoingRecord) instead of encoded frames: the
// sender thread encodes it, so the thread that posts it (the application's, inside
// vkQueueSubmit) spends nothing on the wire format.
//
// Nothing here writes to stdout or stderr (they belong to the application); failures are kept
// for last_error().
//
// A child forked after the channel opened has none of the parent's threads, and shares the
// parent's socket: the channel is the parent's there until the child first posts to it (or sets
// its greeting), which reopens it as the child's own: a new connection, greeted anew (the
// greeting is made again, with the child's pid), a new sender. What the parent had queued stays
// the parent's to send; a child that only closes the channel lets go of the parent's.

#include "core/server_commands.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace vkscope {

// One or more messages as a compact record of what they say, to be encoded into frames by the
// sender thread.
class OutgoingRecord {
public:
    virtual ~OutgoingRecord() = default;
    // The messages it holds: what the queue's bound counts, and what is sent or dropped.
    virtual size_t messages() const = 0;
    // About the bytes its frames will take, for the queue's byte bound.
    virtual size_t bytes() const = 0;
    // Sender thread: appends its frames to `out` and returns how many of its messages could not
    // be encoded (a payload over the protocol's limit), which count as dropped.
    virtual size_t encode(std::string& out) = 0;
};

class MessageChannel {
public:
    // `address` is "unix:/path/to/socket", "unix:@abstract-name" (Linux) or "tcp:HOST:PORT" with
    // an IPv4 literal or "localhost". Returns nullptr, with the reason in *error when error is
    // not null, for a malformed address or when the sender thread cannot start. Connecting
    // happens on the sender thread: frames posted before the first attempt has finished are
    // queued; once an attempt has failed they are dropped until a later one succeeds.
    static std::unique_ptr<MessageChannel> open(std::string address, size_t max_messages,
                                                size_t max_bytes, std::string* error = nullptr);

    MessageChannel(const MessageChannel&) = delete;
    MessageChannel& operator=(const MessageChannel&) = delete;
    ~MessageChannel(); // close(kDefaultGrace)

    // Queues one encoded frame; never blocks on the network. False when it was dropped (queue
    // full by count or bytes, server unreachable, or channel closed).
    bool post(std::string frame);
    // Several encoded frames at once, `messages` of them, dropped or sent together.
    bool post(std::string frames, size_t messages);
    // Queues a record, encoded by the sender thread; dropped whole as post() drops a frame.
    bool post(std::unique_ptr<OutgoingRecord> record);

    // Frames written first on every connection, before anything queued (the HELLO message, which
    // the protocol wants at the start of each connection, reconnections included). Also written on
    // the current connection if it has not seen this greeting yet. `make` is called now, and
    // again in a forked child that reopens the channel as its own.
    void set_greeting(std::function<std::string()> make);
    void set_greeting(std::string frames) {
        set_greeting([frames = std::move(frames)] { return frames; });
    }

    // For a fatal signal's handler, on any thread but the sender's: waits until the sender has
    // written (or given up on) every frame posted before the call, for at most `limit`; false
    // when it did not finish. Async-signal-safe: it reads atomics, and sleeps with nanosleep().
    bool wait_for_sender(std::chrono::milliseconds limit) const noexcept;

    // Posted frames dropped so far / written to a connection in full. After close(), every posted
    // frame is counted in exactly one of the two. DROPPED frames and greetings count in neither.
    // In a forked child that has not reopened the channel, all three say nothing of the parent's.
    uint64_t dropped() const noexcept {
        return inherited() ? 0 : dropped_.load(std::memory_order_relaxed);
    }
    uint64_t sent() const noexcept {
        return inherited() ? 0 : sent_.load(std::memory_order_relaxed);
    }
    bool connected() const noexcept {
        return !inherited() && link_.load(std::memory_order_relaxed) == Link::Up;
    }
    std::string last_error() const;

    // The server's latest CAPTURE command (frames to capture from the next frame on, 0: stop),
    // once; nullopt when none came since the last call. Commands are read whenever the sender wakes
    // to write, which the FRAME message of every frame end makes happen within the hold (20 ms).
    std::optional<uint64_t> take_frame_request() noexcept {
        const uint64_t v = frame_request_.exchange(kNoRequest, std::memory_order_acq_rel);
        return v == kNoRequest ? std::nullopt : std::optional<uint64_t>(v);
    }
    const std::string& address() const noexcept { return address_; }

    // Lets the sender flush what is queued for at most `grace`, then stops it; whatever is left is
    // counted as dropped. Later posts are dropped. Safe to call more than once.
    void close(std::chrono::milliseconds grace);

    static constexpr std::chrono::milliseconds kDefaultGrace{100};

    // How many fork()s separate this process from the one that loaded the layer: a child counts
    // one more than its parent.
    static uint64_t fork_generation() noexcept;

private:
    struct Endpoint;
    enum class Link : uint8_t { Connecting, Up, Down };
    using Clock = std::chrono::steady_clock;

    // What waits in the queue: encoded frames, or a record until the sender encodes it.
    struct Pending {
        std::string frames;
        std::unique_ptr<OutgoingRecord> record;
        size_t messages = 1;
        size_t charged = 0; // bytes counted against max_bytes_
    };

    MessageChannel(std::string address, std::unique_ptr<Endpoint> endpoint, size_t max_messages,
                   size_t max_bytes, int wake_read, int wake_write);

    bool enqueue(Pending item, bool urgent);

    // Starts the sender thread, with every signal blocked.
    void start_sender();
    // True in a forked child until it has made the channel its own (revive()).
    bool inherited() const noexcept;
    // In a forked child: leaves the parent's locks, thread, socket and queue behind, unused; then
    // reopens the channel as the child's unless it was closed.
    void revive();
    void forget_parent();

    // Sender thread side.
    void run();
    int connect_endpoint();
    // Writes frames_of(i) for i < count in order; `frames_done`: how many were written in full.
    template <typename FramesOf>
    bool send_all(size_t count, const FramesOf& frames_of, size_t& frames_done);
    bool send_one(const std::string& frames);
    // Encodes the batch's records; their messages that cannot be encoded are dropped.
    void encode(std::vector<Pending>& batch);
    bool wait_writable(int fd);
    void disconnect();
    void record_error(std::string why);
    void read_commands();

    static constexpr uint64_t kNoRequest = UINT64_MAX;

    const std::string address_;
    const std::unique_ptr<Endpoint> endpoint_;
    const size_t max_messages_;
    const size_t max_bytes_;
    // A pipe that close() writes to, waking the sender from poll() so that it notices the deadline.
    // Replaced in a forked child, which must not share it with the parent.
    int wake_read_;
    int wake_write_;
    // The fork generation this channel belongs to (inherited()).
    std::atomic<uint64_t> generation_;

    mutable std::mutex mutex_; // guards everything down to the next comment
    std::condition_variable wake_cv_;
    std::vector<Pending> queue_;  // swapped with the sender's batch, so capacity is reused
    bool flush_ = false;          // something queued is to be written now, not held
    bool sender_idle_ = false;    // the sender sleeps until the next post
    size_t pending_messages_ = 0; // queued plus being written, records' messages included
    size_t pending_bytes_ = 0;
    bool stopping_ = false;
    Clock::time_point deadline_{};
    std::string greeting_;
    std::function<std::string()> make_greeting_;
    uint64_t greeting_version_ = 0;
    std::string last_error_;

    std::atomic<Link> link_{Link::Connecting}; // changed under mutex_, read anywhere
    std::atomic<bool> stop_flag_{false};       // stopping_, readable without the lock
    std::atomic<uint64_t> dropped_{0};
    std::atomic<uint64_t> sent_{0};
    // Items (frames or records) post() queued / the sender has written or dropped since:
    // wait_for_sender() compares them, the queue being first in, first out.
    std::atomic<uint64_t> accepted_{0};
    std::atomic<uint64_t> finished_{0};
    std::atomic<uint64_t> frame_request_{kNoRequest};

    // Sender thread only.
    int fd_ = -1;
    uint64_t reported_drops_ = 0;
    uint64_t greeting_sent_ = 0; // greeting_version_ written on this connection; 0: none
    std::string scratch_;
    ServerCommandReader commands_; // reset with every connection

    std::mutex close_mutex_;
    std::thread thread_;
};

} // namespace vkscope
