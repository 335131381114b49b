#pragma once
// A device's cost budget (the `budget` setting, docs/budget.md): which workloads of each captured
// frame get instruments.
//
// What runs in the application's process is only what must: per workload, as its recording
// begins it, a position (an atomic increment) and a test against the frame's window; per frame,
// at its end, the controller (budget_controller.hpp) reads the time since the last frame end and
// plans the next window. Which identities were measured in which frames, the joins across frames
// and why an identity was never measured are the host's (capture/read/coverage.py).
//
// A recording takes the window of the frame it begins in and keeps it to its end, like the
// `frames` selection: a render thread that records frame N + 1 while frame N is still being
// submitted numbers its workloads the same way every frame.
//
// The controller's estimates (a trimmed fit over up to a few hundred frames' samples) run on a
// thread of the layer's own, after the frame end that took the sample: on an H200 machine they
// took the application's thread 11 us a frame, in every frame, measured or not, which no
// baseline frame shows the controller and every frame pays. The frame end plans from the
// estimates as they stood one frame earlier; where the thread has not run them by the next frame
// end (or there is none), that frame end runs them first, so the plan always lags by exactly one
// frame.

#include "core/process_thread.hpp"
#include "timeline/budget_controller.hpp"
#include "timeline/instrument.hpp"

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

namespace vkscope::timeline {

struct Workload;

class Budget {
public:
    // `percent`: of the frame without instruments (0 to 100); `frames_per_set`: the instruments'
    // (Instrument::frames_per_set), which the rotation stays coprime with.
    explicit Budget(double percent, uint32_t frames_per_set = 1);
    // Stops the estimating thread.
    ~Budget();
    Budget(const Budget&) = delete;
    Budget& operator=(const Budget&) = delete;

    double percent() const { return percent_; }

    // vkBeginCommandBuffer of a recording in a captured frame: the RecordOptions::choose context
    // its workloads are chosen with.
    void* recording_began() { return &epochs_[current_.load(std::memory_order_acquire) % kEpochs]; }
    // RecordOptions::choose: every instrument, or none.
    static InstrumentChoice choose(const Workload& w, void* context);
    // vkEndCommandBuffer of a recording begun with `context` (recording_began()): the time the
    // application spent recording it, less what the instruments' calls took in it, counts in
    // the frame it began in (what the controller takes out of the frame's time as noise).
    static void recorded(void* context, uint64_t application_ns) {
        static_cast<Epoch*>(context)->recording_ns.fetch_add(application_ns,
                                                             std::memory_order_relaxed);
    }

    // A frame ended at `now_ns` (CLOCK_MONOTONIC); `captured`: the frame selection captured it.
    // What the controller saw and decided, for the FRAME message; none for a frame not captured.
    std::optional<BudgetFrame> frame_ended(uint64_t now_ns, bool captured);

private:
    // The workloads of the recordings begun in one frame, and the window they are chosen by.
    struct Epoch {
        std::atomic<uint32_t> positions{0};
        std::atomic<uint64_t> window{0}; // BudgetWindow::pack()
        std::atomic<uint64_t> recording_ns{0};
    };
    // A recording keeps its frame's epoch to its end: four frames is room for one that spans
    // the end of its frame, with the epochs of the frames after it prepared meanwhile.
    static constexpr uint64_t kEpochs = 4;

    const double percent_;
    std::array<Epoch, kEpochs> epochs_;
    std::atomic<uint64_t> current_{0};

    // The estimating thread's loop.
    void run();

    std::mutex mutex_; // frame ends (one a frame: never on a recording path) and the estimates
    BudgetController controller_;
    uint64_t last_end_ns_ = 0;  // of the last captured frame; 0: the last frame was not captured
    bool estimate_due_ = false; // a sample was taken that the estimates have not seen
    uint64_t frames_ended_ = 0; // captured frame ends, so that the thread knows its copy is old
    bool stopping_ = false;
    std::condition_variable wake_;
    // Not running: none could start, or a forked child: frame ends estimate themselves.
    ProcessThread thread_;
};

} // namespace vkscope::timeline
