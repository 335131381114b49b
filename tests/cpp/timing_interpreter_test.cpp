// Timer queries through the recorder and the interpreter: each workload instance's two
// timestamps, split render passes from their first begin to their final end, repeats flagged.

#include "instruments/timing/entries.hpp"
#include "instruments/timing/recording.hpp"
#include "timeline/interpreter.hpp"
#include "timeline_fakes.hpp"

#include <gtest/gtest.h>

namespace vkscope::timeline {
namespace {

using timing::Mode;
using timing::RecordingTiming;
using timing::Timestamp;
using timing::TimingEntry;
using vkscope::QueryBlock;
using vkscope::QueryPoolCache;

class NullWriter : public timing::TimestampWriter {
public:
    void reset(VkQueryPool, uint32_t, uint32_t) override {}
    void write(VkQueryPool, uint32_t, bool) override { ++writes; }
    void barrier() override {}
    int writes = 0;
};

QueryPoolCache::Backend fake_pools() {
    static uint64_t next = 0x100;
    QueryPoolCache::Backend b;
    b.create = [] { return reinterpret_cast<VkQueryPool>(next++); };
    b.destroy = [](VkQueryPool) {};
    return b;
}

// Timing as an instrument, as the layer has it, with its writes counted instead of recorded.
class TimedInstrument : public InstrumentRecording {
public:
    TimedInstrument(QueryPoolCache& cache, const char* untimed) {
        timing.begin(&cache, Mode::queue, untimed);
    }
    void begin(const RecordingStart&) override {}
    void release() override { timing.release(); }
    Mark start() override { return mark(timing.start(writer)); }
    Mark finish() override { return mark(timing.finish(writer)); }
    void interrupt(Interruption) override { timing.interrupt(); }
    const char* unmarked() const override { return timing.untimed(); }
    const char* left_out() const override { return timing::reason::kBudget; }

    RecordingTiming timing;
    NullWriter writer;

private:
    Mark mark(Timestamp ts) const {
        return ts ? timing::mark_of(ts) : Mark::none(timing.untimed());
    }
};

// A record sink for a recording whose one instrument (slot 0) is timing.
class TimedSink : public test::FakeRecordSink {
public:
    explicit TimedSink(QueryPoolCache& cache, const char* untimed = nullptr) {
        instruments_.push_back(std::make_unique<TimedInstrument>(cache, untimed));
    }
    RecordOptions options() const {
        RecordOptions o;
        o.instruments = instruments_;
        return o;
    }
    int writes() const { return static_cast<TimedInstrument&>(*instruments_[0]).writer.writes; }

private:
    std::vector<std::unique_ptr<InstrumentRecording>> instruments_;
};

// One submitted command buffer as timing sees it.
struct Timed {
    uint64_t submit = 0;
    std::vector<SubmittedWorkload> workloads;
    std::vector<TimingEntry> timings;
};

struct Queue {
    LabelInterner labels;
    Interpreter interpreter{labels};
    test::FakeInterpreterSink sink;
    uint64_t next_submit = 100;

    Timed submit(const Recorder& r) {
        SubmitRecord out;
        out.submit = next_submit++;
        out.pair_marks = true;
        interpreter.run(r.stream(), sink, out);
        Timed t{out.submit, out.workloads, {}};
        for (const MarkedInstance& instance : out.instances) {
            t.timings.push_back(timing::entry_of(instance, 0));
        }
        return t;
    }
};

void dispatch(Recorder& r, RecordSink& sink) {
    r.begin_workload(WorkloadType::dispatch, sink);
    r.end_workload(sink);
}

TEST(TimingInterpreter, WorkloadsGetTheirTimestampsSharingTheBoundaries) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink sink(cache);
    Recorder r;
    r.begin(true, true, sink.options());
    dispatch(r, sink);
    r.begin_render_pass("", {}, sink);
    r.count_draws(3);
    r.end_render_pass(sink);
    dispatch(r, sink);
    r.end();
    Queue q;
    const Timed s = q.submit(r);
    ASSERT_EQ(s.timings.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(s.timings[i].submit, s.submit);
        EXPECT_EQ(s.timings[i].tag, s.workloads[i].tag);
        // Slot 0 takes the write right after the block's reset, never read.
        EXPECT_EQ(s.timings[i].begin.slot, i + 1);
        EXPECT_EQ(s.timings[i].end.slot, i + 2);
        EXPECT_EQ(s.timings[i].untimed, nullptr);
    }
    EXPECT_EQ(sink.writes(), 5); // N+1, and the first after the reset
}

// The submission hands a command buffer to the interpretation worker before any instrument has
// paired it; whether an instrument's job will have its workloads to speak of (under a budget,
// only those measured) comes from scan(), which walks the stream anyway.
TEST(TimingInterpreter, ScanSaysWhetherAnyWorkloadIsMeasured) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink sink(cache);
    const auto recorded = [&](InstrumentChoice (*choose)(const Workload&, void*)) {
        auto r = std::make_unique<Recorder>();
        RecordOptions options = sink.options();
        options.choose = choose;
        r->begin(true, true, options);
        for (int i = 0; i < 3; ++i) {
            dispatch(*r, sink);
        }
        r->begin_render_pass("", {}, sink);
        r->end_render_pass(sink);
        r->end();
        return r;
    };
    const auto measures = [](const Recorder& r) {
        QueueShape shape;
        uint32_t tag_ends = 0;
        bool found = false;
        EXPECT_TRUE(Interpreter::scan(r.stream(), false, shape, tag_ends, &found));
        return found;
    };
    EXPECT_FALSE(measures(*recorded([](const Workload&, void*) { return InstrumentChoice{0}; })))
        << "every workload left out";
    EXPECT_TRUE(measures(*recorded([](const Workload& w, void*) {
        return InstrumentChoice{static_cast<uint8_t>(w.type == WorkloadType::render_pass ? 1 : 0)};
    }))) << "the render pass measured";
    EXPECT_TRUE(measures(*recorded([](const Workload& w, void*) {
        // (of three dispatches in a row, one or two have an even tag)
        return InstrumentChoice{
            static_cast<uint8_t>(w.type == WorkloadType::dispatch && w.tag % 2 == 0 ? 1 : 0)};
    }))) << "a dispatch measured";
    EXPECT_TRUE(measures(*recorded(nullptr))) << "no budget: every workload measured";
}

