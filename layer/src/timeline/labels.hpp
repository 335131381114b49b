#pragma once
// Interned debug label stacks of one device. A SUBMIT names each workload's label stack by id, so
// a stack is sent once (LABELS) however many workloads and frames use it.
//
// Stacks form a tree: a stack is its parent stack plus one label, so pushing a label is one map
// lookup and popping one is free. Queues of one device share the ids, so lookups take a lock;
// they happen at submission, never while recording.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vkscope::timeline {

class LabelSink {
public:
    virtual ~LabelSink() = default;
    // A new stack, outermost label first; called before intern() returns its id, with the lock
    // held, so nobody can use the id before the LABELS message is out.
    virtual void labels(uint64_t id, const std::vector<std::string>& stack) = 0;
};

class LabelInterner {
public:
    static constexpr uint64_t kEmpty = 0;

    // The id of stack `parent` with `label` pushed on top.
    uint64_t push(uint64_t parent, std::string_view label, LabelSink& sink);

private:
    struct Node {
        uint64_t parent;
        std::string label;
    };

    std::mutex mutex_;
    std::map<std::pair<uint64_t, std::string>, uint64_t, std::less<>> ids_;
    std::vector<Node> nodes_; // node id - 1
};

} // namespace vkscope::timeline
