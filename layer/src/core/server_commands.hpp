#pragma once
// Commands the capture server sends back over the layer's connection (docs/protocol.md, "Host
// commands"). They use the layer-to-server framing (type, tag, length, payload; little-endian, no
// sequence number). CAPTURE asks for the next `tag` frames to be captured, 0 to stop (the
// `frames=host` setting). Unknown types are skipped by their length, so a newer server does not
// break an older layer.
//
// Pure: the sender thread feeds it what it reads from the socket.

#include "protocol.gen.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vkscope {

// The server-to-layer commands are the protocol definition's host commands.
using ServerCommand = protocol::HostCommand;

class ServerCommandReader {
public:
    // The longest payload accepted; anything longer means the stream is out of step.
    static constexpr uint32_t kMaxPayload = protocol::kMaxCommandPayloadBytes;

    // Feeds received bytes (any split). Returns the frame count of the last complete CAPTURE
    // they finish, if any. After a malformed frame the reader ignores everything and error()
    // says why.
    std::optional<uint64_t> feed(std::string_view bytes);
    const std::string& error() const { return error_; }

private:
    std::string pending_;
    std::string error_;
};

} // namespace vkscope
