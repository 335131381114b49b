#include "instruments/timing/results.hpp"

#include "core/log.hpp"

#include <cstring>

namespace vkscope::timing {

QueueResults::QueueResults(VkDevice device, const DeviceDispatch& next,
                           const VkPhysicalDeviceMemoryProperties& memory)
    : device_(device), next_(next), memory_(memory) {}

bool QueueResults::ready() {
    if (!tried_) {
        tried_ = true;
        if (!buffer_.create(device_, next_, memory_, kEntryBytes * kEntries,
                            VK_BUFFER_USAGE_TRANSFER_DST_BIT)) {
            log_once(LogLevel::warn,
                     "timing: no host-visible memory for query results; workloads are untimed");
        }
    }
    return static_cast<bool>(buffer_);
}

uint64_t QueueResults::word(size_t index) const {
    uint64_t v = 0;
    // The mapping is volatile (the GPU writes it); copy the bytes out once.
    const volatile uint8_t* p = buffer_.mapped() + index * sizeof v;
    uint8_t bytes[sizeof v];
    for (size_t i = 0; i < sizeof v; ++i) {
        bytes[i] = p[i];
    }
    std::memcpy(&v, bytes, sizeof v);
    return v;
}

} // namespace vkscope::timing
