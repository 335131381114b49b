#include "core/frame_selection.hpp"

#include <charconv>
#include <limits>
#include <unistd.h>

namespace vkscope {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

bool number(std::string_view text, uint64_t& out) {
    text = trim(text);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

} // namespace

bool FrameSelection::parse(std::string_view text, std::string& why) {
    *this = FrameSelection();
    text = trim(text);
    if (text.empty()) {
        return true;
    }
    if (text == "host") {
        kind_ = Kind::server;
        return true;
    }
    constexpr std::string_view kEvery = "every:";
    constexpr std::string_view kTrigger = "trigger:";
    if (text.starts_with(kEvery)) {
        uint64_t n = 0;
        if (!number(text.substr(kEvery.size()), n) || n == 0) {
            why = "every:N needs a frame count N of at least 1";
            return false;
        }
        kind_ = Kind::every;
        every_ = n;
        return true;
    }
    if (text.starts_with(kTrigger)) {
        const std::string_view path = trim(text.substr(kTrigger.size()));
        if (path.empty()) {
            why = "trigger: needs a file path";
            return false;
        }
        kind_ = Kind::trigger;
        trigger_ = std::string(path);
        return true;
    }
    std::vector<Range> ranges;
    while (!text.empty()) {
        const size_t comma = text.find(',');
        const std::string_view item = trim(text.substr(0, comma));
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        Range r;
        const size_t dash = item.find('-');
        bool ok = false;
        if (dash == std::string_view::npos) {
            ok = number(item, r.first);
            r.last = r.first;
        } else if (trim(item.substr(dash + 1)).empty()) {
            ok = number(item.substr(0, dash), r.first);
            r.last = std::numeric_limits<uint64_t>::max();
        } else {
            ok = number(item.substr(0, dash), r.first) && number(item.substr(dash + 1), r.last) &&
                 r.first <= r.last;
        }
        if (!ok) {
            why = "expected frame numbers and ranges like 3,10-20,100- , every:N, trigger:PATH or "
                  "host; '" +
                  std::string(item) + "' is none of them";
            return false;
        }
        ranges.push_back(r);
    }
    kind_ = Kind::ranges;
    ranges_ = std::move(ranges);
    return true;
}

bool FrameSelection::selects(uint64_t frame) const {
    switch (kind_) {
    case Kind::all:
        return true;
    case Kind::every:
        return frame % every_ == 0;
    case Kind::trigger:
        return access(trigger_.c_str(), F_OK) == 0;
    case Kind::server:
        return false; // only what the capture server asks for (server_driven())
    case Kind::ranges:
        for (const Range& r : ranges_) {
            if (frame >= r.first && frame <= r.last) {
                return true;
            }
        }
        return false;
    }
    return true;
}

} // namespace vkscope
