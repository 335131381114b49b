// The `host` setting's address as the layer's channel connects to it: what each form becomes, and
// what is refused before any socket is made.

#include "core/socket_address.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cstddef>
#include <fcntl.h>
#include <netinet/in.h>
#include <string>
#include <sys/un.h>
#include <unistd.h>

namespace vkscope {
namespace {

TEST(SocketAddress, AUnixPathKeepsItsTerminator) {
    std::string error;
    const auto a = parse_socket_address("unix:/tmp/vkscope.sock", error);
    ASSERT_TRUE(a) << error;
    EXPECT_EQ(a->family, AF_UNIX);
    const auto& un = reinterpret_cast<const sockaddr_un&>(a->storage);
    EXPECT_STREQ(un.sun_path, "/tmp/vkscope.sock");
    EXPECT_EQ(a->length, offsetof(sockaddr_un, sun_path) + sizeof "/tmp/vkscope.sock");
}

TEST(SocketAddress, AnAbstractNameStartsWithNulAndHasNoTerminator) {
    std::string error;
    const auto a = parse_socket_address("unix:@vkscope", error);
    ASSERT_TRUE(a) << error;
    const auto& un = reinterpret_cast<const sockaddr_un&>(a->storage);
    EXPECT_EQ(un.sun_path[0], '\0');
    EXPECT_EQ(std::string(un.sun_path + 1, 7), "vkscope");
    // The name is its bytes, '@' (now NUL) included, and nothing after them.
    EXPECT_EQ(a->length, offsetof(sockaddr_un, sun_path) + 8);
}

TEST(SocketAddress, ALongestPathFitsAndOneMoreByteDoesNot) {
    std::string error;
    const size_t room = sizeof(sockaddr_un{}.sun_path);
    EXPECT_TRUE(parse_socket_address("unix:/" + std::string(room - 2, 'x'), error)) << error;
    EXPECT_FALSE(parse_socket_address("unix:/" + std::string(room - 1, 'x'), error));
    EXPECT_NE(error.find("too long"), std::string::npos) << error;
    // An abstract name needs no terminator: one byte more fits.
    EXPECT_TRUE(parse_socket_address("unix:@" + std::string(room - 1, 'x'), error)) << error;
}

TEST(SocketAddress, TcpTakesAnIpv4LiteralOrLocalhost) {
    std::string error;
    const auto a = parse_socket_address("tcp:10.1.2.3:5555", error);
    ASSERT_TRUE(a) << error;
    EXPECT_EQ(a->family, AF_INET);
    EXPECT_EQ(a->length, sizeof(sockaddr_in));
    const auto& in = reinterpret_cast<const sockaddr_in&>(a->storage);
    EXPECT_EQ(ntohs(in.sin_port), 5555);
    EXPECT_EQ(ntohl(in.sin_addr.s_addr), 0x0a010203u);
    const auto local = parse_socket_address("tcp:localhost:1", error);
    ASSERT_TRUE(local) << error;
    EXPECT_EQ(ntohl(reinterpret_cast<const sockaddr_in&>(local->storage).sin_addr.s_addr),
              INADDR_LOOPBACK);
}

TEST(SocketAddress, RefusesWithAReasonForEachWayItCanBeWrong) {
    const struct {
        const char* address;
        const char* says;
    } cases[] = {
        {"", "must start with unix: or tcp:"},
        {"udp:127.0.0.1:5", "must start with unix: or tcp:"},
        {"unix:", "empty"},
        {"tcp:127.0.0.1", "HOST:PORT"},
        {"tcp:127.0.0.1:0", "from 1 to 65535"},
        {"tcp:127.0.0.1:65536", "from 1 to 65535"},
        {"tcp:127.0.0.1:80x", "HOST:PORT"},
        {"tcp:example.com:80", "IPv4 literal"},
        {"tcp:[::1]:80", "IPv4 literal"},
    };
    for (const auto& c : cases) {
        std::string error;
        EXPECT_FALSE(parse_socket_address(c.address, error)) << c.address;
        EXPECT_NE(error.find(c.says), std::string::npos) << c.address << ": " << error;
    }
    std::string error;
    EXPECT_FALSE(parse_socket_address(std::string("unix:/a\0b", 9), error));
    EXPECT_NE(error.find("NUL"), std::string::npos) << error;
}

TEST(SocketAddress, TheSocketIsNonBlockingAndClosedOnExec) {
    const int fd = make_stream_socket(AF_UNIX);
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    close(fd);
}

} // namespace
} // namespace vkscope
