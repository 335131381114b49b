#pragma once
// A strict RFC 8259 parser for the tests: it checks what the layer writes by reading it back
// independently of the writer. Numbers keep their text so that 64-bit limits compare exactly.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkscope::test {

struct Json {
    enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
    bool boolean = false;
    std::string text; // a String's decoded value or a Number's literal text
    std::vector<Json> items;
    std::vector<std::pair<std::string, Json>> members; // in document order

    const Json& operator[](size_t i) const { return items.at(i); }
    const Json& operator[](std::string_view key) const {
        for (const auto& [k, v] : members) {
            if (k == key) {
                return v;
            }
        }
        static const Json missing{};
        return missing;
    }
};

class JsonParser {
public:
    // nullopt unless the whole input is exactly one valid JSON value (whitespace around allowed).
    static std::optional<Json> parse(std::string_view text) {
        JsonParser p(text);
        Json value;
        if (!p.value(value, 0)) {
            return std::nullopt;
        }
        p.skip_ws();
        if (p.at_ != p.text_.size()) {
            return std::nullopt;
        }
        return value;
    }

private:
    explicit JsonParser(std::string_view text) : text_(text) {}

    bool eof() const { return at_ >= text_.size(); }
    char peek() const { return eof() ? '\0' : text_[at_]; }
    void skip_ws() {
        while (!eof() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
            ++at_;
        }
    }
    bool literal(std::string_view word) {
        if (text_.substr(at_, word.size()) != word) {
            return false;
        }
        at_ += word.size();
        return true;
    }

    bool value(Json& out, int depth) {
        if (depth > 64) {
            return false;
        }
        skip_ws();
        switch (peek()) {
        case 'n':
            out.kind = Json::Kind::Null;
            return literal("null");
        case 't':
            out.kind = Json::Kind::Bool;
            out.boolean = true;
            return literal("true");
        case 'f':
            out.kind = Json::Kind::Bool;
            return literal("false");
        case '"':
            out.kind = Json::Kind::String;
            return string(out.text);
        case '[':
            out.kind = Json::Kind::Array;
            return array(out, depth);
        case '{':
            out.kind = Json::Kind::Object;
            return object(out, depth);
        default:
            out.kind = Json::Kind::Number;
            return number(out.text);
        }
    }

    bool array(Json& out, int depth) {
        ++at_;
        skip_ws();
        if (peek() == ']') {
            ++at_;
            return true;
        }
        for (;;) {
            out.items.emplace_back();
            if (!value(out.items.back(), depth + 1)) {
                return false;
            }
            skip_ws();
            if (peek() == ']') {
                ++at_;
                return true;
            }
            if (peek() != ',') {
                return false;
            }
            ++at_;
        }
    }

    bool object(Json& out, int depth) {
        ++at_;
        skip_ws();
        if (peek() == '}') {
            ++at_;
            return true;
        }
        for (;;) {
            skip_ws();
            std::string key;
            if (peek() != '"' || !string(key)) {
                return false;
            }
            skip_ws();
            if (peek() != ':') {
                return false;
            }
            ++at_;
            out.members.emplace_back(std::move(key), Json{});
            if (!value(out.members.back().second, depth + 1)) {
                return false;
            }
            skip_ws();
            if (peek() == '}') {
                ++at_;
                return true;
            }
            if (peek() != ',') {
                return false;
            }
            ++at_;
        }
    }

    bool number(std::string& out) {
        const size_t start = at_;
        const auto digits = [&] {
            const size_t from = at_;
            while (!eof() && peek() >= '0' && peek() <= '9') {
                ++at_;
            }
            return at_ > from;
        };
        if (peek() == '-') {
            ++at_;
        }
        if (peek() == '0') {
            ++at_;
        } else if (!digits()) {
            return false;
        }
        if (peek() == '.') {
            ++at_;
            if (!digits()) {
                return false;
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            ++at_;
            if (peek() == '+' || peek() == '-') {
                ++at_;
            }
            if (!digits()) {
                return false;
            }
        }
        out.assign(text_.substr(start, at_ - start));
        return true;
    }

    bool hex4(uint32_t& out) {
        out = 0;
        for (int i = 0; i < 4; ++i, ++at_) {
            const char c = peek();
            const int d = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
            if (d < 0) {
                return false;
            }
            out = out * 16 + static_cast<uint32_t>(d);
        }
        return true;
    }

    static void put_utf8(std::string& out, uint32_t cp) {
        if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        } else {
            out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        }
    }

    bool string(std::string& out) {
        ++at_; // opening quote
        for (;;) {
            if (eof()) {
                return false;
            }
            const auto c = static_cast<unsigned char>(text_[at_++]);
            if (c == '"') {
                return true;
            }
            if (c < 0x20) {
                return false; // raw control characters are not allowed in JSON strings
            }
            if (c != '\\') {
                out.push_back(static_cast<char>(c));
                continue;
            }
            const char e = peek();
            ++at_;
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out.push_back(e);
                break;
            case 'b':
                out.push_back('\b');
                break;
            case 'f':
                out.push_back('\f');
                break;
            case 'n':
                out.push_back('\n');
                break;
            case 'r':
                out.push_back('\r');
                break;
            case 't':
                out.push_back('\t');
                break;
            case 'u': {
                uint32_t cp = 0;
                if (!hex4(cp)) {
                    return false;
                }
                if (cp >= 0xd800 && cp < 0xdc00) {
                    uint32_t low = 0;
                    if (!literal("\\u") || !hex4(low) || low < 0xdc00 || low > 0xdfff) {
                        return false;
                    }
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                }
                put_utf8(out, cp);
                break;
            }
            default:
                return false;
            }
        }
    }

    std::string_view text_;
    size_t at_ = 0;
};

} // namespace vkscope::test
