#pragma once
// What the layer does when the application dies of a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGABRT): the frames before it reach the capture. The sender holds what is posted for up to
// 20 ms (message_channel.hpp), so without this a crash early in a run loses everything.
//
// The handler, installed over the application's own when the process's channel opens, gives the
// sender thread up to kFatalSignalGrace to write everything posted before the signal; then it
// puts the application's own disposition back and hands the signal on: a fault happens again
// when the handler returns, a signal that was sent (raise, abort, kill) is raised again. The
// application's handler then runs, or the default action kills the process, with the status it
// would have had without the layer.
//
// The handler is async-signal-safe: it reads atomics, sleeps with nanosleep() and calls
// sigaction() and raise(), nothing else; the writing is done by the sender, an ordinary thread
// (with every signal blocked, so never the one the handler interrupts).

#include <chrono>

namespace vkscope {

class MessageChannel;

constexpr std::chrono::milliseconds kFatalSignalGrace{1000};

// From now on a fatal signal waits for `channel`'s sender (once per process, the handlers are
// installed, and the layer's library is kept loaded: an application's handler installed later
// may call the layer's in turn).
void watch_fatal_signals(MessageChannel* channel);
// Before `channel` closes: the handlers wait for nothing, and give the application back its own
// dispositions where the layer's are still in place.
void unwatch_fatal_signals();

} // namespace vkscope
