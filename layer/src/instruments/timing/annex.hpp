#pragma once
// The timing fields of a workload instance's ANNEX and the SUBMIT_DONE message
// (docs/protocol.md, "Timing").

#include <cstdint>
#include <string>

namespace vkscope::timing {

enum class Outcome : uint8_t { ok, untimed, ambiguous };

struct InstanceTiming {
    Outcome status = Outcome::untimed;
    const char* reason = nullptr;       // required unless ok; with ok, a caveat
    const char* serialization = "none"; // what was injected around it
    uint64_t begin_ns = 0;              // ok only
    uint64_t end_ns = 0;
};

std::string timing_annex(const InstanceTiming& t);
std::string submit_done_frame(uint64_t submit, uint64_t cpu_ns);

} // namespace vkscope::timing
