#pragma once
// The fixture's entry points, which the dispatch tables in layer.cpp hand to the loader: declared
// here because each is defined in the file of its concern, and hidden like everything but the
// loader interface.

#include <vulkan/vulkan.h>

namespace pqfixture {

// ---- instance and physical device (instance.cpp) ----

VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo* info,
                                               const VkAllocationCallbacks* allocator,
                                               VkInstance* instance);
VKAPI_ATTR void VKAPI_CALL destroy_instance(VkInstance instance,
                                            const VkAllocationCallbacks* allocator);
VKAPI_ATTR VkResult VKAPI_CALL enumerate_device_extensions(VkPhysicalDevice pd, const char* layer,
                                                           uint32_t* count,
                                                           VkExtensionProperties* out);
VKAPI_ATTR void VKAPI_CALL get_features2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2* f);
VKAPI_ATTR void VKAPI_CALL get_features2_khr(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2* f);
VKAPI_ATTR void VKAPI_CALL get_properties2(VkPhysicalDevice pd, VkPhysicalDeviceProperties2* p);
VKAPI_ATTR void VKAPI_CALL get_properties2_khr(VkPhysicalDevice pd, VkPhysicalDeviceProperties2* p);
VKAPI_ATTR VkResult VKAPI_CALL enumerate_counters(VkPhysicalDevice pd, uint32_t family,
                                                  uint32_t* count,
                                                  VkPerformanceCounterKHR* counters,
                                                  VkPerformanceCounterDescriptionKHR* descs);
VKAPI_ATTR void VKAPI_CALL get_passes(VkPhysicalDevice,
                                      const VkQueryPoolPerformanceCreateInfoKHR* info,
                                      uint32_t* passes);

// ---- device and query pools (device.cpp) ----

VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo* info,
                                             const VkAllocationCallbacks* allocator,
                                             VkDevice* device);
VKAPI_ATTR void VKAPI_CALL destroy_device(VkDevice device, const VkAllocationCallbacks* allocator);
VKAPI_ATTR VkResult VKAPI_CALL acquire_lock(VkDevice device, const VkAcquireProfilingLockInfoKHR*);
VKAPI_ATTR void VKAPI_CALL release_lock(VkDevice device);
VKAPI_ATTR VkResult VKAPI_CALL create_query_pool(VkDevice device, const VkQueryPoolCreateInfo* info,
                                                 const VkAllocationCallbacks* allocator,
                                                 VkQueryPool* pool);
VKAPI_ATTR void VKAPI_CALL destroy_query_pool(VkDevice device, VkQueryPool pool,
                                              const VkAllocationCallbacks* allocator);
VKAPI_ATTR void VKAPI_CALL reset_query_pool(VkDevice device, VkQueryPool pool, uint32_t first,
                                            uint32_t count);
VKAPI_ATTR VkResult VKAPI_CALL get_query_pool_results(VkDevice device, VkQueryPool pool,
                                                      uint32_t first, uint32_t count, size_t size,
                                                      void* data, VkDeviceSize stride,
                                                      VkQueryResultFlags flags);

// ---- recording and submission (commands.cpp) ----

VKAPI_ATTR VkResult VKAPI_CALL begin_command_buffer(VkCommandBuffer cb,
                                                    const VkCommandBufferBeginInfo* info);
VKAPI_ATTR void VKAPI_CALL cmd_reset_query_pool(VkCommandBuffer cb, VkQueryPool pool,
                                                uint32_t first, uint32_t count);
VKAPI_ATTR void VKAPI_CALL cmd_begin_query(VkCommandBuffer cb, VkQueryPool pool, uint32_t query,
                                           VkQueryControlFlags flags);
VKAPI_ATTR void VKAPI_CALL cmd_end_query(VkCommandBuffer cb, VkQueryPool pool, uint32_t query);
VKAPI_ATTR void VKAPI_CALL cmd_copy_query_pool_results(VkCommandBuffer cb, VkQueryPool pool,
                                                       uint32_t first, uint32_t count,
                                                       VkBuffer buffer, VkDeviceSize offset,
                                                       VkDeviceSize stride,
                                                       VkQueryResultFlags flags);
VKAPI_ATTR void VKAPI_CALL cmd_execute_commands(VkCommandBuffer cb, uint32_t count,
                                                const VkCommandBuffer* secondaries);
VKAPI_ATTR VkResult VKAPI_CALL queue_submit(VkQueue queue, uint32_t count,
                                            const VkSubmitInfo* submits, VkFence fence);
VKAPI_ATTR VkResult VKAPI_CALL queue_submit2(VkQueue queue, uint32_t count,
                                             const VkSubmitInfo2* submits, VkFence fence);

// ---- dispatch (layer.cpp) ----

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device, const char* name);
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance instance,
                                                                const char* name);

} // namespace pqfixture
