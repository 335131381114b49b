// Command line of vkscope-workload.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wl {

enum class ValidationOrder { None, Above, Below };

// What the game_scale scenario writes around each workload itself (its floor).
enum class Floor { None, Timestamps, PipelineStatistics };

struct Options {
    std::vector<std::string> scenarios; // empty: all of them
    bool list = false;
    uint32_t frames = 1;
    uint32_t device = 0;
    uint32_t draws = 8;
    // The compute scenario's loop length per invocation (its dispatches' cost). Lavapipe aborts
    // loops past 65535 iterations; on a large GPU the dispatches take time in proportion to it.
    uint32_t computeIterations = 2560;
    ValidationOrder validation = ValidationOrder::None;
    std::vector<std::pair<std::string, std::string>> layerSettings;
    uint32_t cycles = 1;
    std::optional<uint32_t> threads; // the threads scenario defaults to 2 when unset
    bool quiet = false;
    // Record every command buffer without ONE_TIME_SUBMIT, as engines that record anew each
    // frame often do: a layer cannot tell those from command buffers recorded once.
    bool noOneTimeSubmit = false;
    // Frames from this index on are timed together and their mean printed: a benchmark's
    // per-frame cost without start-up, device creation and pipeline compilation in it.
    std::optional<uint32_t> timeFramesFrom;
    // game_scale: workloads a frame, the vkQueueSubmit calls they are spread over, the queries
    // the program writes around each of them itself, and recording on a thread of its own.
    uint32_t workloads = 200;
    uint32_t submits = 1;
    Floor floor = Floor::None;
    bool recordThread = false;
    // game_scale: a file to write every frame's times to, one line a frame (frame index, its
    // recording, its vkQueueSubmit calls, its fence wait, all in microseconds): what a profiler
    // adds, per frame and per phase, to be set beside the profiler's own record of each frame.
    std::string frameLog;
    // game: label each frame `Frame N` rather than `Frame`, so that every workload under the
    // label is a workload of its own frame (a frame whose workloads change from frame to frame).
    bool numberedFrames = false;
    // Create a compute pipeline (and its shader module) at the start of this frame, as an
    // engine that compiles shaders as it streams in content does: a warm-up frame to vkscope.
    std::optional<uint32_t> compileAtFrame;
};

// Parses argv into `out`. Returns an empty string on success, otherwise the usage error.
std::string parseOptions(int argc, char** argv, Options& out);

const char* usageText();

} // namespace wl
