#include "core/background_thread.hpp"

#include <csignal>
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

void become_background_thread(const char* name) {
    name_layer_thread(name);
#ifdef __linux__
    const sched_param param{0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
#endif
}

} // namespace vkscope
