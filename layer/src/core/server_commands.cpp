#include "core/server_commands.hpp"

#include "core/wire_format.hpp"

namespace vkscope {
namespace {

// Host commands carry no sequence number: type, tag, length.
constexpr size_t kHeader = frame_header_size(MessageType::Hello);

uint64_t read_le(std::string_view bytes, size_t at, size_t width) {
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) {
        value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
    }
    return value;
}

} // namespace

std::optional<uint64_t> ServerCommandReader::feed(std::string_view bytes) {
    if (!error_.empty()) {
        return std::nullopt;
    }
    pending_.append(bytes);
    std::optional<uint64_t> capture;
    size_t at = 0;
    while (pending_.size() - at >= kHeader) {
        const std::string_view view(pending_);
        const auto type = static_cast<uint8_t>(view[at]);
        const uint64_t tag = read_le(view, at + 1, 8);
        const uint64_t length = read_le(view, at + 9, 4);
        if (has_sequence(static_cast<MessageType>(type)) || length > kMaxPayload) {
            error_ = "host command stream out of step (type " + std::to_string(type) +
                     ", payload " + std::to_string(length) + " bytes)";
            pending_.clear();
            return capture;
        }
        if (pending_.size() - at < kHeader + length) {
            break;
        }
        if (type == static_cast<uint8_t>(ServerCommand::Capture)) {
            capture = tag;
        }
        at += kHeader + length;
    }
    pending_.erase(0, at);
    return capture;
}

} // namespace vkscope
