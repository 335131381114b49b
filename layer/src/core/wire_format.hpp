#pragma once
// The layer-to-server frame encoding of docs/protocol.md and a small JSON writer for the payloads.
// Message codes and limits come from the protocol definition (protocol.gen.hpp).
//
// Both run on the per-submit path, so they append to caller-owned strings (whose capacity is
// reused from one message to the next) and never touch iostreams or locales.

#include "protocol.gen.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace vkscope {

using protocol::kMaxPayloadBytes;
using protocol::MessageType;

constexpr bool has_sequence(MessageType type) noexcept {
    return (static_cast<uint8_t>(type) & protocol::kSequenceBit) != 0;
}

// Bytes before the payload: type, optional sequence, tag and length.
constexpr size_t frame_header_size(MessageType type) noexcept {
    return 1 + (has_sequence(type) ? 8 : 0) + 8 + 4;
}

// Appends one frame to `out`. `sequence` is written only for types that carry one. Returns false,
// appending nothing, when the payload is over kMaxPayloadBytes: sending it would cost the server
// everything after it.
bool append_frame(std::string& out, MessageType type, uint64_t tag, std::string_view json,
                  uint64_t sequence = 0);

// Compact JSON into a string it owns. Commas are placed automatically: after a value or a closed
// container the next element gets one; after an opening bracket or a key it does not, which is
// all the state a well-nested document needs. Nesting is the caller's responsibility.
//
// Strings are escaped per RFC 8259 (quote, backslash, control characters); valid UTF-8 passes
// through and each byte of an invalid sequence becomes U+FFFD, so the payload is always valid
// UTF-8 whatever an application put into a debug label.
class JsonWriter {
public:
    JsonWriter() = default;

    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view name);

    JsonWriter& string(std::string_view text);
    JsonWriter& integer(int64_t v);
    JsonWriter& uinteger(uint64_t v);
    // Shortest text that reads back as the same double; NaN and infinities, which JSON cannot
    // express, are written as null.
    JsonWriter& number(double v);
    JsonWriter& boolean(bool v);
    JsonWriter& null();
    // Pre-encoded JSON, inserted verbatim as one value.
    JsonWriter& raw(std::string_view json);

    // Overloads so that generic code (and field()) picks the right encoding from the C++ type.
    JsonWriter& value(std::string_view text) { return string(text); }
    JsonWriter& value(const char* text) { return text != nullptr ? string(text) : null(); }
    JsonWriter& value(bool v) { return boolean(v); }
    JsonWriter& value(double v) { return number(v); }
    JsonWriter& value(std::nullptr_t) { return null(); }
    template <std::integral T>
    requires(!std::same_as<T, bool>) JsonWriter& value(T v) {
        if constexpr (std::is_signed_v<T>) {
            return integer(v);
        } else {
            return uinteger(v);
        }
    }
    template <typename T> JsonWriter& field(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }

    // Room for a document of about n bytes, so that building it does not reallocate.
    void reserve(size_t n) { out_.reserve(n); }
    // The document, leaving the writer empty.
    std::string take() noexcept {
        std::string out = std::move(out_);
        out_.clear();
        need_comma_ = false;
        return out;
    }

    std::string_view view() const noexcept { return out_; }
    const std::string& str() const noexcept { return out_; }
    // Forgets the document but keeps the string's capacity for the next one.
    void clear() noexcept {
        out_.clear();
        need_comma_ = false;
    }

private:
    void separate() {
        if (need_comma_) {
            out_.push_back(',');
        }
    }
    void append_escaped(std::string_view text);

    std::string out_;
    bool need_comma_ = false;
};

} // namespace vkscope
