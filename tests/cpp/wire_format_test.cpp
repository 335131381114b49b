#include "core/wire_format.hpp"

#include "json_parse.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace vkscope {
namespace {

using test::Json;
using test::JsonParser;

std::string bytes(std::initializer_list<int> values) {
    std::string out;
    for (int v : values) {
        out.push_back(static_cast<char>(v));
    }
    return out;
}

TEST(WireFormat, FrameWithoutSequence) {
    std::string out;
    ASSERT_TRUE(append_frame(out, MessageType::Hello, 0, R"({"protocol":1})"));
    const std::string expected = bytes({0x01,                   // type
                                        0, 0, 0, 0, 0, 0, 0, 0, // tag
                                        14, 0, 0, 0}) +         // length
                                 R"({"protocol":1})";
    EXPECT_EQ(out, expected);
}

TEST(WireFormat, FrameWithSequenceIsLittleEndian) {
    std::string out;
    ASSERT_TRUE(append_frame(out, MessageType::Annex, 0x1122334455667788ull, R"({"draws":12})",
                             0x0102030405060708ull));
    const std::string expected = bytes({0x82,                                           // type
                                        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // seq
                                        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // tag
                                        12,   0,    0,    0}) +
                                 R"({"draws":12})";
    EXPECT_EQ(out, expected);
}

TEST(WireFormat, SequenceOmittedBelow0x80EvenWhenGiven) {
    std::string out;
    ASSERT_TRUE(append_frame(out, MessageType::Frame, 258, "{}", 99));
    EXPECT_EQ(out, bytes({0x05, 0x02, 0x01, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}) + "{}");
}

TEST(WireFormat, FramesAppendAndEmptyPayload) {
    std::string out = "x";
    ASSERT_TRUE(append_frame(out, MessageType::Submit, 0, "", 0xffffffffffffffffull));
    ASSERT_TRUE(append_frame(out, MessageType::Goodbye, 0, "{}"));
    const std::string expected =
        "x" + bytes({0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, //
                     0,    0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0}) +
        bytes({0x08, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}) + "{}";
    EXPECT_EQ(out, expected);
}

TEST(WireFormat, HeaderSizes) {
    EXPECT_FALSE(has_sequence(MessageType::Goodbye));
    EXPECT_TRUE(has_sequence(MessageType::Submit));
    EXPECT_EQ(frame_header_size(MessageType::Dropped), 13u);
    EXPECT_EQ(frame_header_size(MessageType::Annex), 21u);
}

TEST(WireFormat, PayloadLimit) {
    std::string payload(kMaxPayloadBytes, ' ');
    std::string out = "keep";
    ASSERT_TRUE(append_frame(out, MessageType::Log, 0, payload));
    EXPECT_EQ(out.size(), 4 + 13 + kMaxPayloadBytes);
    EXPECT_EQ(out.substr(4 + 9, 4), bytes({0, 0, 0, 1})); // 16 MiB = 0x01000000
    payload.push_back(' ');
    out = "keep";
    EXPECT_FALSE(append_frame(out, MessageType::Log, 0, payload));
    EXPECT_EQ(out, "keep");
}

Json parse_ok(std::string_view text) {
    const std::optional<Json> parsed = JsonParser::parse(text);
    EXPECT_TRUE(parsed.has_value()) << "not valid JSON: " << text;
    return parsed.value_or(Json{});
}

TEST(JsonWriter, TrickyStringsRoundTrip) {
    const std::vector<std::string> inputs = {"",
                                             "plain",
                                             "quote \" here",
                                             "back\\slash",
                                             "line\nbreak",
                                             "\x01\x1f",
                                             "tab\tcr\r\b\f",
                                             "caf\xc3\xa9",
                                             "\xe2\x82\xac",
                                             "\xf0\x9f\x98\x80",
                                             "del\x7f",
                                             "/slash",
                                             "\xe2\x80\xa8",
                                             std::string(1, '\0') + "nul"};
    for (const std::string& input : inputs) {
        JsonWriter w;
        w.string(input);
        const Json parsed = parse_ok(w.view());
        EXPECT_EQ(parsed.kind, Json::Kind::String);
        EXPECT_EQ(parsed.text, input) << w.view();
    }
}

TEST(JsonWriter, EscapesExactly) {
    JsonWriter w;
    w.begin_array().string("a\"b\\c\nd\x01\x1f\x7f").string("\xc3\xa9").string("").end_array();
    EXPECT_EQ(w.view(), "[\"a\\\"b\\\\c\\nd\\u0001\\u001f\x7f\",\"\xc3\xa9\",\"\"]");
}

TEST(JsonWriter, InvalidUtf8BecomesReplacementCharacters) {
    const std::string fffd = "\xef\xbf\xbd";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"\xff", fffd},
        {"a\xc3", "a" + fffd},                           // truncated sequence at the end
        {"\xc0\xaf", fffd + fffd},                       // overlong '/'
        {"\xed\xa0\x80", fffd + fffd + fffd},            // UTF-16 surrogate
        {"\xf4\x90\x80\x80", fffd + fffd + fffd + fffd}, // past U+10FFFF
        {"\x80ok", fffd + "ok"},                         // stray continuation byte
        {"\xe2\x82"
         "x",
         fffd + fffd + "x"}, // sequence cut short by ASCII
    };
    for (const auto& [input, expected] : cases) {
        JsonWriter w;
        w.string(input);
        EXPECT_EQ(parse_ok(w.view()).text, expected) << w.view();
    }
}

