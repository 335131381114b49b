#pragma once
// Layer-owned host-visible memory that indirect parameters are copied into, one 16-byte slot per
// copied workload. A slot stays with the recording that wrote its copy command, so every
// submission of that recording writes the same slot: the submission path waits for the previous
// readback of a slot before the GPU may write it again.
//
// Command buffers take whole pages of slots (one lock per page, not per workload), and give them
// back when they are reset; pages live as long as the device, so a slot's flags outlive any
// command buffer that used it.

#include "core/host_visible_buffer.hpp"
#include "dispatch_tables.gen.hpp"
#include "timeline/parameter_slot.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::timeline {

class ParameterPool {
public:
    static constexpr VkDeviceSize kSlotBytes = 16;
    static constexpr uint32_t kSlotsPerPage = 64;
    static constexpr uint32_t kPagesPerBlock = 16;

    struct Page {
        std::array<ParameterSlot, kSlotsPerPage> slots;
    };

    ParameterPool(VkDevice device, const DeviceDispatch& next,
                  const VkPhysicalDeviceMemoryProperties& memory);
    ParameterPool(const ParameterPool&) = delete;
    ParameterPool& operator=(const ParameterPool&) = delete;
    ~ParameterPool();

    // Null when no host-visible memory could be had.
    Page* acquire();
    void release(std::vector<Page*>& pages);
    // Makes the GPU's writes to the slot visible to the host (a no-op on coherent memory).
    void invalidate(const ParameterSlot& slot);

private:
    struct Block {
        std::unique_ptr<HostVisibleBuffer> memory;
        std::vector<std::unique_ptr<Page>> pages;
    };

    bool grow();

    const VkDevice device_;
    const DeviceDispatch& next_;
    const VkPhysicalDeviceMemoryProperties memory_;
    std::mutex mutex_;
    std::vector<Block> blocks_;
    std::vector<Page*> free_;
    bool failed_ = false;
};

// One command buffer's slots.
class ParameterArena {
public:
    ParameterSlot* next(ParameterPool& pool);
    void release(ParameterPool& pool);

private:
    std::vector<ParameterPool::Page*> pages_;
    uint32_t used_ = ParameterPool::kSlotsPerPage; // in the last page
};

} // namespace vkscope::timeline
