#pragma once
// The capture server's side of the connection for the MessageChannel tests: real listening sockets,
// a reader that decodes frames, and a temporary directory for Unix socket paths.

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace vkscope::test {

using Ms = std::chrono::milliseconds;

struct DecodedFrame {
    uint8_t type = 0;
    uint64_t sequence = 0;
    uint64_t tag = 0;
    std::string payload;
};

// Decodes whole frames from the front of `bytes`; returns how many bytes they took.
inline size_t decode_frames(std::string_view bytes, std::vector<DecodedFrame>& out) {
    const auto le = [&](size_t at, size_t n) {
        uint64_t v = 0;
        for (size_t i = 0; i < n; ++i) {
            v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
        }
        return v;
    };
    size_t at = 0;
    for (;;) {
        if (bytes.size() - at < 1) {
            return at;
        }
        DecodedFrame f;
        f.type = static_cast<uint8_t>(bytes[at]);
        const size_t header = (f.type & 0x80) ? 21 : 13;
        if (bytes.size() - at < header) {
            return at;
        }
        size_t p = at + 1;
        if (f.type & 0x80) {
            f.sequence = le(p, 8);
            p += 8;
        }
        f.tag = le(p, 8);
        const size_t length = le(p + 8, 4);
        if (bytes.size() - at < header + length) {
            return at;
        }
        f.payload.assign(bytes.substr(at + header, length));
        out.push_back(std::move(f));
        at += header + length;
    }
}

class TempDir {
public:
    TempDir() {
        char pattern[] = "/tmp/vkscope-test-XXXXXX";
        path_ = mkdtemp(pattern);
    }
    ~TempDir() { rmdir(path_.c_str()); }
    std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

private:
    std::string path_;
};

// One accepted connection, read with timeouts so that a failing test ends instead of hanging.
class Peer {
public:
    explicit Peer(int fd) : fd_(fd) {}
    Peer(Peer&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    ~Peer() { close(); }
    bool valid() const { return fd_ >= 0; }
    int fd() const { return fd_; }
    void close() {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }

    // Reads until `count` frames have been decoded in total; false on EOF or timeout.
    bool read_frames(size_t count, Ms timeout = Ms(10'000)) {
        const auto end = std::chrono::steady_clock::now() + timeout;
        while (frames.size() < count) {
            if (!read_some(end)) {
                return false;
            }
        }
        return true;
    }
    // Reads until the channel closes its end; false on timeout.
    bool read_to_eof(Ms timeout = Ms(10'000)) {
        const auto end = std::chrono::steady_clock::now() + timeout;
        while (read_some(end)) {
        }
        return eof_;
    }

    std::vector<DecodedFrame> frames;
    std::string leftover; // bytes of an incomplete frame

private:
    bool read_some(std::chrono::steady_clock::time_point end) {
        const auto left = std::chrono::duration_cast<Ms>(end - std::chrono::steady_clock::now());
        pollfd p{fd_, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
            return false;
        }
        char buffer[65536];
        const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        if (n <= 0) {
            eof_ = n == 0;
            return false;
        }
        leftover.append(buffer, static_cast<size_t>(n));
        leftover.erase(0, decode_frames(leftover, frames));
        return true;
    }

    int fd_ = -1;
    bool eof_ = false;
};

class Listener {
public:
    // rcvbuf > 0 shrinks the receive buffer that accepted connections inherit.
    static Listener unix_socket(const std::string& path, int rcvbuf = 0) {
        Listener l(::socket(AF_UNIX, SOCK_STREAM, 0), "unix:" + path, path);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
        l.bind_and_listen(reinterpret_cast<sockaddr*>(&addr), sizeof addr, rcvbuf);
        return l;
    }
    static Listener tcp_loopback(int rcvbuf = 0) {
        Listener l(::socket(AF_INET, SOCK_STREAM, 0), "", "");
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        l.bind_and_listen(reinterpret_cast<sockaddr*>(&addr), sizeof addr, rcvbuf);
        socklen_t length = sizeof addr;
        getsockname(l.fd_, reinterpret_cast<sockaddr*>(&addr), &length);
        l.address_ = "tcp:127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
        return l;
    }
    Listener(Listener&& other) noexcept
        : fd_(std::exchange(other.fd_, -1)), address_(std::move(other.address_)),
          path_(std::move(other.path_)) {}
    ~Listener() { close(); }
    void close() {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
            if (!path_.empty()) {
                unlink(path_.c_str());
            }
        }
    }

    bool ok() const { return ok_; }
    const std::string& address() const { return address_; }

    Peer accept(Ms timeout = Ms(10'000)) const {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
            return Peer(-1);
        }
        return Peer(::accept(fd_, nullptr, nullptr));
    }

private:
    Listener(int fd, std::string address, std::string path)
        : fd_(fd), address_(std::move(address)), path_(std::move(path)) {}

    void bind_and_listen(sockaddr* addr, socklen_t length, int rcvbuf) {
        if (rcvbuf > 0) {
            setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        }
        ok_ = fd_ >= 0 && ::bind(fd_, addr, length) == 0 && ::listen(fd_, 8) == 0;
    }

    int fd_ = -1;
    std::string address_;
    std::string path_;
    bool ok_ = false;
};

// Polls `condition` every millisecond until it holds or `timeout` passes.
template <typename F> bool eventually(F&& condition, Ms timeout = Ms(10'000)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= end) {
            return false;
        }
        usleep(1000);
    }
    return true;
}

} // namespace vkscope::test
