#include "instruments/pipeline_statistics/instrument.hpp"

#include "core/log.hpp"
#include "core/wire_format.hpp"
#include "instruments/pipeline_statistics/queue.hpp"
#include "instruments/pipeline_statistics/recording.hpp"
#include "instruments/pipeline_statistics/selection.hpp"
#include "timeline/device.hpp"
#include "timeline/setup.hpp"

#include <string>
#include <vector>

namespace vkscope::pipeline_statistics {
namespace {

VkQueryPipelineStatisticFlags wanted_by(const SettingValues& settings, bool report) {
    std::vector<std::string> unknown;
    const VkQueryPipelineStatisticFlags wanted = requested(settings.counters, unknown);
    if (report) {
        for (const std::string& name : unknown) {
            log_once(LogLevel::warn,
                     "setting counters: '%s' is no counter vkscope collects; ignored",
                     name.c_str());
        }
    }
    return wanted;
}

// COUNTERS: what one queue family collects.
std::string counters_frame(uint64_t device, uint32_t family,
                           VkQueryPipelineStatisticFlags statistics) {
    JsonWriter json;
    json.begin_object().field("family", family);
    json.field("source", protocol::name(protocol::CounterSource::pipeline_statistics));
    json.key("counters").begin_array();
    for (VkQueryPipelineStatisticFlags rest = statistics; rest; rest &= rest - 1) {
        json.begin_object().field("name", statistic_name(rest & (~rest + 1))).end_object();
    }
    json.end_array();
    if (statistics == 0) {
        json.field("reason", why(Reason::queue_family_without_statistics));
    }
    json.end_object();
    std::string out;
    append_frame(out, MessageType::Counters, device, json.view());
    return out;
}

class StatisticsProvider final : public timeline::InstrumentProvider {
public:
    StatisticsProvider(VkQueryPipelineStatisticFlags wanted, CountersRead read)
        : wanted_(wanted), read_(read) {}

    void prepare(timeline::DevicePatch& patch) override {
        enabled_ = patch.enable_feature(&VkPhysicalDeviceFeatures::pipelineStatisticsQuery);
        inherited_ = enabled_ && patch.enable_feature(&VkPhysicalDeviceFeatures::inheritedQueries);
        mesh_queries_ = enabled_ && patch.enable_mesh_shader_queries();
        host_query_reset_ = enabled_ && patch.enable_host_query_reset();
    }

    std::unique_ptr<timeline::Instrument> create(const timeline::InstrumentDevice& d) override {
        if (!enabled_) {
            log(LogLevel::warn,
                "pipeline statistics: device %llu has no pipelineStatisticsQuery; not counted",
                static_cast<unsigned long long>(d.timeline.id));
            return nullptr;
        }
        // As timing's: on a CPU device a read from the readback thread waits for the device's
        // threads, where a layer command buffer's copy is a memcpy in the queue's own order.
        const bool in_place = read_ == CountersRead::in_place ||
                              (read_ == CountersRead::detect &&
                               d.properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU);
        // Only one-time recordings' blocks are reset on the host, and only those read in place are.
        auto instrument = std::make_unique<StatisticsInstrument>(d, wanted_, mesh_queries_,
                                                                 host_query_reset_ && in_place);
        instrument->device.inherited_queries = inherited_;
        instrument->device.read_in_place = in_place;
        for (uint32_t family = 0; family < d.families.size(); ++family) {
            d.timeline.post(
                counters_frame(d.timeline.id, family, instrument->device.statistics(family)));
        }
        log(LogLevel::info,
            "pipeline statistics: device %llu: 0x%x, inherited queries %s, one-time "
            "recordings' queries %s",
            static_cast<unsigned long long>(d.timeline.id), wanted_, inherited_ ? "on" : "off",
            !instrument->device.read_in_place     ? "copied out"
            : instrument->device.resets_on_host() ? "read in place, their pools reset on the host"
                                                  : "read in place");
        return instrument;
    }

private:
    const VkQueryPipelineStatisticFlags wanted_;
    const CountersRead read_;
    bool enabled_ = false;
    bool inherited_ = false;
    bool mesh_queries_ = false;
    bool host_query_reset_ = false;
};

} // namespace

StatisticsInstrument::StatisticsInstrument(const timeline::InstrumentDevice& d,
                                           VkQueryPipelineStatisticFlags wanted, bool mesh_queries,
                                           bool host_query_reset)
    : device(d.timeline.handle, d.timeline.next, d.memory, d.families, wanted, mesh_queries,
             host_query_reset),
      slot(d.slot) {}

std::unique_ptr<timeline::InstrumentRecording>
StatisticsInstrument::make_recording(const timeline::CommandBufferState& cb) {
    return std::make_unique<StatisticsRecording>(device, cb.handle);
}

std::unique_ptr<timeline::InstrumentQueue>
StatisticsInstrument::make_queue(timeline::TimelineQueue& queue) {
    return std::make_unique<StatisticsQueue>(device, queue.family, slot);
}

bool selected(const SettingValues& settings) {
    return wanted_by(settings, false) != 0;
}

std::unique_ptr<timeline::InstrumentProvider> provider(const SettingValues& settings) {
    const VkQueryPipelineStatisticFlags wanted = wanted_by(settings, true);
    return wanted ? std::make_unique<StatisticsProvider>(wanted, settings.counters_read) : nullptr;
}

StatisticsInstrument* statistics_of(const void* handle) {
    timeline::TimelineDevice* tl = timeline::timeline_of(handle);
    return tl ? tl->instrument<StatisticsInstrument>() : nullptr;
}

} // namespace vkscope::pipeline_statistics
