#include "core/background_thread.hpp"

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace vkscope {

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
