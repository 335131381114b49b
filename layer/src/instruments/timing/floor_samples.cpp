#include "instruments/timing/floor_samples.hpp"

#include "instruments/timing/clock.hpp"

namespace vkscope::timing {

uint32_t floor_slots(Mode mode, uint32_t repeats) {
    // Back to back: a pair each. Empty workloads: with serialization consecutive workloads share
    // a timestamp, so `repeats` of them are a chain of repeats + 1; without, a pair each.
    return 2 * repeats + (mode == Mode::none ? 2 * repeats : repeats + 1);
}

FloorSamples floor_samples(uint32_t family, Mode mode, std::span<const uint64_t> results,
                           uint32_t valid_bits, uint32_t repeats) {
    FloorSamples out;
    out.family = family;
    if (results.size() < floor_slots(mode, repeats)) {
        out.reason = "too few query results";
        return out;
    }
    for (uint32_t r = 0; r < repeats; ++r) {
        out.back_to_back.push_back(elapsed_ticks(results[2 * r], results[2 * r + 1], valid_bits));
    }
    const std::span<const uint64_t> empty = results.subspan(2 * repeats);
    for (uint32_t r = 0; r < repeats; ++r) {
        const size_t from = mode == Mode::none ? 2 * r : r;
        out.empty.push_back(elapsed_ticks(empty[from], empty[from + 1], valid_bits));
    }
    return out;
}

} // namespace vkscope::timing
