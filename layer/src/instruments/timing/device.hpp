#pragma once
// The timing feature's state for one VkDevice: its query pools, its clock, and in `full` mode
// the layer semaphore and bookkeeping that order submissions across queues. Owned by the timing
// instrument of the device's timeline (instrument.hpp).

#include "core/query_pool.hpp"
#include "dispatch_tables.gen.hpp"
#include "instruments/timing/chain.hpp"
#include "instruments/timing/clock.hpp"
#include "instruments/timing/mode.hpp"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::timing {

struct DeviceTimingSetup {
    Mode mode = Mode::queue;
    double period_ns = 1.0;
    std::vector<uint32_t> family_bits; // timestampValidBits per queue family
    std::vector<uint32_t> family_flags;
    VkPhysicalDeviceMemoryProperties memory{};
    // Set when the device can put its ticks on CLOCK_MONOTONIC (VK_EXT/KHR_calibrated_timestamps
    // with both time domains).
    PFN_vkGetCalibratedTimestampsEXT calibrate = nullptr;
    bool timeline_semaphores = false;
    // Whether the pools of a one-time recording are read in place (the `timing_read` setting and
    // the device type), rather than copied out like every other recording's.
    bool read_in_place = true;
    // hostQueryReset is enabled and one-time recordings are read in place: their pools are reset
    // on the host.
    bool host_query_reset = false;
};

class TimingDevice {
public:
    // Pools per device: a bound on memory, far above what any application holds at once
    // (4096 pools hold 262,144 timestamps).
    static constexpr size_t kMaxQueryPools = 4096;

    TimingDevice(VkDevice device, const DeviceDispatch& next, DeviceTimingSetup setup);
    ~TimingDevice();
    TimingDevice(const TimingDevice&) = delete;
    TimingDevice& operator=(const TimingDevice&) = delete;

    uint32_t valid_bits(uint32_t family) const;
    bool can_copy_results(uint32_t family) const;
    TickFormat format(uint32_t family) const { return TickFormat{valid_bits(family), period_ns}; }
    // Why recordings for `family` cannot be timed (null: they can).
    const char* untimed_family(uint32_t family) const;

    // The clock GPU times are sent on; recalibrated when the last calibration is over a second
    // old. Nullopt: the device's own clock.
    std::optional<Calibration> calibration();
    bool calibrated() const { return setup_.calibrate != nullptr && first_.has_value(); }
    uint64_t first_max_deviation_ns() const { return first_ ? first_->max_deviation_ns : 0; }

    const VkDevice handle;
    const DeviceDispatch& next;
    const Mode mode;
    const double period_ns;
    const VkPhysicalDeviceMemoryProperties memory;
    const bool read_in_place;
    QueryPoolCache pools;

    // `full` mode: the semaphore each chained batch waits on and signals (null otherwise, or when
    // it could not be made: then `full` works as `queue`).
    SubmissionChain chain;
    VkSemaphore chain_semaphore = VK_NULL_HANDLE;

private:
    std::optional<Calibration> measure();

    const DeviceTimingSetup setup_;
    std::mutex clock_mutex_;
    std::optional<Calibration> first_;
    std::optional<Calibration> current_;
    std::chrono::steady_clock::time_point calibrated_at_{};
    uint64_t worst_deviation_ns_ = 0;
};

} // namespace vkscope::timing
