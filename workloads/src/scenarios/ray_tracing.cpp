// ray_tracing: VK_KHR_ray_tracing_pipeline over VK_KHR_acceleration_structure. Each frame builds
// a bottom-level structure of one triangle and a top-level structure with one translated
// instance of it (two vkCmdBuildAccelerationStructuresKHR), clones the top level with
// vkCmdCopyAccelerationStructureKHR, and traces the clone: vkCmdTraceRaysKHR over 64x32x1, then
// vkCmdTraceRaysIndirectKHR with 16x8x1 read from a buffer. Every launch element shoots one ray
// along +z through its centre; the closest-hit and miss shaders give different values, and the
// host checks every element against the triangle's exact coverage.
//
// Runs only where the device has the extensions (Context enables them when this scenario is
// selected); lavapipe has none, so there it is skipped.

#include "errors.h"
#include "resources.h"
#include "scenario.h"
#include "shaders.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace wl {

namespace {

constexpr uint32_t kWidth = 64;
constexpr uint32_t kHeight = 32;
constexpr VkTraceRaysIndirectCommandKHR kIndirectSize = {16, 8, 1};
constexpr uint32_t kDirectElements = kWidth * kHeight;
constexpr uint32_t kElements = kDirectElements + kIndirectSize.width * kIndirectSize.height;
constexpr uint32_t kSentinel = 0xdeadbeefu;

// The triangle in object space (z = 0) and the instance's translation along x. No launch
// element's centre (k + 0.5) comes within 0.25 of an edge, so hit or miss is never a close call.
constexpr float kTriangle[3][3] = {
    {4.25f, 2.25f, 0.0f}, {34.25f, 2.25f, 0.0f}, {4.25f, 32.25f, 0.0f}};
constexpr float kShiftX = 4.0f;
constexpr uint32_t kCustomIndex = 7;
// What shaders/trace.rmiss and trace.rchit put into the payload.
constexpr uint32_t kMissValue = 0x4d000000u;
constexpr uint32_t kHitValue = 0x48000000u | (kCustomIndex << 16);

bool hits(uint32_t x, uint32_t y) {
    const float px = float(x) + 0.5f - kShiftX;
    const float py = float(y) + 0.5f;
    // Inside the right angle at (4.25, 2.25) and below the hypotenuse px + py = 36.5.
    return px > kTriangle[0][0] && py > kTriangle[0][1] &&
           px + py < kTriangle[1][0] + kTriangle[1][1];
}

// shaders/trace.rgen stores the payload with the element's coordinates.
uint32_t expectedValue(uint32_t x, uint32_t y) {
    return (hits(x, y) ? kHitValue : kMissValue) | (x << 8) | y;
}

VkDeviceAddress alignUp(VkDeviceAddress value, VkDeviceSize alignment) {
    return alignment > 1 ? (value + alignment - 1) / alignment * alignment : value;
}

VkDeviceAddress bufferAddress(Context& ctx, const Buffer& buffer) {
    const VkBufferDeviceAddressInfo info{
        .sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
        .buffer = buffer.handle,
    };
    return vkGetBufferDeviceAddress(ctx.device, &info);
}

// The extension's entry points, from the device.
struct RayTracingApi {
    PFN_vkCreateAccelerationStructureKHR createStructure = nullptr;
    PFN_vkDestroyAccelerationStructureKHR destroyStructure = nullptr;
    PFN_vkGetAccelerationStructureBuildSizesKHR buildSizes = nullptr;
    PFN_vkGetAccelerationStructureDeviceAddressKHR structureAddress = nullptr;
    PFN_vkCmdBuildAccelerationStructuresKHR cmdBuild = nullptr;
    PFN_vkCmdCopyAccelerationStructureKHR cmdCopy = nullptr;
    PFN_vkCreateRayTracingPipelinesKHR createPipelines = nullptr;
    PFN_vkGetRayTracingShaderGroupHandlesKHR groupHandles = nullptr;
    PFN_vkCmdTraceRaysKHR cmdTraceRays = nullptr;
    PFN_vkCmdTraceRaysIndirectKHR cmdTraceRaysIndirect = nullptr;

