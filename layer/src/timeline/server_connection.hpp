#pragma once
// The process's one connection to the capture server. It opens with the first instance that has
// the timeline on and a capture server address, greets every (re)connection with HELLO, and says
// GOODBYE when the last such instance is destroyed.

#include "settings.gen.hpp"

#include <cstdint>
#include <memory>

namespace vkscope {
class MessageChannel;
}

namespace vkscope::timeline {

// Null when the settings name no capture server (or it cannot be reached): the timeline then sends
// nothing. `report_query_pools`: the instance has instruments that make query pools, so GOODBYE
// says how many the process made. `user` is set to what release_server_channel takes back: an
// instance a forked child inherited from its parent does not count among the child's users.
std::shared_ptr<MessageChannel> acquire_server_channel(const SettingValues& settings,
                                                       bool report_query_pools, uint64_t& user);
void release_server_channel(uint64_t user);

} // namespace vkscope::timeline
