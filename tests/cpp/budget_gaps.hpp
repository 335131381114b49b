#pragma once
// How long each position of a frame waited between two frames that measured it: what the
// `budget` device check calls the rotation, shared by the controller's synthetic and replayed
// tests.

#include "timeline/budget_controller.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace vkscope::timeline {

struct BudgetGaps {
    uint32_t rotation = 0; // the most frames between two measurements, baseline frames not counted
    uint32_t any = 0;      // the same over all frames
    uint32_t never = 0;    // positions no frame from `first` on measured
};

// `measured_in[p]`: the frames (ascending) that measured position p; `states[f]`: frame f's state.
// Only frames from `first` on count.
inline BudgetGaps longest_gaps(const std::vector<std::vector<uint32_t>>& measured_in,
                               std::span<const BudgetState> states, uint32_t first) {
    BudgetGaps out;
    for (const auto& frames : measured_in) {
        uint32_t before = first;
        bool seen = false;
        for (const uint32_t f : frames) {
            if (f < first) {
                continue;
            }
            if (seen) {
                const auto baseline = static_cast<uint32_t>(std::count(
                    states.begin() + before + 1, states.begin() + f, BudgetState::baseline));
                out.rotation = std::max(out.rotation, f - before - baseline);
                out.any = std::max(out.any, f - before);
            }
            before = f;
            seen = true;
        }
        out.never += seen ? 0 : 1;
    }
    return out;
}

} // namespace vkscope::timeline
