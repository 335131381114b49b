// The recorder: where tags and parameter copies go, and what the command stream holds.

#include "timeline/recorder.hpp"

#include "timeline_fakes.hpp"

#include <gtest/gtest.h>

namespace vkscope::timeline {
namespace {

using test::FakeRecordSink;

std::vector<Op> ops(const Recorder& r) {
    std::vector<Op> out;
    for (const Command& c : r.stream()) {
        out.push_back(c.op);
    }
    return out;
}

std::string tag(const Workload& w) {
    std::string name = "t";
    name += std::to_string(w.tag);
    return name;
}

TEST(TimelineRecorder, TagWrapsTheWorkload) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, true);
    Workload& w = r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
    r.end();
    EXPECT_EQ(sink.events, (std::vector<std::string>{tag(w), "end"}));
    EXPECT_EQ(ops(r), (std::vector<Op>{Op::compute_dispatch_begin, Op::workload_end}));
    EXPECT_TRUE(r.has_workloads());
    EXPECT_FALSE(r.needs_submit_label()) << "one-time, nothing indirect, nothing split";
}

TEST(TimelineRecorder, TagsAreUniqueAndGrowWithinAThread) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, true);
    Workload& a = r.begin_workload(WorkloadType::buffer_transfer, sink);
    r.end_workload(sink);
    Workload& b = r.begin_workload(WorkloadType::image_transfer, sink);
    r.end_workload(sink);
    EXPECT_GT(b.tag, a.tag);
    EXPECT_NE(a.tag, 0u);
}

TEST(TimelineRecorder, IndirectParametersAreCopiedBeforeTheTag) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, true);
    const ParameterRequest args{.buffer = 7, .offset = 16, .bytes = 12};
    Workload& w = r.begin_workload(WorkloadType::dispatch, sink, &args);
    r.end_workload(sink);
    EXPECT_EQ(sink.events, (std::vector<std::string>{"copy 7@16", tag(w), "end"}));
    EXPECT_EQ(ops(r), (std::vector<Op>{Op::compute_dispatch_begin, Op::indirect_readback,
                                       Op::workload_end}));
    EXPECT_TRUE(r.needs_submit_label()) << "the annex names a submission";
}

TEST(TimelineRecorder, NoReadbackWhenTheCopyIsImpossible) {
    FakeRecordSink sink;
    sink.copying = false;
    Recorder r;
    r.begin(true, true);
    const ParameterRequest args{.buffer = 7, .offset = 0, .bytes = 12};
    r.begin_workload(WorkloadType::dispatch, sink, &args);
    r.end_workload(sink);
    EXPECT_EQ(ops(r), (std::vector<Op>{Op::compute_dispatch_begin, Op::workload_end}));
    EXPECT_FALSE(r.needs_submit_label());
}

TEST(TimelineRecorder, ReusableCommandBufferNeedsASubmitLabel) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, false);
    EXPECT_FALSE(r.needs_submit_label()) << "no workload, nothing to name";
    r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
    EXPECT_TRUE(r.needs_submit_label());
}

TEST(TimelineRecorder, RenderPassCountsItsDraws) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, true);
    r.begin_render_pass("", {}, sink);
    r.count_draws(3);
    r.count_draws(4);
    r.end_render_pass(sink);
    r.end();
    ASSERT_EQ(r.stream().size(), 2u);
    const Workload& w = *r.stream()[0].workload;
    EXPECT_EQ(w.draws, 7u);
    EXPECT_FALSE(w.split);
    EXPECT_EQ(sink.events, (std::vector<std::string>{tag(w), "end"}));
}

TEST(TimelineRecorder, SuspendAndResumeInOneCommandBufferIsOneInstance) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, true);
    r.begin_render_pass("", {.suspending = true}, sink);
    r.count_draws(2);
    r.end_render_pass(sink);
    r.begin_render_pass("", {.resuming = true, .suspending = true}, sink);
    r.count_draws(3);
    r.end_render_pass(sink);
    r.begin_render_pass("", {.resuming = true}, sink);
    r.count_draws(4);
    r.end_render_pass(sink);
    r.end();
    EXPECT_EQ(ops(r), (std::vector<Op>{Op::render_pass_begin, Op::workload_end}));
    const Workload& w = *r.stream()[0].workload;
    EXPECT_EQ(w.draws, 9u);
    EXPECT_FALSE(w.split);
    EXPECT_EQ(sink.events, (std::vector<std::string>{tag(w), "end"}))
        << "one tag from the first begin to the final end";
    EXPECT_FALSE(r.needs_submit_label());
}

