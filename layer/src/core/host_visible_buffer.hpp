#pragma once
// A layer-owned VkBuffer in host-visible memory, mapped for its whole life: where the GPU leaves
// what the layer reads back on the host.

#include "dispatch_tables.gen.hpp"

#include <vulkan/vulkan.h>

namespace vkscope {

class HostVisibleBuffer {
public:
    HostVisibleBuffer() = default;
    HostVisibleBuffer(const HostVisibleBuffer&) = delete;
    HostVisibleBuffer& operator=(const HostVisibleBuffer&) = delete;
    ~HostVisibleBuffer();

    // False (and nothing held) when the device has no host-visible memory for it.
    bool create(VkDevice device, const DeviceDispatch& next,
                const VkPhysicalDeviceMemoryProperties& memory, VkDeviceSize size,
                VkBufferUsageFlags usage);
    // Makes the GPU's writes visible to the host; nothing to do on coherent memory.
    void invalidate() const;

    VkBuffer buffer() const { return buffer_; }
    const volatile uint8_t* mapped() const { return mapped_; }
    explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }

private:
    void destroy();

    VkDevice device_ = VK_NULL_HANDLE;
    const DeviceDispatch* next_ = nullptr;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    const volatile uint8_t* mapped_ = nullptr;
    bool coherent_ = true;
};

} // namespace vkscope
