#pragma once
// `full` serialization at the submission: reads what each batch waits for and signals (for the
// cross-queue chain's bookkeeping) and adds the layer semaphore's wait and signal to the
// application's batch. The application's structures are copied, not changed, except one: a
// VkTimelineSemaphoreSubmitInfo it chained to a VkSubmitInfo, which cannot be unlinked from a
// const chain, so its arrays are swapped for longer ones for the duration of the call and put back
// when the patch goes out of scope.

#include "timing/chain.hpp"

#include <deque>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::timing {

// What the chain needs to know of a batch.
struct BatchSemaphores {
    std::vector<SemaphoreUse> waits;
    std::vector<SemaphoreUse> signals;
};

BatchSemaphores semaphores_of(const VkSubmitInfo& batch);
BatchSemaphores semaphores_of(const VkSubmitInfo2& batch);

class SubmitPatch {
public:
    SubmitPatch() = default;
    SubmitPatch(const SubmitPatch&) = delete;
    SubmitPatch& operator=(const SubmitPatch&) = delete;
    ~SubmitPatch(); // restores what was swapped

    // Adds the decision's wait and signal of `semaphore` to `batch` (a copy of the application's).
    void apply(VkSubmitInfo& batch, VkSemaphore semaphore, const SubmissionChain::Decision& d);
    void apply(VkSubmitInfo2& batch, VkSemaphore semaphore, const SubmissionChain::Decision& d);

private:
    struct Storage {
        std::vector<VkSemaphore> waits;
        std::vector<VkPipelineStageFlags> stages;
        std::vector<VkSemaphore> signals;
        std::vector<uint64_t> wait_values;
        std::vector<uint64_t> signal_values;
        std::vector<VkSemaphoreSubmitInfo> wait_infos;
        std::vector<VkSemaphoreSubmitInfo> signal_infos;
        VkTimelineSemaphoreSubmitInfo values{};
    };
    struct Swapped {
        VkTimelineSemaphoreSubmitInfo* info;
        VkTimelineSemaphoreSubmitInfo original;
    };

    std::deque<Storage> storage_; // stable addresses
    std::vector<Swapped> swapped_;
};

} // namespace vkscope::timing
