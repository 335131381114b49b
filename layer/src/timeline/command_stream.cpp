#include "timeline/command_stream.hpp"

namespace vkscope::timeline {

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
