#pragma once
// The interpreter's sink for a real device: what it finds goes into the record of the command
// buffer being run (SubmitMessages), which the submission posts whole once the command buffer is
// done; the sender thread encodes it. Label stacks go out at once, before anyone can use their id.

#include "timeline/device.hpp"
#include "timeline/outgoing.hpp"

#include <algorithm>

namespace vkscope::timeline {

class ServerSink final : public InterpreterSink {
public:
    explicit ServerSink(TimelineDevice& device) : device_(device) {}

    // Where the command buffer about to run puts its messages; null: nothing is described.
    void collect(SubmitMessages* into) {
        into_ = into;
        if (into) {
            claimed_.reserve(into->workloads.capacity());
        }
    }
    // Once `into` is posted: the workloads it describes count as sent, so that another queue may
    // now list them.
    void posted() {
        for (Workload* w : claimed_) {
            mark_sent(*w);
        }
        claimed_.clear();
    }

    void labels(uint64_t id, const std::vector<std::string>& stack) override {
        if (device_.sending()) {
            device_.post(std::make_unique<LabelsMessage>(device_.id, id, stack));
        }
    }
    bool workload(const std::shared_ptr<Workload>& w) override {
        if (!into_) {
            return true;
        }
        into_->workloads.emplace_back(w);
        claimed_.push_back(w.get());
        return false;
    }
    bool holds(const Workload& w) const override {
        return std::find(claimed_.begin(), claimed_.end(), &w) != claimed_.end();
    }
    void draws_annex(uint64_t submit, uint64_t tag, std::optional<uint64_t> draws) override {
        if (into_) {
            into_->annexes.push_back({submit, tag, draws});
        }
    }

private:
    TimelineDevice& device_;
    SubmitMessages* into_ = nullptr;
    std::vector<Workload*> claimed_;
};

} // namespace vkscope::timeline
