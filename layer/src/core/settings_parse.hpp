#pragma once
// Text-to-value parsing for the generated settings table (settings.gen.hpp).

#include <charconv>
#include <cstdint>
#include <optional>
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

// A percentage: a decimal number (digits, an optional fraction; no sign or exponent), an optional
// `%`, spaces around either. Empty: the setting is off. The host's settings.py reads the same.
inline AssignResult parse_percent(std::string_view text, double lo, double hi,
                                  std::optional<double>& out, std::string& why) {
    const auto trim = [](std::string_view s) {
        while (!s.empty() && s.front() == ' ') {
            s.remove_prefix(1);
        }
        while (!s.empty() && s.back() == ' ') {
            s.remove_suffix(1);
        }
        return s;
    };
    text = trim(text);
    if (text.empty()) {
        out.reset();
        return AssignResult::kOk;
    }
    if (text.back() == '%') {
        text = trim(text.substr(0, text.size() - 1));
    }
    bool digits = false;
    bool point = false;
    for (const char c : text) {
        if (c >= '0' && c <= '9') {
            digits = true;
        } else if (c == '.' && !point) {
            point = true;
        } else {
            digits = false;
            break;
        }
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (!digits || ec != std::errc() || end != text.data() + text.size()) {
        why = "expected a percentage such as 5% or 2.5";
        return AssignResult::kBadValue;
    }
    if (v < lo || v > hi) {
        why = "expected a percentage from " + std::to_string(static_cast<int>(lo)) + "% to " +
              std::to_string(static_cast<int>(hi)) + "%";
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
