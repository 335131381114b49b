#include "core/message_channel.hpp"

#include "core/pending_posts.hpp"

#include "core/background_thread.hpp"
#include "core/monotonic_clock.hpp"
#include "core/socket_address.hpp"
#include "core/wire_format.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <new>
#include <optional>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <system_error>
#include <time.h>
#include <unistd.h>

namespace vkscope {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kMinBackoff = 50ms;
constexpr std::chrono::milliseconds kMaxBackoff = 1000ms;
constexpr size_t kMaxIovecs = 64;
// Messages wait in the queue for at most kHold, or until kFlushBytes are queued, and then go out
// in one write: the sender and the capture server wake about once per kHold whatever the frame
// rate, instead of once a message or once a frame, which on short frames (a millisecond) is what
// they cost the application most. Each write also lets the sender read the server's commands, so
// a command takes effect within kHold and a frame.
constexpr std::chrono::milliseconds kHold = 20ms;
constexpr size_t kFlushBytes = 64 << 10;

// Messages that are written at once: a device's description, the end of the process.
bool urgent(const std::string& frame) {
    if (frame.empty()) {
        return true;
    }
    const auto type = static_cast<MessageType>(static_cast<uint8_t>(frame.front()));
    return type == MessageType::Device || type == MessageType::Goodbye;
}

// A capture server that goes away must cost the application a dropped frame, never a SIGPIPE: Linux
// takes a per-call flag, Apple platforms a socket option (set in make_stream_socket).
#ifdef MSG_NOSIGNAL
constexpr int kSendFlags = MSG_NOSIGNAL;
#else
constexpr int kSendFlags = 0;
#endif

std::string errno_text(std::string_view what, int err) {
    std::string text(what);
    text += ": ";
    text += std::error_code(err, std::generic_category()).message();
    return text;
}

// fork(): each child counts one generation more than its parent, so a channel knows it was
// inherited (MessageChannel::inherited). The lock serializes children's revivals; the parent
// holds it across fork() so that no child starts with it taken by a thread it does not have.
std::atomic<uint64_t> g_fork_generation{0};
std::mutex g_revive_mutex;
std::once_flag g_fork_handlers;

void before_fork() noexcept {
    g_revive_mutex.lock();
}
void after_fork_in_parent() noexcept {
    g_revive_mutex.unlock();
}
void after_fork_in_child() noexcept {
    g_fork_generation.fetch_add(1, std::memory_order_relaxed);
    g_revive_mutex.unlock();
}

static_assert(std::atomic<uint64_t>::is_always_lock_free, "read by a signal handler");

template <typename Items> size_t total_charged(const Items& items) {
    size_t bytes = 0;
    for (const auto& item : items) {
        bytes += item.charged;
    }
    return bytes;
}

template <typename Items> size_t total_messages(const Items& items, size_t first = 0) {
    size_t n = 0;
    for (size_t i = first; i < items.size(); ++i) {
        n += items[i].messages;
    }
    return n;
}

} // namespace

struct MessageChannel::Endpoint {
    SocketAddress address;
};

std::unique_ptr<MessageChannel> MessageChannel::open(std::string address, size_t max_messages,
                                                     size_t max_bytes, std::string* error) {
    std::string why;
    const std::optional<SocketAddress> parsed = parse_socket_address(address, why);
    int wake[2] = {-1, -1};
    if (parsed && pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        why = errno_text("pipe", errno);
    }
    if (!parsed || wake[0] < 0) {
        if (error != nullptr) {
            *error = std::move(why);
        }
        return nullptr;
    }
    std::call_once(g_fork_handlers,
                   [] { pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child); });
    std::unique_ptr<MessageChannel> channel;
    try {
        channel.reset(new MessageChannel(std::move(address),
                                         std::make_unique<Endpoint>(Endpoint{*parsed}),
                                         max_messages, max_bytes, wake[0], wake[1]));
        channel->start_sender();
    } catch (const std::exception& e) {
        if (!channel) {
            ::close(wake[0]);
            ::close(wake[1]);
        }
        if (error != nullptr) {
            *error = std::string("cannot start the vkscope sender: ") + e.what();
        }
        return nullptr;
    }
    return channel;
}

