#include "timeline/ids.hpp"

#include <atomic>

namespace vkscope::timeline {
namespace {

constexpr uint64_t kTagBlock = 256;

std::atomic<uint64_t> g_next_tag_block{1};
std::atomic<uint64_t> g_next_submit{1};
std::atomic<uint64_t> g_next_device{1};

struct TagBlock {
    uint64_t next = 0;
    uint64_t end = 0;
};
thread_local TagBlock t_tags;

} // namespace

uint64_t next_tag() {
    if (t_tags.next == t_tags.end) {
        t_tags.next = g_next_tag_block.fetch_add(kTagBlock, std::memory_order_relaxed);
        t_tags.end = t_tags.next + kTagBlock;
    }
    return t_tags.next++;
}

uint64_t next_submit_id() {
    return g_next_submit.fetch_add(1, std::memory_order_relaxed);
}

uint64_t next_device_id() {
    return g_next_device.fetch_add(1, std::memory_order_relaxed);
}

} // namespace vkscope::timeline
