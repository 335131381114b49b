#pragma once
// Messages the layer has yet to post: work handed to one of its threads that will post to the
// capture server's channel when it runs (the timeline's interpretation worker). Whoever is about
// to close the channel, or a fatal signal's handler about to wait for the sender, first gives
// that work the chance to post, so that it is not lost to a queue it never reached.

#include <chrono>
#include <cstdint>

namespace vkscope {

// `n` more (or, negative, fewer) pieces of such work.
void add_pending_posts(int64_t n) noexcept;
// Waits until none is left, for at most `limit`; false when some still was. Async-signal-safe:
// it reads an atomic and sleeps with nanosleep().
bool wait_for_pending_posts(std::chrono::milliseconds limit) noexcept;

} // namespace vkscope
