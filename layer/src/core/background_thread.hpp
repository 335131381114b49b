#pragma once
// The layer's own threads (the sender, the readback thread) run beside the application's: they
// must never take a core from it at the moment they wake. Each calls this first.

namespace vkscope {

// Names the calling thread (so that a CPU-time sampler can leave the profiler's own work out)
// and gives it SCHED_BATCH: the scheduler no longer lets its wake-ups preempt a running thread.
// On a busy machine a readback or sender thread that woke during the application's
// vkQueueSubmit used to switch the application's thread out for the length of its run
// (docs/timeline.md); now it waits for a free core or the next tick. Its share of the CPU is
// unchanged. Where the system refuses, the thread stays as it was.
void become_background_thread(const char* name);

} // namespace vkscope
