// The scenario interface and the fixed, ordered list of scenarios.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wl {

class Context;

class Scenario {
public:
    virtual ~Scenario() = default;
    // Creates the objects the scenario keeps for the life of the device. Throws SkipScenario
    // when the device lacks something the scenario needs.
    virtual void setup(Context& ctx) = 0;
    // Records, submits, waits for and verifies one frame of work. Throws VerifyError.
    virtual void frame(Context& ctx, uint32_t frameIndex) = 0;
    // A line printed once the frames have run (what a benchmark scenario measured); empty: none.
    virtual std::string summary() const { return {}; }
};

struct ScenarioInfo {
    const char* name;
    std::unique_ptr<Scenario> (*create)();
};

// In the order they run: what --all and --list mean.
const std::vector<ScenarioInfo>& allScenarios();
// Scenarios made for one benchmark, run only when named with --scenario (after the others).
const std::vector<ScenarioInfo>& namedOnlyScenarios();
// In either list.
const ScenarioInfo* findScenario(std::string_view name);

std::unique_ptr<Scenario> makeRenderPassScenario();
std::unique_ptr<Scenario> makeDynamicRenderingScenario();
std::unique_ptr<Scenario> makeSecondaryScenario();
std::unique_ptr<Scenario> makeMultiviewScenario();
std::unique_ptr<Scenario> makeComputeScenario();
std::unique_ptr<Scenario> makeBufferTransferScenario();
std::unique_ptr<Scenario> makeImageTransferScenario();
std::unique_ptr<Scenario> makeLabelsScenario();
std::unique_ptr<Scenario> makeReusableScenario();
std::unique_ptr<Scenario> makeMultiSubmitScenario();
std::unique_ptr<Scenario> makeMultiQueueScenario();
std::unique_ptr<Scenario> makeThreadsScenario();
std::unique_ptr<Scenario> makeIndirectDrawScenario();
std::unique_ptr<Scenario> makeRayTracingScenario();
std::unique_ptr<Scenario> makeGameScenario();
std::unique_ptr<Scenario> makeSmallFrameScenario();
std::unique_ptr<Scenario> makeGameScaleScenario();
std::unique_ptr<Scenario> makeHostSignalScenario();
std::unique_ptr<Scenario> makeAppStatisticsScenario();
std::unique_ptr<Scenario> makeMeshShaderScenario();

} // namespace wl
