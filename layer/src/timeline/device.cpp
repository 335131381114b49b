#include "timeline/device.hpp"

#include "core/log.hpp"
#include "core/message_channel.hpp"
#include "core/pci_bus_info.hpp"
#include "timeline/ids.hpp"
#include "timeline/messages.hpp"

#include <algorithm>
#include <cstdio>
#include <system_error>

namespace vkscope::timeline {

OwnedMap<CommandBufferState> g_command_buffers;
HandleMap<TimelineQueue> g_queues;

namespace {

PhysicalDeviceFacts query_physical_device(const DeviceState& state) {
    PhysicalDeviceFacts facts;
    state.instance->next.GetPhysicalDeviceProperties(state.physical, &facts.properties);
    state.instance->next.GetPhysicalDeviceMemoryProperties(state.physical, &facts.memory);
    return facts;
}

DeviceDescription describe(const DeviceState& state, const VkPhysicalDeviceProperties& props,
                           const DeviceSetup& setup,
                           const std::vector<VkQueueFamilyProperties>& families) {
    const InstanceDispatch& in = state.instance->next;
    DeviceDescription d;
    d.name = props.deviceName;
    d.vendor_id = props.vendorID;
    d.device_id = props.deviceID;
    d.api_version = props.apiVersion;
    d.timestamp_period_ns = props.limits.timestampPeriod;
    auto properties2 = in.GetPhysicalDeviceProperties2 ? in.GetPhysicalDeviceProperties2
                                                       : in.GetPhysicalDeviceProperties2KHR;
    if (properties2 && props.apiVersion >= VK_API_VERSION_1_2 &&
        state.instance->api_version >= VK_API_VERSION_1_1) {
        VkPhysicalDeviceDriverProperties driver{};
        driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
        VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &driver, {}};
        properties2(state.physical, &p2);
        d.driver_name = driver.driverName;
        d.driver_info = driver.driverInfo;
    }
    // Names the GPU to the host, which samples its clocks and power (docs/gpu-state.md).
    if (const auto pci = pci_bus_info(*state.instance, state.physical)) {
        d.pci = pci_address(*pci);
    }
    uint32_t id = 0;
    for (const VkDeviceQueueCreateInfo& q : setup.queues) {
        for (uint32_t i = 0; i < q.queueCount; ++i) {
            QueueDescription queue;
            queue.id = id++;
            queue.family = q.queueFamilyIndex;
            queue.index = i;
            if (q.queueFamilyIndex < families.size()) {
                queue.flags = families[q.queueFamilyIndex].queueFlags;
                queue.timestamp_valid_bits = families[q.queueFamilyIndex].timestampValidBits;
            }
            d.queues.push_back(queue);
        }
    }
    return d;
}

// Mesa's common command buffer code before 23.1 pops its label stack without checking it is empty,
// so a label ended in another command buffer than it began in corrupts it and the next label
// begin in that command buffer crashes.
bool label_stack_underflows(const DeviceDescription& d) {
    unsigned major = 0;
    unsigned minor = 0;
    if (std::sscanf(d.driver_info.c_str(), "Mesa %u.%u", &major, &minor) != 2) {
        return false;
    }
    return major < 23 || (major == 23 && minor < 1);
}

// The label extension chosen at creation, if the next layer really exposes its commands (an
// implementation might accept the extension and still hand out no command for it).
LabelApi usable(LabelApi wanted, const DeviceDispatch& next) {
    switch (wanted) {
    case LabelApi::debug_utils:
        return next.CmdBeginDebugUtilsLabelEXT && next.CmdEndDebugUtilsLabelEXT ? wanted
                                                                                : LabelApi::none;
    case LabelApi::debug_marker:
        return next.CmdDebugMarkerBeginEXT && next.CmdDebugMarkerEndEXT ? wanted : LabelApi::none;
    case LabelApi::none:
        break;
    }
    return LabelApi::none;
}

} // namespace

TimelineQueue::TimelineQueue(TimelineDevice& d, VkQueue h, uint32_t queue_id, uint32_t fam,
                             uint32_t idx, uint32_t queue_flags)
    : device(d), handle(h), id(queue_id), family(fam), index(idx), flags(queue_flags),
      interpreter(d.labels) {}

TimelineQueue::~TimelineQueue() {
    if (pool) {
        device.next.DestroyCommandPool(device.handle, pool, nullptr);
    }
    if (semaphore) {
        device.next.DestroySemaphore(device.handle, semaphore, nullptr);
    }
    if (split_fence) {
        device.next.DestroyFence(device.handle, split_fence, nullptr);
    }
}