TEST(TimingInterpreter, WorkloadsLeftOutByTheBudgetAreFlaggedNotPaired) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink sink(cache);
    Recorder r;
    RecordOptions options = sink.options();
    // Every other workload is left out of every instrument, as a budget's window does.
    options.choose = [](const Workload& w, void*) {
        return InstrumentChoice{static_cast<uint8_t>(w.tag % 2 ? 0 : InstrumentChoice::kAll)};
    };
    r.begin(true, true, options);
    for (int i = 0; i < 4; ++i) {
        dispatch(r, sink);
    }
    r.begin_render_pass("", {}, sink);
    r.end_render_pass(sink);
    r.end();
    Queue q;
    SubmitRecord out;
    out.submit = 7;
    out.pair_marks = true;
    out.skip_left_out = true;
    q.interpreter.run(r.stream(), q.sink, out);
    ASSERT_EQ(out.workloads.size(), 5u);
    uint32_t left_out = 0;
    std::vector<uint64_t> paired;
    for (const SubmittedWorkload& w : out.workloads) {
        EXPECT_EQ(w.left_out, w.tag % 2 == 1);
        left_out += w.left_out ? 1 : 0;
        if (!w.left_out) {
            paired.push_back(w.tag);
        }
    }
    EXPECT_EQ(out.left_out, left_out);
    ASSERT_EQ(out.instances.size(), paired.size());
    for (size_t i = 0; i < paired.size(); ++i) {
        EXPECT_EQ(out.instances[i].tag, paired[i]);
        EXPECT_TRUE(timing::entry_of(out.instances[i], 0).begin);
    }
    // Without skip_left_out the instruments pair every workload, the left out with the reason.
    Queue all;
    SubmitRecord every;
    every.pair_marks = true;
    all.interpreter.run(r.stream(), all.sink, every);
    EXPECT_EQ(every.instances.size(), 5u);
    EXPECT_EQ(every.left_out, 0u);
}

TEST(TimingInterpreter, AnIndirectCopyBetweenWorkloadsIsNotTimed) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink sink(cache);
    Recorder r;
    r.begin(true, true, sink.options());
    dispatch(r, sink);
    const ParameterRequest args{.buffer = 1, .offset = 0, .bytes = 12};
    r.begin_workload(WorkloadType::dispatch, sink, &args);
    r.end_workload(sink);
    r.end();
    Queue q;
    const Timed s = q.submit(r);
    ASSERT_EQ(s.timings.size(), 2u);
    EXPECT_NE(s.timings[0].end, s.timings[1].begin);
}

