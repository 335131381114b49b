#pragma once
// The layer's own threads run beside the application's. Each names itself first; the sender,
// whose lag costs only buffered bytes, also gives up preempting the application.

#include <array>
#include <functional>
#include <string_view>
#include <sys/types.h>
#include <thread>

namespace vkscope {

// Starts one of the layer's threads with every signal blocked: the application's handlers expect
// to run on the application's threads, not in the middle of the layer's. Throws what std::thread
// throws, with the calling thread's signal mask as it was.
std::thread start_layer_thread(std::function<void()> body);

// The layer's threads by name (at most 15 characters: the kernel's limit). Only these are the
// layer's: a name's prefix would not do, since an application's main thread carries its
// program's name (the workload program's is vkscope-workload).
inline constexpr const char* kSenderThread = "vkscope-sender";
inline constexpr const char* kReadbackThread = "vkscope-readbk";
inline constexpr const char* kInterpretationThread = "vkscope-interp";
inline constexpr const char* kBudgetThread = "vkscope-budget";
inline constexpr std::array<std::string_view, 4> kLayerThreadNames = {
    kSenderThread, kReadbackThread, kInterpretationThread, kBudgetThread};

// Names the calling thread, one of kLayerThreadNames, so that a CPU-time sampler can leave the
// profiler's own work out.
void name_layer_thread(const char* name);

// Whether thread `tid` of this process is one of the layer's (its name is one of
// kLayerThreadNames). False where the name cannot be read (the thread has ended).
bool is_layer_thread(pid_t tid);

// Names the calling thread (name_layer_thread) and gives it SCHED_BATCH: the scheduler no
// longer lets its wake-ups preempt a running thread. On a busy machine a sender thread that woke
// during the application's vkQueueSubmit used to switch the application's thread out for the
// length of its run (docs/timeline.md); now it waits for a free core or the next tick. Its share
// of the CPU is unchanged. Where the system refuses, the thread stays as it was.
void become_background_thread(const char* name);

} // namespace vkscope
