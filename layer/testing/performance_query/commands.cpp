// Recording and submission: a command buffer remembers the performance queries it records, since
// which pass a query runs for is known only when the command buffer is submitted.

#include "entry_points.hpp"
#include "state.hpp"

#include <deque>
#include <vector>

namespace pqfixture {
namespace {

// Under g_lock: the device of a command buffer and the perf pool `pool` names (null: not one).
PerfPool* perf_pool(VkCommandBuffer cb, VkQueryPool pool, DeviceData** out) {
    DeviceData* d = device_of(key(cb));
    *out = d;
    return d ? pool_of(*d, pool) : nullptr;
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL begin_command_buffer(VkCommandBuffer cb,
                                                    const VkCommandBufferBeginInfo* info) {
    DeviceData* d;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(cb));
        d->recorded.erase(cb); // beginning resets what the command buffer held
    }
    return d->begin_command_buffer(cb, info);
}

VKAPI_ATTR void VKAPI_CALL cmd_reset_query_pool(VkCommandBuffer cb, VkQueryPool pool,
                                                uint32_t first, uint32_t count) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        p = perf_pool(cb, pool, &d);
        if (p) {
            d->recorded[cb].push_back({Recorded::Kind::reset, p, first, count});
        }
    }
    if (p) {
        p->cmd_reset(cb, first, count);
    } else {
        d->lower.cmd_reset_query_pool(cb, pool, first, count);
    }
}

VKAPI_ATTR void VKAPI_CALL cmd_begin_query(VkCommandBuffer cb, VkQueryPool pool, uint32_t query,
                                           VkQueryControlFlags flags) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        p = perf_pool(cb, pool, &d);
        if (p) {
            d->recorded[cb].push_back({Recorded::Kind::begin, p, query, 1});
        }
    }
    if (p) {
        p->cmd_begin(cb, query);
    } else {
        d->lower.cmd_begin_query(cb, pool, query, flags);
    }
}

VKAPI_ATTR void VKAPI_CALL cmd_end_query(VkCommandBuffer cb, VkQueryPool pool, uint32_t query) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        p = perf_pool(cb, pool, &d);
    }
    if (p) {
        p->cmd_end(cb, query);
    } else {
        d->lower.cmd_end_query(cb, pool, query);
    }
}

VKAPI_ATTR void VKAPI_CALL cmd_copy_query_pool_results(VkCommandBuffer cb, VkQueryPool pool,
                                                       uint32_t first, uint32_t count,
                                                       VkBuffer buffer, VkDeviceSize offset,
                                                       VkDeviceSize stride,
                                                       VkQueryResultFlags flags) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        p = perf_pool(cb, pool, &d);
    }
    // allowCommandBufferQueryCopies is false: a copy of a performance pool is invalid usage,
    // which the validation layer reports; the fixture writes nothing.
    if (!p) {
        d->cmd_copy_query_pool_results(cb, pool, first, count, buffer, offset, stride, flags);
    }
}

VKAPI_ATTR void VKAPI_CALL cmd_execute_commands(VkCommandBuffer cb, uint32_t count,
                                                const VkCommandBuffer* secondaries) {
    DeviceData* d;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(cb));
        for (uint32_t i = 0; i < count; ++i) {
            if (auto it = d->recorded.find(secondaries[i]); it != d->recorded.end()) {
                const std::vector<Recorded> copy = it->second;
                auto& mine = d->recorded[cb];
                mine.insert(mine.end(), copy.begin(), copy.end());
            }
        }
    }
    d->cmd_execute_commands(cb, count, secondaries);
}

namespace {

// Whether a command buffer of a batch runs a query again for another pass (PerfPool::rerun).
bool runs_again(DeviceData& d, const VkCommandBuffer* cbs, uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) {
        auto it = d.recorded.find(cbs[i]);
        if (it == d.recorded.end()) {
            continue;
        }
        for (const Recorded& r : it->second) {
            // A reset recorded before it would make it a first run: waiting anyway costs time,
            // nothing else.
            if (r.kind == Recorded::Kind::begin && r.pool->runs_again(r.first)) {
                return true;
            }
        }
    }
    return false;
}

