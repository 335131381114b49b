// The layer's threads: started with every signal blocked, and known by their names to the
// CPU-time sampler, which leaves their work out of the application's.

#include "core/background_thread.hpp"
#include "core/process_thread.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <future>
#include <mutex>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace vkscope {
namespace {

pid_t this_thread_id() {
    return static_cast<pid_t>(syscall(SYS_gettid));
}

TEST(LayerThreads, ANamedLayerThreadIsKnownAsOneAndTheApplicationsAreNot) {
    std::promise<pid_t> started;
    std::promise<void> checked;
    std::atomic<bool> signals_blocked{false};
    std::thread t = start_layer_thread([&] {
        sigset_t mask;
        pthread_sigmask(SIG_SETMASK, nullptr, &mask);
        signals_blocked = sigismember(&mask, SIGTERM) == 1 && sigismember(&mask, SIGINT) == 1;
        become_background_thread(kInterpretationThread);
        started.set_value(this_thread_id());
        checked.get_future().wait();
    });
    const pid_t tid = started.get_future().get();
    EXPECT_TRUE(is_layer_thread(tid));
    EXPECT_TRUE(signals_blocked);
    // The application's threads, this one among them, are not the layer's.
    EXPECT_FALSE(is_layer_thread(this_thread_id()));
    checked.set_value();
    t.join();
}

TEST(LayerThreads, AnApplicationThreadWhoseNameLooksLikeTheLayersIsNotTheLayers) {
    std::promise<pid_t> started;
    std::promise<void> checked;
    std::thread t([&] {
        // The main thread of the workload program, named after it (15 characters kept).
        pthread_setname_np(pthread_self(), "vkscope-workloa");
        started.set_value(this_thread_id());
        checked.get_future().wait();
    });
    const pid_t tid = started.get_future().get();
    EXPECT_FALSE(is_layer_thread(tid));
    checked.set_value();
    t.join();
}

// A thread of the process that started it runs until told to stop; stop() joins it, and a
// second stop() (or none started) does nothing.
TEST(LayerThreads, AProcessThreadStopsWhenTold) {
    std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false;
    std::atomic<bool> ran{false};
    std::atomic<bool> finished{false};
    ProcessThread thread;
    EXPECT_FALSE(thread.running());
    EXPECT_TRUE(thread.usable());
    thread.start([&] {
        ran = true;
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return stopping; });
        finished = true;
    });
    EXPECT_TRUE(thread.running());
    thread.stop(mutex, stopping, wake);
    EXPECT_TRUE(ran);
    EXPECT_TRUE(finished) << "joined after the body returned";
    EXPECT_FALSE(thread.running());
    thread.stop(mutex, stopping, wake);
}

} // namespace
} // namespace vkscope