TEST(JsonWriter, NestedContainersAndCommas) {
    JsonWriter w;
    w.begin_object()
        .key("a")
        .begin_array()
        .value(1)
        .begin_array()
        .value(2)
        .value(3)
        .end_array()
        .begin_object()
        .field("b", nullptr)
        .end_object()
        .end_array()
        .key("c")
        .begin_object()
        .end_object()
        .key("d")
        .begin_array()
        .end_array()
        .field("e", true)
        .field("f", "text")
        .field("g", std::string("str"))
        .field("i", static_cast<const char*>(nullptr))
        .key("h")
        .raw(R"({"pre":[1]})")
        .end_object();
    EXPECT_EQ(w.view(), R"({"a":[1,[2,3],{"b":null}],"c":{},"d":[],"e":true,"f":"text",)"
                        R"("g":"str","i":null,"h":{"pre":[1]}})");
    const Json parsed = parse_ok(w.view());
    EXPECT_EQ(parsed["a"][1][1].text, "3");
    EXPECT_EQ(parsed["a"][2]["b"].kind, Json::Kind::Null);
    EXPECT_EQ(parsed["h"]["pre"][0].text, "1");
}

TEST(JsonWriter, IntegerLimits) {
    JsonWriter w;
    w.begin_array()
        .value(std::numeric_limits<int64_t>::min())
        .value(std::numeric_limits<int64_t>::max())
        .value(std::numeric_limits<uint64_t>::max())
        .value(0)
        .value(-1)
        .value(uint8_t{255})
        .value(int16_t{-32768})
        .value(size_t{42})
        .end_array();
    EXPECT_EQ(w.view(), "[-9223372036854775808,9223372036854775807,18446744073709551615,0,-1,"
                        "255,-32768,42]");
    const Json parsed = parse_ok(w.view());
    EXPECT_EQ(parsed.items.size(), 8u);
}

TEST(JsonWriter, Doubles) {
    JsonWriter w;
    w.begin_array()
        .number(0.1)
        .number(1e300)
        .number(-2.5)
        .number(3.0)
        .number(std::numeric_limits<double>::denorm_min())
        .number(std::nan(""))
        .number(std::numeric_limits<double>::infinity())
        .value(1.25f)
        .end_array();
    const Json parsed = parse_ok(w.view());
    ASSERT_EQ(parsed.items.size(), 8u);
    EXPECT_EQ(std::strtod(parsed[0].text.c_str(), nullptr), 0.1);
    EXPECT_EQ(std::strtod(parsed[1].text.c_str(), nullptr), 1e300);
    EXPECT_EQ(parsed[2].text, "-2.5");
    EXPECT_EQ(parsed[3].text, "3");
    EXPECT_EQ(std::strtod(parsed[4].text.c_str(), nullptr),
              std::numeric_limits<double>::denorm_min());
    EXPECT_EQ(parsed[5].kind, Json::Kind::Null);
    EXPECT_EQ(parsed[6].kind, Json::Kind::Null);
    EXPECT_EQ(parsed[7].text, "1.25");
}

TEST(JsonWriter, ClearKeepsCapacity) {
    JsonWriter w;
    w.begin_object().field("k", std::string(1000, 'x')).end_object();
    const size_t capacity = w.str().capacity();
    w.clear();
    EXPECT_TRUE(w.view().empty());
    EXPECT_EQ(w.str().capacity(), capacity);
    w.value(1); // no leading comma after clear()
    EXPECT_EQ(w.view(), "1");
}

TEST(JsonWriter, KeysAreEscaped) {
    JsonWriter w;
    w.begin_object().field("we\"ird\n", 1).end_object();
    EXPECT_EQ(parse_ok(w.view()).members.at(0).first, "we\"ird\n");
}

TEST(JsonWriter, ProtocolPayloadInFrame) {
    JsonWriter w;
    w.begin_object().field("dropped", uint64_t{7}).end_object();
    std::string out;
    ASSERT_TRUE(append_frame(out, MessageType::Dropped, 0, w.view()));
    EXPECT_EQ(out, bytes({0x06, 0, 0, 0, 0, 0, 0, 0, 0, 13, 0, 0, 0}) + R"({"dropped":7})");
}

} // namespace
} // namespace vkscope

namespace vkscope {
namespace {

TEST(JsonWriter, TakeHandsOverTheDocumentAndStartsAfresh) {
    JsonWriter json;
    json.reserve(64);
    json.field("a", 1).field("b", 2);
    EXPECT_EQ(json.take(), R"("a":1,"b":2)");
    json.begin_object().field("c", 3).end_object();
    EXPECT_EQ(json.str(), R"({"c":3})") << "no comma left over from the taken document";
}

} // namespace
} // namespace vkscope
