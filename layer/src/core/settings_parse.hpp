#pragma once
// Text-to-value parsing for the generated settings table (settings.gen.hpp).

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace vkscope {

enum class AssignResult { kOk, kUnknown, kBadValue };

inline AssignResult parse_bool(std::string_view text, bool& out, std::string& why) {
    for (std::string_view t : {"1", "true", "on", "yes"}) {
        if (text == t) {
            out = true;
            return AssignResult::kOk;
        }
    }
    for (std::string_view f : {"0", "false", "off", "no"}) {
        if (text == f) {
            out = false;
            return AssignResult::kOk;
        }
    }
    why = "expected true or false";
    return AssignResult::kBadValue;
}

inline AssignResult parse_int(std::string_view text, long long lo, long long hi, int64_t& out,
                              std::string& why) {
    long long v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
        why = "expected an integer";
        return AssignResult::kBadValue;
    }
    if (v < lo || v > hi) {
        why = "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
        return AssignResult::kBadValue;
    }
    out = v;
    return AssignResult::kOk;
}

template <typename Enum, size_t N>
AssignResult parse_enum(std::string_view text, const char* const (&names)[N], Enum& out,
                        std::string& why) {
    for (size_t i = 0; i < N; ++i) {
        if (text == names[i]) {
            out = static_cast<Enum>(i);
            return AssignResult::kOk;
        }
    }
    why = "expected one of";
    for (size_t i = 0; i < N; ++i) {
        why += (i ? "|" : " ");
        why += names[i];
    }
    return AssignResult::kBadValue;
}

} // namespace vkscope
