#include "timeline/parameter_pool.hpp"

#include "core/log.hpp"

namespace vkscope::timeline {

ParameterPool::ParameterPool(VkDevice device, const DeviceDispatch& next,
                             const VkPhysicalDeviceMemoryProperties& memory)
    : device_(device), next_(next), memory_(memory) {}

ParameterPool::~ParameterPool() = default;

ParameterPool::Page* ParameterPool::acquire() {
    std::lock_guard lock(mutex_);
    if (free_.empty() && !grow()) {
        return nullptr;
    }
    Page* page = free_.back();
    free_.pop_back();
    return page;
}

void ParameterPool::release(std::vector<Page*>& pages) {
    std::lock_guard lock(mutex_);
    free_.insert(free_.end(), pages.begin(), pages.end());
    pages.clear();
}

void ParameterPool::invalidate(const ParameterSlot& slot) {
    std::lock_guard lock(mutex_);
    for (const Block& b : blocks_) {
        if (b.memory->buffer() == slot.buffer) {
            b.memory->invalidate();
            return;
        }
    }
}

bool ParameterPool::grow() {
    if (failed_) {
        return false;
    }
    const VkDeviceSize page_bytes = kSlotBytes * kSlotsPerPage;
    Block block;
    block.memory = std::make_unique<HostVisibleBuffer>();
    if (!block.memory->create(device_, next_, memory_, page_bytes * kPagesPerBlock,
                              VK_BUFFER_USAGE_TRANSFER_DST_BIT)) {
        log_once(LogLevel::warn, "timeline: no host-visible memory for indirect parameters; "
                                 "indirect workloads will have no sizes");
        failed_ = true;
        return false;
    }
    const volatile uint8_t* bytes = block.memory->mapped();
    for (uint32_t p = 0; p < kPagesPerBlock; ++p) {
        auto page = std::make_unique<Page>();
        for (uint32_t s = 0; s < kSlotsPerPage; ++s) {
            ParameterSlot& slot = page->slots[s];
            slot.buffer = block.memory->buffer();
            slot.offset = (p * kSlotsPerPage + s) * kSlotBytes;
            slot.mapped = reinterpret_cast<const volatile uint32_t*>(bytes + slot.offset);
        }
        free_.push_back(page.get());
        block.pages.push_back(std::move(page));
    }
    blocks_.push_back(std::move(block));
    return true;
}

ParameterSlot* ParameterArena::next(ParameterPool& pool) {
    if (used_ == ParameterPool::kSlotsPerPage) {
        ParameterPool::Page* page = pool.acquire();
        if (!page) {
            return nullptr;
        }
        pages_.push_back(page);
        used_ = 0;
    }
    return &pages_.back()->slots[used_++];
}

void ParameterArena::release(ParameterPool& pool) {
    if (!pages_.empty()) {
        pool.release(pages_);
    }
    used_ = ParameterPool::kSlotsPerPage;
}

} // namespace vkscope::timeline
