#pragma once
// CPU-sampled counters as an instrument of the timeline (docs/counters.md): the samplers the
// `counters` setting names (`sampler:NAME` or `sampler:PATH`) are sampled between the workloads
// of captured frames, through an event handover on drivers known to support a GPU wait on an
// event the host sets after submission, or per application command buffer elsewhere.

#include "core/settings.hpp"
#include "instruments/samplers/device.hpp"
#include "timeline/instrument.hpp"

#include <memory>
#include <string>
#include <vector>

namespace vkscope::samplers {

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

} // namespace vkscope::samplers
