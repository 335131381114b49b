#pragma once
// Where the layer sends its messages: the `host` setting's address (`unix:PATH`, `unix:@NAME` for
// a Linux abstract socket, `tcp:HOST:PORT` with an IPv4 literal or localhost), parsed into a socket
// address, and the socket to connect from. Names are never resolved: a lookup could block the
// application's thread inside the Vulkan call that opens the layer's channel.

#include <optional>
#include <string>
#include <string_view>
#include <sys/socket.h>

namespace vkscope {

struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;
    int family = AF_UNSPEC;
};

// The address, or nullopt with `error` saying what is wrong with it.
std::optional<SocketAddress> parse_socket_address(std::string_view address, std::string& error);

// A stream socket of `family`, non-blocking, so that every wait goes through poll() where close()
// can interrupt it, and close-on-exec, so that the application's child processes do not inherit
// the connection; -1 with errno on failure.
int make_stream_socket(int family);

} // namespace vkscope
