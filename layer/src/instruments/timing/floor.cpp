#include "instruments/timing/floor.hpp"

#include "core/log.hpp"

namespace vkscope::timing {
namespace {

// What one measurement holds, released in any case.
struct FloorObjects {
    const FloorTarget& t;
    VkQueryPool pool = VK_NULL_HANDLE;
    VkCommandPool commands = VK_NULL_HANDLE;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;

    explicit FloorObjects(const FloorTarget& target) : t(target) {}
    FloorObjects(const FloorObjects&) = delete;
    FloorObjects& operator=(const FloorObjects&) = delete;
    ~FloorObjects() {
        const DeviceDispatch& next = *t.next;
        if (fence) {
            next.DestroyFence(t.device, fence, nullptr);
        }
        if (commands) {
            next.DestroyCommandPool(t.device, commands, nullptr); // frees `cb`
        }
        if (pool) {
            next.DestroyQueryPool(t.device, pool, nullptr);
        }
    }
};

void write(const FloorTarget& t, VkCommandBuffer cb, VkQueryPool pool, uint32_t slot,
           VkPipelineStageFlagBits stage) {
    t.next->CmdWriteTimestamp(cb, stage, pool, slot);
}

// The serialization barrier the layer writes after each of its timestamps (recording.cpp).
void barrier(const FloorTarget& t, VkCommandBuffer cb) {
    t.next->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                               VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0, nullptr, 0,
                               nullptr);
}

void record(const FloorTarget& t, VkCommandBuffer cb, VkQueryPool pool, uint32_t slots) {
    t.next->CmdResetQueryPool(cb, pool, 0, slots);
    for (uint32_t r = 0; r < kFloorRepeats; ++r) {
        write(t, cb, pool, 2 * r, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
        write(t, cb, pool, 2 * r + 1, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    }
    const uint32_t first = 2 * kFloorRepeats;
    if (t.mode == Mode::none) {
        for (uint32_t r = 0; r < kFloorRepeats; ++r) {
            write(t, cb, pool, first + 2 * r, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
            write(t, cb, pool, first + 2 * r + 1, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
        }
        return;
    }
    // The layer's start of a workload, then its end, which starts the next (queue and full).
    barrier(t, cb);
    for (uint32_t r = 0; r <= kFloorRepeats; ++r) {
        write(t, cb, pool, first + r, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
        barrier(t, cb);
    }
}

FloorSamples failed(uint32_t family, const char* why) {
    FloorSamples out;
    out.family = family;
    out.reason = why;
    log(LogLevel::warn, "timing: the timer's floor of queue family %u was not measured: %s", family,
        why);
    return out;
}

} // namespace

FloorSamples measure_floor(const FloorTarget& t) {
    const DeviceDispatch& next = *t.next;
    const uint32_t slots = floor_slots(t.mode, kFloorRepeats);
    FloorObjects o(t);
    const VkQueryPoolCreateInfo pool_info{
        VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, nullptr, 0, VK_QUERY_TYPE_TIMESTAMP, slots, 0};
    const VkCommandPoolCreateInfo commands_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, nullptr,
                                                VK_COMMAND_POOL_CREATE_TRANSIENT_BIT, t.family};
    const VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, 0};
    if (next.CreateQueryPool(t.device, &pool_info, nullptr, &o.pool) != VK_SUCCESS ||
        next.CreateCommandPool(t.device, &commands_info, nullptr, &o.commands) != VK_SUCCESS ||
        next.CreateFence(t.device, &fence_info, nullptr, &o.fence) != VK_SUCCESS) {
        return failed(t.family, "could not create its objects");
    }
    const VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr,
                                            o.commands, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    if (next.AllocateCommandBuffers(t.device, &alloc, &o.cb) != VK_SUCCESS) {
        return failed(t.family, "could not allocate its command buffer");
    }
    // A command buffer made below the loader has no loader dispatch yet.
    if (t.set_loader_data) {
        t.set_loader_data(t.device, o.cb);
    }
    const VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, nullptr,
                                         VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, nullptr};
    next.BeginCommandBuffer(o.cb, &begin);
    record(t, o.cb, o.pool, slots);
    if (next.EndCommandBuffer(o.cb) != VK_SUCCESS) {
        return failed(t.family, "could not record its command buffer");
    }
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &o.cb;
    constexpr uint64_t kWaitNs = 1'000'000'000;
    if (next.QueueSubmit(t.queue, 1, &submit, o.fence) != VK_SUCCESS) {
        return failed(t.family, "its submission failed");
    }
    if (next.WaitForFences(t.device, 1, &o.fence, VK_TRUE, kWaitNs) != VK_SUCCESS) {
        next.QueueWaitIdle(t.queue); // its objects may only go once the GPU is done with them
        return failed(t.family, "its submission did not complete within a second");
    }
    std::vector<uint64_t> results(slots);
    if (next.GetQueryPoolResults(t.device, o.pool, 0, slots, results.size() * sizeof(uint64_t),
                                 results.data(), sizeof(uint64_t),
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS) {
        return failed(t.family, "its query results could not be read");
    }
    return floor_samples(t.family, t.mode, results, t.valid_bits, kFloorRepeats);
}

} // namespace vkscope::timing
