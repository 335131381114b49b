#include "timeline/outgoing.hpp"

#include "core/query_reads.hpp"
#include "timeline/messages.hpp"

#include <gtest/gtest.h>

namespace vkscope::timeline {
namespace {

std::shared_ptr<Workload> dispatch(uint64_t tag) {
    auto w = std::make_shared<Workload>();
    w->tag = tag;
    w->type = WorkloadType::dispatch;
    w->device = 3;
    w->api = "vkCmdDispatch";
    w->size = Size3{static_cast<uint32_t>(tag), 1, 1};
    w->local_size = Size3{64, 1, 1};
    return w;
}

TEST(SubmitMessages, EncodesTheBytesOfEachMessageInOrder) {
    auto pass = std::make_shared<Workload>();
    pass->tag = 7;
    pass->type = WorkloadType::render_pass;
    pass->fields = R"("device":3,"type":"renderpass","api":"vkCmdBeginRenderPass")";
    pass->draws = 4;
    SubmitMessages record;
    record.workloads = {dispatch(5), pass, dispatch(6)};
    record.annexes.push_back({40, 2, std::nullopt});
    record.annexes.push_back({41, 7, 12});
    record.has_submit = true;
    record.submit = 41;
    record.description.device = 3;
    record.description.queue = 1;
    record.description.frame = 9;
    record.description.s_label = 40;
    record.listed = {{5, 1}, {7, 1}, {6, 2}};
    EXPECT_EQ(record.messages(), 6u);

    std::string expected = workload_frame(*record.workloads[0]) +
                           workload_frame(*record.workloads[1]) +
                           workload_frame(*record.workloads[2]);
    expected += annex_frame(40, 2, R"({"draws":null,"draws_lost":true})");
    expected += annex_frame(41, 7, R"({"draws":12})");
    expected += submit_frame(41, record.description, record.listed);
    std::string out = "kept";
    EXPECT_EQ(record.encode(out), 0u);
    EXPECT_EQ(out, "kept" + expected);
    // The byte bound's estimate is of the right size.
    EXPECT_GT(record.bytes(), expected.size() / 2);
    EXPECT_LT(record.bytes(), expected.size() * 3);
}

TEST(SubmitMessages, ACommandBufferWithNothingNewSendsItsSubmitAlone) {
    SubmitMessages record;
    record.has_submit = true;
    record.submit = 2;
    record.listed = {{5, 0}};
    std::string out;
    EXPECT_EQ(record.encode(out), 0u);
    EXPECT_EQ(out, submit_frame(2, record.description, record.listed));
    EXPECT_EQ(record.messages(), 1u);
}

TEST(SubmitMessages, LeftOutWorkloadsGetEachInstrumentsAnnexAfterTheSubmit) {
    SubmitMessages record;
    record.has_submit = true;
    record.submit = 8;
    record.listed = {{5, 0, true}, {6, 0, false}, {7, 1, true}};
    record.left_out = 2;
    record.left_out_annexes = std::make_shared<const std::vector<std::string>>(
        std::vector<std::string>{R"({"timing":"untimed"})", R"({"counters":null})"});
    EXPECT_EQ(record.messages(), 5u);
    std::string expected = submit_frame(8, record.description, record.listed);
    expected += annex_frame(8, 5, R"({"timing":"untimed"})");
    expected += annex_frame(8, 5, R"({"counters":null})");
    expected += annex_frame(8, 7, R"({"timing":"untimed"})");
    expected += annex_frame(8, 7, R"({"counters":null})");
    std::string out;
    EXPECT_EQ(record.encode(out), 0u);
    EXPECT_EQ(out, expected);
    EXPECT_GT(record.bytes(), expected.size() / 2);
}

TEST(FrameMessage, EncodesTheFrameOfTheEndItCopied) {
    BudgetFrame budget;
    budget.state = BudgetState::measured;
    budget.workloads = 200;
    budget.measured = 10;
    budget.base_ns = 1000;
    FrameMessage record(4, 3, 1, 99, "present", true, FrameCompiles{2, 1}, budget);
    std::string out = "kept";
    EXPECT_EQ(record.messages(), 1u);
    EXPECT_EQ(record.encode(out), 0u);
    EXPECT_EQ(out, "kept" + frame_frame(4, 3, 1, 99, "present", true, {2, 1}, budget));
}

TEST(SubmitMessages, AMessageTooLargeForTheWireIsCountedNotSent) {
    auto huge = dispatch(1);
    huge->api = nullptr;
    huge->type = WorkloadType::render_pass;
    huge->fields = R"("api":")" + std::string(protocol::kMaxPayloadBytes, 'x') + "\"";
    SubmitMessages record;
    record.workloads = {huge, dispatch(2)};
    std::string out;
    EXPECT_EQ(record.encode(out), 1u);
    EXPECT_EQ(out, workload_frame(*record.workloads[1]));
}

TEST(LabelsMessage, EncodesTheLabelsFrame) {
    LabelsMessage record(2, 9, {"outer", "inner"});
    std::string out;
    EXPECT_EQ(record.encode(out), 0u);
    EXPECT_EQ(out, labels_frame(2, 9, {"outer", "inner"}));
    EXPECT_EQ(record.messages(), 1u);
}

TEST(QueryReads, FindsRepeatsAndLaysBlocksOutInOrder) {
    QueryBlock a, b;
    a.used = 10;
    b.used = 3;
    QueryReads reads;
    EXPECT_TRUE(reads.first_use(&a, 0));
    EXPECT_TRUE(reads.first_use(&b, 63));
    EXPECT_TRUE(reads.first_use(&a, 1));
    EXPECT_FALSE(reads.first_use(&a, 0));
    EXPECT_FALSE(reads.first_use(&b, 63));
    EXPECT_EQ(reads.lay_out(0), 0u) << "seen is not read";
    reads.add(&b);
    reads.add(&a);
    reads.add(&b);
    EXPECT_EQ(reads.lay_out(100), 13u);
    // In the order they were first met, seen or read.
    EXPECT_EQ(reads.base(&a), 100u);
    EXPECT_EQ(reads.base(&b), 110u);
    EXPECT_FALSE(reads.one_run());
    a.one_run = b.one_run = true;
    EXPECT_TRUE(reads.one_run());
    reads.clear();
    EXPECT_TRUE(reads.first_use(&a, 0));
    EXPECT_TRUE(reads.blocks().size() == 1);
}

} // namespace
} // namespace vkscope::timeline
