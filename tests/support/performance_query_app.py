"""A small application of VK_KHR_performance_query, run in its own process by the fixture's
tests: it enables the extension, takes the profiling lock, counts a buffer fill with every counter
of queue family 0 through a performance query pool (reset in a command buffer of its own, as the
extension requires), submits once per pass, and prints what it observed as one JSON line.
With `busy` as its argument it only reports the lock's answer."""

from __future__ import annotations

import json
import sys
from typing import Any

import vulkan as vk

from vkscope.devices import instance_proc

STYPE_FEATURES = 1000116000
STYPE_POOL_INFO = 1000116002
STYPE_SUBMIT_INFO = 1000116003
STYPE_LOCK_INFO = 1000116004
STYPE_COUNTER = 1000116005
STYPE_DESCRIPTION = 1000116006
QUERY_TYPE_PERFORMANCE = 1000116000
VK_NOT_READY = 1


def main() -> None:
    ffi = vk.ffi
    app = vk.VkApplicationInfo(apiVersion=(1 << 22) | (2 << 12))
    instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
    physical = vk.vkEnumeratePhysicalDevices(instance)[0]
    enumerate_counters = instance_proc(
        vk, instance, "vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR"
    )
    get_passes = instance_proc(
        vk, instance, "vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR"
    )
    count = ffi.new("uint32_t *")
    enumerate_counters(physical, 0, count, ffi.NULL, ffi.NULL)
    n = count[0]
    counters = ffi.new("VkPerformanceCounterKHR[]", n)
    descs = ffi.new("VkPerformanceCounterDescriptionKHR[]", n)
    for i in range(n):
        counters[i].sType = STYPE_COUNTER
        descs[i].sType = STYPE_DESCRIPTION
    enumerate_counters(physical, 0, count, counters, descs)
    names = [ffi.string(descs[i].name).decode() for i in range(n)]

    features = ffi.new("VkPhysicalDevicePerformanceQueryFeaturesKHR *")
    features.sType = STYPE_FEATURES
    features.performanceCounterQueryPools = 1
    priority = ffi.new("float[]", [1.0])
    queue_info = ffi.new("VkDeviceQueueCreateInfo *")
    queue_info.sType = vk.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
    queue_info.queueFamilyIndex = 0
    queue_info.queueCount = 1
    queue_info.pQueuePriorities = priority
    ext = [ffi.new("char[]", b"VK_KHR_performance_query")]
    ext_array = ffi.new("char *[]", ext)
    info = ffi.new("VkDeviceCreateInfo *")
    info.sType = vk.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO
    info.pNext = features
    info.queueCreateInfoCount = 1
    info.pQueueCreateInfos = queue_info
    info.enabledExtensionCount = 1
    info.ppEnabledExtensionNames = ext_array
    device_out = ffi.new("VkDevice *")
    assert vk.lib.vkCreateDevice(physical, info, ffi.NULL, device_out) == 0
    device = device_out[0]

    def proc(name: str) -> Any:
        return ffi.cast(f"PFN_{name}", vk.lib.vkGetDeviceProcAddr(device, name.encode()))

    lock_info = ffi.new("VkAcquireProfilingLockInfoKHR *")
    lock_info.sType = STYPE_LOCK_INFO
    lock_info.timeout = 1_000_000
    lock = proc("vkAcquireProfilingLockKHR")(device, lock_info)
    out: dict[str, Any] = {"counters": names, "lock": int(lock)}
    if sys.argv[1:] == ["busy"] or lock != 0:
        print(json.dumps(out))
        vk.lib.vkDestroyDevice(device, ffi.NULL)
        vk.vkDestroyInstance(instance, None)
        return

    indices = ffi.new("uint32_t[]", list(range(n)))
    pool_info = ffi.new("VkQueryPoolPerformanceCreateInfoKHR *")
    pool_info.sType = STYPE_POOL_INFO
    pool_info.queueFamilyIndex = 0
    pool_info.counterIndexCount = n
    pool_info.pCounterIndices = indices
    passes = ffi.new("uint32_t *")
    get_passes(physical, pool_info, passes)
    out["passes"] = int(passes[0])
    create = ffi.new("VkQueryPoolCreateInfo *")
    create.sType = vk.VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO
    create.pNext = pool_info
    create.queryType = QUERY_TYPE_PERFORMANCE
    create.queryCount = 1
    pool_out = ffi.new("VkQueryPool *")
    created = vk.lib.vkCreateQueryPool(device, create, ffi.NULL, pool_out)
    assert created == 0, created
    pool = pool_out[0]

    queue_out = ffi.new("VkQueue *")
    vk.lib.vkGetDeviceQueue(device, 0, 0, queue_out)
    queue = queue_out[0]
    cpool_info = ffi.new("VkCommandPoolCreateInfo *")
    cpool_info.sType = vk.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
    cpool_out = ffi.new("VkCommandPool *")
    vk.lib.vkCreateCommandPool(device, cpool_info, ffi.NULL, cpool_out)
    alloc = ffi.new("VkCommandBufferAllocateInfo *")
    alloc.sType = vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO
    alloc.commandPool = cpool_out[0]
    alloc.level = vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY
    alloc.commandBufferCount = 2
    cbs = ffi.new("VkCommandBuffer[]", 2)
    vk.lib.vkAllocateCommandBuffers(device, alloc, cbs)
    begin = ffi.new("VkCommandBufferBeginInfo *")
    begin.sType = vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
    vk.lib.vkBeginCommandBuffer(cbs[0], begin)
    vk.lib.vkCmdResetQueryPool(cbs[0], pool, 0, 1)
    vk.lib.vkEndCommandBuffer(cbs[0])
    vk.lib.vkBeginCommandBuffer(cbs[1], begin)
    vk.lib.vkCmdBeginQuery(cbs[1], pool, 0, 0)
    vk.lib.vkCmdEndQuery(cbs[1], pool, 0)
    vk.lib.vkEndCommandBuffer(cbs[1])

    results = ffi.new("VkPerformanceCounterResultKHR[]", n)
    size = ffi.sizeof("VkPerformanceCounterResultKHR") * n
    stride = ffi.sizeof("VkPerformanceCounterResultKHR") * n

    def submit(cb_index: int, pass_index: int) -> None:
        pass_info = ffi.new("VkPerformanceQuerySubmitInfoKHR *")
        pass_info.sType = STYPE_SUBMIT_INFO
        pass_info.counterPassIndex = pass_index
        si = ffi.new("VkSubmitInfo *")
        si.sType = vk.VK_STRUCTURE_TYPE_SUBMIT_INFO
        si.pNext = pass_info
        si.commandBufferCount = 1
        submitted = ffi.new("VkCommandBuffer[]", [cbs[cb_index]])  # alive for the call
        si.pCommandBuffers = submitted
        assert vk.lib.vkQueueSubmit(queue, 1, si, ffi.NULL) == 0
        vk.lib.vkQueueWaitIdle(queue)

    submit(0, 0)
    ready: list[int] = []
    for p in range(passes[0]):
        submit(1, p)
        ready.append(
            int(vk.lib.vkGetQueryPoolResults(device, pool, 0, 1, size, results, stride, 0))
        )
    out["ready_after_each_pass"] = ready
    out["values"] = [int(results[i].uint64) for i in range(n)]
    proc("vkReleaseProfilingLockKHR")(device)
    vk.lib.vkDestroyQueryPool(device, pool, ffi.NULL)
    vk.lib.vkDestroyCommandPool(device, cpool_out[0], ffi.NULL)
    vk.lib.vkDestroyDevice(device, ffi.NULL)
    vk.vkDestroyInstance(instance, None)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
