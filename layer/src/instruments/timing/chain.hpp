#pragma once
// Cross-queue serialization (`timing = full`): a layer-owned timeline semaphore; each batch that
// runs work takes the next ID, waits for ID-1 and signals ID, so batches run one after another in
// the order they were submitted, whatever queue they are on.
//
// Taken literally that deadlocks an application that submits a wait before the signal it waits
// for (legal with timeline semaphores): the waiting batch would take an ID, and the later
// signalling batch would wait for that ID. So a batch only takes an ID when everything it waits
// for is already *covered*: signalled on the host, reached on the device, or signalled by a batch
// that itself took an ID (or had nothing uncovered to wait for). A batch with an uncovered wait
// still waits for the last ID (it runs after everything already chained) but takes none, so
// nothing waits for it; its signals cover nothing until the device reaches them. Chained batches
// then only ever wait for earlier chained batches: no cycle, whatever the application does.
//
// Binary semaphores follow the same rule: a wait on one whose pending signal comes from an
// unchained batch is uncovered. Semaphores the layer did not see created are never covered.
//
// Queues run their batches in order, so everything submitted to a queue after an uncovered batch
// waits for it too: until the device has run past that batch (the queue's own layer semaphore
// says so), every later batch of that queue counts as uncovered as well.
//
// The caller holds lock() from the decision until the batch is submitted, so IDs reach the queues
// in the order they were taken. No Vulkan call is made here.

#include "timeline/submit_patch.hpp"

#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <unordered_map>

namespace vkscope::timing {

enum class SemaphoreKind : uint8_t { binary, timeline };

using timeline::SemaphoreUse;

class SubmissionChain {
public:
    struct Decision {
        bool chained = false;
        uint64_t wait = 0;   // wait for the layer semaphore to reach this; 0: no wait
        uint64_t signal = 0; // signal the layer semaphore to this; 0: no signal
        // A batch that would have been chained but waits for something uncovered.
        bool unserialized = false;
        // The batch waits for something uncovered: its queue counts as blocked until the
        // caller's signal of Batch::completion.
        bool blocks_queue = false;
    };

    std::unique_lock<std::mutex> lock() { return std::unique_lock(mutex_); }

    // Application semaphores, from their creation to their destruction.
    void created(uint64_t semaphore, SemaphoreKind kind, uint64_t initial_value);
    void destroyed(uint64_t semaphore);
    // vkSignalSemaphore.
    void host_signalled(uint64_t semaphore, uint64_t value);

    struct Batch {
        uint64_t queue = 0;
        // The value of the queue's own layer semaphore that says the device has run this batch
        // (when the batch is uncovered the caller must signal it).
        uint64_t completion = 0;
        std::span<const SemaphoreUse> waits;
        std::span<const SemaphoreUse> signals;
        // The batch runs work being timed (full mode, captured frame); otherwise only the
        // bookkeeping is done.
        bool serialize = false;
    };
    // What the device has reached: an application timeline semaphore's counter, and how far a
    // queue's layer semaphore got.
    struct Probe {
        std::function<uint64_t(uint64_t)> counter;
        std::function<uint64_t(uint64_t)> queue_reached;
    };

    // One batch, in submission order.
    Decision batch(const Batch& batch, const Probe& probe);
    // The last ID taken. When a submission fails, the IDs it took must still be signalled (the
    // caller submits that signal) or every later batch would wait for them forever.
    uint64_t last_id() const { return last_id_; }

private:
    struct State {
        SemaphoreKind kind = SemaphoreKind::binary;
        uint64_t covered = 0;        // timeline: every value up to this is covered
        bool unsafe_pending = false; // binary: its pending signal comes from an unchained batch
    };

    std::mutex mutex_;
    std::unordered_map<uint64_t, State> semaphores_;
    // Queues with an uncovered batch the device may not have run yet: queue -> completion value.
    std::unordered_map<uint64_t, uint64_t> blocked_;
    uint64_t last_id_ = 0;
};

} // namespace vkscope::timing
