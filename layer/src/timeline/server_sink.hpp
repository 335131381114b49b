#pragma once
// The interpreter's sink for a real device: messages to the capture server, built only when there
// is one.

#include "timeline/device.hpp"
#include "timeline/messages.hpp"

namespace vkscope::timeline {

class ServerSink final : public InterpreterSink {
public:
    explicit ServerSink(TimelineDevice& device) : device_(device) {}

    void labels(uint64_t id, const std::vector<std::string>& stack) override {
        if (device_.sending()) {
            device_.post(labels_frame(device_.id, id, stack));
        }
    }
    void workload(const Workload& w) override {
        if (device_.sending()) {
            device_.post(workload_frame(w));
        }
    }
    void annex(uint64_t submit, uint64_t tag, std::string json) override {
        if (device_.sending()) {
            device_.post(annex_frame(submit, tag, json));
        }
    }

private:
    TimelineDevice& device_;
};

} // namespace vkscope::timeline
