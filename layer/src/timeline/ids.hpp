#pragma once
// Process-wide identifiers of the timeline: tagIDs name recorded workloads, submitIDs name
// submitted command buffers. Both start at 1; 0 means "none" on the wire.

#include <cstdint>

namespace vkscope::timeline {

// Unique in the process. Called once per recorded workload from any recording thread, so each
// thread takes tags from a block of its own and the shared counter is touched once per block:
// tags grow in recording order within a thread, not across threads.
uint64_t next_tag();

// Unique in the process, in submission order on each queue.
uint64_t next_submit_id();

// Layer-assigned device ids (the DEVICE message's tag).
uint64_t next_device_id();

} // namespace vkscope::timeline
