#include "core/socket_address.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstddef>
#include <cstring>
#include <netinet/in.h>
#include <sys/un.h>

namespace vkscope {
namespace {

std::optional<SocketAddress> parse_unix(std::string_view path, std::string& error) {
    SocketAddress result;
    auto& un = reinterpret_cast<sockaddr_un&>(result.storage);
    un.sun_family = AF_UNIX;
    result.family = AF_UNIX;
    // An abstract name is not NUL-terminated; a path needs room for its terminator.
    const bool abstract = !path.empty() && path.front() == '@';
    if (path.empty() || path.size() + (abstract ? 0 : 1) > sizeof un.sun_path ||
        path.find('\0') != std::string_view::npos) {
        error = "unix socket path is empty, too long or contains NUL";
        return std::nullopt;
    }
#ifndef __linux__
    if (abstract) {
        error = "abstract unix sockets exist only on Linux";
        return std::nullopt;
    }
#endif
    std::memcpy(un.sun_path, path.data(), path.size());
    if (abstract) {
        un.sun_path[0] = '\0';
    }
    result.length =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (abstract ? 0 : 1));
    return result;
}

std::optional<SocketAddress> parse_tcp(std::string_view rest, std::string& error) {
    const size_t colon = rest.rfind(':');
    std::string host(rest.substr(0, colon == std::string_view::npos ? 0 : colon));
    const std::string_view port_text =
        colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    unsigned port = 0;
    const bool digits = !port_text.empty() && port_text.size() <= 5 &&
                        std::all_of(port_text.begin(), port_text.end(),
                                    [](char c) { return c >= '0' && c <= '9'; });
    for (char c : digits ? port_text : std::string_view()) {
        port = port * 10 + static_cast<unsigned>(c - '0');
    }
    if (!digits || port == 0 || port > 65535) {
        error = "tcp address needs HOST:PORT with a port from 1 to 65535";
        return std::nullopt;
    }
    if (host == "localhost") {
        host = "127.0.0.1";
    }
    SocketAddress result;
    auto& in = reinterpret_cast<sockaddr_in&>(result.storage);
    in.sin_family = AF_INET;
    in.sin_port = htons(static_cast<uint16_t>(port));
    // Literals only: resolving a name could block the application's thread inside open().
    if (inet_pton(AF_INET, host.c_str(), &in.sin_addr) != 1) {
        error = "tcp host must be an IPv4 literal or localhost, not '" + host + "'";
        return std::nullopt;
    }
    result.family = AF_INET;
    result.length = sizeof(sockaddr_in);
    return result;
}

} // namespace

std::optional<SocketAddress> parse_socket_address(std::string_view address, std::string& error) {
    if (address.starts_with("unix:")) {
        return parse_unix(address.substr(5), error);
    }
    if (address.starts_with("tcp:")) {
        return parse_tcp(address.substr(4), error);
    }
    error = "host address must start with unix: or tcp:";
    return std::nullopt;
}

int make_stream_socket(int family) {
    const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
#ifdef SO_NOSIGPIPE
    if (fd >= 0) {
        const int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
    }
#endif
    return fd;
}

} // namespace vkscope
