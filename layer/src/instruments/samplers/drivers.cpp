#include "instruments/samplers/drivers.hpp"

#include <cstdio>
#include <string>
#include <vulkan/vulkan.h>

namespace vkscope::samplers {
namespace {

constexpr uint32_t kNvidia = 0x10de;
constexpr uint32_t kArm = 0x13b5;
constexpr uint32_t kMesaSoftware = 0x10005;
// Drivers on which a GPU wait on an event that the host sets after submission works, each with
// how that was established. Core Vulkan made it undefined in 1.3.228.
struct Verified {
    uint32_t vendor;
    uint32_t min_major; // NVIDIA: driverVersion >> 22; 0: any
    const char* how;
};
constexpr Verified kVerified[] = {
    {kMesaSoftware, 0,
     "lavapipe (Mesa 22.3): the workload program's scenarios under vkscope's tests, the "
     "validation layer below reporting nothing"},
    {kNvidia, 580,
     "NVIDIA 580.159 on an H100: the workload program's compute scenario with a 2.85 ms pause "
     "forced at every handover, every gap between consecutive workloads on the GPU's own "
     "timestamps at least the pause (18 of 18; the device check `handover`)"},
    {kArm, 0, "Arm's Mali drivers: the vendor's own profiling layer relies on it (not run here)"},
};

} // namespace

const char* handover_verified(uint32_t vendor_id, uint32_t driver_id, uint32_t driver_version,
                              std::string_view device_name) {
    for (const Verified& v : kVerified) {
        if (v.vendor != vendor_id) {
            continue;
        }
        if (vendor_id == kMesaSoftware &&
            !(driver_id == VK_DRIVER_ID_MESA_LLVMPIPE || device_name.starts_with("llvmpipe"))) {
            continue;
        }
        if (vendor_id == kNvidia && (driver_version >> 22) < v.min_major) {
            continue;
        }
        return v.how;
    }
    return nullptr;
}

bool needs_old_driver_sleep(uint32_t vendor_id, std::string_view name,
                            std::string_view driver_info) {
    if (vendor_id != kArm) {
        return false;
    }
    // CSF front end: the Mali-G three-digit generation (G310 and later), Immortalis, Mali-G1.
    bool csf = name.find("Immortalis") != std::string_view::npos ||
               name.find("Mali-G1") != std::string_view::npos;
    if (const size_t at = name.find("Mali-G"); at != std::string_view::npos) {
        unsigned number = 0;
        const std::string rest(name.substr(at + 6));
        if (std::sscanf(rest.c_str(), "%u", &number) == 1 && number >= 310) {
            csf = true;
        }
    }
    if (!csf) {
        return false;
    }
    // Arm's drivers name their release rNNpM in the driver information.
    const size_t r = driver_info.find('r');
    for (size_t at = r; at != std::string_view::npos; at = driver_info.find('r', at + 1)) {
        unsigned major = 0;
        unsigned patch = 0;
        const std::string rest(driver_info.substr(at));
        if (std::sscanf(rest.c_str(), "r%up%u", &major, &patch) == 2) {
            return major < 54;
        }
    }
    return true; // a CSF GPU whose release cannot be read: the safe side
}

} // namespace vkscope::samplers
