// Buffers, images, command buffers, synchronisation objects and verification helpers.
#pragma once

#include "context.h"
#include "janitor.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wl {

enum class Memory {
    Device, // device-local when the device has it; never mapped
    Host,   // host-visible and coherent, persistently mapped
};

struct Buffer {
    VkBuffer handle = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    void* mapped = nullptr;

    template <class T> T* as() const { return static_cast<T*>(mapped); }
};

// With more than one entry in `sharedFamilies` the buffer uses concurrent sharing. Memory of a
// buffer with SHADER_DEVICE_ADDRESS usage is allocated with the DEVICE_ADDRESS flag.
Buffer createBuffer(Context& ctx, Janitor& janitor, VkDeviceSize size, VkBufferUsageFlags usage,
                    Memory memory, std::span<const uint32_t> sharedFamilies = {});

struct ImageDesc {
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    uint32_t width = 64;
    uint32_t height = 64;
    uint32_t layers = 1;
    VkSampleCountFlagBits samples = VK_SAMPLE_COUNT_1_BIT;
    VkImageUsageFlags usage = 0;
    VkImageAspectFlags aspect = VK_IMAGE_ASPECT_COLOR_BIT;
    bool createView = true;
};

struct Image {
    VkImage handle = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    ImageDesc desc;

    VkImageSubresourceRange range() const { return {desc.aspect, 0, 1, 0, desc.layers}; }
    VkImageSubresourceLayers layers() const { return {desc.aspect, 0, 0, desc.layers}; }
    VkExtent3D extent() const { return {desc.width, desc.height, 1}; }
};

Image createImage(Context& ctx, Janitor& janitor, const ImageDesc& desc);
// D32_SFLOAT when it has `features` with optimal tiling, else D16_UNORM (which the spec
// requires to support depth attachments and transfers).
VkFormat pickDepthFormat(Context& ctx, VkFormatFeatureFlags features);

void imageBarrier(VkCommandBuffer cmd, const Image& image, VkImageLayout oldLayout,
                  VkImageLayout newLayout, VkPipelineStageFlags srcStage, VkAccessFlags srcAccess,
                  VkPipelineStageFlags dstStage, VkAccessFlags dstAccess);
void memoryBarrier(VkCommandBuffer cmd, VkPipelineStageFlags srcStage, VkAccessFlags srcAccess,
                   VkPipelineStageFlags dstStage, VkAccessFlags dstAccess);
// Makes transfer writes visible to the host once the submission's fence has signalled.
void transferToHostBarrier(VkCommandBuffer cmd);

// Copies every layer of `image` (in TRANSFER_SRC_OPTIMAL) tightly packed into `buffer`.
void copyImageToBuffer(VkCommandBuffer cmd, const Image& image, VkBuffer buffer,
                       VkDeviceSize offset = 0);

VkCommandPool createCommandPool(Context& ctx, Janitor& janitor, uint32_t family,
                                VkCommandPoolCreateFlags flags = 0);
std::vector<VkCommandBuffer>
allocateCommandBuffers(Context& ctx, VkCommandPool pool, uint32_t count,
                       VkCommandBufferLevel level = VK_COMMAND_BUFFER_LEVEL_PRIMARY);
void beginCommands(VkCommandBuffer cmd,
                   VkCommandBufferUsageFlags flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
                   const VkCommandBufferInheritanceInfo* inheritance = nullptr);
void endCommands(VkCommandBuffer cmd);
// Whether beginCommands keeps ONE_TIME_SUBMIT where a scenario asks for it (--no-one-time-submit).
void keepOneTimeSubmit(bool keep);

VkFence createFence(Context& ctx, Janitor& janitor);
// Waits for the fence (with a generous timeout so a hang becomes an error) and resets it.
void waitFence(Context& ctx, VkFence fence);
VkSemaphore createSemaphore(Context& ctx, Janitor& janitor, bool timeline = false);

// One vkQueueSubmit of `cmds` signalling `fence`, then waits for it.
void submitAndWait(Context& ctx, VkQueue queue, std::span<const VkCommandBuffer> cmds,
                   VkFence fence);

// The 64-bit value of a non-dispatchable handle (a pointer or an integer by platform).
template <class Handle> uint64_t handleBits(Handle handle) {
    return (uint64_t)(handle);
}

// Gives an object a debug name when VK_EXT_debug_utils is enabled.
void setName(Context& ctx, VkObjectType type, uint64_t handle, const char* name);

// Throw VerifyError naming the first difference.
void expectBytes(const std::string& what, const void* actual, const void* expected, size_t size);
void expectWords(const std::string& what, const uint32_t* actual, const uint32_t* expected,
                 size_t count);

} // namespace wl
