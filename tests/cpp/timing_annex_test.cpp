// The timing annex and SUBMIT_DONE on the wire.

#include "core/wire_format.hpp"
#include "instruments/timing/annex.hpp"
#include "instruments/timing/mode.hpp"
#include "json_parse.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace vkscope::timing {
namespace {

using test::Json;
using test::JsonParser;

TEST(TimingAnnex, OkCarriesBothTimes) {
    InstanceTiming t;
    t.status = Outcome::ok;
    t.serialization = "queue";
    t.begin_ns = 1'800'000'000'000'000'001ull;
    t.end_ns = 1'800'000'000'000'000'002ull;
    auto j = JsonParser::parse(timing_annex(t));
    ASSERT_TRUE(j);
    EXPECT_EQ((*j)["gpu_begin_ns"].text, "1800000000000000001");
    EXPECT_EQ((*j)["gpu_end_ns"].text, "1800000000000000002");
    EXPECT_EQ((*j)["serialization"].text, "queue");
    EXPECT_EQ((*j)["timing"].text, "ok");
    EXPECT_EQ((*j)["timing_reason"].kind, Json::Kind::Null);
    EXPECT_EQ(j->members.size(), 4u);
}

TEST(TimingAnnex, UntimedHasNullTimesAndAReason) {
    for (Outcome o : {Outcome::untimed, Outcome::ambiguous}) {
        InstanceTiming t;
        t.status = o;
        t.reason = reason::kSecondaryTwice;
        t.begin_ns = 5; // never sent
        auto j = JsonParser::parse(timing_annex(t));
        ASSERT_TRUE(j);
        EXPECT_EQ((*j)["gpu_begin_ns"].kind, Json::Kind::Null);
        EXPECT_EQ((*j)["gpu_end_ns"].kind, Json::Kind::Null);
        EXPECT_EQ((*j)["timing"].text, o == Outcome::untimed ? "untimed" : "ambiguous");
        EXPECT_EQ((*j)["timing_reason"].text, reason::kSecondaryTwice);
    }
}

TEST(TimingAnnex, SubmitDoneIsASequencedFrame) {
    const std::string f = submit_done_frame(42, 123456789);
    ASSERT_EQ(f.size(), frame_header_size(MessageType::SubmitDone) + 20);
    EXPECT_EQ(static_cast<uint8_t>(f[0]), 0x83);
    uint64_t sequence = 0;
    uint64_t tag = 1;
    std::memcpy(&sequence, f.data() + 1, 8);
    std::memcpy(&tag, f.data() + 9, 8);
    EXPECT_EQ(sequence, 42u);
    EXPECT_EQ(tag, 0u);
    EXPECT_EQ(f.substr(21), R"({"cpu_ns":123456789})");
}

} // namespace
} // namespace vkscope::timing
