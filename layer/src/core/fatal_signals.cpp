#include "core/fatal_signals.hpp"

#include "core/pending_posts.hpp"

#include "core/message_channel.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <dlfcn.h>
#include <mutex>

namespace vkscope {
namespace {

constexpr std::array<int, 5> kSignals = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

std::atomic<MessageChannel*> g_channel{nullptr};
std::atomic<int> g_handlers_waiting{0}; // in a handler that may use g_channel
// The dispositions the layer replaced, written before its handler is installed.
std::array<struct sigaction, kSignals.size()> g_previous{};
std::array<std::atomic<bool>, kSignals.size()> g_installed{};
std::mutex g_mutex; // install and uninstall: never taken by the handler
bool g_pinned = false;

static_assert(std::atomic<MessageChannel*>::is_always_lock_free &&
                  std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "used in a signal handler");

int index_of(int signo) {
    for (size_t i = 0; i < kSignals.size(); ++i) {
        if (kSignals[i] == signo) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

void on_fatal_signal(int signo, siginfo_t* info, void*);

bool is_ours(const struct sigaction& action) {
    return (action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction == &on_fatal_signal;
}

void on_fatal_signal(int signo, siginfo_t* info, void*) {
    const int saved_errno = errno;
    g_handlers_waiting.fetch_add(1, std::memory_order_acq_rel);
    if (MessageChannel* channel = g_channel.load(std::memory_order_acquire)) {
        // First what the layer's threads have yet to post (the timeline's interpretations).
        wait_for_pending_posts(kFatalSignalGrace);
        channel->wait_for_sender(kFatalSignalGrace);
    }
    g_handlers_waiting.fetch_sub(1, std::memory_order_acq_rel);
    const int i = index_of(signo);
    if (i >= 0 && g_installed[static_cast<size_t>(i)].exchange(false)) {
        // The application's own disposition, as it was before the layer: it takes the signal
        // from here on, this one included.
        sigaction(signo, &g_previous[static_cast<size_t>(i)], nullptr);
    }
    // A fault (si_code > 0: the kernel's) comes again when the handler returns, at the same
    // instruction. A signal that was sent does not: it is raised again, pending until the
    // handler returns (the signal is blocked while its handler runs).
    if (info == nullptr || info->si_code <= 0) {
        raise(signo);
    }
    errno = saved_errno;
}

// The library stays loaded for the rest of the process: a handler that an application installs
// after the layer's keeps a pointer to it, and calls it in turn.
void pin_library() {
    Dl_info self{};
    if (dladdr(reinterpret_cast<const void*>(&on_fatal_signal), &self) && self.dli_fname) {
        // A reference never given back; RTLD_NOLOAD: the library is loaded already.
        dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    }
}

} // namespace

void watch_fatal_signals(MessageChannel* channel) {
    std::lock_guard lock(g_mutex);
    if (!g_pinned) {
        pin_library();
        g_pinned = true;
    }
    g_channel.store(channel, std::memory_order_release);
    for (size_t i = 0; i < kSignals.size(); ++i) {
        if (g_installed[i].load()) {
            continue;
        }
        struct sigaction action {};
        action.sa_sigaction = &on_fatal_signal;
        // SA_ONSTACK: on the thread's alternate stack where it has one, as after a stack
        // overflow the application's own handler would be.
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        struct sigaction previous {};
        if (sigaction(kSignals[i], nullptr, &previous) != 0 || is_ours(previous)) {
            continue;
        }
        g_previous[i] = previous;
        g_installed[i].store(true);
        if (sigaction(kSignals[i], &action, nullptr) != 0) {
            g_installed[i].store(false);
        }
    }
}

void unwatch_fatal_signals() {
    std::lock_guard lock(g_mutex);
    g_channel.store(nullptr, std::memory_order_release);
    // A handler that has the channel finishes with it before the channel goes away.
    while (g_handlers_waiting.load(std::memory_order_acquire) != 0) {
        timespec step{0, 1'000'000};
        nanosleep(&step, nullptr);
    }
    for (size_t i = 0; i < kSignals.size(); ++i) {
        struct sigaction current {};
        if (!g_installed[i].load() || sigaction(kSignals[i], nullptr, &current) != 0) {
            continue;
        }
        // Where the application installed its own handler over the layer's, it stays; the
        // layer's, left in its chain, then only hands the signal on.
        if (is_ours(current) && g_installed[i].exchange(false)) {
            sigaction(kSignals[i], &g_previous[i], nullptr);
        }
    }
}

} // namespace vkscope
