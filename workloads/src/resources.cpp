#include "resources.h"

#include "errors.h"

#include <atomic>
#include <cstdio>
#include <cstring>

namespace wl {

namespace {

constexpr uint64_t kFenceTimeoutNs = 60ull * 1000 * 1000 * 1000;

VkDeviceMemory allocate(Context& ctx, const VkMemoryRequirements& req, Memory memory,
                        bool deviceAddress = false) {
    const uint32_t type =
        memory == Memory::Host
            ? ctx.memoryType(req.memoryTypeBits,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                             VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
            : ctx.memoryType(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    // Buffers whose device address is taken need memory allocated for it.
    const VkMemoryAllocateFlagsInfo flags{
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
        .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
    };
    const VkMemoryAllocateInfo info{
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .pNext = deviceAddress ? &flags : nullptr,
        .allocationSize = req.size,
        .memoryTypeIndex = type,
    };
    VkDeviceMemory handle = VK_NULL_HANDLE;
    VK_CHECK(vkAllocateMemory(ctx.device, &info, nullptr, &handle));
    return handle;
}

} // namespace

Buffer createBuffer(Context& ctx, Janitor& janitor, VkDeviceSize size, VkBufferUsageFlags usage,
                    Memory memory, std::span<const uint32_t> sharedFamilies) {
    const bool concurrent = sharedFamilies.size() > 1;
    const VkBufferCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = concurrent ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE,
        .queueFamilyIndexCount = concurrent ? static_cast<uint32_t>(sharedFamilies.size()) : 0,
        .pQueueFamilyIndices = concurrent ? sharedFamilies.data() : nullptr,
    };
    Buffer buffer;
    buffer.size = size;
    VK_CHECK(vkCreateBuffer(ctx.device, &info, nullptr, &buffer.handle));
    VkDevice device = ctx.device;
    janitor.defer([device, handle = buffer.handle] { vkDestroyBuffer(device, handle, nullptr); });

    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx.device, buffer.handle, &req);
    buffer.memory =
        allocate(ctx, req, memory, (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) != 0);
    janitor.defer([device, mem = buffer.memory] { vkFreeMemory(device, mem, nullptr); });
    VK_CHECK(vkBindBufferMemory(ctx.device, buffer.handle, buffer.memory, 0));
    if (memory == Memory::Host) {
        VK_CHECK(vkMapMemory(ctx.device, buffer.memory, 0, VK_WHOLE_SIZE, 0, &buffer.mapped));
    }
    return buffer;
}

Image createImage(Context& ctx, Janitor& janitor, const ImageDesc& desc) {
    const VkImageCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
        .imageType = VK_IMAGE_TYPE_2D,
        .format = desc.format,
        .extent = {desc.width, desc.height, 1},
        .mipLevels = 1,
        .arrayLayers = desc.layers,
        .samples = desc.samples,
        .tiling = VK_IMAGE_TILING_OPTIMAL,
        .usage = desc.usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
        .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
    };
    Image image;
    image.desc = desc;
    VK_CHECK(vkCreateImage(ctx.device, &info, nullptr, &image.handle));
    VkDevice device = ctx.device;
    janitor.defer([device, handle = image.handle] { vkDestroyImage(device, handle, nullptr); });

    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(ctx.device, image.handle, &req);
    image.memory = allocate(ctx, req, Memory::Device);
    janitor.defer([device, mem = image.memory] { vkFreeMemory(device, mem, nullptr); });
    VK_CHECK(vkBindImageMemory(ctx.device, image.handle, image.memory, 0));

    if (desc.createView) {
        const VkImageViewCreateInfo viewInfo{
            .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
            .image = image.handle,
            .viewType = desc.layers > 1 ? VK_IMAGE_VIEW_TYPE_2D_ARRAY : VK_IMAGE_VIEW_TYPE_2D,
            .format = desc.format,
            .subresourceRange = image.range(),
        };
        VK_CHECK(vkCreateImageView(ctx.device, &viewInfo, nullptr, &image.view));
        janitor.defer([device, view = image.view] { vkDestroyImageView(device, view, nullptr); });
    }
    return image;
}

VkFormat pickDepthFormat(Context& ctx, VkFormatFeatureFlags features) {
    VkFormatProperties props;
    vkGetPhysicalDeviceFormatProperties(ctx.physical, VK_FORMAT_D32_SFLOAT, &props);
    return (props.optimalTilingFeatures & features) == features ? VK_FORMAT_D32_SFLOAT
                                                                : VK_FORMAT_D16_UNORM;
}

void imageBarrier(VkCommandBuffer cmd, const Image& image, VkImageLayout oldLayout,
                  VkImageLayout newLayout, VkPipelineStageFlags srcStage, VkAccessFlags srcAccess,
                  VkPipelineStageFlags dstStage, VkAccessFlags dstAccess) {
    const VkImageMemoryBarrier barrier{
        .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
        .srcAccessMask = srcAccess,
        .dstAccessMask = dstAccess,
        .oldLayout = oldLayout,
        .newLayout = newLayout,
        .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .image = image.handle,
        .subresourceRange = image.range(),
    };
    vkCmdPipelineBarrier(cmd, srcStage, dstStage, 0, 0, nullptr, 0, nullptr, 1, &barrier);
}