TEST(TimelineRecorder, RenderPassSplitOverThreeCommandBuffers) {
    FakeRecordSink sa, sb, sc;
    Recorder a, b, c;
    a.begin(true, true);
    a.begin_render_pass("", {.suspending = true}, sa);
    a.count_draws(2);
    a.end_render_pass(sa);
    a.end();
    b.begin(true, true);
    b.begin_render_pass("", {.resuming = true, .suspending = true}, sb);
    b.count_draws(3);
    b.end_render_pass(sb);
    b.end();
    c.begin(true, true);
    c.begin_render_pass("", {.resuming = true}, sc);
    c.count_draws(4);
    c.end_render_pass(sc);
    c.end();

    const Workload& w = *a.stream()[0].workload;
    EXPECT_TRUE(w.split);
    EXPECT_EQ(sa.events, (std::vector<std::string>{tag(w)})) << "not closed on suspend";
    EXPECT_TRUE(sb.events.empty()) << "no tag on resume";
    EXPECT_EQ(sc.events, (std::vector<std::string>{"end"})) << "closed after the final end";
    EXPECT_EQ(ops(a), (std::vector<Op>{Op::render_pass_begin, Op::workload_end}));
    EXPECT_EQ(ops(b), (std::vector<Op>{Op::render_pass_resume, Op::workload_end}));
    EXPECT_EQ(ops(c), (std::vector<Op>{Op::render_pass_resume, Op::workload_end}));
    EXPECT_TRUE(a.needs_submit_label());
    EXPECT_TRUE(b.needs_submit_label());
    EXPECT_TRUE(c.needs_submit_label());
    EXPECT_TRUE(a.stream()[0].part->suspending);
    EXPECT_TRUE(b.stream()[0].part->suspending);
    EXPECT_FALSE(c.stream()[0].part->suspending);
}

TEST(TimelineRecorder, SecondaryDrawsCountOncePerExecution) {
    FakeRecordSink sink;
    Recorder secondary;
    secondary.begin(false, false);
    secondary.count_draws(5);
    secondary.end();

    Recorder primary;
    primary.begin(true, true);
    primary.begin_render_pass("", {}, sink);
    primary.execute(secondary);
    primary.execute(secondary);
    primary.end_render_pass(sink);
    primary.end();
    EXPECT_EQ(primary.stream()[0].workload->draws, 10u);
}

TEST(TimelineRecorder, SecondaryWorkloadsAreInlinedEachTime) {
    FakeRecordSink sink;
    Recorder secondary;
    secondary.begin(false, true);
    Workload& w = secondary.begin_workload(WorkloadType::dispatch, sink);
    secondary.end_workload(sink);
    secondary.end();

    Recorder primary;
    primary.begin(true, true);
    primary.execute(secondary);
    primary.execute(secondary);
    primary.end();
    ASSERT_EQ(primary.stream().size(), 4u);
    EXPECT_EQ(primary.stream()[0].workload.get(), &w);
    EXPECT_EQ(primary.stream()[2].workload.get(), &w);
    EXPECT_TRUE(primary.has_workloads());
}

TEST(TimelineRecorder, ReusableSecondaryMakesThePrimaryNeedASubmitLabel) {
    FakeRecordSink sink;
    Recorder secondary;
    secondary.begin(false, false);
    secondary.begin_workload(WorkloadType::dispatch, sink);
    secondary.end_workload(sink);
    secondary.end();
    Recorder primary;
    primary.begin(true, true);
    primary.execute(secondary);
    EXPECT_TRUE(primary.needs_submit_label());
}

TEST(TimelineRecorder, IndirectCountsAreCopiedAfterTheRenderPass) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, true);
    r.begin_render_pass("", {}, sink);
    r.count_draws(1);
    r.count_indirect_draws({.buffer = 9, .offset = 4, .bytes = 4}, 100);
    r.end_render_pass(sink);
    r.end();
    const Command& begin = r.stream()[0];
    EXPECT_EQ(sink.events, (std::vector<std::string>{tag(*begin.workload), "end", "copy 9@4"}));
    EXPECT_TRUE(begin.workload->draws_deferred);
    ASSERT_EQ(begin.part->counts.size(), 1u);
    EXPECT_EQ(begin.part->counts[0].max_draws, 100u);
    EXPECT_EQ(begin.part->counts[0].kind, ParameterKind::draw_count);
}

TEST(TimelineRecorder, SecondaryIndirectCountsAreCopiedByThePrimary) {
    FakeRecordSink secondary_sink, sink;
    Recorder secondary;
    secondary.begin(false, true);
    secondary.count_indirect_draws({.buffer = 3, .offset = 0, .bytes = 4}, 8);
    secondary.end();
    EXPECT_TRUE(secondary_sink.events.empty()) << "no copy inside the render pass";

    Recorder primary;
    primary.begin(true, true);
    primary.begin_render_pass("", {}, sink);
    primary.execute(secondary);
    primary.execute(secondary);
    primary.end_render_pass(sink);
    EXPECT_EQ(primary.stream()[0].part->counts.size(), 2u) << "one slot per execution";
}

TEST(TimelineRecorder, CountsOfASuspendedPartAreLost) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, true);
    r.begin_render_pass("", {.suspending = true}, sink);
    r.count_indirect_draws({.buffer = 9, .offset = 4, .bytes = 4}, 100);
    r.end_render_pass(sink);
    r.end();
    EXPECT_TRUE(r.stream()[0].part->counts_lost);
    EXPECT_EQ(sink.events.size(), 1u) << "only the tag: no copy may follow a suspension";
}

TEST(TimelineRecorder, BeginResetsTheRecording) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, false);
    r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
    r.begin(true, true);
    EXPECT_TRUE(r.stream().empty());
    EXPECT_FALSE(r.has_workloads());
    EXPECT_FALSE(r.needs_submit_label());
}

} // namespace
} // namespace vkscope::timeline
