// The channel when the process is about to die (wait_for_sender, for the fatal signal handler)
// and in a child forked after it opened.

#include "core/message_channel.hpp"

#include "channel_test_support.hpp"
#include "core/wire_format.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace vkscope {
namespace {

using namespace std::chrono_literals;
using test::Listener;
using test::log_frame;
using test::open_ok;
using test::Peer;
using test::TempDir;

TEST(MessageChannelFaults, WaitForSenderReturnsOnceEverythingPostedIsWritten) {
    TempDir dir;
    Listener listener = Listener::unix_socket(dir.file("host.sock"));
    ASSERT_TRUE(listener.ok());
    auto channel = open_ok(listener.address());
    Peer peer = listener.accept();
    ASSERT_TRUE(peer.valid());
    EXPECT_TRUE(channel->wait_for_sender(0ms)); // nothing posted: nothing to wait for
    // Fewer than the sender writes at once: held, the way a crash finds a short frame's messages.
    for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(channel->post(log_frame("before the crash")));
    }
    EXPECT_TRUE(channel->wait_for_sender(5s));
    EXPECT_EQ(channel->sent(), 50u);
    // Written means in the socket: the host reads every one without the channel closing.
    ASSERT_TRUE(peer.read_frames(50, 100ms));
    channel->close(1s);
}

TEST(MessageChannelFaults, WaitForSenderGivesUpOnAHostThatDoesNotRead) {
    TempDir dir;
    Listener listener = Listener::unix_socket(dir.file("host.sock"), 4096);
    ASSERT_TRUE(listener.ok());
    auto channel = open_ok(listener.address(), 100'000, 64 << 20);
    Peer peer = listener.accept(); // ...and never reads
    ASSERT_TRUE(peer.valid());
    const std::string payload(1000, 'p');
    for (int i = 0; i < 2000; ++i) {
        channel->post(log_frame(payload));
    }
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(channel->wait_for_sender(100ms));
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(took, 100ms);
    EXPECT_LT(took, 100ms + 3s); // sanitizer builds on a loaded machine are slow
    channel->close(0ms);
}

// ThreadSanitizer stops a child of a multi-threaded process that starts threads, which is what
// the channel does in a child: the plain and ASan/UBSan builds run this.
#if !defined(__SANITIZE_THREAD__)
std::string hello_payload(pid_t pid) {
    std::string out = "{\"pid\":";
    out += std::to_string(pid);
    out += "}";
    return out;
}

std::string hello_of(pid_t pid) {
    std::string out;
    append_frame(out, MessageType::Hello, 0, hello_payload(pid));
    return out;
}

TEST(MessageChannelFaults, AForkedChildReconnectsAsItsOwnProcess) {
    TempDir dir;
    Listener listener = Listener::unix_socket(dir.file("host.sock"));
    ASSERT_TRUE(listener.ok());
    auto channel = open_ok(listener.address());
    channel->set_greeting([] { return hello_of(getpid()); });
    ASSERT_TRUE(channel->post(log_frame("parent, before the fork")));
    Peer parent = listener.accept();
    ASSERT_TRUE(parent.valid());
    // Still held by the parent's sender when the child is forked: the child must not send it.
    ASSERT_TRUE(channel->post(log_frame("parent, held at the fork")));
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Only what gtest's checks cannot report from a child: its exit status says.
        bool ok = channel->dropped() == 0 && channel->sent() == 0 && !channel->connected();
        ok = channel->post(log_frame("child")) && ok;
        channel->close(5s);
        ok = ok && channel->sent() == 1; // on a connection of its own, after its own greeting
        _exit(ok ? 0 : 1);
    }
    Peer own = listener.accept();
    ASSERT_TRUE(own.valid());
    ASSERT_TRUE(own.read_to_eof());
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    ASSERT_EQ(own.frames.size(), 2u);
    EXPECT_EQ(own.frames[0].payload, hello_payload(child));
    EXPECT_EQ(own.frames[1].payload, R"({"message":"child"})");

    // The parent's channel goes on as before, its held message included.
    ASSERT_TRUE(channel->post(log_frame("parent, after the fork")));
    channel->close(5s);
    ASSERT_TRUE(parent.read_to_eof());
    ASSERT_EQ(parent.frames.size(), 4u);
    EXPECT_EQ(parent.frames[0].payload, hello_payload(getpid()));
    EXPECT_EQ(parent.frames[2].payload, R"({"message":"parent, held at the fork"})");
    EXPECT_EQ(parent.frames[3].payload, R"({"message":"parent, after the fork"})");
}

TEST(MessageChannelFaults, AChildThatOnlyClosesTheChannelLetsGoOfTheParents) {
    TempDir dir;
    Listener listener = Listener::unix_socket(dir.file("host.sock"));
    ASSERT_TRUE(listener.ok());
    auto channel = open_ok(listener.address());
    ASSERT_TRUE(channel->post(log_frame("parent")));
    Peer parent = listener.accept();
    ASSERT_TRUE(parent.valid());
    ASSERT_TRUE(parent.read_frames(1));
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Neither a join of the parent's sender (which this process does not have) nor a
        // connection of its own: the destructor returns at once.
        channel.reset();
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_FALSE(listener.accept(200ms).valid());
    ASSERT_TRUE(channel->post(log_frame("parent, after")));
    channel->close(5s);
    ASSERT_TRUE(parent.read_to_eof());
    EXPECT_EQ(parent.frames.size(), 2u);
}
#endif

} // namespace
} // namespace vkscope
