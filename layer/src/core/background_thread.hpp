#pragma once
// The layer's own threads run beside the application's. Each names itself first; the sender,
// whose lag costs only buffered bytes, also gives up preempting the application.

#include <functional>
#include <thread>

namespace vkscope {

// Starts one of the layer's threads with every signal blocked: the application's handlers expect
// to run on the application's threads, not in the middle of the layer's. Throws what std::thread
// throws, with the calling thread's signal mask as it was.
std::thread start_layer_thread(std::function<void()> body);

// Names the calling thread, so that a CPU-time sampler can leave the profiler's own work out.
void name_layer_thread(const char* name);

// Names the calling thread (name_layer_thread) and gives it SCHED_BATCH: the scheduler no
// longer lets its wake-ups preempt a running thread. On a busy machine a sender thread that woke
// during the application's vkQueueSubmit used to switch the application's thread out for the
// length of its run (docs/timeline.md); now it waits for a free core or the next tick. Its share
// of the CPU is unchanged. Where the system refuses, the thread stays as it was.
void become_background_thread(const char* name);

} // namespace vkscope
