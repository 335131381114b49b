#include "instruments/samplers/samplers.hpp"

#include "core/log.hpp"

#include <dlfcn.h>
#include <map>
#include <mutex>

namespace vkscope::samplers {
namespace {

constexpr std::string_view kPrefix = "sampler:";

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

// Libraries stay loaded for the life of the process: a sampler's code may still be on a stack
// when a device goes, and unloading saves nothing that matters.
std::mutex g_loaded_mutex;
std::map<std::string, const vkscope_sampler_api*, std::less<>> g_loaded;

const vkscope_sampler_api* load_library(const std::string& path, std::string& error) {
    std::lock_guard lock(g_loaded_mutex);
    if (auto found = g_loaded.find(path); found != g_loaded.end()) {
        if (!found->second) {
            error = "sampler library " + path + " did not load (see the first message)";
        }
        return found->second;
    }
    const vkscope_sampler_api* api = nullptr;
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char* why = dlerror();
        error = "sampler library " + path + " cannot be loaded: " + (why ? why : "unknown error");
    } else if (auto entry = reinterpret_cast<vkscope_sampler_entry_fn>(
                   dlsym(library, VKSCOPE_SAMPLER_ENTRY));
               !entry) {
        error = "sampler library " + path + " exports no " + VKSCOPE_SAMPLER_ENTRY;
    } else if (api = entry(VKSCOPE_SAMPLER_ABI_VERSION); !api) {
        error = "sampler library " + path + " does not speak sampler ABI version " +
                std::to_string(VKSCOPE_SAMPLER_ABI_VERSION);
    } else if (api->abi_version != VKSCOPE_SAMPLER_ABI_VERSION || !api->open || !api->counters ||
               !api->sample || !api->close) {
        error = "sampler library " + path + " returned an incomplete function table";
        api = nullptr;
    }
    g_loaded.emplace(path, api);
    return api;
}

} // namespace

std::vector<std::string> requested_samplers(std::string_view setting) {
    std::vector<std::string> out;
    while (!setting.empty()) {
        const size_t comma = setting.find(',');
        const std::string_view item = trim(setting.substr(0, comma));
        setting = comma == std::string_view::npos ? std::string_view{} : setting.substr(comma + 1);
        if (item.starts_with(kPrefix) && item.size() > kPrefix.size()) {
            out.emplace_back(trim(item.substr(kPrefix.size())));
        }
    }
    return out;
}

const vkscope_sampler_api* builtin_sampler(std::string_view name) {
    if (name == "cpu_time") {
        return cpu_time_sampler();
    }
    if (name == "mali") {
        return mali_sampler();
    }
    return nullptr;
}

const vkscope_sampler_api* find_sampler(const std::string& spec, std::string& error) {
    // A name without a slash is one of the layer's; anything else is a library's path.
    if (spec.find('/') == std::string::npos) {
        if (const vkscope_sampler_api* api = builtin_sampler(spec)) {
            return api;
        }
        error = "no sampler named '" + spec +
                "' (built in: cpu_time, mali; a library is named by its path)";
        return nullptr;
    }
    return load_library(spec, error);
}

SamplerSet::~SamplerSet() {
    for (const Open& o : open_) {
        o.api->close(o.handle);
    }
}

void SamplerSet::open(const std::vector<std::string>& specs, const vkscope_sampler_device& device) {
    for (const std::string& spec : specs) {
        std::string error;
        const vkscope_sampler_api* api = find_sampler(spec, error);
        if (!api) {
            log_once(LogLevel::error, "counters: sampler:%s: %s; its counters are not collected",
                     spec.c_str(), error.c_str());
            continue;
        }
        char why[256] = {};
        void* handle = api->open(&device, why, sizeof why);
        if (!handle) {
            why[sizeof why - 1] = '\0';
            log_once(LogLevel::warn, "counters: sampler %s cannot sample %s: %s", spec.c_str(),
                     device.device_name, why[0] ? why : "no reason given");
            continue;
        }
        uint32_t count = 0;
        const vkscope_sampler_counter* list = api->counters(handle, &count);
        if (!list || count == 0) {
            api->close(handle);
            log_once(LogLevel::warn, "counters: sampler %s has no counters on %s", spec.c_str(),
                     device.device_name);
            continue;
        }
        for (uint32_t i = 0; i < count; ++i) {
            counters_.push_back(
                SamplerCounter{list[i].name ? list[i].name : "", list[i].unit ? list[i].unit : "",
                               list[i].description ? list[i].description : "", list[i].kind});
        }
        open_.push_back(Open{api, handle, count});
        log(LogLevel::info, "counters: sampler %s open on %s (%u counters)", spec.c_str(),
            device.device_name, count);
    }
}

bool SamplerSet::sample(double* out) const {
    bool ok = true;
    for (const Open& o : open_) {
        ok = o.api->sample(o.handle, out) == 0 && ok;
        out += o.count;
    }
    return ok;
}

} // namespace vkscope::samplers