MessageChannel::MessageChannel(std::string address, std::unique_ptr<Endpoint> endpoint,
                               size_t max_messages, size_t max_bytes, int wake_read, int wake_write)
    : address_(std::move(address)), endpoint_(std::move(endpoint)), max_messages_(max_messages),
      max_bytes_(max_bytes), wake_read_(wake_read), wake_write_(wake_write),
      generation_(g_fork_generation.load(std::memory_order_relaxed)) {}

MessageChannel::~MessageChannel() {
    close(kDefaultGrace);
    if (wake_read_ >= 0) {
        ::close(wake_read_);
        ::close(wake_write_);
    }
}

void MessageChannel::start_sender() {
    thread_ = start_layer_thread([this] { run(); });
}

uint64_t MessageChannel::fork_generation() noexcept {
    return g_fork_generation.load(std::memory_order_relaxed);
}

bool MessageChannel::inherited() const noexcept {
    return generation_.load(std::memory_order_acquire) !=
           g_fork_generation.load(std::memory_order_relaxed);
}

void MessageChannel::forget_parent() {
    // The parent's threads are not this process's: a lock one of them held stays held, a thread
    // cannot be joined, a condition variable may count a waiter that is gone. They are left as
    // they are (never unlocked, joined or destroyed) and made anew.
    new (&mutex_) std::mutex();
    new (&wake_cv_) std::condition_variable();
    new (&close_mutex_) std::mutex();
    new (&thread_) std::thread();
    // The socket and the pipe are the parent's too: this process's copies of them are closed.
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    if (wake_read_ >= 0) {
        ::close(wake_read_);
        ::close(wake_write_);
        wake_read_ = wake_write_ = -1;
    }
    queue_.clear(); // the parent's frames: it sends them
    flush_ = false;
    sender_idle_ = false;
    pending_messages_ = 0;
    pending_bytes_ = 0;
    last_error_.clear();
    greeting_version_ = 0;
    link_.store(Link::Connecting, std::memory_order_relaxed);
    dropped_.store(0, std::memory_order_relaxed);
    sent_.store(0, std::memory_order_relaxed);
    accepted_.store(0, std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    frame_request_.store(kNoRequest, std::memory_order_relaxed);
    reported_drops_ = 0;
    greeting_sent_ = 0;
    commands_ = ServerCommandReader{};
}

void MessageChannel::revive() {
    std::lock_guard revival(g_revive_mutex);
    const uint64_t generation = g_fork_generation.load(std::memory_order_relaxed);
    if (generation_.load(std::memory_order_relaxed) == generation) {
        return; // another thread of this child did it
    }
    forget_parent();
    if (!stopping_) {
        int wake[2] = {-1, -1};
        std::string why;
        if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
            why = errno_text("pipe", errno);
        } else {
            wake_read_ = wake[0];
            wake_write_ = wake[1];
            if (make_greeting_) {
                greeting_ = make_greeting_();
                greeting_version_ = 1;
            }
            try {
                start_sender();
            } catch (const std::exception& e) {
                why = std::string("cannot start the vkscope sender: ") + e.what();
            }
        }
        if (!why.empty()) {
            // Nothing of this child will reach the host: posts are dropped, and counted.
            last_error_ = "after fork(): " + why;
            stopping_ = true;
            stop_flag_.store(true, std::memory_order_release);
            link_.store(Link::Down, std::memory_order_relaxed);
        }
    } else {
        link_.store(Link::Down, std::memory_order_relaxed);
    }
    generation_.store(generation, std::memory_order_release);
}

bool MessageChannel::wait_for_sender(std::chrono::milliseconds limit) const noexcept {
    if (inherited()) {
        return true; // the parent's frames, the parent's sender
    }
    const uint64_t target = accepted_.load(std::memory_order_acquire);
    const uint64_t deadline =
        monotonic_ns() + static_cast<uint64_t>(std::chrono::nanoseconds(limit).count());
    for (;;) {
        if (finished_.load(std::memory_order_acquire) >= target) {
            return true;
        }
        if (monotonic_ns() >= deadline) {
            return false;
        }
        timespec step{0, 1'000'000};
        nanosleep(&step, nullptr);
    }
}

bool MessageChannel::post(std::string frame) {
    const bool now = urgent(frame);
    const size_t bytes = frame.size();
    return enqueue(Pending{std::move(frame), nullptr, 1, bytes}, now);
}

