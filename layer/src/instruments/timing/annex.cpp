#include "instruments/timing/annex.hpp"

#include "core/wire_format.hpp"

namespace vkscope::timing {

std::string timing_annex(const InstanceTiming& t) {
    JsonWriter json;
    json.reserve(160);
    json.begin_object();
    if (t.status == Outcome::ok) {
        json.field("gpu_begin_ns", t.begin_ns).field("gpu_end_ns", t.end_ns);
    } else {
        // Never a wrong number: an instance that could not be measured has none.
        json.key("gpu_begin_ns").null().key("gpu_end_ns").null();
    }
    json.field("serialization", t.serialization);
    json.field("timing", protocol::name(t.status));
    if (t.reason) {
        json.field("timing_reason", t.reason);
    }
    json.end_object();
    return json.take();
}

std::string submit_done_frame(uint64_t submit, uint64_t cpu_ns) {
    JsonWriter json;
    json.begin_object().field("cpu_ns", cpu_ns).end_object();
    std::string out;
    append_frame(out, MessageType::SubmitDone, 0, json.view(), submit);
    return out;
}

} // namespace vkscope::timing
