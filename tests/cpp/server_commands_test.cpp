// Host commands: CAPTURE frames decoded from any split of the byte stream, unknown types skipped,
// a stream out of step ignored from there on.

#include "core/server_commands.hpp"

#include "core/wire_format.hpp"

#include <gtest/gtest.h>

#include <string>

namespace vkscope {
namespace {

// The layer's own encoder: the server's commands share its framing.
std::string frame(uint8_t type, uint64_t tag, std::string payload = {}) {
    std::string out;
    EXPECT_TRUE(append_frame(out, static_cast<MessageType>(type), tag, payload, 1));
    return out;
}

TEST(ServerCommands, CaptureIsDecodedWhateverTheSplit) {
    const std::string bytes = frame(0x40, 300);
    for (size_t split = 0; split <= bytes.size(); ++split) {
        ServerCommandReader reader;
        const auto first = reader.feed(std::string_view(bytes).substr(0, split));
        const auto second = reader.feed(std::string_view(bytes).substr(split));
        EXPECT_EQ(first.value_or(0) + second.value_or(0), 300u) << "split at " << split;
        EXPECT_TRUE(first.has_value() != second.has_value());
        EXPECT_TRUE(reader.error().empty());
    }
}

TEST(ServerCommands, TheLastCaptureWinsAndUnknownTypesAreSkipped) {
    ServerCommandReader reader;
    const std::string bytes =
        frame(0x40, 5) + frame(0x41, 7, "{\"future\":true}") + frame(0x40, 0) + frame(0x42, 9);
    EXPECT_EQ(reader.feed(bytes), std::optional<uint64_t>(0)) << "0: stop copying";
    EXPECT_EQ(reader.feed(frame(0x41, 1, "xyz")), std::nullopt);
    EXPECT_TRUE(reader.error().empty());
}

TEST(ServerCommands, AStreamOutOfStepIsIgnoredFromThereOn) {
    ServerCommandReader reader;
    EXPECT_EQ(reader.feed(frame(0x40, 2) + frame(0x40, 3, std::string(5000, 'x'))),
              std::optional<uint64_t>(2));
    EXPECT_NE(reader.error().find("out of step"), std::string::npos);
    EXPECT_EQ(reader.feed(frame(0x40, 4)), std::nullopt);
    ServerCommandReader sequenced;
    EXPECT_EQ(sequenced.feed(frame(0x81, 1)), std::nullopt) << "types with a sequence: not ours";
    EXPECT_FALSE(sequenced.error().empty());
}

} // namespace
} // namespace vkscope
