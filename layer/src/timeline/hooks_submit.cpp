// Submissions and presents: where recorded command streams meet their queue.

#include "timeline/split_submit.hpp"
#include "timeline/submission.hpp"

#include "protocol.gen.hpp"

#include <vector>

namespace vkscope {
namespace {

using timeline::Submission;
using timeline::TimelineQueue;

// VK_EXT_frame_boundary is newer than some headers; only the start of the structure is read.
constexpr VkStructureType kFrameBoundaryType = static_cast<VkStructureType>(1000375001);
constexpr VkFlags kFrameEndBit = 0x1;
struct FrameBoundaryHead {
    VkStructureType sType;
    const void* pNext;
    VkFlags flags;
};

bool ends_frame(const void* next) {
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext) {
        if (s->sType == kFrameBoundaryType &&
            (reinterpret_cast<const FrameBoundaryHead*>(s)->flags & kFrameEndBit)) {
            return true;
        }
    }
    return false;
}

// A batch whose command buffer list must stay as the application made it.
bool fixed_list(const void* next) {
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO) {
            return true; // its device masks are per command buffer
        }
        if (s->sType == VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO &&
            reinterpret_cast<const VkProtectedSubmitInfo*>(s)->protectedSubmit) {
            return true; // the layer's command buffers are not protected
        }
    }
    return false;
}

VkResult submit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
    TimelineQueue* q = timeline::find_queue(queue);
    if (!q) {
        return find_device(queue)->next.QueueSubmit(queue, count, submits, fence);
    }
    Submission s(*q, "vkQueueSubmit");
    // The queue's lists, under the lock s holds: their storage serves call after call.
    std::vector<VkSubmitInfo>& copies = q->batch_copies;
    copies.assign(submits, submits + count);
    std::vector<std::vector<VkCommandBuffer>>& lists = q->batch_lists;
    if (lists.size() < count) {
        lists.resize(count);
    }
    bool boundary = false;
    for (uint32_t i = 0; i < count; ++i) {
        boundary = boundary || ends_frame(submits[i].pNext);
        const std::span<const VkCommandBuffer> cbs(submits[i].pCommandBuffers,
                                                   submits[i].commandBufferCount);
        const bool fixed = fixed_list(submits[i].pNext);
        if (s.batch(i, cbs, !fixed, lists[i])) {
            copies[i].commandBufferCount = static_cast<uint32_t>(lists[i].size());
            copies[i].pCommandBuffers = lists[i].data();
        }
        // A device group's per-semaphore device indices must keep matching: no semaphore added.
        s.patch(copies[i], !cbs.empty() && !fixed);
    }
    s.before_submit();
    if (count > 0) {
        s.merge_signal(copies.back(), !fixed_list(submits[count - 1].pNext));
    }
    const VkResult result =
        s.splits() ? timeline::submit_split(*q, copies, {submits, count}, fence, s.cut_points(),
                                            [&s](size_t i, bool done) { s.split_point(i, done); })
                   : q->device.next.QueueSubmit(queue, count, copies.data(), fence);
    s.after_submit(result, boundary);
    return result;
}

template <auto Next>
VkResult submit2(VkQueue queue, uint32_t count, const VkSubmitInfo2* submits, VkFence fence,
                 const char* api) {
    TimelineQueue* q = timeline::find_queue(queue);
    if (!q) {
        return (find_device(queue)->next.*Next)(queue, count, submits, fence);
    }
    Submission s(*q, api);
    std::vector<VkSubmitInfo2> copies(submits, submits + count);
    std::vector<std::vector<VkCommandBufferSubmitInfo>> infos(count);
    std::vector<VkCommandBuffer> handles;
    std::vector<VkCommandBuffer> list;
    bool boundary = false;
    for (uint32_t i = 0; i < count; ++i) {
        const VkSubmitInfo2& batch = submits[i];
        boundary = boundary || ends_frame(batch.pNext);
        handles.clear();
        for (uint32_t c = 0; c < batch.commandBufferInfoCount; ++c) {
            handles.push_back(batch.pCommandBufferInfos[c].commandBuffer);
        }
        const bool fixed = (batch.flags & VK_SUBMIT_PROTECTED_BIT) != 0 || fixed_list(batch.pNext);
        const bool changed = s.batch(i, handles, !fixed, list);
        s.patch(copies[i], !handles.empty() && !fixed);
        if (!changed) {
            continue;
        }
        // The application's entries keep their device masks; the layer's run on all devices.
        size_t app = 0;
        for (VkCommandBuffer cb : list) {
            if (app < handles.size() && cb == handles[app]) {
                infos[i].push_back(batch.pCommandBufferInfos[app++]);
            } else {
                infos[i].push_back(VkCommandBufferSubmitInfo{
                    VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, cb, 0});
            }
        }
        copies[i].commandBufferInfoCount = static_cast<uint32_t>(infos[i].size());
        copies[i].pCommandBufferInfos = infos[i].data();
    }
    s.before_submit();
    if (count > 0) {
        s.merge_signal(copies.back(), !fixed_list(submits[count - 1].pNext));
    }
    const VkResult result =
        s.splits() ? timeline::submit_split(*q, copies, {submits, count}, fence, s.cut_points(),
                                            q->device.next.*Next,
                                            [&s](size_t i, bool done) { s.split_point(i, done); })
                   : (q->device.next.*Next)(queue, count, copies.data(), fence);
    s.after_submit(result, boundary);
    return result;
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkQueueSubmit(VkQueue queue, uint32_t submitCount,
                                                    const VkSubmitInfo* pSubmits, VkFence fence) {
    return submit(queue, submitCount, pSubmits, fence);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkQueueSubmit2(VkQueue queue, uint32_t submitCount,
                                                     const VkSubmitInfo2* pSubmits, VkFence fence) {
    return submit2<&DeviceDispatch::QueueSubmit2>(queue, submitCount, pSubmits, fence,
                                                  "vkQueueSubmit2");
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkQueueSubmit2KHR(VkQueue queue, uint32_t submitCount,
                                                        const VkSubmitInfo2* pSubmits,
                                                        VkFence fence) {
    return submit2<&DeviceDispatch::QueueSubmit2KHR>(queue, submitCount, pSubmits, fence,
                                                     "vkQueueSubmit2KHR");
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkQueuePresentKHR(VkQueue queue,
                                                        const VkPresentInfoKHR* pPresentInfo) {
    const VkResult result = find_device(queue)->next.QueuePresentKHR(queue, pPresentInfo);
    if (TimelineQueue* q = timeline::find_queue(queue);
        q && (result == VK_SUCCESS || result == VK_SUBOPTIMAL_KHR)) {
        timeline::end_frame(*q, protocol::name(protocol::FrameReason::present));
    }
    return result;
}

} // namespace vkscope
