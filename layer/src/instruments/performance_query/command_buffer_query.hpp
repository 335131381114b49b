#pragma once
// COMMAND_BUFFER-scope counters (docs/counters.md, "Scopes"): in a frame whose pass collects them,
// each primary recording holds one query over the whole command buffer, begun as its first
// command (vkCmdBeginQuery 03224: right after the driver's vkBeginCommandBuffer, before anything
// of the application's) and ended as its last (03227: right before the driver's
// vkEndCommandBuffer). While it is active no other performance query may be (VUID 01922), so the
// workloads of such a frame carry none (`command_buffer_scope_frame`). Each submitted command
// buffer (one SUBMIT) gets its values in a COMMAND_BUFFER_COUNTERS message of its own, read on the
// readback thread like the workloads' queries.
//
// A performance query may not be active across vkCmdExecuteCommands (VUIDs 00101 and 07594), and
// whether a recording will execute secondaries is not known when it begins. So on a device that
// has secondary command buffers a primary gets the query only once an earlier recording of it
// executed none (`may_execute_secondaries` until then), and never again once one did
// (`executes_secondaries`); on a device without any, every primary gets it.

#include "core/query_pool.hpp"
#include "core/wire_format.hpp"
#include "instruments/performance_query/device.hpp"
#include "timeline/instrument.hpp"

#include <vector>

namespace vkscope::performance_query {

class CommandBufferQuery {
public:
    // vkBeginCommandBuffer, after the driver's: takes a pool of `pools` into `block` and begins
    // its query.
    void begin(PerfDevice& device, QueryPoolCache& pools, QueryBlock*& block, VkCommandBuffer cb);
    // vkEndCommandBuffer, before the driver's: of every recording, in any frame.
    void end(PerfDevice& device, const QueryBlock* block, VkCommandBuffer cb);
    // vkCmdExecuteCommands ran in the recording (in any frame).
    void executed();
    // The recording is over (reset, freed, begun anew).
    void release();

    // The recording holds a query over the whole command buffer, ended.
    bool counted() const { return ended_; }
    // Why its values are not the command buffer's (null: they are).
    const char* why() const { return why_; }

private:
    bool open_ = false;
    bool ended_ = false;
    const char* why_ = nullptr;
    bool executed_now_ = false; // the current recording executed secondaries
    // What earlier recordings of this command buffer did: one executed secondaries (its later
    // ones likely will too), one ended without.
    bool executes_secondaries_ = false;
    bool ended_without_ = false;
};

// One submitted command buffer's query, waiting for the GPU.
struct CommandBufferEntry {
    uint64_t submit = 0;
    const QueryBlock* block = nullptr;
    uint64_t generation = 0;
    uint32_t family = 0;
    uint32_t pass = 0;
    const char* why = nullptr; // set: no values
};

// Its COMMAND_BUFFER_COUNTERS message, to `sink` (the readback thread).
void send(const PerfDevice& device, const CommandBufferEntry& entry, timeline::CompletionSink& sink,
          JsonWriter& json, std::vector<VkPerformanceCounterResultKHR>& results);

} // namespace vkscope::performance_query
