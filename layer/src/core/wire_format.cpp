#include "core/wire_format.hpp"

#include <charconv>
#include <cmath>

namespace vkscope {
namespace {

// Byte by byte rather than memcpy, so that the wire stays little-endian on any host.
template <typename T> void append_le(std::string& out, T v) {
    for (size_t i = 0; i < sizeof(T); ++i) {
        out.push_back(static_cast<char>(static_cast<uint8_t>(v >> (8 * i))));
    }
}

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629, which also rules out
// overlong forms, surrogates and code points past U+10FFFF), or 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
    const auto at = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
    const auto cont = [&](size_t k, uint8_t lo = 0x80, uint8_t hi = 0xbf) {
        return k < s.size() && at(k) >= lo && at(k) <= hi;
    };
    const uint8_t c = at(i);
    if (c >= 0xc2 && c <= 0xdf) {
        return cont(i + 1) ? 2 : 0;
    }
    if (c >= 0xe0 && c <= 0xef) {
        const uint8_t lo = c == 0xe0 ? 0xa0 : 0x80;
        const uint8_t hi = c == 0xed ? 0x9f : 0xbf;
        return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        const uint8_t lo = c == 0xf0 ? 0x90 : 0x80;
        const uint8_t hi = c == 0xf4 ? 0x8f : 0xbf;
        return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    }
    return 0;
}

} // namespace

bool append_frame(std::string& out, MessageType type, uint64_t tag, std::string_view json,
                  uint64_t sequence) {
    if (json.size() > kMaxPayloadBytes) {
        return false;
    }
    out.reserve(out.size() + frame_header_size(type) + json.size());
    out.push_back(static_cast<char>(type));
    if (has_sequence(type)) {
        append_le(out, sequence);
    }
    append_le(out, tag);
    append_le(out, static_cast<uint32_t>(json.size()));
    out.append(json);
    return true;
}

JsonWriter& JsonWriter::begin_object() {
    separate();
    out_.push_back('{');
    need_comma_ = false;
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    out_.push_back('}');
    need_comma_ = true;
    return *this;
}

JsonWriter& JsonWriter::begin_array() {
    separate();
    out_.push_back('[');
    need_comma_ = false;
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    out_.push_back(']');
    need_comma_ = true;
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
    separate();
    append_escaped(name);
    out_.push_back(':');
    need_comma_ = false;
    return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
    separate();
    append_escaped(text);
    need_comma_ = true;
    return *this;
}

JsonWriter& JsonWriter::integer(int64_t v) {
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, v);
    return raw(std::string_view(buf, static_cast<size_t>(result.ptr - buf)));
}

JsonWriter& JsonWriter::uinteger(uint64_t v) {
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, v);
    return raw(std::string_view(buf, static_cast<size_t>(result.ptr - buf)));
}

JsonWriter& JsonWriter::number(double v) {
    if (!std::isfinite(v)) {
        return null();
    }
    char buf[32]; // The shortest round-trip form of any double fits in 24 characters.
    const auto result = std::to_chars(buf, buf + sizeof buf, v);
    return raw(std::string_view(buf, static_cast<size_t>(result.ptr - buf)));
}

JsonWriter& JsonWriter::boolean(bool v) {
    return raw(v ? "true" : "false");
}

JsonWriter& JsonWriter::null() {
    return raw("null");
}

JsonWriter& JsonWriter::raw(std::string_view json) {
    separate();
    out_.append(json);
    need_comma_ = true;
    return *this;
}

void JsonWriter::append_escaped(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_.push_back('"');
    // Runs of bytes that need no escaping are copied in one append.
    size_t run = 0;
    const auto flush = [&](size_t end) { out_.append(text.substr(run, end - run)); };
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<uint8_t>(text[i]);
        if (c >= 0x80) {
            if (const size_t n = utf8_length(text, i)) {
                i += n;
                continue;
            }
            flush(i);
            out_.append("\xef\xbf\xbd"); // U+FFFD REPLACEMENT CHARACTER
            run = ++i;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') {
            ++i;
            continue;
        }
        flush(i);
        out_.push_back('\\');
        switch (c) {
        case '"':
        case '\\':
            out_.push_back(static_cast<char>(c));
            break;
        case '\b':
            out_.push_back('b');
            break;
        case '\f':
            out_.push_back('f');
            break;
        case '\n':
            out_.push_back('n');
            break;
        case '\r':
            out_.push_back('r');
            break;
        case '\t':
            out_.push_back('t');
            break;
        default:
            out_.append("u00");
            out_.push_back(kHex[c >> 4]);
            out_.push_back(kHex[c & 0xf]);
        }
        run = ++i;
    }
    flush(text.size());
    out_.push_back('"');
}

} // namespace vkscope
