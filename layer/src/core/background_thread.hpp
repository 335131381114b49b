#pragma once
// The layer's own threads run beside the application's. Each names itself first; the sender,
// whose lag costs only buffered bytes, also gives up preempting the application.

namespace vkscope {

// Names the calling thread, so that a CPU-time sampler can leave the profiler's own work out.
void name_layer_thread(const char* name);

// Names the calling thread (name_layer_thread) and gives it SCHED_BATCH: the scheduler no
// longer lets its wake-ups preempt a running thread. On a busy machine a sender thread that woke
// during the application's vkQueueSubmit used to switch the application's thread out for the
// length of its run (docs/timeline.md); now it waits for a free core or the next tick. Its share
// of the CPU is unchanged. Where the system refuses, the thread stays as it was.
void become_background_thread(const char* name);

} // namespace vkscope
