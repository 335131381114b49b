#pragma once
// Stand-ins for the Vulkan side of the timeline's recorder and interpreter: they log what the
// layer would have written into the command buffer or sent to the capture server.

#include "timeline/interpreter.hpp"
#include "timeline/messages.hpp"
#include "timeline/recorder.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
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

// An instrument that logs its points among a sink's events (so their order with the tags shows)
// when `logs` is set, and marks each start and finish with itself and its call's number (1, 2,
// ...).
class FakeInstrument : public InstrumentRecording {
public:
    FakeInstrument(std::vector<std::string>& events, bool logs, const char* unmarked)
        : events_(events), logs_(logs), unmarked_(unmarked) {}

    void begin(const RecordingStart&) override { log("begin"); }
    void end() override { log("end of recording"); }
    void release() override {}
    Mark start() override { return point("start"); }
    Mark finish() override { return point("finish"); }
    void interrupt(Interruption what) override {
        log("interrupt");
        interruptions.push_back(what);
    }
    bool waited() const override { return waits; }
    void start_ahead() override { log("ahead"); }
    Mark restart(Mark current) override {
        ++restarts;
        return restarts_after_waits ? point("restart") : current;
    }
    const char* unmarked() const override { return unmarked_; }
    const char* left_out() const override { return "left out"; }

    Mark nth(uint32_t call) { return Mark::at(this, call); }

    std::chrono::nanoseconds busy{0};  // each start() and finish() takes at least this long
    bool waits = false;                // its start() writes a wait for the host
    bool restarts_after_waits = false; // restart() marks a new start
    uint32_t restarts = 0;             // restart() was called
    std::vector<Interruption> interruptions;

private:
    Mark point(const char* what) {
        log(what);
        const auto until = std::chrono::steady_clock::now() + busy;
        while (busy.count() > 0 && std::chrono::steady_clock::now() < until) {
        }
        return Mark::at(this, ++calls_);
    }
    void log(const char* what) {
        if (logs_) {
            events_.push_back(what);
        }
    }

    std::vector<std::string>& events_;
    const bool logs_;
    const char* const unmarked_;
    uint32_t calls_ = 0;
};

// A command buffer's recorder with `instruments` fake instruments, writing into one sink.
struct InstrumentedRecording {
    explicit InstrumentedRecording(size_t instruments, const char* unmarked = "unmarked") {
        for (size_t i = 0; i < instruments; ++i) {
            // The first logs: the others are asked at the same points.
            list.push_back(std::make_unique<FakeInstrument>(sink.events, i == 0, unmarked));
        }
    }
    void begin(bool primary, bool one_time, RecordOptions options = {}) {
        for (const auto& i : list) {
            i->begin(RecordingStart{});
        }
        options.instruments = list;
        recorder.begin(primary, one_time, options);
    }
    FakeInstrument& instrument(size_t slot) { return static_cast<FakeInstrument&>(*list[slot]); }

    FakeRecordSink sink;
    std::vector<std::unique_ptr<InstrumentRecording>> list;
    Recorder recorder;
};

class FakeInterpreterSink : public InterpreterSink {
public:
    void labels(uint64_t id, const std::vector<std::string>& stack) override {
        label_stacks.emplace_back(id, stack);
    }
    bool workload(const std::shared_ptr<Workload>& w) override {
        sent.push_back(w->tag);
        return true;
    }
    void draws_annex(uint64_t submit, uint64_t tag, std::optional<uint64_t> draws) override {
        annexes.emplace_back(submit, tag, timeline::draws_annex(draws));
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
