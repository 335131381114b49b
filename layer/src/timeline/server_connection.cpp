#include "timeline/server_connection.hpp"

#include "core/fatal_signals.hpp"
#include "core/log.hpp"
#include "core/message_channel.hpp"
#include "core/pending_posts.hpp"
#include "core/query_pool_count.hpp"
#include "timeline/messages.hpp"

#include <cerrno>
#include <mutex>
#include <pthread.h>
#include <unistd.h>

#ifndef VKSCOPE_VERSION
#define VKSCOPE_VERSION "0"
#endif

namespace vkscope::timeline {
namespace {

std::mutex g_mutex;
// Instances using the channel. A forked child counts its own anew: the parent's instances it
// inherits are not its to close the channel with (the fork generation they were counted in).
int g_users = 0;
uint64_t g_users_generation = 0;
std::once_flag g_fork_handlers;
std::shared_ptr<MessageChannel> g_channel;
// Some instance had an instrument that makes query pools: GOODBYE says how many it took.
bool g_report_query_pools = false;
bool g_watching_signals = false; // the channel is watched by the fatal signal handlers

// Enough for a capture server that is up to take the last messages, short enough that an
// application whose server is gone does not notice.
constexpr std::chrono::milliseconds kCloseGrace{250};

// g_mutex is held across fork(), so that a child never starts with it taken by a thread it
// does not have.
void lock_for_fork() noexcept {
    g_mutex.lock();
}
void unlock_after_fork() noexcept {
    g_mutex.unlock();
}

} // namespace

std::shared_ptr<MessageChannel> acquire_server_channel(const SettingValues& settings,
                                                       bool report_query_pools, uint64_t& user) {
    std::call_once(g_fork_handlers,
                   [] { pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork); });
    std::lock_guard lock(g_mutex);
    if (g_users_generation != MessageChannel::fork_generation()) {
        g_users = 0;
        g_users_generation = MessageChannel::fork_generation();
    }
    ++g_users;
    user = g_users_generation;
    g_report_query_pools = g_report_query_pools || report_query_pools;
    if (!g_channel && !settings.host.empty()) {
        std::string error;
        g_channel = MessageChannel::open(settings.host, static_cast<size_t>(settings.message_queue),
                                         static_cast<size_t>(settings.message_bytes), &error);
        if (!g_channel) {
            log_once(LogLevel::warn, "timeline: host '%s' cannot be used (%s); nothing is sent",
                     settings.host.c_str(), error.c_str());
        } else {
            // Made again with a forked child's own pid where the child reopens the channel.
            g_channel->set_greeting([] {
                return hello_frame(static_cast<uint32_t>(getpid()), program_invocation_short_name,
                                   VKSCOPE_VERSION);
            });
            if (settings.flush_on_crash) {
                watch_fatal_signals(g_channel.get());
                g_watching_signals = true;
            }
        }
    }
    return g_channel;
}

void release_server_channel(uint64_t user) {
    std::shared_ptr<MessageChannel> closing;
    {
        std::lock_guard lock(g_mutex);
        if (user != MessageChannel::fork_generation() || user != g_users_generation) {
            return; // an instance of the parent's, in a forked child
        }
        if (--g_users > 0 || !g_channel) {
            return;
        }
        closing = std::move(g_channel);
        if (g_watching_signals) {
            unwatch_fatal_signals();
            g_watching_signals = false;
        }
    }
    std::optional<uint64_t> pools;
    {
        std::lock_guard lock(g_mutex);
        if (g_report_query_pools) {
            pools = query_pools_created();
        }
    }
    // GOODBYE is the last message: after what the layer's threads have yet to post.
    wait_for_pending_posts(kCloseGrace);
    closing->post(goodbye_frame(closing->dropped(), pools));
    closing->close(kCloseGrace);
    if (closing->dropped() > 0) {
        log(LogLevel::info, "timeline: %llu messages could not be sent to %s",
            static_cast<unsigned long long>(closing->dropped()), closing->address().c_str());
    }
}

} // namespace vkscope::timeline
