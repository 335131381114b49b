#include "timeline/submit_patch.hpp"

#include "core/owned_map.hpp"

namespace vkscope::timeline {
namespace {

const VkTimelineSemaphoreSubmitInfo* timeline_values(const void* next) {
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO) {
            return reinterpret_cast<const VkTimelineSemaphoreSubmitInfo*>(s);
        }
    }
    return nullptr;
}

// Values past the end of a too-short (or absent) value array belong to binary semaphores.
uint64_t value_at(const uint64_t* values, uint32_t count, uint32_t i) {
    return values && i < count ? values[i] : 0;
}

} // namespace

BatchSemaphores semaphores_of(const VkSubmitInfo& batch) {
    BatchSemaphores out;
    const VkTimelineSemaphoreSubmitInfo* values = timeline_values(batch.pNext);
    for (uint32_t i = 0; i < batch.waitSemaphoreCount; ++i) {
        out.waits.push_back(
            {key(batch.pWaitSemaphores[i]),
             values ? value_at(values->pWaitSemaphoreValues, values->waitSemaphoreValueCount, i)
                    : 0});
    }
    for (uint32_t i = 0; i < batch.signalSemaphoreCount; ++i) {
        out.signals.push_back(
            {key(batch.pSignalSemaphores[i]),
             values ? value_at(values->pSignalSemaphoreValues, values->signalSemaphoreValueCount, i)
                    : 0});
    }
    return out;
}

BatchSemaphores semaphores_of(const VkSubmitInfo2& batch) {
    BatchSemaphores out;
    for (uint32_t i = 0; i < batch.waitSemaphoreInfoCount; ++i) {
        const VkSemaphoreSubmitInfo& w = batch.pWaitSemaphoreInfos[i];
        out.waits.push_back({key(w.semaphore), w.value});
    }
    for (uint32_t i = 0; i < batch.signalSemaphoreInfoCount; ++i) {
        const VkSemaphoreSubmitInfo& s = batch.pSignalSemaphoreInfos[i];
        out.signals.push_back({key(s.semaphore), s.value});
    }
    return out;
}

SubmitPatch::~SubmitPatch() {
    for (auto it = swapped_.rbegin(); it != swapped_.rend(); ++it) {
        *it->info = it->original;
    }
}

void SubmitPatch::apply(VkSubmitInfo& batch, VkSemaphore semaphore, uint64_t wait,
                        uint64_t signal) {
    if (!wait && !signal) {
        return;
    }
    Storage& s = storage_.emplace_back();
    const VkTimelineSemaphoreSubmitInfo* app = timeline_values(batch.pNext);
    s.waits.assign(batch.pWaitSemaphores, batch.pWaitSemaphores + batch.waitSemaphoreCount);
    s.stages.assign(batch.pWaitDstStageMask, batch.pWaitDstStageMask + batch.waitSemaphoreCount);
    s.signals.assign(batch.pSignalSemaphores, batch.pSignalSemaphores + batch.signalSemaphoreCount);
    for (uint32_t i = 0; i < batch.waitSemaphoreCount; ++i) {
        s.wait_values.push_back(
            app ? value_at(app->pWaitSemaphoreValues, app->waitSemaphoreValueCount, i) : 0);
    }
    for (uint32_t i = 0; i < batch.signalSemaphoreCount; ++i) {
        s.signal_values.push_back(
            app ? value_at(app->pSignalSemaphoreValues, app->signalSemaphoreValueCount, i) : 0);
    }
    if (wait) {
        s.waits.push_back(semaphore);
        s.stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        s.wait_values.push_back(wait);
    }
    if (signal) {
        s.signals.push_back(semaphore);
        s.signal_values.push_back(signal);
    }
    batch.waitSemaphoreCount = static_cast<uint32_t>(s.waits.size());
    batch.pWaitSemaphores = s.waits.data();
    batch.pWaitDstStageMask = s.stages.data();
    batch.signalSemaphoreCount = static_cast<uint32_t>(s.signals.size());
    batch.pSignalSemaphores = s.signals.data();
    if (app) {
        auto* info = const_cast<VkTimelineSemaphoreSubmitInfo*>(app);
        swapped_.push_back({info, *info});
        info->waitSemaphoreValueCount = static_cast<uint32_t>(s.wait_values.size());
        info->pWaitSemaphoreValues = s.wait_values.data();
        info->signalSemaphoreValueCount = static_cast<uint32_t>(s.signal_values.size());
        info->pSignalSemaphoreValues = s.signal_values.data();
    } else {
        s.values = VkTimelineSemaphoreSubmitInfo{
            VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, batch.pNext,
            static_cast<uint32_t>(s.wait_values.size()),      s.wait_values.data(),
            static_cast<uint32_t>(s.signal_values.size()),    s.signal_values.data()};
        batch.pNext = &s.values;
    }
}

void SubmitPatch::apply(VkSubmitInfo2& batch, VkSemaphore semaphore, uint64_t wait,
                        uint64_t signal) {
    if (!wait && !signal) {
        return;
    }
    Storage& s = storage_.emplace_back();
    s.wait_infos.assign(batch.pWaitSemaphoreInfos,
                        batch.pWaitSemaphoreInfos + batch.waitSemaphoreInfoCount);
    s.signal_infos.assign(batch.pSignalSemaphoreInfos,
                          batch.pSignalSemaphoreInfos + batch.signalSemaphoreInfoCount);
    if (wait) {
        s.wait_infos.push_back(VkSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                                     nullptr, semaphore, wait,
                                                     VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, 0});
    }
    if (signal) {
        s.signal_infos.push_back(VkSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                                       nullptr, semaphore, signal,
                                                       VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, 0});
    }
    batch.waitSemaphoreInfoCount = static_cast<uint32_t>(s.wait_infos.size());
    batch.pWaitSemaphoreInfos = s.wait_infos.data();
    batch.signalSemaphoreInfoCount = static_cast<uint32_t>(s.signal_infos.size());
    batch.pSignalSemaphoreInfos = s.signal_infos.data();
}

} // namespace vkscope::timeline
