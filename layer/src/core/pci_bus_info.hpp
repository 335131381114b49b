#pragma once
// A physical device's PCI address (VK_EXT_pci_bus_info), which names its GPU to the host's GPU
// sampler (sysfs, NVML) and to sampler plugins. Asked for only where the device has the
// extension: asking otherwise is invalid.

#include "core/state.hpp"

#include <optional>
#include <string>
#include <vulkan/vulkan.h>

namespace vkscope {

std::optional<VkPhysicalDevicePCIBusInfoPropertiesEXT> pci_bus_info(const InstanceState& instance,
                                                                    VkPhysicalDevice physical);

// domain:bus:device.function in hex, as sysfs names PCI devices (0000:03:00.0).
std::string pci_address(const VkPhysicalDevicePCIBusInfoPropertiesEXT& pci);

} // namespace vkscope
