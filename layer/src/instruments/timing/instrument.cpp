#include "instruments/timing/instrument.hpp"

#include "core/log.hpp"
#include "instruments/timing/queue.hpp"
#include "instruments/timing/recording.hpp"
#include "timeline/device.hpp"
#include "timeline/messages.hpp"
#include "timeline/setup.hpp"

#include <algorithm>

namespace vkscope::timing {
namespace {

// Timer queries and serialization barriers, straight into the command buffer.
class VulkanTimestampWriter final : public TimestampWriter {
public:
    VulkanTimestampWriter(const DeviceDispatch& next, VkCommandBuffer cb) : next_(next), cb_(cb) {}

    void reset(VkQueryPool pool, uint32_t first, uint32_t count) override {
        next_.CmdResetQueryPool(cb_, pool, first, count);
    }
    void write(VkQueryPool pool, uint32_t slot, bool top_of_pipe) override {
        next_.CmdWriteTimestamp(cb_,
                                top_of_pipe ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT
                                            : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                pool, slot);
    }
    void barrier() override {
        // An execution dependency only: serialization needs later work not to start, not caches
        // flushed. A memory dependency would cost the next workload a flush (measured on the
        // H200) and could hide a missing barrier of the application's while it is profiled.
        next_.CmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                 VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0, nullptr, 0,
                                 nullptr);
    }

private:
    const DeviceDispatch& next_;
    VkCommandBuffer cb_;
};

// One command buffer's timer queries.
class TimingRecording final : public timeline::InstrumentRecording {
public:
    TimingRecording(TimingDevice& device, const timeline::CommandBufferState& cb)
        : device_(device), writer_(device.next, cb.handle) {}

    void begin(const timeline::RecordingStart& start) override {
        const char* untimed =
            start.frame_selected ? device_.untimed_family(start.family) : reason::kOutsideFrame;
        timing_.begin(&device_.pools, device_.mode, untimed,
                      start.one_time_submit && device_.read_in_place);
    }
    void release() override { timing_.release(); }
    timeline::Mark start() override { return mark(timing_.start(writer_)); }
    timeline::Mark finish() override { return mark(timing_.finish(writer_)); }
    void start_ahead() override { timing_.start_ahead(writer_); }
    // Another instrument wrote commands after this start (a statistics query's begin, its pool's
    // reset): a start after them instead (the earlier timestamp stays written and unused).
    timeline::Mark restart(timeline::Mark current) override {
        if (!current) {
            return current;
        }
        timing_.interrupt();
        return mark(timing_.start(writer_));
    }
    // Something ran since the last workload ended: the next one needs a start of its own.
    void interrupt(timeline::Interruption) override { timing_.interrupt(); }
    void execute(std::span<timeline::InstrumentRecording* const>, bool) override {
        timing_.interrupt();
    }
    const char* unmarked() const override { return timing_.untimed(); }
    const char* left_out() const override { return reason::kBudget; }

private:
    timeline::Mark mark(Timestamp ts) const {
        return ts ? mark_of(ts) : timeline::Mark::none(timing_.untimed());
    }

    TimingDevice& device_;
    VulkanTimestampWriter writer_;
    RecordingTiming timing_;
};

class TimingProvider final : public timeline::InstrumentProvider {
public:
    TimingProvider(Mode mode, TimingRead read) : mode_(mode), read_(read) {}

    void prepare(timeline::DevicePatch& patch) override {
        enable_calibration(patch);
        host_query_reset_ = patch.enable_host_query_reset();
    }

