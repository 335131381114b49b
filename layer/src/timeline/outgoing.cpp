#include "timeline/outgoing.hpp"

namespace vkscope::timeline {
namespace {

// What a message usually takes on the wire, for the queue's byte bound before it is encoded.
constexpr size_t kWorkloadBytes = 200;
constexpr size_t kRenderPassBytes = 120; // beside its fields, which it holds already
constexpr size_t kAnnexBytes = 64;
constexpr size_t kSubmitBytes = 160;
constexpr size_t kListedBytes = 24; // [tag, labels] in a SUBMIT
constexpr size_t kAnnexHeadBytes = 24;

} // namespace

size_t SubmitMessages::bytes() const {
    size_t n = annexes.size() * kAnnexBytes;
    for (const auto& w : workloads) {
        n += w->type == WorkloadType::render_pass ? kRenderPassBytes + w->fields.size()
                                                  : kWorkloadBytes;
    }
    if (left_out_annexes) {
        size_t each = 0;
        for (const std::string& a : *left_out_annexes) {
            each += a.size() + kAnnexHeadBytes;
        }
        n += left_out * each;
    }
    return has_submit ? n + kSubmitBytes + listed.size() * kListedBytes : n;
}

size_t SubmitMessages::encode(std::string& out) {
    out.reserve(out.size() + bytes());
    size_t failed = 0;
    for (const auto& w : workloads) {
        failed += append_workload_frame(out, *w) ? 0 : 1;
    }
    for (const DrawsAnnex& a : annexes) {
        failed += append_annex_frame(out, a.submit, a.tag, draws_annex(a.draws)) ? 0 : 1;
    }
    if (has_submit) {
        failed += append_submit_frame(out, submit, description, listed) ? 0 : 1;
    }
    for (size_t i = 0; left_out_annexes && i < listed.size(); ++i) {
        if (listed[i].left_out) {
            for (const std::string& fields : *left_out_annexes) {
                failed += append_annex_frame(out, submit, listed[i].tag, fields) ? 0 : 1;
            }
        }
    }
    return failed;
}

size_t LabelsMessage::bytes() const {
    size_t n = 48;
    for (const std::string& label : stack_) {
        n += label.size() + 4;
    }
    return n;
}

} // namespace vkscope::timeline
