// Recordings made outside captured frames: workloads are logged, not turned into commands, until a
// captured frame submits the command buffer; frames that are not captured keep only the queue's
// label stack up to date and send nothing.

#include "timeline/interpreter.hpp"
#include "timeline/recorder.hpp"

#include "timeline_fakes.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace vkscope::timeline {
namespace {

using test::FakeInterpreterSink;
using test::FakeRecordSink;

RecordOptions deferred() {
    RecordOptions o;
    o.tags = false; // nothing is written outside captured frames
    o.defer_workloads = true;
    o.device = 42;
    return o;
}

std::vector<Op> ops(const Recorder& r) {
    std::vector<Op> out;
    for (const Command& c : r.stream()) {
        out.push_back(c.op);
    }
    return out;
}

void log_dispatch(Recorder& r, uint32_t x) {
    WorkloadInfo info;
    info.api = "vkCmdDispatch";
    info.size = Size3{x, 1, 1};
    r.log_workload(WorkloadType::dispatch, info);
}

std::vector<std::shared_ptr<const Workload>> workloads(const Recorder& r) {
    std::vector<std::shared_ptr<const Workload>> out;
    for (const Command& c : r.stream()) {
        if (c.workload) {
            out.push_back(c.workload);
        }
    }
    return out;
}

TEST(TimelineDeferred, TheLogKeepsWhatEachKindOfWorkloadSays) {
    Recorder r;
    r.begin(true, false, deferred());
    WorkloadInfo dispatch;
    dispatch.api = "vkCmdDispatchBase";
    dispatch.size = Size3{4, 5, 6};
    dispatch.base = Size3{1, 2, 3};
    dispatch.local_size = Size3{64, 1, 1};
    r.log_workload(WorkloadType::dispatch, dispatch);
    WorkloadInfo indirect; // group counts read by the GPU, local size unknown
    indirect.api = "vkCmdDispatchIndirect";
    r.log_workload(WorkloadType::dispatch, indirect);
    WorkloadInfo copy;
    copy.api = "vkCmdCopyBuffer";
    copy.kind = "copy";
    copy.amount = uint64_t{1} << 40;
    r.log_workload(WorkloadType::buffer_transfer, copy);
    WorkloadInfo build; // no amount
    build.api = "vkCmdBuildAccelerationStructuresKHR";
    build.kind = "build";
    r.log_workload(WorkloadType::acceleration_structure, build);
    r.end();
    r.materialize();
    const auto w = workloads(r);
    ASSERT_EQ(w.size(), 4u);
    EXPECT_EQ(w[0]->type, WorkloadType::dispatch);
    EXPECT_EQ(w[0]->size, (Size3{4, 5, 6}));
    EXPECT_EQ(w[0]->base, (Size3{1, 2, 3}));
    EXPECT_EQ(w[0]->local_size, (Size3{64, 1, 1}));
    EXPECT_STREQ(w[0]->api, "vkCmdDispatchBase");
    EXPECT_FALSE(w[1]->size.has_value());
    EXPECT_FALSE(w[1]->local_size.has_value());
    EXPECT_EQ(w[2]->type, WorkloadType::buffer_transfer);
    EXPECT_STREQ(w[2]->kind, "copy");
    EXPECT_EQ(w[2]->amount, uint64_t{1} << 40);
    EXPECT_FALSE(w[2]->size.has_value());
    EXPECT_EQ(w[3]->type, WorkloadType::acceleration_structure);
    EXPECT_STREQ(w[3]->kind, "build");
    EXPECT_FALSE(w[3]->amount.has_value());
}

TEST(TimelineDeferred, LoggedWorkloadsBecomeCommandsInRecordingOrder) {
    FakeRecordSink sink;
    Recorder r;
    r.begin(true, false, deferred());
    r.marker_begin("outer");
    log_dispatch(r, 1);
    r.begin_render_pass("", {}, sink);
    r.count_draws(3);
    r.end_render_pass(sink);
    log_dispatch(r, 2);
    r.marker_end();
    log_dispatch(r, 3);
    r.end();
    EXPECT_TRUE(sink.events.empty()) << "nothing written into the command buffer";
    EXPECT_TRUE(r.has_workloads());
    // Before: only what the queue's state needs (labels, the render pass).
    EXPECT_EQ(ops(r), (std::vector<Op>{Op::marker_begin, Op::render_pass_begin, Op::workload_end,
                                       Op::marker_end}));
    r.materialize();
    EXPECT_EQ(ops(r), (std::vector<Op>{Op::marker_begin, Op::compute_dispatch_begin,
                                       Op::workload_end, Op::render_pass_begin, Op::workload_end,
                                       Op::compute_dispatch_begin, Op::workload_end, Op::marker_end,
                                       Op::compute_dispatch_begin, Op::workload_end}));
    std::vector<uint32_t> sizes;
    for (const Command& c : r.stream()) {
        if (c.op == Op::compute_dispatch_begin) {
            const Workload& w = *c.workload;
            sizes.push_back((*w.size)[0]);
            EXPECT_FALSE(w.tagged);
            EXPECT_EQ(w.device, 42u);
            EXPECT_STREQ(w.api, "vkCmdDispatch");
            EXPECT_NE(w.tag, 0u);
        }
    }
    EXPECT_EQ(sizes, (std::vector<uint32_t>{1, 2, 3}));
    const std::vector<Op> once = ops(r);
    r.materialize();
    EXPECT_EQ(ops(r), once) << "materializing twice changes nothing";
}

TEST(TimelineDeferred, ResetDropsTheLog) {
    Recorder r;
    r.begin(true, true, deferred());
    log_dispatch(r, 1);
    r.begin(true, true);
    r.materialize();
    EXPECT_TRUE(r.stream().empty());
    EXPECT_FALSE(r.has_workloads());
}

TEST(TimelineDeferred, ASecondaryIsMaterializedWhenExecuted) {
    Recorder secondary;
    secondary.begin(false, false, deferred());
    log_dispatch(secondary, 7);
    secondary.end();
    FakeRecordSink sink;
    Recorder primary;
    primary.begin(true, true);
    primary.execute(secondary);
    primary.execute(secondary);
    primary.end();
    ASSERT_EQ(ops(primary), (std::vector<Op>{Op::compute_dispatch_begin, Op::workload_end,
                                             Op::compute_dispatch_begin, Op::workload_end}));
    EXPECT_EQ(primary.stream()[0].workload, primary.stream()[2].workload)
        << "one workload, executed twice";
}

TEST(TimelineDeferred, ConcurrentSubmissionsMaterializeOnce) {
    Recorder r;
    r.begin(true, false, deferred());
    for (uint32_t i = 0; i < 1000; ++i) {
        log_dispatch(r, i);
    }
    r.end();
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&r] { r.materialize(); });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    EXPECT_EQ(r.stream().size(), 2000u);
}

