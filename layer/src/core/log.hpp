#pragma once
// Layer messages: to standard error or the log_file setting, filtered by log_level. Never on a
// hot path; callers format with printf-style arguments.

#include "settings.gen.hpp"

namespace vkscope {

void log_configure(LogLevel level, const std::string& file);
[[gnu::format(printf, 2, 3)]] void log(LogLevel level, const char* fmt, ...);
// Like log(), but a message with the same text is printed once per process: a setting that is
// wrong stays wrong for every instance the application creates.
[[gnu::format(printf, 2, 3)]] void log_once(LogLevel level, const char* fmt, ...);

} // namespace vkscope
