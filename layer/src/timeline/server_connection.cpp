#include "timeline/server_connection.hpp"

#include "core/log.hpp"
#include "core/message_channel.hpp"
#include "core/query_pool_count.hpp"
#include "timeline/messages.hpp"

#include <cerrno>
#include <mutex>
#include <unistd.h>

#ifndef VKSCOPE_VERSION
#define VKSCOPE_VERSION "0"
#endif

namespace vkscope::timeline {
namespace {

std::mutex g_mutex;
int g_users = 0;
std::shared_ptr<MessageChannel> g_channel;
// Some instance had an instrument that makes query pools: GOODBYE says how many it took.
bool g_report_query_pools = false;

// Enough for a capture server that is up to take the last messages, short enough that an
// application whose server is gone does not notice.
constexpr std::chrono::milliseconds kCloseGrace{250};

} // namespace

std::shared_ptr<MessageChannel> acquire_server_channel(const SettingValues& settings,
                                                       bool report_query_pools) {
    std::lock_guard lock(g_mutex);
    ++g_users;
    g_report_query_pools = g_report_query_pools || report_query_pools;
    if (!g_channel && !settings.host.empty()) {
        std::string error;
        g_channel = MessageChannel::open(settings.host, static_cast<size_t>(settings.message_queue),
                                         static_cast<size_t>(settings.message_bytes), &error);
        if (!g_channel) {
            log_once(LogLevel::warn, "timeline: host '%s' cannot be used (%s); nothing is sent",
                     settings.host.c_str(), error.c_str());
        } else {
            g_channel->set_greeting(hello_frame(static_cast<uint32_t>(getpid()),
                                                program_invocation_short_name, VKSCOPE_VERSION));
        }
    }
    return g_channel;
}

void release_server_channel() {
    std::shared_ptr<MessageChannel> closing;
    {
        std::lock_guard lock(g_mutex);
        if (--g_users > 0 || !g_channel) {
            return;
        }
        closing = std::move(g_channel);
    }
    std::optional<uint64_t> pools;
    {
        std::lock_guard lock(g_mutex);
        if (g_report_query_pools) {
            pools = query_pools_created();
        }
    }
    closing->post(goodbye_frame(closing->dropped(), pools));
    closing->close(kCloseGrace);
    if (closing->dropped() > 0) {
        log(LogLevel::info, "timeline: %llu messages could not be sent to %s",
            static_cast<unsigned long long>(closing->dropped()), closing->address().c_str());
    }
}

} // namespace vkscope::timeline