TEST(TimelineDeferred, AQuietSubmissionKeepsLabelsAndSendsNothing) {
    LabelInterner labels;
    Interpreter interpreter{labels};
    FakeInterpreterSink sink;
    FakeRecordSink record_sink;

    // Recorded in a captured frame, submitted in one that is not: its label stays open on the
    // queue for the next command buffer, its workload is neither listed nor sent.
    Recorder opens;
    opens.begin(true, false);
    opens.marker_begin("frame");
    opens.begin_workload(WorkloadType::dispatch, record_sink);
    opens.end_workload(record_sink);
    opens.end();
    SubmitRecord quiet;
    quiet.quiet = true;
    interpreter.run(opens.stream(), sink, quiet);
    EXPECT_TRUE(quiet.workloads.empty());
    EXPECT_TRUE(sink.sent.empty());

    Recorder logged;
    logged.begin(true, false, deferred());
    log_dispatch(logged, 4);
    logged.marker_end();
    logged.end();
    SubmitRecord also_quiet;
    also_quiet.quiet = true;
    interpreter.run(logged.stream(), sink, also_quiet);
    EXPECT_TRUE(also_quiet.workloads.empty());
    EXPECT_EQ(interpreter.label_stack(), LabelInterner::kEmpty) << "the label ended";

    // The same command buffers in a captured frame: described and sent.
    logged.materialize();
    SubmitRecord first;
    interpreter.run(opens.stream(), sink, first);
    SubmitRecord second;
    interpreter.run(logged.stream(), sink, second);
    ASSERT_EQ(first.workloads.size(), 1u);
    ASSERT_EQ(second.workloads.size(), 1u);
    EXPECT_NE(first.workloads[0].labels, LabelInterner::kEmpty);
    EXPECT_EQ(second.workloads[0].labels, first.workloads[0].labels)
        << "the logged dispatch ran inside the label begun in the other command buffer";
    EXPECT_EQ(sink.sent.size(), 2u);
}

