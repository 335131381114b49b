#pragma once
// The timeline's messages as compact records, encoded into frames by the sender thread
// (MessageChannel): at vkQueueSubmit the application's thread only copies what a message says,
// never builds its JSON. The wire is unchanged: the sender writes the bytes messages.hpp makes.

#include "core/message_channel.hpp"
#include "timeline/command_stream.hpp"
#include "timeline/interpreter.hpp"
#include "timeline/messages.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vkscope::timeline {

// What one submitted command buffer tells the capture server, in this order: the WORKLOAD of
// each workload it is the first to submit, the draws annexes its stream settled (render pass
// instances split over command buffers), its SUBMIT.
class SubmitMessages final : public OutgoingRecord {
public:
    struct DrawsAnnex {
        uint64_t submit = 0;
        uint64_t tag = 0;
        std::optional<uint64_t> draws;
    };

    // Final once recorded: the sender reads them while the application may record anew.
    std::vector<std::shared_ptr<const Workload>> workloads;
    std::vector<DrawsAnnex> annexes;
    bool has_submit = false;
    uint64_t submit = 0;
    SubmitDescription description;
    std::vector<SubmittedWorkload> listed;

    size_t messages() const override {
        return workloads.size() + annexes.size() + (has_submit ? 1 : 0);
    }
    size_t bytes() const override;
    size_t encode(std::string& out) override;
};

// A label stack interned for the first time (LABELS).
class LabelsMessage final : public OutgoingRecord {
public:
    LabelsMessage(uint64_t device, uint64_t id, std::vector<std::string> stack)
        : device_(device), id_(id), stack_(std::move(stack)) {}

    size_t messages() const override { return 1; }
    size_t bytes() const override;
    size_t encode(std::string& out) override {
        return append_labels_frame(out, device_, id_, stack_) ? 0 : 1;
    }

private:
    uint64_t device_;
    uint64_t id_;
    std::vector<std::string> stack_;
};

} // namespace vkscope::timeline
