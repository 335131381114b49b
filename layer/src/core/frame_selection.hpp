#pragma once
// The `frames` setting: which frames the layer instruments. Shared by every feature that writes
// into command buffers (timeline labels and copies, timing's timestamps and serialization).
//
// A frame's fate is decided once, when it begins (device creation for frame 0, the end of the
// previous frame for the others), so everything recorded and submitted during a frame agrees.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vkscope {

class FrameSelection {
public:
    // Every frame.
    FrameSelection() = default;

    // Parses the setting's text; on a syntax error returns false with `why` filled and leaves
    // the selection at "every frame".
    bool parse(std::string_view text, std::string& why);

    // Whether frame `frame` (0 is the first) is instrumented. For a trigger, whether its file
    // exists now: call it when the frame begins.
    bool selects(uint64_t frame) const;

    bool every_frame() const { return kind_ == Kind::all; }
    // `host`: frames are captured when the capture server sends CAPTURE (docs/protocol.md);
    // selects() is false for every frame.
    bool server_driven() const { return kind_ == Kind::server; }

private:
    enum class Kind : uint8_t { all, ranges, every, trigger, server };
    struct Range {
        uint64_t first = 0;
        uint64_t last = 0; // inclusive
    };

    Kind kind_ = Kind::all;
    std::vector<Range> ranges_;
    uint64_t every_ = 1;
    std::string trigger_;
};

} // namespace vkscope
