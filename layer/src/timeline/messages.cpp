#include "timeline/messages.hpp"

#include "core/wire_format.hpp"
#include "timeline/metadata.hpp"

#include <vulkan/vulkan.h>

namespace vkscope::timeline {
namespace {

std::string frame(MessageType type, uint64_t tag, const JsonWriter& json, uint64_t sequence = 0) {
    std::string out;
    append_frame(out, type, tag, json.view(), sequence);
    return out;
}

template <typename Append> std::string appended(const Append& append) {
    std::string out;
    append(out);
    return out;
}

std::string version_text(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
           "." + std::to_string(VK_API_VERSION_PATCH(v));
}

} // namespace

std::vector<const char*> queue_flag_names(uint32_t flags) {
    std::vector<const char*> out;
    for (const auto& [bit, name] : protocol::kQueueFlagNames) {
        if (flags & bit) {
            out.push_back(name);
        }
    }
    return out;
}

std::string hello_frame(uint32_t pid, std::string_view process, std::string_view layer_version) {
    JsonWriter json;
    json.begin_object()
        .field("protocol", protocol::kVersion)
        .field("pid", pid)
        .field("process", process)
        .field("layer_version", layer_version)
        .end_object();
    return frame(MessageType::Hello, 0, json);
}

std::string device_frame(uint64_t device, const DeviceDescription& d) {
    JsonWriter json;
    json.begin_object()
        .field("name", d.name)
        .field("vendor_id", d.vendor_id)
        .field("device_id", d.device_id);
    json.key("driver_name");
    d.driver_name.empty() ? json.null() : json.string(d.driver_name);
    json.key("driver_info");
    d.driver_info.empty() ? json.null() : json.string(d.driver_info);
    json.field("api_version", version_text(d.api_version))
        .field("timestamp_period_ns", d.timestamp_period_ns);
    json.key("queues").begin_array();
    for (const QueueDescription& q : d.queues) {
        json.begin_object().field("id", q.id).field("family", q.family).field("index", q.index);
        json.key("flags").begin_array();
        for (const char* name : queue_flag_names(q.flags)) {
            json.string(name);
        }
        json.end_array().field("timestamp_valid_bits", q.timestamp_valid_bits).end_object();
    }
    json.end_array();
    if (d.clock) {
        const auto domain = d.clock->monotonic ? protocol::ClockDomain::clock_monotonic
                                               : protocol::ClockDomain::device;
        json.key("clock").begin_object().field("domain", protocol::name(domain));
        json.key("max_deviation_ns");
        d.clock->monotonic ? json.uinteger(d.clock->max_deviation_ns) : json.null();
        json.end_object();
    }
    if (!d.pci.empty()) {
        json.field("pci", d.pci);
    }
    if (d.budget) {
        json.field("budget", *d.budget);
    }
    if (!d.timer_floors.empty()) {
        json.key("timer_floor").begin_array();
        for (const TimerFloorDescription& f : d.timer_floors) {
            json.begin_object().field("family", f.family);
            for (const auto& [name, ticks] :
                 {std::pair{"back_to_back", &f.back_to_back}, std::pair{"empty", &f.empty}}) {
                json.key(name).begin_array();
                for (uint64_t t : *ticks) {
                    json.uinteger(t);
                }
                json.end_array();
            }
            if (f.reason) {
                json.field("reason", f.reason);
            }
            json.end_object();
        }
        json.end_array();
    }
    json.end_object();
    return frame(MessageType::Device, device, json);
}

std::string workload_frame(const Workload& w) {
    return appended([&](std::string& out) { append_workload_frame(out, w); });
}

bool append_workload_frame(std::string& out, const Workload& w) {
    JsonWriter json;
    json.reserve(320);
    json.begin_object();
    if (w.type == WorkloadType::render_pass) {
        json.raw(w.fields);
    } else {
        json.raw(describe_fields(w));
    }
    if (w.type == WorkloadType::render_pass) {
        // Split or GPU-counted totals are only known per submission: an annex gives them.
        json.key("draws");
        w.split || w.draws_deferred ? json.null() : json.uinteger(w.draws);
        json.field("split", w.split);
    }
    if (!w.tagged) {
        json.field("tagged", false); // no t<tag> label in the command buffer
    }
    json.end_object();
    return append_frame(out, MessageType::Workload, w.tag, json.view());
}

std::string labels_frame(uint64_t device, uint64_t id, const std::vector<std::string>& stack) {
    return appended([&](std::string& out) { append_labels_frame(out, device, id, stack); });
}

bool append_labels_frame(std::string& out, uint64_t device, uint64_t id,
                         const std::vector<std::string>& stack) {
    JsonWriter json;
    json.begin_object().field("device", device).key("labels").begin_array();
    for (const std::string& label : stack) {
        json.string(label);
    }
    json.end_array().end_object();
    return append_frame(out, MessageType::Labels, id, json.view());
}

std::string submit_frame(uint64_t submit, const SubmitDescription& s,
                         std::span<const SubmittedWorkload> workloads) {
    return appended([&](std::string& out) { append_submit_frame(out, submit, s, workloads); });
}

bool append_submit_frame(std::string& out, uint64_t submit, const SubmitDescription& s,
                         std::span<const SubmittedWorkload> workloads) {
    JsonWriter json;
    json.reserve(160 + 24 * workloads.size());
    json.begin_object()
        .field("device", s.device)
        .field("queue", s.queue)
        .field("frame", s.frame)
        .field("cpu_ns", s.cpu_ns)
        .field("api", s.api)
        .field("batch", s.batch);
    json.key("s_label");
    s.s_label ? json.uinteger(s.s_label) : json.null();
    json.key("workloads").begin_array();
    for (const SubmittedWorkload& w : workloads) {
        json.begin_array().uinteger(w.tag).uinteger(w.labels).end_array();
    }
    json.end_array().end_object();
    return append_frame(out, MessageType::Submit, 0, json.view(), submit);
}

std::string annex_frame(uint64_t submit, uint64_t tag, std::string_view json) {
    return appended([&](std::string& out) { append_annex_frame(out, submit, tag, json); });
}

bool append_annex_frame(std::string& out, uint64_t submit, uint64_t tag, std::string_view json) {
    return append_frame(out, MessageType::Annex, tag, json, submit);
}

std::string draws_annex(std::optional<uint64_t> draws) {
    JsonWriter json;
    json.begin_object();
    if (draws) {
        json.field("draws", *draws);
    } else {
        json.key("draws").null().field(protocol::name(protocol::AnnexFlag::draws_lost), true);
    }
    json.end_object();
    return json.take();
}

std::string frame_frame(uint64_t frame_number, uint64_t device, uint32_t queue, uint64_t cpu_ns,
                        const char* reason, bool captured, FrameCompiles compiled,
                        const std::optional<BudgetFrame>& budget) {
    return appended([&](std::string& out) {
        append_frame_frame(out, frame_number, device, queue, cpu_ns, reason, captured, compiled,
                           budget);
    });
}

bool append_frame_frame(std::string& out, uint64_t frame_number, uint64_t device, uint32_t queue,
                        uint64_t cpu_ns, const char* reason, bool captured, FrameCompiles compiled,
                        const std::optional<BudgetFrame>& budget) {
    JsonWriter json;
    json.begin_object()
        .field("device", device)
        .field("queue", queue)
        .field("cpu_ns", cpu_ns)
        .field("reason", reason)
        .field("captured", captured)
        .field("pipelines", compiled.pipelines)
        .field("shader_modules", compiled.shader_modules);
    if (budget) {
        const BudgetFrame& b = *budget;
        json.key("budget")
            .begin_object()
            .field("state", protocol::name(b.state))
            .field("workloads", b.workloads)
            .field("measured", b.measured)
            .field("interval_ns", b.interval_ns)
            .field("sample", b.sample);
        json.key("base_ns");
        b.base_ns ? json.uinteger(*b.base_ns) : json.null();
        json.key("unit_ns");
        b.unit_ns ? json.value(*b.unit_ns) : json.null();
        json.key("frame_ns");
        b.frame_ns ? json.value(*b.frame_ns) : json.null();
        json.field("rotation", b.rotation)
            .field("next", b.next)
            .field("recording_ns", b.recording_ns)
            .field("recording_share", b.recording_share)
            .end_object();
    }
    json.end_object();
    return append_frame(out, MessageType::Frame, frame_number, json.view());
}

std::string goodbye_frame(uint64_t dropped, std::optional<uint64_t> query_pools) {
    JsonWriter json;
    json.begin_object().field("dropped", dropped);
    if (query_pools) {
        json.field("query_pools", *query_pools);
    }
    json.end_object();
    return frame(MessageType::Goodbye, 0, json);
}

} // namespace vkscope::timeline
