#include "core/log.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

namespace vkscope {
namespace {

std::mutex g_mutex;
std::atomic<LogLevel> g_level{SettingValues{}.log_level};
std::string g_file;                   // guarded by g_mutex
std::set<std::string> g_already_said; // guarded by g_mutex

void emit(LogLevel level, const std::string& text) {
    // Called with g_mutex held.
    FILE* out = stderr;
    FILE* opened = nullptr;
    if (!g_file.empty()) {
        opened = std::fopen(g_file.c_str(), "a");
        if (opened) {
            out = opened;
        }
    }
    std::fprintf(out, "vkscope: %s: %s\n", kLogLevelNames[static_cast<int>(level)], text.c_str());
    if (opened) {
        std::fclose(opened);
    } else {
        std::fflush(out);
    }
}

std::string format(const char* fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    std::string text(n > 0 ? static_cast<size_t>(n) : 0, '\0');
    std::vsnprintf(text.data(), text.size() + 1, fmt, args);
    return text;
}

bool wanted(LogLevel level) {
    return level <= g_level.load(std::memory_order_relaxed);
}

} // namespace

void log_configure(LogLevel level, const std::string& file) {
    std::lock_guard lock(g_mutex);
    g_level.store(level, std::memory_order_relaxed);
    g_file = file;
}

void log(LogLevel level, const char* fmt, ...) {
    if (!wanted(level)) {
        return;
    }
    va_list args;
    va_start(args, fmt);
    std::string text = format(fmt, args);
    va_end(args);
    std::lock_guard lock(g_mutex);
    emit(level, text);
}

void log_once(LogLevel level, const char* fmt, ...) {
    if (!wanted(level)) {
        return;
    }
    va_list args;
    va_start(args, fmt);
    std::string text = format(fmt, args);
    va_end(args);
    std::lock_guard lock(g_mutex);
    if (g_already_said.insert(text).second) {
        emit(level, text);
    }
}

} // namespace vkscope
