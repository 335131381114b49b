#pragma once
// Layer-owned query pools (timestamps, pipeline statistics: the Backend makes them): 64 slots
// each, created on demand per device, handed to a command buffer while it records, and back on a
// free list when that command buffer is reset, freed, or its pool reset or destroyed. Pools are
// only destroyed with the device, so the number of pools is the most ever held at once, not the
// number of recordings: a long run reuses the same few.
//
// Where the device can reset queries on the host (hostQueryReset), a one-time recording's block
// is reset on the host once it is done with, so that the next one-time recording to take it need
// not reset it in its command buffer: on an H200 a reset in the command buffer cost the GPU some
// 3 µs and delayed the timestamp after it, once for every block every measured frame used. A
// block read in place is reset by the thread that read it, right after its last read and outside
// the mutex (read_done()): given back by its recording instead, the reset ran on the
// application's thread as it began its next recording, or under the mutex that recording's first
// query waits for.
//
// The Vulkan calls come through a Backend so the accounting is tested without a GPU.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope {

struct QueryBlock {
    static constexpr uint32_t kSlots = 64;
    VkQueryPool pool = VK_NULL_HANDLE;
    // Slots written by the recording that holds the block; final once that recording has ended.
    uint32_t used = 0;
    // The recording that holds it runs once (VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT): after
    // that run its slots keep their values until the block is acquired again, so they can be
    // read in place instead of copied out first. Set by the recording that took it.
    bool one_run = false;
    // Reset on the host since it was last written: set under the cache's mutex by the reset after
    // its last read or on its way back to the free list, cleared there by a submission of it
    // (hold()) and, without the mutex, by the arena that takes it (no other thread has it then).
    bool clean = false;
    // Guarded by the cache's mutex: reads of the slots still to come (QueryPoolCache::hold),
    // whether the recording let go of the block meanwhile, and whether the thread of its last
    // read is resetting it (outside the mutex).
    uint32_t reads = 0;
    bool parked = false;
    bool resetting = false;
};

class QueryPoolCache {
public:
    struct Backend {
        std::function<VkQueryPool()> create; // VK_NULL_HANDLE on failure
        std::function<void(VkQueryPool)> destroy;
        // Resets all of a pool's queries on the host; empty where the device cannot.
        std::function<void(VkQueryPool)> reset;
    };

    QueryPoolCache(Backend backend, size_t max_pools);
    QueryPoolCache(const QueryPoolCache&) = delete;
    QueryPoolCache& operator=(const QueryPoolCache&) = delete;
    ~QueryPoolCache();

    // A block with `used` = 0, from the free list or newly created. Null at the limit or when
    // the driver refuses a pool.
    QueryBlock* acquire();
    // Blocks with reads to come wait for the last of them before going back to the free list.
    void release(std::vector<QueryBlock*>& blocks);
    // A read of the block's slots will come (its recording was submitted): until read_done(),
    // the block is not handed out again, whenever its recording lets go of it.
    void hold(QueryBlock* block);
    // After the last read, a one-time recording's block is reset on the host by the caller.
    void read_done(QueryBlock* block);

    // A one-time recording's blocks come back reset on the host (the backend can reset).
    bool resets_on_host() const { return static_cast<bool>(backend_.reset); }
    size_t created() const;
    size_t free_blocks() const;
    size_t parked_blocks() const;

private:
    // Back on the free list, under the mutex: a one-time recording's block is reset on the host
    // unless it was since its last write.
    void give_back(QueryBlock* block);
    // ... where its recording let go of it while its reads (or reset) were to come.
    void give_back_parked(QueryBlock* block);

    const Backend backend_;
    const size_t max_pools_;
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<QueryBlock>> all_;
    std::vector<QueryBlock*> free_;
    size_t parked_ = 0;
    bool failed_ = false;
};

// The blocks of one command buffer's recording. Used by the one thread recording it.
class QueryArena {
public:
    struct Slots {
        QueryBlock* block = nullptr;
        uint32_t first = 0;
        // The block is new to this recording: reset it (all its slots) before the first write.
        bool fresh = false;
        // ... unless the recording runs once: a fresh block that is clean was reset on the host.
        bool clean = false;
    };

    // `count` consecutive slots of one block (count <= QueryBlock::kSlots); nullopt when no
    // block can be had.
    std::optional<Slots> take(QueryPoolCache& cache, uint32_t count = 1);
    void release(QueryPoolCache& cache);
    size_t blocks() const { return blocks_.size(); }
    // Slots left in the block the next take() would use (0 without one).
    uint32_t room() const {
        return blocks_.empty() ? 0 : QueryBlock::kSlots - blocks_.back()->used;
    }

private:
    std::vector<QueryBlock*> blocks_;
};

} // namespace vkscope
