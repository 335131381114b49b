// The mali sampler plugin: Arm's libGPUCounters behind vkscope's sampler interface
// (include/vkscope/sampler.h). It is built only when CMake is given a libGPUCounters source
// checkout (VKSCOPE_LIBGPUCOUNTERS) and is installed next to the layer, where the layer's
// built-in `mali` sampler looks for it.
//
// Not compiled or run by vkscope's own tests or CI: no Arm GPU or libGPUCounters was available
// where it was written. It uses only libGPUCounters' public API (hwcpipe::find_gpus,
// hwcpipe::sampler_config, hwcpipe::sampler), and is kept small so that checking it on an Arm
// device is a matter of reading one page.
//
// libGPUCounters' samples are what the GPU counted since the previous sample; vkscope's
// CUMULATIVE counters are running totals, so the plugin adds each sample to its totals.

#include "counters.hpp"

#include <hwcpipe/gpu.hpp>
#include <hwcpipe/sampler.hpp>

#include <cstdio>
#include <memory>
#include <vector>

namespace vkscope::mali {
namespace {

constexpr uint32_t kArm = 0x13b5;

struct Sampler {
    std::unique_ptr<hwcpipe::sampler<>> hw;
    std::vector<hwcpipe_counter> ids;
    std::vector<vkscope_sampler_counter> counters;
    std::vector<double> totals;
};

double value_of(const hwcpipe::counter_sample& s) {
    return s.type == hwcpipe::counter_sample::type::uint64 ? static_cast<double>(s.value.uint64)
                                                           : s.value.float64;
}

// The first Mali device node that opens. A system has one Arm GPU in practice; the kernel's
// device nodes carry nothing that ties one to a Vulkan device's UUID.
bool first_gpu(hwcpipe::gpu& out) {
    for (const hwcpipe::gpu& g : hwcpipe::find_gpus()) {
        out = g;
        return true;
    }
    return false;
}

Sampler* open_sampler(const vkscope_sampler_device* device, char* error, size_t size) {
    if (device->vendor_id != kArm) {
        std::snprintf(error, size, "not an Arm Mali device");
        return nullptr;
    }
    hwcpipe::gpu gpu;
    if (!first_gpu(gpu)) {
        std::snprintf(error, size,
                      "no Mali device node (/dev/mali0...) could be opened: Arm's kernel driver "
                      "and permission to open it are needed");
        return nullptr;
    }
    hwcpipe::sampler_config config(gpu);
    auto s = std::make_unique<Sampler>();
    for (const MaliCounter& c : wanted_counters()) {
        if (!config.add_counter(c.id)) { // an empty error_code: this GPU has it
            s->ids.push_back(c.id);
            s->counters.push_back(c.info);
        }
    }
    if (s->ids.empty()) {
        std::snprintf(error, size, "libGPUCounters offers none of vkscope's counters on this GPU");
        return nullptr;
    }
    s->hw = std::make_unique<hwcpipe::sampler<>>(config);
    if (!*s->hw) {
        std::snprintf(error, size, "libGPUCounters could not set up counter sampling");
        return nullptr;
    }
    if (std::error_code ec = s->hw->start_sampling()) {
        std::snprintf(error, size, "libGPUCounters: %s", ec.message().c_str());
        return nullptr;
    }
    // The totals start at this first sample: what ran before vkscope opened is not counted.
    if (std::error_code ec = s->hw->sample_now()) {
        std::snprintf(error, size, "libGPUCounters: first sample: %s", ec.message().c_str());
        return nullptr;
    }
    s->totals.assign(s->ids.size(), 0.0);
    return s.release();
}

void* open(const vkscope_sampler_device* device, char* error, size_t size) {
    // Nothing may unwind into the layer, which sees a C interface. (libGPUCounters builds itself
    // without exceptions; should that reach this file too, there is nothing to catch.)
#if defined(__cpp_exceptions)
    try {
        return open_sampler(device, error, size);
    } catch (...) {
        std::snprintf(error, size, "the sampler failed to open (out of memory?)");
        return nullptr;
    }
#else
    return open_sampler(device, error, size);
#endif
}

const vkscope_sampler_counter* counters(void* sampler, uint32_t* count) {
    const auto* s = static_cast<const Sampler*>(sampler);
    *count = static_cast<uint32_t>(s->counters.size());
    return s->counters.data();
}

int sample(void* sampler, double* values) {
    auto* s = static_cast<Sampler*>(sampler);
    if (s->hw->sample_now()) {
        return 1;
    }
    hwcpipe::counter_sample got;
    for (size_t i = 0; i < s->ids.size(); ++i) {
        if (s->hw->get_counter_value(s->ids[i], got)) {
            return 1;
        }
        s->totals[i] += value_of(got);
        values[i] = s->totals[i];
    }
    return 0;
}

void close(void* sampler) {
    std::unique_ptr<Sampler> s(static_cast<Sampler*>(sampler));
    // An error here leaves nothing to undo: the sampler is destroyed either way.
    static_cast<void>(s->hw->stop_sampling());
}

const vkscope_sampler_api kApi{VKSCOPE_SAMPLER_ABI_VERSION, "mali", open, counters, sample, close};

} // namespace
} // namespace vkscope::mali

extern "C" __attribute__((visibility("default"))) const vkscope_sampler_api*
vkscope_sampler_entry(uint32_t abi_version) {
    return abi_version == VKSCOPE_SAMPLER_ABI_VERSION ? &vkscope::mali::kApi : nullptr;
}
