// The instrument points of a recording: the recorder asks every instrument for a mark right before
// and right after each workload (render pass instances as wholes, split ones included; workloads
// of a secondary in the secondary), in order with the tag labels, tells them of parameter copies,
// and the queue's interpreter hands each workload instance the marks of its own begin and end.

#include "core/cycle_counter.hpp"
#include "timeline/instrument.hpp"
#include "timeline/interpreter.hpp"
#include "timeline/recorder.hpp"

#include "timeline_fakes.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace vkscope::timeline {
namespace {

using test::InstrumentedRecording;
using Events = std::vector<std::string>;

constexpr size_t kInstruments = 2;

// The tags written as "tag", and what the first instrument was asked, in order.
Events points(const InstrumentedRecording& r) {
    Events out;
    for (const std::string& e : r.sink.events) {
        out.push_back(e[0] == 't' ? "tag" : e);
    }
    return out;
}

// Both instruments' marks of an instance at `begin`/`end`: the nth calls of `from`/`to`.
void expect_marks(const MarkedInstance& m, InstrumentedRecording& from, uint32_t begin,
                  InstrumentedRecording* to, uint32_t end) {
    for (size_t slot = 0; slot < kInstruments; ++slot) {
        EXPECT_EQ(m.begin[slot], from.instrument(slot).nth(begin)) << "slot " << slot;
        EXPECT_EQ(m.end[slot], to ? to->instrument(slot).nth(end) : Mark()) << "slot " << slot;
    }
    for (size_t slot = kInstruments; slot < kMaxInstruments; ++slot) {
        EXPECT_FALSE(m.begin[slot]);
        EXPECT_FALSE(m.end[slot]);
    }
}

struct Queue {
    LabelInterner labels;
    Interpreter interpreter{labels};
    test::FakeInterpreterSink sink;
    uint64_t next_submit = 1;

