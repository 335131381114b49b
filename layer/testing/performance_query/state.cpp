// The fixture's one lock and what it guards, defined once for the files of entry points that
// share them; and what an instance gives both its physical devices and the devices made from them.

#include "state.hpp"

namespace pqfixture {

std::mutex g_lock;
std::unordered_map<void*, InstanceData> g_instances;
std::unordered_map<void*, std::unique_ptr<DeviceData>> g_devices;

InstanceData copy_instance(VkPhysicalDevice pd) {
    std::lock_guard guard(g_lock);
    InstanceData* d = instance_of(key(pd));
    return d ? *d : InstanceData{};
}

std::vector<VkQueueFamilyProperties> families_of(const InstanceData& d, VkPhysicalDevice pd) {
    uint32_t n = 0;
    d.families(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> out(n);
    d.families(pd, &n, out.data());
    return out;
}

} // namespace pqfixture
