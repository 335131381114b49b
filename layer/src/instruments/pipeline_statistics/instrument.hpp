#pragma once
// Pipeline statistics as an instrument of the timeline (docs/counters.md): a pipeline statistics
// query around every workload of a captured frame, its values read back on the readback thread
// and sent as the instance's `counters`; the statistics each queue family collects are announced
// once per device in COUNTERS messages.

#include "core/settings.hpp"
#include "instruments/pipeline_statistics/device.hpp"
#include "timeline/instrument.hpp"

#include <memory>

namespace vkscope::pipeline_statistics {

class StatisticsInstrument final : public timeline::Instrument {
public:
    StatisticsInstrument(const timeline::InstrumentDevice& device,
                         VkQueryPipelineStatisticFlags wanted, bool mesh_queries,
                         bool host_query_reset);

    std::unique_ptr<timeline::InstrumentRecording>
    make_recording(const timeline::CommandBufferState& cb) override;
    std::unique_ptr<timeline::InstrumentQueue> make_queue(timeline::TimelineQueue& queue) override;

    StatisticsDevice device;
    const size_t slot;
};

// Whether the setting selects any pipeline statistic.
bool selected(const SettingValues& settings);

// Pipeline statistics for a device created with `settings`; null when the setting selects none.
std::unique_ptr<timeline::InstrumentProvider> provider(const SettingValues& settings);

// The instrument of the device a VkDevice or VkCommandBuffer belongs to; null when it has none.
StatisticsInstrument* statistics_of(const void* handle);

} // namespace vkscope::pipeline_statistics
