#pragma once
// Which drivers support the event handover, and which need the old-driver pause: facts about
// drivers, kept apart from the instrument so that they are tested on their own.

#include <cstdint>
#include <string_view>

namespace vkscope::samplers {

// Whether the driver is known to let the GPU wait on an event the host sets after submission,
// and how that was established (null when it is not known to).
const char* handover_verified(uint32_t vendor_id, uint32_t driver_id, uint32_t driver_version,
                              std::string_view device_name);

// Whether the old-driver pause applies: Arm GPUs with the CSF front end and drivers older than
// r54p0.
bool needs_old_driver_sleep(uint32_t vendor_id, std::string_view device_name,
                            std::string_view driver_info);

} // namespace vkscope::samplers
