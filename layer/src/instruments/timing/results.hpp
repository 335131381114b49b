#pragma once
// Where one queue's query results land: a host-visible ring that a layer command buffer after the
// application's copies each submission's timestamps into (vkCmdCopyQueryPoolResults). Every
// submission gets its own region, so a command buffer submitted again before the previous
// results were read cannot overwrite them, and nobody waits: an N-buffered buffer.

#include "core/host_visible_buffer.hpp"
#include "core/ring.hpp"

#include <cstdint>
#include <optional>

namespace vkscope::timing {

class QueueResults {
public:
    // 64-bit value and 64-bit availability per timestamp.
    static constexpr VkDeviceSize kEntryBytes = 16;
    // 1 MiB per queue that runs timed work: 65,536 timestamps in flight at once.
    static constexpr uint32_t kEntries = 65536;

    QueueResults(VkDevice device, const DeviceDispatch& next,
                 const VkPhysicalDeviceMemoryProperties& memory);

    // The buffer is made on first use; false when there is no host-visible memory for it.
    bool ready();
    std::optional<RingAllocator::Region> allocate(uint32_t entries) {
        return ring_.allocate(entries);
    }
    void release(uint64_t region) { ring_.release(region); }

    VkBuffer buffer() const { return buffer_.buffer(); }
    // Value and availability of entry `i` (after invalidate()).
    uint64_t value(uint32_t i) const { return word(2 * size_t{i}); }
    bool available(uint32_t i) const { return word(2 * size_t{i} + 1) != 0; }
    void invalidate() const { buffer_.invalidate(); }

private:
    uint64_t word(size_t index) const;

    const VkDevice device_;
    const DeviceDispatch& next_;
    const VkPhysicalDeviceMemoryProperties memory_;
    RingAllocator ring_{kEntries};
    HostVisibleBuffer buffer_;
    bool tried_ = false;
};

} // namespace vkscope::timing