    std::unique_ptr<timeline::Instrument> create(const timeline::InstrumentDevice& d) override {
        DeviceTimingSetup setup;
        setup.mode = mode_;
        setup.period_ns = d.properties.limits.timestampPeriod;
        for (const VkQueueFamilyProperties& f : d.families) {
            setup.family_bits.push_back(f.timestampValidBits);
            setup.family_flags.push_back(f.queueFlags);
        }
        setup.memory = d.memory;
        const DeviceState& state = d.timeline.state;
        if (calibrate_command_) {
            setup.calibrate = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
                state.next_gdpa(state.handle, calibrate_command_));
        }
        // Results are read once the queue's layer semaphore says the GPU is done.
        setup.timeline_semaphores = d.timeline.semaphore_value != nullptr;
        // On a CPU device the device's work runs on threads of this process: lavapipe's
        // vkGetQueryPoolResults waits for its queue's thread to go idle, and the readback
        // thread's read then competes with the application's threads for the CPU at the end of
        // every submission, where a layer command buffer's copy is a memcpy in the queue's own
        // order (docs/timing.md).
        setup.read_in_place =
            read_ == TimingRead::in_place ||
            (read_ == TimingRead::detect && d.properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU);
        // Only one-time recordings' blocks are reset on the host, and only those read in place are.
        setup.host_query_reset = host_query_reset_ && setup.read_in_place;
        auto instrument = std::make_unique<TimingInstrument>(d, std::move(setup));
        const TimingDevice& device = instrument->device;
        log(LogLevel::info,
            "timing: device %llu: serialization %s, GPU times on %s, one-time recordings' "
            "timestamps %s",
            static_cast<unsigned long long>(d.timeline.id), mode_name(device.mode),
            device.calibrated() ? "CLOCK_MONOTONIC" : "the device clock",
            !device.read_in_place           ? "copied out"
            : device.pools.resets_on_host() ? "read in place, their pools reset on the host"
                                            : "read in place");
        return instrument;
    }

private:
    // VK_KHR/EXT_calibrated_timestamps, to put GPU times on CLOCK_MONOTONIC: the command that
    // reads the device clock and CLOCK_MONOTONIC together, when the device has both.
    void enable_calibration(timeline::DevicePatch& patch) {
        struct Candidate {
            const char* extension;
            const char* domains;
            const char* calibrate;
        };
        // EXT first: layers older than the KHR promotion (validation 1.3.239) warn about KHR.
        static constexpr Candidate kCandidates[] = {
            {"VK_EXT_calibrated_timestamps", "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT",
             "vkGetCalibratedTimestampsEXT"},
            {"VK_KHR_calibrated_timestamps", "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR",
             "vkGetCalibratedTimestampsKHR"},
        };
        const Candidate* chosen = nullptr;
        // One the application enabled itself comes first: enabling the other as well is
        // pointless.
        for (const Candidate& c : kCandidates) {
            if (patch.enables(c.extension)) {
                chosen = &c;
            }
        }
        for (const Candidate& c : kCandidates) {
            if (!chosen && patch.offers(c.extension)) {
                chosen = &c;
            }
        }
        if (!chosen) {
            return;
        }
        // Both sides of the calibration must be there: the device clock and CLOCK_MONOTONIC.
        const InstanceState& instance = patch.instance();
        auto domains = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
            instance.next_gipa(instance.handle, chosen->domains));
        uint32_t count = 0;
        if (!domains || domains(patch.physical(), &count, nullptr) != VK_SUCCESS) {
            return;
        }
        std::vector<VkTimeDomainEXT> list(count);
        if (domains(patch.physical(), &count, list.data()) < 0) {
            return;
        }
        list.resize(count);
        auto has = [&](VkTimeDomainEXT d) {
            return std::find(list.begin(), list.end(), d) != list.end();
        };
        if (!has(VK_TIME_DOMAIN_DEVICE_EXT) || !has(VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT)) {
            return;
        }
        patch.enable(chosen->extension);
        calibrate_command_ = chosen->calibrate;
    }

    const Mode mode_;
    const TimingRead read_;
    const char* calibrate_command_ = nullptr;
    bool host_query_reset_ = false;
};

} // namespace

TimingInstrument::TimingInstrument(const timeline::InstrumentDevice& d, DeviceTimingSetup setup)
    : device(d.timeline.handle, d.timeline.next, std::move(setup)), slot_(d.slot) {}

void TimingInstrument::describe(timeline::DeviceDescription& d) const {
    d.clock = timeline::ClockDescription{device.calibrated(), device.first_max_deviation_ns()};
    d.timer_floors = floors_;
}

std::unique_ptr<timeline::InstrumentRecording>
TimingInstrument::make_recording(const timeline::CommandBufferState& cb) {
    return std::make_unique<TimingRecording>(device, cb);
}

std::unique_ptr<timeline::InstrumentQueue>
TimingInstrument::make_queue(timeline::TimelineQueue& queue) {
    // Queues are made as the device is created, before the application has it: its first queue
    // of each family is the layer's alone for the measurement.
    const bool measured = std::any_of(floors_.begin(), floors_.end(), [&](const FloorSamples& f) {
        return f.family == queue.family;
    });
    if (!measured) {
        if (const char* untimed = device.untimed_family(queue.family)) {
            FloorSamples none;
            none.family = queue.family;
            none.reason = untimed;
            floors_.push_back(std::move(none));
        } else {
            floors_.push_back(measure_floor(timing::FloorTarget{
                device.handle, &device.next, queue.device.set_loader_data, queue.handle,
                queue.family, device.valid_bits(queue.family), device.mode}));
        }
    }
    return std::make_unique<TimingQueue>(device, queue, slot_);
}

std::unique_ptr<timeline::InstrumentProvider> provider(const SettingValues& settings) {
    switch (settings.timing) {
    case Timing::off:
        return nullptr;
    case Timing::none:
        return std::make_unique<TimingProvider>(Mode::none, settings.timing_read);
    case Timing::queue:
        return std::make_unique<TimingProvider>(Mode::queue, settings.timing_read);
    case Timing::full:
        return std::make_unique<TimingProvider>(Mode::full, settings.timing_read);
    }
    return nullptr;
}

TimingInstrument* timing_of(VkDevice device) {
    timeline::TimelineDevice* tl = timeline::timeline_of(device);
    return tl ? tl->instrument<TimingInstrument>() : nullptr;
}

} // namespace vkscope::timing
