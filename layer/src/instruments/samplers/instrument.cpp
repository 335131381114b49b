#include "instruments/samplers/instrument.hpp"

#include "core/log.hpp"
#include "core/pci_bus_info.hpp"
#include "core/state.hpp"
#include "core/wire_format.hpp"
#include "instruments/samplers/drivers.hpp"
#include "instruments/samplers/queue.hpp"
#include "instruments/samplers/recording.hpp"
#include "timeline/device.hpp"
#include "timeline/setup.hpp"

#include <cstdio>
#include <cstring>

namespace vkscope::samplers {
namespace {

// Arm's work-around: the shortest pause found reliable.
constexpr uint32_t kOldDriverSleepUs = 3000;

const char* name_of(uint32_t kind) {
    switch (kind) {
    case VKSCOPE_COUNTER_LEVEL:
        return protocol::name(protocol::CounterKind::level);
    case VKSCOPE_COUNTER_CLOCK:
        return protocol::name(protocol::CounterKind::clock);
    default:
        return protocol::name(protocol::CounterKind::cumulative);
    }
}

// COUNTERS: what one queue family samples, and how.
std::string counters_frame(uint64_t device, uint32_t family, const HandoverDevice& d) {
    const bool usable =
        d.granularity == Granularity::per_command_buffer || d.family_has_events(family);
    JsonWriter json;
    json.begin_object().field("family", family);
    json.field("source", protocol::name(protocol::CounterSource::sampler));
    json.key("counters").begin_array();
    if (usable) {
        for (const SamplerCounter& c : d.samplers.counters()) {
            json.begin_object().field("name", c.name).field("unit", c.unit);
            json.field("description", c.description).field("kind", name_of(c.kind));
            json.end_object();
        }
    }
    json.end_array();
    if (!usable) {
        json.field("reason", why(Reason::queue_family_without_events));
    }
    json.field("sampling", protocol::name(d.granularity == Granularity::handover
                                              ? protocol::CounterSampling::handover
                                              : protocol::CounterSampling::per_command_buffer));
    json.field("sleep_us", d.sleep_us);
    json.end_object();
    std::string out;
    append_frame(out, MessageType::Counters, device, json.view());
    return out;
}

struct DriverFacts {
    uint32_t driver_id = 0;
    std::string driver_info;
    uint8_t uuid[16] = {};
    bool has_pci = false;
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
};

DriverFacts driver_facts(const timeline::InstrumentDevice& d) {
    DriverFacts f;
    const InstanceDispatch& in = d.instance.next;
    auto properties2 = in.GetPhysicalDeviceProperties2 ? in.GetPhysicalDeviceProperties2
                                                       : in.GetPhysicalDeviceProperties2KHR;
    if (!properties2 || d.instance.api_version < VK_API_VERSION_1_1 ||
        d.properties.apiVersion < VK_API_VERSION_1_2) {
        return f;
    }
    VkPhysicalDeviceIDProperties id{};
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    VkPhysicalDeviceDriverProperties driver{};
    driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    driver.pNext = &id;
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &driver, {}};
    properties2(d.physical, &p2);
    f.driver_id = driver.driverID;
    f.driver_info = driver.driverInfo;
    std::memcpy(f.uuid, id.deviceUUID, sizeof f.uuid);
    // The PCI address names the GPU to libraries that do not know Vulkan's UUID.
    if (const auto pci = pci_bus_info(d.instance, d.physical)) {
        f.pci = *pci;
        f.has_pci = true;
    }
    return f;
}

class HandoverProvider final : public timeline::InstrumentProvider {
public:
    HandoverProvider(std::vector<std::string> samplers, CounterSampling sampling,
                     HandoverSleep sleep)
        : samplers_(std::move(samplers)), sampling_(sampling), sleep_(sleep) {}

