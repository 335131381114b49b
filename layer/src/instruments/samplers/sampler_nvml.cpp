// The nvml sampler: what NVIDIA's management library says of an NVIDIA GPU, read through the
// library the driver installs (libnvidia-ml.so.1), loaded at run time so that vkscope does not
// depend on it. Total energy is a running total (a workload gets the energy used while it ran, as
// fine as the driver updates it); clocks and throttle reasons are levels, the value right after
// the workload, telling whether DVFS changed the clocks under the measurement.

#include "instruments/samplers/samplers.hpp"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <vector>

namespace vkscope::samplers {
namespace {

// NVML's C interface, the few parts used (nvml.h is not needed to build vkscope).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kClockGraphics = 0;
constexpr int kClockSm = 1;
constexpr int kClockMemory = 2;
constexpr uint32_t kNvidia = 0x10de;

struct Nvml {
    NvmlReturn (*init)();
    NvmlReturn (*shutdown)();
    const char* (*error_string)(NvmlReturn);
    NvmlReturn (*by_uuid)(const char*, NvmlDevice*);
    NvmlReturn (*by_pci)(const char*, NvmlDevice*);
    NvmlReturn (*energy)(NvmlDevice, unsigned long long*);
    NvmlReturn (*clock)(NvmlDevice, int, unsigned int*);
    NvmlReturn (*throttle)(NvmlDevice, unsigned long long*);
};

enum class Read : uint8_t { energy, graphics_clock, sm_clock, memory_clock, throttle };

const vkscope_sampler_counter kAll[] = {
    {"energy", "mJ", "GPU energy used (NVML total energy)", VKSCOPE_COUNTER_CUMULATIVE},
    {"graphics_clock", "MHz", "graphics clock right after the workload", VKSCOPE_COUNTER_CLOCK},
    {"sm_clock", "MHz", "SM clock right after the workload", VKSCOPE_COUNTER_CLOCK},
    {"memory_clock", "MHz", "memory clock right after the workload", VKSCOPE_COUNTER_CLOCK},
    {"throttle_reasons", "flags", "NVML clock throttle reasons right after the workload",
     VKSCOPE_COUNTER_LEVEL},
};

struct Sampler {
    void* library = nullptr;
    Nvml nvml{};
    NvmlDevice device = nullptr;
    std::vector<Read> reads;
    std::vector<vkscope_sampler_counter> counters;

    ~Sampler() {
        if (nvml.shutdown) {
            nvml.shutdown();
        }
        // The library stays loaded: NVML may keep threads of its own.
    }

    bool read(Read r, double& out) const {
        unsigned long long big = 0;
        unsigned int mhz = 0;
        NvmlReturn ok = -1;
        switch (r) {
        case Read::energy:
            ok = nvml.energy(device, &big);
            out = static_cast<double>(big);
            break;
        case Read::throttle:
            ok = nvml.throttle ? nvml.throttle(device, &big) : -1;
            out = static_cast<double>(big);
            break;
        default: {
            const int type = r == Read::graphics_clock ? kClockGraphics
                             : r == Read::sm_clock     ? kClockSm
                                                       : kClockMemory;
            ok = nvml.clock(device, type, &mhz);
            out = mhz;
        }
        }
        return ok == kNvmlSuccess;
    }
};

template <typename F> bool resolve(void* library, const char* name, F& out) {
    out = reinterpret_cast<F>(dlsym(library, name));
    return out != nullptr;
}

void* open(const vkscope_sampler_device* d, char* error, size_t size) {
    if (d->vendor_id != kNvidia) {
        std::snprintf(error, size, "not an NVIDIA device");
        return nullptr;
    }
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        std::snprintf(error, size,
                      "libnvidia-ml.so.1 (NVML, installed with NVIDIA's driver) is not there");
        return nullptr;
    }
    auto s = std::make_unique<Sampler>();
    s->library = library;
    Nvml& n = s->nvml;
    NvmlReturn (*init)() = nullptr;
    if (!resolve(library, "nvmlInit_v2", init) || !resolve(library, "nvmlShutdown", n.shutdown) ||
        !resolve(library, "nvmlErrorString", n.error_string) ||
        !resolve(library, "nvmlDeviceGetTotalEnergyConsumption", n.energy) ||
        !resolve(library, "nvmlDeviceGetClockInfo", n.clock)) {
        n.shutdown = nullptr;
        std::snprintf(error, size, "libnvidia-ml.so.1 lacks the functions vkscope reads");
        return nullptr;
    }
    resolve(library, "nvmlDeviceGetHandleByUUID", n.by_uuid);
    resolve(library, "nvmlDeviceGetHandleByPciBusId_v2", n.by_pci);
    if (!resolve(library, "nvmlDeviceGetCurrentClocksEventReasons", n.throttle)) {
        resolve(library, "nvmlDeviceGetCurrentClocksThrottleReasons", n.throttle);
    }
    if (const NvmlReturn r = init(); r != kNvmlSuccess) {
        n.shutdown = nullptr;
        std::snprintf(error, size, "nvmlInit failed: %s", n.error_string(r));
        return nullptr;
    }
    // NVML names a GPU by the same 16 bytes Vulkan gives as its device UUID.
    const uint8_t* u = d->device_uuid;
    char uuid[64];
    std::snprintf(uuid, sizeof uuid,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                  u[14], u[15]);
    bool found = n.by_uuid && n.by_uuid(uuid, &s->device) == kNvmlSuccess;
    if (!found && d->has_pci && n.by_pci) {
        char bus[32];
        std::snprintf(bus, sizeof bus, "%08x:%02x:%02x.%x", d->pci_domain, d->pci_bus,
                      d->pci_device, d->pci_function);
        found = n.by_pci(bus, &s->device) == kNvmlSuccess;
    }
    if (!found) {
        std::snprintf(error, size, "NVML does not know the GPU with UUID %s", uuid);
        return nullptr;
    }
    // Only what this GPU answers (total energy needs Volta or newer).
    for (size_t i = 0; i < std::size(kAll); ++i) {
        double v = 0;
        if (s->read(static_cast<Read>(i), v)) {
            s->reads.push_back(static_cast<Read>(i));
            s->counters.push_back(kAll[i]);
        }
    }
    if (s->reads.empty()) {
        std::snprintf(error, size, "NVML answers none of energy, clocks, throttle reasons here");
        return nullptr;
    }
    return s.release();
}

const vkscope_sampler_counter* counters(void* sampler, uint32_t* count) {
    auto* s = static_cast<Sampler*>(sampler);
    *count = static_cast<uint32_t>(s->counters.size());
    return s->counters.data();
}

int sample(void* sampler, double* values) {
    const auto* s = static_cast<Sampler*>(sampler);
    int failed = 0;
    for (size_t i = 0; i < s->reads.size(); ++i) {
        failed += s->read(s->reads[i], values[i]) ? 0 : 1;
    }
    return failed;
}

void close(void* sampler) {
    delete static_cast<Sampler*>(sampler);
}

const vkscope_sampler_api kApi{VKSCOPE_SAMPLER_ABI_VERSION, "nvml", open, counters, sample, close};

} // namespace

const vkscope_sampler_api* nvml_sampler() {
    return &kApi;
}

} // namespace vkscope::samplers