void memoryBarrier(VkCommandBuffer cmd, VkPipelineStageFlags srcStage, VkAccessFlags srcAccess,
                   VkPipelineStageFlags dstStage, VkAccessFlags dstAccess) {
    const VkMemoryBarrier barrier{
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = srcAccess,
        .dstAccessMask = dstAccess,
    };
    vkCmdPipelineBarrier(cmd, srcStage, dstStage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

void transferToHostBarrier(VkCommandBuffer cmd) {
    memoryBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
}

void copyImageToBuffer(VkCommandBuffer cmd, const Image& image, VkBuffer buffer,
                       VkDeviceSize offset) {
    const VkBufferImageCopy region{
        .bufferOffset = offset,
        .imageSubresource = image.layers(),
        .imageExtent = image.extent(),
    };
    vkCmdCopyImageToBuffer(cmd, image.handle, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, 1,
                           &region);
}

VkCommandPool createCommandPool(Context& ctx, Janitor& janitor, uint32_t family,
                                VkCommandPoolCreateFlags flags) {
    const VkCommandPoolCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = flags,
        .queueFamilyIndex = family,
    };
    VkCommandPool pool = VK_NULL_HANDLE;
    VK_CHECK(vkCreateCommandPool(ctx.device, &info, nullptr, &pool));
    VkDevice device = ctx.device;
    janitor.defer([device, pool] { vkDestroyCommandPool(device, pool, nullptr); });
    return pool;
}

std::vector<VkCommandBuffer> allocateCommandBuffers(Context& ctx, VkCommandPool pool,
                                                    uint32_t count, VkCommandBufferLevel level) {
    const VkCommandBufferAllocateInfo info{
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = pool,
        .level = level,
        .commandBufferCount = count,
    };
    std::vector<VkCommandBuffer> cmds(count);
    // Freed together with the pool.
    VK_CHECK(vkAllocateCommandBuffers(ctx.device, &info, cmds.data()));
    return cmds;
}

namespace {
std::atomic<bool> g_keepOneTimeSubmit{true};
} // namespace

void keepOneTimeSubmit(bool keep) {
    g_keepOneTimeSubmit = keep;
}

void beginCommands(VkCommandBuffer cmd, VkCommandBufferUsageFlags flags,
                   const VkCommandBufferInheritanceInfo* inheritance) {
    if (!g_keepOneTimeSubmit) {
        flags &= ~VkCommandBufferUsageFlags{VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    }
    const VkCommandBufferBeginInfo info{
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = flags,
        .pInheritanceInfo = inheritance,
    };
    VK_CHECK(vkBeginCommandBuffer(cmd, &info));
}

void endCommands(VkCommandBuffer cmd) {
    VK_CHECK(vkEndCommandBuffer(cmd));
}

VkFence createFence(Context& ctx, Janitor& janitor) {
    const VkFenceCreateInfo info{.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    VK_CHECK(vkCreateFence(ctx.device, &info, nullptr, &fence));
    VkDevice device = ctx.device;
    janitor.defer([device, fence] { vkDestroyFence(device, fence, nullptr); });
    return fence;
}

void waitFence(Context& ctx, VkFence fence) {
    VK_CHECK(vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, kFenceTimeoutNs));
    VK_CHECK(vkResetFences(ctx.device, 1, &fence));
}

VkSemaphore createSemaphore(Context& ctx, Janitor& janitor, bool timeline) {
    const VkSemaphoreTypeCreateInfo type{
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
        .initialValue = 0,
    };
    const VkSemaphoreCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
        .pNext = timeline ? &type : nullptr,
    };
    VkSemaphore semaphore = VK_NULL_HANDLE;
    VK_CHECK(vkCreateSemaphore(ctx.device, &info, nullptr, &semaphore));
    VkDevice device = ctx.device;
    janitor.defer([device, semaphore] { vkDestroySemaphore(device, semaphore, nullptr); });
    return semaphore;
}

void submitAndWait(Context& ctx, VkQueue queue, std::span<const VkCommandBuffer> cmds,
                   VkFence fence) {
    const VkSubmitInfo submit{
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = static_cast<uint32_t>(cmds.size()),
        .pCommandBuffers = cmds.data(),
    };
    VK_CHECK(vkQueueSubmit(queue, 1, &submit, fence));
    waitFence(ctx, fence);
}

void setName(Context& ctx, VkObjectType type, uint64_t handle, const char* name) {
    if (!ctx.setObjectName) {
        return;
    }
    const VkDebugUtilsObjectNameInfoEXT info{
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
        .objectType = type,
        .objectHandle = handle,
        .pObjectName = name,
    };
    VK_CHECK(ctx.setObjectName(ctx.device, &info));
}

void expectBytes(const std::string& what, const void* actual, const void* expected, size_t size) {
    const auto* a = static_cast<const uint8_t*>(actual);
    const auto* e = static_cast<const uint8_t*>(expected);
    for (size_t i = 0; i < size; ++i) {
        if (a[i] != e[i]) {
            char detail[128];
            std::snprintf(detail, sizeof(detail), ": byte %zu is 0x%02x, expected 0x%02x", i, a[i],
                          e[i]);
            throw VerifyError(what + detail);
        }
    }
}

void expectWords(const std::string& what, const uint32_t* actual, const uint32_t* expected,
                 size_t count) {
    for (size_t i = 0; i < count; ++i) {
        if (actual[i] != expected[i]) {
            char detail[128];
            std::snprintf(detail, sizeof(detail), ": word %zu is 0x%08x, expected 0x%08x", i,
                          actual[i], expected[i]);
            throw VerifyError(what + detail);
        }
    }
}

} // namespace wl
