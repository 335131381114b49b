#include "instruments/performance_query/command_buffer_query.hpp"

#include "instruments/performance_query/values.hpp"
#include "protocol.gen.hpp"

namespace vkscope::performance_query {

using Reason = protocol::CountersReason;

void CommandBufferQuery::begin(PerfDevice& device, QueryPoolCache& pools, QueryBlock*& block,
                               VkCommandBuffer cb) {
    release();
    if (executes_secondaries_) {
        why_ = protocol::name(Reason::executes_secondaries);
        return;
    }
    if (!ended_without_ && device.secondaries.load(std::memory_order_relaxed)) {
        why_ = protocol::name(Reason::may_execute_secondaries);
        return;
    }
    if (!block) {
        block = pools.acquire();
    }
    if (!block || block->used != 0) {
        why_ = protocol::name(Reason::no_query_pool);
        return;
    }
    block->used = 1;
    device.next.CmdBeginQuery(cb, block->pool, 0, 0);
    open_ = true;
}

void CommandBufferQuery::end(PerfDevice& device, const QueryBlock* block, VkCommandBuffer cb) {
    ended_without_ = ended_without_ || !executed_now_;
    if (!open_) {
        return;
    }
    device.next.CmdEndQuery(cb, block->pool, 0);
    open_ = false;
    ended_ = true;
}

void CommandBufferQuery::executed() {
    if (open_) {
        // Too late for this recording: its query spans the secondaries' work, where it is
        // invalid usage; its values are not reported, and later recordings have no query.
        why_ = protocol::name(Reason::executes_secondaries);
    }
    executes_secondaries_ = true;
    executed_now_ = true;
}

void CommandBufferQuery::release() {
    open_ = false;
    ended_ = false;
    why_ = nullptr;
    executed_now_ = false;
}

void send(const PerfDevice& device, const CommandBufferEntry& e, timeline::CompletionSink& sink,
          JsonWriter& json, std::vector<VkPerformanceCounterResultKHR>& results) {
    const char* reason = e.why;
    const FamilyPlan* plan = device.plan(e.family);
    if (!reason && (!plan || e.pass >= plan->passes.size())) {
        reason = protocol::name(Reason::counter_not_offered);
    }
    if (!reason) {
        results.assign(plan->passes[e.pass].size(), VkPerformanceCounterResultKHR{});
        if (!device.read(e.block, e.generation, 0, results)) {
            reason = protocol::name(Reason::overwritten);
        }
    }
    json.clear();
    json.begin_object();
    if (reason) {
        json.key("counters").null().field("counters_reason", reason);
    } else {
        write_counters(json, *plan, plan->passes[e.pass], results);
        json.field("counters_pass", e.pass);
    }
    json.end_object();
    std::string frame;
    append_frame(frame, MessageType::CommandBufferCounters, 0, json.view(), e.submit);
    sink.post(std::move(frame));
}

} // namespace vkscope::performance_query
