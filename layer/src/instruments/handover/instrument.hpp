#pragma once
// CPU-sampled counters as an instrument of the timeline (docs/counters.md): the samplers the
// `counters` setting names (`sampler:NAME` or `sampler:PATH`) are sampled between the workloads
// of captured frames, through an event handover on drivers known to support a GPU wait on an
// event the host sets after submission, or per application command buffer elsewhere.

#include "core/settings.hpp"
#include "instruments/handover/device.hpp"
#include "timeline/instrument.hpp"

#include <memory>
#include <string>
#include <vector>

namespace vkscope::handover {

class HandoverInstrument final : public timeline::Instrument {
public:
    HandoverInstrument(const timeline::InstrumentDevice& device, Granularity granularity,
                       uint32_t sleep_us);

    std::unique_ptr<timeline::InstrumentRecording>
    make_recording(const timeline::CommandBufferState& cb) override;
    std::unique_ptr<timeline::InstrumentQueue> make_queue(timeline::TimelineQueue& queue) override;

    HandoverDevice device;
    const size_t slot;
};

// Whether the setting names any sampler.
bool selected(const SettingValues& settings);

// The instrument's provider for a device created with `settings`; null when it names none.
std::unique_ptr<timeline::InstrumentProvider> provider(const SettingValues& settings);

// Whether the driver is known to let the GPU wait on an event the host sets after submission,
// and how that was established (null when it is not known to).
const char* handover_verified(uint32_t vendor_id, uint32_t driver_id, uint32_t driver_version,
                              std::string_view device_name);

// Whether the old-driver pause applies: Arm GPUs with the CSF front end and drivers older than
// r54p0.
bool needs_old_driver_sleep(uint32_t vendor_id, std::string_view device_name,
                            std::string_view driver_info);

} // namespace vkscope::handover
