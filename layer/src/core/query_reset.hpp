#pragma once
// Resetting a layer-owned query pool on the host (hostQueryReset), for every instrument that
// does: the command as the device has it, and a whole block's reset for a QueryPoolCache.

#include "core/query_pool.hpp"
#include "dispatch_tables.gen.hpp"

#include <functional>
#include <vulkan/vulkan.h>

namespace vkscope {

// vkResetQueryPool (Vulkan 1.2) or its VK_EXT_host_query_reset form, whichever the device has;
// null with neither.
inline PFN_vkResetQueryPool host_query_reset(const DeviceDispatch& next) {
    return next.ResetQueryPool ? next.ResetQueryPool : next.ResetQueryPoolEXT;
}

// A QueryPoolCache backend's reset (all of a block's slots); empty without the command.
inline std::function<void(VkQueryPool)> host_block_reset(VkDevice device,
                                                         const DeviceDispatch& next) {
    const PFN_vkResetQueryPool reset = host_query_reset(next);
    if (!reset) {
        return {};
    }
    return [device, reset](VkQueryPool pool) { reset(device, pool, 0, QueryBlock::kSlots); };
}

} // namespace vkscope
