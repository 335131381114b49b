#include "core/pci_bus_info.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

namespace vkscope {

std::optional<VkPhysicalDevicePCIBusInfoPropertiesEXT> pci_bus_info(const InstanceState& instance,
                                                                    VkPhysicalDevice physical) {
    const InstanceDispatch& in = instance.next;
    auto properties2 = in.GetPhysicalDeviceProperties2 ? in.GetPhysicalDeviceProperties2
                                                       : in.GetPhysicalDeviceProperties2KHR;
    if (!properties2 || instance.api_version < VK_API_VERSION_1_1) {
        return std::nullopt;
    }
    uint32_t count = 0;
    in.EnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    in.EnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data());
    for (const VkExtensionProperties& e : extensions) {
        if (std::strcmp(e.extensionName, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME) == 0) {
            VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
            pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
            VkPhysicalDeviceProperties2 p2{
                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &pci, {}};
            properties2(physical, &p2);
            return pci;
        }
    }
    return std::nullopt;
}

std::string pci_address(const VkPhysicalDevicePCIBusInfoPropertiesEXT& pci) {
    char text[32];
    std::snprintf(text, sizeof text,
                  pci.pciDomain > 0xffff ? "%08x:%02x:%02x.%x" : "%04x:%02x:%02x.%x", pci.pciDomain,
                  pci.pciBus, pci.pciDevice, pci.pciFunction);
    return text;
}

} // namespace vkscope