TimelineDevice::TimelineDevice(DeviceState& s, const DeviceSetup& setup,
                               const InstrumentProviders& providers)
    : state(s), next(s.next), handle(s.handle), id(next_device_id()), server(s.instance->server),
      label_api(usable(setup.label_api, s.next)), set_loader_data(setup.set_loader_data),
      frame_submits(s.instance->settings.frame_submits), physical(query_physical_device(s)),
      cpu_device(physical.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU),
      frames(s.instance->frames), parameter_pool(s.handle, s.next, physical.memory) {
    frame_selected.store(frames.selects(0), std::memory_order_relaxed);
    if (setup.timeline_semaphores) {
        semaphore_value = next.GetSemaphoreCounterValue ? next.GetSemaphoreCounterValue
                                                        : next.GetSemaphoreCounterValueKHR;
        wait_semaphores = next.WaitSemaphores ? next.WaitSemaphores : next.WaitSemaphoresKHR;
    }
    if (semaphore_value && wait_semaphores) {
        ReadbackWorker::Config config;
        config.device = handle;
        config.wait = wait_semaphores;
        config.counter = semaphore_value;
        config.invalidate = [this](const ParameterSlot& slot) { parameter_pool.invalidate(slot); };
        // The readback thread's messages leave together, one post per round of completions
        // rather than one per workload instance.
        config.annex = [this](uint64_t submit, uint64_t tag, const std::string& json) {
            if (server && append_annex_frame(readback_frames_, submit, tag, json)) {
                ++readback_messages_;
            }
        };
        config.post = [this](std::string frame) {
            if (server) {
                readback_frames_ += frame;
                ++readback_messages_;
            }
        };
        config.flush = [this] {
            if (readback_messages_ > 0) {
                server->post(std::move(readback_frames_), readback_messages_);
                readback_frames_.clear();
                readback_messages_ = 0;
            }
        };
        readback = std::make_unique<ReadbackWorker>(std::move(config));
    } else {
        semaphore_value = nullptr;
        wait_semaphores = nullptr;
    }

    uint32_t family_count = 0;
    const InstanceDispatch& in = s.instance->next;
    in.GetPhysicalDeviceQueueFamilyProperties(s.physical, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    in.GetPhysicalDeviceQueueFamilyProperties(s.physical, &family_count, families.data());

    uint32_t queue_id = 0;
    for (const VkDeviceQueueCreateInfo& q : setup.queues) {
        for (uint32_t i = 0; i < q.queueCount; ++i) {
            VkQueue queue = VK_NULL_HANDLE;
            if (q.flags == 0) {
                next.GetDeviceQueue(handle, q.queueFamilyIndex, i, &queue);
            } else if (next.GetDeviceQueue2) {
                const VkDeviceQueueInfo2 info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_INFO_2, nullptr,
                                              q.flags, q.queueFamilyIndex, i};
                next.GetDeviceQueue2(handle, &info, &queue);
            }
            // Got below the loader: until the application gets it too, the queue has no loader
            // dispatch, and an instrument that submits on it now (the timer's floor) would
            // reach a layer below, such as validation, with a handle it cannot look up.
            if (queue && set_loader_data) {
                set_loader_data(handle, queue);
            }
            const uint32_t flags =
                q.queueFamilyIndex < family_count ? families[q.queueFamilyIndex].queueFlags : 0;
            auto tq = std::make_unique<TimelineQueue>(*this, queue, queue_id++, q.queueFamilyIndex,
                                                      i, flags);
            if (queue && g_queues.insert(key(queue), tq.get())) {
                queues.push_back(std::move(tq));
            }
        }
    }
    attach_instruments(providers, families);
    if (server) {
        try {
            interpretation = std::make_unique<InterpretationWorker>(*this);
        } catch (const std::system_error& e) {
            // The submitting threads interpret, as they do for instruments that pair before
            // the driver's call.
            log_once(LogLevel::warn,
                     "timeline: no interpretation thread (%s); submissions "
                     "interpret their command buffers themselves",
                     e.what());
        }
    }
    DeviceDescription description = describe(s, physical.properties, setup, families);
    for (const auto& instrument : instruments) {
        instrument->describe(description);
    }
    // A budget holds the instruments' cost: without any, there is nothing to hold.
    if (const auto& percent = s.instance->settings.budget; percent && !instruments.empty()) {
        uint32_t frames_per_set = 1;
        for (const auto& instrument : instruments) {
            frames_per_set = std::max(frames_per_set, instrument->frames_per_set());
        }
        budget = std::make_unique<Budget>(*percent, frames_per_set);
        description.budget = *percent;
        for (const auto& q : queues) {
            auto annexes = std::make_shared<std::vector<std::string>>();
            for (const auto& instrument : q->instruments) {
                annexes->push_back(instrument->left_out_annex());
            }
            if (std::none_of(annexes->begin(), annexes->end(),
                             [](const std::string& a) { return a.empty(); })) {
                q->left_out_annexes = std::move(annexes);
            }
        }
        log(LogLevel::info,
            "timeline: device %llu: instruments within a budget of %g%% of the frame",
            static_cast<unsigned long long>(id), *percent);
    }
    record_options.tags = label_api != LabelApi::none;
    record_options.device = id;
    // Deferring a label end needs a layer command buffer, which needs the semaphore to recycle.
    record_options.defer_foreign_ends = semaphore_value && label_stack_underflows(description);
    static constexpr const char* kLabelApis[] = {"none", "VK_EXT_debug_utils",
                                                 "VK_EXT_debug_marker"};
    log(LogLevel::info,
        "timeline: device %llu (%s): tags with %s, timeline semaphores %s, %s label ends%s",
        static_cast<unsigned long long>(id), description.name.c_str(),
        kLabelApis[static_cast<int>(label_api)], semaphore_value ? "yes" : "no",
        record_options.defer_foreign_ends ? "deferred" : "direct",
        server ? "" : ", no host: nothing is sent");
    post(device_frame(id, description));
}

