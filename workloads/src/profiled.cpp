#include "profiled.h"

extern "C" {

[[gnu::noinline, gnu::visibility("default")]] VkResult
wl_profiled_submit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence) {
    const VkResult result = vkQueueSubmit(queue, count, submits, fence);
    // Something after the call, so that it returns here rather than jumping away.
    asm volatile("" ::: "memory");
    return result;
}

[[gnu::noinline, gnu::visibility("default")]] void wl_profiled_record(void (*record)(void*),
                                                                      void* context) {
    record(context);
    asm volatile("" ::: "memory");
}
}
