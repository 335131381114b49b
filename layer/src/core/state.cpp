#include "core/state.hpp"

namespace vkscope {

HandleRegistry<InstanceState> g_instances;
HandleRegistry<DeviceState> g_devices;

} // namespace vkscope
