#pragma once
// What one read of an instrument's query results covers: the layer-owned blocks whose slots it
// reads (each block's used slots, laid end to end), and which slots it has seen begun, since a
// query run twice before a read (a secondary executed twice) leaves only the last run's values.
//
// A read covers a few blocks (64 slots each), so a vector searched from the last hit does what a
// map would for a fraction of the cost: this runs for every workload instance at submission.

#include "core/query_pool.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace vkscope {

class QueryReads {
public:
    struct Block {
        QueryBlock* block = nullptr;
        uint32_t base = 0;    // where its slot 0 lands in the read (lay_out())
        uint64_t begun = 0;   // slots seen by first_use()
        bool counted = false; // its slots are read (add())
    };

    // Counts `block`'s used slots in the read (once however often it is added).
    void add(QueryBlock* block) { find(block).counted = true; }
    // Marks `slot` of `block` seen, and with `read` counts the block in the read too; false when
    // the slot was seen already since the last clear().
    bool first_use(QueryBlock* block, uint32_t slot, bool read = false) {
        Block& b = find(block);
        const uint64_t bit = uint64_t{1} << (slot % QueryBlock::kSlots);
        const bool first = (b.begun & bit) == 0;
        b.begun |= bit;
        b.counted = b.counted || read;
        return first;
    }

    // Lays the counted blocks' used slots end to end from `first`, in the order they were first
    // added, and returns how many slots that is.
    uint32_t lay_out(uint32_t first);
    // After lay_out(): where `block`'s slot 0 lands.
    uint32_t base(const QueryBlock* block) const;
    // Every counted block belongs to a recording that runs once (QueryBlock::one_run).
    bool one_run() const;
    // Every block added or seen, in that order; those counted have their base once laid out.
    std::span<const Block> blocks() const { return blocks_; }

    void clear() {
        blocks_.clear();
        last_ = 0;
    }

private:
    Block& find(QueryBlock* block) {
        if (last_ < blocks_.size() && blocks_[last_].block == block) {
            return blocks_[last_];
        }
        for (size_t i = 0; i < blocks_.size(); ++i) {
            if (blocks_[i].block == block) {
                last_ = i;
                return blocks_[i];
            }
        }
        last_ = blocks_.size();
        return blocks_.emplace_back(Block{block, 0, 0, false});
    }

    std::vector<Block> blocks_;
    size_t last_ = 0;
};

// The reads one submission closed, handed to its completion job with the submission's entries.
// Each read resolves the entries up to `end` since the previous read's: in place, copied into the
// ring, or dropped; its blocks end at `blocks` in the block list.
struct ClosedReads {
    struct Read {
        uint32_t end = 0;
        const char* dropped = nullptr; // set: none of them is measured, for this reason
        bool in_place = false;         // else copied into the ring
        uint32_t blocks = 0;
    };
    struct Block {
        QueryBlock* block = nullptr;
        uint32_t base = 0; // ring entry, or entry of the job's in-place reads
    };

    // Closes the read of the entries up to `end`; `open`'s counted blocks are what it read (none
    // when it is dropped).
    void close(uint32_t end, const char* dropped, bool in_place, const QueryReads* open) {
        if (open) {
            for (const QueryReads::Block& b : open->blocks()) {
                if (b.counted) {
                    blocks.push_back(Block{b.block, b.base});
                }
            }
        }
        reads.push_back(Read{end, dropped, in_place, static_cast<uint32_t>(blocks.size())});
    }
    void clear() {
        reads.clear();
        blocks.clear();
    }

    std::vector<Read> reads;
    std::vector<Block> blocks;
};

} // namespace vkscope
