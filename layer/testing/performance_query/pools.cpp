#include "pools.hpp"

#include <bit>
#include <chrono>
#include <cstring>
#include <thread>

namespace pqfixture {

PerfPool::PerfPool(const LowerDevice& lower, std::vector<uint32_t> counters, uint32_t count)
    : lower_(lower), counters_(std::move(counters)), count_(count), passes_done_(count, 0) {
    for (uint32_t index : counters_) {
        const CounterInfo& c = kCounters[index];
        if (c.backing == Backing::statistic) {
            statistic_flags_ |= c.statistic;
        } else {
            elapsed_ = true;
        }
    }
}

PerfPool::~PerfPool() {
    if (statistics_) {
        lower_.destroy_query_pool(lower_.handle, statistics_, nullptr);
    }
    if (timestamps_) {
        lower_.destroy_query_pool(lower_.handle, timestamps_, nullptr);
    }
}

VkResult PerfPool::create(const VkAllocationCallbacks*) {
    // The driver's pools are the fixture's own: the application's allocator is not theirs.
    if (statistic_flags_) {
        VkQueryPoolCreateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        info.queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS;
        info.queryCount = count_;
        info.pipelineStatistics = statistic_flags_;
        if (VkResult r = lower_.create_query_pool(lower_.handle, &info, nullptr, &statistics_);
            r != VK_SUCCESS) {
            return r;
        }
    }
    if (elapsed_) {
        VkQueryPoolCreateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = 2 * count_;
        if (VkResult r = lower_.create_query_pool(lower_.handle, &info, nullptr, &timestamps_);
            r != VK_SUCCESS) {
            return r;
        }
    }
    return VK_SUCCESS;
}

void PerfPool::cmd_reset(VkCommandBuffer cb, uint32_t first, uint32_t count) const {
    if (statistics_) {
        lower_.cmd_reset_query_pool(cb, statistics_, first, count);
    }
    if (timestamps_) {
        lower_.cmd_reset_query_pool(cb, timestamps_, 2 * first, 2 * count);
    }
}

void PerfPool::host_reset(uint32_t first, uint32_t count) {
    if (statistics_) {
        lower_.reset_query_pool(lower_.handle, statistics_, first, count);
    }
    if (timestamps_) {
        lower_.reset_query_pool(lower_.handle, timestamps_, 2 * first, 2 * count);
    }
    submitted_reset(first, count);
}

void PerfPool::cmd_begin(VkCommandBuffer cb, uint32_t query) const {
    if (timestamps_) {
        lower_.cmd_write_timestamp(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, timestamps_, 2 * query);
    }
    if (statistics_) {
        lower_.cmd_begin_query(cb, statistics_, query, 0);
    }
}

void PerfPool::cmd_end(VkCommandBuffer cb, uint32_t query) const {
    if (statistics_) {
        lower_.cmd_end_query(cb, statistics_, query);
    }
    if (timestamps_) {
        lower_.cmd_write_timestamp(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, timestamps_,
                                   2 * query + 1);
    }
}

void PerfPool::submitted_reset(uint32_t first, uint32_t count) {
    std::lock_guard guard(mutex_);
    for (uint32_t q = first; q < first + count && q < count_; ++q) {
        passes_done_[q] = 0;
    }
}

bool PerfPool::runs_again(uint32_t query) const {
    std::lock_guard guard(mutex_);
    return query < count_ && passes_done_[query] != 0;
}

void PerfPool::rerun(uint32_t query) {
    if (!runs_again(query)) {
        return;
    }
    if (!lower_.reset_query_pool) {
        return;
    }
    if (statistics_) {
        lower_.reset_query_pool(lower_.handle, statistics_, query, 1);
    }
    if (timestamps_) {
        lower_.reset_query_pool(lower_.handle, timestamps_, 2 * query, 2);
    }
}

void PerfPool::submitted_pass(uint32_t query, uint32_t pass) {
    std::lock_guard guard(mutex_);
    if (query < count_ && pass < 64) {
        passes_done_[query] |= uint64_t{1} << pass;
    }
}

bool PerfPool::complete(uint32_t query) const {
    const uint32_t n = passes();
    const uint64_t all = n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    std::lock_guard guard(mutex_);
    return (passes_done_[query] & all) == all;
}

VkResult PerfPool::results(uint32_t first, uint32_t count, size_t size, void* data,
                           VkDeviceSize stride, VkQueryResultFlags flags) {
    const size_t needed = counters_.size() * sizeof(VkPerformanceCounterResultKHR);
    VkResult overall = VK_SUCCESS;
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t q = first + i;
        const size_t offset = static_cast<size_t>(i * stride);
        if (q >= count_ || offset + needed > size) {
            return VK_ERROR_UNKNOWN;
        }
        if (!complete(q)) {
            // Results exist only once every pass has been submitted since the reset.
            overall = VK_NOT_READY;
            continue;
        }
        const VkQueryResultFlags wait = flags & VK_QUERY_RESULT_WAIT_BIT;
        std::array<uint64_t, 5> stats{};
        std::array<uint64_t, 2> times{};
        if (statistics_) {
            VkResult r = lower_.get_query_pool_results(lower_.handle, statistics_, q, 1,
                                                       sizeof(stats), stats.data(), sizeof(stats),
                                                       VK_QUERY_RESULT_64_BIT | wait);
            if (r != VK_SUCCESS) {
                overall = r;
                continue;
            }
        }
        if (timestamps_) {
            VkResult r = lower_.get_query_pool_results(
                lower_.handle, timestamps_, 2 * q, 2, sizeof(times), times.data(), sizeof(uint64_t),
                VK_QUERY_RESULT_64_BIT | wait);
            if (r != VK_SUCCESS) {
                overall = r;
                continue;
            }
        }
        auto* out =
            reinterpret_cast<VkPerformanceCounterResultKHR*>(static_cast<char*>(data) + offset);
        for (size_t c = 0; c < counters_.size(); ++c) {
            const CounterInfo& info = kCounters[counters_[c]];
            uint64_t value = 0;
            if (info.backing == Backing::statistic) {
                // Pipeline statistics come in bit order, one value per bit of the pool.
                const uint32_t slot = static_cast<uint32_t>(
                    std::popcount(statistic_flags_ & (static_cast<uint32_t>(info.statistic) - 1)));
                value = stats[slot];
            } else {
                const uint64_t ticks = times[1] >= times[0] ? times[1] - times[0] : 0;
                value = static_cast<uint64_t>(static_cast<double>(ticks) *
                                              static_cast<double>(lower_.timestamp_period));
            }
            switch (storage()) {
            case VK_PERFORMANCE_COUNTER_STORAGE_INT32_KHR:
                out[c].int32 = static_cast<int32_t>(value);
                break;
            case VK_PERFORMANCE_COUNTER_STORAGE_INT64_KHR:
                out[c].int64 = static_cast<int64_t>(value);
                break;
            case VK_PERFORMANCE_COUNTER_STORAGE_UINT32_KHR:
                out[c].uint32 = static_cast<uint32_t>(value);
                break;
            case VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR:
                out[c].float32 = static_cast<float>(value);
                break;
            case VK_PERFORMANCE_COUNTER_STORAGE_FLOAT64_KHR:
                out[c].float64 = static_cast<double>(value);
                break;
            default:
                out[c].uint64 = value;
                break;
            }
        }
    }
    return overall;
}

} // namespace pqfixture
