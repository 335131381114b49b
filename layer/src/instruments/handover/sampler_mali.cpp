// The mali sampler's place: Arm GPUs, where Arm's counter library is present at run time. Only
// the detection is built so far (no Arm GPU was available to develop the reading against), so
// it opens nowhere and says why: on another vendor's device, or where the library is missing,
// or, on a Mali with the library, that reading it is not implemented yet.

#include "instruments/handover/samplers.hpp"

#include <cstdio>
#include <dlfcn.h>

namespace vkscope::handover {
namespace {

constexpr uint32_t kArm = 0x13b5;
// Arm's GPU counter library (libGPUCounters from its HWCPipe project) as shipped with tools.
constexpr const char* kLibraries[] = {"libGPUCounters.so", "libhwcpipe.so"};

void* open(const vkscope_sampler_device* d, char* error, size_t size) {
    if (d->vendor_id != kArm) {
        std::snprintf(error, size, "not an Arm Mali device");
        return nullptr;
    }
    for (const char* name : kLibraries) {
        if (void* library = dlopen(name, RTLD_LAZY | RTLD_LOCAL)) {
            dlclose(library);
            std::snprintf(error, size, "%s is present but vkscope does not read it yet", name);
            return nullptr;
        }
    }
    std::snprintf(error, size, "Arm's counter library (libGPUCounters.so) is not there");
    return nullptr;
}

const vkscope_sampler_counter* counters(void*, uint32_t* count) {
    *count = 0;
    return nullptr;
}

int sample(void*, double*) {
    return 1;
}

void close(void*) {}

const vkscope_sampler_api kApi{VKSCOPE_SAMPLER_ABI_VERSION, "mali", open, counters, sample, close};

} // namespace

const vkscope_sampler_api* mali_sampler() {
    return &kApi;
}

} // namespace vkscope::handover
