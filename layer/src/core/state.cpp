#include "core/state.hpp"

#include "timeline/device.hpp"

namespace vkscope {

HandleRegistry<InstanceState> g_instances;
HandleRegistry<DeviceState> g_devices;

DeviceState::DeviceState() = default;
DeviceState::~DeviceState() = default;

} // namespace vkscope
