#include "instruments/timing/device.hpp"

#include "core/log.hpp"
#include "core/query_reset.hpp"

#include <algorithm>

namespace vkscope::timing {
namespace {

constexpr auto kRecalibrate = std::chrono::seconds(1);

QueryPoolCache::Backend pool_backend(VkDevice device, const DeviceDispatch& next,
                                     bool host_query_reset) {
    QueryPoolCache::Backend b;
    b.create = [device, &next]() {
        const VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                         nullptr,
                                         0,
                                         VK_QUERY_TYPE_TIMESTAMP,
                                         QueryBlock::kSlots,
                                         0};
        VkQueryPool pool = VK_NULL_HANDLE;
        return next.CreateQueryPool(device, &info, nullptr, &pool) == VK_SUCCESS ? pool
                                                                                 : VK_NULL_HANDLE;
    };
    b.destroy = [device, &next](VkQueryPool pool) { next.DestroyQueryPool(device, pool, nullptr); };
    if (host_query_reset) {
        b.reset = host_block_reset(device, next);
    }
    return b;
}

} // namespace

TimingDevice::TimingDevice(VkDevice device, const DeviceDispatch& next_layer,
                           DeviceTimingSetup setup)
    : handle(device), next(next_layer), mode(setup.mode), period_ns(setup.period_ns),
      memory(setup.memory), read_in_place(setup.read_in_place),
      pools(pool_backend(device, next_layer, setup.host_query_reset), kMaxQueryPools),
      setup_(std::move(setup)) {
    if (setup_.calibrate) {
        first_ = measure();
        current_ = first_;
        calibrated_at_ = std::chrono::steady_clock::now();
    }
    if (mode == Mode::full && setup_.timeline_semaphores) {
        VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                                       VK_SEMAPHORE_TYPE_TIMELINE, 0};
        const VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type, 0};
        if (next.CreateSemaphore(device, &info, nullptr, &chain_semaphore) != VK_SUCCESS) {
            chain_semaphore = VK_NULL_HANDLE;
            log_once(LogLevel::warn, "timing: no semaphore for full serialization; submissions "
                                     "are serialized within each queue only");
        }
    }
}

TimingDevice::~TimingDevice() {
    if (chain_semaphore) {
        next.DestroySemaphore(handle, chain_semaphore, nullptr);
    }
    if (worst_deviation_ns_ > 0) {
        log(LogLevel::debug, "timing: largest calibration deviation %llu ns",
            static_cast<unsigned long long>(worst_deviation_ns_));
    }
}

uint32_t TimingDevice::valid_bits(uint32_t family) const {
    return family < setup_.family_bits.size() ? setup_.family_bits[family] : 0;
}

bool TimingDevice::can_copy_results(uint32_t family) const {
    // vkCmdCopyQueryPoolResults needs a graphics or compute queue.
    return family < setup_.family_flags.size() &&
           (setup_.family_flags[family] & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) != 0;
}

const char* TimingDevice::untimed_family(uint32_t family) const {
    if (!setup_.timeline_semaphores) {
        return reason::kNoSemaphores;
    }
    if (family >= setup_.family_bits.size()) {
        return reason::kUnknownPool;
    }
    if (valid_bits(family) == 0) {
        return reason::kNoTimestamps;
    }
    if (!can_copy_results(family)) {
        return reason::kNoCopy;
    }
    return nullptr;
}

std::optional<Calibration> TimingDevice::measure() {
    const VkCalibratedTimestampInfoEXT infos[2] = {
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr,
         VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
    uint64_t values[2] = {};
    uint64_t deviation = 0;
    if (setup_.calibrate(handle, 2, infos, values, &deviation) != VK_SUCCESS) {
        return std::nullopt;
    }
    worst_deviation_ns_ = std::max(worst_deviation_ns_, deviation);
    return Calibration{values[0], values[1], deviation};
}

std::optional<Calibration> TimingDevice::calibration() {
    if (!setup_.calibrate || !first_) {
        return std::nullopt;
    }
    std::lock_guard lock(clock_mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (now - calibrated_at_ > kRecalibrate) {
        // Clocks drift apart: a recent calibration keeps the conversion close.
        if (auto fresh = measure()) {
            current_ = fresh;
        }
        calibrated_at_ = now;
    }
    return current_;
}

} // namespace vkscope::timing
