#include "timeline/labels.hpp"

#include <algorithm>

namespace vkscope::timeline {

uint64_t LabelInterner::push(uint64_t parent, std::string_view label, LabelSink& sink) {
    std::lock_guard lock(mutex_);
    std::pair<uint64_t, std::string> key{parent, std::string(label)};
    if (auto it = ids_.find(key); it != ids_.end()) {
        return it->second;
    }
    nodes_.push_back(Node{parent, key.second});
    const uint64_t id = nodes_.size();
    ids_.emplace(std::move(key), id);
    std::vector<std::string> stack;
    for (uint64_t at = id; at != kEmpty; at = nodes_[at - 1].parent) {
        stack.push_back(nodes_[at - 1].label);
    }
    std::reverse(stack.begin(), stack.end());
    sink.labels(id, stack);
    return id;
}

} // namespace vkscope::timeline
