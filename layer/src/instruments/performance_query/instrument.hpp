#pragma once
// VK_KHR_performance_query counters as an instrument of the timeline (docs/counters.md): the
// extension and its query pool feature enabled at device creation, the profiling lock taken there
// (with the `counter_lock_ms` timeout) and held for the device's life, a query around every
// workload of a captured frame collecting one pass of the selection per frame, values sent as
// each instance's `counters` with the pass in `counters_pass`. What each queue family collects,
// with units, storage, scope and pass, is announced in COUNTERS messages; a family or device that
// collects nothing says why there.

#include "core/settings.hpp"
#include "instruments/performance_query/device.hpp"
#include "timeline/instrument.hpp"

#include <memory>

namespace vkscope::performance_query {

class PerfInstrument final : public timeline::Instrument {
public:
    PerfInstrument(const timeline::InstrumentDevice& device, std::vector<FamilyPlan> plans);
    ~PerfInstrument() override;

    std::unique_ptr<timeline::InstrumentRecording>
    make_recording(const timeline::CommandBufferState& cb) override;
    std::unique_ptr<timeline::InstrumentQueue> make_queue(timeline::TimelineQueue& queue) override;
    uint32_t frames_per_set() const override { return device.cycle(); }

    PerfDevice device;
    const timeline::TimelineDevice& timeline;
    const size_t slot;
};

// Whether the setting selects any khr counter.
bool selected(const SettingValues& settings);

std::unique_ptr<timeline::InstrumentProvider> provider(const SettingValues& settings);

} // namespace vkscope::performance_query
