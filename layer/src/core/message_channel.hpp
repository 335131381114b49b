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
// Nothing here writes to stdout or stderr (they belong to the application); failures are kept
// for last_error().

#include "core/server_commands.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace vkscope {

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

    // Frames written first on every connection, before anything queued (the HELLO message, which
    // the protocol wants at the start of each connection, reconnections included). Also written on
    // the current connection if it has not seen this greeting yet.
    void set_greeting(std::string frames);

    // Posted frames dropped so far / written to a connection in full. After close(), every posted
    // frame is counted in exactly one of the two. DROPPED frames and greetings count in neither.
    uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
    uint64_t sent() const noexcept { return sent_.load(std::memory_order_relaxed); }
    bool connected() const noexcept { return link_.load(std::memory_order_relaxed) == Link::Up; }
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

private:
    struct Endpoint;
    enum class Link : uint8_t { Connecting, Up, Down };
    using Clock = std::chrono::steady_clock;

    MessageChannel(std::string address, std::unique_ptr<Endpoint> endpoint, size_t max_messages,
                   size_t max_bytes, int wake_read, int wake_write);

    // Sender thread side.
    void run();
    int connect_endpoint();
    bool send_all(const std::string* frames, size_t count, size_t& frames_done);
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
    const int wake_read_;
    const int wake_write_;

    mutable std::mutex mutex_; // guards everything down to the next comment
    std::condition_variable wake_cv_;
    std::vector<std::string> queue_; // swapped with the sender's batch, so capacity is reused
    bool flush_ = false;             // something queued is to be written now, not held
    bool sender_idle_ = false;       // the sender sleeps until the next post
    size_t pending_messages_ = 0;    // queued plus being written
    size_t pending_bytes_ = 0;
    bool stopping_ = false;
    Clock::time_point deadline_{};
    std::string greeting_;
    uint64_t greeting_version_ = 0;
    std::string last_error_;

    std::atomic<Link> link_{Link::Connecting}; // changed under mutex_, read anywhere
    std::atomic<bool> stop_flag_{false};       // stopping_, readable without the lock
    std::atomic<uint64_t> dropped_{0};
    std::atomic<uint64_t> sent_{0};
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
