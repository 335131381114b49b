#include "timeline/split_submit.hpp"

#include "core/log.hpp"

#include <algorithm>
#include <vector>

namespace vkscope::timeline {
namespace {

// Far above any command buffer a frame has; short enough that one the GPU never finishes (it
// waits for something the application does later) costs the application one pause.
constexpr uint64_t kWaitNs = 5'000'000'000ull;

// One driver call's worth of a batch: command buffers [first, end) of the patched list.
struct Piece {
    uint32_t first = 0;
    uint32_t end = 0;
    bool waits = false;   // the batch's first piece
    bool signals = false; // its last
    size_t app = 0;       // application command buffers in it
};

// `may_cut(n)`: whether the call may be cut after its n-th application command buffer (counted
// over the whole call); `seen` counts them.
template <typename IsApplication, typename MayCut>
std::vector<Piece> pieces_of(uint32_t count, IsApplication is_application, bool whole,
                             MayCut may_cut, size_t& seen) {
    std::vector<Piece> out;
    Piece current;
    for (uint32_t i = 0; i < count; ++i) {
        const bool app = is_application(i);
        if (!whole && app && current.app > 0 && may_cut(seen - 1)) {
            current.end = i;
            out.push_back(current);
            current = Piece{i, i, false, false, 0};
        }
        current.app += app ? 1 : 0;
        seen += app ? 1 : 0;
    }
    current.end = count;
    out.push_back(current);
    out.front().waits = true;
    out.back().signals = true;
    return out;
}

bool only_timeline_values(const void* next) {
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext) {
        if (s->sType != VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO) {
            return false;
        }
    }
    return true;
}

const VkTimelineSemaphoreSubmitInfo* timeline_values(const void* next) {
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO) {
            return reinterpret_cast<const VkTimelineSemaphoreSubmitInfo*>(s);
        }
    }
    return nullptr;
}

// Waits for everything submitted to the queue so far; false when it was given up.
class QueueWaiter {
public:
    explicit QueueWaiter(TimelineQueue& q) : q_(q) {}

    bool wait() {
        TimelineDevice& d = q_.device;
        if (gave_up_) {
            return false;
        }
        if (!q_.split_fence) {
            const VkFenceCreateInfo info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, 0};
            if (d.next.CreateFence(d.handle, &info, nullptr, &q_.split_fence) != VK_SUCCESS) {
                q_.split_fence = VK_NULL_HANDLE;
                gave_up_ = true;
                return false;
            }
        }
        // An empty submission's fence signals once all earlier work of the queue is done.
        if (d.next.QueueSubmit(q_.handle, 0, nullptr, q_.split_fence) != VK_SUCCESS) {
            gave_up_ = true;
            return false;
        }
        const VkResult r = d.next.WaitForFences(d.handle, 1, &q_.split_fence, VK_TRUE, kWaitNs);
        if (r != VK_SUCCESS) {
            // The fence stays pending: a new one is made next time.
            log_once(LogLevel::warn,
                     "counters: a command buffer did not complete within %llu s; the rest of "
                     "its submission is not sampled",
                     static_cast<unsigned long long>(kWaitNs / 1'000'000'000ull));
            q_.split_fence = VK_NULL_HANDLE;
            gave_up_ = true;
            return false;
        }
        d.next.ResetFences(d.handle, 1, &q_.split_fence);
        return true;
    }

    // A piece was submitted: when it holds application command buffers, waits for it and gives
    // each its sampling point (exact only for a piece of one).
    void reached(const Piece& piece, size_t& app_index, const SplitPoint& point) {
        if (piece.app == 0) {
            return;
        }
        const bool completed = wait() && piece.app == 1;
        for (size_t i = 0; i < piece.app; ++i) {
            point(++app_index, completed);
        }
    }

private:
    TimelineQueue& q_;
    bool gave_up_ = false;
};

} // namespace

