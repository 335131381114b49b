#include "timeline/command_stream.hpp"

namespace vkscope::timeline {

const char* workload_type_name(WorkloadType type) {
    switch (type) {
    case WorkloadType::render_pass:
        return "renderpass";
    case WorkloadType::dispatch:
        return "dispatch";
    case WorkloadType::trace_rays:
        return "trace_rays";
    case WorkloadType::buffer_transfer:
        return "buffer_transfer";
    case WorkloadType::image_transfer:
        return "image_transfer";
    case WorkloadType::acceleration_structure:
        return "acceleration_structure";
    }
    return "unknown";
}

Op begin_op(WorkloadType type) {
    switch (type) {
    case WorkloadType::render_pass:
        return Op::render_pass_begin;
    case WorkloadType::dispatch:
        return Op::compute_dispatch_begin;
    case WorkloadType::trace_rays:
        return Op::trace_rays_begin;
    case WorkloadType::buffer_transfer:
        return Op::buffer_transfer_begin;
    case WorkloadType::image_transfer:
        return Op::image_transfer;
    case WorkloadType::acceleration_structure:
        return Op::acceleration_structure_begin;
    }
    return Op::compute_dispatch_begin;
}

} // namespace vkscope::timeline
