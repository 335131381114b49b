// The instrument points of a recording: the recorder asks every instrument for a mark right before
// and right after each workload (render pass instances as wholes, split ones included; workloads
// of a secondary in the secondary), in order with the tag labels, and the queue's interpreter
// hands each workload instance the marks of its own begin and end.

#include "timeline/instrument.hpp"
#include "timeline/interpreter.hpp"
#include "timeline/recorder.hpp"

#include "timeline_fakes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vkscope::timeline {
namespace {

constexpr size_t kInstruments = 2;

// Two instruments behind one sink: every start and finish returns a fresh numbered mark per
// instrument (the instrument's own object, the call's number) and is logged among the tags.
class InstrumentedSink : public test::FakeRecordSink {
public:
    void workload_start(Marks& marks) override { point("start", marks); }
    void workload_finish(Marks& marks) override { point("finish", marks); }

    // The events with every tag label written as "tag" and the calls without their numbers.
    std::vector<std::string> points() const {
        std::vector<std::string> out;
        for (const std::string& e : events) {
            out.push_back(e[0] == 't' ? "tag" : e.substr(0, e.find(' ')));
        }
        return out;
    }
    // The numbers of the starts and finishes, in order.
    std::vector<uint32_t> numbers() const {
        std::vector<uint32_t> out;
        for (const std::string& e : events) {
            if (e.rfind("start ", 0) == 0 || e.rfind("finish ", 0) == 0) {
                out.push_back(static_cast<uint32_t>(std::stoul(e.substr(e.find(' ') + 1))));
            }
        }
        return out;
    }

    static int objects[kInstruments];

private:
    void point(const char* what, Marks& marks) {
        ++calls_;
        events.push_back(std::string(what) + " " + std::to_string(calls_));
        for (size_t i = 0; i < kInstruments; ++i) {
            marks[i] = Mark::at(&objects[i], calls_);
        }
    }

