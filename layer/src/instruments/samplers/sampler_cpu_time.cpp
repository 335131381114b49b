// The cpu_time sampler: CPU time the process used, less the sampling thread's own and that of
// vkscope's own threads (core/background_thread.hpp: sending messages, reading results back,
// interpreting command streams).
// Between two samples taken by a thread that waits meanwhile, that is the time every other thread
// of the process ran: on a software rasterizer the GPU's work itself, elsewhere the CPU work that
// ran alongside the GPU's.
//
// The process clock (CLOCK_PROCESS_CPUTIME_ID) cannot serve: it adds up other threads' time only
// as of their last scheduler tick (4 ms at HZ=250), while a workload takes microseconds. Each
// thread's own clock, read from another thread of the process, is exact, so the sampler reads
// every live thread's and keeps a running total of what each added since the previous sample.

#include "core/background_thread.hpp"
#include "instruments/samplers/samplers.hpp"

#include <array>
#include <cstdio>
#include <ctime>
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace vkscope::samplers {
namespace {

const vkscope_sampler_counter kCounters[] = {
    {"cpu_time", "ns", "CPU time of the process less the sampling thread's and vkscope's",
     VKSCOPE_COUNTER_CUMULATIVE},
};

// Threads followed at once: far above what a Vulkan application runs; more are not counted.
constexpr size_t kThreads = 1024;

struct Thread {
    pid_t tid = 0;
    uint64_t last_ns = 0;
    bool seen = false;     // in the current sample
    bool profiler = false; // one of vkscope's own
};

struct State {
    std::array<Thread, kThreads> threads{};
    size_t count = 0;
    double total_ns = 0;
};

// Linux's clock id for thread `tid`'s CPU time (the scheduler's precise clock).
clockid_t thread_clock(pid_t tid) {
    return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
}

uint64_t ns_of(clockid_t clock, bool& ok) {
    timespec ts{};
    ok = clock_gettime(clock, &ts) == 0;
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void* open(const vkscope_sampler_device*, char* error, size_t size) {
    DIR* dir = opendir("/proc/self/task");
    if (!dir) {
        snprintf(error, size, "/proc/self/task cannot be read");
        return nullptr;
    }
    closedir(dir);
    return new State;
}

const vkscope_sampler_counter* counters(void*, uint32_t* count) {
    *count = 1;
    return kCounters;
}

int sample(void* sampler, double* values) {
    auto* s = static_cast<State*>(sampler);
    const auto self = static_cast<pid_t>(syscall(SYS_gettid));
    DIR* dir = opendir("/proc/self/task");
    if (!dir) {
        return 1;
    }
    for (size_t i = 0; i < s->count; ++i) {
        s->threads[i].seen = false;
    }
    while (const dirent* entry = readdir(dir)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') {
            continue;
        }
        const auto tid = static_cast<pid_t>(atoi(entry->d_name));
        bool ok = false;
        const uint64_t now = ns_of(thread_clock(tid), ok);
        if (!ok) {
            continue; // it ended meanwhile
        }
        Thread* t = nullptr;
        for (size_t i = 0; i < s->count; ++i) {
            if (s->threads[i].tid == tid) {
                t = &s->threads[i];
                break;
            }
        }
        if (!t) {
            if (s->count == kThreads) {
                continue;
            }
            // A new thread: all its time so far falls after the previous sample.
            t = &s->threads[s->count++];
            *t = Thread{tid, 0, false, is_layer_thread(tid)};
        }
        if (tid != self && !t->profiler && now > t->last_ns) {
            s->total_ns += static_cast<double>(now - t->last_ns);
        }
        t->last_ns = now;
        t->seen = true;
    }
    closedir(dir);
    // Threads that ended are forgotten (what they ran since the previous sample is lost).
    size_t kept = 0;
    for (size_t i = 0; i < s->count; ++i) {
        if (s->threads[i].seen) {
            s->threads[kept++] = s->threads[i];
        }
    }
    s->count = kept;
    values[0] = s->total_ns;
    return 0;
}

void close(void* sampler) {
    delete static_cast<State*>(sampler);
}

const vkscope_sampler_api kApi{
    VKSCOPE_SAMPLER_ABI_VERSION, "cpu_time", open, counters, sample, close};

} // namespace

const vkscope_sampler_api* cpu_time_sampler() {
    return &kApi;
}

} // namespace vkscope::samplers
