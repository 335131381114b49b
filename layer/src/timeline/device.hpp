#pragma once
// The timeline's state for one VkDevice, its queues and its command buffers.
//
// Command buffers and queues are found from their handles through process-wide HandleMaps: one
// lock-free lookup per recorded command, whatever the device.

#include "core/owned_map.hpp"
#include "core/state.hpp"
#include "timeline/budget.hpp"
#include "timeline/instrument.hpp"
#include "timeline/interpretation_worker.hpp"
#include "timeline/interpreter.hpp"
#include "timeline/labels.hpp"
#include "timeline/metadata.hpp"
#include "timeline/parameter_pool.hpp"
#include "timeline/readback.hpp"
#include "timeline/recorder.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>
#include <vulkan/vk_layer.h>

namespace vkscope {
class MessageChannel;
class OutgoingRecord;
} // namespace vkscope

namespace vkscope::timeline {

// How the layer writes its t<tagID> and s<submitID> labels into command buffers.
enum class LabelApi : uint8_t { none, debug_utils, debug_marker };

class TimelineDevice;

// The physical device's properties the timeline and its instruments use.
struct PhysicalDeviceFacts {
    VkPhysicalDeviceProperties properties{};
    VkPhysicalDeviceMemoryProperties memory{};
};

struct CommandBufferState {
    TimelineDevice* device = nullptr;
    VkCommandBuffer handle = VK_NULL_HANDLE;
    VkCommandPool pool = VK_NULL_HANDLE;
    bool primary = true;
    Recorder recorder;
    ParameterArena parameters;
    std::optional<Size3> compute_local_size; // of the bound compute pipeline or shader
    // Kept across its recordings: the next recording begins the same instances.
    RenderingFieldsCache rendering_fields;
    // Of its command pool; UINT32_MAX when the layer did not see the pool created.
    uint32_t family = UINT32_MAX;
    // Recorded in a captured frame (the `frames` setting): the layer writes into it.
    bool instrumented = true;
    // Each instrument's state for it, in the device's instrument order (slots).
    std::vector<std::unique_ptr<InstrumentRecording>> instruments;
    // Under a cost budget, in a captured frame: the frame's epoch (Budget::recording_began())
    // and when the application's recording began (monotonic_ns(), and cycle_count() for its
    // instruments' share), for Budget::recorded().
    void* budget_epoch = nullptr;
    uint64_t recording_began_ns = 0;
    uint64_t recording_began_cycles = 0;
};

struct PoolState {
    std::vector<VkCommandBuffer> command_buffers;
    uint32_t family = UINT32_MAX; // known when vkCreateCommandPool was seen (instruments on)
};

struct FramebufferInfo {
    uint32_t layers = 1;
};

struct ShaderModuleInfo {
    std::vector<uint32_t> code;
};

struct ComputeShaderInfo {
    std::optional<Size3> local_size;
};

class TimelineQueue {
public:
    TimelineQueue(TimelineDevice& device, VkQueue handle, uint32_t id, uint32_t family,
                  uint32_t index, uint32_t flags);
    ~TimelineQueue();
    TimelineQueue(const TimelineQueue&) = delete;
    TimelineQueue& operator=(const TimelineQueue&) = delete;

    TimelineDevice& device;
    const VkQueue handle;
    const uint32_t id;
    const uint32_t family;
    const uint32_t index;
    const uint32_t flags;

    // Everything below belongs to the submission path, which holds this lock.
    std::mutex mutex;
    // Run by the device's interpretation worker where it has one (worker()), else under the lock.
    Interpreter interpreter;
    // With a worker: the queue's shape as the command buffers handed to it leave it (labels
    // open, a render pass suspended), kept by Interpreter::scan() on the submitting threads.
    QueueShape shape;
    // The device's interpretation worker, where it runs this queue's streams; null: the
    // submitting thread does.
    InterpretationWorker* worker() const;

    // Layer-owned: a timeline semaphore that an empty submission after each application
    // submission signals, and command buffers holding s<submitID> label commands, reused once the
    // semaphore says the GPU is past them.
    VkSemaphore semaphore = VK_NULL_HANDLE;
    uint64_t signalled = 0; // last value submitted
    // The s<submitID> label open on the queue (0: none) and the interpreter's label depth when
    // it opened: it closes at the first boundary between command buffers where the depth is back.
    uint64_t s_label = 0;
    size_t s_label_depth = 0;
    VkCommandPool pool = VK_NULL_HANDLE;
    std::vector<VkCommandBuffer> free_wrappers;
    std::deque<std::pair<uint64_t, VkCommandBuffer>> busy_wrappers;
    // Waited on after each piece of a submission taken apart (split_submit.hpp); made on first use.
    VkFence split_fence = VK_NULL_HANDLE;
    // The record of each command buffer a submission runs (Submission), kept from call to call
    // so that its lists keep their storage: only what a record hands on is moved out of it. So
    // are the lists of vkQueueSubmit (its batches' copies and command buffer lists) and of
    // Submission (its layer command buffers, its cut points): each call empties them first.
    SubmitRecord record;
    std::vector<VkSubmitInfo> batch_copies;
    std::vector<std::vector<VkCommandBuffer>> batch_lists;
    std::vector<VkCommandBuffer> call_wrappers;
    std::vector<uint8_t> call_cuts;
    // Each instrument's state for the queue, in the device's instrument order.
    std::vector<std::unique_ptr<InstrumentQueue>> instruments;
    // Under a cost budget, when every instrument gives it (InstrumentQueue::left_out_annex()):
    // the ANNEX payloads of an instance left out of every instrument, which the timeline sends.
    std::shared_ptr<const std::vector<std::string>> left_out_annexes;
};

// Decided when the device is created (timeline/setup.cpp).
struct DeviceSetup {
    LabelApi label_api = LabelApi::none;
    bool timeline_semaphores = false;
    PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
    std::vector<VkDeviceQueueCreateInfo> queues; // pQueuePriorities not kept
};

class TimelineDevice final : public DeviceFeatureState {
public:
    // `providers` make the device's instruments (lifecycle.cpp decides which).
    TimelineDevice(DeviceState& state, const DeviceSetup& setup,
                   const InstrumentProviders& providers);
    ~TimelineDevice() override;
    TimelineDevice(const TimelineDevice&) = delete;
    TimelineDevice& operator=(const TimelineDevice&) = delete;