    static uint32_t calls_; // shared by every sink: no two calls have the same number
};

int InstrumentedSink::objects[kInstruments] = {};
uint32_t InstrumentedSink::calls_ = 0;

// The call numbers of an instance's marks, checking every instrument got its own.
std::pair<uint32_t, uint32_t> numbers(const MarkedInstance& m) {
    for (size_t i = 0; i < kInstruments; ++i) {
        EXPECT_EQ(m.begin[i].object(), &InstrumentedSink::objects[i]);
        EXPECT_EQ(m.begin[i].index(), m.begin[0].index());
        if (m.ending != MarkedInstance::Ending::never) {
            EXPECT_EQ(m.end[i].object(), &InstrumentedSink::objects[i]);
            EXPECT_EQ(m.end[i].index(), m.end[0].index());
        }
    }
    return {m.begin[0].index(), m.end[0].index()};
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

void dispatch(Recorder& r, RecordSink& sink) {
    r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
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

TEST(TimelineInstrumentPoints, AroundEveryWorkloadInsideItsTags) {
    InstrumentedSink sink;
    Recorder r;
    r.begin(true, true);
    dispatch(r, sink);
    r.begin_render_pass("", {}, sink);
    r.count_draws(2);
    r.end_render_pass(sink);
    r.end();
    // The tag opens before the instrument's start and closes after its finish, so that what the
    // instrument measures is inside the workload's label; nothing between the draws.
    EXPECT_EQ(sink.points(), (std::vector<std::string>{"tag", "start", "finish", "end", "tag",
                                                       "start", "finish", "end"}));
}

TEST(TimelineInstrumentPoints, SplitRenderPassAndSecondaryGetTheirOwnBeginAndEnd) {
    InstrumentedSink a_sink, s_sink, b_sink;
    // a: a dispatch, then a render pass instance suspended at its end.
    Recorder a;
    a.begin(true, true);
    dispatch(a, a_sink);
    a.begin_render_pass("", {false, true}, a_sink);
    a.count_draws(1);
    a.end_render_pass(a_sink);
    a.end();
    // A secondary with a dispatch of its own.
    Recorder s;
    s.begin(false, false);
    dispatch(s, s_sink);
    s.end();
    // b: resumes and ends the instance, executes the secondary, then a dispatch.
    Recorder b;
    b.begin(true, true);
    b.begin_render_pass("", {true, false}, b_sink);
    b.count_draws(1);
    b.end_render_pass(b_sink);
    b.execute(s);
    dispatch(b, b_sink);
    b.end();

    // Before the first begin in a, after the final end in b, nothing at the suspension and the
    // resumption; the secondary's dispatch in the secondary.
    using Points = std::vector<std::string>;
    EXPECT_EQ(a_sink.points(), (Points{"tag", "start", "finish", "end", "tag", "start"}));
    EXPECT_EQ(s_sink.points(), (Points{"tag", "start", "finish", "end"}));
    EXPECT_EQ(b_sink.points(), (Points{"finish", "end", "tag", "start", "finish", "end"}));

    Queue q;
    const SubmitRecord sa = q.submit(a);
    const SubmitRecord sb = q.submit(b);
    ASSERT_EQ(sa.instances.size(), 1u); // the render pass is still open after a
    ASSERT_EQ(sb.instances.size(), 3u);

    const auto number = [](const InstrumentedSink& sink, size_t nth) {
        return sink.numbers().at(nth);
    };
    const MarkedInstance& a_dispatch = sa.instances[0];
    EXPECT_EQ(a_dispatch.submit, sa.submit);
    EXPECT_EQ(a_dispatch.tag, sa.workloads[0].tag);
    EXPECT_EQ(a_dispatch.ending, MarkedInstance::Ending::workload);
    EXPECT_EQ(numbers(a_dispatch), std::pair(number(a_sink, 0), number(a_sink, 1)));

    // The split instance belongs to a's submission and runs from a's start to b's finish.
    const MarkedInstance& pass = sb.instances[0];
    EXPECT_EQ(pass.submit, sa.submit);
    EXPECT_EQ(pass.tag, sa.workloads[1].tag);
    EXPECT_EQ(pass.ending, MarkedInstance::Ending::render_pass);
    EXPECT_EQ(numbers(pass), std::pair(number(a_sink, 2), number(b_sink, 0)));

    // The secondary's dispatch carries the secondary's marks, in b's submission.
    const MarkedInstance& inner = sb.instances[1];
    EXPECT_EQ(inner.submit, sb.submit);
    EXPECT_EQ(numbers(inner), std::pair(number(s_sink, 0), number(s_sink, 1)));

    const MarkedInstance& last = sb.instances[2];
    EXPECT_EQ(numbers(last), std::pair(number(b_sink, 1), number(b_sink, 2)));
}

TEST(TimelineInstrumentPoints, ARenderPassNeverResumedEndsWithoutEndMarks) {
    InstrumentedSink sink;
    Recorder a, b;
    a.begin(true, true);
    a.begin_render_pass("", {false, true}, sink);
    a.end_render_pass(sink);
    a.end();
    b.begin(true, true);
    b.begin_render_pass("", {}, sink); // a new instance: a's is abandoned
    b.end_render_pass(sink);
    b.end();
    Queue q;
    const SubmitRecord sa = q.submit(a);
    const SubmitRecord sb = q.submit(b);
    EXPECT_TRUE(sa.instances.empty());
    ASSERT_EQ(sb.instances.size(), 2u);
    EXPECT_EQ(sb.instances[0].tag, sa.workloads[0].tag);
    EXPECT_EQ(sb.instances[0].ending, MarkedInstance::Ending::never);
    EXPECT_TRUE(sb.instances[0].begin[0]);
    EXPECT_FALSE(sb.instances[0].end[0]);
    EXPECT_EQ(sb.instances[1].ending, MarkedInstance::Ending::render_pass);
}

TEST(TimelineInstrumentPoints, NothingIsPairedWhenNoInstrumentAsks) {
    InstrumentedSink sink;
    Recorder r;
    r.begin(true, true);
    dispatch(r, sink);
    r.end();
    Queue q;
    EXPECT_TRUE(q.submit(r, false).instances.empty());
    EXPECT_EQ(q.submit(r, true).instances.size(), 1u);
}

TEST(TimelineInstrumentPoints, LoggedWorkloadsCarryEachInstrumentsReason) {
    RecordOptions options;
    options.tags = false;
    options.defer_workloads = true;
    options.deferred_marks[0] = Mark::none("first's reason");
    options.deferred_marks[1] = Mark::none("second's reason");
    Recorder r;
    r.begin(true, true, options);
    r.defer_workload(WorkloadType::dispatch).api = "vkCmdDispatch";
    r.end();
    r.materialize();
    Queue q;
    const SubmitRecord s = q.submit(r);
    ASSERT_EQ(s.instances.size(), 1u);
    EXPECT_STREQ(s.instances[0].begin[0].why(), "first's reason");
    EXPECT_STREQ(s.instances[0].begin[1].why(), "second's reason");
    EXPECT_FALSE(s.instances[0].end[0]);
}

} // namespace
} // namespace vkscope::timeline
