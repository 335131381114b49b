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
// instances split over command buffers), its SUBMIT, and the instruments' annexes of each
// workload the cost budget left out (SubmittedWorkload::left_out).
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
    // Of `listed`, those left out, and the payloads each gets (TimelineQueue::left_out_annexes).
    uint32_t left_out = 0;
    std::shared_ptr<const std::vector<std::string>> left_out_annexes;

    size_t messages() const override {
        return workloads.size() + annexes.size() + (has_submit ? 1 : 0) + left_out_messages();
    }
    size_t left_out_messages() const {
        return left_out_annexes ? size_t{left_out} * left_out_annexes->size() : 0;
    }
    size_t bytes() const override;
    size_t encode(std::string& out) override;
};

// The end of a frame (FRAME): what the frame's end saw, copied at vkQueueSubmit or
// vkQueuePresentKHR; its JSON is the sender's to build.
class FrameMessage final : public OutgoingRecord {
public:
    FrameMessage(uint64_t frame, uint64_t device, uint32_t queue, uint64_t cpu_ns,
                 const char* reason, bool captured, FrameCompiles compiled,
                 const std::optional<BudgetFrame>& budget)
        : frame_(frame), device_(device), queue_(queue), cpu_ns_(cpu_ns), reason_(reason),
          captured_(captured), compiled_(compiled), budget_(budget) {}

    size_t messages() const override { return 1; }
    size_t bytes() const override { return budget_ ? 400 : 160; }
    size_t encode(std::string& out) override {
        return append_frame_frame(out, frame_, device_, queue_, cpu_ns_, reason_, captured_,
                                  compiled_, budget_)
                   ? 0
                   : 1;
    }

private:
    uint64_t frame_;
    uint64_t device_;
    uint32_t queue_;
    uint64_t cpu_ns_;
    const char* reason_; // a protocol name: static
    bool captured_;
    FrameCompiles compiled_;
    std::optional<BudgetFrame> budget_;
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