    void post(std::string frame) const;
    void post(std::unique_ptr<OutgoingRecord> record) const;
    bool sending() const { return server != nullptr; }
    // The device's instrument of type T, if it has one: how an instrument's own hooks find it.
    template <typename T> T* instrument() const {
        for (const auto& i : instruments) {
            if (auto* found = dynamic_cast<T*>(i.get())) {
                return found;
            }
        }
        return nullptr;
    }

    DeviceState& state;
    const DeviceDispatch& next;
    const VkDevice handle;
    const uint64_t id;
    const std::shared_ptr<MessageChannel> server; // the capture server; null: nothing is sent
    // `frames=host`: frames still to capture of the capture server's last CAPTURE command.
    std::atomic<uint64_t> server_frames_left{0};
    const LabelApi label_api;
    RecordOptions record_options; // for every command buffer of the device
    const PFN_vkSetDeviceLoaderData set_loader_data;
    const int64_t frame_submits;
    // Asked of the driver once, at device creation, for everything that needs them.
    const PhysicalDeviceFacts physical;
    // A CPU device (lavapipe, SwiftShader): the device's work runs on this machine's cores, on a
    // driver thread that the application's vkQueueSubmit wakes (Submission defers nothing past
    // the driver's call there).
    const bool cpu_device;
    // Null without timeline semaphores: then no submission is wrapped and nothing read back.
    PFN_vkGetSemaphoreCounterValue semaphore_value = nullptr;
    PFN_vkWaitSemaphores wait_semaphores = nullptr;

    std::atomic<uint64_t> frame{0};
    std::atomic<uint64_t> submissions{0};
    // What the application compiled since the last frame ended, taken by the FRAME message (the
    // host leaves such frames out of distributions as warm-up): pipelines and shader objects,
    // and shader modules.
    std::atomic<uint64_t> pipelines_created{0};
    std::atomic<uint64_t> modules_created{0};
    // The `frames` setting, and whether the current frame is one it captures.
    const FrameSelection frames;
    std::atomic<bool> frame_selected{true};
    // In slot order. Made once, before any command buffer or submission, so read without a lock.
    std::vector<std::unique_ptr<Instrument>> instruments;
    // The `budget` setting's, on a device with instruments; null otherwise (every workload of a
    // captured frame is measured).
    std::unique_ptr<Budget> budget;
    LabelInterner labels;

    OwnedMap<BufferInfo> buffers;
    OwnedMap<ImageInfo> images;
    OwnedMap<ImageViewInfo> views;
    OwnedMap<RenderPassInfo> render_passes;
    OwnedMap<FramebufferInfo> framebuffers;
    OwnedMap<ShaderModuleInfo> modules;
    OwnedMap<ComputeShaderInfo> pipelines; // compute pipelines only
    OwnedMap<ComputeShaderInfo> shaders;   // VK_EXT_shader_object compute shaders
    OwnedMap<PoolState> pools;

    // Device addresses of buffers (for vkCmdTraceRaysIndirect*KHR): start -> (end, buffer).
    std::mutex addresses_mutex;
    std::map<VkDeviceAddress, std::pair<VkDeviceAddress, VkBuffer>> addresses;

    ParameterPool parameter_pool;
    std::unique_ptr<ReadbackWorker> readback;
    std::vector<std::unique_ptr<TimelineQueue>> queues;
    // On a device that sends to a capture server: where its submitted streams are interpreted
    // (interpretation_worker.hpp). Made after the queues, stopped before.
    std::unique_ptr<InterpretationWorker> interpretation;
    // Posts what must reach the capture server after every submission's messages so far (the
    // end of a frame): through the interpretation worker where there is one.
    void post_in_order(std::unique_ptr<OutgoingRecord> record);
    // `interpretation` where this process runs its thread (not in a forked child); null: the
    // submitting threads interpret.
    InterpretationWorker* interpretation_worker() const;

private:
    // What the readback thread sends, gathered over one round of its completions (its own).
    std::string readback_frames_;
    size_t readback_messages_ = 0;

    void attach_instruments(const InstrumentProviders& providers,
                            std::span<const VkQueueFamilyProperties> families);
};

extern OwnedMap<CommandBufferState> g_command_buffers;
extern HandleMap<TimelineQueue> g_queues;

[[gnu::always_inline]] inline CommandBufferState* find_command_buffer(VkCommandBuffer cb) {
    return g_command_buffers.find(key(cb));
}

inline TimelineQueue* find_queue(VkQueue queue) {
    return g_queues.find(key(queue));
}

// The timeline of the device a VkDevice, VkQueue or VkCommandBuffer belongs to; null when the
// timeline is off for it. The timeline is the one feature with state per device (its instruments
// live inside it), so the device's feature state is a TimelineDevice whenever it is set.
inline TimelineDevice* timeline_of(const void* handle) {
    DeviceState* state = find_device(handle);
    return state ? static_cast<TimelineDevice*>(state->features.get()) : nullptr;
}

// Drops a command buffer's recording and gives its parameter slots back.
void reset_command_buffer(CommandBufferState& cb);
void erase_command_buffer(VkCommandBuffer cb);

} // namespace vkscope::timeline
