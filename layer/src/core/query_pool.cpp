#include "core/query_pool.hpp"

#include "core/query_pool_count.hpp"

namespace vkscope {

QueryPoolCache::QueryPoolCache(Backend backend, size_t max_pools)
    : backend_(std::move(backend)), max_pools_(max_pools) {}

QueryPoolCache::~QueryPoolCache() {
    for (const auto& block : all_) {
        backend_.destroy(block->pool);
    }
}

QueryBlock* QueryPoolCache::acquire() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
        if (failed_ || all_.size() >= max_pools_) {
            return nullptr;
        }
        const VkQueryPool pool = backend_.create();
        if (!pool) {
            // A driver out of memory now is unlikely to do better on every later recording.
            failed_ = true;
            return nullptr;
        }
        count_query_pool();
        auto block = std::make_unique<QueryBlock>();
        block->pool = pool;
        if (backend_.reset) {
            backend_.reset(pool); // a new pool's queries start undefined
            block->clean = true;
        }
        free_.push_back(block.get());
        all_.push_back(std::move(block));
    }
    QueryBlock* block = free_.back();
    free_.pop_back();
    block->used = 0;
    block->one_run = false;
    return block;
}

void QueryPoolCache::release(std::vector<QueryBlock*>& blocks) {
    std::lock_guard lock(mutex_);
    for (QueryBlock* block : blocks) {
        if (block->reads > 0 || block->resetting) {
            block->parked = true;
            ++parked_;
        } else {
            give_back(block);
        }
    }
    blocks.clear();
}

void QueryPoolCache::hold(QueryBlock* block) {
    std::lock_guard lock(mutex_);
    ++block->reads;
    // The submission writes its queries: a reset after an earlier read no longer holds (a
    // one-time recording submitted again, which Vulkan does not allow, but a layer must survive).
    block->clean = false;
}

void QueryPoolCache::read_done(QueryBlock* block) {
    {
        std::lock_guard lock(mutex_);
        if (block->reads == 0 || --block->reads > 0) {
            return;
        }
        if (!backend_.reset || !block->one_run || block->clean) {
            give_back_parked(block);
            return;
        }
        block->resetting = true;
    }
    // The GPU was done with the block before its read, and a recording that runs once writes it
    // no more: its queries may be reset now, whether or not the recording has let go of it yet.
    backend_.reset(block->pool);
    std::lock_guard lock(mutex_);
    block->resetting = false;
    block->clean = true;
    give_back_parked(block); // (clean now: no second reset)
}

void QueryPoolCache::give_back_parked(QueryBlock* block) {
    if (!block->parked) {
        return;
    }
    block->parked = false;
    --parked_;
    give_back(block);
}

void QueryPoolCache::give_back(QueryBlock* block) {
    // A recording is let go of only once no submission of it is pending (Vulkan's rule for
    // beginning, resetting or freeing a command buffer), and a block with a read in place to come
    // only after that read: nothing on the GPU uses the block's queries now. A block of a
    // recording that may run again is reset in its next recording's command buffer all the same,
    // so no host reset is spent on it.
    if (!backend_.reset || !block->one_run) {
        block->clean = false;
    } else if (!block->clean) {
        backend_.reset(block->pool);
        block->clean = true;
    }
    free_.push_back(block);
}

size_t QueryPoolCache::created() const {
    std::lock_guard lock(mutex_);
    return all_.size();
}

size_t QueryPoolCache::free_blocks() const {
    std::lock_guard lock(mutex_);
    return free_.size();
}

size_t QueryPoolCache::parked_blocks() const {
    std::lock_guard lock(mutex_);
    return parked_;
}

std::optional<QueryArena::Slots> QueryArena::take(QueryPoolCache& cache, uint32_t count) {
    if (count == 0 || count > QueryBlock::kSlots) {
        return std::nullopt;
    }
    if (!blocks_.empty() && blocks_.back()->used + count <= QueryBlock::kSlots) {
        QueryBlock* block = blocks_.back();
        const uint32_t first = block->used;
        block->used += count;
        return Slots{block, first, false};
    }
    QueryBlock* block = cache.acquire();
    if (!block) {
        return std::nullopt;
    }
    blocks_.push_back(block);
    block->used = count;
    const bool clean = block->clean;
    block->clean = false;
    return Slots{block, 0, true, clean};
}

void QueryArena::release(QueryPoolCache& cache) {
    if (!blocks_.empty()) {
        cache.release(blocks_);
    }
}

} // namespace vkscope