bool MessageChannel::post(std::string frames, size_t messages) {
    const bool now = urgent(frames);
    const size_t bytes = frames.size();
    return enqueue(Pending{std::move(frames), nullptr, messages, bytes}, now);
}

bool MessageChannel::post(std::unique_ptr<OutgoingRecord> record) {
    const size_t messages = record->messages();
    const size_t bytes = record->bytes();
    return enqueue(Pending{{}, std::move(record), messages, bytes}, false);
}

bool MessageChannel::enqueue(Pending item, bool now) {
    if (inherited()) [[unlikely]] {
        revive();
    }
    bool queued = false;
    bool wake = false;
    const size_t messages = item.messages;
    {
        std::lock_guard lock(mutex_);
        if (!stopping_ && link_.load(std::memory_order_relaxed) != Link::Down &&
            messages <= max_messages_ - pending_messages_ &&
            item.charged <= max_bytes_ - pending_bytes_) {
            pending_messages_ += messages;
            pending_bytes_ += item.charged;
            queue_.push_back(std::move(item));
            accepted_.store(accepted_.load(std::memory_order_relaxed) + 1,
                            std::memory_order_release);
            queued = true;
            flush_ = flush_ || now || pending_bytes_ >= kFlushBytes;
            // The sender sleeps without a deadline only while nothing is queued: wake it to
            // start its hold, and whenever the queue is to be written now.
            wake = flush_ || sender_idle_;
            sender_idle_ = false;
        }
    }
    if (!queued) {
        dropped_.fetch_add(messages, std::memory_order_relaxed);
        return false;
    }
    if (wake) {
        wake_cv_.notify_one();
    }
    return true;
}

void MessageChannel::set_greeting(std::function<std::string()> make) {
    if (inherited()) {
        revive();
    }
    std::string frames = make();
    {
        std::lock_guard lock(mutex_);
        greeting_ = std::move(frames);
        make_greeting_ = std::move(make);
        ++greeting_version_;
    }
    wake_cv_.notify_one();
}

std::string MessageChannel::last_error() const {
    if (inherited()) {
        return {}; // the parent's lock may be held by a thread this child does not have
    }
    std::lock_guard lock(mutex_);
    return last_error_;
}

void MessageChannel::close(std::chrono::milliseconds grace) {
    if (inherited()) {
        // A child that never posted lets go of the parent's channel without starting its own.
        std::lock_guard revival(g_revive_mutex);
        const uint64_t generation = g_fork_generation.load(std::memory_order_relaxed);
        if (generation_.load(std::memory_order_relaxed) != generation) {
            forget_parent();
            stopping_ = true;
            stop_flag_.store(true, std::memory_order_release);
            link_.store(Link::Down, std::memory_order_relaxed);
            generation_.store(generation, std::memory_order_release);
        }
    }
    if (!stop_flag_.load(std::memory_order_acquire)) {
        // Work another of the layer's threads will post from (pending_posts.hpp) gets the grace
        // too, before the queue stops taking posts.
        wait_for_pending_posts(grace);
    }
    std::lock_guard closing(close_mutex_);
    {
        std::lock_guard lock(mutex_);
        if (!stopping_) {
            stopping_ = true;
            deadline_ = Clock::now() + grace;
            stop_flag_.store(true, std::memory_order_release);
        }
    }
    wake_cv_.notify_all();
    // After stop_flag_ is set, so a sender about to poll() without having seen it still wakes.
    const char byte = 0;
    if (wake_write_ >= 0 && ::write(wake_write_, &byte, 1) < 0) {
        // Full pipe: a wake-up is already pending.
    }
    if (thread_.joinable()) {
        thread_.join();
    }
}

void MessageChannel::record_error(std::string why) {
    std::lock_guard lock(mutex_);
    last_error_ = std::move(why);
}

