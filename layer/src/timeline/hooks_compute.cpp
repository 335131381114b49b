// Compute dispatches, trace rays and acceleration structure builds and copies.

#include "timeline/workload_hook.hpp"

#include "protocol.gen.hpp"

#include <cstddef>

namespace vkscope {
namespace {

using protocol::AccelerationStructureKind;
using timeline::CommandBufferState;
using timeline::find_command_buffer;
using timeline::ParameterKind;
using timeline::ParameterRequest;
using timeline::record_workload;
using timeline::Size3;
using timeline::TimelineDevice;
using timeline::WorkloadType;

template <typename Forward>
void dispatch(VkCommandBuffer handle, const char* api, std::optional<Size3> groups, Size3 base,
              Forward&& forward, const ParameterRequest* indirect = nullptr) {
    CommandBufferState* cb = find_command_buffer(handle);
    record_workload(
        handle, cb, WorkloadType::dispatch, api,
        [&](timeline::WorkloadInfo& w, TimelineDevice&) {
            w.size = groups;
            w.base = base;
            w.local_size = cb->compute_local_size;
        },
        forward, indirect, ParameterKind::dispatch);
}

// The (buffer, offset) holding a device address, for copying indirect ray tracing parameters.
std::optional<ParameterRequest> address_request(const CommandBufferState* cb,
                                                VkDeviceAddress address, uint32_t bytes) {
    if (!cb || !address) {
        return std::nullopt;
    }
    TimelineDevice& tl = *cb->device;
    std::lock_guard lock(tl.addresses_mutex);
    auto it = tl.addresses.upper_bound(address);
    if (it == tl.addresses.begin()) {
        return std::nullopt;
    }
    --it;
    if (address + bytes > it->second.first) {
        return std::nullopt;
    }
    return ParameterRequest{key(it->second.second), address - it->first, bytes};
}

// `address`/`bytes`: where an indirect command's width, height and depth are.
template <typename Forward>
void trace_rays(VkCommandBuffer handle, const char* api, std::optional<Size3> size,
                Forward&& forward, VkDeviceAddress address = 0) {
    CommandBufferState* cb = find_command_buffer(handle);
    const std::optional<ParameterRequest> indirect = address_request(cb, address, 12);
    record_workload(
        handle, cb, WorkloadType::trace_rays, api,
        [&](timeline::WorkloadInfo& w, TimelineDevice&) { w.size = size; }, forward,
        indirect ? &*indirect : nullptr, ParameterKind::trace_rays);
}

template <typename Forward>
void acceleration_structure(VkCommandBuffer handle, const char* api, const char* kind,
                            uint32_t count, Forward&& forward) {
    record_workload(
        handle, find_command_buffer(handle), WorkloadType::acceleration_structure, api,
        [&](timeline::WorkloadInfo& w, TimelineDevice&) {
            w.kind = kind;
            w.amount = count;
        },
        forward);
}

} // namespace

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDispatch(VkCommandBuffer commandBuffer, uint32_t groupCountX,
                                                uint32_t groupCountY, uint32_t groupCountZ) {
    dispatch(commandBuffer, "vkCmdDispatch", Size3{groupCountX, groupCountY, groupCountZ}, {},
             [&](const DeviceDispatch& next) {
                 next.CmdDispatch(commandBuffer, groupCountX, groupCountY, groupCountZ);
             });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDispatchBase(VkCommandBuffer commandBuffer,
                                                    uint32_t baseGroupX, uint32_t baseGroupY,
                                                    uint32_t baseGroupZ, uint32_t groupCountX,
                                                    uint32_t groupCountY, uint32_t groupCountZ) {
    dispatch(commandBuffer, "vkCmdDispatchBase", Size3{groupCountX, groupCountY, groupCountZ},
             {baseGroupX, baseGroupY, baseGroupZ}, [&](const DeviceDispatch& next) {
                 next.CmdDispatchBase(commandBuffer, baseGroupX, baseGroupY, baseGroupZ,
                                      groupCountX, groupCountY, groupCountZ);
             });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDispatchBaseKHR(VkCommandBuffer commandBuffer,
                                                       uint32_t baseGroupX, uint32_t baseGroupY,
                                                       uint32_t baseGroupZ, uint32_t groupCountX,
                                                       uint32_t groupCountY, uint32_t groupCountZ) {
    dispatch(commandBuffer, "vkCmdDispatchBaseKHR", Size3{groupCountX, groupCountY, groupCountZ},
             {baseGroupX, baseGroupY, baseGroupZ}, [&](const DeviceDispatch& next) {
                 next.CmdDispatchBaseKHR(commandBuffer, baseGroupX, baseGroupY, baseGroupZ,
                                         groupCountX, groupCountY, groupCountZ);
             });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDispatchIndirect(VkCommandBuffer commandBuffer,
                                                        VkBuffer buffer, VkDeviceSize offset) {
    const ParameterRequest args{key(buffer), offset, sizeof(VkDispatchIndirectCommand)};
    dispatch(
        commandBuffer, "vkCmdDispatchIndirect", std::nullopt, {},
        [&](const DeviceDispatch& next) {
            next.CmdDispatchIndirect(commandBuffer, buffer, offset);
        },
        &args);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdTraceRaysKHR(
    VkCommandBuffer commandBuffer, const VkStridedDeviceAddressRegionKHR* pRaygenShaderBindingTable,
    const VkStridedDeviceAddressRegionKHR* pMissShaderBindingTable,
    const VkStridedDeviceAddressRegionKHR* pHitShaderBindingTable,
    const VkStridedDeviceAddressRegionKHR* pCallableShaderBindingTable, uint32_t width,
    uint32_t height, uint32_t depth) {
    trace_rays(commandBuffer, "vkCmdTraceRaysKHR", Size3{width, height, depth},
               [&](const DeviceDispatch& next) {
                   next.CmdTraceRaysKHR(commandBuffer, pRaygenShaderBindingTable,
                                        pMissShaderBindingTable, pHitShaderBindingTable,
                                        pCallableShaderBindingTable, width, height, depth);
               });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdTraceRaysIndirectKHR(
    VkCommandBuffer commandBuffer, const VkStridedDeviceAddressRegionKHR* pRaygenShaderBindingTable,
    const VkStridedDeviceAddressRegionKHR* pMissShaderBindingTable,
    const VkStridedDeviceAddressRegionKHR* pHitShaderBindingTable,
    const VkStridedDeviceAddressRegionKHR* pCallableShaderBindingTable,
    VkDeviceAddress indirectDeviceAddress) {
    trace_rays(
        commandBuffer, "vkCmdTraceRaysIndirectKHR", std::nullopt,
        [&](const DeviceDispatch& next) {
            next.CmdTraceRaysIndirectKHR(commandBuffer, pRaygenShaderBindingTable,
                                         pMissShaderBindingTable, pHitShaderBindingTable,
                                         pCallableShaderBindingTable, indirectDeviceAddress);
        },
        indirectDeviceAddress);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdTraceRaysIndirect2KHR(
    VkCommandBuffer commandBuffer, VkDeviceAddress indirectDeviceAddress) {
    // Only the size at the end of VkTraceRaysIndirectCommand2KHR is wanted.
    constexpr uint32_t at = offsetof(VkTraceRaysIndirectCommand2KHR, width);
    trace_rays(
        commandBuffer, "vkCmdTraceRaysIndirect2KHR", std::nullopt,
        [&](const DeviceDispatch& next) {
            next.CmdTraceRaysIndirect2KHR(commandBuffer, indirectDeviceAddress);
        },
        indirectDeviceAddress ? indirectDeviceAddress + at : 0);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBuildAccelerationStructuresKHR(
    VkCommandBuffer commandBuffer, uint32_t infoCount,
    const VkAccelerationStructureBuildGeometryInfoKHR* pInfos,
    const VkAccelerationStructureBuildRangeInfoKHR* const* ppBuildRangeInfos) {
    acceleration_structure(commandBuffer, "vkCmdBuildAccelerationStructuresKHR",
                           name(AccelerationStructureKind::build), infoCount,
                           [&](const DeviceDispatch& next) {
                               next.CmdBuildAccelerationStructuresKHR(commandBuffer, infoCount,
                                                                      pInfos, ppBuildRangeInfos);
                           });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBuildAccelerationStructuresIndirectKHR(
    VkCommandBuffer commandBuffer, uint32_t infoCount,
    const VkAccelerationStructureBuildGeometryInfoKHR* pInfos,
    const VkDeviceAddress* pIndirectDeviceAddresses, const uint32_t* pIndirectStrides,
    const uint32_t* const* ppMaxPrimitiveCounts) {
    acceleration_structure(commandBuffer, "vkCmdBuildAccelerationStructuresIndirectKHR",
                           name(AccelerationStructureKind::build), infoCount,
                           [&](const DeviceDispatch& next) {
                               next.CmdBuildAccelerationStructuresIndirectKHR(
                                   commandBuffer, infoCount, pInfos, pIndirectDeviceAddresses,
                                   pIndirectStrides, ppMaxPrimitiveCounts);
                           });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdCopyAccelerationStructureKHR(
    VkCommandBuffer commandBuffer, const VkCopyAccelerationStructureInfoKHR* pInfo) {
    acceleration_structure(commandBuffer, "vkCmdCopyAccelerationStructureKHR",
                           name(AccelerationStructureKind::copy), 1,
                           [&](const DeviceDispatch& next) {
                               next.CmdCopyAccelerationStructureKHR(commandBuffer, pInfo);
                           });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdCopyAccelerationStructureToMemoryKHR(
    VkCommandBuffer commandBuffer, const VkCopyAccelerationStructureToMemoryInfoKHR* pInfo) {
    acceleration_structure(commandBuffer, "vkCmdCopyAccelerationStructureToMemoryKHR",
                           name(AccelerationStructureKind::copy), 1,
                           [&](const DeviceDispatch& next) {
                               next.CmdCopyAccelerationStructureToMemoryKHR(commandBuffer, pInfo);
                           });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdCopyMemoryToAccelerationStructureKHR(
    VkCommandBuffer commandBuffer, const VkCopyMemoryToAccelerationStructureInfoKHR* pInfo) {
    acceleration_structure(commandBuffer, "vkCmdCopyMemoryToAccelerationStructureKHR",
                           name(AccelerationStructureKind::copy), 1,
                           [&](const DeviceDispatch& next) {
                               next.CmdCopyMemoryToAccelerationStructureKHR(commandBuffer, pInfo);
                           });
}

} // namespace vkscope
