#pragma once
// Layer semaphores added to the application's batches at a submission: the queue's completion
// signal riding along in the last batch, and an instrument's own waits and signals (timing's
// cross-queue chain). Also reads what a batch waits for and signals. The application's structures
// are copied, not changed, except one: a VkTimelineSemaphoreSubmitInfo it chained to a
// VkSubmitInfo, which cannot be unlinked from a const chain, so its arrays are swapped for longer
// ones for the duration of the call and put back when the patch goes out of scope.

#include <cstdint>
#include <deque>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::timeline {

// A semaphore a batch waits for or signals, by its handle's value.
struct SemaphoreUse {
    uint64_t semaphore = 0;
    uint64_t value = 0; // timeline semaphores only
};

// What a batch waits for and signals.
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

    // Adds a wait for `semaphore` to reach `wait` and a signal of it to `signal` (0: none) to
    // `batch`, a copy of the application's.
    void apply(VkSubmitInfo& batch, VkSemaphore semaphore, uint64_t wait, uint64_t signal);
    void apply(VkSubmitInfo2& batch, VkSemaphore semaphore, uint64_t wait, uint64_t signal);

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

} // namespace vkscope::timeline
