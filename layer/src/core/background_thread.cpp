#include "core/background_thread.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <pthread.h>

#ifdef __linux__
#include <sched.h>
#endif

namespace vkscope {

std::thread start_layer_thread(std::function<void()> body) {
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    try {
        std::thread thread(std::move(body));
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        return thread;
    } catch (...) {
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        throw;
    }
}

void name_layer_thread([[maybe_unused]] const char* name) {
#ifdef __linux__
    pthread_setname_np(pthread_self(), name);
#endif
}

bool is_layer_thread([[maybe_unused]] pid_t tid) {
#ifdef __linux__
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/comm", static_cast<int>(tid));
    std::FILE* f = std::fopen(path, "r");
    if (!f) {
        return false;
    }
    char name[32] = {};
    const bool read = std::fgets(name, sizeof name, f) != nullptr;
    std::fclose(f);
    if (!read) {
        return false;
    }
    std::string_view n(name);
    if (n.ends_with('\n')) {
        n.remove_suffix(1);
    }
    return std::find(kLayerThreadNames.begin(), kLayerThreadNames.end(), n) !=
           kLayerThreadNames.end();
#else
    return false;
#endif
}

void become_background_thread(const char* name) {
    name_layer_thread(name);
#ifdef __linux__
    const sched_param param{0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
#endif
}

} // namespace vkscope
