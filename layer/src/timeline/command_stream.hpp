#pragma once
// The layer command stream: what a command buffer does to the timeline, recorded while the
// application records it and replayed at each submission by the queue's interpreter, which is the
// only place that knows the queue's label stack, the submitID and what earlier command buffers
// left open.
//
// Commands hold shared pointers, so a secondary's commands inlined into a primary stay valid
// whatever happens to the secondary afterwards.

#include "protocol.gen.hpp"
#include "timeline/instrument.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vkscope::timeline {

using Size3 = std::array<uint32_t, 3>;

using protocol::WorkloadType;

// Owned by the Vulkan side (layer-owned host-visible memory); the recorder and interpreter only
// pass it around.
struct ParameterSlot;

// What a parameter slot holds.
enum class ParameterKind : uint8_t {
    dispatch,   // VkDispatchIndirectCommand
    trace_rays, // width, height, depth of VkTraceRaysIndirectCommand(2)KHR
    draw_count, // the uint32_t count of a vkCmdDraw*IndirectCount
};

struct ParameterCopy {
    ParameterSlot* slot = nullptr;
    ParameterKind kind = ParameterKind::dispatch;
    uint32_t max_draws = 0; // draw_count: the command's maxDrawCount
};

// What a workload outside render passes is: a few plain values, kept as they are while recording
// and turned into text only when sent, off the recording thread's path and not at all without a
// host.
struct WorkloadInfo {
    uint64_t device = 0;
    const char* api = "";
    const char* kind = "";          // transfers, acceleration structures
    std::optional<Size3> size;      // dispatch groups, trace rays width/height/depth
    Size3 base{};                   // dispatch base group
    std::optional<uint64_t> amount; // bytes, pixels, structures
    // Dispatches: also turns group counts read back from the GPU into invocations.
    std::optional<Size3> local_size;
};

// One recorded workload, named by its tagID.
struct Workload : WorkloadInfo {
    uint64_t tag = 0;
    WorkloadType type = WorkloadType::dispatch;
    // The WORKLOAD payload's members without the braces, for render passes (whose attachments
    // must be read while the application's objects exist).
    std::string fields;

    // Render passes. Final once the command buffer that began it has ended.
    uint64_t draws = 0;          // in that command buffer, secondaries included
    bool split = false;          // suspended at the end of that command buffer
    bool draws_deferred = false; // some counts come from the GPU, so draws is only a part

    // Has a t<tag> label in the command buffer (see RecordOptions).
    bool tagged = true;
    // The instruments that measure it, chosen as it began (InstrumentChoice::measured).
    uint8_t measured = InstrumentChoice::kAll;
    bool precedes_measured = false; // InstrumentChoice::precedes_measured

    // 0 not sent, 1 being sent, 2 sent: the WORKLOAD message goes out once, at first submission.
    std::atomic<uint8_t> sent{0};
};

// The part of a render pass instance recorded in one command buffer: the whole instance unless it
// is suspended there or resumed from an earlier command buffer.
struct RenderPassPart {
    std::shared_ptr<Workload> workload; // the instance; null for a part resumed from elsewhere
    uint64_t draws = 0;
    bool suspending = false;           // the instance continues in a later command buffer
    std::vector<ParameterCopy> counts; // draw counts copied after the instance ended
    bool counts_lost = false;          // indirect counts that could not be copied (suspended part)
    // The instance ends here but its tag began in another command buffer, and the label end is
    // left to a layer command buffer after this one (RecordOptions::defer_foreign_ends).
    bool tag_end_deferred = false;
};

enum class Op : uint8_t {
    marker_begin,
    marker_end,
    render_pass_begin,
    render_pass_resume,
    compute_dispatch_begin,
    trace_rays_begin,
    buffer_transfer_begin,
    image_transfer,
    acceleration_structure_begin,
    workload_end,
    // Async: parameters the GPU writes, read back once the submission has completed.
    indirect_readback,
};

// A command without instruments' marks.
inline constexpr uint32_t kNoMarks = UINT32_MAX;

struct Command {
    Op op = Op::workload_end;
    // Workload begins: where the marks the instruments wrote before it are in the stream's mark
    // table; workload_end: after it. kNoMarks: none (no instruments on the device). An index
    // rather than the marks themselves keeps a command small when there are no instruments.
    uint32_t marks = kNoMarks;
    std::shared_ptr<Workload> workload;       // workload begins, indirect_readback
    std::shared_ptr<RenderPassPart> part;     // render_pass_begin, render_pass_resume
    std::shared_ptr<const std::string> label; // marker_begin
    ParameterCopy copy;                       // indirect_readback
};

// An object the marks of instrument `slot` name (Mark::object()).
struct MarkObject {
    void* object = nullptr;
    uint32_t slot = 0;
};

// A recording's commands and the instruments' marks they point at: each workload boundary with
// marks has `width` of them in a row, one per instrument of the device by slot.
struct CommandStream {
    std::span<const Command> commands;
    std::span<const Mark> marks;
    size_t width = 0;
    // The objects each instrument's marks name, in the order of `marks`, an object named by
    // several consecutive marks of one instrument once: kept up as the recording is made, so that
    // a submission finds what it must read (timing's query blocks) without walking every mark.
    std::span<const MarkObject> objects;

    auto begin() const { return commands.begin(); }
    auto end() const { return commands.end(); }
    size_t size() const { return commands.size(); }
    bool empty() const { return commands.empty(); }
    const Command& operator[](size_t i) const { return commands[i]; }
    // The marks of `c`: none (with no reason) where it has none.
    Marks marks_of(const Command& c) const {
        Marks out;
        if (c.marks != kNoMarks) {
            for (size_t i = 0; i < width; ++i) {
                out[i] = marks[c.marks + i];
            }
        }
        return out;
    }
};

Op begin_op(WorkloadType type);

} // namespace vkscope::timeline
