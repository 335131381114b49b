// The readback worker, with a fake timeline semaphore: reads a slot only once the GPU is past the
// submission, releases it for the next, and never reports a slot a later submission took over.

#include "timeline/readback.hpp"

#include "json_parse.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace vkscope::timeline {
namespace {

using namespace std::chrono_literals;
using test::JsonParser;

// The fake semaphore's counter (one semaphore is enough: the worker treats them alike).
std::atomic<uint64_t> g_counter{0};

VKAPI_ATTR VkResult VKAPI_CALL fake_wait(VkDevice, const VkSemaphoreWaitInfo* info,
                                         uint64_t timeout_ns) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    do {
        for (uint32_t i = 0; i < info->semaphoreCount; ++i) {
            if (g_counter.load() >= info->pValues[i]) {
                return VK_SUCCESS;
            }
        }
        std::this_thread::sleep_for(100us);
    } while (std::chrono::steady_clock::now() < until);
    return VK_TIMEOUT;
}

VKAPI_ATTR VkResult VKAPI_CALL fake_counter(VkDevice, VkSemaphore, uint64_t* value) {
    *value = g_counter.load();
    return VK_SUCCESS;
}

struct Annexes {
    std::mutex mutex;
    std::vector<std::tuple<uint64_t, uint64_t, std::string>> sent;

    size_t size() {
        std::lock_guard lock(mutex);
        return sent.size();
    }
};

class TimelineReadback : public ::testing::Test {
protected:
    void SetUp() override {
        g_counter = 0;
        slot_.mapped = memory_;
        workload_->tag = 77;
        workload_->local_size = Size3{64, 1, 1};
    }

    std::unique_ptr<ReadbackWorker> worker() {
        ReadbackWorker::Config config;
        config.wait = fake_wait;
        config.counter = fake_counter;
        config.invalidate = [this](const ParameterSlot&) { ++invalidations_; };
        config.annex = [this](uint64_t submit, uint64_t tag, const std::string& json) {
            std::lock_guard lock(annexes_.mutex);
            annexes_.sent.emplace_back(submit, tag, json);
        };
        return std::make_unique<ReadbackWorker>(std::move(config));
    }

    ReadbackJob job(uint64_t submit, uint64_t value) {
        ReadbackJob j;
        j.semaphore = reinterpret_cast<VkSemaphore>(uintptr_t{0x5e});
        j.value = value;
        Readback r;
        r.submit = submit;
        r.workload = workload_;
        r.copies.push_back(ParameterCopy{&slot_, ParameterKind::dispatch, 0});
        j.readbacks.push_back(r);
        ReadbackWorker::claim(j);
        return j;
    }

    static bool eventually(const std::function<bool()>& done) {
        for (int i = 0; i < 2000 && !done(); ++i) {
            std::this_thread::sleep_for(1ms);
        }
        return done();
    }

    volatile uint32_t memory_[4] = {8, 2, 1, 0};
    ParameterSlot slot_;
    std::shared_ptr<Workload> workload_ = std::make_shared<Workload>();
    Annexes annexes_;
    std::atomic<int> invalidations_{0};
};

TEST_F(TimelineReadback, ReadsOnlyOnceTheSubmissionIsDone) {
    auto w = worker();
    w->push(job(5, 1));
    EXPECT_TRUE(slot_.in_flight.load());
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(annexes_.size(), 0u) << "the GPU is not there yet";
    g_counter = 1;
    ASSERT_TRUE(eventually([&] { return annexes_.size() == 1; }));
    const auto& [submit, tag, json] = annexes_.sent[0];
    EXPECT_EQ(submit, 5u);
    EXPECT_EQ(tag, 77u);
    auto parsed = JsonParser::parse(json);
    ASSERT_TRUE(parsed);
    EXPECT_EQ((*parsed)["groups"][0].text, "8");
    EXPECT_EQ((*parsed)["invocations"].text, "1024");
    EXPECT_TRUE(eventually([&] { return !slot_.in_flight.load(); }));
    EXPECT_EQ(invalidations_.load(), 1);
}

TEST_F(TimelineReadback, ASecondSubmissionWaitsForTheFirstRead) {
    auto w = worker();
    w->push(job(5, 1));
    std::thread gpu([] {
        std::this_thread::sleep_for(20ms);
        g_counter = 1;
    });
    EXPECT_TRUE(w->wait_read(slot_, 5s));
    gpu.join();
    EXPECT_EQ(annexes_.size(), 1u) << "read before the wait returned";
    EXPECT_FALSE(slot_.in_flight.load());
}

TEST_F(TimelineReadback, ATooSlowReadbackIsDisownedNotMisread) {
    auto w = worker();
    w->push(job(5, 1));
    EXPECT_FALSE(w->wait_read(slot_, 10ms));
    // The next submission takes the slot over and writes other values into it.
    ReadbackJob next = job(6, 2);
    memory_[0] = 3;
    w->push(std::move(next));
    g_counter = 2;
    ASSERT_TRUE(eventually([&] { return annexes_.size() >= 1 && !slot_.in_flight.load(); }));
    std::this_thread::sleep_for(20ms);
    ASSERT_EQ(annexes_.size(), 1u) << "the first submission reports nothing";
    EXPECT_EQ(std::get<0>(annexes_.sent[0]), 6u);
}

// Submissions closer together than ReadbackWorker::kBatch: the worker only looks at the
// semaphore between batches. Every submission is still read, in order, once the GPU is past it,
// and a submission waiting for a slot's readback is not left to the batching.
TEST_F(TimelineReadback, FrequentSubmissionsAreAllRead) {
    constexpr uint64_t kJobs = 40;
    std::vector<ParameterSlot> slots(kJobs);
    for (ParameterSlot& s : slots) {
        s.mapped = memory_;
    }
    auto w = worker();
    for (uint64_t i = 0; i < kJobs; ++i) {
        ReadbackJob j = job(100 + i, i + 1);
        j.readbacks[0].copies[0].slot = &slots[i];
        ReadbackWorker::claim(j);
        w->push(std::move(j));
        // The GPU finishes each submission a little after the next one is pushed.
        if (i > 0) {
            g_counter = i;
        }
        std::this_thread::sleep_for(500us);
    }
    g_counter = kJobs;
    EXPECT_TRUE(w->wait_read(slots.back(), 5s));
    ASSERT_TRUE(eventually([&] { return annexes_.size() == kJobs; }));
    for (uint64_t i = 0; i < kJobs; ++i) {
        EXPECT_EQ(std::get<0>(annexes_.sent[i]), 100 + i);
        EXPECT_FALSE(slots[i].in_flight.load());
    }
}

TEST_F(TimelineReadback, StoppingDropsWhatTheGpuNeverFinished) {
    auto w = worker();
    w->push(job(5, 1));
    w.reset(); // waits a short grace, then gives the slot back unread
    EXPECT_EQ(annexes_.size(), 0u);
    EXPECT_FALSE(slot_.in_flight.load());
}

} // namespace
} // namespace vkscope::timeline
