// Push constants of the compute shaders, and the host model of shaders/lcg.comp.
#pragma once

#include <cstdint>

namespace wl {

// Push constants of shaders/lcg.comp.
struct LcgPush {
    uint32_t offset;
    uint32_t rowStride;
    uint32_t seed;
    uint32_t iterations;
};

// Push constants of shaders/add.comp.
struct AddPush {
    uint32_t first;
    uint32_t count;
    uint32_t value;
};

// Push constants of shaders/transform.comp.
struct TransformPush {
    uint32_t count;
};

// Element `index` ends up as f^iterations(seed ^ index) with f(x) = a*x + c (mod 2^32).
// Composing the affine map once makes checking each element O(1) instead of O(iterations).
class LcgModel {
public:
    explicit LcgModel(uint32_t iterations) {
        for (uint32_t i = 0; i < iterations; ++i) {
            mul_ = mul_ * kA;
            add_ = add_ * kA + kC;
        }
    }
    uint32_t operator()(uint32_t seed, uint32_t index) const {
        return mul_ * (seed ^ index) + add_;
    }

private:
    static constexpr uint32_t kA = 1664525u;
    static constexpr uint32_t kC = 1013904223u;
    uint32_t mul_ = 1;
    uint32_t add_ = 0;
};

} // namespace wl
