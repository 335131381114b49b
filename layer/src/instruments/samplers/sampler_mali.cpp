// The built-in `mali` sampler: the name under which the mali plugin (libvkscope_sampler_mali.so,
// layer/samplers/mali/, Arm's libGPUCounters inside) is found next to the layer. The plugin is
// built only where CMake was given libGPUCounters, so the layer itself never depends on Arm's
// library; this file only tells a non-Arm device, or an Arm one without the plugin, clearly.

#include "instruments/samplers/samplers.hpp"

#include <cstdio>
#include <dlfcn.h>
#include <string>
#include <unistd.h>

namespace vkscope::samplers {
namespace {

constexpr uint32_t kArm = 0x13b5;
constexpr const char* kPlugin = "libvkscope_sampler_mali.so";

// The plugin's path: the folder of the layer's own library (dladdr of one of its functions).
std::string plugin_path() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<const void*>(&plugin_path), &info) || !info.dli_fname) {
        return kPlugin;
    }
    std::string path = info.dli_fname;
    const size_t slash = path.rfind('/');
    return (slash == std::string::npos ? std::string{} : path.substr(0, slash + 1)) + kPlugin;
}

// What the plugin opened: its table and its handle, so that every call goes to it.
struct Opened {
    const vkscope_sampler_api* api;
    void* handle;
};

void* open(const vkscope_sampler_device* d, char* error, size_t size) {
    if (d->vendor_id != kArm) {
        std::snprintf(error, size, "not an Arm Mali device");
        return nullptr;
    }
    const std::string path = plugin_path();
    if (access(path.c_str(), F_OK) != 0) {
        std::snprintf(error, size,
                      "%s is not installed next to the layer: build vkscope with "
                      "-DVKSCOPE_LIBGPUCOUNTERS=<libGPUCounters source> (docs/counters.md)",
                      kPlugin);
        return nullptr;
    }
    std::string why;
    const vkscope_sampler_api* api = find_sampler(path, why);
    if (!api) {
        std::snprintf(error, size, "%s", why.c_str());
        return nullptr;
    }
    void* handle = api->open(d, error, size);
    return handle ? new Opened{api, handle} : nullptr;
}

const vkscope_sampler_counter* counters(void* s, uint32_t* count) {
    const auto* o = static_cast<const Opened*>(s);
    return o->api->counters(o->handle, count);
}

int sample(void* s, double* values) {
    const auto* o = static_cast<const Opened*>(s);
    return o->api->sample(o->handle, values);
}

void close(void* s) {
    const auto* o = static_cast<const Opened*>(s);
    o->api->close(o->handle);
    delete o;
}

const vkscope_sampler_api kApi{VKSCOPE_SAMPLER_ABI_VERSION, "mali", open, counters, sample, close};

} // namespace

const vkscope_sampler_api* mali_sampler() {
    return &kApi;
}

} // namespace vkscope::samplers