void MessageChannel::run() {
    become_background_thread(kSenderThread);
    std::chrono::milliseconds backoff = kMinBackoff;
    // Between attempts, and after a connection breaks too: a server that accepts and hangs up at
    // once must not turn the sender into a busy loop.
    const auto pause = [&] {
        std::unique_lock lock(mutex_);
        wake_cv_.wait_for(lock, backoff, [&] { return stopping_; });
        backoff = std::min(backoff * 2, kMaxBackoff);
    };
    std::vector<Pending> batch;
    std::string greeting;
    // When what is held now goes out at the latest.
    Clock::time_point due = Clock::now() + kHold;
    for (;;) {
        if (fd_ < 0) {
            if (stop_flag_.load(std::memory_order_acquire) &&
                link_.load(std::memory_order_relaxed) == Link::Down) {
                break; // Nothing is queued while down, so there is nothing left to flush.
            }
            fd_ = connect_endpoint();
            if (fd_ < 0) {
                disconnect();
                pause();
                continue;
            }
            backoff = kMinBackoff;
            greeting_sent_ = 0;
            commands_ = ServerCommandReader{};
            std::lock_guard lock(mutex_);
            link_.store(Link::Up, std::memory_order_relaxed);
        }

        uint64_t greeting_version = 0;
        {
            std::unique_lock lock(mutex_);
            for (;;) {
                if (stopping_ || greeting_sent_ != greeting_version_ ||
                    (flush_ && !queue_.empty())) {
                    break;
                }
                if (Clock::now() < due) {
                    wake_cv_.wait_until(lock, due);
                    continue;
                }
                if (!queue_.empty()) {
                    break;
                }
                // Nothing held: sleep until a post, which starts the next hold.
                sender_idle_ = true;
                wake_cv_.wait(lock, [&] {
                    return !sender_idle_ || flush_ || stopping_ ||
                           greeting_sent_ != greeting_version_;
                });
                sender_idle_ = false;
                due = Clock::now() + kHold;
            }
            if (greeting_sent_ != greeting_version_) {
                greeting = greeting_;
                greeting_version = greeting_version_;
            } else if (queue_.empty() || (stopping_ && Clock::now() >= deadline_)) {
                break;
            } else {
                batch.swap(queue_);
                flush_ = false;
            }
        }
        if (greeting_version != 0) {
            if (!send_one(greeting)) {
                disconnect();
                pause();
                continue;
            }
            greeting_sent_ = greeting_version;
            continue;
        }

        // Records become frames here, off the threads that posted them.
        const size_t charged_messages = total_messages(batch);
        encode(batch);
        // The server learns about drops before the next frame it does get.
        bool ok = true;
        const uint64_t drops = dropped_.load(std::memory_order_relaxed);
        if (drops != reported_drops_) {
            JsonWriter json;
            json.begin_object().field("dropped", drops).end_object();
            scratch_.clear();
            append_frame(scratch_, MessageType::Dropped, 0, json.view());
            ok = send_one(scratch_);
            if (ok) {
                reported_drops_ = drops;
            }
        }
        size_t written = 0;
        if (ok) {
            ok = send_all(
                batch.size(), [&](size_t i) -> const std::string& { return batch[i].frames; },
                written);
        }
        {
            std::lock_guard lock(mutex_);
            pending_messages_ -= charged_messages;
            pending_bytes_ -= total_charged(batch);
        }
        const size_t left = total_messages(batch, written);
        sent_.fetch_add(total_messages(batch) - left, std::memory_order_relaxed);
        dropped_.fetch_add(left, std::memory_order_relaxed);
        finished_.fetch_add(batch.size(), std::memory_order_release);
        batch.clear();
        due = Clock::now() + kHold;
        if (!ok) {
            disconnect();
            pause();
        } else {
            read_commands();
        }
    }
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    std::lock_guard lock(mutex_);
    link_.store(Link::Down, std::memory_order_relaxed);
    dropped_.fetch_add(total_messages(queue_), std::memory_order_relaxed);
    finished_.fetch_add(queue_.size(), std::memory_order_release);
    pending_messages_ = 0;
    pending_bytes_ = 0;
    queue_.clear();
}

void MessageChannel::read_commands() {
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n <= 0) {
            // Nothing more now (EAGAIN), or the server closed its side: the next send says so.
            return;
        }
        const bool broken = !commands_.error().empty();
        if (const auto capture = commands_.feed({buffer, static_cast<size_t>(n)})) {
            frame_request_.store(*capture, std::memory_order_release);
        }
        if (!broken && !commands_.error().empty()) {
            record_error(commands_.error());
        }
    }
}