void TimelineDevice::attach_instruments(const InstrumentProviders& providers,
                                        std::span<const VkQueueFamilyProperties> families) {
    for (const auto& provider : providers) {
        if (instruments.size() == kMaxInstruments) {
            log_once(LogLevel::error, "more than %zu instruments on one device; the rest are off",
                     kMaxInstruments);
            break;
        }
        const InstrumentDevice device{
            *this,           *state.instance, state.physical,    physical.properties,
            physical.memory, families,        instruments.size()};
        if (std::unique_ptr<Instrument> instrument = provider->create(device)) {
            instruments.push_back(std::move(instrument));
        }
    }
    for (const auto& q : queues) {
        for (const auto& instrument : instruments) {
            q->instruments.push_back(instrument->make_queue(*q));
        }
    }
}

TimelineDevice::~TimelineDevice() {
    // What the interpretation worker has left reads the queues and posts through this device.
    interpretation.reset();
    // The worker reads slots of the pool, runs the instruments' jobs and posts through this
    // device: it goes first.
    readback.reset();
    for (const auto& q : queues) {
        g_queues.erase(key(q->handle));
    }
    queues.clear();
    // Command buffers the application never freed die with their device.
    std::vector<uint64_t> mine;
    g_command_buffers.for_each([&](uint64_t k, CommandBufferState* cb) {
        if (cb->device == this) {
            mine.push_back(k);
        }
    });
    for (uint64_t k : mine) {
        erase_command_buffer(reinterpret_cast<VkCommandBuffer>(k));
    }
    // Last: queues and command buffers gave back what they held of the instruments.
    instruments.clear();
}

void TimelineDevice::post(std::string frame) const {
    if (server) {
        server->post(std::move(frame));
    }
}

void TimelineDevice::post_in_order(std::unique_ptr<OutgoingRecord> record) {
    if (InterpretationWorker* worker = interpretation_worker()) {
        InterpretationJob job;
        job.kind = InterpretationJob::Kind::record;
        job.record = std::move(record);
        worker->push(std::move(job));
    } else {
        post(std::move(record));
    }
}

InterpretationWorker* TimelineDevice::interpretation_worker() const {
    return interpretation && interpretation->usable() ? interpretation.get() : nullptr;
}

InterpretationWorker* TimelineQueue::worker() const {
    return device.interpretation_worker();
}

void TimelineDevice::post(std::unique_ptr<OutgoingRecord> record) const {
    if (server) {
        server->post(std::move(record));
    }
}

void reset_command_buffer(CommandBufferState& cb) {
    cb.recorder.reset();
    cb.parameters.release(cb.device->parameter_pool);
    for (const auto& instrument : cb.instruments) {
        instrument->release();
    }
    cb.compute_local_size.reset();
}

void erase_command_buffer(VkCommandBuffer handle) {
    if (CommandBufferState* cb = find_command_buffer(handle)) {
        cb->parameters.release(cb->device->parameter_pool);
        for (const auto& instrument : cb->instruments) {
            instrument->release();
        }
        g_command_buffers.erase(key(handle));
    }
}

} // namespace vkscope::timeline
