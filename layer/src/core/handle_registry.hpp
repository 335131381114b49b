#pragma once
// Maps a dispatchable handle's loader dispatch key to the layer's state for it.
//
// Lookups happen on every intercepted call from any thread, so they take no lock: a fixed array
// of atomic slots scanned linearly (applications have one or two instances and devices, so the
// first slot almost always matches). Only insert and erase, which follow object creation and
// destruction, serialise on a mutex.

#include <array>
#include <atomic>
#include <mutex>

namespace vkscope {

// The loader writes its dispatch table pointer at the start of every dispatchable object; all
// objects of one device (queues, command buffers) share their device's key.
inline void* dispatch_key(const void* handle) {
    return *static_cast<void* const*>(handle);
}

template <typename T, size_t Capacity = 64> class HandleRegistry {
public:
    [[gnu::always_inline]] T* find(const void* key) const noexcept {
        for (const Slot& s : slots_) {
            if (s.key.load(std::memory_order_acquire) == key) {
                return s.value.load(std::memory_order_acquire);
            }
        }
        return nullptr;
    }

    // Returns false when every slot is taken.
    bool insert(const void* key, T* value) {
        std::lock_guard lock(write_mutex_);
        for (Slot& s : slots_) {
            if (s.key.load(std::memory_order_relaxed) == nullptr) {
                s.value.store(value, std::memory_order_relaxed);
                s.key.store(key, std::memory_order_release);
                return true;
            }
        }
        return false;
    }

    // Removes the key and returns its value (or nullptr if it was not there).
    T* erase(const void* key) {
        std::lock_guard lock(write_mutex_);
        for (Slot& s : slots_) {
            if (s.key.load(std::memory_order_relaxed) == key) {
                T* value = s.value.load(std::memory_order_relaxed);
                s.key.store(nullptr, std::memory_order_release);
                s.value.store(nullptr, std::memory_order_relaxed);
                return value;
            }
        }
        return nullptr;
    }

private:
    struct Slot {
        std::atomic<const void*> key{nullptr};
        std::atomic<T*> value{nullptr};
    };
    std::array<Slot, Capacity> slots_{};
    std::mutex write_mutex_;
};

} // namespace vkscope