    SubmitRecord submit(const Recorder& r, bool pair = true) {
        SubmitRecord out;
        out.submit = next_submit++;
        out.pair_marks = pair;
        interpreter.run(r.stream(), sink, out);
        return out;
    }
};

void dispatch(InstrumentedRecording& r, const ParameterRequest* indirect = nullptr) {
    r.recorder.begin_workload(WorkloadType::dispatch, r.sink, indirect);
    r.recorder.end_workload(r.sink);
}

TEST(TimelineMark, CarriesAnObjectAndIndexOrAReason) {
    int object = 0;
    const Mark at = Mark::at(&object, 7);
    EXPECT_TRUE(at);
    EXPECT_EQ(at.object(), &object);
    EXPECT_EQ(at.index(), 7u);
    EXPECT_EQ(at.why(), nullptr);
    const Mark none = Mark::none("no query pool");
    EXPECT_FALSE(none);
    EXPECT_STREQ(none.why(), "no query pool");
    EXPECT_EQ(none.index(), 0u);
    EXPECT_EQ(Mark(), Mark::none(nullptr));
    EXPECT_NE(at, Mark::at(&object, 8));
}

TEST(TimelineInstrumentPoints, AWaitAtAStartBreaksTheLaterInstrumentsChain) {
    InstrumentedRecording r(3);
    r.instrument(1).waits = true;
    r.begin(true, true);
    dispatch(r);
    dispatch(r);
    r.recorder.end();
    // Only the instruments after the one that waited hear of it, once per workload start.
    EXPECT_TRUE(r.instrument(0).interruptions.empty());
    EXPECT_TRUE(r.instrument(1).interruptions.empty());
    EXPECT_EQ(r.instrument(2).interruptions,
              (std::vector<Interruption>{Interruption::event_wait, Interruption::event_wait}));
}

TEST(TimelineInstrumentPoints, AWaitAtAStartRestartsTheEarlierInstruments) {
    // The third instrument's start writes commands of its own (a query pool's reset, say) after
    // the first two have started: each of those is asked to restart, and the first, which
    // starts again, has its new start as the workload's begin mark.
    InstrumentedRecording r(3);
    r.instrument(0).restarts_after_waits = true;
    r.instrument(2).waits = true;
    r.begin(true, true);
    dispatch(r);
    r.recorder.end();
    EXPECT_EQ(points(r), (Events{"begin", "tag", "start", "restart", "finish", "end"}));
    EXPECT_EQ(r.instrument(0).restarts, 1u);
    EXPECT_EQ(r.instrument(1).restarts, 1u);
    EXPECT_EQ(r.instrument(2).restarts, 0u) << "not the one that wrote them";
    Queue q;
    const SubmitRecord rec = q.submit(r.recorder);
    ASSERT_EQ(rec.instances.size(), 1u);
    EXPECT_EQ(rec.instances[0].begin[0], r.instrument(0).nth(2)) << "the restart's mark";
    EXPECT_EQ(rec.instances[0].begin[1], r.instrument(1).nth(1)) << "kept its own";
    EXPECT_EQ(rec.instances[0].end[0], r.instrument(0).nth(3));
}

TEST(TimelineInstrumentPoints, OnlyStartsThatWroteCommandsRestartAnything) {
    InstrumentedRecording r(2);
    r.instrument(0).restarts_after_waits = true;
    r.begin(true, true);
    dispatch(r);
    dispatch(r);
    r.recorder.end();
    EXPECT_EQ(r.instrument(0).restarts, 0u);
    // A wait at the first instrument's own start has no instrument before it to restart.
    InstrumentedRecording w(2);
    w.instrument(0).waits = true;
    w.instrument(0).restarts_after_waits = true;
    w.begin(true, true);
    dispatch(w);
    w.recorder.end();
    EXPECT_EQ(w.instrument(0).restarts, 0u);
    EXPECT_EQ(w.instrument(1).restarts, 0u);
}

// Leaves the second instrument out of every other workload, as a cost budget might.
// Options whose choice is `choose`, counting its calls in `chosen`.
RecordOptions choosing(InstrumentChoice (*choose)(const Workload&, void*), uint32_t& chosen) {
    RecordOptions options;
    options.choose = choose;
    options.choose_context = &chosen;
    return options;
}

InstrumentChoice every_other(const Workload&, void* context) {
    auto& n = *static_cast<uint32_t*>(context);
    return ++n % 2 == 0 ? InstrumentChoice{1} : InstrumentChoice{};
}

TEST(TimelineInstrumentPoints, AnInstrumentLeftOutOfAWorkloadWritesNothingAroundIt) {
    InstrumentedRecording r(kInstruments);
    uint32_t chosen = 0;
    r.begin(true, true, choosing(every_other, chosen));
    dispatch(r);
    r.recorder.begin_render_pass("", {}, r.sink);
    r.recorder.end_render_pass(r.sink);
    dispatch(r);
    r.recorder.end();
    EXPECT_EQ(chosen, 3u) << "chosen once per workload, as it begins";
    // The first instrument measured all three; the second the first and the third, and heard
    // that it was left out of the render pass, so that it measures nothing across it.
    const CommandStream stream = r.recorder.stream();
    std::vector<Marks> ends;
    for (const Command& c : stream) {
        if (c.op == Op::workload_end) {
            ends.push_back(stream.marks_of(c));
        }
    }
    ASSERT_EQ(ends.size(), 3u);
    EXPECT_TRUE(ends[0][0] && ends[0][1]);
    EXPECT_TRUE(ends[1][0]);
    EXPECT_FALSE(ends[1][1]);
    EXPECT_STREQ(ends[1][1].why(), "left out");
    EXPECT_TRUE(ends[2][0] && ends[2][1]);
    EXPECT_EQ(ends[1][0], r.instrument(0).nth(4)) << "the pass's finish, its fourth point";
    EXPECT_EQ(ends[2][1], r.instrument(1).nth(4)) << "four points: the pass had none";
    EXPECT_EQ(r.instrument(1).interruptions, std::vector<Interruption>{Interruption::left_out});
}

// Leaves every instrument out of the first workload, which precedes the second, measured.
InstrumentChoice before_a_window(const Workload&, void* context) {
    auto& n = *static_cast<uint32_t*>(context);
    return ++n == 1 ? InstrumentChoice{0, true} : InstrumentChoice{};
}

TEST(TimelineInstrumentPoints, TheWorkloadBeforeAWindowStartsTheNextAheadAfterItsEnd) {
    InstrumentedRecording r(kInstruments);
    uint32_t chosen = 0;
    r.begin(true, true, choosing(before_a_window, chosen));
    dispatch(r);
    dispatch(r);
    dispatch(r);
    r.recorder.end();
    // Left out of the first: told so as it begins, asked to start the next right after its end
    // (where a finish would be, inside its tag).
    EXPECT_EQ(points(r), (Events{"begin", "tag", "interrupt", "ahead", "end", "tag", "start",
                                 "finish", "end", "tag", "start", "finish", "end"}));
}

InstrumentChoice none_of_them(const Workload&, void* context) {
    ++*static_cast<uint32_t*>(context);
    return InstrumentChoice{0};
}

InstrumentChoice all_of_them(const Workload&, void* context) {
    ++*static_cast<uint32_t*>(context);
    return InstrumentChoice{};
}

// Under a cost budget the recording says what its instruments' calls took, so that the
// application's own recording time can be told from it: the calls around the workloads they
// measure, and nothing for the workloads no instrument measures (only those pay the clock).
TEST(TimelineInstrumentPoints, TheInstrumentsCallsAreTimedWhereAsked) {
    constexpr auto kBusy = std::chrono::microseconds(200);
    for (const auto choose : {none_of_them, all_of_them}) {
        for (const bool timed : {false, true}) {
            InstrumentedRecording r(kInstruments);
            r.instrument(0).busy = kBusy;
            uint32_t chosen = 0;
            RecordOptions options = choosing(choose, chosen);
            options.time_instruments = timed;
            const uint64_t began_ns = monotonic_ns();
            const uint64_t began_cycles = cycle_count();
            r.begin(true, true, options);
            dispatch(r);
            dispatch(r);
            r.recorder.end();
            const uint64_t span_cycles = cycle_count() - began_cycles;
            const uint64_t span_ns = monotonic_ns() - began_ns;
            ASSERT_EQ(chosen, 2u);
            const uint64_t theirs =
                cycles_as_ns(r.recorder.instrument_cycles(), span_cycles, span_ns);
            if (!timed || choose == none_of_them) {
                EXPECT_EQ(r.recorder.instrument_cycles(), 0u) << "timed " << timed;
            } else {
                // Two workloads, a start and a finish each: in the recording's span, at least
                // those calls' time, and no more than the span.
                EXPECT_GE(theirs, static_cast<uint64_t>(
                                      std::chrono::nanoseconds(4 * kBusy).count() * 99 / 100));
                EXPECT_LE(theirs, span_ns);
            }
            r.begin(true, true, options);
            EXPECT_EQ(r.recorder.instrument_cycles(), 0u) << "a new recording starts from none";
        }
    }
}

TEST(TimelineInstrumentPoints, AroundEveryWorkloadInsideItsTags) {
    InstrumentedRecording r(kInstruments);
    r.begin(true, true);
    dispatch(r);
    r.recorder.begin_render_pass("", {}, r.sink);
    r.recorder.count_draws(2);
    r.recorder.end_render_pass(r.sink);
    const ParameterRequest args{.buffer = 1, .offset = 0, .bytes = 12};
    dispatch(r, &args);
    r.recorder.end();
    // The tag opens before the instruments' start and closes after their finish, so that what
    // they measure is inside the workload's label; nothing between the draws. A parameter copy
    // runs before its workload's tag, and the instruments hear of it first.
    EXPECT_EQ(points(r), (Events{"begin", "tag", "start", "finish", "end", "tag", "start", "finish",
                                 "end", "interrupt", "copy 1@0", "tag", "start", "finish", "end"}));
}

// What a walk over the stream's marks finds: per instrument, each object its marks name, once
// for consecutive marks naming the same one, in the marks' order.
std::vector<std::pair<void*, uint32_t>> walked_objects(const CommandStream& stream) {
    std::vector<std::pair<void*, uint32_t>> out;
    std::array<void*, kMaxInstruments> last{};
    for (size_t i = 0; i < stream.marks.size(); ++i) {
        const auto slot = static_cast<uint32_t>(i % stream.width);
        void* object = stream.marks[i].object();
        if (object && object != last[slot]) {
            last[slot] = object;
            out.emplace_back(object, slot);
        }
    }
    return out;
}

TEST(TimelineInstrumentPoints, TheStreamKeepsTheObjectsItsMarksNameInOrder) {
    InstrumentedRecording s(kInstruments);
    s.begin(false, false);
    dispatch(s);
    s.recorder.end();
    InstrumentedRecording r(kInstruments);
    uint32_t chosen = 0;
    r.begin(true, true, choosing(every_other, chosen));
    dispatch(r);
    dispatch(r); // the second instrument left out: its marks name nothing
    r.recorder.execute(s.recorder);
    dispatch(r);
    r.recorder.end();
    const CommandStream stream = r.recorder.stream();
    std::vector<std::pair<void*, uint32_t>> kept;
    for (const MarkObject& o : stream.objects) {
        kept.emplace_back(o.object, o.slot);
    }
    EXPECT_EQ(kept, walked_objects(stream));
    // Each fake instrument names itself: the primary's two, the secondary's two, the primary's
    // two again after the secondary's.
    const std::vector<std::pair<void*, uint32_t>> expected{
        {&r.instrument(0), 0u}, {&r.instrument(1), 1u}, {&s.instrument(0), 0u},
        {&s.instrument(1), 1u}, {&r.instrument(0), 0u}, {&r.instrument(1), 1u}};
    EXPECT_EQ(kept, expected);
    r.recorder.begin(true, true, {});
    EXPECT_TRUE(r.recorder.stream().objects.empty()) << "a new recording starts without any";
}

TEST(TimelineInstrumentPoints, SplitRenderPassAndSecondaryGetTheirOwnBeginAndEnd) {
    // a: a dispatch, then a render pass instance suspended at its end.
    InstrumentedRecording a(kInstruments);
    a.begin(true, true);
    dispatch(a);
    a.recorder.begin_render_pass("", {false, true}, a.sink);
    a.recorder.count_draws(1);
    a.recorder.end_render_pass(a.sink);
    a.recorder.end();
    // A secondary with a dispatch of its own.
    InstrumentedRecording s(kInstruments);
    s.begin(false, false);
    dispatch(s);
    s.recorder.end();
    // b: resumes and ends the instance, executes the secondary, then a dispatch.
    InstrumentedRecording b(kInstruments);
    b.begin(true, true);
    b.recorder.begin_render_pass("", {true, false}, b.sink);
    b.recorder.count_draws(1);
    b.recorder.end_render_pass(b.sink);
    b.recorder.execute(s.recorder);
    dispatch(b);
    b.recorder.end();

    // Before the first begin in a, after the final end in b, nothing at the suspension and the
    // resumption; the secondary's dispatch in the secondary.
    EXPECT_EQ(points(a), (Events{"begin", "tag", "start", "finish", "end", "tag", "start"}));
    EXPECT_EQ(points(s), (Events{"begin", "tag", "start", "finish", "end"}));
    EXPECT_EQ(points(b), (Events{"begin", "finish", "end", "tag", "start", "finish", "end"}));

    Queue q;
    const SubmitRecord sa = q.submit(a.recorder);
    const SubmitRecord sb = q.submit(b.recorder);
    ASSERT_EQ(sa.instances.size(), 1u); // the render pass is still open after a
    ASSERT_EQ(sb.instances.size(), 3u);

    const MarkedInstance& first = sa.instances[0];
    EXPECT_EQ(first.submit, sa.submit);
    EXPECT_EQ(first.tag, sa.workloads[0].tag);
    EXPECT_EQ(first.ending, MarkedInstance::Ending::workload);
    expect_marks(first, a, 1, &a, 2);

    // The split instance belongs to a's submission and runs from a's start to b's finish.
    const MarkedInstance& pass = sb.instances[0];
    EXPECT_EQ(pass.submit, sa.submit);
    EXPECT_EQ(pass.tag, sa.workloads[1].tag);
    EXPECT_EQ(pass.ending, MarkedInstance::Ending::render_pass);
    expect_marks(pass, a, 3, &b, 1);

    // The secondary's dispatch carries the secondary's marks, in b's submission.
    const MarkedInstance& inner = sb.instances[1];
    EXPECT_EQ(inner.submit, sb.submit);
    expect_marks(inner, s, 1, &s, 2);

    expect_marks(sb.instances[2], b, 2, &b, 3);
}

TEST(TimelineInstrumentPoints, ARenderPassNeverResumedEndsWithoutEndMarks) {
    InstrumentedRecording a(kInstruments), b(kInstruments);
    a.begin(true, true);
    a.recorder.begin_render_pass("", {false, true}, a.sink);
    a.recorder.end_render_pass(a.sink);
    a.recorder.end();
    b.begin(true, true);
    b.recorder.begin_render_pass("", {}, b.sink); // a new instance: a's is abandoned
    b.recorder.end_render_pass(b.sink);
    b.recorder.end();
    Queue q;
    const SubmitRecord sa = q.submit(a.recorder);
    const SubmitRecord sb = q.submit(b.recorder);
    EXPECT_TRUE(sa.instances.empty());
    ASSERT_EQ(sb.instances.size(), 2u);
    EXPECT_EQ(sb.instances[0].tag, sa.workloads[0].tag);
    EXPECT_EQ(sb.instances[0].ending, MarkedInstance::Ending::never);
    expect_marks(sb.instances[0], a, 1, nullptr, 0);
    EXPECT_EQ(sb.instances[1].ending, MarkedInstance::Ending::render_pass);
    expect_marks(sb.instances[1], b, 1, &b, 2);
}

TEST(TimelineInstrumentPoints, WithoutInstrumentsNoneIsAskedAndNoMarkKept) {
    InstrumentedRecording r(0);
    r.begin(true, true);
    dispatch(r);
    r.recorder.begin_render_pass("", {}, r.sink);
    r.recorder.end_render_pass(r.sink);
    r.recorder.end();
    for (const Command& c : r.recorder.stream()) {
        EXPECT_EQ(c.marks, kNoMarks);
    }
    EXPECT_TRUE(r.recorder.stream().marks.empty());
    Queue q;
    const SubmitRecord s = q.submit(r.recorder);
    ASSERT_EQ(s.instances.size(), 2u);
    EXPECT_EQ(s.instances[0].begin[0], Mark());
}

TEST(TimelineInstrumentPoints, NothingIsPairedWhenNoInstrumentAsks) {
    InstrumentedRecording r(kInstruments);
    r.begin(true, true);
    dispatch(r);
    r.recorder.end();
    Queue q;
    EXPECT_TRUE(q.submit(r.recorder, false).instances.empty());
    EXPECT_EQ(q.submit(r.recorder, true).instances.size(), 1u);
}

TEST(TimelineInstrumentPoints, LoggedWorkloadsCarryEachInstrumentsReason) {
    InstrumentedRecording r(kInstruments, "recorded outside a captured frame");
    RecordOptions options;
    options.tags = false;
    options.defer_workloads = true;
    r.begin(true, true, options);
    WorkloadInfo dispatch;
    dispatch.api = "vkCmdDispatch";
    r.recorder.log_workload(WorkloadType::dispatch, dispatch);
    r.recorder.log_workload(WorkloadType::dispatch, dispatch);
    r.recorder.end();
    r.recorder.materialize();
    EXPECT_EQ(points(r), (Events{"begin"})) << "no instrument was asked to write";
    Queue q;
    const SubmitRecord s = q.submit(r.recorder);
    ASSERT_EQ(s.instances.size(), 2u);
    for (const MarkedInstance& m : s.instances) {
        for (size_t slot = 0; slot < kInstruments; ++slot) {
            EXPECT_FALSE(m.begin[slot]);
            EXPECT_STREQ(m.begin[slot].why(), "recorded outside a captured frame");
            EXPECT_FALSE(m.end[slot]);
        }
    }
}

} // namespace
} // namespace vkscope::timeline