// A submitted recording's commands stay as they were for the interpretation worker, whatever the
// application does to the command buffer once the GPU is done with it.
TEST(TimelinePinnedCommands, ARecordingAfterAResetLeavesThePinnedOneAlone) {
    Recorder r;
    FakeRecordSink sink;
    r.begin(true, true);
    r.marker_begin("first");
    r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
    r.marker_end();
    r.end();
    const auto pinned = r.pinned_commands();
    const std::vector<Op> before = ops(r);
    const uint64_t tag = (*pinned)[1].workload->tag;

    r.reset();
    r.begin(true, true);
    r.begin_workload(WorkloadType::buffer_transfer, sink);
    r.end_workload(sink);
    r.end();

    std::vector<Op> kept;
    for (const Command& c : *pinned) {
        kept.push_back(c.op);
    }
    EXPECT_EQ(kept, before);
    EXPECT_EQ((*pinned)[1].workload->tag, tag);
    EXPECT_EQ(*(*pinned)[0].label, "first");
    EXPECT_EQ(ops(r), (std::vector<Op>{begin_op(WorkloadType::buffer_transfer), Op::workload_end}));
}

TEST(TimelinePinnedCommands, MaterializingCopiesAPinnedRecording) {
    Recorder r;
    r.begin(true, false, deferred());
    r.marker_begin("frame");
    log_dispatch(r, 3);
    r.marker_end();
    r.end();
    // A submission outside captured frames handed over the labels alone.
    const auto pinned = r.pinned_commands();
    ASSERT_EQ(pinned->size(), 2u);
    r.materialize(); // a captured frame submits it again
    EXPECT_EQ(pinned->size(), 2u);
    EXPECT_EQ(*(*pinned)[0].label, "frame");
    EXPECT_EQ((*pinned)[1].op, Op::marker_end);
    EXPECT_EQ(ops(r), (std::vector<Op>{Op::marker_begin, begin_op(WorkloadType::dispatch),
                                       Op::workload_end, Op::marker_end}));
}

TEST(TimelinePinnedCommands, AnUnpinnedRecordingIsReusedInPlace) {
    Recorder r;
    FakeRecordSink sink;
    r.begin(true, true);
    r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
    r.end();
    const Command* storage = r.stream().commands.data(); // never handed over
    r.reset();
    r.begin(true, true);
    r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
    r.end();
    EXPECT_EQ(r.stream().commands.data(), storage);
}

TEST(TimelinePinnedCommands, AReaderOnAnotherThreadSeesItsRecordingWhileTheNextIsMade) {
    Recorder r;
    FakeRecordSink sink;
    for (int round = 0; round < 200; ++round) {
        r.begin(true, true);
        for (int i = 0; i < 8; ++i) {
            r.begin_workload(WorkloadType::dispatch, sink);
            r.end_workload(sink);
        }
        r.end();
        std::shared_ptr<const std::vector<Command>> pinned = r.pinned_commands();
        std::thread reader([pinned = std::move(pinned)]() mutable {
            size_t workloads = 0;
            for (const Command& c : *pinned) {
                workloads += c.workload ? 1 : 0;
            }
            EXPECT_EQ(workloads, 8u);
            pinned.reset();
        });
        r.reset(); // while the reader may still be reading
        reader.join();
    }
}

} // namespace
} // namespace vkscope::timeline
