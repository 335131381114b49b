#include "core/query_reads.hpp"

namespace vkscope {

uint32_t QueryReads::lay_out(uint32_t first) {
    uint32_t total = 0;
    for (Block& b : blocks_) {
        if (b.counted) {
            b.base = first + total;
            total += b.block->used;
        }
    }
    return total;
}

uint32_t QueryReads::base(const QueryBlock* block) const {
    for (const Block& b : blocks_) {
        if (b.block == block) {
            return b.base;
        }
    }
    return 0;
}

bool QueryReads::one_run() const {
    for (const Block& b : blocks_) {
        if (b.counted && !b.block->one_run) {
            return false;
        }
    }
    return true;
}

} // namespace vkscope
