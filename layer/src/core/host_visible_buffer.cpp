#include "core/host_visible_buffer.hpp"

namespace vkscope {

HostVisibleBuffer::~HostVisibleBuffer() {
    destroy();
}

void HostVisibleBuffer::destroy() {
    if (!next_) {
        return;
    }
    if (buffer_) {
        next_->DestroyBuffer(device_, buffer_, nullptr);
    }
    if (memory_) {
        next_->FreeMemory(device_, memory_, nullptr); // unmaps it
    }
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    mapped_ = nullptr;
}

bool HostVisibleBuffer::create(VkDevice device, const DeviceDispatch& next,
                               const VkPhysicalDeviceMemoryProperties& memory, VkDeviceSize size,
                               VkBufferUsageFlags usage) {
    destroy();
    device_ = device;
    next_ = &next;
    const VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                  nullptr,
                                  0,
                                  size,
                                  usage,
                                  VK_SHARING_MODE_EXCLUSIVE,
                                  0,
                                  nullptr};
    if (next.CreateBuffer(device, &info, nullptr, &buffer_) != VK_SUCCESS) {
        buffer_ = VK_NULL_HANDLE;
        return false;
    }
    VkMemoryRequirements req{};
    next.GetBufferMemoryRequirements(device, buffer_, &req);
    // Cached memory makes the host's reads fast; coherent memory spares the invalidation.
    uint32_t type = UINT32_MAX;
    const VkMemoryPropertyFlags wanted[] = {
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
            VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT};
    for (VkMemoryPropertyFlags flags : wanted) {
        for (uint32_t i = 0; i < memory.memoryTypeCount && type == UINT32_MAX; ++i) {
            if ((req.memoryTypeBits & (1u << i)) &&
                (memory.memoryTypes[i].propertyFlags & flags) == flags) {
                type = i;
            }
        }
    }
    void* mapped = nullptr;
    const VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, req.size,
                                     type};
    if (type == UINT32_MAX ||
        next.AllocateMemory(device, &alloc, nullptr, &memory_) != VK_SUCCESS) {
        memory_ = VK_NULL_HANDLE;
        destroy();
        return false;
    }
    if (next.BindBufferMemory(device, buffer_, memory_, 0) != VK_SUCCESS ||
        next.MapMemory(device, memory_, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS) {
        destroy();
        return false;
    }
    mapped_ = static_cast<const volatile uint8_t*>(mapped);
    coherent_ =
        (memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    return true;
}

void HostVisibleBuffer::invalidate() const {
    if (coherent_ || !memory_) {
        return;
    }
    const VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, memory_, 0,
                                    VK_WHOLE_SIZE};
    next_->InvalidateMappedMemoryRanges(device_, 1, &range);
}

} // namespace vkscope
