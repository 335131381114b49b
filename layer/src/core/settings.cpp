#include "core/settings.hpp"

#include "core/layer_info.hpp"
#include "vkscope/vk_compat.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>

extern char** environ;

namespace vkscope {
namespace {

void apply(SettingsReport& report, std::string_view name, std::string_view value,
           const std::string& origin) {
    std::string why;
    switch (assign_setting(report.values, name, value, why)) {
    case AssignResult::kOk:
        return;
    case AssignResult::kUnknown: {
        std::string known;
        for (const char* n : kSettingNames) {
            known += known.empty() ? "" : ", ";
            known += n;
        }
        report.problems.push_back("unknown setting '" + std::string(name) + "' (from " + origin +
                                  ") ignored; settings are: " + known);
        return;
    }
    case AssignResult::kBadValue:
        report.problems.push_back("setting " + std::string(name) + "='" + std::string(value) +
                                  "' (from " + origin + ") ignored: " + why);
        return;
    }
}

// One value of a VK_EXT_layer_settings entry as text. Only the first value is used: every
// vkscope setting is a single value.
bool api_value_text(const VkLayerSettingEXT& s, std::string& out) {
    if (s.valueCount == 0 || s.pValues == nullptr) {
        return false;
    }
    switch (s.type) {
    case VK_LAYER_SETTING_TYPE_BOOL32_EXT:
        out = *static_cast<const VkBool32*>(s.pValues) ? "true" : "false";
        return true;
    case VK_LAYER_SETTING_TYPE_INT32_EXT:
        out = std::to_string(*static_cast<const int32_t*>(s.pValues));
        return true;
    case VK_LAYER_SETTING_TYPE_INT64_EXT:
        out = std::to_string(*static_cast<const int64_t*>(s.pValues));
        return true;
    case VK_LAYER_SETTING_TYPE_UINT32_EXT:
        out = std::to_string(*static_cast<const uint32_t*>(s.pValues));
        return true;
    case VK_LAYER_SETTING_TYPE_UINT64_EXT:
        out = std::to_string(*static_cast<const uint64_t*>(s.pValues));
        return true;
    case VK_LAYER_SETTING_TYPE_FLOAT32_EXT:
        out = std::to_string(*static_cast<const float*>(s.pValues));
        return true;
    case VK_LAYER_SETTING_TYPE_FLOAT64_EXT:
        out = std::to_string(*static_cast<const double*>(s.pValues));
        return true;
    case VK_LAYER_SETTING_TYPE_STRING_EXT: {
        const char* text = *static_cast<const char* const*>(s.pValues);
        out = text ? text : "";
        return true;
    }
    default:
        return false;
    }
    return false;
}

void read_api(SettingsReport& report, const void* next) {
    // The first mention of a setting wins (VK_EXT_layer_settings), so apply in reverse.
    std::vector<std::pair<std::string, std::string>> found;
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext) {
        if (s->sType != VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT) {
            continue;
        }
        auto* info = reinterpret_cast<const VkLayerSettingsCreateInfoEXT*>(s);
        for (uint32_t i = 0; i < info->settingCount; ++i) {
            const VkLayerSettingEXT& setting = info->pSettings[i];
            if (!setting.pLayerName || std::strcmp(setting.pLayerName, kLayerName) != 0 ||
                !setting.pSettingName) {
                continue;
            }
            std::string text;
            if (!api_value_text(setting, text)) {
                report.problems.push_back(std::string("setting ") + setting.pSettingName +
                                          " (from VK_EXT_layer_settings) ignored: it has no value");
                continue;
            }
            found.emplace_back(setting.pSettingName, text);
        }
    }
    for (auto it = found.rbegin(); it != found.rend(); ++it) {
        apply(report, it->first, it->second, "VK_EXT_layer_settings");
    }
}

std::string trim(std::string_view s) {
    size_t b = 0;
    size_t e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) {
        ++b;
    }
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) {
        --e;
    }
    return std::string(s.substr(b, e - b));
}

std::string settings_file_path() {
    const char* path = std::getenv("VK_LAYER_SETTINGS_PATH");
    if (path && *path) {
        std::string p(path);
        std::ifstream probe(p + "/vk_layer_settings.txt");
        return probe.good() ? p + "/vk_layer_settings.txt" : p;
    }
    return "vk_layer_settings.txt";
}

void read_file(SettingsReport& report) {
    std::string path = settings_file_path();
    std::ifstream in(path);
    if (!in) {
        return;
    }
    std::string prefix = std::string(kSettingsFileKey) + ".";
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        std::string text = trim(line);
        if (text.empty() || text[0] == '#' || text.rfind(prefix, 0) != 0) {
            continue; // comments and other layers' settings
        }
        size_t eq = text.find('=');
        std::string origin = path + ":" + std::to_string(number);
        if (eq == std::string::npos) {
            report.problems.push_back("line ignored (from " + origin + "): expected " + prefix +
                                      "<setting> = <value>");
            continue;
        }
        apply(report, trim(std::string_view(text).substr(prefix.size(), eq - prefix.size())),
              trim(std::string_view(text).substr(eq + 1)), origin);
    }
}

void read_environment(SettingsReport& report) {
    const size_t prefix_len = std::strlen(kEnvPrefix);
    for (char** e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        if (entry.rfind(kEnvPrefix, 0) != 0) {
            continue;
        }
        size_t eq = entry.find('=');
        std::string var(entry.substr(0, eq));
        std::string name = var.substr(prefix_len);
        for (char& c : name) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        apply(report, name, eq == std::string_view::npos ? "" : entry.substr(eq + 1), var);
    }
}

} // namespace

SettingsReport read_settings(const void* next) {
    SettingsReport report;
    read_api(report, next);
    read_file(report);
    read_environment(report);
    return report;
}

} // namespace vkscope
