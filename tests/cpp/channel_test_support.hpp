#pragma once
// What the MessageChannel tests share: frames that say who sent them, and a channel that must open.

#include "core/message_channel.hpp"
#include "core/wire_format.hpp"
#include "socket_test_support.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

namespace vkscope::test {

// A LOG frame whose payload names its sender and position.
inline std::string log_frame(std::string_view text) {
    std::string out;
    JsonWriter json;
    json.begin_object().field("message", text).end_object();
    append_frame(out, MessageType::Log, 0, json.view());
    return out;
}

inline std::string message_of(const DecodedFrame& f) {
    const std::string prefix = "{\"message\":\"";
    return f.payload.substr(prefix.size(), f.payload.size() - prefix.size() - 2);
}

inline std::unique_ptr<MessageChannel>
open_ok(const std::string& address, size_t max_messages = 100'000, size_t max_bytes = 64 << 20) {
    std::string error;
    auto channel = MessageChannel::open(address, max_messages, max_bytes, &error);
    EXPECT_NE(channel, nullptr) << error;
    return channel;
}

} // namespace vkscope::test
