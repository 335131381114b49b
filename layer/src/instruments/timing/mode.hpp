#pragma once
// The `timing` setting's serialization modes, and the reasons an instance can have for not being
// timed (sent as `timing_reason`; static strings, so they travel as pointers). Both are the
// protocol definition's (protocol.gen.hpp).

#include "protocol.gen.hpp"

namespace vkscope::timing {

using Mode = protocol::Serialization;

constexpr const char* mode_name(Mode m) noexcept {
    return protocol::name(m);
}

namespace reason = protocol::timing_reason;

} // namespace vkscope::timing