VkResult submit_split(TimelineQueue& queue, std::span<const VkSubmitInfo> batches,
                      std::span<const VkSubmitInfo> application, VkFence fence,
                      std::span<const uint8_t> cut_after, const SplitPoint& point) {
    const DeviceDispatch& next = queue.device.next;
    QueueWaiter waiter(queue);
    size_t app_index = 0;
    size_t seen = 0;
    const auto may_cut = [&](size_t n) { return n < cut_after.size() && cut_after[n] != 0; };
    point(0, true);
    for (size_t b = 0; b < batches.size(); ++b) {
        const VkSubmitInfo& batch = batches[b];
        const VkSubmitInfo& app = application[b];
        const auto is_app = [&](uint32_t i) {
            return std::find(app.pCommandBuffers, app.pCommandBuffers + app.commandBufferCount,
                             batch.pCommandBuffers[i]) !=
                   app.pCommandBuffers + app.commandBufferCount;
        };
        const bool whole = !only_timeline_values(batch.pNext);
        const VkTimelineSemaphoreSubmitInfo* values = timeline_values(batch.pNext);
        const std::vector<Piece> pieces =
            pieces_of(batch.commandBufferCount, is_app, whole, may_cut, seen);
        for (size_t p = 0; p < pieces.size(); ++p) {
            const Piece& piece = pieces[p];
            VkSubmitInfo info = batch;
            VkTimelineSemaphoreSubmitInfo piece_values{};
            info.pCommandBuffers = batch.pCommandBuffers + piece.first;
            info.commandBufferCount = piece.end - piece.first;
            if (!piece.waits) {
                info.waitSemaphoreCount = 0;
                info.pWaitSemaphores = nullptr;
                info.pWaitDstStageMask = nullptr;
            }
            if (!piece.signals) {
                info.signalSemaphoreCount = 0;
                info.pSignalSemaphores = nullptr;
            }
            if (values && !whole) {
                piece_values = *values;
                piece_values.pNext = nullptr;
                if (!piece.waits) {
                    piece_values.waitSemaphoreValueCount = 0;
                    piece_values.pWaitSemaphoreValues = nullptr;
                }
                if (!piece.signals) {
                    piece_values.signalSemaphoreValueCount = 0;
                    piece_values.pSignalSemaphoreValues = nullptr;
                }
                info.pNext = &piece_values;
            }
            const bool last = b + 1 == batches.size() && p + 1 == pieces.size();
            const VkResult r =
                next.QueueSubmit(queue.handle, 1, &info, last ? fence : VK_NULL_HANDLE);
            if (r != VK_SUCCESS) {
                return r;
            }
            waiter.reached(piece, app_index, point);
        }
    }
    if (batches.empty()) {
        return next.QueueSubmit(queue.handle, 0, nullptr, fence);
    }
    return VK_SUCCESS;
}

VkResult submit_split(TimelineQueue& queue, std::span<const VkSubmitInfo2> batches,
                      std::span<const VkSubmitInfo2> application, VkFence fence,
                      std::span<const uint8_t> cut_after, Submit2 submit2,
                      const SplitPoint& point) {
    QueueWaiter waiter(queue);
    size_t app_index = 0;
    size_t seen = 0;
    const auto may_cut = [&](size_t n) { return n < cut_after.size() && cut_after[n] != 0; };
    point(0, true);
    for (size_t b = 0; b < batches.size(); ++b) {
        const VkSubmitInfo2& batch = batches[b];
        const VkSubmitInfo2& app = application[b];
        const auto is_app = [&](uint32_t i) {
            for (uint32_t c = 0; c < app.commandBufferInfoCount; ++c) {
                if (app.pCommandBufferInfos[c].commandBuffer ==
                    batch.pCommandBufferInfos[i].commandBuffer) {
                    return true;
                }
            }
            return false;
        };
        const bool whole = batch.pNext != nullptr;
        const std::vector<Piece> pieces =
            pieces_of(batch.commandBufferInfoCount, is_app, whole, may_cut, seen);
        for (size_t p = 0; p < pieces.size(); ++p) {
            const Piece& piece = pieces[p];
            VkSubmitInfo2 info = batch;
            info.pCommandBufferInfos = batch.pCommandBufferInfos + piece.first;
            info.commandBufferInfoCount = piece.end - piece.first;
            if (!piece.waits) {
                info.waitSemaphoreInfoCount = 0;
                info.pWaitSemaphoreInfos = nullptr;
            }
            if (!piece.signals) {
                info.signalSemaphoreInfoCount = 0;
                info.pSignalSemaphoreInfos = nullptr;
            }
            const bool last = b + 1 == batches.size() && p + 1 == pieces.size();
            const VkResult r = submit2(queue.handle, 1, &info, last ? fence : VK_NULL_HANDLE);
            if (r != VK_SUCCESS) {
                return r;
            }
            waiter.reached(piece, app_index, point);
        }
    }
    if (batches.empty()) {
        return submit2(queue.handle, 0, nullptr, fence);
    }
    return VK_SUCCESS;
}

} // namespace vkscope::timeline
