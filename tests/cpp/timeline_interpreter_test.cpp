// The interpreter: label stacks that belong to the queue, split render pass totals, workloads sent
// once, submissions told apart.

#include "timeline/interpreter.hpp"

#include "json_parse.hpp"
#include "timeline_fakes.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace vkscope::timeline {
namespace {

using test::FakeInterpreterSink;
using test::FakeRecordSink;
using vkscope::test::JsonParser;

using Stack = std::vector<std::string>;

struct Queue {
    LabelInterner labels;
    Interpreter interpreter{labels};
    FakeInterpreterSink sink;
    uint64_t next_submit = 100;

    SubmitRecord submit(const Recorder& r) {
        SubmitRecord out;
        out.submit = next_submit++;
        interpreter.run(r.stream(), sink, out);
        return out;
    }
};

void dispatch(Recorder& r, FakeRecordSink& sink) {
    r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
}

TEST(TimelineInterpreter, LabelStacksFollowTheQueueAcrossCommandBuffers) {
    FakeRecordSink rs;
    Recorder first, second;
    first.begin(true, true);
    first.marker_begin("frame");
    first.marker_begin("compute");
    dispatch(first, rs);
    first.marker_end();
    first.marker_begin("cross"); // ended by the next command buffer
    first.end();
    second.begin(true, true);
    dispatch(second, rs);
    second.marker_end();
    second.marker_end();
    dispatch(second, rs);
    second.end();

    Queue q;
    q.interpreter.queue_label_begin("queue", q.sink);
    const SubmitRecord a = q.submit(first);
    const SubmitRecord b = q.submit(second);
    q.interpreter.queue_label_end();

    ASSERT_EQ(a.workloads.size(), 1u);
    ASSERT_EQ(b.workloads.size(), 2u);
    EXPECT_EQ(q.sink.stack(a.workloads[0].labels), (Stack{"queue", "frame", "compute"}));
    EXPECT_EQ(q.sink.stack(b.workloads[0].labels), (Stack{"queue", "frame", "cross"}));
    EXPECT_EQ(q.sink.stack(b.workloads[1].labels), (Stack{"queue"}));
    EXPECT_EQ(q.interpreter.label_stack(), LabelInterner::kEmpty);
}

TEST(TimelineInterpreter, LabelStacksAreInternedOncePerDevice) {
    FakeRecordSink rs;
    Recorder r;
    r.begin(true, false);
    r.marker_begin("a");
    dispatch(r, rs);
    r.marker_end();
    r.end();
    LabelInterner shared;
    FakeInterpreterSink sink;
    Interpreter q1(shared), q2(shared);
    SubmitRecord s1, s2;
    s1.submit = 1;
    s2.submit = 2;
    q1.run(r.stream(), sink, s1);
    q2.run(r.stream(), sink, s2);
    EXPECT_EQ(sink.label_stacks.size(), 1u) << "LABELS sent once for both queues";
    EXPECT_EQ(s1.workloads[0].labels, s2.workloads[0].labels);
}

// A sink that sends what it is given later, as the real one does (a record posted once the
// command buffer is done), and marks the workloads sent then.
class DeferredSink final : public FakeInterpreterSink {
public:
    bool workload(const std::shared_ptr<Workload>& w) override {
        FakeInterpreterSink::workload(w);
        held.push_back(w.get());
        return false;
    }
    bool holds(const Workload& w) const override {
        return std::find(held.begin(), held.end(), &w) != held.end();
    }
    void posted() {
        for (Workload* w : held) {
            mark_sent(*w);
        }
        held.clear();
    }
    std::vector<Workload*> held;
};

TEST(TimelineInterpreter, ASecondaryExecutedTwiceIsDescribedOnceWhenTheSinkSendsLater) {
    FakeRecordSink rs;
    Recorder secondary;
    secondary.begin(false, false);
    dispatch(secondary, rs);
    secondary.end();
    Recorder primary;
    primary.begin(true, true);
    primary.execute(secondary);
    primary.execute(secondary);
    primary.end();
    LabelInterner labels;
    Interpreter interpreter(labels);
    DeferredSink sink;
    SubmitRecord out;
    out.submit = 1;
    interpreter.run(primary.stream(), sink, out); // must not wait for itself
    EXPECT_EQ(sink.sent.size(), 1u);
    EXPECT_EQ(out.workloads.size(), 2u) << "both executions are listed";
    sink.posted();
    SubmitRecord again;
    again.submit = 2;
    interpreter.run(primary.stream(), sink, again);
    EXPECT_EQ(sink.sent.size(), 1u) << "sent once, whichever submission";
    EXPECT_EQ(again.workloads.size(), 2u);
}

TEST(TimelineInterpreter, UnbalancedEndLeavesTheStackEmpty) {
    Recorder r;
    r.begin(true, true);
    r.marker_end();
    r.end();
    Queue q;
    q.submit(r);
    EXPECT_EQ(q.interpreter.label_stack(), LabelInterner::kEmpty);
}

TEST(TimelineInterpreter, SplitRenderPassTotalIsAnAnnexOfTheBeginningSubmission) {
    FakeRecordSink rs;
    Recorder a, b, c;
    a.begin(true, true);
    a.begin_render_pass("", {.suspending = true}, rs);
    a.count_draws(2);
    a.end_render_pass(rs);
    a.end();
    b.begin(true, true);
    b.begin_render_pass("", {.resuming = true, .suspending = true}, rs);
    b.count_draws(3);
    b.end_render_pass(rs);
    b.end();
    c.begin(true, true);
    c.begin_render_pass("", {.resuming = true}, rs);
    c.count_draws(4);
    c.end_render_pass(rs);
    c.end();

    Queue q;
    const SubmitRecord ra = q.submit(a);
    const SubmitRecord rb = q.submit(b);
    EXPECT_TRUE(q.sink.annexes.empty()) << "not before the final end";
    const SubmitRecord rc = q.submit(c);
    const uint64_t tag = a.stream()[0].workload->tag;
    ASSERT_EQ(ra.workloads.size(), 1u);
    EXPECT_EQ(ra.workloads[0].tag, tag);
    EXPECT_TRUE(rb.workloads.empty()) << "a resumed part is no new workload";
    EXPECT_TRUE(rc.workloads.empty());
    ASSERT_EQ(q.sink.annexes.size(), 1u);
    const auto& [submit, annex_tag, json] = q.sink.annexes[0];
    EXPECT_EQ(submit, ra.submit);
    EXPECT_EQ(annex_tag, tag);
    auto parsed = JsonParser::parse(json);
    ASSERT_TRUE(parsed);
    EXPECT_EQ((*parsed)["draws"].text, "9");
}

TEST(TimelineInterpreter, WholeRenderPassNeedsNoAnnex) {
    FakeRecordSink rs;
    Recorder r;
    r.begin(true, true);
    r.begin_render_pass("", {}, rs);
    r.count_draws(8);
    r.end_render_pass(rs);
    r.end();
    Queue q;
    const SubmitRecord s = q.submit(r);
    EXPECT_EQ(s.workloads.size(), 1u);
    EXPECT_TRUE(q.sink.annexes.empty());
    EXPECT_TRUE(s.readbacks.empty());
}

TEST(TimelineInterpreter, SecondaryExecutedTwiceAppearsTwice) {
    FakeRecordSink rs;
    Recorder draws;
    draws.begin(false, false);
    draws.count_draws(8);
    draws.end();
    Recorder compute;
    compute.begin(false, true);
    dispatch(compute, rs);
    compute.end();
    Recorder primary;
    primary.begin(true, true);
    primary.begin_render_pass("", {}, rs);
    primary.execute(draws);
    primary.execute(draws);
    primary.end_render_pass(rs);
    primary.execute(compute);
    primary.execute(compute);
    primary.end();

    Queue q;
    const SubmitRecord s = q.submit(primary);
    ASSERT_EQ(s.workloads.size(), 3u);
    EXPECT_EQ(primary.stream()[0].workload->draws, 16u);
    const uint64_t dispatch_tag = compute.stream()[0].workload->tag;
    EXPECT_EQ(s.workloads[1].tag, dispatch_tag);
    EXPECT_EQ(s.workloads[2].tag, dispatch_tag);
    EXPECT_EQ(q.sink.sent.size(), 2u) << "each workload's WORKLOAD once";
}

TEST(TimelineInterpreter, ReusedCommandBufferSendsItsWorkloadOnce) {
    FakeRecordSink rs;
    Recorder r;
    r.begin(true, false);
    dispatch(r, rs);
    r.end();
    Queue q;
    std::vector<uint64_t> submits;
    for (int i = 0; i < 3; ++i) {
        const SubmitRecord s = q.submit(r);
        ASSERT_EQ(s.workloads.size(), 1u);
        EXPECT_EQ(s.workloads[0].tag, r.stream()[0].workload->tag);
        submits.push_back(s.submit);
    }
    EXPECT_EQ(q.sink.sent.size(), 1u);
    EXPECT_NE(submits[0], submits[1]);
    EXPECT_NE(submits[1], submits[2]);
}

TEST(TimelineInterpreter, IndirectDispatchBecomesAReadback) {
    FakeRecordSink rs;
    Recorder r;
    r.begin(true, true);
    const ParameterRequest args{.buffer = 1, .offset = 0, .bytes = 12};
    r.begin_workload(WorkloadType::dispatch, rs, &args);
    r.end_workload(rs);
    r.end();
    Queue q;
    const SubmitRecord s = q.submit(r);
    ASSERT_EQ(s.readbacks.size(), 1u);
    EXPECT_EQ(s.readbacks[0].submit, s.submit);
    EXPECT_EQ(s.readbacks[0].workload->tag, s.workloads[0].tag);
    EXPECT_FALSE(s.readbacks[0].ambiguous);
}

TEST(TimelineInterpreter, IndirectSecondaryExecutedTwiceIsFlaggedNotGuessed) {
    FakeRecordSink rs;
    Recorder secondary;
    secondary.begin(false, false);
    const ParameterRequest args{.buffer = 1, .offset = 0, .bytes = 12};
    secondary.begin_workload(WorkloadType::dispatch, rs, &args);
    secondary.end_workload(rs);
    secondary.end();
    Recorder primary;
    primary.begin(true, true);
    primary.execute(secondary);
    primary.execute(secondary);
    primary.end();
    Queue q;
    const SubmitRecord s = q.submit(primary);
    ASSERT_EQ(s.readbacks.size(), 1u);
    EXPECT_TRUE(s.readbacks[0].ambiguous);
}

TEST(TimelineInterpreter, RenderPassWithIndirectCountsReadsBackItsTotal) {
    FakeRecordSink rs;
    Recorder r;
    r.begin(true, true);
    r.begin_render_pass("", {}, rs);
    r.count_draws(2);
    r.count_indirect_draws({.buffer = 5, .offset = 0, .bytes = 4}, 10);
    r.end_render_pass(rs);
    r.end();
    Queue q;
    const SubmitRecord s = q.submit(r);
    ASSERT_EQ(s.readbacks.size(), 1u);
    EXPECT_EQ(s.readbacks[0].draws, 2u);
    EXPECT_EQ(s.readbacks[0].copies.size(), 1u);
    EXPECT_TRUE(q.sink.annexes.empty());
}

TEST(TimelineInterpreter, LostCountsAreReportedAsUnknown) {
    FakeRecordSink rs;
    Recorder a, b;
    a.begin(true, true);
    a.begin_render_pass("", {.suspending = true}, rs);
    a.count_indirect_draws({.buffer = 5, .offset = 0, .bytes = 4}, 10);
    a.end_render_pass(rs);
    a.end();
    b.begin(true, true);
    b.begin_render_pass("", {.resuming = true}, rs);
    b.count_draws(1);
    b.end_render_pass(rs);
    b.end();
    Queue q;
    q.submit(a);
    q.submit(b);
    ASSERT_EQ(q.sink.annexes.size(), 1u);
    auto parsed = JsonParser::parse(std::get<2>(q.sink.annexes[0]));
    ASSERT_TRUE(parsed);
    EXPECT_EQ((*parsed)["draws"].kind, vkscope::test::Json::Kind::Null);
    EXPECT_TRUE((*parsed)["draws_lost"].boolean);
}

// What scan() finds without interpreting a stream is what run() leaves: the submission decides
// where its layer command buffers go from it before the driver's call, and runs the streams after.
SubmitRecord scanned_then_run(Queue& q, const Recorder& r) {
    QueueShape shape = q.interpreter.shape();
    uint32_t tag_ends = 0;
    EXPECT_TRUE(Interpreter::scan(r.stream(), false, shape, tag_ends));
    SubmitRecord out = q.submit(r);
    const QueueShape after = q.interpreter.shape();
    EXPECT_EQ(shape.labels, after.labels);
    EXPECT_EQ(shape.render_pass_open(), after.render_pass_open());
    EXPECT_EQ(shape.depth(), after.depth());
    EXPECT_EQ(shape.part, after.part);
    EXPECT_EQ(tag_ends, out.deferred_tag_ends);
    return out;
}

TEST(TimelineInterpreter, ScanLeavesTheQueueInTheShapeRunLeaves) {
    FakeRecordSink rs;
    Recorder labels, ends;
    labels.begin(true, true);
    labels.marker_begin("frame");
    dispatch(labels, rs);
    labels.marker_begin("cross");
    labels.end();
    ends.begin(true, true);
    ends.marker_end();
    ends.marker_end();
    ends.marker_end(); // one more than were open
    dispatch(ends, rs);
    ends.end();
    RecordOptions deferring;
    deferring.defer_foreign_ends = true;
    Recorder a, b, c;
    a.begin(true, true);
    a.marker_begin("pass");
    a.begin_render_pass("", {.suspending = true}, rs);
    a.end_render_pass(rs);
    a.end();
    b.begin(true, true, deferring);
    b.begin_render_pass("", {.resuming = true, .suspending = true}, rs);
    b.end_render_pass(rs);
    b.end();
    c.begin(true, true, deferring);
    c.begin_render_pass("", {.resuming = true}, rs);
    c.count_draws(1);
    c.end_render_pass(rs);
    c.marker_end();
    c.end();

    Queue q;
    q.interpreter.queue_label_begin("queue", q.sink);
    for (const Recorder* r : {&labels, &ends, &a, &b, &c, &labels}) {
        scanned_then_run(q, *r);
    }
    EXPECT_EQ(q.interpreter.shape().labels, 2u);
}

TEST(TimelineInterpreter, ScanLeavesReadbacksToRun) {
    FakeRecordSink rs;
    Recorder indirect;
    indirect.begin(true, true);
    const ParameterRequest args{.buffer = 1, .offset = 0, .bytes = 12};
    indirect.begin_workload(WorkloadType::dispatch, rs, &args);
    indirect.end_workload(rs);
    indirect.end();
    Recorder counts;
    counts.begin(true, true);
    counts.begin_render_pass("", {}, rs);
    counts.count_indirect_draws({.buffer = 5, .offset = 0, .bytes = 4}, 10);
    counts.end_render_pass(rs);
    counts.end();
    QueueShape shape;
    uint32_t tag_ends = 0;
    EXPECT_FALSE(Interpreter::scan(indirect.stream(), false, shape, tag_ends));
    shape = {};
    EXPECT_TRUE(Interpreter::scan(indirect.stream(), true, shape, tag_ends))
        << "outside captured frames nothing is read back";
    shape = {};
    EXPECT_FALSE(Interpreter::scan(counts.stream(), true, shape, tag_ends));
}

} // namespace
} // namespace vkscope::timeline