void MessageChannel::disconnect() {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    // What was queued for the lost connection is dropped rather than kept for the next one: while
    // down, post() drops too, so the count the server gets stays the only gap in its stream.
    std::vector<Pending> lost;
    {
        std::lock_guard lock(mutex_);
        link_.store(Link::Down, std::memory_order_relaxed);
        lost.swap(queue_);
        flush_ = false;
        pending_messages_ -= total_messages(lost);
        pending_bytes_ -= total_charged(lost);
    }
    dropped_.fetch_add(total_messages(lost), std::memory_order_relaxed);
    finished_.fetch_add(lost.size(), std::memory_order_release);
}

int MessageChannel::connect_endpoint() {
    const SocketAddress& a = endpoint_->address;
    const int fd = make_stream_socket(a.family);
    if (fd < 0) {
        record_error(errno_text("socket", errno));
        return -1;
    }
    if (a.family == AF_INET) {
        // Frames are small and the server wants them promptly (a FRAME marks the end of a frame).
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    int err = 0;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&a.storage), a.length) == 0) {
        return fd;
    }
    err = errno;
    if (err == EINPROGRESS || err == EINTR) {
        if (!wait_writable(fd)) {
            ::close(fd);
            return -1;
        }
        socklen_t length = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &length) != 0) {
            err = errno;
        }
        if (err == 0) {
            return fd;
        }
    }
    ::close(fd);
    record_error(errno_text("connect to " + address_, err));
    return -1;
}

void MessageChannel::encode(std::vector<Pending>& batch) {
    for (Pending& p : batch) {
        if (p.record) {
            const size_t failed = std::min(p.record->encode(p.frames), p.messages);
            p.messages -= failed;
            dropped_.fetch_add(failed, std::memory_order_relaxed);
            p.record.reset();
        }
    }
}

bool MessageChannel::send_one(const std::string& frames) {
    size_t done = 0;
    return send_all(
        1, [&](size_t) -> const std::string& { return frames; }, done);
}

template <typename FramesOf>
bool MessageChannel::send_all(size_t count, const FramesOf& frames_of, size_t& done) {
    done = 0;
    size_t offset = 0; // bytes of frames[done] already written
    for (;;) {
        while (done < count && frames_of(done).size() == offset) {
            ++done;
            offset = 0;
        }
        if (done == count) {
            return true;
        }
        iovec iov[kMaxIovecs];
        size_t n = 0;
        for (size_t i = done; i < count && n < kMaxIovecs; ++i) {
            const size_t skip = i == done ? offset : 0;
            iov[n].iov_base = const_cast<char*>(frames_of(i).data() + skip);
            iov[n].iov_len = frames_of(i).size() - skip;
            n += iov[n].iov_len != 0 ? 1 : 0;
        }
        msghdr message{};
        message.msg_iov = iov;
        message.msg_iovlen = n;
        const ssize_t result = ::sendmsg(fd_, &message, kSendFlags);
        if (result < 0) {
            const int err = errno;
            if (err == EINTR) {
                continue;
            }
            if ((err == EAGAIN || err == EWOULDBLOCK) && wait_writable(fd_)) {
                continue;
            }
            if (err != EAGAIN && err != EWOULDBLOCK) {
                record_error(errno_text("send to " + address_, err));
            }
            return false;
        }
        for (auto left = static_cast<size_t>(result); left > 0;) {
            const size_t rest = frames_of(done).size() - offset;
            if (left < rest) {
                offset += left;
                left = 0;
            } else {
                left -= rest;
                ++done;
                offset = 0;
            }
        }
    }
}

// Waits until fd is writable (or has an error for the caller to collect). Unbounded until close()
// sets a deadline; false once that deadline has passed.
bool MessageChannel::wait_writable(int fd) {
    for (;;) {
        int timeout_ms = -1;
        if (stop_flag_.load(std::memory_order_acquire)) {
            Clock::time_point deadline;
            {
                std::lock_guard lock(mutex_);
                deadline = deadline_;
            }
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) {
                record_error("close()'s grace period ran out before the host took everything");
                return false;
            }
            timeout_ms = static_cast<int>(std::min<int64_t>(left.count(), INT_MAX));
        }
        pollfd fds[2] = {{fd, POLLOUT, 0}, {wake_read_, POLLIN, 0}};
        if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR) {
            record_error(errno_text("poll", errno));
            return false;
        }
        if ((fds[1].revents & POLLIN) != 0) {
            char drain[16];
            while (::read(wake_read_, drain, sizeof drain) > 0) {
            }
        }
        if (fds[0].revents != 0) {
            return true;
        }
    }
}

} // namespace vkscope
