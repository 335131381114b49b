// Which drivers get the event handover and which the old-driver pause, and the cpu_time sampler:
// it counts other live threads' CPU time, not the sampling thread's own.

#include "instruments/samplers/drivers.hpp"
#include "instruments/samplers/samplers.hpp"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <thread>
#include <time.h>
#include <vulkan/vulkan.h>

namespace vkscope::samplers {
namespace {

constexpr uint32_t kNvidia = 0x10de;
constexpr uint32_t kArm = 0x13b5;
constexpr uint32_t kMesaSoftware = 0x10005;

uint32_t nvidia_version(uint32_t major) {
    return major << 22; // NVIDIA's encoding: major in the top 10 bits
}

TEST(HandoverDrivers, LavapipeAndRecentNvidiaAndArmAreListed) {
    EXPECT_NE(handover_verified(kMesaSoftware, VK_DRIVER_ID_MESA_LLVMPIPE, 0, "llvmpipe"), nullptr);
    EXPECT_NE(handover_verified(kMesaSoftware, 0, 0, "llvmpipe (LLVM 15.0.6, 256 bits)"), nullptr);
    EXPECT_NE(handover_verified(kNvidia, VK_DRIVER_ID_NVIDIA_PROPRIETARY, nvidia_version(580),
                                "NVIDIA H100 80GB HBM3"),
              nullptr);
    EXPECT_NE(handover_verified(kArm, VK_DRIVER_ID_ARM_PROPRIETARY, 0, "Mali-G715"), nullptr);
}

TEST(HandoverDrivers, OthersAreNot) {
    EXPECT_EQ(handover_verified(kNvidia, VK_DRIVER_ID_NVIDIA_PROPRIETARY, nvidia_version(550),
                                "NVIDIA GeForce"),
              nullptr);
    EXPECT_EQ(handover_verified(0x1002, VK_DRIVER_ID_MESA_RADV, 0, "AMD Radeon"), nullptr);
    EXPECT_EQ(handover_verified(0x8086, VK_DRIVER_ID_INTEL_OPEN_SOURCE_MESA, 0, "Intel"), nullptr);
    // Mesa's software vendor id on something that is not llvmpipe.
    EXPECT_EQ(handover_verified(kMesaSoftware, VK_DRIVER_ID_MESA_VENUS, 0, "Virtio-GPU Venus"),
              nullptr);
}

TEST(HandoverDrivers, TheOldDriverPauseIsForCsfMaliBeforeR54) {
    EXPECT_TRUE(needs_old_driver_sleep(kArm, "Mali-G715", "v1.r44p1-00eac0"));
    EXPECT_TRUE(needs_old_driver_sleep(kArm, "Mali-G710 MC10", "r53p0"));
    EXPECT_TRUE(needs_old_driver_sleep(kArm, "Immortalis-G720", "v1.r49p0"));
    EXPECT_TRUE(needs_old_driver_sleep(kArm, "Mali-G610", "")); // unknown release: the safe side
    EXPECT_FALSE(needs_old_driver_sleep(kArm, "Mali-G715", "v1.r54p0-01eac0"));
    EXPECT_FALSE(needs_old_driver_sleep(kArm, "Mali-G720", "r55p1"));
    // Job-manager GPUs (G78 and before) and other vendors never.
    EXPECT_FALSE(needs_old_driver_sleep(kArm, "Mali-G78", "r32p1"));
    EXPECT_FALSE(needs_old_driver_sleep(kArm, "Mali-G52", "r20p0"));
    EXPECT_FALSE(needs_old_driver_sleep(kNvidia, "Mali-G715", "r44p0"));
}

TEST(CpuTimeSampler, CountsOtherThreadsAndNotItsOwn) {
    const vkscope_sampler_api* api = cpu_time_sampler();
    ASSERT_EQ(api->abi_version, VKSCOPE_SAMPLER_ABI_VERSION);
    vkscope_sampler_device device{};
    device.device_name = "test";
    char error[128] = {};
    void* sampler = api->open(&device, error, sizeof error);
    ASSERT_NE(sampler, nullptr) << error;
    uint32_t count = 0;
    const vkscope_sampler_counter* counters = api->counters(sampler, &count);
    ASSERT_EQ(count, 1u);
    EXPECT_STREQ(counters[0].name, "cpu_time");
    EXPECT_EQ(counters[0].kind, static_cast<uint32_t>(VKSCOPE_COUNTER_CUMULATIVE));

    // Burns CPU time, not wall time: on a loaded machine a thread may get a fraction of a core.
    const auto burn = [](std::chrono::milliseconds how_long) {
        const auto cpu_ns = [] {
            timespec t{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
            return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
        };
        const long long end = cpu_ns() + std::chrono::nanoseconds(how_long).count();
        std::atomic<uint64_t> spins{0};
        while (cpu_ns() < end) {
            spins.fetch_add(1, std::memory_order_relaxed);
        }
    };
    double before = 0;
    ASSERT_EQ(api->sample(sampler, &before), 0);
    burn(std::chrono::milliseconds(30)); // the sampling thread's own: not counted
    double own = 0;
    ASSERT_EQ(api->sample(sampler, &own), 0);
    EXPECT_LT(own - before, 10e6);
    // Sampled while the other thread is still there: the time of threads that ended since the
    // previous sample is not counted.
    std::atomic<bool> burned{false};
    std::atomic<bool> sampled{false};
    std::thread other([&] {
        burn(std::chrono::milliseconds(30));
        burned.store(true);
        while (!sampled.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    while (!burned.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    double after = 0;
    const int status = api->sample(sampler, &after);
    sampled.store(true);
    other.join();
    ASSERT_EQ(status, 0);
    // The other thread's CPU time, however the machine's load stretched its wall time.
    EXPECT_GT(after - own, 5e6);
    api->close(sampler);
}

} // namespace
} // namespace vkscope::samplers
