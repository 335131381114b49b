#pragma once
// Used by the generated pass-through entry points: the next layer's table for a handle. The
// application only calls a command on live handles, so the state is always registered.

#include "core/state.hpp"

namespace vkscope {

inline const InstanceDispatch& instance_dispatch(const void* handle) {
    return find_instance(handle)->next;
}
inline const DeviceDispatch& device_dispatch(const void* handle) {
    return find_device(handle)->next;
}

} // namespace vkscope