    void load(VkDevice device) {
        auto get = [device](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
                vkGetDeviceProcAddr(device, name));
            if (!fn) {
                throw VulkanError(VK_ERROR_EXTENSION_NOT_PRESENT,
                                  std::string("VK_ERROR_EXTENSION_NOT_PRESENT: no ") + name);
            }
        };
        get(createStructure, "vkCreateAccelerationStructureKHR");
        get(destroyStructure, "vkDestroyAccelerationStructureKHR");
        get(buildSizes, "vkGetAccelerationStructureBuildSizesKHR");
        get(structureAddress, "vkGetAccelerationStructureDeviceAddressKHR");
        get(cmdBuild, "vkCmdBuildAccelerationStructuresKHR");
        get(cmdCopy, "vkCmdCopyAccelerationStructureKHR");
        get(createPipelines, "vkCreateRayTracingPipelinesKHR");
        get(groupHandles, "vkGetRayTracingShaderGroupHandlesKHR");
        get(cmdTraceRays, "vkCmdTraceRaysKHR");
        get(cmdTraceRaysIndirect, "vkCmdTraceRaysIndirectKHR");
    }
};

// An acceleration structure with its storage, and the scratch memory its build needs.
struct Structure {
    VkAccelerationStructureKHR handle = VK_NULL_HANDLE;
    Buffer storage;
    Buffer scratch;
    VkDeviceAddress scratchAddress = 0; // aligned for the build
};

class RayTracingScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.features.rayTracing) {
            throw SkipScenario(ctx.features.rayTracingMissing);
        }
        api_.load(ctx.device);

        // Bottom level: one opaque triangle.
        vertices_ =
            createBuffer(ctx, janitor_, sizeof(kTriangle),
                         VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_BIT_KHR |
                             VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                         Memory::Host);
        std::memcpy(vertices_.mapped, kTriangle, sizeof(kTriangle));
        bottomGeometry_ = VkAccelerationStructureGeometryKHR{
            .sType = VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_KHR,
            .geometryType = VK_GEOMETRY_TYPE_TRIANGLES_KHR,
            .geometry =
                {.triangles =
                     {
                         .sType =
                             VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_TRIANGLES_DATA_KHR,
                         .vertexFormat = VK_FORMAT_R32G32B32_SFLOAT,
                         .vertexData = {.deviceAddress = bufferAddress(ctx, vertices_)},
                         .vertexStride = sizeof(kTriangle[0]),
                         .maxVertex = 2,
                         .indexType = VK_INDEX_TYPE_NONE_KHR,
                     }},
            .flags = VK_GEOMETRY_OPAQUE_BIT_KHR,
        };
        createStructure(ctx, bottom_, VK_ACCELERATION_STRUCTURE_TYPE_BOTTOM_LEVEL_KHR,
                        bottomGeometry_);

        // Top level: one instance of the triangle, moved along x.
        const VkAccelerationStructureDeviceAddressInfoKHR bottomAddressInfo{
            .sType = VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_DEVICE_ADDRESS_INFO_KHR,
            .accelerationStructure = bottom_.handle,
        };
        VkAccelerationStructureInstanceKHR instance{
            .transform = {{{1.0f, 0.0f, 0.0f, kShiftX},
                           {0.0f, 1.0f, 0.0f, 0.0f},
                           {0.0f, 0.0f, 1.0f, 0.0f}}},
            .instanceCustomIndex = kCustomIndex,
            .mask = 0xff,
            .instanceShaderBindingTableRecordOffset = 0,
            .flags = VK_GEOMETRY_INSTANCE_TRIANGLE_FACING_CULL_DISABLE_BIT_KHR,
            .accelerationStructureReference = api_.structureAddress(ctx.device, &bottomAddressInfo),
        };
        // Instance data must sit at a 16-byte aligned address.
        instances_ =
            createBuffer(ctx, janitor_, sizeof(instance) + 16,
                         VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_BIT_KHR |
                             VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                         Memory::Host);
        const VkDeviceAddress instancesBase = bufferAddress(ctx, instances_);
        const VkDeviceAddress instancesAddress = alignUp(instancesBase, 16);
        std::memcpy(static_cast<char*>(instances_.mapped) + (instancesAddress - instancesBase),
                    &instance, sizeof(instance));
        topGeometry_ = VkAccelerationStructureGeometryKHR{
            .sType = VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_KHR,
            .geometryType = VK_GEOMETRY_TYPE_INSTANCES_KHR,
            .geometry =
                {.instances =
                     {
                         .sType =
                             VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_INSTANCES_DATA_KHR,
                         .arrayOfPointers = VK_FALSE,
                         .data = {.deviceAddress = instancesAddress},
                     }},
            .flags = VK_GEOMETRY_OPAQUE_BIT_KHR,
        };
        const VkDeviceSize topSize =
            createStructure(ctx, top_, VK_ACCELERATION_STRUCTURE_TYPE_TOP_LEVEL_KHR, topGeometry_);
        // The clone needs no more room than the original.
        clone_.storage = createBuffer(ctx, janitor_, topSize,
                                      VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_STORAGE_BIT_KHR |
                                          VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                                      Memory::Device);
        clone_.handle = createHandle(ctx, clone_.storage, topSize,
                                     VK_ACCELERATION_STRUCTURE_TYPE_TOP_LEVEL_KHR);

        output_ =
            createBuffer(ctx, janitor_, kElements * 4,
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         Memory::Device);
        readback_ = createBuffer(ctx, janitor_, kElements * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 Memory::Host);
        indirect_ = createBuffer(ctx, janitor_, sizeof(kIndirectSize),
                                 VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
                                     VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                                 Memory::Host);
        *indirect_.as<VkTraceRaysIndirectCommandKHR>() = kIndirectSize;
        indirectAddress_ = bufferAddress(ctx, indirect_);

        createPipeline(ctx);
        createShaderBindingTable(ctx);

        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);

        for (uint32_t y = 0; y < kHeight; ++y) {
            for (uint32_t x = 0; x < kWidth; ++x) {
                expected_.push_back(expectedValue(x, y));
            }
        }
        for (uint32_t y = 0; y < kIndirectSize.height; ++y) {
            for (uint32_t x = 0; x < kIndirectSize.width; ++x) {
                expected_.push_back(expectedValue(x, y));
            }
        }
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        VkCommandBuffer cmd = cmd_;
        beginCommands(cmd);
        // The previous frame's traces and copies are done with the structures and the output
        // before this frame writes them again.
        memoryBarrier(
            cmd,
            VK_PIPELINE_STAGE_RAY_TRACING_SHADER_BIT_KHR |
                VK_PIPELINE_STAGE_ACCELERATION_STRUCTURE_BUILD_BIT_KHR |
                VK_PIPELINE_STAGE_TRANSFER_BIT,
            0,
            VK_PIPELINE_STAGE_ACCELERATION_STRUCTURE_BUILD_BIT_KHR | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_ACCELERATION_STRUCTURE_WRITE_BIT_KHR | VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(cmd, output_.handle, 0, VK_WHOLE_SIZE, kSentinel);

        build(cmd, bottom_, VK_ACCELERATION_STRUCTURE_TYPE_BOTTOM_LEVEL_KHR, bottomGeometry_);
        structureBarrier(cmd);
        build(cmd, top_, VK_ACCELERATION_STRUCTURE_TYPE_TOP_LEVEL_KHR, topGeometry_);
        structureBarrier(cmd);
        const VkCopyAccelerationStructureInfoKHR copy{
            .sType = VK_STRUCTURE_TYPE_COPY_ACCELERATION_STRUCTURE_INFO_KHR,
            .src = top_.handle,
            .dst = clone_.handle,
            .mode = VK_COPY_ACCELERATION_STRUCTURE_MODE_CLONE_KHR,
        };
        api_.cmdCopy(cmd, &copy);
        memoryBarrier(cmd,
                      VK_PIPELINE_STAGE_ACCELERATION_STRUCTURE_BUILD_BIT_KHR |
                          VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_ACCELERATION_STRUCTURE_WRITE_BIT_KHR | VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_RAY_TRACING_SHADER_BIT_KHR,
                      VK_ACCESS_ACCELERATION_STRUCTURE_READ_BIT_KHR | VK_ACCESS_SHADER_WRITE_BIT);

        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR, pipeline_);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR, layout_, 0, 1, &set_,
                                0, nullptr);
        const uint32_t directBase = 0;
        vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_RAYGEN_BIT_KHR, 0, sizeof(directBase),
                           &directBase);
        api_.cmdTraceRays(cmd, &raygen_, &miss_, &hit_, &callable_, kWidth, kHeight, 1);
        // The two launches write different elements, but through the same descriptor.
        memoryBarrier(cmd, VK_PIPELINE_STAGE_RAY_TRACING_SHADER_BIT_KHR, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_RAY_TRACING_SHADER_BIT_KHR, VK_ACCESS_SHADER_WRITE_BIT);
        const uint32_t indirectBase = kDirectElements;
        vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_RAYGEN_BIT_KHR, 0, sizeof(indirectBase),
                           &indirectBase);
        api_.cmdTraceRaysIndirect(cmd, &raygen_, &miss_, &hit_, &callable_, indirectAddress_);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_RAY_TRACING_SHADER_BIT_KHR, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, output_.size};
        vkCmdCopyBuffer(cmd, output_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(cmd);
        endCommands(cmd);

        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);
        const uint32_t* got = readback_.as<uint32_t>();
        expectWords("vkCmdTraceRaysKHR 64x32x1 on the cloned structure", got, expected_.data(),
                    kDirectElements);
        expectWords("vkCmdTraceRaysIndirectKHR 16x8x1", got + kDirectElements,
                    expected_.data() + kDirectElements, kElements - kDirectElements);
    }

