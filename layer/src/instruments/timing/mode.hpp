#pragma once
// The `timing` setting's serialization modes, and the reasons an instance can have for not being
// timed (sent as `timing_reason`; static strings, so they travel as pointers).

#include <cstdint>

namespace vkscope::timing {

enum class Mode : uint8_t { none, queue, full };

inline const char* mode_name(Mode m) {
    switch (m) {
    case Mode::none:
        return "none";
    case Mode::queue:
        return "queue";
    case Mode::full:
        return "full";
    }
    return "none";
}

namespace reason {
inline constexpr const char* kOutsideFrame = "recorded outside a captured frame";
inline constexpr const char* kNoTimestamps = "queue family has no timestamps";
inline constexpr const char* kUnknownPool = "command pool not seen created";
inline constexpr const char* kNoQueryPool = "no query pool available";
inline constexpr const char* kNoSemaphores = "device has no timeline semaphores";
inline constexpr const char* kSplitPartUntimed =
    "render pass split over command buffers not all timed";
inline constexpr const char* kNotEnded = "render pass not ended in this submission";
inline constexpr const char* kSecondaryTwice = "secondary executed several times";
inline constexpr const char* kExecutedAgain =
    "command buffer executed again before its results were copied";
inline constexpr const char* kFixedBatch = "batch takes no layer command buffers";
inline constexpr const char* kResultsFull = "result buffer full";
inline constexpr const char* kNoResultBuffer = "no host-visible memory for results";
inline constexpr const char* kNotAvailable = "timestamp not available";
inline constexpr const char* kNoCopy = "queue cannot copy query results";
inline constexpr const char* kNotSerialized =
    "not serialized: waits on a semaphore value not yet signalled";
} // namespace reason

} // namespace vkscope::timing
