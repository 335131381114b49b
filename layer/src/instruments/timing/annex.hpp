#pragma once
// The timing fields of a workload instance's ANNEX and the SUBMIT_DONE message
// (docs/protocol.md, "Timing").

#include "protocol.gen.hpp"

#include <cstdint>
#include <string>

namespace vkscope::timing {

using Outcome = protocol::TimingStatus;

struct InstanceTiming {
    Outcome status = Outcome::untimed;
    const char* reason = nullptr; // required unless ok; with ok, a caveat
    // What was injected around it.
    const char* serialization = protocol::name(protocol::Serialization::none);
    uint64_t begin_ns = 0; // ok only
    uint64_t end_ns = 0;
};

std::string timing_annex(const InstanceTiming& t);
std::string submit_done_frame(uint64_t submit, uint64_t cpu_ns);

} // namespace vkscope::timing
