#pragma once
// Encodes the timeline's messages (docs/protocol.md) into frames. Pure: the callers post them.

#include "timeline/budget_controller.hpp"
#include "timeline/command_stream.hpp"
#include "timeline/interpreter.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkscope::timeline {

struct QueueDescription {
    uint32_t id = 0;
    uint32_t family = 0;
    uint32_t index = 0;
    uint32_t flags = 0; // VkQueueFlags
    uint32_t timestamp_valid_bits = 0;
};

// The clock GPU times are on (timing feature only).
struct ClockDescription {
    bool monotonic = false; // else the device's own clock
    uint64_t max_deviation_ns = 0;
};

// The timer's floor of one queue family (timing feature only), in ticks as measured
// (instruments/timing/floor.hpp).
struct TimerFloorDescription {
    uint32_t family = 0;
    std::vector<uint64_t> back_to_back; // between two timestamps written one after the other
    std::vector<uint64_t> empty;        // what an empty workload reads in the device's mode
    const char* reason = nullptr;       // why nothing was measured (both lists then empty)
};

struct DeviceDescription {
    std::string name;
    uint32_t vendor_id = 0;
    uint32_t device_id = 0;
    std::string driver_name; // empty when the driver does not say
    std::string driver_info;
    uint32_t api_version = 0;
    double timestamp_period_ns = 0;
    std::vector<QueueDescription> queues;
    std::optional<ClockDescription> clock;
    std::string pci;              // domain:bus:device.function; empty without VK_EXT_pci_bus_info
    std::optional<double> budget; // percent of the frame (the budget setting)
    std::vector<TimerFloorDescription> timer_floors;
};

struct SubmitDescription {
    uint64_t device = 0;
    uint32_t queue = 0;
    uint64_t frame = 0;
    uint64_t cpu_ns = 0;
    const char* api = "vkQueueSubmit";
    uint32_t batch = 0;
    uint64_t s_label = 0; // submitID of the s<submitID> label around it; 0: none
};

// Each message's frame; the append_ forms add it to `out` (the sender thread encodes records with
// them) and return false, appending nothing, when the payload is over the protocol's limit.
std::string hello_frame(uint32_t pid, std::string_view process, std::string_view layer_version);
std::string device_frame(uint64_t device, const DeviceDescription& d);
std::string workload_frame(const Workload& w);
std::string labels_frame(uint64_t device, uint64_t id, const std::vector<std::string>& stack);
std::string submit_frame(uint64_t submit, const SubmitDescription& s,
                         std::span<const SubmittedWorkload> workloads);
std::string annex_frame(uint64_t submit, uint64_t tag, std::string_view json);
bool append_workload_frame(std::string& out, const Workload& w);
bool append_labels_frame(std::string& out, uint64_t device, uint64_t id,
                         const std::vector<std::string>& stack);
bool append_submit_frame(std::string& out, uint64_t submit, const SubmitDescription& s,
                         std::span<const SubmittedWorkload> workloads);
bool append_annex_frame(std::string& out, uint64_t submit, uint64_t tag, std::string_view json);
// The annex of a render pass instance whose draws are only known once its parts have run: their
// total, or (nullopt) that some of them could not be counted.
std::string draws_annex(std::optional<uint64_t> draws);
// What the application compiled since the previous frame ended (warm-up frames).
struct FrameCompiles {
    uint64_t pipelines = 0; // pipelines and shader objects
    uint64_t shader_modules = 0;
};

std::string frame_frame(uint64_t frame, uint64_t device, uint32_t queue, uint64_t cpu_ns,
                        const char* reason, bool captured = true, FrameCompiles compiled = {},
                        const std::optional<BudgetFrame>& budget = std::nullopt);
bool append_frame_frame(std::string& out, uint64_t frame, uint64_t device, uint32_t queue,
                        uint64_t cpu_ns, const char* reason, bool captured, FrameCompiles compiled,
                        const std::optional<BudgetFrame>& budget);
// `query_pools`: the timing feature's pool count, sent only when some device timed.
std::string goodbye_frame(uint64_t dropped, std::optional<uint64_t> query_pools = std::nullopt);

// The names the protocol gives VkQueueFlags bits.
std::vector<const char*> queue_flag_names(uint32_t flags);

} // namespace vkscope::timeline
