#pragma once
// A HandleMap that owns its values: the layer's description of each application object, created
// with the object and destroyed with it (or with the device).

#include "core/handle_map.hpp"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace vkscope {

// The 64-bit value of a handle, dispatchable (a pointer) or not (a pointer or an integer).
template <typename Handle> uint64_t key(Handle handle) {
    return (uint64_t)(handle);
}

template <typename V> class OwnedMap {
public:
    OwnedMap() = default;
    OwnedMap(const OwnedMap&) = delete;
    OwnedMap& operator=(const OwnedMap&) = delete;
    ~OwnedMap() { clear(); }

    V* find(uint64_t k) const noexcept { return map_.find(k); }

    V* insert(uint64_t k, std::unique_ptr<V> value) {
        // A handle value the driver hands out again after a destruction the layer did not see.
        erase(k);
        V* raw = value.get();
        if (map_.insert(k, raw)) {
            value.release();
            return raw;
        }
        return nullptr;
    }

    // The application destroys an object only once nothing uses it, so nobody holds the value.
    void erase(uint64_t k) { delete map_.erase(k); }

    void clear() {
        std::vector<uint64_t> keys;
        map_.for_each([&](uint64_t k, V*) { keys.push_back(k); });
        for (uint64_t k : keys) {
            erase(k);
        }
    }

    template <typename F> void for_each(F&& f) const { map_.for_each(std::forward<F>(f)); }

private:
    HandleMap<V> map_;
};

} // namespace vkscope