// What the command buffers of one batch did to performance queries, at the batch's pass.
void replay(DeviceData& d, const VkCommandBuffer* cbs, uint32_t count, uint32_t pass) {
    for (uint32_t i = 0; i < count; ++i) {
        auto it = d.recorded.find(cbs[i]);
        if (it == d.recorded.end()) {
            continue;
        }
        for (const Recorded& r : it->second) {
            if (r.kind == Recorded::Kind::reset) {
                r.pool->submitted_reset(r.first, r.count);
            } else {
                r.pool->rerun(r.first);
                r.pool->submitted_pass(r.first, pass);
            }
        }
    }
}

// The pass of each batch (VkPerformanceQuerySubmitInfoKHR) is the fixture's: the driver below
// has no such extension, and a layer below that reads it would take the fixture's own queries
// for performance queries of that pass.
class PassesUnlinked {
public:
    template <typename Submit> PassesUnlinked(const Submit* submits, uint32_t count) {
        for (uint32_t i = 0; i < count; ++i) {
            unlinked_.emplace_back(&submits[i],
                                   VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR);
        }
    }

private:
    std::deque<Unlinked> unlinked_;
};

// Before a batch that runs queries again for another pass, which resets them on the host: the
// earlier passes' work must have completed (a reset of a query still in use is invalid), and the
// layers below must know it has. The passes of one query are taken to run on one queue; waiting
// for it to be idle is a test fixture's way, not a fast one.
void wait_before_rerun(DeviceData& d, VkQueue queue, bool reruns) {
    if (reruns && d.queue_wait_idle) {
        d.queue_wait_idle(queue);
    }
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL queue_submit(VkQueue queue, uint32_t count,
                                            const VkSubmitInfo* submits, VkFence fence) {
    DeviceData* d;
    bool reruns = false;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(queue));
        for (uint32_t i = 0; i < count && !reruns; ++i) {
            reruns = runs_again(*d, submits[i].pCommandBuffers, submits[i].commandBufferCount);
        }
    }
    wait_before_rerun(*d, queue, reruns);
    {
        std::lock_guard guard(g_lock);
        for (uint32_t i = 0; i < count; ++i) {
            auto* pass = find_in<VkPerformanceQuerySubmitInfoKHR>(
                submits[i].pNext, VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR);
            replay(*d, submits[i].pCommandBuffers, submits[i].commandBufferCount,
                   pass ? pass->counterPassIndex : 0);
        }
    }
    const PassesUnlinked unlinked(submits, count);
    return d->queue_submit(queue, count, submits, fence);
}

VKAPI_ATTR VkResult VKAPI_CALL queue_submit2(VkQueue queue, uint32_t count,
                                             const VkSubmitInfo2* submits, VkFence fence) {
    std::vector<std::vector<VkCommandBuffer>> batches(count);
    for (uint32_t i = 0; i < count; ++i) {
        for (uint32_t j = 0; j < submits[i].commandBufferInfoCount; ++j) {
            batches[i].push_back(submits[i].pCommandBufferInfos[j].commandBuffer);
        }
    }
    DeviceData* d;
    bool reruns = false;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(queue));
        for (uint32_t i = 0; i < count && !reruns; ++i) {
            reruns = runs_again(*d, batches[i].data(), static_cast<uint32_t>(batches[i].size()));
        }
    }
    wait_before_rerun(*d, queue, reruns);
    {
        std::lock_guard guard(g_lock);
        for (uint32_t i = 0; i < count; ++i) {
            auto* pass = find_in<VkPerformanceQuerySubmitInfoKHR>(
                submits[i].pNext, VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR);
            replay(*d, batches[i].data(), static_cast<uint32_t>(batches[i].size()),
                   pass ? pass->counterPassIndex : 0);
        }
    }
    const PassesUnlinked unlinked(submits, count);
    return d->queue_submit2(queue, count, submits, fence);
}

} // namespace pqfixture
