#pragma once
// Stand-ins for the Vulkan side of the timeline's recorder and interpreter: they log what the
// layer would have written into the command buffer or sent to the capture server.

#include "timeline/interpreter.hpp"
#include "timeline/recorder.hpp"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace vkscope::timeline::test {

class FakeRecordSink : public RecordSink {
public:
    void begin_tag(uint64_t tag) override {
        std::string name = "t";
        name += std::to_string(tag);
        events.push_back(name);
    }
    void end_tag() override { events.push_back("end"); }
    void copy_parameters(std::span<const ParameterRequest> requests,
                         std::span<ParameterSlot*> out) override {
        for (size_t i = 0; i < requests.size(); ++i) {
            std::string event = "copy ";
            event += std::to_string(requests[i].buffer);
            event += "@";
            event += std::to_string(requests[i].offset);
            events.push_back(event);
            // Any distinct non-null pointer will do: nothing dereferences a slot here.
            out[i] = copying ? reinterpret_cast<ParameterSlot*>(++next_slot) : nullptr;
        }
    }

    std::vector<std::string> events;
    bool copying = true;
    uintptr_t next_slot = 0x1000;
};

class FakeInterpreterSink : public InterpreterSink {
public:
    void labels(uint64_t id, const std::vector<std::string>& stack) override {
        label_stacks.emplace_back(id, stack);
    }
    void workload(const Workload& w) override { sent.push_back(w.tag); }
    void annex(uint64_t submit, uint64_t tag, std::string json) override {
        annexes.emplace_back(submit, tag, std::move(json));
    }

    // The stack sent for `id`.
    std::vector<std::string> stack(uint64_t id) const {
        for (const auto& [i, s] : label_stacks) {
            if (i == id) {
                return s;
            }
        }
        return {};
    }

    std::vector<std::pair<uint64_t, std::vector<std::string>>> label_stacks;
    std::vector<uint64_t> sent;
    std::vector<std::tuple<uint64_t, uint64_t, std::string>> annexes;
};

} // namespace vkscope::timeline::test