TEST(TimingInterpreter, SplitRenderPassRunsFromFirstBeginToFinalEnd) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink a_sink(cache), b_sink(cache), c_sink(cache);
    Recorder a, b, c;
    a.begin(true, true, a_sink.options());
    a.begin_render_pass("", {false, true}, a_sink);
    a.end_render_pass(a_sink);
    a.end();
    b.begin(true, true, b_sink.options());
    b.begin_render_pass("", {true, true}, b_sink);
    b.end_render_pass(b_sink);
    b.end();
    c.begin(true, true, c_sink.options());
    c.begin_render_pass("", {true, false}, c_sink);
    c.end_render_pass(c_sink);
    c.end();
    EXPECT_EQ(a_sink.writes(), 2); // before the first begin (after the first after the reset)
    EXPECT_EQ(b_sink.writes(), 0); // nothing may go between suspension and resumption
    EXPECT_EQ(c_sink.writes(), 2); // after the final end (likewise)

    Queue q;
    const Timed sa = q.submit(a);
    const Timed sb = q.submit(b);
    EXPECT_TRUE(q.interpreter.render_pass_open());
    const Timed sc = q.submit(c);
    EXPECT_FALSE(q.interpreter.render_pass_open());
    EXPECT_TRUE(sa.timings.empty() && sb.timings.empty());
    ASSERT_EQ(sc.timings.size(), 1u);
    EXPECT_EQ(sc.timings[0].submit, sa.submit); // the instance of the submission that began it
    EXPECT_EQ(sc.timings[0].tag, sa.workloads[0].tag);
    ASSERT_TRUE(sc.timings[0].begin && sc.timings[0].end);
    EXPECT_NE(sc.timings[0].begin.block, sc.timings[0].end.block); // written in a, then in c
}

TEST(TimingInterpreter, ASplitRenderPassTimedOnlyInPartIsUntimed) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink a_sink(cache);
    TimedSink c_sink(cache, timing::reason::kOutsideFrame);
    Recorder a, c;
    a.begin(true, true, a_sink.options());
    a.begin_render_pass("", {false, true}, a_sink);
    a.end_render_pass(a_sink);
    a.end();
    c.begin(true, true, c_sink.options());
    c.begin_render_pass("", {true, false}, c_sink);
    c.end_render_pass(c_sink);
    c.end();
    Queue q;
    q.submit(a);
    const Timed sc = q.submit(c);
    ASSERT_EQ(sc.timings.size(), 1u);
    EXPECT_FALSE(sc.timings[0].begin);
    EXPECT_STREQ(sc.timings[0].untimed, timing::reason::kSplitPartUntimed);
}

TEST(TimingInterpreter, RecordedOutsideACapturedFrameSaysSo) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink sink(cache, timing::reason::kOutsideFrame);
    Recorder r;
    r.begin(true, false, sink.options());
    dispatch(r, sink);
    r.end();
    Queue q;
    const Timed s = q.submit(r);
    ASSERT_EQ(s.timings.size(), 1u);
    EXPECT_STREQ(s.timings[0].untimed, timing::reason::kOutsideFrame);
    EXPECT_EQ(sink.writes(), 0);
}

TEST(TimingInterpreter, ASecondaryExecutedTwiceIsFlaggedNotGuessed) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink sec_sink(cache), pri_sink(cache);
    Recorder secondary;
    secondary.begin(false, false, sec_sink.options());
    dispatch(secondary, sec_sink);
    secondary.end();
    Recorder primary;
    primary.begin(true, true, pri_sink.options());
    dispatch(primary, pri_sink);
    primary.execute(secondary);
    primary.execute(secondary);
    primary.end();
    Queue q;
    Timed s = q.submit(primary);
    ASSERT_EQ(s.timings.size(), 3u);
    std::vector<TimingEntry> earlier;
    timing::mark_repeats(earlier, s.timings);
    ASSERT_EQ(s.timings.size(), 2u); // one instance, executed twice: one entry
    EXPECT_FALSE(s.timings[0].ambiguous);
    EXPECT_TRUE(s.timings[1].ambiguous);
    EXPECT_EQ(s.timings[1].tag, s.workloads[1].tag);
}

TEST(TimingInterpreter, OneSecondaryInTwoCommandBuffersBeforeACopyIsFlaggedInBoth) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink sec_sink(cache), p1_sink(cache), p2_sink(cache);
    Recorder secondary;
    secondary.begin(false, false, sec_sink.options());
    dispatch(secondary, sec_sink);
    secondary.end();
    Recorder p1, p2;
    p1.begin(true, true, p1_sink.options());
    p1.execute(secondary);
    p1.end();
    p2.begin(true, true, p2_sink.options());
    p2.execute(secondary);
    p2.end();
    Queue q;
    Timed s1 = q.submit(p1);
    Timed s2 = q.submit(p2);
    std::vector<TimingEntry> pending;
    timing::mark_repeats(pending, s1.timings);
    pending = s1.timings;
    timing::mark_repeats(pending, s2.timings);
    ASSERT_EQ(s2.timings.size(), 1u);
    EXPECT_TRUE(pending[0].ambiguous);
    EXPECT_TRUE(s2.timings[0].ambiguous);
}

TEST(TimingInterpreter, NothingIsPairedWhenTheSubmissionIsNotTimed) {
    QueryPoolCache cache(fake_pools(), 16);
    TimedSink sink(cache);
    Recorder r;
    r.begin(true, true, sink.options());
    dispatch(r, sink);
    r.end();
    Queue q;
    SubmitRecord out;
    out.submit = 1;
    q.interpreter.run(r.stream(), q.sink, out);
    EXPECT_TRUE(out.instances.empty());
}

} // namespace
} // namespace vkscope::timeline
