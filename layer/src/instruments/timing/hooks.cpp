// What timing follows besides the timeline's hooks: the application's semaphores, which `full`
// serialization must know to order batches across queues without a deadlock (chain.hpp).

#include "instruments/timing/instrument.hpp"
#include "timeline/device.hpp"

namespace vkscope {
namespace {

// The cross-queue chain, when this device serializes across queues.
timing::SubmissionChain* chain_of(VkDevice device) {
    timing::TimingInstrument* t = timing::timing_of(device);
    return t && t->device.chain_semaphore ? &t->device.chain : nullptr;
}

template <auto Next> VkResult signal(VkDevice device, const VkSemaphoreSignalInfo* info) {
    const VkResult result = (find_device(device)->next.*Next)(device, info);
    if (result == VK_SUCCESS) {
        if (timing::SubmissionChain* chain = chain_of(device)) {
            chain->host_signalled(key(info->semaphore), info->value);
        }
    }
    return result;
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateSemaphore(VkDevice device,
                                                        const VkSemaphoreCreateInfo* pCreateInfo,
                                                        const VkAllocationCallbacks* pAllocator,
                                                        VkSemaphore* pSemaphore) {
    const VkResult result =
        find_device(device)->next.CreateSemaphore(device, pCreateInfo, pAllocator, pSemaphore);
    if (result != VK_SUCCESS) {
        return result;
    }
    if (timing::SubmissionChain* chain = chain_of(device)) {
        timing::SemaphoreKind kind = timing::SemaphoreKind::binary;
        uint64_t initial = 0;
        for (auto* s = static_cast<const VkBaseInStructure*>(pCreateInfo->pNext); s; s = s->pNext) {
            if (s->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO) {
                const auto* type = reinterpret_cast<const VkSemaphoreTypeCreateInfo*>(s);
                if (type->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE) {
                    kind = timing::SemaphoreKind::timeline;
                    initial = type->initialValue;
                }
            }
        }
        chain->created(key(*pSemaphore), kind, initial);
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroySemaphore(VkDevice device, VkSemaphore semaphore,
                                                     const VkAllocationCallbacks* pAllocator) {
    if (timing::SubmissionChain* chain = chain_of(device); chain && semaphore) {
        chain->destroyed(key(semaphore));
    }
    find_device(device)->next.DestroySemaphore(device, semaphore, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkSignalSemaphore(VkDevice device,
                                                        const VkSemaphoreSignalInfo* pSignalInfo) {
    return signal<&DeviceDispatch::SignalSemaphore>(device, pSignalInfo);
}

VKAPI_ATTR VkResult VKAPI_CALL
hooks::vkSignalSemaphoreKHR(VkDevice device, const VkSemaphoreSignalInfo* pSignalInfo) {
    return signal<&DeviceDispatch::SignalSemaphoreKHR>(device, pSignalInfo);
}

} // namespace vkscope
