#pragma once
// Timing as an instrument of the timeline (docs/timing.md): a timer query before and after every
// workload of a captured frame, serialization injected around them, and each instance's GPU
// begin and end read back on the readback thread.

#include "core/settings.hpp"
#include "instruments/timing/device.hpp"
#include "instruments/timing/floor.hpp"
#include "timeline/instrument.hpp"

#include <memory>
#include <vector>

namespace vkscope::timing {

class TimingInstrument final : public timeline::Instrument {
public:
    TimingInstrument(const timeline::InstrumentDevice& device, DeviceTimingSetup setup);

    void describe(timeline::DeviceDescription& d) const override;
    std::unique_ptr<timeline::InstrumentRecording>
    make_recording(const timeline::CommandBufferState& cb) override;
    std::unique_ptr<timeline::InstrumentQueue> make_queue(timeline::TimelineQueue& queue) override;

    TimingDevice device;

private:
    const size_t slot_;
    // The timer's floor of each queue family the device has a queue of, measured on its first
    // queue as the device is created (make_queue); described in the DEVICE message.
    std::vector<FloorSamples> floors_;
};

// Timing for a device created with `settings`; null when the setting turns it off.
std::unique_ptr<timeline::InstrumentProvider> provider(const SettingValues& settings);

// The timing instrument of the device a VkDevice belongs to; null when timing is off there.
TimingInstrument* timing_of(VkDevice device);

} // namespace vkscope::timing