    std::unique_ptr<timeline::Instrument> create(const timeline::InstrumentDevice& d) override {
        if (!d.timeline.semaphore_value || !d.timeline.wait_semaphores) {
            log(LogLevel::warn,
                "counters: device %llu has no timeline semaphores; samplers "
                "are not sampled there",
                static_cast<unsigned long long>(d.timeline.id));
            return nullptr;
        }
        const DriverFacts facts = driver_facts(d);
        const VkPhysicalDeviceProperties& p = d.properties;
        Granularity granularity = Granularity::per_command_buffer;
        const char* verified =
            handover_verified(p.vendorID, facts.driver_id, p.driverVersion, p.deviceName);
        if (sampling_ == CounterSampling::handover) {
            granularity = Granularity::handover;
            if (!verified) {
                log(LogLevel::warn,
                    "counters: handover forced on %s, a driver not known to support a GPU wait "
                    "on an event the host sets after submission: it may hang or sample wrong",
                    p.deviceName);
            }
        } else if (sampling_ == CounterSampling::detect) {
            if (verified) {
                granularity = Granularity::handover;
            } else {
                log(LogLevel::warn,
                    "counters: %s is not known to support the event handover; samples are "
                    "taken per command buffer (each submitted alone and waited for). Setting "
                    "counter_sampling=handover forces the handover",
                    p.deviceName);
            }
        }
        uint32_t sleep_us = 0;
        if (sleep_ == HandoverSleep::on ||
            (sleep_ == HandoverSleep::detect &&
             needs_old_driver_sleep(p.vendorID, p.deviceName, facts.driver_info))) {
            sleep_us = kOldDriverSleepUs;
        }
        auto instrument = std::make_unique<HandoverInstrument>(d, granularity, sleep_us);
        vkscope_sampler_device device{};
        device.vendor_id = p.vendorID;
        device.device_id = p.deviceID;
        device.driver_version = p.driverVersion;
        device.driver_id = facts.driver_id;
        device.device_name = p.deviceName;
        device.driver_info = facts.driver_info.c_str();
        std::memcpy(device.device_uuid, facts.uuid, sizeof device.device_uuid);
        device.has_pci = facts.has_pci ? 1 : 0;
        device.pci_domain = facts.pci.pciDomain;
        device.pci_bus = facts.pci.pciBus;
        device.pci_device = facts.pci.pciDevice;
        device.pci_function = facts.pci.pciFunction;
        instrument->device.samplers.open(samplers_, device);
        if (instrument->device.samplers.empty()) {
            log(LogLevel::warn, "counters: no sampler opened on %s; nothing is sampled there",
                p.deviceName);
            return nullptr;
        }
        for (uint32_t family = 0; family < d.families.size(); ++family) {
            d.timeline.post(counters_frame(d.timeline.id, family, instrument->device));
        }
        log(LogLevel::info, "counters: %s sampled %s%s", p.deviceName,
            granularity == Granularity::handover ? "between workloads (event handover)"
                                                 : "per command buffer",
            verified ? "" : " (driver not on the handover list)");
        return instrument;
    }

private:
    const std::vector<std::string> samplers_;
    const CounterSampling sampling_;
    const HandoverSleep sleep_;
};

} // namespace

HandoverInstrument::HandoverInstrument(const timeline::InstrumentDevice& d, Granularity g,
                                       uint32_t sleep_us)
    : device(d.timeline.handle, d.timeline.next, d.families, g, sleep_us), slot(d.slot) {}

std::unique_ptr<timeline::InstrumentRecording>
HandoverInstrument::make_recording(const timeline::CommandBufferState& cb) {
    return std::make_unique<HandoverRecording>(device, cb.handle);
}

std::unique_ptr<timeline::InstrumentQueue>
HandoverInstrument::make_queue(timeline::TimelineQueue& queue) {
    return std::make_unique<HandoverQueue>(device, queue, slot);
}

bool selected(const SettingValues& settings) {
    return !requested_samplers(settings.counters).empty();
}

std::unique_ptr<timeline::InstrumentProvider> provider(const SettingValues& settings) {
    std::vector<std::string> samplers = requested_samplers(settings.counters);
    if (samplers.empty()) {
        return nullptr;
    }
    return std::make_unique<HandoverProvider>(std::move(samplers), settings.counter_sampling,
                                              settings.handover_sleep);
}

} // namespace vkscope::samplers