private:
    static VkAccelerationStructureBuildGeometryInfoKHR
    buildInfo(VkAccelerationStructureTypeKHR type,
              const VkAccelerationStructureGeometryKHR& geometry) {
        return VkAccelerationStructureBuildGeometryInfoKHR{
            .sType = VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_BUILD_GEOMETRY_INFO_KHR,
            .type = type,
            .flags = VK_BUILD_ACCELERATION_STRUCTURE_PREFER_FAST_TRACE_BIT_KHR,
            .mode = VK_BUILD_ACCELERATION_STRUCTURE_MODE_BUILD_KHR,
            .geometryCount = 1,
            .pGeometries = &geometry,
        };
    }

    VkAccelerationStructureKHR createHandle(Context& ctx, const Buffer& storage, VkDeviceSize size,
                                            VkAccelerationStructureTypeKHR type) {
        const VkAccelerationStructureCreateInfoKHR info{
            .sType = VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_CREATE_INFO_KHR,
            .buffer = storage.handle,
            .offset = 0,
            .size = size,
            .type = type,
        };
        VkAccelerationStructureKHR handle = VK_NULL_HANDLE;
        VK_CHECK(api_.createStructure(ctx.device, &info, nullptr, &handle));
        VkDevice device = ctx.device;
        janitor_.defer([device, handle, destroy = api_.destroyStructure] {
            destroy(device, handle, nullptr);
        });
        return handle;
    }

    // Sizes, creates and gives scratch memory to a structure of one geometry with one primitive.
    // Returns the structure's size.
    VkDeviceSize createStructure(Context& ctx, Structure& s, VkAccelerationStructureTypeKHR type,
                                 const VkAccelerationStructureGeometryKHR& geometry) {
        const VkAccelerationStructureBuildGeometryInfoKHR info = buildInfo(type, geometry);
        const uint32_t primitives = 1;
        VkAccelerationStructureBuildSizesInfoKHR sizes{
            .sType = VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_BUILD_SIZES_INFO_KHR};
        api_.buildSizes(ctx.device, VK_ACCELERATION_STRUCTURE_BUILD_TYPE_DEVICE_KHR, &info,
                        &primitives, &sizes);
        s.storage = createBuffer(ctx, janitor_, sizes.accelerationStructureSize,
                                 VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_STORAGE_BIT_KHR |
                                     VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                                 Memory::Device);
        s.handle = createHandle(ctx, s.storage, sizes.accelerationStructureSize, type);
        const VkDeviceSize alignment =
            ctx.accelerationStructureProperties.minAccelerationStructureScratchOffsetAlignment;
        s.scratch = createBuffer(ctx, janitor_, sizes.buildScratchSize + alignment,
                                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                                 Memory::Device);
        s.scratchAddress = alignUp(bufferAddress(ctx, s.scratch), alignment);
        return sizes.accelerationStructureSize;
    }

    void build(VkCommandBuffer cmd, const Structure& s, VkAccelerationStructureTypeKHR type,
               const VkAccelerationStructureGeometryKHR& geometry) {
        VkAccelerationStructureBuildGeometryInfoKHR info = buildInfo(type, geometry);
        info.dstAccelerationStructure = s.handle;
        info.scratchData.deviceAddress = s.scratchAddress;
        const VkAccelerationStructureBuildRangeInfoKHR range{.primitiveCount = 1};
        const VkAccelerationStructureBuildRangeInfoKHR* ranges = &range;
        api_.cmdBuild(cmd, 1, &info, &ranges);
    }

    // A structure written by a build or copy is read by the next build or copy.
    static void structureBarrier(VkCommandBuffer cmd) {
        memoryBarrier(cmd, VK_PIPELINE_STAGE_ACCELERATION_STRUCTURE_BUILD_BIT_KHR,
                      VK_ACCESS_ACCELERATION_STRUCTURE_WRITE_BIT_KHR,
                      VK_PIPELINE_STAGE_ACCELERATION_STRUCTURE_BUILD_BIT_KHR,
                      VK_ACCESS_ACCELERATION_STRUCTURE_READ_BIT_KHR);
    }

    void createPipeline(Context& ctx) {
        VkDevice device = ctx.device;
        const VkDescriptorSetLayoutBinding bindings[2] = {
            {
                .binding = 0,
                .descriptorType = VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR,
                .descriptorCount = 1,
                .stageFlags = VK_SHADER_STAGE_RAYGEN_BIT_KHR,
            },
            {
                .binding = 1,
                .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                .descriptorCount = 1,
                .stageFlags = VK_SHADER_STAGE_RAYGEN_BIT_KHR,
            },
        };
        const VkDescriptorSetLayoutCreateInfo setInfo{
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .bindingCount = 2,
            .pBindings = bindings,
        };
        VK_CHECK(vkCreateDescriptorSetLayout(device, &setInfo, nullptr, &setLayout_));
        janitor_.defer(
            [device, l = setLayout_] { vkDestroyDescriptorSetLayout(device, l, nullptr); });
        const VkPushConstantRange push{VK_SHADER_STAGE_RAYGEN_BIT_KHR, 0, sizeof(uint32_t)};
        const VkPipelineLayoutCreateInfo layoutInfo{
            .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
            .setLayoutCount = 1,
            .pSetLayouts = &setLayout_,
            .pushConstantRangeCount = 1,
            .pPushConstantRanges = &push,
        };
        VK_CHECK(vkCreatePipelineLayout(device, &layoutInfo, nullptr, &layout_));
        janitor_.defer([device, l = layout_] { vkDestroyPipelineLayout(device, l, nullptr); });

        const VkDescriptorPoolSize sizes[2] = {
            {VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, 1},
            {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1},
        };
        const VkDescriptorPoolCreateInfo poolInfo{
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
            .maxSets = 1,
            .poolSizeCount = 2,
            .pPoolSizes = sizes,
        };
        VkDescriptorPool pool = VK_NULL_HANDLE;
        VK_CHECK(vkCreateDescriptorPool(device, &poolInfo, nullptr, &pool));
        janitor_.defer([device, pool] { vkDestroyDescriptorPool(device, pool, nullptr); });
        const VkDescriptorSetAllocateInfo allocInfo{
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            .descriptorPool = pool,
            .descriptorSetCount = 1,
            .pSetLayouts = &setLayout_,
        };
        VK_CHECK(vkAllocateDescriptorSets(device, &allocInfo, &set_));
        // The rays are traced against the clone, so a copy that did nothing shows.
        const VkWriteDescriptorSetAccelerationStructureKHR sceneInfo{
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET_ACCELERATION_STRUCTURE_KHR,
            .accelerationStructureCount = 1,
            .pAccelerationStructures = &clone_.handle,
        };
        const VkDescriptorBufferInfo outputInfo{output_.handle, 0, VK_WHOLE_SIZE};
        const VkWriteDescriptorSet writes[2] = {
            {
                .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                .pNext = &sceneInfo,
                .dstSet = set_,
                .dstBinding = 0,
                .descriptorCount = 1,
                .descriptorType = VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR,
            },
            {
                .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                .dstSet = set_,
                .dstBinding = 1,
                .descriptorCount = 1,
                .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                .pBufferInfo = &outputInfo,
            },
        };
        vkUpdateDescriptorSets(device, 2, writes, 0, nullptr);

        const Spirv code[3] = {spirv::traceRgen(), spirv::traceRmiss(), spirv::traceRchit()};
        const VkShaderStageFlagBits stages[3] = {VK_SHADER_STAGE_RAYGEN_BIT_KHR,
                                                 VK_SHADER_STAGE_MISS_BIT_KHR,
                                                 VK_SHADER_STAGE_CLOSEST_HIT_BIT_KHR};
        std::array<VkShaderModule, 3> modules{};
        // Modules are only needed while the pipeline is created.
        struct ModuleCleanup {
            VkDevice device;
            std::array<VkShaderModule, 3>& modules;
            ~ModuleCleanup() {
                for (VkShaderModule m : modules) {
                    vkDestroyShaderModule(device, m, nullptr);
                }
            }
        } cleanup{device, modules};
        std::array<VkPipelineShaderStageCreateInfo, 3> stageInfos{};
        for (uint32_t i = 0; i < 3; ++i) {
            const VkShaderModuleCreateInfo moduleInfo{
                .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                .codeSize = code[i].bytes,
                .pCode = code[i].code,
            };
            VK_CHECK(vkCreateShaderModule(device, &moduleInfo, nullptr, &modules[i]));
            stageInfos[i] = VkPipelineShaderStageCreateInfo{
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = stages[i],
                .module = modules[i],
                .pName = "main",
            };
        }
        auto group = [](VkRayTracingShaderGroupTypeKHR type, uint32_t general, uint32_t closest) {
            return VkRayTracingShaderGroupCreateInfoKHR{
                .sType = VK_STRUCTURE_TYPE_RAY_TRACING_SHADER_GROUP_CREATE_INFO_KHR,
                .type = type,
                .generalShader = general,
                .closestHitShader = closest,
                .anyHitShader = VK_SHADER_UNUSED_KHR,
                .intersectionShader = VK_SHADER_UNUSED_KHR,
            };
        };
        // Groups: 0 ray generation, 1 miss, 2 triangle hits.
        const VkRayTracingShaderGroupCreateInfoKHR groups[kGroups] = {
            group(VK_RAY_TRACING_SHADER_GROUP_TYPE_GENERAL_KHR, 0, VK_SHADER_UNUSED_KHR),
            group(VK_RAY_TRACING_SHADER_GROUP_TYPE_GENERAL_KHR, 1, VK_SHADER_UNUSED_KHR),
            group(VK_RAY_TRACING_SHADER_GROUP_TYPE_TRIANGLES_HIT_GROUP_KHR, VK_SHADER_UNUSED_KHR,
                  2),
        };
        const VkRayTracingPipelineCreateInfoKHR info{
            .sType = VK_STRUCTURE_TYPE_RAY_TRACING_PIPELINE_CREATE_INFO_KHR,
            .stageCount = 3,
            .pStages = stageInfos.data(),
            .groupCount = kGroups,
            .pGroups = groups,
            .maxPipelineRayRecursionDepth = 1,
            .layout = layout_,
        };
        VK_CHECK(api_.createPipelines(device, VK_NULL_HANDLE, VK_NULL_HANDLE, 1, &info, nullptr,
                                      &pipeline_));
        janitor_.defer([device, p = pipeline_] { vkDestroyPipeline(device, p, nullptr); });
    }

    // One record per group, each group's region starting at the base alignment.
    void createShaderBindingTable(Context& ctx) {
        const VkPhysicalDeviceRayTracingPipelinePropertiesKHR& props = ctx.rayTracingProperties;
        const uint32_t handleSize = props.shaderGroupHandleSize;
        const VkDeviceSize stride = alignUp(handleSize, props.shaderGroupHandleAlignment);
        const VkDeviceSize base = std::max<VkDeviceSize>(props.shaderGroupBaseAlignment, 1);
        const VkDeviceSize region = alignUp(stride, base);
        std::vector<uint8_t> handles(size_t{kGroups} * handleSize);
        VK_CHECK(
            api_.groupHandles(ctx.device, pipeline_, 0, kGroups, handles.size(), handles.data()));

        table_ = createBuffer(ctx, janitor_, kGroups * region + base,
                              VK_BUFFER_USAGE_SHADER_BINDING_TABLE_BIT_KHR |
                                  VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                              Memory::Host);
        const VkDeviceAddress tableBase = bufferAddress(ctx, table_);
        const VkDeviceAddress first = alignUp(tableBase, base);
        auto* bytes = static_cast<uint8_t*>(table_.mapped);
        VkStridedDeviceAddressRegionKHR* regions[kGroups] = {&raygen_, &miss_, &hit_};
        for (uint32_t g = 0; g < kGroups; ++g) {
            const VkDeviceAddress address = first + g * region;
            std::memcpy(bytes + (address - tableBase), handles.data() + size_t{g} * handleSize,
                        handleSize);
            // The ray generation region's size must equal its stride.
            *regions[g] = VkStridedDeviceAddressRegionKHR{address, stride, stride};
        }
        callable_ = VkStridedDeviceAddressRegionKHR{};
    }

    static constexpr uint32_t kGroups = 3;

    Janitor janitor_;
    RayTracingApi api_;
    Buffer vertices_;
    Buffer instances_;
    VkAccelerationStructureGeometryKHR bottomGeometry_{};
    VkAccelerationStructureGeometryKHR topGeometry_{};
    Structure bottom_;
    Structure top_;
    Structure clone_;
    Buffer output_;
    Buffer readback_;
    Buffer indirect_;
    VkDeviceAddress indirectAddress_ = 0;
    VkDescriptorSetLayout setLayout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    Buffer table_;
    VkStridedDeviceAddressRegionKHR raygen_{};
    VkStridedDeviceAddressRegionKHR miss_{};
    VkStridedDeviceAddressRegionKHR hit_{};
    VkStridedDeviceAddressRegionKHR callable_{};
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::vector<uint32_t> expected_;
};

} // namespace

std::unique_ptr<Scenario> makeRayTracingScenario() {
    return std::make_unique<RayTracingScenario>();
}

} // namespace wl
