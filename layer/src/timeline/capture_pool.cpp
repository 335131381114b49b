#include "timeline/capture_pool.hpp"

#include "log.hpp"

namespace vkscope::timeline {

CapturePool::CapturePool(VkDevice device, const DeviceDispatch& next,
                         const VkPhysicalDeviceMemoryProperties& memory)
    : device_(device), next_(next), memory_(memory) {}

CapturePool::~CapturePool() {
    for (Block& b : blocks_) {
        next_.DestroyBuffer(device_, b.buffer, nullptr);
        next_.FreeMemory(device_, b.memory, nullptr);
    }
}

CapturePool::Page* CapturePool::acquire() {
    std::lock_guard lock(mutex_);
    if (free_.empty() && !grow()) {
        return nullptr;
    }
    Page* page = free_.back();
    free_.pop_back();
    return page;
}

void CapturePool::release(std::vector<Page*>& pages) {
    std::lock_guard lock(mutex_);
    free_.insert(free_.end(), pages.begin(), pages.end());
    pages.clear();
}

void CapturePool::invalidate(const CaptureSlot& slot) {
    if (coherent_) {
        return;
    }
    std::lock_guard lock(mutex_);
    for (const Block& b : blocks_) {
        if (b.buffer == slot.buffer) {
            // Whole block: its size is a multiple of any nonCoherentAtomSize in practice.
            const VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr,
                                            b.memory, 0, VK_WHOLE_SIZE};
            next_.InvalidateMappedMemoryRanges(device_, 1, &range);
            return;
        }
    }
}

bool CapturePool::grow() {
    if (failed_) {
        return false;
    }
    const VkDeviceSize page_bytes = kSlotBytes * kSlotsPerPage;
    const VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                  nullptr,
                                  0,
                                  page_bytes * kPagesPerBlock,
                                  VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                  VK_SHARING_MODE_EXCLUSIVE,
                                  0,
                                  nullptr};
    Block block;
    if (next_.CreateBuffer(device_, &info, nullptr, &block.buffer) != VK_SUCCESS) {
        failed_ = true;
        return false;
    }
    VkMemoryRequirements req{};
    next_.GetBufferMemoryRequirements(device_, block.buffer, &req);
    // Cached memory makes the host's reads fast; coherent memory spares the invalidation.
    uint32_t type = UINT32_MAX;
    const VkMemoryPropertyFlags wanted[] = {
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
            VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT};
    for (VkMemoryPropertyFlags flags : wanted) {
        for (uint32_t i = 0; i < memory_.memoryTypeCount && type == UINT32_MAX; ++i) {
            if ((req.memoryTypeBits & (1u << i)) &&
                (memory_.memoryTypes[i].propertyFlags & flags) == flags) {
                type = i;
            }
        }
    }
    void* mapped = nullptr;
    const VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, req.size,
                                     type};
    if (type == UINT32_MAX ||
        next_.AllocateMemory(device_, &alloc, nullptr, &block.memory) != VK_SUCCESS ||
        next_.BindBufferMemory(device_, block.buffer, block.memory, 0) != VK_SUCCESS ||
        next_.MapMemory(device_, block.memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS) {
        next_.DestroyBuffer(device_, block.buffer, nullptr);
        if (block.memory) {
            next_.FreeMemory(device_, block.memory, nullptr);
        }
        log_once(LogLevel::warn, "timeline: no host-visible memory for indirect parameters; "
                                 "indirect workloads will have no sizes");
        failed_ = true;
        return false;
    }
    if (!(memory_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
        coherent_ = false;
    }
    auto* bytes = static_cast<uint8_t*>(mapped);
    for (uint32_t p = 0; p < kPagesPerBlock; ++p) {
        auto page = std::make_unique<Page>();
        for (uint32_t s = 0; s < kSlotsPerPage; ++s) {
            CaptureSlot& slot = page->slots[s];
            slot.buffer = block.buffer;
            slot.offset = (p * kSlotsPerPage + s) * kSlotBytes;
            slot.host = reinterpret_cast<const volatile uint32_t*>(bytes + slot.offset);
        }
        free_.push_back(page.get());
        block.pages.push_back(std::move(page));
    }
    blocks_.push_back(std::move(block));
    return true;
}

CaptureSlot* CaptureArena::next(CapturePool& pool) {
    if (used_ == CapturePool::kSlotsPerPage) {
        CapturePool::Page* page = pool.acquire();
        if (!page) {
            return nullptr;
        }
        pages_.push_back(page);
        used_ = 0;
    }
    return &pages_.back()->slots[used_++];
}

void CaptureArena::release(CapturePool& pool) {
    if (!pages_.empty()) {
        pool.release(pages_);
    }
    used_ = CapturePool::kSlotsPerPage;
}

} // namespace vkscope::timeline
