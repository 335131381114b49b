// Destroys what a scenario created, in reverse order of creation, once the device is idle.
// Scenarios register a destroy call right after each successful create, so teardown is
// complete even when setup or a frame throws halfway.
#pragma once

#include <vulkan/vulkan.h>

#include <functional>
#include <utility>
#include <vector>

namespace wl {

class Janitor {
public:
    Janitor() = default;
    Janitor(const Janitor&) = delete;
    Janitor& operator=(const Janitor&) = delete;
    ~Janitor() { release(); }

    void attach(VkDevice device) { device_ = device; }
    void defer(std::function<void()> destroy) { destroyers_.push_back(std::move(destroy)); }

    void release() {
        if (destroyers_.empty()) {
            return;
        }
        if (device_) {
            vkDeviceWaitIdle(device_);
        }
        while (!destroyers_.empty()) {
            std::function<void()> destroy = std::move(destroyers_.back());
            destroyers_.pop_back();
            destroy();
        }
    }

private:
    VkDevice device_ = VK_NULL_HANDLE;
    std::vector<std::function<void()>> destroyers_;
};

} // namespace wl
