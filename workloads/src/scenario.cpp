#include "scenario.h"

namespace wl {

const std::vector<ScenarioInfo>& allScenarios() {
    static const std::vector<ScenarioInfo> list = {
        {"renderpass", makeRenderPassScenario},
        {"dynamic_rendering", makeDynamicRenderingScenario},
        {"secondary", makeSecondaryScenario},
        {"multiview", makeMultiviewScenario},
        {"compute", makeComputeScenario},
        {"buffer_transfer", makeBufferTransferScenario},
        {"image_transfer", makeImageTransferScenario},
        {"labels", makeLabelsScenario},
        {"reusable", makeReusableScenario},
        {"multi_submit", makeMultiSubmitScenario},
        {"multi_queue", makeMultiQueueScenario},
        {"threads", makeThreadsScenario},
        // Added later: appended so that the scenarios above keep their positions.
        {"indirect_draw", makeIndirectDrawScenario},
        {"ray_tracing", makeRayTracingScenario},
        {"app_statistics", makeAppStatisticsScenario},
        {"game", makeGameScenario},
    };
    return list;
}

const std::vector<ScenarioInfo>& namedOnlyScenarios() {
    static const std::vector<ScenarioInfo> list = {
        {"small_frame", makeSmallFrameScenario},
        {"game_scale", makeGameScaleScenario},
        {"mesh_shader", makeMeshShaderScenario},
        {"host_signal", makeHostSignalScenario},
    };
    return list;
}

const ScenarioInfo* findScenario(std::string_view name) {
    for (const auto* list : {&allScenarios(), &namedOnlyScenarios()}) {
        for (const ScenarioInfo& info : *list) {
            if (name == info.name) {
                return &info;
            }
        }
    }
    return nullptr;
}

} // namespace wl
