#include "instruments/performance_query/instrument.hpp"

#include "core/log.hpp"
#include "core/wire_format.hpp"
#include "instruments/performance_query/queue.hpp"
#include "instruments/performance_query/recording.hpp"
#include "timeline/device.hpp"
#include "timeline/setup.hpp"

#include <cstddef>
#include <string>

namespace vkscope::performance_query {
namespace {

using Reason = protocol::CountersReason;

std::string counters_frame(uint64_t device, uint32_t family, const FamilyPlan& plan,
                           const char* reason) {
    JsonWriter json;
    json.begin_object().field("family", family);
    json.field("source", protocol::name(protocol::CounterSource::performance_query));
    json.key("counters").begin_array();
    if (!reason) {
        for (const PlannedCounter& c : plan.counters) {
            json.begin_object()
                .field("name", c.name.c_str())
                .field("unit", unit_name(c.unit))
                .field("description", c.description.c_str())
                .field("storage", storage_name(c.storage))
                .field("scope", scope_name(c.scope))
                .field("uuid", c.uuid.c_str())
                .field("pass_index", c.pass)
                .field("concurrently_impacted", c.concurrently_impacted)
                .end_object();
        }
    }
    json.end_array();
    if (reason) {
        json.field("reason", reason);
    }
    json.end_object();
    std::string out;
    append_frame(out, MessageType::Counters, device, json.view());
    return out;
}

class PerfProvider final : public timeline::InstrumentProvider {
public:
    PerfProvider(Wanted wanted, uint32_t max_passes, uint64_t lock_ms)
        : wanted_(std::move(wanted)), max_passes_(max_passes), lock_ms_(lock_ms) {}

    void prepare(timeline::DevicePatch& patch) override {
        offered_ = patch.offers(VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME);
        if (!offered_) {
            return;
        }
        patch.enable(VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME);
        feature_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR;
        feature_.performanceCounterQueryPools = VK_TRUE;
        patch.enable_chained_feature(
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR,
            offsetof(VkPhysicalDevicePerformanceQueryFeaturesKHR, performanceCounterQueryPools),
            reinterpret_cast<VkBaseOutStructure*>(&feature_));
        // Its queries are reset on the host (queue.hpp).
        patch.enable_host_query_reset();
    }

    std::unique_ptr<timeline::Instrument> create(const timeline::InstrumentDevice& d) override {
        const auto families = static_cast<uint32_t>(d.families.size());
        auto announce_none = [&](Reason reason) {
            for (uint32_t family = 0; family < families; ++family) {
                d.timeline.post(counters_frame(d.timeline.id, family, {}, protocol::name(reason)));
            }
        };
        if (!offered_) {
            log(LogLevel::warn, "performance query: device %llu has no VK_KHR_performance_query",
                static_cast<unsigned long long>(d.timeline.id));
            announce_none(Reason::counter_not_offered);
            return nullptr;
        }
        VkAcquireProfilingLockInfoKHR lock{};
        lock.sType = VK_STRUCTURE_TYPE_ACQUIRE_PROFILING_LOCK_INFO_KHR;
        lock.timeout = lock_ms_ * 1000000ull;
        const VkResult locked =
            d.timeline.next.AcquireProfilingLockKHR
                ? d.timeline.next.AcquireProfilingLockKHR(d.timeline.handle, &lock)
                : VK_ERROR_EXTENSION_NOT_PRESENT;
        if (locked != VK_SUCCESS) {
            log(LogLevel::warn,
                "performance query: device %llu: the profiling lock could not be taken "
                "(VkResult %d); no khr counters",
                static_cast<unsigned long long>(d.timeline.id), static_cast<int>(locked));
            announce_none(Reason::profiling_lock_unavailable);
            return nullptr;
        }
        std::vector<FamilyPlan> plans;
        for (uint32_t family = 0; family < families; ++family) {
            plans.push_back(plan_family(d.instance.next, d.physical, family, wanted_, max_passes_));
            d.timeline.post(
                counters_frame(d.timeline.id, family, plans.back(), plans.back().reason));
        }
        log(LogLevel::info, "performance query: device %llu: lock held",
            static_cast<unsigned long long>(d.timeline.id));
        return std::make_unique<PerfInstrument>(d, std::move(plans));
    }

private:
    const Wanted wanted_;
    const uint32_t max_passes_;
    const uint64_t lock_ms_;
    bool offered_ = false;
    VkPhysicalDevicePerformanceQueryFeaturesKHR feature_{};
};

} // namespace

PerfInstrument::PerfInstrument(const timeline::InstrumentDevice& d, std::vector<FamilyPlan> plans)
    : device(d.timeline.handle, d.timeline.next, std::move(plans)), timeline(d.timeline),
      slot(d.slot) {}

PerfInstrument::~PerfInstrument() {
    if (device.next.ReleaseProfilingLockKHR) {
        device.next.ReleaseProfilingLockKHR(device.handle);
    }
}

std::unique_ptr<timeline::InstrumentRecording>
PerfInstrument::make_recording(const timeline::CommandBufferState& cb) {
    if (!cb.primary) {
        device.secondaries.store(true, std::memory_order_relaxed);
    }
    return std::make_unique<PerfRecording>(device, timeline, cb.handle, cb.pool);
}

std::unique_ptr<timeline::InstrumentQueue>
PerfInstrument::make_queue(timeline::TimelineQueue& queue) {
    return std::make_unique<PerfQueue>(device, queue.family, slot);
}

bool selected(const SettingValues& settings) {
    return requested(settings.counters).any();
}

std::unique_ptr<timeline::InstrumentProvider> provider(const SettingValues& settings) {
    Wanted wanted = requested(settings.counters);
    if (!wanted.any()) {
        return nullptr;
    }
    return std::make_unique<PerfProvider>(std::move(wanted),
                                          static_cast<uint32_t>(settings.counter_passes),
                                          static_cast<uint64_t>(settings.counter_lock_ms));
}

} // namespace vkscope::performance_query
