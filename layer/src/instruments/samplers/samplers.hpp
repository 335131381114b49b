#pragma once
// Samplers (include/vkscope/sampler.h): what the `counters` setting names as `sampler:NAME` (one
// built into the layer) or `sampler:PATH` (a library loaded at run time), opened once per device.

#include "vkscope/sampler.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vkscope::samplers {

// The `sampler:` items of the `counters` setting, as written after the prefix.
std::vector<std::string> requested_samplers(std::string_view setting);

// The sampler a setting item names: built in, or loaded from a library (loaded once per process
// and kept). Null with `error` saying why.
const vkscope_sampler_api* find_sampler(const std::string& spec, std::string& error);

// The samplers built into the layer, by name.
const vkscope_sampler_api* builtin_sampler(std::string_view name);
const vkscope_sampler_api* cpu_time_sampler();
const vkscope_sampler_api* mali_sampler();

struct SamplerCounter {
    std::string name;
    std::string unit;
    std::string description;
    uint32_t kind = VKSCOPE_COUNTER_CUMULATIVE;
};

// Every sampler the setting names that opened on one device, their counters in one list.
class SamplerSet {
public:
    SamplerSet() = default;
    SamplerSet(const SamplerSet&) = delete;
    SamplerSet& operator=(const SamplerSet&) = delete;
    ~SamplerSet();

    // Opens each of `specs` for `device`; what cannot be opened is logged once and left out.
    void open(const std::vector<std::string>& specs, const vkscope_sampler_device& device);

    bool empty() const { return counters_.empty(); }
    const std::vector<SamplerCounter>& counters() const { return counters_; }
    // Every counter's value into `out` (counters().size() of them); false when one sampler failed.
    bool sample(double* out) const;

private:
    struct Open {
        const vkscope_sampler_api* api = nullptr;
        void* handle = nullptr;
        uint32_t count = 0;
    };
    std::vector<Open> open_;
    std::vector<SamplerCounter> counters_;
};

} // namespace vkscope::samplers
