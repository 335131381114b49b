#pragma once
// A layer thread that belongs to the process that started it. A forked child has no such thread
// (fork copies only the calling thread), and the parent's thread may have held the owner's lock at
// the fork: there the owner leaves both untouched and lets the handle go without a join.

#include "core/background_thread.hpp"
#include "core/message_channel.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>

namespace vkscope {

class ProcessThread {
public:
    ProcessThread() = default;
    ProcessThread(const ProcessThread&) = delete;
    ProcessThread& operator=(const ProcessThread&) = delete;
    ~ProcessThread() {
        if (thread_.joinable()) {
            // Stopped by its owner (stop()); here only a handle left in a forked child.
            [[maybe_unused]] auto* never_destroyed = new std::thread(std::move(thread_));
        }
    }

    // Starts it (start_layer_thread: throws what std::thread throws).
    template <typename Body> void start(Body body) {
        thread_ = start_layer_thread(std::move(body));
    }
    // Started, and this is the process that started it (not a forked child).
    bool running() const { return thread_.joinable() && usable(); }
    // This is the process the owner was made in.
    bool usable() const { return generation_ == MessageChannel::fork_generation(); }

    // Tells the thread to stop (`stopping` set under `mutex`, `wake` notified) and joins it;
    // in a forked child, does nothing (the destructor lets the handle go).
    void stop(std::mutex& mutex, bool& stopping, std::condition_variable& wake) {
        if (!running()) {
            return;
        }
        {
            std::lock_guard lock(mutex);
            stopping = true;
        }
        wake.notify_one();
        thread_.join();
    }

private:
    const uint64_t generation_ = MessageChannel::fork_generation();
    std::thread thread_;
};

} // namespace vkscope
