// Entry points a profiler can count instructions in: bench/workload_cost.py runs the program
// under valgrind's callgrind, collecting only inside these two (--toggle-collect). They are
// exported, so they keep their names in the installed program, which is stripped; and they are
// neither inlined nor left through a tail call, which would end the collection early.
#pragma once

#include "vkscope/vk_compat.h"

extern "C" {

// vkQueueSubmit, as the scenario calls it.
VkResult wl_profiled_submit(VkQueue queue, uint32_t count, const VkSubmitInfo* submits,
                            VkFence fence);
// Runs `record(context)`: the recording of one frame's command buffers.
void wl_profiled_record(void (*record)(void*), void* context);
}
