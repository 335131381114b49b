#pragma once
// One vkQueueSubmit* call as the timeline sees it, with the queue's lock held throughout: every
// submitted command buffer gets a submitID and a SUBMIT message, its command stream runs on the
// queue's interpreter, and the command buffers that need it are wrapped in s<submitID> labels by
// layer-owned command buffers. After the application's submission, an empty one signals the
// queue's timeline semaphore, which tells when the wrappers can be reused and when the indirect
// parameters can be read.

#include "timeline/device.hpp"
#include "timeline/host_sink.hpp"

#include <mutex>
#include <span>
#include <vector>

namespace vkscope::timeline {

class Submission {
public:
    Submission(TimelineQueue& queue, const char* api);
    Submission(const Submission&) = delete;
    Submission& operator=(const Submission&) = delete;

    // Runs batch `index`. Fills `out` with the command buffers to submit in its place and
    // returns true when it differs from `cbs` (wrappers inserted). `wrappable` is false for
    // batches whose command buffer list cannot grow (device groups, protected submissions).
    bool batch(uint32_t index, std::span<const VkCommandBuffer> cbs, bool wrappable,
               std::vector<VkCommandBuffer>& out);
    // Before the application's submission: slots its copies write must have been read.
    void before_submit();
    // After it: the signal, the readback job, the frame accounting.
    void after_submit(VkResult result, bool frame_boundary);

private:
    // A layer command buffer that ends `ends` labels, or begins s<begin_submit>: never both, as
    // an end that crosses command buffers may break a later begin (RecordOptions).
    VkCommandBuffer wrapper(uint32_t ends, uint64_t begin_submit);
    void close_s_label(size_t depth, bool insert, std::vector<VkCommandBuffer>& out);
    void recycle();

    TimelineQueue& queue_;
    TimelineDevice& device_;
    std::lock_guard<std::mutex> lock_;
    HostSink sink_;
    const char* api_;
    const uint64_t frame_;
    const uint64_t cpu_ns_;
    bool can_wrap_;
    std::vector<VkCommandBuffer> wrappers_;
    ReadbackJob job_;
    SubmitRecord record_;
};

// End of frame `device.frame` (and start of the next): a FRAME message.
void end_frame(TimelineQueue& queue, const char* reason);

uint64_t monotonic_ns();

} // namespace vkscope::timeline
