#pragma once
// Maps non-dispatchable Vulkan handles (as uint64_t) to the layer's state for them.
//
// find() runs on every recorded command from any thread, so it takes no lock and writes no
// shared memory: readers on many cores never contend on a cache line. insert() and erase() follow
// object creation and destruction and serialise on a mutex.
//
// The table is open-addressed with linear probing. Keys are atomics; kEmpty ends a probe and
// kTombstone marks an erased key that probes must step over. Growth publishes a bigger table
// through an atomic pointer; the old table is never written again and stays allocated until the
// map dies, because a reader may still be probing it. Growth doubles, so the retired tables
// together are smaller than the current one.
//
// Churn (erase then insert of new keys) would fill a table with tombstones. Allocating a fresh
// table of the same size to drop them would leak one retired table per cycle, so tombstones are
// instead removed in place: a tombstone with an empty slot after it is emptied at once, and when
// tombstones still pile up the table is re-laid out in place inside a seqlock-style window.
// During that window entries move, so a reader's "not found" may be wrong and is retried; a
// reader's "found" is always right, because a slot being rewritten passes through kTombstone
// before it gets another key and the reader re-checks the key after loading the value.

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace vkscope {

template <typename V> class HandleMap {
public:
    // Neither reserved value can be stored; no driver hands them out as a handle.
    static constexpr uint64_t kEmpty = 0;
    static constexpr uint64_t kTombstone = ~uint64_t{0};

    HandleMap() {
        tables_.push_back(std::make_unique<Table>(kMinCapacity));
        current_.store(tables_.back().get(), std::memory_order_release);
    }
    HandleMap(const HandleMap&) = delete;
    HandleMap& operator=(const HandleMap&) = delete;

    V* find(uint64_t key) const noexcept {
        if (key == kEmpty || key == kTombstone) {
            return nullptr;
        }
        for (;;) {
            const uint64_t version = version_.load(std::memory_order_acquire);
            const Table* table = current_.load(std::memory_order_acquire);
            V* value = nullptr;
            const Probe probe = table->probe(key, value);
            if (probe == Probe::Found) {
                return value;
            }
            // Every store of a re-layout is a release store, so a probe that saw any of them has
            // also seen the odd version and reads a different one here.
            if (probe == Probe::Missing && version % 2 == 0 &&
                version_.load(std::memory_order_relaxed) == version) {
                return nullptr;
            }
            std::this_thread::yield();
        }
    }

    // False when the key is already present, is one of the reserved values, or value is null
    // (which find() could not tell from "absent").
    bool insert(uint64_t key, V* value) {
        if (key == kEmpty || key == kTombstone || value == nullptr) {
            return false;
        }
        std::lock_guard lock(mutex_);
        Table* table = current_.load(std::memory_order_relaxed);
        size_t free_slot = table->capacity;
        bool free_is_empty = false;
        for (size_t i = table->home(key), n = 0; n < table->capacity; ++n, i = table->next(i)) {
            const uint64_t k = table->slots[i].key.load(std::memory_order_relaxed);
            if (k == key) {
                return false;
            }
            if (k == kTombstone && free_slot == table->capacity) {
                free_slot = i;
            }
            if (k == kEmpty) {
                if (free_slot == table->capacity) {
                    free_slot = i;
                    free_is_empty = true;
                }
                break;
            }
        }
        // The probe always meets an empty slot while the table is at most 3/4 full; the first
        // test only guards against that invariant ever breaking.
        if (free_slot == table->capacity ||
            (free_is_empty && (used_ + 1) * 4 > table->capacity * 3)) {
            table = make_room();
            free_slot = table->free_slot_for(key);
        } else if (!free_is_empty) {
            // Reusing a tombstone leaves the count of non-empty slots as it is.
            --used_;
        }
        Slot& slot = table->slots[free_slot];
        slot.value.store(value, std::memory_order_release);
        slot.key.store(key, std::memory_order_release);
        ++used_;
        size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return true;
    }

    // Removes the key; returns its value, or nullptr when it was not there.
    V* erase(uint64_t key) {
        if (key == kEmpty || key == kTombstone) {
            return nullptr;
        }
        std::lock_guard lock(mutex_);
        Table* table = current_.load(std::memory_order_relaxed);
        for (size_t i = table->home(key), n = 0; n < table->capacity; ++n, i = table->next(i)) {
            const uint64_t k = table->slots[i].key.load(std::memory_order_relaxed);
            if (k == kEmpty) {
                return nullptr;
            }
            if (k != key) {
                continue;
            }
            V* value = table->slots[i].value.load(std::memory_order_relaxed);
            table->slots[i].key.store(kTombstone, std::memory_order_release);
            size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
            // A tombstone followed by an empty slot lies on no live key's probe path (that path
            // would have to continue through the empty slot), so it can become empty right away,
            // and so can the tombstones before it.
            for (size_t j = i, m = 0; m < table->capacity; ++m, j = table->prev(j)) {
                if (table->slots[table->next(j)].key.load(std::memory_order_relaxed) != kEmpty ||
                    table->slots[j].key.load(std::memory_order_relaxed) != kTombstone) {
                    break;
                }
                table->slots[j].key.store(kEmpty, std::memory_order_release);
                --used_;
            }
            return value;
        }
        return nullptr;
    }

    size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }

    // Slots in the current table.
    size_t capacity() const noexcept { return current_.load(std::memory_order_acquire)->capacity; }

    // Slots in all tables, retired ones included: what the map's memory grows with.
    size_t total_capacity() const {
        std::lock_guard lock(mutex_);
        size_t total = 0;
        for (const auto& table : tables_) {
            total += table->capacity;
        }
        return total;
    }

    // Calls f(key, value) for every entry while holding the write lock; f must not call insert()
    // or erase() on this map.
    template <typename F> void for_each(F&& f) const {
        std::lock_guard lock(mutex_);
        const Table* table = current_.load(std::memory_order_relaxed);
        for (size_t i = 0; i < table->capacity; ++i) {
            const uint64_t k = table->slots[i].key.load(std::memory_order_relaxed);
            if (k != kEmpty && k != kTombstone) {
                f(k, table->slots[i].value.load(std::memory_order_relaxed));
            }
        }
    }

private:
    static constexpr size_t kMinCapacity = 16;

    enum class Probe { Found, Missing, Retry };

    struct Slot {
        std::atomic<uint64_t> key{kEmpty};
        std::atomic<V*> value{nullptr};
    };

    struct Table {
        explicit Table(size_t cap)
            : capacity(cap), shift(64 - std::countr_zero(cap)), slots(new Slot[cap]) {}

        // Fibonacci hashing: handles are often aligned pointers or small counters, whose low
        // bits alone would cluster.
        size_t home(uint64_t key) const noexcept {
            return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift);
        }
        size_t next(size_t i) const noexcept { return (i + 1) & (capacity - 1); }
        size_t prev(size_t i) const noexcept { return (i - 1) & (capacity - 1); }

        Probe probe(uint64_t key, V*& value) const noexcept {
            for (size_t i = home(key), n = 0; n < capacity; ++n, i = next(i)) {
                const uint64_t k = slots[i].key.load(std::memory_order_acquire);
                if (k == key) {
                    value = slots[i].value.load(std::memory_order_acquire);
                    // The slot may have been given to another key between the two loads.
                    return slots[i].key.load(std::memory_order_acquire) == key ? Probe::Found
                                                                               : Probe::Retry;
                }
                if (k == kEmpty) {
                    return Probe::Missing;
                }
            }
            return Probe::Missing;
        }

        // Writer side, on a table without tombstones on the key's path.
        size_t free_slot_for(uint64_t key) const noexcept {
            size_t i = home(key);
            while (slots[i].key.load(std::memory_order_relaxed) != kEmpty) {
                i = next(i);
            }
            return i;
        }

        const size_t capacity;
        const int shift;
        const std::unique_ptr<Slot[]> slots;
    };

    // Called with the lock held when an insert would take the table past 3/4 full (counting
    // tombstones); returns the table to insert into, with no tombstones and at most half full.
    Table* make_room() {
        Table* old = current_.load(std::memory_order_relaxed);
        const size_t needed = size() + 1;
        if (needed * 2 <= old->capacity) {
            relayout(*old);
            return old;
        }
        size_t capacity = old->capacity * 2;
        while (needed * 2 > capacity) {
            capacity *= 2;
        }
        // Unpublished until the end, so plain (relaxed) stores suffice while filling it.
        auto table = std::make_unique<Table>(capacity);
        for (size_t i = 0; i < old->capacity; ++i) {
            const uint64_t k = old->slots[i].key.load(std::memory_order_relaxed);
            if (k != kEmpty && k != kTombstone) {
                Slot& slot = table->slots[table->free_slot_for(k)];
                slot.value.store(old->slots[i].value.load(std::memory_order_relaxed),
                                 std::memory_order_relaxed);
                slot.key.store(k, std::memory_order_relaxed);
            }
        }
        current_.store(table.get(), std::memory_order_release);
        tables_.push_back(std::move(table));
        used_ = size();
        return tables_.back().get();
    }

    // Lays the live entries out again in the same slots, dropping every tombstone.
    void relayout(Table& table) {
        std::vector<std::pair<uint64_t, V*>> layout(table.capacity, {kEmpty, nullptr});
        for (size_t i = 0; i < table.capacity; ++i) {
            const uint64_t k = table.slots[i].key.load(std::memory_order_relaxed);
            if (k != kEmpty && k != kTombstone) {
                size_t at = table.home(k);
                while (layout[at].first != kEmpty) {
                    at = table.next(at);
                }
                layout[at] = {k, table.slots[i].value.load(std::memory_order_relaxed)};
            }
        }
        const uint64_t version = version_.load(std::memory_order_relaxed);
        version_.store(version + 1, std::memory_order_relaxed);
        for (size_t i = 0; i < table.capacity; ++i) {
            Slot& slot = table.slots[i];
            const uint64_t k = slot.key.load(std::memory_order_relaxed);
            const auto [key, value] = layout[i];
            if (k == key) {
                continue;
            }
            if (key == kEmpty) {
                slot.key.store(kEmpty, std::memory_order_release);
                continue;
            }
            if (k != kEmpty && k != kTombstone) {
                slot.key.store(kTombstone, std::memory_order_release);
            }
            slot.value.store(value, std::memory_order_release);
            slot.key.store(key, std::memory_order_release);
        }
        version_.store(version + 2, std::memory_order_release);
        used_ = size();
    }

    std::atomic<Table*> current_{nullptr};
    std::atomic<uint64_t> version_{0}; // odd while relayout() moves entries
    std::atomic<size_t> size_{0};
    size_t used_ = 0; // live entries plus tombstones in the current table; under mutex_
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Table>> tables_; // every table ever published; under mutex_
};

} // namespace vkscope
